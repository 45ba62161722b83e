// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_shrink.c — `blackout shrink`: a failing workload made minimal on both axes (its
 * steps, its crash state) and a dm-flakey reproducer (docs/shrink.md). Parsing and
 * printing only; the shrinking is src/gen/shrink.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/dev.h"
#include "blackout/shrink.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

enum {
	OPT_STACK = CLI_LONG,
	OPT_FS,
	OPT_WORKLOAD,
	OPT_MAX_STATES,
	OPT_SEED,
	OPT_INVARIANT,
	OPT_OUT,
	OPT_MAX_CANDIDATES,
	OPT_QUIET,
};
static const struct cli_opt shrink_opts[] = {
    {OPT_STACK, "stack", "SPEC", "the device stack (docs/stack-spec.md), as explore's", 0, 0},
    {OPT_FS, "fs", "FS", "filesystem and options, as explore's", 0, 0},
    {OPT_WORKLOAD, "workload", "NAME|FILE", "the failing workload: a built-in or a file", 0, 0},
    {OPT_MAX_STATES, "max-states", "N", "budget of states per run (default 100000)", 0, 0},
    {OPT_SEED, "seed", "S", "seed of the sampling (default 0)", 0, 0},
    {OPT_INVARIANT, "invariant", "NAME",
     "the signature to keep: durable, stale, bystander, consistent\n"
     "or atomic (default: the first one the workload breaks)",
     0, 0},
    {OPT_OUT, "out", "DIR",
     "write DIR/NAME-min.wl, DIR/NAME-min.cmd (the state's rebuild\n"
     "line) and DIR/NAME-repro.sh (the dm-flakey script); default .",
     0, 0},
    {OPT_MAX_CANDIDATES, "max-candidates", "N",
     "failing states of the minimal workload measured for the\n"
     "fewest lost sectors (default 256)",
     0, 0},
    {OPT_QUIET, "quiet", NULL, "no progress", 0, 0},
    {0}};

static const struct cli_spec shrink_spec = {
    "shrink",
    "shrink a failing workload: fewest steps, fewest lost sectors, a dm-flakey reproducer",
    "--stack SPEC --fs FS --workload NAME|FILE [--invariant NAME] [--out DIR] [--max-states N] "
    "[--seed S] [--max-candidates N] [--quiet]",
    "Delta-debugs (ddmin) the workload's run steps, keeping its setup, to a minimal\n"
    "sequence that still breaks the same invariant on blackout's model; candidates that\n"
    "cannot run as written (the generator's model, then a dry run) are set aside, not\n"
    "counted as passing or failing. Among the minimal workload's failing states it picks\n"
    "the one whose device differs from what the stack acknowledged in the fewest\n"
    "sectors (lost updates plus torn or damaged sectors) and prints its id and the\n"
    "explore line that rebuilds it.\n"
    "\n"
    "Then it finds the latest run step before which a device that acknowledges and\n"
    "drops every write (dm-flakey's drop_writes) still breaks the invariant, and writes\n"
    "a POSIX shell reproducer on dm-flakey that needs no blackout: DEV=/dev/X sh\n"
    "NAME-repro.sh; NO_DROP=1 runs the same steps without dropping (the control).\n",
    shrink_opts,
    0,
    0,
    "0 when the minimal workload (and the reproducer, where dm-flakey can express the "
    "failure) was written, 1 an error (the workload does not fail on the stack, a run "
    "that failed), 2 usage error.",
    "$ blackout shrink --stack 'cache(flush=ignore) > disk > mem(size=16M)' \\\n"
    "      --fs ext3 --workload lost.wl --out out\n"
    "  writes out/NAME-min.wl, out/NAME-min.cmd and out/NAME-repro.sh\n",
    NULL};

static void progress(void *ctx, const char *what)
{
	(void)ctx;
	fprintf(stderr, "shrink: %s\n", what);
}

static int inv_of(const char *name, unsigned *inv)
{
	for (int i = 0; i < CRASH_INV_N; i++)
		if (strcmp(crash_inv_name(i), name) == 0) {
			*inv = 1u << i;
			return 0;
		}
	return -EINVAL;
}

static int write_file(const char *path, int (*fn)(void *ctx, FILE *f), void *ctx)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	int rc = fn(ctx, f);
	if (fclose(f) && rc == 0)
		rc = -EIO;
	return rc;
}

static int put_wl(void *ctx, FILE *f)
{
	return crash_workload_format(ctx, f);
}

struct script {
	const struct crash_workload *wl;
	const char *fs, *header;
	size_t step;
	struct bo_err *err;
};

static int put_script(void *ctx, FILE *f)
{
	const struct script *s = ctx;
	return shrink_flakey_script(s->wl, s->fs, s->step, s->header, f, s->err);
}

static int put_line(void *ctx, FILE *f)
{
	fprintf(f, "%s --keep DIR\n", (const char *)ctx);
	return 0;
}

