// SPDX-License-Identifier: GPL-2.0-or-later
/* disk.c — `disk`: the media side of a drive: its sector size over a backing
 * medium, and what an interrupted write leaves (tear=none|sector|byte, torn sectors
 * mixed or unreadable, garbage). It has no cache (stack `cache > disk` for one): a
 * completed write is on the media. Outcome space: docs/models/disk.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "dev/dev_int.h"

enum { TEAR_NONE, TEAR_SECTOR, TEAR_BYTE };
enum { TORN_MIXED, TORN_UNREADABLE };

struct disk_dev {
	struct bdev dev;
	struct bdev *lower;
	uint32_t ratio; /* lower sectors per disk sector */
	int tear;
	/* tear=byte: a torn sector holds new bytes up to a multiple of tear_unit, old
	 * bytes after it (the drive writes a sector from its start). 1 = any byte. */
	uint32_t tear_unit;
	int torn_mode;
	bool garbage; /* an in-flight sector may land as bytes neither old nor new */
	/* torn=unreadable: disk sectors whose ECC a cut left wrong, sorted; reads of
	 * them fail until a write or discard covers them. Kept here, not in the
	 * medium, so a clone (a crash state) carries it. */
	uint64_t *bad;
	size_t nbad, capbad;
	uint64_t reads, writes, fua_writes, flushes, torn, garbage_sectors;
};

DEV_SINGLE_CHECK(struct disk_dev);

static int lower_err(struct disk_dev *k, int rc)
{
	return dev_single_err(&k->dev, rc);
}

/* index of the first unreadable sector >= lba */
static size_t bad_find(const struct disk_dev *k, uint64_t lba)
{
	size_t lo = 0, hi = k->nbad;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->bad[mid] < lba)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int bad_add(struct disk_dev *k, uint64_t lba)
{
	size_t i = bad_find(k, lba);
	if (i < k->nbad && k->bad[i] == lba)
		return 0;
	if (k->nbad == k->capbad) {
		size_t cap = k->capbad ? k->capbad * 2 : 8;
		uint64_t *n = realloc(k->bad, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		k->bad = n;
		k->capbad = cap;
	}
	memmove(k->bad + i + 1, k->bad + i, (k->nbad - i) * sizeof(*k->bad));
	k->bad[i] = lba;
	k->nbad++;
	return 0;
}

/* a write (or discard) of the range gives its sectors fresh ECC */
static void bad_clear(struct disk_dev *k, uint64_t lba, uint32_t count)
{
	if (k->nbad == 0)
		return; /* the common case; and k->bad may be NULL */
	size_t i = bad_find(k, lba), j = i;
	while (j < k->nbad && k->bad[j] < lba + count)
		j++;
	memmove(k->bad + i, k->bad + j, (k->nbad - j) * sizeof(*k->bad));
	k->nbad -= j - i;
}

static int disk_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct disk_dev *k = (struct disk_dev *)d;
	k->reads++;
	size_t i = bad_find(k, lba);
	if (i < k->nbad && k->bad[i] < lba + count)
		return bo_errf(&d->err, -EIO,
		               "disk: sector %llu unreadable (torn by a power cut, not rewritten "
		               "since)",
		               (unsigned long long)k->bad[i]);
	int rc = blk_read(k->lower, lba * k->ratio, count * k->ratio, buf);
	return rc ? lower_err(k, rc) : 0;
}

/* Below, unless a sector of the range was torn (its read fails). */
static bool disk_reads_zero(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct disk_dev *k = (struct disk_dev *)d;
	size_t i = bad_find(k, lba);
	if (i < k->nbad && k->bad[i] < lba + count)
		return false;
	return blk_reads_zero(k->lower, lba * k->ratio, count * k->ratio);
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
	if (rc)
		return lower_err(k, rc);
	bad_clear(k, lba, count);
	return 0;
}

/* a whole buffer written back by a cache above: handed on to the medium */
static int disk_write_swap(struct bdev *d, uint64_t lba, uint32_t count, void **buf, unsigned flags)
{
	struct disk_dev *k = (struct disk_dev *)d;
	count_write(k, flags);
	int rc = blk_write_swap(k->lower, lba * k->ratio, count * k->ratio, buf, flags);
	if (rc)
		return lower_err(k, rc);
	bad_clear(k, lba, count);
	return 0;
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
	if (rc)
		return lower_err(k, rc);
	bad_clear(k, lba, count);
	return 0;
}

static void disk_close(struct bdev *d)
{
	struct disk_dev *k = (struct disk_dev *)d;
	blk_close(k->lower);
	free(k->bad);
	free(k);
}

