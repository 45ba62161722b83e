// SPDX-License-Identifier: GPL-2.0-or-later
/* blk.c — the checked entry points of the block-device interface and the power-cut
 * choosers. Every range and alignment check lives here, so no backend or model has
 * to repeat it and none can forget it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/util.h"

int blk_init(struct bdev *d, const struct bdev_ops *ops, const char *name, uint32_t sector_size,
             uint64_t nr_sectors)
{
	memset(d, 0, sizeof(*d));
	d->ops = ops;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (sector_size != 512 && sector_size != 4096)
		return bo_errf(&d->err, -EINVAL, "%s: sector size %u (must be 512 or 4096)", name,
		               sector_size);
	d->sector_size = sector_size;
	d->nr_sectors = nr_sectors;
	return 0;
}

static int check_range(struct bdev *d, const char *op, uint64_t lba, uint32_t count)
{
	if (count == 0 || lba >= d->nr_sectors || count > d->nr_sectors - lba)
		return bo_errf(&d->err, -EINVAL,
		               "%s: %s of %u sectors at %llu is outside the device (%llu sectors)",
		               d->name, op, count, (unsigned long long)lba,
		               (unsigned long long)d->nr_sectors);
	if (d->powered_off)
		return bo_errf(&d->err, -EIO, "%s: %s after a power cut (device is off)", d->name,
		               op);
	return 0;
}

int blk_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	int rc = check_range(d, "read", lba, count);
	return rc ? rc : d->ops->read(d, lba, count, buf);
}

static int check_write(struct bdev *d, uint64_t lba, uint32_t count, unsigned flags)
{
	int rc = check_range(d, "write", lba, count);
	if (rc)
		return rc;
	if (d->read_only)
		return bo_errf(&d->err, -EROFS, "%s: write to a read-only device", d->name);
	if (flags & ~(unsigned)BLK_FUA)
		return bo_errf(&d->err, -EINVAL, "%s: unknown write flags 0x%x", d->name, flags);
	return 0;
}

int blk_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	int rc = check_write(d, lba, count, flags);
	return rc ? rc : d->ops->write(d, lba, count, buf, flags);
}

int blk_write_swap(struct bdev *d, uint64_t lba, uint32_t count, void **buf, unsigned flags)
{
	if (!d->ops->write_swap)
		return blk_write(d, lba, count, *buf, flags);
	int rc = check_write(d, lba, count, flags);
	return rc ? rc : d->ops->write_swap(d, lba, count, buf, flags);
}

int blk_flush(struct bdev *d)
{
	if (d->powered_off)
		return bo_errf(&d->err, -EIO, "%s: flush after a power cut (device is off)",
		               d->name);
	return d->ops->flush ? d->ops->flush(d) : 0;
}

int blk_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	int rc = check_range(d, "discard", lba, count);
	if (rc)
		return rc;
	if (d->read_only)
		return bo_errf(&d->err, -EROFS, "%s: discard on a read-only device", d->name);
	return d->ops->discard ? d->ops->discard(d, lba, count) : 0;
}

bool blk_reads_zero(struct bdev *d, uint64_t lba, uint32_t count)
{
	if (count == 0 || lba >= d->nr_sectors || count > d->nr_sectors - lba || d->powered_off)
		return false;
	return d->ops->reads_zero && d->ops->reads_zero(d, lba, count);
}

void blk_close(struct bdev *d)
{
	if (d)
		d->ops->close(d);
}

int blk_clone(struct bdev *d, struct bdev **out)
{
	*out = NULL;
	if (!d->ops->clone)
		return bo_errf(&d->err, -EOPNOTSUPP, "%s: this device cannot be cloned", d->name);
	return d->ops->clone(d, out);
}

int blk_power_cut(struct bdev *d, struct blk_chooser *ch, const struct blk_inflight *inflight)
{
	if (d->powered_off)
		return 0;
	if (inflight) {
		int rc = check_range(d, "in-flight write", inflight->lba, inflight->count);
		if (rc)
			return rc;
	}
	int rc = d->ops->power_cut ? d->ops->power_cut(d, ch, inflight) : 0;
	/* A medium without volatile state persists an in-flight write sector by
	 * sector in order, cut at a chosen sector: the plainest physical model. Models
	 * with opinions (disk: tearing, flash: micro-steps) implement power_cut. */
	if (!d->ops->power_cut && inflight) {
		uint64_t done = blk_choose(ch, (uint64_t)inflight->count + 1,
		                           "media: sectors of the in-flight write that landed");
		if (done)
			rc = d->ops->write(d, inflight->lba, (uint32_t)done, inflight->data, 0);
	}
	d->powered_off = true;
	return rc;
}

int blk_power_restore(struct bdev *d)
{
	if (!d->powered_off)
		return 0;
	/* lower devices first, so a model rebuilding its state at power-on (a flash
	 * FTL scanning its map, an array reading its bitmap) reads powered media */
	int rc = 0;
	for (unsigned i = 0; rc == 0; i++) {
		struct bdev *l = blk_lower(d, i);
		if (!l)
			break;
		rc = blk_power_restore(l);
	}
	if (rc == 0 && d->ops->power_restore)
		rc = d->ops->power_restore(d);
	if (rc == 0)
		d->powered_off = false;
	return rc;
}

static int check_bytes(struct bdev *d, const char *op, uint64_t off, size_t len)
{
	if (off % d->sector_size || len % d->sector_size)
		return bo_errf(&d->err, -EINVAL,
		               "%s: %s of %zu bytes at byte %llu is not aligned to %u-byte sectors",
		               d->name, op, len, (unsigned long long)off, d->sector_size);
	if (len / d->sector_size > UINT32_MAX)
		return bo_errf(&d->err, -EINVAL, "%s: %s of %zu bytes is too large", d->name, op,
		               len);
	return 0;
}

