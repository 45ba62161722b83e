// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_explore.c — `blackout explore`: argument parsing, the progress line and the
 * summary around crash_explore(); `--merge` combines shard results. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/dev.h"
#include "blackout/util.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

/* The options that shape the states are the rebuild line's (crash_config_option);
 * their keys are CLI_LONG and up, read by name. */
enum { G_RUN = 1 }; /* what --merge cannot take */
enum {
	OPT_STACK = CLI_LONG,
	OPT_FS,
	OPT_WORKLOAD,
	OPT_LOG,
	OPT_MAX_STATES,
	OPT_SEED,
	OPT_SHARD,
	OPT_ARM,
	OPT_STATE,
	OPT_E2FSCK,
	OPT_CONFIG_END, /* the crash_config options end here */
	OPT_SAVE_LOG,
	OPT_JSON,
	OPT_KEEP,
	OPT_DAMAGE,
	OPT_QUIET,
	OPT_MERGE,
};
static const struct cli_opt explore_opts[] = {
    {OPT_STACK, "stack", "SPEC", "device stack, e.g. 'cache(flush=honor) > disk > mem(size=64M)'",
     G_RUN},
    {OPT_FS, "fs", "FS",
     "ext2 or ext3, then comma-separated: metadata_csum, bs=1024, verify=fast, mount "
     "options; e.g. 'ext3,data=ordered,barrier=1'; verify=fast runs fsck --fast at mount "
     "(what the user is told of: docs/explore.md)",
     G_RUN},
    {OPT_WORKLOAD, "workload", "W", "a built-in (blackout workloads) or a workload file", G_RUN},
    {OPT_LOG, "log", "FILE",
     "enumerate this recording (docs/realkernel.md) instead of\nrecording the workload: its "
     "set-up is replayed on the stack",
     G_RUN},
    {OPT_SAVE_LOG, "save-log", "FILE", "save the recording, set-up included, for --log", G_RUN},
    {OPT_MAX_STATES, "max-states", "N", "budget; above it states are sampled (default 100000)",
     G_RUN},
    {OPT_SEED, "seed", "S", "seed of the sampling (default 0)", G_RUN},
    {OPT_SHARD, "shard", "I/N", "judge only shard I of N (0 <= I < N); merge with --merge", G_RUN},
    {OPT_JSON, "json", "FILE", "write every failing state and the counts as JSON ('-': stdout)", 0},
    {OPT_KEEP, "keep", "DIR", "write each failing state as DIR/ID.img + DIR/ID.cmd (rebuild)",
     G_RUN},
    {OPT_ARM, "arm", "RULE",
     "arm a fault rule (docs/models/fault.md) on the stack's first\nfault layer once the set-up "
     "is on the media",
     G_RUN},
    {OPT_STATE, "state", "ID", "judge only state ID (as printed, e.g. p12w-3)", G_RUN},
    {OPT_DAMAGE, "damage", NULL,
     "with --state: list the sectors that are not what the stack\nlast held (lost: older "
     "content; damaged: neither)",
     G_RUN},
    {OPT_E2FSCK, "e2fsck", NULL,
     "also run e2fsck -fn on failing states and a sample of ok\nones (without an own fsck it is "
     "the consistency judge of\nevery state)",
     G_RUN},
    {OPT_QUIET, "quiet", NULL, "no progress and no summary", 0},
    {OPT_MERGE, "merge", NULL, "fold the result files given as operands (shards) into one", 0,
     G_RUN},
    {0}};

static const struct cli_spec explore_spec = {
    "explore",
    "cut power at every point of a workload and judge what survived",
    "--stack SPEC --fs FS --workload NAME|FILE [OPTIONS]\n"
    "--log FILE --stack SPEC --fs FS --workload W [OPTIONS]\n"
    "--merge [--json FILE] [--quiet] A.json B.json ...",
    "Makes the filesystem on the stack, runs the workload's setup, records the\n"
    "workload's I/O once, then cuts power after every recorded operation and during\n"
    "every write, builds every outcome the stack's models allow at each cut (cache\n"
    "subsets, torn sectors, ...), and judges each distinct state: mount (journal\n"
    "recovery), the oracle (durable, stale, bystander, consistent, atomic), fsck.\n"
    "Details: docs/explore.md; workloads: docs/workloads.md; shards: docs/scale.md.\n",
    explore_opts,
    0,
    -1,
    "0 when no state broke an invariant, 3 when some did, 1 an error (a workload or\n"
    "result file that cannot be read, a run that failed), 2 usage error.",
    "$ blackout explore --stack 'cache(flush=ignore) > disk > mem(size=16M)' \\\n"
    "      --fs ext3,data=ordered,barrier=1 --workload append-fsync\n"
    "$ blackout explore --stack 'disk > mem(size=16M)' --fs ext3 \\\n"
    "      --workload append-fsync --shard 0/2 --json a.json --quiet\n"
    "$ blackout explore --merge a.json b.json\n",
    NULL};

/* what the explore command adds to the crash_config: where results go */
struct opts {
	const char *json, *keep, *save_log;
	bool quiet, damage;
};

static void progress_tty(void *ctx, const struct crash_progress *p)
{
	(void)ctx;
	double rate = p->seconds > 0 ? (double)p->done / p->seconds : 0;
	double eta = rate > 0 && p->total > p->done ? (double)(p->total - p->done) / rate : 0;
	int width = 30;
	int fill = p->total ? (int)((double)width * (double)p->done / (double)p->total) : 0;
	if (fill > width)
		fill = width;
	fprintf(stderr,
	        "\r[%.*s%*s] %" PRIu64 "/%" PRIu64 " states  %.0f/s  ETA %.0fs  %" PRIu64
	        " violations ",
	        fill, "##############################", width - fill, "", p->done, p->total, rate,
	        eta, p->violations);
}