static int disk_clone(struct bdev *d, struct bdev **out)
{
	struct disk_dev *k = (struct disk_dev *)d;
	struct disk_dev *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *k;
	n->bad = NULL;
	n->capbad = 0;
	if (k->nbad) {
		n->bad = malloc(k->nbad * sizeof(*n->bad));
		if (!n->bad) {
			free(n);
			return -ENOMEM;
		}
		memcpy(n->bad, k->bad, k->nbad * sizeof(*n->bad));
		n->capbad = k->nbad;
	}
	int rc = blk_clone(k->lower, &n->lower);
	if (rc) {
		free(n->bad);
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

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Sector i of the in-flight write lands as garbage: bytes that depend only on the
 * sector's address (so an outcome rebuilds bit-exactly from its decisions) and
 * that are, as a whole, neither the old nor the new sector. */
static int land_garbage(struct disk_dev *k, const struct blk_inflight *w, uint32_t i,
                        unsigned char *tmp)
{
	size_t ss = k->dev.sector_size;
	const unsigned char *nw = (const unsigned char *)w->data + (size_t)i * ss;
	uint64_t sec = w->lba + i, at = sec * k->ratio;
	unsigned char *old = tmp + ss;
	int rc = blk_read(k->lower, at, k->ratio, old);
	if (rc)
		return lower_err(k, rc);
	for (size_t j = 0; j < ss; j += 8) {
		uint64_t r = mix64(sec * 0x100000001b3ull + j);
		memcpy(tmp + j, &r, 8); /* sector sizes are multiples of 8 */
	}
	if (memcmp(tmp, old, ss) == 0 || memcmp(tmp, nw, ss) == 0) {
		unsigned char b = 0;
		while (b == old[0] || b == nw[0])
			b++;
		tmp[0] = b;
	}
	k->garbage_sectors++;
	rc = blk_write(k->lower, at, k->ratio, tmp, 0);
	return rc ? lower_err(k, rc) : 0;
}

/* One sector of the in-flight write (tear=sector|byte). Values: 0 old, 1 new;
 * tear=byte with torn=mixed: v in 2..S/u torn after (v - 1) tear units; with
 * torn=unreadable: 2 unreadable; garbage=true adds the last value, garbage. */
static int cut_sector(struct disk_dev *k, struct blk_chooser *ch, const struct blk_inflight *w,
                      uint32_t i, unsigned char *tmp)
{
	size_t ss = k->dev.sector_size;
	uint64_t n = 2;
	if (k->tear == TEAR_BYTE)
		n = k->torn_mode == TORN_UNREADABLE ? 3 : 1 + ss / k->tear_unit;
	uint64_t v = blk_choose(ch, n + k->garbage,
	                        k->tear == TEAR_SECTOR ? "disk: in-flight sector old|new|garbage"
	                        : k->torn_mode == TORN_UNREADABLE
	                            ? "disk: in-flight sector old|new|unreadable|garbage"
	                            : "disk: in-flight sector old|new|torn after N bytes|garbage");
	if (v == 0)
		return 0;
	if (v == 1)
		return land(k, w, i, ss, tmp);
	if (v == n)
		return land_garbage(k, w, i, tmp);
	if (k->torn_mode == TORN_UNREADABLE) {
		/* the medium holds what a write stopped half way leaves (new then old
		 * bytes), so the state differs from "old" on the media too: the crash
		 * explorer tells states apart by their media alone */
		int rc = land(k, w, i, ss / 2, tmp);
		return rc ? rc : bad_add(k, w->lba + i);
	}
	return land(k, w, i, (size_t)k->tear_unit * (v - 1), tmp);
}

static int disk_power_cut(struct bdev *d, struct blk_chooser *ch, const struct blk_inflight *w)
{
	struct disk_dev *k = (struct disk_dev *)d;
	size_t ss = d->sector_size;
	int rc = 0;
	unsigned char *tmp = w ? malloc(2 * ss) : NULL;
	if (w && !tmp)
		return -ENOMEM;
	/* a part the medium refuses (a fault rule below) simply did not land; every
	 * decision is still asked, so the outcome space does not depend on it */
	if (w && k->tear == TEAR_NONE) {
		uint64_t v =
		    blk_choose(ch, 2 + k->garbage,
		               "disk: the in-flight write landed (nothing|all|all garbage)");
		if (v == 1)
			rc =
			    blk_write(k->lower, w->lba * k->ratio, w->count * k->ratio, w->data, 0);
		for (uint32_t i = 0; v == 2 && i < w->count && rc != -ENOMEM; i++)
			rc = land_garbage(k, w, i, tmp);
	} else if (w) {
		for (uint32_t i = 0; i < w->count && rc != -ENOMEM; i++)
			rc = cut_sector(k, ch, w, i, tmp);
	}
	free(tmp);
	if (rc == -ENOMEM)
		return lower_err(k, rc);
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
	emit(ctx, "garbage_sectors", k->garbage_sectors);
	emit(ctx, "unreadable_sectors", k->nbad);
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
    .reads_zero = disk_reads_zero,
};

static const char *const sectors[] = {"auto", "512", "4096", NULL};
static const char *const tears[] = {"none", "sector", "byte", NULL};
static const char *const torns[] = {"mixed", "unreadable", NULL};

static int disk_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                     struct bdev **out, struct bo_err *err)
{
	int sec, tear, torn;
	uint64_t unit;
	bool garbage;
	int rc = dev_arg_enum(a, "sector", sectors, &sec, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "tear", tears, &tear, err);
	if (rc == 0)
		rc = dev_arg_size(a, "tear_unit", &unit, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "torn", torns, &torn, err);
	if (rc == 0)
		rc = dev_arg_bool(a, "garbage", &garbage, err);
	if (rc)
		return rc;
	if (torn == TORN_UNREADABLE && tear != TEAR_BYTE)
		return bo_errf(err, -EINVAL,
		               "disk: torn=unreadable needs tear=byte (only tear=byte tears a "
		               "sector; tear=%s keeps every sector whole)",
		               tears[tear]);
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
	k->torn_mode = torn;
	k->garbage = garbage;
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
    {"torn", "mixed",
     "tear=byte: what a torn sector reads back as: mixed = its new then old bytes, "
     "unreadable = a media error (-EIO) until it is rewritten (its ECC no longer matches)",
     DEV_PT_ENUM, torns},
    {"garbage", "false",
     "a write in flight at a cut may also land as garbage, bytes neither old nor new, in "
     "each sector it was writing (all of them with tear=none)",
     DEV_PT_BOOL},
    {NULL},
};

const struct dev_model dev_model_disk = {
    .name = "disk",
    .summary = "drive media: sector size and how an interrupted write persists (tearing, "
               "unreadable torn sectors, garbage)",
    .params = disk_params,
    .min_lowers = 1,
    .max_lowers = 1,
    .open = disk_open,
};
