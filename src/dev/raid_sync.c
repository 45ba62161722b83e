// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_sync.c — making members agree: scrub (md's check/repair), resync after an
 * unclean shutdown, rebuild onto a replacement and hot replacement. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

/* Checks (and with repair, fixes) one whole stripe; counts mismatched sectors. */
int raid_scrub_stripe(struct raid_dev *r, uint64_t s, bool repair, uint64_t *mism)
{
	size_t L = (size_t)r->cs * r->ss, ss = r->ss;
	uint64_t base = r->data_off + s * r->cs;
	struct plan *pl = malloc(sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	raid_plan_init(pl, r);
	int rc = 0;
	uint64_t bad = 0;
	if (r->p.level == 1) {
		unsigned first = r->n;
		unsigned char *ref = raid_plan_alloc(pl, L), *b = raid_plan_alloc(pl, L);
		if (!ref || !b) {
			rc = -ENOMEM;
			goto out;
		}
		for (unsigned i = 0; i < r->n && rc == 0; i++) {
			if (!raid_usable(r, i, s))
				continue;
			if (first == r->n) {
				first = i;
				rc = raid_mread(r, i, base, r->cs, ref);
				continue;
			}
			if ((rc = raid_mread(r, i, base, r->cs, b)))
				break;
			uint64_t here = 0;
			for (uint64_t x = 0; x < r->cs; x++)
				here += memcmp(ref + x * ss, b + x * ss, ss) != 0;
			bad += here;
			if (here && repair)
				rc = raid_mwrite(r, i, base, r->cs, ref, 0);
		}
		goto out;
	}
	struct sgeo g;
	raid_stripe_geo(r, s, &g);
	unsigned char *B[MAXM + 2], *P = raid_plan_alloc(pl, L),
	                            *Q = r->m > 1 ? raid_plan_alloc(pl, L) : NULL;
	if (!P || (r->m > 1 && !Q)) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned x = 0; x < r->k + r->m && rc == 0; x++) {
		unsigned i = g.of_slot[x];
		if (!raid_usable(r, i, s)) {
			rc = bo_errf(&r->dev.err, -EBUSY, "%s: member %u is missing", r->dev.name,
			             i);
			break;
		}
		if (!(B[x] = raid_plan_alloc(pl, L)))
			rc = -ENOMEM;
		else
			rc = raid_mread(r, i, base, r->cs, B[x]);
	}
	if (rc || (rc = raid_gen_parity(r->k, r->m, L, B, P, Q)))
		goto out;
	bool pbad = false, qbad = false;
	for (uint64_t x = 0; x < r->cs; x++) {
		bool pb = memcmp(P + x * ss, B[r->k] + x * ss, ss) != 0;
		bool qb = r->m > 1 && memcmp(Q + x * ss, B[r->k + 1] + x * ss, ss) != 0;
		bad += pb || qb;
		pbad |= pb;
		qbad |= qb;
	}
	if (repair && pbad)
		rc = raid_mwrite(r, (unsigned)g.pm, base, r->cs, P, 0);
	if (repair && qbad && rc == 0)
		rc = raid_mwrite(r, (unsigned)g.qm, base, r->cs, Q, 0);
out:
	*mism += bad;
	raid_plan_free(pl);
	free(pl);
	return rc;
}

int raid_scrub(struct bdev *d, bool repair, uint64_t *mismatches)
{
	*mismatches = 0;
	if (!raid_is(d))
		return -EINVAL;
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return raid_refused(r);
	if (r->p.level == 0)
		return bo_errf(&d->err, -EINVAL, "%s: RAID0 has nothing to check", d->name);
	if (r->failed || r->rebuild_idx >= 0)
		return bo_errf(&d->err, -EBUSY, "%s: scrub needs every member (array is degraded)",
		               d->name);
	for (uint64_t s = 0; s < r->stripes; s++) {
		int rc = raid_scrub_stripe(r, s, repair, mismatches);
		if (rc)
			return rc;
	}
	r->st.scrub_mismatches += *mismatches;
	return repair ? raid_flush_members(r) : 0;
}

/* Parity recomputed from data (or mirrors copied) where every member is there;
 * a degraded stripe cannot be resynced and keeps whatever the cut left. */
int raid_resync_stripe(struct raid_dev *r, uint64_t s)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!raid_usable(r, i, s) && r->p.level != 1) {
			r->st.resync_skipped++;
			return 0;
		}
	uint64_t mism = 0;
	r->st.resync_stripes++;
	return raid_scrub_stripe(r, s, true, &mism);
}

/* Copies member repl_idx onto its replacement (reconstructing where the member
 * cannot be read), then swaps them. */
