/* matrix_run.c — fills the expectations table: for every row (device stack) x column
 * (filesystem configuration) x built-in workload, one crash exploration (crash.h),
 * summed into the cell. Explorations run in worker processes (--jobs), handed out one
 * at a time so a slow stack does not hold the others back; the results come back over
 * a socket as plain records. Rows whose model is not in this build are left out. */
#include <errno.h>
#include <inttypes.h>
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

/* The stacks. Small media keep each crash state cheap; 1 KiB filesystem blocks over
 * 512-byte sectors, so a torn write can split a block; 4 KiB RAID chunks, so small
 * files share stripes with their neighbours as they do on a real array. `needs` names
 * the model that must be registered for the row to appear. `arm` is a fault rule armed
 * once the set-up is on the media; `verify` runs ext3 with verify=fast (fsck --fast at
 * mount), a row kept only where it changes what the user is told. */
struct rowspec {
	struct matrix_row row;
	const char *needs;
	bool quick;
	const char *arm;
	bool verify;
	/* the exploration budget is divided by this (0 = 1): a row whose every 4 KiB
	 * write costs a 4 MiB erase-block rewrite keeps --full within its time */
	unsigned budget_div;
	enum matrix_row_key base; /* verify rows: the row they repeat with verify=fast */
};
#define R5(extra) "raid5(chunk=4k" extra ") > [disk > mem(size=6M)] x4"
#define DM        "disk > mem(size=6M)"
static const struct rowspec all_rows[] = {
    {{"nocache", "no write cache", "disk(tear=none) > mem(size=16M)",
      "baseline: atomic sectors, every completed write durable", MR_NOCACHE},
     "disk",
     true,
     NULL,
     false},
    {{"cache", "write cache, flush honoured",
      "cache(size=256k,flush=honor) > disk(tear=none) > mem(size=16M)",
      "WRITE-CACHE: barriers needed and sufficient", MR_CACHE},
     "cache",
     true,
     NULL,
     false},
    {{"cache-lying", "write cache ignoring flush",
      "cache(size=256k,flush=ignore) > disk(tear=none) > mem(size=16M)",
      "WRITE-CACHE: a drive that lies about flushes", MR_CACHE_LYING},
     "cache",
     true,
     NULL,
     false},
    {{"torn", "torn sectors", "disk(tear=byte) > mem(size=16M)",
      "ATOMIC-SECTORS violated: an interrupted write tears sectors", MR_TORN},
     "disk",
     true,
     NULL,
     false},
    {{"flash-cheap-128k", "cheap flash, 128 KiB EB", "flash(ftl=cheap,eb=128k,size=16M)",
      "ATOMIC-SECTORS violated: erase-block read-modify-write destroys bystanders",
      MR_FLASH_CHEAP_128K},
     "flash",
     true,
     NULL,
     false},
    {{"flash-cheap-128k-verify", "  + verify at mount", "flash(ftl=cheap,eb=128k,size=16M)",
      "JOURNAL-HIDES-DAMAGE: the same, with fsck --fast after journal replay",
      MR_FLASH_CHEAP_128K_VERIFY},
     "flash",
     true,
     NULL,
     true,
     .base = MR_FLASH_CHEAP_128K},
    {{"flash-cheap-4m", "cheap flash, 4 MiB EB", "flash(ftl=cheap,eb=4M,size=16M)",
      "ATOMIC-SECTORS violated, with the largest erase blocks", MR_FLASH_CHEAP_4M},
     "flash",
     false,
     NULL,
     false,
     10},
    {{"flash-careful", "careful flash", "flash(ftl=careful,eb=128k,size=16M)",
      "page-mapped FTL with an atomic map commit: no collateral damage", MR_FLASH_CAREFUL},
     "flash",
     true,
     NULL,
     false},
    {{"raid5", "RAID5, healthy", R5(""), "RAID5 with every member: parity covers a torn stripe",
      MR_RAID5},
     "raid5",
     true,
     NULL,
     false},
    {{"raid5-degraded", "RAID5, one missing", R5(",missing=1"),
      "DEGRADED-RAID: the write hole reconstructs data nobody wrote", MR_RAID5_DEGRADED},
     "raid5",
     true,
     NULL,
     false},
    {{"raid5-degraded-verify", "  + verify at mount", R5(",missing=1"),
      "the write hole's metadata damage, with fsck --fast after journal replay",
      MR_RAID5_DEGRADED_VERIFY},
     "raid5",
     false,
     NULL,
     true,
     .base = MR_RAID5_DEGRADED},
    {{"raid5-degraded-journal", "RAID5, missing, journal",
      "raid5(chunk=4k,missing=1,journal=true) > [" DM " ; " DM " ; " DM " ; " DM " ; mem(size=4M)]",
      "DEGRADED-RAID mitigated: md's write journal closes the hole", MR_RAID5_DEGRADED_JOURNAL},
     "raid5",
     true,
     NULL,
     false},
    {{"raid6-2missing", "RAID6, two missing", "raid6(chunk=4k,missing=1:2) > [" DM "] x5",
      "DEGRADED-RAID: RAID6 with no redundancy left", MR_RAID6_2MISSING},
     "raid6",
     false,
     NULL,
     false},
    {{"write-errors", "write errors after set-up", "fault > disk(tear=none) > mem(size=16M)",
      "NO-WRITE-ERRORS violated: every 25th write fails (transient: gone at the cut)",
      MR_WRITE_ERRORS},
     "fault",
     true,
     "write-error after=5 every=25",
     false},
};

