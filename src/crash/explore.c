// SPDX-License-Identifier: GPL-2.0-or-later
/* explore.c — the crash explorer's engine: mkfs + setup on a stack over COW
 * overlays, record the workload once, then walk the log with one live stack,
 * enumerate (or sample) every power-cut outcome at every cut point, and count the
 * outcome of each distinct state. Observing a state is observe.c's, judging it
 * judge.c's, dedup/shards dedup.c's; output formats are in result.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "crash/crash_int.h"

struct cut {
	size_t pos;
	bool inflight;
	size_t completed;
	uint64_t outcomes;
	double log2;
	uint64_t quota;
};

struct explorer {
	const struct crash_config *cfg;
	struct crash_fscfg fsc;
	const struct crash_oracle *oracle;
	struct crash_result *r;
	struct crash_seen seen;
	struct bo_err *err;
	const struct cut *cut; /* the cut being enumerated */
	uint64_t k;            /* outcome ordinal within the cut */
	bool sampled;
	uint64_t want_k; /* --state: the one outcome to judge */
	bool only_one;
	uint64_t total_planned;
	double t0, last_progress;
	struct bdev *live, *live0;       /* the stack at the cut, and at recording start */
	int armed;                       /* id of the --arm rule, or -1 */
	const struct blk_inflight *infl; /* the write in flight at the cut, or NULL */
	/* an outside observer: the states stored, in enumeration order, to judge once
	 * the observer has seen them */
	struct crash_store store;
	struct crash_state *stored;
	size_t nstored, stored_cap;
	/* cfg->prune (prune.c): per stored state its ordinal and, for a pruned state
	 * judged anyway, its representative's index in stored (-1: none) */
	struct crash_prune prune;
	uint64_t *stored_ord;
	long *check_of;
	size_t ord_cap, chk_cap;
};

static void state_id(char *buf, size_t len, const struct cut *c, bool sampled, uint64_t k)
{
	snprintf(buf, len, "p%zu%s-%s%" PRIu64, c->pos, c->inflight ? "w" : "", sampled ? "s" : "",
	         k);
}

static void progress(struct explorer *ex, bool force)
{
	if (!ex->cfg->progress)
		return;
	double now = bo_now();
	if (!force && now - ex->last_progress < 0.25)
		return;
	ex->last_progress = now;
	struct crash_progress p = {ex->r->built, ex->total_planned, ex->r->nfail, now - ex->t0};
	ex->cfg->progress(ex->cfg->progress_ctx, &p);
}

/* Observes one state with blackout's fs and judges what its tree says, then frees the
 * tree: the checkers read the device, and judging again after e2fsck needs only the
 * tree's half of the verdict (kept in tree). Each checker runs only when what it would
 * add can change the outcome or is asked for: the own fsck after a clean unmount, the
 * boot-time scrub when a checker found damage. */
static int observe_state(struct explorer *ex, struct bdev *state, const struct crash_promises *p,
                         struct crash_observation *obs, struct crash_outcome *tree)
{
	struct crash_result *r = ex->r;
	struct crash_obs_times t = {0};
	int rc = crash_observe_fs(state, &ex->fsc.mo, obs, &t);
	r->t_recover += t.mount;
	r->t_oracle += t.read;
	if (rc)
		return rc;
	double t0 = bo_now();
	rc = crash_judge_tree(p, obs, tree);
	crash_observation_free(obs);
	r->t_oracle += bo_now() - t0;
	if (rc || obs->mount_rc || obs->unmount_rc || ex->cfg->no_fsck)
		return rc;
	t0 = bo_now();
	crash_observe_check(ex->cfg->fsck ? ex->cfg->fsck : crash_fsck_own, ex->cfg->fsck_ctx,
	                    state, &obs->check[CRASH_CHECK_FSCK]);
	const struct crash_check *c = &obs->check[CRASH_CHECK_FSCK];
	if (ex->fsc.boot == CRASH_BOOT_VERIFY && c->rc == 0 && !c->clean)
		crash_observe_check(crash_fsck_verify, NULL, state,
		                    &obs->check[CRASH_CHECK_VERIFY]);
	r->t_fsck += bo_now() - t0;
	return 0;
}

/* e2fsck beside the own fsck, on failing states and a sample of the ok ones (or as
 * the only consistency judge with no_fsck); then the checkers judged again onto the
 * tree's half of the verdict. */
static void second_opinion(struct explorer *ex, struct bdev *state, uint64_t first,
                           const struct crash_promises *p, struct crash_observation *obs,
                           const struct crash_outcome *tree, struct crash_outcome *out)
{
	bool sample_ok = (crash_mix64(first ^ 0x5bd1e995) & 63) == 0;
	if (!ex->cfg->e2fsck || obs->mount_rc || obs->unmount_rc ||
	    !(out->broken || sample_ok || ex->cfg->no_fsck))
		return;
	double t0 = bo_now();
	struct crash_check *e2 = &obs->check[CRASH_CHECK_E2FSCK];
	crash_observe_check(crash_fsck_e2fsck, NULL, state, e2);
	if (e2->rc == 0)
		ex->r->e2fsck_runs++;
	if (ex->fsc.boot == CRASH_BOOT_VERIFY && !p->fsck_judges && e2->rc == 0 && !e2->clean)
		crash_observe_check(crash_fsck_verify, NULL, state,
		                    &obs->check[CRASH_CHECK_VERIFY]);
	ex->r->t_fsck += bo_now() - t0;
	*out = *tree;
	crash_judge_checks(p, obs, out);
}

