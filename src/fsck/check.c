// SPDX-License-Identifier: GPL-2.0-or-later
/* check.c — blackout fsck's driver: runs e2fsck's passes (super.c, pass1.c .. pass5.c)
 * over an ext2/ext3 image read straight from a bdev, records problems, and loops
 * check -> repair (repair.c) -> check until nothing more can be fixed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackout/fsck.h"
#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/fsck_int.h"

static const char *const kind_names[] = {
    [FSCK_NEEDS_RECOVERY] = "needs_recovery",
    [FSCK_SUPER] = "superblock",
    [FSCK_GDT] = "group_desc",
    [FSCK_CSUM] = "checksum",
    [FSCK_INODE] = "inode",
    [FSCK_BLOCK_RANGE] = "block_range",
    [FSCK_BLOCK_DUP] = "block_dup",
    [FSCK_SIZE] = "size",
    [FSCK_IBLOCKS] = "i_blocks",
    [FSCK_SYMLINK] = "symlink",
    [FSCK_DIRENT] = "dirent",
    [FSCK_DIR] = "directory",
    [FSCK_HTREE] = "htree",
    [FSCK_CONNECT] = "connectivity",
    [FSCK_LINKS] = "links",
    [FSCK_BITMAP] = "bitmap",
    [FSCK_COUNT] = "count",
    [FSCK_UNSUPPORTED] = "unsupported",
};

const char *fsck_kind_name(enum fsck_kind k)
{
	if ((unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[k])
		return kind_names[k];
	return "?";
}

int ck_add_fix(struct ck *c, enum fix_kind k, uint32_t ino, uint32_t pblk, uint32_t off,
               uint32_t val)
{
	if (c->o->repair == FSCK_REPAIR_NONE)
		return 0;
	if (c->nfx == c->cap_fx) {
		size_t n = c->cap_fx ? c->cap_fx * 2 : 64;
		struct fix *f = realloc(c->fx, n * sizeof(*f));
		if (!f)
			return -ENOMEM;
		c->fx = f;
		c->cap_fx = n;
	}
	c->fx[c->nfx++] = (struct fix){k, ino, pblk, off, val};
	return 0;
}
static void ck_free(struct ck *c)
{
	free(c->gdt);
	free(c->grp_bad);
	free(c->bbm);
	free(c->ibm);
	free(c->bused);
	free(c->iused);
	free(c->links);
	free(c->counted);
	free(c->iflag);
	free(c->ftype);
	free(c->parent);
	free(c->dotdot);
	free(c->gen);
	free(c->dir_nblk);
	free(c->db);
	free(c->fx);
	free(c->ea);
	free(c->buf);
	free(c->ibuf);
	for (int i = 0; i < 3; i++)
		free(c->lvl[i]);
	free(c->dedup);
}

static int run_check(struct ck *c)
{
	int rc = ck_pass0(c);
	if (rc)
		return rc < 0 ? rc : 0;
	size_t n = (size_t)c->ninodes + 1;
	c->buf = malloc(c->bs);
	c->ibuf = malloc(256u * 1024 + c->bs);
	for (int i = 0; i < 3; i++)
		c->lvl[i] = malloc(c->bs);
	c->bused = calloc((c->nblocks + 7) / 8 + FSCK_MAP_SLACK, 1);
	c->iused = calloc((n + 7) / 8 + FSCK_MAP_SLACK, 1);
	if (!c->buf || !c->ibuf || !c->lvl[0] || !c->lvl[1] || !c->lvl[2] || !c->bused || !c->iused)
		return -ENOMEM;
	if ((rc = ck_load_bitmaps(c)) || c->stop)
		return rc;
	if (c->o->fast)
		return ck_fast_scan(c);
	c->links = calloc(n, sizeof(*c->links));
	c->counted = calloc(n, sizeof(*c->counted));
	c->iflag = calloc(n, 1);
	c->ftype = calloc(n, 1);
	c->parent = calloc(n, sizeof(*c->parent));
	c->dotdot = calloc(n, sizeof(*c->dotdot));
	c->gen = calloc(n, sizeof(*c->gen));
	c->dir_nblk = calloc(n, sizeof(*c->dir_nblk));
	if (!c->links || !c->counted || !c->iflag || !c->ftype || !c->parent || !c->dotdot ||
	    !c->gen || !c->dir_nblk)
		return -ENOMEM;
	if ((rc = ck_check_journal(c)) || c->stop)
		return rc;
	if ((rc = ck_pass1(c)) || c->stop)
		return rc;
	if ((rc = ck_pass2(c)) || c->stop)
		return rc;
	ck_pass3(c);
	if (!c->stop)
		ck_pass4(c);
	if (!c->stop)
		ck_pass5(c);
	return 0;
}

static int check_once(struct bdev *d, const struct fsck_opts *o, struct fsck_report *r,
                      struct bo_err *err, bool repair, bool force_maps)
{
	struct ck c = {.d = d, .o = o, .r = r, .err = err, .force_maps = force_maps};
	bool modified = r->modified;
	uint32_t fixed = r->nr_fixed;
	struct fsck_replay replay = r->replay;
	memset(r, 0, sizeof(*r));
	r->modified = modified;
	r->nr_fixed = fixed;
	r->replay = replay;
	int rc = run_check(&c);
	if (!rc && repair && r->nr_problems && !r->needs_recovery) {
		int done = 0;
		if (c.sb_bad || c.gdt_bad || c.gdt)
			rc = done = fsck_restore_backup(&c);
		if (!done && c.links) {
			rc = fsck_apply_fixes(&c);
			if (!rc)
				rc = fsck_rewrite_maps(&c);
		}
		if (rc > 0)
			rc = 0;
	}
	ck_free(&c);
	return rc;
}

int fsck_check(struct bdev *d, const struct fsck_opts *o, struct fsck_report *r, struct bo_err *err)
{
	static const struct fsck_opts defaults;
	if (!o)
		o = &defaults;
	memset(r, 0, sizeof(*r));
	if (o->repair == FSCK_REPAIR_NONE || o->fast)
		return check_once(d, o, r, err, false, false);
	/* As e2fsck: the journal first, then the check sees the replayed image. A
	 * journal that cannot be replayed is left as it is: the check reports it. */
	struct bo_err jerr = {{0}};
	int jrc = fsck_journal_recover(d, &r->replay, &jerr);
	if (jrc && r->replay.needed)
		snprintf(r->replay.error, sizeof(r->replay.error), "%s", bo_errstr(&jerr, jrc));
	else if (jrc)
		memset(&r->replay, 0,
		       sizeof(r->replay)); /* no usable journal: the check says why */
	r->modified = r->replay.modified;
	struct fsck_opts q = *o;
	q.max_problems = 0;
	bool listed = false;
	if (o->repair == FSCK_REPAIR_PREEN) {
		/* e2fsck -p: a plain check first; one problem it would ask about and
		 * nothing is repaired (the replay above is what -p always does). */
		q.repair = FSCK_REPAIR_NONE;
		bool modified = r->modified;
		int rc = check_once(d, &q, r, err, false, false);
		r->modified = modified;
		if (rc || !r->nr_problems)
			return rc;
		if (r->nr_unexpected) {
			r->preen_stopped = true;
			return 0;
		}
		q.repair = FSCK_REPAIR_PREEN;
		listed = true;
	}
	/* Repair: check and fix until a check finds nothing more it can fix. */
	uint32_t before = 0;
	bool force = false, forced = false;
	for (int round = 0; round < 12; round++) {
		void (*cb)(void *, const struct fsck_problem *) =
		    round || listed ? NULL : o->on_problem;
		q.on_problem = cb;
		uint32_t fixed_before = r->nr_fixed;
		int rc = check_once(d, &q, r, err, true, force);
		if (rc)
			return rc;
		if (round && r->nr_fixed == fixed_before) {
			/* This round changed nothing: the rest is beyond these repairs. Once,
			 * the global fixes are made anyway (the local fixes left are stuck),
			 * so what earlier rounds allocated or freed is never left unaccounted
			 * in the bitmaps, counts and links. */
			if (forced || !r->nr_problems)
				break;
			force = forced = true;
			continue;
		}
		force = false;
		if (round == 0)
			before = r->nr_problems;
		if (!r->nr_problems || r->needs_recovery || !r->modified)
			break;
	}
	/* The verdict after repair: a plain check. */
	q.repair = FSCK_REPAIR_NONE;
	q.on_problem = o->on_remaining;
	q.ctx = o->remaining_ctx;
	bool modified = r->modified;
	int rc = check_once(d, &q, r, err, false, false);
	r->modified = modified;
	r->nr_fixed = before > r->nr_problems ? before - r->nr_problems : 0;
	if (modified && !r->nr_fixed)
		r->nr_fixed = 1;
	if (!rc && modified && !r->nr_problems)
		rc = blk_flush(d);
	return rc;
}

int fsck_exit_code(const struct fsck_report *r)
{
	if (r->nr_problems)
		return 4;
	return r->modified ? 1 : 0;
}
