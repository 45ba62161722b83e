// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_stripe.c — host reads, writes and discards of an array: each split into
 * stripe updates, planned as phased member writes (read-modify-write, reconstruct-
 * write, full stripe, degraded) and run; degraded reads reconstruct. The plan's
 * machinery is raid_plan.c, below this file; the log (PPL or journal) is reached
 * through raid_log.c only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

/* The superblock (dirty) and bitmap writes that must precede a write to stripe s. */
static int plan_meta(struct raid_dev *r, struct plan *pl, uint64_t s)
{
	if (r->p.level == 0)
		return 0;
	if (!r->p.journal && !r->dirty) {
		pl->set_dirty = true;
		for (unsigned i = 0; i < r->n; i++) {
			if (r->failed >> i & 1)
				continue;
			unsigned char *b = raid_plan_alloc(pl, r->ss);
			if (!b)
				return -ENOMEM;
			raid_sb_encode(r, i, r->events + 1, true, b);
			r->st.sb_writes++;
			raid_plan_add(pl, PH_SB, i, 0, 1, b, BLK_FUA);
		}
	}
	return r->p.bitmap ? raid_plan_bitmap(r, pl, s) : 0;
}

/* Splits a host range into pieces, one per stripe, and calls fn for each. */
int raid_for_each_piece(struct raid_dev *r, uint64_t lba, uint64_t count, const unsigned char *buf,
                        int (*fn)(struct raid_dev *, struct piece *, void *), void *ctx)
{
	struct piece pc;
	bool open = false;
	while (count) {
		uint64_t c = lba / r->cs, off = lba % r->cs;
		uint64_t n = r->cs - off < count ? r->cs - off : count;
		uint64_t s = c / r->k;
		unsigned j = (unsigned)(c % r->k);
		if (open && pc.s != s) {
			int rc = fn(r, &pc, ctx);
			if (rc)
				return rc;
			open = false;
		}
		if (!open) {
			memset(&pc, 0, sizeof(pc));
			pc.s = s;
			pc.lo = (uint32_t)r->cs;
			open = true;
		}
		pc.a[j] = (uint32_t)off;
		pc.b[j] = (uint32_t)(off + n);
		pc.src[j] = buf;
		if (pc.a[j] < pc.lo)
			pc.lo = pc.a[j];
		if (pc.b[j] > pc.hi)
			pc.hi = pc.b[j];
		lba += n;
		count -= n;
		if (buf)
			buf += n * r->ss;
	}
	return open ? fn(r, &pc, ctx) : 0;
}

static bool aligned32(const void *p)
{
	return ((uintptr_t)p & 31) == 0;
}

enum wmode { W_DIRECT, W_FULL, W_RMW, W_RCW, W_RECON };

/* md's handle_stripe_dirtying: count the reads each way, a failed member's read
 * as very expensive; reconstruct-write wins ties. *pu, *qu: P, Q usable. */
static enum wmode choose_mode(const struct raid_dev *r, const struct piece *pc,
                              const struct sgeo *g, bool *pu, bool *qu)
{
	uint64_t s = pc->s;
	uint32_t lo = pc->lo, hi = pc->hi;
	unsigned n2 = 2 * r->n, m = r->m;
	unsigned rmw = 0, rcw = 0;
	bool rmw_bad = false, rcw_bad = false;
	for (unsigned j = 0; j < r->k; j++) {
		bool w = pc->a[j] < pc->b[j], over = pc->a[j] == lo && pc->b[j] == hi;
		bool u = raid_usable(r, g->dm[j], s);
		if (w) {
			rmw += u ? 1 : n2;
			rmw_bad |= !u;
		}
		if (!over) {
			rcw += u ? 1 : n2;
			rcw_bad |= !u;
		}
	}
	*pu = raid_usable(r, (unsigned)g->pm, s);
	*qu = m > 1 && raid_usable(r, (unsigned)g->qm, s);
	rmw += *pu ? 1 : n2;
	rmw_bad |= !*pu;
	if (m > 1) {
		rmw += *qu ? 1 : n2;
		rmw_bad |= !*qu;
	}
	if (!*pu && !*qu)
		return W_DIRECT;
	if (rcw == 0)
		return W_FULL;
	if (rmw < rcw)
		return rmw_bad ? W_RECON : W_RMW;
	return rcw_bad ? W_RECON : W_RCW;
}

