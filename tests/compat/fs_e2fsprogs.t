#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fs_e2fsprogs.t — blackout's filesystem against e2fsprogs, both ways: images made by
# mke2fs and filled by debugfs read back identically through the blackout CLI and
# stay e2fsck-clean after blackout changes them; blackout mkfs images match mke2fs's
# geometry and pass e2fsck -fn. TAP on stdout.
set -u
. "$(dirname "$0")/../test-lib.sh"
# e2fsck -fn may exit 0 while printing problems: any line but the headers fails.
clean() {
	out=$(e2fsck -fn "$1" 2>&1)
	rc=$?
	bad=$(printf '%s\n' "$out" | grep -v -e '^e2fsck ' -e '^Pass ' -e ' files (.* blocks$')
	if [ $rc -ne 0 ] || [ -n "$bad" ]; then
		printf '%s\n' "$out" | sed 's/^/# /'
		return 1
	fi
	return 0
}
same() { cmp -s "$1" "$2"; }

head -c 300000 /dev/urandom >"$T/big"
printf 'small file\n' >"$T/small"
head -c 5000 /dev/urandom >"$T/mid"
long=$(printf '/%0200d' 0)

for spec in "ext2 1024" "ext3 1024" "ext2 4096" "ext3 4096" "ext3 2048"; do
	set -- $spec
	t=$1 bs=$2
	img="$T/$t-$bs.img"
	mke2fs -q -F -t "$t" -b "$bs" "$img" 64M >/dev/null 2>&1
	cat >"$T/cmds" <<EOF
mkdir /dir
mkdir /dir/sub
write $T/big /dir/big
write $T/small /small
write $T/mid /dir/sub/mid
symlink /fastlink /dir/big
symlink /slowlink $long
EOF
	debugfs -w -f "$T/cmds" "$img" >/dev/null 2>&1
	"$B" cat "$img" /dir/big >"$T/out" 2>"$T/err"
	ok $? "$t/$bs: cat a debugfs-written file"
	same "$T/out" "$T/big"
	ok $? "$t/$bs: same bytes as written by debugfs"
	"$B" get "$img" /dir/sub/mid "$T/out2"
	same "$T/out2" "$T/mid"
	ok $? "$t/$bs: get a file in a subdirectory"
	"$B" ls "$img" /dir | sort | tr '\n' ' ' >"$T/ls"
	[ "$(cat "$T/ls")" = "big sub " ]
	ok $? "$t/$bs: ls lists the directory ($(cat "$T/ls"))"
	"$B" ls -l "$img" / | grep -q "fastlink -> /dir/big"
	ok $? "$t/$bs: fast symlink read"
	"$B" ls -l "$img" / | grep -q -- "slowlink -> $long"
	ok $? "$t/$bs: slow symlink read"
	"$B" cat "$img" /fastlink | cmp -s - "$T/big"
	ok $? "$t/$bs: cat follows a symlink"

	# blackout's changes to the mke2fs image stay e2fsck-clean. Each command is
	# judged on its own so that an early failure cannot pass as the expected one.
	"$B" put "$img" "$T/mid" /dir/new
	ok $? "$t/$bs: put"
	"$B" mkdir "$img" /made /made/deeper
	ok $? "$t/$bs: mkdir (two levels)"
	"$B" mv "$img" /dir/big /made/deeper/big
	ok $? "$t/$bs: mv into another directory"
	"$B" rm "$img" /small
	ok $? "$t/$bs: rm"
	"$B" ln "$img" /made/deeper/big /hard
	ok $? "$t/$bs: ln"
	"$B" symlink "$img" /made/deeper/big /made/sym
	ok $? "$t/$bs: symlink"
	"$B" truncate "$img" /dir/sub/mid 1000
	ok $? "$t/$bs: truncate"
	"$B" rmdir "$img" /dir/sub 2>"$T/err"
	[ $? -eq 1 ] && grep -qi "not empty" "$T/err"
	ok $? "$t/$bs: rmdir of a non-empty directory fails ($(cat "$T/err"))"
	"$B" stat "$img" /dir/sub >/dev/null
	ok $? "$t/$bs: the directory is still there"

	# what ln, symlink, truncate and rm did, through blackout and through debugfs
	ino_big=$("$B" stat "$img" /made/deeper/big | sed -n 's/^inode: //p')
	ino_hard=$("$B" stat "$img" /hard | sed -n 's/^inode: //p')
	[ -n "$ino_big" ] && [ "$ino_big" = "$ino_hard" ]
	ok $? "$t/$bs: the hard link is the same inode ($ino_big, $ino_hard)"
	"$B" stat "$img" /hard | grep -qx "links: 2"
	ok $? "$t/$bs: blackout counts two links"
	debugfs -R "stat /hard" "$img" 2>/dev/null | grep -q "^Links: 2 "
	ok $? "$t/$bs: debugfs counts two links"
	"$B" cat "$img" /hard | cmp -s - "$T/big"
	ok $? "$t/$bs: cat through the hard link"
	debugfs -R "cat /hard" "$img" 2>/dev/null | cmp -s - "$T/big"
	ok $? "$t/$bs: debugfs cat through the hard link"
	"$B" ls -l "$img" /made | grep -q -- "sym -> /made/deeper/big\$"
	ok $? "$t/$bs: blackout reads the symlink"
	debugfs -R "stat /made/sym" "$img" 2>/dev/null | grep -q 'Fast link dest: "/made/deeper/big"'
	ok $? "$t/$bs: debugfs reads the symlink"
	"$B" cat "$img" /made/sym | cmp -s - "$T/big"
	ok $? "$t/$bs: cat follows the new symlink"
	head -c 1000 "$T/mid" >"$T/mid1000"
	"$B" stat "$img" /dir/sub/mid | grep -qx "size: 1000"
	ok $? "$t/$bs: truncated size"
	"$B" cat "$img" /dir/sub/mid | cmp -s - "$T/mid1000"
	ok $? "$t/$bs: the truncated file keeps its first 1000 bytes"
	debugfs -R "cat /dir/sub/mid" "$img" 2>/dev/null | cmp -s - "$T/mid1000"
	ok $? "$t/$bs: debugfs reads the truncated file"
	! "$B" stat "$img" /small >/dev/null 2>&1 &&
		debugfs -R "stat /small" "$img" 2>&1 | grep -q "File not found"
	ok $? "$t/$bs: the removed file is gone for blackout and debugfs"
	"$B" rm "$img" /dir/sub/mid && "$B" rmdir "$img" /dir/sub
	ok $? "$t/$bs: blackout changed the image"
	clean "$img"
	ok $? "$t/$bs: e2fsck -fn clean after blackout's changes"
	debugfs -R "cat /made/deeper/big" "$img" 2>/dev/null | cmp -s - "$T/big"
	ok $? "$t/$bs: debugfs reads the renamed file"
	debugfs -R "cat /dir/new" "$img" 2>/dev/null | cmp -s - "$T/mid"
	ok $? "$t/$bs: debugfs reads the file blackout put"
