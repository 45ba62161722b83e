// SPDX-License-Identifier: GPL-2.0-or-later
/* matrix_apps_out.c — the matrix's application section read out: one verdict per
 * example (stacks that honour flushes against the one that ignores them), the section
 * as text, JSON, Markdown and HTML, and its cells as the matrix's own verdicts read them
 * (matrix_apps.c runs them). */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/json.h"
#include "blackout/matrix.h"
#include "blackout/util.h"
#include "report/html_parts.h"
#include "report/matrix_apps_int.h"
#include "report/matrix_run.h"

/* ---- verdicts: per example, stacks that honour flushes against the one that does not */

struct tally {
	size_t cells;
	uint64_t states, lost, damaged, failed_checker;
	bool sampled;
	char rows[160];
};

static void tally_add(struct tally *t, const struct app_cell *x, const char *row)
{
	if (!x->ran)
		return;
	t->cells++;
	t->states += x->states;
	t->lost += x->lost;
	t->damaged += x->detected + x->other;
	t->failed_checker += x->crash + x->hang;
	t->sampled |= !x->exhaustive;
	size_t l = strlen(t->rows);
	snprintf(t->rows + l, sizeof(t->rows) - l, "%s%s", l ? ", " : "", row);
}

static size_t tally_say(const struct tally *t, const char *what, char *buf, size_t len)
{
	if (!t->cells)
		return (size_t)snprintf(buf, len, "%s: not in this run", what);
	int n =
	    snprintf(buf, len,
	             "%s (%s): %" PRIu64 " of %" PRIu64 " states%s lost acknowledged work, %" PRIu64
	             " were damaged or did not mount",
	             what, t->rows, t->lost, t->states, t->sampled ? " (sampled)" : "", t->damaged);
	if (n > 0 && (size_t)n < len && t->failed_checker)
		n += snprintf(buf + n, len - (size_t)n,
		              ", %" PRIu64 " the checker crashed or hung on", t->failed_checker);
	return n > 0 ? (size_t)n : 0;
}

static void verdict(const struct matrix *m, size_t c, char *buf, size_t len)
{
	const struct matrix_apps *a = m->apps;
	struct tally t[4] = {{0}};
	for (size_t r = 0; r < a->nrows; r++)
		tally_add(&t[a->cls[r]], &a->cell[r][c], a->id[r]);
	size_t o =
	    (size_t)snprintf(buf, len, "%s on Linux %s: ", app_cols[a->col[c]].label, APP_FS);
	if (!(app_col_where(a->col[c]) & ON_ROWS)) {
		tally_say(&t[TORN], TORN_WHAT, buf + o, o < len ? len - o : 0);
		return;
	}
	o += tally_say(&t[HONEST], "flushes honoured", buf + o, o < len ? len - o : 0);
	if (o < len)
		o += (size_t)snprintf(buf + o, len - o, "; ");
	if (o < len)
		o += tally_say(&t[LYING], "flushes ignored", buf + o, len - o);
	const char *sum = NULL;
	if (t[HONEST].cells && t[LYING].cells) {
		bool hl = t[HONEST].lost || t[HONEST].damaged || t[HONEST].failed_checker;
		bool ll = t[LYING].lost || t[LYING].damaged || t[LYING].failed_checker;
		sum = !hl && ll ? "its promises hold only where the device honours flushes"
		      : hl      ? "it fails even where flushes are honoured: the program's own "
		                  "discipline does not make its work durable"
		                : "no failing state on either in the states judged";
	}
	if (o < len && sum)
		o += (size_t)snprintf(buf + o, len - o, " — %s", sum);
	if (o < len && t[FLASH].cells) {
		o += (size_t)snprintf(buf + o, len - o, "; elsewhere ");
		if (o < len)
			o += tally_say(&t[FLASH], "cheap flash", buf + o, len - o);
	}
	if (o < len && t[TORN].cells) {
		o += (size_t)snprintf(buf + o, len - o, "; ");
		if (o < len)
			tally_say(&t[TORN], TORN_WHAT, buf + o, len - o);
	}
}

/* ---- renderers ---------------------------------------------------------------- */

static void cell_text(const struct app_cell *x, char *buf, size_t len)
{
	const char *s = x->exhaustive ? "" : "~";
	if (x->skip)
		snprintf(buf, len, "-");
	else if (!x->ran)
		snprintf(buf, len, x->failed ? "failed" : "n/a");
	else if (x->ok == x->states)
		snprintf(buf, len, "ok %" PRIu64 "%s", x->states, s);
	else
		snprintf(buf, len, "L%" PRIu64 " D%" PRIu64 " C%" PRIu64 "/%" PRIu64 "%s", x->lost,
		         x->detected + x->other, x->crash + x->hang, x->states, s);
}

