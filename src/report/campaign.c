// SPDX-License-Identifier: GPL-2.0-or-later
/* campaign.c — runs a campaign's units (docs/gen.md, "Campaigns"): every generated
 * workload on every filesystem and kernel asked for, blackout's ext3 in-process through
 * crash_explore and the real kernel's filesystems through vm_explore, one deterministic
 * shard at a time. What a unit's states broke is kept per invariant so the report can
 * deduplicate and a merge needs no rerun (campaign_out.c). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/campaign.h"
#include "blackout/gen.h"
#include "blackout/util.h"
#include "blackout/vmexplore.h"

#define DEFAULT_MAX_STATES 100u

/* Each filesystem's stack when none is given: blackout's ext3 is quick on 16 MiB; the
 * kernel's ext4 and ext3 as vmtest runs them; mkfs.xfs wants 300 MiB. */
static const struct {
	const char *name;
	const char *stack;
} fss[] = {
    {CAMPAIGN_MODEL, "cache(size=64k,flush=honor) > disk > mem(size=16M)"},
    {"ext4", "cache(size=1M,flush=honor) > mem(size=64M)"},
    {"ext3", "cache(size=1M,flush=honor) > mem(size=64M)"},
    {"xfs", "cache(size=1M,flush=honor) > mem(size=320M)"},
    {"btrfs", "cache(size=1M,flush=honor) > mem(size=320M)"},
};
#define NFSS (sizeof fss / sizeof fss[0])
static const char *const kernels_known[] = {"6.1", "6.12"};

const char *campaign_outcome_name(enum campaign_outcome o)
{
	static const char *const n[] = {"ran", "not supported by the model", "error"};
	return (unsigned)o < CAMPAIGN_OUTCOME_N ? n[o] : "?";
}

/* A comma-separated list into at most max entries of buf (each one of known[], or any
 * when known is NULL): the count, or -EINVAL naming the entry. */
static int split(const char *what, const char *list, char buf[][16], int max,
                 const char *const *known, size_t nknown, struct bo_err *err)
{
	int n = 0;
	for (const char *s = list;; s++) {
		size_t l = strcspn(s, ",");
		bool ok = l > 0 && l < 16;
		for (size_t i = 0; ok && known && i < nknown; i++)
			if (strlen(known[i]) == l && !strncmp(known[i], s, l))
				goto found;
		if (!ok || known)
			return bo_errf(err, -EINVAL, "%s: '%.*s' is not one of %s", what, (int)l, s,
			               known == kernels_known ? "6.1, 6.12"
			                                      : "model, ext4, ext3, xfs, btrfs");
	found:
		for (int i = 0; i < n; i++)
			if (strlen(buf[i]) == l && !strncmp(buf[i], s, l))
				return bo_errf(err, -EINVAL, "%s: '%s' twice", what, buf[i]);
		if (n == max)
			return bo_errf(err, -EINVAL, "%s: more than %d", what, max);
		snprintf(buf[n++], 16, "%.*s", (int)l, s);
		s += l;
		if (!*s)
			return n;
	}
}

struct plan {
	char fs[CAMPAIGN_MAX_FS][16];
	char k[CAMPAIGN_MAX_KERNELS][16];
	int nfs, nk;
	unsigned per; /* units per workload */
};

static int plan(const struct campaign_opts *o, struct plan *p, struct bo_err *err)
{
	const char *fsn[NFSS];
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < NFSS; i++)
		fsn[i] = fss[i].name;
	if (!o->fs)
		return bo_errf(err, -EINVAL,
		               "--fs: give the filesystems (model, ext4, ext3, xfs, "
		               "btrfs)");
	if ((p->nfs = split("--fs", o->fs, p->fs, CAMPAIGN_MAX_FS, fsn, NFSS, err)) < 0)
		return p->nfs;
	if ((p->nk = split("--kernel", o->kernels ? o->kernels : "6.1", p->k, CAMPAIGN_MAX_KERNELS,
	                   kernels_known, 2, err)) < 0)
		return p->nk;
	for (int i = 0; i < p->nfs; i++)
		p->per += strcmp(p->fs[i], CAMPAIGN_MODEL) ? (unsigned)p->nk : 1;
	return 0;
}