/* A distinct state for the outside observer: into the store (and --keep), to be
 * judged after the walk. */
static int store_state(struct explorer *ex, const struct crash_state *s, uint64_t ordinal,
                       long check_of)
{
	struct crash_state *ns = bo_grow(ex->stored, &ex->stored_cap, ex->nstored, sizeof(*ns), 64);
	if (!ns)
		return -ENOMEM;
	ex->stored = ns;
	if (ex->cfg->prune) {
		uint64_t *no = bo_grow(ex->stored_ord, &ex->ord_cap, ex->nstored, sizeof(*no), 64);
		if (no)
			ex->stored_ord = no;
		long *nc =
		    no ? bo_grow(ex->check_of, &ex->chk_cap, ex->nstored, sizeof(*nc), 64) : NULL;
		if (!nc)
			return -ENOMEM;
		ex->check_of = nc;
		ex->stored_ord[ex->nstored] = ordinal;
		ex->check_of[ex->nstored] = check_of;
	}
	size_t n;
	int rc = crash_store_add(&ex->store, s->id, s->completed, &n, ex->err);
	if (rc == 0 && ex->only_one && ex->cfg->keep_dir)
		rc = crash_store_keep(&ex->store, ex->cfg->keep_dir, s->id, ex->err);
	if (rc == 0)
		ex->stored[ex->nstored++] = *s;
	progress(ex, false);
	return rc;
}

/* Hands the stored states to the outside observer and judges each observation, in
 * enumeration order (so shards and runs compare equal). The observer's filesystem
 * trusts its journal at boot and its checker (e2fsck's slot) judges consistency. */
static int judge_stored(struct explorer *ex)
{
	const struct crash_observer *ob = ex->cfg->observer;
	struct crash_result *r = ex->r;
	int rc = crash_store_finish(&ex->store, ex->err);
	if (rc || ex->nstored == 0)
		return rc;
	struct crash_observation *obs = calloc(ex->nstored, sizeof(*obs));
	if (!obs)
		return -ENOMEM;
	double t0 = bo_now();
	rc = ob->observe(ob->ctx, ob->store, ex->nstored, obs, ex->err);
	r->t_observe = bo_now() - t0;
	struct crash_outcome *outs = ex->cfg->prune ? calloc(ex->nstored, sizeof(*outs)) : NULL;
	if (ex->cfg->prune && !outs)
		rc = -ENOMEM;
	for (size_t i = 0; i < ex->nstored; i++) {
		struct crash_state *s = &ex->stored[i];
		struct crash_promises p = {
		    .oracle = ex->oracle,
		    .completed = s->completed,
		    /* a kernel's filesystem is also held to its own stronger promise */
		    .flags = (ex->fsc.writeback ? CRASH_ORACLE_WRITEBACK : 0) |
		             (crash_oracle_fs_promises(ex->cfg->fs) ? CRASH_ORACLE_FS_PROMISE : 0),
		    .boot = ex->fsc.boot,
		    .fsck_judges = false,
		};
		struct crash_outcome o;
		int jrc = rc ? rc : crash_judge(&p, &obs[i], &o);
		if (rc == 0 && jrc)
			rc = bo_errf(ex->err, jrc, "judging state %s: %s", s->id, strerror(-jrc));
		if (rc == 0 && outs)
			outs[i] = o;
		if (rc == 0 && outs && ex->check_of[i] >= 0) {
			/* a pruned state judged anyway: counted as pruned, compared, not added */
			const struct crash_outcome *rep = &outs[ex->check_of[i]];
			r->prune_checked++;
			r->prune_mismatch += o.broken != rep->broken || o.allowed != rep->allowed ||
			                     o.detected != rep->detected || o.md != rep->md;
		} else if (rc == 0) {
			const struct crash_check *e2 = &obs[i].check[CRASH_CHECK_E2FSCK];
			r->e2fsck_runs += e2->ran && e2->rc == 0;
			rc = crash_result_add(r, s, &o);
		}
		crash_observation_free(&obs[i]);
	}
	free(outs);
	free(obs);
	return rc;
}

/* The stored index of the state enumerated as ordinal, or -1 (another shard's). */
static long stored_index(const struct explorer *ex, uint64_t ordinal)
{
	size_t lo = 0, hi = ex->nstored;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ex->stored_ord[mid] < ordinal)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ex->nstored && ex->stored_ord[lo] == ordinal && ex->check_of[lo] < 0 ? (long)lo
	                                                                                 : -1;
}

/* cfg->prune: whether the state just viewed (a new distinct view) is one a judged
 * state stands for after journal replay. *check_of: judge it anyway, against stored
 * state *check_of (-1: not). A pruned state is counted by the shard that judges its
 * representative, so shards sum to the whole run. */
