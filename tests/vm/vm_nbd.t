#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_nbd.t — the second attachment: the guest kernel's own NBD client (nbd-client over
# qemu user networking, no host TCP port), which carries real FUA writes to the plugin
# (virtio-blk cannot). ext4 with barriers on an honest cache: no synced data lost.
. "$(dirname "$0")/vm_lib.sh"

vmtest knbd --stack 'cache(size=1M,flush=honor) > mem(size=64M)' --fs ext4 \
	--workload create --files 6 --cuts 3 --seed 31 --attach nbd
ok $? "vmtest ran with --attach nbd"
all_observed knbd
ok $? "every cut observed and classified"
[ "$(field knbd attachment)" = nbd ]
ok $? "the results name the attachment"
[ "$(field knbd lost_synced)" = 0 ]
ok $? "no synced data lost"
fua=$(jq -s '[.[] | select(.plugin) | .plugin.fua_writes] | max' "$T/knbd.json")
[ "${fua:-0}" -ge 1 ]
ok $? "the guest's FUA writes reached the plugin as FUA (up to $fua before a cut)"
done_testing
