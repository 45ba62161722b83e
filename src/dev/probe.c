// SPDX-License-Identifier: GPL-2.0-or-later
/* probe.c — the black-box probe behind `blackout stack probe`: like diskchecker,
 * it learns what a stack does with flushes, FUA and interrupted writes only by
 * writing, flushing and cutting power (every outcome, through clones), never by
 * reading the stack's parameters. Each experiment runs on a fresh clone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"

#define PROBE_MAX_OUTCOMES (1u << 16)
#define PROBE_SECTORS      4 /* written by the cache experiments */
#define PROBE_INFLIGHT     2 /* sectors of the interrupted write */
/* cut outcomes the erase-block experiment examines: its "no" needs every one, and a
 * 4096-byte sector torn at any byte has 4097 */
#define PROBE_EB_OUTCOMES 4224
#define PROBE_EB_SAMPLES  40
#define PROBE_SPAN_BYTES  (64u << 10) /* the in-flight write straddles a boundary of this */

int dev_wrap_cow(void *ctx, struct bdev *leaf, struct bdev **out, struct bo_err *err)
{
	struct dev_cow_leaves *l = ctx;
	if (l->n == l->cap) {
		unsigned cap = l->cap ? l->cap * 2 : 8;
		struct bdev **n = realloc(l->leaf, cap * sizeof(*n));
		if (!n)
			return bo_errf(err, -ENOMEM, "out of memory");
		l->leaf = n;
		l->cap = cap;
	}
	int rc = blk_cow_open(leaf, out);
	if (rc)
		return bo_errf(err, rc, "%s: cannot put an overlay over it", leaf->name);
	l->leaf[l->n++] = leaf;
	return 0;
}

void dev_cow_leaves_close(struct dev_cow_leaves *l)
{
	for (unsigned i = 0; i < l->n; i++)
		blk_close(l->leaf[i]);
	free(l->leaf);
	memset(l, 0, sizeof(*l));
}

struct probe {
	struct bdev *d;
	size_t ss;
	unsigned char *old;  /* [PROBE_SECTORS * 2] sectors as the device held them */
	unsigned char *mine; /* the probe's data: every byte differs from old */
	unsigned char *buf;
	uint64_t lba[PROBE_SECTORS];
	uint64_t if_lba;       /* first sector of the interrupted write */
	unsigned char *if_old; /* [PROBE_INFLIGHT] what it overwrites: a known pattern */
	unsigned char *if_new; /* its data: the pattern's inverse */
	/* per experiment */
	uint64_t lost; /* outcomes where a completed write did not read back */
	uint64_t partial, torn, unreadable;
	uint64_t outcomes;
	bool shown; /* the interrupted write showed both ways of tearing: walk no further */
	bool cb_failed;
	struct bo_err *err;
};

static int check_written(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct probe *p = ctx;
	for (unsigned i = 0; i < PROBE_SECTORS; i++) {
		int rc = blk_read(st, p->lba[i], 1, p->buf);
		if (rc == -EIO) {
			/* a sector the cut left unreadable: the write did not survive */
			p->unreadable++;
			p->lost++;
			break;
		}
		if (rc) {
			p->cb_failed = true;
			return bo_errf(p->err, rc, "probe: read after a cut: %s",
			               bo_errstr(&st->err, rc));
		}
		if (memcmp(p->buf, p->mine + i * p->ss, p->ss) != 0) {
			p->lost++;
			break;
		}
	}
	p->outcomes++;
	return 0;
}

