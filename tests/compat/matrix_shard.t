#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_shard.t — a matrix run as shards through GNU parallel merges into the very
# matrix.json of the unsharded run (byte for byte), the same table and report; real-kernel
# cells (a stand-in for `blackout vmtest`, BLACKOUT_VM_CELL: qemu is tests/vm's) shard like the others; and the merge
# refuses what cannot be one matrix: a missing or repeated shard, parts of different
# runs or shard counts, a damaged part, run options beside --merge.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
need_tool parallel jq

# the stand-in harness: its counts depend on its arguments (barrier=0 loses synced data)
fake="$SCRATCH/src"
mkdir -p "$fake"
cat >"$fake/vmcell" <<'EOF'
#!/bin/bash
[ "$1" = --stack ] || exit 2
while [ $# -gt 0 ]; do
	case "$1" in --stack) stack=$2 ;; --fs) fs=$2 ;; --json) json=$2 ;; --max-states) cuts=$2 ;; esac
	shift 2
done
lost=0
case "$fs" in *barrier=0*) lost=2 ;; esac
printf '{"blackout_explore":1,"stack":"%s","fs":"linux-%s","workload":"append-fsync","seed":1,"max_states":%d,"shard":0,"nshards":1,"cuts":%d,"space":0,"space_log2":0,"exhaustive":false,"built":3,"coverage":0.5,"judged":3,"duplicates":0,"ok":%d,"silent":%d,"detected":0,"e2fsck_runs":3,"e2fsck_disagree":0,"violations":{"durable":%d,"stale":0,"bystander":0,"consistent":0,"atomic":0},"allowed":{"durable":0,"stale":0,"bystander":0,"consistent":0,"atomic":0},"failures":[]}\n' \
	"$stack" "$fs" "$cuts" "$cuts" $((3 - lost)) $lost $lost >"$json"
EOF
chmod +x "$fake/vmcell"
export BLACKOUT_VM_CELL="$fake/vmcell"

# a small matrix (about 10 s in all): explorer cells of four rows, three columns and
# two workloads, real-kernel cells in two columns; without the application section,
# which shards do not run (matrix_apps.t)
# (one line: parallel hands its command to a shell)
ARGS="--rows nocache,cache,flash-cheap-128k,raid5-degraded,write-errors \
--columns ext2,ext3-ordered-b0,ext3-ordered-b1,linux-ext4-b1,linux-ext4-b0 \
--workloads append-fsync,replace-dirsync --max-states 60 --vm --vm-states 3 --vm-apps none"
# shellcheck disable=SC2086
"$BLACKOUT" matrix $ARGS --jobs 2 --out "$SCRATCH/whole" >"$SCRATCH/whole.txt" 2>"$SCRATCH/whole.err"
ok $? "the unsharded matrix ran"

seq 0 2 | parallel -j 2 --halt now,fail=1 \
	"$BLACKOUT" matrix "$ARGS" --jobs 1 --shard {}/3 --out "$SCRATCH/vm-{}" \
	--json "$SCRATCH/part-{}.json" >"$SCRATCH/parallel.txt" 2>"$SCRATCH/parallel.err"
ok $? "three shards ran through GNU parallel"
sed 's/^/#   /' "$SCRATCH/parallel.txt"
[ "$(grep -c '^matrix: shard [012]/3: [0-9]* of [0-9]* explorations' "$SCRATCH/parallel.txt")" -eq 3 ] &&
	total=$(jq -s 'map(.results|length)|add' "$SCRATCH"/part-*.json) &&
	[ "$total" -eq "$(jq '.plan.explorations' "$SCRATCH/part-0.json")" ] &&
	jq -s -e 'all(.[]; .results|length > 0)' "$SCRATCH"/part-*.json >/dev/null
ok $? "every exploration is in exactly one part, and every shard has some"

"$BLACKOUT" matrix --merge "$SCRATCH"/part-2.json "$SCRATCH"/part-0.json "$SCRATCH"/part-1.json \
	--out "$SCRATCH/merged" --json "$SCRATCH/merged.json" >"$SCRATCH/merged.txt" 2>"$SCRATCH/merged.err"
ok $? "--merge read the three parts (in any order)"
sed 's/^/#   /' "$SCRATCH/merged.err"

cmp "$SCRATCH/whole/matrix.json" "$SCRATCH/merged/matrix.json" &&
	cmp "$SCRATCH/whole/matrix.json" "$SCRATCH/merged.json"
ok $? "the merged matrix.json is the unsharded run's, byte for byte (and --json FILE too)"

jq -e '[.cells[] | select(.col|startswith("linux-")) | select(.ran)] | length > 0' \
	"$SCRATCH/merged.json" >/dev/null &&
	! grep -q '"seconds"' "$SCRATCH/merged.json"
