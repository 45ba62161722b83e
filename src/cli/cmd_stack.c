/* cmd_stack.c — `blackout stack describe|format|probe SPEC`: print a parsed stack
 * with every parameter, its canonical spec, or the black-box probe's verdicts.
 * Argument parsing and printing only; the work is dev_spec_* and dev_probe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "cli/cli.h"

static void help(FILE *out)
{
	fprintf(out, "usage: blackout stack describe SPEC\n"
	             "       blackout stack format SPEC\n"
	             "       blackout stack probe SPEC\n"
	             "       blackout stack models\n\n"
	             "A stack spec names a device stack, top first, e.g.\n"
	             "  'cache(size=1M,flush=ignore) > disk(tear=sector) > file(path=x.img)'\n"
	             "  'concat > [disk > mem(size=8M)] x2'\n"
	             "(grammar: docs/stack-spec.md).\n\n"
	             "  describe  print every layer with every parameter: its value, its default\n"
	             "            and what it models\n"
	             "  format    print the canonical spec (every parameter spelled out)\n"
	             "  probe     infer, only by writing, flushing, FUA and cutting power over\n"
	             "            every outcome, whether the stack has a volatile cache, honours\n"
	             "            flush and FUA, tears writes or sectors, and destroys flushed\n"
	             "            sectors it was not writing (collateral damage: the erase-block\n"
	             "            size, as flashbench finds it). Media are wrapped in\n"
	             "            copy-on-write overlays: a file image is never written\n"
	             "  models    list every device model and its parameters\n\n"
	             "Exit status: 0 on success, 1 on a bad spec or a failed probe, 2 on usage.\n");
}

static int parse(const char *text, struct dev_spec **s)
{
	struct bo_err err = {{0}};
	int rc = dev_spec_parse(text, s, &err);
	if (rc)
		return cli_fail("stack", "%s", bo_errstr(&err, rc));
	return 0;
}

static int models(void)
{
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
			printf("  %-10s default %-8s %s\n", m->params[j].name,
			       m->params[j].def ? (m->params[j].def[0] ? m->params[j].def : "\"\"")
			                        : "required",
			       m->params[j].help);
	}
	return 0;
}

static const char *yn(bool b)
{
	return b ? "yes" : "no";
}

int cmd_stack(int argc, char **argv)
{
	if (argc >= 2 && cli_is_help(argv[1])) {
		help(stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "models") == 0)
		return models();
	if (argc != 3)
		return cli_usage_error("stack", "expected describe|format|probe and one SPEC");
	const char *what = argv[1];
	if (strcmp(what, "describe") && strcmp(what, "format") && strcmp(what, "probe"))
		return cli_usage_error("stack", "unknown action '%s'", what);
	struct dev_spec *s;
	if (parse(argv[2], &s))
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
			rc = cli_fail("stack", "probe: %s", bo_errstr(&err, e));
		} else {
			char t[4096];
			dev_spec_format(s, t, sizeof(t));
			printf("stack: %s\n", t);
			printf("volatile write cache:       %s\n", yn(r.volatile_cache));
			printf("honours flush:              %s\n", yn(r.honors_flush));
			printf("honours FUA:                %s\n", yn(r.honors_fua));
			printf("tears multi-sector writes:  %s\n", yn(r.tears_writes));
			printf("tears sectors (bytes):      %s\n", yn(r.tears_sectors));
			char eb[32];
			if (!r.honors_flush)
				printf("collateral damage:          not measured (flush not "
				       "honoured)\n");
			else if (!r.collateral)
				printf("collateral damage:          no\n");
			else
				printf("collateral damage:          yes: erase block %s%s\n",
				       r.collateral_at_least ? "at least " : "",
				       bo_format_size(r.collateral_bytes, eb, sizeof(eb)));
			printf("outcomes examined:          %llu (%s)\n",
			       (unsigned long long)r.outcomes,
			       r.exhaustive ? "every outcome" : "bounded: not every outcome");
		}
	}
	dev_spec_free(s);
	return rc;
}
