/* test_flash_careful.c — the careful FTL: no collateral damage at any micro-step
 * (including garbage collection) over a 10,000-operation seeded history, the write
 * cache honouring or ignoring flush, write amplification at 7% and 28%
 * over-provisioning, and wear-out as write errors without silent loss. */
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
	uint64_t ver[NSEC]; /* durable version of every sector */
	uint64_t lba, opv;  /* the write in flight */
	uint32_t count;
	uint64_t states, bad, torn;
	char first_bad[200];
};

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
		int64_t v = tversion(s, all + s * 512, 512);
		bool in = s >= h->lba && s < h->lba + h->count;
		if (in && v == (int64_t)h->opv) {
			some_new = true;
			continue;
		}
		if (v == (int64_t)h->ver[s]) {
			some_old |= in;
			continue;
		}
		if (!h->bad++)
			snprintf(h->first_bad, sizeof(h->first_bad),
			         "sector %llu reads version %lld, durable %llu (write in flight: "
			         "%u at %llu)",
			         (unsigned long long)s, (long long)v, (unsigned long long)h->ver[s],
			         h->count, (unsigned long long)h->lba);
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
	struct hist *h = calloc(1, sizeof(*h));
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
		bool complete;
		int64_t n = blk_cut_foreach(t.dev, &in, 100000, hist_check, h, &complete);
		errors += n < 0;
		complete_all &= complete;
		if (op % 1000 == 999) {
			/* a real cut now and then: the history goes on from a crash state */
			struct blk_chooser_random ch;
			blk_chooser_random_init(&ch, (uint64_t)op);
			errors += blk_power_cut(t.dev, &ch.base, &in) != 0;
			errors += blk_power_restore(t.dev) != 0;
			static unsigned char all[NSEC * 512];
			errors += blk_read(t.dev, 0, NSEC, all) != 0;
			for (uint32_t i = 0; i < count; i++)
				if (tversion(lba + i, all + (lba + i) * 512, 512) == (int64_t)v)
					h->ver[lba + i] = v;
			real_cuts++;
			continue;
		}
		uint64_t gc_before = tstat(t.dev, "gc_copies") + tstat(t.dev, "nand_erases");
		errors += blk_write(t.dev, lba, count, buf, 0) != 0;
		gc_ops += tstat(t.dev, "gc_copies") + tstat(t.dev, "nand_erases") != gc_before;
		for (uint32_t i = 0; i < count; i++)
			h->ver[lba + i] = v;
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
	ok(real_cuts >= 5, "%llu real power cuts along the way", (unsigned long long)real_cuts);
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
	struct hist *h = calloc(1, sizeof(*h));
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
				h->ver[lba + i] = v;
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
		blk_cut_foreach(t.dev, &in, 10000, hist_check, h, NULL);
		blk_write(t.dev, lba, 8, buf, 0);
		for (int i = 0; i < 8; i++)
			h->ver[lba + i] = v;
	}
	is_int(h->bad, 0, "%llu states with a garbage page at the cut: nothing else damaged%s%s",
	       (unsigned long long)h->states, h->bad ? ": " : "", h->first_bad);
	free(h);
	tflash_close(&t);
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

static void test_same_as_cheap(void)
{
	/* the cheap FTL's collateral-damage scenario: here A always survives */
	struct flash_params p;
	small_careful(&p);
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "careful flash");
	struct hist *h = calloc(1, sizeof(*h));
	unsigned char b[512];
	tsector(27, 1, b, 512);
	blk_write(t.dev, 27, 1, b, 0);
	h->ver[27] = 1;
	tsector(3, 1, b, 512);
	blk_write(t.dev, 3, 1, b, 0);
	h->ver[3] = 1;
	blk_flush(t.dev);
	tsector(3, 2, b, 512);
	struct blk_inflight in = {3, 1, 0, b};
	h->lba = 3;
	h->count = 1;
	h->opv = 2;
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
	test_cache(false);
	test_cache(true);
	test_write_amp();
	test_endurance();
	return tap_done();
}
