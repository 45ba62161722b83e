#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck_agree.t — blackout fsck against e2fsck -fn on 1,024 seeded corruptions (every
# kind, four images: ext2/ext3, 1k/4k blocks, with and without metadata_csum), and
# e2fsck -fn after blackout fsck -y on every damaged one.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
. "$BLACKOUT_SRC/tests/compat/fsck_mkimg.sh"
W=$SCRATCH
[ -d /dev/shm ] && W=$(mktemp -d /dev/shm/blackout-fsck.XXXXXX) && at_exit "rm -rf '$W'"

fsck_mkimg "$W/e3_1k.img" ext3 1024; ok $? "ext3 1k image builds clean"
fsck_mkimg "$W/e3_1k_csum.img" ext3 1024 -O metadata_csum; ok $? "ext3 1k metadata_csum image builds clean"
fsck_mkimg "$W/e2_4k.img" ext2 4096; ok $? "ext2 4k image builds clean"
fsck_mkimg "$W/e3_4k_csum.img" ext3 4096 -O metadata_csum; ok $? "ext3 4k metadata_csum image builds clean"

for img in "$W"/*.img; do
	"$BLACKOUT" fsck "$img" >/dev/null 2>&1
	ok $? "blackout fsck: $(basename "$img") is clean"
done

SEEDS=${FSCK_AGREE_SEEDS:-32}
tot=0 agree=0 rtot=0 rgood=0 broken=0 gaps=""
for img in "$W"/*.img; do
	for k in superblock gdt bitmap inode dirent htree indirect data; do
		s=1
		while [ $s -le "$SEEDS" ]; do
			cp "$img" "$W/w.img"
			if ! "$BLACKOUT" corrupt "$W/w.img" --what $k --seed $s >"$W/log" 2>&1; then
				s=$((s + 1))
				continue
			fi
			"$BLACKOUT" fsck "$W/w.img" -n >"$W/bo" 2>&1
			brc=$?
			[ $brc -gt 8 ] && broken=$((broken + 1)) # killed by a signal: not a verdict
			e2fsck_clean "$W/w.img" >/dev/null 2>&1
			erc=$?
			b=0
			[ $brc -ne 0 ] && b=1
			tot=$((tot + 1))
			if [ $b -eq $erc ]; then
				agree=$((agree + 1))
			else
				gaps="$gaps $(basename "$img" .img)/$k/$s(blackout=$b,e2fsck=$erc)"
			fi
			# repair every damaged image
			if [ $erc -ne 0 ]; then
				"$BLACKOUT" fsck "$W/w.img" -y >/dev/null 2>&1
				[ $? -gt 8 ] && broken=$((broken + 1))
				rtot=$((rtot + 1))
				e2fsck_clean "$W/w.img" >/dev/null 2>&1 && rgood=$((rgood + 1))
			fi
			s=$((s + 1))
		done
	done
done
diag "verdicts: $agree/$tot agree with e2fsck -fn"
[ -n "$gaps" ] && diag "disagreements:$gaps"
diag "repairs: $rgood/$rtot left e2fsck -fn clean"
[ $tot -ge 1000 ] || [ "$SEEDS" -lt 32 ]
ok $? "at least 1,000 corruptions were made ($tot)"
[ $((agree * 100)) -ge $((tot * 99)) ]
ok $? "blackout's verdict equals e2fsck's on >= 99% ($agree/$tot)"
[ $broken -eq 0 ]
ok $? "blackout fsck never crashed on a corrupted image"
# After -y, e2fsck -fn must find nothing on >= 95% (what remains: docs/fsck-gaps.md).
[ $((rgood * 100)) -ge $((rtot * 95)) ]
ok $? "after blackout fsck -y, e2fsck -fn is clean on >= 95% ($rgood/$rtot)"

# reproducibility and the printed change
cp "$W/e3_1k.img" "$W/a.img"
cp "$W/e3_1k.img" "$W/b.img"
"$BLACKOUT" corrupt "$W/a.img" --what inode --seed 7 --count 3 >"$W/la"
"$BLACKOUT" corrupt "$W/b.img" --what inode --seed 7 --count 3 >"$W/lb"
cmp -s "$W/a.img" "$W/b.img" && cmp -s "$W/la" "$W/lb"
ok $? "corrupt: same seed, same changes"
[ "$(wc -l <"$W/la")" -eq 3 ] && grep -q "^inode [0-9]* offset 0x" "$W/la"
ok $? "corrupt: one line per change, naming the inode"
"$BLACKOUT" fsck "$W/a.img" --json | grep -q '"problems":\[{"kind"'
ok $? "fsck --json lists problems"
"$BLACKOUT" fsck "$W/a.img" -n >/dev/null
ok $([ $? -eq 4 ] && echo 0 || echo 1) "fsck -n exits 4 on a damaged image"
"$BLACKOUT" fsck "$W/e3_1k.img" --fast >/dev/null
ok $? "fsck --fast: clean image is clean"
# an orphan left by a crash (unlinked while open: links 0, on s_last_orphan)
cp "$W/e3_1k.img" "$W/o.img"
oino=$(debugfs -R "stat /a/data5" "$W/o.img" 2>/dev/null | head -1 | awk '{print $2}')
printf 'unlink /a/data5\nsif <%s> links_count 0\nssv last_orphan %s\n' "$oino" "$oino" |
	debugfs -w -f - "$W/o.img" >/dev/null 2>&1
"$BLACKOUT" fsck "$W/o.img" >/dev/null 2>&1
b=$?
e2fsck_clean "$W/o.img" >/dev/null 2>&1
e=$?
[ $b -eq 4 ] && [ $e -ne 0 ]
ok $? "an orphaned inode: both checkers find it"
"$BLACKOUT" fsck -y "$W/o.img" >/dev/null 2>&1
ok $([ $? -eq 1 ] && echo 0 || echo 1) "fsck -y frees the orphan (exit 1)"
e2fsck_clean "$W/o.img" && lacks "First orphan inode" dumpe2fs -h "$W/o.img"
ok $? "after -y: e2fsck clean and no orphan list left"
echo junk >"$W/junk.img"
"$BLACKOUT" fsck "$W/junk.img" >/dev/null 2>&1
ok $([ $? -eq 8 ] && echo 0 || echo 1) "fsck exits 8 when it cannot check"
done_testing
