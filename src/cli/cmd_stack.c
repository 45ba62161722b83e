/* cmd_stack.c — `blackout stack describe|format|probe SPEC` and `stack models`: print
 * a parsed stack with every parameter, its canonical spec, the black-box probe's
 * verdicts, or every registered model.
 * Argument parsing and printing only; the work is dev_spec_* and dev_probe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "cli/cli.h"

/* One entry per action: `stack ACTION --help` prints only its own. */
static const struct action {
	const char *name, *args, *what, *exit;
} actions[] = {
    {"describe", " SPEC",
     "print every layer with every parameter: its value, its default\n"
     "            and what it models\n",
     "0 on success, 1 on a bad spec, 2 on usage"},
    {"format", " SPEC", "print the canonical spec (every parameter spelled out)\n",
     "0 on success, 1 on a bad spec, 2 on usage"},
    {"probe", " SPEC",
     "infer, only by writing, flushing, FUA and cutting power over\n"
     "            every outcome, whether the stack has a volatile cache, honours\n"
     "            flush and FUA, tears writes or sectors, and destroys flushed\n"
     "            sectors it was not writing (collateral damage, named by what\n"
     "            it looked like: an erase block or a torn physical sector\n"
     "            around the write, or a RAID stripe's write hole a chunk or\n"
     "            more away, with its size). Media are wrapped in\n"
     "            copy-on-write overlays: a file image is never written\n",
     "0 on success, 1 on a bad spec or a failed probe, 2 on usage"},
    {"models", "", "list every device model and its parameters\n", "0, or 2 on usage"},
    {NULL, NULL, NULL, NULL},
};

static const char spec_help[] =
    "A stack spec names a device stack, top first, e.g.\n"
    "  'cache(size=1M,flush=ignore) > disk(tear=sector) > file(path=x.img)'\n"
    "  'concat > [disk > mem(size=8M)] x2'\n"
    "(grammar: docs/stack-spec.md).\n\n";

static void help(FILE *out, const struct action *only)
{
	for (const struct action *a = actions; a->name; a++)
		if (!only || a == only)
			fprintf(out, "%s blackout stack %s%s\n",
			        a == actions || only ? "usage:" : "      ", a->name, a->args);
	fputs("\n", out);
	if (!only || only->args[0])
		fputs(spec_help, out);
	for (const struct action *a = actions; a->name; a++)
		if (!only || a == only)
			fprintf(out, "  %-8s  %s", a->name, a->what);
	fprintf(out, "\nExit status: %s.\n",
	        only ? only->exit : "0 on success, 1 on a bad spec or a failed probe, 2 on usage");
}

static int parse(const char *text, struct dev_spec **s)
{
	struct bo_err err = {{0}};
	int rc = dev_spec_parse(text, s, &err);
	if (rc)
		return cli_fail("stack", "%s", bo_errstr(&err, rc));
	return 0;
}

static const char *param_default(const struct dev_param *p)
{
	return p->def ? (p->def[0] ? p->def : "\"\"") : "required";
}

/* Columns as wide as the longest name and default of any model. */
static int models(void)
{
	int nw = 10, dw = 8;
	for (int i = 0; dev_models[i]; i++)
		for (const struct dev_param *p = dev_models[i]->params; p->name; p++) {
			int n = (int)strlen(p->name), d = (int)strlen(param_default(p));
			nw = n > nw ? n : nw;
			dw = d > dw ? d : dw;
		}
	for (int i = 0; dev_models[i]; i++) {
		const struct dev_model *m = dev_models[i];
		printf("%s — %s\n", m->name, m->summary);
		if (m->max_lowers == 0)
			printf("  medium: stands on nothing\n");
		else if (m->min_lowers == m->max_lowers)
			printf("  over %u lower device%s\n", m->min_lowers,
			       m->min_lowers == 1 ? "" : "s");
		else
			printf("  over %u to %u lower devices\n", m->min_lowers, m->max_lowers);
		for (int j = 0; m->params[j].name; j++)
			printf("  %-*s default %-*s %s\n", nw, m->params[j].name, dw,
			       param_default(&m->params[j]), m->params[j].help);
	}
	return 0;
}