/* One stripe update being planned: its rows [lo, hi) of L bytes, the data in slot
 * order (B), and the new parity (P, Q). */
struct upd {
	struct raid_dev *r;
	const struct piece *pc;
	struct plan *pl;
	const struct sgeo *g;
	uint64_t base; /* member sector of the stripe */
	size_t L;
	unsigned char *B[MAXM + 2], *P, *Q;
};

/* Full stripe or reconstruct-write: the rows of every data chunk (new data, or
 * read from members where not overwritten), parity from all of them. */
static int gen_rcw(struct upd *u)
{
	struct raid_dev *r = u->r;
	const struct piece *pc = u->pc;
	uint32_t lo = pc->lo, hi = pc->hi;
	size_t ss = r->ss;
	for (unsigned j = 0; j < r->k; j++) {
		unsigned sl = u->g->slot[j];
		bool w = pc->a[j] < pc->b[j], over = pc->a[j] == lo && pc->b[j] == hi;
		if (over && aligned32(pc->src[j])) {
			u->B[sl] = (unsigned char *)pc->src[j];
			continue;
		}
		if (!(u->B[sl] = raid_plan_alloc(u->pl, u->L)))
			return -ENOMEM;
		if (!over) {
			int rc = raid_mread(r, u->g->dm[j], u->base + lo, hi - lo, u->B[sl]);
			if (rc)
				return rc == -EIO ? -EAGAIN : rc;
		}
		if (w)
			memcpy(u->B[sl] + (pc->a[j] - lo) * ss, pc->src[j],
			       (pc->b[j] - pc->a[j]) * ss);
	}
	if (!(u->P = raid_plan_alloc(u->pl, u->L)) ||
	    (r->m > 1 && !(u->Q = raid_plan_alloc(u->pl, u->L))))
		return -ENOMEM;
	return raid_gen_parity(r->k, r->m, u->L, u->B, u->P, u->Q);
}

/* Read-modify-write: old parity plus the parity of (old ^ new) of the chunks
 * written. */
static int gen_rmw(struct upd *u)
{
	struct raid_dev *r = u->r;
	const struct piece *pc = u->pc;
	uint32_t lo = pc->lo, hi = pc->hi;
	size_t L = u->L, ss = r->ss;
	unsigned m = r->m;
	unsigned char *D[MAXM];
	unsigned slots[MAXM], nd = 0;
	int rc;
	if (!(u->P = raid_plan_alloc(u->pl, L)) || (m > 1 && !(u->Q = raid_plan_alloc(u->pl, L))))
		return -ENOMEM;
	if ((rc = raid_mread(r, (unsigned)u->g->pm, u->base + lo, hi - lo, u->P)) ||
	    (m > 1 && (rc = raid_mread(r, (unsigned)u->g->qm, u->base + lo, hi - lo, u->Q))))
		return rc == -EIO ? -EAGAIN : rc;
	for (unsigned j = 0; j < r->k; j++) {
		if (pc->a[j] >= pc->b[j])
			continue;
		unsigned char *dl = raid_plan_alloc(u->pl, L);
		if (!dl)
			return -ENOMEM;
		memset(dl, 0, L);
		size_t at = (pc->a[j] - lo) * ss, len = (pc->b[j] - pc->a[j]) * ss;
		rc = raid_mread(r, u->g->dm[j], u->base + pc->a[j], pc->b[j] - pc->a[j], dl + at);
		if (rc)
			return rc == -EIO ? -EAGAIN : rc;
		raid_xor_into(dl + at, pc->src[j], len);
		D[nd] = dl;
		slots[nd++] = u->g->slot[j];
	}
	unsigned char *dp = raid_plan_alloc(u->pl, L),
	              *dq = m > 1 ? raid_plan_alloc(u->pl, L) : NULL;
	if (!dp || (m > 1 && !dq))
		return -ENOMEM;
	rc = raid_gen_delta(r->k, m, L, nd, slots, D, dp, dq);
	if (rc)
		return rc;
	raid_xor_into(u->P, dp, L);
	if (m > 1)
		raid_xor_into(u->Q, dq, L);
	return 0;
}

/* Degraded: every row reconstructed first (a lost chunk's old data is needed),
 * the new data put in, parity from all of it. */
