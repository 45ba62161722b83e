/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shrink.h — two-axis shrinking of a failing workload (docs/shrink.md): delta-debug its
 * run steps to a minimal sequence that still breaks the same invariant, then pick the
 * failing crash state of that sequence that lost the fewest sectors, and write a
 * dm-flakey reproducer that runs without blackout. */
#ifndef BLACKOUT_SHRINK_H
#define BLACKOUT_SHRINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "blackout/crash.h"
#include "blackout/err.h"

/* What a test of one candidate says (Zeller's ddmin: only a failure shrinks). */
enum shrink_verdict {
	SHRINK_PASS,       /* it ran and did not fail the same way */
	SHRINK_FAIL,       /* it ran and failed with the same signature */
	SHRINK_UNRESOLVED, /* it cannot run as written (a step on a name no step made) */
};

/* Tests the candidate made of elements keep[0..n) (increasing indices). 0 or -errno
 * (an error stops the search). */
typedef int (*shrink_test_fn)(void *ctx, const size_t *keep, size_t n, enum shrink_verdict *v);

/* ddmin over elements 0..n-1, whose whole set fails: out (room for n) gets a subset that
 * fails and from which no single chunk at the finest granularity reached can be removed
 * (1-minimal when it ends at single elements). *nout its size, *tests the number of
 * candidates tested. 0 or -errno. */
int shrink_ddmin(size_t n, shrink_test_fn test, void *ctx, size_t *out, size_t *nout,
                 unsigned *tests);

/* Runs one workload's crash states and reports the result (the failing states). The
 * model's runner is crash_explore with the stack and fs of shrink_cfg; a real-kernel
 * runner (vm_explore) fits the same signature. */
typedef int (*shrink_run_fn)(void *ctx, const struct crash_workload *wl, struct crash_result **out,
                             struct bo_err *err);

struct shrink_cfg {
	const char *stack, *fs; /* as explore's --stack and --fs */
	const struct crash_workload *wl;
	const char *min_file; /* where the minimal workload will be written: the rebuild
	                       * line's --workload (NULL: its name) */
	uint64_t max_states, seed;
	unsigned inv; /* the signature: a mask of crash_inv bits; 0 = the first invariant
	               * (in crash_inv order) the whole workload breaks */
	/* and silent: only states nobody reported count (the headline; a mount that fails
	 * breaks durable too, for a reason of its own). -1 = silent when the whole workload
	 * has a silent state with the invariant, 0 = any, 1 = silent */
	int silent;
	shrink_run_fn run; /* NULL: blackout's model (crash_explore) */
	void *run_ctx;
	size_t max_candidates; /* states measured on axis 2; 0 = 256 */
	void (*progress)(void *ctx, const char *what);
	void *progress_ctx;
};

struct shrink_result {
	unsigned inv;               /* the signature used: the invariant ... */
	bool silent;                /* ... broken silently */
	size_t nrun_before;         /* run steps of the workload given */
	struct crash_workload *wl;  /* the minimal workload (owned) */
	unsigned tests, unresolved; /* candidates run; candidates that could not run */
	size_t failing;             /* failing states of the minimal workload (signature) */
	size_t measured;            /* of them, measured on axis 2 */
	char state_id[160];         /* the failing state that lost the fewest sectors */
	size_t state_completed;     /* its steps completed */
	uint64_t lost, damaged;     /* its sectors: updates not persisted; torn/garbled */
	char rebuild[4096];         /* blackout explore ... --state ID (without --keep DIR) */
	/* dm-flakey: the latest step boundary k (0..nrun) such that every write from the
	 * start of run step k on being dropped still breaks the signature; -1: none does */
	long flakey_step;
	char flakey_detail[384]; /* what the model said of that state */
};

/* Shrinks cfg->wl on both axes. Errors: the workload does not fail with the signature
 * (-ESRCH), a runner's error. Axis 2 and the flakey boundary use blackout's model. */
int shrink_workload(const struct shrink_cfg *cfg, struct shrink_result *res, struct bo_err *err);
void shrink_result_free(struct shrink_result *res);

/* Whether a candidate can run as written: the generator's model (gen_check) when the
 * workload has the generator's set-up, then a dry run on blackout's ext3. 0 valid,
 * 1 invalid (why says so), -errno. */
int shrink_valid(const struct crash_workload *wl, char *why, size_t whylen);

/* The xfstests-style reproducer (POSIX sh, dmsetup, mkfs, mount): the workload on
 * dm-flakey over $DEV, writes dropped from the start of run step `step` on, unmount,
 * writes allowed, mount, and a check of what the completed fsyncs promised. With
 * NO_DROP=1 in its environment it runs the same steps without dropping (the control).
 * -ENOTSUP (err naming the step) for a step a shell cannot express. */
int shrink_flakey_script(const struct crash_workload *wl, const char *fs, size_t step,
                         const char *header, FILE *f, struct bo_err *err);

#endif
