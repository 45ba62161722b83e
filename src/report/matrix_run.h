/* matrix_run.h — inside the matrix runner: the real-kernel rows (matrix_vm.c) that
 * matrix_run() (matrix.h) appends. */
#ifndef BLACKOUT_REPORT_MATRIX_RUN_H
#define BLACKOUT_REPORT_MATRIX_RUN_H

#include "blackout/crash.h"
#include "blackout/matrix.h"

/* The real-kernel rows: appended to m (rows written into `room`, cells grown). */
size_t matrix_vm_nrows(void);
int matrix_vm_run(const struct matrix_run_opts *o, struct matrix *m, struct matrix_row *room,
                  struct bo_err *err);

#endif