static int check_inflight(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct probe *p = ctx;
	size_t ss = p->ss;
	unsigned landed = 0;
	for (unsigned s = 0; s < PROBE_INFLIGHT; s++) {
		const unsigned char *got = p->buf + s * ss, *o = p->if_old + s * ss,
		                    *n = p->if_new + s * ss;
		/* sector by sector, so an unreadable one (a media error where the cut
		 * tore it) does not hide what its neighbour holds */
		int rc = blk_read(st, p->if_lba + s, 1, p->buf + s * ss);
		if (rc == -EIO) {
			p->unreadable++;
			p->torn++;
			continue;
		}
		if (rc) {
			p->cb_failed = true;
			return bo_errf(p->err, rc, "probe: read after a cut: %s",
			               bo_errstr(&st->err, rc));
		}
		size_t same_new = 0, same_old = 0;
		for (size_t i = 0; i < ss; i++) {
			same_new += got[i] == n[i];
			same_old += got[i] == o[i];
		}
		if (same_new == ss)
			landed++;
		else if (same_old != ss)
			p->torn++;
	}
	if (landed > 0 && landed < PROBE_INFLIGHT)
		p->partial++;
	p->outcomes++;
	/* A "yes" needs one outcome that shows it, a "no" every outcome. Once both
	 * are yes nothing is left to learn, and a disk tearing at any byte has
	 * (sector + 1)^2 outcomes for two sectors: stop. */
	if (p->partial && p->torn) {
		p->shown = true;
		return 1;
	}
	return 0;
}

/* One experiment: a fresh clone, `setup` writes on it, then every outcome of a cut. */
static int experiment(struct probe *p, int mode, uint64_t *total, bool *exhaustive)
{
	struct bdev *c;
	int rc = blk_clone(p->d, &c);
	if (rc)
		return bo_errf(p->err, rc, "probe: the stack cannot be cloned: %s",
		               bo_errstr(&p->d->err, rc));
	p->lost = p->partial = p->torn = p->outcomes = 0;
	if (mode == 3)
		p->unreadable = 0;
	p->shown = false;
	struct blk_inflight w = {.lba = p->if_lba, .count = PROBE_INFLIGHT, .data = p->if_new};
	if (mode <= 2) {
		for (unsigned i = 0; i < PROBE_SECTORS && rc == 0; i++)
			rc = blk_write(c, p->lba[i], 1, p->mine + i * p->ss,
			               mode == 2 ? BLK_FUA : 0);
		if (rc == 0 && mode == 1)
			rc = blk_flush(c);
	} else {
		/* A device that erases before it programs (cheap flash) leaves 0xFF, which
		 * is the old or the new data of a fresh, all-0xFF or all-zero device: the
		 * sectors first get contents no erase or zero-fill looks like. Idle time,
		 * not just a flush, puts them on the media of a device that lies about
		 * flushes too. */
		rc = blk_write(c, p->if_lba, PROBE_INFLIGHT, p->if_old, 0);
		if (rc == 0)
			rc = blk_flush(c);
		if (rc == 0)
			rc = blk_settle(c);
	}
	if (rc) {
		rc = bo_errf(p->err, rc, "probe: %s", bo_errstr(&c->err, rc));
		blk_close(c);
		return rc;
	}
	bool complete = false;
	int64_t n = blk_cut_foreach(c, mode == 3 ? &w : NULL, PROBE_MAX_OUTCOMES,
	                            mode == 3 ? check_inflight : check_written, p, &complete);
	if (p->shown)
		complete = true; /* every verdict of this experiment is settled */
	else if (n < 0)
		rc = p->cb_failed ? (int)n
		                  : bo_errf(p->err, (int)n, "probe: power cut: %s",
		                            bo_errstr(&c->err, (int)n));
	blk_close(c);
	*total += p->outcomes;
	*exhaustive = *exhaustive && complete;
	return rc;
}

/* ---- erase blocks, from collateral damage ----
 * Sector x (a power of two, so aligned to any erase block up to x) is written while
 * the power is cut; sectors x + 2^i and x - 1 were written and flushed before. An
 * erase block of E sectors damages x + d for d < E in some outcome and nothing
 * else: the first undamaged power of two is E. */
struct eb_probe {
	uint64_t sample[PROBE_EB_SAMPLES];
	bool damaged[PROBE_EB_SAMPLES];
	unsigned n;
	unsigned char *want, *buf;
	size_t ss;
	uint64_t outcomes;
	struct bo_err *err;
	bool cb_failed;
};

static int check_eb(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct eb_probe *e = ctx;
	for (unsigned i = 0; i < e->n; i++) {
		int rc = blk_read(st, e->sample[i], 1, e->buf);
		if (rc == -EIO) {
			/* destroyed and detected (a checksum layer, an unreadable sector) */
			e->damaged[i] = true;
			continue;
		}
		if (rc) {
			e->cb_failed = true;
			return bo_errf(e->err, rc, "probe: read after a cut: %s",
			               bo_errstr(&st->err, rc));
		}
		e->damaged[i] |= memcmp(e->buf, e->want + i * e->ss, e->ss) != 0;
	}
	e->outcomes++;
	return 0;
}

