/* SPDX-License-Identifier: GPL-2.0-or-later */
/* matrix.h — the expectations table: device stacks (rows) x filesystem configurations
 * (columns), each cell the measured outcome of crash exploration over the built-in
 * workloads. This header holds the table, its renderers (terminal, JSON, Markdown,
 * self-contained HTML) and the verdicts computed from it; running the explorations
 * that fill it is matrix_run(). The JSON schema is docs/matrix.md. */
#ifndef BLACKOUT_MATRIX_H
#define BLACKOUT_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "blackout/crash.h"
#include "blackout/err.h"

/* The oracle's invariants (DESIGN.md), in report order. */
enum matrix_inv {
	MI_DURABLE,    /* what fsync/fdatasync/sync made durable is there */
	MI_STALE,      /* every byte of a file is a byte written to it, or zero */
	MI_BYSTANDER,  /* files synced before the workload and never touched are intact */
	MI_CONSISTENT, /* fsck finds nothing after recovery */
	MI_ATOMIC,     /* rename over a file after fsync of the new one: old or new */
	MI_N
};
const char *matrix_inv_name(enum matrix_inv i); /* "durable", "stale", ... */

/* One operation of the example's recorded I/O timeline. */
struct matrix_op {
	char op[8]; /* write, flush, discard, mark */
	uint64_t lba;
	uint32_t count;
	bool fua;
	char mark[64];
};

/* A block of the example state that differs from what the oracle expected. */
struct matrix_damage {
	uint64_t block;  /* filesystem block */
	char what[16];   /* "lost" (old content), "damaged" (neither old nor new) */
	char owner[224]; /* path of the file or structure it belongs to, or "" */
	uint32_t ino;    /* 0 when not an inode's block */
};

/* One failing state of a cell, kept so a person can see what happened. */
struct matrix_example {
	char workload[64];
	char state_id[160];
	char rebuild[1024]; /* the command that rebuilds exactly this state */
	char broken[640];   /* which invariants broke, and the oracle's words */
	bool silent;
	size_t nops, cut; /* the cut happened after op `cut` (or during it: cut_inflight) */
	bool cut_inflight;
	struct matrix_op *ops;
	size_t ndamage;
	struct matrix_damage *damage;
};

struct matrix_cell {
	bool ran;    /* false: the configuration does not apply (reason in note) */
	bool failed; /* a real-kernel run of it failed (note: why); not in the JSON */
	char note[128];
	uint64_t states;       /* crash states judged */
	uint64_t ok;           /* states with no broken invariant */
	uint64_t viol[MI_N];   /* states breaking each invariant */
	uint64_t silent;       /* states with a broken invariant nobody reported */
	uint64_t detected;     /* states where mount/fsck/checksums reported the damage */
	uint64_t allowed;      /* ok states showing what the configuration permits
	                      * (data=writeback's stale data), reported as such */
	uint64_t silent_lost;  /* states that lost synced data (durable or bystander) silently */
	uint64_t write_errors; /* writes of the recorded runs that failed (armed fault rules) */
	bool exhaustive;       /* every state the stack allows was judged */
	double coverage;       /* judged / allowed, when sampled */
	double seconds;        /* not in matrix.json: runs compare byte for byte */
	struct matrix_example *example; /* a silent failure if any, of the first workload */
	char kernel[64]; /* a real-kernel cell's: the guest kernel release that ran */
};

/* Every row and column the runner can show, as typed ids: code that reads a cell
 * (the verdict rules, the verify-row filter, the real-kernel rows) names it by these;
 * the strings in struct matrix_row/col are what the JSON and the report print. */
enum matrix_row_key {
	MR_NOCACHE,
	MR_CACHE,
	MR_CACHE_LYING,
	MR_TORN,
	MR_FLASH_CHEAP_128K,
	MR_FLASH_CHEAP_128K_VERIFY,
	MR_FLASH_CHEAP_4M,
	MR_FLASH_CAREFUL,
	MR_RAID5,
	MR_RAID5_DEGRADED,
	MR_RAID5_DEGRADED_VERIFY,
	MR_RAID5_DEGRADED_JOURNAL,
	MR_RAID6_2MISSING,
	MR_WRITE_ERRORS,
	MR_WRITE_ERRORS_2009, /* the write-errors rows: checkpoint_errors=ignore */
	MR_BAD_SECTORS_2009,
	MR_LOST_WRITES,
	MR_RAID5_CACHE,
	MR_RAID5_CACHE_LYING,
	MR_RAID5_NOBARRIER,
	MR_INTEGRITY_CHEAP_128K,
	MR_GARBAGE,
	MR_TORN_UNREADABLE,
	MR_N
};

