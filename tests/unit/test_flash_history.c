// SPDX-License-Identifier: GPL-2.0-or-later
/* test_flash_history.c — the careful FTL never damages a sector it was not asked to
 * write: a 10,000-operation seeded history with every power-cut outcome (every
 * micro-step, garbage collection included) of every write built and checked. */
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"
#include "test_flash_util.h"

#define NSEC 512 /* the small device: 256 KiB of 512-byte sectors */

static void small_careful(struct flash_params *p)
{
	flash_params_default(p);
	p->ftl = FLASH_FTL_CAREFUL;
	p->page_size = 4096;
	p->eb_size = 16384;
	p->size = NSEC * 512;
	p->op_percent = 7; /* rounds up to the minimum of 3 spare blocks */
}

struct hist {
	uint64_t ver[NSEC];            /* durable version of every sector */
	unsigned char img[NSEC * 512]; /* and its content */
	const unsigned char *new_data; /* of the write in flight */
	uint64_t lba, opv;             /* the write in flight */
	uint32_t count;
	uint64_t states, bad, torn;
	char first_bad[200];
};

static struct hist *hist_new(void)
{
	struct hist *h = calloc(1, sizeof(*h));
	if (h)
		memset(h->img, 0xff, sizeof(h->img)); /* a fresh device reads erased */
	return h;
}

static void hist_set(struct hist *h, uint64_t lba, uint64_t v)
{
	h->ver[lba] = v;
	tsector(lba, v, h->img + lba * 512, 512);
}

static int hist_check(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	struct hist *h = ctx;
	(void)dec;
	static unsigned char all[NSEC * 512];
	h->states++;
	if (blk_read(st, 0, NSEC, all)) {
		h->bad++;
		return 0;
	}
	bool some_new = false, some_old = false;
	for (uint64_t s = 0; s < NSEC; s++) {
		const unsigned char *got = all + s * 512;
		bool in = s >= h->lba && s < h->lba + h->count;
		if (memcmp(got, h->img + s * 512, 512) == 0) {
			some_old |= in;
			continue;
		}
		if (in && memcmp(got, h->new_data + (s - h->lba) * 512, 512) == 0) {
			some_new = true;
			continue;
		}
		if (!h->bad++)
			snprintf(h->first_bad, sizeof(h->first_bad),
			         "sector %llu reads version %lld, durable %llu (write in flight: "
			         "%u at %llu)",
			         (unsigned long long)s, (long long)tversion(s, got, 512),
			         (unsigned long long)h->ver[s], h->count,
			         (unsigned long long)h->lba);
	}
	h->torn += some_new && some_old;
	return 0;
}

/* 10,000 operations; before each write, every power-cut outcome of it (every
 * micro-step of its programs and of the garbage collection it triggers) is built
 * on a clone and checked: durable sectors intact, written ones old or new. */
static void test_history(void)
{
	struct flash_params p;
	small_careful(&p);
	struct tflash t;
	struct bo_err err = {{0}};
	tap_require(tflash_open(&p, &t, &err) == 0, "careful flash opens: %s", err.msg);
	struct hist *h = hist_new();
	struct bo_rng r;
	bo_rng_seed(&r, 20260101);
	unsigned char buf[32 * 512];
	uint64_t version = 0, gc_ops = 0, writes = 0, real_cuts = 0, errors = 0;
	bool complete_all = true;
	for (int op = 0; op < 10000; op++) {
		if (bo_rng_below(&r, 10) == 0) {
			errors += blk_flush(t.dev) != 0;
			continue;
		}
		uint64_t lba = bo_rng_below(&r, NSEC);
		uint32_t count = 1 + (uint32_t)bo_rng_below(&r, 24);
		if (lba + count > NSEC)
			count = (uint32_t)(NSEC - lba);
		uint64_t v = ++version;
		for (uint32_t i = 0; i < count; i++)
			tsector(lba + i, v, buf + i * 512, 512);
		struct blk_inflight in = {lba, count, 0, buf};
		h->lba = lba;
		h->count = count;
		h->opv = v;
		h->new_data = buf;
		bool complete;
		int64_t n = blk_cut_foreach(t.dev, &in, 100000, hist_check, h, &complete);
		errors += n < 0;
		complete_all &= complete;
		if (op % 50 == 49) {
			/* a real cut now and then: the history goes on from a crash state */
			struct blk_chooser_random ch;
			blk_chooser_random_init(&ch, (uint64_t)op);
			errors += blk_power_cut(t.dev, &ch.base, &in) != 0;
			errors += blk_power_restore(t.dev) != 0;
			static unsigned char all[NSEC * 512];
			errors += blk_read(t.dev, 0, NSEC, all) != 0;
			for (uint32_t i = 0; i < count; i++)
				if (tversion(lba + i, all + (lba + i) * 512, 512) == (int64_t)v)
					hist_set(h, lba + i, v);
			real_cuts++;
			continue;
		}
		uint64_t gc_before = tstat(t.dev, "gc_copies") + tstat(t.dev, "nand_erases");
		errors += blk_write(t.dev, lba, count, buf, 0) != 0;
		gc_ops += tstat(t.dev, "gc_copies") + tstat(t.dev, "nand_erases") != gc_before;
		for (uint32_t i = 0; i < count; i++)
			hist_set(h, lba + i, v);
		writes++;
	}
	is_int(errors, 0, "10,000 operations without an I/O error");
	ok(complete_all, "every cut enumeration was exhaustive");
	is_int(h->bad, 0,
	       "%llu crash states: every durable sector intact, every written one "
	       "old or new%s%s",
	       (unsigned long long)h->states, h->bad ? ": " : "", h->first_bad);
	ok(gc_ops > 1000, "%llu of %llu writes garbage-collected, so their cuts hit GC steps",
	   (unsigned long long)gc_ops, (unsigned long long)writes);
	ok(h->torn > 0,
	   "multi-page writes can persist in part (%llu states), per sector "
	   "atomically",
	   (unsigned long long)h->torn);
	ok(real_cuts >= 150, "%llu real power cuts along the way", (unsigned long long)real_cuts);
	diag("history: %llu states checked, write amplification %.2f",
	     (unsigned long long)h->states, tstat(t.dev, "write_amplification") / 1000.0);
	free(h);
	tflash_close(&t);
}