static void progress_plain(void *ctx, const struct crash_progress *p)
{
	double *last = ctx;
	if (p->seconds - *last < 5 && p->done < p->total)
		return;
	*last = p->seconds;
	double left = p->done && p->total > p->done
	                  ? p->seconds / (double)p->done * (double)(p->total - p->done)
	                  : 0;
	fprintf(stderr,
	        "explore: %" PRIu64 " of %" PRIu64 " crash states judged, %" PRIu64
	        " violations, %.0f s so far, about %.0f s left\n",
	        p->done, p->total, p->violations, p->seconds, left);
}

static int merge(int n, char **files, const char *json, bool quiet)
{
	struct crash_result **parts = calloc((size_t)n, sizeof(*parts));
	int rc = parts ? 0 : -ENOMEM, status = 0;
	struct bo_err err = {{0}};
	for (int i = 0; rc == 0 && i < n; i++) {
		rc = crash_result_load(files[i], &parts[i], &err);
		if (rc)
			status = cli_fail("explore", "%s", bo_errstr(&err, rc));
	}
	struct crash_result *m = NULL;
	if (rc == 0) {
		rc = crash_result_merge(parts, (size_t)n, &m, &err);
		if (rc)
			status = cli_fail("explore", "--merge: %s", bo_errstr(&err, rc));
	}
	if (rc == 0) {
		if (!quiet)
			crash_result_print(m, json && strcmp(json, "-") == 0 ? stderr : stdout);
		if (json)
			status = cli_write_result("explore", m, json);
		if (status == 0 && m->judged != m->ok)
			status = 3;
	}
	crash_result_free(m);
	for (int i = 0; parts && i < n; i++)
		crash_result_free(parts[i]);
	free(parts);
	return status;
}

int cmd_explore(int argc, char **argv)
{
	struct opts o = {0};
	struct crash_config cfg = {.max_states = CRASH_MAX_STATES_DEFAULT};
	struct bo_err err = {{0}};
	bool merging = false;
	struct cli_parse p;
	int k;
	char l[32];
	cli_parse_start(&p, &explore_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		if (k < OPT_CONFIG_END) {
			const char *opt = cli_opt_label(&explore_spec, k, l, sizeof(l));
			if (crash_config_option(&cfg, opt, p.arg, &err) < 0)
				return cli_usage_error("explore", "%s", err.msg);
			continue;
		}
		switch (k) {
		case OPT_SAVE_LOG: o.save_log = p.arg; break;
		case OPT_JSON: o.json = p.arg; break;
		case OPT_KEEP: o.keep = p.arg; break;
		case OPT_DAMAGE: o.damage = true; break;
		case OPT_QUIET: o.quiet = true; break;
		case OPT_MERGE: merging = true; break;
		}
	}
	if (k < 0)
		return p.status;
	if (merging) {
		if (p.nargs == 0)
			return cli_usage_error("explore", "--merge needs result files");
		return merge(p.nargs, p.args, o.json, o.quiet);
	}
	if (p.nargs)
		return cli_usage_error(
		    "explore", "unexpected operand '%s' (operands go with --merge)", p.args[0]);
	if (!cfg.stack || !cfg.fs || !cfg.workload)
		return cli_usage_error("explore", "--stack, --fs and --workload are required");
	if (o.damage && !cfg.state_id)
		return cli_usage_error("explore", "--damage maps one state: give --state ID");
	/* a spec or --fs that does not parse is a malformed value: refused before any work */
	struct dev_spec *ds;
	int rc = dev_spec_parse(cfg.stack, &ds, &err);
	if (rc == 0) {
		dev_spec_free(ds);
		rc = crash_fs_check(cfg.fs, &err);
	}
	if (rc) {
		fprintf(stderr, "blackout explore: %s\nTry 'blackout explore --help'.\n",
		        bo_errstr(&err, rc));
		return CLI_EXIT_USAGE;
	}

	struct crash_workload *w;
	rc = crash_workload_load(cfg.workload, &w, &err);
	if (rc)
		return cli_fail("explore", "%s", bo_errstr(&err, rc));
	double last = -1e9;
	bool tty = isatty(2);
	cfg.wl = w;
	cfg.keep_dir = o.keep;
	cfg.save_log = o.save_log;
	cfg.map_damage = o.damage;
	cfg.progress = o.quiet ? NULL : tty ? progress_tty : progress_plain;
	cfg.progress_ctx = &last;
	struct crash_result *r;
	rc = crash_explore(&cfg, &r, &err);
	if (tty && !o.quiet)
		fputc('\n', stderr);
	crash_workload_free(w);
	if (rc)
		return cli_fail("explore", "%s", bo_errstr(&err, rc));
	int status = 0;
	if (!o.quiet) {
		crash_result_print(r, o.json && strcmp(o.json, "-") == 0 ? stderr : stdout);
		FILE *t = o.json && strcmp(o.json, "-") == 0 ? stderr : stdout;
		fprintf(t,
		        "\ntime: %.2fs (record %.2f, construct %.2f, recover %.2f, oracle %.2f, "
		        "fsck %.2f), %.0f states/s\n",
		        r->t_total, r->t_record, r->t_construct, r->t_recover, r->t_oracle,
		        r->t_fsck, r->t_total > 0 ? (double)r->built / r->t_total : 0);
	}
	if (o.json)
		status = cli_write_result("explore", r, o.json);
	if (status == 0 && r->judged != r->ok)
		status = 3;
	crash_result_free(r);
	return status;
}
