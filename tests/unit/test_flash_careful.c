// SPDX-License-Identifier: GPL-2.0-or-later
/* test_flash_careful.c — the careful FTL's write cache honouring or ignoring flush,
 * write amplification at 7% and 28% over-provisioning, and wear-out as write errors
 * without silent loss. Crash-consistency histories: test_flash_history.c. */
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

struct epoch {
	uint64_t nsec;
	uint64_t *flushed; /* version durable at the last flush */
	uint64_t *latest;
	uint64_t bad, states, lost_flushed;
};

/* With a cache, a sector may read any version it had since the last flush, but
 * never one older than it had at the last flush (versions grow over time). */
static int epoch_check(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	struct epoch *e = ctx;
	(void)dec;
	static unsigned char all[NSEC * 512];
	e->states++;
	if (blk_read(st, 0, (uint32_t)e->nsec, all)) {
		e->bad++;
		return 0;
	}
	for (uint64_t s = 0; s < e->nsec; s++) {
		int64_t v = tversion(s, all + s * 512, 512);
		if (v < 0 || (uint64_t)v > e->latest[s])
			e->bad++;
		else if ((uint64_t)v < e->flushed[s])
			e->lost_flushed++;
	}
	return 0;
}

static void test_cache(bool ignore)
{
	struct flash_params p;
	small_careful(&p);
	p.cache_bytes = 8192;
	p.flush_ignore = ignore;
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "careful with an 8k cache, flush %s",
	            ignore ? "ignored" : "honoured");
	struct epoch e = {NSEC, calloc(NSEC, 8), calloc(NSEC, 8), 0, 0, 0};
	struct bo_rng r;
	bo_rng_seed(&r, ignore ? 5 : 6);
	unsigned char buf[8 * 512];
	uint64_t v = 0;
	for (int op = 0; op < 600; op++) {
		if (bo_rng_below(&r, 8) == 0) {
			blk_flush(t.dev);
			memcpy(e.flushed, e.latest, NSEC * 8);
		} else {
			uint64_t lba = bo_rng_below(&r, NSEC - 8);
			uint32_t count = 1 + (uint32_t)bo_rng_below(&r, 8);
			v++;
			for (uint32_t i = 0; i < count; i++)
				tsector(lba + i, v, buf + i * 512, 512);
			blk_write(t.dev, lba, count, buf, 0);
			for (uint32_t i = 0; i < count; i++)
				e.latest[lba + i] = v;
		}
		if (op % 20 == 19)
			blk_cut_foreach(t.dev, NULL, 400, epoch_check, &e, NULL);
	}
	is_int(e.bad, 0, "%llu crash states: every sector reads a version it had",
	       (unsigned long long)e.states);
	if (ignore)
		ok(e.lost_flushed > 0, "ignoring flush loses flushed data (%llu sectors)",
		   (unsigned long long)e.lost_flushed);
	else
		is_int(e.lost_flushed, 0, "honouring flush: nothing flushed is ever lost");
	ok(tstat(t.dev, "dirty_bytes") <= 8192, "the cache holds at most its size");
	free(e.flushed);
	free(e.latest);
	tflash_close(&t);
}

static uint64_t measure_wa(uint32_t op_percent)
{
	struct flash_params p;
	flash_params_default(&p);
	p.size = 32 << 20;
	p.op_percent = op_percent;
	struct tflash t;
	if (tflash_open(&p, &t, NULL))
		return 0;
	uint64_t pages = p.size / 4096;
	unsigned char b[4096];
	memset(b, 0xa5, sizeof(b));
	int rc = 0;
	for (uint64_t i = 0; i < pages && !rc; i++)
		rc = blk_write(t.dev, i * 8, 8, b, 0);
	uint64_t prog0 = tstat(t.dev, "nand_programs");
	struct bo_rng r;
	bo_rng_seed(&r, op_percent);
	uint64_t n = pages * 4;
	for (uint64_t i = 0; i < n && !rc; i++)
		rc = blk_write(t.dev, bo_rng_below(&r, pages) * 8, 8, b, 0);
	uint64_t wa = rc ? 0 : (tstat(t.dev, "nand_programs") - prog0) * 1000 / n;
	uint64_t spread = tstat(t.dev, "max_erase_count") - tstat(t.dev, "min_erase_count");
	diag("op %u%%: steady-state 4 KiB random-write amplification %.3f, erase counts "
	     "%llu..%llu",
	     op_percent, wa / 1000.0, (unsigned long long)tstat(t.dev, "min_erase_count"),
	     (unsigned long long)tstat(t.dev, "max_erase_count"));
	ok(spread <= 40, "op %u%%: wear levelling keeps the erase-count spread at %llu", op_percent,
	   (unsigned long long)spread);
	tflash_close(&t);
	return wa;
}

