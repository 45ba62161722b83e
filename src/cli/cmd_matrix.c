// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_matrix.c — `blackout matrix`: the measured expectations table (docs/matrix.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/matrix.h"
#include "blackout/util.h"
#include "blackout/vmexplore.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

enum { G_MODE = 1, G_RUN = 2 }; /* --quick/--full; what --merge cannot take */
enum {
	OPT_QUICK = CLI_LONG,
	OPT_FULL,
	OPT_OUT,
	OPT_JSON,
	OPT_JOBS,
	OPT_SEED,
	OPT_MAX_STATES,
	OPT_ROWS,
	OPT_COLUMNS,
	OPT_WORKLOADS,
	OPT_VM,
	OPT_VM_STATES,
	OPT_VM_WORKLOADS,
	OPT_VM_APPS,
	OPT_SHARD,
	OPT_MERGE,
};
static const struct cli_opt matrix_opts[] = {
    {OPT_QUICK, "quick", NULL,
     "six workloads (the write-errors rows: checkpoint-append), a\nsmall state budget: under 1 "
     "minute (default); rows that\nanswer one verdict run only the columns it compares",
     G_MODE | G_RUN, G_MODE},
    {OPT_FULL, "full", NULL, "every built-in workload and every row, a larger budget",
     G_MODE | G_RUN, G_MODE},
    {OPT_OUT, "out", "DIR",
     "write matrix.json, matrix.md and report.html there\n(default ./blackout-report)", 0},
    {OPT_JSON, "json", "[FILE]",
     "matrix.json also to FILE; without FILE (or '-') on standard\noutput instead of the table", 0},
    {OPT_JOBS, "jobs", "N", "worker processes, 1 to 64 (default: the online cores)", G_RUN},
    {OPT_SEED, "seed", "S", "seed for sampled explorations (default 1)", G_RUN},
    {OPT_MAX_STATES, "max-states", "N",
     "crash states per exploration (default 300 quick, 3000 full)", G_RUN},
    {OPT_ROWS, "rows", "IDS",
     "only these rows (comma-separated ids, any mode's), e.g.\n"
     "nocache, cache, cache-lying, torn, torn-unreadable, garbage, flash-cheap-128k, "
     "integrity-cheap-128k, flash-careful, raid5, raid5-degraded, raid5-degraded-journal, "
     "raid5-cache, raid5-cache-lying, raid5-nobarrier, write-errors, write-errors-2009, "
     "bad-sectors-2009, lost-writes\n"
     "(full also: flash-cheap-4m, raid6-2missing and the -verify rows)",
     G_RUN},
    {OPT_COLUMNS, "columns", "IDS",
     "only these columns: ext2, ext3-ordered-b0, ext3-ordered-b1,\n"
     "ext3-journal-b1, ext3-writeback-b1, ext3-csum; with --vm also\n"
     "linux-ext4-b1, linux-ext4-b0, linux-xfs, linux-btrfs,\n"
     "linux-md-ext4, linux-dmint-ext4",
     G_RUN},
    {OPT_WORKLOADS, "workloads", "NAMES", "only these built-in workloads (blackout workloads)",
     G_RUN},
    {OPT_VM, "vm", NULL,
     "add real-kernel columns: Linux ext4 (barrier=1, barrier=0), xfs\n"
     "and btrfs in qemu on each row's stack (media grown to hold a\n"
     "64 MiB filesystem, 320 MiB for xfs), and on RAID rows Linux md\n"
     "over the row's members with ext4 (docs/md.md), on cheap flash\n"
     "and torn rows ext4 over dm-integrity (docs/integrity.md); one\n"
     "`blackout vmtest` run per cell and workload: the guest's I/O\n"
     "recorded once, its crash states enumerated and judged by\n"
     "Linux (docs/vmtest.md); logs under DIR/vm.\n"
     "It also adds the application section: the built-in examples\n"
     "of docs/apps.md on Linux ext4 barrier=1 over the run's rows\n"
     "among nocache, cache, cache-lying and flash-cheap-128k (and\n"
     "torn-4k, a drive tearing 8 KiB pages at 4 KiB, for PostgreSQL),\n"
     "one `blackout app` run per row and example (the two config\n"
     "updates share one), --vm-states states each; not in --shard runs",
     G_RUN},
    {OPT_VM_STATES, "vm-states", "N",
     "crash states per real-kernel run (default 20 quick, 300 full;\nabout a second each under "
     "TCG); needs --vm",
     G_RUN},
    {OPT_VM_WORKLOADS, "vm-workloads", "NAMES",
     "workloads of the real-kernel cells (default append-fsync);\nneeds --vm", G_RUN},
    {OPT_VM_APPS, "vm-apps", "IDS",
     "only these examples: sqlite-wal-full, sqlite-rollback-full,\nconfig-rename-fsync, "
     "config-rename-nofsync, append-log,\nredis-always, redis-everysec, leveldb-sync, "
     "leveldb-nosync,\npg-durable, pg-async, pg-fpw-off; or none (default: the\nfirst "
     "five); needs --vm",
     G_RUN},
    {OPT_SHARD, "shard", "I/N",
     "run only shard I of N (0 <= I < N) of the explorations and\nwrite them as a part: to --json "
     "FILE, else DIR/part-I-of-N.json",
     G_RUN},
    {OPT_MERGE, "merge", NULL,
     "fold every shard's part (the operands) into the matrix: the\nsame table, report and "
     "matrix.json (byte for byte) as the\nunsharded run; refuses parts of different runs, a "
     "missing\nor repeated shard; takes only --out and --json",
     0, G_RUN},
    {0}};