/* text after prefix, wrapped within 98 bytes (a multi-byte dash counts as more than
 * its one column, so lines only get shorter) */
static void print_wrapped(FILE *f, const char *prefix, const char *text)
{
	size_t col = (size_t)fprintf(f, "%s", prefix);
	size_t indent = col;
	while (*text) {
		size_t w = strcspn(text, " ");
		if (col > indent && col + 1 + w > 98) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, w, f);
		col += w;
		text += w;
		while (*text == ' ')
			text++;
	}
	fputc('\n', f);
}

void matrix_apps_print(const struct matrix *m, FILE *f)
{
	const struct matrix_apps *a = m->apps;
	if (!a)
		return;
	fprintf(f, "\napplication section: blackout app on Linux %s (docs/apps.md)\n", APP_FS);
	fprintf(f, "%-20s", "stack \\ example");
	for (size_t c = 0; c < a->ncols; c++)
		fprintf(f, " %-14c", (int)('A' + c));
	fputc('\n', f);
	for (size_t r = 0; r < a->nrows; r++) {
		fprintf(f, "%-20.20s", a->id[r]);
		for (size_t c = 0; c < a->ncols; c++) {
			char t[48];
			cell_text(&a->cell[r][c], t, sizeof(t));
			fprintf(f, " %-14s", t);
		}
		fputc('\n', f);
	}
	for (size_t c = 0; c < a->ncols; c++)
		fprintf(f, "  %c = %s\n", (int)('A' + c), app_cols[a->col[c]].label);
	fputs("  ok N: N states judged, all ok; L lost acknowledged work (silent), D damaged\n"
	      "  (the checker's corruption, mount or fsck), C the checker crashed or hung, of\n"
	      "  N states; ~ sampled; - not run on that row; a failed run's cell: see\n"
	      "  matrix.json\n",
	      f);
	for (size_t r = 0; r < a->nrows; r++)
		if (a->cls[r] == TORN)
			fprintf(f, "  %s: %s, Linux %s\n", TORN_ROW, TORN_STACK, APP_FS);
	for (size_t r = 0; r < a->nrows; r++)
		for (size_t c = 0; c < a->ncols; c++)
			if (!a->cell[r][c].ran && !a->cell[r][c].skip && a->cell[r][c].note[0])
				fprintf(f, "  %s %c: %s\n", a->id[r], (int)('A' + c),
				        a->cell[r][c].note);
	fputs("application verdicts:\n", f);
	for (size_t c = 0; c < a->ncols; c++) {
		char v[1024];
		verdict(m, c, v, sizeof(v));
		print_wrapped(f, "  [APP] ", v);
	}
}

void *matrix_apps_json(const struct matrix *m)
{
	const struct matrix_apps *a = m->apps;
	json_t *rows = json_array(), *cols = json_array(), *cells = json_array(),
	       *verd = json_array();
	static const char *const cls[] = {"flushes honoured", "flushes ignored", "other",
	                                  "torn pages"};
	for (size_t r = 0; r < a->nrows; r++)
		json_array_append_new(rows, json_pack("{s:o,s:o,s:s}", "id", bo_json_text(a->id[r]),
		                                      "stack", bo_json_text(a->stack[r]), "class",
		                                      cls[a->cls[r]]));
	for (size_t c = 0; c < a->ncols; c++) {
		const struct app_col *k = &app_cols[a->col[c]];
		json_array_append_new(cols,
		                      json_pack("{s:s,s:s,s:s}", "id", k->id, "label", k->label,
		                                "run", matrix_apps_run_id(a->col[c])));
		char v[1024];
		verdict(m, c, v, sizeof(v));
		json_array_append_new(
		    verd, json_pack("{s:s,s:o}", "example", k->id, "text", bo_json_text(v)));
	}
	for (size_t r = 0; r < a->nrows; r++)
		for (size_t c = 0; c < a->ncols; c++) {
			const struct app_cell *x = &a->cell[r][c];
			json_t *o = json_pack("{s:o,s:s,s:b,s:o}", "row", bo_json_text(a->id[r]),
			                      "col", app_cols[a->col[c]].id, "ran", x->ran, "note",
			                      bo_json_text(x->note));
			if (x->ran)
				json_object_update_new(
				    o, json_pack(
				           "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:f}", "states",
				           (json_int_t)x->states, "ok", (json_int_t)x->ok, "lost",
				           (json_int_t)x->lost, "detected", (json_int_t)x->detected,
				           "checker_crash", (json_int_t)x->crash, "checker_hang",
				           (json_int_t)x->hang, "other", (json_int_t)x->other,
				           "exhaustive", x->exhaustive, "coverage", x->coverage));
			json_array_append_new(cells, o);
		}
	return json_pack("{s:s,s:o,s:o,s:o,s:o}", "fs", APP_FS, "rows", rows, "columns", cols,
	                 "cells", cells, "verdicts", verd);
}

