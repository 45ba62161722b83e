#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# jbd_debugfs.t — journals written by debugfs (jo/jw/jc) replay in blackout exactly
# as in e2fsck, and journals written by blackout replay in e2fsck as in blackout;
# uncommitted and corrupted-commit transactions are not replayed.
set -u
. "$(dirname "$0")/jbd_lib.sh"
B=${BLACKOUT:-build/blackout}


# mkimg NAME MKE2FS-OPTS
mkimg() { mke2fs -q -F -t ext3 $2 "$T/$1" 8M >/dev/null 2>&1; }
rec() { # ours on $1, prints nothing; returns blackout's status
	"$B" jbd recover --block-size "$(jbs "$1")" --map "$(jmap "$1")" --fs-blocks "$(jfsblocks "$1")" "$1" >"$T/rec.out" 2>&1
	rc=$?
	# the fs client clears needs_recovery after replay; jbd knows nothing of ext3
	debugfs -w -R 'feature -needs_recovery' "$1" >/dev/null 2>&1
	return $rc
}
e2j() { e2fsck -y -E journal_only "$1" >/dev/null 2>&1; }
# both IMG: replay a copy with each, compare; e2fsck -fn clean on ours
both() {
	cp "$T/$1" "$T/ours.img" && cp "$T/$1" "$T/theirs.img"
	rec "$T/ours.img"
	r1=$?
	e2j "$T/theirs.img"
	jsame "$T/ours.img" "$T/theirs.img"
	r2=$?
	return $((r1 | r2))
}
blk() { dd if="$1" bs="$(jbs "$1")" skip="$2" count=1 2>/dev/null | od -An -tx1 | tr -d ' \n'; }

head -c 65536 /dev/urandom >"$T/data"
# a block that starts with the journal magic must be escaped in the log
printf '\300\073\071\230escaped' | dd of="$T/data" bs=1 seek=1024 conv=notrunc 2>/dev/null

for v in plain v1 v3; do
	case $v in
	plain) mk="" jo="jo" ;;
	v1) mk="" jo="jo -c" ;;
	v3) mk="-O metadata_csum" jo="jo -c" ;;
	esac
	mkimg base.img "$mk"
	cp "$T/base.img" "$T/$v.img"
	cat >"$T/cmds" <<EOC
$jo
jw -b 300,301,302,303 $T/data
jc
$jo
jw -b 400,301 $T/data
jc
$jo
jw -r 302
jc
EOC
	debugfs -w -f "$T/cmds" "$T/$v.img" >/dev/null 2>&1
	both "$v.img"
	ok $? "$v: debugfs transactions (escape, overwrite, revoke) replay as e2fsck does"
	if [ $v = v1 ]; then
		# debugfs folds the revoke block into its v1 crc32; recovery (kernel,
		# e2fsck, ours) checksums only descriptors and their blocks: all reject it
		grep -q '2 replayed' "$T/rec.out" && grep -q 'commit checksum of transaction 3' "$T/rec.out"
		ok $? "$v: debugfs's revoke transaction fails its crc32 in both ($(head -1 "$T/rec.out"))"
		[ "$(blk "$T/ours.img" 302)" != "$(blk "$T/base.img" 302)" ]
		ok $? "$v: ... so its revoke does not apply"
	else
		grep -q '3 replayed' "$T/rec.out"
		ok $? "$v: three transactions replayed ($(head -1 "$T/rec.out"))"
		[ "$(blk "$T/ours.img" 302)" = "$(blk "$T/base.img" 302)" ]
		ok $? "$v: the revoked block keeps its old content"
	fi

	# an uncommitted transaction after a committed one
	cp "$T/base.img" "$T/unc.img"
	printf '%s\njw -b 500 %s\njc\n%s\njw -c -b 501 %s\njc\n' "$jo" "$T/data" "$jo" "$T/data" >"$T/cmds"
	debugfs -w -f "$T/cmds" "$T/unc.img" >/dev/null 2>&1
	both unc.img
	ok $? "$v: uncommitted transaction: same result as e2fsck"
	[ "$(blk "$T/ours.img" 501)" = "$(blk "$T/base.img" 501)" ] &&
		[ "$(blk "$T/ours.img" 500)" != "$(blk "$T/base.img" 500)" ]
	ok $? "$v: the committed block is replayed, the uncommitted one is not"
done

