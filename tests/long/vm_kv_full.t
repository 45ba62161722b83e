#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_kv_full.t — tests/vm/vm_kv.t at the acceptance's scale: Redis and LevelDB, the durable
# setting over 100+ distinct states on an honest cache loses nothing, the non-durable one
# and a flush-ignoring cache lose some, counted (make check-long; docs/apps.md).
VM_FULL=1 exec "$(dirname "$0")/../vm/vm_kv.t"
