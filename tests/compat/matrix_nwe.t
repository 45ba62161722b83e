#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_nwe.t — NO-WRITE-ERRORS as the patch states it: the write-errors rows of
# `blackout matrix` fail home writes during checkpoints of checkpoint-append, after
# their fsync returned. The 2009 checkpoint (checkpoint_errors=ignore) loses synced data
# silently, today's abort loses none silently and its refused mounts are told as
# "durability unknown", never as kept; sectors that stay bad turn the loss detected;
# lost writes are silent whatever the policy. Asserted from the cells and the verdicts.
. "$BLACKOUT_SRC/tests/compat/lib.sh"

ROWS=write-errors,write-errors-2009,bad-sectors-2009,lost-writes
J="$SCRATCH/m.json"
"$BLACKOUT" matrix --rows "$ROWS" --json --out "$SCRATCH/report" >"$J" 2>"$SCRATCH/err.txt"
ok $? "blackout matrix --rows $ROWS ran"
"$BLACKOUT" matrix --rows "$ROWS" --out "$SCRATCH/report2" >"$SCRATCH/table.txt" 2>/dev/null
sed -n '/What the measurements say/,$p' "$SCRATCH/table.txt" | sed 's/^/#   /'

jq -e '.workloads | index("checkpoint-append") != null' "$J" >/dev/null
ok $? "quick: checkpoint-append is among the workloads (the write-errors rows run it alone)"
cell() { jq -e --arg r "$1" ".cells[] | select(.row==\$r and .col==\"ext3-ordered-b1\") | $2" "$J" >/dev/null; }

cell write-errors '.write_errors > 0' && cell write-errors-2009 '.write_errors > 0'
ok $? "home writes failed during the run, after fsync returned, under both policies"
cell write-errors-2009 '.silent_lost > 0 and .silent_lost <= .silent and .violations.durable > 0'
ok $? "checkpoint_errors=ignore (2009): synced data lost silently"
cell write-errors '.silent_lost == 0 and .silent == 0 and .detected > 0'
ok $? "checkpoint_errors=abort: nothing lost silently, the aborted journal detected"
cell write-errors '.ok + .detected == .states and .violations.durable == 0'
ok $? "abort: a refused mount is a failing state (detected), never an ok one"
jq -e '.cells[] | select(.row=="write-errors" and .col=="ext3-ordered-b1") |
	.example.broken | test("mount failed")' "$J" >/dev/null
ok $? "abort: the example is a refused mount"
cell bad-sectors-2009 '.silent_lost == 0 and .detected > 0'
ok $? "sectors that stay bad across the cut: the 2009 loss is detected"
cell lost-writes '.silent_lost > 0' && cell lost-writes '.write_errors == 0'
ok $? "lost writes: no error, synced data lost silently even with abort"

v=$(jq -r '.verdicts[] | select(.expectation=="NO-WRITE-ERRORS") | .text' "$J")
printf '%s\n' "$v" | grep -Eq 'under the 2009 checkpoint \(checkpoint_errors=ignore\) [1-9][0-9]* failed and it lost synced data silently in [1-9][0-9]* of [0-9]+ states'
ok $? "the verdict: home writes failed and silent losses under the 2009 policy"
printf '%s\n' "$v" | grep -Eq "under today's abort [1-9][0-9]* failed and it lost no synced data silently \([0-9]+ states\); [1-9][0-9]* detected \(mount refused or a read failed: durability unknown\)"
ok $? "the verdict: none silent under abort, its refused mounts' durability unknown"
! printf '%s\n' "$v" | grep -Eq 'never lost|kept synced'
ok $? "the verdict never calls a refused mount's synced data kept"
grep -q '\[NO-WRITE-ERRORS\] Home writes failing after fsync returned' "$SCRATCH/table.txt"
ok $? "the terminal table prints the NO-WRITE-ERRORS verdict"

# a sharded run plans the rows' own workload the same way and merges to the same JSON
for s in 0 1; do
	"$BLACKOUT" matrix --rows "$ROWS" --jobs 1 --shard $s/2 --out "$SCRATCH/s$s" \
		--json "$SCRATCH/part-$s.json" >/dev/null 2>&1 || echo "shard $s failed" >&2
done
"$BLACKOUT" matrix --merge "$SCRATCH/part-0.json" "$SCRATCH/part-1.json" --out "$SCRATCH/merged" \
	--json "$SCRATCH/merged.json" >/dev/null 2>&1 &&
	cmp -s <(jq -S 'del(.verdicts)' "$J") <(jq -S 'del(.verdicts)' "$SCRATCH/merged.json") &&
	cmp -s <(jq '.verdicts' "$J") <(jq '.verdicts' "$SCRATCH/merged.json")
ok $? "two shards merge to the unsharded cells and verdicts (write_errors, silent_lost carried)"

done_testing
