#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_mdhole.t — md's write hole checked block by block on the host (docs/md.md, "The
# write hole, block by block"): three guest boots record ext4 barrier=1 and
# append-fsync on md RAID5 over 4 honest caching members: degraded (member 0 missing),
# the same with md's write journal on a fifth export, and healthy; `blackout mdhole`
# enumerates each recording's crash states and reads each as md reads the array (its
# superblocks, left-symmetric layout, the missing member's blocks rebuilt from parity,
# the journal replayed first), against the array at the start and at the end of the
# state's cut epoch. Degraded: states in which blocks nobody wrote in the cut epoch read
# wrong; with the journal: none over at least 200 distinct states; healthy: none. The
# host's reading of each array at the log's end is a clean ext4 whose files are the same
# bytes in all three (the degraded ones' superblock and group descriptors lie on the
# missing member).
. "$(dirname "$0")/../test-lib.sh"
need_tool e2fsck debugfs
SRC=${BLACKOUT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
MEMBERS='concat > [cache(size=1M,flush=honor) > mem(size=16M)] x4'
J5='concat > [cache(size=1M,flush=honor) > mem(size=16M)] x5'
stack() { [ "$1" = jou ] && echo "$J5" || echo "$MEMBERS"; }
md() { case $1 in deg) echo 5:4:0 ;; jou) echo 5:4:0:j ;; hea) echo 5:4:- ;; esac; }
# waits for the three background jobs (pid_deg ...), each exit status into rc_deg ...
wait_all() {
	for d in deg jou hea; do
		eval "wait \$pid_$d"
		eval "rc_$d=\$?"
	done
}

# the three recordings at once: one guest each
for d in deg jou hea; do
	timeout 300 "$SRC/scripts/vmrecord" --stack "$(stack $d)" --md "$(md $d)" \
		--fs ext4,barrier=1 --workload append-fsync --out "$T/$d" >"$T/$d.rec" 2>&1 &
	eval "pid_$d=\$!"
done
wait_all
sed 's/^/# /' "$T/deg.rec" "$T/jou.rec" "$T/hea.rec"
ok $rc_deg "degraded md RAID5 (member 0 missing): ext4 barrier=1, append-fsync recorded"
ok $rc_jou "the same with md's write journal on export m4: recorded"
ok $rc_hea "healthy md RAID5 over 4 members: the same recorded"

for d in deg jou hea; do
	timeout 120 "$BLACKOUT" mdhole --log "$T/$d/io.log" --stack "$(stack $d)" \
		--fs ext4,barrier=1 --workload append-fsync --max-states 400 --store "$T/$d.states" \
		--list "$T/$d.list" --array-image "$T/$d.img" >"$T/$d.out" 2>&1 &
	eval "pid_$d=\$!"
done
wait_all
sed 's/^/# /' "$T/deg.out" "$T/jou.out" "$T/hea.out"

# "states: ... N distinct", "md write hole: H of N states ... (B blocks"
distinct() { sed -n 's/^states: .*; \([0-9]*\) distinct$/\1/p' "$T/$1.out"; }
holes() { sed -n 's/^md write hole: \([0-9]*\) of \([0-9]*\) states .*(\([0-9]*\) blocks.*/\1 \2 \3/p' "$T/$1.out"; }
read -r hd nd bd <<<"$(holes deg)"
read -r hh nh bh <<<"$(holes hea)"
read -r hj nj bj <<<"$(holes jou)"

ok $rc_deg "degraded: the host read every state of the recording (exit $rc_deg)"
grep -q '^array:    RAID5 left-symmetric, 4 members, 64 KiB chunks, role 0 missing$' "$T/deg.out"
ok $? "degraded: the array read from its superblocks, role 0 missing"
[ "${nd:-0}" -ge 200 ] && [ "$nd" = "$(distinct deg)" ] && ! grep -q '^unread:' "$T/deg.out"
ok $? "degraded: ${nd:-0} distinct states read (at least 200), none refused"
[ "${hd:-0}" -gt 0 ] && [ "${bd:-0}" -ge "${hd:-0}" ]
ok $? "degraded: the write hole in ${hd:-0} of ${nd:-0} states (${bd:-0} blocks unchanged in their cut epoch read wrong)"
# every hole block is one md rebuilds: on the missing member, never on a present one
[ "$(grep -c ', missing, stripe' "$T/deg.list")" = "${bd:-x}" ]
ok $? "degraded: every such block lies on the missing member (rebuilt from a stripe whose data and parity landed apart)"

ok $rc_jou "journal: the host read every state (exit $rc_jou)"
grep -q '^array:    RAID5 left-symmetric, 4 members, 64 KiB chunks, role 0 missing, write journal on m4$' "$T/jou.out"
ok $? "journal: the array read from its superblocks, role 0 missing, its journal on m4"
replayed=$(sed -n 's/^journal: .*: \([0-9]*\) stripes written back.*/\1/p' "$T/jou.out")
[ "${replayed:-0}" -gt 0 ]
ok $? "journal: md's journal replayed over every state first (${replayed:-0} stripes written back in all)"
[ "${nj:-0}" -ge 200 ] && [ "$nj" = "$(distinct jou)" ] && ! grep -q '^unread:' "$T/jou.out" &&
	[ "${hj:-x}" = 0 ] && [ "${bj:-x}" = 0 ]
ok $? "journal: 0 of ${nj:-0} distinct states (at least 200) have a block unchanged in its epoch read wrong"

ok $rc_hea "healthy: the host read every state (exit $rc_hea)"
grep -q '^array:    RAID5 left-symmetric, 4 members, 64 KiB chunks, healthy$' "$T/hea.out"
ok $? "healthy: the array read from its superblocks, all 4 roles present"
[ "${nh:-0}" -ge 200 ] && [ "${hh:-x}" = 0 ] && [ "${bh:-x}" = 0 ]
ok $? "healthy: 0 of ${nh:-0} distinct states have a block unchanged in its epoch read wrong"

# the host's reading of each array at the log's end: ext4 after its journal replay
for d in deg jou hea; do
	e2fsck -fy "$T/$d.img" >"$T/$d.fsck1" 2>&1
	e2fsck -fn "$T/$d.img" >"$T/$d.fsck2" 2>&1
	ok $? "$d: the array as the host reads it at the log's end is a clean ext4 (e2fsck -fn after replaying its journal)"
done
same=0
for f in /keep/a /keep/b /log; do
	a=$(debugfs -R "cat $f" "$T/deg.img" 2>/dev/null | md5sum)
	j=$(debugfs -R "cat $f" "$T/jou.img" 2>/dev/null | md5sum)
	b=$(debugfs -R "cat $f" "$T/hea.img" 2>/dev/null | md5sum)
	n=$(debugfs -R "stat $f" "$T/deg.img" 2>/dev/null | sed -n 's/.*[^a-z]Size: \([0-9]*\).*/\1/p' | head -n 1)
	[ "$a" = "$b" ] && [ "$j" = "$b" ] && [ "${n:-0}" -gt 0 ] && same=$((same + 1))
done
is $same 3 "the files read through the degraded arrays (rebuilt) are the healthy array's bytes"

done_testing
