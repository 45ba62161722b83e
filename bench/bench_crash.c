// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_crash.c — crash states judged per second on append+fsync over a 64 MiB image
 * with 1 KiB blocks (single core), peak memory, and where the time goes; beside it
 * the black-box way measured in the same run (each state written out as an image and
 * judged by e2fsck -fn), as a ratio. Never fails on speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "blackout/crash.h"
#include "blackout/util.h"

#include "bench_goal.h"

#define STACK "cache(size=256k,flush=honor) > disk > mem(size=64M)"
#define FS    "ext3,data=ordered,barrier=1,bs=1024"

static struct crash_result *run(const struct crash_workload *w, uint64_t max, bool blackbox)
{
	struct crash_config c = {.stack = STACK,
	                         .fs = FS,
	                         .wl = w,
	                         .max_states = max,
	                         .seed = 1,
	                         .no_fsck = blackbox,
	                         .e2fsck = blackbox};
	struct crash_result *r;
	struct bo_err err = {{0}};
	if (crash_explore(&c, &r, &err)) {
		fprintf(stderr, "bench_crash: %s\n", err.msg);
		return NULL;
	}
	return r;
}

int main(void)
{
	struct crash_workload *w;
	struct bo_err err = {{0}};
	if (crash_workload_load("append-fsync", &w, &err)) {
		fprintf(stderr, "bench_crash: %s\n", err.msg);
		return 1;
	}
	uint64_t max =
	    getenv("BENCH_CRASH_STATES") ? strtoull(getenv("BENCH_CRASH_STATES"), 0, 10) : 20000;
	struct crash_result *r = run(w, max, false);
	if (!r)
		return 1;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double judge_s = r->t_construct + r->t_recover + r->t_oracle + r->t_fsck;
	printf("stack %s, fs %s, workload append-fsync\n", STACK, FS);
	printf("blackout: %llu states built (%s), %llu distinct judged, %llu duplicates in "
	       "%.2fs\n",
	       (unsigned long long)r->built, r->exhaustive ? "exhaustive" : "sampled",
	       (unsigned long long)r->judged, (unsigned long long)r->duplicates, r->t_total);
	double per_s = r->t_total > 0 ? (double)r->judged / r->t_total : 0;
	double built_s = r->t_total > 0 ? (double)r->built / r->t_total : 0;
	printf("blackout: %.0f distinct states judged/s (%.0f states built/s), peak RSS %ld "
	       "MiB\n",
	       per_s, built_s, ru.ru_maxrss / 1024);
	printf("time split: record %.3fs, construction %.3fs, recovery %.3fs, oracle %.3fs, "
	       "fsck %.3fs (%.0f%% of the judging time in fsck)\n",
	       r->t_record, r->t_construct, r->t_recover, r->t_oracle, r->t_fsck,
	       judge_s > 0 ? 100 * r->t_fsck / judge_s : 0);
	bench_goal("explorer distinct states judged/s, one core", per_s, true, 2000, "/s");
	bench_goal("explorer states built/s, one core", built_s, true, 10000, "/s");

	/* the black-box peer: the same exploration judged by image + e2fsck per state */
	uint64_t bmax = 200;
	struct crash_result *b = run(w, bmax, true);
	if (b) {
		double bps = b->t_total > 0 ? (double)b->judged / b->t_total : 0;
		printf("black-box (image + e2fsck -fn per state): %llu states judged in %.2fs, "
		       "%.1f states/s\n",
		       (unsigned long long)b->judged, b->t_total, bps);
		printf(
		    "ratio: blackout judges %.1fx the black-box rate (published black-box tester "
		    "~170/s)\n",
		    bps > 0 ? per_s / bps : 0);
		crash_result_free(b);
	}
	crash_result_free(r);
	crash_workload_free(w);
	return 0;
}
