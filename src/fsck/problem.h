/* SPDX-License-Identifier: GPL-2.0-or-later */
/* problem.h — the problems blackout fsck reports, one code each, as e2fsck's problem.h:
 * the code's message (CODE_FMT, a printf format checked at every call) and, in
 * problem.c's table, its kind, what a repair does about it and its flags. */
#ifndef BLACKOUT_FSCK_PROBLEM_H
#define BLACKOUT_FSCK_PROBLEM_H

#include <stdbool.h>
#include <stdint.h>

#include "blackout/fsck.h"

enum fsck_pr {
	/* pass 0: superblock, group descriptors, journal superblock (super.c) */
	PR_0_SB_MAGIC,
	PR_0_CSUM_TYPE,
	PR_0_SB_CSUM,
	PR_0_SB_FIELD,
	PR_0_FS_SIZE_WRONG,
	PR_0_TOO_MANY_INODES,
	PR_0_GDT_TOO_BIG,
	PR_0_INODE_COUNT_WRONG,
	PR_0_FIRST_INO,
	PR_0_RESERVED_BLOCKS,
	PR_0_FREE_BLOCKS_RANGE,
	PR_0_FREE_INODES_RANGE,
	PR_0_FUTURE_SB_LAST_MOUNT,
	PR_0_FUTURE_SB_LAST_WRITE,
	PR_0_NEEDS_RECOVERY,
	PR_0_GDT_CSUM,
	PR_0_BB_NOT_GROUP,
	PR_0_IB_NOT_GROUP,
	PR_0_ITABLE_NOT_GROUP,
	PR_0_GDT_UNINIT,
	PR_0_BB_UNINIT_LAST,
	PR_0_GDT_ITABLE_UNUSED,
	PR_0_BACKUP_SB,
	PR_0_JOURNAL_UNSUPP_INODE,
	PR_0_JOURNAL_BAD_INODE,
	PR_0_JOURNAL_BAD_SUPER,
	PR_0_JOURNAL_HAS_DATA,
	/* pass 1: inodes and their blocks (pass1.c) */
	PR_1_DUP_BLOCK,
	PR_1_META_CONFLICT,
	PR_1_ILLEGAL_BLOCK,
	PR_1_DIR_TOO_BIG,
	PR_1_EA_BLOCK_INVALID,
	PR_1_EA_BLOCK_BAD,
	PR_1_EA_BLOCK_CSUM,
	PR_1_SYMLINK_INVALID,
	PR_1_INODE_EA_BAD,
	PR_1_INDEX_FL,
	PR_1_FEATURE_FL,
	PR_1_HIGH_FIELDS,
	PR_1_EXTRA_ISIZE,
	PR_1_TREAT_AS_DIRECTORY,
	PR_1_SPECIAL_INVALID,
	PR_1_SPECIAL_SIZE,
	PR_1_BAD_MODE,
	PR_1_BAD_I_BLOCKS,
	PR_1_DIR_NO_BLOCKS,
	PR_1_BAD_I_SIZE,
	PR_1_JOURNAL_UNUSED_DATA,
	PR_1_RESIZE_BAD_MODE,
	PR_1_JOURNAL_BAD_MODE,
	PR_1_RESERVED_BAD_MODE,
	PR_1_RESIZE_INVALID,
	PR_1_LOW_DTIME,
	PR_1_ZERO_DTIME,
	PR_1_INODE_CSUM,
	PR_1_ROOT_NO_DIR,
	PR_1_ROOT_DTIME,
	PR_1_SET_DTIME,
	PR_1_EA_REFCOUNT,
	PR_1_FAST_ILLEGAL_BLOCK,
	/* pass 2: directories (pass2.c) */
	PR_2_HTREE_LIMIT,
	PR_2_HTREE_COUNT,
	PR_2_HTREE_BAD_BLOCK,
	PR_2_HTREE_HASH_ORDER,
	PR_2_BAD_ENTRY_INODE,
	PR_2_BAD_NAME,
	PR_2_BAD_FILETYPE,
	PR_2_LINK_DIR,
	PR_2_DUPLICATE_ENTRY,
	PR_2_DIR_CORRUPTED,
	PR_2_BAD_DOT,
	PR_2_BAD_DOTDOT,
	PR_2_LINK_DOT,
	PR_2_FILETYPE_SET,
	PR_2_MISSING_DOT,
	PR_2_HTREE_BAD_ROOT,
	PR_2_DIRECTORY_HOLE,
	PR_2_HTREE_CSUM,
	PR_2_LEAF_NO_SPACE_CSUM,
	PR_2_LEAF_CSUM,
	PR_2_HTREE_MISMATCH,
	PR_2_FEATURE_LARGE_FILES,
	/* pass 3: connectivity (pass3.c) */
	PR_3_NO_ROOT,
	PR_3_ROOT_DOTDOT,
	PR_3_UNCONNECTED_DIR,
	PR_3_BAD_DOT_DOT,
	/* pass 4: reference counts (pass4.c) */
	PR_4_UNATTACHED_INODE,
	PR_4_UNATTACHED_ZERO_LEN,
	PR_4_DIR_NLINK_FEATURE,
	PR_4_BAD_REF_COUNT,
	/* pass 5: bitmaps and summary counts (pass5.c) */
	PR_5_BITMAP_PADDING,
	PR_5_BITMAP_CSUM,
	PR_5_BLOCK_BITMAP,
	PR_5_INODE_BITMAP,
	PR_5_FREE_BLOCK_COUNT_GROUP,
	PR_5_FREE_INODE_COUNT_GROUP,
	PR_5_FREE_DIR_COUNT_GROUP,
	PR_5_FREE_BLOCK_COUNT,
	PR_5_FREE_INODE_COUNT,
	PR_NR,
};

