#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fs_precheck.t — the writing commands check the image before they write: a damaged
# image is refused with nothing written, the first problem named and fsck -y
# suggested; --force skips the check; reading commands do not check; fsck -y makes
# the image writable again. fs_damage.t runs the whole corpus; this is the contract.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
need_tool e2fsck debugfs

"$B" mkfs "$T/a.img" --size 8M -q && "$B" mkdir "$T/a.img" /d &&
	printf 'hello\n' >"$T/x" && "$B" put "$T/a.img" "$T/x" /d/x
ok $? "clean image: mkfs, mkdir and put go through the check"

# a block bitmap bit cleared under a file: e2fsck and blackout fsck both see it
cp "$T/a.img" "$T/bad.img"
"$B" corrupt "$T/bad.img" --what bitmap --seed 1 --count 1 >/dev/null 2>&1
e2fsck -fn "$T/bad.img" >/dev/null 2>&1
ok $(($? == 0)) "the damaged image is damaged by e2fsck's verdict"
cp "$T/bad.img" "$T/before.img"
for c in "put $T/bad.img $T/x /d/y" "mkdir $T/bad.img /e" "rm $T/bad.img /d/x" \
	"mv $T/bad.img /d/x /d/z" "truncate $T/bad.img /d/x 1" "rmdir $T/bad.img /d" \
	"ln $T/bad.img /d/x /d/l" "symlink $T/bad.img /d/x /d/s"; do
	# shellcheck disable=SC2086
	"$B" $c >"$T/out" 2>"$T/err"
	rc=$?
	name=${c%% *}
	is "$rc" 1 "$name on the damaged image: exit 1"
	grep -q "^blackout $name: $T/bad.img: the filesystem is damaged (bitmap: .*): nothing written; run \`blackout fsck -y $T/bad.img\` first (--force writes anyway)$" "$T/err"
	ok $? "$name: names the problem and what to do ($(cat "$T/err"))"
	cmp -s "$T/bad.img" "$T/before.img"
	ok $? "$name: not a byte written"
done

"$B" ls "$T/bad.img" /d >"$T/out" 2>&1 && grep -q '^x$' "$T/out" &&
	"$B" cat "$T/bad.img" /d/x | grep -q hello
ok $? "reading commands do not check: ls and cat work on the damaged image"

# damage the filesystem's own protection lets pass: a wrong free count
cp "$T/a.img" "$T/cnt.img"
debugfs -w -R "ssv free_blocks_count 100" "$T/cnt.img" >/dev/null 2>&1
"$B" put "$T/cnt.img" "$T/x" /d/y 2>"$T/err"
is "$?" 1 "a wrong free count is refused too ($(cat "$T/err"))"
"$B" put --force "$T/cnt.img" "$T/x" /d/y 2>"$T/err"
ok $? "put --force writes anyway ($(cat "$T/err"))"
"$B" cat "$T/cnt.img" /d/y | grep -q hello
ok $? "and the file is there"
"$B" put --force "$T/bad.img" "$T/x" /d/y 2>"$T/err"
is "$?" 1 "put --force on damage the filesystem meets: still refused by its own protection"
grep -q 'the filesystem is damaged' "$T/err"
ok $? "saying so ($(cat "$T/err"))"

"$B" ls --force "$T/a.img" >/dev/null 2>&1
is "$?" 2 "--force is not an option of the reading commands"
"$B" put --help | grep -q -- '--force skips that check'
ok $? "put --help documents --force"

"$B" fsck -y "$T/bad.img" >/dev/null 2>&1
"$B" put "$T/bad.img" "$T/x" /d/after 2>"$T/err"
ok $? "after fsck -y the image takes writes again ($(cat "$T/err"))"
done_testing
