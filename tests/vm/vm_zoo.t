#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_zoo.t — the bug zoo under both guest kernels (docs/kernels.md): a btrfs reproducer
# (generic/784) recorded and judged on 6.1 and on 6.12 through `blackout vmtest --kernel`,
# each result naming the release that ran and holding the outcome measured for it; and
# a step the kernel refuses (falloc collapse on btrfs: EOPNOTSUPP) is a named outcome,
# neither a harness failure nor a failing state. VM_FULL=1 (tests/long/vm_zoo_full.t)
# runs every zoo workload on both kernels at the budget of the measured table.
. "$(dirname "$0")/vm_lib.sh"
need_tool qemu-system-x86_64

HONEST='cache(size=1M,flush=honor) > mem(size=64M)'
# zoo OUT WORKLOAD FS SERIES BUDGET: one vmtest into $T/OUT (exit 0: no state failed,
# 3: some did; anything else is a harness failure), its status in $T/OUT.rc
zoo() {
	local o=$T/$1
	timeout "${VM_TIMEOUT:-900}" "$BLACKOUT" vmtest --stack "$HONEST" --fs "$3" --workload "$2" \
		--kernel "$4" --jobs "$JOBS" --max-states "$5" --out "$o" --json "$o.json" >"$o.log" 2>&1
	local rc=$?
	grep '^vmrecord: \|^kernel: \|^rejected: \|^judged: \|^time: ' "$o.log" | sed 's/^/# /'
	[ $rc -eq 0 ] || [ $rc -eq 3 ] ||
		{ echo "vmtest $2 --kernel $4 failed (exit $rc):" && tail -n 20 "$o.log"; } >&2
	echo $rc >"$o.rc"
}
j() { jq -r "$2" "$T/$1.json"; }
cache() { [ "$1" = 6.1 ] && echo "$BUILD/vm" || echo "$BUILD/vm-$1"; }

# The outcome measured for each workload (docs/kernels.md, "The bug zoo on both
# kernels"): "passes" is no failing state among those judged; "torn-super" is failing
# states only while btrfs's superblock write (4 KiB at byte 64 KiB, FUA) was in flight
# and torn at a sector (mount refuses it: EINVAL), every state after it ok: the
# device's ATOMIC-SECTORS outcome, not the reproducer's bug (its log replays).
# "fs-promise" is failing states that keep every POSIX promise and break only btrfs's own
# (docs/oracle.md): generic/764's file, fsynced after its unlink, comes back.
declare -A EXPECT=([g784-dir-rename-reuse]=torn-super [g764-unlink-fsync-fd]=fs-promise)
# one judging guest for a dozen states: a second guest's boot costs more than it saves
JOBS=1
if [ -n "${VM_FULL:-}" ]; then
	BUDGET=100 JOBS=2
	ZOO="g764-unlink-fsync-fd:btrfs g771-unlink-fsync-extents:btrfs g779-symlink-rename:btrfs
		g782-link-new-dir:btrfs g784-dir-rename-reuse:btrfs g785-rename-new-dir:btrfs
		g737-osync-dio-size:ext4"
else
	BUDGET=12
	ZOO="g784-dir-rename-reuse:btrfs"