static int prune_state(struct explorer *ex, size_t completed, uint64_t ordinal, bool *pruned,
                       long *check_of)
{
	struct crash_result *r = ex->r;
	uint64_t key[2], first;
	bool keyed, found;
	*pruned = false;
	*check_of = -1;
	int rc = crash_prune_key(&ex->prune, ex->store.base, ex->store.view, ex->store.blocks,
	                         ex->store.nblocks, completed, key, &keyed);
	if (rc == 0 && keyed)
		rc = crash_prune_seen(&ex->prune, key, ordinal, &found, &first);
	if (rc)
		return bo_errf(ex->err, rc, "pruning: replaying a state's journal: %s",
		               strerror(-rc));
	if (!keyed || !found)
		return 0;
	*pruned = true;
	if (!crash_shard_mine(first, ex->cfg->shard, ex->cfg->nshards))
		return 0;
	unsigned every = ex->cfg->prune_check;
	if (every && crash_mix64(ordinal ^ 0x2545f4914f6cdd1dull) % every == 0)
		*check_of = stored_index(ex, first);
	r->pruned++; /* judged anyway or not, it is one the rule left out */
	return 0;
}

/* Builds, observes, judges and counts one crash state (already cut and powered back
 * on), unless it is a duplicate or another shard's. */
static int judge_state(struct explorer *ex, struct bdev *state)
{
	struct crash_result *r = ex->r;
	const struct cut *c = ex->cut;
	uint64_t k = ex->k++;
	if (ex->only_one && k != ex->want_k)
		return 0;
	double t = bo_now();
	uint64_t key;
	int rc = 0;
	if (ex->cfg->observer)
		rc = crash_store_view(&ex->store, state, c->completed, &key, ex->err);
	else
		key = crash_state_key(state, c->completed, r->built);
	bool dup = false;
	uint64_t first;
	if (rc == 0 && ex->cfg->observer)
		rc = crash_store_seen(&ex->store, &ex->seen, key, c->completed, r->built, &dup,
		                      &first, ex->err);
	else if (rc == 0)
		rc = crash_seen_add(&ex->seen, key, state, c->completed, r->built, &dup, &first);
	r->built++;
	if (rc)
		return rc;
	bool pruned = false;
	long check_of = -1;
	if (!dup && ex->cfg->observer && ex->prune.on &&
	    (rc = prune_state(ex, c->completed, r->built - 1, &pruned, &check_of)))
		return rc;
	if (!crash_shard_mine(first, ex->cfg->shard, ex->cfg->nshards) || dup ||
	    (pruned && check_of < 0)) {
		r->duplicates += dup && crash_shard_mine(first, ex->cfg->shard, ex->cfg->nshards);
		r->t_construct += bo_now() - t;
		return 0;
	}
	r->judged += !pruned;
	struct crash_state s = {0};
	state_id(s.id, sizeof(s.id), c, ex->sampled, k);
	s.pos = c->pos;
	s.inflight = c->inflight;
	s.completed = c->completed;
	if (ex->cfg->observer) {
		r->t_construct += bo_now() - t;
		return store_state(ex, &s, r->built - 1, check_of);
	}
	struct bdev *raw = NULL;
	if (ex->cfg->map_damage && ex->only_one &&
	    (rc = crash_map_damage(r, state, ex->live, ex->live0, ex->infl, &ex->fsc.mo, ex->err)))
		return rc;
	if (ex->cfg->keep_dir && (rc = blk_clone(state, &raw)))
		return bo_errf(ex->err, rc, "cloning a state to keep it: %s",
		               bo_errstr(&state->err, rc));
	r->t_construct += bo_now() - t;

	/* an armed fault is transient (a flaky link, not a dying disk): the power cut
	 * ends it, and recovery runs on a device that works */
	if (ex->armed >= 0) {
		struct bdev *fault = dev_stack_find_cap(state, DEV_CAP_FAULT_RULES, 0);
		if (fault)
			dev_fault_disarm(fault, ex->armed);
	}
	struct crash_promises p = {.oracle = ex->oracle,
	                           .completed = c->completed,
	                           .flags = ex->fsc.writeback ? CRASH_ORACLE_WRITEBACK : 0,
	                           .boot = ex->fsc.boot,
	                           .fsck_judges = !ex->cfg->no_fsck};
	struct crash_observation obs;
	struct crash_outcome tree, o;
	rc = observe_state(ex, state, &p, &obs, &tree);
	if (rc == 0) {
		o = tree;
		crash_judge_checks(&p, &obs, &o);
		second_opinion(ex, state, first, &p, &obs, &tree, &o);
	}
	if (rc) {
		blk_close(raw);
		return bo_errf(ex->err, rc, "judging state %s: %s", s.id, strerror(-rc));
	}
	if ((o.broken || ex->only_one) && ex->cfg->keep_dir)
		rc = crash_keep_state(ex->cfg, raw, s.id, ex->err);
	blk_close(raw);
	if (rc == 0)
		rc = crash_result_add(r, &s, &o);
	progress(ex, false);
	return rc;
}

static int foreach_fn(void *ctx, struct bdev *state, const struct blk_chooser_list *decisions)
{
	(void)decisions;
	return judge_state(ctx, state);
}

