#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_report.t — what a reader of the matrix gets. matrix.json: each verdict carries its
# result (holds / broken / not measured), the property and counts it rests on and their
# coverage, checked with jq against the cells themselves; coverage printed as the
# command line prints it. report.html: it opens with what to choose, drawn from the
# cells (checked against matrix.json), then the table; in headless Chromium at 1024 and
# 1400 px the answer is above the table, no stack spec or header breaks inside a word,
# nothing overflows; screenshots saved as build/report-1024.png and build/report-1400.png.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
need_tool jq

out="$SCRATCH/r"
rows=nocache,cache,cache-lying,flash-cheap-128k,flash-cheap-128k-verify,raid5-degraded,write-errors,write-errors-2009,bad-sectors-2009
"$BLACKOUT" matrix --rows $rows --max-states 40 --out "$out" >"$SCRATCH/table.txt" 2>"$SCRATCH/err.txt"
ok $? "a small matrix ran (9 rows, 6 columns)"
J="$out/matrix.json"

# ---- item 13: machine-readable verdicts ----
jq -e '.schema == "blackout-matrix/2"' "$J" >/dev/null
ok $? "matrix.json says schema blackout-matrix/2"
jq -e '(.verdicts | length) > 0 and all(.verdicts[];
  (.result | IN("holds", "broken", "not measured"))
  and (.property | IN("any", "durable", "bystander", "silent", "stale", "silent_lost"))
  and (.states | type == "number") and (.count <= .states)
  and (.exhaustive | type == "boolean") and (.coverage > 0 and .coverage <= 1)
  and (.coverage_text | test("^[0-9.e+-]+%$")) and (.results | type == "array"))' "$J" >/dev/null
