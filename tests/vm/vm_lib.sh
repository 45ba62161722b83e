# vm_lib.sh — shared by tests/vm/*.t: runs `blackout vmtest` and reads its JSON summary.
# Sourced, not run. Each run is bounded (timeout) and vmtest cleans up its processes.
: "${BLACKOUT:?BLACKOUT must name the CLI}"
: "${BUILD:?BUILD must point at the build directory}"
T=$(mktemp -d "${TMPDIR:-/tmp}/blackout-vm.XXXXXX")
trap 'rm -rf "$T"' EXIT
TAP_N=0 TAP_FAIL=0
ok() {
	TAP_N=$((TAP_N + 1))
	if [ "$1" -eq 0 ]; then echo "ok $TAP_N - $2"; else
		echo "not ok $TAP_N - $2"
		TAP_FAIL=$((TAP_FAIL + 1))
	fi
}
done_testing() {
	echo "1..$TAP_N"
	[ "$TAP_N" -gt 0 ] && [ "$TAP_FAIL" -eq 0 ]
}
# vmtest NAME ARGS...: runs a vmtest into $T/NAME; summary fields via `field NAME KEY`.
vmtest() {
	local name=$1
	shift
	timeout 600 "$BLACKOUT" vmtest "$@" --out "$T/$name" --json "$T/$name.json" \
		>"$T/$name.log" 2>&1
	local rc=$?
	sed 's/^/# /' "$T/$name.log"
	return $rc
}
field() { tail -n 1 "$T/$1.json" | jq -r ".$2"; }
# every cut was observed (the power really went) and classified
all_observed() {
	local n
	n=$(field "$1" cuts)
	[ "$(field "$1" observed)" = "$n" ] && [ "$(field "$1" classified)" = "$n" ]
}