enum matrix_col_key {
	MC_EXT2,
	MC_EXT3_ORDERED_B0,
	MC_EXT3_ORDERED_B1,
	MC_EXT3_JOURNAL_B1,
	MC_EXT3_WRITEBACK_B1,
	MC_EXT3_CSUM,
	MC_LINUX_EXT4_B1, /* real-kernel columns (--vm): Linux in qemu on the row's stack */
	MC_LINUX_EXT4_B0,
	MC_LINUX_XFS,
	MC_LINUX_BTRFS,
	MC_LINUX_MD_EXT4,    /* Linux md over the RAID row's members, ext4 b=1 on it */
	MC_LINUX_DMINT_EXT4, /* Linux dm-integrity on the row's device, ext4 b=1 on it */
	MC_N
};

struct matrix_row {
	const char *id;    /* "nocache" */
	const char *label; /* "no write cache" */
	const char *stack; /* the stack spec */
	const char *what;  /* which expectation this row tests */
	enum matrix_row_key key;
};

struct matrix_col {
	const char *id;    /* "ext3-ordered-b1" */
	const char *label; /* "ext3 ordered barrier=1" */
	const char *mkfs;  /* "ext3" or "ext3,metadata_csum" */
	const char *mount; /* "data=ordered,barrier=1" */
	enum matrix_col_key key;
	bool vm; /* a real-kernel column */
};

struct matrix {
	const char *mode; /* "quick" or "full" */
	uint64_t seed;
	size_t nrows, ncols;
	const struct matrix_row *rows;
	const struct matrix_col *cols;
	struct matrix_cell *cells; /* nrows * ncols, row-major */
	size_t nworkloads;
	const char *const *workloads;
	double seconds; /* wall time (of the longest shard, when merged) */
	void *owned;    /* tables the runner allocated; freed by matrix_free_cells */
	/* --vm: the application section (matrix_apps_run), or NULL: nothing of it in
	 * any output, so a run without it writes the same matrix.json as before */
	struct matrix_apps *apps;
};

static inline struct matrix_cell *matrix_cell(const struct matrix *m, size_t r, size_t c)
{
	return &m->cells[r * m->ncols + c];
}
const struct matrix_cell *matrix_find(const struct matrix *m, const char *row, const char *col);
/* The cell of row `row` and column `col` by typed ids; NULL when this run has not got it. */
const struct matrix_cell *matrix_cell_at(const struct matrix *m, enum matrix_row_key row,
                                         enum matrix_col_key col);

/* What a verdict's result is about, counted per cell (matrix_prop_count). */
enum matrix_prop {
	MP_ANY,         /* no invariant broke: states - ok */
	MP_DURABLE,     /* synced data kept: viol[MI_DURABLE] */
	MP_BYSTANDER,   /* untouched files intact: viol[MI_BYSTANDER] */
	MP_SILENT,      /* nothing broke silently: silent */
	MP_STALE,       /* no file showed data never written to it: viol[MI_STALE] + allowed */
	MP_SILENT_LOST, /* no synced data lost silently: silent_lost */
	MP_N
};
const char *matrix_prop_name(enum matrix_prop p); /* "any", "durable", ... */
uint64_t matrix_prop_count(const struct matrix_cell *c, enum matrix_prop p);

enum matrix_result { MV_HOLDS, MV_BROKEN, MV_UNMEASURED };
const char *matrix_result_name(enum matrix_result r); /* "holds", "broken", "not measured" */

/* Verdicts: one sentence per expectation of the sources docs/matrix.md quotes, computed
 * from the cells; with it a result a script can read (docs/json.md). */
#define MATRIX_VERDICT_CELLS 4
struct matrix_verdict {
	char expectation[32]; /* "ATOMIC-SECTORS", "NO-WRITE-ERRORS", ... */
	char text[768];
	/* the cells the sentence was drawn from (row and column ids, the run's strings) */
	size_t ncells;
	struct {
		const char *row, *col;
	} cells[MATRIX_VERDICT_CELLS];
	enum matrix_prop prop; /* what holds or breaks in those cells */
	/* cells the rule would have compared too, in this run's table but not run */
	size_t nunmeasured;
	struct {
		const char *row, *col;
	} unmeasured[MATRIX_VERDICT_CELLS];
};

/* A verdict's result over the cells it rests on: broken when prop broke in one of them,
 * holds when in none, not measured when it rests on none. A line with no cells of its
 * own (REAL-KERNEL's and REAL-MD's first, which sum up) rests on the cells of the lines
 * of its expectation that follow it. */
struct matrix_verdict_sum {
	enum matrix_result result;
	uint64_t states, count; /* over those cells: states judged, states breaking prop */
	size_t ncells;
	bool exhaustive;
	double coverage; /* the smallest of those cells' (1 when exhaustive) */
};
void matrix_verdict_sum(const struct matrix *m, const struct matrix_verdict *v, size_t nv, size_t i,
                        struct matrix_verdict_sum *out);
#define MATRIX_MAX_VERDICTS 64 /* the rules', one REAL-KERNEL line per row, REAL-MD's */
size_t matrix_verdicts(const struct matrix *m, struct matrix_verdict *out, size_t max);

