# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh — compat-suite helpers on top of the one harness (tests/test-lib.sh: ok, is,
# done_testing, the scratch directory $SCRATCH/$T ...). Source it:
#   . "$BLACKOUT_SRC/tests/compat/lib.sh"
# Adds e2fsck_clean: the strict e2fsprogs verdict (exit 0 AND only the lines a clean
# run prints; e2fsck can exit 0 while reporting problems).

. "$(dirname "$0")/../test-lib.sh"
[ -x "$BLACKOUT" ] || bail "BLACKOUT=$BLACKOUT is not an executable (run make)"

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