static const struct cli_spec matrix_spec = {
    "matrix",
    "the measured expectations table: stacks x filesystems, crash-tested",
    "[--quick|--full] [OPTIONS]\n"
    "--merge [--out DIR] [--json [FILE]] PART...",
    "Runs the crash explorer over every device stack (rows) and filesystem configuration\n"
    "(columns) on the built-in workloads and prints the measured expectations table:\n"
    "which configurations lose synced data, damage files nobody was writing, or do so\n"
    "silently; then one verdict per expectation block devices are held to (docs/matrix.md\n"
    "quotes the 2009 kernel documentation patch and LWN article that name them),\n"
    "computed from the cells.\n"
    "\n"
    "The table fits 100 columns: columns are lettered and explained under it, with a\n"
    "key for every abbreviation (more than six columns: a second block). Colour only on\n"
    "a terminal and without NO_COLOR. Progress goes to standard error: one line redrawn\n"
    "on a terminal, otherwise a plain line every 5 s (explorations done, crash states\n"
    "judged, time left). The JSON schema and how to read the table: docs/matrix.md;\n"
    "shards: docs/scale.md.\n",
    matrix_opts,
    0,
    -1,
    "0 done, 1 a real-kernel or application run failed (its cell says why) or an\n"
    "error, 2 usage error (unknown ids, conflicting options).",
    "$ blackout matrix --quick\n"
    "$ blackout matrix --rows cache,cache-lying --json -\n"
    "$ blackout matrix --full --shard 0/2 --json p0.json\n"
    "$ blackout matrix --merge p0.json p1.json\n",
    NULL};

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

/* The table or JSON, the report files, and what became of real-kernel runs. */
static int show(struct matrix *m, const char *out, int json, const char *json_file)
{
	struct bo_err err = {{0}};
	int rc = 0;
	if (json == 1) {
		matrix_write_json(m, stdout);
	} else {
		/* NO_COLOR (no-color.org): set and not empty turns colour off */
		const char *nc = getenv("NO_COLOR");
		matrix_print_table(m, stdout, isatty(1) && !(nc && *nc));
	}
	if (json_file) {
		FILE *f = fopen(json_file, "w");
		rc = f ? matrix_write_json(m, f) : -errno;
		if (f && fclose(f) != 0 && rc == 0)
			rc = -EIO;
		if (rc)
			rc = bo_errf(&err, rc, "%s: cannot write: %s", json_file, strerror(-rc));
	}
	if (rc == 0)
		rc = matrix_write_all(m, out, &err);
	size_t failed = 0, app_failed = matrix_apps_failed(m);
	for (size_t i = 0; i < m->nrows * m->ncols; i++)
		failed += m->cells[i].failed;
	matrix_free_cells(m);
	if (rc)
		return cli_fail("matrix", "%s", bo_errstr(&err, rc));
	fprintf(json == 1 ? stderr : stdout,
	        "\nreport: %s/report.html (also matrix.json, matrix.md)\n", out);
	if (failed)
		fprintf(stderr,
		        "matrix: %zu real-kernel cell%s had a run fail; the cells say why\n",
		        failed, failed == 1 ? "" : "s");
	if (app_failed)
		fprintf(stderr,
		        "matrix: %zu application cell%s had a run fail; the cells say why\n",
		        app_failed, app_failed == 1 ? "" : "s");
	return failed || app_failed ? 1 : 0;
}

