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
	/* --vm: real-kernel rows, one scripts/vmtest run per cell (matrix_vm.c) */
	bool vm;
	unsigned vm_cuts;      /* power cuts per cell */
	const char *vm_script; /* path of scripts/vmtest */
	const char *vm_out;    /* where each run keeps its logs; NULL: build/vm-matrix */
};

int matrix_run(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err);

/* The real-kernel rows: appended to m (rows written into `room`, cells grown). */
size_t matrix_vm_nrows(void);
int matrix_vm_run(const struct matrix_run_opts *o, struct matrix *m, struct matrix_row *room,
                  struct bo_err *err);

#endif
