#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_display.t — what the commands print reads as it should (issue 37, item 15):
# stat gives the unit of its block count, ls lists '.' and '..' only with -a, and
# the nbdkit plugin's error for a bad stack spec is one line without a literal \n. TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
cd "$SCRATCH" || exit 1

"$B" mkfs -q a.img --size 8M && printf 'hello\n' >h.txt && "$B" put a.img h.txt /h.txt
ok $? "an image with /h.txt"
out=$("$B" stat a.img /h.txt | grep '^blocks:')
[ "$out" = "blocks: 2 (512-byte units: 1024 bytes)" ]
ok $? "stat names the unit of blocks: $out"
[ "$("$B" ls a.img | tr '\n' ' ')" = "lost+found h.txt " ]
ok $? "ls lists neither '.' nor '..'"
[ "$("$B" ls -a a.img | tr '\n' ' ')" = ". .. lost+found h.txt " ]
ok $? "ls -a lists '.' and '..'"
"$B" ls -l a.img | grep -q ' \.$'
ok $([ $? -ne 0 ] && echo 0 || echo 1) "ls -l lists no '.'"
[ "$("$B" ls -la a.img | wc -l)" -eq 4 ]
ok $? "ls -la lists four entries"

PLUGIN=${BUILD:-$BLACKOUT_SRC/build}/blackout-nbdkit.so
if have_tool nbdkit && [ -f "$PLUGIN" ]; then
	timeout 20 nbdkit -f -U "$SCRATCH/sock" "$PLUGIN" stack='mem(sise=1)' >out 2>&1
	grep -q "column 5: mem has no parameter 'sise'" out && ! grep -qF '\n' out &&
		[ "$(grep -c . out)" -eq 1 ]
	ok $? "the plugin's bad-spec error is one line, no literal backslash-n: $(cat out)"
else
	skip "the plugin's bad-spec error" "no nbdkit or no plugin built"
fi
done_testing
