// SPDX-License-Identifier: GPL-2.0-or-later
/* html.c — the matrix as one self-contained HTML file (no network): what to choose
 * (html_choose.c), the table with a chart per row and shaded cells, the worst cell's
 * drill-down and the verdicts are written here as plain HTML, readable without
 * JavaScript. The same data as
 * matrix.json is embedded for the script (html_script.c), which opens the drill-down
 * of any clicked cell with its I/O timeline. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/matrix.h"
#include "report/html_parts.h"
#include "report/matrix_run.h"

void html_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

static uint64_t failing(const struct matrix_cell *x)
{
	return x->states - x->ok;
}

/* Green: nothing broke; amber: broke, always detected; red, deeper as the silent share
 * grows (full at a quarter of the states); grey: not applicable. */
static void shade(const struct matrix_cell *x, char *buf, size_t len)
{
	if (!x->ran)
		snprintf(buf, len, "#bbb");
	else if (failing(x) == 0)
		snprintf(buf, len, "#3a8f3a");
	else if (x->silent == 0)
		snprintf(buf, len, "#e0a030");
	else {
		double f = x->states ? 4.0 * (double)x->silent / (double)x->states : 1;
		f = f > 1 ? 1 : f;
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(200 + f * 20 - f * 80),
		         (int)(80 - f * 60), (int)(60 - f * 40));
	}
}

/* The cell most worth opening first: most silent states, then most failing. */
static size_t worst_cell(const struct matrix *m)
{
	size_t best = 0;
	for (size_t i = 1; i < m->nrows * m->ncols; i++) {
		const struct matrix_cell *a = &m->cells[i], *b = &m->cells[best];
		if (a->ran && (!b->ran || a->silent > b->silent ||
		               (a->silent == b->silent && failing(a) > failing(b))))
			best = i;
	}
	return best;
}

/* One bar per row: its states over every filesystem, split ok / detected / silent, and
 * under it the share that damaged bystanders. */
static void row_chart(const struct matrix *m, size_t r, FILE *f)
{
	uint64_t n = 0, ok = 0, det = 0, sil = 0, bys = 0;
	for (size_t c = 0; c < m->ncols; c++) {
		const struct matrix_cell *x = matrix_cell(m, r, c);
		if (!x->ran)
			continue;
		n += x->states, ok += x->ok, det += x->detected, sil += x->silent;
		bys += x->viol[MI_BYSTANDER];
	}
	const double W = 200;
	double wo = n ? W * (double)ok / (double)n : 0, wd = n ? W * (double)det / (double)n : 0;
	double ws = n ? W * (double)sil / (double)n : 0, wb = n ? W * (double)bys / (double)n : 0;
	fprintf(f,
	        "<svg class=\"rowchart\" width=\"204\" height=\"26\" viewBox=\"0 0 204 26\" "
	        "preserveAspectRatio=\"none\" role=\"img\"><title>%" PRIu64 " states: %" PRIu64
	        " ok, %" PRIu64 " detected, %" PRIu64 " silent; %" PRIu64
	        " damaged bystanders</title>"
	        "<rect x=\"2\" y=\"2\" width=\"%.1f\" height=\"14\" fill=\"#3a8f3a\"/>"
	        "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"14\" fill=\"#e0a030\"/>"
	        "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"14\" fill=\"#b71c1c\"/>"
	        "<rect x=\"2\" y=\"19\" width=\"%.1f\" height=\"5\" fill=\"#6a1b9a\"/></svg>"
	        "<br><small>%" PRIu64 " ok, %" PRIu64 " detected, <b>%" PRIu64
	        " silent</b>, %" PRIu64 " bystander</small>",
	        n, ok, det, sil, bys, wo, 2 + wo, wd, 2 + wo + wd, ws, wb, ok, det, sil, bys);
}

