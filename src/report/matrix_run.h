/* SPDX-License-Identifier: GPL-2.0-or-later */
/* matrix_run.h — inside the matrix runner: the plan (which rows, columns and workloads,
 * and the explorations that fill each cell, dealt to shards), one exploration's result,
 * the real-kernel cell runner, and parts (one shard's results) folded into cells. */
#ifndef BLACKOUT_REPORT_MATRIX_RUN_H
#define BLACKOUT_REPORT_MATRIX_RUN_H

#include <sys/types.h>

#include "blackout/crash.h"
#include "blackout/matrix.h"

#define MATRIX_EX_MAX_OPS    600
#define MATRIX_EX_MAX_DAMAGE 32
#define MATRIX_MAX_ROWS      32
#define MATRIX_MAX_COLS      16
#define MATRIX_MAX_WLS       64
/* a real-kernel filesystem is made this large, so every row's vm stack must hold it */
#define MATRIX_VM_FS_BYTES (64ull << 20)

/* One exploration: a workload on a row's stack with a column's filesystem. wl indexes
 * the plan's workloads, or its vm workloads in a real-kernel column. */
struct matrix_task {
	uint32_t row, col, wl;
};

/* What one exploration found. example: its cell's candidate (the better failing state
 * of the shard's explorations of that cell, with its damage map), else NULL. */
struct matrix_tres {
	bool done;
	int rc; /* a real-kernel run that failed: the cell says so (err) */
	char err[256];
	uint64_t states, ok, viol[MI_N], silent, detected, allowed;
	uint64_t silent_lost, write_errors; /* matrix_cell's */
	char kernel[64];                    /* a real-kernel run's release, else "" */
	bool exhaustive;
	double coverage; /* to 10 significant digits where made, so a part carries it exactly */
	double seconds;
	struct matrix_example *example;
};

/* A row as the runner knows it: the explorer's stack, and how Linux gets one. */
struct matrix_rowspec {
	struct matrix_row row;
	const char *needs; /* the model that must be in the build */
	bool quick;
	const char *arm; /* fault rule armed once the set-up is on the media */
	bool verify;     /* ext3 columns get verify=fast */
	unsigned budget_div;
	enum matrix_row_key base; /* verify rows: the row they repeat */
	unsigned cost;            /* an exploration's cost, relative: how shards are dealt */
	const char *fs_extra;     /* appended to ext3 columns' --fs (",checkpoint_errors=...") */
	const char *workloads;    /* the row's own quick workloads (comma-separated), or NULL */
	/* --quick runs only these columns of the row (bit 1 << matrix_col_key; 0: every
	 * column), so rows that answer one verdict keep the quick run within its minute */
	uint32_t quick_cols;
};

struct matrix_colspec {
	struct matrix_col col;
	const char *fs; /* the explorer's --fs, or vmtest's for a real-kernel column */
	unsigned cost;  /* an exploration's cost, relative to the other columns' */
};

/* The plan: m->owned of a planned struct matrix. */
struct matrix_plan {
	struct matrix_run_opts opts; /* what it was planned from (strings not owned) */
	struct matrix_row rows[MATRIX_MAX_ROWS];
	const struct matrix_rowspec *spec[MATRIX_MAX_ROWS];
	struct matrix_col cols[MATRIX_MAX_COLS];
	const struct matrix_colspec *cspec[MATRIX_MAX_COLS];
	const char *wls[MATRIX_MAX_WLS], *vm_wls[MATRIX_MAX_WLS];
	size_t nvm_wls;
	char names[2048]; /* the workload names the lists point into */
	struct matrix_task *tasks;
	uint32_t *deal; /* per task: its place in the order tasks are dealt to shards */
	size_t ntask;
	char (*na)[128]; /* per cell: why it has no exploration ("" when it has) */
};

static inline struct matrix_plan *matrix_plan_of(const struct matrix *m)
{
	return m->owned;
}

/* matrix_plan.c: the tables, the plan, and which shard runs which exploration. */
int matrix_plan_make(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err);
unsigned matrix_task_shard(const struct matrix *m, size_t k, unsigned nshards);
const char *matrix_task_workload(const struct matrix *m, const struct matrix_task *t);
/* The plan as JSON (mode, seed, budget, rows, columns, workloads, vm): equal for two
 * parts exactly when their explorations are the same. */
