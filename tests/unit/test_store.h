/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_store.h — the unit tests' own reader of the state store an outside observer is
 * handed (base.img, then s<N>.delta: "BOSTATE1", block size, count, and count pairs of
 * a block number and its 4096 bytes, in rising block order), written apart from
 * src/crash/store.c so the format is checked rather than shared; and the device a test
 * observer judges a state on. That device is one memory image reused from state to
 * state, each state overwriting all of it: mapping, faulting in and unmapping a fresh
 * 8 MiB image per state was most of these tests' time, and none of their meaning. */
#ifndef BLACKOUT_TEST_STORE_H
#define BLACKOUT_TEST_STORE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/endian.h"

/* base.img with s<n>.delta applied into *img (grown to the image's size, *cap its
 * allocation); false when either file is missing or malformed (a wrong magic or block
 * size, a block out of order or past the image, a short or over-long delta). */
static inline bool store_read(const char *dir, size_t n, uint8_t **img, size_t *cap, size_t *size)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/base.img", dir);
	FILE *f = fopen(p, "rb");
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	long end = ftell(f);
	rewind(f);
	*size = end > 0 ? (size_t)end : 0;
	if (*size > *cap) {
		uint8_t *bigger = realloc(*img, *size);
		if (bigger) {
			*img = bigger;
			*cap = *size;
		}
	}
	bool ok = *size && *size <= *cap && fread(*img, 1, *size, f) == *size;
	fclose(f);
	snprintf(p, sizeof(p), "%s/s%zu.delta", dir, n);
	f = fopen(p, "rb");
	uint8_t hdr[16];
	ok = ok && f && fread(hdr, 1, 16, f) == 16 && memcmp(hdr, "BOSTATE1", 8) == 0 &&
	     get_le32(hdr + 8) == 4096;
	uint32_t count = ok ? get_le32(hdr + 12) : 0;
	uint64_t last = 0;
	for (uint32_t i = 0; ok && i < count; i++) {
		uint8_t idx[8];
		ok = fread(idx, 1, 8, f) == 8;
		uint64_t b = ok ? get_le64(idx) : 0;
		ok = ok && (i == 0 || b > last) && (b + 1) * 4096 <= *size &&
		     fread(*img + b * 4096, 1, 4096, f) == 4096;
		last = b;
	}
	ok = ok && fgetc(f) == EOF;
	if (f)
		fclose(f);
	return ok;
}

/* State n as a new allocation the caller frees; NULL when store_read fails. */
static inline uint8_t *store_image(const char *dir, size_t n, size_t *size)
{
	uint8_t *img = NULL;
	size_t cap = 0;
	if (store_read(dir, n, &img, &cap, size))
		return img;
	free(img);
	return NULL;
}

static struct bdev *store_dev_;
static uint8_t *store_buf_; /* the image read, kept from state to state too */
static size_t store_cap_;

/* A device holding state n of the store in dir, whole (the previous state's bytes all
 * overwritten), or NULL when the store cannot be read. The device stays the caller's
 * only until the next call; store_device_close() at the end releases it. */
static inline struct bdev *store_device(const char *dir, size_t n)
{
	size_t size;
	if (!store_read(dir, n, &store_buf_, &store_cap_, &size) || size % 512)
		return NULL;
	if (store_dev_ && store_dev_->nr_sectors * 512 != size) {
		blk_close(store_dev_);
		store_dev_ = NULL;
	}
	if (!store_dev_ && blk_mem_open(512, size / 512, &store_dev_))
		return NULL;
	return blk_pwrite(store_dev_, 0, size, store_buf_, 0) ? NULL : store_dev_;
}

static inline void store_device_close(void)
{
	blk_close(store_dev_);
	store_dev_ = NULL;
	free(store_buf_);
	store_buf_ = NULL;
	store_cap_ = 0;
}

#endif