/* pass 0: superblock, group descriptors, journal superblock (super.c) */
#define PR_0_SB_MAGIC_FMT             "bad magic number 0x%04x in superblock"
#define PR_0_CSUM_TYPE_FMT            "unknown checksum type %u"
#define PR_0_SB_CSUM_FMT              "superblock checksum does not match superblock"
#define PR_0_SB_FIELD_FMT             "superblock %s %llu is invalid"
#define PR_0_FS_SIZE_WRONG_FMT        "filesystem is %llu blocks but the device holds only %llu"
#define PR_0_TOO_MANY_INODES_FMT      "too many inodes"
#define PR_0_GDT_TOO_BIG_FMT          "group descriptors do not fit a group"
#define PR_0_INODE_COUNT_WRONG_FMT    "inodes count %llu, should be %u"
#define PR_0_FIRST_INO_FMT            "first_ino %u is invalid"
#define PR_0_RESERVED_BLOCKS_FMT      "reserved blocks count %u is too large"
#define PR_0_FREE_BLOCKS_RANGE_FMT    "free blocks count %u is larger than the fs"
#define PR_0_FREE_INODES_RANGE_FMT    "free inodes count %u is larger than the fs"
#define PR_0_FUTURE_SB_LAST_MOUNT_FMT "last mount time is in the future"
#define PR_0_FUTURE_SB_LAST_WRITE_FMT "last write time is in the future"
#define PR_0_NEEDS_RECOVERY_FMT       "%s"
#define PR_0_GDT_CSUM_FMT             "group %u descriptor checksum is invalid"
#define PR_0_BB_NOT_GROUP_FMT         "block bitmap for group %u at %llu is not in the group"
#define PR_0_IB_NOT_GROUP_FMT         "inode bitmap for group %u at %llu is not in the group"
#define PR_0_ITABLE_NOT_GROUP_FMT     "inode table for group %u at %llu is not in the group"
#define PR_0_GDT_UNINIT_FMT           "group %u has uninit flags 0x%x but no group checksums"
#define PR_0_BB_UNINIT_LAST_FMT       "last group %u has BLOCK_UNINIT set"
#define PR_0_GDT_ITABLE_UNUSED_FMT    "group %u itable_unused %u is invalid"
#define PR_0_BACKUP_SB_FMT                                                                         \
	"superblock is damaged: checking with the backup superblock at block %llu (block size "    \
	"%u), as e2fsck -b %llu -B %u does"