# corrupted commit checksums (v1 crc32, v3 crc32c): that transaction and the
# ones after it are not replayed
for v in v1 v3; do
	mk=""
	[ $v = v3 ] && mk="-O metadata_csum"
	mkimg base.img "$mk"
	cp "$T/base.img" "$T/bad.img"
	printf 'jo -c\njw -b 600 %s\njc\njo -c\njw -b 601 %s\njc\njo -c\njw -b 602 %s\njc\n' \
		"$T/data" "$T/data" "$T/data" >"$T/cmds"
	debugfs -w -f "$T/cmds" "$T/bad.img" >/dev/null 2>&1
	cp "$T/bad.img" "$T/bad2.img"
	# transaction 2 is log blocks 4 (descriptor), 5 (data), 6 (commit): flip a
	# byte of its commit checksum
	first=$(jmap "$T/bad.img" | cut -d- -f1)
	bs=$(jbs "$T/bad.img")
	flip "$T/bad.img" $(((first + 6) * bs + 19))
	both bad.img
	ok $? "$v: corrupt commit checksum: same result as e2fsck"
	[ "$(blk "$T/ours.img" 600)" != "$(blk "$T/base.img" 600)" ] &&
		[ "$(blk "$T/ours.img" 601)" = "$(blk "$T/base.img" 601)" ] &&
		[ "$(blk "$T/ours.img" 602)" = "$(blk "$T/base.img" 602)" ]
	ok $? "$v: replay stops before the corrupt transaction"
	# a corrupt logged block of transaction 2 (v1: fails the crc32; v3: its tag)
	flip "$T/bad2.img" $(((first + 5) * bs + 100))
	cp "$T/bad2.img" "$T/ours.img" && cp "$T/bad2.img" "$T/theirs.img"
	rec "$T/ours.img"
	r1=$?
	e2j "$T/theirs.img"
	if [ $v = v1 ]; then
		# the crc32 covers the data: the whole transaction is rejected
		jsame "$T/ours.img" "$T/theirs.img" && [ $r1 = 0 ]
	else
		# kernel and e2fsck skip the one block and report an error
		jsame_home "$T/ours.img" "$T/theirs.img" "$bs" "$first" && [ $r1 != 0 ] &&
			grep -q '1 bad checksums' "$T/rec.out"
	fi
	ok $? "$v: corrupt logged block: same blocks home as e2fsck ($(head -1 "$T/rec.out"))"
	[ "$(blk "$T/ours.img" 601)" = "$(blk "$T/base.img" 601)" ] &&
		[ "$(blk "$T/ours.img" 602)" != "$(blk "$T/base.img" 602)" -o $v = v1 ]
	ok $? "$v: the corrupt block is not written home"
done

# the writing side: blackout's transactions replay in e2fsck as in blackout
for v in none v1 v3; do
	mk=""
	[ $v = v3 ] && mk="-O metadata_csum"
	mkimg base.img "$mk"
	cp "$T/base.img" "$T/w.img"
	"$B" jbd write --block-size 1024 --map "$(jmap "$T/w.img")" --fs-blocks 8192 --features $v \
		"$T/w.img" meta=700-707:"$T/data" commit meta=710,700:"$T/data" revoke=703 commit \
		meta=720:"$T/data" >/dev/null 2>&1
	wrc=$?
	debugfs -w -R 'feature needs_recovery' "$T/w.img" >/dev/null 2>&1
	both w.img
	ok $((wrc | $?)) "$v: blackout-written journal replays in e2fsck as in blackout"
	[ "$(blk "$T/ours.img" 703)" = "$(blk "$T/base.img" 703)" ] &&
		[ "$(blk "$T/ours.img" 720)" = "$(blk "$T/base.img" 720)" ] &&
		[ "$(blk "$T/ours.img" 704)" != "$(blk "$T/base.img" 704)" ]
	ok $? "$v: revoked and uncommitted blocks not replayed, committed ones are"
done

# a wrapped log: transactions, a checkpoint in the middle, more transactions that
# run past the end of the journal and continue at its start
mkimg base.img "-O metadata_csum"
cp "$T/base.img" "$T/wrap.img"
acts=""
for i in 0 1 2 3 4 5; do acts="$acts meta=$((3000 + i * 60))-$((3059 + i * 60)):$T/data commit"; done
acts="$acts checkpoint"
for i in 0 1 2 3 4 5 6 7; do acts="$acts meta=$((5000 + i * 60))-$((5059 + i * 60)):$T/data commit"; done
head -c $((1024 * 60)) /dev/urandom >"$T/data60"
acts=$(echo "$acts" | sed "s#$T/data#$T/data60#g")
"$B" jbd write --block-size 1024 --map "$(jmap "$T/wrap.img")" --fs-blocks 8192 "$T/wrap.img" $acts \
	>/dev/null 2>&1
wrc=$?
debugfs -w -R 'feature needs_recovery' "$T/wrap.img" >/dev/null 2>&1
both wrap.img
ok $((wrc | $?)) "wrapped log: replays in e2fsck as in blackout"
grep -q ' 8 replayed' "$T/rec.out"
ok $? "wrapped log: the eight transactions after the checkpoint replayed ($(head -1 "$T/rec.out"))"
e2fsck -fn "$T/ours.img" >/dev/null 2>&1
ok $? "wrapped log: e2fsck -fn clean after blackout's replay"
# the filesystem's mount replays a debugfs-written journal before using the image
for mk in "" "-O metadata_csum"; do
	mkimg base.img "$mk"
	printf 'jo\njw -b 5000,5001 %s\njc\njo\njw -b 5001 %s\njw -r 5000\njc\n' "$T/data" "$T/data" >"$T/cmds"
	cp "$T/base.img" "$T/m.img"
	debugfs -w -f "$T/cmds" "$T/m.img" >/dev/null 2>&1
	cp "$T/m.img" "$T/theirs.img"
	e2j "$T/theirs.img"
	"$B" mkdir "$T/m.img" /after-replay >/dev/null 2>&1
	mrc=$?
	[ $mrc = 0 ] && [ "$(blk "$T/m.img" 5000)" = "$(blk "$T/theirs.img" 5000)" ] &&
		[ "$(blk "$T/m.img" 5001)" = "$(blk "$T/theirs.img" 5001)" ] &&
		[ "$(blk "$T/m.img" 5001)" != "$(blk "$T/base.img" 5001)" ]
	ok $? "fs mount${mk:+ ($mk)}: replays the journal as e2fsck does, then works"
	e2fsck -fn "$T/m.img" >"$T/fsck.out" 2>&1 && ! grep -qv -e '^e2fsck ' -e '^Pass ' -e ' files (' "$T/fsck.out" &&
		debugfs -R 'ls /' "$T/m.img" 2>/dev/null | grep -q after-replay
	ok $? "fs mount${mk:+ ($mk)}: the image is e2fsck-clean with the new directory"
done

done_testing
