// SPDX-License-Identifier: GPL-2.0-or-later
/* matrix_run.c — runs a matrix's explorations: each one a crash exploration (crash.h) of
 * one workload on a row's stack with a column's filesystem, or a real-kernel run
 * (matrix_vm.c), in worker processes (--jobs), handed out one at a time so a slow
 * stack does not hold the others back; results come back over a socket as plain
 * records. A sharded run does only its shard's explorations; its results are a part
 * (matrix_part.c), and the unsharded run is the one-shard case merged at once. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/dev.h"
#include "blackout/matrix.h"
#include "blackout/util.h"
#include "report/matrix_run.h"

/* What a worker sends back for one job: fixed-size record, then the example's ops.
 * Plain data only: both ends are this program. */
struct task_result {
	int rc;
	char err[256];
	uint64_t states, ok, viol[MI_N], silent, detected, allowed;
	uint64_t silent_lost, write_errors;
	uint8_t exhaustive, has_example;
	char kernel[64]; /* a real-kernel run's release */
	double coverage, seconds;
	struct matrix_example ex; /* ops/damage pointers are not sent */
	uint32_t ndamage;         /* the example's damaged blocks, sent inline */
	struct matrix_damage damage[MATRIX_EX_MAX_DAMAGE];
};

/* States that broke nothing but showed what the configuration allows. */
static uint64_t allowed_only(const struct crash_result *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->nfail; i++)
		n += !r->fail[i].broken && r->fail[i].allowed;
	return n;
}

/* States that lost synced data (a durable or a bystander file) and said nothing. */
static uint64_t silent_lost(const struct crash_result *r)
{
	const unsigned lost = 1u << CRASH_INV_DURABLE | 1u << CRASH_INV_BYSTANDER;
	uint64_t n = 0;
	for (size_t i = 0; i < r->nfail; i++)
		n += (r->fail[i].broken & lost) && !r->fail[i].detected;
	return n;
}

static void fill_example(const struct crash_config *cfg, const struct crash_result *r,
                         const char *self, struct task_result *t, struct matrix_op **ops)
{
	/* a state that broke an invariant: the first silent one, else the first */
	const struct crash_state *pick = NULL;
	for (size_t i = 0; i < r->nfail && !pick; i++)
		if (r->fail[i].broken && !r->fail[i].detected)
			pick = &r->fail[i];
	for (size_t i = 0; i < r->nfail && !pick; i++)
		if (r->fail[i].broken)
			pick = &r->fail[i];
	if (!pick)
		return;
	struct matrix_example *e = &t->ex;
	t->has_example = 1;
	snprintf(e->workload, sizeof(e->workload), "%s", r->workload);
	snprintf(e->state_id, sizeof(e->state_id), "%s", pick->id);
	struct crash_config one = *cfg;
	one.state_id = pick->id;
	if (crash_config_format(&one, self, e->rebuild, sizeof(e->rebuild)) < 0)
		snprintf(e->rebuild, sizeof(e->rebuild), "(the rebuild line is too long)");
	/* the judge's detail names each broken invariant already ("durable: ..."): the
	 * bare names stand only where it gave none */
	size_t o = 0;
	if (pick->detail[0])
		o = (size_t)snprintf(e->broken, sizeof(e->broken), "%s", pick->detail);
	for (int i = 0; i < CRASH_INV_N && !pick->detail[0]; i++)
		if (pick->broken & (1u << i))
			o += (size_t)snprintf(
			    e->broken + o, o < sizeof(e->broken) ? sizeof(e->broken) - o : 0,
			    "%s%s", o ? "+" : "", crash_inv_name((enum crash_inv)i));
	if (o < sizeof(e->broken) && pick->detected)
		snprintf(e->broken + o, sizeof(e->broken) - o, " (detected by %s)",
		         pick->detected_by);
	e->silent = !pick->detected;
	e->cut_inflight = pick->inflight;
	/* a window of the timeline around the cut */
	size_t first =
	    pick->pos > MATRIX_EX_MAX_OPS - 100 ? pick->pos - (MATRIX_EX_MAX_OPS - 100) : 0;
	size_t last = first + MATRIX_EX_MAX_OPS < r->nio ? first + MATRIX_EX_MAX_OPS : r->nio;
	e->cut = pick->pos > first ? pick->pos - first - (pick->inflight ? 0 : 1) : 0;
	if (!pick->inflight && pick->pos == 0)
		e->cut = 0;
	e->nops = last - first;
	*ops = calloc(e->nops ? e->nops : 1, sizeof(**ops));
	if (!*ops) {
		e->nops = 0;
		return;
	}
	for (size_t i = first; i < last; i++) {
		struct matrix_op *m = &(*ops)[i - first];
		const struct crash_io *io = &r->io[i];
		snprintf(m->op, sizeof(m->op), "%s", io->op);
		m->lba = io->lba;
		m->count = io->count;
		m->fua = io->fua;
		snprintf(m->mark, sizeof(m->mark), "%s", io->mark);
	}
}