#define PR_0_JOURNAL_UNSUPP_INODE_FMT "journal inode %u is not supported here"
#define PR_0_JOURNAL_BAD_INODE_FMT    "superblock has an invalid journal (inode 8)"
#define PR_0_JOURNAL_BAD_SUPER_FMT    "journal superblock is corrupt"
#define PR_0_JOURNAL_HAS_DATA_FMT     "superblock needs_recovery flag is clear, but journal has data"
/* pass 1: inodes and their blocks (pass1.c) */
#define PR_1_DUP_BLOCK_FMT           "inode %u %s block %llu is claimed twice"
#define PR_1_META_CONFLICT_FMT       "%s at block %llu conflicts with another fs block"
#define PR_1_ILLEGAL_BLOCK_FMT       "inode %u has illegal %s block %u at logical %llu"
#define PR_1_DIR_TOO_BIG_FMT         "directory %u is too big"
#define PR_1_EA_BLOCK_INVALID_FMT    "inode %u extended attribute block %llu is invalid"
#define PR_1_EA_BLOCK_BAD_FMT        "inode %u has a bad extended attribute block %llu"
#define PR_1_EA_BLOCK_CSUM_FMT       "extended attribute block %llu checksum does not match"
#define PR_1_SYMLINK_INVALID_FMT     "symlink inode %u is invalid"
#define PR_1_INODE_EA_BAD_FMT        "inode %u: an extended attribute inside the inode %s"
#define PR_1_INDEX_FL_FMT            "inode %u has INDEX_FL set %s"
#define PR_1_FEATURE_FL_FMT          "inode %u has %s set on a filesystem without that feature"
#define PR_1_HIGH_FIELDS_FMT         "inode %u has nonzero i_faddr/i_blocks_hi/i_file_acl_hi"
#define PR_1_EXTRA_ISIZE_FMT         "inode %u extra size %u is invalid"
#define PR_1_TREAT_AS_DIRECTORY_FMT  "inode %u has mode 0%o but its first block is a directory's"
#define PR_1_SPECIAL_INVALID_FMT     "special inode %u is invalid"
#define PR_1_SPECIAL_SIZE_FMT        "special inode %u has nonzero size"
#define PR_1_BAD_MODE_FMT            "inode %u has bad mode 0%o"
#define PR_1_BAD_I_BLOCKS_FMT        "inode %u i_blocks is %llu, should be %llu"
#define PR_1_DIR_NO_BLOCKS_FMT       "directory inode %u has no blocks"
#define PR_1_BAD_I_SIZE_FMT          "inode %u, i_size is %llu, should be %llu"
#define PR_1_JOURNAL_UNUSED_DATA_FMT "journal inode is not in use, but contains data"
#define PR_1_RESIZE_BAD_MODE_FMT     "resize inode has bad mode"
#define PR_1_JOURNAL_BAD_MODE_FMT    "journal inode is not a regular file"
#define PR_1_RESERVED_BAD_MODE_FMT   "reserved inode %u has bad mode 0%o"
#define PR_1_RESIZE_INVALID_FMT      "resize inode is not valid"
#define PR_1_LOW_DTIME_FMT           "inode %u was part of the orphaned inode list (dtime %u)"
#define PR_1_ZERO_DTIME_FMT          "deleted inode %u has zero dtime"
#define PR_1_INODE_CSUM_FMT          "inode %u checksum does not match inode"
#define PR_1_ROOT_NO_DIR_FMT         "root inode is not a directory"
#define PR_1_ROOT_DTIME_FMT          "root inode has dtime set"
#define PR_1_SET_DTIME_FMT           "inode %u is in use, but has dtime set"
#define PR_1_EA_REFCOUNT_FMT         "extended attribute block %u has reference count %u, should be %u"
#define PR_1_FAST_ILLEGAL_BLOCK_FMT  "inode %u has illegal block %u"
/* pass 2: directories (pass2.c) */
#define PR_2_HTREE_LIMIT_FMT      "htree directory %u block %u has limit %u, should be %u"
#define PR_2_HTREE_COUNT_FMT      "htree directory %u block %u count %u > limit"
#define PR_2_HTREE_BAD_BLOCK_FMT  "htree directory %u: bad block number %u in index block %u"
#define PR_2_HTREE_HASH_ORDER_FMT "htree directory %u index block %u has out-of-order hashes"
#define PR_2_BAD_ENTRY_INODE_FMT  "directory %u: entry '%.*s' (inode %u) %s"
#define PR_2_BAD_NAME_FMT         "directory %u: entry has an illegal character in its name"
#define PR_2_BAD_FILETYPE_FMT     "directory %u: entry '%.*s' (inode %u) has filetype %u, should be %u"
#define PR_2_LINK_DIR_FMT         "directory %u: entry '%.*s' is a second link to directory %u"
#define PR_2_DUPLICATE_ENTRY_FMT  "directory %u: duplicate entry '%.*s'"
#define PR_2_DIR_CORRUPTED_FMT                                                                     \
	"directory %u block %u (%u): entry at offset %u is corrupted (rec_len %u, name_len %u)"
