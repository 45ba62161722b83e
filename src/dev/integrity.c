// SPDX-License-Identifier: GPL-2.0-or-later
/* integrity.c — `integrity`: a dm-integrity-like layer: a CRC32C tag per sector kept
 * in tag areas interleaved with the data on the lower device, so a sector whose data
 * and tag disagree (torn, erased by a neighbour's write) reads as an error, never as
 * other bytes. mode=journal makes data and tag atomic at a cut; mode=direct does not.
 * Layout and outcome space: docs/models/integrity.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/util.h"
#include "dev/dev_int.h"

#define TAG_BYTES 4
#define SB_MAGIC  "blkintg1"

enum { MODE_JOURNAL, MODE_DIRECT };

struct integ_dev {
	struct bdev dev;
	struct bdev *lower;
	int mode;
	uint64_t interleave; /* data sectors per group */
	uint64_t tag_secs;   /* tag sectors at the start of each group */
	/* mode=journal: a committed write whose copy home a cut interrupted; replayed
	 * (data and tags) when the power comes back, as dm-integrity replays its journal */
	struct blk_inflight replay;
	void *replay_data;
	uint64_t reads, writes, flushes, mismatches, replays;
};

DEV_SINGLE_CHECK(struct integ_dev);

static uint64_t group_start(const struct integ_dev *k, uint64_t g)
{
	return 1 + g * (k->tag_secs + k->interleave); /* lower sector 0: the superblock */
}

static uint64_t data_lba(const struct integ_dev *k, uint64_t lba)
{
	return group_start(k, lba / k->interleave) + k->tag_secs + lba % k->interleave;
}

/* the tag sector (lower lba) holding sector lba's tag, and the byte offset in it */
static uint64_t tag_lba(const struct integ_dev *k, uint64_t lba, size_t *off)
{
	uint64_t byte = (lba % k->interleave) * TAG_BYTES;
	*off = byte % k->dev.sector_size;
	return group_start(k, lba / k->interleave) + byte / k->dev.sector_size;
}

static uint32_t tag_of(const void *sector, size_t ss)
{
	return crc32c(sector, ss);
}

/* sectors from lba that stay inside its group (contiguous on the lower device) */
static uint32_t run_len(const struct integ_dev *k, uint64_t lba, uint32_t count)
{
	uint64_t left = k->interleave - lba % k->interleave;
	return count < left ? count : (uint32_t)left;
}

static int lerr(struct integ_dev *k, int rc)
{
	return dev_single_err(&k->dev, rc);
}

static int integ_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct integ_dev *k = (struct integ_dev *)d;
	size_t ss = d->sector_size;
	unsigned char *tag = malloc(ss);
	if (!tag)
		return -ENOMEM;
	k->reads++;
	int rc = 0;
	uint64_t have = UINT64_MAX;
	for (uint32_t done = 0; rc == 0 && done < count;) {
		uint32_t n = run_len(k, lba + done, count - done);
		unsigned char *p = (unsigned char *)buf + (size_t)done * ss;
		rc = blk_read(k->lower, data_lba(k, lba + done), n, p);
		for (uint32_t i = 0; rc == 0 && i < n; i++) {
			size_t off;
			uint64_t t = tag_lba(k, lba + done + i, &off);
			if (t != have && (rc = blk_read(k->lower, t, 1, tag)) == 0)
				have = t;
			if (rc == 0 && get_le32(tag + off) != tag_of(p + (size_t)i * ss, ss)) {
				k->mismatches++;
				rc = bo_errf(&d->err, -EIO,
				             "integrity: sector %llu: checksum mismatch (data and "
				             "tag disagree)",
				             (unsigned long long)(lba + done + i));
				free(tag);
				return rc;
			}
		}
		done += n;
	}
	free(tag);
	return rc ? lerr(k, rc) : 0;
}

/* Writes the tags of `count` sectors of `data` from lba (inside one group):
 * read-modify-write of each tag sector they touch. */
