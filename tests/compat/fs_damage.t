#!/bin/sh
# fs_damage.t — writing commands on damaged images must make nothing worse: every
# `blackout corrupt` kind, several seeds, three bases (mke2fs ext2 and ext3 with files,
# blackout mkfs), each writing command in CMDS; e2fsck -fn's problem count after never
# exceeds the count before (failing or not), and every refusal names the damaged
# structure. A success that trades one problem for another at the same count is listed;
# so are images whose damage made a file's map claim the filesystem's own metadata.
. "$BLACKOUT_SRC/tests/compat/lib.sh"
B=$BLACKOUT
W=$SCRATCH
[ -d /dev/shm ] && W=$(mktemp -d /dev/shm/blackout-damage.XXXXXX) && trap 'rm -rf "$SCRATCH" "$W"' EXIT
SEEDS=${FS_DAMAGE_SEEDS:-"1 2 3 4 5 6 7 8"}
COUNTS=${FS_DAMAGE_COUNTS:-"1 2"}
KINDS="superblock gdt bitmap inode dirent htree indirect data"

# The writing commands, one a line: a name, then the blackout arguments with IMG for
# the image. To add one (e.g. "fsck-y|fsck -y IMG"), add a line.
CMDS='put-new|put IMG $W/mid /a/b/new
put-replace|put IMG $W/mid /a/big
rm|rm IMG /a/big /a/b/m1 /d/f7
mv|mv IMG /a/b/m2 /d/moved
mkdir|mkdir IMG /d/sub
truncate|truncate IMG /a/big 5000
fsck-y|fsck -y IMG'

# a refusal names one of these
STRUCT='superblock|group descriptor|bitmap|inode|block|directory|htree|journal'

head -c 300000 /dev/urandom >"$W/big"
head -c 3000 /dev/urandom >"$W/mid"
mkdir -p "$W/tree/a/b" "$W/tree/d"
cp "$W/big" "$W/tree/a/big"
for i in 1 2 3 4 5 6; do cp "$W/mid" "$W/tree/a/b/m$i"; done
for i in $(seq 1 80); do echo "file $i" >"$W/tree/d/f$i"; done

# problems IMAGE: e2fsck -fn's problem count, from its output (it can exit 0 while
# reporting problems): every line a clean run does not print, plus one per extra
# range in a bitmap-differences line; an e2fsck that gives up counts as 100000.
problems() {
	out=$(E2FSCK_CONFIG=/dev/null e2fsck -fn "$1" 2>&1)
	rc=$?
	printf '%s\n' "$out" >"$W/e2fsck.out"
	n=$(printf '%s\n' "$out" | grep -v -E \
		-e '^e2fsck [0-9]' \
		-e '^Pass [1-5]: Checking ' \
		-e '^Pass 1[A-D]: ' \
		-e '^.*: [0-9]+/[0-9]+ files \([0-9.]+% non-contiguous\), [0-9]+/[0-9]+ blocks$' \
		-e '^$' -e 'WARNING: Filesystem still has errors' -e '^Running additional passes' \
		-e '^\(There are [0-9]+ inodes containing multiply-claimed' |
		awk '/differences:/ { n += NF - 2; next } { n++ } END { print n + 0 }')
	[ "$rc" -ge 8 ] && n=$((n + 100000))
	echo "$n"
}
# kinds IMAGE: the problem lines with numbers taken out, to see which are new
kinds() {
	E2FSCK_CONFIG=/dev/null e2fsck -fn "$1" 2>&1 |
		grep -v -E '^e2fsck [0-9]|^Pass [1-5]|WARNING: Filesystem still has errors|non-contiguous|^ ' |
		sed -e 's/[0-9][0-9]*/N/g' -e 's/[-+](N\(-\?-\?N\)\?)//g' | sort -u
}

bases=""
mke2fs -q -F -t ext2 -b 1024 -N 256 -d "$W/tree" "$W/ext2.img" 8M >/dev/null 2>&1
ok $? "base ext2 made by mke2fs -d"
mke2fs -q -F -t ext3 -b 1024 -N 256 -d "$W/tree" "$W/ext3.img" 12M >/dev/null 2>&1
ok $? "base ext3 made by mke2fs -d"
{ "$B" mkfs "$W/bo.img" --size 12M -N 256 -t ext3 && "$B" mkdir "$W/bo.img" /a /a/b /d &&
	"$B" put "$W/bo.img" "$W/big" /a/big &&
	for i in 1 2 3 4 5 6; do "$B" put "$W/bo.img" "$W/mid" /a/b/m$i || exit 1; done &&
	for i in $(seq 1 80); do "$B" put "$W/bo.img" "$W/tree/d/f$i" /d/f$i || exit 1; done; } >/dev/null 2>&1
