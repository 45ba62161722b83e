/* html_parts.h — the report page's style sheet and script (html_script.c), shared with
 * html.c, which writes the page around them. */
#ifndef BLACKOUT_REPORT_HTML_PARTS_H
#define BLACKOUT_REPORT_HTML_PARTS_H

#include <stdio.h>

extern const char html_style[];
extern const char html_script[];
/* Writes s with & < > " escaped for HTML text and attribute values (html.c). */
void html_text(FILE *f, const char *s);

#endif
