// SPDX-License-Identifier: GPL-2.0-or-later
/* explore.c — the real kernel at explorer scale as one call (vm_explore): one boot
 * records the guest's run (scripts/vmrecord), the explorer enumerates the recording's
 * crash states, guests of the real kernel observe every distinct state (vm_pool_observe)
 * and the one judge classifies. The workload is a crash workload or an unmodified
 * program with its checker (docs/apps.md); md and dm-integrity are options of it.
 * Options are checked here once; the scripts only start and stop processes. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blackout/app.h"
#include "blackout/dev.h"
#include "blackout/rec.h"
#include "blackout/util.h"
#include "blackout/vmexplore.h"

/* One run's places and state. */
struct vx {
	const struct vm_explore_opts *o;
	struct crash_config cfg;
	struct vm_explore_info *info;
	char fsname[16];
	char scripts[PATH_MAX], build[PATH_MAX], vmdir[PATH_MAX + 8];
	char store[PATH_MAX + 16], pool[PATH_MAX + 16], logpath[PATH_MAX + 32];
	char kernel[PATH_MAX + 32], initrd[PATH_MAX + 32];
	/* an app's: the program's cpio, the judging initramfs, its acknowledgements */
	char stage_gz[PATH_MAX + 32], judge_initrd[PATH_MAX + 32];
	struct app_acks acks;
};

/* A path into buf; -ENAMETOOLONG with err set when it does not fit. */
__attribute__((format(printf, 4, 5))) static int path(struct bo_err *err, char *buf, size_t len,
                                                      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < len)
		return 0;
	return bo_errf(err, -ENAMETOOLONG, "a path is too long (--out?)");
}

/* A whole decimal number of at most `digits` digits, no leading zero. */
static bool number(const char *p, size_t n, size_t digits, unsigned long *v)
{
	if (n == 0 || n > digits || strspn(p, "0123456789") < n || (n > 1 && p[0] == '0'))
		return false;
	*v = strtoul(p, NULL, 10);
	return true;
}

int vm_md_check(const char *md, unsigned chunk, const char *md_fail, struct bo_err *err)
{
	if (!md)
		return chunk || md_fail ? bo_errf(err, -EINVAL, "%s needs --md",
		                                  chunk ? "--md-chunk" : "--md-fail")
		                        : 0;
	/* LEVEL:N:MISSING[:POLICY] */
	const char *f[5] = {md};
	size_t nf = 1;
	for (const char *p = md; *p && nf < 5; p++)
		if (*p == ':')
			f[nf++] = p + 1;
	size_t len[5];
	for (size_t i = 0; i < nf; i++)
		len[i] = i + 1 < nf ? (size_t)(f[i + 1] - f[i]) - 1 : strlen(f[i]);
	unsigned long level, n = 0, miss[2];
	size_t nmiss = 0;
	bool ok = (nf == 3 || nf == 4) && len[0] == 1 && strchr("0156", f[0][0]) &&
	          number(f[0], 1, 1, &level) && number(f[1], len[1], 2, &n) && n >= 2 && n <= 19;
	if (ok && !(len[2] == 1 && f[2][0] == '-')) {
		const char *plus = memchr(f[2], '+', len[2]);
		size_t l0 = plus ? (size_t)(plus - f[2]) : len[2];
		ok = number(f[2], l0, 2, &miss[nmiss++]) &&
		     (!plus || number(plus + 1, len[2] - l0 - 1, 2, &miss[nmiss++]));
	}
	if (ok && nf == 4) {
		static const char *const pol[] = {"j", "ppl", "bitmap"};
		bool known = false;
		for (size_t i = 0; i < 3; i++)
			known |= strlen(pol[i]) == len[3] && !strncmp(f[3], pol[i], len[3]);
		ok = known;
	}
	if (!ok)
		return bo_errf(
		    err, -EINVAL,
		    "--md: LEVEL:N:MISSING[:POLICY], e.g. 5:4:3 or 5:4:0:ppl (level 0, 1, "
		    "5 or 6; 2 to 19 members; MISSING a member, two as A+B, or -; POLICY "
		    "j (the next export is md's write journal), ppl or bitmap)");
	for (size_t i = 0; i < nmiss; i++)
		if (miss[i] >= n)
			return bo_errf(err, -EINVAL, "--md: member %lu missing of %lu (0 to %lu)",
			               miss[i], n, n - 1);
	if (chunk && (chunk < 4 || chunk > 512 || (chunk & (chunk - 1))))
		return bo_errf(err, -EINVAL, "--md-chunk: 4 to 512 KiB, a power of two; not '%u'",
		               chunk);
	if (md_fail) {
		const char *at = strchr(md_fail, '@');
		unsigned long i, k;
		if (!at || !number(md_fail, (size_t)(at - md_fail), 2, &i) ||
		    !number(at + 1, strlen(at + 1), 6, &k))
			return bo_errf(err, -EINVAL,
			               "--md-fail: I@K, a member and a step of the workload (e.g. "
			               "1@3), not '%.40s'",
			               md_fail);
		if (i >= n)
			return bo_errf(err, -EINVAL, "--md-fail: member %lu of %lu (0 to %lu)", i,
			               n, n - 1);
		for (size_t m = 0; m < nmiss; m++)
			if (miss[m] == i)
				return bo_errf(
				    err, -EINVAL,
				    "--md-fail: member %lu is missing from the start (--md %s)", i,
				    md);
	}
	return 0;
}

