#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# hang-check.sh DIR ACKS — a checker that never ends, for tests/vm/vm_apps.t: blackout app
# must kill it at --check-timeout and report it as hung, never as ok.
sleep 100000
