// SPDX-License-Identifier: GPL-2.0-or-later
/* verify.c — after the pull: read the probe's region back and hold every unit against
 * the acknowledgement log. Lost durable writes name the promise broken (flush or FUA);
 * units of the writes in the last epoch that are neither old nor new are tears; units
 * nobody wrote since the last flush that no longer hold their data are collateral
 * damage, measured as a radius around the epoch's writes. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/probe.h"

#define READ_UNITS 2048u /* 1 MiB a read */

struct span {
	uint64_t lo, hi; /* units [lo, hi) */
	uint64_t gen;
};

struct vctx {
	const struct probe_log *l;
	uint64_t *durable;  /* per unit: the newest generation that had to survive */
	uint8_t *by_fua;    /* ... made durable only by FUA */
	struct span *epoch; /* writes after the last flush, the one in flight included */
	size_t nepoch;
	uint64_t last_gen, last_flush;
	unsigned char *old, *new;
	struct probe_verdict *v;
};

static uint64_t low_pow2(uint64_t x)
{
	return x & (~x + 1);
}

static void note_tear(struct probe_verdict *v, uint64_t byte_offset)
{
	uint64_t g = byte_offset ? low_pow2(byte_offset) : PROBE_UNIT;
	if (g > PROBE_BLOCK)
		g = PROBE_BLOCK;
	if (v->tear_granularity == 0 || g < v->tear_granularity)
		v->tear_granularity = (uint32_t)g;
}

/* A unit of an epoch write that is neither generation: where did new stop? */
static void torn_unit(struct vctx *c, const unsigned char *got, uint64_t unit, uint64_t newgen)
{
	probe_pattern_fill(c->new, c->l->run, unit, newgen);
	probe_pattern_fill(c->old, c->l->run, unit, c->durable[unit - c->l->first]);
	size_t i = 0;
	while (i < PROBE_UNIT && got[i] == c->new[i])
		i++;
	size_t j = i;
	while (j < PROBE_UNIT && got[j] == c->old[j])
		j++;
	/* new then old is a tear at i; anything else is garbage at the byte */
	note_tear(c->v, j == PROBE_UNIT ? i : 1);
}

static const struct span *epoch_at(const struct vctx *c, uint64_t unit)
{
	const struct span *best = NULL;
	for (size_t i = 0; i < c->nepoch; i++)
		if (unit >= c->epoch[i].lo && unit < c->epoch[i].hi &&
		    (!best || c->epoch[i].gen > best->gen))
			best = &c->epoch[i];
	return best;
}

/* Collateral: the distance to the nearest epoch write, and the aligned power of two
 * that holds this unit and one of those writes. */
static void damage(struct vctx *c, uint64_t unit)
{
	struct probe_verdict *v = c->v;
	v->damaged++;
	uint64_t dmin = UINT64_MAX, emin = UINT64_MAX;
	for (size_t i = 0; i < c->nepoch; i++) {
		const struct span *s = &c->epoch[i];
		uint64_t d = unit < s->lo ? s->lo - unit : unit - (s->hi - 1);
		dmin = d < dmin ? d : dmin;
		uint64_t e = PROBE_BLOCK;
		while (e < (1ull << 40) && (unit * PROBE_UNIT) / e != (s->lo * PROBE_UNIT) / e &&
		       (unit * PROBE_UNIT) / e != ((s->hi - 1) * PROBE_UNIT) / e)
			e *= 2;
		emin = e < emin ? e : emin;
	}
	if (dmin == UINT64_MAX)
		return;
	if (dmin * PROBE_UNIT > v->damage_radius)
		v->damage_radius = dmin * PROBE_UNIT;
	if (emin > v->erase_block)
		v->erase_block = emin;
}

static void judge_unit(struct vctx *c, const unsigned char *got, uint64_t unit, bool unreadable)
{
	struct probe_verdict *v = c->v;
	uint64_t i = unit - c->l->first, gen = 0;
	enum probe_unit_kind k =
	    unreadable ? PROBE_U_GARBAGE : probe_pattern_decode(got, c->l->run, unit, &gen);
	const struct span *ep = epoch_at(c, unit);
	v->unreadable += unreadable;
	v->foreign += k == PROBE_U_FOREIGN;
	if (k == PROBE_U_VALID) {
		if (gen >= c->durable[i]) {
			v->ok++;
		} else if (c->by_fua[i]) {
			v->lost_fua++;
		} else {
			v->lost_flush++;
		}
		return;
	}
	if (ep) {
		/* a unit being rewritten in the epoch, neither its old nor its new data */
		if (k == PROBE_U_ERASED) {
			v->erased_written++; /* erased under the write: a flash block rewritten */
		} else {
			v->torn_units++;
			if (k == PROBE_U_GARBAGE && !unreadable)
				torn_unit(c, got, unit, ep->gen);
		}
		return;
	}
	damage(c, unit);
}

/* Per unit: the generation that had to survive (the newest write completed before a
 * completed flush, or completed with FUA), and the epoch's writes. */
