#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# house.t — the house rules a file carries in its first lines: every script starts
# #!/bin/sh (POSIX) or #!/bin/bash (bash), never through env, and every source file
# carries the project's SPDX licence line (scripts/spdx-check, GPL-2.0-or-later); a
# test script leaves the EXIT trap to the harness (tests/test-lib.sh: at_exit).
. "$(dirname "$0")/../test-lib.sh"
cd "$BLACKOUT_SRC" || bail "no source tree at $BLACKOUT_SRC"
have_tool git || skip_all "git missing"
git rev-parse --git-dir >/dev/null 2>&1 || skip_all "not a git checkout"

# debian/rules is make's (#!/usr/bin/make -f) and guest-init busybox's, by their nature
odd=$(git ls-files | while read -r f; do
	[ -f "$f" ] || continue
	l=$(head -n 1 "$f" 2>/dev/null)
	case "$l" in
	'#!/bin/sh' | '#!/bin/bash' | '') ;;
	'#!'*) case "$f:$l" in
		debian/rules:'#!/usr/bin/make -f' | src/guest/guest-init:'#!/bin/busybox sh') ;;
		*) printf '%s ' "$f" ;;
		esac ;;
	esac
done)
[ -z "$odd" ]
ok $? "scripts start #!/bin/sh or #!/bin/bash${odd:+: $odd}"

out=$(scripts/spdx-check 2>&1)
ok $? "every source file carries the SPDX line${out:+: $(printf '%s' "$out" | tail -n 1)}"
[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'

# A test script's own EXIT trap replaces the harness's: its scratch directory stays in
# /tmp and a failure never reaches CI's faillog. `trap - EXIT` as much as `trap X EXIT`.
traps=$(git ls-files 'tests/*.t' 'tests/*.sh' | grep -v '^tests/test-lib\.sh$' |
	xargs grep -lE '(^|[;&|[:space:]])trap[[:space:]].*[[:space:]](EXIT|0)[[:space:]]*(#.*)?$' 2>/dev/null |
	tr '\n' ' ')
[ -z "$traps" ]
ok $? "test scripts leave the EXIT trap to the harness${traps:+: $traps}"
done_testing
