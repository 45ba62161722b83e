#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# gen_campaign.t — `blackout gen --fs`: seq-1 as a campaign on blackout's ext3 under a
# cache that ignores flushes (so failures exist), no guest: every unit ran or was not
# supported by the model (counted); the failures are deduplicated by signature and
# counted; the same campaign as 3 shards through GNU parallel merges byte-identical to
# the unsharded run, and so does the run with two worker processes (--jobs 2) and one
# resumed (--resume) after some results were lost; a merge
# refuses a missing shard, a damaged part and parts of campaigns that differ. TAP.
. "$(dirname "$0")/../test-lib.sh"
need_tool parallel jq

LIAR='cache(size=64k,flush=ignore) > disk > mem(size=16M)'
"$B" gen --fs model --len 1 --stack "$LIAR" --max-states 100 --out "$T/all" \
	>"$T/all.out" 2>"$T/all.err"
rc=$?
t "the campaign found failing states (exit 3)" '[ $rc -eq 3 ]'
sed -n 1,4p "$T/all.out" | sed 's/^/#   /'
t "175 units: 111 ran, 64 not supported by the model, no errors" \
	'grep -q "^units: 175; ran 111, not supported by the model 64, errors 0; " "$T/all/report.txt"'
t "stdout is report.txt" 'cmp -s "$T/all.out" "$T/all/report.txt"'
t "one progress line per unit" '[ "$(grep -c "^gen: \[[0-9]*/175\]" "$T/all.err")" = 175 ]'
n=$(grep -c "	unsupported	.*not supported by the model (blackout's ext3)$" "$T/all/units.txt")
t "each refused unit names the step it cannot run" '[ "$n" = 64 ]'
t "the JSON counts the same" \
	'[ "$(jq -c ".totals|[.workloads,.ran,.not_supported,.errors]" "$T/all/report.json")" = "[175,111,64,0]" ]'

# deduplication: one entry per (fs, kernel, invariant, operations), counted from units.txt
distinct=$(sed -n 's/^units: .* failing; \([0-9]*\) distinct failures$/\1/p' "$T/all/report.txt")
failing=$(awk -F'\t' '$1 == "unit" && $9 > 0' "$T/all/units.txt" | wc -l)
diag "distinct failures: $distinct, failing workloads: $failing"
t "fewer distinct failures than failing workloads, and some" \
	'[ "${distinct:-0}" -gt 0 ] && [ "$distinct" -lt "$failing" ]'
t "the JSON lists each signature once" \
	'jq -e "[.failures[]|[.fs,.kernel,.invariant,(.ops|join(\",\"))]] | length == (unique|length) and length == $distinct" "$T/all/report.json" >/dev/null'
awk -F'\t' '$1 == "unit" { fs = $4; k = $5; ops = $12 }
	$1 == "hit" { n[fs " " k " " $2 " " ops]++ }
	END { for (s in n) print s, n[s] }' "$T/all/units.txt" | sort >"$T/want"
jq -r '.failures[] | "\(.fs) \(.kernel) \(.invariant) \(.ops|join(",")) \(.workloads)"' \
	"$T/all/report.json" | sort >"$T/got"
t "each signature's workload count is the units that broke it" \
	'[ -s "$T/want" ] && cmp -s "$T/want" "$T/got"'
first=$(jq -r '.failures[0].first_workload' "$T/all/report.json")
t "a signature's first workload is written beside the report" '[ -f "$T/all/workloads/$first.wl" ]'
line=$(jq -r '.failures[0].rebuild' "$T/all/report.json")
state=$(jq -r '.failures[0].state' "$T/all/report.json")
out=$(cd "$T/all" && eval "\"\$B\" ${line#blackout }" 2>&1)
rc=$?
t "its rebuild line, run in the campaign's directory, rebuilds the failing state" \
	'[ $rc -eq 3 ] && echo "$out" | grep -q "$state"'

# the same campaign in 3 shards through GNU parallel, then merged
parallel -q -j 2 --joblog "$T/jobs" "$B" gen --fs model --len 1 --stack "$LIAR" \
	--max-states 100 --shard {}/3 --out "$T/s{}" ::: 0 1 2 >"$T/par.out" 2>"$T/par.err"
t "three shards ran through GNU parallel (exit 0 or 3 each)" \
	'[ "$(awk "NR > 1 && (\$7 == 0 || \$7 == 3)" "$T/jobs" | wc -l)" = 3 ]'
t "each shard holds its third of the units" \
	'[ "$(cat "$T"/s[012]/units.txt | grep -c "^unit	")" = 175 ] && grep -q "^shard	1/3$" "$T/s1/units.txt"'