void *matrix_plan_json(const struct matrix *m); /* json_t * */
/* true when a is the better example of a cell: silent over detected, then the
 * workload planned first (a total order, so every shard and the merge agree). */
bool matrix_example_better(const struct matrix_example *a, uint32_t awl,
                           const struct matrix_example *b, uint32_t bwl);
struct matrix_example *matrix_example_copy(const struct matrix_example *e);

/* matrix_vm.c: the real-kernel columns and their cells. */
size_t matrix_vm_ncols(void);
const struct matrix_colspec *matrix_vm_col(size_t i);
/* The row's stack as served to Linux (its media grown to hold a 64 MiB filesystem), or
 * NULL with why not in `why`. */
const char *matrix_vm_stack(const struct matrix_rowspec *row, char *why, size_t len);
/* Linux md's counterpart of a RAID row (the linux-md-ext4 column): the row's members
 * under a concat, served as member exports, and vmtest's --md and --md-chunk. */
struct matrix_vm_md {
	char stack[256];
	char md[24];    /* "5:4:1" or "5:4:1:j" */
	char chunk[12]; /* KiB */
};
/* The md counterpart of the row's guest-sized stack; -EINVAL with why not in `why`
 * (not a RAID row, two members missing, a model of md before it passed flushes). */
int matrix_vm_md_of(const struct matrix_rowspec *row, struct matrix_vm_md *md, char *why,
                    size_t len);
/* One real-kernel exploration: the workload under Linux's `fs` on `stack`, within
 * `budget`, logs under dir; md: over Linux md (NULL: on the stack itself); integrity:
 * over dm-integrity (vmtest --integrity). */
int matrix_vm_cell(const struct matrix_run_opts *o, const char *stack, const char *fs,
                   const struct matrix_vm_md *md, bool integrity, const char *workload,
                   unsigned budget, const char *dir, struct crash_result **out, struct bo_err *err);
/* Whether the linux-dmint-ext4 column runs on the row (cheap flash, torn sectors); else
 * why not in `why`. */
bool matrix_vm_dmint_on(const struct matrix_rowspec *row, char *why, size_t len);

/* A real-kernel run's result (the explorer's format), refused when its counts do not
 * add up. */
int matrix_vm_result_load(const char *path, struct crash_result **out, struct bo_err *err);
/* The last line of the log at path that says something ("(no output)" when none), at
 * most 100 bytes: what a failed run's cell shows (matrix_vm.c). */
void matrix_vm_last_line(const char *path, char *buf, size_t len);
struct vm_explore_opts;
/* Starts one real-kernel run (vm_explore, or the BLACKOUT_VM_CELL stand-in o->vm_cmd)
 * in a child process: its messages to log, its result to json in the explorer's
 * format, ended after `seconds`. Returns the child's pid (-1: fork failed); it exits 0,
 * 3 (some state failed) or 1 (the log's last line says why). */
pid_t matrix_vm_start(const struct matrix_run_opts *o, const struct vm_explore_opts *vo,
                      const char *log, const char *json, unsigned seconds);
/* A run's wait status says it was ended at its bound. */
bool matrix_vm_timed_out(int status);

/* matrix_apps.c: the application section's renderers (matrix_write_*'s hooks). */
void matrix_apps_print(const struct matrix *m, FILE *f);
void *matrix_apps_json(const struct matrix *m); /* json_t * */
void matrix_apps_md(const struct matrix *m, FILE *f);
void matrix_apps_html(const struct matrix *m, FILE *f);
void matrix_apps_free(struct matrix_apps *a);
/* A cell of the section that ran, as the matrix's cells read (row TORN_ROW or a matrix
 * row's id, column an example's id), or NULL: matrix_find's fallback, so a verdict may
 * rest on it. */
const struct matrix_cell *matrix_apps_find(const struct matrix *m, const char *row,
                                           const char *col);
/* The ATOMIC-SECTORS line of the section's torn-page row: PostgreSQL's full_page_writes
 * off against on under 8 KiB pages torn at 4 KiB (0 or 1 verdict; matrix_verdicts puts
 * it after the seed's ATOMIC-SECTORS lines). */
size_t matrix_apps_verdicts(const struct matrix *m, struct matrix_verdict *out, size_t max);

/* matrix_part.c */
struct matrix_part {
	struct matrix m; /* planned; cells empty */
	unsigned shard, nshards;
	double seconds;
	struct matrix_tres *res; /* per task of the plan; only this shard's are done */
};

#endif
