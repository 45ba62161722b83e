#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_realkernel_full.t — tests/vm/vm_realkernel.t at the acceptance's scale: 200+
# distinct ext4 states judged by Linux, 100+ each for xfs and btrfs (make check-long;
# make check-vm runs the same script on fewer states, docs/testing.md).
VM_FULL=1 exec "$(dirname "$0")/../vm/vm_realkernel.t"