struct matrix_colspec {
	struct matrix_col col;
	const char *fs; /* the explorer's --fs */
};
static const struct matrix_colspec all_cols[] = {
    {{"ext2", "ext2", "ext2", "(no journal)", MC_EXT2}, "ext2"},
    {{"ext3-ordered-b0", "ext3 ordered b=0", "ext3", "data=ordered,barrier=0", MC_EXT3_ORDERED_B0},
     "ext3,data=ordered,barrier=0"},
    {{"ext3-ordered-b1", "ext3 ordered b=1", "ext3", "data=ordered,barrier=1", MC_EXT3_ORDERED_B1},
     "ext3,data=ordered,barrier=1"},
    {{"ext3-journal-b1", "ext3 journal b=1", "ext3", "data=journal,barrier=1", MC_EXT3_JOURNAL_B1},
     "ext3,data=journal,barrier=1"},
    {{"ext3-writeback-b1", "ext3 writeback b=1", "ext3", "data=writeback,barrier=1",
      MC_EXT3_WRITEBACK_B1},
     "ext3,data=writeback,barrier=1"},
    {{"ext3-csum", "ext3 + csum", "ext3,metadata_csum", "data=ordered,barrier=1", MC_EXT3_CSUM},
     "ext3,data=ordered,barrier=1,metadata_csum"},
};

static const char *const quick_workloads[] = {"append-fsync", "replace-dirsync", "overwrite-fsync",
                                              "create-many-sync", "reuse-after-delete"};

#define EXAMPLE_MAX_OPS    600
#define EXAMPLE_MAX_DAMAGE 32

struct task {
	size_t row, col, wl;
};

/* The tables one run shows, owned by the struct matrix it fills (m->owned). */
#define MATRIX_VM_ROWS 8 /* room for matrix_vm_nrows() */
struct run_tables {
	struct matrix_row rows[sizeof(all_rows) / sizeof(all_rows[0]) + MATRIX_VM_ROWS];
	const struct rowspec *spec[sizeof(all_rows) / sizeof(all_rows[0])];
	struct matrix_col cols[sizeof(all_cols) / sizeof(all_cols[0])];
	const char *wls[64];
};

/* What a worker sends back for one task: fixed-size record, then the example's
 * ops. Plain data only: both ends are this program. */
