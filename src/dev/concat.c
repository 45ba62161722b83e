// SPDX-License-Identifier: GPL-2.0-or-later
/* concat.c — `concat`: lower devices laid end to end (like dm-linear), the
 * simplest model with several lowers. No volatile state of its own; a power cut
 * hands each lower the part of the in-flight write that falls on it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"

#define CONCAT_MAX 64

struct concat_dev {
	struct bdev dev;
	unsigned n;
	struct bdev *lower[CONCAT_MAX];
	uint64_t start[CONCAT_MAX + 1]; /* first LBA of each lower; start[n] = end */
	uint64_t reads, writes, fua_writes, flushes;
};

static unsigned which(const struct concat_dev *c, uint64_t lba)
{
	unsigned lo = 0, hi = c->n - 1;
	while (lo < hi) {
		unsigned mid = (lo + hi + 1) / 2;
		if (c->start[mid] <= lba)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Splits [lba, lba+count) at lower boundaries and calls fn for each piece. */
static int split(struct concat_dev *c, uint64_t lba, uint32_t count, const unsigned char *buf,
                 int (*fn)(struct concat_dev *, unsigned, uint64_t, uint32_t, const unsigned char *,
                           void *),
                 void *ctx)
{
	size_t ss = c->dev.sector_size;
	while (count) {
		unsigned i = which(c, lba);
		uint64_t room = c->start[i + 1] - lba;
		uint32_t n = room < count ? (uint32_t)room : count;
		int rc = fn(c, i, lba - c->start[i], n, buf, ctx);
		if (rc)
			return rc;
		lba += n;
		count -= n;
		if (buf) /* a discard has no buffer */
			buf += (size_t)n * ss;
	}
	return 0;
}

static int piece_read(struct concat_dev *c, unsigned i, uint64_t lba, uint32_t n,
                      const unsigned char *buf, void *ctx)
{
	(void)ctx;
	int rc = blk_read(c->lower[i], lba, n, (void *)buf);
	return rc ? bo_errf(&c->dev.err, rc, "concat: lower %u: %s", i,
	                    bo_errstr(&c->lower[i]->err, rc))
	          : 0;
}

static int piece_write(struct concat_dev *c, unsigned i, uint64_t lba, uint32_t n,
                       const unsigned char *buf, void *ctx)
{
	int rc = blk_write(c->lower[i], lba, n, buf, *(unsigned *)ctx);
	return rc ? bo_errf(&c->dev.err, rc, "concat: lower %u: %s", i,
	                    bo_errstr(&c->lower[i]->err, rc))
	          : 0;
}

static int piece_discard(struct concat_dev *c, unsigned i, uint64_t lba, uint32_t n,
                         const unsigned char *buf, void *ctx)
{
	(void)buf;
	(void)ctx;
	return blk_discard(c->lower[i], lba, n);
}

struct cut_ctx {
	struct blk_inflight part[CONCAT_MAX];
	bool has[CONCAT_MAX];
};

static int piece_cut(struct concat_dev *c, unsigned i, uint64_t lba, uint32_t n,
                     const unsigned char *buf, void *ctx)
{
	(void)c;
	struct cut_ctx *k = ctx;
	k->part[i] = (struct blk_inflight){.lba = lba, .count = n, .data = buf};
	k->has[i] = true;
	return 0;
}

static int concat_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct concat_dev *c = (struct concat_dev *)d;
	c->reads++;
	return split(c, lba, count, buf, piece_read, NULL);
}

static int concat_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf,
                        unsigned flags)
{
	struct concat_dev *c = (struct concat_dev *)d;
	c->writes++;
	if (flags & BLK_FUA)
		c->fua_writes++;
	return split(c, lba, count, buf, piece_write, &flags);
}

static int concat_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	return split((struct concat_dev *)d, lba, count, NULL, piece_discard, NULL);
}

static int concat_flush(struct bdev *d)
{
	struct concat_dev *c = (struct concat_dev *)d;
	c->flushes++;
	for (unsigned i = 0; i < c->n; i++) {
		int rc = blk_flush(c->lower[i]);
		if (rc)
			return bo_errf(&d->err, rc, "concat: lower %u: %s", i,
			               bo_errstr(&c->lower[i]->err, rc));
	}
	return 0;
}

