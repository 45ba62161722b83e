# SPDX-License-Identifier: GPL-2.0-or-later
# fsck_damage_gen.sh — makes damaged ext2/ext3 images of named kinds with mke2fs,
# debugfs, dd and `blackout corrupt` (source it; needs $BLACKOUT). Each kind is one
# thing e2fsck knows how to find, most after one of e2fsprogs' f_* tests.
#   damage_kinds            the list of kinds
#   damage KIND IMG         damages IMG (a copy of a fsck_mkimg image) in place;
#                           returns 1 when the kind does not apply to that image
# Helpers and damage() use only _-prefixed variables: sh has no locals.

damage_kinds() {
	cat <<'EOF'
dir_block_far
journal_inode_mode
bigfile_rev0
dir_mode_socket
orphan_list_bad
recover_flag_no_journal
orphan_list_range
orphan_chain_loop
inode_ea_hash
uninit_without_csum
journal_v1_features
dind_into_gdt
itable_off_by_one
dir_dind_into_gdt
dir_tind_garbage
journal_inode_socket
itable_off_by_one_g1
uninit_group1
zero_primary_super
dup_blocks
bitmap_freed_used
lost_found_unlinked
root_not_dir
root_cleared
dir_hard_link
dir_hole
symlink_size
dtime_in_use
links_count_high
unattached_file
deleted_zero_dtime
extents_flag
extra_isize_bad
file_acl_range
block_bitmap_range
inode_table_zero
journal_ind_range
resize_inode_cleared
free_counts_wrong
inodes_count_wrong
filetype_mismatch
dot_entry_bad
dirent_rec_len
htree_corrupt
indirect_corrupt
gdt_zeroed
EOF
}