static void cell_td(const struct matrix *m, size_t r, size_t c, bool worst, FILE *f)
{
	const struct matrix_cell *x = matrix_cell(m, r, c);
	char bg[32];
	shade(x, bg, sizeof(bg));
	fputs("<td class=\"cell", f);
	fputs(x->ran ? "" : " na", f);
	fputs(worst ? " worst\"" : "\"", f);
	fputs(" data-row=\"", f);
	html_text(f, m->rows[r].id);
	fputs("\" data-col=\"", f);
	html_text(f, m->cols[c].id);
	fprintf(f, "\" style=\"background:%s\"", bg);
	char cov[32] = "";
	if (x->ran && !x->exhaustive) {
		crash_coverage_text(x->coverage, cov, sizeof(cov));
		fprintf(f,
		        " title=\"sampled: the explorations judged at least %s of the outcomes "
		        "the stack allows\"",
		        cov);
	} else if (!x->ran && x->note[0]) {
		fputs(" title=\"", f);
		html_text(f, x->note);
		fputs("\"", f);
	}
	fputs(">", f);
	const char *mark = x->exhaustive ? "" : "~";
	if (!x->ran)
		fputs("n/a", f);
	else if (failing(x) == 0)
		fprintf(f, "ok %" PRIu64 "%s", x->states, mark);
	else
		fprintf(f, "%" PRIu64 "/%" PRIu64 "%s<small>%" PRIu64 " silent</small>", failing(x),
		        x->states, mark, x->silent);
	if (x->ran && x->viol[MI_BYSTANDER])
		fprintf(f, "<small>%" PRIu64 " bystander</small>", x->viol[MI_BYSTANDER]);
	if (x->ran && x->allowed)
		fprintf(f,
		        "<small class=\"allowed\" title=\"%" PRIu64 " states kept every invariant "
		        "but showed what this configuration permits (data=writeback: a file "
		        "holding a deleted file's old data); counted as ok\">+%" PRIu64
		        " allowed</small>",
		        x->allowed, x->allowed);
	fputs("</td>", f);
}

/* "data=ordered,barrier=1" that may wrap after a comma, never inside an option. */
static void options(const char *opts, FILE *f)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", opts);
	for (char *p = buf, *comma; p; p = comma ? comma + 1 : NULL) {
		comma = strchr(p, ',');
		if (comma)
			*comma = 0;
		fputs("<span class=\"o\">", f);
		html_text(f, p);
		fputs(comma ? ",</span><wbr>" : "</span>", f);
	}
}

/* A stack spec that wraps only between its layers ("a > b > c") or after a comma
 * between a layer's parameters, never inside a word or a parameter. */
static void spec_layers(const char *spec, FILE *f)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", spec);
	char *p = buf;
	for (;;) {
		char *gt = strstr(p, " > ");
		if (gt)
			*gt = 0;
		fputs("<span class=\"layer\">", f);
		options(p, f);
		fputs(gt ? " &gt;</span> " : "</span>", f);
		if (!gt)
			break;
		p = gt + 3;
	}
}

