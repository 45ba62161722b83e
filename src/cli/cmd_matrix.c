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

static const char matrix_help[] =
    "usage: blackout matrix [--quick|--full] [--out DIR] [--json [FILE]] [--jobs N] [--seed S]\n"
    "                       [--max-states N] [--rows IDS] [--columns IDS] [--workloads NAMES]\n"
    "                       [--vm [--vm-states N] [--vm-workloads NAMES] [--vm-apps IDS]]\n"
    "                       [--shard I/N]\n"
    "       blackout matrix --merge PART... [--out DIR] [--json [FILE]]\n"
    "\n"
    "Runs the crash explorer over every device stack (rows) and filesystem configuration\n"
    "(columns) on the built-in workloads and prints the measured expectations table:\n"
    "which configurations lose synced data, damage files nobody was writing, or do so\n"
    "silently; then one verdict per expectation of the seeds, computed from the cells.\n"
    "\n"
    "  --quick          six workloads (the write-errors rows: checkpoint-append), a\n"
    "                   small state budget: under 1 minute (default); rows that\n"
    "                   answer one verdict run only the columns it compares\n"
    "  --full           every built-in workload and every row, a larger budget\n"
    "  --out DIR        write matrix.json, matrix.md and report.html there\n"
    "                   (default ./blackout-report)\n"
    "  --json [FILE]    matrix.json also to FILE; without FILE (or '-') on standard\n"
    "                   output instead of the table\n"
    "  --jobs N         worker processes, 1 to 64 (default: the online cores, at most 64)\n"
    "  --seed S         seed for sampled explorations (default 1)\n"
    "  --max-states N   crash states per exploration (default 300 quick, 3000 full)\n"
    "  --rows IDS       only these rows (comma-separated ids, any mode's), e.g.\n"
    "                   nocache,cache,cache-lying,torn,torn-unreadable,garbage,\n"
    "                   flash-cheap-128k,integrity-cheap-128k,flash-careful,raid5,\n"
    "                   raid5-degraded,raid5-degraded-journal,raid5-cache,\n"
    "                   raid5-cache-lying,raid5-nobarrier,write-errors,\n"
    "                   write-errors-2009,bad-sectors-2009,lost-writes\n"
    "                   (full also: flash-cheap-4m, raid6-2missing and the -verify rows)\n"
    "  --columns IDS    only these columns: ext2, ext3-ordered-b0, ext3-ordered-b1,\n"
    "                   ext3-journal-b1, ext3-writeback-b1, ext3-csum; with --vm also\n"
    "                   linux-ext4-b1, linux-ext4-b0, linux-xfs, linux-btrfs,\n"
    "                   linux-md-ext4, linux-dmint-ext4\n"
    "  --workloads NAMES  only these built-in workloads (blackout workloads)\n"
    "  --vm             add real-kernel columns: Linux ext4 (barrier=1, barrier=0), xfs\n"
    "                   and btrfs in qemu on each row's stack (media grown to hold a\n"
    "                   64 MiB filesystem, 320 MiB for xfs), and on RAID rows Linux md\n"
    "                   over the row's members with ext4 (docs/md.md), on cheap flash\n"
    "                   and torn rows ext4 over dm-integrity (docs/integrity.md); one\n"
    "                   `blackout vmtest` run per cell and workload: the guest's I/O\n"
    "                   recorded once, its crash states enumerated and judged by\n"
    "                   Linux (docs/vmtest.md); logs under DIR/vm\n"
    "  --vm-states N    crash states per real-kernel run (default 20 quick, 300 full;\n"
    "                   about a second each under TCG)\n"
    "  --vm-workloads NAMES  workloads of the real-kernel cells (default append-fsync)\n"
    "                   --vm also adds the application section: the built-in examples\n"
    "                   of docs/apps.md on Linux ext4 barrier=1 over the run's rows\n"
    "                   among nocache, cache, cache-lying and flash-cheap-128k, one\n"
    "                   `blackout app` run per row and example (the two config updates\n"
    "                   share one), --vm-states states each; not in --shard runs\n"
    "  --vm-apps IDS    only these examples: sqlite-wal-full, sqlite-rollback-full,\n"
    "                   config-rename-fsync, config-rename-nofsync, append-log; or\n"
    "                   none (default: all)\n"
    "  --shard I/N      run only shard I of N (0 <= I < N) of the explorations and\n"
    "                   write them as a part: to --json FILE, else DIR/part-I-of-N.json\n"
    "  --merge PART...  fold every shard's part into the matrix: the same table, report\n"
    "                   and matrix.json (byte for byte) as the unsharded run; refuses\n"
    "                   parts of different runs, a missing or repeated shard\n"
    "\n"
    "The table fits 100 columns: columns are lettered and explained under it, with a\n"
    "key for every abbreviation (more than six columns: a second block). Colour only on\n"
    "a terminal and without NO_COLOR. Progress goes to standard error: one line redrawn\n"
    "on a terminal, otherwise a plain line every 5 s (explorations done, crash states\n"
    "judged, time left). Exit status 1 when a real-kernel run failed (its cell says why).\n"
    "The JSON schema and how to read the table: docs/matrix.md; shards: docs/scale.md.\n";

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
	bool shard = false, run_opts = false;
	char **parts = NULL;
	size_t nparts = 0;
	uint64_t jobs = 0, maxs = 0, vm_states = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool opt = true; /* an option of a run, not of --merge */
		if (cli_is_help(a)) {
			fputs(matrix_help, stdout);
			return 0;
		} else if (strcmp(a, "--quick") == 0) {
			o.full = false;
		} else if (strcmp(a, "--full") == 0) {
			o.full = true;
		} else if (strcmp(a, "--json") == 0) {
			opt = false;
			json = 1;
			if (v && (v[0] != '-' || strcmp(v, "-") == 0)) {
				json = strcmp(v, "-") == 0 ? 1 : 2;
				json_file = json == 2 ? v : NULL;
				i++;
			}
		} else if (strcmp(a, "--merge") == 0) {
			opt = false;
			parts = argv + i + 1;
			while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
				i++, nparts++;
			if (nparts == 0)
				return cli_usage_error("matrix", "--merge needs the parts' files");
		} else if (strcmp(a, "--shard") == 0) {
			if (parse_shard(v, &o.shard, &o.nshards) < 0)
				return cli_usage_error(
				    "matrix", "--shard: I/N with 0 <= I < N <= 100000, not '%s'",
				    v ? v : "");
			shard = true;
			i++;
		} else if (strcmp(a, "--vm") == 0) {
			o.vm = true;
		} else if (strcmp(a, "--vm-states") == 0) {
			if (cli_num("matrix", a, v, 0, 1, 1000000, &vm_states))
				return 2;
			i++;
		} else if (strcmp(a, "--rows") == 0 || strcmp(a, "--columns") == 0 ||
		           strcmp(a, "--workloads") == 0 || strcmp(a, "--vm-workloads") == 0 ||
		           strcmp(a, "--vm-apps") == 0) {
			if (!v || !*v)
				return cli_usage_error("matrix", "%s needs a comma-separated list",
				                       a);
			*(a[2] == 'r'                   ? &o.rows
			  : a[2] == 'c'                 ? &o.cols
			  : a[2] == 'w'                 ? &o.workloads
			  : strcmp(a, "--vm-apps") == 0 ? &o.vm_apps
			                                : &o.vm_workloads) = v;
			i++;
		} else if (strcmp(a, "--out") == 0) {
			if (!v)
				return cli_usage_error("matrix", "--out needs a directory");
			opt = false;
			out = v;
			i++;
		} else if (strcmp(a, "--jobs") == 0) {
			if (cli_num("matrix", a, v, 0, 1, 64, &jobs))
				return 2;
			i++;
		} else if (strcmp(a, "--seed") == 0) {
			/* JSON integers are signed 64-bit */
			if (cli_num("matrix", a, v, 0, 0, INT64_MAX, &o.seed))
				return 2;
			i++;
		} else if (strcmp(a, "--max-states") == 0) {
			if (cli_num("matrix", a, v, 0, 1, UINT64_C(1) << 53, &maxs))
				return 2;
			i++;
		} else {
			return cli_usage_error("matrix", "unknown argument '%s'", a);
		}
		run_opts = run_opts || opt;
	}
	if (parts && (run_opts || shard))
		return cli_usage_error("matrix", "--merge takes only --out and --json: the parts "
		                                 "carry the run's options");
	if (parts)
		return merge(parts, nparts, out, json, json_file);
	if (shard && json == 1)
		return cli_usage_error("matrix", "--shard writes a part: --json needs a FILE");
	if ((o.vm_workloads || o.vm_apps) && !o.vm)
		return cli_usage_error("matrix", "%s needs --vm",
		                       o.vm_apps ? "--vm-apps" : "--vm-workloads");
	struct bo_err aerr = {{0}};
	if (matrix_apps_check(o.vm_apps, &aerr))
		return cli_usage_error("matrix", "%s", bo_errstr(&aerr, -EINVAL));
	o.jobs = (unsigned)jobs;
	o.max_states = maxs ? maxs : o.full ? 3000 : 300;
	/* a real-kernel state costs about a second of a guest: quick cells get a sample */
	o.vm_states = (unsigned)(vm_states ? vm_states : o.full ? 300 : 20);
	return run(&o, out, json, json_file, shard);
}