/* Garbage on the interrupted page: the spare check rejects it at power-on. */
static void test_garbage_page(void)
{
	struct flash_params p;
	small_careful(&p);
	p.garbage = true;
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "careful with garbage=1");
	struct hist *h = hist_new();
	unsigned char buf[8 * 512];
	uint64_t v = 0;
	int rc = 0;
	/* fill the device twice over so that writes garbage-collect */
	for (int round = 0; round < 2; round++)
		for (uint64_t lba = 0; lba < NSEC && !rc; lba += 8) {
			v++;
			for (int i = 0; i < 8; i++)
				tsector(lba + i, v, buf + i * 512, 512);
			rc = blk_write(t.dev, lba, 8, buf, 0);
			for (int i = 0; i < 8; i++)
				hist_set(h, lba + i, v);
		}
	is_int(rc, 0, "filled twice");
	for (int k = 0; k < 50; k++) {
		uint64_t lba = (uint64_t)k * 37 % (NSEC - 8);
		v++;
		for (int i = 0; i < 8; i++)
			tsector(lba + i, v, buf + i * 512, 512);
		struct blk_inflight in = {lba, 8, 0, buf};
		h->lba = lba;
		h->count = 8;
		h->opv = v;
		h->new_data = buf;
		blk_cut_foreach(t.dev, &in, 10000, hist_check, h, NULL);
		blk_write(t.dev, lba, 8, buf, 0);
		for (int i = 0; i < 8; i++)
			hist_set(h, lba + i, v);
	}
	is_int(h->bad, 0, "%llu states with a garbage page at the cut: nothing else damaged%s%s",
	       (unsigned long long)h->states, h->bad ? ": " : "", h->first_bad);
	free(h);
	tflash_close(&t);
}

static void test_same_as_cheap(void)
{
	/* the cheap FTL's collateral-damage scenario: here A always survives */
	struct flash_params p;
	small_careful(&p);
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "careful flash");
	struct hist *h = hist_new();
	unsigned char b[512];
	tsector(27, 1, b, 512);
	blk_write(t.dev, 27, 1, b, 0);
	hist_set(h, 27, 1);
	tsector(3, 1, b, 512);
	blk_write(t.dev, 3, 1, b, 0);
	hist_set(h, 3, 1);
	blk_flush(t.dev);
	tsector(3, 2, b, 512);
	struct blk_inflight in = {3, 1, 0, b};
	h->lba = 3;
	h->count = 1;
	h->opv = 2;
	h->new_data = b;
	int64_t n = blk_cut_foreach(t.dev, &in, 100, hist_check, h, NULL);
	is_int(n, 2, "one program: two outcomes");
	is_int(h->bad, 0, "A in B's erase block survives every outcome");
	free(h);
	tflash_close(&t);
}

int main(void)
{
	test_same_as_cheap();
	test_history();
	test_garbage_page();
	return tap_done();
}
