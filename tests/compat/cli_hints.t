#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_hints.t — a hint is given only where it helps (issue 37, item 7): "give its
# size: --size 64M" only to mkfs without --size on a missing or empty image; never
# when a size was given, never to a command that takes no size. TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
cd "$SCRATCH" || exit 1

"$B" mkfs nosuch.img 2>err; rc=$?
[ $rc -eq 1 ] && grep -q "give its size: --size 64M" err
ok $? "mkfs on a missing image without --size: the hint ($(cat err))"
: >empty.img
"$B" mkfs empty.img 2>err; rc=$?
[ $rc -eq 1 ] && grep -q "empty file" err && grep -q "give its size: --size 64M" err
ok $? "mkfs on an empty image without --size: the hint ($(cat err))"
"$B" mkfs nodir/x.img --size 64M 2>err; rc=$?
[ $rc -eq 1 ] && grep -q "No such file or directory" err && ! grep -q -- "--size" err
ok $? "mkfs with --size in a missing directory: no size hint ($(cat err))"
for c in "ls empty.img" "df empty.img" "cat empty.img /x" "corrupt empty.img --what inode --seed 1" \
	"jbd recover empty.img"; do
	# shellcheck disable=SC2086
	"$B" $c >/dev/null 2>err; rc=$?
	[ $rc -eq 1 ] && grep -q "empty file" err && ! grep -q "give .*size" err
	ok $? "$c: says the file is empty, no size hint ($(cat err))"
done
"$B" ls nosuch.img 2>err
grep -q "make an image first: blackout mkfs IMAGE --size 64M" err
ok $? "ls on a missing image points at mkfs with a size ($(cat err))"
done_testing
