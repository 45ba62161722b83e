// SPDX-License-Identifier: GPL-2.0-or-later
/* test_flash_cheap.c — the cheap FTL: collateral damage at every micro-step of a
 * read-modify-write, garbage, exact write amplification, wear-out as write errors,
 * and the model's basics (erased reads, geometry checks, clones, stats). */
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"
#include "test_flash_util.h"

static void small_cheap(struct flash_params *p)
{
	flash_params_default(p);
	p->ftl = FLASH_FTL_CHEAP;
	p->page_size = 4096;
	p->eb_size = 16384; /* 32 sectors, 4 pages */
	p->size = 256 << 10;
	p->op_percent = 0;
}

static int wr(struct bdev *d, uint64_t lba, uint64_t ver)
{
	unsigned char b[512];
	tsector(lba, ver, b, 512);
	return blk_write(d, lba, 1, b, 0);
}

static int64_t ver_at(struct bdev *d, uint64_t lba)
{
	unsigned char b[512];
	if (blk_read(d, lba, 1, b))
		return -2;
	return tversion(lba, b, 512);
}

struct collat {
	uint64_t a_near, a_far, b; /* A in B's erase block, A in another one, B */
	int outcomes, near_lost, far_lost, b_bad, near_garbage, near_weak, full_new, all_old;
};

/* b is version v of sector lba with some 0 bits read as 1 (none the other way). */
static bool weakened(uint64_t lba, int64_t v, const unsigned char *b)
{
	unsigned char want[512];
	tsector(lba, v, want, 512);
	int flips = 0;
	for (int i = 0; i < 512; i++) {
		if ((b[i] & want[i]) != want[i])
			return false;
		flips += __builtin_popcount((unsigned)(b[i] ^ want[i]));
	}
	return flips > 0 && flips < 512 * 8 / 16;
}

static int collat_check(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	struct collat *c = ctx;
	(void)dec;
	c->outcomes++;
	unsigned char b[512];
	int64_t vn = ver_at(st, c->a_near), vf = ver_at(st, c->a_far), vb = ver_at(st, c->b);
	if (vn != 1)
		c->near_lost++;
	if (vn != 1 && blk_read(st, c->a_near, 1, b) == 0 && vn == -1) {
		if (weakened(c->a_near, 1, b))
			c->near_weak++;
		else if (b[100] != 0xff)
			c->near_garbage++;
	}
	if (vf != 1)
		c->far_lost++;
	if (vb != 0 && vb != 1 && vb != 2 && vb != -1)
		c->b_bad++;
	if (vn == 1 && vb == 2)
		c->full_new++;
	if (vn == 1 && vb == 1)
		c->all_old++;
	return 0;
}

static void test_collateral(bool garbage)
{
	struct flash_params p;
	small_cheap(&p);
	p.garbage = garbage;
	struct tflash t;
	struct bo_err err = {{0}};
	tap_require(tflash_open(&p, &t, &err) == 0, "cheap flash opens: %s", err.msg);
	struct collat c = {.a_near = 27, .a_far = 40, .b = 3};
	is_int(wr(t.dev, c.b, 1), 0, "write B");
	is_int(wr(t.dev, c.a_near, 1), 0, "write A (same erase block as B, a later page)");
	is_int(wr(t.dev, c.a_far, 1), 0, "write A' (another erase block)");
	is_int(blk_flush(t.dev), 0, "flush: A and A' are durable");
	unsigned char bdata[512];
	tsector(c.b, 2, bdata, 512);
	struct blk_inflight in = {c.b, 1, 0, bdata};
	bool complete = false;
	int64_t n = blk_cut_foreach(t.dev, &in, 1000, collat_check, &c, &complete);
	is_int(n, 1 + 1 + 4 + 1,
	       "%s: one outcome per micro-step boundary (erase + 4 programs), one inside the "
	       "erase",
	       garbage ? "garbage" : "erased");
	ok(complete, "every outcome visited");
	is_int(c.near_lost, 5,
	       "the outcomes inside and after the erase and before A's page destroy A");
	is_int(c.near_weak, 1,
	       "the cut inside the erase leaves A's old data with a few 0 bits read as 1");
	ok(c.near_lost > 0, "some outcome destroys A, written and flushed long ago (%d of %d)",
	   c.near_lost, c.outcomes);
	is_int(c.far_lost, 0, "A' in another erase block survives every outcome");
	is_int(c.b_bad, 0, "B reads old, new or damaged, never another sector's data");
	ok(c.full_new == 1 && c.all_old == 1, "the cut before the erase keeps all, the last "
	                                      "one has the whole new block");
	if (garbage)
		ok(c.near_garbage > 0, "with garbage=1 destroyed sectors read as garbage");
	else
		is_int(c.near_garbage, 0, "without garbage destroyed sectors read as erased 0xFF");
	tflash_close(&t);
}