done

# an htree directory made by e2fsck -D, read and extended by blackout
mkdir "$T/pop"
i=0
while [ $i -lt 1500 ]; do
	echo "$i" >"$T/pop/entry-number-$i"
	i=$((i + 1))
done
for feat in "" "-O metadata_csum"; do
	img="$T/htree.img"
	# shellcheck disable=SC2086
	mke2fs -q -F -t ext3 $feat -N 4096 -d "$T/pop" "$img" 32M >/dev/null 2>&1
	e2fsck -fyD "$img" >/dev/null 2>&1
	debugfs -R "htree /" "$img" 2>/dev/null | grep -q "Indirect levels"
	ok $? "htree$feat: e2fsck -D indexed the root directory"
	cnt=$("$B" ls -a "$img" / | wc -l)
	[ "$cnt" -eq 1503 ]
	ok $? "htree$feat: blackout lists all entries ($cnt)"
	[ "$("$B" cat "$img" /entry-number-777)" = 777 ]
	ok $? "htree$feat: lookup through the index"
	i=0
	while [ $i -lt 40 ]; do
		echo "x$i" >"$T/x"
		"$B" put "$img" "$T/x" "/added-later-$i" || break
		i=$((i + 1))
	done
	[ $i -eq 40 ]
	ok $? "htree$feat: inserted into the indexed directory"
	"$B" rm "$img" /entry-number-5 /entry-number-6
	ok $? "htree$feat: removed from the indexed directory"
	clean "$img"
	ok $? "htree$feat: e2fsck -fn clean after changes to the htree"
	[ "$(debugfs -R 'cat /added-later-39' "$img" 2>/dev/null)" = x39 ]
	ok $? "htree$feat: debugfs finds an inserted name"
done

# blackout mkfs: e2fsck-clean and the geometry of mke2fs
geom() {
	dumpe2fs -h "$1" 2>/dev/null | grep -E '^(Block count|Inode count|Blocks per group|Inodes per group|Reserved GDT blocks|Inode size|Filesystem features|Reserved block count|Journal size|Total journal blocks):'
}
for spec in "ext3 64M" "ext2 64M" "ext3 1G" "ext3 300M -b 2048" "ext3 20M -O metadata_csum" "ext3 128M -b 4096 -I 128"; do
	set -- $spec
	t=$1 size=$2
	shift 2
	rm -f "$T/b.img" "$T/m.img"
	"$B" mkfs "$T/b.img" --size "$size" -t "$t" "$@"
	ok $? "mkfs $spec"
	clean "$T/b.img"
	ok $? "mkfs $spec: e2fsck -fn clean"
	truncate -s "$size" "$T/m.img"
	mke2fs -q -F -t "$t" "$@" "$T/m.img" >/dev/null 2>&1
	geom "$T/b.img" >"$T/gb"
	geom "$T/m.img" >"$T/gm"
	if diff "$T/gm" "$T/gb" >"$T/gd"; then ok 0 "mkfs $spec: same geometry as mke2fs"; else
		sed 's/^/# /' "$T/gd"
		ok 1 "mkfs $spec: same geometry as mke2fs"
	fi
done

# errors and help
"$B" cat "$T/b.img" /missing 2>"$T/err"
[ $? -eq 1 ] && grep -q "missing" "$T/err"
ok $? "a missing path fails with a one-line reason"
[ "$(wc -l <"$T/err")" -eq 1 ]
ok $? "the reason is one line"
for c in mkfs ls stat cat get put mkdir rm rmdir mv ln symlink truncate df; do
	"$B" "$c" --help >"$T/help" 2>&1 && grep -q usage "$T/help"
	ok $? "$c --help"
done
"$B" df "$T/b.img" | grep -q "free blocks"
ok $? "df prints counts"

done_testing
