#!/bin/bash
# vm_flash.t — real ext4 on a cheap flash card (block-mapped FTL, 128 KiB erase
# blocks): a cut during an erase-block read-modify-write destroys sectors nobody was
# writing, so files synced before the workload (bystanders) are damaged in some cut.
. "$(dirname "$0")/vm_lib.sh"

vmtest flash --stack 'flash(ftl=cheap,eb=128k,page=4k,size=64M)' --fs ext4 \
	--workload overwrite --files 16 --cuts 10 --seed 5
ok $? "vmtest ran on flash(ftl=cheap,eb=128k)"
all_observed flash
ok $? "every cut observed and classified"
d=$(field flash bystander_damage)
[ "${d:-0}" -ge 1 ]
ok $? "bystander damage in at least one cut ($d of $(field flash cuts))"
done_testing
