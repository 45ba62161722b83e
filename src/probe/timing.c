// SPDX-License-Identifier: GPL-2.0-or-later
/* timing.c — flashbench's method without a power pull: the cost of a two-block write
 * straddling offsets aligned to 2^i but not 2^(i+1) jumps at the erase block (below it
 * the pair lies in one block, from it on in two); and the cost of small writes rotating
 * over N erase blocks jumps past the number of blocks the device keeps open. The cost
 * is wall-clock time of a FUA write on hardware, a model's NAND work in-process. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackout/probe.h"

#define MAX_SAMPLES    64
#define MIN_CONFIDENCE 0.5

static int wall_cost(void *ctx, struct bdev *d, uint64_t off, size_t len, const void *buf,
                     double *cost)
{
	(void)ctx;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int rc = blk_pwrite(d, off, len, buf, BLK_FUA);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*cost = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* the spread of the samples: median absolute deviation, at least 1% of the median */
static double spread(const double *v, unsigned n, double med)
{
	double d[MAX_SAMPLES];
	for (unsigned i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	double m = median(d, n);
	return m > med / 100 ? m : med / 100 + 1e-9;
}

/* The largest jump between neighbouring points, as a confidence: how many spreads it
 * stands above the noise, mapped to 0..1. */
static unsigned knee(const double *cost, const double *noise, unsigned n, double *conf)
{
	unsigned best = 0;
	double score = 0;
	for (unsigned i = 1; i < n; i++) {
		double jump = cost[i] - cost[i - 1];
		double s = jump / (noise[i] + noise[i - 1]);
		if (jump > cost[i - 1] * 0.25 && s > score) {
			score = s;
			best = i;
		}
	}
	*conf = score <= 0 ? 0 : 1 - 1 / (1 + score / 4);
	return best;
}

int probe_timing_run(struct bdev *d, const struct probe_timing_opts *o, struct probe_timing *t,
                     struct bo_err *err)
{
	memset(t, 0, sizeof(*t));
	uint64_t max_eb = o->max_eb ? o->max_eb : 16u << 20;
	unsigned reps = o->repeats ? o->repeats : 8, max_open = o->max_open ? o->max_open : 16;
	if (reps > MAX_SAMPLES || max_open > 32)
		return bo_errf(err, -EINVAL, "probe timing: at most %d repeats, 32 open blocks",
		               MAX_SAMPLES);
	uint64_t bytes = blk_size_bytes(d);
	if (bytes < 4 * max_eb)
		max_eb = bytes / 4;
	if (max_eb < 4 * PROBE_BLOCK)
		return bo_errf(
		    err, -EINVAL,
		    "probe timing: the device (%llu bytes) is too small: 64 KiB at least",
		    (unsigned long long)bytes);
	int (*cost)(void *, struct bdev *, uint64_t, size_t, const void *, double *) =
	    o->write_cost ? o->write_cost : wall_cost;
	unsigned char *buf = aligned_alloc(PROBE_BLOCK, 2 * PROBE_BLOCK);
	if (!buf)
		return bo_errf(err, -ENOMEM, "out of memory");
	memset(buf, 0x5a, 2 * PROBE_BLOCK);
	double noise[40], s[MAX_SAMPLES];
	int rc = 0;
	/* boundaries 2^i for 8 KiB .. max_eb: the pair straddles odd multiples of 2^i */
	for (uint64_t b = 2 * PROBE_BLOCK; rc == 0 && b <= max_eb && t->ncost < 40; b *= 2) {
		uint64_t odd = bytes / b; /* how many multiples fit */
		for (unsigned r = 0; rc == 0 && r < reps; r++) {
			uint64_t k = (2 * (uint64_t)r + 1) % (odd > 2 ? odd - 1 : 1);
			if (k % 2 == 0)
				k++;
			uint64_t at = k * b - PROBE_BLOCK;
			if (at + 2 * PROBE_BLOCK > bytes)
				at = b - PROBE_BLOCK;
			rc = cost(o->ctx, d, at, 2 * PROBE_BLOCK, buf, &s[r]);
		}
		if (rc)
			break;
		t->cost[t->ncost] = median(s, reps);
		noise[t->ncost] = spread(s, reps, t->cost[t->ncost]);
		t->ncost++;
	}
	if (rc == 0 && t->ncost >= 2) {
		unsigned i = knee(t->cost, noise, t->ncost, &t->eb_confidence);
		/* a jump within the noise names nothing */
		t->erase_block =
		    i && t->eb_confidence >= MIN_CONFIDENCE ? (2ull * PROBE_BLOCK) << i : 0;
	}
	/* open blocks: one block written in each of n erase blocks in turn; with n past
	 * what the device keeps open, each write closes (copies, erases) another */
	uint64_t eb = t->erase_block ? t->erase_block : max_eb;
	double onoise[33];
	for (unsigned n = 1; rc == 0 && n <= max_open && (n + 1) * eb <= bytes; n++) {
		for (unsigned r = 0; rc == 0 && r < reps; r++) {
			double c = 0, one;
			for (unsigned j = 0; rc == 0 && j < n; j++) {
				rc = cost(o->ctx, d, j * eb + (r % 8) * PROBE_BLOCK, PROBE_BLOCK,
				          buf, &one);
				c += one;
			}
			s[r] = c / n;
		}
		if (rc)
			break;
		t->open_cost[n] = median(s, reps);
		onoise[n] = spread(s, reps, t->open_cost[n]);
		t->nopen = n;
	}
	if (rc == 0 && t->nopen >= 2) {
		unsigned i = knee(t->open_cost + 1, onoise + 1, t->nopen, &t->open_confidence);
		/* the jump from i to i + 1 blocks: i stay open */
		t->open_blocks = t->open_confidence >= MIN_CONFIDENCE ? i : 0;
	}
	free(buf);
	if (rc)
		return bo_errf(err, rc, "probe timing: a write failed: %s", bo_errstr(&d->err, rc));
	return 0;
}

void probe_timing_print(const struct probe_timing *t, FILE *out)
{
	for (unsigned i = 0; i < t->ncost; i++)
		fprintf(out, "pair across %7llu KiB boundaries: %.3g\n",
		        (unsigned long long)(((2ull * PROBE_BLOCK) << i) >> 10), t->cost[i]);
	if (t->erase_block)
		fprintf(out, "erase block: %llu KiB (confidence %.2f)\n",
		        (unsigned long long)(t->erase_block >> 10), t->eb_confidence);
	else
		fprintf(out, "erase block: no boundary stood out (best confidence %.2f)\n",
		        t->eb_confidence);
	for (unsigned n = 1; n <= t->nopen; n++)
		fprintf(out, "rotating over %2u erase blocks: %.3g\n", n, t->open_cost[n]);
	if (t->open_blocks)
		fprintf(out, "open erase blocks: %u (confidence %.2f)\n", t->open_blocks,
		        t->open_confidence);
	else
		fprintf(out, "open erase blocks: no knee up to %u (best confidence %.2f)\n",
		        t->nopen, t->open_confidence);
}
