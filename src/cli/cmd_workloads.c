// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_workloads.c — `blackout workloads [show NAME|check FILE]`: list the built-in
 * workloads, print one in the file format, or check a workload file. */
#include <stdio.h>
#include <string.h>

#include "blackout/crash.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

static const struct cli_spec workloads_spec = {
    "workloads",
    "list the built-in crash workloads, or print one",
    "\nshow NAME\ncheck FILE",
    "Without an operand: the built-in workloads, one a line with what it does, then\n"
    "the bug zoo (published crash reproducers) with their source test and fix commit.\n"
    "show NAME prints one in the workload file format; check FILE parses a workload\n"
    "file and prints it back.\n"
    "\n"
    "A workload is a setup section (bystander files, synced before recording) and the\n"
    "recorded steps; the format is docs/workloads.md. The explorer takes a built-in's\n"
    "name or a file: blackout explore --workload NAME|FILE ...\n",
    NULL,
    0,
    2,
    "0 done, 1 no such built-in or a file that does not parse, 2 usage error.",
    "$ blackout workloads\n$ blackout workloads show append-fsync > my.wl\n"
    "$ blackout workloads check my.wl\n",
    NULL};

int cmd_workloads(int argc, char **argv)
{
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &workloads_spec, argc, argv);
	while ((k = cli_next(&p)) > 0)
		;
	if (k < 0)
		return p.status;
	if (p.nargs == 0) {
		for (size_t i = 0; i < crash_builtin_count(); i++) {
			const struct crash_builtin *b = crash_builtin_get(i);
			printf("%-20s %s\n", b->name, b->summary);
		}
		/* the bug zoo, one line each as above (scripts take the first word): where
		 * each came from and the commit that fixed it */
		for (size_t i = 0; i < crash_zoo_count(); i++) {
			const struct crash_builtin *b = crash_zoo_get(i);
			printf("%-20s %s [%s; fixed by %s]\n", b->name, b->summary, b->source,
			       b->fix);
		}
		return 0;
	}
	argv = p.args - 1;
	if (p.nargs != 2 || (strcmp(argv[1], "show") != 0 && strcmp(argv[1], "check") != 0))
		return cli_usage_error("workloads",
		                       "expected no argument, 'show NAME' or 'check FILE'");
	struct crash_workload *w;
	struct bo_err err = {{0}};
	int rc;
	if (strcmp(argv[1], "show") == 0) {
		const struct crash_builtin *b = crash_builtin_find(argv[2]);
		if (!b)
			return cli_fail("workloads",
			                "no built-in workload '%s' (list them with "
			                "`blackout workloads`)",
			                argv[2]);
		rc = crash_workload_parse(b->text, strlen(b->text), b->name, &w, &err);
	} else {
		rc = crash_workload_load(argv[2], &w, &err);
	}
	if (rc)
		return cli_fail("workloads", "%s", bo_errstr(&err, rc));
	rc = crash_workload_format(w, stdout);
	crash_workload_free(w);
	return rc ? cli_fail("workloads", "write error") : 0;
}
