/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_jbd_dev.h — a tracing, failing bdev for the journal tests: logs every write
 * and flush that reaches it (with its flags), can fail writes after a count or in
 * a block range, and checks no write lands outside an allowed range. Test-only. */
#ifndef TEST_JBD_DEV_H
#define TEST_JBD_DEV_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"

enum { T_WRITE = 1, T_FLUSH = 2 };
struct t_op {
	int op;
	uint64_t lba;
	uint32_t count;
	unsigned flags;
	uint8_t *data; /* with record set: a copy of the written sectors */
};
struct tdev {
	struct bdev dev;
	struct bdev *lower; /* not owned */
	struct t_op *ops;
	size_t nops, cap;
	long fail_after;             /* writes allowed before every write fails; -1 = never */
	uint64_t fail_lo, fail_hi;   /* writes touching [lo, hi) sectors fail */
	uint64_t allow_lo, allow_hi; /* writes outside [lo, hi) sectors are counted */
	unsigned long outside;
	unsigned long writes;
	bool record; /* keep the data of every write (a recorder for crash states) */
};

static int t_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	return blk_read(((struct tdev *)d)->lower, lba, count, buf);
}
static void t_log(struct tdev *t, int op, uint64_t lba, uint32_t count, unsigned flags)
{
	if (t->nops == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->ops = realloc(t->ops, t->cap * sizeof(*t->ops));
	}
	t->ops[t->nops++] = (struct t_op){op, lba, count, flags, NULL};
}
static int t_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct tdev *t = (struct tdev *)d;
	if (t->fail_after >= 0 && (long)t->writes >= t->fail_after)
		return -EIO;
	if (lba < t->fail_hi && lba + count > t->fail_lo)
		return -EIO;
	if (lba < t->allow_lo || lba + count > t->allow_hi)
		t->outside++;
	t->writes++;
	t_log(t, T_WRITE, lba, count, flags);
	if (t->record) {
		size_t n = (size_t)count * d->sector_size;
		t->ops[t->nops - 1].data = malloc(n);
		memcpy(t->ops[t->nops - 1].data, buf, n);
	}
	return blk_write(t->lower, lba, count, buf, flags);
}
static int t_flush(struct bdev *d)
{
	struct tdev *t = (struct tdev *)d;
	if (t->fail_after >= 0 && (long)t->writes >= t->fail_after)
		return -EIO;
	t_log(t, T_FLUSH, 0, 0, 0);
	return blk_flush(t->lower);
}
static void t_close(struct bdev *d)
{
	struct tdev *t = (struct tdev *)d;
	for (size_t i = 0; i < t->nops; i++)
		free(t->ops[i].data);
	free(t->ops);
	free(t);
}
static const struct bdev_ops t_ops = {
    .read = t_read, .write = t_write, .flush = t_flush, .close = t_close};

static inline struct tdev *tdev_open(struct bdev *lower)
{
	struct tdev *t = calloc(1, sizeof(*t));
	blk_init(&t->dev, &t_ops, "trace", lower->sector_size, lower->nr_sectors);
	t->lower = lower;
	t->fail_after = -1;
	t->allow_hi = UINT64_MAX;
	return t;
}

#endif

/* A test journal: a device of `blocks` blocks, the journal's 256 (or jblocks)
 * blocks in two extents (at 100.. and 300+..) so the block map is exercised. */
#include "blackout/jbd.h"
struct tj {
	struct jbd_extent ext[2];
	struct jbd_config cfg;
};
static inline void tj_init(struct tj *t, uint32_t bs, uint64_t jblocks, uint64_t fs_blocks)
{
	uint64_t half = jblocks / 2;
	t->ext[0] = (struct jbd_extent){0, 100, half};
	t->ext[1] = (struct jbd_extent){half, 100 + half + 50, jblocks - half};
	memset(&t->cfg, 0, sizeof(t->cfg));
	t->cfg.block_size = bs;
	t->cfg.nr_blocks = jblocks;
	t->cfg.map.extents = t->ext;
	t->cfg.map.nr_extents = 2;
	t->cfg.fs_blocks = fs_blocks;
	t->cfg.barrier = true;
}
/* journal logical block -> device block, for tests that corrupt the log */
static inline uint64_t tj_pblk(const struct tj *t, uint64_t l)
{
	return l < t->ext[1].lblk ? t->ext[0].pblk + l : t->ext[1].pblk + (l - t->ext[1].lblk);
}
static inline void fill_block(uint8_t *b, uint32_t bs, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	for (uint32_t i = 0; i < bs; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)x;
	}
}
