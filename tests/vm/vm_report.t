#!/bin/bash
# vm_report.t — real ext4 where the stack breaks its promise: barriers off on an honest
# cache, and barriers on over a cache that ignores flushes (a lying drive). What happens
# is reported, not asserted; asserted is only that every cut was observed and classified.
. "$(dirname "$0")/vm_lib.sh"

report() {
	echo "# $1: ok=$(field "$1" ok) lost_synced=$(field "$1" lost_synced)" \
		"bystander_damage=$(field "$1" bystander_damage) foreign=$(field "$1" foreign_data)" \
		"unmountable=$(field "$1" unmountable) fsck_errors=$(field "$1" fsck_errors)" \
		"silent=$(field "$1" silent) detected=$(field "$1" detected)"
}

vmtest nobarrier --stack 'cache(size=1M,flush=honor) > mem(size=64M)' --fs ext4,nobarrier \
	--workload mixed --files 8 --cuts 3 --seed 21
ok $? "vmtest ran: ext4 nobarrier on cache(flush=honor)"
all_observed nobarrier
ok $? "nobarrier: every cut observed and classified"
report nobarrier
explore_format nobarrier
ok $? "nobarrier: the explorer-format result reads back with the same counts"

vmtest lying --stack 'cache(size=1M,flush=ignore,fua=ignore) > mem(size=64M)' --fs ext4 \
	--workload mixed --files 8 --cuts 3 --seed 22
ok $? "vmtest ran: ext4 on a lying cache (flush=ignore)"
all_observed lying
ok $? "lying cache: every cut observed and classified"
report lying
done_testing