#define PR_2_BAD_DOT_FMT            "directory %u: first entry is not a valid '.'"
#define PR_2_BAD_DOTDOT_FMT         "directory %u: second entry is not a valid '..'"
#define PR_2_LINK_DOT_FMT           "directory %u: entry is a link to '.'"
#define PR_2_FILETYPE_SET_FMT       "directory %u: entry has filetype set"
#define PR_2_MISSING_DOT_FMT        "directory %u: missing '.' or '..'"
#define PR_2_HTREE_BAD_ROOT_FMT     "htree directory %u has an invalid root node"
#define PR_2_DIRECTORY_HOLE_FMT     "directory inode %u has an unallocated block #%u"
#define PR_2_HTREE_CSUM_FMT         "htree directory %u index block %u checksum does not match"
#define PR_2_LEAF_NO_SPACE_CSUM_FMT "directory %u block %u has no space for its checksum"
#define PR_2_LEAF_CSUM_FMT          "directory %u block %u checksum does not match"
#define PR_2_HTREE_MISMATCH_FMT                                                                    \
	"htree directory %u: index does not match its blocks (hash order, references or depth)"
#define PR_2_FEATURE_LARGE_FILES_FMT                                                               \
	"filesystem contains large files, but lacks LARGE_FILE flag in superblock"
/* pass 3: connectivity (pass3.c) */
#define PR_3_NO_ROOT_FMT         "root inode is not allocated or not a directory: connectivity not checked"
#define PR_3_ROOT_DOTDOT_FMT     "'..' of the root is %u, not 2"
#define PR_3_UNCONNECTED_DIR_FMT "unconnected directory inode %u"
#define PR_3_BAD_DOT_DOT_FMT     "'..' in directory %u is %u, should be %u"
/* pass 4: reference counts (pass4.c) */
#define PR_4_UNATTACHED_INODE_FMT    "unattached inode %u"
#define PR_4_UNATTACHED_ZERO_LEN_FMT "unattached zero-length inode %u"
#define PR_4_DIR_NLINK_FEATURE_FMT                                                                 \
	"directory %u exceeds the maximum link count, but dir_nlink is not set"
#define PR_4_BAD_REF_COUNT_FMT "inode %u ref count is %u, should be %u"
/* pass 5: bitmaps and summary counts (pass5.c) */
#define PR_5_BITMAP_PADDING_FMT         "padding at end of %s bitmap of group %u is not set"
#define PR_5_BITMAP_CSUM_FMT            "%s bitmap checksum of group %u does not match"
#define PR_5_BLOCK_BITMAP_FMT           "block bitmap differences in group %u: %u blocks (first %llu)"
#define PR_5_INODE_BITMAP_FMT           "inode bitmap differences in group %u: %u inodes (first %u)"
#define PR_5_FREE_BLOCK_COUNT_GROUP_FMT "free blocks count wrong for group %u (%u, counted=%u)"
#define PR_5_FREE_INODE_COUNT_GROUP_FMT "free inodes count wrong for group %u (%u, counted=%u)"
#define PR_5_FREE_DIR_COUNT_GROUP_FMT   "directories count wrong for group %u (%u, counted=%u)"
#define PR_5_FREE_BLOCK_COUNT_FMT       "free blocks count wrong (%llu, counted=%llu)"
#define PR_5_FREE_INODE_COUNT_FMT       "free inodes count wrong (%u, counted=%llu)"

struct fsck_problem_def {
	enum fsck_kind kind;
	const char *fmt; /* the message: CODE_FMT */
	const char *fix; /* what -y does about it */
	uint32_t flags;  /* FSCK_PF_* */
};

/* The table row of a code (NULL past the table). */
const struct fsck_problem_def *fsck_problem_def(enum fsck_pr code);

struct ck;
/* Records problem `code` about inode ino / block blk / entry name (problem.c): formats
 * its message from the table (fmt is the same CODE_FMT, there for the compiler to check
 * the arguments against), counts it, keeps it in the report and hands it to the
 * caller's on_problem. False once max_problems is reached. */
bool ck_problem_at(struct ck *c, enum fsck_pr code, const char *fmt, uint32_t ino, uint64_t blk,
                   const char *name, int name_len, ...) __attribute__((format(printf, 3, 8)));
#define ck_problem(c, code, ...) ck_problem_at((c), (code), code##_FMT, __VA_ARGS__)

#endif
