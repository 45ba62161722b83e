// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_blk.c — media throughput beside memcpy, and what a crash state costs:
 * overlay create+drop rate and the cost per changed sector. Prints figures and
 * ratios; never fails on speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/util.h"

#include "bench_goal.h"

#define DEV_BYTES (256ull << 20)

static double memcpy_gbs(size_t io)
{
	unsigned char *src = malloc(DEV_BYTES), *dst = malloc(io);
	memset(src, 1, DEV_BYTES);
	memset(dst, 0, io);
	double t0 = bo_now(), bytes = 0;
	while (bo_now() - t0 < 0.3) {
		for (uint64_t off = 0; off + io <= DEV_BYTES; off += io) {
			memcpy(dst, src + off, io);
			/* keep the copy: the compiler may not drop what it cannot see used */
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		bytes += DEV_BYTES;
	}
	double gbs = bytes / (bo_now() - t0) / 1e9;
	free(src);
	free(dst);
	return gbs;
}

static double dev_gbs(struct bdev *d, size_t io, bool write)
{
	unsigned char *buf = malloc(io);
	memset(buf, 3, io);
	uint32_t count = (uint32_t)(io / d->sector_size);
	double t0 = bo_now(), bytes = 0;
	do {
		for (uint64_t lba = 0; lba + count <= d->nr_sectors; lba += count) {
			if (write)
				blk_write(d, lba, count, buf, 0);
			else
				blk_read(d, lba, count, buf);
		}
		bytes += (double)blk_size_bytes(d);
	} while (bo_now() - t0 < 0.3);
	free(buf);
	return bytes / (bo_now() - t0) / 1e9;
}

int main(void)
{
	struct bdev *mem, *base, *cow;
	blk_mem_open(4096, DEV_BYTES / 4096, &mem);
	blk_mem_open(4096, DEV_BYTES / 4096, &base);
	base->read_only = true;
	blk_cow_open(base, &cow);

	printf("%-44s %8s %8s %7s\n", "media throughput, 256 MiB device", "GB/s", "memcpy",
	       "ratio");
	const size_t ios[] = {4096, 1 << 20};
	for (int i = 0; i < 2; i++) {
		size_t io = ios[i];
		double mc = memcpy_gbs(io);
		struct {
			const char *name;
			struct bdev *d;
			bool write;
		} runs[] = {{"mem write", mem, true},
		            {"mem read", mem, false},
		            {"cow write (first touch allocates)", cow, true},
		            {"cow overwrite (sectors held)", cow, true},
		            {"cow read (sectors held)", cow, false}};
		for (int r = 0; r < 5; r++) {
			double g = dev_gbs(runs[r].d, io, runs[r].write);
			printf("%-34s %5zu KiB %8.2f %8.2f %6.2fx\n", runs[r].name, io >> 10, g, mc,
			       g / mc);
			if (io == 1 << 20 && r < 2)
				bench_goal(r ? "mem read at 1 MiB / memcpy"
				             : "mem write at 1 MiB / memcpy",
				           g / mc, true, 0.5, "x");
		}
		/* the next I/O size starts from a fresh overlay */
		blk_close(cow);
		blk_cow_open(base, &cow);
	}
	printf("\n");

	/* fill the overlay for the clone figures below */
	dev_gbs(cow, 1 << 20, true);
	/* empty overlay create + drop */
	long n = 0;
	double t0 = bo_now();
	while (bo_now() - t0 < 0.5) {
		for (int i = 0; i < 10000; i++) {
			struct bdev *o;
			blk_cow_open(base, &o);
			blk_close(o);
		}
		n += 10000;
	}
	bench_goal("overlay create+drop (empty)", (double)n / (bo_now() - t0), true, 1e6, "/s");
	/* clone + drop of an overlay holding 64k changed sectors: O(1) by design */
	n = 0;
	t0 = bo_now();
	while (bo_now() - t0 < 0.5) {
		for (int i = 0; i < 10000; i++) {
			struct bdev *o;
			blk_clone(cow, &o);
			blk_close(o);
		}
		n += 10000;
	}
	printf("overlay clone+drop (%llu sectors held): %8.0f /s\n",
	       (unsigned long long)blk_cow_changed(cow), (double)n / (bo_now() - t0));
	/* cost per changed sector: clone, change k sectors, drop */
	unsigned char sec[4096];
	memset(sec, 9, sizeof(sec));
	const int ks[] = {1, 64, 4096};
	for (int i = 0; i < 3; i++) {
		int k = ks[i], reps = 0;
		t0 = bo_now();
		while (bo_now() - t0 < 0.3) {
			struct bdev *o;
			blk_clone(cow, &o);
			for (int s = 0; s < k; s++)
				blk_write(o, (uint64_t)s * 13 % o->nr_sectors, 1, sec, 0);
			blk_close(o);
			reps++;
		}
		printf("clone + %4d changed 4 KiB sectors + drop: %8.2f us/sector\n", k,
		       (bo_now() - t0) / reps / k * 1e6);
	}
	blk_close(cow);
	blk_close(base);
	blk_close(mem);
	return 0;
}
