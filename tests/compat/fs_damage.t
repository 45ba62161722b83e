#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fs_damage.t — writing commands on damaged images must make nothing worse: every
# `blackout corrupt` kind, several seeds, three bases (mke2fs ext2 and ext3 with files,
# blackout mkfs), each writing command in CMDS, judged by e2fsck -fn before and after.
# Default path (the command checks the image first): the problem count never rises, a
# command that reports success leaves no problem e2fsck did not report before, a
# refusal leaves the image byte for byte as it was, and every refusal names the
# damaged structure. Forced path (--force: only the filesystem's own protection):
# the count never rises except where the damage aimed a file's map at the
# filesystem's own metadata, which is listed, with the successes that traded one
# problem for another, as what that protection alone cannot prevent.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
B=$BLACKOUT
W=$SCRATCH
[ -d /dev/shm ] && W=$(mktemp -d /dev/shm/blackout-damage.XXXXXX) && at_exit "rm -rf '$W'"
# Three seeds here (about 2,400 command runs, 20 forks each); tests/long/fs_damage_full.t
# runs all eight (make check-long), make check-asan one.
SEEDS=${FS_DAMAGE_SEEDS:-"1 2 3"}
COUNTS=${FS_DAMAGE_COUNTS:-"1 2"}
KINDS="superblock gdt bitmap inode dirent htree indirect data"

# The writing commands, one a line: a name, the command, then its arguments after
# IMAGE. Each fs command runs twice, as it is and with --force; fsck -y once.
CMDS='put-new|put|$W/mid /a/b/new
put-replace|put|$W/mid /a/big
rm|rm|/a/big /a/b/m1 /d/f7
mv|mv|/a/b/m2 /d/moved
mkdir|mkdir|/d/sub
truncate|truncate|/a/big 5000
rmdir|rmdir|/e
ln|ln|/a/b/m3 /d/hard
symlink|symlink|/a/big /d/sym
fsck-y|fsck|-y'

# a refusal names one of these
STRUCT='superblock|group descriptor|group_desc|bitmap|inode|block|directory|dirent|htree|journal|links|count|connectivity|size|symlink|checksum'

head -c 300000 /dev/urandom >"$W/big"
head -c 3000 /dev/urandom >"$W/mid"
mkdir -p "$W/tree/a/b" "$W/tree/d" "$W/tree/e"
cp "$W/big" "$W/tree/a/big"
for i in 1 2 3 4 5 6; do cp "$W/mid" "$W/tree/a/b/m$i"; done
for i in $(seq 1 80); do echo "file $i" >"$W/tree/d/f$i"; done

# fsck_out IMAGE OUT: e2fsck -fn's output, without the lines a clean run prints;
# exit status 1 when e2fsck gave up. Its standard error (libext2fs's complaints
# about block numbers out of range) follows its standard output instead of being
# interleaved with it, which would cut problem lines at random places.
fsck_out() {
	E2FSCK_CONFIG=/dev/null e2fsck -fn "$1" >"$2.raw" 2>"$2.err"
	frc=$?
	cat "$2.err" >>"$2.raw"
	grep -v -E \
		-e '^e2fsck [0-9]' \
		-e '^Pass [1-5]: Checking ' \
		-e '^Pass 1[A-D]: ' \
		-e '^.*: [0-9]+/[0-9]+ files \([0-9.]+% non-contiguous\), [0-9]+/[0-9]+ blocks$' \
		-e '^$' -e 'WARNING: Filesystem still has errors' -e '^Running additional passes' \
		-e '^\(There are [0-9]+ inodes containing multiply-claimed' "$2.raw" >"$2"
	[ "$frc" -lt 8 ]
}
# count OUT: the problem count: one per line, plus one per extra range in a
# bitmap-differences line; an e2fsck that gave up counts 100000 more.
count() {
	awk -v gaveup="$2" '/differences:/ { n += NF - 2; next } { n++ }
		END { print n + 100000 * gaveup }' "$1"
}
# pset OUT: the problems as a set, one per line, each named by what it is about and
# stripped of what a legitimate write changes. A problem's identity is the structure
# it names (inode, group, block, entry, bitmap range); the quantities it reports are
# not: a write that allocates changes "(free count, counted=N)", a write to a file
# its i_blocks, i_size and mod time, so those values become '#'. Lists are split
# into one problem per item (each bitmap range, each multiply-claimed block), so a
# new range or block is a new problem. Values are not compared; counts are, above.
pset() {
	awk '/differences:/ {
		for (i = 4; i <= NF; i++) print $1 " " $2 " " $3 " " $i; next }
	/^Multiply-claimed block\(s\) in inode [0-9]+:/ {
		for (i = 6; i <= NF; i++) print $1 " " $2 " " $3 " " $4 " " $5 " " $i; next }
	{ print }' "$1" | sed -E \
		-e 's/\([0-9]+, counted=[0-9]+\)/(#, counted=#)/' \
		-e 's/(i_blocks|i_size|ref count) is [0-9]+, should be [0-9]+/\1 is #, should be #/' \
		-e 's/mod time [^)]*\)/mod time #)/' \
		-e 's/has [0-9]+ multiply-claimed block\(s\), shared with [0-9]+ file\(s\)/has # multiply-claimed block(s), shared with # file(s)/' |
		sort -u
}

