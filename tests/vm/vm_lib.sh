# SPDX-License-Identifier: GPL-2.0-or-later
# vm_lib.sh — shared by tests/vm/*.t, on top of the one harness (tests/test-lib.sh):
# runs `blackout vmtest` and reads its JSON summary. Sourced, not run. Each run is
# bounded (timeout) and vmtest cleans up its processes.
. "$(dirname "$0")/../test-lib.sh"
need_tool jq
# vmtest NAME ARGS...: runs a vmtest into $T/NAME; summary fields via `field NAME KEY`.
# Bounded by VM_TIMEOUT seconds (1800: 20 cuts took 513 s on a quiet machine and three
# times that with the machine shared).
vmtest() {
	local name=$1
	shift
	timeout "${VM_TIMEOUT:-1800}" "$BLACKOUT" vmtest "$@" --out "$T/$name" --json "$T/$name.json" \
		--explore-json "$T/$name.explore.json" >"$T/$name.log" 2>&1
	local rc=$?
	sed 's/^/# /' "$T/$name.log"
	# prove shows only a test's stderr, so a failure's reason goes there as well
	[ $rc -eq 0 ] || { echo "vmtest $name failed (exit $rc):"; tail -n 20 "$T/$name.log"; } >&2
	return $rc
}
field() { tail -n 1 "$T/$1.json" | jq -r ".$2"; }
# the same run in the explorer's format reads back through `blackout explore --merge`
# with the summary's counts
explore_format() {
	"$BLACKOUT" explore --merge "$T/$1.explore.json" --json "$T/$1.merged.json" \
		>/dev/null 2>"$T/$1.merge.err"
	local rc=$? # 0: nothing broke, 3: something did; anything else is an error
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { sed 's/^/# /' "$T/$1.merge.err"; return 1; }
	[ "$(jq .judged "$T/$1.merged.json")" = "$(field "$1" classified)" ] &&
		[ "$(jq .ok "$T/$1.merged.json")" = "$(field "$1" ok)" ] &&
		[ "$(jq .silent "$T/$1.merged.json")" = "$(field "$1" silent)" ] &&
		[ "$(jq .violations.durable "$T/$1.merged.json")" = "$(field "$1" lost_synced)" ] &&
		[ "$(jq '.failures|length' "$T/$1.merged.json")" = "$(($(field "$1" classified) - $(field "$1" ok)))" ]
}
# every cut was observed (the power really went) and classified
all_observed() {
	local n
	n=$(field "$1" cuts)
	[ "$(field "$1" observed)" = "$n" ] && [ "$(field "$1" classified)" = "$n" ]
}
