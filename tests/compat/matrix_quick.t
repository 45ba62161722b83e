#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_quick.t — the main job end to end: `blackout matrix --quick` runs, its JSON
# follows docs/matrix.md, its verdicts are the physics the seeds describe (asserted
# from the cells, not a snapshot of numbers), and report.html works in a real
# browser, with and without JavaScript: one cell per row x column, a chart per row, the
# worst cell's drill-down open, another opening on a click; screenshots of both.
. "$BLACKOUT_SRC/tests/compat/lib.sh"

out="$SCRATCH/report"
t0=$(date +%s)
"$BLACKOUT" matrix --quick --out "$out" >"$SCRATCH/table.txt" 2>"$SCRATCH/err.txt"
ok $? "blackout matrix --quick ran"
t1=$(date +%s)
diag "quick matrix took $((t1 - t0)) s"
sed 's/^/#   /' "$SCRATCH/table.txt"
J="$out/matrix.json"
[ -s "$J" ] && [ -s "$out/matrix.md" ] && [ -s "$out/report.html" ]
ok $? "matrix.json, matrix.md and report.html written"
jq -e . "$J" >/dev/null && python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$J"
ok $? "jq and Python's json read matrix.json"
python3 - "$out/report.html" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
json.loads(m.group(1))
PY
ok $? "Python's json reads the data inside report.html"
jq -r '.verdicts[].text' "$J" | grep -q '—' && ! grep -q '\\u00' "$J"
ok $? "the verdicts' em dashes are UTF-8 in matrix.json, not one \\u escape per byte"

# ---- the schema (docs/matrix.md) ----
jq -e '.schema == "blackout-matrix/2" and (.mode == "quick") and (.seed|type=="number")
  and (has("seconds")|not) and (.workloads|length > 0)
  and (.invariants == ["durable","stale","bystander","consistent","atomic"])
  and (.rows|length > 0) and (.columns|length == 6)
  and all(.rows[]; (.id|type=="string") and (.label|type=="string") and (.stack|type=="string") and (.tests|type=="string"))
  and all(.columns[]; (.id|type=="string") and (.label|type=="string") and (.mkfs|type=="string") and (.mount|type=="string"))
  and (.verdicts|type=="array") and all(.verdicts[]; (.expectation|type=="string") and (.text|type=="string"))' "$J" >/dev/null
ok $? "matrix.json top level follows the schema"
jq -e '(.cells|length) == ((.rows|length) * (.columns|length))' "$J" >/dev/null
ok $? "one cell per row x column"
jq -e '[.rows[].id] as $r | [.columns[].id] as $c |
  [range(0; .rows|length) as $i | range(0; .columns|length) as $j | [$r[$i], $c[$j]]] ==
  [.cells[] | [.row, .col]]' "$J" >/dev/null
ok $? "cells are row-major and name their row and column"
jq -e 'all(.cells[]; (.states - .ok) as $failing | (.ran|type=="boolean") and (.states|type=="number") and (.ok <= .states)
  and (.silent + .detected == $failing) and (.allowed|type=="number") and (.allowed <= .ok)
  and all(.violations[]; . <= $failing)
  and ((.violations|keys) == (["atomic","bystander","consistent","durable","stale"]))
  and (.exhaustive|type=="boolean") and (.coverage >= 0 and .coverage <= 1)
  and (.example == null or ((.example.ops|type=="array") and (.example.damage|type=="array")
       and (.example.cut|type=="number") and (.example.rebuild|type=="string")
       and (.example.cut < (.example.ops|length) or (.example.ops|length) == 0))))' "$J" >/dev/null
ok $? "every cell's counts are consistent (ok + failing = states, silent + detected = failing)"
jq -e 'all(.cells[]; (.ran and .states > 0) or (.ran == false and (.note|test("--full runs it"))))' "$J" >/dev/null &&
	jq -e '(.cells | length) as $all | [.cells[] | select(.ran == false)] | length > 0 and length < $all / 2' "$J" >/dev/null
