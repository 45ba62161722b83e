/* cmd_app.c — `blackout app`: crash-test an unmodified program on a modelled stack
 * under the real kernel (docs/apps.md). The program, its checker and their libraries
 * ride in a per-run cpio after the cached initramfs; one boot records the program's I/O
 * with its acknowledgements as marks (scripts/vmrecord); the explorer enumerates the
 * recording's crash states; guests judge each with the filesystem's checks and the
 * application's checker (vm_pool_observe, the one judge). Parsing and printing only. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blackout/app.h"
#include "blackout/crash.h"
#include "blackout/dev.h"
#include "blackout/vm.h"
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
	struct crash_config cfg;
	struct app_spec spec;
	const char *with[MAX_WITH];
	const char *log, *out, *json;
	unsigned jobs, state_timeout;
	char fsname[16], src[PATH_MAX], build[PATH_MAX], outdir[PATH_MAX];
	char guest_sh[PATH_MAX + 32], vmdir[PATH_MAX + 8], stage_gz[PATH_MAX + 32];
	char logpath[PATH_MAX + 32], store[PATH_MAX + 16], pool[PATH_MAX + 16];
	char judge_initrd[PATH_MAX + 32];
	struct app_acks acks;
	struct vm_pool_stats stats;
	double t0;
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
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "--stack") || !strcmp(a, "--fs") || !strcmp(a, "--max-states") ||
		    !strcmp(a, "--seed") || !strcmp(a, "--state")) {
			int used = crash_config_option(&x->cfg, a, val, &err);
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
			rc = num_opt(a, val, 1, 64, &x->jobs);
		else if (!strcmp(a, "--timeout"))
			rc = num_opt(a, val, 1, 3000, &x->spec.prog_timeout);
		else if (!strcmp(a, "--check-timeout"))
			rc = num_opt(a, val, 1, 600, &x->spec.check_timeout);
		else if (!strcmp(a, "--state-timeout"))
			rc = num_opt(a, val, 5, 3600, &x->state_timeout);
		else if (!strcmp(a, "--log"))
			x->log = val;
		else if (!strcmp(a, "--out"))
			x->out = val;
		else if (!strcmp(a, "--json"))
			x->json = val;
		else if (!strcmp(a, "--keep"))
			x->cfg.keep_dir = val;
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
	if ((x->cfg.state_id || x->cfg.keep_dir) && !(x->cfg.state_id && x->cfg.keep_dir && x->log))
		return cli_usage_error(CMD, "--state ID and --keep DIR go together, with --log");
	if (x->state_timeout && x->state_timeout <= x->spec.check_timeout)
		return cli_usage_error(CMD, "--state-timeout must exceed --check-timeout");
	const char *fs = x->cfg.fs;
	size_t fl = strcspn(fs, ",");
	static const char *const fss[] = {"ext4", "ext3", "xfs", "btrfs"};
	bool known = false;
	for (size_t k = 0; k < sizeof(fss) / sizeof(fss[0]); k++)
		known |= strlen(fss[k]) == fl && !strncmp(fs, fss[k], fl);
	if (!known)
		return cli_usage_error(
		    CMD, "--fs: ext4, ext3, xfs or btrfs, then ',MOUNTOPTS'; not '%s'", fs);
	snprintf(x->fsname, sizeof(x->fsname), "%.*s", (int)fl, fs);
	struct dev_spec *spec = NULL;
	int rc = dev_spec_parse(x->cfg.stack, &spec, &err);
	if (rc < 0)
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	dev_spec_free(spec);
	return 0;
}

/* A path into buf; false when it does not fit. */
__attribute__((format(printf, 3, 4))) static bool path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

