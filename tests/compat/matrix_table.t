#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_table.t — the terminal table as a newcomer reads it: it fits 100 columns with
# every row's full name, lettered columns explained under it, "silent" spelled out, a
# key line for every abbreviation; progress lines on standard error when piped;
# colour only on a terminal and never with NO_COLOR.
. "$BLACKOUT_SRC/tests/compat/lib.sh"

out="$SCRATCH/r"
"$BLACKOUT" matrix --quick --max-states 30 --out "$out" 2>"$SCRATCH/err.txt" | cat >"$SCRATCH/table.txt"
ok "${PIPESTATUS[0]}" "matrix --quick ran, piped"
sed 's/^/#   /' "$SCRATCH/table.txt"
python3 - "$SCRATCH/table.txt" <<'PY'
import sys
bad = [l for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if len(l) > 100]
for l in bad:
    print("# too wide (%d): %s" % (len(l), l))
sys.exit(1 if bad else 0)
PY
ok $? "every line fits 100 columns"
python3 - "$SCRATCH/table.txt" "$out/matrix.json" <<'PY'
import json, sys
table = open(sys.argv[1], encoding="utf-8").read().split("\n")
m = json.load(open(sys.argv[2], encoding="utf-8"))
names = " ".join(l[:28] for l in table)
missing = [r["label"] for r in m["rows"] if any(w not in names for w in r["label"].split())]
for i, c in enumerate(m["columns"]):
    if not any(l.startswith("  %s  %s " % (chr(65 + i), c["label"])) for l in table):
        missing.append("column " + c["label"])
print("# missing: %s" % missing)
sys.exit(1 if missing else 0)
PY
ok $? "every row's full name and every column's letter and name are in the table"
grep -q ' silent' "$SCRATCH/table.txt" && ! grep -Eq '[0-9]s( |$)' "$SCRATCH/table.txt"
ok $? "silent states are spelled out ('N silent', not 'Ns')"
grep -q 'bystndr = ' "$SCRATCH/table.txt" && grep -q ' bystndr' "$SCRATCH/table.txt" &&
	grep -q '~ = sampled' "$SCRATCH/table.txt" && grep -q '~ ' "$SCRATCH/table.txt" &&
	grep -q 'b=0/b=1 = ' "$SCRATCH/table.txt" && grep -q 'allowed = ' "$SCRATCH/table.txt"
ok $? "bystander damage and sampled cells are marked, each abbreviation has a key line"
grep -Eq '^matrix: [0-9]+ of [0-9]+ explorations done, [0-9]+ crash states judged, [0-9]+ s so far, about [0-9]+ s left$' "$SCRATCH/err.txt"
ok $? "progress lines on standard error when piped"
! grep -q $'\033' "$SCRATCH/table.txt" "$SCRATCH/err.txt"
ok $? "no colour codes in a pipe"
if command -v script >/dev/null 2>&1; then
	NO_COLOR= script -qec "'$BLACKOUT' matrix --quick --max-states 5 --out '$out'" /dev/null >"$SCRATCH/tty.txt" 2>&1
	grep -q $'\033\[' "$SCRATCH/tty.txt"
	ok $? "colour on a terminal"
	NO_COLOR=1 script -qec "'$BLACKOUT' matrix --quick --max-states 5 --out '$out'" /dev/null >"$SCRATCH/tty.txt" 2>&1
	! grep -q $'\033\[' "$SCRATCH/tty.txt"
	ok $? "no colour on a terminal with NO_COLOR set"
fi
done_testing
