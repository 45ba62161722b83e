#!/usr/bin/env bash
# cli_report.t — what a reader of the matrix gets without parsing English: each verdict
# of matrix.json carries its result (holds / broken / not measured), the property and
# counts it rests on and their coverage, checked with jq against the cells themselves;
# coverage printed as the command line prints it.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
need_tool jq

out="$SCRATCH/r"
"$BLACKOUT" matrix --rows nocache,cache,cache-lying --columns ext3-ordered-b0,ext3-ordered-b1,ext3-csum \
	--max-states 40 --out "$out" >"$SCRATCH/table.txt" 2>"$SCRATCH/err.txt"
ok $? "a small matrix ran (3 rows, 3 columns)"
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

done_testing