static void concat_close(struct bdev *d)
{
	struct concat_dev *c = (struct concat_dev *)d;
	for (unsigned i = 0; i < c->n; i++)
		blk_close(c->lower[i]);
	free(c);
}

static int concat_clone(struct bdev *d, struct bdev **out)
{
	struct concat_dev *c = (struct concat_dev *)d;
	struct concat_dev *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *c;
	for (unsigned i = 0; i < c->n; i++) {
		int rc = blk_clone(c->lower[i], &n->lower[i]);
		if (rc) {
			for (unsigned j = 0; j < i; j++)
				blk_close(n->lower[j]);
			free(n);
			return bo_errf(&d->err, rc, "concat: lower %u: %s", i,
			               bo_errstr(&c->lower[i]->err, rc));
		}
	}
	*out = &n->dev;
	return 0;
}

static int concat_power_cut(struct bdev *d, struct blk_chooser *ch,
                            const struct blk_inflight *inflight)
{
	struct concat_dev *c = (struct concat_dev *)d;
	struct cut_ctx k;
	memset(k.has, 0, sizeof(k.has));
	if (inflight)
		split(c, inflight->lba, inflight->count, inflight->data, piece_cut, &k);
	for (unsigned i = 0; i < c->n; i++) {
		if (k.has[i])
			k.part[i].flags = inflight->flags;
		int rc = blk_power_cut(c->lower[i], ch, k.has[i] ? &k.part[i] : NULL);
		if (rc)
			return rc;
	}
	return 0;
}

static int concat_power_restore(struct bdev *d)
{
	struct concat_dev *c = (struct concat_dev *)d;
	for (unsigned i = 0; i < c->n; i++) {
		int rc = blk_power_restore(c->lower[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static struct bdev *concat_lower(struct bdev *d, unsigned i)
{
	struct concat_dev *c = (struct concat_dev *)d;
	return i < c->n ? c->lower[i] : NULL;
}

static void concat_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct concat_dev *c = (struct concat_dev *)d;
	emit(ctx, "reads", c->reads);
	emit(ctx, "writes", c->writes);
	emit(ctx, "fua_writes", c->fua_writes);
	emit(ctx, "flushes", c->flushes);
}

static const struct bdev_ops concat_ops = {
    .read = concat_read,
    .write = concat_write,
    .flush = concat_flush,
    .discard = concat_discard,
    .close = concat_close,
    .clone = concat_clone,
    .power_cut = concat_power_cut,
    .power_restore = concat_power_restore,
    .lower = concat_lower,
    .stats = concat_stats,
};

static int concat_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                       struct bdev **out, struct bo_err *err)
{
	(void)a;
	if (nlowers < 1 || nlowers > CONCAT_MAX)
		return bo_errf(err, -EINVAL, "concat: takes 1 to %d lower devices", CONCAT_MAX);
	struct concat_dev *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	uint64_t total = 0;
	for (unsigned i = 0; i < nlowers; i++) {
		if (lowers[i]->sector_size != lowers[0]->sector_size) {
			free(c);
			return bo_errf(err, -EINVAL,
			               "concat: lower %u has %u-byte sectors, lower 0 has %u", i,
			               lowers[i]->sector_size, lowers[0]->sector_size);
		}
		c->lower[i] = lowers[i];
		c->start[i] = total;
		total += lowers[i]->nr_sectors;
	}
	c->n = nlowers;
	c->start[nlowers] = total;
	blk_init(&c->dev, &concat_ops, "concat", lowers[0]->sector_size, total);
	*out = &c->dev;
	return 0;
}

static const struct dev_param concat_params[] = {{NULL}};

const struct dev_model dev_model_concat = {
    .name = "concat",
    .summary = "lower devices end to end (dm-linear); adds no volatility of its own",
    .params = concat_params,
    .min_lowers = 1,
    .max_lowers = CONCAT_MAX,
    .open = concat_open,
};