static int replace_step(struct raid_dev *r, uint64_t max_stripes, uint64_t *done, uint64_t *total)
{
	unsigned idx = (unsigned)r->repl_idx;
	size_t L = (size_t)r->cs * r->ss;
	int rc = 0;
	for (uint64_t c = 0; c < max_stripes && r->repl && r->repl_pos < r->stripes && rc == 0;
	     c++) {
		uint64_t s = r->repl_pos, base = r->data_off + s * r->cs;
		struct plan *pl = malloc(sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		raid_plan_init(pl, r);
		unsigned char *src = raid_plan_alloc(pl, L);
		if (!src)
			rc = -ENOMEM;
		else
			rc = raid_mread(r, idx, base, r->cs, src);
		if (rc == -EIO)
			rc = 0; /* the member failed: now a rebuild (member_failed) */
		else if (rc == 0 && blk_write(r->repl, base, (uint32_t)r->cs, src, 0))
			rc = bo_errf(&r->dev.err, -EIO, "%s: writing the replacement of member %u",
			             r->dev.name, idx);
		else if (rc == 0) {
			r->repl_pos++;
			r->st.rebuild_stripes++;
		}
		raid_plan_free(pl);
		free(pl);
	}
	if (rc == 0 && r->repl && r->repl_pos >= r->stripes) {
		if ((rc = blk_flush(r->repl)))
			return rc;
		blk_close(r->mem[idx]);
		r->mem[idx] = r->repl;
		r->repl = NULL;
		r->repl_idx = -1;
		if (r->p.bitmap)
			rc = raid_mwrite(r, idx, r->bm_off, r->bm_sectors, r->bm, 0);
		if (rc == 0)
			rc = raid_write_sbs(r);
	}
	*total = r->stripes;
	*done = r->repl ? r->repl_pos : r->rebuild_idx >= 0 ? r->rebuild_pos : r->stripes;
	return rc;
}

int raid_rebuild_step(struct bdev *d, uint64_t max_stripes, uint64_t *done, uint64_t *total)
{
	if (!raid_is(d))
		return -EINVAL;
	struct raid_dev *r = (struct raid_dev *)d;
	*total = r->stripes;
	*done = r->rebuild_idx < 0 ? r->stripes : r->rebuild_pos;
	if (r->inactive)
		return raid_refused(r);
	if (r->repl)
		return replace_step(r, max_stripes, done, total);
	if (r->rebuild_idx < 0)
		return 0;
	unsigned idx = (unsigned)r->rebuild_idx;
	size_t L = (size_t)r->cs * r->ss;
	int rc = 0;
	for (uint64_t c = 0; c < max_stripes && r->rebuild_pos < r->stripes && rc == 0; c++) {
		uint64_t s = r->rebuild_pos, base = r->data_off + s * r->cs;
		struct plan *pl = malloc(sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		raid_plan_init(pl, r);
		unsigned char *src = NULL;
		if (r->p.level == 1) {
			rc = -EIO;
			for (unsigned i = 0; i < r->n && rc; i++) {
				if (i == idx || !raid_usable(r, i, s))
					continue;
				if (!(src = raid_plan_alloc(pl, L))) {
					rc = -ENOMEM;
					break;
				}
				rc = raid_mread(r, i, base, r->cs, src);
			}
		} else {
			struct sgeo g;
			raid_stripe_geo(r, s, &g);
			unsigned char *B[MAXM + 2];
			rc = raid_load_reconstruct(r, pl, &g, s, 0, (uint32_t)r->cs, B);
			for (unsigned x = 0; rc == 0 && x < r->k + r->m; x++)
				if (g.of_slot[x] == idx)
					src = B[x];
		}
		if (rc == 0)
			rc = raid_mwrite(r, idx, base, r->cs, src, 0);
		if (rc == 0) {
			r->rebuild_pos++;
			r->st.rebuild_stripes++;
		}
		raid_plan_free(pl);
		free(pl);
	}
	if (rc)
		return rc == -EAGAIN ? -EIO : rc;
	if (r->rebuild_pos >= r->stripes) {
		if ((rc = blk_flush(r->mem[idx])))
			return rc;
		r->rebuild_idx = -1;
	}
	*done = r->rebuild_idx < 0 ? r->stripes : r->rebuild_pos;
	return raid_write_sbs(r);
}

int raid_replace(struct bdev *d, unsigned idx, struct bdev *newdev, struct bo_err *err)
{
	if (!raid_is(d))
		return bo_errf(err, -EINVAL, "not a RAID device");
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->p.level == 0)
		return bo_errf(err, -EINVAL, "%s: RAID0 cannot rebuild a member", d->name);
	if (idx >= r->n)
		return bo_errf(err, -EINVAL, "%s: no member %u", d->name, idx);
	if (r->rebuild_idx >= 0 || r->repl)
		return bo_errf(err, -EBUSY, "%s: member %d is still being rebuilt or replaced",
		               d->name, r->rebuild_idx >= 0 ? r->rebuild_idx : r->repl_idx);
	if (newdev->sector_size != r->ss || newdev->nr_sectors < r->data_off + r->mdata)
		return bo_errf(err, -EINVAL,
		               "%s: replacement needs %u-byte sectors and %llu sectors", d->name,
		               r->ss, (unsigned long long)(r->data_off + r->mdata));
	if (!(r->failed >> idx & 1)) {
		/* hot replace of a working member: it keeps serving while copied */
		int rc = 0;
		if (r->p.ppl) {
			unsigned char *z = calloc(1, META);
			rc = z ? blk_write(newdev, r->ppl_off, (uint32_t)r->meta, z, 0) : -ENOMEM;
			free(z);
		}
		if (rc)
			return bo_errf(err, rc, "%s: preparing the replacement: %s", d->name,
			               bo_errstr(&newdev->err, rc));
		r->repl = newdev;
		r->repl_idx = (int)idx;
		r->repl_pos = 0;
		return 0;
	}
	blk_close(r->mem[idx]);
	r->mem[idx] = newdev;
	r->failed &= ~(1ull << idx);
	r->rebuild_idx = (int)idx;
	r->rebuild_pos = 0;
	int rc = 0;
	unsigned char *z = calloc(1, META);
	if (!z)
		return -ENOMEM;
	if (r->p.ppl)
		rc = raid_mwrite(r, idx, r->ppl_off, r->meta, z, 0);
	free(z);
	if (rc == 0 && r->p.bitmap)
		rc = raid_mwrite(r, idx, r->bm_off, r->bm_sectors, r->bm, 0);
	if (rc == 0)
		rc = raid_write_sbs(r);
	return rc ? bo_errf(err, rc, "%s: %s", d->name, bo_errstr(&d->err, rc)) : 0;
}