/* The states of one cut: every outcome in DFS order, or `quota` seeded samples. */
static int explore_cut(struct explorer *ex, struct bdev *live, const struct blk_inflight *infl,
                       const struct cut *c, bool sampled)
{
	ex->cut = c;
	ex->k = 0;
	ex->sampled = sampled;
	ex->live = live;
	ex->infl = infl;
	if (!sampled) {
		bool complete = false;
		uint64_t max = ex->only_one ? ex->want_k + 1 : c->quota;
		int64_t n = blk_cut_foreach(live, infl, max, foreach_fn, ex, &complete);
		if (n < 0)
			return n == -E2BIG ? bo_errf(ex->err, (int)n, "%s", live->err.msg) : (int)n;
		/* The count is taken along the all-zero path. Under a volatile model
		 * another one (cache > cache) asks other decisions when the upper one
		 * lands something; a walk that met its quota with outcomes left means the
		 * run is not exhaustive, whatever the count said. */
		if (!complete && !ex->only_one)
			ex->r->exhaustive = false;
		return 0;
	}
	uint64_t from = ex->only_one ? ex->want_k : 0;
	uint64_t to = ex->only_one ? ex->want_k + 1 : c->quota;
	for (uint64_t j = from; j < to; j++) {
		struct blk_chooser_random ch;
		blk_chooser_random_init(&ch, crash_mix64(ex->cfg->seed ^
		                                         crash_mix64(c->pos * 2 + c->inflight) ^
		                                         crash_mix64(j + 0x1234567)));
		struct bdev *st;
		int rc = blk_clone(live, &st);
		if (rc)
			return bo_errf(ex->err, rc, "clone: %s", bo_errstr(&live->err, rc));
		rc = blk_power_cut(st, &ch.base, infl);
		if (rc == 0)
			rc = blk_power_restore(st);
		if (rc == 0) {
			ex->k = j;
			rc = judge_state(ex, st);
		} else {
			rc = bo_errf(ex->err, rc, "power cut: %s", bo_errstr(&st->err, rc));
		}
		blk_close(st);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_u64p(const void *a, const void *b)
{
	uint64_t x = **(uint64_t *const *)a, y = **(uint64_t *const *)b;
	return x < y ? -1 : x > y;
}

/* Shares `budget` among the cuts: small cuts get every outcome, the rest an
 * equal share of what is left (at least one each). With more cuts than the budget,
 * `budget` cuts evenly spread over the recording (the last one always) get one
 * state each and the others none: --max-states is a bound, not a hint. */
static void plan(struct cut *cuts, size_t n, uint64_t budget)
{
	if (budget && n > budget) {
		for (size_t i = 0; i < n; i++)
			cuts[i].quota = (uint64_t)(((unsigned __int128)(i + 1) * budget) / n) >
			                (uint64_t)(((unsigned __int128)i * budget) / n);
		return;
	}
	uint64_t **ord = malloc(n * sizeof(*ord));
	uint64_t *q = malloc(n * sizeof(*q));
	if (!ord || !q) {
		for (size_t i = 0; i < n; i++)
			cuts[i].quota = cuts[i].outcomes < 1 ? 1 : 1;
		free(ord);
		free(q);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		q[i] = cuts[i].outcomes;
		ord[i] = &q[i];
	}
	qsort(ord, n, sizeof(*ord), cmp_u64p);
	uint64_t left = budget;
	for (size_t i = 0; i < n; i++) {
		uint64_t share = left / (n - i);
		if (share < 1)
			share = 1;
		uint64_t take = *ord[i] < share ? *ord[i] : share;
		*ord[i] = take; /* reuse: q now holds the quota */
		left = left > take ? left - take : 0;
	}
	for (size_t i = 0; i < n; i++)
		cuts[i].quota = q[i];
	free(ord);
	free(q);
}

static int parse_state_id(const char *id, size_t *pos, bool *w, bool *s, uint64_t *k)
{
	char *end;
	if (id[0] != 'p')
		return -EINVAL;
	errno = 0;
	unsigned long long p = strtoull(id + 1, &end, 10);
	if (end == id + 1 || errno)
		return -EINVAL;
	*w = *end == 'w';
	if (*w)
		end++;
	if (*end++ != '-')
		return -EINVAL;
	*s = *end == 's';
	if (*s)
		end++;
	const char *ks = end;
	unsigned long long kk = strtoull(ks, &end, 10);
	if (end == ks || *end || errno)
		return -EINVAL;
	*pos = (size_t)p;
	*k = kk;
	return 0;
}

/* The recorded run: entries [run0, len) of log (a saved or loaded log holds the
 * set-up before them). */
static void record_io(struct crash_result *r, const struct rec_log *log, size_t run0)
{
	size_t n = rec_log_len(log) - run0;
	r->io = calloc(n ? n : 1, sizeof(*r->io));
	if (!r->io)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct rec_entry *e = rec_log_get(log, run0 + i);
		struct crash_io *o = &r->io[r->nio++];
		snprintf(o->op, sizeof(o->op), "%s", rec_op_name(e->op));
		o->lba = e->lba + rec_log_dev_start(log, e->dev);
		o->count = e->count;
		o->fua = e->op == REC_WRITE && (e->flags & BLK_FUA);
		r->write_errors += e->op == REC_WRITE && e->result != 0;
		if (e->op == REC_MARK)
			snprintf(o->mark, sizeof(o->mark), "%s", e->mark);
	}
}

static size_t completed_at(const struct rec_log *log, size_t run0, size_t pos)
{
	size_t m = 0;
	for (size_t i = run0; i < run0 + pos; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->op == REC_MARK &&
		    (strncmp(e->mark, "step ", 5) == 0 || strcmp(e->mark, "end") == 0))
			m++;
	}
	return m ? m - 1 : 0;
}

