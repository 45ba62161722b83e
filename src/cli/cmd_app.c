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

#define CMD      "app"
#define MAX_WITH 8

static void help(FILE *out)
{
	fputs("usage: blackout app --checker CHECKER [OPTIONS] PROGRAM [ARGS...]\n"
	      "\n"
	      "Runs PROGRAM (a host path; ELF or /bin/sh script) with ARGS in a real-kernel guest\n"
	      "on a modelled stack, records its I/O once, enumerates the crash states of that\n"
	      "recording and judges each in guests: the filesystem's invariants (mount, fsck,\n"
	      "bystanders) and CHECKER's verdict. The program runs in /mnt/app and calls\n"
	      "`bo_ack TEXT` after each promise it makes; on each state CHECKER runs as\n"
	      "`CHECKER DIR ACKFILE` (ACKFILE: the acknowledgements made before the cut, one a\n"
	      "line) and exits 0 (ok), 1 (acknowledged work lost) or 2 (corruption detected);\n"
	      "anything else, a signal or its timeout is reported as the checker failing.\n"
	      "Options come before PROGRAM; everything after PROGRAM is its arguments.\n"
	      "\n"
	      "  --checker PROG      the application's checker (required)\n"
	      "  --with EXE          another executable the program or checker runs, carried\n"
	      "                      with its libraries to /app/bin (on PATH); repeatable\n"
	      "  --stack SPEC        device stack (default 'cache(size=1M,flush=honor) >\n"
	      "                      mem(size=64M)')\n"
	      "  --fs FS[,OPTS]      ext4, ext3, xfs or btrfs, then mount options (default ext4)\n"
	      "  --max-states N      the explorer's budget of states (default 300)\n"
	      "  --seed N            the explorer's sampling seed (default 0)\n"
	      "  --jobs N            judging guests (default 2)\n"
	      "  --timeout S         the program's bound in the recording boot (default 120)\n"
	      "  --check-timeout S   the checker's bound on one state (default 20)\n"
	      "  --state-timeout S   one state's bound in a judging guest (default 60)\n"
	      "  --log FILE          judge this recording again instead of recording\n"
	      "  --state ID --keep DIR  with --log: only that state, kept as DIR/ID.img\n"
	      "  --out DIR           logs, states and results (default BUILD/app/TIME-PID)\n"
	      "  --json FILE         the explorer's JSON result also here ('-': stdout)\n"
	      "\n"
	      "Exit status: 0 every state ok, 3 some state failed, 1 an error, 2 bad usage.\n"
	      "Before any guest boots, a PROGRAM, CHECKER or --with that is not an executable\n"
	      "regular file, or whose libraries ldd cannot find, is refused (docs/apps.md).\n",
	      out);
}

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
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "--stack") || !strcmp(a, "--fs") || !strcmp(a, "--max-states") ||
		    !strcmp(a, "--seed") || !strcmp(a, "--state")) {
			int used = crash_config_option(cfg, a, val, &err);
			if (used < 0)
				return cli_usage_error(CMD, "%s", err.msg);
			i += used - 1;
			continue;
		}
		if (!val)
			return cli_usage_error(CMD, "%s needs a value", a);
		int rc = 0;
		if (!strcmp(a, "--checker"))
			x->spec.checker = val;
		else if (!strcmp(a, "--with") && x->spec.nwith < MAX_WITH)
			x->with[x->spec.nwith++] = val;
		else if (!strcmp(a, "--with"))
			return cli_usage_error(CMD, "--with: at most %d", MAX_WITH);
		else if (!strcmp(a, "--jobs"))
			rc = num_opt(a, val, 1, 64, &x->o.jobs);
		else if (!strcmp(a, "--timeout"))
			rc = num_opt(a, val, 1, 3000, &x->spec.prog_timeout);
		else if (!strcmp(a, "--check-timeout"))
			rc = num_opt(a, val, 1, 600, &x->spec.check_timeout);
		else if (!strcmp(a, "--state-timeout"))
			rc = num_opt(a, val, 5, 3600, &x->o.state_timeout);
		else if (!strcmp(a, "--log"))
			x->o.log = val;
		else if (!strcmp(a, "--out"))
			x->o.out = val;
		else if (!strcmp(a, "--json"))
			x->json = val;
		else if (!strcmp(a, "--keep"))
			cfg->keep_dir = val;
		else
			return cli_usage_error(CMD, "unknown argument '%s'", a);
		if (rc)
			return rc;
		i++;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc)
		return cli_usage_error(CMD, "no PROGRAM to run");
	if (!x->spec.checker)
		return cli_usage_error(CMD, "--checker is required: the program's own judge");
	x->spec.prog = argv[i];
	x->spec.args = argv + i + 1;
	x->spec.nargs = (size_t)(argc - i - 1);
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
	        "guests:   %u boots, %zu states observed, %u hung; %.1f s judging, %.2f distinct "
	        "states/s in all\n"
	        "          summed over guests: boot %.1f, attach %.1f, mount %.1f, tree and "
	        "checker %.1f, umount %.1f, fsck %.1f, other %.1f s\n",
	        s->boots, s->observed, s->hung, r->t_observe,
	        r->t_observe > 0 ? (double)r->judged / r->t_observe : 0.0, s->boot, s->connect,
	        s->mount, s->read, s->umount, s->check, s->other);
}

int cmd_app(int argc, char **argv)
{
	for (int i = 1; i < argc && argv[i][0] == '-'; i++)
		if (cli_is_help(argv[i])) {
			help(stdout);
			return 0;
		}
	struct ax x = {.o = {.cfg = {.stack = "cache(size=1M,flush=honor) > mem(size=64M)",
	                             .fs = "ext4",
	                             .max_states = 300},
	                     .jobs = 2},
	               .spec = {.prog_timeout = 120, .check_timeout = 20}};
	int rc = parse(&x, argc, argv);
	if (rc)
		return rc;
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
