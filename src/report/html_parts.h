/* SPDX-License-Identifier: GPL-2.0-or-later */
/* html_parts.h — the report page's style sheet and script (html_script.c) and its
 * opening (html_choose.c), shared with html.c, which writes the page around them. */
#ifndef BLACKOUT_REPORT_HTML_PARTS_H
#define BLACKOUT_REPORT_HTML_PARTS_H

#include <stdio.h>

extern const char html_style[];
extern const char html_script[];
/* Writes s with & < > " escaped for HTML text and attribute values (html.c). */
void html_text(FILE *f, const char *s);

struct matrix;
/* "What to choose", drawn from the cells (html_choose.c). */
void html_choose(const struct matrix *m, FILE *f);
/* A row's label as the page shows it: a "+ ..." row says which row it adds to, and
 * abbreviations are spelled out. */
void html_row_title(const struct matrix *m, size_t r, FILE *f);
void html_col_title(const struct matrix *m, size_t c, FILE *f);

#endif