static int merge(char **parts, size_t n, const char *out, int json, const char *json_file)
{
	struct matrix_part **p = calloc(n, sizeof(*p));
	if (!p)
		return cli_fail("matrix", "out of memory");
	struct bo_err err = {{0}};
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = matrix_part_load(parts[i], &p[i], &err);
	struct matrix m;
	if (rc == 0)
		rc = matrix_merge(p, (const char *const *)parts, n, &m, &err);
	for (size_t i = 0; i < n; i++)
		matrix_part_free(p[i]);
	free(p);
	if (rc)
		return cli_fail("matrix", "--merge: %s", bo_errstr(&err, rc));
	return show(&m, out, json, json_file);
}

static int run_shard(const struct matrix_run_opts *o, const char *out, const char *json_file)
{
	char path[4200];
	if (json_file)
		snprintf(path, sizeof(path), "%s", json_file);
	else if (mkdir(out, 0755) < 0 && errno != EEXIST)
		return cli_fail("matrix", "%s: cannot create: %s", out, strerror(errno));
	else
		snprintf(path, sizeof(path), "%s/part-%u-of-%u.json", out, o->shard, o->nshards);
	struct matrix_part *p;
	struct bo_err err = {{0}};
	int rc = matrix_run_part(o, &p, &err);
	if (rc)
		return cli_fail("matrix", "%s", bo_errstr(&err, rc));
	FILE *f = fopen(path, "w");
	rc = f ? matrix_part_write(p, f) : -errno;
	if (f && fclose(f) != 0 && rc == 0)
		rc = -EIO;
	char what[128];
	matrix_part_describe(p, what, sizeof(what));
	matrix_part_free(p);
	if (rc)
		return cli_fail("matrix", "%s: cannot write: %s", path, strerror(-rc));
	printf("matrix: %s; part: %s\n", what, path);
	return 0;
}

/* A run (or one shard of it) with the options parsed: the defaults that depend on
 * the machine, progress on standard error, the harness for --vm. */
static int run(struct matrix_run_opts *o, const char *out, int json, const char *json_file,
               bool shard)
{
	if (o->jobs == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o->jobs = n > 0 ? (unsigned)n : 1;
	}
	if (o->jobs > 64)
		o->jobs = 64; /* the runner's limit of workers */
	o->self = "blackout";
	struct progress_state ps = {.tty = isatty(2) == 1};
	o->progress = progress;
	o->progress_ctx = &ps;
	char vmdir[4096 + 8], apps[4096 + 40];
	if (o->vm) {
		/* each cell is a vm_explore call, unless BLACKOUT_VM_CELL names a stand-in
		 * program that answers with a result (the compat tests' guest-free cells) */
		const char *cell = getenv("BLACKOUT_VM_CELL");
		o->vm_cmd = cell && *cell ? cell : NULL;
		snprintf(vmdir, sizeof(vmdir), "%s/vm", out);
		o->vm_out = vmdir;
		/* the built-in examples sit beside scripts/ in the source tree; this also
		 * sets BUILD for the cells' scripts */
		bool none = o->vm_apps && strcmp(o->vm_apps, "none") == 0;
		int found = vm_scripts_dir(apps, sizeof(apps) - 8);
		if (!shard && !none && found < 0)
			return cli_fail("matrix",
			                "--vm: cannot find scripts/vmtest, whose tree holds "
			                "the examples (set BLACKOUT_SRC, or --vm-apps none)");
		if (!shard && !none) {
			*strrchr(apps, '/') = '\0'; /* TREE/scripts: TREE/apps */
			strcat(apps, "/apps");
			o->apps_dir = apps;
		}
	}
	if (shard)
		return run_shard(o, out, json_file);
	struct matrix m;
	struct bo_err err = {{0}};
	int rc = matrix_run(o, &m, &err);
	if (rc == 0 && o->vm && (rc = matrix_apps_run(o, &m, &err)) != 0)
		matrix_free_cells(&m);
	if (rc)
		return cli_fail("matrix", "%s", bo_errstr(&err, rc));
	return show(&m, out, json, json_file);
}