int campaign_check(const struct campaign_opts *o, struct bo_err *err)
{
	struct plan p;
	int rc = plan(o, &p, err);
	if (rc)
		return rc;
	if (!o->len == !o->count)
		return bo_errf(err, -EINVAL, "give one of --len N or --random COUNT");
	if (o->len > GEN_MAX_EXHAUSTIVE)
		return bo_errf(err, -EINVAL, "--len: 1..%u", GEN_MAX_EXHAUSTIVE);
	if (o->nshards && o->shard >= o->nshards)
		return bo_errf(err, -EINVAL, "--shard: I/N with 0 <= I < N");
	if (!o->out)
		return bo_errf(err, -EINVAL, "--out DIR is required with --fs");
	return 0;
}

/* ---- the workloads ------------------------------------------------------------ */

struct wl {
	char name[32];
	char *text;
};
struct wls {
	struct wl *v;
	size_t n, cap;
};

static int collect(void *ctx, const char *name, const char *text)
{
	struct wls *w = ctx;
	struct wl *v = bo_grow(w->v, &w->cap, w->n + 1, sizeof(*v), 256);
	if (!v)
		return -ENOMEM;
	w->v = v;
	snprintf(v[w->n].name, sizeof v[w->n].name, "%s", name);
	if (!(v[w->n].text = strdup(text)))
		return -ENOMEM;
	w->n++;
	return 0;
}

static void wls_free(struct wls *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].text);
	free(w->v);
}

/* ---- one unit ----------------------------------------------------------------- */

static void ops_of(const struct crash_workload *w, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < w->nrun && o < len; i++)
		if (w->run[i].op != CRASH_OP_MARK)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "",
			                      crash_op_name(w->run[i].op));
}

/* A message kept on one line of printable ASCII (units.txt is line- and tab-separated,
 * and its reader takes nothing else). */
static void set_msg(struct campaign_unit *u, const char *msg)
{
	size_t l = strnlen(msg, sizeof u->msg - 1);
	memcpy(u->msg, msg, l);
	u->msg[l] = 0;
	for (char *c = u->msg; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			*c = (unsigned char)*c < 0x20 ? ' ' : '?';
}

/* The counts and, per invariant, the first failing state with its rebuild line. A
 * real-kernel state is rebuilt by vmtest with the same options. */
static void fill(struct campaign_unit *u, const struct crash_result *r,
                 const struct crash_config *cfg, bool vm, const char *kernel)
{
	u->outcome = CAMPAIGN_RAN;
	u->judged = r->judged;
	u->ok = r->ok;
	u->pruned = r->pruned;
	for (size_t i = 0; i < r->nfail; i++) {
		const struct crash_state *s = &r->fail[i];
		if (!s->broken)
			continue;
		u->failing++;
		for (unsigned inv = 0; inv < CRASH_INV_N; inv++) {
			if (!(s->broken & (1u << inv)))
				continue;
			struct campaign_hit *h = NULL;
			for (unsigned j = 0; j < u->nhit && !h; j++)
				if (u->hit[j].inv == inv)
					h = &u->hit[j];
			if (!h) {
				h = &u->hit[u->nhit++];
				memset(h, 0, sizeof(*h));
				h->inv = inv;
				snprintf(h->state, sizeof h->state, "%s", s->id);
				struct crash_config one = *cfg;
				one.state_id = s->id;
				char line[sizeof h->rebuild];
				if (crash_config_format(&one, "blackout", line, sizeof line) < 0)
					snprintf(line, sizeof line,
					         "(the rebuild line is too long)");
				const char *rest =
				    strncmp(line, "blackout explore ", 17) ? NULL : line + 17;
				bool k61 = !strcmp(kernel, "6.1");
				int n = vm && rest
				            ? snprintf(h->rebuild, sizeof h->rebuild,
				                       "blackout vmtest %s%s%s", rest,
				                       k61 ? "" : " --kernel ", k61 ? "" : kernel)
				            : snprintf(h->rebuild, sizeof h->rebuild, "%s", line);
				if (n < 0 || (size_t)n >= sizeof h->rebuild)
					snprintf(h->rebuild, sizeof h->rebuild,
					         "(the rebuild line is too long)");
			}
			h->states++;
		}
	}
	/* the hits in invariant order, whatever order the states came in */
	for (unsigned a = 1; a < u->nhit; a++)
		for (unsigned b = a; b > 0 && u->hit[b - 1].inv > u->hit[b].inv; b--) {
			struct campaign_hit t = u->hit[b];
			u->hit[b] = u->hit[b - 1];
			u->hit[b - 1] = t;
		}
}

static int write_text(const char *path, const char *text, struct bo_err *err)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0) {
		int rc = -errno;
		if (f)
			fclose(f);
		return bo_errf(err, rc, "cannot write %s: %s", path, strerror(-rc));
	}
	if (fclose(f))
		return bo_errf(err, -errno, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

static void save_result(const struct crash_result *r, const char *path)
{
	FILE *f = fopen(path, "w");
	if (f) {
		crash_result_write_json(r, f);
		fclose(f);
	}
}

/* The steps the guest kernel refused in the recording boot (its markers say "BO:FAIL I"
 * for run step I): counted and named, e.g. "the kernel refused step 1 (falloc)". */
static void refused(struct campaign_unit *u, const struct crash_workload *w, const char *out)
{
	char path[PATH_MAX + 128], line[128];
	snprintf(path, sizeof path, "%s/record/guest.markers", out);
	FILE *f = fopen(path, "r");
	size_t o = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned i;
		if (sscanf(line, "BO:FAIL %u", &i) != 1)
			continue;
		u->refused++;
		const char *op = i < w->nrun ? crash_op_name(w->run[i].op) : "?";
		if (o < sizeof u->msg)
			o += (size_t)snprintf(u->msg + o, sizeof u->msg - o, "%s%u (%s)",
			                      o ? ", " : "the kernel refused step ", i + 1, op);
	}
	if (f)
		fclose(f);
}

