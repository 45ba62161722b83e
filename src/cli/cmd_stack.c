// SPDX-License-Identifier: GPL-2.0-or-later
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
#include "cli/cli_opts.h"

#define SPEC_ABOUT                                                                                 \
	"A stack spec names a device stack, top first, e.g.\n"                                     \
	"\n"                                                                                       \
	"  'cache(size=1M,flush=ignore) > disk(tear=sector) > file(path=x.img)'\n"                 \
	"  'concat > [disk > mem(size=8M)] x2'\n"                                                  \
	"\n"                                                                                       \
	"(grammar: docs/stack-spec.md).\n"
#define SPEC_EXIT                                                                                  \
	"0 done, 1 a stack that cannot be built, 2 usage error or a spec that does not parse."

static const struct cli_spec describe_spec = {
    "stack describe",
    "print every layer with every parameter: its value, its default and what it models",
    "SPEC",
    SPEC_ABOUT,
    NULL,
    1,
    1,
    SPEC_EXIT,
    "$ blackout stack describe 'cache > disk > mem(size=8M)'\n",
    NULL};
static const struct cli_spec format_spec = {
    "stack format",
    "print the canonical spec (every parameter spelled out)",
    "SPEC",
    SPEC_ABOUT,
    NULL,
    1,
    1,
    SPEC_EXIT,
    "$ blackout stack format 'disk > mem'\n",
    NULL};
static const struct cli_spec probe_spec = {
    "stack probe",
    "infer the stack's behaviour only by writing, flushing and cutting power",
    "SPEC",
    "Infers, only by writing, flushing, FUA and cutting power over every outcome,\n"
    "whether the stack has a volatile cache, honours flush and FUA, tears writes or\n"
    "sectors, and destroys flushed sectors it was not writing (collateral damage,\n"
    "named by what it looked like: an erase block or a torn physical sector around\n"
    "the write, or a RAID stripe's write hole a chunk or more away, with its size).\n"
    "Media are wrapped in copy-on-write overlays: a file image is never written.\n"
    "\n" SPEC_ABOUT,
    NULL,
    1,
    1,
    "0 done, 1 a stack that cannot be built or a failed probe, 2 usage error or a\n"
    "spec that does not parse.",
    "$ blackout stack probe 'cache(flush=ignore) > disk > mem(size=64k)'\n",
    NULL};
static const struct cli_spec models_spec = {"stack models",
                                            "list every device model and its parameters",
                                            "",
                                            NULL,
                                            NULL,
                                            0,
                                            0,
                                            NULL,
                                            "$ blackout stack models\n",
                                            NULL};
static const struct cli_spec *const stack_actions[] = {&describe_spec, &format_spec, &probe_spec,
                                                       &models_spec, NULL};
static const struct cli_spec stack_spec = {
    "stack",
    "describe, format or probe a device stack spec",
    NULL,
    SPEC_ABOUT,
    NULL,
    0,
    0,
    SPEC_EXIT,
    "$ blackout stack describe 'cache > disk > mem(size=8M)'\n"
    "$ blackout stack probe 'flash(ftl=cheap,eb=64k,size=4M)'\n"
    "$ blackout stack models\n",
    stack_actions};

static int parse(const char *text, struct dev_spec **s)
{
	struct bo_err err = {{0}};
	int rc = dev_spec_parse(text, s, &err);
	if (rc) {
		fprintf(stderr, "blackout stack: %s\nTry 'blackout stack --help'.\n",
		        bo_errstr(&err, rc));
		return CLI_EXIT_USAGE;
	}
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
	int rc = 0;
	const struct cli_spec *act = cli_action(&stack_spec, argc, argv, &rc);
	if (!act)
		return rc;
	struct cli_parse p;
	int k;
	cli_parse_start(&p, act, argc - 1, argv + 1);
	while ((k = cli_next(&p)) > 0)
		;
	if (k < 0)
		return p.status;
	if (act == &models_spec)
		return models();
	const char *spec = p.args[0];
	const char *what = strchr(act->name, ' ') + 1;
	struct dev_spec *s;
	if ((rc = parse(spec, &s)))
		return rc;
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