static void table(const struct matrix *m, size_t worst, FILE *f)
{
	fputs("<table class=\"m\" id=\"matrix-table\"><tr><th class=\"row\">device stack: "
	      "what it tests, its spec</th><th>its states, every filesystem</th>",
	      f);
	for (size_t c = 0; c < m->ncols; c++) {
		fputs("<th class=\"col\">", f);
		html_col_title(m, c, f);
		fputs("<small>mkfs ", f);
		const char *kernel = matrix_col_kernel(m, c);
		options(m->cols[c].mkfs, f);
		if (m->cols[c].mount[0]) {
			fputs(", mount ", f);
			options(m->cols[c].mount, f);
		}
		if (kernel) {
			fputs(", kernel ", f);
			html_text(f, kernel);
		}
		fputs("</small></th>", f);
	}
	fputs("</tr>\n", f);
	for (size_t r = 0; r < m->nrows; r++) {
		fputs("<tr><th class=\"row\"><span class=\"title\">", f);
		html_row_title(m, r, f);
		fputs("</span><span class=\"what\">", f);
		html_text(f, m->rows[r].what);
		fputs("</span><code class=\"spec\">", f);
		spec_layers(m->rows[r].stack, f);
		fputs("</code></th><td>", f);
		row_chart(m, r, f);
		fputs("</td>", f);
		for (size_t c = 0; c < m->ncols; c++)
			cell_td(m, r, c, r * m->ncols + c == worst, f);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The worst cell's drill-down as plain HTML; the script redraws it with the timeline. */
static void drill(const struct matrix *m, size_t i, FILE *f)
{
	const struct matrix_row *r = &m->rows[i / m->ncols];
	const struct matrix_col *c = &m->cols[i % m->ncols];
	const struct matrix_cell *x = &m->cells[i];
	fputs("<div id=\"drill\" class=\"open\"><h2>", f);
	html_text(f, r->label);
	fputs(" \xc3\x97 ", f);
	html_text(f, c->label);
	fputs("</h2><p>stack <code>", f);
	html_text(f, r->stack);
	fputs("</code> \xe2\x80\x94 mkfs ", f);
	html_text(f, c->mkfs);
	fputs(", mount ", f);
	html_text(f, c->mount);
	fputs(". ", f);
	html_text(f, r->what);
	char cov[64] = "exhaustive";
	if (!x->exhaustive) {
		char t[32];
		crash_coverage_text(x->coverage, t, sizeof(t));
		snprintf(cov, sizeof(cov), "sampled, coverage %s", t);
	}
	fprintf(f,
	        "</p><p>%" PRIu64 " crash states judged (%s), %" PRIu64
	        " kept every invariant, %" PRIu64 " broke one silently, %" PRIu64
	        " were detected.</p><table class=\"d\"><tr>",
	        x->states, cov, x->ok, x->silent, x->detected);
	for (int k = 0; k < MI_N; k++)
		fprintf(f, "<th>%s</th>", matrix_inv_name((enum matrix_inv)k));
	fputs("</tr><tr>", f);
	for (int k = 0; k < MI_N; k++)
		fprintf(f, "<td>%" PRIu64 "</td>", x->viol[k]);
	fputs("</tr></table>\n", f);
	const struct matrix_example *e = x->example;
	if (e) {
		fprintf(f, "<h2>Example failing state (%s)</h2><p>Workload ",
		        e->silent ? "silent" : "detected");
		html_text(f, e->workload);
		fputs(", state ", f);
		html_text(f, e->state_id);
		fputs(": ", f);
		html_text(f, e->broken);
		fputs("</p><p>Rebuild: <code>", f);
		html_text(f, e->rebuild);
		fputs("</code></p>\n", f);
		if (e->ndamage)
			fputs("<h2>Blocks lost or damaged</h2><table class=\"d\" id=\"damage\"><tr>"
			      "<th>block</th><th>what</th><th>inode</th><th>belongs to</th></tr>",
			      f);
		for (size_t k = 0; k < e->ndamage; k++) {
			fprintf(f, "<tr><td>%" PRIu64 "</td><td>", e->damage[k].block);
			html_text(f, e->damage[k].what);
			fprintf(f, "</td><td>%u</td><td>", e->damage[k].ino);
			html_text(f, e->damage[k].owner);
			fputs("</td></tr>", f);
		}
		if (e->ndamage)
			fputs("</table>\n", f);
	}
	fputs("</div>\n", f);
}

/* The matrix JSON inside <script>: JSON allows '<' only within strings, where
 * \u003c means the same, so no name can close the script block. */
static int embed_json(const struct matrix *m, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		return -ENOMEM;
	int rc = matrix_write_json(m, mem);
	if (fclose(mem) != 0 && rc == 0)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < len; i++)
		if (buf[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(buf[i], f);
	free(buf);
	return rc;
}

static const char legend[] =
    "<p class=\"legend\">Each cell: crash states that broke an invariant / states judged, "
    "and how many of them <b>silently</b> (no mount error, fsck complaint or checksum "
    "failure); <b>ok N</b>: all N kept every invariant. Shading:"
    "<span class=\"sw\" style=\"background:#3a8f3a\"></span>none broke"
    "<span class=\"sw\" style=\"background:#e0a030\"></span>some broke, all detected"
    "<span class=\"sw\" style=\"background:rgb(200,80,60)\"></span>"
    "<span class=\"sw\" style=\"background:rgb(160,20,20)\"></span>some silent: the "
    "darker the red, the larger the silent share (darkest at a quarter of the states)"
    "<span class=\"sw\" style=\"background:#bbb\"></span>not run (n/a: the "
    "configuration does not apply, or --quick leaves it out; hover for why).</p>\n"
    "<ul class=\"legend\"><li><b>~</b> sampled: not every state the stack allows was "
    "judged; hover the cell for its coverage, printed as <code>blackout explore</code> "
    "prints it.</li>"
    "<li><b>N bystander</b>: states that damaged files the workload never touched.</li>"
    "<li id=\"allowed-key\"><b>+N allowed</b>: N states that kept every invariant (they "
    "are among the ok ones) but showed what the configuration permits: with "
    "data=writeback a file may hold a deleted file's old data after a crash. Not a "
    "failure of the configuration, shown so it is not mistaken for one.</li>"
    "<li>The bar left of each row adds up the row's states over every filesystem: green "
    "ok, amber detected, red silent; the purple line under it is the share that damaged "
    "bystanders.</li>"
    "<li class=\"hint\">Click a cell to open its drill-down below: the counts by "
    "invariant, one failing state with the command that rebuilds it, its I/O timeline "
    "and the damaged blocks. The worst cell (most silent states) is open already.</li>"
    "</ul>\n";

int matrix_write_html(const struct matrix *m, FILE *f)
{
	fprintf(f,
	        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	        "<title>blackout matrix</title>\n<style>\n%s</style></head><body>\n"
	        "<h1>blackout: the measured expectations table</h1>\n<div class=\"sub\" "
	        "id=\"meta\">%s run, seed %" PRIu64 ", %.0f s; workloads: ",
	        html_style, m->mode, m->seed, m->seconds);
	for (size_t i = 0; i < m->nworkloads; i++) {
		fputs(i ? ", " : "", f);
		html_text(f, m->workloads[i]);
	}
	fputs("</div>\n", f);
	html_choose(m, f);
	fputs("<h2>Matrix</h2>\n", f);
	size_t worst = worst_cell(m);
	table(m, worst, f);
	fputs(legend, f);
	if (m->nrows && m->ncols)
		drill(m, worst, f);
	fputs("<h2>What the measurements say</h2><ul class=\"verdicts\" id=\"verdicts\">\n", f);
	struct matrix_verdict v[MATRIX_MAX_VERDICTS];
	size_t nv = matrix_verdicts(m, v, MATRIX_MAX_VERDICTS);
	for (size_t i = 0; i < nv; i++) {
		fprintf(f, "<li><span class=\"tag\">%s</span>", v[i].expectation);
		html_text(f, v[i].text);
		fputs("</li>\n", f);
	}
	if (nv == 0)
		fputs("<li>no row pair in this run allows a verdict</li>\n", f);
	fputs("</ul>\n", f);
	matrix_apps_html(m, f);
	fputs("<pre id=\"selftest-result\"></pre>\n"
	      "<script type=\"application/json\" id=\"data\">\n",
	      f);
	int rc = embed_json(m, f);
	fprintf(f, "</script>\n<script>\n%s</script></body></html>\n", html_script);
	return rc ? rc : ferror(f) ? -EIO : 0;
}
