#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_jbd.t — jbd's usage errors exit 2 and a missing image is named once (issue 37,
# item 3). TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
cd "$SCRATCH" || exit 1

usage() { # usage DESCRIPTION ARGS...: exit 2 and a pointer to --help on stderr
	d=$1; shift
	"$B" jbd "$@" >/dev/null 2>err; rc=$?
	[ $rc -eq 2 ] && grep -q "Try 'blackout jbd.* --help'" err
	ok $? "jbd $d: usage error, exit 2 (exit $rc: $(head -1 err))"
}
usage "with no action"
usage "with an unknown action" bogus x.img
usage "recover with an unknown option" recover --bogus x.img
usage "recover without IMAGE" recover
usage "recover with two images" recover a.img b.img
usage "recover --map without --block-size" recover --map 1-2 x.img
usage "recover --block-size 1000 (not a power of two)" recover --map 1-2 --block-size 1000 x.img
usage "write --barrier 2" write --barrier 2 x.img commit

err=$("$B" jbd recover nosuch.img 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(printf '%s' "$err" | grep -o nosuch.img | wc -l)" -eq 1 ]
ok $? "jbd recover nosuch.img: exit 1, the name said once ($err)"
"$B" jbd --help >out; rc=$?
[ $rc -eq 0 ] && grep -q '^usage: blackout jbd recover' out && grep -q '^  write ' out
ok $? "jbd --help: exit 0, both actions"
done_testing