/* What a cell tells someone choosing a configuration (the report's "what to choose"):
 * safe = it judged states and every one kept every invariant; reported = some broke
 * something, none lost synced data, and every one was reported (a mount error, fsck,
 * a checksum); silent = synced data kept, but something broke unreported (a bystander,
 * stale bytes, the filesystem); lost = some state lost synced data. */
enum matrix_fate { MF_NOT_RUN, MF_SAFE, MF_REPORTED, MF_SILENT, MF_LOST };
/* The guest kernel release column c's cells ran (the first that names one), or NULL: the
 * real-kernel columns' headers say which kernel. */
const char *matrix_col_kernel(const struct matrix *m, size_t c);
enum matrix_fate matrix_cell_fate(const struct matrix_cell *c);

void matrix_print_table(const struct matrix *m, FILE *f, bool color);
int matrix_write_json(const struct matrix *m, FILE *f);
int matrix_write_md(const struct matrix *m, FILE *f);
int matrix_write_html(const struct matrix *m, FILE *f);
/* Writes matrix.json, matrix.md and report.html into dir (created if missing). */
int matrix_write_all(const struct matrix *m, const char *dir, struct bo_err *err);

/* Where a matrix run is, for a progress line. */
struct matrix_progress {
	size_t done, total; /* explorations (one per cell and workload) */
	uint64_t states;    /* crash states judged so far */
	double seconds;
};

/* Running the explorations that fill a struct matrix (src/report/matrix_run.c). */
struct matrix_run_opts {
	bool full;
	unsigned jobs;
	uint64_t seed;
	uint64_t max_states; /* per exploration */
	/* subsets (comma-separated ids; NULL = the mode's own): rows, columns, workloads */
	const char *rows, *cols, *workloads;
	unsigned shard, nshards; /* run only shard I of N explorations (0/0 = all) */
	const char *self;        /* how to call blackout in rebuild commands */
	crash_fsck_fn fsck;      /* own fsck for the consistency invariant, or NULL */
	void *fsck_ctx;
	void (*progress)(void *ctx, const struct matrix_progress *p);
	void *progress_ctx;
	/* --vm: real-kernel columns, one matrix_vm_cell() per row x column x workload */
	bool vm;
	unsigned vm_states;       /* the state budget of a real-kernel exploration */
	const char *vm_workloads; /* comma-separated; NULL: append-fsync */
	const char *vm_cmd;       /* NULL, or a stand-in run in place of vm_explore */
	const char *vm_out;       /* where each run keeps its logs; NULL: build/vm-matrix */
	/* --vm's application section: example ids (comma-separated) or "none"; NULL: all */
	const char *vm_apps;
	const char *apps_dir; /* the built-in examples (the source tree's apps/) */
};

int matrix_run(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err);
/* Plans o without running it: 0, or -EINVAL naming an unknown row, column or workload
 * (what a command refuses while it reads its options). */
int matrix_plan_check(const struct matrix_run_opts *o, struct bo_err *err);

/* The application section of a --vm run (src/report/matrix_apps.c): rows = the run's
 * stacks among nocache, cache, cache-lying and flash-cheap-128k; columns = the built-in
 * examples of docs/apps.md, each cell one vm_explore run of the example on Linux ext4
 * barrier=1. Sets m->apps (after matrix_run, on its matrix); a cell whose run failed
 * says why and is counted by matrix_apps_failed. */
int matrix_apps_run(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err);
size_t matrix_apps_failed(const struct matrix *m);
/* Checks a --vm-apps list: 0, or -EINVAL with the unknown id in err. */
int matrix_apps_check(const char *ids, struct bo_err *err);

/* Sharded runs (docs/scale.md): a part holds one shard's explorations, in the
 * blackout-matrix-part/1 format; merging every shard's part gives the struct matrix
 * the unsharded run gives, and so the same matrix.json byte for byte. */
struct matrix_part;
int matrix_run_part(const struct matrix_run_opts *o, struct matrix_part **out, struct bo_err *err);
int matrix_part_write(const struct matrix_part *p, FILE *f);
/* Reading a part re-plans its matrix with this build and refuses one it plans otherwise. */
int matrix_part_read(const char *text, size_t len, struct matrix_part **out, struct bo_err *err);
int matrix_part_load(const char *path, struct matrix_part **out, struct bo_err *err);
/* "shard 1/3, 110 explorations, 14 s" */
void matrix_part_describe(const struct matrix_part *p, char *buf, size_t len);
void matrix_part_free(struct matrix_part *p);
/* Refuses parts of different configurations or shard counts, a missing or repeated shard;
 * names tells which file each part came from (may be NULL). */
int matrix_merge(struct matrix_part *const *parts, const char *const *names, size_t n,
                 struct matrix *m, struct bo_err *err);

void matrix_example_free(struct matrix_example *e);
void matrix_free_cells(struct matrix *m);

#endif
