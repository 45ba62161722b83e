#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_pg_full.t — tests/vm/vm_pg.t at the acceptance's scale (make check-long): 100+
# distinct states of synchronous_commit=on, synchronous_commit=off losing acknowledged
# commits, and full_page_writes off and on over a drive that tears 8 KiB pages at 4 KiB.
VM_FULL=1 exec "$(dirname "$0")/../vm/vm_pg.t"