/* Rebuilds the example state alone and asks the explorer which blocks of it were
 * lost or damaged, and whose they were (best effort: the example stands without). */
static void map_example_damage(const struct crash_config *base, struct task_result *t)
{
	struct crash_config cfg = *base;
	cfg.state_id = t->ex.state_id;
	cfg.map_damage = true;
	struct crash_result *r;
	struct bo_err err = {{0}};
	if (crash_explore(&cfg, &r, &err) != 0)
		return;
	for (size_t i = 0; i < r->ndamage && t->ndamage < MATRIX_EX_MAX_DAMAGE; i++) {
		const struct crash_damage *d = &r->damage[i];
		struct matrix_damage *m = &t->damage[t->ndamage++];
		m->block = d->block;
		m->ino = d->ino;
		snprintf(m->what, sizeof(m->what), "%s", d->what);
		snprintf(m->owner, sizeof(m->owner), "%.160s (sectors %" PRIu64 "-%" PRIu64 ")",
		         d->owner[0] ? d->owner : "free or unknown", d->lba, d->lba + d->count - 1);
	}
	crash_result_free(r);
}

/* The exploration a task names: its workload (loaded), its --fs, its config. */
static int task_config(const struct matrix_run_opts *o, const struct matrix *m,
                       const struct matrix_task *tk, char *fs, size_t fslen,
                       struct crash_workload **wl, struct crash_config *cfg, struct task_result *t)
{
	struct bo_err err = {{0}};
	const char *name = matrix_task_workload(m, tk);
	int rc = crash_workload_load(name, wl, &err);
	if (rc) {
		snprintf(t->err, sizeof(t->err), "%s", bo_errstr(&err, rc));
		return t->rc = rc;
	}
	const struct matrix_plan *p = matrix_plan_of(m);
	const struct matrix_rowspec *spec = p->spec[tk->row];
	const char *cfs = p->cspec[tk->col]->fs;
	bool ext3 = strncmp(cfs, "ext3", 4) == 0;
	snprintf(fs, fslen, "%s%s%s", cfs, spec->verify && ext3 ? ",verify=fast" : "",
	         spec->fs_extra && ext3 ? spec->fs_extra : "");
	*cfg = (struct crash_config){
	    .stack = m->rows[tk->row].stack,
	    .fs = fs,
	    .arm = spec->arm,
	    .wl = *wl,
	    .workload = name,
	    .max_states = spec->budget_div > 1 && o->max_states / spec->budget_div
	                      ? o->max_states / spec->budget_div
	                      : o->max_states,
	    .seed = o->seed,
	    .fsck = o->fsck,
	    .fsck_ctx = o->fsck_ctx,
	};
	return 0;
}

/* A result's counts into the record; coverage kept to the 10 significant digits a part
 * carries, so a part holds exactly what the unsharded run folds, and a coverage of
 * 1.65e-22 stays that rather than 0 (matrix.json's "coverage" field rounds it itself). */