_dbg() { debugfs -w -R "$2" "$1" >/dev/null 2>&1; }
_ino() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n '1s/^Inode: *\([0-9]*\).*/\1/p'; }
_bmap() { debugfs -R "bmap $2 $3" "$1" 2>/dev/null; }
_sb() { dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^$2: *//p"; }
_bs() { _sb "$1" "Block size"; }
_itable() { dumpe2fs "$1" 2>/dev/null | sed -n "/^Group $2:/,/^Group/s/.*Inode table at \([0-9]*\)-.*/\1/p" | head -1; }
# _poke IMG BYTE-OFFSET HEX-BYTES: writes raw bytes (bypassing every checksum)
_poke() { printf "$(printf '%s' "$3" | sed 's/\(..\)/\\x\1/g')" |
	dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }
# _inode_off IMG INO: the byte offset of an inode
_inode_off() {
	debugfs -R "imap <$2>" "$1" 2>/dev/null |
		sed -n 's/.*located at block \([0-9]*\), offset 0x\([0-9a-f]*\).*/\1 \2/p' |
		{ read -r _ib _io && echo $((_ib * $(_bs "$1") + 0x$_io)); }
}
# _isz IMG: the inode size (revision 0 has no field for it: 128)
_isz() { _v=$(_sb "$1" "Inode size") && echo "${_v:-128}"; }
_has() { _sb "$1" "Filesystem features" | grep -qw "$2"; }

damage() {
	_dk=$1 _di=$2
	_dbs=$(_bs "$_di")
	case $_dk in
	dir_block_far) # issue 25: a directory with block pointers far beyond the fs
		_dbg "$_di" "sif /a/b block[2] 3000000000" &&
			_dbg "$_di" "sif /a/b block[IND] 2000000000" ;;
	journal_inode_mode) # issue 25: the journal inode unreadable as a file
		_has "$_di" has_journal || return 1
		_dbg "$_di" "sif <8> mode 040600" ;;
	bigfile_rev0) # issue 25: a 4 TB size on a revision-0 filesystem (no large_file)
		_sb "$_di" "Filesystem revision #" | grep -q '^0' || return 1
		_dbg "$_di" "sif /a/data3 size 4398046511104" ;;
	dir_mode_socket) # issue 25: a directory whose mode reads as a socket
		_dbg "$_di" "sif /a mode 0140755" ;;
	orphan_list_bad) # issue 25 (f_orphan_*): the orphan list names an inode in use
		_dbg "$_di" "ssv last_orphan $(_ino "$_di" /a/data4)" ;;
	recover_flag_no_journal) # f_badjour: needs_recovery set, no journal
		_has "$_di" has_journal && return 1
		_dbg "$_di" "feature needs_recovery" ;;
	orphan_list_range) # issue 25: the orphan list names an inode beyond the fs
		_dbg "$_di" "ssv last_orphan 4000000" ;;
	orphan_chain_loop) # issue 25: an orphan whose dtime (the next link) loops to itself
		_oi=$(_ino "$_di" /a/data19)
		_dbg "$_di" "unlink /a/data19" && _dbg "$_di" "sif <$_oi> links_count 0" &&
			_dbg "$_di" "sif <$_oi> dtime $_oi" && _dbg "$_di" "ssv last_orphan $_oi" ;;
	inode_ea_hash) # issue 25 (f_ea_*): an in-inode extended attribute, bad hash
		[ "$(_isz "$_di")" -ge 256 ] || return 1
		_dbg "$_di" "ea_set /a/data5 user.blackout value12345" || return 1
		_do=$(_inode_off "$_di" "$(_ino "$_di" /a/data5)")
		_poke "$_di" $((_do + 128 + 32 + 4 + 12)) 5a5a5a5a ;;
	uninit_without_csum) # issue 25: BLOCK/INODE_UNINIT without the feature for it
		_has "$_di" metadata_csum && return 1
		_dbg "$_di" "set_bg 0 flags 3" ;;
	journal_v1_features) # issue 25: a v1 journal superblock with v2 feature fields
		_has "$_di" has_journal || return 1
		_dj=$(_bmap "$_di" "<8>" 0)
		_poke "$_di" $((_dj * _dbs + 4)) 00000003 && _poke "$_di" $((_dj * _dbs + 0x28)) 00000002 ;;
	dind_into_gdt) # issue 25: a double-indirect pointer into the group descriptors
		_dbg "$_di" "sif /a/data6 block[DIND] $(($(_sb "$_di" "First block") + 1))" ;;
	itable_off_by_one) # issue 25: a descriptor's inode table one block off
		_dbg "$_di" "set_bg 0 inode_table $(($(_itable "$_di" 0) + 1))" ;;
	dir_dind_into_gdt) # issue 25: the same in a directory (its size must not follow)
		_dbg "$_di" "sif /a/b block[DIND] $(($(_sb "$_di" "First block") + 1))" ;;
	dir_tind_garbage) # issue 25: a directory's triple-indirect block full of garbage
		_dbg "$_di" "sif /a/b/c block[TIND] $(_bmap "$_di" /a/data20 0)" ;;
	journal_inode_socket) # issue 25: the journal inode's mode damaged
		_has "$_di" has_journal || return 1
		_dbg "$_di" "sif <8> mode 0140600" ;;
	itable_off_by_one_g1) # issue 25: the same in group 1
		[ -n "$(_itable "$_di" 1)" ] || return 1
		_dbg "$_di" "set_bg 1 inode_table $(($(_itable "$_di" 1) + 1))" ;;
	uninit_group1) # issue 25: INODE_UNINIT on a group that has inodes in use
		_has "$_di" metadata_csum && return 1
		_dbg "$_di" "set_bg 1 flags 1" ;;
	zero_primary_super) # f_zero_super
		dd if=/dev/zero of="$_di" bs=1024 seek=1 count=1 conv=notrunc 2>/dev/null ;;
	dup_blocks) # f_dup: two files share a block
		_dbg "$_di" "sif /a/data8 block[0] $(_bmap "$_di" /a/data9 0)" ;;
	bitmap_freed_used) # f_bitmaps: used blocks and an inode marked free
		_dbg "$_di" "freeb $(_bmap "$_di" /a/data10 0) 2" &&
			_dbg "$_di" "freei /a/data10" ;;
	lost_found_unlinked) # f_lpf: lost+found's entry removed
		_dbg "$_di" "unlink /lost+found" ;;
	root_not_dir) # f_badroot
		_dbg "$_di" "sif <2> mode 0100644" ;;
	root_cleared) # f_noroot
		_dbg "$_di" "clri <2>" ;;
	dir_hard_link) # f_dirlink: a second name for a directory
		_dbg "$_di" "link /a/b /e/blink" ;;
	dir_hole) # f_holedir: a hole in a directory
		_dbg "$_di" "sif /big block[1] 0" ;;
	symlink_size) # f_badsymlinks
		_dbg "$_di" "sif /a/fastlink size 300" ;;
	dtime_in_use) # f_dtime: an in-use inode with a deletion time
		_dbg "$_di" "sif /a/data11 dtime 12345" ;;
	links_count_high) # f_links
		_dbg "$_di" "sif /a/data12 links_count 7" ;;
	unattached_file) # f_lpf2: an inode no entry names
		_dbg "$_di" "unlink /a/data13" ;;
	deleted_zero_dtime) # f_dtime: links 0 without a deletion time
		_dbg "$_di" "sif /a/data14 links_count 0" ;;
	extents_flag) # f_extents on an ext3 without the feature
		_dbg "$_di" "sif /a/data15 flags 0x80000" ;;
	extra_isize_bad) # f_extra_isize
		[ "$(_isz "$_di")" -ge 256 ] || return 1
		_dbg "$_di" "sif /a/data16 extra_isize 3" ;;
	file_acl_range) # f_bad_ea: an EA block beyond the fs
		_dbg "$_di" "sif /a/data17 file_acl 4000000000" ;;
	block_bitmap_range) # f_illbbitmap
		_dbg "$_di" "set_bg 0 block_bitmap 4000000" ;;
	inode_table_zero) # f_illitable
		_dbg "$_di" "set_bg 0 inode_table 0" ;;
	journal_ind_range) # f_badjour_indblks
		_has "$_di" has_journal || return 1
		_dbg "$_di" "sif <8> block[IND] 4000000000" ;;
	resize_inode_cleared) # f_resize_inode
		_has "$_di" resize_inode || return 1
		_dbg "$_di" "clri <7>" ;;
	free_counts_wrong) # f_summary_counts
		_dbg "$_di" "ssv free_blocks_count 7" && _dbg "$_di" "set_bg 0 free_inodes_count 3" ;;
	inodes_count_wrong) # f_bad_inode_count
		_dbg "$_di" "ssv inodes_count 77" ;;
	filetype_mismatch) # f_filetype: the entry says directory, the inode a file
		_dbg "$_di" "sif /a/data18 mode 020644" ;;
	dot_entry_bad) # f_baddotdir: '.' names another inode
		_db=$(_bmap "$_di" /a/b/c 0)
		_poke "$_di" $((_db * _dbs)) 02000000 ;;
	dirent_rec_len) # f_baddir: a broken rec_len in the middle of a block
		_db=$(_bmap "$_di" /big 1)
		_poke "$_di" $((_db * _dbs + 28)) 0300 ;;
	htree_corrupt) "$BLACKOUT" corrupt "$_di" --what htree --seed 3 >/dev/null 2>&1 ;;
	indirect_corrupt) "$BLACKOUT" corrupt "$_di" --what indirect --seed 5 >/dev/null 2>&1 ;;
	gdt_zeroed) # f_zero_group
		dd if=/dev/zero of="$_di" bs="$_dbs" seek=$(($(_sb "$_di" "First block") + 1)) \
			count=1 conv=notrunc 2>/dev/null ;;
	*) return 1 ;;
	esac
}

