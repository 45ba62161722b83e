// SPDX-License-Identifier: GPL-2.0-or-later
/* matrix_out.c — the expectations table as a person reads it (terminal, Markdown), as a
 * machine reads it (JSON, docs/matrix.md). Running the explorations is matrix_run.c,
 * the verdicts computed from the cells matrix_verdict.c, the HTML report html.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/json.h"
#include "blackout/matrix.h"
#include "blackout/util.h"
#include "report/matrix_run.h"

const char *matrix_inv_name(enum matrix_inv i)
{
	static const char *const names[MI_N] = {"durable", "stale", "bystander", "consistent",
	                                        "atomic"};
	return i < MI_N ? names[i] : "?";
}

const struct matrix_cell *matrix_find(const struct matrix *m, const char *row, const char *col)
{
	for (size_t r = 0; r < m->nrows; r++)
		for (size_t c = 0; c < m->ncols; c++)
			if (strcmp(m->rows[r].id, row) == 0 && strcmp(m->cols[c].id, col) == 0)
				return matrix_cell(m, r, c);
	return matrix_apps_find(m, row, col);
}

static uint64_t violating(const struct matrix_cell *c)
{
	return c->states - c->ok;
}

/* ---- terminal ---------------------------------------------------------------- */

static void cell_text(const struct matrix_cell *c, char *buf, size_t len)
{
	if (!c->ran)
		snprintf(buf, len, "n/a");
	else if (c->states == 0)
		snprintf(buf, len, "none judged");
	else if (violating(c) == 0)
		snprintf(buf, len, "ok %" PRIu64 "%s", c->states, c->exhaustive ? "" : "~");
	else
		snprintf(buf, len, "%" PRIu64 "/%" PRIu64 "%s", violating(c), c->states,
		         c->exhaustive ? "" : "~");
}

/* The terminal table fits 100 columns: columns are letters explained under the table,
 * row names wrap onto the row's second line, and a cell spends up to three lines on
 * its counts: broken/judged, how many silently, how many damaged bystanders. */
enum { TBL_LABEL = 28, TBL_CELL = 12, TBL_GROUP = 6 };

/* Line k (0..2) of a cell; "" when the line says nothing for this cell. */
static void cell_line(const struct matrix_cell *c, int k, char *buf, size_t len)
{
	buf[0] = 0;
	if (k == 0)
		cell_text(c, buf, len);
	else if (k == 1 && c->ran && violating(c))
		snprintf(buf, len, "%" PRIu64 " silent", c->silent);
	else if (k == 1 && c->ran && c->allowed)
		snprintf(buf, len, "+%" PRIu64 " allowed", c->allowed);
	else if (k == 2 && c->ran && c->viol[MI_BYSTANDER])
		snprintf(buf, len, "%" PRIu64 " bystndr", c->viol[MI_BYSTANDER]);
}

/* The row label's part for line k: the words that fit TBL_LABEL - 1 columns. */
static void label_line(const char *label, int k, char *buf, size_t len)
{
	const char *p = label;
	for (int i = 0; i <= k; i++) {
		while (*p == ' ' && i > 0)
			p++;
		size_t n = strlen(p), cut = n;
		if (n > TBL_LABEL - 1) {
			cut = TBL_LABEL - 1;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = TBL_LABEL - 1;
		}
		if (i == k) {
			snprintf(buf, len, "%.*s", (int)cut, p);
			return;
		}
		p += cut;
	}
}

const char *matrix_col_kernel(const struct matrix *m, size_t c)
{
	for (size_t r = 0; r < m->nrows; r++)
		if (matrix_cell(m, r, c)->kernel[0])
			return matrix_cell(m, r, c)->kernel;
	return NULL;
}

static void print_legend(const struct matrix *m, FILE *f)
{
	fputs("\ncolumns (filesystem configurations):\n", f);
	for (size_t c = 0; c < m->ncols; c++) {
		const struct matrix_col *x = &m->cols[c];
		const char *kernel = matrix_col_kernel(m, c);
		fprintf(f, "  %c  %-19s mkfs -t %s, mount %s%s\n", (int)('A' + c), x->label,
		        x->mkfs, x->mount,
		        strcmp(x->id, "ext2") == 0 ? "; fsck checks it in full after every cut"
		        : x->vm                    ? "; Linux in qemu, media grown to 64 MiB"
		                                   : "");
		if (kernel) /* a line of its own: the table stays within 100 columns */
			fprintf(f, "     %-19s kernel %s\n", "", kernel);
	}
	fputs("\nkey: ok N = all N crash states judged kept every invariant;"
	      " V/N = V of N states broke one\n"
	      "     N silent = broken without any error from mount, fsck or checksums"
	      " (the headline)\n"
	      "     N bystndr = states that damaged files the workload never touched\n"
	      "     ~ = sampled: not every possible state was judged (coverage in the report)\n"
	      "     +N allowed = N states showed what the mode allows (data=writeback: stale"
	      " data)\n"
	      "     b=0/b=1 = mount option barrier=0 (no flushes) / barrier=1;"
	      " csum = metadata_csum\n"
	      "     n/a = not run: the configuration does not apply to this stack, or --quick"
	      " leaves it out\n"
	      "           (the report says why)\n",
	      f);
	bool vm = false;
	for (size_t c = 0; c < m->ncols; c++)
		vm = vm || m->cols[c].vm;
	if (vm)
		fputs("     Linux columns: states enumerated from one recorded run, judged by "
		      "Linux\n",
		      f);
}