static void take_counts(struct task_result *t, const struct crash_result *r)
{
	t->states = r->judged;
	t->ok = r->ok;
	for (int i = 0; i < MI_N && i < CRASH_INV_N; i++)
		t->viol[i] = r->viol[i];
	t->silent = r->silent;
	t->detected = r->detected;
	t->allowed = allowed_only(r);
	t->silent_lost = silent_lost(r);
	t->write_errors = r->write_errors;
	t->exhaustive = r->exhaustive;
	snprintf(t->kernel, sizeof(t->kernel), "%s", r->kernel);
	char digits[32];
	snprintf(digits, sizeof(digits), "%.10g", r->coverage);
	t->coverage = strtod(digits, NULL);
}

/* In a message that goes into a cell, the run's own log directory reads "vm": every
 * shard writes the same note wherever its logs went. */
static void strip_dir(char *s, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;
	char *p;
	while (n && (p = strstr(s, dir)) != NULL) {
		memmove(p + 2, p + n, strlen(p + n) + 1);
		memcpy(p, "vm", 2);
	}
}

static int run_vm_task(const struct matrix_run_opts *o, const struct matrix *m,
                       const struct matrix_task *tk, struct task_result *t)
{
	const struct matrix_plan *p = matrix_plan_of(m);
	char why[128], dir[4096];
	const char *stack = matrix_vm_stack(p->spec[tk->row], why, sizeof(why));
	struct matrix_vm_md md;
	bool over_md = m->cols[tk->col].key == MC_LINUX_MD_EXT4;
	if (over_md)
		stack = matrix_vm_md_of(p->spec[tk->row], &md, why, sizeof(why)) ? NULL : md.stack;
	const char *wl = matrix_task_workload(m, tk);
	const char *base = o->vm_out ? o->vm_out : "build/vm-matrix";
	snprintf(dir, sizeof(dir), "%s/%s-%s-%s", base, m->rows[tk->row].id, m->cols[tk->col].id,
	         wl);
	struct bo_err err = {{0}};
	struct crash_result *r = NULL;
	double t0 = bo_now();
	bool integrity = m->cols[tk->col].key == MC_LINUX_DMINT_EXT4;
	int rc = stack ? matrix_vm_cell(o, stack, p->cspec[tk->col]->fs, over_md ? &md : NULL,
	                                integrity, wl, o->vm_states, dir, &r, &err)
	               : bo_errf(&err, -EINVAL, "%s", why);
	t->seconds = bo_now() - t0;
	if (rc) {
		/* a failed real-kernel run is its cell's news, not the matrix's end */
		snprintf(t->err, sizeof(t->err), "%s", bo_errstr(&err, rc));
		strip_dir(t->err, base);
		t->rc = rc;
		return 0;
	}
	take_counts(t, r);
	crash_result_free(r);
	return 0;
}

static int run_task(const struct matrix_run_opts *o, const struct matrix *m,
                    const struct matrix_task *tk, const char *damage_state, struct task_result *t,
                    struct matrix_op **ops)
{
	memset(t, 0, sizeof(*t));
	*ops = NULL;
	if (m->cols[tk->col].vm)
		return run_vm_task(o, m, tk, t);
	struct bo_err err = {{0}};
	struct crash_workload *wl;
	struct crash_config cfg;
	char fs[160];
	int rc = task_config(o, m, tk, fs, sizeof(fs), &wl, &cfg, t);
	if (rc)
		return rc;
	if (damage_state) {
		/* the second phase: only the damage map of a cell's chosen example */
		snprintf(t->ex.state_id, sizeof(t->ex.state_id), "%s", damage_state);
		map_example_damage(&cfg, t);
		crash_workload_free(wl);
		return 0;
	}
	struct crash_result *r;
	double t0 = bo_now();
	rc = crash_explore(&cfg, &r, &err);
	if (rc) {
		snprintf(t->err, sizeof(t->err), "%s on %s with %s: %s", cfg.workload, cfg.stack,
		         cfg.fs, bo_errstr(&err, rc));
		crash_workload_free(wl);
		return t->rc = rc;
	}
	t->seconds = bo_now() - t0;
	take_counts(t, r);
	fill_example(&cfg, r, o->self ? o->self : "blackout", t, ops);
	crash_result_free(r);
	crash_workload_free(wl);
	return 0;
}

