#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# jbd_recover_fs.t — `blackout jbd recover IMAGE` finds an ext3 journal by itself and
# replays the same blocks as `e2fsck -E journal_only` (block-identical apart from the
# superblocks), on mke2fs images with 1 KiB blocks (a journal inode with indirect
# blocks) and 4 KiB blocks; a --map naming the journal inode's indirect blocks (as
# debugfs 'blocks <8>' lists them) is refused and changes nothing.
. "$BLACKOUT_SRC/tests/compat/jbd_lib.sh" # its helpers; lib.sh's TAP below
. "$BLACKOUT_SRC/tests/compat/lib.sh"
W=$SCRATCH

for bs in 1024 4096; do
	mke2fs -q -F -t ext3 -b $bs "$W/j.img" 16M >/dev/null 2>&1
	n=$((16 * 1024 * 1024 / bs))
	# three transactions, the first long enough that the log runs past logical block
	# 12 (where a 1 KiB journal inode's first indirect block sits), one revoke
	head -c $((bs * 14)) /dev/urandom >"$W/a.bin"
	head -c $((bs * 2)) /dev/urandom >"$W/b.bin"
	head -c $bs /dev/urandom >"$W/c.bin"
	l=$(seq $((n - 200)) $((n - 187)) | paste -sd, -)
	printf 'jo\njw -b %s %s\njc\njo\njw -b %s,%s %s\njc\njo\njw -r %s\njw -b %s %s\njc\n' \
		"$l" "$W/a.bin" $((n - 150)) $((n - 149)) "$W/b.bin" $((n - 150)) $((n - 100)) \
		"$W/c.bin" >"$W/cmds"
	debugfs -w -f "$W/cmds" "$W/j.img" >/dev/null 2>&1
	dumpe2fs -h "$W/j.img" 2>/dev/null | grep -q needs_recovery
	ok $? "$bs: debugfs left three committed transactions"
	cp "$W/j.img" "$W/e.img"
	cp "$W/j.img" "$W/m.img"

	"$BLACKOUT" jbd recover "$W/j.img" >"$W/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -Eq "[1-9][0-9]* replayed, 16 blocks written, 1 revoked" "$W/out"
	ok $? "$bs: jbd recover without a map replays them, one block revoked (exit $rc)"
	E2FSCK_CONFIG=/dev/null e2fsck -y -E journal_only "$W/e.img" >/dev/null 2>&1
	jsb=$(debugfs -R "bmap <8> 0" "$W/e.img" 2>/dev/null)
	jsame_home "$W/j.img" "$W/e.img" $bs "$jsb"
	ok $? "$bs: block-identical to e2fsck -E journal_only apart from the superblocks"
	lacks needs_recovery dumpe2fs -h "$W/j.img"
	ok $? "$bs: needs_recovery cleared"
	e2fsck_clean "$W/j.img"
	ok $? "$bs: e2fsck -fn clean afterwards"

	if [ $bs -eq 1024 ]; then
		full=$(debugfs -R "blocks <8>" "$W/m.img" 2>/dev/null | tr ' ' ',' | sed 's/,*$//')
		"$BLACKOUT" jbd recover --block-size $bs --map "$full" "$W/m.img" >"$W/out" 2>&1
		rc=$?
		[ $rc -ne 0 ] && grep -q "indirect block of the journal inode" "$W/out"
		ok $? "$bs: a map with the indirect blocks is refused, naming them (exit $rc)"
		cmp -s "$W/m.img" "$W/e.img" || cmp -s "$W/m.img" "$W/j.img"
		dumpe2fs -h "$W/m.img" 2>/dev/null | grep -q needs_recovery
		ok $? "$bs: ... and the image keeps its journal"
		"$BLACKOUT" jbd recover --block-size $bs --map "$(jmap "$W/m.img")" \
			--fs-blocks $n "$W/m.img" >/dev/null 2>&1
		ok $? "$bs: the map of journal blocks only is accepted"
		jsame_home "$W/m.img" "$W/e.img" $bs "$jsb" ||
			[ "$(jdiff "$W/m.img" "$W/e.img" $bs | grep -v -x -e 0 -e 1 -e "$jsb" | wc -l)" = 0 ]
		ok $? "$bs: ... and replays the same blocks"
	fi
done

# not an ext3 image, no map: a clear error
head -c 1048576 /dev/zero >"$W/z.img"
"$BLACKOUT" jbd recover "$W/z.img" >"$W/out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "ext2/ext3" "$W/out"
ok $? "no filesystem and no map: an error naming what is missing (exit $rc)"
done_testing
