// SPDX-License-Identifier: GPL-2.0-or-later
/* shrink.c — two-axis shrinking (docs/shrink.md): ddmin over a failing workload's run
 * steps, then the failing state of the minimal workload that lost the fewest sectors,
 * then the latest step boundary a drop-every-write-after device (dm-flakey) still
 * fails at. The reproducer script itself is shrink_script.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/gen.h"
#include "blackout/rec.h"
#include "blackout/shrink.h"

/* ---- ddmin ------------------------------------------------------------------ */

/* Verdicts of the candidates tested so far, by the set of elements (n <= 64): ddmin
 * asks for some candidates again, and a run of the explorer is the expensive part. */
struct memo {
	uint64_t *mask;
	enum shrink_verdict *v;
	size_t n, cap;
};

static bool memo_find(const struct memo *mm, uint64_t mask, enum shrink_verdict *v)
{
	for (size_t i = 0; i < mm->n; i++)
		if (mm->mask[i] == mask) {
			*v = mm->v[i];
			return true;
		}
	return false;
}

static void memo_add(struct memo *mm, uint64_t mask, enum shrink_verdict v)
{
	if (mm->n == mm->cap) {
		size_t cap = mm->cap ? mm->cap * 2 : 32;
		uint64_t *m = realloc(mm->mask, cap * sizeof(*m));
		if (m)
			mm->mask = m;
		enum shrink_verdict *vv = m ? realloc(mm->v, cap * sizeof(*vv)) : NULL;
		if (vv)
			mm->v = vv;
		if (!m || !vv)
			return; /* a memo that cannot grow only costs runs */
		mm->cap = cap;
	}
	mm->mask[mm->n] = mask;
	mm->v[mm->n++] = v;
}

/* Tests c minus chunk [from, to) of it (complement) or only that chunk; *ran says
 * whether test ran (or the memo, when given, knew the verdict). */
static int test_part(shrink_test_fn test, void *ctx, const size_t *c, size_t n, size_t from,
                     size_t to, bool complement, size_t *tmp, size_t *m, enum shrink_verdict *v,
                     struct memo *mm, bool *ran)
{
	uint64_t mask = 0;
	*m = 0;
	for (size_t i = 0; i < n; i++)
		if ((i >= from && i < to) != complement) {
			tmp[(*m)++] = c[i];
			mask |= mm ? 1ull << c[i] : 0;
		}
	*ran = false;
	if (mm && memo_find(mm, mask, v))
		return 0;
	*ran = true;
	int rc = test(ctx, tmp, *m, v);
	if (rc == 0 && mm)
		memo_add(mm, mask, *v);
	return rc;
}

int shrink_ddmin(size_t n, shrink_test_fn test, void *ctx, size_t *out, size_t *nout,
                 unsigned *tests)
{
	size_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		out[i] = i;
	size_t len = n, gran = 2;
	unsigned t = 0;
	int rc = 0;
	struct memo memo = {0};
	struct memo *mm = n <= 64 ? &memo : NULL;
	while (rc == 0 && len >= 2) {
		if (gran > len)
			gran = len;
		bool reduced = false;
		/* each chunk alone, then each complement (Zeller and Hildebrandt 2002) */
		for (int pass = 0; pass < 2 && !reduced && rc == 0; pass++) {
			for (size_t k = 0; k < gran && !reduced; k++) {
				size_t from = k * len / gran, to = (k + 1) * len / gran;
				size_t m;
				enum shrink_verdict v;
				bool ran;
				if (pass == 1 && gran == 2)
					break; /* with two chunks a complement is the other chunk */
				rc = test_part(test, ctx, out, len, from, to, pass == 1, tmp, &m,
				               &v, mm, &ran);
				t += ran;
				if (rc)
					break;
				if (v == SHRINK_FAIL && m < len) {
					memcpy(out, tmp, m * sizeof(*tmp));
					len = m;
					gran = pass == 0 ? 2 : (gran > 2 ? gran - 1 : 2);
					reduced = true;
				}
			}
		}
		if (!reduced && rc == 0) {
			if (gran >= len)
				break;
			gran = gran * 2 < len ? gran * 2 : len;
		}
	}
	free(tmp);
	free(memo.mask);
	free(memo.v);
	*nout = len;
	if (tests)
		*tests = t;
	return rc;
}