struct task_result {
	int rc;
	char err[256];
	uint64_t states, ok, viol[MI_N], silent, detected, allowed;
	uint8_t exhaustive, has_example;
	double coverage, seconds;
	struct matrix_example ex; /* ops/damage pointers are not sent */
	uint32_t ndamage;         /* the example's damaged blocks, sent inline */
	struct matrix_damage damage[EXAMPLE_MAX_DAMAGE];
};

/* States that broke nothing but showed what the configuration allows. */
static uint64_t allowed_only(const struct crash_result *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->nfail; i++)
		n += !r->fail[i].broken && r->fail[i].allowed;
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
	size_t first = pick->pos > EXAMPLE_MAX_OPS - 100 ? pick->pos - (EXAMPLE_MAX_OPS - 100) : 0;
	size_t last = first + EXAMPLE_MAX_OPS < r->nio ? first + EXAMPLE_MAX_OPS : r->nio;
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
	for (size_t i = 0; i < r->ndamage && t->ndamage < EXAMPLE_MAX_DAMAGE; i++) {
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
                       const struct task *tk, const struct matrix_colspec *cols, char *fs,
                       size_t fslen, struct crash_workload **wl, struct crash_config *cfg,
                       struct task_result *t)
{
	struct bo_err err = {{0}};
	int rc = crash_workload_load(m->workloads[tk->wl], wl, &err);
	if (rc) {
		snprintf(t->err, sizeof(t->err), "%s", bo_errstr(&err, rc));
		return t->rc = rc;
	}
	const struct rowspec *spec = ((const struct run_tables *)m->owned)->spec[tk->row];
	snprintf(fs, fslen, "%s%s", cols[tk->col].fs,
	         spec->verify && strncmp(cols[tk->col].fs, "ext3", 4) == 0 ? ",verify=fast" : "");
	*cfg = (struct crash_config){
	    .stack = m->rows[tk->row].stack,
	    .fs = fs,
	    .arm = spec->arm,
	    .wl = *wl,
	    .workload = m->workloads[tk->wl],
	    .max_states = spec->budget_div > 1 && o->max_states / spec->budget_div
	                      ? o->max_states / spec->budget_div
	                      : o->max_states,
	    .seed = o->seed,
	    .fsck = o->fsck,
	    .fsck_ctx = o->fsck_ctx,
	};
	return 0;
}

static int run_task(const struct matrix_run_opts *o, const struct matrix *m, const struct task *tk,
                    const struct matrix_colspec *cols, const char *damage_state,
                    struct task_result *t, struct matrix_op **ops)
{
	memset(t, 0, sizeof(*t));
	*ops = NULL;
	struct bo_err err = {{0}};
	struct crash_workload *wl;
	struct crash_config cfg;
	char fs[160];
	int rc = task_config(o, m, tk, cols, fs, sizeof(fs), &wl, &cfg, t);
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
		snprintf(t->err, sizeof(t->err), "%s on %s with %s: %s", m->workloads[tk->wl],
		         cfg.stack, cfg.fs, bo_errstr(&err, rc));
		crash_workload_free(wl);
		return t->rc = rc;
	}
	t->seconds = bo_now() - t0;
	t->states = r->judged;
	t->ok = r->ok;
	for (int i = 0; i < MI_N && i < CRASH_INV_N; i++)
		t->viol[i] = r->viol[i];
	t->silent = r->silent;
	t->detected = r->detected;
	t->allowed = allowed_only(r);
	t->exhaustive = r->exhaustive;
	t->coverage = r->coverage;
	fill_example(&cfg, r, o->self ? o->self : "blackout", t, ops);
	crash_result_free(r);
	crash_workload_free(wl);
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A worker: reads task indices, answers with a result record and the ops. */
/* What the parent hands a worker: a task to explore, or (second phase) the damage
 * map of the example state a cell kept. */
struct job {
	uint32_t task;
	uint32_t damage; /* 1: map `state` only */
	char state[160];
};

