// SPDX-License-Identifier: GPL-2.0-or-later
/* problem.c — blackout fsck's problem table, as e2fsck's problem.c: for every code
 * (problem.h) its kind, message, what a repair does about it and its flags; and
 * ck_problem_at, which every pass calls to record one. */
#include <stdarg.h>
#include <stdio.h>

#include "blackout/fsck.h"
#include "fsck/fsck_ctx.h"
#include "fsck/problem.h"

/* FSCK_PF_PREEN_OK marks what e2fsck -p fixes without asking (its PR_PREEN_OK): the
 * damage an unclean shutdown leaves and that has one right answer (deletion times,
 * i_size and i_blocks, a reserved inode's mode, link counts, an empty unattached
 * inode, bitmaps and summary counts, times in the future, the large_file feature).
 * Not an inode left on an orphan list as dtime (e2fsck's PR_1_LOW_DTIME asks). Anything else
 * stops -p with "UNEXPECTED INCONSISTENCY", as e2fsck -p stops. */
static const struct fsck_problem_def table[PR_NR] = {
    /* pass 0: superblock, group descriptors, journal superblock (super.c) */
    [PR_0_SB_MAGIC] = {FSCK_SUPER, PR_0_SB_MAGIC_FMT,
                       "the superblock from its backup, or the field put right", 0},
    [PR_0_CSUM_TYPE] = {FSCK_SUPER, PR_0_CSUM_TYPE_FMT,
                        "the superblock from its backup, or the field put right", 0},
    [PR_0_SB_CSUM] = {FSCK_CSUM, PR_0_SB_CSUM_FMT, "the superblock from its backup", 0},
    [PR_0_SB_FIELD] = {FSCK_SUPER, PR_0_SB_FIELD_FMT,
                       "the superblock from its backup, or the field put right", 0},
    [PR_0_FS_SIZE_WRONG] = {FSCK_SUPER, PR_0_FS_SIZE_WRONG_FMT,
                            "the superblock from its backup, or the field put right", 0},
    [PR_0_TOO_MANY_INODES] = {FSCK_SUPER, PR_0_TOO_MANY_INODES_FMT,
                              "the superblock from its backup, or the field put right", 0},
    [PR_0_GDT_TOO_BIG] = {FSCK_SUPER, PR_0_GDT_TOO_BIG_FMT,
                          "the superblock from its backup, or the field put right", 0},
    [PR_0_INODE_COUNT_WRONG] = {FSCK_SUPER, PR_0_INODE_COUNT_WRONG_FMT,
                                "the superblock from its backup, or the field put right", 0},
    [PR_0_FIRST_INO] = {FSCK_SUPER, PR_0_FIRST_INO_FMT,
                        "the superblock from its backup, or the field put right", 0},
    [PR_0_RESERVED_BLOCKS] = {FSCK_SUPER, PR_0_RESERVED_BLOCKS_FMT,
                              "the superblock from its backup, or the field put right", 0},
    [PR_0_FREE_BLOCKS_RANGE] = {FSCK_SUPER, PR_0_FREE_BLOCKS_RANGE_FMT,
                                "the superblock from its backup, or the field put right", 0},
    [PR_0_FREE_INODES_RANGE] = {FSCK_SUPER, PR_0_FREE_INODES_RANGE_FMT,
                                "the superblock from its backup, or the field put right", 0},
    [PR_0_FUTURE_SB_LAST_MOUNT] = {FSCK_SUPER, PR_0_FUTURE_SB_LAST_MOUNT_FMT,
                                   "the superblock from its backup, or the field put right",
                                   FSCK_PF_PREEN_OK},
    [PR_0_FUTURE_SB_LAST_WRITE] = {FSCK_SUPER, PR_0_FUTURE_SB_LAST_WRITE_FMT,
                                   "the superblock from its backup, or the field put right",
                                   FSCK_PF_PREEN_OK},
    [PR_0_NEEDS_RECOVERY] = {FSCK_NEEDS_RECOVERY, PR_0_NEEDS_RECOVERY_FMT,
                             "-p and -y replay the journal before checking", 0},
    [PR_0_GDT_CSUM] = {FSCK_CSUM, PR_0_GDT_CSUM_FMT,
                       "the descriptors from their backup, or their checksums rewritten", 0},
    [PR_0_BB_NOT_GROUP] = {FSCK_GDT, PR_0_BB_NOT_GROUP_FMT,
                           "the group descriptors from their backup", 0},
    [PR_0_IB_NOT_GROUP] = {FSCK_GDT, PR_0_IB_NOT_GROUP_FMT,
                           "the group descriptors from their backup", 0},
    [PR_0_ITABLE_NOT_GROUP] = {FSCK_GDT, PR_0_ITABLE_NOT_GROUP_FMT,
                               "the group descriptors from their backup", 0},
    [PR_0_GDT_UNINIT] = {FSCK_GDT, PR_0_GDT_UNINIT_FMT, "the uninit flags are cleared", 0},
    [PR_0_BB_UNINIT_LAST] = {FSCK_GDT, PR_0_BB_UNINIT_LAST_FMT,
                             "the group descriptors from their backup", 0},
    [PR_0_GDT_ITABLE_UNUSED] = {FSCK_GDT, PR_0_GDT_ITABLE_UNUSED_FMT,
                                "the group descriptors from their backup", 0},
    [PR_0_BACKUP_SB] = {FSCK_SUPER, PR_0_BACKUP_SB_FMT, "-y writes the backup back as the primary",
                        0},
    [PR_0_JOURNAL_UNSUPP_INODE] = {FSCK_SUPER, PR_0_JOURNAL_UNSUPP_INODE_FMT,
                                   "the superblock from its backup, or the field put right", 0},
    [PR_0_JOURNAL_BAD_INODE] = {FSCK_SUPER, PR_0_JOURNAL_BAD_INODE_FMT,
                                "the journal inode's map from the superblock's backup", 0},
    [PR_0_JOURNAL_BAD_SUPER] = {FSCK_SUPER, PR_0_JOURNAL_BAD_SUPER_FMT,
                                "the superblock from its backup, or the field put right", 0},
    [PR_0_JOURNAL_HAS_DATA] = {FSCK_SUPER, PR_0_JOURNAL_HAS_DATA_FMT,
                               "the superblock from its backup, or the field put right", 0},
    /* pass 1: inodes and their blocks (pass1.c) */
    [PR_1_DUP_BLOCK] = {FSCK_BLOCK_DUP, PR_1_DUP_BLOCK_FMT,
                        "the block is cloned for the later claimant", 0},
    [PR_1_META_CONFLICT] = {FSCK_BLOCK_DUP, PR_1_META_CONFLICT_FMT,
                            "the group descriptors are taken from their backup", 0},
    [PR_1_ILLEGAL_BLOCK] = {FSCK_BLOCK_RANGE, PR_1_ILLEGAL_BLOCK_FMT,
                            "the pointer is cleared, then i_blocks and i_size", 0},
    [PR_1_DIR_TOO_BIG] = {FSCK_DIR, PR_1_DIR_TOO_BIG_FMT, "none: reported (docs/fsck-gaps.md)", 0},
    [PR_1_EA_BLOCK_INVALID] = {FSCK_INODE, PR_1_EA_BLOCK_INVALID_FMT,
                               "the attribute block is dropped from the inode", 0},
    [PR_1_EA_BLOCK_BAD] = {FSCK_INODE, PR_1_EA_BLOCK_BAD_FMT,
                           "the attribute block is dropped from the inode", 0},
    [PR_1_EA_BLOCK_CSUM] = {FSCK_CSUM, PR_1_EA_BLOCK_CSUM_FMT, "none: reported (docs/fsck-gaps.md)",
                            0},
    [PR_1_SYMLINK_INVALID] = {FSCK_SYMLINK, PR_1_SYMLINK_INVALID_FMT,
                              "none: reported (docs/fsck-gaps.md)", 0},
    [PR_1_INODE_EA_BAD] = {FSCK_INODE, PR_1_INODE_EA_BAD_FMT,
                           "the attribute area inside the inode is dropped", 0},
    [PR_1_INDEX_FL] = {FSCK_INODE, PR_1_INDEX_FL_FMT, "the bad flags and fields are zeroed", 0},
    [PR_1_FEATURE_FL] = {FSCK_INODE, PR_1_FEATURE_FL_FMT, "the bad flags and fields are zeroed", 0},
    [PR_1_HIGH_FIELDS] = {FSCK_INODE, PR_1_HIGH_FIELDS_FMT, "the bad flags and fields are zeroed",
                          0},
    [PR_1_EXTRA_ISIZE] = {FSCK_INODE, PR_1_EXTRA_ISIZE_FMT, "the bad flags and fields are zeroed",
                          0},
    [PR_1_TREAT_AS_DIRECTORY] = {FSCK_INODE, PR_1_TREAT_AS_DIRECTORY_FMT,
                                 "the mode becomes a directory's", 0},
    [PR_1_SPECIAL_INVALID] = {FSCK_INODE, PR_1_SPECIAL_INVALID_FMT, "the inode is released", 0},
    [PR_1_SPECIAL_SIZE] = {FSCK_SIZE, PR_1_SPECIAL_SIZE_FMT, "the bad flags and fields are zeroed",
                           0},
    [PR_1_BAD_MODE] = {FSCK_INODE, PR_1_BAD_MODE_FMT, "the inode is released", 0},
    [PR_1_BAD_I_BLOCKS] = {FSCK_IBLOCKS, PR_1_BAD_I_BLOCKS_FMT,
                           "i_blocks is set to the blocks counted", FSCK_PF_PREEN_OK},
    [PR_1_DIR_NO_BLOCKS] = {FSCK_DIR, PR_1_DIR_NO_BLOCKS_FMT, "none: reported (docs/fsck-gaps.md)",
                            0},
    [PR_1_BAD_I_SIZE] = {FSCK_SIZE, PR_1_BAD_I_SIZE_FMT,
                         "i_size is set to the end of the last block", FSCK_PF_PREEN_OK},
    [PR_1_JOURNAL_UNUSED_DATA] = {FSCK_INODE, PR_1_JOURNAL_UNUSED_DATA_FMT,
                                  "none: reported (docs/fsck-gaps.md)", 0},
    [PR_1_RESIZE_BAD_MODE] = {FSCK_INODE, PR_1_RESIZE_BAD_MODE_FMT,
                              "the reserved inode gets e2fsck's mode for it", FSCK_PF_PREEN_OK},
    [PR_1_JOURNAL_BAD_MODE] = {FSCK_INODE, PR_1_JOURNAL_BAD_MODE_FMT,
                               "the reserved inode gets e2fsck's mode for it", FSCK_PF_PREEN_OK},
    [PR_1_RESERVED_BAD_MODE] = {FSCK_INODE, PR_1_RESERVED_BAD_MODE_FMT,
                                "the reserved inode gets e2fsck's mode for it", FSCK_PF_PREEN_OK},
    [PR_1_RESIZE_INVALID] = {FSCK_INODE, PR_1_RESIZE_INVALID_FMT,
                             "the resize inode is made again from the geometry", 0},
    [PR_1_LOW_DTIME] = {FSCK_INODE, PR_1_LOW_DTIME_FMT, "the deletion time is set or cleared", 0},
    [PR_1_ZERO_DTIME] = {FSCK_INODE, PR_1_ZERO_DTIME_FMT, "the deletion time is set or cleared",
                         FSCK_PF_PREEN_OK},
    [PR_1_INODE_CSUM] = {FSCK_CSUM, PR_1_INODE_CSUM_FMT, "the checksum is rewritten", 0},
    [PR_1_ROOT_NO_DIR] = {FSCK_INODE, PR_1_ROOT_NO_DIR_FMT, "none: reported (docs/fsck-gaps.md)",
                          0},
    [PR_1_ROOT_DTIME] = {FSCK_INODE, PR_1_ROOT_DTIME_FMT, "none: reported (docs/fsck-gaps.md)", 0},
    [PR_1_SET_DTIME] = {FSCK_INODE, PR_1_SET_DTIME_FMT, "the deletion time is cleared",
                        FSCK_PF_PREEN_OK},
    [PR_1_EA_REFCOUNT] = {FSCK_INODE, PR_1_EA_REFCOUNT_FMT, "none: reported (docs/fsck-gaps.md)",
                          0},
    [PR_1_FAST_ILLEGAL_BLOCK] = {FSCK_BLOCK_RANGE, PR_1_FAST_ILLEGAL_BLOCK_FMT,
                                 "none: --fast only checks", 0},
    /* pass 2: directories (pass2.c) */
    [PR_2_HTREE_LIMIT] = {FSCK_HTREE, PR_2_HTREE_LIMIT_FMT,
                          "the index is dropped: the directory becomes linear", 0},
    [PR_2_HTREE_COUNT] = {FSCK_HTREE, PR_2_HTREE_COUNT_FMT, "none: reported (docs/fsck-gaps.md)",
                          0},
    [PR_2_HTREE_BAD_BLOCK] = {FSCK_HTREE, PR_2_HTREE_BAD_BLOCK_FMT,
                              "the index is dropped: the directory becomes linear", 0},
    [PR_2_HTREE_HASH_ORDER] = {FSCK_HTREE, PR_2_HTREE_HASH_ORDER_FMT,
                               "the index is dropped: the directory becomes linear", 0},
    [PR_2_BAD_ENTRY_INODE] = {FSCK_DIRENT, PR_2_BAD_ENTRY_INODE_FMT, "the entry is removed", 0},
    [PR_2_BAD_NAME] = {FSCK_DIRENT, PR_2_BAD_NAME_FMT, "the entry is removed", 0},
    [PR_2_BAD_FILETYPE] = {FSCK_DIRENT, PR_2_BAD_FILETYPE_FMT,
                           "the file type is set from the inode's mode", 0},
    [PR_2_LINK_DIR] = {FSCK_DIRENT, PR_2_LINK_DIR_FMT, "the entry is removed", 0},
    [PR_2_DUPLICATE_ENTRY] = {FSCK_DIRENT, PR_2_DUPLICATE_ENTRY_FMT, "the entry is removed", 0},
    [PR_2_DIR_CORRUPTED] = {FSCK_DIRENT, PR_2_DIR_CORRUPTED_FMT,
                            "the block is salvaged from the break on", 0},
    [PR_2_BAD_DOT] = {FSCK_DIR, PR_2_BAD_DOT_FMT, "'.' or '..' is rewritten", 0},
    [PR_2_BAD_DOTDOT] = {FSCK_DIR, PR_2_BAD_DOTDOT_FMT, "'.' or '..' is rewritten", 0},
    [PR_2_LINK_DOT] = {FSCK_DIRENT, PR_2_LINK_DOT_FMT, "the entry is removed", 0},
    [PR_2_FILETYPE_SET] = {FSCK_DIRENT, PR_2_FILETYPE_SET_FMT, "none: reported (docs/fsck-gaps.md)",
                           0},
    [PR_2_MISSING_DOT] = {FSCK_DIR, PR_2_MISSING_DOT_FMT, "none: reported (docs/fsck-gaps.md)", 0},
    [PR_2_HTREE_BAD_ROOT] = {FSCK_HTREE, PR_2_HTREE_BAD_ROOT_FMT,
                             "the index is dropped: the directory becomes linear", 0},
    [PR_2_DIRECTORY_HOLE] = {FSCK_DIR, PR_2_DIRECTORY_HOLE_FMT,
                             "a new empty directory block is allocated for it", 0},
    [PR_2_HTREE_CSUM] = {FSCK_CSUM, PR_2_HTREE_CSUM_FMT, "the checksum (and its tail) is rewritten",
                         0},
    [PR_2_LEAF_NO_SPACE_CSUM] = {FSCK_CSUM, PR_2_LEAF_NO_SPACE_CSUM_FMT,
                                 "the checksum (and its tail) is rewritten", 0},
    [PR_2_LEAF_CSUM] = {FSCK_CSUM, PR_2_LEAF_CSUM_FMT, "the checksum (and its tail) is rewritten",
                        0},
    [PR_2_HTREE_MISMATCH] = {FSCK_HTREE, PR_2_HTREE_MISMATCH_FMT,
                             "the index is dropped: the directory becomes linear", 0},
    [PR_2_FEATURE_LARGE_FILES] = {FSCK_COUNT, PR_2_FEATURE_LARGE_FILES_FMT,
                                  "large_file is set (a revision 0 filesystem made dynamic)",
                                  FSCK_PF_PREEN_OK},
    /* pass 3: connectivity (pass3.c) */
    [PR_3_NO_ROOT] = {FSCK_CONNECT, PR_3_NO_ROOT_FMT, "none: reported (docs/fsck-gaps.md)", 0},
    [PR_3_ROOT_DOTDOT] = {FSCK_CONNECT, PR_3_ROOT_DOTDOT_FMT, "none: reported (docs/fsck-gaps.md)",
                          0},
    [PR_3_UNCONNECTED_DIR] = {FSCK_CONNECT, PR_3_UNCONNECTED_DIR_FMT,
                              "reconnected to /lost+found, its '..' rewritten", 0},
    [PR_3_BAD_DOT_DOT] = {FSCK_CONNECT, PR_3_BAD_DOT_DOT_FMT, "'..' is rewritten", 0},
    /* pass 4: reference counts (pass4.c) */
    [PR_4_UNATTACHED_INODE] = {FSCK_LINKS, PR_4_UNATTACHED_INODE_FMT,
                               "connected to /lost+found (an empty one is released)", 0},
    [PR_4_UNATTACHED_ZERO_LEN] = {FSCK_LINKS, PR_4_UNATTACHED_ZERO_LEN_FMT,
                                  "the empty inode is released", FSCK_PF_PREEN_OK},
    [PR_4_DIR_NLINK_FEATURE] = {FSCK_LINKS, PR_4_DIR_NLINK_FEATURE_FMT,
                                "the link count becomes 1 and dir_nlink is set", 0},
    [PR_4_BAD_REF_COUNT] = {FSCK_LINKS, PR_4_BAD_REF_COUNT_FMT,
                            "the link count is set to the entries counted", FSCK_PF_PREEN_OK},
    /* pass 5: bitmaps and summary counts (pass5.c) */
    [PR_5_BITMAP_PADDING] = {FSCK_BITMAP, PR_5_BITMAP_PADDING_FMT,
                             "rewritten from the blocks and inodes the check found in use",
                             FSCK_PF_PREEN_OK},
    [PR_5_BITMAP_CSUM] = {FSCK_CSUM, PR_5_BITMAP_CSUM_FMT,
                          "the bitmap and its checksum are rewritten", 0},
    [PR_5_BLOCK_BITMAP] = {FSCK_BITMAP, PR_5_BLOCK_BITMAP_FMT,
                           "rewritten from the blocks and inodes the check found in use",
                           FSCK_PF_PREEN_OK},
    [PR_5_INODE_BITMAP] = {FSCK_BITMAP, PR_5_INODE_BITMAP_FMT,
                           "rewritten from the blocks and inodes the check found in use",
                           FSCK_PF_PREEN_OK},
    [PR_5_FREE_BLOCK_COUNT_GROUP] = {FSCK_COUNT, PR_5_FREE_BLOCK_COUNT_GROUP_FMT,
                                     "rewritten from the check's counts", FSCK_PF_PREEN_OK},
    [PR_5_FREE_INODE_COUNT_GROUP] = {FSCK_COUNT, PR_5_FREE_INODE_COUNT_GROUP_FMT,
                                     "rewritten from the check's counts", FSCK_PF_PREEN_OK},
    [PR_5_FREE_DIR_COUNT_GROUP] = {FSCK_COUNT, PR_5_FREE_DIR_COUNT_GROUP_FMT,
                                   "rewritten from the check's counts", FSCK_PF_PREEN_OK},
    [PR_5_FREE_BLOCK_COUNT] = {FSCK_COUNT, PR_5_FREE_BLOCK_COUNT_FMT,
                               "rewritten from the check's counts", FSCK_PF_PREEN_OK},
    [PR_5_FREE_INODE_COUNT] = {FSCK_COUNT, PR_5_FREE_INODE_COUNT_FMT,
                               "rewritten from the check's counts", FSCK_PF_PREEN_OK},
};