int vm_explore_check(const struct vm_explore_opts *o, struct bo_err *err)
{
	const struct crash_config *c = &o->cfg;
	if (!c->stack || !c->fs || (!c->workload && !o->app))
		return bo_errf(err, -EINVAL, "--stack, --fs and --workload are required");
	size_t fl = strcspn(c->fs, ",");
	static const char *const fss[] = {"ext4", "ext3", "xfs", "btrfs"};
	bool known = false;
	for (size_t i = 0; i < sizeof(fss) / sizeof(fss[0]); i++)
		known |= strlen(fss[i]) == fl && !strncmp(c->fs, fss[i], fl);
	if (!known)
		return bo_errf(err, -EINVAL,
		               "--fs: ext4, ext3, xfs or btrfs, then ',MOUNTOPTS'; not '%s'",
		               c->fs);
	if (strspn(c->fs + fl,
	           ",abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_=.-") !=
	    strlen(c->fs + fl))
		return bo_errf(err, -EINVAL, "--fs: mount options may hold only [a-zA-Z0-9_=,.-]");
	if (strlen(c->stack) > 249)
		return bo_errf(err, -EINVAL, "--stack: %zu bytes; a recording takes at most 249",
		               strlen(c->stack));
	if (c->workload && !strncmp(c->workload, "sh:", 3))
		return bo_errf(err, -EINVAL,
		               "--workload sh:FILE is gone: write the steps as a workload file "
		               "(docs/workloads.md)");
	if ((o->md || o->md_chunk) && o->log)
		return bo_errf(err, -EINVAL,
		               "--md shapes the recording boot; --log gives a recording");
	if (vm_md_check(o->md, o->md_chunk, NULL, err))
		return -EINVAL;
	if (o->files > 1000)
		return bo_errf(err, -EINVAL, "--files: 0 to 1000");
	if (o->app) {
		if (o->md || o->integrity)
			return bo_errf(err, -EINVAL, "an app runs on the stack alone (no --md)");
		if ((c->state_id || c->keep_dir) && !(c->state_id && c->keep_dir && o->log))
			return bo_errf(err, -EINVAL,
			               "--state ID and --keep DIR go together, with --log");
		if (o->state_timeout && o->state_timeout <= o->app->check_timeout)
			return bo_errf(err, -EINVAL, "--state-timeout must exceed --check-timeout");
	} else if (c->keep_dir && !c->state_id) {
		return bo_errf(err, -EINVAL, "--keep writes one state: give --state ID");
	}
	if (!vm_kernel_cache(o->kernel))
		return bo_errf(err, -EINVAL, "--kernel: %s, not '%.40s'", VM_KERNEL_SERIES,
		               o->kernel);
	return 0;
}

