/* cmd_vmtest_explore.c — `blackout vmtest` without --cuts: record the guest's run once
 * (scripts/vmrecord), enumerate its crash states with the explorer (crash_explore
 * with cfg.log), judge every distinct state in real-kernel guests (vm_pool_observe)
 * with the one judge; print the explorer's summary and write its JSON
 * (docs/vmtest.md). Parsing and printing only. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/dev.h"
#include "blackout/rec.h"
#include "blackout/util.h"
#include "blackout/vm.h"
#include "cli/cli.h"

#define CMD "vmtest"
/* A guest judges a few states a second: the explorer's default budget (100000) would
 * keep a person waiting for hours; 500 distinct-or-not states take minutes. */
#define VMTEST_MAX_STATES 500

/* A path into buf; false when it does not fit. */
__attribute__((format(printf, 3, 4))) static bool path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

struct vx {
	const char *stack, *fs, *workload, *log, *out, *json, *keep, *md, *mdchunk;
	unsigned files, jobs, md_drop;
	bool integrity;   /* dm-integrity under the fs (docs/integrity.md) */
	bool md_drop_set; /* md assembled without member md_drop (docs/md.md) */
	struct crash_config cfg;
	char src[PATH_MAX], build[PATH_MAX], outdir[PATH_MAX], vmdir[PATH_MAX + 8];
	char fsname[16], store[PATH_MAX + 16], pool[PATH_MAX + 16], logpath[PATH_MAX + 32];
	char kernel[PATH_MAX + 16], initrd[PATH_MAX + 32], plugin[PATH_MAX + 32];
	struct vm_pool_stats stats;
	bool tty;
	double t0, last;
};

static int parse(struct vx *v, int argc, char **argv)
{
	struct bo_err err = {{0}};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		/* the options that shape the states are the explorer's own */
		if (!strcmp(a, "--stack") || !strcmp(a, "--fs") || !strcmp(a, "--workload") ||
		    !strcmp(a, "--max-states") || !strcmp(a, "--seed") || !strcmp(a, "--shard") ||
		    !strcmp(a, "--state")) {
			int used = crash_config_option(&v->cfg, a, val, &err);
			if (used < 0)
				return cli_usage_error(CMD, "%s", err.msg);
			i += used - 1;
			continue;
		}
		if (!strcmp(a, "--integrity")) {
			v->integrity = true;
			continue;
		}
		if (!val)
			return cli_usage_error(CMD, "%s needs a value", a);
		uint64_t n;
		int rc = 0;
		if (!strcmp(a, "--jobs")) {
			rc = cli_num(CMD, a, val, 0, 1, 64, &n);
			v->jobs = (unsigned)n;
		} else if (!strcmp(a, "--files")) {
			rc = cli_num(CMD, a, val, 0, 0, 1000, &n);
			v->files = (unsigned)n;
		} else if (!strcmp(a, "--md-drop")) {
			rc = cli_num(CMD, a, val, 0, 0, 63, &n);
			v->md_drop = (unsigned)n;
			v->md_drop_set = true;
		} else if (!strcmp(a, "--log")) {
			v->log = val;
		} else if (!strcmp(a, "--out")) {
			v->out = val;
		} else if (!strcmp(a, "--json")) {
			v->json = val;
		} else if (!strcmp(a, "--keep")) {
			v->keep = val;
		} else if (!strcmp(a, "--md")) {
			v->md = val;
		} else if (!strcmp(a, "--md-chunk")) {
			v->mdchunk = val;
		} else {
			return cli_usage_error(CMD, "unknown argument '%s'", a);
		}
		if (rc)
			return rc;
		i++;
	}
	v->stack = v->cfg.stack;
	v->fs = v->cfg.fs;
	v->workload = v->cfg.workload;
	if (!v->stack || !v->fs || !v->workload)
		return cli_usage_error(CMD, "--stack, --fs and --workload are required");
	size_t fl = strcspn(v->fs, ",");
	static const char *const fss[] = {"ext4", "ext3", "xfs", "btrfs"};
	bool known = false;
	for (size_t i = 0; i < sizeof(fss) / sizeof(fss[0]); i++)
		known |= strlen(fss[i]) == fl && !strncmp(v->fs, fss[i], fl);
	if (!known)
		return cli_usage_error(
		    CMD, "--fs: ext4, ext3, xfs or btrfs, then ',MOUNTOPTS'; not '%s'", v->fs);
	snprintf(v->fsname, sizeof(v->fsname), "%.*s", (int)fl, v->fs);
	if (!strncmp(v->workload, "sh:", 3))
		return cli_usage_error(CMD, "--workload sh:FILE is gone: write the steps as a "
		                            "workload file (docs/workloads.md)");
	if ((v->md || v->mdchunk) && v->log)
		return cli_usage_error(CMD,
		                       "--md shapes the recording boot; --log gives a recording");
	if (v->mdchunk && !v->md)
		return cli_usage_error(CMD, "--md-chunk needs --md");
	if (v->keep && !v->cfg.state_id)
		return cli_usage_error(CMD, "--keep writes one state: give --state ID");
	struct dev_spec *spec = NULL;
	int rc = dev_spec_parse(v->stack, &spec, &err);
	if (rc < 0)
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	dev_spec_free(spec);
	return 0;
}

