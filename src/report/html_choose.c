// SPDX-License-Identifier: GPL-2.0-or-later
/* html_choose.c — the report's opening: what to choose, drawn from the cells (each
 * cell's fate, matrix_cell_fate), and the row titles that explain themselves; html.c
 * writes the rest of the page. Nothing here is a fixed answer: another run's cells
 * give another opening. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "blackout/matrix.h"
#include "report/html_parts.h"

/* Abbreviations of the row labels (kept short for the terminal's 28 columns) spelled
 * out for the page. */
static void html_label(FILE *f, const char *label)
{
	static const struct {
		const char *abbr, *full;
	} words[] = {{" EB", " erase blocks"}};
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", label);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		char *p = strstr(buf, words[i].abbr);
		size_t n = strlen(words[i].abbr);
		if (p && (p[n] == 0 || p[n] == ' ' || p[n] == ',')) {
			char tail[256];
			snprintf(tail, sizeof(tail), "%s", p + n);
			snprintf(p, sizeof(buf) - (size_t)(p - buf), "%s%s", words[i].full, tail);
		}
	}
	html_text(f, buf);
}

void html_row_title(const struct matrix *m, size_t r, FILE *f)
{
	/* "  + verify at mount" continues the row above it: say what it adds to */
	const char *own = m->rows[r].label;
	while (*own == ' ')
		own++;
	if (*own == '+') {
		size_t b = r;
		while (b > 0) {
			const char *l = m->rows[--b].label;
			while (*l == ' ')
				l++;
			if (*l != '+')
				break;
		}
		for (size_t k = b; k < r; k++) {
			const char *l = m->rows[k].label;
			while (*l == ' ')
				l++;
			html_label(f, l);
			fputs(" ", f);
		}
	}
	html_label(f, own);
}

void html_col_title(const struct matrix *m, size_t c, FILE *f)
{
	html_text(f, m->cols[c].label);
}

/* "ext3 ordered b=1, ext3 + csum" — the columns of row r whose fate is `fate`. */
static size_t list_cols(const struct matrix *m, size_t r, enum matrix_fate fate, FILE *f)
{
	size_t n = 0;
	for (size_t c = 0; c < m->ncols; c++)
		if (matrix_cell_fate(matrix_cell(m, r, c)) == fate) {
			fputs(n++ ? ", " : "", f);
			html_col_title(m, c, f);
		}
	return n;
}

static size_t count_fate(const struct matrix *m, size_t r, enum matrix_fate fate)
{
	size_t n = 0;
	for (size_t c = 0; c < m->ncols; c++)
		n += matrix_cell_fate(matrix_cell(m, r, c)) == fate;
	return n;
}

/* The columns ranked by how many stacks they were safe on, counted over the stacks
 * every column ran on (a column run only on the hard stacks, as --quick does with some,
 * must not look worse than one run on the easy ones too); when no stack ran every
 * column, each column's share of the stacks it ran on. */
static void by_column(const struct matrix *m, FILE *f)
{
	size_t order[64], nc = m->ncols < 64 ? m->ncols : 64, safe[64] = {0}, ran[64] = {0};
	size_t common = 0;
	for (size_t r = 0; r < m->nrows; r++)
		common += count_fate(m, r, MF_NOT_RUN) == 0;
	for (size_t c = 0; c < nc; c++) {
		order[c] = c;
		for (size_t r = 0; r < m->nrows; r++) {
			if (common && count_fate(m, r, MF_NOT_RUN))
				continue;
			enum matrix_fate x = matrix_cell_fate(matrix_cell(m, r, c));
			safe[c] += x == MF_SAFE;
			ran[c] += x != MF_NOT_RUN;
		}
	}
	/* a stable insertion sort by the share of stacks it was safe on */
	for (size_t i = 1; i < nc; i++)
		for (size_t j = i; j > 0; j--) {
			size_t a = order[j - 1], b = order[j];
			if (safe[b] * (ran[a] ? ran[a] : 1) <= safe[a] * (ran[b] ? ran[b] : 1))
				break;
			order[j - 1] = b, order[j] = a;
		}
	if (common)
		fprintf(f,
		        "<li id=\"choose-cols\"><b>Filesystem configurations</b>, safest first, on "
		        "the %zu stacks every one of them ran on: ",
		        common);
	else
		fputs("<li id=\"choose-cols\"><b>Filesystem configurations</b>, safest first: ", f);
	size_t shown = 0;
	for (size_t i = 0; i < nc; i++) {
		size_t c = order[i];
		if (!ran[c])
			continue;
		fputs(shown++ ? "; " : "", f);
		fputs("<span class=\"opt\">", f);
		html_col_title(m, c, f);
		if (common)
			fprintf(f, "</span> safe on %zu", safe[c]);
		else
			fprintf(f, "</span> safe on %zu of the %zu stacks it ran on", safe[c],
			        ran[c]);
	}
	fputs(".</li>\n", f);
}

static const char *fate_words(enum matrix_fate x)
{
	return x == MF_REPORTED ? "damage reported"
	       : x == MF_SILENT ? "<span class=\"bad\">broke something silently</span>"
	       : x == MF_LOST   ? "<span class=\"bad\">lost synced data</span>"
	                        : "safe";
}

