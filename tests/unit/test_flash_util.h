/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_flash_util.h — shared by the flash model's unit tests: a flash device over a
 * copy-on-write overlay of a RAM image (so clones are cheap, as in the crash explorer),
 * self-describing sector contents (and test_stats.h's stats reader). */
#ifndef TEST_FLASH_UTIL_H
#define TEST_FLASH_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/endian.h"
#include "blackout/flash.h"
#include "blackout/util.h"
#include "test_stats.h"

struct tflash {
	struct bdev *base; /* mem, closed after the flash device (the overlay reads it) */
	struct bdev *dev;  /* flash over cow over base */
};

static inline int tflash_open(const struct flash_params *p, struct tflash *t, struct bo_err *err)
{
	uint64_t need;
	t->base = t->dev = NULL;
	int rc = flash_params_check(p, 512, &need, err);
	if (rc)
		return rc;
	rc = blk_mem_open(512, need / 512, &t->base);
	if (rc)
		return rc;
	struct bdev *cow;
	rc = blk_cow_open(t->base, &cow);
	if (rc)
		return rc;
	return dev_flash_open(p, cow, &t->dev, err);
}

static inline void tflash_close(struct tflash *t)
{
	blk_close(t->dev);
	blk_close(t->base);
	t->dev = t->base = NULL;
}

/* A sector's content names its LBA and version; version 0 is the erased state. The
 * fill is a cheap function of both, so checking a whole device per crash state is
 * fast; garbage or another sector's data never matches it. */
static inline uint64_t tword(uint64_t lba, uint64_t ver, size_t i)
{
	return ((lba << 32) ^ ver) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
}

static inline void tsector(uint64_t lba, uint64_t ver, unsigned char *b, size_t ss)
{
	if (ver == 0) {
		memset(b, 0xff, ss);
		return;
	}
	put_le64(b, lba);
	put_le64(b + 8, ver);
	for (size_t i = 16; i < ss; i += 8)
		put_le64(b + i, tword(lba, ver, i));
}

/* The version a sector holds, or -1 if it is neither erased nor a sector written to
 * this LBA (damage: garbage, or another sector's data). */
static inline int64_t tversion(uint64_t lba, const unsigned char *b, size_t ss)
{
	uint64_t ver = get_le64(b + 8);
	if (get_le64(b) == lba && ver != 0) {
		for (size_t i = 16; i < ss; i += 8)
			if (get_le64(b + i) != tword(lba, ver, i))
				return -1;
		return (int64_t)ver;
	}
	for (size_t i = 0; i < ss; i++)
		if (b[i] != 0xff)
			return -1;
	return 0;
}

#endif