/* A worker: reads jobs, answers each with a result record and the example's ops. */
static void worker(int fd, const struct matrix_run_opts *o, const struct matrix *m,
                   const struct task *tasks, const struct matrix_colspec *cols)
{
	struct job jb;
	while (read_all(fd, &jb, sizeof(jb)) == 0) {
		struct task_result t;
		struct matrix_op *ops;
		jb.state[sizeof(jb.state) - 1] = 0;
		run_task(o, m, &tasks[jb.task], cols, jb.damage ? jb.state : NULL, &t, &ops);
		if (write_all(fd, &t, sizeof(t)) ||
		    (t.has_example && t.ex.nops && write_all(fd, ops, t.ex.nops * sizeof(*ops)))) {
			free(ops);
			break;
		}
		free(ops);
	}
	_exit(0);
}

/* Adds a task's counts to its cell; returns true when its example became the cell's
 * (the first silent one, else the first one). */
static bool merge_into(struct matrix_cell *c, const struct task_result *t, struct matrix_op *ops)
{
	c->ran = true;
	if (c->states == 0)
		c->exhaustive = true, c->coverage = 1.0;
	c->states += t->states;
	c->ok += t->ok;
	for (int i = 0; i < MI_N; i++)
		c->viol[i] += t->viol[i];
	c->silent += t->silent;
	c->detected += t->detected;
	c->allowed += t->allowed;
	c->exhaustive = c->exhaustive && t->exhaustive;
	if (t->coverage < c->coverage)
		c->coverage = t->coverage;
	c->seconds += t->seconds;
	bool better = t->has_example && (!c->example || (!c->example->silent && t->ex.silent));
	struct matrix_example *e = better ? malloc(sizeof(*e)) : NULL;
	if (!e) {
		free(ops);
		return false;
	}
	*e = t->ex;
	e->ops = ops;
	e->damage = NULL;
	e->ndamage = 0;
	matrix_example_free(c->example);
	c->example = e;
	return true;
}

static void set_damage(struct matrix_cell *c, const struct task_result *t)
{
	struct matrix_example *e = c->example;
	if (!e || !t->ndamage || !(e->damage = calloc(t->ndamage, sizeof(*e->damage))))
		return;
	memcpy(e->damage, t->damage, t->ndamage * sizeof(*e->damage));
	e->ndamage = t->ndamage;
}

/* A verify-at-mount row is shown only where it changes what the user is told: if
 * every cell has the same silent and detected counts as the row it varies, it goes. */
static void drop_unchanged_verify_rows(struct matrix *m, struct run_tables *tb)
{
	size_t w = 0;
	for (size_t r = 0; r < m->nrows; r++) {
		bool keep = true;
		if (tb->spec[r]->verify) {
			size_t base = m->nrows;
			for (size_t b = 0; b < m->nrows; b++)
				if (m->rows[b].key == tb->spec[r]->base)
					base = b;
			if (base < m->nrows) {
				keep = false;
				for (size_t c = 0; c < m->ncols; c++) {
					const struct matrix_cell *x = matrix_cell(m, r, c),
					                         *y = matrix_cell(m, base, c);
					if (x->silent != y->silent || x->detected != y->detected)
						keep = true;
				}
			}
		}
		if (!keep) {
			for (size_t c = 0; c < m->ncols; c++)
				matrix_example_free(matrix_cell(m, r, c)->example);
			continue;
		}
		if (w != r) {
			tb->rows[w] = tb->rows[r];
			tb->spec[w] = tb->spec[r];
			memmove(matrix_cell(m, w, 0), matrix_cell(m, r, 0),
			        m->ncols * sizeof(*m->cells));
		}
		w++;
	}
	m->nrows = w;
}

