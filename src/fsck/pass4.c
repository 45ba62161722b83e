// SPDX-License-Identifier: GPL-2.0-or-later
/* pass4.c — pass 4 of blackout fsck: each inode's link count against the entries
 * that name it; unattached inodes. */
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/problem.h"

void ck_pass4(struct ck *c)
{
	for (uint32_t ino = ck_next_used(c, 1); ino <= c->ninodes && !c->stop;
	     ino = ck_next_used(c, ino + 1)) {
		if (ino == EXT2_BAD_INO || (ino > EXT2_ROOT_INO && ino < c->first_ino))
			continue;
		uint32_t have = c->links[ino], want = c->counted[ino];
		if (want == 0) {
			/* e2fsck -p releases an empty one unasked, asks about the rest */
			if (c->iflag[ino] & IF_ZEROLEN)
				ck_problem(c, PR_4_UNATTACHED_ZERO_LEN, ino, 0, NULL, 0, ino);
			else
				ck_problem(c, PR_4_UNATTACHED_INODE, ino, 0, NULL, 0, ino);
			continue;
		}
		if ((c->iflag[ino] & IF_DIR) && want > EXT2_LINK_MAX) {
			want = 1;
			if (!sb_has_ro_compat(c->sb, EXT4_FEATURE_RO_COMPAT_DIR_NLINK))
				ck_problem(c, PR_4_DIR_NLINK_FEATURE, ino, 0, NULL, 0, ino);
		}
		if (have != want)
			ck_problem(c, PR_4_BAD_REF_COUNT, ino, 0, NULL, 0, ino, have, want);
	}
}