const struct fsck_problem_def *fsck_problem_def(enum fsck_pr code)
{
	return (unsigned)code < PR_NR && table[code].fmt ? &table[code] : NULL;
}

bool ck_problem_at(struct ck *c, enum fsck_pr code, const char *fmt, uint32_t ino, uint64_t blk,
                   const char *name, int name_len, ...)
{
	(void)fmt; /* the table's own message: the same literal, checked by the compiler */
	const struct fsck_problem_def *def = fsck_problem_def(code);
	struct fsck_report *r = c->r;
	if (c->stop || !def)
		return false;
	struct fsck_problem p = {.kind = def->kind,
	                         .code = (uint32_t)code,
	                         .ino = ino,
	                         .block = blk,
	                         .flags = def->flags};
	if (name && name_len > 0) {
		size_t n =
		    (size_t)name_len < sizeof(p.name) - 1 ? (size_t)name_len : sizeof(p.name) - 1;
		for (size_t i = 0; i < n; i++) /* printable: names are untrusted bytes */
			p.name[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
	}
	va_list ap;
	va_start(ap, name_len);
	vsnprintf(p.msg, sizeof(p.msg), def->fmt, ap);
	va_end(ap);
	r->nr_problems++;
	if (!(p.flags & FSCK_PF_PREEN_OK))
		r->nr_unexpected++;
	if (p.kind == FSCK_SUPER && ino == 0)
		c->sb_bad = true;
	if (p.kind == FSCK_GDT)
		c->gdt_bad = true;
	if (p.kind == FSCK_CSUM)
		r->by_checksum = true;
	if (r->nr_kept < FSCK_REPORT_KEEP)
		r->problems[r->nr_kept++] = p;
	if (c->o->on_problem)
		c->o->on_problem(c->o->ctx, &p);
	if (c->o->max_problems && r->nr_problems >= c->o->max_problems)
		c->stop = true;
	return !c->stop;
}