/* What this run shows: --full or the quick subset, minus rows whose model is not built. */
static void pick_tables(const struct matrix_run_opts *o, struct matrix *m, struct run_tables *tb)
{
	size_t nr = 0;
	for (size_t i = 0; i < sizeof(all_rows) / sizeof(all_rows[0]); i++)
		if (dev_model_find(all_rows[i].needs) && (o->full || all_rows[i].quick)) {
			tb->spec[nr] = &all_rows[i];
			tb->rows[nr++] = all_rows[i].row;
		}
	size_t nc = sizeof(all_cols) / sizeof(all_cols[0]);
	for (size_t i = 0; i < nc; i++)
		tb->cols[i] = all_cols[i].col;
	size_t nw = 0;
	if (o->full) {
		for (size_t i = 0; i < crash_builtin_count() && nw < 64; i++)
			tb->wls[nw++] = crash_builtin_get(i)->name;
	} else {
		for (size_t i = 0; i < sizeof(quick_workloads) / sizeof(quick_workloads[0]); i++)
			tb->wls[nw++] = quick_workloads[i];
	}
	*m = (struct matrix){.mode = o->full ? "full" : "quick",
	                     .seed = o->seed,
	                     .nrows = nr,
	                     .ncols = nc,
	                     .rows = tb->rows,
	                     .cols = tb->cols,
	                     .nworkloads = nw,
	                     .workloads = tb->wls,
	                     .owned = tb};
}

/* The empty cells and the tasks that fill them, in the order they are handed out. */
static int plan_tasks(struct matrix *m, struct task **out, size_t *ntask)
{
	size_t nr = m->nrows, nc = m->ncols, nw = m->nworkloads;
	m->cells = calloc(nr * nc, sizeof(*m->cells));
	*ntask = nr * nc * nw;
	struct task *tasks = calloc(*ntask, sizeof(*tasks));
	if (!m->cells || !tasks) {
		free(tasks);
		return -ENOMEM;
	}
	/* the costliest (largest workloads) first keeps the workers busy to the end */
	size_t k = 0;
	for (size_t w = nw; w-- > 0;)
		for (size_t r = 0; r < nr; r++)
			for (size_t c = 0; c < nc; c++)
				tasks[k++] = (struct task){r, c, w};
	*out = tasks;
	return 0;
}

/* The parent's side of a run: its workers, the job queue and which job each one has. */
struct pool {
	const struct matrix_run_opts *o;
	struct matrix *m;
	const struct task *tasks;
	size_t ntask, ncell;
	unsigned jobs;
	int fds[64];
	pid_t pids[64];
	uint32_t busy[64]; /* the jobq index a working worker has */
	bool working[64];
	struct job *jobq;
	size_t *ex_task; /* per cell: the task whose example the cell kept */
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
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return bo_errf(err, -errno, "matrix: socketpair: %s", strerror(errno));
		pid_t pid = fork();
		if (pid < 0)
			return bo_errf(err, -errno, "matrix: fork: %s", strerror(errno));
		if (pid == 0) {
			close(sv[0]);
			for (unsigned i = 0; i < j; i++)
				close(p->fds[i]);
			worker(sv[1], p->o, p->m, p->tasks, all_cols);
		}
		close(sv[1]);
		p->fds[j] = sv[0];
		p->pids[j] = pid;
	}
	return 0;
}

/* Phase 1's jobs (every task) are queued from the start; phase 2's find room after them. */
static int queue_tasks(struct pool *p)
{
	p->ex_task = calloc(p->ncell ? p->ncell : 1, sizeof(*p->ex_task));
	p->jobq = calloc(p->ntask + p->ncell, sizeof(*p->jobq));
	if (!p->ex_task || !p->jobq) {
		free(p->ex_task);
		free(p->jobq);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->ntask; i++)
		p->jobq[i] = (struct job){.task = (uint32_t)i};
	p->njob = p->ntask;
	return 0;
}

/* Phase 2 waits for the end of phase 1: only then is each cell's example final. */
static void queue_damage_maps(struct pool *p)
{
	p->phase2 = true;
	for (size_t cidx = 0; cidx < p->ncell; cidx++)
		if (p->m->cells[cidx].example) {
			struct job jb = {.task = (uint32_t)p->ex_task[cidx], .damage = 1};
			snprintf(jb.state, sizeof(jb.state), "%s",
			         p->m->cells[cidx].example->state_id);
			p->jobq[p->njob++] = jb;
		}
}