/* "; damage reported with A; lost synced data with B, C" — the row's unsafe columns;
 * the first one written without its "; ". */
static void others(const struct matrix *m, size_t r, FILE *f)
{
	static const enum matrix_fate fates[] = {MF_REPORTED, MF_SILENT, MF_LOST};
	bool first = count_fate(m, r, MF_SAFE) == 0;
	for (size_t k = 0; k < 3; k++) {
		if (!count_fate(m, r, fates[k]))
			continue;
		fprintf(f, "%s%s with ", first ? "" : "; ", fate_words(fates[k]));
		list_cols(m, r, fates[k], f);
		first = false;
	}
}

/* The row's name in the opening, tagged with its id for a reader (and the test). */
static void stk_open(const struct matrix *m, size_t r, FILE *f, bool li)
{
	fputs(li ? "<li><span class=\"stk\" data-row=\"" : "<span class=\"stk\" data-row=\"", f);
	html_text(f, m->rows[r].id);
	fputs("\">", f);
}

/* Whether rows a and b fared alike in every column (so they share a line). */
static bool alike(const struct matrix *m, size_t a, size_t b)
{
	for (size_t c = 0; c < m->ncols; c++)
		if (matrix_cell_fate(matrix_cell(m, a, c)) !=
		    matrix_cell_fate(matrix_cell(m, b, c)))
			return false;
	return true;
}

#define MATRIX_MAX_ROWS_SHOWN 64

void html_choose(const struct matrix *m, FILE *f)
{
	fputs("<section id=\"choose\"><h2>What to choose</h2>\n<p class=\"lead\">Drawn from "
	      "the cells of the table below, each a configuration's crash states judged: "
	      "<b>safe</b> means every one of them kept every invariant (a green cell); "
	      "<b>damage reported</b> means some broke something, none lost synced data (what "
	      "fsync, fdatasync or sync had made durable), and a mount error, an fsck "
	      "complaint or a checksum failure told of each. A sampled cell (~) speaks only "
	      "for the states judged.</p>"
	      "\n<ul class=\"choose\">\n",
	      f);
	by_column(m, f);
	bool done[MATRIX_MAX_ROWS_SHOWN] = {false};
	/* stacks on which every configuration tried was safe */
	size_t n = 0;
	for (size_t r = 0; r < m->nrows && r < MATRIX_MAX_ROWS_SHOWN; r++) {
		size_t ran = m->ncols - count_fate(m, r, MF_NOT_RUN);
		if (!ran || count_fate(m, r, MF_SAFE) != ran)
			continue;
		fputs(n++ ? "; "
		          : "<li id=\"choose-any\"><b>Any configuration tried was safe</b> on: ",
		      f);
		stk_open(m, r, f, false);
		html_row_title(m, r, f);
		fputs("</span>", f);
		if (ran < m->ncols) {
			fputs(" (", f);
			list_cols(m, r, MF_SAFE, f);
			fputs(ran == 1 ? ", the only one run)" : ", the only ones run)", f);
		}
		done[r] = true;
	}
	if (n)
		fputs(".</li>\n", f);
	/* stacks where the choice matters, then those no configuration made safe; stacks
	 * whose cells fare alike share a line */
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (size_t r = 0; r < m->nrows && r < MATRIX_MAX_ROWS_SHOWN; r++) {
			size_t safe = count_fate(m, r, MF_SAFE),
			       ran = m->ncols - count_fate(m, r, MF_NOT_RUN);
			if (done[r] || !ran || (pass == 0) != (safe > 0))
				continue;
			if (!n++)
				fputs(pass == 0
				          ? "<li id=\"choose-some\"><b>The choice matters</b> on "
				            "these stacks; choose one of the safe "
				            "configurations:<ul>\n"
				          : "<li id=\"choose-none\"><b>No configuration tried was "
				            "safe</b> on these stacks; avoid them, or add what the "
				            "table shows helping:<ul>\n",
				      f);
			fputs("<li>", f);
			for (size_t k = r, first = 1; k < m->nrows && k < MATRIX_MAX_ROWS_SHOWN;
			     k++)
				if (!done[k] && alike(m, r, k)) {
					fputs(first ? "" : "; ", f);
					stk_open(m, k, f, false);
					html_row_title(m, k, f);
					fputs("</span>", f);
					done[k] = true;
					first = 0;
				}
			fputs(": ", f);
			if (safe) {
				fputs("safe with ", f);
				list_cols(m, r, MF_SAFE, f);
			}
			static const enum matrix_fate fates[] = {MF_REPORTED, MF_SILENT, MF_LOST};
			bool all = false;
			for (size_t k = 0; k < 3 && !all; k++)
				if (count_fate(m, r, fates[k]) == ran) {
					fprintf(f, "%s with ", fate_words(fates[k]));
					if (ran == m->ncols)
						fputs("every configuration", f);
					else {
						list_cols(m, r, fates[k], f);
						fputs(ran == 1 ? ", the only one run"
						               : ", the only ones run",
						      f);
					}
					all = true;
				}
			if (!all)
				others(m, r, f);
			fputs("</li>\n", f);
		}
		if (n)
			fputs("</ul></li>\n", f);
	}
	fputs("</ul></section>\n", f);
}