/* --resume: the result an earlier run of this unit left at path (res), when it is this
 * unit's: the same workload, stack, filesystem, kernel series, budget and pruning.
 * 1 and *out, or 0 (none, unreadable or another's: the unit runs again). */
static int kept(const struct campaign_opts *o, const char *path, const struct crash_config *cfg,
                bool model, const char *fs, const char *kernel, const char *name,
                struct crash_result **out)
{
	struct bo_err e = {{0}};
	struct crash_result *r = NULL;
	if (access(path, R_OK) || crash_result_load(path, &r, &e))
		return 0;
	size_t fl = strlen(fs), kl = strlen(kernel);
	bool same = !strcmp(r->stack, cfg->stack) && r->max_states == cfg->max_states &&
	            !strcmp(r->workload, name) && r->nshards <= 1 &&
	            (model ? !strcmp(r->fs, cfg->fs) && !r->kernel[0]
	                   : !strncmp(r->fs, "linux-", 6) && !strncmp(r->fs + 6, fs, fl) &&
	                         r->fs[6 + fl] == ',' && !strncmp(r->kernel, kernel, kl) &&
	                         r->kernel[kl] == '.' && r->prune_asked == o->prune);
	if (!same) {
		crash_result_free(r);
		return 0;
	}
	*out = r;
	return 1;
}

/* One unit: its outcome in u (an error is an outcome too); only what stops the whole
 * campaign (no memory) is returned. */
static int run_unit(const struct campaign_opts *o, const struct wl *w, const char *fs,
                    const char *kernel, struct campaign_unit *u)
{
	struct bo_err e = {{0}};
	struct crash_workload *cw = NULL;
	struct crash_result *r = NULL;
	bool model = !strcmp(fs, CAMPAIGN_MODEL);
	char rel[64], abs[PATH_MAX + 64], res[PATH_MAX + 64];
	snprintf(rel, sizeof rel, "workloads/%s.wl", w->name);
	snprintf(abs, sizeof abs, "%s/%s", o->out, rel);
	snprintf(res, sizeof res, "%s/runs/%s@%s%s%s", o->out, w->name, fs, model ? "" : "@",
	         model ? "" : kernel);
	const char *stack = o->stack;
	for (size_t i = 0; i < NFSS && !stack; i++)
		if (!strcmp(fss[i].name, fs))
			stack = fss[i].stack;
	struct crash_config cfg = {.stack = stack,
	                           .fs = model ? "ext3" : fs,
	                           .workload = rel,
	                           .max_states =
	                               o->max_states ? o->max_states : DEFAULT_MAX_STATES};
	int rc = crash_workload_parse(w->text, strlen(w->text), w->name, &cw, &e);
	if (rc == -ENOMEM)
		return rc;
	if (rc == 0)
		ops_of(cw, u->ops, sizeof u->ops);
	char json[sizeof res + 16];
	snprintf(json, sizeof json, "%s%s", res, model ? ".json" : "/result.json");
	u->resumed = rc == 0 && o->resume && kept(o, json, &cfg, model, fs, kernel, w->name, &r);
	if (!u->resumed && rc == 0 && model &&
	    (rc = crash_workload_model_check(cw, &e)) == -ENOTSUP) {
		u->outcome = CAMPAIGN_UNSUPPORTED;
		set_msg(u, e.msg);
		crash_workload_free(cw);
		return 0;
	}
	if (u->resumed) {
		/* its result is r */
	} else if (rc == 0 && model) {
		cfg.wl = cw;
		rc = crash_explore(&cfg, &r, &e);
		if (rc == 0)
			save_result(r, json);
	} else if (rc == 0) {
		char full[PATH_MAX];
		struct vm_explore_info info;
		struct vm_explore_opts vo = {.cfg = cfg, .jobs = 1, .out = res, .kernel = kernel};
		vo.cfg.prune = o->prune;
		vo.cfg.workload = realpath(abs, full) ? full : abs;
		rc = vm_explore(&vo, &r, &info, &e);
	}
	if (rc == -ENOMEM) {
		crash_workload_free(cw);
		return rc;
	}
	if (rc) {
		u->outcome = CAMPAIGN_ERROR;
		set_msg(u, e.msg[0] ? e.msg : strerror(-rc));
	} else {
		fill(u, r, &cfg, !model, kernel);
		if (!model)
			refused(u, cw, res);
	}
	crash_result_free(r);
	crash_workload_free(cw);
	return 0;
}