bases=""
mke2fs -q -F -t ext2 -b 1024 -N 256 -d "$W/tree" "$W/ext2.img" 8M >/dev/null 2>&1
ok $? "base ext2 made by mke2fs -d"
mke2fs -q -F -t ext3 -b 1024 -N 256 -d "$W/tree" "$W/ext3.img" 12M >/dev/null 2>&1
ok $? "base ext3 made by mke2fs -d"
{ "$B" mkfs "$W/bo.img" --size 12M -N 256 -t ext3 && "$B" mkdir "$W/bo.img" /a /a/b /d /e &&
	"$B" put "$W/bo.img" "$W/big" /a/big &&
	for i in 1 2 3 4 5 6; do "$B" put "$W/bo.img" "$W/mid" /a/b/m$i || exit 1; done &&
	for i in $(seq 1 80); do "$B" put "$W/bo.img" "$W/tree/d/f$i" /d/f$i || exit 1; done; } >/dev/null 2>&1
ok $? "base made by blackout mkfs, mkdir and put"
for b in ext2 ext3 bo; do
	fsck_out "$W/$b.img" "$W/clean" && [ ! -s "$W/clean" ]
	ok $? "base $b: e2fsck -fn clean"
done

# run_one TAG MODE NAME CMD ARGS...: runs one command on a copy of the damaged image
# and logs what it did to e2fsck's verdict: a line "run MODE RC", and before it
# a line per finding.
run_one() {
	tag=$1 mode=$2 name=$3
	shift 3
	cp "$W/d.img" "$W/c.img"
	"$B" "$@" >"$W/out" 2>&1
	rc=$?
	if [ $rc -ge 128 ] || grep -q -E 'Sanitizer|runtime error:' "$W/out"; then
		echo "crash $mode $tag: exit $rc: $(grep -m1 -E 'Sanitizer|runtime error:' "$W/out")"
	fi
	if cmp -s "$W/c.img" "$W/d.img"; then
		# unchanged: e2fsck says what it said before, no need to ask it
		cp "$W/before" "$W/after"
		after=$before
	else
		[ $rc -ne 0 ] && [ "$mode" = default ] && [ "$name" != fsck-y ] &&
			echo "changed $mode $tag: refused (exit $rc) but wrote to the image"
		gaveup=0
		fsck_out "$W/c.img" "$W/after" || gaveup=1
		after=$(count "$W/after" $gaveup)
	fi
	if [ "$after" -gt "$before" ]; then
		if [ "$mode" = forced ] && [ -n "$aliased" ]; then
			echo "aliased $mode $tag: $before -> $after problems (exit $rc)"
		else
			echo "worse $mode $tag: $before -> $after problems (exit $rc)"
		fi
	fi
	# success: exit 0, or fsck's 1 ("errors fixed", nothing left)
	succ=$rc
	[ "$name" = fsck-y ] && [ $rc -eq 1 ] && succ=0
	[ $succ -eq 0 ] && [ "$before" -gt 0 ] && [ "$name" != fsck-y ] && echo "accepted $mode $tag"
	if [ $succ -eq 0 ]; then
		pset "$W/after" | comm -13 "$W/pset.before" - >"$W/new"
		[ -s "$W/new" ] && echo "new $mode $tag: $(head -3 "$W/new" | tr '\n' ';')"
	elif grep -q -E ': (No such file or directory|Not a directory|Is a directory|File exists|Directory not empty)$' "$W/out"; then
		echo "patherr $mode $tag: $(head -1 "$W/out")"
	elif [ "$name" != fsck-y ] && ! grep -q -E "$STRUCT" "$W/out"; then
		echo "unnamed $mode $tag: exit $rc: $(head -1 "$W/out")"
	fi
	echo "run $mode $rc"
}