/* What the parent hands a worker: a task to explore, or (second phase) the damage
 * map of the example state a cell kept. */
struct job {
	uint32_t task;
	uint32_t damage; /* 1: map `state` only */
	char state[160];
};

/* A worker: reads jobs, answers each with a result record and the example's ops. */
static void worker(int fd, const struct matrix_run_opts *o, const struct matrix *m)
{
	const struct matrix_plan *p = matrix_plan_of(m);
	struct job jb;
	while (bo_read_full(fd, &jb, sizeof(jb)) == 0) {
		struct task_result t;
		struct matrix_op *ops;
		jb.state[sizeof(jb.state) - 1] = 0;
		run_task(o, m, &p->tasks[jb.task], jb.damage ? jb.state : NULL, &t, &ops);
		if (bo_write_full(fd, &t, sizeof(t)) ||
		    (t.has_example && t.ex.nops &&
		     bo_write_full(fd, ops, t.ex.nops * sizeof(*ops)))) {
			free(ops);
			break;
		}
		free(ops);
	}
	_exit(0);
}

/* The parent's side of a run: its workers, the job queue and which job each one has. */
struct pool {
	const struct matrix_run_opts *o;
	struct matrix_part *part;
	unsigned jobs;
	int fds[64];
	pid_t pids[64];
	uint32_t busy[64]; /* the jobq index a working worker has */
	bool working[64];
	struct job *jobq;
	size_t nmine; /* this shard's explorations (phase 1's jobs) */
	size_t njob, next, done, explored;
	uint64_t judged; /* states, for the progress line */
	bool phase2;
	double t0;
};

/* Each child drops its elder siblings' sockets, so it sees EOF when the parent closes. */
static int start_workers(struct pool *p, struct bo_err *err)
{
	for (unsigned j = 0; j < p->jobs; j++) {
		int sv[2];
		/* on failure only the j started are stopped: an unset pid of 0 would make
		 * stop_workers kill our own process group */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
			int e = errno;
			p->jobs = j;
			return bo_errf(err, -e, "matrix: socketpair: %s", strerror(e));
		}
		pid_t pid = fork();
		if (pid < 0) {
			int e = errno;
			close(sv[0]);
			close(sv[1]);
			p->jobs = j;
			return bo_errf(err, -e, "matrix: fork: %s", strerror(e));
		}
		if (pid == 0) {
			close(sv[0]);
			for (unsigned i = 0; i < j; i++)
				close(p->fds[i]);
			worker(sv[1], p->o, &p->part->m);
		}
		close(sv[1]);
		p->fds[j] = sv[0];
		p->pids[j] = pid;
	}
	return 0;
}

/* Phase 1: this shard's explorations; phase 2's damage maps find room after them. */
static int queue_tasks(struct pool *p)
{
	const struct matrix_plan *pl = matrix_plan_of(&p->part->m);
	p->jobq = calloc(pl->ntask + p->part->m.nrows * p->part->m.ncols + 1, sizeof(*p->jobq));
	if (!p->jobq)
		return -ENOMEM;
	for (size_t k = 0; k < pl->ntask; k++)
		if (matrix_task_shard(&p->part->m, k, p->part->nshards) == p->part->shard)
			p->jobq[p->njob++] = (struct job){.task = (uint32_t)k};
	p->nmine = p->njob;
	return 0;
}

/* Once phase 1 is over, each cell keeps the better example of this shard's explorations
 * of it (matrix_example_better: the merge picks among these by the same order) and
 * only that one gets a damage map. */