static int write_tags(struct integ_dev *k, uint64_t lba, uint32_t count, const void *data,
                      unsigned flags)
{
	size_t ss = k->dev.sector_size;
	unsigned char *tag = malloc(ss);
	if (!tag)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < count;) {
		size_t off;
		uint64_t t = tag_lba(k, lba + i, &off);
		rc = blk_read(k->lower, t, 1, tag);
		for (; rc == 0 && i < count; i++) {
			size_t o;
			if (tag_lba(k, lba + i, &o) != t)
				break;
			put_le32(tag + o, tag_of((const unsigned char *)data + (size_t)i * ss, ss));
		}
		if (rc == 0)
			rc = blk_write(k->lower, t, 1, tag, flags);
	}
	free(tag);
	return rc;
}

/* data, then tags, group by group (dm-integrity's direct mode order) */
static int write_both(struct integ_dev *k, uint64_t lba, uint32_t count, const void *buf,
                      unsigned flags)
{
	size_t ss = k->dev.sector_size;
	int rc = 0;
	for (uint32_t done = 0; rc == 0 && done < count;) {
		uint32_t n = run_len(k, lba + done, count - done);
		const unsigned char *p = (const unsigned char *)buf + (size_t)done * ss;
		rc = blk_write(k->lower, data_lba(k, lba + done), n, p, flags);
		if (rc == 0)
			rc = write_tags(k, lba + done, n, p, flags);
		done += n;
	}
	return rc;
}

static int integ_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf,
                       unsigned flags)
{
	struct integ_dev *k = (struct integ_dev *)d;
	k->writes++;
	int rc = write_both(k, lba, count, buf, flags);
	return rc ? lerr(k, rc) : 0;
}

static int integ_flush(struct bdev *d)
{
	((struct integ_dev *)d)->flushes++;
	return dev_single_flush(d);
}

static void integ_close(struct bdev *d)
{
	struct integ_dev *k = (struct integ_dev *)d;
	blk_close(k->lower);
	free(k->replay_data);
	free(k);
}

static int integ_clone(struct bdev *d, struct bdev **out)
{
	struct integ_dev *k = (struct integ_dev *)d;
	struct integ_dev *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *k;
	n->replay_data = NULL;
	if (k->replay_data) {
		size_t len = (size_t)k->replay.count * d->sector_size;
		n->replay_data = malloc(len);
		if (!n->replay_data) {
			free(n);
			return -ENOMEM;
		}
		memcpy(n->replay_data, k->replay_data, len);
		n->replay.data = n->replay_data;
	}
	int rc = blk_clone(k->lower, &n->lower);
	if (rc) {
		free(n->replay_data);
		free(n);
		return lerr(k, rc);
	}
	*out = &n->dev;
	return 0;
}

/* The in-flight write w. Only its first group's run is handed to the lower device
 * as in flight (the lower decides how it lands: tears, collateral damage); runs in
 * later groups land whole or not at all, one decision each.
 *  journal: decision 0 = committed: the copy home is in flight at the cut, and
 *   the journal is replayed (data and tags) at power-on; 1 = not committed:
 *   nothing of it is on the media.
 *  direct: decision 0|1 = the tags of the first run landed; then the lower decides
 *   the data. Data and tag can disagree: that sector then reads as an error. */