static const char *yn(bool b)
{
	return b ? "yes" : "no";
}

int cmd_stack(int argc, char **argv)
{
	if (argc < 2 || cli_is_help(argv[1])) {
		help(argc < 2 ? stderr : stdout, NULL);
		return argc < 2 ? 2 : 0;
	}
	const struct action *act = actions;
	while (act->name && strcmp(act->name, argv[1]))
		act++;
	if (!act->name)
		return cli_usage_error("stack",
		                       "unknown action '%s' (expected: describe, format, "
		                       "probe or models)",
		                       argv[1]);
	/* --help anywhere after the action wins, as in the other commands: a spec never
	 * starts with '-', so nothing else is taken for one */
	for (int i = 2; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			help(stdout, act);
			return 0;
		}
	}
	const char *spec = NULL;
	for (int i = 2; i < argc; i++) {
		if (argv[i][0] == '-')
			return cli_usage_error("stack", "unknown option '%s'", argv[i]);
		if (spec || !act->args[0])
			return cli_usage_error("stack", "%s takes %s", act->name,
			                       act->args[0] ? "one SPEC" : "no arguments");
		spec = argv[i];
	}
	if (!act->args[0])
		return models();
	if (!spec)
		return cli_usage_error("stack", "%s needs a SPEC", act->name);
	const char *what = act->name;
	struct dev_spec *s;
	if (parse(spec, &s))
		return 1;
	int rc = 0;
	if (strcmp(what, "describe") == 0) {
		if (dev_spec_describe(s, stdout))
			rc = cli_fail("stack", "cannot write the description");
	} else if (strcmp(what, "format") == 0) {
		int n = dev_spec_format(s, NULL, 0);
		char *t = n >= 0 ? malloc((size_t)n + 1) : NULL;
		if (!t) {
			rc = cli_fail("stack", "out of memory");
		} else {
			dev_spec_format(s, t, (size_t)n + 1);
			printf("%s\n", t);
			free(t);
		}
	} else {
		struct dev_probe_result r;
		struct bo_err err = {{0}};
		int e = dev_probe(s, &r, &err);
		if (e) {
			rc = cli_fail("stack", "%s", bo_errstr(&err, e));
		} else {
			char t[4096];
			dev_spec_format(s, t, sizeof(t));
			printf("stack: %s\n", t);
			printf("volatile write cache:       %s\n", yn(r.volatile_cache));
			printf("honours flush:              %s\n", yn(r.honors_flush));
			printf("honours FUA:                %s\n", yn(r.honors_fua));
			printf("tears multi-sector writes:  %s\n", yn(r.tears_writes));
			printf("tears sectors (bytes):      %s%s\n", yn(r.tears_sectors),
			       r.unreadable_sectors ? " (a torn sector reads back as a media error)"
			                            : "");
			char eb[32];
			if (!r.honors_flush)
				printf("collateral damage:          not measured (flush not "
				       "honoured)\n");
			else if (!r.collateral)
				printf("collateral damage:          no\n");
			else
				printf("collateral damage:          yes: %s %s%s\n",
				       r.collateral_kind == DEV_COLLATERAL_STRIPE ? "stripe, chunk"
				       : r.collateral_kind == DEV_COLLATERAL_TORN_SECTOR
				           ? "torn sector"
				           : "erase block",
				       r.collateral_at_least ? "at least " : "",
				       bo_format_size(r.collateral_bytes, eb, sizeof(eb)));
			printf("outcomes examined:          %llu (%s)\n",
			       (unsigned long long)r.outcomes,
			       r.exhaustive ? "every verdict settled"
			                    : "bounded: not every outcome, a 'no' may be wrong");
		}
	}
	dev_spec_free(s);
	return rc;
}
