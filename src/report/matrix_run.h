/* matrix_run.h — running the explorations that fill a struct matrix (matrix.h). */
#ifndef BLACKOUT_REPORT_MATRIX_RUN_H
#define BLACKOUT_REPORT_MATRIX_RUN_H

#include "blackout/crash.h"
#include "blackout/matrix.h"

struct matrix_run_opts {
	bool full;
	unsigned jobs;
	uint64_t seed;
	uint64_t max_states; /* per exploration */
	const char *self;    /* how to call blackout in rebuild commands */
	crash_fsck_fn fsck;  /* own fsck for the consistency invariant, or NULL */
	void *fsck_ctx;
	void (*progress)(void *ctx, size_t done, size_t total, double seconds);
	void *progress_ctx;
};

int matrix_run(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err);

#endif
