#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck_journal.t — blackout fsck replays a journal that needs recovery before checking,
# as e2fsck does: committed transactions written by debugfs (jo/jw/jc) reach their home
# blocks under -y (exit 1, e2fsck -fn clean afterwards), -n reports and writes nothing,
# and a journal inode that lost its block map is found through the superblock's backup.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
W=$SCRATCH

mkjimg() { # mkjimg IMG BS: two committed, unreplayed transactions over free blocks
	mke2fs -q -F -t ext3 -b "$2" "$1" 8M >/dev/null 2>&1 || return 1
	n=$((8 * 1024 * 1024 / $2))
	b1=$((n - 100)) b2=$((n - 99)) b3=$((n - 98))
	head -c "$2" /dev/urandom >"$W/one.bin"
	head -c $(($2 * 2)) /dev/urandom >"$W/two.bin"
	printf 'jo\njw -b %s %s\njc\njo\njw -b %s,%s %s\njc\n' "$b1" "$W/one.bin" "$b2" "$b3" \
		"$W/two.bin" >"$W/cmds"
	debugfs -w -f "$W/cmds" "$1" >/dev/null 2>&1
	dumpe2fs -h "$1" 2>/dev/null | grep -q needs_recovery
}
# home IMG BS: blocks b1..b3 hold the journalled bytes
home() {
	n=$((8 * 1024 * 1024 / $2))
	dd if="$1" bs="$2" skip=$((n - 100)) count=1 2>/dev/null | cmp -s - "$W/one.bin" &&
		dd if="$1" bs="$2" skip=$((n - 99)) count=2 2>/dev/null | cmp -s - "$W/two.bin"
}

for bs in 1024 4096; do
	mkjimg "$W/j.img" $bs
	ok $? "$bs: debugfs left two committed transactions and needs_recovery"
	cp "$W/j.img" "$W/orig.img"

	"$BLACKOUT" fsck -n "$W/j.img" >"$W/out" 2>&1
	rc=$?
	[ $rc -eq 4 ] && grep -q "needs recovery: not replayed in a read-only check" "$W/out"
	ok $? "$bs: -n reports the journal needing recovery, exit 4 (got $rc)"
	cmp -s "$W/j.img" "$W/orig.img"
	ok $? "$bs: -n writes nothing"

	"$BLACKOUT" fsck -y "$W/j.img" >"$W/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -q "journal replayed: 2 transaction(s), 3 block(s) written" "$W/out"
	ok $? "$bs: -y replays two transactions and exits 1 (got $rc)"
	home "$W/j.img" $bs
	ok $? "$bs: the home blocks hold the journalled bytes"
	lacks needs_recovery dumpe2fs -h "$W/j.img"
	ok $? "$bs: needs_recovery is cleared"
	e2fsck_clean "$W/j.img"
	ok $? "$bs: e2fsck -fn is clean afterwards"

	# the journal inode loses its first block pointer: the superblock's backup serves
	cp "$W/orig.img" "$W/k.img"
	debugfs -w -R "sif <8> block[0] 0" "$W/k.img" >/dev/null 2>&1
	"$BLACKOUT" fsck -p "$W/k.img" >"$W/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -q "found through the superblock's backup" "$W/out"
	ok $? "$bs: damaged journal inode: -p replays through the backup and says so (got $rc)"
	home "$W/k.img" $bs
	ok $? "$bs: ... the home blocks hold the journalled bytes"
	e2fsck_clean "$W/k.img"
	ok $? "$bs: ... and e2fsck -fn is clean (the inode's map restored)"
done

# needs_recovery set, journal superblock destroyed and no backup: cannot replay, exit 4
mkjimg "$W/j.img" 1024
jb=$(debugfs -R "bmap <8> 0" "$W/j.img" 2>/dev/null)
dd if=/dev/zero of="$W/j.img" bs=1024 seek="$jb" count=1 conv=notrunc 2>/dev/null
cp "$W/j.img" "$W/z.img"
"$BLACKOUT" fsck -y "$W/j.img" >"$W/out" 2>&1
rc=$?
[ $rc -eq 4 ] && grep -q "cannot be replayed" "$W/out"
ok $? "journal superblock zeroed: -y says it cannot replay and exits 4 (got $rc)"
done_testing