static void say(const struct vx *v, const char *phase, uint64_t done, uint64_t total)
{
	if (v->o->progress)
		v->o->progress(v->o->progress_ctx, phase, done, total);
}

/* Runs a script to completion under its own timeout; 0, or -EIO naming what failed.
 * quiet: its standard output goes to standard error. The child gets SIGTERM if this
 * thread dies (timeout passes it on to the script, whose traps stop qemu and nbdkit). */
static int run(char *const argv[], bool quiet, const char *what, struct bo_err *err)
{
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return bo_errf(err, -errno, "cannot start %s: %s", what, strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		if (quiet)
			dup2(2, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return bo_errf(err, -errno, "waiting for %s: %s", what, strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	return bo_errf(err, -EIO, "%s failed (%s %d)", what, WIFEXITED(st) ? "exit" : "signal",
	               WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* Where things are: the scripts, BUILD (plugin, kernel cache), OUT. */
static int paths(struct vx *v, struct bo_err *err)
{
	const struct vm_explore_opts *o = v->o;
	char *outdir = v->info->outdir;
	size_t olen = sizeof(v->info->outdir);
	int rc = vm_scripts_dir(v->scripts, sizeof(v->scripts));
	if (rc)
		return bo_errf(err, rc, "cannot find scripts/vmtest (set BLACKOUT_SRC)");
	const char *b = getenv("BUILD");
	const char *kind = o->app ? VM_APP_RUNS_DIR : VM_EXPLORE_RUNS_DIR;
	char top[PATH_MAX + 16];
	if ((rc = path(err, v->build, sizeof(v->build), "%s", b && *b ? b : ".")) ||
	    (rc = path(err, top, sizeof(top), "%s/%s", v->build, kind)))
		return rc;
	if (o->out)
		rc = path(err, outdir, olen, "%s", o->out);
	else
		rc = path(err, outdir, olen, "%s/%ld-%ld", top, (long)time(NULL), (long)getpid());
	if (rc)
		return rc;
	mkdir(top, 0777);
	if (mkdir(outdir, 0777) && errno != EEXIST)
		return bo_errf(err, -errno, "cannot make %s: %s", outdir, strerror(errno));
	if ((rc = path(err, v->store, sizeof(v->store), "%s/states", outdir)) ||
	    (rc = path(err, v->pool, sizeof(v->pool), "%s/pool", outdir)) ||
	    (rc = path(err, v->vmdir, sizeof(v->vmdir), "%s/%s", v->build,
	               vm_kernel_cache(o->kernel))) ||
	    (rc = path(err, v->kernel, sizeof(v->kernel), "%s/vmlinuz", v->vmdir)) ||
	    (rc = path(err, v->initrd, sizeof(v->initrd), "%s/initramfs.cpio", v->vmdir)) ||
	    (rc = path(err, v->stage_gz, sizeof(v->stage_gz), "%s/app.cpio", outdir)) ||
	    (rc = path(err, v->judge_initrd, sizeof(v->judge_initrd), "%s/judge-initramfs.img",
	               outdir)))
		return rc;
	if (o->log)
		return path(err, v->logpath, sizeof(v->logpath), "%s", o->log);
	return path(err, v->logpath, sizeof(v->logpath), "%s/record/io.log", outdir);
}

/* The kernel series asked for, as vm-build takes it. */
static const char *series(const struct vm_explore_opts *o)
{
	return o->kernel ? o->kernel : "6.1";
}

/* The kernel and initramfs cache (built once, checked every time): only when guests
 * are about to boot, so a refused log costs no build. */
static int vm_build(struct vx *v, struct bo_err *err)
{
	char tool[PATH_MAX + 32];
	int rc = path(err, tool, sizeof(tool), "%s/vm-build", v->scripts);
	char *argv[] = {"timeout", "1200", tool, "--kernel", (char *)series(v->o), v->vmdir, NULL};
	if (rc == 0 && run(argv, true, "scripts/vm-build (the kernel and initramfs cache)", err))
		return bo_errf(err, -EIO,
		               "the guests' kernel and initramfs could not be built (%s)",
		               err->msg);
	return rc;
}

/* An app's workload file for the recording boot: its acknowledgements come as marks. */
static int app_wl(struct vx *v, char *wl, size_t len, struct bo_err *err)
{
	int rc = path(err, wl, len, "%s/app.wl", v->info->outdir);
	struct crash_workload *w = NULL;
	if (rc == 0)
		rc = app_workload(0, &w, err);
	if (rc)
		return rc;
	FILE *f = fopen(wl, "w");
	rc = f ? crash_workload_format(w, f) : -errno;
	if (f && fclose(f) && rc == 0)
		rc = -EIO;
	crash_workload_free(w);
	return rc ? bo_errf(err, rc, "cannot write %s", wl) : 0;
}

/* One boot records the run: OUT/record/io.log. */
static int record(struct vx *v, struct bo_err *err)
{
	const struct vm_explore_opts *o = v->o;
	char tool[PATH_MAX + 32], dir[PATH_MAX + 16], num[16], wl[PATH_MAX + 16], chunk[16];
	int rc;
	if ((rc = path(err, tool, sizeof(tool), "%s/vmrecord", v->scripts)) ||
	    (rc = path(err, dir, sizeof(dir), "%s/record", v->info->outdir)))
		return rc;
	const char *argv[28] = {
	    "timeout",   o->app ? "3600" : "1800", tool, "--stack", v->cfg.stack, "--fs", v->cfg.fs,
	    "--workload"};
	size_t k = 8;
	if (o->app) {
		if ((rc = app_wl(v, wl, sizeof(wl), err)))
			return rc;
		snprintf(num, sizeof(num), "%u", o->app->prog_timeout + 180);
		argv[k++] = wl;
		argv[k++] = "--out", argv[k++] = dir;
		argv[k++] = "--timeout", argv[k++] = num;
		argv[k++] = "--initrd-extra", argv[k++] = v->stage_gz;
	} else {
		snprintf(num, sizeof(num), "%u", o->files ? o->files : 24);
		argv[k++] = v->cfg.workload;
		argv[k++] = "--files", argv[k++] = num;
		argv[k++] = "--out", argv[k++] = dir;
	}
	/* md over the stack's members (docs/md.md): the rest of the pipeline learns of them
	 * from the log's device table */
	if (o->md)
		argv[k++] = "--md", argv[k++] = o->md;
	if (o->md_chunk) {
		snprintf(chunk, sizeof(chunk), "%u", o->md_chunk);
		argv[k++] = "--md-chunk", argv[k++] = chunk;
	}
	if (o->integrity)
		argv[k++] = "--integrity";
	argv[k++] = "--kernel", argv[k++] = series(o);
	argv[k] = NULL;
	say(v, "recording", 0, 0);
	return run((char *const *)argv, false, "scripts/vmrecord (the recording boot)", err);
}

/* A recording made over dm-integrity (the guest's "integrity ..." mark) is judged
 * through it, and only then: a state opened the wrong way would read as all damaged or
 * as another disk altogether. Checked before any guest boots. */
static int check_integrity(const struct vx *v, struct bo_err *err)
{
	struct bo_err lerr = {{0}};
	struct rec_log *log = NULL;
	if (rec_log_load(v->logpath, &log, &lerr))
		return 0; /* the explorer names what is wrong with it */
	bool marked = false;
	for (size_t i = 0; i < rec_log_len(log) && !marked; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->op != REC_MARK)
			continue;
		if (!strncmp(e->mark, "step ", 5))
			break;
		marked = !strncmp(e->mark, "integrity ", 10);
	}
	rec_log_free(log);
	if (marked != v->o->integrity)
		return bo_errf(err, -EINVAL, "%s was recorded %s dm-integrity: %s --integrity",
		               v->logpath, marked ? "over" : "without",
		               marked ? "give" : "leave out");
	return 0;
}

static void pool_progress(void *ctx, size_t done, size_t total)
{
	say(ctx, "judged in guests", done, total);
}

static void explore_progress(void *ctx, const struct crash_progress *p)
{
	say(ctx, "enumerated", p->done, p->total);
}

/* An app's judging initramfs: the cached one, the acknowledgements each state's
 * checker is held to and the program's cpio (not compressed, app_stage). */
static int app_initrd(struct vx *v, const char *store, size_t n, struct bo_err *err)
{
	char dir[PATH_MAX + 16], gz[PATH_MAX + 32];
	int rc;
	if ((rc = path(err, dir, sizeof(dir), "%s/judge", v->info->outdir)) ||
	    (rc = path(err, gz, sizeof(gz), "%s/judge.cpio.gz", v->info->outdir)) ||
	    (rc = app_judge_stage(&v->acks, store, n, dir, gz, err)))
		return rc;
	/* zeros up to a multiple of 4 before it: the kernel takes an uncompressed archive
	 * only at such an offset, and skips zeros between archives */
	return app_sh("cat \"$1\" \"$2\" >\"$4\" && "
	              "head -c $(((4 - $(stat -c %s \"$4\") % 4) % 4)) /dev/zero >>\"$4\" && "
	              "cat \"$3\" >>\"$4\"",
	              (char *const[]){v->initrd, gz, v->stage_gz, v->judge_initrd, NULL}, err);
}

/* The outside observer: the pool of guests on the state store. */
static int observe(void *ctx, const char *store, size_t n, struct crash_observation *obs,
                   struct bo_err *err)
{
	struct vx *v = ctx;
	const struct vm_explore_opts *o = v->o;
	int rc = vm_build(v, err);
	if (rc == 0 && o->app)
		rc = app_initrd(v, store, n, err);
	if (rc)
		return rc;
	mkdir(v->pool, 0777);
	const char *comma = strchr(v->cfg.fs, ',');
	struct vm_pool_cfg pc = {.kernel = v->kernel,
	                         .initrd = o->app ? v->judge_initrd : v->initrd,
	                         .statedir = store,
	                         .workdir = v->pool,
	                         .fs = v->fsname,
	                         .mopt = comma ? comma + 1 : NULL,
	                         .jobs = o->jobs,
	                         .state_timeout = o->state_timeout,
	                         .integrity = o->integrity,
	                         .app = o->app != NULL,
	                         .md_drop_set = o->md_drop_set,
	                         .md_drop = o->md_drop,
	                         .progress = pool_progress,
	                         .progress_ctx = v};
	say(v, "judged in guests", 0, n);
	rc = vm_pool_observe(&pc, n, obs, &v->info->pool, err);
	for (size_t i = 0; rc == 0 && o->app && i < n; i++)
		app_obs_hide(&obs[i]);
	return rc;
}

/* The workload the explorer replays: vmtest's own kinds are generated, an app's is its
 * acknowledgements, anything else a crash workload. */
static int workload(struct vx *v, struct crash_workload **w, struct bo_err *err)
{
	const struct vm_explore_opts *o = v->o;
	if (o->app) {
		int rc = app_acks_load(v->logpath, &v->acks, err);
		v->info->acks = v->acks.n;
		return rc ? rc : app_workload(v->acks.n, w, err);
	}
	return vm_workload_load(v->cfg.workload, o->files ? o->files : 24, w, err);
}

int vm_workload_load(const char *name, unsigned files, struct crash_workload **w,
                     struct bo_err *err)
{
	char *text = NULL;
	int rc = crash_guest_workload_text(name, files, &text, err);
	if (rc == 0)
		rc = crash_workload_parse(text, strlen(text), name, w, err);
	else if (rc == -EINVAL && strncmp(err->msg, "--files", 7) != 0)
		rc = crash_workload_load(name, w, err); /* not one of vmtest's own */
	free(text);
	return rc;
}

/* What only the guest knew, into the result: the kernel release that ran (the cache's:
 * the recording boot and the judging guests boot the same one) and a run step the
 * kernel refused. */
static int stamp(struct vx *v, struct crash_result *r, struct bo_err *err)
{
	struct bo_err kerr = {{0}};
	int rc = vm_kernel_release(v->vmdir, r->kernel, sizeof(r->kernel), &kerr);
	if (rc == -ENOENT) /* a given log whose states no guest judged: build it to know */
		rc = vm_build(v, err)
		         ? -EIO
		         : vm_kernel_release(v->vmdir, r->kernel, sizeof(r->kernel), &kerr);
	if (rc)
		return bo_errf(err, rc, "the guest kernel's release: %s", kerr.msg);
	return vm_rejected(v->logpath, v->cfg.wl, r->rejected, sizeof(r->rejected), err);
}

static int write_result(const struct crash_result *r, const char *outdir, struct bo_err *err)
{
	char res[PATH_MAX + 32];
	int rc = path(err, res, sizeof(res), "%s/result.json", outdir);
	FILE *f = rc ? NULL : fopen(res, "w");
	if (!f)
		return rc ? rc : bo_errf(err, -errno, "cannot write %s: %s", res, strerror(errno));
	rc = crash_result_write_json(r, f);
	if (fclose(f) || rc)
		return bo_errf(err, -EIO, "writing %s failed", res);
	return 0;
}

int vm_explore(const struct vm_explore_opts *o, struct crash_result **out,
               struct vm_explore_info *info, struct bo_err *err)
{
	int rc = vm_explore_check(o, err);
	if (rc)
		return rc;
	struct vx *v = calloc(1, sizeof(*v));
	if (!v)
		return bo_errf(err, -ENOMEM, "out of memory");
	memset(info, 0, sizeof(*info));
	v->o = o;
	v->info = info;
	v->cfg = o->cfg;
	snprintf(v->fsname, sizeof(v->fsname), "%.*s", (int)strcspn(o->cfg.fs, ","), o->cfg.fs);
	struct dev_spec *spec = NULL;
	struct crash_workload *w = NULL;
	if ((rc = dev_spec_parse(o->cfg.stack, &spec, err)) < 0)
		goto out;
	dev_spec_free(spec);
	rc = 0;
	/* the workload first: a bad one costs no boot */
	if (!o->app && (rc = vm_workload_load(o->cfg.workload, o->files ? o->files : 24, &w, err)))
		goto out;
	crash_workload_free(w);
	w = NULL;
	if ((rc = paths(v, err)))
		goto out;
	if (o->app) {
		/* every file checked, and the per-run cpio made, before any guest boots */
		char stage[PATH_MAX + 16], guest_sh[PATH_MAX + 64];
		struct app_spec spec_copy = *o->app;
		if ((rc = path(err, stage, sizeof(stage), "%s/stage", info->outdir)) ||
		    (rc = path(err, guest_sh, sizeof(guest_sh), "%s/../src/guest/guest-app.sh",
		               v->scripts)))
			goto out;
		if (!spec_copy.guest_sh)
			spec_copy.guest_sh = guest_sh;
		if ((rc = app_stage(&spec_copy, stage, v->stage_gz, err)))
			goto out;
	}
	if (!o->log && (rc = record(v, err)))
		goto out;
	if (!o->app && (rc = check_integrity(v, err)))
		goto out;
	if ((rc = workload(v, &w, err)))
		goto out;
	struct crash_observer ob = {
	    .name = "linux", .store = v->store, .observe = observe, .ctx = v};
	v->cfg.wl = w;
	if (o->app)
		v->cfg.workload = VM_APP_WORKLOAD;
	v->cfg.log = v->logpath;
	v->cfg.observer = &ob;
	v->cfg.progress = explore_progress;
	v->cfg.progress_ctx = v;
	rc = crash_explore(&v->cfg, out, err);
	if (rc == 0 && (rc = stamp(v, *out, err))) {
		crash_result_free(*out);
		*out = NULL;
	}
	if (rc == 0 && (rc = write_result(*out, info->outdir, err))) {
		crash_result_free(*out);
		*out = NULL;
	}
out:
	crash_workload_free(w);
	if (o->app)
		app_acks_free(&v->acks);
	free(v);
	return rc;
}