static void queue_damage_maps(struct pool *p)
{
	struct matrix *m = &p->part->m;
	const struct matrix_plan *pl = matrix_plan_of(m);
	size_t ncell = m->nrows * m->ncols;
	p->phase2 = true;
	for (size_t cidx = 0; cidx < ncell; cidx++) {
		struct matrix_tres *best = NULL;
		uint32_t bwl = 0;
		for (size_t k = 0; k < pl->ntask; k++) {
			const struct matrix_task *tk = &pl->tasks[k];
			struct matrix_tres *t = &p->part->res[k];
			if (tk->row * m->ncols + tk->col != cidx || !t->example)
				continue;
			if (!matrix_example_better(t->example, tk->wl, best ? best->example : NULL,
			                           bwl)) {
				matrix_example_free(t->example);
				t->example = NULL;
				continue;
			}
			if (best) {
				matrix_example_free(best->example);
				best->example = NULL;
			}
			best = t, bwl = tk->wl;
		}
		if (best) {
			struct job jb = {.task = (uint32_t)(best - p->part->res), .damage = 1};
			snprintf(jb.state, sizeof(jb.state), "%s", best->example->state_id);
			p->jobq[p->njob++] = jb;
		}
	}
}

/* One job per idle worker at a time, so a slow stack does not hold the others back. */
static void hand_out(struct pool *p)
{
	for (unsigned j = 0; j < p->jobs && p->next < p->njob; j++)
		if (!p->working[j] && (p->phase2 || p->next < p->nmine)) {
			p->busy[j] = (uint32_t)p->next;
			p->working[j] = true;
			bo_write_full(p->fds[j], &p->jobq[p->next++], sizeof(struct job));
		}
}

/* A worker's record into the task's result: counts and example, or the damage map. */
static int take_result(struct pool *p, const struct job *jb, const struct task_result *t,
                       struct matrix_op *ops, struct bo_err *err)
{
	struct matrix *m = &p->part->m;
	const struct matrix_task *tk = &matrix_plan_of(m)->tasks[jb->task];
	struct matrix_tres *r = &p->part->res[jb->task];
	bool vm = m->cols[tk->col].vm;
	if (t->rc && !vm) {
		free(ops);
		return bo_errf(err, t->rc, "matrix: %s", t->err);
	}
	if (jb->damage) {
		struct matrix_example *e = r->example;
		free(ops);
		if (e && t->ndamage && (e->damage = calloc(t->ndamage, sizeof(*e->damage)))) {
			memcpy(e->damage, t->damage, t->ndamage * sizeof(*e->damage));
			e->ndamage = t->ndamage;
		}
		return 0;
	}
	*r = (struct matrix_tres){.done = true,
	                          .rc = t->rc,
	                          .states = t->states,
	                          .ok = t->ok,
	                          .silent = t->silent,
	                          .detected = t->detected,
	                          .allowed = t->allowed,
	                          .silent_lost = t->silent_lost,
	                          .write_errors = t->write_errors,
	                          .exhaustive = t->exhaustive,
	                          .coverage = t->coverage,
	                          .seconds = t->seconds};
	snprintf(r->err, sizeof(r->err), "%s", t->err);
	snprintf(r->kernel, sizeof(r->kernel), "%s", t->kernel);
	memcpy(r->viol, t->viol, sizeof(r->viol));
	if (t->has_example && (r->example = malloc(sizeof(*r->example)))) {
		*r->example = t->ex;
		r->example->ops = ops;
		r->example->damage = NULL;
		r->example->ndamage = 0;
		if (!ops)
			r->example->nops = 0;
		ops = NULL;
	}
	free(ops);
	return 0;
}

/* Worker j's answer. */
static int collect(struct pool *p, unsigned j, struct bo_err *err)
{
	struct task_result t;
	struct matrix_op *ops = NULL;
	if (bo_read_full(p->fds[j], &t, sizeof(t)))
		return bo_errf(err, -EIO, "matrix: worker %u died", j);
	if (t.has_example && t.ex.nops) {
		if (t.ex.nops > MATRIX_EX_MAX_OPS)
			return bo_errf(err, -EPROTO, "matrix: worker %u sent %zu ops", j,
			               t.ex.nops);
		ops = calloc(t.ex.nops, sizeof(*ops));
		if (!ops || bo_read_full(p->fds[j], ops, t.ex.nops * sizeof(*ops))) {
			free(ops);
			return bo_errf(err, -EIO, "matrix: worker %u died", j);
		}
	}
	if (t.ndamage > MATRIX_EX_MAX_DAMAGE)
		t.ndamage = MATRIX_EX_MAX_DAMAGE;
	p->working[j] = false;
	const struct job *jb = &p->jobq[p->busy[j]];
	int rc = take_result(p, jb, &t, ops, err);
	if (rc)
		return rc;
	p->done++;
	if (!jb->damage)
		p->explored++, p->judged += t.states;
	if (p->o->progress && !jb->damage) {
		struct matrix_progress mp = {p->explored, p->nmine, p->judged, bo_now() - p->t0};
		p->o->progress(p->o->progress_ctx, &mp);
	}
	return 0;
}