static void test_write_amp(void)
{
	uint64_t wa7 = measure_wa(7), wa28 = measure_wa(28);
	ok(wa7 > 1000 && wa7 < 8000, "7%% over-provisioning: write amplification %.3f, bounded",
	   wa7 / 1000.0);
	ok(wa28 > 1000 && wa28 < 3000, "28%% over-provisioning: write amplification %.3f, bounded",
	   wa28 / 1000.0);
	ok(wa28 < wa7, "more spare area, less amplification");
}

static void test_endurance(void)
{
	struct flash_params p;
	small_careful(&p);
	p.endurance = 30;
	p.op_percent = 25;
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "careful with endurance 30");
	uint64_t *ver = calloc(NSEC, 8);
	struct bo_rng r;
	bo_rng_seed(&r, 99);
	unsigned char buf[8 * 512], all[NSEC * 512];
	uint64_t v = 0, acked = 0;
	int rc = 0, refused = 0;
	for (int i = 0; i < 200000 && refused < 50; i++) {
		uint64_t lba = bo_rng_below(&r, NSEC / 8) * 8;
		v++;
		for (int k = 0; k < 8; k++)
			tsector(lba + k, v, buf + k * 512, 512);
		rc = blk_write(t.dev, lba, 8, buf, 0);
		if (rc == 0) {
			acked++;
			for (int k = 0; k < 8; k++)
				ver[lba + k] = v;
		} else {
			refused++;
			if (refused == 1)
				is_int(rc, -EIO, "wear-out is a write error (-EIO): %s",
				       bo_errstr(&t.dev->err, rc));
		}
	}
	is_int(refused, 50, "after %llu acknowledged writes the device refuses writes",
	       (unsigned long long)acked);
	ok(tstat(t.dev, "bad_blocks") > 0, "%llu bad blocks",
	   (unsigned long long)tstat(t.dev, "bad_blocks"));
	int lost = 0;
	rc = blk_read(t.dev, 0, NSEC, all);
	for (uint64_t s = 0; s < NSEC; s++)
		lost += tversion(s, all + s * 512, 512) != (int64_t)ver[s];
	is_int(rc, 0, "a worn-out device still reads");
	is_int(lost, 0, "every acknowledged write reads back: no silent loss");
	blk_power_cut(t.dev, &blk_chooser_zero, NULL);
	is_int(blk_power_restore(t.dev), 0, "power cycle");
	rc = blk_read(t.dev, 0, NSEC, all);
	lost = 0;
	for (uint64_t s = 0; s < NSEC; s++)
		lost += tversion(s, all + s * 512, 512) != (int64_t)ver[s];
	is_int(lost, 0, "and after power-on (map rebuilt from the spare areas)");
	free(ver);
	tflash_close(&t);
}

/* Static wear levelling: a device full of cold data with a few hot pages still wears
 * evenly, because cold blocks are moved when the spread grows. */
static void test_wear_levelling(void)
{
	struct flash_params p;
	small_careful(&p);
	p.op_percent = 25;
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "careful, 25%% spare");
	unsigned char b[4096];
	memset(b, 0x42, sizeof(b));
	int rc = 0;
	for (uint64_t lba = 0; lba < NSEC && !rc; lba += 8)
		rc = blk_write(t.dev, lba, 8, b, 0);
	for (int i = 0; i < 20000 && !rc; i++)
		rc = blk_write(t.dev, (uint64_t)(i % 4) * 8, 8, b, 0);
	is_int(rc, 0, "cold fill, then 20,000 writes to 4 hot pages");
	uint64_t mx = tstat(t.dev, "max_erase_count"), mn = tstat(t.dev, "min_erase_count");
	ok(tstat(t.dev, "wl_moves") > 0, "cold blocks were moved (%llu times)",
	   (unsigned long long)tstat(t.dev, "wl_moves"));
	ok(mx - mn <= 40, "erase counts stay within %llu..%llu", (unsigned long long)mn,
	   (unsigned long long)mx);
	tflash_close(&t);
}

int main(void)
{
	test_wear_levelling();
	test_cache(false);
	test_cache(true);
	test_write_amp();
	test_endurance();
	return tap_done();
}
