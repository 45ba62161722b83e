/* SPDX-License-Identifier: GPL-2.0-or-later */
/* matrix_apps_int.h — inside the matrix's application section: its columns (the
 * examples), rows and cells, shared by the runner (matrix_apps.c) and the verdicts and
 * renderers (matrix_apps_out.c). */
#ifndef BLACKOUT_REPORT_MATRIX_APPS_INT_H
#define BLACKOUT_REPORT_MATRIX_APPS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/matrix.h"

/* Linux ext4 barrier=1: the configuration the examples' promises are meant for */
#define APP_FS "ext4,barrier=1"
/* commits of each PostgreSQL run (its run.sh argument; the torn-page verdict says it) */
#define PG_COMMITS "4"

/* Where a column runs: on the matrix's rows the section keeps, on the section's own
 * torn-page row (TORN_ROW), or on both. */
enum app_where { ON_ROWS = 1, ON_TORN = 2, ON_BOTH = 3 };

/* file: the checker's first line names the file it judged ("config: lost ..."), so a
 * column of the rename run counts only its own file's findings. optin: a database server
 * costs seconds a state in the guest, so its columns run only when --vm-apps names them. */
struct app_col {
	const char *id, *label, *abbr;
	size_t run;
	const char *file; /* the rename run: the file this column judges */
	bool first;       /* ... which its checker judges first */
	bool optin;
	enum app_where where; /* 0: ON_ROWS */
};
#define NCOLS 12 /* app_cols' entries */
extern const struct app_col app_cols[NCOLS];

/* The rows it runs: flushes honoured (no cache, an honest cache), ignored (a lying
 * cache), and cheap flash; the other rows' faults are the filesystem's question. One row
 * is the section's own, for the columns that ask about it (ON_TORN): a drive whose
 * atomic unit is 4 KiB under PostgreSQL's 8 KiB page, a write in flight at the cut
 * persisting as any subset of its 4 KiB sectors (docs/apps.md, "Torn pages"). */
enum app_class { HONEST, LYING, FLASH, TORN };
#define TORN_ROW   "torn-4k"
#define TORN_STACK "disk(sector=4096,tear=sector) > mem(size=128M,sector=4096)"
#define TORN_WHAT  "8 KiB pages on 4 KiB atomic sectors"
#define MAX_ROWS   5 /* app_rows' entries */

struct app_cell {
	bool ran, failed;
	bool skip; /* the column does not run on this row (app_where) */
	char note[200];
	/* every judged state in exactly one of ok, lost, detected, crash, hang, other */
	uint64_t states, ok, lost, detected, crash, hang, other;
	bool exhaustive;
	double coverage;
};

struct matrix_apps {
	size_t nrows, ncols;
	const char *id[MAX_ROWS]; /* the row's id: the matrix's, or TORN_ROW */
	enum app_class cls[MAX_ROWS];
	const char *stack[MAX_ROWS];
	size_t col[NCOLS]; /* index into app_cols */
	struct app_cell cell[MAX_ROWS][NCOLS];
	/* each cell that ran as the matrix's cells read (matrix_apps_find), for the
	 * verdicts that rest on them (matrix_apps_verdicts) */
	struct matrix_cell view[MAX_ROWS][NCOLS];
	char template[4200]; /* where template.sh left its cluster, if a run needs it */
};

static inline enum app_where app_col_where(size_t c)
{
	return app_cols[c].where ? app_cols[c].where : ON_ROWS;
}
/* the app run (blackout app's example id) a column reads */
const char *matrix_apps_run_id(size_t c);

#endif