static int integ_power_cut(struct bdev *d, struct blk_chooser *ch, const struct blk_inflight *w)
{
	struct integ_dev *k = (struct integ_dev *)d;
	size_t ss = d->sector_size;
	if (!w)
		return blk_power_cut(k->lower, ch, NULL);
	uint32_t first = run_len(k, w->lba, w->count);
	struct blk_inflight lw = {.lba = data_lba(k, w->lba), .count = first, .data = w->data};
	int rc = 0;
	if (k->mode == MODE_JOURNAL) {
		/* 0 (the all-zero path) is the answer with the lower's decisions, so the
		 * outcome count follows the larger of the two subtrees */
		if (blk_choose(ch, 2, "integrity: the in-flight write committed|not committed"))
			return blk_power_cut(k->lower, ch, NULL);
		size_t len = (size_t)w->count * ss;
		free(k->replay_data);
		k->replay_data = malloc(len);
		if (!k->replay_data)
			return -ENOMEM;
		memcpy(k->replay_data, w->data, len);
		k->replay =
		    (struct blk_inflight){.lba = w->lba, .count = w->count, .data = k->replay_data};
		return blk_power_cut(k->lower, ch, &lw);
	}
	if (blk_choose(ch, 2, "integrity: the in-flight write's tags landed"))
		rc = write_tags(k, w->lba, first, w->data, 0);
	for (uint32_t done = first; rc != -ENOMEM && done < w->count;) {
		uint32_t n = run_len(k, w->lba + done, w->count - done);
		if (blk_choose(ch, 2, "integrity: a later group's run landed (data and tags)"))
			rc = write_both(k, w->lba + done, n,
			                (const unsigned char *)w->data + (size_t)done * ss, 0);
		done += n;
	}
	if (rc == -ENOMEM)
		return rc;
	return blk_power_cut(k->lower, ch, &lw);
}

static int integ_power_restore(struct bdev *d)
{
	struct integ_dev *k = (struct integ_dev *)d;
	int rc = blk_power_restore(k->lower);
	if (rc == 0 && k->replay_data) {
		k->replays++;
		rc = write_both(k, k->replay.lba, k->replay.count, k->replay_data, 0);
		if (rc == 0)
			rc = blk_flush(k->lower);
		free(k->replay_data);
		k->replay_data = NULL;
	}
	return rc ? lerr(k, rc) : 0;
}

static void integ_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct integ_dev *k = (struct integ_dev *)d;
	emit(ctx, "reads", k->reads);
	emit(ctx, "writes", k->writes);
	emit(ctx, "flushes", k->flushes);
	emit(ctx, "checksum_mismatches", k->mismatches);
	emit(ctx, "journal_replays", k->replays);
}

static const struct bdev_ops integ_ops = {
    .read = integ_read,
    .write = integ_write,
    .flush = integ_flush,
    .close = integ_close,
    .clone = integ_clone,
    .power_cut = integ_power_cut,
    .power_restore = integ_power_restore,
    .lower = dev_single_lower,
    .stats = integ_stats,
};

/* the tag area of the group starting at data sector s, from what its data holds */
static int format_group(struct integ_dev *k, uint64_t s)
{
	size_t ss = k->dev.sector_size;
	enum { CHUNK = 64 };
	unsigned char *tags = calloc(k->tag_secs, ss), *buf = malloc(CHUNK * ss);
	int rc = tags && buf ? 0 : -ENOMEM;
	uint64_t n = k->dev.nr_sectors - s < k->interleave ? k->dev.nr_sectors - s : k->interleave;
	for (uint64_t i = 0; rc == 0 && i < n; i += CHUNK) {
		uint32_t c = (uint32_t)(n - i < CHUNK ? n - i : CHUNK);
		rc = blk_read(k->lower, data_lba(k, s + i), c, buf);
		for (uint32_t j = 0; rc == 0 && j < c; j++)
			put_le32(tags + (i + j) * TAG_BYTES, tag_of(buf + (size_t)j * ss, ss));
	}
	if (rc == 0)
		rc = blk_write(k->lower, group_start(k, s / k->interleave), (uint32_t)k->tag_secs,
		               tags, 0);
	free(tags);
	free(buf);
	return rc;
}

/* Sector 0 names the layout. Without it the device is formatted: every data
 * sector's tag computed from what it holds now (dm-integrity formats a device whose
 * superblock is zeroes); with it, the layout must match. */
