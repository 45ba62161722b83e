# SPDX-License-Identifier: GPL-2.0-or-later
# test-lib.sh — the one TAP harness for every script test (tests/compat, tests/vm),
# after git's t/test-lib.sh. POSIX sh; sourced first, never run:
#   . "$(dirname "$0")/../test-lib.sh"
#
#   ok STATUS DESC         "ok N - DESC" when STATUS is 0, else "not ok N - DESC"
#   is GOT WANT DESC       ok when the strings are equal; shows both when not
#   t DESC 'CONDITION'     ok when the shell CONDITION (eval'd) is true
#   run_ok DESC CMD [ARG...]  ok when CMD exits 0 (no pipeline to hide its status in)
#   lacks PATTERN CMD [ARG...]  true when CMD succeeds and its output has no line
#                          matching PATTERN: `! CMD | grep -q P` also passes when CMD
#                          fails, which hid broken assertions before
#   skip DESC REASON       "ok N - DESC # SKIP REASON"
#   skip_all REASON        skips the whole script ("1..0 # SKIP REASON"); before any test
#   diag TEXT...           a "# " comment line
#   bail REASON            "Bail out! REASON": stops the script and the run
#   need_tool TOOL...      bails when a tool is missing (scripts/install-deps has them)
#   have_tool TOOL         true when TOOL is on PATH
#   at_exit COMMAND        runs COMMAND (eval'd) on exit, before $T is removed; the
#                          harness owns the EXIT trap (a script that set its own would
#                          lose $T's removal and the faillog: house.t refuses that)
#   done_testing           the closing plan line; exits non-zero when a test failed or
#                          when none ran (a script that tests nothing is a failure)
#
# Sets T (alias SCRATCH), a scratch directory removed on exit; BLACKOUT_SRC, BUILD and
# BLACKOUT (alias B), defaulting to this checkout and its build/ directory.
#
# With BLACKOUT_FAILLOG=FILE (make's check targets set it) the script's output also goes
# to a copy, and a script that failed appends to FILE its name, its exit status and
# each failing test with the lines before it: CI shows the end of its log, where
# prove's summary names only the failing tests' numbers (the Makefile prints FILE).

# A script may source it twice (through a helper library and again itself): the second
# time would start a second count, scratch directory and copy and orphan the first.
[ -z "${TEST_LIB_LOADED:-}" ] || return 0
TEST_LIB_LOADED=1

TEST_N=0
TEST_FAIL=0
TEST_AT_EXIT=

BLACKOUT_SRC=${BLACKOUT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$BLACKOUT_SRC/build}
BLACKOUT=${BLACKOUT:-$BUILD/blackout}
B=$BLACKOUT
export BLACKOUT_SRC BUILD BLACKOUT

# A status that is not a number counts as a failure (never as a shell error).
ok() {
	TEST_N=$((TEST_N + 1))
	if [ "$1" -eq 0 ] 2>/dev/null; then
		echo "ok $TEST_N - $2"
		return 0
	fi
	echo "not ok $TEST_N - $2"
	TEST_FAIL=$((TEST_FAIL + 1))
	return 0
}

is() {
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
		return
	fi
	ok 1 "$3"
	echo "#   got: '$1'"
	echo "#  want: '$2'"
}

t() {
	if eval "$2"; then ok 0 "$1"; else ok 1 "$1"; fi
}

run_ok() {
	_run_desc=$1
	shift
	"$@"
	ok $? "$_run_desc"
}

lacks() {
	_lacks_pat=$1
	shift
	_lacks_out=$("$@" 2>/dev/null) || return 1
	! printf '%s\n' "$_lacks_out" | grep -q -- "$_lacks_pat"
}

skip() {
	TEST_N=$((TEST_N + 1))
	echo "ok $TEST_N - $1 # SKIP ${2:-}"
}

skip_all() {
	[ "$TEST_N" -eq 0 ] || bail "skip_all after $TEST_N tests: $*"
	echo "1..0 # SKIP $*"
	exit 0
}

diag() { echo "# $*"; }

bail() {
	echo "Bail out! $*"
	exit 1
}

have_tool() { command -v "$1" >/dev/null 2>&1; }

need_tool() {
	for tool in "$@"; do
		have_tool "$tool" || bail "$tool missing: run scripts/install-deps"
	done
}

at_exit() { TEST_AT_EXIT="$TEST_AT_EXIT
$1"; }

done_testing() {
	if [ "$TEST_N" -eq 0 ]; then
		echo "not ok 1 - the script ran no test"
		echo "1..1"
		exit 1
	fi
	echo "1..$TEST_N"
	[ "$TEST_FAIL" -eq 0 ] || exit 1
	exit 0
}

test_cleanup() {
	eval "$TEST_AT_EXIT"
	TEST_AT_EXIT=
	[ -n "${T:-}" ] && rm -rf "$T"
}

# The failures, with their context, to BLACKOUT_FAILLOG (see the top); stdout back to
# what it was. A child the script left running may still hold the copy's pipe: tee gets
# at most 2 s to finish, then goes.
test_faillog() {
	[ -n "$TEST_TEE" ] || return 0
	exec >&8 8>&-
	_i=0
	while kill -0 "$TEST_TEE" 2>/dev/null && [ $_i -lt 20 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill "$TEST_TEE" 2>/dev/null
	TEST_TEE=
	[ "$TEST_FAIL" -gt 0 ] || [ "$1" -ne 0 ] || return 0
	case "$0" in
	*/tests/*) _name=tests/${0##*/tests/} ;;
	*) _name=$0 ;;
	esac
	{
		echo "==== $_name: exit $1, $TEST_FAIL of $TEST_N failed"
		grep -a -B 10 -A 4 -e '^not ok' -e '^Bail out!' "$T/.tap.out" | tail -n 80
	} >>"$BLACKOUT_FAILLOG"
}

test_exit() {
	rc=$?
	test_faillog "$rc"
	test_cleanup
	exit "$rc"
}

T=$(mktemp -d "${TMPDIR:-/tmp}/blackout-test.XXXXXX") || bail "mktemp failed"
SCRATCH=$T
TEST_TEE=
if [ -n "${BLACKOUT_FAILLOG:-}" ] && mkfifo "$T/.tap"; then
	exec 8>&1
	# the copy through fd 7: tee's command line names no path under $T, where scripts
	# look for processes of their own left running (pgrep -f "$T/")
	tee /dev/fd/7 <"$T/.tap" >&8 7>"$T/.tap.out" &
	TEST_TEE=$!
	exec >"$T/.tap"
fi
trap test_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