/* Replays one recorded entry onto the live stack exactly as it went the first time.
 * An operation that failed when recorded (an armed fault rule) is issued again and
 * must fail again: fault rules count the operations they see, so skipping it would
 * make the live stack's rules drift from what the recording saw. */
static int replay_as_recorded(const struct rec_log *log, const struct rec_entry *e,
                              struct bdev *live)
{
	if (e->op == REC_MARK || e->op == REC_READ)
		return 0;
	if (e->result == 0)
		return rec_apply_log(log, e, live);
	int rc;
	/* a several-device log: the member's LBA in the concat, its flush to it alone */
	uint64_t lba = e->lba + rec_log_dev_start(log, e->dev);
	struct bdev *ft = rec_flush_target(log, e, live);
	switch (e->op) {
	case REC_WRITE: rc = blk_write(live, lba, e->count, e->data, e->flags); break;
	case REC_FLUSH: rc = ft ? blk_flush(ft) : -EINVAL; break;
	case REC_DISCARD: rc = blk_discard(live, lba, e->count); break;
	default: return 0;
	}
	return rc != 0 ? 0
	               : bo_errf(&live->err, -EPROTO,
	                         "a %s that failed when recorded (%d) succeeded on replay",
	                         rec_op_name(e->op), e->result);
}

/* The recording: the stack with the filesystem and set-up on it, the log of the run. */
struct recording {
	struct dev_cow_leaves leaves;
	struct bdev *stack, *recdev, *live0;
	struct rec_log *log;
	size_t run0; /* the run's first entry (its `step 0` mark) */
	struct crash_oracle *oracle;
	struct crash_exec *exec;
};

static size_t run_len(const struct recording *rr)
{
	return rec_log_len(rr->log) - rr->run0;
}

static const struct rec_entry *run_get(const struct recording *rr, size_t p)
{
	return rec_log_get(rr->log, rr->run0 + p);
}

static void recording_free(struct recording *rr)
{
	blk_close(rr->live0);
	blk_close(rr->recdev);
	blk_close(rr->stack);
	dev_cow_leaves_close(&rr->leaves);
	rec_log_free(rr->log);
	crash_oracle_free(rr->oracle);
	free(rr->exec);
}

/* Faults that begin once the set-up is on the media (NO-WRITE-ERRORS). */
static int arm(struct explorer *ex, struct bdev *stack)
{
	const char *rule = ex->cfg->arm;
	if (!rule || !rule[0])
		return 0;
	struct bdev *fault = dev_stack_find_cap(stack, DEV_CAP_FAULT_RULES, 0);
	if (!fault)
		return bo_errf(ex->err, -EINVAL, "--arm: the stack has no fault layer");
	struct bo_err e2 = {{0}};
	int rc = dev_fault_arm(fault, rule, &e2);
	if (rc < 0)
		return bo_errf(ex->err, rc, "--arm: %s", bo_errstr(&e2, rc));
	ex->armed = rc;
	return 0;
}

/* The marks a recording begins with (docs/realkernel.md, section 1). */
static int mark_names(const struct crash_config *cfg, struct rec_log *log)
{
	char m[REC_MARK_MAX + 1];
	const char *wl = cfg->wl->name; /* as a guest marks it */
	int rc = 0;
	if (snprintf(m, sizeof(m), "stack %s", cfg->stack) >= (int)sizeof(m))
		return -ENAMETOOLONG;
	if ((rc = rec_log_mark(log, m)))
		return rc;
	if (snprintf(m, sizeof(m), "fs %s", cfg->fs) >= (int)sizeof(m))
		return -ENAMETOOLONG;
	if ((rc = rec_log_mark(log, m)))
		return rc;
	if (snprintf(m, sizeof(m), "workload %s", wl) >= (int)sizeof(m))
		return -ENAMETOOLONG;
	return rec_log_mark(log, m);
}

/* The set-up is on the stack: the bystanders were synced "long ago", so let it sit
 * idle until even a drive that ignores flushes has written them (blk.h, settle) — what
 * it loses is then the workload's, which is what a lying cache is judged on — arm the
 * fault rule, and clone the live stack every cut starts from. */
static int settle_and_arm(struct explorer *ex, struct recording *rr)
{
	int rc = blk_settle(rr->stack);
	if (rc)
		return bo_errf(ex->err, rc, "letting the stack settle after setup: %s",
		               bo_errstr(&rr->stack->err, rc));
	if ((rc = arm(ex, rr->stack)))
		return rc;
	if ((rc = blk_clone(rr->stack, &rr->live0)))
		return bo_errf(ex->err, rc, "the stack cannot be cloned (%s): %s", rr->stack->name,
		               bo_errstr(&rr->stack->err, rc));
	return 0;
}