static int paths(struct ax *x)
{
	char script[PATH_MAX + 32];
	if (cli_vm_script(script, sizeof(script)) < 0)
		return cli_fail(CMD, "cannot find scripts/vmtest (set BLACKOUT_SRC)");
	*strrchr(script, '/') = '\0';
	bool ok = path(x->src, sizeof(x->src), "%s", script);
	ok &= path(x->guest_sh, sizeof(x->guest_sh), "%s/../tests/vm/guest-app.sh", script);
	const char *b = getenv("BUILD");
	ok &= path(x->build, sizeof(x->build), "%s", b && *b ? b : ".");
	char top[PATH_MAX + 8];
	ok &= path(top, sizeof(top), "%s/app", x->build);
	if (x->out)
		ok &= path(x->outdir, sizeof(x->outdir), "%s", x->out);
	else
		ok &= path(x->outdir, sizeof(x->outdir), "%s/%ld-%ld", top, (long)time(NULL),
		           (long)getpid());
	ok &= path(x->vmdir, sizeof(x->vmdir), "%s/vm", x->build);
	ok &= path(x->stage_gz, sizeof(x->stage_gz), "%s/app.cpio.gz", x->outdir);
	ok &= path(x->store, sizeof(x->store), "%s/states", x->outdir);
	ok &= path(x->pool, sizeof(x->pool), "%s/pool", x->outdir);
	ok &= path(x->judge_initrd, sizeof(x->judge_initrd), "%s/judge-initramfs.gz", x->outdir);
	if (!ok)
		return cli_fail(CMD, "a path is too long (--out?)");
	if (!x->out)
		mkdir(top, 0777);
	if (mkdir(x->outdir, 0777) && errno != EEXIST)
		return cli_fail(CMD, "cannot make %s: %s", x->outdir, strerror(errno));
	return 0;
}

/* One boot records the program: OUT/record/io.log. */
static int record(struct ax *x)
{
	char tool[PATH_MAX + 32], dir[PATH_MAX + 16], wl[PATH_MAX + 16], secs[16];
	bool ok = path(tool, sizeof(tool), "%s/vmrecord", x->src);
	ok &= path(dir, sizeof(dir), "%s/record", x->outdir);
	ok &= path(wl, sizeof(wl), "%s/app.wl", x->outdir);
	ok &= path(secs, sizeof(secs), "%u", x->spec.prog_timeout + 180);
	ok &= path(x->logpath, sizeof(x->logpath), "%s/io.log", dir);
	if (!ok)
		return cli_fail(CMD, "a path is too long");
	struct crash_workload *w;
	struct bo_err err = {{0}};
	int rc = app_workload(0, &w, &err);
	FILE *f = rc ? NULL : fopen(wl, "w");
	if (!f) {
		crash_workload_free(rc ? NULL : w);
		return cli_fail(CMD, "cannot write %s", wl);
	}
	rc = crash_workload_format(w, f);
	crash_workload_free(w);
	if (fclose(f) || rc)
		return cli_fail(CMD, "cannot write %s", wl);
	char *argv[] = {"timeout",
	                "3600",
	                tool,
	                "--stack",
	                (char *)x->cfg.stack,
	                "--fs",
	                (char *)x->cfg.fs,
	                "--workload",
	                wl,
	                "--out",
	                dir,
	                "--timeout",
	                secs,
	                "--initrd-extra",
	                x->stage_gz,
	                NULL};
	printf("app: recording %s on %s (%s) in one boot\n", x->spec.prog, x->cfg.fs, x->cfg.stack);
	return cli_run(CMD, "scripts/vmrecord (the recording boot)", argv, false);
}

static void pool_progress(void *ctx, size_t done, size_t total)
{
	struct ax *x = ctx;
	static double last;
	double now = bo_now();
	if (done != total && now - last < 5)
		return;
	last = now;
	fprintf(stderr, "app: judged in guests %zu of %zu states, %.0f s so far\n", done, total,
	        now - x->t0);
}

/* The observer: the judging initramfs gets the acknowledgements per state, then the pool
 * of guests judges the store; the program's directory leaves the tree for the oracle. */
static int observe(void *ctx, const char *store, size_t n, struct crash_observation *obs,
                   struct bo_err *err)
{
	struct ax *x = ctx;
	char dir[PATH_MAX + 16], gz[PATH_MAX + 32], tool[PATH_MAX + 32];
	bool ok = path(dir, sizeof(dir), "%s/judge", x->outdir);
	ok &= path(gz, sizeof(gz), "%s/judge.cpio.gz", x->outdir);
	ok &= path(tool, sizeof(tool), "%s/vm-build", x->src);
	if (!ok)
		return bo_errf(err, -ENAMETOOLONG, "a path is too long");
	char *vb[] = {"timeout", "1200", tool, x->vmdir, NULL};
	if (cli_run(CMD, "scripts/vm-build (the kernel and initramfs cache)", vb, true))
		return bo_errf(err, -EIO, "the guests' kernel and initramfs could not be built");
	int rc = app_judge_stage(&x->acks, store, n, dir, gz, err);
	char cache[PATH_MAX + 32], kernel[PATH_MAX + 32];
	ok = path(cache, sizeof(cache), "%s/initramfs.gz", x->vmdir);
	ok &= path(kernel, sizeof(kernel), "%s/vmlinuz", x->vmdir);
	if (rc == 0 && !ok)
		rc = bo_errf(err, -ENAMETOOLONG, "a path is too long");
	if (rc == 0)
		rc = app_sh("cat \"$1\" \"$2\" \"$3\" >\"$4\"",
		            (char *const[]){cache, x->stage_gz, gz, x->judge_initrd, NULL}, err);
	if (rc)
		return rc;
	mkdir(x->pool, 0777);
	const char *comma = strchr(x->cfg.fs, ',');
	struct vm_pool_cfg pc = {.kernel = kernel,
	                         .initrd = x->judge_initrd,
	                         .statedir = store,
	                         .workdir = x->pool,
	                         .fs = x->fsname,
	                         .mopt = comma ? comma + 1 : NULL,
	                         .jobs = x->jobs,
	                         .state_timeout = x->state_timeout,
	                         .progress = pool_progress,
	                         .progress_ctx = x};
	x->t0 = bo_now();
	rc = vm_pool_observe(&pc, n, obs, &x->stats, err);
	for (size_t i = 0; rc == 0 && i < n; i++)
		app_obs_hide(&obs[i]);
	return rc;
}