ok $? "every verdict has a result, a property, counts and a coverage"
# the count a property names, recomputed here from the cell's own fields
jq -e '
  def count($p): if $p == "any" then .states - .ok elif $p == "durable" then .violations.durable
    elif $p == "bystander" then .violations.bystander elif $p == "silent" then .silent
    elif $p == "stale" then .violations.stale + .allowed elif $p == "silent_lost" then .silent_lost
    else error("unknown property " + $p) end;
  . as $m | all(.verdicts[] | select(.cells | length > 0); . as $v |
    ([.results[] | select(.result != "not measured")] | length) == (.cells | length)
    and all(.results[] | select(.result != "not measured"); . as $r |
      ($m.cells[] | select(.row == $r.row and .col == $r.col)) as $c |
      $r.count == ($c | count($v.property)) and $r.states == $c.states
      and $r.result == (if $r.count > 0 then "broken" else "holds" end)
      and $r.coverage_text == $c.coverage_text)
    and .result == (if any(.results[]; .result == "broken") then "broken" else "holds" end)
    and .count == ([.results[] | .count // 0] | add)
    and .states == ([.results[] | .states // 0] | add))' "$J" >/dev/null
ok $? "each verdict's result and counts are its cells' (recomputed from the cells with jq)"
r=$(jq -r '.verdicts[] | select(.text | startswith("With a write cache that honours flushes")) |
  .property + " " + .result + " " + ([.results[] | .col + "=" + .result] | join(" "))' "$J")
diag "write-cache verdict: $r"
is "$r" "durable broken ext3-ordered-b0=broken ext3-ordered-b1=holds" \
	"write cache honouring flushes: barrier=0 broken, barrier=1 holds (durable)"
r=$(jq -r '.verdicts[] | select(.text | startswith("Without a write cache")) | .result' "$J")
is "$r" "holds" "no write cache, barrier=0: holds"
# coverage as explore prints it: three significant digits, never rounded to 0
jq -e '[.cells[] | select(.ran and .exhaustive == false and .coverage == 0)] | length > 0' "$J" >/dev/null &&
	jq -e 'all(.cells[] | select(.ran and .exhaustive == false); (.coverage_text | test("^0(\\.0*)?%$") | not) and
	  (.coverage_text | test("^[0-9.]+(e-[0-9]+)?%$")))' "$J" >/dev/null
ok $? "a sampled cell whose coverage rounds to 0 in 'coverage' says how small in coverage_text"
# one workload, so the cell's coverage is one exploration's: explore, run as the cell's
# rebuild line runs it (without --state), prints the same figure
"$BLACKOUT" matrix --rows cache --columns ext3-ordered-b0 --workloads append-fsync --max-states 40 \
	--json "$SCRATCH/one.json" --out "$SCRATCH/one" >/dev/null 2>&1
c=$(jq -r '.cells[0].coverage_text' "$SCRATCH/one.json")
cmd=$(jq -r '.cells[0].example.rebuild' "$SCRATCH/one.json" | sed 's/ --state [^ ]*$//; s/^blackout //')
e=$(eval "\"\$BLACKOUT\" $cmd" 2>/dev/null | sed -n 's/^states: .* sampled (seed [0-9]*), \([^ ]*\) of .*/\1/p')
diag "cache x barrier=0, append-fsync: matrix.json says '$c', explore says '$e'"
[ -n "$c" ] && [ "$c" = "$e" ] && printf '%s' "$c" | grep -Eq '^[0-9.]+e-[0-9]+%$'
ok $? "a cell's coverage_text is what explore prints for the same exploration ($c)"

# ---- item 12: the report ----
H="$out/report.html"
python3 - "$H" "$J" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = json.load(open(sys.argv[2], encoding="utf-8"))
bad = []
ch, tb = page.find('<section id="choose">'), page.find('<table class="m" id="matrix-table">')
if not (0 <= ch < tb):
    bad.append("the 'what to choose' section is not before the table")
if page.find('id="verdicts"') < tb:
    bad.append("the verdicts come before the table")
cells = {(c["row"], c["col"]): c for c in m["cells"]}
def fate(c):
    if not c["ran"] or c["states"] == 0: return None
    if c["violations"]["durable"] or c["silent_lost"]: return "lost"
    if c["silent"]: return "silent"
    return "reported" if c["ok"] < c["states"] else "safe"
section = page[ch:tb]
groups = {}
for g in ("any", "some", "none"):
    mm = re.search(r'<li id="choose-%s">(.*?)(?=<li id="choose-|</ul></section>)' % g, section, re.S)
    groups[g] = set(re.findall(r'data-row="([^"]+)"', mm.group(1))) if mm else set()
for r in m["rows"]:
    f = [fate(cells[(r["id"], c["id"])]) for c in m["columns"]]
    f = [x for x in f if x]
    want = "any" if f and all(x == "safe" for x in f) else "some" if "safe" in f else "none"
    got = [g for g in groups if r["id"] in groups[g]]
    if got != [want]:
        bad.append("%s: in %s, its cells say %s" % (r["id"], got, want))
li = re.search(r'<li>(?:(?!</?li>).)*data-row="cache".*?</li>', section, re.S)
if not li or not re.search(r'safe with [^;]*ext3 ordered b=1', li.group(0)) or \
        not re.search(r'lost synced data</span> with [^;]*ext3 ordered b=0', li.group(0)):
    bad.append("the honoured cache's line does not say barrier=1 safe, barrier=0 lost synced data")
if 'id="allowed-key"' not in page or not re.search(r'title="[0-9]+ states kept every invariant but showed what this configuration permits', page):
    bad.append("'+N allowed' is not explained (key line and the cell's title)")
cov = re.search(r'crash states judged \(sampled, coverage ([^)]*)\)', page)
if not cov or not re.match(r'^[0-9.]+(e-[0-9]+)?%$', cov.group(1)) or re.match(r'^0(\.0*)?%$', cov.group(1)):
    bad.append("the drill-down's coverage is not printed as explore prints it: %s" % (cov and cov.group(1)))
for b in bad: print("# " + b)
print("# choose: any=%s some=%s none=%s" % tuple(sorted(groups[g]) for g in ("any", "some", "none")))
sys.exit(1 if bad else 0)
PY
ok $? "the report opens with what to choose, drawn from the cells, then the table; '+N allowed' explained; coverage as explore prints it"

if command -v chromium >/dev/null 2>&1; then
	flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	  --disable-background-networking --disable-component-update --disable-sync
	  --user-data-dir=$SCRATCH/chromium"
	mkdir -p "$BUILD"
	for w in 1024 1400; do
		# shellcheck disable=SC2086
		res=$(timeout 120 chromium $flags --window-size=$w,2000 --dump-dom "file://$H#selftest" 2>/dev/null |
			grep -o 'selftest cells=[0-9][^<]*')
		diag "$w px: $res"
		n=$(printf '%s' "$res" | sed -n 's/.*cells=\([0-9]*\) expected=\([0-9]*\).*/\1 \2/p')
		set -- $n
		[ -n "${1:-}" ] && [ "$1" = "$2" ] && printf '%s' "$res" | grep -q " width=$w choose=above "
		ok $? "$w px: every cell shown, the answer above the table"
		printf '%s' "$res" | grep -Eq 'specparts=[1-9][0-9]* split=0 words-broken=0 overflow=0 hscroll=no'
		ok $? "$w px: no stack spec or header broken inside a word, nothing overflows, no sideways scrolling"
		rm -f "$BUILD/report-$w.png"
		# shellcheck disable=SC2086
		timeout 120 chromium $flags --window-size=$w,1800 --screenshot="$BUILD/report-$w.png" \
			"file://$H" >/dev/null 2>&1
		[ -s "$BUILD/report-$w.png" ]
		ok $? "$w px: screenshot saved as $BUILD/report-$w.png"
	done
else
	ok 1 "chromium is missing (scripts/install-deps installs it)"
fi

done_testing