/* "I/N" with 0 <= I < N <= 100000 */
static int parse_shard(const char *v, unsigned *i, unsigned *n)
{
	char *end;
	if (!v || !*v || *v == '-')
		return -EINVAL;
	unsigned long a = strtoul(v, &end, 10);
	if (end == v || *end != '/' || !end[1] || end[1] == '-')
		return -EINVAL;
	const char *q = end + 1;
	unsigned long b = strtoul(q, &end, 10);
	if (end == q || *end || b == 0 || b > 100000 || a >= b)
		return -EINVAL;
	*i = (unsigned)a;
	*n = (unsigned)b;
	return 0;
}

int cmd_matrix(int argc, char **argv)
{
	struct matrix_run_opts o = {.seed = 1};
	const char *out = "blackout-report", *json_file = NULL;
	int json = 0; /* 1: on standard output */
	bool shard = false, merging = false;
	uint64_t jobs = 0, maxs = 0, vm_states = 0;
	struct cli_parse p;
	int k;
	char l[32];
	cli_parse_start(&p, &matrix_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		const char *a = cli_opt_label(&matrix_spec, k, l, sizeof(l)), *v = p.arg;
		int bad = 0;
		switch (k) {
		case OPT_QUICK: o.full = false; break;
		case OPT_FULL: o.full = true; break;
		case OPT_JSON:
			json = !v || strcmp(v, "-") == 0 ? 1 : 2;
			json_file = json == 2 ? v : NULL;
			break;
		case OPT_MERGE: merging = true; break;
		case OPT_SHARD:
			if (parse_shard(v, &o.shard, &o.nshards) < 0)
				return cli_usage_error(
				    "matrix", "--shard: I/N with 0 <= I < N <= 100000, not '%s'",
				    v);
			shard = true;
			break;
		case OPT_VM: o.vm = true; break;
		case OPT_VM_STATES: bad = cli_num("matrix", a, v, 0, 1, 1000000, &vm_states); break;
		case OPT_ROWS:
		case OPT_COLUMNS:
		case OPT_WORKLOADS:
		case OPT_VM_WORKLOADS:
		case OPT_VM_APPS:
			if (!*v)
				return cli_usage_error("matrix", "%s needs a comma-separated list",
				                       a);
			*(k == OPT_ROWS        ? &o.rows
			  : k == OPT_COLUMNS   ? &o.cols
			  : k == OPT_WORKLOADS ? &o.workloads
			  : k == OPT_VM_APPS   ? &o.vm_apps
			                       : &o.vm_workloads) = v;
			break;
		case OPT_OUT: out = v; break;
		case OPT_JOBS: bad = cli_num("matrix", a, v, 0, 1, 64, &jobs); break;
		/* JSON integers are signed 64-bit */
		case OPT_SEED: bad = cli_num("matrix", a, v, 0, 0, INT64_MAX, &o.seed); break;
		case OPT_MAX_STATES:
			bad = cli_num("matrix", a, v, 0, 1, UINT64_C(1) << 53, &maxs);
			break;
		}
		if (bad)
			return bad;
	}
	if (k < 0)
		return p.status;
	if (merging && p.nargs == 0)
		return cli_usage_error("matrix", "--merge needs the parts' files");
	if (!merging && p.nargs)
		return cli_usage_error(
		    "matrix", "unexpected operand '%s' (operands go with --merge)", p.args[0]);
	if (merging)
		return merge(p.args, (size_t)p.nargs, out, json, json_file);
	if (shard && json == 1)
		return cli_usage_error("matrix", "--shard writes a part: --json needs a FILE");
	if ((o.vm_workloads || o.vm_apps) && !o.vm)
		return cli_usage_error("matrix", "%s needs --vm",
		                       o.vm_apps ? "--vm-apps" : "--vm-workloads");
	struct bo_err aerr = {{0}};
	if (matrix_apps_check(o.vm_apps, &aerr))
		return cli_usage_error("matrix", "%s", bo_errstr(&aerr, -EINVAL));
	if (vm_states && !o.vm)
		return cli_usage_error("matrix", "--vm-states needs --vm");
	o.jobs = (unsigned)jobs;
	o.max_states = maxs ? maxs : o.full ? 3000 : 300;
	/* a real-kernel state costs about a second of a guest: quick cells get a sample */
	o.vm_states = (unsigned)(vm_states ? vm_states : o.full ? 300 : 20);
	/* unknown rows, columns or workloads: refused before any work */
	if (matrix_plan_check(&o, &aerr))
		return cli_usage_error("matrix", "%s", bo_errstr(&aerr, -EINVAL));
	return run(&o, out, json, json_file, shard);
}
