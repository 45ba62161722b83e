#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_leftovers.t — a command that fails leaves nothing half-made (issue 37, item 6):
# a failed mkfs removes the image it created (or cuts back one it extended), put
# that runs out of space leaves PATH as it was, and mkfs -L longer than 16 bytes
# warns as mke2fs does. TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
cd "$SCRATCH" || exit 1

for args in "-I 100 --size 8M" "-b 3000 --size 8M" "-J size=1000 --size 8M" "--size 1k" \
	"-t ext3 --size 1M"; do
	rm -f x.img
	# shellcheck disable=SC2086
	"$B" mkfs $args x.img >/dev/null 2>err
	rc=$?
	[ $rc -ne 0 ] && [ ! -e x.img ]
	ok $? "mkfs $args fails (exit $rc) and leaves no x.img ($(head -1 err))"
done

truncate -s 4M small.img
"$B" mkfs small.img --size 1M >/dev/null 2>&1
[ "$(stat -c %s small.img)" -eq 4194304 ]
ok $? "a failed mkfs on an existing image leaves its size as it was"
truncate -s 1M grow.img
"$B" mkfs -I 100 grow.img --size 8M >/dev/null 2>&1
"$B" mkfs -J size=1000 grow.img --size 8M >/dev/null 2>&1
[ "$(stat -c %s grow.img)" -eq 1048576 ]
ok $? "a failed mkfs that extended an image cuts it back"

"$B" mkfs -q -L abcdefghijklmnopqrs l.img --size 8M 2>err; rc=$?
[ $rc -eq 0 ] && grep -q "warning: label too long; truncated to 'abcdefghijklmnop'" err
ok $? "mkfs -L of 19 bytes warns that it is truncated to 16 ($(cat err))"
"$B" mkfs -q -L abcdefghijklmnop l.img 2>err
[ ! -s err ]
ok $? "a 16-byte label makes no warning"

# put into a full filesystem: no partial file, the old one intact
"$B" mkfs -q -t ext2 full.img --size 2M
printf 'old contents\n' >old.txt
head -c 4M /dev/urandom >big.bin
"$B" put full.img old.txt /f && "$B" put full.img old.txt /g
ok $? "two small files put"
free0=$("$B" df full.img | sed -n 's/^free blocks: //p')
"$B" put full.img big.bin /new >/dev/null 2>err; rc=$?
[ $rc -eq 1 ] && ! "$B" stat full.img /new >/dev/null 2>&1
ok $? "put that runs out of space fails (exit $rc) and leaves no /new ($(head -1 err))"
"$B" put full.img big.bin /f >/dev/null 2>&1
[ "$("$B" cat full.img /f)" = "old contents" ]
ok $? "put that runs out of space over /f leaves /f as it was"
[ "$("$B" ls full.img / | sort | tr '\n' ' ')" = "f g lost+found " ]
ok $? "and leaves no temporary name behind"
free1=$("$B" df full.img | sed -n 's/^free blocks: //p')
[ "$free0" = "$free1" ]
ok $? "the space is given back ($free0 free blocks before, $free1 after)"
e2fsck_clean full.img
ok $? "e2fsck -fn is clean after the failed puts"
"$B" put full.img old.txt /f && [ "$("$B" ls full.img / | sort | tr '\n' ' ')" = "f g lost+found " ]
ok $? "put over an existing file replaces it (no second name)"
done_testing