ok $? "every cell ran and judged states, but those --quick leaves out (n/a, saying --full runs them)"
# each example says what broke once: "durable: /x ...", never "durable: durable: /x ..."
jq -r '.cells[].example | objects | .broken' "$J" | grep -q . &&
	! jq -r '.cells[].example | objects | .broken' "$J" | grep -Eq '^([a-z]+): \1:'
ok $? "failing examples name each broken invariant once"

# ---- the physics (the crash explorer's issue, asserted on the quick matrix) ----
cell() { jq -e --arg r "$1" --arg c "$2" ".cells[] | select(.row==\$r and .col==\$c) | $3" "$J" >/dev/null; }
cell cache ext3-ordered-b1 '.violations.durable == 0 and .states == .ok'
ok $? "write cache honouring flush + ext3 barrier=1: zero violations"
cell cache ext3-ordered-b0 '.violations.durable > 0'
ok $? "the same with barrier=0: synced data lost"
cell cache-lying ext3-ordered-b1 '.violations.durable > 0'
ok $? "a cache ignoring flush loses synced data even with barrier=1"
cell nocache ext3-ordered-b0 '.states == .ok'
ok $? "no cache, atomic sectors, barrier=0: zero violations"
cell cache ext3-writeback-b1 '.allowed > 0' && cell cache ext3-ordered-b1 '.allowed == 0'
ok $? "data=writeback shows a deleted file's data in a new file (allowed, reported); ordered never"
cell torn ext3-ordered-b1 '.states > 0'
ok $? "torn sectors explored and reported"
cell nocache ext2 '.violations.consistent > 0 and .detected > 0'
ok $? "ext2 after a cut: inconsistencies, detected by fsck"
if jq -e '.rows[] | select(.id=="flash-cheap-128k")' "$J" >/dev/null; then
	cell flash-cheap-128k ext3-ordered-b1 '.violations.bystander > 0 and .silent > 0'
	ok $? "cheap flash: bystanders damaged, silently without metadata_csum"
	cell flash-cheap-128k ext3-csum '.detected > 0'
	ok $? "cheap flash with metadata_csum: the damage is detected"
	cell flash-careful ext3-ordered-b1 '.states == .ok'
	ok $? "careful flash: zero violations"
fi
[ "$(jq '.verdicts|length' "$J")" -gt 0 ]
ok $? "verdict lines computed"

# ---- issue 24: the seeds' verdicts, like with like, coverage stated ----
verdict() { jq -r --arg e "$1" --arg s "$2" '.verdicts[] | select(.expectation==$e and (.text|startswith($s))) | .text' "$J"; }
cell raid5-degraded ext3-ordered-b1 '.violations.bystander > 0' &&
	cell raid5-degraded-journal ext3-ordered-b1 '.violations.bystander == 0 and .states > 0'
ok $? "degraded RAID5 damages bystanders (overwrite-stripes); md's write journal none"
v=$(verdict DEGRADED-RAID "Degraded RAID5 (")
diag "$v"
printf '%s' "$v" | grep -q 'damaged files nobody was writing in [1-9]' &&
	printf '%s' "$v" | grep -q 'a single disk under the same workloads' &&
	printf '%s' "$v" | grep -q 'lost its redundancy' &&
	printf '%s' "$v" | grep -q 'only when a second failure would be tolerable' &&
	! jq -r '.verdicts[].text' "$J" | grep -qi 'worse than one disk'
ok $? "the degraded verdict compares with one disk and follows the article's conclusion, never 'worse than one disk'"
cell integrity-cheap-128k ext3-ordered-b1 '.states > 0 and .silent == 0 and .violations.bystander > 0'
ok $? "data checksums over cheap flash: bystanders damaged, none of it silent"
v=$(verdict JOURNAL-HIDES-DAMAGE "On cheap flash (128 KiB), ext3")
diag "$v"
printf '%s' "$v" | grep -q 'with metadata checksums (metadata_csum) [0-9]* of [0-9]*' &&
	printf '%s' "$v" | grep -q 'with data checksums (dm-integrity below the filesystem) 0 of [1-9]'