/* Phase 1 explores, phase 2 maps each cell's example (one per cell, not per task). */
static int dispatch(struct pool *p, struct bo_err *err)
{
	for (;;) {
		if (!p->phase2 && p->done == p->nmine)
			queue_damage_maps(p);
		hand_out(p);
		if (p->done == p->njob && p->phase2)
			return 0;
		struct pollfd pf[64];
		for (unsigned j = 0; j < p->jobs; j++)
			pf[j] =
			    (struct pollfd){.fd = p->fds[j], .events = p->working[j] ? POLLIN : 0};
		if (poll(pf, p->jobs, -1) < 0) {
			if (errno == EINTR)
				continue;
			return bo_errf(err, -errno, "matrix: poll: %s", strerror(errno));
		}
		for (unsigned j = 0; j < p->jobs; j++) {
			if (!p->working[j] || !(pf[j].revents & (POLLIN | POLLHUP)))
				continue;
			int rc = collect(p, j, err);
			if (rc)
				return rc;
		}
	}
}

/* A closed socket ends a worker's loop; after an error it is killed, its work unwanted. */
static void stop_workers(struct pool *p, int rc)
{
	for (unsigned j = 0; j < p->jobs; j++) {
		close(p->fds[j]);
		if (rc)
			kill(p->pids[j], SIGKILL);
		while (waitpid(p->pids[j], NULL, 0) < 0 && errno == EINTR)
			;
	}
}

int matrix_run_part(const struct matrix_run_opts *o, struct matrix_part **out, struct bo_err *err)
{
	unsigned n = o->nshards ? o->nshards : 1;
	if (o->shard >= n)
		return bo_errf(err, -EINVAL, "shard %u of %u: the shard must be below the count",
		               o->shard, n);
	struct matrix_part *part = calloc(1, sizeof(*part));
	if (!part)
		return bo_errf(err, -ENOMEM, "out of memory");
	part->shard = o->shard;
	part->nshards = n;
	int rc = matrix_plan_make(o, &part->m, err);
	if (rc) {
		free(part);
		return rc;
	}
	const struct matrix_plan *pl = matrix_plan_of(&part->m);
	part->res = calloc(pl->ntask ? pl->ntask : 1, sizeof(*part->res));
	struct pool p = {.o = o, .part = part, .t0 = bo_now()};
	if (!part->res || queue_tasks(&p) < 0) {
		free(p.jobq);
		matrix_part_free(part);
		return bo_errf(err, -ENOMEM, "out of memory");
	}
	p.jobs = o->jobs ? o->jobs : 1;
	if (p.jobs > p.nmine)
		p.jobs = p.nmine ? (unsigned)p.nmine : 1;
	if (p.jobs > 64)
		p.jobs = 64;
	fflush(NULL);
	rc = start_workers(&p, err);
	if (rc == 0)
		rc = dispatch(&p, err);
	free(p.jobq);
	stop_workers(&p, rc);
	part->seconds = bo_now() - p.t0;
	if (rc) {
		matrix_part_free(part);
		return rc;
	}
	*out = part;
	return 0;
}

int matrix_run(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err)
{
	struct matrix_run_opts one = *o;
	one.shard = 0;
	one.nshards = 1;
	struct matrix_part *part;
	int rc = matrix_run_part(&one, &part, err);
	if (rc)
		return rc;
	rc = matrix_merge(&part, NULL, 1, m, err);
	matrix_part_free(part);
	return rc;
}