/* partial_erase=false: a cut falls only between micro-steps. */
static void test_no_partial_erase(void)
{
	struct flash_params p;
	small_cheap(&p);
	p.partial_erase = false;
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "cheap flash, partial_erase=false");
	struct collat c = {.a_near = 27, .a_far = 40, .b = 3};
	wr(t.dev, c.b, 1);
	wr(t.dev, c.a_near, 1);
	blk_flush(t.dev);
	unsigned char bdata[512];
	tsector(c.b, 2, bdata, 512);
	struct blk_inflight in = {c.b, 1, 0, bdata};
	bool complete = false;
	int64_t n = blk_cut_foreach(t.dev, &in, 1000, collat_check, &c, &complete);
	is_int(n, 1 + 1 + 4, "partial_erase=false: only the micro-step boundaries");
	is_int(c.near_weak, 0, "no outcome weakens A");
	tflash_close(&t);
}

static void test_basics(void)
{
	struct flash_params p;
	small_cheap(&p);
	struct tflash t;
	struct bo_err err = {{0}};
	tap_require(tflash_open(&p, &t, &err) == 0, "cheap flash opens");
	is_int(t.dev->nr_sectors, 512, "256k exported as 512 sectors");
	is_int(ver_at(t.dev, 77), 0, "a fresh device reads erased 0xFF");
	unsigned char big[8192];
	for (int i = 0; i < 16; i++)
		tsector(28 + i, 5, big + i * 512, 512);
	is_int(blk_write(t.dev, 28, 16, big, 0), 0, "a write across two erase blocks");
	int good = 0;
	for (int i = 0; i < 16; i++)
		good += ver_at(t.dev, 28 + i) == 5;
	is_int(good, 16, "reads back across the boundary");
	struct bdev *cl;
	tap_require(blk_clone(t.dev, &cl) == 0, "clone");
	is_int(wr(cl, 28, 6), 0, "write the clone");
	is_int(ver_at(t.dev, 28), 5, "the original does not see the clone's write");
	is_int(ver_at(cl, 28), 6, "the clone does");
	blk_close(cl);
	is_int(blk_power_cut(t.dev, &blk_chooser_zero, NULL), 0, "cut with nothing in flight");
	is_int(blk_power_restore(t.dev), 0, "power back on");
	is_int(ver_at(t.dev, 43), 5, "completed writes survive a quiet cut");
	is_int(tstat(t.dev, "host_writes"), 1, "host_writes counted");
	is_int(tstat(t.dev, "nand_erases"), 2, "two erase blocks rewritten");
	is_int(tstat(t.dev, "nand_programs"), 8, "every page of both programmed");
	tflash_close(&t);

	/* remount the same lower: the map is rebuilt from what is on it */
	struct bdev *mem, *f;
	uint64_t need;
	flash_params_check(&p, 512, &need, NULL);
	tap_require(blk_mem_open(512, need / 512, &mem) == 0, "mem");
	struct bdev *cow;
	blk_cow_open(mem, &cow);
	tap_require(dev_flash_open(&p, cow, &f, &err) == 0, "open on blank lower");
	wr(f, 9, 3);
	struct bdev *copy;
	tap_require(blk_clone(blk_lower(f, 0), &copy) == 0, "clone the lower");
	blk_close(f);
	p.eb_size = 32768;
	is_int(dev_flash_open(&p, copy, &f, &err), -EINVAL, "other geometry is refused");
	blk_close(copy);
	ok(strstr(err.msg, "another geometry") != NULL, "and says so: %s", err.msg);
	blk_close(mem);

	small_cheap(&p);
	tap_require(blk_mem_open(512, 64, &mem) == 0, "small mem");
	is_int(dev_flash_open(&p, mem, &f, &err), -EINVAL, "a too-small lower is refused");
	ok(strstr(err.msg, "needs") != NULL, "naming the size it needs: %s", err.msg);
	blk_close(mem);
	p.eb_size = 12288;
	is_int(flash_params_check(&p, 512, NULL, &err), -EINVAL, "erase block not a power of two");
	small_cheap(&p);
	p.size = 100000;
	is_int(flash_params_check(&p, 512, NULL, &err), -EINVAL, "size not whole erase blocks");
	small_cheap(&p);
	p.page_size = 256;
	is_int(flash_params_check(&p, 512, NULL, &err), -EINVAL, "page below 512");
}

