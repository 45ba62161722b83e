/* cmd_explore.c — `blackout explore`: argument parsing, the progress line and the
 * summary around crash_explore(); `--merge` combines shard results. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/util.h"
#include "cli/cli.h"

static const char explore_help[] =
    "usage: blackout explore --stack SPEC --fs FS --workload NAME|FILE [options]\n"
    "       blackout explore --log FILE --stack SPEC --fs FS --workload W [options]\n"
    "       blackout explore --merge A.json B.json ... [--json FILE]\n"
    "\n"
    "Makes the filesystem on the stack, runs the workload's setup, records the\n"
    "workload's I/O once, then cuts power after every recorded operation and during\n"
    "every write, builds every outcome the stack's models allow at each cut (cache\n"
    "subsets, torn sectors, ...), and judges each distinct state: mount (journal\n"
    "recovery), the oracle (durable, stale, bystander, consistent, atomic), fsck.\n"
    "Details: docs/explore.md; workloads: docs/workloads.md; shards: docs/scale.md.\n"
    "\n"
    "  --stack SPEC        device stack, e.g. 'cache(flush=honor) > disk > mem(size=64M)'\n"
    "  --fs FS             ext2|ext3[,metadata_csum][,bs=1024][,verify=fast][,mount options],\n"
    "                      e.g. 'ext3,data=ordered,barrier=1'; verify=fast runs fsck --fast\n"
    "                      at mount (what the user is told of: docs/explore.md)\n"
    "  --workload W        a built-in (blackout workloads) or a workload file\n"
    "  --log FILE          enumerate this recording (docs/realkernel.md) instead of\n"
    "                      recording the workload: its set-up is replayed on the stack\n"
    "  --save-log FILE     save the recording, set-up included, for --log\n"
    "  --max-states N      budget; above it states are sampled (default 100000)\n"
    "  --seed S            seed of the sampling (default 0)\n"
    "  --shard I/N         judge only shard I of N (0 <= I < N); merge with --merge\n"
    "  --json FILE         write every failing state and the counts as JSON ('-': stdout)\n"
    "  --keep DIR          write each failing state as DIR/ID.img + DIR/ID.cmd (rebuild)\n"
    "  --arm RULE          arm a fault rule (docs/models/fault.md) on the stack's first\n"
    "                      fault layer once the set-up is on the media\n"
    "  --state ID          judge only state ID (as printed, e.g. p12w-3)\n"
    "  --damage            with --state: list the sectors that are not what the stack\n"
    "                      last held (lost: older content; damaged: neither)\n"
    "  --e2fsck            also run e2fsck -fn on failing states and a sample of ok ones\n"
    "                      (without an own fsck it is the consistency judge of every state)\n"
    "  --quiet             no progress and no summary\n"
    "\n"
    "Exit status: 0 when no state broke an invariant, 3 when some did, 1 on error.\n";

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
	int merge_at = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (cli_is_help(a)) {
			fputs(explore_help, stdout);
			return 0;
		}
		if (strcmp(a, "--merge") == 0) {
			merge_at = i + 1;
			/* the files run up to the next option */
			while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
				i++;
			if (i + 1 == merge_at)
				return cli_usage_error("explore", "--merge needs result files");
			continue;
		}
		/* the options that shape the states are the rebuild line's (crash.h) */
		int used = crash_config_option(&cfg, a, i + 1 < argc ? argv[i + 1] : NULL, &err);
		if (used < 0)
			return cli_usage_error("explore", "%s", err.msg);
		if (used > 0) {
			i += used - 1;
			continue;
		}
		if (strcmp(a, "--quiet") == 0) {
			o.quiet = true;
			continue;
		}
		if (strcmp(a, "--damage") == 0) {
			o.damage = true;
			continue;
		}
		if (strcmp(a, "--json") != 0 && strcmp(a, "--keep") != 0 &&
		    strcmp(a, "--save-log") != 0)
			return cli_usage_error("explore", "unknown option '%s'", a);
		if (i + 1 >= argc)
			return cli_usage_error("explore", "%s needs a value", a);
		*(a[2] == 'j' ? &o.json : a[2] == 'k' ? &o.keep : &o.save_log) = argv[++i];
	}
	if (merge_at) {
		int n = 0;
		while (merge_at + n < argc && strncmp(argv[merge_at + n], "--", 2) != 0)
			n++;
		return merge(n, argv + merge_at, o.json, o.quiet);
	}
	if (!cfg.stack || !cfg.fs || !cfg.workload)
		return cli_usage_error("explore", "--stack, --fs and --workload are required");
	if (o.damage && !cfg.state_id)
		return cli_usage_error("explore", "--damage maps one state: give --state ID");

	struct crash_workload *w;
	int rc = crash_workload_load(cfg.workload, &w, &err);
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