# ---- inode damage over many seeds (issue 37: `corrupt --what inode`) --------------
# e2fsck_nprob IMG: how many lines of e2fsck -fn output are not a clean run's (its
# problems, judged by what it prints: it can exit 0 while printing some)
e2fsck_nprob() {
	E2FSCK_CONFIG=/dev/null e2fsck -fn "$1" 2>&1 | grep -c -v -E \
		-e '^e2fsck [0-9]' \
		-e '^Pass [1-5]: Checking (inodes, blocks, and sizes|directory structure|directory connectivity|reference counts|group summary information)$' \
		-e '^.*: [0-9]+/[0-9]+ files \([0-9.]+% non-contiguous\), [0-9]+/[0-9]+ blocks$' \
		-e '^$'
}

# inode_base_img OUT SIZE [mkfs options]: an image made by blackout itself (mkfs, put,
# mkdir, symlink, ln) holding the issue's /hello.txt and /d/e/f and some more: small
# and large files (indirect blocks), a deeper tree, symlinks, a hard link.
inode_base_img() {
	_io=$1 _is=$2
	shift 2
	rm -f "$_io"
	"$BLACKOUT" mkfs "$_io" --size "$_is" -q "$@" || return 1
	_ih=$(mktemp "${SCRATCH:-/tmp}/put.XXXXXX")
	echo hello >"$_ih"
	"$BLACKOUT" put "$_io" "$_ih" /hello.txt && "$BLACKOUT" mkdir -p "$_io" /d/e /a/b/c /s &&
		"$BLACKOUT" put "$_io" "$_ih" /d/e/f || return 1
	for _ii in 1 2 3 4 5 6 7 8; do
		head -c $((_ii * 1500)) /dev/zero | tr '\0' "$_ii" >"$_ih"
		"$BLACKOUT" put "$_io" "$_ih" "/a/f$_ii" || return 1
	done
	head -c 300000 /dev/zero | tr '\0' x >"$_ih"
	"$BLACKOUT" put "$_io" "$_ih" /a/b/large || return 1
	for _ii in 1 2 3 4 5 6 7 8 9 10 11 12; do
		"$BLACKOUT" put "$_io" "$_io.tiny" "/s/n$_ii" 2>/dev/null ||
			{ echo "$_ii" >"$_io.tiny" && "$BLACKOUT" put "$_io" "$_io.tiny" "/s/n$_ii"; } ||
			return 1
	done
	rm -f "$_io.tiny" "$_ih"
	"$BLACKOUT" symlink "$_io" /a/f1 /a/fast && "$BLACKOUT" ln "$_io" /a/f2 /a/b/c/hard &&
		"$BLACKOUT" symlink "$_io" "$(printf 'x%.0s' $(seq 1 90))/long" /a/slow
}