static void test_write_amp(void)
{
	struct flash_params p;
	flash_params_default(&p);
	p.ftl = FLASH_FTL_CHEAP;
	p.eb_size = 128 << 10;
	p.size = 16 << 20;
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "16M cheap, 128k erase blocks");
	struct bo_rng r;
	bo_rng_seed(&r, 7);
	unsigned char b[4096];
	memset(b, 0x5a, sizeof(b));
	int rc = 0;
	for (int i = 0; i < 400 && !rc; i++)
		rc = blk_write(t.dev, bo_rng_below(&r, (16 << 20) / 4096) * 8, 8, b, 0);
	is_int(rc, 0, "400 random 4 KiB writes");
	is_int(tstat(t.dev, "write_amplification"), 32000,
	       "write amplification = erase block / 4 KiB = 32 exactly (x1000)");
	is_int(tstat(t.dev, "nand_erases"), 400, "one erase per write");
	tflash_close(&t);
}

static void test_endurance(void)
{
	struct flash_params p;
	small_cheap(&p);
	p.endurance = 5;
	p.op_percent = 10; /* 16 user blocks: 2 spares */
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "cheap with endurance 5 and 2 spares");
	int ok_writes = 0, rc = 0;
	uint64_t v = 0;
	while (rc == 0 && v < 100) {
		rc = wr(t.dev, 5, v + 1);
		if (rc == 0)
			ok_writes++, v++;
	}
	is_int(rc, -EIO, "a worn-out block gives -EIO");
	is_int(ok_writes, 15, "5 erases on the block and on each of 2 spares");
	is_int(ver_at(t.dev, 5), (int64_t)v, "the last acknowledged write is still readable");
	is_int(wr(t.dev, 6, 99), -EIO, "and stays refused for the whole erase block");
	is_int(ver_at(t.dev, 5), (int64_t)v, "the refused writes changed nothing");
	is_int(tstat(t.dev, "bad_blocks"), 3, "the block and both spares went bad");
	is_int(wr(t.dev, 100, 1), 0, "other erase blocks still take writes");
	blk_power_cut(t.dev, &blk_chooser_zero, NULL);
	is_int(blk_power_restore(t.dev), 0, "power cycle");
	is_int(ver_at(t.dev, 5), (int64_t)v, "the data of the bad block survives a power cycle");
	is_int(tstat(t.dev, "bad_blocks"), 3, "bad blocks are remembered on the medium");
	is_int(wr(t.dev, 5, 1000), -EIO, "and still refuse writes");
	tflash_close(&t);
}

struct intact {
	int outcomes, a_intact, all_new;
};

static int intact_cb(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	struct intact *c = ctx;
	(void)dec;
	c->outcomes++;
	c->a_intact += ver_at(st, 27) == 1;
	c->all_new += ver_at(st, 27) == 1 && ver_at(st, 3) == 2 && ver_at(st, 5) == 3;
	return 0;
}

/* Two cached writes to one erase block: a cut between them leaves the first
 * complete; garbage only hits pages whose latest erase happened. */
static void test_cache_garbage(void)
{
	struct flash_params p;
	small_cheap(&p);
	p.garbage = true;
	p.cache_bytes = 4096;
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "cheap, garbage, 4k cache");
	wr(t.dev, 27, 1);
	blk_flush(t.dev);
	wr(t.dev, 3, 2);
	wr(t.dev, 5, 3);
	struct intact c = {0};
	bool complete;
	blk_cut_foreach(t.dev, NULL, 100, intact_cb, &c, &complete);
	is_int(c.outcomes, 13,
	       "two read-modify-writes of 5 steps: 11 outcomes, and one inside each erase");
	is_int(c.a_intact, 3,
	       "A survives before the first erase, between the two writes, and "
	       "after both");
	is_int(c.all_new, 1, "one outcome has both cached writes");
	tflash_close(&t);
}

/* Wear-out behind a write cache surfaces as an error of the request that made the
 * cache destage (here the flush): the host is told, and what it was told is durable
 * stays readable. */
static void test_cache_endurance(void)
{
	struct flash_params p;
	small_cheap(&p);
	p.endurance = 3;
	p.cache_bytes = 4096;
	struct tflash t;
	tap_require(tflash_open(&p, &t, NULL) == 0, "cheap, endurance 3, 4k cache");
	uint64_t durable = 0;
	int rc = 0, flushes = 0;
	for (uint64_t v = 1; v < 20 && rc == 0; v++) {
		is_int(wr(t.dev, 9, v), 0, "write %llu is cached", (unsigned long long)v);
		rc = blk_flush(t.dev);
		if (rc == 0)
			durable = v, flushes++;
	}
	is_int(rc, -EIO, "the flush that needed a worn-out erase fails: %s",
	       bo_errstr(&t.dev->err, rc));
	is_int(flushes, 3, "three flushes succeeded (three erases)");
	is_int(ver_at(t.dev, 9), (int64_t)durable, "the last flushed version is still there");
	tflash_close(&t);
}

int main(void)
{
	test_cache_endurance();
	test_cache_garbage();
	test_collateral(false);
	test_collateral(true);
	test_no_partial_erase();
	test_basics();
	test_write_amp();
	test_endurance();
	return tap_done();
}
