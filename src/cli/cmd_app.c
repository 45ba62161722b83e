// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_app.c — `blackout app`: crash-test an unmodified program on a modelled stack
 * under the real kernel (docs/apps.md). The program, its checker and their libraries
 * ride in a per-run cpio after the cached initramfs; one boot records the program's I/O
 * with its acknowledgements as marks (scripts/vmrecord); the explorer enumerates the
 * recording's crash states; guests judge each with the filesystem's checks and the
 * application's checker (vm_pool_observe, the one judge). Parsing and printing only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/app.h"
#include "blackout/crash.h"
#include "blackout/vmexplore.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

#define CMD      "app"
#define MAX_WITH 16

enum {
	OPT_CHECKER = CLI_LONG,
	OPT_WITH,
	OPT_STACK,
	OPT_FS,
	OPT_MAX_STATES,
	OPT_SEED,
	OPT_JOBS,
	OPT_TIMEOUT,
	OPT_CHECK_TIMEOUT,
	OPT_STATE_TIMEOUT,
	OPT_LOG,
	OPT_STATE,
	OPT_KEEP,
	OPT_OUT,
	OPT_JSON,
	OPT_KERNEL,
};

static const struct cli_opt app_opts[] = {
    {OPT_CHECKER, "checker", "PROG", "the application's checker (required)", 0, 0},
    {OPT_WITH, "with", "EXE|DIR",
     "another executable the program or checker runs, carried with its libraries to "
     "/app/bin (on PATH), or a directory (absolute) whose files, not subdirectories, are "
     "carried at their host paths; repeatable (at most 16)",
     0, 0},
    {OPT_STACK, "stack", "SPEC",
     "device stack (default 'cache(size=1M,flush=honor) > mem(size=64M)')", 0, 0},
    {OPT_FS, "fs", "FS[,OPTS]", "ext4, ext3, xfs or btrfs, then mount options (default ext4)", 0,
     0},
    {OPT_MAX_STATES, "max-states", "N", "the explorer's budget of states (default 300)", 0, 0},
    {OPT_SEED, "seed", "N", "the explorer's sampling seed (default 0)", 0, 0},
    {OPT_JOBS, "jobs", "N", "judging guests (default 2)", 0, 0},
    {OPT_TIMEOUT, "timeout", "S", "the program's bound in the recording boot (default 120)", 0, 0},
    {OPT_CHECK_TIMEOUT, "check-timeout", "S", "the checker's bound on one state (default 20)", 0,
     0},
    {OPT_STATE_TIMEOUT, "state-timeout", "S", "one state's bound in a judging guest (default 60)",
     0, 0},
    {OPT_LOG, "log", "FILE", "judge this recording again instead of recording", 0, 0},
    {OPT_STATE, "state", "ID", "with --log and --keep: only that state", 0, 0},
    {OPT_KEEP, "keep", "DIR", "with --log and --state: keep the state as DIR/ID.img", 0, 0},
    {OPT_OUT, "out", "DIR", "logs, states and results (default BUILD/app/TIME-PID)", 0, 0},
    {OPT_JSON, "json", "FILE", "the explorer's JSON result also here ('-': stdout)", 0, 0},
    {OPT_KERNEL, "kernel", "SERIES",
     "the guest kernel series: 6.1 (default) or 6.12 (docs/kernels.md); its release is "
     "recorded in the result",
     0, 0},
    {0}};

static const struct cli_spec app_spec = {
    "app",
    "crash-test an unmodified program on a modelled stack under the real kernel",
    "--checker CHECKER [OPTIONS] PROGRAM [ARGS...]",
    "Runs PROGRAM (a host path; ELF or /bin/sh script) with ARGS in a real-kernel guest on "
    "a modelled stack, records its I/O once, enumerates the crash states of that recording "
    "and judges each in guests: the filesystem's invariants (mount, fsck, bystanders) and "
    "CHECKER's verdict. The program runs in /mnt/app and calls `bo_ack TEXT` after each "
    "promise it makes; on each state CHECKER runs as `CHECKER DIR ACKFILE` (ACKFILE: the "
    "acknowledgements made before the cut, one a line) and exits 0 (ok), 1 (acknowledged "
    "work lost) or 2 (corruption detected); anything else, a signal or its timeout is "
    "reported as the checker failing. Options come before PROGRAM; everything after "
    "PROGRAM is its arguments.\n"
    "\n"
    "Before any guest boots, a PROGRAM, CHECKER or --with that is not an executable regular "
    "file, or whose libraries ldd cannot find, is refused (docs/apps.md).\n",
    app_opts,
    0,
    -1,
    "0 every state ok, 3 some state failed, 1 an error, 2 bad usage.",
    "$ blackout app --checker ./check.sh ./writer.sh 1000\n"
    "  record writer.sh once, judge its crash states with check.sh\n",
    NULL,
    0,
    true,
};

struct ax {
	struct vm_explore_opts o;
	struct app_spec spec;
	const char *with[MAX_WITH];
	const char *json;
	double t0, last;
};

static int num_opt(const char *a, const char *v, uint64_t min, uint64_t max, unsigned *out)
{
	uint64_t n;
	int rc = cli_num(CMD, a, v, 0, min, max, &n);
	if (rc == 0)
		*out = (unsigned)n;
	return rc;
}