static int superblock(struct integ_dev *k, struct bo_err *err)
{
	size_t ss = k->dev.sector_size;
	unsigned char *sb = calloc(1, ss), *buf = malloc(ss);
	int rc = sb && buf ? blk_read(k->lower, 0, 1, sb) : -ENOMEM;
	if (rc == 0 && memcmp(sb, SB_MAGIC, 8) == 0) {
		if (get_le64(sb + 8) != k->interleave || get_le32(sb + 16) != TAG_BYTES)
			rc = bo_errf(err, -EINVAL,
			             "integrity: the device was formatted with interleave=%llu, "
			             "not %llu",
			             (unsigned long long)get_le64(sb + 8),
			             (unsigned long long)k->interleave);
		free(sb);
		free(buf);
		return rc;
	}
	for (uint64_t s = 0; rc == 0 && s < k->dev.nr_sectors; s += k->interleave)
		rc = format_group(k, s);
	if (rc == 0) {
		memset(sb, 0, ss);
		memcpy(sb, SB_MAGIC, 8);
		put_le64(sb + 8, k->interleave);
		put_le32(sb + 16, TAG_BYTES);
		rc = blk_write(k->lower, 0, 1, sb, 0);
	}
	if (rc == 0)
		rc = blk_flush(k->lower);
	if (rc && rc != -EINVAL)
		rc = bo_errf(err, rc, "integrity: formatting: %s", bo_errstr(&k->lower->err, rc));
	free(sb);
	free(buf);
	return rc;
}

static const char *const modes[] = {"journal", "direct", NULL};

static int integ_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                      struct bdev **out, struct bo_err *err)
{
	int mode;
	uint64_t il;
	int rc = dev_arg_enum(a, "mode", modes, &mode, err);
	if (rc == 0)
		rc = dev_arg_u64(a, "interleave", &il, err);
	if (rc)
		return rc;
	if (nlowers != 1)
		return bo_errf(err, -EINVAL, "integrity: takes one lower device");
	struct bdev *lower = lowers[0];
	uint32_t ss = lower->sector_size;
	if (il < 8 || (il & (il - 1)))
		return bo_errf(err, -EINVAL,
		               "integrity: interleave=%llu: must be a power of two, at least 8",
		               (unsigned long long)il);
	uint64_t tag_secs = (il * TAG_BYTES + ss - 1) / ss;
	uint64_t group = tag_secs + il, rest = lower->nr_sectors - 1;
	uint64_t nr = rest / group * il;
	if (rest % group > tag_secs)
		nr += rest % group - tag_secs;
	if (lower->nr_sectors < 2 || nr == 0)
		return bo_errf(err, -EINVAL,
		               "integrity: the lower device (%llu sectors) holds no data sector "
		               "after its superblock and one tag area of %llu sectors",
		               (unsigned long long)lower->nr_sectors, (unsigned long long)tag_secs);
	struct integ_dev *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	blk_init(&k->dev, &integ_ops, "integrity", ss, nr);
	k->lower = lower;
	k->mode = mode;
	k->interleave = il;
	k->tag_secs = tag_secs;
	rc = superblock(k, err);
	if (rc) {
		free(k);
		return rc;
	}
	*out = &k->dev;
	return 0;
}

static const struct dev_param integ_params[] = {
    {"mode", "journal",
     "journal: data and tag written atomically (a cut leaves both old or both new); "
     "direct: written side by side, a cut can leave them disagreeing (dm-integrity's D)",
     DEV_PT_ENUM, modes},
    {"interleave", "32768",
     "data sectors between two tag areas (a power of two, at least 8; dm-integrity's "
     "interleave_sectors)",
     DEV_PT_U64, NULL, 1ull << 31},
    {NULL},
};

const struct dev_model dev_model_integrity = {
    .name = "integrity",
    .summary = "dm-integrity: a CRC32C tag per sector beside the data; a sector whose data "
               "and tag disagree reads as an I/O error",
    .params = integ_params,
    .min_lowers = 1,
    .max_lowers = 1,
    .open = integ_open,
};