/* mkfs and the workload's set-up on the stack, synced and settled, then the run
 * recorded; fs is left mounted on rr->recdev for the caller to abandon. */
static int set_up(struct explorer *ex, struct recording *rr, struct fs **fs)
{
	const struct crash_config *cfg = ex->cfg;
	struct dev_open_opts oo = {.wrap_leaf = dev_wrap_cow, .ctx = &rr->leaves};
	struct bo_err e2 = {{0}};
	struct bo_err *err = ex->err;
	int rc = dev_stack_open_text(cfg->stack, &oo, &rr->stack, err);
	if (rc)
		return rc;
	if ((rc = rec_log_new(rr->stack->sector_size, rr->stack->nr_sectors, &rr->log)) ||
	    (rc = rec_open(rr->stack, rr->log, 0, &rr->recdev)))
		return rc;
	/* a saved recording holds the set-up too, named as the plugin names a guest's */
	rec_pause(rr->recdev, !cfg->save_log);
	if (cfg->save_log && (rc = mark_names(cfg, rr->log)))
		return bo_errf(err, rc, "--save-log: the marks naming the run: %s", strerror(-rc));
	if ((rc = fs_mkfs(rr->recdev, &ex->fsc.mk, &e2)))
		/* mkfs's own messages begin "mkfs: " already */
		return e2.msg[0] ? bo_errf(err, rc, "%s", e2.msg)
		                 : bo_errf(err, rc, "mkfs on the stack: %s", bo_errstr(&e2, rc));
	if ((rc = fs_mount(rr->recdev, &ex->fsc.mo, fs, &e2)))
		return bo_errf(err, rc, "mounting the new filesystem: %s", bo_errstr(&e2, rc));
	struct crash_exec sx;
	for (size_t i = 0; i < cfg->wl->nsetup; i++) {
		const struct crash_step *s = &cfg->wl->setup[i];
		rc = crash_run_step(*fs, s, NULL, &sx);
		if (rc == -ENOSYS && !crash_model_supports(s->op))
			return crash_workload_model_check(cfg->wl, err); /* names the step */
		if (rc)
			return bo_errf(err, rc, "setup, line %u (%s %s): %s", s->line,
			               crash_op_name(s->op), s->path, bo_errstr(fs_err(*fs), rc));
	}
	if ((rc = fs_sync(*fs)) || (rc = blk_flush(rr->recdev)))
		return bo_errf(err, rc, "sync after setup: %s", bo_errstr(fs_err(*fs), rc));
	return settle_and_arm(ex, rr);
}

/* Runs the workload once over the recorder, a mark before each step; the oracle
 * models the steps as they ran. */
static int record(struct explorer *ex, struct recording *rr, struct fs *fs)
{
	const struct crash_workload *wl = ex->cfg->wl;
	const char *save = ex->cfg->save_log;
	double trec = bo_now();
	rec_pause(rr->recdev, false);
	rr->run0 = rec_log_len(rr->log);
	rr->exec = calloc(wl->nrun ? wl->nrun : 1, sizeof(*rr->exec));
	if (!rr->exec)
		return -ENOMEM;
	int rc;
	for (size_t i = 0; i < wl->nrun; i++) {
		char m[32];
		snprintf(m, sizeof(m), "step %zu", i);
		if ((rc = rec_log_mark(rr->log, m)))
			return rc;
		crash_run_step(fs, &wl->run[i], rr->log, &rr->exec[i]);
		snprintf(m, sizeof(m), "fail %zu", i);
		if (save && rr->exec[i].rc && (rc = rec_log_mark(rr->log, m)))
			return rc;
	}
	if ((rc = rec_log_mark(rr->log, "end")))
		return rc;
	rec_pause(rr->recdev, true);
	ex->r->t_record = bo_now() - trec;
	record_io(ex->r, rr->log, rr->run0);
	if (save && (rc = rec_log_save(rr->log, save, ex->err)))
		return rc;
	if ((rc = crash_oracle_new(wl, rr->exec, &rr->oracle, ex->err)))
		return rc;
	ex->oracle = rr->oracle;
	return 0;
}

/* The recording from a log: its set-up replayed on a fresh stack over COW leaves
 * (as set_up makes it), settled; the oracle from the workload's dry run. */
static int set_up_from_log(struct explorer *ex, struct recording *rr)
{
	const struct crash_config *cfg = ex->cfg;
	const struct crash_workload *wl = cfg->wl;
	struct dev_open_opts oo = {.wrap_leaf = dev_wrap_cow, .ctx = &rr->leaves};
	struct bo_err e2 = {{0}};
	struct bo_err *err = ex->err;
	int rc = dev_stack_open_text(cfg->stack, &oo, &rr->stack, err);
	if (rc)
		return rc;
	rr->exec = calloc(wl->nrun ? wl->nrun : 1, sizeof(*rr->exec));
	if (!rr->exec)
		return -ENOMEM;
	if ((rc = crash_log_open(cfg, rr->stack, &rr->log, &rr->run0, rr->exec, err)))
		return rc;
	if ((rc = rec_replay(rr->log, rr->run0, rr->stack, &e2)))
		return bo_errf(err, rc, "%s: replaying the set-up: %s", cfg->log,
		               bo_errstr(&e2, rc));
	if ((rc = settle_and_arm(ex, rr)))
		return rc;
	record_io(ex->r, rr->log, rr->run0);
	if ((rc = crash_oracle_new(wl, rr->exec, &rr->oracle, err)))
		return rc;
	ex->oracle = rr->oracle;
	return 0;
}