/* Where things are: the source tree (scripts), BUILD (plugin, kernel cache), OUT. */
static int paths(struct vx *v)
{
	bool ok = true;
	char script[PATH_MAX + 32];
	if (cli_vm_script(script, sizeof(script)) < 0)
		return cli_fail(CMD, "cannot find scripts/vmtest (set BLACKOUT_SRC)");
	char *slash = strrchr(script, '/');
	*slash = '\0';
	ok &= path(v->src, sizeof(v->src), "%s", script); /* .../scripts */
	const char *b = getenv("BUILD");
	ok &= path(v->build, sizeof(v->build), "%s", b && *b ? b : ".");
	if (v->out)
		ok &= path(v->outdir, sizeof(v->outdir), "%s", v->out);
	else
		ok &= path(v->outdir, sizeof(v->outdir), "%s/vmtest/%ld-%ld", v->build,
		           (long)time(NULL), (long)getpid());
	char mk[PATH_MAX + 32];
	ok &= path(mk, sizeof(mk), "%s/vmtest", v->build);
	if (!ok)
		return cli_fail(CMD, "a path is too long (--out?)");
	mkdir(mk, 0777);
	if (mkdir(v->outdir, 0777) && errno != EEXIST)
		return cli_fail(CMD, "cannot make %s: %s", v->outdir, strerror(errno));
	ok &= path(v->store, sizeof(v->store), "%s/states", v->outdir);
	ok &= path(v->pool, sizeof(v->pool), "%s/pool", v->outdir);
	ok &= path(v->plugin, sizeof(v->plugin), "%s/blackout-nbdkit.so", v->build);
	mkdir(v->pool, 0777);
	ok &= path(v->vmdir, sizeof(v->vmdir), "%s/vm", v->build);
	ok &= path(v->kernel, sizeof(v->kernel), "%s/vmlinuz", v->vmdir);
	ok &= path(v->initrd, sizeof(v->initrd), "%s/initramfs.gz", v->vmdir);
	return ok ? 0 : cli_fail(CMD, "a path is too long");
}

/* The kernel and initramfs cache (built once, checked every time): only when guests
 * are about to boot, so a refused log costs no build. */
static int vm_build(struct vx *v, struct bo_err *err)
{
	char tool[PATH_MAX + 32];
	if (!path(tool, sizeof(tool), "%s/vm-build", v->src))
		return bo_errf(err, -ENAMETOOLONG, "a path is too long");
	char *argv[] = {"timeout", "1200", tool, v->vmdir, NULL};
	if (cli_run(CMD, "scripts/vm-build (the kernel and initramfs cache)", argv, true))
		return bo_errf(err, -EIO, "the guests' kernel and initramfs could not be built");
	return 0;
}

/* One boot records the workload's run: OUT/record/io.log. */
static int record(struct vx *v)
{
	bool ok = true;
	char tool[PATH_MAX + 32], dir[PATH_MAX + 16], files[16];
	ok &= path(tool, sizeof(tool), "%s/vmrecord", v->src);
	ok &= path(dir, sizeof(dir), "%s/record", v->outdir);
	ok &= path(files, sizeof(files), "%u", v->files);
	char *argv[] = {"timeout",
	                "1800",
	                tool,
	                "--stack",
	                (char *)v->stack,
	                "--fs",
	                (char *)v->fs,
	                "--workload",
	                (char *)v->workload,
	                "--files",
	                files,
	                "--out",
	                dir,
	                NULL,
	                NULL,
	                NULL,
	                NULL,
	                NULL,
	                NULL};
	/* md over the stack's members (scripts/vmrecord --md, docs/md.md): the rest of
	 * the pipeline learns of them from the log's device table */
	size_t k = 13;
	if (v->md) {
		argv[k++] = "--md";
		argv[k++] = (char *)v->md;
	}
	if (v->mdchunk) {
		argv[k++] = "--md-chunk";
		argv[k++] = (char *)v->mdchunk;
	}
	if (v->integrity)
		argv[k++] = "--integrity";
	if (!ok)
		return cli_fail(CMD, "a path is too long");
	printf("vmtest: recording %s on %s (%s) in one boot\n", v->workload, v->fs, v->stack);
	int rc = cli_run(CMD, "scripts/vmrecord (the recording boot)", argv, false);
	ok &= path(v->logpath, sizeof(v->logpath), "%s/io.log", dir);
	return rc ? rc : ok ? 0 : cli_fail(CMD, "a path is too long");
}

static void progress_line(struct vx *v, const char *what, uint64_t done, uint64_t total, bool force)
{
	double now = bo_now(), s = now - v->t0;
	if (!force && now - v->last < (v->tty ? 0.25 : 5))
		return;
	v->last = now;
	double left = done && total > done ? s / (double)done * (double)(total - done) : 0;
	fprintf(stderr,
	        "%svmtest: %s %" PRIu64 " of %" PRIu64
	        " states, %.0f s so far, about %.0f s left%s",
	        v->tty ? "\r" : "", what, done, total, s, left, v->tty ? "   " : "\n");
}

