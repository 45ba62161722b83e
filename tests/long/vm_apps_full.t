#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_apps_full.t — tests/vm/vm_apps.t at the acceptance's scale: SQLite's WAL and
# rollback journal over at least 200 distinct states between them (docs/testing.md).
VM_FULL=1 exec "$(dirname "$0")/../vm/vm_apps.t"