/* ---- candidates ------------------------------------------------------------- */

/* The text of w's set-up section ("setup\n...") into a malloc'd string. */
static char *setup_text(const struct crash_workload *w)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	struct crash_workload s = *w;
	s.name = "x";
	s.summary = NULL;
	s.nrun = 0;
	crash_workload_format(&s, f);
	fclose(f);
	char *p = buf ? strstr(buf, "setup\n") : NULL;
	if (p) {
		char *e = strstr(p, "run\n");
		if (e)
			*e = 0;
		memmove(buf, p, strlen(p) + 1);
	}
	return buf;
}

static int first_text(void *ctx, const char *name, const char *text)
{
	(void)name;
	char **out = ctx;
	*out = strdup(text);
	return 1; /* one is enough */
}

/* Whether w starts from the generator's tree (so gen_check's model applies). */
static bool has_gen_setup(const struct crash_workload *w)
{
	char *text = NULL;
	struct gen_stats st;
	struct bo_err e = {{0}};
	gen_exhaustive(1, first_text, &text, &st, &e);
	struct crash_workload *g = NULL;
	bool same = false;
	if (text && crash_workload_parse(text, strlen(text), "g", &g, &e) == 0) {
		char *a = setup_text(w), *b = setup_text(g);
		same = a && b && strcmp(a, b) == 0;
		free(a);
		free(b);
	}
	crash_workload_free(g);
	free(text);
	return same;
}

/* The generator's model over w's run steps (fsync-dir is a persistence step the
 * model takes apart, so it is left out): 1 when it rejects them, 0 otherwise
 * (including steps that are not the generator's: the dry run judges those). */
static int gen_model_check(const struct crash_workload *w, char *why, size_t whylen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	struct crash_workload r = *w;
	r.name = "x";
	r.summary = NULL;
	r.nsetup = 0;
	crash_workload_format(&r, f);
	fclose(f);
	const char **steps = calloc(w->nrun + 1, sizeof(*steps));
	size_t *which = calloc(w->nrun + 1, sizeof(*which));
	int rc = buf && steps && which ? 0 : -ENOMEM;
	unsigned n = 0;
	/* one line per run step after "run" */
	char *p = buf ? strstr(buf, "run\n") : NULL;
	p = p ? p + 4 : NULL;
	for (size_t i = 0; rc == 0 && p && *p && i < w->nrun; i++) {
		char *e = strchr(p, '\n');
		if (e)
			*e = 0;
		if (w->run[i].op != CRASH_OP_FSYNC_DIR) {
			which[n] = i;
			steps[n++] = p;
		}
		p = e ? e + 1 : NULL;
	}
	if (rc == 0) {
		unsigned at;
		enum gen_reject r2;
		struct bo_err e = {{0}};
		rc = gen_check(steps, n, &at, &r2, &e);
		if (rc == 1)
			snprintf(why, whylen, "run step %zu (%s): %s", which[at] + 1, steps[at],
			         gen_reject_name(r2));
		else if (rc < 0)
			rc = 0;
	}
	free(steps);
	free(which);
	free(buf);
	return rc;
}

int shrink_valid(const struct crash_workload *wl, char *why, size_t whylen)
{
	if (has_gen_setup(wl)) {
		int rc = gen_model_check(wl, why, whylen);
		if (rc)
			return rc;
	}
	struct crash_exec *ex = calloc(wl->nrun ? wl->nrun : 1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	struct bo_err e = {{0}};
	int rc = crash_workload_dry_run(wl, ex, &e);
	free(ex);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		snprintf(why, whylen, "%s", e.msg);
		return 1;
	}
	return 0;
}

/* ---- runs ------------------------------------------------------------------- */

