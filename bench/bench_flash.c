// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_flash.c — simulated 4 KiB random writes per second on a 1 GiB flash device,
 * cheap and careful FTL, with the write amplification each produced. The peer is the
 * bare RAM medium under the same workload, measured in the same run: the ratio is the
 * cost of the model itself. Never fails on speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/flash.h"
#include "blackout/util.h"

#include "bench_goal.h"

#define GIB (1ull << 30)

struct stat_one {
	const char *key;
	uint64_t v;
};

static void emit(void *ctx, const char *key, uint64_t v)
{
	struct stat_one *s = ctx;
	if (strcmp(s->key, key) == 0)
		s->v = v;
}

static uint64_t stat_of(struct bdev *d, const char *key)
{
	struct stat_one s = {key, 0};
	blk_stats(d, emit, &s);
	return s.v;
}

/* ops/s of n random 4 KiB writes; *wa gets the write amplification of just these */
static double run(struct bdev *d, uint64_t n, uint64_t seed, double *wa)
{
	uint64_t pages = blk_size_bytes(d) / 4096;
	uint32_t spp = 4096 / d->sector_size;
	unsigned char buf[4096];
	memset(buf, 0x3c, sizeof(buf));
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	uint64_t p0 = stat_of(d, "nand_programs");
	double t0 = bo_now();
	for (uint64_t i = 0; i < n; i++) {
		buf[0] = (unsigned char)i;
		int rc = blk_write(d, bo_rng_below(&r, pages) * spp, spp, buf, 0);
		if (rc) {
			fprintf(stderr, "bench_flash: write failed: %s\n", bo_errstr(&d->err, rc));
			exit(1);
		}
	}
	double dt = bo_now() - t0;
	if (wa)
		*wa = (double)(stat_of(d, "nand_programs") - p0) * 4096 / (double)(n * 4096);
	return n / dt;
}

static struct bdev *open_flash(enum flash_ftl ftl, uint32_t op)
{
	struct flash_params p;
	flash_params_default(&p);
	p.ftl = ftl;
	p.size = GIB;
	p.eb_size = 128 << 10;
	p.op_percent = op;
	uint64_t need;
	struct bo_err err = {{0}};
	struct bdev *mem, *d;
	if (flash_params_check(&p, 512, &need, &err) || blk_mem_open(512, need / 512, &mem) ||
	    dev_flash_open(&p, mem, &d, &err)) {
		fprintf(stderr, "bench_flash: cannot open: %s\n", err.msg);
		exit(1);
	}
	return d;
}

static void fill(struct bdev *d)
{
	unsigned char buf[1 << 20];
	memset(buf, 0x11, sizeof(buf));
	uint32_t n = sizeof(buf) / d->sector_size;
	for (uint64_t lba = 0; lba < d->nr_sectors; lba += n)
		if (blk_write(d, lba, n, buf, 0)) {
			fprintf(stderr, "bench_flash: fill failed\n");
			exit(1);
		}
}

int main(void)
{
	const uint64_t n_careful = 1000000, n_cheap = 20000;
	struct bdev *mem;
	if (blk_mem_open(512, GIB / 512, &mem))
		return 1;
	fill(mem);
	double peer = run(mem, n_careful, 1, NULL);
	blk_close(mem);
	printf("4 KiB random writes on a 1 GiB device (128k erase blocks, 4k pages)\n");
	printf("%-34s %12.0f ops/s  (peer)\n", "mem (bare RAM medium)", peer);

	static const uint32_t ops[] = {7, 28};
	for (unsigned i = 0; i < 2; i++) {
		struct bdev *d = open_flash(FLASH_FTL_CAREFUL, ops[i]);
		fill(d); /* steady state: every logical page mapped, GC has to work */
		double wa;
		double rate = run(d, n_careful, 2, &wa);
		char name[64];
		snprintf(name, sizeof(name), "flash careful, %u%% over-provisioning", ops[i]);
		printf("%-34s %12.0f ops/s  %5.3fx peer  write amplification %6.3f\n", name, rate,
		       rate / peer, wa);
		bench_goal(name, rate, true, 200000, " ops/s");
		blk_close(d);
	}
	struct bdev *d = open_flash(FLASH_FTL_CHEAP, 7);
	double wa;
	double rate = run(d, n_cheap, 3, &wa);
	printf("%-34s %12.0f ops/s  %5.3fx peer  write amplification %6.3f\n", "flash cheap", rate,
	       rate / peer, wa);
	blk_close(d);
	return 0;
}
