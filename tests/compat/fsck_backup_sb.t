#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck_backup_sb.t — a damaged primary superblock: blackout fsck checks with a backup,
# as e2fsck does (-b), says which one, and -y writes it back; an image with no ext2/3
# superblock anywhere is an operational error (exit 8, "not an ext2/ext3 filesystem").
. "$BLACKOUT_SRC/tests/compat/lib.sh"
W=$SCRATCH

for spec in "1024 16M 8193" "4096 160M 32768"; do
	set -- $spec
	bs=$1 size=$2 at=$3
	mke2fs -q -F -t ext3 -b "$bs" "$W/p.img" "$size" >/dev/null 2>&1
	dd if=/dev/zero of="$W/p.img" bs=1024 seek=1 count=1 conv=notrunc 2>/dev/null
	cp "$W/p.img" "$W/orig.img"
	"$BLACKOUT" fsck -n "$W/p.img" >"$W/out" 2>&1
	rc=$?
	[ $rc -eq 4 ] && grep -q "backup superblock at block $at (block size $bs)" "$W/out"
	ok $? "$bs: zeroed primary: -n checks with the backup at $at and says so (exit $rc)"
	cmp -s "$W/p.img" "$W/orig.img"
	ok $? "$bs: ... and writes nothing"
	"$BLACKOUT" fsck -y "$W/p.img" >"$W/out" 2>&1
	rc=$?
	ok $([ $rc -eq 1 ] && echo 0 || echo 1) "$bs: -y restores the primary (exit $rc)"
	e2fsck_clean "$W/p.img"
	ok $? "$bs: e2fsck -fn clean afterwards"
done

# metadata_csum: a primary whose checksum fails is not trusted
mke2fs -q -F -t ext3 -O metadata_csum "$W/c.img" 16M >/dev/null 2>&1
printf '\377' | dd of="$W/c.img" bs=1 seek=$((1024 + 0x78)) conv=notrunc 2>/dev/null
"$BLACKOUT" fsck -y "$W/c.img" >"$W/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "backup superblock at block 8193" "$W/out"
ok $? "metadata_csum: bad primary checksum: -y repairs from the backup (exit $rc)"
e2fsck_clean "$W/c.img"
ok $? "... e2fsck -fn clean afterwards"

# one group, no backup: nothing to fall back on
mke2fs -q -F -t ext3 -b 4096 "$W/one.img" 16M >/dev/null 2>&1
dd if=/dev/zero of="$W/one.img" bs=1024 seek=1 count=1 conv=notrunc 2>/dev/null
"$BLACKOUT" fsck -y "$W/one.img" >"$W/out" 2>&1
rc=$?
[ $rc -eq 8 ] && grep -q "not an ext2/ext3 filesystem" "$W/out"
ok $? "single group, zeroed primary: exit 8, not an ext2/ext3 filesystem (exit $rc)"

head -c 2097152 /dev/urandom >"$W/r.img"
cp "$W/r.img" "$W/r0.img"
"$BLACKOUT" fsck -y "$W/r.img" >"$W/out" 2>&1
rc=$?
[ $rc -eq 8 ] && grep -q "not an ext2/ext3 filesystem" "$W/out" && cmp -s "$W/r.img" "$W/r0.img"
ok $? "random bytes: exit 8, not an ext2/ext3 filesystem, nothing written (exit $rc)"
done_testing
