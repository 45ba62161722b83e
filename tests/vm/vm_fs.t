#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_fs.t — every filesystem the guest can test, through the seeded harness: xfs,
# btrfs and ext4 with data=journal, each made, loaded with the create workload and cut
# once on a flush-honouring cache (one work boot, then one check boot): the right
# checker ran (BO:OBS checker) and was clean, and a set-up file's digests read back
# (the judge finds no bystander touched, no synced data lost). xfs under 300 MiB is
# refused with a message saying why.
. "$(dirname "$0")/vm_lib.sh"

CACHE='cache(size=1M,flush=honor)'
# fs_case NAME SIZE FS[,OPTS] CHECKER: one cut of the create workload, judged
fs_case() {
	local name=$1 size=$2 fs=$3 checker=$4 obs
	vmtest "$name" --stack "$CACHE > mem(size=$size)" --fs "$fs" --workload create \
		--files 4 --cuts 1 --seed 3
	ok $? "$fs: vmtest made, loaded, cut and checked it"
	obs=$T/$name/chk1.markers.txt
	grep -qx "BO:OBS checker $checker" "$obs" && grep -qx 'BO:OBS fsck 0' "$obs"
	ok $? "$fs: the check boot ran $checker, which exited 0"
	# a bystander synced by the set-up: 8 KiB, two chunk digests, read back
	grep -Eq '^BO:OBS file 8192 [0-9a-f]{32},[0-9a-f]{32} /b/f1$' "$obs"
	ok $? "$fs: a set-up file's size and chunk digests read back"
	all_observed "$name" && [ "$(field "$name" ok)" = 1 ] &&
		[ "$(field "$name" fsck_errors)" = 0 ] && [ "$(field "$name" bystander_damage)" = 0 ] &&
		[ "$(field "$name" lost_synced)" = 0 ]
	ok $? "$fs: the judge found the cut state ok: checker clean, bystanders intact"
}

fs_case xfs 320M xfs xfs_repair
fs_case btrfs 64M btrfs btrfs-check
fs_case ext4j 64M ext4,data=journal e2fsck

"$BLACKOUT" vmtest --stack "$CACHE > mem(size=64M)" --fs xfs --workload create --files 4 \
	--cuts 1 --out "$T/small" >"$T/small.log" 2>&1
rc=$?
sed 's/^/# /' "$T/small.log"
[ $rc -ne 0 ] && grep -q 'xfs needs a device of 300 MiB at least' "$T/small.log"
ok $? "xfs on 64 MiB: refused, saying it needs 300 MiB"
done_testing