static int gen_recon(struct upd *u)
{
	struct raid_dev *r = u->r;
	const struct piece *pc = u->pc;
	size_t ss = r->ss;
	int rc = raid_load_reconstruct(r, u->pl, u->g, pc->s, pc->lo, pc->hi, u->B);
	if (rc)
		return rc;
	for (unsigned j = 0; j < r->k; j++)
		if (pc->a[j] < pc->b[j])
			memcpy(u->B[u->g->slot[j]] + (pc->a[j] - pc->lo) * ss, pc->src[j],
			       (pc->b[j] - pc->a[j]) * ss);
	u->P = u->B[r->k];
	u->Q = r->m > 1 ? u->B[r->k + 1] : NULL;
	return raid_gen_parity(r->k, r->m, u->L, u->B, u->P, u->Q);
}

static int plan_parity_stripe(struct raid_dev *r, struct piece *pc, unsigned flags, struct plan *pl)
{
	struct sgeo g;
	raid_stripe_geo(r, pc->s, &g);
	uint64_t s = pc->s, base = r->data_off + s * r->cs;
	uint32_t lo = pc->lo, hi = pc->hi;
	struct upd u = {.r = r, .pc = pc, .pl = pl, .g = &g, .base = base};
	u.L = (size_t)(hi - lo) * r->ss;
	int rc = plan_meta(r, pl, s);
	if (rc)
		return rc;
	bool pu, qu;
	enum wmode mode = choose_mode(r, pc, &g, &pu, &qu);
	if (mode == W_FULL || mode == W_RCW) {
		if ((rc = gen_rcw(&u)))
			return rc;
		if (mode == W_FULL)
			r->st.full_stripe++;
		else
			r->st.rcw++;
	} else if (mode == W_RMW) {
		if ((rc = gen_rmw(&u)))
			return rc;
		r->st.rmw++;
	} else if (mode == W_RECON) {
		if ((rc = gen_recon(&u)))
			return rc;
		r->st.reconstruct_write++;
	} else {
		r->st.direct_write++;
	}
	for (unsigned j = 0; j < r->k; j++)
		if (pc->a[j] < pc->b[j] && raid_usable(r, g.dm[j], s))
			raid_plan_add(pl, PH_DATA, g.dm[j], base + pc->a[j], pc->b[j] - pc->a[j],
			              pc->src[j], flags);
	if (pu)
		raid_plan_add(pl, PH_DATA, (unsigned)g.pm, base + lo, hi - lo, u.P, flags);
	if (qu)
		raid_plan_add(pl, PH_DATA, (unsigned)g.qm, base + lo, hi - lo, u.Q, flags);
	return raid_log_stripe(r, pl, pc, &g, pu ? u.P : NULL);
}

static int plan_stripe_once(struct raid_dev *r, struct piece *pc, unsigned flags, struct plan *pl)
{
	uint64_t base = r->data_off + pc->s * r->cs;
	int rc = raid_stripe_writable(r, pc->s);
	if (rc)
		return rc;
	if (r->p.level == 0) {
		for (unsigned j = 0; j < r->k; j++)
			if (pc->a[j] < pc->b[j])
				raid_plan_add(pl, PH_DATA, j, base + pc->a[j], pc->b[j] - pc->a[j],
				              pc->src[j], flags);
		return 0;
	}
	if (r->p.level == 1) {
		if ((rc = plan_meta(r, pl, pc->s)))
			return rc;
		for (unsigned i = 0; i < r->n; i++)
			if (raid_usable(r, i, pc->s))
				raid_plan_add(pl, PH_DATA, i, base + pc->a[0], pc->b[0] - pc->a[0],
				              pc->src[0], flags);
		return raid_log_stripe(r, pl, pc, NULL, NULL);
	}
	return plan_parity_stripe(r, pc, flags, pl);
}

int raid_plan_stripe(struct raid_dev *r, struct piece *pc, unsigned flags, struct plan *pl)
{
	int rc = -EAGAIN;
	for (unsigned attempt = 0; rc == -EAGAIN && attempt <= r->n; attempt++) {
		raid_plan_free(pl);
		raid_plan_init(pl, r);
		rc = plan_stripe_once(r, pc, flags, pl);
	}
	if (rc == -EAGAIN)
		rc = bo_errf(&r->dev.err, -EIO, "%s: members keep failing", r->dev.name);
	return rc;
}

