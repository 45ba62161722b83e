# SPDX-License-Identifier: GPL-2.0-or-later
# jbd_lib.sh — shell helpers for the journal compat tests (sourced, not run), on top of
# the one harness (tests/test-lib.sh): the journal inode's block map from debugfs, and
# image comparison.

. "$(dirname "$0")/../test-lib.sh"

# jmap IMAGE: the journal's device blocks in logical order, "a-b,c-d,...", from
# debugfs 'stat <8>' (indirect blocks left out).
jmap() {
	debugfs -R 'stat <8>' "$1" 2>/dev/null | sed -n '/^BLOCKS:/,/^TOTAL/p' | tr ',' '\n' |
		grep -v 'IND)' | sed -n 's/^ *(\([0-9-]*\)):\([0-9-]*\).*/\2/p' | paste -sd, -
}

# jbs IMAGE / jfsblocks IMAGE: block size and blocks count from dumpe2fs.
jbs() { dumpe2fs -h "$1" 2>/dev/null | awk -F: '/^Block size/{gsub(/ /,"",$2); print $2}'; }
jfsblocks() { dumpe2fs -h "$1" 2>/dev/null | awk -F: '/^Block count/{gsub(/ /,"",$2); print $2}'; }

# jdiff A B BS: the block numbers at which two images differ, one per line.
jdiff() { cmp -l "$1" "$2" | awk -v bs="$3" '{print int(($1-1)/bs)}' | uniq; }

# jsame A B: the images are byte-identical outside the primary superblock (which
# holds the write time e2fsck and debugfs stamp) and have the same features.
jsame() {
	[ "$(cmp -l "$1" "$2" | awk '$1 <= 1024 || $1 > 2048' | wc -l)" = 0 ] &&
		[ "$(dumpe2fs -h "$1" 2>/dev/null | grep -E '^(Filesystem features|Journal (features|sequence|start))')" = \
			"$(dumpe2fs -h "$2" 2>/dev/null | grep -E '^(Filesystem features|Journal (features|sequence|start))')" ]
}

# jsame_home A B BS JSB: the same outside both superblocks (the fs's, and the
# journal's at device block JSB), for cases where e2fsck deliberately differs in
# the journal superblock (it keeps the old s_sequence after a checksum error;
# blackout never lets a transaction id go back).
jsame_home() {
	[ "$(cmp -l "$1" "$2" | awk -v bs="$3" -v j="$4" '($1 <= 1024 || $1 > 2048) &&
		int(($1 - 1) / bs) != j' | wc -l)" = 0 ]
}

# flip FILE OFFSET: complement one byte, so it differs whatever it held (setting it to
# 0xff leaves a checksum byte that already was 0xff unchanged, 1 time in 256)
flip() {
	_b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $((_b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