static int expectations(struct vctx *c)
{
	const struct probe_log *l = c->l;
	for (size_t i = 0; i < l->n; i++) {
		if (l->op[i].kind == PROBE_OP_FLUSH)
			c->last_flush = l->op[i].gen;
		c->last_gen = l->op[i].gen;
	}
	for (uint64_t u = 0; u < l->units; u++)
		c->durable[u] = 1;
	c->epoch = calloc(l->n + 1, sizeof(*c->epoch));
	if (!c->epoch)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		const struct probe_op *op = &l->op[i];
		if (op->kind != PROBE_OP_WRITE)
			continue;
		bool flushed = op->acked && op->gen < c->last_flush;
		if (op->gen > c->last_flush)
			c->epoch[c->nepoch++] =
			    (struct span){op->unit, op->unit + op->count, op->gen};
		if (!flushed && !(op->acked && op->fua))
			continue;
		for (uint64_t u = op->unit; u < op->unit + op->count; u++) {
			c->durable[u - l->first] = op->gen;
			c->by_fua[u - l->first] = !flushed;
		}
	}
	c->v->epoch_writes = c->nepoch;
	c->v->last_gen = c->last_gen;
	return 0;
}

/* Writes of the epoch that landed in part: where within the write the new data stops. */
static void partial_writes(struct vctx *c, const uint64_t *gens)
{
	for (size_t i = 0; i < c->nepoch; i++) {
		const struct span *s = &c->epoch[i];
		uint64_t landed = 0;
		for (uint64_t u = s->lo; u < s->hi; u++)
			landed += gens[u - c->l->first] >= s->gen;
		if (landed == 0 || landed == s->hi - s->lo)
			continue;
		c->v->partial_writes++;
		for (uint64_t u = s->lo + 1; u < s->hi; u++)
			if ((gens[u - c->l->first] >= s->gen) !=
			    (gens[u - 1 - c->l->first] >= s->gen))
				note_tear(c->v, (u - s->lo) * PROBE_UNIT);
	}
}

static int read_units(struct bdev *d, uint64_t unit, uint64_t n, unsigned char *buf, bool *bad)
{
	uint32_t per = d->sector_size / PROBE_UNIT;
	int rc = blk_pread(d, unit * PROBE_UNIT, n * PROBE_UNIT, buf);
	if (rc != -EIO)
		return rc;
	/* sector by sector, so one unreadable sector hides nothing around it */
	for (uint64_t u = 0; u < n; u += per) {
		rc = blk_pread(d, (unit + u) * PROBE_UNIT, (size_t)per * PROBE_UNIT,
		               buf + u * PROBE_UNIT);
		if (rc && rc != -EIO)
			return rc;
		for (uint32_t k = 0; k < per; k++)
			bad[u + k] = rc == -EIO;
	}
	return 0;
}

int probe_verify(struct bdev *d, const struct probe_log *l, struct probe_verdict *v,
                 struct bo_err *err)
{
	memset(v, 0, sizeof(*v));
	if (l->first > blk_size_bytes(d) / PROBE_UNIT ||
	    l->units > blk_size_bytes(d) / PROBE_UNIT - l->first)
		return bo_errf(err, -EINVAL,
		               "probe verify: the log's region (%" PRIu64
		               " units of 512 bytes from "
		               "unit %" PRIu64 ") does not fit this device (%" PRIu64
		               " bytes): is it the device the log was written for?",
		               l->units, l->first, blk_size_bytes(d));
	struct vctx c = {.l = l, .v = v};
	unsigned char *buf = aligned_alloc(PROBE_BLOCK, (size_t)READ_UNITS * PROBE_UNIT);
	bool *bad = calloc(READ_UNITS, sizeof(*bad));
	uint64_t *gens = calloc(l->units, sizeof(*gens));
	c.durable = calloc(l->units, sizeof(*c.durable));
	c.by_fua = calloc(l->units, 1);
	c.old = malloc(PROBE_UNIT);
	c.new = malloc(PROBE_UNIT);
	int rc = buf && bad && gens && c.durable && c.by_fua && c.old && c.new ? 0 : -ENOMEM;
	if (rc == 0)
		rc = expectations(&c);
	for (uint64_t u = 0; rc == 0 && u < l->units; u += READ_UNITS) {
		uint64_t n = l->units - u < READ_UNITS ? l->units - u : READ_UNITS;
		memset(bad, 0, READ_UNITS * sizeof(*bad));
		rc = read_units(d, l->first + u, n, buf, bad);
		if (rc) {
			rc = bo_errf(err, rc, "probe verify: reading byte %" PRIu64 ": %s",
			             (l->first + u) * PROBE_UNIT, bo_errstr(&d->err, rc));
			break;
		}
		for (uint64_t k = 0; k < n; k++) {
			const unsigned char *got = buf + k * PROBE_UNIT;
			uint64_t g = 0;
			if (!bad[k] && probe_pattern_decode(got, l->run, l->first + u + k, &g) !=
			                   PROBE_U_VALID)
				g = 0;
			gens[u + k] = g;
			judge_unit(&c, got, l->first + u + k, bad[k]);
		}
		v->units += n;
	}
	if (rc == 0) {
		partial_writes(&c, gens);
		for (uint64_t u = 0; u < l->units; u++) {
			v->fua_checked += c.by_fua[u];
			v->flush_checked += !c.by_fua[u] && c.durable[u] > 1;
		}
		v->flush_honoured = v->lost_flush == 0;
		v->fua_honoured = v->lost_fua == 0;
		v->collateral_measured = v->flush_honoured;
	} else if (rc == -ENOMEM) {
		rc =
		    bo_errf(err, rc, "probe verify: out of memory for %" PRIu64 " units", l->units);
	}
	free(buf);
	free(bad);
	free(gens);
	free(c.durable);
	free(c.by_fua);
	free(c.epoch);
	free(c.old);
	free(c.new);
	return rc;
}