/* ---- the campaign ------------------------------------------------------------- */

static int generate(const struct campaign_opts *o, struct wls *w, struct campaign_part *p,
                    struct bo_err *err)
{
	struct gen_stats st;
	if (o->len) {
		snprintf(p->what, sizeof p->what, "seq-%u", o->len);
		return gen_exhaustive(o->len, collect, w, &st, err);
	}
	snprintf(p->what, sizeof p->what, "random %u seed %llu length %u", o->count,
	         (unsigned long long)o->seed, o->rlen);
	return gen_random(o->seed, o->count, o->rlen, collect, w, &st, err);
}

/* Runs the units of p not yet taken, in order: each one the next of *next, a counter
 * the workers of --jobs share (MAP_SHARED), so a worker whose units are slow (xfs's
 * beside btrfs's, a workload with many states) does not hold the others back. ran[j]
 * (when ran is not NULL): this process ran unit j. */
static int run_some(const struct campaign_opts *o, struct campaign_part *p, const struct wls *w,
                    const size_t *wix, size_t *next, bool *ran)
{
	for (;;) {
		size_t j = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
		if (j >= p->n)
			return 0;
		struct campaign_unit *u = &p->u[j];
		int rc = run_unit(o, &w->v[wix[j]], u->fs, u->kernel, u);
		if (rc)
			return rc;
		if (ran)
			ran[j] = true;
		if (o->progress)
			o->progress(o->progress_ctx, u, j + 1, p->n);
	}
}

static int cmp_idx(const void *key, const void *elem)
{
	uint64_t k = *(const uint64_t *)key, e = ((const struct campaign_unit *)elem)->idx;
	return k < e ? -1 : k > e;
}

/* --jobs N: N worker processes taking units from one shared counter; each writes the
 * units it ran as a part (OUT/.worker-I.txt, the format a merge reads) and the parent
 * reads them back into p by index, every unit exactly once, so the output is --jobs 1's
 * whatever the order they ran in. */