int blk_pread(struct bdev *d, uint64_t off, size_t len, void *buf)
{
	int rc = check_bytes(d, "read", off, len);
	return rc ? rc : blk_read(d, off / d->sector_size, (uint32_t)(len / d->sector_size), buf);
}

int blk_pwrite(struct bdev *d, uint64_t off, size_t len, const void *buf, unsigned flags)
{
	int rc = check_bytes(d, "write", off, len);
	return rc ? rc
	          : blk_write(d, off / d->sector_size, (uint32_t)(len / d->sector_size), buf,
	                      flags);
}

/* ---- choosers ------------------------------------------------------------- */

static uint64_t zero_choose(struct blk_chooser *c, uint64_t n, const char *what)
{
	(void)c;
	(void)n;
	(void)what;
	return 0;
}
struct blk_chooser blk_chooser_zero = {.choose = zero_choose};

static uint64_t random_choose(struct blk_chooser *c, uint64_t n, const char *what)
{
	struct blk_chooser_random *r = (struct blk_chooser_random *)c;
	(void)what;
	struct bo_rng rng;
	/* one splitmix step per decision keeps the state a single word */
	bo_rng_seed(&rng, r->state++);
	return bo_rng_below(&rng, n);
}

void blk_chooser_random_init(struct blk_chooser_random *c, uint64_t seed)
{
	c->base.choose = random_choose;
	c->state = seed * 0x9e3779b97f4a7c15ull + 1;
}

static uint64_t list_choose(struct blk_chooser *c, uint64_t n, const char *what)
{
	struct blk_chooser_list *l = (struct blk_chooser_list *)c;
	(void)what;
	if (l->pos >= BLK_CHOICES_MAX) {
		l->overflow = true;
		return 0;
	}
	uint64_t v = l->pos < l->len ? l->v[l->pos] : 0;
	if (v >= n)
		v = n - 1;
	l->v[l->pos] = v;
	l->n[l->pos] = n;
	l->pos++;
	if (l->pos > l->len)
		l->len = l->pos;
	return v;
}

void blk_chooser_list_init(struct blk_chooser_list *c, const uint64_t *v, uint32_t len)
{
	c->base.choose = list_choose;
	if (len > BLK_CHOICES_MAX)
		len = BLK_CHOICES_MAX;
	c->len = len;
	c->pos = 0;
	c->overflow = false;
	if (len)
		memcpy(c->v, v, len * sizeof(*v));
}

void blk_chooser_dfs_init(struct blk_chooser_dfs *c)
{
	blk_chooser_list_init(&c->list, NULL, 0);
}

void blk_chooser_dfs_rewind(struct blk_chooser_dfs *c)
{
	c->list.pos = 0;
	c->list.overflow = false;
}

bool blk_chooser_dfs_next(struct blk_chooser_dfs *c)
{
	struct blk_chooser_list *l = &c->list;
	/* The run just made asked l->pos decisions; anything recorded past that came
	 * from a previous, longer path and is stale. Odometer on what was asked. */
	uint32_t i = l->pos;
	while (i > 0) {
		i--;
		if (l->v[i] + 1 < l->n[i]) {
			l->v[i]++;
			l->len = i + 1;
			l->pos = 0;
			return true;
		}
	}
	l->len = 0;
	l->pos = 0;
	return false;
}

struct bdev *blk_lower(struct bdev *d, unsigned i)
{
	return d && d->ops->lower ? d->ops->lower(d, i) : NULL;
}

void blk_stats(struct bdev *d, void (*emit)(void *ctx, const char *key, uint64_t v), void *ctx)
{
	if (d && d->ops->stats)
		d->ops->stats(d, emit, ctx);
}

int64_t blk_cut_foreach(struct bdev *d, const struct blk_inflight *inflight, uint64_t max,
                        int (*fn)(void *ctx, struct bdev *state,
                                  const struct blk_chooser_list *decisions),
                        void *ctx, bool *complete)
{
	struct blk_chooser_dfs *dfs = malloc(sizeof(*dfs));
	if (!dfs)
		return -ENOMEM;
	blk_chooser_dfs_init(dfs);
	int64_t visited = 0;
	bool more = true;
	int rc = 0;
	while (more && (uint64_t)visited < max) {
		struct bdev *state;
		rc = blk_clone(d, &state);
		if (rc)
			break;
		blk_chooser_dfs_rewind(dfs);
		rc = blk_power_cut(state, &dfs->list.base, inflight);
		if (rc == 0)
			rc = blk_power_restore(state);
		if (rc == 0 && dfs->list.overflow)
			rc =
			    bo_errf(&d->err, -E2BIG, "%s: a power cut asked more than %d decisions",
			            d->name, BLK_CHOICES_MAX);
		if (rc == 0)
			rc = fn(ctx, state, &dfs->list);
		blk_close(state);
		if (rc)
			break;
		visited++;
		more = blk_chooser_dfs_next(dfs);
	}
	free(dfs);
	if (complete)
		*complete = !more;
	return rc < 0 ? rc : rc > 0 ? rc : visited;
}

int blk_settle(struct bdev *d)
{
	if (d->powered_off)
		return bo_errf(&d->err, -EIO, "%s: settle after a power cut (device is off)",
		               d->name);
	int rc = d->ops->settle ? d->ops->settle(d) : 0;
	for (unsigned i = 0; rc == 0; i++) {
		struct bdev *l = blk_lower(d, i);
		if (!l)
			break;
		rc = blk_settle(l);
	}
	return rc;
}