ok $? "the checksum verdict measures metadata and data checksums, both"
cell raid5-cache-lying ext3-ordered-b1 '.violations.durable > 0' &&
	cell raid5-nobarrier ext3-ordered-b1 '.violations.durable > 0' &&
	cell raid5-cache ext3-ordered-b1 '.violations.durable == 0 and .states > 0'
ok $? "RAID5 over caches ignoring flushes, or dropping them, loses synced data; over honoured caches with barrier=1 not"
v=$(verdict WRITE-CACHE "RAID5 over member write caches")
diag "$v"
printf '%s' "$v" | grep -q 'caches honouring flushes never lost synced data' &&
	printf '%s' "$v" | grep -q 'caches ignoring flushes lost synced data in [1-9]' &&
	printf '%s' "$v" | grep -q 'drops flushes (md before barrier support) over honest caches lost synced data in [1-9]'
ok $? "a verdict line for 'especially true on RAID5/6'"
cell garbage ext3-ordered-b1 '.states > 0' && v=$(verdict ATOMIC-SECTORS "Garbage at power loss") &&
	diag "$v" && { { cell garbage ext3-ordered-b1 '.violations.durable == 0' &&
	printf '%s' "$v" | grep -q 'ordered barrier=1: never lost synced data'; } ||
	printf '%s' "$v" | grep -q 'the durability promise broke'; }
ok $? "garbage at power loss: ext3 ordered barrier=1 keeps every synced byte, or the verdict says which promise broke"
cell torn-unreadable ext3-ordered-b1 '.states > .ok and .silent == 0 and .detected == .states - .ok' &&
	verdict ATOMIC-SECTORS "Torn sectors that read back as media errors" | grep -q '[1-9][0-9]* detected, 0 silent'
ok $? "unreadable torn sectors: every failing state reported detected"
jq -e '(.cells | map({key: (.row + " " + .col), value: .exhaustive}) | from_entries) as $ex |
  all(.verdicts[]; if ([.cells[] | $ex[.row + " " + .col]] | any(. == false))
    then (.text | test("sampled")) else true end) and
  ([.verdicts[] | select(.cells | length > 0)] | length > 10) and
  ([.verdicts[] | select(.text | test("sampled"))] | length > 0)' "$J" >/dev/null
ok $? "every verdict line drawn from a sampled cell says 'sampled'"
jq -e '[.cells[] | select(.ran and .exhaustive == false)] | length > 0' "$J" >/dev/null &&
	grep -q '[0-9]~ ' "$SCRATCH/table.txt" && grep -q '[0-9] bystndr' "$SCRATCH/table.txt"
ok $? "the table marks sampled cells (~) and shows bystander damage per cell"
for q in 'disks may write garbage during powerfail' 'especially true on RAID5/6 systems' \
	'has lost the redundancy which provides that reliability' \
	'filesystem\s+won.t notice that data in the "sectors" _around_' \
	'Either whole sector is correctly written or nothing is written' \
	'success\s+on fsync was already returned'; do
	tr '\n' ' ' <"$BLACKOUT_SRC/docs/matrix.md" | grep -Pq "$q" || { diag "docs/matrix.md lacks: $q"; false; } || break
done
ok $? "docs/matrix.md quotes the seed sentences its verdicts answer"
grep -q 'What the measurements say' "$SCRATCH/table.txt"
ok $? "the terminal table carries the verdicts"
# NO-WRITE-ERRORS (issue 24): home writes failing after fsync returned; tests/compat/matrix_nwe.t
# holds the rows' cells
grep -A3 '\[NO-WRITE-ERRORS\] Home writes failing' "$SCRATCH/table.txt" | tr -s ' \n' ' ' |
	grep -Eq "2009 checkpoint \(checkpoint_errors=ignore\) [1-9][0-9]* failed and it lost synced data silently in [1-9][0-9]* of [0-9]+ states; under today's abort [1-9][0-9]* failed and it lost no synced data silently"