/* Terminal columns of s[0..n): UTF-8 continuation bytes take none. */
static size_t text_cols(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* prefix then text, wrapped at spaces to 100 columns, later lines indented by 4. */
static void print_wrapped(FILE *f, const char *prefix, const char *text)
{
	size_t col = text_cols(prefix, strlen(prefix));
	fputs(prefix, f);
	const char *p = text;
	while (*p) {
		size_t n = strcspn(p, " ");
		size_t w = text_cols(p, n);
		if (col > 4 && col + 1 + w > 100) {
			fputs("\n   ", f);
			col = 3;
		}
		fprintf(f, " %.*s", (int)n, p);
		col += 1 + w;
		p += n;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

/* Columns [g, end) of every row. */
static void print_block(const struct matrix *m, FILE *f, size_t g, size_t end, bool color)
{
	const char *red = color ? "\033[1;31m" : "", *yel = color ? "\033[33m" : "",
	           *grn = color ? "\033[32m" : "", *off = color ? "\033[0m" : "";
	fprintf(f, "%-*s", TBL_LABEL, "stack \\ filesystem");
	for (size_t c = g; c < end; c++)
		fprintf(f, "%-*c", c + 1 < end ? TBL_CELL : 1, (int)('A' + c));
	fputc('\n', f);
	for (size_t r = 0; r < m->nrows; r++) {
		char lab[2][TBL_LABEL + 1];
		label_line(m->rows[r].label, 0, lab[0], sizeof(lab[0]));
		label_line(m->rows[r].label, 1, lab[1], sizeof(lab[1]));
		for (int k = 0; k < 3; k++) {
			bool any = k < 2 && lab[k][0];
			char t[16][48];
			for (size_t c = g; c < end; c++) {
				cell_line(matrix_cell(m, r, c), k, t[c], sizeof(t[c]));
				any = any || t[c][0];
			}
			if (!any)
				continue;
			fprintf(f, "%-*s", TBL_LABEL, k < 2 ? lab[k] : "");
			for (size_t c = g; c < end; c++) {
				const struct matrix_cell *x = matrix_cell(m, r, c);
				const char *col = !x->ran || !t[c][0] ? ""
				                  : x->silent         ? red
				                  : violating(x)      ? yel
				                                      : grn;
				int w = c + 1 < end ? TBL_CELL - 1 : 0;
				fprintf(f, "%s%-*s%s%s", col, w, t[c], *col ? off : "",
				        c + 1 < end ? " " : "");
			}
			fputc('\n', f);
		}
	}
}

void matrix_print_table(const struct matrix *m, FILE *f, bool color)
{
	fprintf(f,
	        "blackout matrix (%s, seed %" PRIu64 "): in each cell, the crash states that "
	        "broke an invariant\n/ the states judged, then how many of those broke one "
	        "silently\n\n",
	        m->mode, m->seed);
	/* at most six columns fit 100: more (the real-kernel ones) make a second block */
	for (size_t g = 0; g < m->ncols; g += TBL_GROUP) {
		size_t end = g + TBL_GROUP < m->ncols ? g + TBL_GROUP : m->ncols;
		if (g)
			fputc('\n', f);
		print_block(m, f, g, end, color);
	}
	print_legend(m, f);
	fputs("\nWhat the measurements say:\n", f);
	struct matrix_verdict v[MATRIX_MAX_VERDICTS];
	size_t nv = matrix_verdicts(m, v, MATRIX_MAX_VERDICTS);
	for (size_t i = 0; i < nv; i++) {
		char tag[64];
		snprintf(tag, sizeof(tag), "  [%s]", v[i].expectation);
		print_wrapped(f, tag, v[i].text);
	}
	if (nv == 0)
		fputs("  (no row pair in this run allows a verdict)\n", f);
	matrix_apps_print(m, f);
}

/* ---- JSON (through jansson; bo_json_text keeps names exact) ------------------------ */

static json_t *json_ops(const struct matrix_example *e)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < e->nops; i++) {
		const struct matrix_op *o = &e->ops[i];
		json_t *x = json_pack("{s:s}", "op", o->op);
		if (strcmp(o->op, "mark") == 0)
			json_object_set_new(x, "mark", bo_json_text(o->mark));
		else if (strcmp(o->op, "flush") != 0) {
			json_object_set_new(x, "lba", json_integer((json_int_t)o->lba));
			json_object_set_new(x, "count", json_integer(o->count));
		}
		if (o->fua)
			json_object_set_new(x, "fua", json_true());
		json_array_append_new(a, x);
	}
	return a;
}

static json_t *json_example(const struct matrix_example *e)
{
	json_t *dmg = json_array();
	for (size_t i = 0; dmg && i < e->ndamage; i++) {
		const struct matrix_damage *d = &e->damage[i];
		json_array_append_new(dmg,
		                      json_pack("{s:I,s:s,s:I,s:o}", "block", (json_int_t)d->block,
		                                "what", d->what, "ino", (json_int_t)d->ino, "owner",
		                                bo_json_text(d->owner)));
	}
	return json_pack("{s:o,s:o,s:o,s:o,s:b,s:I,s:b,s:o,s:o}", "workload",
	                 bo_json_text(e->workload), "state", bo_json_text(e->state_id), "rebuild",
	                 bo_json_text(e->rebuild), "broken", bo_json_text(e->broken), "silent",
	                 e->silent, "cut", (json_int_t)e->cut, "cut_inflight", e->cut_inflight,
	                 "ops", json_ops(e), "damage", dmg);
}

/* One cell of a verdict's results: what the verdict's property counts there. */
static json_t *json_result(const struct matrix *m, const char *row, const char *col,
                           enum matrix_prop p, bool measured)
{
	json_t *o = json_pack("{s:o,s:o}", "row", bo_json_text(row), "col", bo_json_text(col));
	const struct matrix_cell *x = matrix_find(m, row, col);
	if (!o || !measured || !x) {
		if (o)
			json_object_set_new(o, "result",
			                    json_string(matrix_result_name(MV_UNMEASURED)));
		return o;
	}
	uint64_t n = matrix_prop_count(x, p);
	char cov[32];
	crash_coverage_text(x->coverage, cov, sizeof(cov));
	json_object_set_new(o, "result", json_string(matrix_result_name(n ? MV_BROKEN : MV_HOLDS)));
	json_object_set_new(o, "states", json_integer((json_int_t)x->states));
	json_object_set_new(o, "count", json_integer((json_int_t)n));
	json_object_set_new(o, "silent", json_integer((json_int_t)x->silent));
	json_object_set_new(o, "exhaustive", json_boolean(x->exhaustive));
	json_object_set_new(o, "coverage", json_real(x->coverage));
	json_object_set_new(o, "coverage_text", json_string(cov));
	return o;
}

/* A verdict's machine-readable result (docs/json.md): its property, holds / broken / not
 * measured over its cells, the counts it rests on and their coverage. */
static void json_verdict_result(const struct matrix *m, const struct matrix_verdict *v, size_t nv,
                                size_t i, json_t *o)
{
	struct matrix_verdict_sum s;
	matrix_verdict_sum(m, v, nv, i, &s);
	char cov[32];
	crash_coverage_text(s.coverage, cov, sizeof(cov));
	json_object_set_new(o, "result", json_string(matrix_result_name(s.result)));
	json_object_set_new(o, "property", json_string(matrix_prop_name(v[i].prop)));
	json_object_set_new(o, "states", json_integer((json_int_t)s.states));
	json_object_set_new(o, "count", json_integer((json_int_t)s.count));
	json_object_set_new(o, "exhaustive", json_boolean(s.exhaustive));
	json_object_set_new(o, "coverage", json_real(s.coverage));
	json_object_set_new(o, "coverage_text", json_string(cov));
	json_t *res = json_array();
	for (size_t k = 0; res && k < v[i].ncells; k++)
		json_array_append_new(
		    res, json_result(m, v[i].cells[k].row, v[i].cells[k].col, v[i].prop, true));
	for (size_t k = 0; res && k < v[i].nunmeasured; k++)
		json_array_append_new(res, json_result(m, v[i].unmeasured[k].row,
		                                       v[i].unmeasured[k].col, v[i].prop, false));
	json_object_set_new(o, "results", res);
}

static json_t *json_cell(const struct matrix *m, size_t r, size_t c)
{
	const struct matrix_cell *x = matrix_cell(m, r, c);
	json_t *viol = json_object();
	for (int i = 0; viol && i < MI_N; i++)
		json_object_set_new(viol, matrix_inv_name((enum matrix_inv)i),
		                    json_integer((json_int_t)x->viol[i]));
	json_t *o = json_pack("{s:o,s:o,s:b}", "row", bo_json_text(m->rows[r].id), "col",
	                      bo_json_text(m->cols[c].id), "ran", x->ran);
	if (o && x->note[0])
		json_object_set_new(o, "note", bo_json_text(x->note));
	if (o) {
		json_object_set_new(o, "silent_lost", json_integer((json_int_t)x->silent_lost));
		json_object_set_new(o, "write_errors", json_integer((json_int_t)x->write_errors));
	}
	if (o && x->kernel[0]) /* a real-kernel cell's only: the others keep their bytes */
		json_object_set_new(o, "kernel", bo_json_text(x->kernel));
	json_t *rest =
	    json_pack("{s:I,s:I,s:I,s:I,s:I,s:b,s:f,s:o,s:o}", "states", (json_int_t)x->states,
	              "ok", (json_int_t)x->ok, "silent", (json_int_t)x->silent, "detected",
	              (json_int_t)x->detected, "allowed", (json_int_t)x->allowed, "exhaustive",
	              x->exhaustive, "coverage", round(x->coverage * 1e4) / 1e4, "violations", viol,
	              "example", x->example ? json_example(x->example) : json_null());
	if (!o || !rest || json_object_update(o, rest) != 0) {
		json_decref(o);
		o = NULL;
	}
	json_decref(rest);
	if (o && x->ran) { /* as the command line prints it: 1.65e-22%, never 0.0% */
		char cov[32];
		crash_coverage_text(x->coverage, cov, sizeof(cov));
		json_object_set_new(o, "coverage_text", json_string(cov));
	}
	return o;
}

/* The whole matrix as one JSON value (docs/matrix.md); NULL when out of memory. */
static json_t *matrix_json(const struct matrix *m)
{
	json_t *wl = json_array(), *inv = json_array(), *rows = json_array(), *cols = json_array(),
	       *cells = json_array(), *verd = json_array();
	for (size_t i = 0; wl && i < m->nworkloads; i++)
		json_array_append_new(wl, bo_json_text(m->workloads[i]));
	for (int i = 0; inv && i < MI_N; i++)
		json_array_append_new(inv, json_string(matrix_inv_name((enum matrix_inv)i)));
	for (size_t r = 0; rows && r < m->nrows; r++)
		json_array_append_new(rows, json_pack("{s:o,s:o,s:o,s:o}", "id",
		                                      bo_json_text(m->rows[r].id), "label",
		                                      bo_json_text(m->rows[r].label), "stack",
		                                      bo_json_text(m->rows[r].stack), "tests",
		                                      bo_json_text(m->rows[r].what)));
	for (size_t c = 0; cols && c < m->ncols; c++)
		json_array_append_new(cols, json_pack("{s:o,s:o,s:o,s:o}", "id",
		                                      bo_json_text(m->cols[c].id), "label",
		                                      bo_json_text(m->cols[c].label), "mkfs",
		                                      bo_json_text(m->cols[c].mkfs), "mount",
		                                      bo_json_text(m->cols[c].mount)));
	for (size_t r = 0; cells && r < m->nrows; r++)
		for (size_t c = 0; c < m->ncols; c++)
			json_array_append_new(cells, json_cell(m, r, c));
	struct matrix_verdict v[MATRIX_MAX_VERDICTS];
	size_t nv = matrix_verdicts(m, v, MATRIX_MAX_VERDICTS);
	for (size_t i = 0; verd && i < nv; i++) {
		json_t *vc = json_array();
		for (size_t k = 0; vc && k < v[i].ncells; k++)
			json_array_append_new(vc, json_pack("{s:o,s:o}", "row",
			                                    bo_json_text(v[i].cells[k].row), "col",
			                                    bo_json_text(v[i].cells[k].col)));
		json_t *o = json_pack("{s:s,s:o,s:o}", "expectation", v[i].expectation, "text",
		                      bo_json_text(v[i].text), "cells", vc);
		if (o)
			json_verdict_result(m, v, nv, i, o);
		json_array_append_new(verd, o);
	}
	/* no timings: a merged run's JSON is the unsharded run's, byte for byte */
	json_t *top =
	    json_pack("{s:s,s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "schema", "blackout-matrix/2",
	              "mode", m->mode, "seed", (json_int_t)m->seed, "workloads", wl, "invariants",
	              inv, "rows", rows, "columns", cols, "cells", cells, "verdicts", verd);
	if (top && m->apps) /* --vm's application section (matrix_apps.c) */
		json_object_set_new(top, "apps", matrix_apps_json(m));
	return top;
}

int matrix_write_json(const struct matrix *m, FILE *f)
{
	return bo_json_write(matrix_json(m), f, 1);
}

/* ---- Markdown ------------------------------------------------------------------ */

int matrix_write_md(const struct matrix *m, FILE *f)
{
	fprintf(f,
	        "# blackout matrix (%s)\n\nCrash states that broke an invariant / states "
	        "judged; **bold** = some silently. Seed %" PRIu64 ", %.0f s.\n\n",
	        m->mode, m->seed, m->seconds);
	fputs("| stack | spec |", f);
	for (size_t c = 0; c < m->ncols; c++) {
		const char *kernel = matrix_col_kernel(m, c);
		fprintf(f, " %s%s%s%s |", m->cols[c].label, kernel ? " (" : "",
		        kernel ? kernel : "", kernel ? ")" : "");
	}
	fputs("\n|---|---|", f);
	for (size_t c = 0; c < m->ncols; c++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t r = 0; r < m->nrows; r++) {
		fprintf(f, "| %s | `%s` |", m->rows[r].label, m->rows[r].stack);
		for (size_t c = 0; c < m->ncols; c++) {
			const struct matrix_cell *x = matrix_cell(m, r, c);
			char t[64];
			cell_text(x, t, sizeof(t));
			if (violating(x))
				fprintf(f,
				        x->silent ? " **%s, %" PRIu64 " silent** |"
				                  : " %s, 0 silent |",
				        t, x->silent);
			else
				fprintf(f, " %s |", t);
		}
		fputc('\n', f);
	}
	fputs("\n## Violations by invariant\n\n| stack | filesystem |", f);
	for (int i = 0; i < MI_N; i++)
		fprintf(f, " %s |", matrix_inv_name((enum matrix_inv)i));
	fputs(" silent | detected |\n|---|---|", f);
	for (int i = 0; i < MI_N + 2; i++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t r = 0; r < m->nrows; r++)
		for (size_t c = 0; c < m->ncols; c++) {
			const struct matrix_cell *x = matrix_cell(m, r, c);
			if (!x->ran || violating(x) == 0)
				continue;
			fprintf(f, "| %s | %s |", m->rows[r].label, m->cols[c].label);
			for (int i = 0; i < MI_N; i++)
				fprintf(f, " %" PRIu64 " |", x->viol[i]);
			fprintf(f, " %" PRIu64 " | %" PRIu64 " |\n", x->silent, x->detected);
		}
	fputs("\n## Verdicts\n\n", f);
	struct matrix_verdict v[MATRIX_MAX_VERDICTS];
	size_t nv = matrix_verdicts(m, v, MATRIX_MAX_VERDICTS);
	for (size_t i = 0; i < nv; i++)
		fprintf(f, "- **%s**: %s\n", v[i].expectation, v[i].text);
	matrix_apps_md(m, f);
	return ferror(f) ? -EIO : 0;
}

int matrix_write_all(const struct matrix *m, const char *dir, struct bo_err *err)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return bo_errf(err, -errno, "%s: cannot create: %s", dir, strerror(errno));
	static const char *const names[] = {"matrix.json", "matrix.md", "report.html"};
	int (*const fns[])(const struct matrix *, FILE *) = {matrix_write_json, matrix_write_md,
	                                                     matrix_write_html};
	for (int i = 0; i < 3; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		FILE *f = fopen(path, "w");
		if (!f)
			return bo_errf(err, -errno, "%s: %s", path, strerror(errno));
		int rc = fns[i](m, f);
		if (fclose(f) != 0 && rc == 0)
			rc = -EIO;
		if (rc)
			return bo_errf(err, rc, "%s: write failed", path);
	}
	return 0;
}

void matrix_example_free(struct matrix_example *e)
{
	if (!e)
		return;
	free(e->ops);
	free(e->damage);
	free(e);
}

void matrix_free_cells(struct matrix *m)
{
	for (size_t i = 0; i < m->nrows * m->ncols; i++)
		matrix_example_free(m->cells[i].example);
	free(m->cells);
	m->cells = NULL;
	struct matrix_plan *p = m->owned;
	if (p) {
		free(p->tasks);
		free(p->deal);
		free(p->na);
	}
	free(m->owned);
	m->owned = NULL;
	matrix_apps_free(m->apps);
	m->apps = NULL;
}
