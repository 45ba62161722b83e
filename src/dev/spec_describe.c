// SPDX-License-Identifier: GPL-2.0-or-later
/* spec_describe.c — `blackout stack describe`: every layer of a parsed spec, each
 * parameter with its value, its default and what it models. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "dev/dev_int.h"

static const char *type_name(enum dev_ptype t)
{
	switch (t) {
	case DEV_PT_SIZE: return "size";
	case DEV_PT_U64: return "number";
	case DEV_PT_BOOL: return "true|false";
	case DEV_PT_ENUM: return "choice";
	default: return "text";
	}
}

static void describe_default(const struct dev_spec *s, unsigned i, char *def, size_t len)
{
	const struct dev_param *pr = &dev_spec_model(s)->params[i];
	if (!pr->def)
		snprintf(def, len, "[required]");
	else if (!dev_spec_given(s, pr->name) ||
	         strcmp(pr->def, dev_arg_str(dev_spec_args(s), pr->name)) == 0)
		snprintf(def, len, "[default]");
	else
		snprintf(def, len, "[default %.80s]", pr->def[0] ? pr->def : "\"\"");
}

static int width(int w, const char *s)
{
	int n = (int)strlen(s);
	return n > w ? n : w;
}

/* One line per parameter, in columns as wide as this layer's widest entry needs
 * (at least 8, 12 and 16), so long names and values do not push a line askew. */
static void describe_node(const struct dev_spec *s, FILE *out, unsigned depth, const char *label)
{
	const struct dev_model *m = dev_spec_model(s);
	const struct dev_args *a = dev_spec_args(s);
	unsigned np = 0;
	while (m->params && m->params[np].name)
		np++;
	fprintf(out, "%*s%s%s — %s\n", (int)depth * 4, "", label, m->name, m->summary);
	int nw = 8, vw = 12, dw = 16;
	char def[96];
	for (unsigned i = 0; i < np; i++) {
		describe_default(s, i, def, sizeof(def));
		nw = width(nw, m->params[i].name);
		vw = width(vw, dev_arg_str(a, m->params[i].name));
		dw = width(dw, def);
	}
	for (unsigned i = 0; i < np; i++) {
		const struct dev_param *pr = &m->params[i];
		const char *v = dev_arg_str(a, pr->name);
		describe_default(s, i, def, sizeof(def));
		fprintf(out, "%*s  %-*s = %-*s %-*s %s: %s\n", (int)depth * 4, "", nw, pr->name, vw,
		        v[0] ? v : "\"\"", dw, def, type_name(pr->type), pr->help);
	}
	unsigned n = dev_spec_nlowers(s);
	for (unsigned i = 0; i < n; i++) {
		char l[32];
		snprintf(l, sizeof(l), n > 1 ? "lower %u: " : "over: ", i);
		describe_node(dev_spec_lower(s, i), out, depth + 1, l);
	}
}

int dev_spec_describe(const struct dev_spec *s, FILE *out)
{
	char *t = dev_spec_format_alloc(s);
	if (!t)
		return -ENOMEM;
	fprintf(out, "stack: %s\n\n", t);
	free(t);
	describe_node(s, out, 0, "");
	return ferror(out) ? -EIO : 0;
}
