#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_getopt.t — GNU option conventions in every converted command (issue 37, item 8):
# options after operands, --opt=value, '--', combined short flags, --version and
# `blackout help CMD` = `blackout CMD --help`. TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
cd "$SCRATCH" || exit 1

"$B" mkfs -q a.img --size=16M && [ -s a.img ]
ok $? "mkfs takes --size=16M (--opt=value) after the operand"
printf 'x\n' >x.txt
"$B" put a.img x.txt /x.txt && "$B" mkdir a.img -p /d/e
ok $? "put and mkdir -p after the image"
out=$("$B" ls a.img -l / 2>&1)
printf '%s\n' "$out" | grep -q ' x.txt$'
ok $? "ls IMG -l lists long (options after operands): $(printf '%s' "$out" | head -1)"
out=$("$B" ls -la a.img 2>&1)
printf '%s\n' "$out" | grep -q ' \.\.$' && printf '%s\n' "$out" | grep -q ' x.txt$'
ok $? "ls -la: combined short flags"
out=$("$B" ls --long --all -- a.img / 2>&1)
printf '%s\n' "$out" | grep -q ' \.$'
ok $? "ls --long --all -- IMAGE PATH: '--' ends the options"
"$B" ls -q a.img >/dev/null 2>err; rc=$?
[ $rc -eq 2 ] && grep -q "unknown option '-q'" err && grep -q "Try 'blackout ls --help'" err
ok $? "an unknown short flag is a usage error naming it (exit $rc)"
"$B" ls --bogus=1 a.img >/dev/null 2>err; rc=$?
[ $rc -eq 2 ] && grep -q "unknown option '--bogus'" err
ok $? "an unknown --opt=value is named without its value (exit $rc)"
"$B" ls a.img / /d >/dev/null 2>err; rc=$?
[ $rc -eq 2 ] && grep -q "unexpected operand '/d'" err
ok $? "an operand too many is a usage error (exit $rc)"
out=$("$B" --version); rc=$?
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -Eq '^blackout [0-9]+\.[0-9]+'
ok $? "blackout --version: $out"
for c in ls mkfs put; do
	"$B" help "$c" >h1 && "$B" "$c" --help >h2 && cmp -s h1 h2 && head -1 h1 | grep -q "^usage: blackout $c "
	ok $? "blackout help $c prints what $c --help prints"
done
"$B" help --man ls | grep -q '^\.SH OPTIONS'
ok $? "blackout help --man ls prints a man page"
"$B" help nosuch >/dev/null 2>&1
is "$?" 2 "blackout help with an unknown command is a usage error"
done_testing