int raid_write_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	struct wctx *w = ctx;
	struct plan *pl = malloc(sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	raid_plan_init(pl, r);
	int rc = raid_plan_stripe(r, pc, w->flags, pl);
	for (unsigned ph = 0; rc == 0 && ph < PH_MAX; ph++)
		rc = raid_plan_exec_phase(r, pl, ph);
	if (rc == 0)
		rc = raid_stripe_writable(r, pc->s);
	raid_plan_free(pl);
	free(pl);
	return rc;
}

int raid_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return raid_refused(r);
	struct wctx w = {r->p.drop_flushes ? flags & ~(unsigned)BLK_FUA : flags};
	r->st.host_writes++;
	r->st.host_write_sectors += count;
	r->in_write = true;
	int rc = raid_for_each_piece(r, lba, count, buf, raid_write_piece, &w);
	r->in_write = false;
	return rc;
}

static int read_degraded(struct raid_dev *r, uint64_t s, unsigned j, uint32_t a, uint32_t b,
                         unsigned char *dst)
{
	struct sgeo g;
	raid_stripe_geo(r, s, &g);
	int rc = -EAGAIN;
	for (unsigned attempt = 0; rc == -EAGAIN && attempt <= r->n; attempt++) {
		struct plan *pl = malloc(sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		raid_plan_init(pl, r);
		unsigned char *B[MAXM + 2];
		rc = raid_load_reconstruct(r, pl, &g, s, a, b, B);
		if (rc == 0)
			memcpy(dst, B[g.slot[j]], (size_t)(b - a) * r->ss);
		raid_plan_free(pl);
		free(pl);
	}
	r->st.degraded_reads++;
	return rc == -EAGAIN ? -EIO : rc;
}

static int read_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	(void)ctx;
	uint64_t s = pc->s, base = r->data_off + s * r->cs;
	struct sgeo g;
	raid_stripe_geo(r, s, &g);
	for (unsigned j = 0; j < r->k; j++) {
		if (pc->a[j] >= pc->b[j])
			continue;
		unsigned char *dst = (unsigned char *)pc->src[j];
		uint32_t a = pc->a[j], b = pc->b[j];
		if (r->p.level == 1) {
			int rc = -EIO;
			for (unsigned i = 0; i < r->n && rc; i++) {
				if (!raid_usable(r, i, s))
					continue;
				rc = raid_mread(r, i, base + a, b - a, dst);
				if (rc && rc != -EIO)
					return rc;
			}
			if (rc)
				return bo_errf(&r->dev.err, -EIO, "%s: no mirror could be read",
				               r->dev.name);
			continue;
		}
		int rc = -EIO;
		if (raid_usable(r, g.dm[j], s)) {
			rc = raid_mread(r, g.dm[j], base + a, b - a, dst);
			if (rc && rc != -EIO)
				return rc;
		}
		if (rc && r->p.level == 0)
			return bo_errf(&r->dev.err, -EIO, "%s: member %u has failed (RAID0)",
			               r->dev.name, g.dm[j]);
		if (rc && (rc = read_degraded(r, s, j, a, b, dst)))
			return rc;
	}
	return 0;
}

int raid_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return raid_refused(r);
	r->st.host_reads++;
	r->st.host_read_sectors += count;
	return raid_for_each_piece(r, lba, count, buf, read_piece, NULL);
}

/* md raid456 forwards no discard unless members are known to return zeroes
 * (devices_handle_discard_safely), since parity would no longer match; RAID0/1
 * pass it through. */
static int discard_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	(void)ctx;
	uint64_t base = r->data_off + pc->s * r->cs;
	for (unsigned j = 0; j < r->k; j++) {
		if (pc->a[j] >= pc->b[j])
			continue;
		for (unsigned i = 0; i < r->n; i++) {
			if ((r->p.level == 0 && i != j) || (r->failed >> i & 1))
				continue;
			int rc = blk_discard(r->mem[i], base + pc->a[j], pc->b[j] - pc->a[j]);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int raid_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return raid_refused(r);
	if (r->p.level >= 4)
		return 0;
	return raid_for_each_piece(r, lba, count, NULL, discard_piece, NULL);
}