static int probe_window(struct bdev *d, uint64_t x, struct dev_probe_result *r, struct bo_err *err);

static int probe_erase_block(struct bdev *d, struct dev_probe_result *r, struct bo_err *err)
{
	uint64_t x = 1;
	if (d->nr_sectors < 8)
		return 0;
	while (x * 2 <= d->nr_sectors / 2)
		x *= 2;
	struct eb_probe e = {.ss = d->sector_size, .err = err};
	e.sample[e.n++] = x - 1;
	for (uint64_t off = 1; x + off < d->nr_sectors && e.n < PROBE_EB_SAMPLES; off *= 2)
		e.sample[e.n++] = x + off;
	e.want = malloc(e.n * e.ss);
	e.buf = malloc(2 * e.ss);
	struct bdev *c = NULL;
	int rc = e.want && e.buf ? blk_clone(d, &c) : -ENOMEM;
	for (unsigned i = 0; rc == 0 && i < e.n; i++) {
		memset(e.want + i * e.ss, 0xa5 ^ (int)i, e.ss);
		rc = blk_write(c, e.sample[i], 1, e.want + i * e.ss, 0);
	}
	if (rc == 0)
		rc = blk_flush(c);
	if (rc == 0) {
		memset(e.buf, 0x3c, e.ss);
		struct blk_inflight w = {.lba = x, .count = 1, .data = e.buf + e.ss};
		memset(e.buf + e.ss, 0x3c, e.ss);
		bool complete = false;
		int64_t n = blk_cut_foreach(c, &w, PROBE_EB_OUTCOMES, check_eb, &e, &complete);
		if (n < 0)
			rc = e.cb_failed ? (int)n
			                 : bo_errf(err, (int)n, "probe: power cut: %s",
			                           bo_errstr(&c->err, (int)n));
		r->exhaustive = r->exhaustive && complete;
		r->outcomes += e.outcomes;
	} else if (rc) {
		rc = bo_errf(err, rc, "probe: %s", c ? bo_errstr(&c->err, rc) : "cannot clone");
	}
	if (rc == 0) {
		for (unsigned i = 0; i < e.n; i++)
			r->collateral |= e.damaged[i];
		if (r->collateral) {
			/* sample 0 is x - 1, below the block; samples 1.. are x + 2^(i-1) */
			unsigned i = 1;
			while (i < e.n && e.damaged[i])
				i++;
			r->collateral_bytes = (e.sample[i < e.n ? i : e.n - 1] - x) * e.ss;
			r->collateral_at_least = i == e.n || e.damaged[0];
			r->collateral_kind = r->collateral_bytes <= 4096 && !r->collateral_at_least
			                         ? DEV_COLLATERAL_TORN_SECTOR
			                         : DEV_COLLATERAL_ERASE_BLOCK;
			/* damage that skips x's neighbours is not a block rewritten around
			 * the write: look at the whole window instead */
			if (!e.damaged[0] && !e.damaged[1]) {
				r->collateral = r->collateral_at_least = false;
				r->collateral_bytes = 0;
				r->collateral_kind = DEV_COLLATERAL_NONE;
			}
		}
	}
	/* a RAID5 write whose stripe has the missing member as its parity has no hole:
	 * try writes a chunk or more apart (8 sectors to 512 KiB), until one shows it */
	for (uint64_t off = 0;
	     rc == 0 && !r->collateral && x + off < d->nr_sectors && off * e.ss <= (512u << 10);
	     off = off ? off * 2 : 8)
		rc = probe_window(d, x + off, r, err);
	blk_close(c);
	free(e.want);
	free(e.buf);
	return rc;
}

/* ---- damage away from the write (a RAID write hole) ----
 * Every sector of a window around x gets known contents and is flushed; x is cut
 * in flight and every sector of the window is read in every outcome. Run where the
 * erase-block samples saw nothing: a degraded RAID5 loses the sector at x's offset
 * in the missing member's chunk, a chunk or more away, which those samples miss. */