"$B" gen --merge --out "$T/merged" "$T/s2" "$T/s0" "$T/s1" >"$T/merged.out" 2>&1
rc=$?
t "the merge ran (exit 3: failures)" '[ $rc -eq 3 ]'
for f in units.txt report.txt report.json; do
	t "merged $f is byte-identical to the unsharded run's" 'cmp "$T/all/$f" "$T/merged/$f"'
done
t "and so is the whole directory (workloads, results)" 'diff -r "$T/all" "$T/merged" >/dev/null'

"$B" gen --fs model --len 1 --stack "$LIAR" --max-states 100 --jobs 2 --out "$T/j2" \
	>/dev/null 2>&1
t "--jobs 2 (two worker processes) writes the same files" 'diff -r "$T/all" "$T/j2" >/dev/null'

# --resume: a campaign stopped part-way (three units' results gone, no report) runs
# only what is missing and ends byte-identical; a different budget keeps nothing
cp -r "$T/all" "$T/res" && rm "$T/res/units.txt" "$T/res/report.txt" "$T/res/report.json" \
	"$T/res/runs/seq1-000002@model.json" "$T/res/runs/seq1-000050@model.json" \
	"$T/res/runs/seq1-000175@model.json"
"$B" gen --fs model --len 1 --stack "$LIAR" --max-states 100 --resume --jobs 2 --out "$T/res" \
	>/dev/null 2>"$T/res.err"
kept=$(grep -c "(an earlier run's result, --resume)$" "$T/res.err")
t "--resume kept every result but the three removed ($kept of 111)" '[ "$kept" = 108 ]'
t "and wrote what the uninterrupted run wrote" 'diff -r "$T/all" "$T/res" >/dev/null'
"$B" gen --fs model --len 1 --stack "$LIAR" --max-states 99 --resume --out "$T/res" \
	>/dev/null 2>"$T/res2.err"
t "a result of another budget is not this campaign's: run again" \
	'! grep -q "earlier run" "$T/res2.err" && grep -q "^max-states	99$" "$T/res/units.txt"'

err=$("$B" gen --merge --out "$T/m2" "$T/s0" "$T/s1" 2>&1)
rc=$?
t "a missing shard is refused" '[ $rc -eq 1 ] && echo "$err" | grep -q "a shard is missing"'
err=$("$B" gen --merge --out "$T/m3" "$T/s0" "$T/s0" "$T/s1" 2>&1)
rc=$?
t "a repeated shard is refused" '[ $rc -eq 1 ] && echo "$err" | grep -q "shard 0/3 given twice"'
mkdir -p "$T/bad" && sed '12s/	ran	/	walked	/' "$T/s1/units.txt" >"$T/bad/units.txt"
err=$("$B" gen --merge --out "$T/m4" "$T/s0" "$T/bad" "$T/s2" 2>&1)
rc=$?
t "a damaged part is refused naming its line" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "units.txt: campaign part, line 12: the outcome is not ran"'
mkdir -p "$T/pr" && sed 's/^prune	no$/prune	yes/' "$T/s1/units.txt" >"$T/pr/units.txt"
err=$("$B" gen --merge --out "$T/m5" "$T/s0" "$T/pr" "$T/s2" 2>&1)
rc=$?
t "a part of a pruning campaign does not merge with unpruned ones" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "part 2 is of another campaign"'
mkdir -p "$T/pn" && awk -F'\t' -v OFS='\t' '$1 == "unit" && !done { $10 = 4; done = 1 } 1' \
	"$T/s1/units.txt" >"$T/pn/units.txt"
err=$("$B" gen --merge --out "$T/m6" "$T/s0" "$T/pn" "$T/s2" 2>&1)
rc=$?
t "a unit that counts pruned states in a campaign without --prune is refused" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "line 10: states pruned in a unit that prunes none"'

err=$("$B" gen --fs nfs --len 1 --out "$T/x" 2>&1)
rc=$?
t "an unknown filesystem is a usage error naming it" '[ $rc -eq 2 ] && echo "$err" | grep -q "nfs"'
err=$("$B" gen --fs model --len 1 2>&1)
rc=$?
t "a campaign needs --out" '[ $rc -eq 2 ] && echo "$err" | grep -q -- "--out"'
err=$("$B" gen --fs model --len 1 --kernel 5.10 --out "$T/x" 2>&1)
rc=$?
t "an unknown kernel is a usage error" '[ $rc -eq 2 ] && echo "$err" | grep -q "5.10"'
err=$("$B" gen --len 1 --shard 0/2 2>&1)
rc=$?
t "--shard without --fs is a usage error" '[ $rc -eq 2 ] && echo "$err" | grep -q "go with --fs"'
done_testing
