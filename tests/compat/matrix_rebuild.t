#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# matrix_rebuild.t — the rebuild line of every failing cell of `blackout matrix --quick`,
# run as printed by a shell, rebuilds that cell's example state (same id, same broken
# invariants) and exits 3. One state per cell keeps it to a few seconds a cell.
. "$BLACKOUT_SRC/tests/compat/lib.sh"

J="$SCRATCH/m.json"
"$BLACKOUT" matrix --quick --json --out "$SCRATCH/report" >"$J" 2>"$SCRATCH/err.txt"
ok $? "blackout matrix --quick --json ran"

jq -e '[.cells[] | select(.ran and .states > .ok)] | length > 0' "$J" >/dev/null
ok $? "the quick matrix has failing cells to rebuild"
jq -e 'all(.cells[] | select(.ran and .states > .ok); .example.rebuild | type == "string")' \
	"$J" >/dev/null
ok $? "every failing cell has an example with a rebuild line"
jq -e 'all(.cells[] | select(.row == "write-errors" and .example != null);
	.example.rebuild | contains("--arm '\''write-error lba=4-1159'\''"))' "$J" >/dev/null
ok $? "the write-errors row's rebuild lines carry its --arm rule"

# the line names the program `blackout`: a function runs this build under that name,
# so the line itself goes through the shell untouched
blackout() { "$BLACKOUT" "$@"; }

jq -r '.cells[] | select(.ran and .states > .ok) |
	[.row + "/" + .col, .example.state,
	 (.example.broken | split("; ") | map(split(":")[0] | split(" ")[0])
	  | map(select(IN("durable", "stale", "bystander", "consistent", "atomic"))) | sort | join("+")),
	 .example.rebuild] | @tsv' "$J" >"$SCRATCH/cells.tsv"
n=0
while IFS=$'\t' read -r cell state broken line; do
	n=$((n + 1))
	out="$SCRATCH/r$n.json"
	eval "$line --quiet --json '$out'" </dev/null >"$SCRATCH/r$n.txt" 2>&1
	rc=$?
	got=$(jq -r '[.failures[].id] | join(",")' "$out" 2>/dev/null)
	gotb=$(jq -r '.failures[0].broken | sort | join("+")' "$out" 2>/dev/null)
	[ "$rc" -eq 3 ] && [ "$got" = "$state" ] && [ "$gotb" = "$broken" ]
	same=$?
	ok $same "$cell: rebuild gives state $state ($broken), exit 3"
	if [ "$same" -ne 0 ]; then
		diag "line: $line" "exit $rc, failing states '$got', broken '$gotb'"
		sed 's/^/#   /' "$SCRATCH/r$n.txt" | head -5
	fi
done <"$SCRATCH/cells.tsv"
[ "$n" -gt 0 ]
ok $? "rebuilt $n failing cells"
done_testing