void matrix_apps_md(const struct matrix *m, FILE *f)
{
	const struct matrix_apps *a = m->apps;
	if (!a)
		return;
	fprintf(f,
	        "\n## Applications (blackout app on Linux %s)\n\nEach cell: states judged, ok, "
	        "lost acknowledged work (silent), damaged (the checker's corruption, mount or "
	        "fsck), checker crashed or hung; ~ = sampled.\n\n| stack |",
	        APP_FS);
	for (size_t c = 0; c < a->ncols; c++)
		fprintf(f, " %s |", app_cols[a->col[c]].abbr);
	fputs("\n|---|", f);
	for (size_t c = 0; c < a->ncols; c++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t r = 0; r < a->nrows; r++) {
		fprintf(f, "| %s |", a->id[r]);
		for (size_t c = 0; c < a->ncols; c++) {
			const struct app_cell *x = &a->cell[r][c];
			if (x->skip)
				fputs(" - |", f);
			else if (!x->ran)
				fprintf(f, " n/a: %s |", x->note);
			else
				fprintf(f,
				        " %" PRIu64 "%s states: %" PRIu64 " ok, %s%" PRIu64
				        " lost%s, %" PRIu64 " damaged, %" PRIu64
				        " checker crash/hang |",
				        x->states, x->exhaustive ? "" : "~", x->ok,
				        x->lost ? "**" : "", x->lost, x->lost ? "**" : "",
				        x->detected + x->other, x->crash + x->hang);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
	for (size_t c = 0; c < a->ncols; c++) {
		char v[1024];
		verdict(m, c, v, sizeof(v));
		fprintf(f, "- **APP %s**: %s\n", app_cols[a->col[c]].id, v);
	}
}

void matrix_apps_html(const struct matrix *m, FILE *f)
{
	const struct matrix_apps *a = m->apps;
	if (!a)
		return;
	fprintf(f,
	        "<h2>Applications: blackout app on Linux %s</h2>\n<p class=\"legend\">Each cell: "
	        "states judged (~ sampled); ok; lost acknowledged work (silent); damaged (the "
	        "checker's corruption, mount or fsck); the checker crashed or hung.</p>\n"
	        "<table class=\"m\" id=\"apps-table\"><tr><th class=\"row\">stack</th>",
	        APP_FS);
	for (size_t c = 0; c < a->ncols; c++) {
		fputs("<th>", f);
		html_text(f, app_cols[a->col[c]].label);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (size_t r = 0; r < a->nrows; r++) {
		fputs("<tr><th class=\"row\">", f);
		html_text(f, a->id[r]);
		fputs("<br><code>", f);
		html_text(f, a->stack[r]);
		fputs("</code></th>", f);
		for (size_t c = 0; c < a->ncols; c++) {
			const struct app_cell *x = &a->cell[r][c];
			const char *bg = x->skip              ? "#eee"
			                 : !x->ran            ? "#bbb"
			                 : x->lost            ? "rgb(160,20,20)"
			                 : x->ok != x->states ? "#e0a030"
			                                      : "#3a8f3a";
			fprintf(f, "<td class=\"cell\" style=\"background:%s\">", bg);
			if (x->skip)
				html_text(f, "-");
			else if (!x->ran)
				html_text(f, x->note[0] ? x->note : "n/a");
			else
				fprintf(f,
				        "%" PRIu64 "%s states<small>%" PRIu64 " ok, %" PRIu64
				        " lost, %" PRIu64 " damaged, %" PRIu64
				        " checker crash/hang</small>",
				        x->states, x->exhaustive ? "" : "~", x->ok, x->lost,
				        x->detected + x->other, x->crash + x->hang);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<ul class=\"verdicts\" id=\"app-verdicts\">\n", f);
	for (size_t c = 0; c < a->ncols; c++) {
		char v[1024];
		verdict(m, c, v, sizeof(v));
		fputs("<li><span class=\"tag\">APP</span>", f);
		html_text(f, v);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
}

/* ---- the cells as the matrix's verdicts read them ------------------------------ */

const struct matrix_cell *matrix_apps_find(const struct matrix *m, const char *row, const char *col)
{
	const struct matrix_apps *a = m->apps;
	for (size_t r = 0; a && r < a->nrows; r++)
		for (size_t c = 0; c < a->ncols; c++)
			if (a->cell[r][c].ran && strcmp(a->id[r], row) == 0 &&
			    strcmp(app_cols[a->col[c]].id, col) == 0)
				return &a->view[r][c];
	return NULL;
}

/* "full_page_writes=off: 1 of 118 states (sampled) broke: 0 lost acknowledged commits,
 * 1 damaged" or "...: not in this run (--vm-apps ID)" */
static size_t torn_say(const struct matrix_apps *a, size_t r, const char *id, const char *what,
                       char *buf, size_t len)
{
	for (size_t c = 0; c < a->ncols; c++) {
		const struct app_cell *x = &a->cell[r][c];
		if (strcmp(app_cols[a->col[c]].id, id) != 0 || !x->ran)
			continue;
		int n =
		    snprintf(buf, len,
		             "%s: %" PRIu64 " of %" PRIu64 " states%s broke (%" PRIu64
		             " lost acknowledged commits, %" PRIu64 " damaged%s)",
		             what, x->states - x->ok, x->states, x->exhaustive ? "" : " (sampled)",
		             x->lost, x->detected + x->other,
		             x->crash + x->hang ? ", the checker crashed or hung on the rest" : "");
		return n > 0 ? (size_t)n : 0;
	}
	int n = snprintf(buf, len, "%s: not in this run (--vm-apps %s)", what, id);
	return n > 0 ? (size_t)n : 0;
}

size_t matrix_apps_verdicts(const struct matrix *m, struct matrix_verdict *out, size_t max)
{
	const struct matrix_apps *a = m->apps;
	size_t r = 0;
	while (a && r < a->nrows && a->cls[r] != TORN)
		r++;
	if (!a || r == a->nrows || max == 0)
		return 0;
	static const char *const ids[2] = {"pg-fpw-off", "pg-durable"};
	const struct matrix_cell *x[2];
	struct matrix_verdict *v = out;
	*v = (struct matrix_verdict){.prop = MP_ANY};
	for (int i = 0; i < 2; i++) {
		x[i] = matrix_apps_find(m, TORN_ROW, ids[i]);
		bool planned = false;
		for (size_t c = 0; c < a->ncols; c++)
			planned |= strcmp(app_cols[a->col[c]].id, ids[i]) == 0;
		if (x[i])
			v->cells[v->ncells].row = TORN_ROW, v->cells[v->ncells++].col = ids[i];
		else if (planned)
			v->unmeasured[v->nunmeasured].row = TORN_ROW,
			v->unmeasured[v->nunmeasured++].col = ids[i];
	}
	if (!x[0] && !x[1])
		return 0;
	snprintf(v->expectation, sizeof(v->expectation), "ATOMIC-SECTORS");
	size_t o = (size_t)snprintf(v->text, sizeof(v->text),
	                            "PostgreSQL's 8 KiB pages on a drive whose atomic unit is "
	                            "4 KiB (%s, Linux %s, " PG_COMMITS " commits): ",
	                            TORN_ROW, APP_FS);
	o += torn_say(a, r, ids[0], "full_page_writes=off", v->text + o, sizeof(v->text) - o);
	if (o < sizeof(v->text))
		o += (size_t)snprintf(v->text + o, sizeof(v->text) - o, "; ");
	if (o < sizeof(v->text))
		o +=
		    torn_say(a, r, ids[1], "full_page_writes=on", v->text + o, sizeof(v->text) - o);
	bool off = x[0] && x[0]->ok < x[0]->states, on = x[1] && x[1]->ok < x[1]->states;
	const char *sum =
	    on            ? "full_page_writes=on broke too: its states say how"
	    : !x[0]       ? NULL
	    : off && x[1] ? "the full-page images in the WAL are what repairs a page the drive "
	                    "tore"
	    : off         ? "a torn page broke the database"
	    : !off        ? "no torn page broke it in the states judged: a torn heap page at a "
	                    "checkpoint is rare among sampled cuts, a larger --vm-states finds more"
	                  : NULL;
	if (o < sizeof(v->text))
		snprintf(v->text + o, sizeof(v->text) - o, "%s%s.", sum ? " — " : "",
		         sum ? sum : "");
	return 1;
}