damaged=0
for b in ext2 ext3 bo; do
	for k in $KINDS; do
		for s in $SEEDS; do for cnt in $COUNTS; do
			cp "$W/$b.img" "$W/d.img"
			"$B" corrupt "$W/d.img" --what $k --seed $s --count $cnt >/dev/null 2>&1 || continue
			damaged=$((damaged + 1))
			gaveup=0
			fsck_out "$W/d.img" "$W/before" || gaveup=1
			before=$(count "$W/before" $gaveup)
			pset "$W/before" >"$W/pset.before"
			# the damage gave a file's map blocks of the filesystem's own metadata
			# (e2fsck: shared with the resize inode or the journal, or "critical
			# metadata"): every write changes those blocks, so e2fsck reads the
			# file's map differently after any change, by Linux or by blackout.
			# Only the check before writing sees it; --force does not have it.
			aliased=$(grep -E 'Multiply-claimed block\(s\) in inode [78]:|conflicts with critical metadata' "$W/before")
			[ "$before" -gt 0 ] && echo "e2fsck-damaged"
			printf '%s\n' "$CMDS" | while IFS='|' read -r name cmd args; do
				tag="$b/$k/$s/x$cnt/$name"
				eval "set -- $args"
				if [ "$name" = fsck-y ]; then
					run_one "$tag" default "$name" fsck "$@" "$W/c.img"
					continue
				fi
				run_one "$tag" default "$name" "$cmd" "$W/c.img" "$@"
				# the check passed: --force would run the very same command
				if [ $rc -eq 0 ]; then
					echo "run forced 0"
					continue
				fi
				run_one "$tag" forced "$name" "$cmd" --force "$W/c.img" "$@"
			done
		done; done
	done
done >"$W/log"

# n MODE WHAT: how many log lines of that kind the mode has
n() { grep -c "^$2 $1\\b" "$W/log"; }
runs=$(grep -c '^run ' "$W/log")
diag "$damaged damaged images ($(grep -c '^e2fsck-damaged' "$W/log") with e2fsck problems)," \
	"$runs command runs"
for m in default forced; do
	diag "$m: $(grep -c "^run $m " "$W/log") runs, $(grep -c "^run $m [1-9]" "$W/log") refused" \
		"($(n $m patherr) with the path error Linux would give: damage hid or changed a" \
		"name on the way), $(n $m worse) made worse, $(n $m aliased) made worse on an" \
		"image whose damage aimed a file's map at metadata, $(n $m new) successes" \
		"with a problem e2fsck did not report before; $(n $m accepted) successes on" \
		"an image e2fsck found damaged"
done
grep -E '^(worse|aliased|new|crash|unnamed|changed) ' "$W/log" | head -40 | sed 's/^/# /'
[ "$damaged" -gt 0 ] && [ "$runs" -gt 0 ] && [ "$(grep -c '^run default 1' "$W/log")" -gt 0 ]
ok $? "damaged images were made and commands run on them"
[ "$(n default worse)" -eq 0 ]
ok $? "default: no command, failing or succeeding, raised e2fsck's problem count"
[ "$(n default new)" -eq 0 ]
ok $? "default: no command that reported success left a problem e2fsck did not report before"
[ "$(n default changed)" -eq 0 ]
ok $? "default: a refused command wrote nothing to the image"
[ "$(n forced worse)" -eq 0 ]
ok $? "--force: the filesystem's own protection: no count raised but where a map aims at metadata"
[ "$(grep -c '^crash ' "$W/log")" -eq 0 ]
ok $? "no command crashed or drew a sanitizer report"
[ "$(grep -c '^unnamed ' "$W/log")" -eq 0 ]
ok $? "every refusal names the damaged structure"
done_testing