static int model_run(const struct shrink_cfg *cfg, const struct crash_workload *wl,
                     const char *state_id, bool map, const char *log, const char *stack,
                     const char *save_log, struct crash_result **out, struct bo_err *err)
{
	struct crash_config c = {
	    .stack = stack ? stack : cfg->stack,
	    .fs = cfg->fs,
	    .wl = wl,
	    .workload = cfg->min_file,
	    .max_states = cfg->max_states,
	    .seed = cfg->seed,
	    .state_id = state_id,
	    .map_damage = map,
	    .log = log,
	    .save_log = save_log,
	};
	return crash_explore(&c, out, err);
}

static int run_wl(const struct shrink_cfg *cfg, const struct crash_workload *wl,
                  struct crash_result **out, struct bo_err *err)
{
	if (cfg->run)
		return cfg->run(cfg->run_ctx, wl, out, err);
	return model_run(cfg, wl, NULL, false, NULL, NULL, NULL, out, err);
}

/* The failing states of r with the signature: inv broken (silently). */
static bool has_sig(const struct crash_state *s, unsigned inv, bool silent)
{
	return (s->broken & inv) && !(silent && s->detected);
}

static size_t count_sig(const struct crash_result *r, unsigned inv, bool silent)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nfail; i++)
		n += has_sig(&r->fail[i], inv, silent);
	return n;
}

struct ddctx {
	const struct shrink_cfg *cfg;
	unsigned inv;
	bool silent;
	unsigned unresolved;
	struct bo_err *err;
};

/* w with only the run steps keep[0..n) (the steps are shared, not copied). */
static struct crash_workload subset(const struct crash_workload *w, struct crash_step *steps,
                                    const size_t *keep, size_t n)
{
	struct crash_workload s = *w;
	for (size_t i = 0; i < n; i++)
		steps[i] = w->run[keep[i]];
	s.run = steps;
	s.nrun = n;
	return s;
}

static int dd_test(void *ctx, const size_t *keep, size_t n, enum shrink_verdict *v)
{
	struct ddctx *d = ctx;
	const struct crash_workload *w = d->cfg->wl;
	struct crash_step *steps = calloc(n ? n : 1, sizeof(*steps));
	if (!steps)
		return -ENOMEM;
	struct crash_workload s = subset(w, steps, keep, n);
	char why[384];
	int rc = n ? shrink_valid(&s, why, sizeof(why)) : 1;
	if (rc == 1) {
		d->unresolved++;
		*v = SHRINK_UNRESOLVED;
		free(steps);
		return 0;
	}
	struct crash_result *r = NULL;
	if (rc == 0)
		rc = run_wl(d->cfg, &s, &r, d->err);
	if (rc == 0)
		*v = count_sig(r, d->inv, d->silent) ? SHRINK_FAIL : SHRINK_PASS;
	if (d->cfg->progress && rc == 0) {
		char line[64];
		snprintf(line, sizeof(line), "%zu steps: %s", n,
		         *v == SHRINK_FAIL ? "fails" : "passes");
		d->cfg->progress(d->cfg->progress_ctx, line);
	}
	crash_result_free(r);
	free(steps);
	return rc;
}

/* An owned copy of w through its text (the format round-trips). */
static int copy_wl(const struct crash_workload *w, struct crash_workload **out, struct bo_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	crash_workload_format(w, f);
	fclose(f);
	int rc = buf ? crash_workload_parse(buf, len, w->name, out, err) : -ENOMEM;
	free(buf);
	return rc;
}

/* ---- axis 2: the state that lost the least --------------------------------- */

