/* disk.c — `disk`: the media side of a drive: its sector size over a backing
 * medium, and what an interrupted write leaves (tear=none|sector|byte). It has no
 * cache (stack `cache > disk` for one): a completed write is on the media.
 * Outcome space: docs/models/disk.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "dev/internal.h"

enum { TEAR_NONE, TEAR_SECTOR, TEAR_BYTE };

struct disk_dev {
	struct bdev dev;
	struct bdev *lower;
	uint32_t ratio; /* lower sectors per disk sector */
	int tear;
	/* tear=byte: a torn sector holds new bytes up to a multiple of tear_unit, old
	 * bytes after it (the drive writes a sector from its start). 1 = any byte. */
	uint32_t tear_unit;
	uint64_t reads, writes, fua_writes, flushes, torn;
};

DEV_SINGLE_CHECK(struct disk_dev);

static int lower_err(struct disk_dev *k, int rc)
{
	return dev_single_err(&k->dev, rc);
}

static int disk_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct disk_dev *k = (struct disk_dev *)d;
	k->reads++;
	int rc = blk_read(k->lower, lba * k->ratio, count * k->ratio, buf);
	return rc ? lower_err(k, rc) : 0;
}

static void count_write(struct disk_dev *k, unsigned flags)
{
	k->writes++;
	if (flags & BLK_FUA)
		k->fua_writes++;
}

static int disk_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct disk_dev *k = (struct disk_dev *)d;
	count_write(k, flags);
	int rc = blk_write(k->lower, lba * k->ratio, count * k->ratio, buf, flags);
	return rc ? lower_err(k, rc) : 0;
}

/* a whole buffer written back by a cache above: handed on to the medium */
static int disk_write_swap(struct bdev *d, uint64_t lba, uint32_t count, void **buf, unsigned flags)
{
	struct disk_dev *k = (struct disk_dev *)d;
	count_write(k, flags);
	int rc = blk_write_swap(k->lower, lba * k->ratio, count * k->ratio, buf, flags);
	return rc ? lower_err(k, rc) : 0;
}

static int disk_flush(struct bdev *d)
{
	((struct disk_dev *)d)->flushes++;
	return dev_single_flush(d);
}

static int disk_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct disk_dev *k = (struct disk_dev *)d;
	int rc = blk_discard(k->lower, lba * k->ratio, count * k->ratio);
	return rc ? lower_err(k, rc) : 0;
}

static void disk_close(struct bdev *d)
{
	struct disk_dev *k = (struct disk_dev *)d;
	blk_close(k->lower);
	free(k);
}

static int disk_clone(struct bdev *d, struct bdev **out)
{
	struct disk_dev *k = (struct disk_dev *)d;
	struct disk_dev *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *k;
	int rc = blk_clone(k->lower, &n->lower);
	if (rc) {
		free(n);
		return lower_err(k, rc);
	}
	*out = &n->dev;
	return 0;
}

/* Persists sector i of the in-flight write: whole, or torn after `keep` bytes. */
static int land(struct disk_dev *k, const struct blk_inflight *w, uint32_t i, size_t keep,
                unsigned char *tmp)
{
	size_t ss = k->dev.sector_size;
	const unsigned char *src = (const unsigned char *)w->data + (size_t)i * ss;
	uint64_t at = (w->lba + i) * k->ratio;
	if (keep < ss) {
		int rc = blk_read(k->lower, at, k->ratio, tmp);
		if (rc)
			return lower_err(k, rc);
		memcpy(tmp, src, keep);
		src = tmp;
		k->torn++;
	}
	int rc = blk_write(k->lower, at, k->ratio, src, 0);
	return rc ? lower_err(k, rc) : 0;
}