static void explore_progress(void *ctx, const struct crash_progress *p)
{
	progress_line(ctx, "enumerated", p->done, p->total, p->done == p->total);
}

static void pool_progress(void *ctx, size_t done, size_t total)
{
	progress_line(ctx, "judged in guests", done, total, done == total);
}

/* The outside observer: the pool of guests on the state store. */
static int observe(void *ctx, const char *store, size_t n, struct crash_observation *obs,
                   struct bo_err *err)
{
	struct vx *v = ctx;
	int rc = vm_build(v, err);
	if (rc)
		return rc;
	const char *comma = strchr(v->fs, ',');
	struct vm_pool_cfg pc = {.kernel = v->kernel,
	                         .initrd = v->initrd,
	                         .plugin = v->plugin,
	                         .statedir = store,
	                         .workdir = v->pool,
	                         .fs = v->fsname,
	                         .mopt = comma ? comma + 1 : NULL,
	                         .jobs = v->jobs,
	                         .integrity = v->integrity,
	                         .md_drop_set = v->md_drop_set,
	                         .md_drop = v->md_drop,
	                         .progress = pool_progress,
	                         .progress_ctx = v};
	if (v->tty)
		fputc('\n', stderr);
	v->t0 = bo_now();
	return vm_pool_observe(&pc, n, obs, &v->stats, err);
}

static void print_times(const struct vx *v, const struct crash_result *r, FILE *f)
{
	const struct vm_pool_stats *s = &v->stats;
	fprintf(f,
	        "\ntime: %.1fs (enumerate %.1f, of which views and store %.1f; guests %.1f)\n"
	        "guests: %u boots, %zu states observed, %u hung; summed over guests: boot %.1f, "
	        "connect %.1f, mount %.1f, read %.1f, umount %.1f, check %.1f, other %.1f s\n",
	        r->t_total, r->t_total - r->t_observe, r->t_store, r->t_observe, s->boots,
	        s->observed, s->hung, s->boot, s->connect, s->mount, s->read, s->umount, s->check,
	        s->other);
	if (r->t_observe > 0 && s->wall > 0)
		fprintf(f, "        %.2f distinct states judged per second in all\n",
		        (double)r->judged / r->t_observe);
}

/* A recording made over dm-integrity (the guest's "integrity ..." mark) is judged
 * through it, and only then: a state opened the wrong way would read as all damaged or
 * as another disk altogether. Checked before any guest boots. */
static int check_integrity(const struct vx *v)
{
	struct bo_err err = {{0}};
	struct rec_log *log = NULL;
	if (rec_log_load(v->logpath, &log, &err))
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
	if (marked != v->integrity)
		return cli_fail(CMD, "%s was recorded %s dm-integrity: %s --integrity", v->logpath,
		                marked ? "over" : "without", marked ? "give" : "leave out");
	return 0;
}

int cmd_vmtest_explore(int argc, char **argv)
{
	struct vx v = {.files = 24, .cfg = {.max_states = VMTEST_MAX_STATES}};
	int rc = parse(&v, argc, argv);
	if (rc)
		return rc;
	/* the workload first: a bad one costs no boot */
	struct crash_workload *w;
	if ((rc = cli_vm_workload(CMD, v.workload, v.files, &w)))
		return rc;
	if ((rc = paths(&v)) == 0) {
		if (v.log)
			snprintf(v.logpath, sizeof(v.logpath), "%s", v.log);
		else
			rc = record(&v);
	}
	if (rc == 0)
		rc = check_integrity(&v);
	if (rc) {
		crash_workload_free(w);
		return rc;
	}
	struct crash_observer ob = {
	    .name = "linux", .store = v.store, .observe = observe, .ctx = &v};
	v.tty = isatty(2);
	v.t0 = bo_now();
	v.last = -1e9;
	v.cfg.wl = w;
	v.cfg.log = v.logpath;
	v.cfg.observer = &ob;
	v.cfg.keep_dir = v.keep;
	v.cfg.progress = explore_progress;
	v.cfg.progress_ctx = &v;
	struct bo_err err = {{0}};
	struct crash_result *r = NULL;
	rc = crash_explore(&v.cfg, &r, &err);
	if (v.tty)
		fputc('\n', stderr);
	crash_workload_free(w);
	if (rc)
		return cli_fail(CMD, "%s", bo_errstr(&err, rc));
	FILE *t = v.json && strcmp(v.json, "-") == 0 ? stderr : stdout;
	crash_result_print(r, t);
	print_times(&v, r, t);
	char res[PATH_MAX + 32];
	snprintf(res, sizeof(res), "%s/result.json", v.outdir);
	int status = cli_write_result(CMD, r, res);
	if (status == 0 && v.json)
		status = cli_write_result(CMD, r, v.json);
	fprintf(t, "logs, states and results: %s\n", v.outdir);
	if (status == 0 && r->judged != r->ok)
		status = 3;
	crash_result_free(r);
	return status;
}
