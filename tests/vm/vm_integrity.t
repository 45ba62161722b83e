#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_integrity.t — dm-integrity under ext4 in the guest (docs/integrity.md). Cheap flash
# with 128 KiB erase blocks: plain ext4 has states whose bystander files (synced before
# the run, never touched by it) hold other bytes and nobody says so; with dm-integrity
# between the flash and ext4 (integritysetup format: CRC32C tags, its journal) the cuts
# still damage sectors, but every damaged state reads back as an error (a file's read, or
# the mount): no silent bystander damage, no silent state at all. The two runs cannot
# share a recording (dm-integrity writes other blocks, so the cut points differ), so they
# are compared by their counts: states with bystander damage silent vs detected in each.
# Then a torn-sector disk: plain ext4 has silent states (torn data), with dm-integrity
# none. A log recorded over dm-integrity is refused without --integrity and the other way
# round, before any guest boots.
. "$(dirname "$0")/../test-lib.sh"
need_tool jq
SRC=${BLACKOUT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
FLASH='flash(ftl=cheap,eb=128k,page=4k,size=32M)'
TORN='disk(tear=byte) > mem(size=32M)'
WL=(--fs ext4 --workload overwrite --files 16)

# judge NAME STACK ARGS...: an explorer-mode vmtest into $T/NAME (exit 0: nothing broke,
# 3: some state did; anything else fails)
judge() {
	local name=$1 stack=$2
	shift 2
	timeout 900 "$BLACKOUT" vmtest --stack "$stack" "${WL[@]}" --jobs 2 --seed 1 "$@" \
		--out "$T/$name" --json "$T/$name.json" >"$T/$name.log" 2>&1
	local rc=$?
	grep '^states:\|^judged:\|^time:' "$T/$name.log" | sed "s/^/# $name: /"
	[ $rc -eq 0 ] || [ $rc -eq 3 ] ||
		{ echo "vmtest $name failed (exit $rc):" && tail -n 20 "$T/$name.log"; } >&2
	[ $rc -eq 0 ] || [ $rc -eq 3 ]
}
j() { jq -r "$2" "$T/$1.json"; }
# states whose bystanders were damaged, silent / detected
BY_SILENT='[.failures[] | select((.broken | index("bystander")) and (.detected | not))] | length'
BY_DETECTED='[.failures[] | select((.broken | index("bystander")) and .detected)] | length'
# the steps after which a state had silent bystander damage / was detected
steps() { jq -r "[.failures[] | select($2) | .completed] | unique | map(tostring) | join(\",\")" "$T/$1.json"; }

# record NAME STACK: vmrecord --integrity into $T/NAME
record() {
	timeout 600 "$SRC/scripts/vmrecord" --stack "$2" --integrity "${WL[@]}" --out "$T/$1" \
		>"$T/$1.rec.log" 2>&1
	local rc=$?
	sed "s/^/# $1: /" "$T/$1.rec.log"
	grep -h '^integrity:' "$T/$1/console" 2>/dev/null | sed "s/^/# $1: /"
	return $rc
}

# ---- cheap flash, plain ----------------------------------------------------------
judge plain "$FLASH" --max-states 40
ok $? "plain ext4 on $FLASH: recorded, enumerated, judged in guests"
by_plain=$(j plain "$BY_SILENT")
[ "$by_plain" -gt 0 ]
ok $? "plain: bystander files silently damaged in $by_plain of $(j plain .judged) states (after steps $(steps plain '(.broken | index("bystander")) and (.detected | not)'))"

# An integritysetup open that fails is the state's outcome, not a harness error: the
# plain run's states carry no dm-integrity superblock, so guests told to open them
# (vmobserve --integrity: the pool without vmtest's refusal) report a failed mount
timeout 300 "$BLACKOUT" vmobserve "$T/plain/states" 2 --fs ext4 --integrity --jobs 1 \
	>"$T/open.jsonl" 2>"$T/open.err"
rc=$?
[ $rc = 0 ] && [ "$(jq -s '[.[] | select(.mount_rc != null and .mount_rc != 0 and
	(.mount_msg | contains("integrity: Device")) and (.hung | not))] | length' "$T/open.jsonl")" = 2 ]
