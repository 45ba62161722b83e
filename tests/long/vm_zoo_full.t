#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_zoo_full.t — tests/vm/vm_zoo.t at the measured table's scale: every bug-zoo workload
# on its filesystem under kernels 6.1 and 6.12, 100 states each (make check-long; make
# check-vm runs generic/782 alone with 6 states, docs/kernels.md).
VM_FULL=1 exec "$(dirname "$0")/../vm/vm_zoo.t"
