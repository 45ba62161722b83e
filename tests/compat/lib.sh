# lib.sh — shared helpers for the compat suite (TAP under prove). Source it:
#   . "$BLACKOUT_SRC/tests/compat/lib.sh"
# Provides ok/not_ok counting, done_testing, a scratch directory cleaned on exit, and
# e2fsck_clean: the strict e2fsprogs verdict (exit 0 AND only the lines a clean run
# prints; e2fsck can exit 0 while reporting problems).

: "${BLACKOUT:?BLACKOUT must point at the blackout binary}"
T_N=0
T_FAIL=0
SCRATCH=$(mktemp -d /tmp/blackout-compat.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT

ok() { # ok COND-EXIT-CODE "description"
	T_N=$((T_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $T_N - $2"
	else
		echo "not ok $T_N - $2"
		T_FAIL=$((T_FAIL + 1))
	fi
}

diag() { printf '# %s\n' "$@"; }

done_testing() {
	if [ "$T_N" -eq 0 ]; then
		echo "not ok 1 - the script ran no test"
		echo "1..1"
		exit 1
	fi
	echo "1..$T_N"
	[ "$T_FAIL" -eq 0 ]
}

# e2fsck_clean IMAGE: returns 0 when e2fsck -fn finds nothing at all; prints the
# offending output as TAP diagnostics otherwise.
e2fsck_clean() {
	out=$(E2FSCK_CONFIG=/dev/null e2fsck -fn "$1" 2>&1)
	rc=$?
	bad=$(printf '%s\n' "$out" | grep -v -E \
		-e '^e2fsck [0-9]' \
		-e '^Pass [1-5]: Checking (inodes, blocks, and sizes|directory structure|directory connectivity|reference counts|group summary information)$' \
		-e '^.*: [0-9]+/[0-9]+ files \([0-9.]+% non-contiguous\), [0-9]+/[0-9]+ blocks$' \
		-e '^$')
	if [ "$rc" -ne 0 ] || [ -n "$bad" ]; then
		printf '%s\n' "$out" | sed 's/^/#   e2fsck: /' | head -30
		return 1
	fi
	return 0
}
