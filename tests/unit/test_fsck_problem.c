// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fsck_problem.c — blackout fsck's problem table (src/fsck/problem.c): every code
 * has a kind, a message and a repair; messages are distinct; exactly e2fsck's preen set
 * carries FSCK_PF_PREEN_OK. */
#include <string.h>

#include "blackout/fsck.h"
#include "fsck/problem.h"
#include "tap.h"

/* What e2fsck -p fixes unasked (docs/fsck.md, Options): the codes and nothing else. */
static const enum fsck_pr preen[] = {
    PR_0_FUTURE_SB_LAST_MOUNT,
    PR_0_FUTURE_SB_LAST_WRITE,
    PR_1_RESERVED_BAD_MODE,
    PR_1_JOURNAL_BAD_MODE,
    PR_1_RESIZE_BAD_MODE,
    PR_1_ZERO_DTIME,
    PR_1_SET_DTIME,
    PR_1_BAD_I_BLOCKS,
    PR_1_BAD_I_SIZE,
    PR_2_FEATURE_LARGE_FILES,
    PR_4_BAD_REF_COUNT,
    PR_4_UNATTACHED_ZERO_LEN,
    PR_5_BITMAP_PADDING,
    PR_5_BLOCK_BITMAP,
    PR_5_INODE_BITMAP,
    PR_5_FREE_BLOCK_COUNT_GROUP,
    PR_5_FREE_INODE_COUNT_GROUP,
    PR_5_FREE_DIR_COUNT_GROUP,
    PR_5_FREE_BLOCK_COUNT,
    PR_5_FREE_INODE_COUNT,
};

static bool in_preen(enum fsck_pr code)
{
	for (size_t i = 0; i < sizeof(preen) / sizeof(preen[0]); i++)
		if (preen[i] == code)
			return true;
	return false;
}

int main(void)
{
	unsigned bad = 0, dups = 0, preen_wrong = 0;
	for (int code = 0; code < PR_NR; code++) {
		const struct fsck_problem_def *d = fsck_problem_def((enum fsck_pr)code);
		if (!d || !d->fmt || !d->fmt[0] || !d->fix || !d->fix[0] ||
		    !strcmp(fsck_kind_name(d->kind), "?")) {
			diag("code %d: incomplete row", code);
			bad++;
			continue;
		}
		for (int o = 0; o < code; o++)
			if (!strcmp(fsck_problem_def((enum fsck_pr)o)->fmt, d->fmt)) {
				diag("codes %d and %d share the message '%s'", o, code, d->fmt);
				dups++;
			}
		if (!!(d->flags & FSCK_PF_PREEN_OK) != in_preen((enum fsck_pr)code)) {
			diag("code %d ('%s'): preen flag %s", code, d->fmt,
			     d->flags & FSCK_PF_PREEN_OK ? "set" : "missing");
			preen_wrong++;
		}
	}
	ok(PR_NR >= 90, "the table has a row per problem the passes report (%d)", PR_NR);
	is_int(bad, 0, "every code has a kind, a message and what a repair does");
	is_int(dups, 0, "no two codes share a message");
	is_int(preen_wrong, 0, "exactly e2fsck's preen set carries FSCK_PF_PREEN_OK");
	ok(fsck_problem_def(PR_NR) == NULL, "a code past the table has no row");
	const struct fsck_problem_def *d = fsck_problem_def(PR_1_BAD_I_SIZE);
	ok(d && d->kind == FSCK_SIZE && !strcmp(d->fmt, "inode %u, i_size is %llu, should be %llu"),
	   "PR_1_BAD_I_SIZE says e2fsck's 'i_size is X, should be Y'");
	return tap_done();
}
