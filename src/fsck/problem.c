/* problem.c — what blackout fsck knows about each kind of problem beyond its message:
 * whether -p (preen) may fix it without asking, as e2fsck's PR_PREEN_OK flag says. */
#include <string.h>

#include "blackout/fsck.h"
#include "fsck/fsck_ctx.h"

/* The problems e2fsck -p fixes by itself (PR_PREEN_OK in e2fsck's problem.c): the
 * damage an unclean shutdown leaves and that has one right answer. Keyed by the
 * problem's message format, the identity a pass reports it under. Everything else
 * stops -p with "UNEXPECTED INCONSISTENCY", as e2fsck -p stops. */
static const char *const preen_ok[] = {
    /* pass 1: deletion times, orphan lists, i_size and i_blocks */
    "inode %u was part of the orphaned inode list (dtime %u)",
    "deleted inode %u has zero dtime",
    "inode %u is in use, but has dtime set",
    "inode %u i_blocks is %llu, should be %llu",
    "inode %u, i_size is %llu, should be %llu",
    /* pass 0: times in the future */
    "last mount time is in the future",
    "last write time is in the future",
    /* pass 4: link counts, and an unattached inode with nothing in it */
    "inode %u ref count is %u, should be %u",
    /* pass 5: bitmaps and summary counts */
    "padding at end of %s bitmap of group %u is not set",
    "block bitmap differences in group %u: %u blocks (first %llu)",
    "inode bitmap differences in group %u: %u inodes (first %u)",
    "free blocks count wrong for group %u (%u, counted=%u)",
    "free inodes count wrong for group %u (%u, counted=%u)",
    "directories count wrong for group %u (%u, counted=%u)",
    "free blocks count wrong (%llu, counted=%llu)",
    "free inodes count wrong (%u, counted=%llu)",
    /* end of pass 2: a large file without the feature */
    "filesystem contains large files, but lacks LARGE_FILE flag in superblock",
};

uint32_t fsck_problem_flags(const char *fmt, enum fsck_kind k, uint32_t ino, bool zerolen)
{
	(void)k;
	for (size_t i = 0; i < sizeof(preen_ok) / sizeof(preen_ok[0]); i++)
		if (!strcmp(fmt, preen_ok[i]))
			return FSCK_PF_PREEN_OK;
	/* e2fsck's PR_4_ZERO_LEN_INODE: an unattached inode with no data is cleared */
	if (!strcmp(fmt, "unattached %sinode %u") && zerolen && ino)
		return FSCK_PF_PREEN_OK;
	return 0;
}