/* The application's line: what its checker said, counted from the judge's outcomes. */
static void print_app(const struct ax *x, const struct crash_result *r, FILE *f)
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
	        x->acks.n, (unsigned long long)r->judged, (unsigned long long)lost,
	        (unsigned long long)corrupt, (unsigned long long)crashed, (unsigned long long)hung);
	const struct vm_pool_stats *s = &x->stats;
	fprintf(f,
	        "guests:   %u boots, %zu states observed, %u hung; %.1f s judging, %.2f distinct "
	        "states/s in all\n"
	        "          summed over guests: boot %.1f, attach %.1f, mount %.1f, tree and "
	        "checker %.1f, umount %.1f, fsck %.1f, other %.1f s\n",
	        s->boots, s->observed, s->hung, r->t_observe,
	        r->t_observe > 0 ? (double)r->judged / r->t_observe : 0.0, s->boot, s->connect,
	        s->mount, s->read, s->umount, s->check, s->other);
}

static int explore(struct ax *x)
{
	struct bo_err err = {{0}};
	int rc = app_acks_load(x->logpath, &x->acks, &err);
	if (rc)
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	struct crash_workload *w;
	if ((rc = app_workload(x->acks.n, &w, &err)))
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	struct crash_observer ob = {
	    .name = "linux", .store = x->store, .observe = observe, .ctx = x};
	x->cfg.wl = w;
	x->cfg.workload = "app";
	x->cfg.log = x->logpath;
	x->cfg.observer = &ob;
	struct crash_result *r = NULL;
	rc = crash_explore(&x->cfg, &r, &err);
	crash_workload_free(w);
	if (rc)
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	FILE *t = x->json && strcmp(x->json, "-") == 0 ? stderr : stdout;
	crash_result_print(r, t);
	print_app(x, r, t);
	char res[PATH_MAX + 32];
	snprintf(res, sizeof(res), "%s/result.json", x->outdir);
	int status = cli_write_result(CMD, r, res);
	if (status == 0 && x->json)
		status = cli_write_result(CMD, r, x->json);
	fprintf(t, "logs, states and results: %s\n", x->outdir);
	if (status == 0 && r->judged != r->ok)
		status = 3;
	crash_result_free(r);
	return status;
}

int cmd_app(int argc, char **argv)
{
	for (int i = 1; i < argc && argv[i][0] == '-'; i++)
		if (cli_is_help(argv[i])) {
			help(stdout);
			return 0;
		}
	struct ax x = {.cfg = {.stack = "cache(size=1M,flush=honor) > mem(size=64M)",
	                       .fs = "ext4",
	                       .max_states = 300},
	               .spec = {.prog_timeout = 120, .check_timeout = 20},
	               .jobs = 2};
	int rc = parse(&x, argc, argv);
	if (rc)
		return rc;
	/* every file checked, and the per-run cpio made, before any guest boots */
	if ((rc = paths(&x)))
		return rc;
	char stage[PATH_MAX + 16];
	snprintf(stage, sizeof(stage), "%s/stage", x.outdir);
	struct bo_err err = {{0}};
	x.spec.guest_sh = x.guest_sh;
	if ((rc = app_stage(&x.spec, stage, x.stage_gz, &err)))
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	if (x.log)
		snprintf(x.logpath, sizeof(x.logpath), "%s", x.log);
	else if ((rc = record(&x)))
		return rc;
	rc = explore(&x);
	app_acks_free(&x.acks);
	return rc;
}