ok $? "--quick prints NO-WRITE-ERRORS: home writes failed after fsync, silent losses under 2009, none under abort"

# ---- the report in headless Chromium ----
if command -v chromium >/dev/null 2>&1; then
	ud="$SCRATCH/chromium"
	flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	  --disable-background-networking --disable-component-update --disable-sync
	  --user-data-dir=$ud"
	# shellcheck disable=SC2086
	dom=$(timeout 120 chromium $flags --dump-dom "file://$out/report.html#selftest" 2>/dev/null)
	res=$(printf '%s\n' "$dom" | grep -o 'selftest cells=[0-9]* expected=[0-9]* initial=[a-z]* drill=[a-z]* timeline=[a-z]* charts=[0-9]* verdicts=[0-9]*')
	diag "browser: $res"
	n=$(printf '%s' "$res" | sed -n 's/.*cells=\([0-9]*\) expected=\([0-9]*\).*/\1 \2/p')
	set -- $n
	[ -n "${1:-}" ] && [ "$1" = "$2" ] && [ "$1" -gt 0 ]
	ok $? "the table has one clickable cell per row x column in Chromium"
	printf '%s' "$res" | grep -q 'initial=open'
	ok $? "the worst cell's drill-down is open when the page loads"
	printf '%s' "$res" | grep -q 'drill=open timeline=yes'
	ok $? "clicking a cell opens its drill-down with the I/O timeline"
	rows=$(jq '.rows|length' "$J")
	printf '%s' "$res" | grep -q "charts=$rows "
	ok $? "one chart per row ($rows)"
	# without JavaScript: the same page with its scripts removed
	python3 - "$out/report.html" "$out/report-nojs.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(re.sub(r"<script\b.*?</script>", "", page, flags=re.S))
PY
	# shellcheck disable=SC2086
	nojs=$(timeout 120 chromium $flags --dump-dom "file://$out/report-nojs.html" 2>/dev/null)
	[ "$(printf '%s' "$nojs" | grep -o 'class="rowchart"' | wc -l)" -eq "$rows" ] &&
		[ "$(printf '%s' "$nojs" | grep -o '<td class="cell' | wc -l)" -eq "$1" ] &&
		printf '%s' "$nojs" | grep -q '<div id="drill" class="open"><h2>' &&
		printf '%s' "$nojs" | grep -q 'Click a cell' &&
		[ "$(printf '%s' "$nojs" | grep -o '<li><span class="tag">' | wc -l)" -eq "$(jq '.verdicts|length' "$J")" ]
	ok $? "without JavaScript: verdicts, every cell, one chart per row and the worst drill-down"
	# the spec is split into parts that wrap only between layers and parameters: its text,
	# tags removed, is the spec
	printf '%s' "$nojs" | python3 -c '
import html, json, re, sys
page = sys.stdin.read()
shown = [html.unescape(re.sub(r"<[^>]*>", "", x)) for x in re.findall(r"<code class=\"spec\">(.*?)</code>", page, re.S)]
want = [r["stack"] for r in json.load(open(sys.argv[1], encoding="utf-8"))["rows"]]
sys.exit(0 if shown == want else 1)' "$J"
	ok $? "each row's stack spec is shown"
	mkdir -p "$BUILD"
	# shellcheck disable=SC2086
	timeout 120 chromium $flags --window-size=1400,1600 --screenshot="$BUILD/matrix-report.png" \
		"file://$out/report.html" >/dev/null 2>&1
	# shellcheck disable=SC2086
	timeout 120 chromium $flags --window-size=1400,2400 --screenshot="$BUILD/matrix-report-nojs.png" \
		"file://$out/report-nojs.html" >/dev/null 2>&1
	[ -s "$BUILD/matrix-report.png" ] && [ -s "$BUILD/matrix-report-nojs.png" ]
	ok $? "screenshots saved as build/matrix-report.png and build/matrix-report-nojs.png"
else
	ok 1 "chromium is missing (scripts/install-deps installs it)"
fi
done_testing
