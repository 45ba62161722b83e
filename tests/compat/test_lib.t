#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_lib.t — the shell harness itself (tests/test-lib.sh): the plan line, exit
# statuses (a failure, or no test at all, fails the script), run_ok and lacks, skip,
# bail, the scratch directory removed on exit and at_exit hooks run, even when a script
# dies; with BLACKOUT_FAILLOG, a failing script's failures and what came before them.
. "$(dirname "$0")/../test-lib.sh"

# A throwaway script at tests/compat/x.t of a copy of the tree, so that it finds
# the harness the way the real ones do.
mkdir -p "$T/w/tests/compat"
cp "$BLACKOUT_SRC/tests/test-lib.sh" "$T/w/tests/test-lib.sh"
run() { # run BODY: runs a script of BODY after the harness; output in $T/out, status in rc
	printf '#!/bin/sh\n. "$(dirname "$0")/../test-lib.sh"\n%s\n' "$1" >"$T/w/tests/compat/x.t"
	TMPDIR="$T/tmp" BLACKOUT_FAILLOG=${FAILLOG:-} sh "$T/w/tests/compat/x.t" >"$T/out" 2>&1
	rc=$?
}
mkdir -p "$T/tmp"

run 'ok 0 "a"; is x x "b"; t "c" "[ 1 = 1 ]"; done_testing'
t "three passing tests: exit 0" '[ $rc -eq 0 ]'
is "$(cat "$T/out")" "ok 1 - a
ok 2 - b
ok 3 - c
1..3" "numbered ok lines, then the plan"

run 'ok 1 "a"; ok 0 "b"; done_testing'
t "one failure: exit 1" '[ $rc -eq 1 ]'
t "reported as not ok 1, plan 1..2" \
	'grep -qx "not ok 1 - a" "$T/out" && tail -n 1 "$T/out" | grep -qx "1..2"'

run 'done_testing'
t "no test at all: exit 1" '[ $rc -eq 1 ]'
t "and a failing test line says why" 'grep -qx "not ok 1 - the script ran no test" "$T/out"'

run 'ok junk "a"; done_testing'
t "a status that is not a number is a failure, not a shell error" \
	'[ $rc -eq 1 ] && grep -qx "not ok 1 - a" "$T/out"'

run 'is "1" "2" "cmp"; done_testing'
t "is shows got and want" 'grep -q "got: .1." "$T/out" && grep -q "want: .2." "$T/out"'

run 'run_ok "fails" false; run_ok "passes" true; done_testing'
t "run_ok reports the command's own status" \
	'grep -qx "not ok 1 - fails" "$T/out" && grep -qx "ok 2 - passes" "$T/out"'

run 'lacks x false; ok $? "a"; lacks x echo x; ok $? "b"; lacks x echo y; ok $? "c"; done_testing'
t "lacks fails when the command fails or prints the pattern, passes otherwise" \
	'grep -qx "not ok 1 - a" "$T/out" && grep -qx "not ok 2 - b" "$T/out" &&
	grep -qx "ok 3 - c" "$T/out"'

run 'skip "later" "no tool"; ok 0 "a"; done_testing'
t "skip is an ok line with a SKIP directive" \
	'[ $rc -eq 0 ] && grep -qx "ok 1 - later # SKIP no tool" "$T/out"'

run 'skip_all "needs a unicorn"; ok 1 "never"'
t "skip_all: plan 1..0 with the reason, exit 0, nothing after" \
	'[ $rc -eq 0 ] && [ "$(cat "$T/out")" = "1..0 # SKIP needs a unicorn" ]'

run 'need_tool sh no-such-tool-xyz; ok 0 "never"'
t "need_tool bails naming the missing tool" \
	'[ $rc -ne 0 ] && grep -q "^Bail out! no-such-tool-xyz missing" "$T/out" && ! grep -q never "$T/out"'

run 'echo "$T" >"$TMPDIR/t"; at_exit "echo hook ran"; touch "$T/f"; ok 0 a; done_testing'
t "at_exit hooks run on exit" 'grep -qx "hook ran" "$T/out"'
t "the scratch directory is gone afterwards" '[ -s "$T/tmp/t" ] && [ ! -e "$(cat "$T/tmp/t")" ]'

run 'echo "$T" >"$TMPDIR/t2"; ok 0 a; kill -TERM $$; ok 0 never; done_testing'
t "killed mid-run: a failure, and no plan" '[ $rc -ne 0 ] && ! grep -q "^1\.\." "$T/out"'
t "the scratch directory is gone all the same" '[ ! -e "$(cat "$T/tmp/t2")" ]'

# the failure log make's check targets print after prove's summary
FAILLOG=$T/fail.log
run 'ok 0 "a"; done_testing'
t "with BLACKOUT_FAILLOG a passing script writes nothing there" \
	'[ $rc -eq 0 ] && [ ! -e "$T/fail.log" ] && [ "$(cat "$T/out")" = "ok 1 - a
1..1" ]'
took=$(date +%s)
run 'diag "judged 3"; ok 0 "a"; ok 1 "b"; diag "after"; sleep 60 & ok 0 "c"; done_testing'
took=$(($(date +%s) - took))
t "a failing script appends its name, status and count, and still prints all its TAP" \
	'[ $rc -eq 1 ] && grep -qx "==== tests/compat/x.t: exit 1, 1 of 3 failed" "$T/fail.log" &&
	grep -qx "ok 3 - c" "$T/out"'
t "... each failed test with the lines before it" \
	'grep -A 5 "^====" "$T/fail.log" | tr "\n" "|" |
	grep -q "|# judged 3|ok 1 - a|not ok 2 - b|# after|ok 3 - c|"'
t "... without waiting for a child that still holds its output" '[ $took -lt 20 ]'
run 'ok 0 "a"; bail "no unicorn"'
t "a script that bails is logged with its Bail out! line" \
	'[ "$(grep -c "^====" "$T/fail.log")" = 2 ] && grep -qx "Bail out! no unicorn" "$T/fail.log"'
FAILLOG=

done_testing
