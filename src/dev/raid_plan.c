// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_plan.c — a stripe update as a plan: member writes in phases (superblock,
 * bitmap, log, data), their buffers from the array's pool, run phase by phase; and
 * reading a stripe back with what is missing reconstructed. The lowest of the RAID
 * files: the stripe, log (journal, PPL), bitmap and sync code build on it and it
 * calls none of them. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

void raid_plan_init(struct plan *pl, struct raid_dev *r)
{
	memset(pl->nw, 0, sizeof(pl->nw));
	pl->nbuf = 0;
	pl->pool = &r->pool;
	pl->set_dirty = pl->set_bm = pl->set_j = false;
}

/* Buffers go back to the array's pool: allocating and freeing a chunk-sized buffer
 * per stripe makes malloc hand memory back to the kernel and fault it in again. */
void raid_plan_free(struct plan *pl)
{
	struct bufpool *bp = pl->pool;
	for (unsigned i = 0; i < pl->nbuf; i++) {
		if (bp->n < BUFPOOL_MAX) {
			bp->p[bp->n] = pl->buf[i];
			bp->sz[bp->n++] = pl->bufsz[i];
		} else {
			free(pl->buf[i]);
		}
	}
	pl->nbuf = 0;
}

unsigned char *raid_plan_alloc(struct plan *pl, size_t len)
{
	if (pl->nbuf == sizeof(pl->buf) / sizeof(pl->buf[0]))
		return NULL;
	size_t want = (len + 63) / 64 * 64;
	struct bufpool *bp = pl->pool;
	unsigned char *p = NULL;
	for (unsigned i = bp->n; i-- > 0;)
		if (bp->sz[i] >= want) {
			p = bp->p[i];
			want = bp->sz[i];
			bp->p[i] = bp->p[--bp->n];
			bp->sz[i] = bp->sz[bp->n];
			break;
		}
	if (!p)
		p = aligned_alloc(64, want ? want : 64);
	if (p) {
		pl->buf[pl->nbuf] = p;
		pl->bufsz[pl->nbuf++] = want;
	}
	return p;
}

void raid_plan_add(struct plan *pl, unsigned ph, unsigned dev, uint64_t lba, uint64_t count,
                   const unsigned char *data, unsigned flags)
{
	pl->w[ph][pl->nw[ph]++] = (struct mw){dev, lba, count, data, flags};
}

static void plan_commit_phase(struct raid_dev *r, const struct plan *pl, unsigned ph)
{
	if (ph == PH_SB && pl->set_dirty) {
		r->dirty = true;
		r->events++;
	}
	if (ph == PH_BM && pl->set_bm)
		r->bm[pl->bm_region / 8] |= (unsigned char)(1u << (pl->bm_region % 8));
	if (ph == PH_LOG && pl->set_j) {
		r->j_head = pl->j_head;
		r->j_seq = pl->j_seq;
	}
}

int raid_plan_exec_phase(struct raid_dev *r, struct plan *pl, unsigned ph)
{
	for (unsigned i = 0; i < pl->nw[ph]; i++) {
		const struct mw *w = &pl->w[ph][i];
		if (w->dev < r->n && (r->failed >> w->dev & 1))
			continue;
		int rc = raid_mwrite(r, w->dev, w->lba, w->count, w->data, w->flags);
		if (rc == -EIO && w->dev < r->n)
			raid_member_failed(r, w->dev);
		else if (rc)
			return rc;
	}
	plan_commit_phase(r, pl, ph);
	return 0;
}

/* Reads members over [lo,hi) of stripe s into B (slot order) and computes whatever
 * is missing. -EAGAIN: a member failed meanwhile, start again. */
int raid_load_reconstruct(struct raid_dev *r, struct plan *pl, const struct sgeo *g, uint64_t s,
                          uint32_t lo, uint32_t hi, unsigned char **B)
{
	size_t L = (size_t)(hi - lo) * r->ss;
	uint64_t missing = 0;
	for (unsigned x = 0; x < r->k + r->m; x++) {
		unsigned i = g->of_slot[x];
		if (!(B[x] = raid_plan_alloc(pl, L)))
			return -ENOMEM;
		if (!raid_usable(r, i, s)) {
			missing |= 1ull << x;
			continue;
		}
		int rc = raid_mread(r, i, r->data_off + s * r->cs + lo, hi - lo, B[x]);
		if (rc)
			return rc == -EIO ? -EAGAIN : rc;
	}
	if (bo_popcount64(missing) > r->m)
		return bo_errf(&r->dev.err, -EIO,
		               "%s: stripe %llu: %u members missing, the array survives %u",
		               r->dev.name, (unsigned long long)s, bo_popcount64(missing), r->m);
	return raid_recover(r->k, r->m, L, B, missing);
}
