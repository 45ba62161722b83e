// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_power.c — what a power cut does to an array: the stripe update in flight
 * caught in a chosen phase with each member write not started, done or torn, and
 * the restart that assembles what the members then hold. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

struct cutctx {
	struct blk_chooser *ch;
	uint64_t target, idx;
	struct plan *pl; /* the plan of the stripe caught in flight */
	struct blk_inflight mi[MAXM + 1];
	bool has[MAXM + 1];
	unsigned flags;
};

static int cut_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	struct cutctx *c = ctx;
	if (c->idx > c->target)
		return 0;
	if (c->idx++ < c->target) {
		struct wctx w = {c->flags};
		return raid_write_piece(r, pc, &w);
	}
	int rc = raid_plan_stripe(r, pc, c->flags, c->pl);
	if (rc)
		return rc;
	unsigned phases[PH_MAX], np = 0;
	for (unsigned ph = 0; ph < PH_MAX; ph++)
		if (c->pl->nw[ph])
			phases[np++] = ph;
	uint64_t at = blk_choose(c->ch, np, "raid: phase of the stripe update at the cut");
	for (uint64_t x = 0; x < at && rc == 0; x++)
		rc = raid_plan_exec_phase(r, c->pl, phases[x]);
	if (rc || np == 0)
		return rc;
	unsigned ph = phases[at];
	for (unsigned i = 0; i < c->pl->nw[ph]; i++) {
		const struct mw *w = &c->pl->w[ph][i];
		uint64_t fate =
		    blk_choose(c->ch, 3, "raid: member write not started / completed / in flight");
		if (fate == 1) {
			rc = raid_mwrite(r, w->dev, w->lba, w->count, w->data, w->flags);
			if (rc)
				return rc;
		} else if (fate == 2) {
			c->mi[w->dev] =
			    (struct blk_inflight){w->lba, (uint32_t)w->count, w->flags, w->data};
			c->has[w->dev] = true;
		}
	}
	return 0;
}

static int count_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	(void)r;
	(void)pc;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* The stripe updates of an in-flight host write: those before a chosen one done,
 * the chosen one caught in a chosen phase with each of that phase's member writes
 * not started, completed or itself in flight (the member decides how much of it
 * landed), the rest not started. Then every member loses power. */
int raid_power_cut(struct bdev *d, struct blk_chooser *ch, const struct blk_inflight *inflight)
{
	struct raid_dev *r = (struct raid_dev *)d;
	struct cutctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->pl = malloc(sizeof(*c->pl));
	if (!c->pl) {
		free(c);
		return -ENOMEM;
	}
	raid_plan_init(c->pl, r);
	c->ch = ch;
	int rc = 0;
	if (inflight && !r->inactive) {
		uint64_t nst = 0;
		raid_for_each_piece(r, inflight->lba, inflight->count, NULL, count_piece, &nst);
		c->target = blk_choose(ch, nst, "raid: stripe of the in-flight write at the cut");
		c->flags = inflight->flags;
		r->in_write = true;
		/* an error here (a member failing) only shortens what persisted */
		raid_for_each_piece(r, inflight->lba, inflight->count, inflight->data, cut_piece,
		                    c);
		r->in_write = false;
	}
	for (unsigned i = 0; i <= r->n && rc == 0; i++) {
		struct bdev *m = i < r->n ? r->mem[i] : r->jdev;
		if (m)
			rc = blk_power_cut(m, ch, c->has[i] ? &c->mi[i] : NULL);
	}
	if (rc == 0 && r->repl)
		rc = blk_power_cut(r->repl, ch, NULL);
	raid_plan_free(c->pl);
	free(c->pl);
	free(c);
	return rc;
}

int raid_power_restore(struct bdev *d)
{
	struct raid_dev *r = (struct raid_dev *)d;
	for (unsigned i = 0; i <= r->n; i++) {
		struct bdev *m = i < r->n ? r->mem[i] : r->jdev;
		int rc = m ? blk_power_restore(m) : 0;
		if (rc)
			return bo_errf(&d->err, rc, "%s: restoring lower %u: %s", d->name, i,
			               bo_errstr(&m->err, rc));
	}
	if (r->repl) { /* not recorded on the members: the replacement is abandoned */
		blk_close(r->repl);
		r->repl = NULL;
		r->repl_idx = -1;
	}
	return raid_assemble(r, false, &d->err);
}
