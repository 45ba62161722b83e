#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# crash-check.sh DIR ACKS — a checker that crashes (SIGSEGV), for tests/vm/vm_apps.t:
# blackout app must report it as such, never as ok.
echo "about to crash"
kill -SEGV $$
