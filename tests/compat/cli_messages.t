#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli_messages.t — what the filesystem commands tell a newcomer: each message says
# what is wrong and what to do (issue 26, item 4). One check per message. TAP.
. "${BLACKOUT_SRC:?set BLACKOUT_SRC to the source tree}/tests/compat/lib.sh"
B=$BLACKOUT
cd "$SCRATCH" || exit 1

# mkfs on a file that does not exist: the name once, and the hint to give a size
err=$("$B" mkfs nosuch.img 2>&1)
rc=$?
[ $rc -eq 1 ] && [ "$err" = "blackout mkfs: nosuch.img: No such file or directory (to create the image, give its size: --size 64M)" ]
ok $? "mkfs on a missing image names it once and says to pass --size"
note() { printf '%s\n' "$@" | sed 's/^/# /'; }
note "mkfs: $err"

# ls on a missing image: the name once, and how to make one
err=$("$B" ls nosuch.img 2>&1)
rc=$?
[ $rc -eq 1 ] && [ "$(printf '%s' "$err" | grep -o 'nosuch.img' | wc -l)" -eq 1 ] &&
	printf '%s' "$err" | grep -q 'blackout mkfs IMAGE --size'
ok $? "ls on a missing image names it once and says how to make one"
note "ls: $err"

# mkfs says what it made; -q keeps it quiet
out=$("$B" mkfs a.img --size 16M 2>&1)
[ $? -eq 0 ] && [ "$out" = "a.img: ext3, 16 MiB: 16384 blocks of 1024 bytes, 4096 inodes" ]
ok $? "mkfs prints the type, size, blocks and inodes it made"
note "mkfs: $out"
out=$("$B" mkfs -q b.img --size 8M -t ext2 2>&1)
[ $? -eq 0 ] && [ -z "$out" ] && [ -s b.img ]
ok $? "mkfs -q makes the image and prints nothing"

# a relative path inside the image
printf 'hello\n' >local.txt
err=$("$B" put a.img local.txt rel.txt 2>&1)
rc=$?
[ $rc -eq 2 ] && printf '%s' "$err" | grep -q '^blackout put: rel.txt: paths inside the image must be absolute ("/rel.txt")$'
ok $? "put with a relative image path says paths inside the image must be absolute"
note "put: $err"
err=$("$B" mv a.img /lost+found rel 2>&1)
[ $? -eq 2 ] && printf '%s' "$err" | grep -q 'rel: paths inside the image must be absolute'
ok $? "mv names the relative one of its two paths"
"$B" ln -s a.img relative-target /sl 2>&1 && "$B" symlink a.img ../up /sl2 2>&1
ok $? "a symbolic link's target may be relative (ln -s, symlink)"

# stat: readable UTC times, the raw seconds kept
"$B" put a.img local.txt /f.txt
out=$("$B" stat a.img /f.txt)
printf '%s\n' "$out" | grep -Eq '^mtime: [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC \([0-9]+\)$' &&
	[ "$(printf '%s\n' "$out" | grep -Ec '^[acm]time: .* UTC \(')" -eq 3 ]
ok $? "stat prints atime, mtime and ctime as UTC dates with the seconds in brackets"
note "$(printf '%s\n' "$out" | grep '^mtime')"

# too small for ext3: said as such, not as "a journal of 0 blocks"
err=$("$B" mkfs s.img --size 1M 2>&1)
rc=$?
[ $rc -eq 1 ] && printf '%s' "$err" | grep -q 'the image is too small for ext3: 1024 blocks of 1024 bytes' &&
	printf '%s' "$err" | grep -q 'give a larger size, or make ext2' &&
	! printf '%s' "$err" | grep -q 'journal of 0 blocks' &&
	! printf '%s' "$err" | grep -q 'mkfs: .*mkfs:'
ok $? "mkfs on 1 MiB says the image is too small for ext3 and what to do"
note "mkfs 1M: $err"
err=$("$B" explore --stack 'mem(size=1M)' --fs ext3 --workload append-fsync --quiet 2>&1)
rc=$?
[ $rc -eq 1 ] && printf '%s' "$err" | grep -q 'too small for ext3' &&
	! printf '%s' "$err" | grep -q 'mkfs.*mkfs:'
ok $? "explore on a 1 MiB stack says the image is too small for ext3, naming mkfs once"
note "explore 1M: $err"

done_testing
