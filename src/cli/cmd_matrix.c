/* cmd_matrix.c — `blackout matrix`: the measured expectations table (docs/matrix.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/matrix.h"
#include "blackout/util.h"
#include "cli/cli.h"

static const char matrix_help[] =
    "usage: blackout matrix [--quick|--full] [--out DIR] [--json] [--jobs N] [--seed S]\n"
    "                       [--max-states N] [--vm [--vm-cuts N]]\n"
    "\n"
    "Runs the crash explorer over every device stack (rows) and filesystem configuration\n"
    "(columns) on the built-in workloads and prints the measured expectations table:\n"
    "which configurations lose synced data, damage files nobody was writing, or do so\n"
    "silently; then one verdict per expectation of the seeds, computed from the cells.\n"
    "\n"
    "  --quick          five workloads, a small state budget: under 2 minutes (default)\n"
    "  --full           every built-in workload and every row, a larger budget\n"
    "  --out DIR        write matrix.json, matrix.md and report.html there\n"
    "                   (default ./blackout-report)\n"
    "  --json           print matrix.json on standard output instead of the table\n"
    "  --jobs N         worker processes, 1 to 64 (default: the online cores, at most 64)\n"
    "  --seed S         seed for sampled explorations (default 1)\n"
    "  --max-states N   crash states per exploration (default 300 quick, 3000 full)\n"
    "  --vm             add real-kernel rows: Linux ext3 (barrier=0 and 1) in qemu on\n"
    "                   a write cache, a lying cache and cheap flash, one blackout\n"
    "                   vmtest run per cell (docs/vmtest.md); logs under DIR/vm\n"
    "  --vm-cuts N      power cuts per real-kernel cell (default 4; about 10 s each\n"
    "                   under TCG: docs/vmtest.md measured 3 cuts in 33 s)\n"
    "\n"
    "The table fits 100 columns: columns are lettered and explained under it, with a\n"
    "key for every abbreviation. Colour only on a terminal and without NO_COLOR.\n"
    "Progress goes to standard error: one line redrawn on a terminal, otherwise a\n"
    "plain line every 5 s (explorations done, crash states judged, time left).\n"
    "The JSON schema and how to read the table: docs/matrix.md.\n";

/* On a terminal one line redrawn in place; otherwise (a log, a pipe) a plain line at
 * most every 5 s and at the end, so a piped run is never silent for long. */
struct progress_state {
	bool tty;
	double last;
};

static void progress(void *ctx, const struct matrix_progress *p)
{
	struct progress_state *ps = ctx;
	bool end = p->done == p->total;
	if (!ps->tty && !end && p->done > 1 && p->seconds - ps->last < 5)
		return;
	ps->last = p->seconds;
	double left = p->done ? p->seconds / (double)p->done * (double)(p->total - p->done) : 0;
	fprintf(stderr,
	        "%smatrix: %zu of %zu explorations done, %" PRIu64
	        " crash states judged, %.0f s so far, about %.0f s left%s",
	        ps->tty ? "\r" : "", p->done, p->total, p->states, p->seconds, left,
	        ps->tty && !end ? "   " : "\n");
}

int cmd_matrix(int argc, char **argv)
{
	struct matrix_run_opts o = {.seed = 1};
	const char *out = "blackout-report";
	bool json = false;
	uint64_t jobs = 0, maxs = 0, vm_cuts = 4;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			fputs(matrix_help, stdout);
			return 0;
		} else if (strcmp(a, "--quick") == 0) {
			o.full = false;
		} else if (strcmp(a, "--full") == 0) {
			o.full = true;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "--vm") == 0) {
			o.vm = true;
		} else if (strcmp(a, "--vm-cuts") == 0) {
			if (cli_num("matrix", a, v, 0, 1, 1000, &vm_cuts))
				return 2;
			i++;
		} else if (strcmp(a, "--out") == 0) {
			if (!v)
				return cli_usage_error("matrix", "--out needs a directory");
			out = v;
			i++;
		} else if (strcmp(a, "--jobs") == 0) {
			if (cli_num("matrix", a, v, 0, 1, 64, &jobs))
				return 2;
			i++;
		} else if (strcmp(a, "--seed") == 0) {
			if (cli_num("matrix", a, v, 0, 0, UINT64_MAX, &o.seed))
				return 2;
			i++;
		} else if (strcmp(a, "--max-states") == 0) {
			if (cli_num("matrix", a, v, 0, 1, UINT64_MAX, &maxs))
				return 2;
			i++;
		} else {
			return cli_usage_error("matrix", "unknown argument '%s'", a);
		}
	}
	if (jobs == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = n > 0 ? (uint64_t)n : 1;
	}
	if (jobs > 64)
		jobs = 64; /* the runner's limit of workers */
	o.jobs = (unsigned)jobs;
	o.max_states = maxs ? maxs : o.full ? 3000 : 300;
	o.self = "blackout";
	struct progress_state ps = {.tty = isatty(2) == 1};
	o.progress = progress;
	o.progress_ctx = &ps;

	char script[4096 + 32], vmdir[4096 + 8];
	if (o.vm) {
		if (cli_vm_script(script, sizeof(script)) < 0)
			return cli_fail("matrix",
			                "--vm: cannot find scripts/vmtest (set BLACKOUT_SRC)");
		snprintf(vmdir, sizeof(vmdir), "%s/vm", out);
		o.vm_script = script;
		o.vm_out = vmdir;
		o.vm_cuts = (unsigned)vm_cuts;
	}
	struct matrix m;
	struct bo_err err = {{0}};
	int rc = matrix_run(&o, &m, &err);
	if (rc)
		return cli_fail("matrix", "%s", bo_errstr(&err, rc));
	if (json) {
		matrix_write_json(&m, stdout);
	} else {
		/* NO_COLOR (no-color.org): set and not empty turns colour off */
		const char *nc = getenv("NO_COLOR");
		matrix_print_table(&m, stdout, isatty(1) && !(nc && *nc));
	}
	rc = matrix_write_all(&m, out, &err);
	matrix_free_cells(&m);
	if (rc)
		return cli_fail("matrix", "%s", bo_errstr(&err, rc));
	fprintf(json ? stderr : stdout, "\nreport: %s/report.html (also matrix.json, matrix.md)\n",
	        out);
	return 0;
}