#define PROBE_WINDOW_BYTES    (256u << 10) /* each side of x */
#define PROBE_WINDOW_OUTCOMES PROBE_EB_OUTCOMES

struct win_probe {
	uint64_t lo, n, x;
	size_t ss;
	unsigned char *want, *buf;
	bool *damaged;
	uint64_t outcomes;
	struct bo_err *err;
	bool cb_failed;
};

static int check_win(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct win_probe *w = ctx;
	for (uint64_t i = 0; i < w->n; i++) {
		if (w->lo + i == w->x || w->damaged[i])
			continue;
		int rc = blk_read(st, w->lo + i, 1, w->buf);
		if (rc == -EIO) {
			w->damaged[i] = true;
			continue;
		}
		if (rc) {
			w->cb_failed = true;
			return bo_errf(w->err, rc, "probe: read after a cut: %s",
			               bo_errstr(&st->err, rc));
		}
		w->damaged[i] = memcmp(w->buf, w->want + i * w->ss, w->ss) != 0;
	}
	w->outcomes++;
	return 0;
}

static void win_verdict(const struct win_probe *w, struct dev_probe_result *r)
{
	uint64_t g = 0;
	for (uint64_t i = 0; i < w->n; i++) {
		if (!w->damaged[i])
			continue;
		uint64_t dist = w->lo + i > w->x ? w->lo + i - w->x : w->x - (w->lo + i);
		uint64_t low = dist & (~dist + 1); /* largest power of two dividing it */
		g = g == 0 || low < g ? low : g;
	}
	if (g == 0)
		return;
	r->collateral = true;
	r->collateral_kind = DEV_COLLATERAL_STRIPE;
	r->collateral_bytes = g * w->ss;
	r->collateral_at_least = false;
}

static int probe_window(struct bdev *d, uint64_t x, struct dev_probe_result *r, struct bo_err *err)
{
	struct win_probe w = {.ss = d->sector_size, .x = x, .err = err};
	uint64_t side = PROBE_WINDOW_BYTES / w.ss;
	w.lo = x > side ? x - side : 0;
	w.n = (x + side < d->nr_sectors ? x + side : d->nr_sectors) - w.lo;
	w.want = malloc(w.n * w.ss);
	w.buf = malloc(w.ss);
	w.damaged = calloc(w.n, sizeof(*w.damaged));
	struct bdev *c = NULL;
	int rc = w.want && w.buf && w.damaged ? blk_clone(d, &c) : -ENOMEM;
	for (uint64_t i = 0; rc == 0 && i < w.n * w.ss; i++)
		w.want[i] = (unsigned char)(i * 131 + i / w.ss * 7 + 0x33);
	if (rc == 0)
		rc = blk_write(c, w.lo, (uint32_t)w.n, w.want, 0);
	if (rc == 0)
		rc = blk_flush(c);
	if (rc == 0) {
		unsigned char *nw = w.want + (x - w.lo) * w.ss;
		for (size_t i = 0; i < w.ss; i++)
			w.buf[i] = (unsigned char)~nw[i];
		struct blk_inflight in = {.lba = x, .count = 1, .data = w.buf};
		unsigned char *own = malloc(w.ss);
		if (!own) {
			rc = -ENOMEM;
		} else {
			memcpy(own, w.buf, w.ss);
			in.data = own;
			bool complete = false;
			int64_t n = blk_cut_foreach(c, &in, PROBE_WINDOW_OUTCOMES, check_win, &w,
			                            &complete);
			if (n < 0)
				rc = w.cb_failed ? (int)n
				                 : bo_errf(err, (int)n, "probe: power cut: %s",
				                           bo_errstr(&c->err, (int)n));
			r->exhaustive = r->exhaustive && complete;
			r->outcomes += w.outcomes;
			free(own);
		}
	} else if (rc) {
		rc = bo_errf(err, rc, "probe: %s", c ? bo_errstr(&c->err, rc) : "cannot clone");
	}
	if (rc == 0)
		win_verdict(&w, r);
	blk_close(c);
	free(w.want);
	free(w.buf);
	free(w.damaged);
	return rc;
}

