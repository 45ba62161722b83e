#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_explore.t — a crash explorer workload on the real kernel: ext3 (the kernel's ext4
# driver, barriers on) on a flush-honouring cache runs append-fsync compiled for the
# guest; each cut's recovered image is read back and judged by the explorer's oracle:
# every cut observed and classified, no synced data lost, and the result reads back
# in the explorer's format.
. "$(dirname "$0")/vm_lib.sh"

vmtest explore --stack 'cache(size=1M,flush=honor) > mem(size=64M)' --fs ext3,barrier=1 \
	--workload append-fsync --cuts 3 --seed 7
ok $? "vmtest ran the explorer's append-fsync on ext3"
all_observed explore
ok $? "every cut observed and classified"
[ "$(field explore workload)" = append-fsync ] && [ "$(field explore lost_synced)" = 0 ] &&
	[ "$(field explore ok)" = 3 ]
ok $? "the explorer's oracle: every cut ok, no synced data lost ($(field explore ok) ok)"
explore_format explore
ok $? "the explorer-format result reads back with the same counts"
done_testing