static int run_workers(const struct campaign_opts *o, struct campaign_part *p, const struct wls *w,
                       const size_t *wix, struct bo_err *err)
{
	size_t n = o->jobs < p->n ? o->jobs : p->n;
	pid_t pid[64];
	char path[PATH_MAX + 32];
	int rc = 0;
	size_t *next =
	    mmap(NULL, sizeof *next, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	bool *got = calloc(p->n, sizeof *got);
	if (next == MAP_FAILED || !got) {
		free(got);
		if (next != MAP_FAILED)
			munmap(next, sizeof *next);
		return bo_errf(err, -ENOMEM, "out of memory");
	}
	*next = 0;
	fflush(NULL);
	for (size_t i = 0; i < n; i++) {
		if ((pid[i] = fork()) < 0) {
			rc = bo_errf(err, -errno, "fork: %s", strerror(errno));
			n = i;
			break;
		}
		if (pid[i] == 0) {
			struct campaign_part mine = *p;
			bool *ran = calloc(p->n, sizeof *ran);
			int c = ran ? run_some(o, p, w, wix, next, ran) : -ENOMEM;
			/* only this worker's units go back */
			mine.u = calloc(p->n, sizeof(*mine.u));
			mine.n = 0;
			for (size_t j = 0; c == 0 && mine.u && j < p->n; j++)
				if (ran[j])
					mine.u[mine.n++] = p->u[j];
			snprintf(path, sizeof path, "%s/.worker-%zu.txt", o->out, i);
			FILE *f = c == 0 && mine.u ? fopen(path, "w") : NULL;
			c = f && campaign_part_write(&mine, f) == 0;
			c = f && fclose(f) == 0 && c;
			_exit(c ? 0 : 1);
		}
	}
	for (size_t i = 0; i < n; i++) {
		int st;
		while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR)
			;
		snprintf(path, sizeof path, "%s/.worker-%zu.txt", o->out, i);
		char *text = NULL;
		size_t len;
		struct campaign_part *q = NULL;
		struct bo_err e = {{0}};
		int r = !WIFEXITED(st) || WEXITSTATUS(st)
		            ? bo_errf(&e, -EIO, "worker %zu failed", i)
		            : bo_read_file(path, 1u << 30, &text, &len, &e);
		if (r == 0)
			r = campaign_part_read(text, len, &q, &e);
		for (size_t k = 0; r == 0 && k < q->n; k++) {
			struct campaign_unit *u =
			    bsearch(&q->u[k].idx, p->u, p->n, sizeof *p->u, cmp_idx);
			if (!u || got[u - p->u]) {
				r = bo_errf(&e, -EIO, "worker %zu's units disagree", i);
				break;
			}
			got[u - p->u] = true;
			*u = q->u[k];
		}
		if (r && !rc)
			rc = bo_errf(err, r, "%s", e.msg);
		campaign_part_free(q);
		free(text);
		unlink(path);
	}
	for (size_t j = 0; rc == 0 && j < p->n; j++)
		if (!got[j])
			rc = bo_errf(err, -EIO, "unit %" PRIu64 " was run by no worker",
			             p->u[j].idx);
	free(got);
	munmap(next, sizeof *next);
	return rc;
}

int campaign_run(const struct campaign_opts *o, struct campaign_part **out, struct bo_err *err)
{
	struct plan pl;
	int rc = campaign_check(o, err);
	if (rc || (rc = plan(o, &pl, err)))
		return rc;
	struct campaign_part *p = calloc(1, sizeof(*p));
	struct wls w = {0};
	if (!p)
		return -ENOMEM;
	char dir[PATH_MAX + 32];
	if ((rc = generate(o, &w, p, err)))
		goto fail;
	snprintf(p->fs, sizeof p->fs, "%s", o->fs);
	snprintf(p->kernels, sizeof p->kernels, "%s", o->kernels ? o->kernels : "6.1");
	snprintf(p->stack, sizeof p->stack, "%s", o->stack ? o->stack : "");
	p->max_states = o->max_states ? o->max_states : DEFAULT_MAX_STATES;
	p->prune = o->prune;
	p->total = (uint64_t)w.n * pl.per;
	p->shard = o->nshards ? o->shard : 0;
	p->nshards = o->nshards ? o->nshards : 1;
	const char *sub[] = {"", "/workloads", "/runs"};
	for (int i = 0; i < 3; i++) {
		snprintf(dir, sizeof dir, "%s%s", o->out, sub[i]);
		if ((rc = bo_mkdir_p(dir))) {
			rc = bo_errf(err, rc, "cannot create %s: %s", dir, strerror(-rc));
			goto fail;
		}
	}
	/* this shard's units, in index order, and each one's workload */
	size_t *wix = NULL, wcap = 0;
	for (size_t wi = 0; wi < w.n; wi++) {
		uint64_t first = (uint64_t)wi * pl.per;
		bool written = false;
		unsigned j = 0;
		for (int f = 0; f < pl.nfs; f++) {
			bool model = !strcmp(pl.fs[f], CAMPAIGN_MODEL);
			for (int k = 0; k < (model ? 1 : pl.nk); k++, j++) {
				uint64_t idx = first + j;
				if (idx % p->nshards != p->shard)
					continue;
				if (!written) {
					snprintf(dir, sizeof dir, "%s/workloads/%s.wl", o->out,
					         w.v[wi].name);
					if ((rc = write_text(dir, w.v[wi].text, err)))
						goto fail;
					written = true;
				}
				size_t wc = wcap;
				struct campaign_unit *u =
				    bo_grow(p->u, &p->cap, p->n + 1, sizeof(*u), 64);
				size_t *x = u ? bo_grow(wix, &wc, p->n + 1, sizeof(*x), 64) : NULL;
				if (u)
					p->u = u;
				if (!x) {
					rc = -ENOMEM;
					goto fail;
				}
				wix = x;
				wcap = wc;
				wix[p->n] = wi;
				u = &p->u[p->n++];
				memset(u, 0, sizeof(*u));
				u->idx = idx;
				snprintf(u->workload, sizeof u->workload, "%s", w.v[wi].name);
				snprintf(u->fs, sizeof u->fs, "%s", pl.fs[f]);
				snprintf(u->kernel, sizeof u->kernel, "%s", model ? "-" : pl.k[k]);
			}
		}
	}
	if (o->jobs > 1 && p->n > 1) {
		rc = run_workers(o, p, &w, wix, err);
	} else {
		size_t next = 0;
		rc = run_some(o, p, &w, wix, &next, NULL);
	}
	free(wix);
	if (rc)
		goto fail;
	if ((rc = campaign_write_dir(p, o->out, err)))
		goto fail;
	wls_free(&w);
	*out = p;
	return 0;
fail:
	wls_free(&w);
	campaign_part_free(p);
	return rc == -ENOMEM && !err->msg[0] ? bo_errf(err, rc, "out of memory") : rc;
}

