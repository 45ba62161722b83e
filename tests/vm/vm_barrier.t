#!/bin/bash
# vm_barrier.t — real ext4 with barriers on a flush-honouring write cache: whatever a
# completed fsync made durable survives every one of 20 power cuts (cut at seeded
# plugin write counts, each cut's outcome seeded too).
. "$(dirname "$0")/vm_lib.sh"

vmtest barrier --stack 'cache(size=1M,flush=honor) > mem(size=64M)' --fs ext4 \
	--workload create --files 8 --cuts 20 --seed 11
ok $? "vmtest ran: ext4 (barriers) on cache(flush=honor)"
all_observed barrier
ok $? "every cut observed and classified ($(field barrier observed)/$(field barrier cuts))"
[ "$(field barrier cuts)" -ge 20 ]
ok $? "at least 20 cuts"
is_zero() { [ "$(field barrier "$1")" = 0 ]; }
is_zero lost_synced
ok $? "no synced data lost in any cut"
echo "# outcomes: ok=$(field barrier ok) bystander_damage=$(field barrier bystander_damage)" \
	"foreign=$(field barrier foreign_data) unmountable=$(field barrier unmountable)" \
	"fsck_errors=$(field barrier fsck_errors) boot_to_workload=$(field barrier boot_to_workload_s)s"
done_testing