int cmd_shrink(int argc, char **argv)
{
	struct shrink_cfg cfg = {.max_states = CRASH_MAX_STATES_DEFAULT, .silent = -1};
	const char *wlname = NULL, *out = ".";
	uint64_t maxc = 256;
	bool quiet = false;
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &shrink_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		int rc = 0;
		switch (k) {
		case OPT_STACK: cfg.stack = p.arg; break;
		case OPT_FS: cfg.fs = p.arg; break;
		case OPT_WORKLOAD: wlname = p.arg; break;
		case OPT_MAX_STATES:
			rc = cli_num("shrink", "--max-states", p.arg, 0, 1, UINT64_MAX,
			             &cfg.max_states);
			break;
		case OPT_SEED:
			rc = cli_num("shrink", "--seed", p.arg, 0, 0, UINT64_MAX, &cfg.seed);
			break;
		case OPT_INVARIANT:
			if (inv_of(p.arg, &cfg.inv))
				return cli_usage_error(
				    "shrink",
				    "--invariant: '%s' is not one of durable, stale, "
				    "bystander, consistent, atomic",
				    p.arg);
			break;
		case OPT_OUT: out = p.arg; break;
		case OPT_MAX_CANDIDATES:
			rc = cli_num("shrink", "--max-candidates", p.arg, 0, 1, 1000000, &maxc);
			break;
		case OPT_QUIET: quiet = true; break;
		}
		if (rc)
			return rc;
	}
	if (k < 0)
		return p.status;
	if (!cfg.stack || !cfg.fs || !wlname)
		return cli_usage_error("shrink", "--stack, --fs and --workload are required");
	struct bo_err err = {{0}};
	struct dev_spec *ds;
	int rc = dev_spec_parse(cfg.stack, &ds, &err);
	if (rc == 0) {
		dev_spec_free(ds);
		rc = crash_fs_check(cfg.fs, &err);
	}
	if (rc)
		return cli_usage_error("shrink", "%s", bo_errstr(&err, rc));
	struct crash_workload *w;
	if ((rc = crash_workload_load(wlname, &w, &err)))
		return cli_fail("shrink", "%s", bo_errstr(&err, rc));
	if (mkdir(out, 0755) && errno != EEXIST) {
		crash_workload_free(w);
		return cli_fail("shrink", "cannot create %s: %s", out, strerror(errno));
	}
	char minp[4096], cmdp[4096], shp[4096];
	snprintf(minp, sizeof(minp), "%s/%s-min.wl", out, w->name);
	snprintf(cmdp, sizeof(cmdp), "%s/%s-min.cmd", out, w->name);
	snprintf(shp, sizeof(shp), "%s/%s-repro.sh", out, w->name);
	cfg.wl = w;
	cfg.min_file = minp;
	cfg.max_candidates = maxc;
	cfg.progress = quiet ? NULL : progress;
	struct shrink_result res;
	rc = shrink_workload(&cfg, &res, &err);
	if (rc) {
		crash_workload_free(w);
		shrink_result_free(&res);
		return cli_fail("shrink", "%s", bo_errstr(&err, rc));
	}
	int status = 0;
	if ((rc = write_file(minp, put_wl, res.wl)) ||
	    (rc = write_file(cmdp, put_line, res.rebuild)))
		status = cli_fail("shrink", "writing into %s: %s", out, strerror(-rc));
	char header[8192] = "";
	if (status == 0 && res.flakey_step >= 0) {
		snprintf(
		    header, sizeof(header),
		    "# Reproducer written by `blackout shrink` for workload %s (%s): the run's\n"
		    "# writes are dropped from the start of run step %ld of %zu on, by "
		    "dm-flakey's\n"
		    "# drop_writes: a device that acknowledges every write from that point on and\n"
		    "# keeps none of them, until the unmount. That is the one crash dm-flakey\n"
		    "# expresses; blackout's model breaks `%s` in it (%s).\n"
		    "# The minimal crash state blackout found (a subset of cached writes, or torn\n"
		    "# sectors) is finer than that: rebuild it with\n#   %s --keep DIR\n"
		    "# Usage: DEV=/dev/SCRATCH [MNT=/mnt/x] sh %s-repro.sh   (NO_DROP=1: the\n"
		    "# control, the same steps without the drop). Exit 0 PASS, 1 FAIL, 2 error.\n",
		    res.wl->name, cfg.fs, res.flakey_step + 1, res.wl->nrun,
		    crash_inv_name(__builtin_ctz(res.inv)), res.flakey_detail, res.rebuild,
		    w->name);
		struct script s = {res.wl, cfg.fs, header, (size_t)res.flakey_step, &err};
		if ((rc = write_file(shp, put_script, &s)))
			status = cli_fail("shrink", "%s: %s", shp, bo_errstr(&err, rc));
		else
			chmod(shp, 0755);
	}
	if (status == 0) {
		printf("workload:  %s, %zu run steps -> %zu (ddmin: %u candidates, %u could not "
		       "run)\n",
		       w->name, res.nrun_before, res.wl->nrun, res.tests, res.unresolved);
		printf("signature: %s%s\n", crash_inv_name(__builtin_ctz(res.inv)),
		       res.silent ? ", silent" : "");
		printf("minimal:   %s\n", minp);
		printf(
		    "state:     %s after %zu steps: %llu sectors lost, %llu damaged (fewest of %zu "
		    "measured; %zu failing)\n",
		    res.state_id, res.state_completed, (unsigned long long)res.lost,
		    (unsigned long long)res.damaged, res.measured, res.failing);
		printf("rebuild:   %s --keep DIR\n", res.rebuild);
		if (res.flakey_step >= 0) {
			char at[CRASH_WL_MAX_PATH + 64] = "the end of the run";
			if (res.flakey_step < (long)res.wl->nrun) {
				const struct crash_step *st = &res.wl->run[res.flakey_step];
				snprintf(at, sizeof(at), "run step %ld, %s%s%s",
				         res.flakey_step + 1, crash_op_name(st->op),
				         st->path ? " " : "", st->path ? st->path : "");
			}
			printf("flakey:    every write dropped from %s on still breaks it\n"
			       "script:    %s\n",
			       at, shp);
		} else
			printf("flakey:    no step boundary with every later write dropped breaks "
			       "it: no "
			       "dm-flakey script (the failure needs a finer crash state)\n");
	}
	crash_workload_free(w);
	shrink_result_free(&res);
	return status;
}
