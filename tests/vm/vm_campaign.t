#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vm_campaign.t — a small real-kernel campaign (docs/gen.md, "Campaigns"): seq-1 on ext4
# (kernel 6.1) and blackout's ext3, one shard of 175 (two units: seq1-000002, create +
# fsync, on ext4 in a guest; seq1-000089 on the model) under a cache that ignores
# flushes, 8 states a unit. The ext4 unit runs through vm_explore and judges its
# states; the report counts both columns from units.txt; a failure's rebuild line is a
# vmtest line. Then seq1-000022 (falloc collapse + fsync) alone on btrfs, which has no
# collapse range: the unit runs, counts the step the kernel refused and names it. Both
# campaigns prune (--prune): the ext4 unit counts what its journal rule left unjudged,
# btrfs prunes nothing and says why.
. "$(dirname "$0")/vm_lib.sh"

LIAR='cache(size=1M,flush=ignore) > mem(size=64M)'
timeout "${VM_TIMEOUT:-600}" "$BLACKOUT" gen --fs ext4,model --kernel 6.1 --len 1 \
	--shard 2/175 --max-states 8 --prune --jobs 1 --stack "$LIAR" --out "$T/c" \
	>"$T/c.out" 2>"$T/c.err"
rc=$?
grep -hv '^/' "$T/c.out" "$T/c.err" | sed 's/^/# /'
t "the campaign ran (exit 0 or 3)" '[ $rc -eq 0 ] || [ $rc -eq 3 ]'
t "two units, both ran, no errors" \
	'grep -q "^units: 2; ran 2, not supported by the model 0, errors 0; " "$T/c/report.txt"'
t "the ext4 unit is seq1-000002 on kernel 6.1, in a guest" \
	'grep -q "^unit	2	seq1-000002	ext4	6.1	ran	" "$T/c/units.txt" && [ -f "$T/c/runs/seq1-000002@ext4@6.1/result.json" ]'
judged=$(awk -F'\t' '$1 == "unit" && $4 == "ext4" { print $7 }' "$T/c/units.txt")
t "the guests judged its states (1..8)" '[ "${judged:-0}" -ge 1 ] && [ "$judged" -le 8 ]'
t "vm_explore's result agrees with the unit's count" \
	'[ "$(jq .judged "$T/c/runs/seq1-000002@ext4@6.1/result.json")" = "$judged" ]'
R=$T/c/runs/seq1-000002@ext4@6.1/result.json
pruned=$(awk -F'\t' '$1 == "unit" && $4 == "ext4" { print $10 }' "$T/c/units.txt")
t "--prune reached the ext4 unit: its journal rule applied, its count is the unit's" \
	'[ "$(jq -r .pruned.rule "$R")" = journal-replay ] && [ "$(jq .pruned.off "$R")" = null ] && [ "$(jq .pruned.states "$R")" = "$pruned" ]'
t "the report counts the pruned states beside the judged ones" \
	'grep -q "^  ext4 6.1: .* $judged states judged ($pruned more pruned), " "$T/c/report.txt" && [ "$(jq ".per_fs[0].states_pruned" "$T/c/report.json")" = "$pruned" ]'
t "the model's unit ran in-process (kernel -)" \
	'grep -q "^unit	177	seq1-000089	model	-	ran	" "$T/c/units.txt"'
t "report.json has both columns" \
	'[ "$(jq -c "[.per_fs[]|[.fs,.kernel,.workloads]]" "$T/c/report.json")" = "[[\"ext4\",\"6.1\",1],[\"model\",\"-\",1]]" ]'
bad=$(jq -r '.failures[] | select(.fs == "ext4") | .rebuild' "$T/c/report.json" |
	grep -vc "^blackout vmtest --stack .* --fs 'ext4' --workload workloads/seq1-000002.wl .* --state ")
t "every ext4 failure's rebuild line is a vmtest line naming its state" '[ "$bad" = 0 ]'

timeout "${VM_TIMEOUT:-600}" "$BLACKOUT" gen --fs btrfs --len 1 --shard 21/175 --max-states 2 --prune \
	--out "$T/b" >"$T/b.out" 2>"$T/b.err"
rc=$?
grep -hv '^/' "$T/b.out" "$T/b.err" | sed 's/^/# /'
t "btrfs: falloc collapse ran with the step the kernel refused, named" \
	'[ $rc -eq 0 ] && grep -q "^unit	21	seq1-000022	btrfs	6.1	ran	[0-9]*	[0-9]*	0	0	1	falloc,fsync	the kernel refused step 1 (falloc)$" "$T/b/units.txt"'
t "btrfs has no journal the rule reads: nothing pruned, and its result says why" \
	'[ "$(jq -r ".pruned.off | length > 0" "$T/b/runs/seq1-000022@btrfs@6.1/result.json")" = true ]'
t "and the report counts it" \
	'grep -q "^  btrfs 6.1: 1 workloads: ran 1, not supported by the model 0, errors 0; 1 with a step the kernel refused;" "$T/b/report.txt"'
done_testing