# inode_damage_run IMG SEED COUNT: corrupts IMG in place (`corrupt --what inode`), then
# prints "N0 N1 YRC SAID LISTED": e2fsck -fn's problem lines before (N0) and after
# (N1) `blackout fsck -y`, -y's exit code, the count -y's summary says remain, and the
# "remains: " lines it printed. Returns 1 when corrupt changed nothing.
inode_damage_run() {
	"$BLACKOUT" corrupt "$1" --what inode --seed "$2" --count "$3" >/dev/null 2>&1 || return 1
	_n0=$(e2fsck_nprob "$1")
	"$BLACKOUT" fsck -y "$1" >"$1.out" 2>&1
	_yrc=$?
	_n1=$(e2fsck_nprob "$1")
	_said=$(sed -n 's/.*: repaired; \([0-9]*\) problem(s) remain$/\1/p; s/.*: NOT clean (\([0-9]*\) problem(s))$/\1/p' "$1.out")
	_listed=$(grep -c '^remains: ' "$1.out")
	echo "$_n0 $_n1 $_yrc ${_said:-0} $_listed"
}

# inode_damage_bases DIR: six blackout-made images to damage (ext3 and ext2; 1, 2 and
# 4 KiB blocks; 8 to 64 MiB; one metadata_csum): DIR/b*.img
inode_damage_bases() {
	inode_base_img "$1/b16.img" 16M &&
		inode_base_img "$1/b8.img" 8M -t ext2 &&
		inode_base_img "$1/b32c.img" 32M -O metadata_csum &&
		inode_base_img "$1/b64k.img" 64M -b 4096 &&
		inode_base_img "$1/b24k2.img" 24M -b 4096 -t ext2 &&
		inode_base_img "$1/b12j.img" 12M -b 2048
}

# inode_damage_sweep DIR "SEEDS" BASE...: for each base image x seed x 1..3 changes,
# inode_damage_run on a copy (DIR/w.img); one line per damaged image:
# "NAME/sSEED/cCOUNT N0 N1 YRC SAID LISTED".
inode_damage_sweep() {
	_sd=$1 _seeds=$2
	shift 2
	for _sb in "$@"; do
		_sn=$(basename "$_sb" .img)
		for _ss in $_seeds; do
			for _sc in 1 2 3; do
				cp "$_sb" "$_sd/w.img"
				_sr=$(inode_damage_run "$_sd/w.img" "$_ss" "$_sc") &&
					echo "$_sn/s$_ss/c$_sc $_sr"
			done
		done
	done
}

# inode_damage_judge RESULTS: TAP checks over inode_damage_sweep's lines: at least
# MIN images, none made worse by e2fsck's count, every remaining problem listed by -y
# (its summary count equals its "remains:" lines, and a -y that says nothing remains
# leaves e2fsck nothing to find). Prints the totals as diagnostics.
inode_damage_judge() {
	_jr=$1 _jmin=$2
	_jn=$(wc -l <"$_jr")
	_jw=$(awk '$3 > $2' "$_jr" | wc -l)
	_jl=$(awk '$5 != $6' "$_jr" | wc -l)
	_jf=$(awk '$3 > 0 && $4 <= 1' "$_jr" | wc -l)
	_jc=$(awk '$3 == 0' "$_jr" | wc -l)
	_jb=$(awk '$4 > 8' "$_jr" | wc -l)
	diag "inode damage: $_jn images; made worse by e2fsck's count: $_jw; -y summary != listed: $_jl; -y said clean where e2fsck is not: $_jf; e2fsck-clean after -y: $_jc/$_jn"
	awk '$3 > $2 || $5 != $6 || ($3 > 0 && $4 <= 1) || $4 > 8 { print "#   " $0 }' "$_jr"
	[ "$_jn" -ge "$_jmin" ]
	ok $? "inode damage: at least $_jmin damaged images ($_jn)"
	[ "$_jb" -eq 0 ]
	ok $? "inode damage: blackout fsck -y never crashed ($_jb)"
	[ "$_jw" -eq 0 ]
	ok $? "inode damage: no image made worse by -y, by e2fsck's count ($_jw/$_jn)"
	[ "$_jl" -eq 0 ]
	ok $? "inode damage: -y lists every problem that remains ($_jl/$_jn differ)"
	[ "$_jf" -eq 0 ]
	ok $? "inode damage: -y says clean only where e2fsck agrees ($_jf/$_jn)"
}