fi
# torn_super OUT: every failing state of OUT is a cut during the run's write of btrfs's
# superblock (state id p<POS>w-..., POS counted from the log's "step 0" mark), detected
# by the mount, and at least one state failed
torn_super() {
	local o=$T/$1 ids pos0 id p bad=0
	ids=$(jq -r '.failures[] | select(.detected and .broken == ["consistent"]) | .id' "$o.json")
	[ -n "$ids" ] && [ "$(echo "$ids" | wc -l)" = "$(($(jq .judged "$o.json") - $(jq .ok "$o.json")))" ] ||
		return 1
	"$BLACKOUT" log dump "$o/record/io.log" >"$o.dump" || return 1
	pos0=$(awk '$2 == "mark" && $3 == "step" && $4 == "0" { print $1; exit }' "$o.dump")
	for id in $ids; do
		p=${id#p}
		p=${p%%w-*}
		[ "$p" != "${id#p}" ] || { bad=1 && continue; } # not a cut during a write
		awk -v n=$((pos0 + p)) '$1 == n' "$o.dump" | grep -Eq '^ *[0-9]+ write +lba=128 count=8 fua' ||
			bad=1
	done
	[ $bad = 0 ]
}
for series in 6.1 6.12; do
	"$BLACKOUT_SRC/scripts/vm-build" --kernel $series "$(cache $series)" >/dev/null 2>"$T/build.err" ||
		bail "vm-build --kernel $series failed: $(tail -n 3 "$T/build.err")"
done
for item in $ZOO; do
	w=${item%%:*} fs=${item#*:}
	for series in 6.1 6.12; do
		zoo "$w-$series" "$w" "$fs" $series $BUDGET
		rel=$(cat "$(cache $series)/kver")
		is "$(j "$w-$series" .kernel)" "$rel" "$w on $fs, $series: the result names the release that ran"
		t "$w on $fs, $series: the recording ran every step (nothing rejected)" \
			'[ "$(j "$w-$series" ".rejected // \"none\"")" = none ] && grep -q ", 0 failed)$" "$T/$w-$series.log"'
		if [ "${EXPECT[$w]:-passes}" = torn-super ]; then
			t "$w on $fs, $series: fails as measured, only while the superblock write was torn (exit 3)" \
				'[ "$(cat "$T/$w-$series.rc")" = 3 ] && torn_super "$w-$series"'
		elif [ "${EXPECT[$w]:-passes}" = fs-promise ]; then
			t "$w on $fs, $series: fails as measured, only the filesystem's own promise (exit 3)" \
				'[ "$(cat "$T/$w-$series.rc")" = 3 ] && [ "$(j "$w-$series" ".failures | length")" -ge 1 ] &&
				[ "$(j "$w-$series" "[.failures[] | select(.broken != [\"fs-promise\"])] | length")" = 0 ]'
		else
			t "$w on $fs, $series: passes, as measured (states judged, none failing; exit 0)" \
				'[ "$(cat "$T/$w-$series.rc")" = 0 ] && [ "$(j "$w-$series" .judged)" -ge 1 ] &&
				[ "$(j "$w-$series" .ok)" = "$(j "$w-$series" .judged)" ]'
		fi
	done
done

# A step the kernel refuses: btrfs has no FALLOC_FL_COLLAPSE_RANGE.
printf 'name falloc-collapse\nsetup\ncreate /foo\nwrite /foo 0 16k\nrun\nfsync /foo\n%s\n%s\n' \
	'falloc /foo collapse 4096 4096' 'fsync /foo' >"$T/collapse.wl"
zoo collapse "$T/collapse.wl" btrfs 6.1 1
o=$T/collapse
t "the recording says the guest kernel refused step 1, and went on to the states" \
	'grep -q "^vmrecord: step 1: Operation not supported (the guest kernel refused it; the run stopped there)$" "$o.log" &&
	grep -q "1 steps returned, 1 failed)$" "$o.log"'
want="step 1 (falloc /foo collapse 4k 4k): rejected by the kernel: EOPNOTSUPP"
is "$(jq -r .rejected "$T/collapse.json")" "$want" "the result names the step and the errno"
t "the summary says so too" 'grep -qxF "rejected: $want" "$o.log"'
t "a refusal is an outcome: exit 0, its states judged, none failing" \
	'[ "$(cat "$o.rc")" = 0 ] && [ "$(jq .judged "$T/collapse.json")" -ge 1 ] &&
	[ "$(jq .ok "$T/collapse.json")" = "$(jq .judged "$T/collapse.json")" ]'
done_testing