ok $? "base made by blackout mkfs, mkdir and put"
for b in ext2 ext3 bo; do
	[ "$(problems "$W/$b.img")" -eq 0 ]
	ok $? "base $b: e2fsck -fn clean"
done

worse=0 unnamed=0 runs=0 refused=0 damaged=0
for b in ext2 ext3 bo; do
	for k in $KINDS; do
		for s in $SEEDS; do for cnt in $COUNTS; do
			cp "$W/$b.img" "$W/d.img"
			"$B" corrupt "$W/d.img" --what $k --seed $s --count $cnt >/dev/null 2>&1 || continue
			damaged=$((damaged + 1))
			before=$(problems "$W/d.img")
			cp "$W/e2fsck.out" "$W/e2fsck.before"
			kinds "$W/d.img" >"$W/kinds.before"
			# the damage gave a file's map blocks of the filesystem's own metadata
			# (e2fsck: shared with the resize inode or the journal, or "critical
			# metadata"): every write changes those blocks, so e2fsck reads the
			# file's map differently after any change, by Linux or by blackout
			aliased=$(grep -E 'Multiply-claimed block\(s\) in inode [78]:|conflicts with critical metadata' "$W/e2fsck.before")
			printf '%s\n' "$CMDS" | while IFS='|' read -r name args; do
				cp "$W/d.img" "$W/c.img"
				eval "set -- $(printf '%s' "$args" | sed "s#IMG#$W/c.img#")"
				"$B" "$@" >"$W/out" 2>&1
				rc=$?
				after=$(problems "$W/c.img")
				tag="$b/$k/$s/x$cnt/$name"
				if [ $rc -ge 128 ] || grep -q -E 'Sanitizer|runtime error:' "$W/out"; then
					echo "crash $tag: exit $rc: $(grep -m1 -E 'Sanitizer|runtime error:' "$W/out")"
				fi
				if [ "$after" -gt "$before" ] && [ -n "$aliased" ]; then
					echo "aliased $tag: $before -> $after problems (exit $rc)"
				elif [ "$after" -gt "$before" ]; then
					echo "worse $tag: $before -> $after problems (exit $rc)"
				elif [ $rc -eq 0 ]; then
					kinds "$W/c.img" | comm -13 "$W/kinds.before" - >"$W/new"
					[ -s "$W/new" ] && echo "moved $tag: $(head -3 "$W/new" | tr '\n' ';')"
				elif grep -q -E ': (No such file or directory|Not a directory|Is a directory|File exists|Directory not empty)$' "$W/out"; then
					echo "patherr $tag: $(head -1 "$W/out")"
				elif ! grep -q -E "$STRUCT" "$W/out"; then
					echo "unnamed $tag: $(head -1 "$W/out")"
				fi
				echo "run $rc"
			done >>"$W/log"
		done; done
	done
done
runs=$(grep -c '^run ' "$W/log")
refused=$(grep -c '^run [1-9]' "$W/log")
worse=$(grep -c '^worse ' "$W/log")
moved=$(grep -c '^moved ' "$W/log")
aliased=$(grep -c '^aliased ' "$W/log")
unnamed=$(grep -c '^unnamed ' "$W/log")
crashed=$(grep -c '^crash ' "$W/log")
patherr=$(grep -c '^patherr ' "$W/log")
diag "$damaged damaged images, $runs command runs, $refused refused ($patherr of them with" \
	"the path error Linux would give: damage hid or changed a name on the way)"
diag "$aliased raised the count on an image whose damage aimed a file's map at metadata" \
	"(not counted as made worse; see the comment above)"
diag "$moved successful commands changed which problems e2fsck reports, at the same count" \
	"(damage elsewhere that names the file they changed, e.g. a '..' aimed at it):"
grep -v -E '^(run|patherr) ' "$W/log" | head -40 | sed 's/^/# /'
[ "$damaged" -gt 0 ] && [ "$runs" -gt 0 ]
ok $? "damaged images were made and commands run on them"
[ "$worse" -eq 0 ]
ok $? "no command, failing or succeeding, raised e2fsck's problem count ($worse did)"
[ "$crashed" -eq 0 ]
ok $? "no command crashed or drew a sanitizer report ($crashed did)"
[ "$unnamed" -eq 0 ]
ok $? "every refusal names the damaged structure ($unnamed did not)"
done_testing
