// SPDX-License-Identifier: GPL-2.0-or-later
/* pass3.c — pass 3 of blackout fsck: every directory connected to the root, and
 * each '..' naming the directory that holds it. */
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/problem.h"

void ck_pass3(struct ck *c)
{
	if (!bit_test(c->iused, EXT2_ROOT_INO - 1) || !(c->iflag[EXT2_ROOT_INO] & IF_DIR)) {
		ck_problem(c, PR_3_NO_ROOT, EXT2_ROOT_INO, 0, NULL, 0);
		return;
	}
	c->iflag[EXT2_ROOT_INO] |= IF_REACHED;
	if (c->dotdot[EXT2_ROOT_INO] != EXT2_ROOT_INO)
		ck_problem(c, PR_3_ROOT_DOTDOT, EXT2_ROOT_INO, 0, NULL, 0,
		           c->dotdot[EXT2_ROOT_INO]);
	for (uint32_t ino = ck_next_used(c, 1); ino <= c->ninodes && !c->stop;
	     ino = ck_next_used(c, ino + 1)) {
		if (!(c->iflag[ino] & IF_DIR) || (c->iflag[ino] & IF_REACHED))
			continue;
		/* Walk up the parents until something reached; a loop or a dead end
		 * leaves the walk unconnected. */
		uint32_t p = ino;
		bool ok = false;
		while (p && !(c->iflag[p] & IF_WALK)) {
			if (c->iflag[p] & IF_REACHED) {
				ok = true;
				break;
			}
			c->iflag[p] |= IF_WALK;
			p = c->parent[p];
		}
		for (uint32_t q = ino; q && (c->iflag[q] & IF_WALK); q = c->parent[q]) {
			c->iflag[q] &= (uint8_t)~IF_WALK;
			if (ok)
				c->iflag[q] |= IF_REACHED;
		}
		if (!ok) {
			ck_problem(c, PR_3_UNCONNECTED_DIR, ino, 0, NULL, 0, ino);
			c->iflag[ino] |= IF_REACHED; /* reported once */
		}
	}
	for (uint32_t ino = ck_next_used(c, 1); ino <= c->ninodes && !c->stop;
	     ino = ck_next_used(c, ino + 1)) {
		if (!(c->iflag[ino] & IF_DIR) || ino == EXT2_ROOT_INO || !c->parent[ino])
			continue;
		if (c->dotdot[ino] != c->parent[ino])
			ck_problem(c, PR_3_BAD_DOT_DOT, ino, 0, NULL, 0, ino, c->dotdot[ino],
			           c->parent[ino]);
	}
}
