// SPDX-License-Identifier: GPL-2.0-or-later
/* test_blk_cow_zero.c — the overlay's shared zero sector (src/blk/cow.c): a sector
 * written as zeroes reads back as zeroes over a base that holds other bytes, is held
 * without a buffer of its own, and counts in the digest and blk_cow_same alike
 * however the zeroes got there; blk_cow_foreach hands them out as zeroes (a discarded
 * sector as NULL); overwriting it, cloning and closing leave every overlay reading what
 * was written to it. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "tap.h"

#define NSECT 8192

static struct bdev *overlay(struct bdev *base)
{
	struct bdev *c;
	tap_require(blk_cow_open(base, &c) == 0, "overlay");
	return c;
}

static bool reads_as(struct bdev *d, uint64_t lba, unsigned char byte)
{
	unsigned char got[4096];
	size_t ss = d->sector_size;
	if (blk_read(d, lba, 1, got))
		return false;
	for (size_t i = 0; i < ss; i++)
		if (got[i] != byte)
			return false;
	return true;
}

struct seen {
	uint64_t n, zero, null;
};

static int count(void *ctx, uint64_t lba, const void *data)
{
	struct seen *s = ctx;
	(void)lba;
	s->n++;
	if (!data)
		s->null++;
	else if (((const unsigned char *)data)[0] == 0 &&
	         !memcmp(data, (const char *)data + 1, 511))
		s->zero++;
	return 0;
}

static void run(uint32_t ss)
{
	struct bdev *base;
	tap_require(blk_mem_open(ss, NSECT, &base) == 0, "base");
	unsigned char *aa = malloc(ss), *zero = calloc(1, ss), *five = malloc(ss);
	memset(aa, 0xaa, ss);
	memset(five, 0x55, ss);
	for (uint64_t l = 0; l < NSECT; l++)
		blk_write(base, l, 1, aa, 0);
	base->read_only = true;

	/* zeroes over 0xaa: read back as zeroes, beside a sector the overlay never held */
	struct bdev *a = overlay(base);
	is_int(blk_write(a, 10, 1, zero, 0), 0, "%u: a sector written as zeroes", ss);
	ok(reads_as(a, 10, 0), "%u: reads back as zeroes over a base of 0xaa", ss);
	ok(reads_as(a, 11, 0xaa), "%u: its neighbour still reads the base", ss);

	/* the same bytes reached another way: data first, zeroes over it in place */
	struct bdev *b = overlay(base);
	blk_write(b, 10, 1, five, 0);
	blk_write(b, 10, 1, zero, 0);
	ok(reads_as(b, 10, 0), "%u: zeroes over data read as zeroes", ss);
	is_int(blk_cow_digest(a), blk_cow_digest(b), "%u: same digest either way", ss);
	ok(blk_cow_same(a, b), "%u: blk_cow_same sees the same bytes", ss);

	/* overwritten in a clone: the original keeps its zeroes */
	struct bdev *c;
	tap_require(blk_clone(a, &c) == 0, "clone");
	blk_write(c, 10, 1, five, 0);
	ok(reads_as(c, 10, 0x55), "%u: the clone's overwrite reads back", ss);
	ok(reads_as(a, 10, 0), "%u: the original still reads zeroes", ss);
	ok(blk_cow_digest(c) != blk_cow_digest(a), "%u: and their digests differ", ss);
	blk_write(c, 10, 1, zero, 0);
	is_int(blk_cow_digest(c), blk_cow_digest(a), "%u: zeroes again: the digest returns", ss);
	blk_close(c);
	ok(reads_as(a, 10, 0), "%u: closing the clone leaves the original's zeroes", ss);

	/* foreach hands out the zeroes (a discarded sector is NULL) */
	blk_discard(a, 20, 1);
	struct seen s = {0};
	blk_cow_foreach(a, count, &s);
	ok(s.n == 2 && s.zero == 1 && s.null == 1,
	   "%u: foreach: the zero sector as zeroes, the discarded one as NULL (%llu, %llu, %llu)",
	   ss, (unsigned long long)s.n, (unsigned long long)s.zero, (unsigned long long)s.null);

	/* no buffer a zero sector: 4096 of them cost the tree's nodes only, where 4096 of
	 * data cost their bytes (mallinfo2 counts nothing under ASan: the first holds) */
	struct bdev *z = overlay(base), *d = overlay(base);
	size_t m0 = mallinfo2().uordblks;
	for (uint64_t l = 0; l < 4096; l++)
		blk_write(z, l, 1, zero, 0);
	size_t m1 = mallinfo2().uordblks;
	for (uint64_t l = 0; l < 4096; l++)
		blk_write(d, l, 1, five, 0);
	size_t m2 = mallinfo2().uordblks;
	ok(m1 - m0 < (size_t)4096 * ss / 8,
	   "%u: 4096 zero sectors took %zu bytes (data sectors %zu)", ss, m1 - m0, m2 - m1);
	ok(reads_as(z, 4095, 0) && reads_as(d, 4095, 0x55) && reads_as(z, 4096, 0xaa),
	   "%u: and read back", ss);
	blk_close(z);
	blk_close(d);

	blk_close(a);
	blk_close(b);
	blk_close(base);
	free(aa);
	free(zero);
	free(five);
}

int main(void)
{
	run(512);
	run(4096);
	return tap_done();
}