ok $? "real-kernel cells went through the shards; no timing in matrix.json"

diff <(grep -v '^report:' "$SCRATCH/whole.txt") <(grep -v '^report:' "$SCRATCH/merged.txt") >"$SCRATCH/table.diff"
ok $? "the merge prints the unsharded run's table and verdicts"
sed 's/^/#   /' "$SCRATCH/table.diff" | head -20
[ -s "$SCRATCH/merged/report.html" ] && [ -s "$SCRATCH/merged/matrix.md" ]
ok $? "the merge writes report.html and matrix.md"

# ---- refusals ----
refused() { # DESC PATTERN ARGS...: exit 2 or 1, the message matches, no report written
	desc=$1 pat=$2
	shift 2
	rm -rf "$SCRATCH/bad"
	"$BLACKOUT" matrix "$@" --out "$SCRATCH/bad" >/dev/null 2>"$SCRATCH/bad.err"
	rc=$?
	[ $rc -ne 0 ] && grep -Eq -- "$pat" "$SCRATCH/bad.err" && [ ! -e "$SCRATCH/bad/matrix.json" ]
	ok $? "$desc (rc $rc)"
	sed 's/^/#   /' "$SCRATCH/bad.err"
}
P="$SCRATCH/part"
refused "a missing shard is refused" 'shard 2 of 3 is missing' --merge "$P-0.json" "$P-1.json"
refused "a shard given twice is refused" 'shard 1 of 3 is given twice' \
	--merge "$P-0.json" "$P-1.json" "$P-1.json" "$P-2.json"

# shellcheck disable=SC2086
"$BLACKOUT" matrix $ARGS --seed 2 --jobs 2 --shard 1/3 --json "$SCRATCH/seed2.json" \
	--out "$SCRATCH/vm-s2" >/dev/null 2>&1
refused "a part of a run with another seed is refused, naming what differs" \
	'different matrices \(their seed differ' --merge "$P-0.json" "$SCRATCH/seed2.json" "$P-2.json"
# shellcheck disable=SC2086
"$BLACKOUT" matrix $ARGS --workloads append-fsync --jobs 2 --shard 1/3 \
	--json "$SCRATCH/wl.json" --out "$SCRATCH/vm-wl" >/dev/null 2>&1
refused "a part of a run with other workloads is refused" \
	'their workloads differ' --merge "$P-0.json" "$SCRATCH/wl.json" "$P-2.json"
# shellcheck disable=SC2086
"$BLACKOUT" matrix $ARGS --jobs 2 --shard 0/2 --json "$SCRATCH/of2.json" \
	--out "$SCRATCH/vm-2" >/dev/null 2>&1
refused "parts of different shard counts are refused" 'shard 0 of 2' \
	--merge "$P-0.json" "$P-1.json" "$P-2.json" "$SCRATCH/of2.json"

head -c 300 "$P-1.json" >"$SCRATCH/cut.json"
refused "a truncated part is refused, naming the file" 'cut.json: matrix part' \
	--merge "$P-0.json" "$SCRATCH/cut.json" "$P-2.json"
jq -c '.results[0].ok = (.results[0].states + 1)' "$P-1.json" >"$SCRATCH/sum.json"
refused "a part whose counts do not add up is refused, naming the field" \
	'sum.json: .*results\[0\]' --merge "$P-0.json" "$SCRATCH/sum.json" "$P-2.json"
jq -c '.results[0].task = 0' "$P-1.json" >"$SCRATCH/task.json"
refused "a part holding another shard's exploration is refused" \
	'task.json: .*not one of this shard' --merge "$P-0.json" "$SCRATCH/task.json" "$P-2.json"
jq -c '.results |= .[1:]' "$P-1.json" >"$SCRATCH/short.json"
refused "a part missing one of its explorations is refused" \
	'short.json: .*is missing' --merge "$P-0.json" "$SCRATCH/short.json" "$P-2.json"
jq -c '.plan.rows[0] = "no-such-row"' "$P-1.json" >"$SCRATCH/row.json"
refused "a part naming a row this build does not have is refused" \
	"row.json: .*unknown row 'no-such-row'" --merge "$P-0.json" "$SCRATCH/row.json" "$P-2.json"
refused "--merge takes no run options" '--merge and --seed cannot be used together' --merge "$P-0.json" --seed 3
refused "--shard wants I/N with I below N" "--shard: I/N" --quick --shard 3/3
refused "--shard without --json FILE writes to DIR; bare --json is refused" \
	'--json needs a FILE' --quick --shard 0/3 --json

done_testing