static int measure(const struct shrink_cfg *cfg, struct shrink_result *res,
                   const struct crash_result *r, struct bo_err *err)
{
	size_t cap = cfg->max_candidates ? cfg->max_candidates : 256;
	uint64_t best = UINT64_MAX;
	for (size_t i = 0; i < r->nfail && res->measured < cap; i++) {
		const struct crash_state *s = &r->fail[i];
		if (!has_sig(s, res->inv, res->silent))
			continue;
		struct crash_result *one = NULL;
		int rc = model_run(cfg, res->wl, s->id, true, NULL, NULL, NULL, &one, err);
		if (rc)
			return rc;
		uint64_t lost = 0, dmg = 0;
		for (size_t j = 0; j < one->ndamage; j++) {
			if (strcmp(one->damage[j].what, "lost") == 0)
				lost += one->damage[j].count;
			else
				dmg += one->damage[j].count;
		}
		crash_result_free(one);
		res->measured++;
		/* fewest sectors wrong; a torn sector counts as much as a lost one, and on
		 * a tie the earlier state (fewer steps done) is kept */
		if (lost + dmg < best) {
			best = lost + dmg;
			snprintf(res->state_id, sizeof(res->state_id), "%s", s->id);
			res->state_completed = s->completed;
			res->lost = lost;
			res->damaged = dmg;
		}
	}
	struct crash_config c = {.stack = cfg->stack,
	                         .fs = cfg->fs,
	                         .wl = res->wl,
	                         .workload = cfg->min_file,
	                         .max_states = cfg->max_states,
	                         .seed = cfg->seed,
	                         .state_id = res->state_id};
	if (crash_config_format(&c, NULL, res->rebuild, sizeof(res->rebuild)) < 0)
		return bo_errf(err, -ENAMETOOLONG, "the rebuild line is too long");
	return 0;
}

/* ---- the dm-flakey boundary ------------------------------------------------- */

/* A copy of log whose stack mark names `stack` and in which every write, discard and
 * flush from the mark `step k` on (`end` for k == nrun) is gone: what a device that
 * drops every write from that point on kept. *run_len: entries from `step 0` on. */
static int drop_after(const struct rec_log *log, size_t k, size_t nrun, const char *stack,
                      struct rec_log **out, size_t *run_len)
{
	struct rec_log *n;
	int rc = rec_log_new(rec_log_sector_size(log), rec_log_nr_sectors(log), &n);
	if (rc)
		return rc;
	char want[32], stackmark[600];
	if (k < nrun)
		snprintf(want, sizeof(want), "step %zu", k);
	else
		snprintf(want, sizeof(want), "end");
	snprintf(stackmark, sizeof(stackmark), "stack %s", stack);
	bool dropping = false;
	size_t run0 = SIZE_MAX;
	for (size_t i = 0; rc == 0 && i < rec_log_len(log); i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		struct rec_entry c = *e;
		if (e->op == REC_MARK) {
			if (strcmp(e->mark, want) == 0)
				dropping = true;
			if (strncmp(e->mark, "stack ", 6) == 0)
				c.mark = stackmark;
			if (strcmp(e->mark, "step 0") == 0)
				run0 = rec_log_len(n);
		} else if (dropping) {
			continue;
		}
		rc = rec_log_append(n, &c);
	}
	if (rc || run0 == SIZE_MAX) {
		rec_log_free(n);
		return rc ? rc : -EINVAL;
	}
	*run_len = rec_log_len(n) - run0;
	*out = n;
	return 0;
}

static int flakey_boundary(const struct shrink_cfg *cfg, struct shrink_result *res,
                           const char *saved, struct bo_err *err)
{
	struct rec_log *log;
	int rc = rec_log_load(saved, &log, err);
	if (rc)
		return rc;
	/* a device that keeps exactly what reached it: no cache, nothing torn */
	char stack[128];
	snprintf(stack, sizeof(stack), "mem(size=%" PRIu64 ",sector=%" PRIu32 ")",
	         rec_log_nr_sectors(log) * rec_log_sector_size(log), rec_log_sector_size(log));
	char path[4096 + 8];
	snprintf(path, sizeof(path), "%s.drop", saved);
	res->flakey_step = -1;
	size_t nrun = res->wl->nrun;
	for (size_t k = nrun + 1; rc == 0 && k-- > 0;) {
		struct rec_log *d;
		size_t run_len;
		if ((rc = drop_after(log, k, nrun, stack, &d, &run_len)))
			break;
		rc = rec_log_save(d, path, err);
		rec_log_free(d);
		if (rc)
			break;
		char id[64];
		snprintf(id, sizeof(id), "p%zu-0", run_len);
		struct crash_result *r = NULL;
		rc = model_run(cfg, res->wl, id, false, path, stack, NULL, &r, err);
		if (rc == 0 && count_sig(r, res->inv, res->silent)) {
			res->flakey_step = (long)k;
			snprintf(res->flakey_detail, sizeof(res->flakey_detail), "%s",
			         r->fail[0].detail);
			crash_result_free(r);
			break;
		}
		crash_result_free(r);
	}
	unlink(path);
	rec_log_free(log);
	return rc;
}

