#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_conflicts.t — options that cannot go together are refused, before any work,
# with exit 2 naming both (issue 37, item 4: `matrix --quick --full` ran the full
# matrix for 38 minutes). TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
cd "$SCRATCH" || exit 1

# refused CMD-ARGS... : exit 2 within 10 s, both options named, nothing written
refused() {
	d="$*"
	timeout 10 "$B" "$@" --out "$SCRATCH/out" >/dev/null 2>err; rc=$?
	[ $rc -eq 2 ] && grep -q "cannot be used together" err && [ ! -e "$SCRATCH/out" ]
	ok $? "$d: refused, exit 2 ($(head -1 err))"
}
refused matrix --quick --full
refused matrix --full --quick
refused matrix --merge a.json --rows cache
refused matrix --merge a.json --shard 0/2

STACK='disk > mem(size=16M)'
timeout 10 "$B" explore --merge a.json --stack "$STACK" >/dev/null 2>err; rc=$?
[ $rc -eq 2 ] && grep -q -- "--merge and --stack cannot be used together" err
ok $? "explore --merge with --stack: refused, exit 2 ($(head -1 err))"
"$B" matrix --quick --quick --rows bogus >/dev/null 2>err
! grep -q "cannot be used together" err
ok $? "an option given twice does not conflict with itself"
"$B" matrix --vm-states 3 --rows cache >/dev/null 2>err; rc=$?
[ $rc -eq 2 ] && grep -q -- "--vm-states needs --vm" err
ok $? "matrix --vm-states without --vm: refused, exit 2"
done_testing