static int disk_power_cut(struct bdev *d, struct blk_chooser *ch, const struct blk_inflight *w)
{
	struct disk_dev *k = (struct disk_dev *)d;
	size_t ss = d->sector_size;
	int rc = 0;
	/* a part the medium refuses (a fault rule below) simply did not land; every
	 * decision is still asked, so the outcome space does not depend on it */
	if (w && k->tear == TEAR_NONE) {
		if (blk_choose(ch, 2, "disk: the in-flight write landed (all or nothing)"))
			rc =
			    blk_write(k->lower, w->lba * k->ratio, w->count * k->ratio, w->data, 0);
		if (rc == -ENOMEM)
			return lower_err(k, rc);
	} else if (w) {
		unsigned char *tmp = malloc(ss);
		if (!tmp)
			return -ENOMEM;
		for (uint32_t i = 0; i < w->count && rc != -ENOMEM; i++) {
			if (k->tear == TEAR_SECTOR) {
				if (blk_choose(ch, 2, "disk: in-flight sector landed"))
					rc = land(k, w, i, ss, tmp);
				continue;
			}
			/* 0 old, 1 new, v >= 2 torn after (v - 1) tear units */
			uint64_t v =
			    blk_choose(ch, 1 + ss / k->tear_unit,
			               "disk: in-flight sector old|new|torn after N bytes");
			if (v == 1)
				rc = land(k, w, i, ss, tmp);
			else if (v >= 2)
				rc = land(k, w, i, (size_t)k->tear_unit * (v - 1), tmp);
		}
		free(tmp);
		if (rc == -ENOMEM)
			return rc;
	}
	return blk_power_cut(k->lower, ch, NULL);
}

static void disk_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct disk_dev *k = (struct disk_dev *)d;
	emit(ctx, "reads", k->reads);
	emit(ctx, "writes", k->writes);
	emit(ctx, "fua_writes", k->fua_writes);
	emit(ctx, "flushes", k->flushes);
	emit(ctx, "torn_sectors", k->torn);
}

static const struct bdev_ops disk_ops = {
    .read = disk_read,
    .write = disk_write,
    .write_swap = disk_write_swap,
    .flush = disk_flush,
    .discard = disk_discard,
    .close = disk_close,
    .clone = disk_clone,
    .power_cut = disk_power_cut,
    .power_restore = dev_single_power_restore,
    .lower = dev_single_lower,
    .stats = disk_stats,
};

static const char *const sectors[] = {"auto", "512", "4096", NULL};
static const char *const tears[] = {"none", "sector", "byte", NULL};

static int disk_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                     struct bdev **out, struct bo_err *err)
{
	int sec, tear;
	uint64_t unit;
	int rc = dev_arg_enum(a, "sector", sectors, &sec, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "tear", tears, &tear, err);
	if (rc == 0)
		rc = dev_arg_size(a, "tear_unit", &unit, err);
	if (rc)
		return rc;
	if (nlowers != 1)
		return bo_errf(err, -EINVAL, "disk: takes one lower device");
	struct bdev *lower = lowers[0];
	uint32_t ss = sec == 1 ? 512 : sec == 2 ? 4096 : lower->sector_size;
	if (ss < lower->sector_size)
		return bo_errf(err, -EINVAL,
		               "disk: %u-byte sectors cannot stand on a medium of %u-byte sectors",
		               ss, lower->sector_size);
	if (unit == 0 || unit >= ss || (unit & (unit - 1)))
		return bo_errf(err, -EINVAL,
		               "disk: tear_unit=%llu: must be a power of two smaller than the "
		               "%u-byte sector",
		               (unsigned long long)unit, ss);
	struct disk_dev *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->ratio = ss / lower->sector_size;
	if (lower->nr_sectors / k->ratio == 0) {
		free(k);
		return bo_errf(err, -EINVAL, "disk: the medium is smaller than one sector");
	}
	blk_init(&k->dev, &disk_ops, "disk", ss, lower->nr_sectors / k->ratio);
	k->tear = tear;
	k->tear_unit = (uint32_t)unit;
	k->lower = lower;
	*out = &k->dev;
	return 0;
}

static const struct dev_param disk_params[] = {
    {"sector", "auto", "sector size: auto (the medium's)|512|4096", DEV_PT_ENUM, sectors},
    {"tear", "none",
     "an interrupted write: none = all or nothing, sector = any subset of its sectors, "
     "byte = and a sector may be torn (ATOMIC-SECTORS violated)",
     DEV_PT_ENUM, tears},
    {"tear_unit", "1",
     "tear=byte: a torn sector is new up to a multiple of this many bytes, old after it "
     "(1 = any byte)",
     DEV_PT_SIZE},
    {NULL},
};

const struct dev_model dev_model_disk = {
    .name = "disk",
    .summary = "drive media: sector size and how an interrupted write persists (tearing)",
    .params = disk_params,
    .min_lowers = 1,
    .max_lowers = 1,
    .open = disk_open,
};