/* ---- both axes -------------------------------------------------------------- */

int shrink_workload(const struct shrink_cfg *cfg, struct shrink_result *res, struct bo_err *err)
{
	memset(res, 0, sizeof(*res));
	res->flakey_step = -1;
	const struct crash_workload *w = cfg->wl;
	res->nrun_before = w->nrun;
	struct crash_result *r = NULL;
	int rc = run_wl(cfg, w, &r, err);
	if (rc)
		return rc;
	/* the signature: the first invariant (in crash_inv order) some state breaks,
	 * silently if some state breaks it silently */
	unsigned inv = cfg->inv, seen = 0, quiet = 0;
	for (size_t i = 0; i < r->nfail; i++) {
		seen |= r->fail[i].broken;
		quiet |= r->fail[i].detected ? 0 : r->fail[i].broken;
	}
	if (!inv)
		for (int b = 0; b < CRASH_INV_N && !inv; b++)
			if (seen & (1u << b))
				inv = 1u << b;
	res->silent = cfg->silent > 0 || (cfg->silent < 0 && (quiet & inv));
	if (!inv || !count_sig(r, inv, res->silent)) {
		crash_result_free(r);
		return bo_errf(err, -ESRCH,
		               "workload %s breaks %s on this stack: nothing to shrink", w->name,
		               inv ? (res->silent ? "that invariant in no silent state"
		                                  : "no state with that invariant")
		                   : "no invariant");
	}
	crash_result_free(r);
	res->inv = inv;

	size_t *keep = malloc((w->nrun ? w->nrun : 1) * sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	struct ddctx d = {cfg, inv, res->silent, 0, err};
	size_t n;
	rc = shrink_ddmin(w->nrun, dd_test, &d, keep, &n, &res->tests);
	res->unresolved = d.unresolved;
	if (rc == 0) {
		struct crash_step *steps = calloc(n ? n : 1, sizeof(*steps));
		if (!steps)
			rc = -ENOMEM;
		if (rc == 0) {
			struct crash_workload s = subset(w, steps, keep, n);
			rc = copy_wl(&s, &res->wl, err);
		}
		free(steps);
	}
	free(keep);
	if (rc)
		return rc;

	/* axis 2 and the flakey boundary run on blackout's model, from one recording */
	const char *tmp = getenv("TMPDIR");
	char saved[4096];
	snprintf(saved, sizeof(saved), "%s/blackout-shrink-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(saved);
	if (fd < 0)
		return bo_errf(err, -errno, "a temporary file in %s: %s",
		               tmp && *tmp ? tmp : "/tmp", strerror(errno));
	close(fd);
	rc = model_run(cfg, res->wl, NULL, false, NULL, NULL, saved, &r, err);
	if (rc == 0) {
		res->failing = count_sig(r, inv, res->silent);
		if (!res->failing)
			rc = bo_errf(err, -ESRCH,
			             "the minimal workload does not fail on blackout's model (it "
			             "failed under the runner given): no state to measure");
	}
	if (rc == 0)
		rc = measure(cfg, res, r, err);
	crash_result_free(r);
	if (rc == 0)
		rc = flakey_boundary(cfg, res, saved, err);
	unlink(saved);
	return rc;
}

void shrink_result_free(struct shrink_result *res)
{
	crash_workload_free(res->wl);
	res->wl = NULL;
}