int dev_probe_bdev(struct bdev *d, struct dev_probe_result *r, struct bo_err *err)
{
	memset(r, 0, sizeof(*r));
	if (d->nr_sectors < 2 * PROBE_SECTORS)
		return bo_errf(err, -EINVAL, "probe: the device has fewer than %d sectors",
		               2 * PROBE_SECTORS);
	struct probe p = {.d = d, .ss = d->sector_size, .err = err};
	size_t span = 2 * PROBE_SECTORS * p.ss;
	p.old = malloc(span);
	p.mine = malloc(span);
	p.buf = malloc(span);
	p.if_old = malloc(PROBE_INFLIGHT * p.ss);
	p.if_new = malloc(PROBE_INFLIGHT * p.ss);
	int rc = p.old && p.mine && p.buf && p.if_old && p.if_new ? 0 : -ENOMEM;
	if (rc == 0) {
		/* reading a clone leaves d alone; what it holds decides what "new" is */
		struct bdev *c;
		rc = blk_clone(d, &c);
		if (rc == 0) {
			rc = blk_read(c, 0, 2 * PROBE_SECTORS, p.old);
			blk_close(c);
		}
		if (rc)
			rc = bo_errf(err, rc, "probe: %s", bo_errstr(&d->err, rc));
	}
	if (rc == 0) {
		for (size_t i = 0; i < span; i++)
			p.mine[i] = (unsigned char)~p.old[i];
		/* written sectors are spaced out so no write-back can merge them */
		for (unsigned i = 0; i < PROBE_SECTORS; i++) {
			p.lba[i] = 2 * i + 1;
			memcpy(p.mine + i * p.ss, p.mine + (2 * i + 1) * p.ss, p.ss);
		}
	}
	r->exhaustive = true;
	if (rc == 0)
		rc = experiment(&p, 0, &r->outcomes, &r->exhaustive);
	r->volatile_cache = p.lost > 0;
	if (rc == 0)
		rc = experiment(&p, 1, &r->outcomes, &r->exhaustive);
	r->honors_flush = p.lost == 0;
	if (rc == 0)
		rc = experiment(&p, 2, &r->outcomes, &r->exhaustive);
	r->honors_fua = p.lost == 0;
	if (rc == 0) {
		/* Straddling a 64k (or the largest fitting power-of-two) boundary crosses
		 * every page, stripe and chunk boundary up to that size: a write inside one
		 * flash page is atomic and would hide that the device tears at pages. */
		uint64_t b = 4;
		while (b * 2 < d->nr_sectors && b * 2 * p.ss <= PROBE_SPAN_BYTES)
			b *= 2;
		p.if_lba = b - 1;
		for (size_t i = 0; i < PROBE_INFLIGHT * p.ss; i++) {
			/* neither 0x00 nor 0xFF throughout, and different in every sector */
			p.if_old[i] = (unsigned char)(i * 37 + i / p.ss * 101 + 0x5a);
			p.if_new[i] = (unsigned char)~p.if_old[i];
		}
		rc = experiment(&p, 3, &r->outcomes, &r->exhaustive);
	}
	r->tears_writes = p.partial > 0;
	r->tears_sectors = p.torn > 0;
	r->unreadable_sectors = p.unreadable > 0;
	/* where flushed data is lost anyway, damage says nothing about erase blocks */
	if (rc == 0 && r->honors_flush)
		rc = probe_erase_block(d, r, err);
	free(p.old);
	free(p.mine);
	free(p.buf);
	free(p.if_old);
	free(p.if_new);
	return rc;
}

int dev_probe(const struct dev_spec *s, struct dev_probe_result *r, struct bo_err *err)
{
	struct dev_cow_leaves leaves = {0};
	struct dev_open_opts o = {.wrap_leaf = dev_wrap_cow, .ctx = &leaves};
	struct bdev *d;
	int rc = dev_stack_open(s, &o, &d, err);
	if (rc == 0) {
		rc = dev_probe_bdev(d, r, err);
		blk_close(d);
	} else {
		/* every failure of the probe says so, as its experiments' do */
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "%s", bo_errstr(err, rc));
		bo_errf(err, rc, "probe: %s", m);
	}
	dev_cow_leaves_close(&leaves);
	return rc;
}
