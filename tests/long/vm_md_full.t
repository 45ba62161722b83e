#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_md_full.t — tests/vm/vm_md.t at the acceptance's scale: 200+ distinct states
# judged through md's write journal (make check-long; make check-vm runs the same
# script with 50, docs/testing.md).
VM_FULL=1 exec "$(dirname "$0")/../vm/vm_md.t"