/* The cut points (after each entry, during each write) and the outcomes each allows:
 * cuts[0..*ncuts), and their sum in *total. */
static int measure_cuts(struct explorer *ex, const struct recording *rr, struct cut *cuts,
                        size_t *ncuts, double *total)
{
	struct bdev *live;
	int rc = blk_clone(rr->live0, &live);
	if (rc)
		return rc;
	size_t n = run_len(rr);
	*total = 0;
	for (size_t p = 0; p <= n && rc == 0; p++) {
		const struct rec_entry *e = p < n ? run_get(rr, p) : NULL;
		/* a mark or a read changes nothing: no cut of its own */
		bool still = e && (e->op == REC_MARK || e->op == REC_READ);
		for (int w = 0; w < 2 && rc == 0 && !still; w++) {
			if (w && !(e && e->op == REC_WRITE && e->result == 0))
				continue;
			struct blk_inflight in = {0};
			if (w)
				in = (struct blk_inflight){e->lba +
				                               rec_log_dev_start(rr->log, e->dev),
				                           e->count, e->flags, e->data};
			struct dev_cut_space sp;
			if ((rc = dev_cut_space(live, w ? &in : NULL, &sp))) {
				bo_errf(ex->err, rc, "outcomes of a cut: %s",
				        bo_errstr(&live->err, rc));
				break;
			}
			struct cut *c = &cuts[(*ncuts)++];
			c->pos = p;
			c->inflight = w;
			c->completed = completed_at(rr->log, rr->run0, p);
			c->outcomes = sp.outcomes ? sp.outcomes : 1;
			c->log2 = sp.log2;
			*total +=
			    sp.outcomes == UINT64_MAX ? pow(2.0, sp.log2) : (double)sp.outcomes;
		}
		if (rc == 0 && e && (rc = replay_as_recorded(rr->log, e, live)))
			bo_errf(ex->err, rc, "replaying entry %zu: %s", p,
			        bo_errstr(&live->err, rc));
	}
	blk_close(live);
	return rc;
}

/* The state --state names, if any. */
struct wanted {
	size_t pos;
	bool inflight, sampled;
};

/* Walks the log again with one live stack, cutting at every point. */
static int walk_cuts(struct explorer *ex, const struct recording *rr, const struct cut *cuts,
                     size_t ncuts, const struct wanted *want)
{
	struct bdev *live;
	int rc = blk_clone(rr->live0, &live);
	if (rc)
		return rc;
	ex->live0 = rr->live0;
	size_t n = run_len(rr), ci = 0;
	for (size_t p = 0; p <= n && ci < ncuts && rc == 0; p++) {
		const struct rec_entry *e = p < n ? run_get(rr, p) : NULL;
		while (ci < ncuts && cuts[ci].pos == p && rc == 0) {
			const struct cut *c = &cuts[ci++];
			struct blk_inflight in = {0};
			if (c->inflight)
				in = (struct blk_inflight){e->lba +
				                               rec_log_dev_start(rr->log, e->dev),
				                           e->count, e->flags, e->data};
			bool sampled = c->quota < c->outcomes;
			if (ex->only_one && (c->pos != want->pos || c->inflight != want->inflight))
				continue;
			if (ex->only_one)
				sampled = want->sampled;
			rc = explore_cut(ex, live, c->inflight ? &in : NULL, c, sampled);
		}
		if (rc == 0 && e && (rc = replay_as_recorded(rr->log, e, live)))
			bo_errf(ex->err, rc, "replaying entry %zu: %s", p,
			        bo_errstr(&live->err, rc));
	}
	blk_close(live);
	return rc;
}