ok $? "a failed integritysetup open is each state's outcome: $(head -n 1 "$T/open.jsonl" | jq -r .mount_msg)"

# ---- cheap flash, dm-integrity under ext4 ----------------------------------------
record ri "$FLASH"
ok $? "dm-integrity on the same flash: formatted, opened, ext4 and the workload recorded"
"$BLACKOUT" log dump --json "$T/ri/io.log" >"$T/ri.json"
is "$(jq -r '[.ops[] | select(.op == "mark" and (.name | startswith("integrity ")))][0].name' \
	"$T/ri.json")" "integrity crc32c journal" "the recording says it was made over dm-integrity"

# (--max-states 2: were the check gone, a guest would judge two states, not 500)
timeout 300 "$BLACKOUT" vmtest --stack "$FLASH" "${WL[@]}" --log "$T/ri/io.log" --max-states 2 \
	--out "$T/no" >"$T/no.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q 'recorded over dm-integrity: give --integrity' "$T/no.log" && ! ls "$T"/no/pool/*.console >/dev/null 2>&1
ok $? "judging it without --integrity is refused: $(tail -n 1 "$T/no.log")"

judge integ "$FLASH" --log "$T/ri/io.log" --integrity --max-states 40
ok $? "judged in guests, each state opened with integritysetup before the mount"
failing=$(($(j integ .judged) - $(j integ .ok)))
[ "$(j integ .judged)" -ge 30 ] && [ "$(j integ .ok)" -gt 0 ] && [ "$failing" -gt 0 ]
ok $? "$(j integ .judged) distinct states: $(j integ .ok) mounted and read clean, $failing damaged by the cut (the flash still destroys sectors)"
by_det=$(j integ "$BY_DETECTED")
[ "$(j integ "$BY_SILENT")" = 0 ] && [ "$(j integ .silent)" = 0 ]
ok $? "no silent bystander damage (plain: $by_plain states), no silent state at all; bystander damage detected in $by_det, $(j integ .detected) states detected in all (steps $(steps integ .detected))"
reads=$(jq '[.failures[] | select(.detected_by == "read")] | length' "$T/integ.json")
mounts=$(jq '[.failures[] | select(.detected_by == "mount")] | length' "$T/integ.json")
[ $((reads + mounts)) = "$failing" ] && [ "$reads" -gt 0 ]
ok $? "each damaged state is a read error: $reads a file's read (EIO), $mounts the mount's"

# ---- a torn-sector disk ------------------------------------------------------------
judge tplain "$TORN" --max-states 30
ok $? "plain ext4 on $TORN"
[ "$(j tplain .silent)" -gt 0 ]
ok $? "plain: $(j tplain .silent) of $(j tplain .judged) states silently damaged (torn writes: $(j tplain '.violations | to_entries | map(select(.value > 0) | "\(.key) \(.value)") | join(", ")'))"
record rt "$TORN"
ok $? "dm-integrity on the torn-sector disk: recorded"
judge torn "$TORN" --log "$T/rt/io.log" --integrity --max-states 30
ok $? "judged in guests through dm-integrity"
[ "$(j torn .judged)" -ge 20 ] && [ "$(j torn .ok)" -gt 0 ] && [ "$(j torn .silent)" = 0 ]
ok $? "torn sectors under dm-integrity: $(j torn .judged) states, none silent ($(j torn .detected) detected, by $(jq -r '[.failures[].detected_by] | unique | join(",")' "$T/torn.json"))"

timeout 300 "$BLACKOUT" vmtest --stack "$TORN" "${WL[@]}" --log "$T/tplain/record/io.log" \
	--integrity --max-states 2 --out "$T/no2" >"$T/no2.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q 'recorded without dm-integrity: leave out --integrity' "$T/no2.log"
ok $? "a plain recording with --integrity is refused: $(tail -n 1 "$T/no2.log")"

done_testing