/* One job per idle worker at a time, so a slow stack does not hold the others back. */
static void hand_out(struct pool *p)
{
	for (unsigned j = 0; j < p->jobs && p->next < p->njob; j++)
		if (!p->working[j] && (p->phase2 || p->next < p->ntask)) {
			p->busy[j] = (uint32_t)p->next;
			p->working[j] = true;
			write_all(p->fds[j], &p->jobq[p->next++], sizeof(struct job));
		}
}

/* Worker j's answer goes into its cell: counts and example, or the example's damage map. */
static int collect(struct pool *p, unsigned j, struct bo_err *err)
{
	struct task_result t;
	struct matrix_op *ops = NULL;
	if (read_all(p->fds[j], &t, sizeof(t)))
		return bo_errf(err, -EIO, "matrix: worker %u died", j);
	if (t.has_example && t.ex.nops) {
		ops = calloc(t.ex.nops, sizeof(*ops));
		if (!ops || read_all(p->fds[j], ops, t.ex.nops * sizeof(*ops))) {
			free(ops);
			return bo_errf(err, -EIO, "matrix: worker %u died", j);
		}
	}
	p->working[j] = false;
	const struct job *jb = &p->jobq[p->busy[j]];
	const struct task *tk = &p->tasks[jb->task];
	if (t.rc) {
		int rc = bo_errf(err, t.rc, "matrix: %s", t.err);
		free(ops);
		return rc;
	}
	struct matrix_cell *cell = matrix_cell(p->m, tk->row, tk->col);
	if (jb->damage) {
		set_damage(cell, &t);
		free(ops);
	} else if (merge_into(cell, &t, ops)) {
		p->ex_task[tk->row * p->m->ncols + tk->col] = jb->task;
	}
	p->done++;
	if (!jb->damage)
		p->explored++, p->judged += t.states;
	if (p->o->progress && !jb->damage) {
		struct matrix_progress mp = {p->explored, p->ntask, p->judged, bo_now() - p->t0};
		p->o->progress(p->o->progress_ctx, &mp);
	}
	return 0;
}

/* Phase 1 explores every task, phase 2 maps each cell's example (one per cell, not per task). */
static int dispatch(struct pool *p, struct bo_err *err)
{
	for (;;) {
		if (!p->phase2 && p->done == p->ntask)
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
			return -errno;
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

int matrix_run(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err)
{
	struct run_tables *tb = calloc(1, sizeof(*tb));
	if (!tb)
		return -ENOMEM;
	pick_tables(o, m, tb);
	struct task *tasks;
	size_t ntask;
	int rc = plan_tasks(m, &tasks, &ntask);
	if (rc)
		return rc;
	struct pool p = {.o = o, .m = m, .tasks = tasks, .ntask = ntask};
	p.ncell = m->nrows * m->ncols;
	p.jobs = o->jobs ? o->jobs : 1;
	if (p.jobs > ntask)
		p.jobs = (unsigned)ntask;
	if (p.jobs > 64)
		p.jobs = 64;
	p.t0 = bo_now();
	fflush(NULL);
	if ((rc = start_workers(&p, err)))
		return rc;
	if ((rc = queue_tasks(&p))) {
		free(tasks);
		return rc;
	}
	rc = dispatch(&p, err);
	free(p.ex_task);
	free(p.jobq);
	stop_workers(&p, rc);
	free(tasks);
	if (rc == 0)
		drop_unchanged_verify_rows(m, tb);
	if (rc == 0 && o->vm && matrix_vm_nrows() <= MATRIX_VM_ROWS)
		rc = matrix_vm_run(o, m, tb->rows + m->nrows, err);
	m->seconds = bo_now() - p.t0;
	return rc;
}