/* Checks the configuration and makes the empty result. */
static int start(struct explorer *ex, struct wanted *want)
{
	const struct crash_config *cfg = ex->cfg;
	struct bo_err *err = ex->err;
	if (!cfg->wl)
		return bo_errf(err, -EINVAL, "no workload");
	const struct crash_observer *ob = cfg->observer;
	int rc = 0;
	/* a recorded run observed outside is another system's filesystem: only what its
	 * boot does and the data mode matter here */
	if (ob && cfg->log) {
		ex->fsc.boot = CRASH_BOOT_TRUST;
		ex->fsc.writeback = cfg->fs && strstr(cfg->fs, "data=writeback") != NULL;
	} else if ((rc = crash_fscfg_parse(cfg->fs, &ex->fsc, err))) {
		return rc;
	}
	if (ob && (!ob->observe || !ob->store))
		return bo_errf(err, -EINVAL, "an observer needs a state store and a function");
	if (ob && cfg->keep_dir && !cfg->state_id)
		return bo_errf(err, -EINVAL,
		               "--keep with an outside observer writes one state: give --state ID");
	if (ob && cfg->map_damage)
		return bo_errf(err, -EINVAL, "--damage maps states blackout's fs observes");
	if (cfg->log && cfg->save_log)
		return bo_errf(err, -EINVAL, "--log enumerates a recording; it does not make one");
	if (!cfg->stack || !cfg->fs)
		return bo_errf(err, -EINVAL, "no stack or no filesystem");
	if (cfg->nshards > 1 && cfg->shard >= cfg->nshards)
		return bo_errf(err, -EINVAL, "--shard %u/%u: the index must be below the count",
		               cfg->shard, cfg->nshards);
	if (cfg->state_id) {
		if (parse_state_id(cfg->state_id, &want->pos, &want->inflight, &want->sampled,
		                   &ex->want_k))
			return bo_errf(err, -EINVAL,
			               "--state '%s': expected an id like p12-3, p12w-0 or p40-s7",
			               cfg->state_id);
		ex->only_one = true;
	}
	struct crash_result *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ex->r = r;
	snprintf(r->stack, sizeof(r->stack), "%s", cfg->stack);
	if (ob && ob->name)
		snprintf(r->fs, sizeof(r->fs), "%s-%s%s", ob->name, cfg->fs,
		         strchr(cfg->fs, ',') ? "" : ",defaults");
	else
		snprintf(r->fs, sizeof(r->fs), "%s", cfg->fs);
	snprintf(r->workload, sizeof(r->workload), "%s", cfg->wl->name);
	r->seed = cfg->seed;
	r->max_states = cfg->max_states ? cfg->max_states : 100000;
	r->shard = cfg->nshards > 1 ? cfg->shard : 0;
	r->nshards = cfg->nshards > 1 ? cfg->nshards : 1;
	return 0;
}

int crash_explore(const struct crash_config *cfg, struct crash_result **out, struct bo_err *err)
{
	*out = NULL;
	struct explorer ex = {.cfg = cfg, .err = err, .t0 = bo_now(), .armed = -1};
	struct wanted want = {0};
	int rc = start(&ex, &want);
	if (rc)
		return rc;
	struct crash_result *r = ex.r;
	struct recording rr = {0};
	struct fs *fs = NULL;
	struct cut *cuts = NULL;
	size_t ncuts = 0;
	double total = 0;
	if (cfg->log) {
		rc = set_up_from_log(&ex, &rr);
	} else {
		rc = set_up(&ex, &rr, &fs);
		if (rc == 0)
			rc = record(&ex, &rr, fs);
		if (fs)
			fs_abandon(fs);
	}
	if (rc == 0 && cfg->observer)
		rc = crash_store_open(&ex.store, cfg->observer->store, rr.live0, err);
	if (rc == 0 && cfg->observer && rec_log_ndev(rr.log) > 1)
		rc = crash_store_members(&ex.store, rr.log, err);
	if (rc == 0 && cfg->observer && cfg->prune) {
		rc = crash_prune_open(&ex.prune, ex.store.base, ex.store.size);
		r->prune_asked = true;
		if (!ex.prune.on)
			snprintf(r->prune_off, sizeof(r->prune_off), "%s", ex.prune.why_not);
	}
	if (rc)
		goto out;
	cuts = calloc(2 * run_len(&rr) + 2, sizeof(*cuts));
	if (!cuts) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = measure_cuts(&ex, &rr, cuts, &ncuts, &total)))
		goto out;
	r->cuts = ncuts;
	r->space = total >= 1.8e19 ? UINT64_MAX : (uint64_t)total;
	/* a write of over 1024 sectors that may tear has more outcomes than a double holds
	 * (seen with dm-integrity's journal writes): 2^1024 is then a lower bound, and JSON
	 * has no infinity */
	r->space_log2 = total > 0 ? (isinf(total) ? 1024.0 : log2(total)) : 0;
	r->exhaustive = total <= (double)r->max_states;
	if (r->exhaustive)
		for (size_t i = 0; i < ncuts; i++)
			cuts[i].quota = cuts[i].outcomes;
	else
		plan(cuts, ncuts, r->max_states);
	for (size_t i = 0; i < ncuts; i++)
		ex.total_planned += cuts[i].quota;
	if ((rc = walk_cuts(&ex, &rr, cuts, ncuts, &want)))
		goto out;
	progress(&ex, true);
	if (cfg->observer && (rc = judge_stored(&ex)))
		goto out;
	if (ex.only_one && r->judged == 0 && r->duplicates == 0 && r->built == 0)
		rc = bo_errf(err, -ENOENT, "--state %s: no such state in this exploration",
		             cfg->state_id);
	r->coverage = total > 0 ? (double)r->built / total : 1.0;
	if (r->coverage > 1.0)
		r->coverage = 1.0;
	progress(&ex, true);
out:
	recording_free(&rr);
	free(cuts);
	crash_seen_free(&ex.seen);
	r->t_store = ex.store.seconds;
	r->stored_blocks = ex.store.stored_blocks;
	crash_store_close(&ex.store);
	crash_prune_close(&ex.prune);
	free(ex.stored);
	free(ex.stored_ord);
	free(ex.check_of);
	r->t_total = bo_now() - ex.t0;
	if (rc) {
		crash_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}
