#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_realkernel.t — the real kernel at explorer scale (docs/realkernel.md): one boot
# records the guest's I/O, the explorer enumerates that recording's crash states with its
# own code, guests of the real kernel judge them, many per boot. Linux ext4 with barriers
# on a flush-honouring cache loses nothing over 200+ distinct states, without barriers it
# loses synced data; xfs and btrfs keep synced data over 100+ states each; cheap flash
# damages bystanders under ext4; a state rebuilt from its id is the same bytes and gets the
# same verdict; a truncated log and a log of another stack are refused.
. "$(dirname "$0")/vm_lib.sh"

HONEST='cache(size=1M,flush=honor) > mem(size=64M)'
# make check-vm judges each capability once at a small scale; the acceptance's scale
# (200+ distinct ext4 states, 100+ each for xfs and btrfs) runs under make check-long
# (tests/long/vm_realkernel_full.t sets VM_FULL=1; docs/testing.md has its figures)
if [ "${VM_FULL:-0}" = 1 ]; then
	B1=400 B1_MIN=200 XFS=300 BTRFS=200 FS_MIN=100
else
	B1=80 B1_MIN=40 XFS=60 BTRFS=60 FS_MIN=20
fi
# rk NAME ARGS...: one explorer-mode `blackout vmtest` run into $T/NAME (exit 0: nothing
# broke, 3: some state broke an invariant; anything else fails)
rk() {
	local name=$1
	shift
	timeout "${VM_TIMEOUT:-1200}" "$BLACKOUT" vmtest "$@" --jobs 2 --out "$T/$name" \
		--json "$T/$name.json" >"$T/$name.log" 2>&1
	local rc=$?
	grep -v '^vmtest: enumerated\|^vmtest: judged' "$T/$name.log" | head -n 24 | sed 's/^/# /'
	[ $rc -eq 0 ] || [ $rc -eq 3 ] ||
		{ echo "vmtest $name failed (exit $rc):" && tail -n 20 "$T/$name.log"; } >&2
	[ $rc -eq 0 ] || [ $rc -eq 3 ]
}
j() { jq -r "$2" "$T/$1.json"; }

rk b1 --stack "$HONEST" --fs ext4,barrier=1 --workload append-fsync --max-states $B1 --seed 1
ok $? "ext4 barrier=1 on an honest cache: recorded once, enumerated, judged in guests"
[ "$(j b1 .judged)" -ge $B1_MIN ]
ok $? "at least $B1_MIN distinct states judged by Linux ($(j b1 .judged) of $(j b1 .built) built)"
[ "$(j b1 .violations.durable)" = 0 ] && [ "$(j b1 .violations.bystander)" = 0 ]
ok $? "none lost synced data or damaged a bystander"
[ "$(j b1 .hung)" = 0 ] && [ "$(j b1 .violations.consistent)" = 0 ]
ok $? "every state mounted, read and checked clean (hung $(j b1 .hung), inconsistent $(j b1 .violations.consistent))"

rk b0 --stack "$HONEST" --fs ext4,barrier=0 --workload append-fsync --max-states 120 --seed 1
ok $? "ext4 barrier=0 on the same cache"
[ "$(j b0 .violations.durable)" -gt 0 ]
ok $? "without barriers synced data is lost ($(j b0 .violations.durable) of $(j b0 .judged) states)"

rk xfs --stack 'cache(size=1M,flush=honor) > mem(size=320M)' --fs xfs --workload append-fsync \
	--max-states $XFS --seed 1
ok $? "xfs (320 MiB: mkfs.xfs's minimum) on an honest cache"
[ "$(j xfs .judged)" -ge $FS_MIN ] && [ "$(j xfs .violations.durable)" = 0 ]
ok $? "xfs: $(j xfs .judged) distinct states (>= $FS_MIN), none lost synced data"

rk btrfs --stack "$HONEST" --fs btrfs --workload append-fsync --max-states $BTRFS --seed 1
ok $? "btrfs on an honest cache"
[ "$(j btrfs .judged)" -ge $FS_MIN ] && [ "$(j btrfs .violations.durable)" = 0 ]
ok $? "btrfs: $(j btrfs .judged) distinct states (>= $FS_MIN), none lost synced data"

rk flash --stack 'flash(ftl=cheap,eb=128k,page=4k,size=64M)' --fs ext4 --workload overwrite \
	--files 16 --max-states 80 --seed 1
ok $? "ext4 on cheap flash with 128 KiB erase blocks, rewriting files in place"
[ "$(j flash .violations.bystander)" -gt 0 ]
ok $? "files nobody was writing were damaged ($(j flash .violations.bystander) states)"

# A failing state of the barrier=0 run, rebuilt from its id out of the same recording:
# the same base image and delta (so the guest is served the same bytes), the same verdict.
id=$(j b0 '.failures[0].id')
idx=$(awk -v id="$id" '$2 == id { print $1 }' "$T/b0/states/index")
timeout 600 "$BLACKOUT" vmtest --stack "$HONEST" --fs ext4,barrier=0 --workload append-fsync \
	--max-states 120 --seed 1 --log "$T/b0/record/io.log" --state "$id" --keep "$T/keep" \
	--jobs 1 --out "$T/one" --json "$T/one.json" >"$T/one.log" 2>&1
rc=$?
[ $rc -eq 3 ] && [ -n "$idx" ] && cmp -s "$T/b0/states/base.img" "$T/one/states/base.img" &&
	cmp -s "$T/b0/states/$idx.delta" "$T/one/states/s0.delta" && [ -s "$T/keep/$id.img" ]
ok $? "state $id ($idx) rebuilt from its id: the same base and delta, kept as an image"
[ "$(jq -c '.failures[0] | [.broken, .detected, .detected_by, .completed]' "$T/one.json")" = \
	"$(jq -c --arg id "$id" '.failures[] | select(.id == $id) | [.broken, .detected, .detected_by, .completed]' "$T/b0.json")" ]
ok $? "and the same verdict from a fresh guest"

# refusals, before any guest boots
log=$T/b1/record/io.log
head -c $(($(stat -c %s "$log") - 100)) "$log" >"$T/short.log"
"$BLACKOUT" vmtest --stack "$HONEST" --fs ext4,barrier=1 --workload append-fsync \
	--log "$T/short.log" --out "$T/r1" >"$T/r1.txt" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 3 ] && grep -q "truncated" "$T/r1.txt"
ok $? "a truncated log is refused: $(tail -n 1 "$T/r1.txt")"
"$BLACKOUT" vmtest --stack 'cache(size=1M,flush=ignore) > mem(size=64M)' --fs ext4,barrier=1 \
	--workload append-fsync --log "$log" --out "$T/r2" >"$T/r2.txt" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 3 ] && grep -q "recorded on stack" "$T/r2.txt"
ok $? "a log of another stack is refused: $(tail -n 1 "$T/r2.txt")"
done_testing