/* ---- merging shard directories ------------------------------------------------ */

/* Copies the regular files of src into dst (the workloads, the model's results). */
static int copy_files(const char *src, const char *dst, struct bo_err *err)
{
	DIR *d = opendir(src);
	if (!d)
		return errno == ENOENT
		           ? 0
		           : bo_errf(err, -errno, "cannot read %s: %s", src, strerror(errno));
	int rc = bo_mkdir_p(dst);
	if (rc)
		rc = bo_errf(err, rc, "cannot create %s: %s", dst, strerror(-rc));
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		char from[PATH_MAX], to[PATH_MAX], *buf = NULL;
		size_t len;
		struct stat st;
		int a = snprintf(from, sizeof from, "%s/%s", src, e->d_name);
		int b = snprintf(to, sizeof to, "%s/%s", dst, e->d_name);
		if (a < 0 || b < 0 || (size_t)a >= sizeof from || (size_t)b >= sizeof to) {
			rc = bo_errf(err, -ENAMETOOLONG, "%s/%s: name too long", src, e->d_name);
			break;
		}
		if (e->d_name[0] == '.' || lstat(from, &st) || !S_ISREG(st.st_mode))
			continue;
		if ((rc = bo_read_file(from, 64u << 20, &buf, &len, err)) == 0) {
			FILE *f = fopen(to, "w");
			if (!f || fwrite(buf, 1, len, f) != len)
				rc = bo_errf(err, -EIO, "cannot write %s", to);
			if (f && fclose(f) && !rc)
				rc = bo_errf(err, -EIO, "cannot write %s", to);
		}
		free(buf);
	}
	closedir(d);
	return rc;
}

int campaign_merge_dirs(const char *const *dirs, size_t n, const char *out,
                        struct campaign_part **merged, struct bo_err *err)
{
	struct campaign_part **parts = calloc(n ? n : 1, sizeof(*parts));
	*merged = NULL;
	int rc = parts ? 0 : -ENOMEM;
	char path[PATH_MAX], to[PATH_MAX];
	for (size_t i = 0; i < n && !rc; i++) {
		snprintf(path, sizeof path, "%s/units.txt", dirs[i]);
		char *text = NULL;
		size_t len;
		if ((rc = bo_read_file(path, 1u << 30, &text, &len, err)) == 0) {
			struct bo_err e = {{0}};
			if ((rc = campaign_part_read(text, len, &parts[i], &e)))
				bo_errf(err, rc, "%s: %s", path, e.msg);
		}
		free(text);
	}
	if (!rc)
		rc = campaign_merge(parts, n, merged, err);
	const char *sub[] = {"workloads", "runs"};
	for (size_t i = 0; i < n && !rc; i++)
		for (int s = 0; s < 2 && !rc; s++) {
			snprintf(path, sizeof path, "%s/%s", dirs[i], sub[s]);
			snprintf(to, sizeof to, "%s/%s", out, sub[s]);
			rc = copy_files(path, to, err);
		}
	if (!rc)
		rc = campaign_write_dir(*merged, out, err);
	if (rc && *merged) {
		campaign_part_free(*merged);
		*merged = NULL;
	}
	for (size_t i = 0; parts && i < n; i++)
		campaign_part_free(parts[i]);
	free(parts);
	return rc == -ENOMEM && !err->msg[0] ? bo_errf(err, rc, "out of memory") : rc;
}
