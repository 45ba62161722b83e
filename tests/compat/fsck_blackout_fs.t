#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck_blackout_fs.t — blackout fsck on images made and filled by blackout's own
# filesystem (mkfs, mkdir, put, ln, symlink, rm): clean by both checkers; then seeded
# corruptions of every kind judged as e2fsck -fn judges them, and repaired.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
B=$BLACKOUT
W=$SCRATCH
[ -d /dev/shm ] && W=$(mktemp -d /dev/shm/blackout-fsckfs.XXXXXX) && at_exit "rm -rf '$W'"

head -c 200000 /dev/urandom >"$W/big"
head -c 3000 /dev/urandom >"$W/mid"
echo small >"$W/small"
fill() { # fill IMAGE: a small tree through the blackout CLI
	"$B" mkdir "$1" /a /a/b /d >/dev/null 2>&1 || return 1
	"$B" put "$1" "$W/big" /a/big >/dev/null 2>&1 || return 1
	for i in $(seq 1 12); do "$B" put "$1" "$W/mid" /a/b/m$i >/dev/null 2>&1 || return 1; done
	for i in $(seq 1 60); do "$B" put "$1" "$W/small" /d/file_with_a_longer_name_$i >/dev/null 2>&1 || return 1; done
	"$B" ln "$1" /a/big /a/b/hard >/dev/null 2>&1 || return 1
	"$B" symlink "$1" small /a/fast >/dev/null 2>&1 || return 1
	"$B" symlink "$1" "$(printf "y%.0s" $(seq 1 120))" /a/slow >/dev/null 2>&1 || return 1
	"$B" rm "$1" /a/b/m3 >/dev/null 2>&1 || return 1
}
imgs=""
# at least two groups each, so the superblock and descriptors have backups
for spec in "20M ext3 1024" "20M ext3 1024 -O metadata_csum" "36M ext2 2048 -O metadata_csum"; do
	set -- $spec
	size=$1 t=$2 bs=$3
	shift 3
	img="$W/$t-$bs$(echo "$@" | tr -d ' -').img"
	"$B" mkfs "$img" --size "$size" -t "$t" -b "$bs" -N 512 "$@" >/dev/null 2>&1 && fill "$img"
	ok $? "$(basename "$img"): made and filled by blackout"
	e2fsck_clean "$img"
	ok $? "$(basename "$img"): e2fsck -fn clean"
	"$B" fsck "$img" >/dev/null
	ok $? "$(basename "$img"): blackout fsck clean"
	imgs="$imgs $img"
done

tot=0 agree=0 rtot=0 rgood=0 gaps=""
for img in $imgs; do
	for k in superblock gdt bitmap inode dirent htree indirect data; do
		for s in 1 2 3 4 5 6 7 8; do
			cp "$img" "$W/w.img"
			"$B" corrupt "$W/w.img" --what $k --seed $s >/dev/null 2>&1 || continue
			"$B" fsck "$W/w.img" >/dev/null 2>&1
			b=$([ $? -eq 0 ] && echo 0 || echo 1)
			e2fsck_clean "$W/w.img" >/dev/null 2>&1
			e=$?
			tot=$((tot + 1))
			if [ $b -eq $e ]; then agree=$((agree + 1)); else gaps="$gaps $(basename "$img" .img)/$k/$s"; fi
			if [ $e -ne 0 ]; then
				"$B" fsck -y "$W/w.img" >/dev/null 2>&1
				rtot=$((rtot + 1))
				e2fsck_clean "$W/w.img" >/dev/null 2>&1 && rgood=$((rgood + 1))
			fi
		done
	done
done
diag "verdicts: $agree/$tot agree with e2fsck -fn${gaps:+; disagreements:$gaps}"
diag "repairs: $rgood/$rtot left e2fsck -fn clean"
[ $tot -ge 150 ] && [ $((agree * 100)) -ge $((tot * 99)) ]
ok $? "verdicts on blackout-made images equal e2fsck's on >= 99% ($agree/$tot)"
[ $((rgood * 100)) -ge $((rtot * 95)) ]
ok $? "after fsck -y, e2fsck -fn clean on >= 95% ($rgood/$rtot)"
done_testing