static int parse(struct ax *x, int argc, char **argv)
{
	struct bo_err err = {{0}};
	struct crash_config *cfg = &x->o.cfg;
	struct cli_parse p;
	char l[32];
	int k;
	cli_parse_start(&p, &app_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		const char *a = cli_opt_label(&app_spec, k, l, sizeof(l));
		int rc = 0;
		switch (k) {
		case OPT_STACK:
		case OPT_FS:
		case OPT_MAX_STATES:
		case OPT_SEED:
		case OPT_STATE:
			if (crash_config_option(cfg, a, p.arg, &err) < 0)
				return cli_usage_error(CMD, "%s", err.msg);
			break;
		case OPT_CHECKER: x->spec.checker = p.arg; break;
		case OPT_WITH:
			if (x->spec.nwith >= MAX_WITH)
				return cli_usage_error(CMD, "--with: at most %d", MAX_WITH);
			x->with[x->spec.nwith++] = p.arg;
			break;
		case OPT_JOBS: rc = num_opt(a, p.arg, 1, 64, &x->o.jobs); break;
		case OPT_TIMEOUT: rc = num_opt(a, p.arg, 1, 3000, &x->spec.prog_timeout); break;
		case OPT_CHECK_TIMEOUT:
			rc = num_opt(a, p.arg, 1, 600, &x->spec.check_timeout);
			break;
		case OPT_STATE_TIMEOUT: rc = num_opt(a, p.arg, 5, 3600, &x->o.state_timeout); break;
		case OPT_LOG: x->o.log = p.arg; break;
		case OPT_OUT: x->o.out = p.arg; break;
		case OPT_JSON: x->json = p.arg; break;
		case OPT_KEEP: cfg->keep_dir = p.arg; break;
		case OPT_KERNEL: x->o.kernel = p.arg; break;
		}
		if (rc)
			return rc;
	}
	if (k < 0) /* -1 after --help: stop, with status 0 */
		return p.status ? p.status : -1;
	if (p.nargs < 1)
		return cli_usage_error(CMD, "no PROGRAM to run");
	if (!x->spec.checker)
		return cli_usage_error(CMD, "--checker is required: the program's own judge");
	x->spec.prog = p.args[0];
	x->spec.args = p.args + 1;
	x->spec.nargs = (size_t)(p.nargs - 1);
	x->spec.with = x->with;
	x->o.app = &x->spec;
	if (vm_explore_check(&x->o, &err))
		return cli_usage_error(CMD, "%s", err.msg);
	return 0;
}

static void progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct ax *x = ctx;
	double now = bo_now();
	if (!strcmp(phase, "recording")) {
		printf("app: recording %s on %s (%s) in one boot\n", x->spec.prog, x->o.cfg.fs,
		       x->o.cfg.stack);
	} else if (!strcmp(phase, "judged in guests") && done == 0) {
		x->t0 = now;
	} else if (!strcmp(phase, "judged in guests") && (done == total || now - x->last >= 5)) {
		x->last = now;
		fprintf(stderr,
		        "app: judged in guests %" PRIu64 " of %" PRIu64 " states, %.0f s so far\n",
		        done, total, now - x->t0);
	}
}

/* The application's line: what its checker said, counted from the judge's outcomes. */
static void print_app(const struct vm_explore_info *info, const struct crash_result *r, FILE *f)
{
	uint64_t lost = 0, corrupt = 0, crashed = 0, hung = 0;
	for (size_t i = 0; i < r->nfail; i++) {
		const struct crash_state *s = &r->fail[i];
		lost += strstr(s->detail, "app: lost acknowledged work") != NULL;
		corrupt += strstr(s->detail, "app: corruption detected") != NULL;
		crashed += strstr(s->detail, "app: the checker crashed") != NULL ||
		           strstr(s->detail, "app: the checker failed") != NULL;
		hung += strstr(s->detail, "app: the checker hung") != NULL;
	}
	fprintf(f,
	        "\napp:      %zu acknowledgements recorded; over %llu distinct states: %llu lost "
	        "acknowledged work, %llu corruption detected by the checker, %llu checker "
	        "crashed or failed, %llu checker hung\n",
	        info->acks, (unsigned long long)r->judged, (unsigned long long)lost,
	        (unsigned long long)corrupt, (unsigned long long)crashed, (unsigned long long)hung);
	const struct vm_pool_stats *s = &info->pool;
	fprintf(f,
	        "guests:   %u boots, %zu states observed, %u hung%s; %.1f s judging, %.2f "
	        "distinct states/s in all\n"
	        "          summed over guests: boot %.1f, attach %.1f, mount %.1f, tree and "
	        "checker %.1f, umount %.1f, fsck %.1f, other %.1f s\n",
	        s->boots, s->observed, s->hung, vm_retried_note(s), r->t_observe,
	        r->t_observe > 0 ? (double)r->judged / r->t_observe : 0.0, s->boot, s->connect,
	        s->mount, s->read, s->umount, s->check, s->other);
}

int cmd_app(int argc, char **argv)
{
	struct ax x = {.o = {.cfg = {.stack = "cache(size=1M,flush=honor) > mem(size=64M)",
	                             .fs = "ext4",
	                             .max_states = 300},
	                     .jobs = 2},
	               .spec = {.prog_timeout = 120, .check_timeout = 20}};
	int rc = parse(&x, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	x.o.progress = progress;
	x.o.progress_ctx = &x;
	x.last = -1e9;
	struct bo_err err = {{0}};
	struct crash_result *r = NULL;
	struct vm_explore_info info;
	if ((rc = vm_explore(&x.o, &r, &info, &err)))
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	return cli_vm_report(CMD, r, &info, x.json, print_app);
}
