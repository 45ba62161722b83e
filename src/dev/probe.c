/* probe.c — the black-box probe behind `blackout stack probe`: like diskchecker,
 * it learns what a stack does with flushes, FUA and interrupted writes only by
 * writing, flushing and cutting power (every outcome, through clones), never by
 * reading the stack's parameters. Each experiment runs on a fresh clone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"

#define PROBE_MAX_OUTCOMES (1u << 16)
#define PROBE_SECTORS      4 /* written by the cache experiments */
#define PROBE_INFLIGHT     2 /* sectors of the interrupted write */

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
	/* per experiment */
	uint64_t lost; /* outcomes where a completed write did not read back */
	uint64_t partial, torn;
	uint64_t outcomes;
	bool cb_failed;
	struct bo_err *err;
};

static int check_written(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct probe *p = ctx;
	for (unsigned i = 0; i < PROBE_SECTORS; i++) {
		int rc = blk_read(st, p->lba[i], 1, p->buf);
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
	int rc = blk_read(st, 0, PROBE_INFLIGHT, p->buf);
	if (rc) {
		p->cb_failed = true;
		return bo_errf(p->err, rc, "probe: read after a cut: %s", bo_errstr(&st->err, rc));
	}
	for (unsigned s = 0; s < PROBE_INFLIGHT; s++) {
		const unsigned char *got = p->buf + s * ss, *o = p->old + s * ss,
		                    *n = p->mine + s * ss;
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
	struct blk_inflight w = {.lba = 0, .count = PROBE_INFLIGHT, .data = p->mine};
	if (mode <= 2) {
		for (unsigned i = 0; i < PROBE_SECTORS && rc == 0; i++)
			rc = blk_write(c, p->lba[i], 1, p->mine + i * p->ss,
			               mode == 2 ? BLK_FUA : 0);
		if (rc == 0 && mode == 1)
			rc = blk_flush(c);
		if (rc) {
			rc = bo_errf(p->err, rc, "probe: %s", bo_errstr(&c->err, rc));
			blk_close(c);
			return rc;
		}
	}
	bool complete = false;
	int64_t n = blk_cut_foreach(c, mode == 3 ? &w : NULL, PROBE_MAX_OUTCOMES,
	                            mode == 3 ? check_inflight : check_written, p, &complete);
	if (n < 0)
		rc = p->cb_failed ? (int)n
		                  : bo_errf(p->err, (int)n, "probe: power cut: %s",
		                            bo_errstr(&c->err, (int)n));
	blk_close(c);
	*total += p->outcomes;
	*exhaustive = *exhaustive && complete;
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
	int rc = p.old && p.mine && p.buf ? 0 : -ENOMEM;
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
		/* the in-flight data: the inverse of sectors 0 and 1 as they were */
		for (size_t i = 0; i < PROBE_INFLIGHT * p.ss; i++)
			p.mine[i] = (unsigned char)~p.old[i];
		rc = experiment(&p, 3, &r->outcomes, &r->exhaustive);
	}
	r->tears_writes = p.partial > 0;
	r->tears_sectors = p.torn > 0;
	free(p.old);
	free(p.mine);
	free(p.buf);
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
	}
	dev_cow_leaves_close(&leaves);
	return rc;
}
