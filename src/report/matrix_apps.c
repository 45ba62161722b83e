// SPDX-License-Identifier: GPL-2.0-or-later
/* matrix_apps.c — the application section of `blackout matrix --vm`: the built-in
 * examples of docs/apps.md (columns) on the stacks the Linux cells serve (rows), each
 * cell one vm_explore run of the example (matrix_vm_start) read back from its result, and one
 * verdict per example comparing stacks that honour flushes with the one that ignores them.
 * An example is one entry of app_runs (how to run it) and one or more of app_cols. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/json.h"
#include "blackout/matrix.h"
#include "blackout/app.h"
#include "blackout/util.h"
#include "blackout/vmexplore.h"
#include "report/html_parts.h"
#include "report/matrix_apps_int.h"
#include "report/matrix_run.h"

/* the bound of one app run: a recording boot, a judging boot, a second or two a state
 * (a database server's start and recovery: up to 30) */
#define APP_RUN_SECONDS(k, budget)                                                                 \
	(600u + (app_runs[k].state_timeout ? 30u : 10u) * (unsigned)(budget))

#define MAX_WITH 9
#define MAX_ARGS 4
/* PostgreSQL 15 as Debian installs it (postgresql-15): the server's programs, libraries
 * and shared files find each other by path, so the runs carry the directories */
#define PG_BIN   "/usr/lib/postgresql/15/bin"
#define PG_LIB   "/usr/lib/postgresql/15/lib"
#define PG_SHARE "/usr/share/postgresql/15"
/* in with[] and args[]: the directory template.sh left a fresh cluster in */
#define TEMPLATE "@template"
#define PG_RUN(id, sync, fpw)                                                                      \
	{                                                                                          \
		id, "postgres/run.sh", "postgres/check.sh",                                        \
		    {"setpriv",                                                                    \
		     PG_BIN,                                                                       \
		     PG_LIB,                                                                       \
		     PG_SHARE,                                                                     \
		     PG_SHARE "/extension",                                                        \
		     PG_SHARE "/timezonesets",                                                     \
		     PG_SHARE "/tsearch_data",                                                     \
		     TEMPLATE},                                                                    \
		    {sync, fpw, PG_COMMITS, TEMPLATE "/cluster.tar"}, 300, 60, 120, true           \
	}
/* One `blackout app` run of an example; the rename example's one recording holds both
 * updates, so two columns read it. with: the host executables it carries (--with), found
 * on the host's PATH, or, named bo-*, built beside blackout (build/apps), or absolute
 * directories; TEMPLATE in with or args: the cluster template.sh made (template). The
 * timeouts, when not 0, replace the section's 120 s for the program, 20 s for the
 * checker and the pool's 60 s for a state: a database server's start and recovery take
 * seconds under TCG. */
static const struct app_run {
	const char *id, *prog, *checker;
	const char *with[MAX_WITH];
	const char *args[MAX_ARGS];
	unsigned prog_timeout, check_timeout, state_timeout;
	bool template;
} app_runs[] = {
    {"sqlite-wal", "sqlite/run.sh", "sqlite/check.sh", {"sqlite3"}, {"wal", "full", "6"}},
    {"sqlite-rollback", "sqlite/run.sh", "sqlite/check.sh", {"sqlite3"}, {"truncate", "full", "6"}},
    {"rename", "rename/run.sh", "rename/check.sh", {NULL}, {"4", NULL, NULL}},
    {"applog", "applog/run.sh", "applog/check.sh", {NULL}, {"8", NULL, NULL}},
    {"redis-always",
     "redis/run.sh",
     "redis/check.sh",
     {"redis-server", "redis-cli", "redis-check-aof"},
     {"always", "6", NULL}},
    {"redis-everysec",
     "redis/run.sh",
     "redis/check.sh",
     {"redis-server", "redis-cli", "redis-check-aof"},
     {"everysec", "6", NULL}},
    {"leveldb-sync", "leveldb/run.sh", "leveldb/check.sh", {"bo-leveldb"}, {"sync", "8", NULL}},
    {"leveldb-nosync", "leveldb/run.sh", "leveldb/check.sh", {"bo-leveldb"}, {"nosync", "8", NULL}},
    PG_RUN("pg-durable", "on", "on"),
    PG_RUN("pg-async", "off", "on"),
    PG_RUN("pg-fpw-off", "on", "off"),
};
#define NRUNS (sizeof(app_runs) / sizeof(app_runs[0]))

const struct app_col app_cols[] = {
    {"sqlite-wal-full", "SQLite WAL, synchronous=FULL", "SQLite WAL FULL", 0, NULL},
    {"sqlite-rollback-full", "SQLite rollback journal (truncate), synchronous=FULL",
     "SQLite rollback FULL", 1, NULL},
    {"config-rename-fsync", "config update: write, fsync, rename", "rename+fsync", 2, "config",
     true},
    {"config-rename-nofsync", "config update: write, rename (no fsync)", "rename, no fsync", 2,
     "config-nofsync"},
    {"append-log", "append-only log, fdatasync per record", "append log", 3, NULL},
    {"redis-always", "Redis AOF, appendfsync always", "Redis always", 4, NULL, false, true},
    {"redis-everysec", "Redis AOF, appendfsync everysec", "Redis everysec", 5, NULL, false, true},
    {"leveldb-sync", "LevelDB, WriteOptions.sync=true", "LevelDB sync", 6, NULL, false, true},
    {"leveldb-nosync", "LevelDB, WriteOptions.sync=false", "LevelDB nosync", 7, NULL, false, true},
    {"pg-durable", "PostgreSQL, synchronous_commit=on, full_page_writes=on", "PG durable", 8, NULL,
     false, true, ON_BOTH},
    {"pg-async", "PostgreSQL, synchronous_commit=off", "PG async", 9, NULL, false, true},
    {"pg-fpw-off", "PostgreSQL, full_page_writes=off", "PG fpw=off", 10, NULL, false, true,
     ON_TORN},
};
_Static_assert(sizeof(app_cols) / sizeof(app_cols[0]) == NCOLS, "NCOLS is app_cols' size");

static const struct {
	enum matrix_row_key key; /* the matrix's row; unused for TORN */
	enum app_class cls;
} app_rows[] = {
    {MR_NOCACHE, HONEST},         {MR_CACHE, HONEST}, {MR_CACHE_LYING, LYING},
    {MR_FLASH_CHEAP_128K, FLASH}, {MR_NOCACHE, TORN},
};
_Static_assert(sizeof(app_rows) / sizeof(app_rows[0]) == MAX_ROWS, "MAX_ROWS is app_rows' size");

const char *matrix_apps_run_id(size_t c)
{
	return app_runs[app_cols[c].run].id;
}

static bool in_list(const char *list, const char *id)
{
	size_t n = strlen(id);
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && strncmp(p, id, n) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

int matrix_apps_check(const char *ids, struct bo_err *err)
{
	if (!ids || strcmp(ids, "none") == 0)
		return 0;
	for (const char *p = ids; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		bool known = false;
		for (size_t c = 0; c < NCOLS; c++)
			known |= strlen(app_cols[c].id) == l && strncmp(p, app_cols[c].id, l) == 0;
		if (!known) {
			char ids_known[400] = "";
			for (size_t c = 0, o = 0; c < NCOLS && o < sizeof(ids_known); c++)
				o += (size_t)snprintf(ids_known + o, sizeof(ids_known) - o, "%s, ",
				                      app_cols[c].id);
			return bo_errf(err, -EINVAL, "--vm-apps: no example '%.*s' (%snone)",
			               (int)(l > 64 ? 64 : l), p, ids_known);
		}
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* An executable to carry into the guest: bo-* beside this blackout (build/apps, made by
 * the Makefile), anything else on this host's PATH. */
static bool find_exe(const char *name, char *buf, size_t len)
{
	if (name[0] == '/') {
		snprintf(buf, len, "%s", name);
		return access(buf, F_OK) == 0;
	}
	if (strncmp(name, "bo-", 3) == 0) {
		ssize_t n = readlink("/proc/self/exe", buf, len - 1);
		if (n <= 0)
			return false;
		buf[n] = '\0';
		char *slash = strrchr(buf, '/');
		if (!slash)
			return false;
		snprintf(slash + 1, len - (size_t)(slash + 1 - buf), "apps/%s", name);
		return access(buf, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	for (const char *p = path; p && *p;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		snprintf(buf, len, "%.*s/%s", (int)l, p, name);
		if (l && access(buf, X_OK) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* s with TEMPLATE at its start replaced by the template's directory */
static void expand(const char *s, const char *template, char *buf, size_t len)
{
	size_t n = strlen(TEMPLATE);
	if (strncmp(s, TEMPLATE, n) == 0)
		snprintf(buf, len, "%s%s", template, s + n);
	else
		snprintf(buf, len, "%s", s);
}

/* Starts one app run of run `k` on `stack` with its logs in dir; returns its pid. */
static pid_t start_run(const struct matrix_run_opts *o, const struct matrix_apps *m, size_t k,
                       const char *stack, const char *dir)
{
	const struct app_run *a = &app_runs[k];
	char prog[4200], checker[4200], log[4200], json[4200], exp[4200];
	const char *top = o->apps_dir ? o->apps_dir : "apps";
	snprintf(prog, sizeof(prog), "%s/%s", top, a->prog);
	snprintf(checker, sizeof(checker), "%s/%s", top, a->checker);
	snprintf(log, sizeof(log), "%s/app.log", dir);
	snprintf(json, sizeof(json), "%s/app.json", dir);
	char paths[MAX_WITH][4200];
	const char *with[MAX_WITH];
	size_t nwith = 0;
	for (size_t i = 0; i < MAX_WITH && a->with[i]; i++) {
		expand(a->with[i], m->template, exp, sizeof(exp));
		if (find_exe(exp, paths[nwith], sizeof(paths[nwith])))
			with[nwith] = paths[nwith], nwith++;
	}
	char argbuf[MAX_ARGS][4200];
	char *args[MAX_ARGS];
	size_t nargs = 0;
	for (; nargs < MAX_ARGS && a->args[nargs]; nargs++) {
		expand(a->args[nargs], m->template, argbuf[nargs], sizeof(argbuf[nargs]));
		args[nargs] = argbuf[nargs];
	}
	struct app_spec spec = {.prog = prog,
	                        .args = args,
	                        .nargs = nargs,
	                        .checker = checker,
	                        .with = with,
	                        .nwith = nwith,
	                        .prog_timeout = a->prog_timeout ? a->prog_timeout : 120,
	                        .check_timeout = a->check_timeout ? a->check_timeout : 20};
	struct vm_explore_opts vo = {.cfg = {.stack = stack,
	                                     .fs = APP_FS,
	                                     .max_states = o->vm_states,
	                                     .seed = o->seed,
	                                     .nshards = 1},
	                             .jobs = 1,
	                             .out = dir,
	                             .app = &spec,
	                             .state_timeout = a->state_timeout};
	return matrix_vm_start(o, &vo, log, json, APP_RUN_SECONDS(k, o->vm_states));
}

/* The checker's finding in a failing state's detail: "app: lost acknowledged work:
 * LINE" and the like (src/crash/judge.c), or NULL when the checker found nothing. */
static const char *app_finding(const char *detail, const char **line)
{
	static const char *const kinds[] = {
	    "app: lost acknowledged work: ", "app: corruption detected: ", "app: the checker hung",
	    "app: the checker crashed", "app: the checker failed"};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const char *p = strstr(detail, kinds[i]);
		if (p) {
			*line = i < 2 ? p + strlen(kinds[i]) : "";
			return kinds[i];
		}
	}
	return NULL;
}

/* One column's counts from its run's result. The rename checker judges `config`, then
 * `config-nofsync`, and reports its first finding only: a state failed by the checker
 * on `config-nofsync` alone has a whole `config`; one failed on `config` says nothing
 * of `config-nofsync`, whose column leaves that state out. */
static void count_col(const struct crash_result *r, const struct app_col *col, struct app_cell *x)
{
	x->states = r->judged;
	x->ok = r->ok;
	x->exhaustive = r->exhaustive;
	x->coverage = round(r->coverage * 1e4) / 1e4;
	for (size_t i = 0; i < r->nfail; i++) {
		const struct crash_state *s = &r->fail[i];
		const char *line = "";
		const char *k = app_finding(s->detail, &line);
		/* lost or corruption: a finding about one file */
		if (k && col->file && (k[5] == 'l' || k[5] == 'c')) {
			size_t n = strlen(col->file);
			bool mine = strncmp(line, col->file, n) == 0 && line[n] == ':';
			bool alone = strchr(s->detail, ';') == NULL; /* nothing but the checker */
			if (!mine && alone) {
				if (col->first)
					x->ok++;
				else
					x->states--;
				continue;
			}
			if (!mine)
				k = NULL; /* the filesystem's own finding still counts */
		}
		if (k && strstr(k, "hung"))
			x->hang++;
		else if (k && (strstr(k, "crashed") || strstr(k, "failed")))
			x->crash++;
		else if (k && strstr(k, "lost"))
			x->lost++;
		else if (k || s->detected)
			x->detected++;
		else
			x->other++;
	}
}

/* An app run's result: the explorer's format with counts that add up, of the app
 * workload, listing every failing state (the columns are counted from them). */
static int read_run(const char *path, struct crash_result **out, struct bo_err *err)
{
	struct crash_result *r = NULL;
	int rc = matrix_vm_result_load(path, &r, err);
	if (rc)
		return rc;
	if (strcmp(r->workload, VM_APP_WORKLOAD) != 0)
		rc = bo_errf(err, -EPROTO, "%s: workload '%.40s', not an app run's", path,
		             r->workload);
	else if (r->nfail != r->judged - r->ok)
		rc = bo_errf(err, -EPROTO,
		             "%s: %zu failing states listed, but %" PRIu64 " of %" PRIu64
		             " states failed",
		             path, r->nfail, r->judged - r->ok, r->judged);
	if (rc) {
		crash_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* In a cell's note the run's own log directory reads "apps": the same note wherever
 * the logs went. */
static void note_err(struct app_cell *x, const char *msg, const char *base)
{
	snprintf(x->note, sizeof(x->note), "%.199s", msg);
	size_t n = strlen(base);
	char *p = strstr(x->note, base);
	if (n && p) {
		memmove(p + 4, p + n, strlen(p + n) + 1);
		memcpy(p, "apps", 4);
	}
}

/* Reads run k of row r into its columns' cells once the run ended with status st. */
static void take_run(struct matrix_apps *a, size_t r, size_t k, const char *dir, const char *base,
                     int st, unsigned limit)
{
	char log[4200], json[4200], msg[300];
	snprintf(log, sizeof(log), "%s/app.log", dir);
	snprintf(json, sizeof(json), "%s/app.json", dir);
	struct crash_result *res = NULL;
	struct bo_err err = {{0}};
	int rc = 0;
	/* 3: some state failed, which is a result */
	if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3)) {
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		char last[120];
		matrix_vm_last_line(log, last, sizeof(last));
		fprintf(stderr, "matrix --vm: app run %s failed; log: %s\n", app_runs[k].id, log);
		if (matrix_vm_timed_out(st))
			snprintf(msg, sizeof(msg), "app did not finish in %u s", limit);
		else
			snprintf(msg, sizeof(msg), "app failed (exit %d): %s", code, last);
		rc = -EIO;
	} else if ((rc = read_run(json, &res, &err)) != 0) {
		snprintf(msg, sizeof(msg), "%s", bo_errstr(&err, rc));
	}
	for (size_t c = 0; c < a->ncols; c++) {
		if (app_cols[a->col[c]].run != k)
			continue;
		struct app_cell *x = &a->cell[r][c];
		if (rc) {
			x->failed = true;
			note_err(x, msg, base);
			continue;
		}
		x->ran = true;
		count_col(res, &app_cols[a->col[c]], x);
		/* as a matrix cell: every state the checker or the filesystem failed broke
		 * something (MP_ANY), the lost ones silently */
		a->view[r][c] = (struct matrix_cell){.ran = true,
		                                     .states = x->states,
		                                     .ok = x->ok,
		                                     .silent = x->lost,
		                                     .silent_lost = x->lost,
		                                     .detected = x->detected,
		                                     .exhaustive = x->exhaustive,
		                                     .coverage = x->coverage};
		snprintf(x->note, sizeof(x->note), "blackout app %s on Linux %s", app_runs[k].id,
		         APP_FS);
	}
	crash_result_free(res);
}

/* The section's rows and columns from the run's rows and --vm-apps. */
static void plan(const struct matrix_run_opts *o, const struct matrix *m, struct matrix_apps *a)
{
	const struct matrix_plan *p = matrix_plan_of(m);
	unsigned on = 0;
	for (size_t c = 0; c < NCOLS; c++)
		if (o->vm_apps ? in_list(o->vm_apps, app_cols[c].id) : !app_cols[c].optin) {
			a->col[a->ncols++] = c;
			on |= app_col_where(c);
		}
	for (size_t i = 0; i < MAX_ROWS; i++) {
		if (app_rows[i].cls == TORN) {
			if (on & ON_TORN) {
				a->id[a->nrows] = TORN_ROW;
				a->cls[a->nrows] = TORN;
				a->stack[a->nrows++] = TORN_STACK;
			}
			continue;
		}
		for (size_t r = 0; r < m->nrows && (on & ON_ROWS); r++) {
			if (m->rows[r].key != app_rows[i].key)
				continue;
			char why[128];
			const char *stack = matrix_vm_stack(p->spec[r], why, sizeof(why));
			if (!stack)
				continue;
			a->id[a->nrows] = m->rows[r].id;
			a->cls[a->nrows] = app_rows[i].cls;
			a->stack[a->nrows++] = stack;
		}
	}
	for (size_t r = 0; r < a->nrows; r++)
		for (size_t c = 0; c < a->ncols; c++) {
			unsigned w = app_col_where(a->col[c]),
			         mine = a->cls[r] == TORN ? ON_TORN : ON_ROWS;
			if (w & mine)
				continue;
			a->cell[r][c].skip = true;
			snprintf(a->cell[r][c].note, sizeof(a->cell[r][c].note), "%s",
			         mine == ON_TORN ? "runs on the matrix's rows, not " TORN_ROW
			                         : "runs on " TORN_ROW " only");
		}
}

/* Whether run k can start here; else why its cells are not applicable: an installation
 * without the source tree's examples, a host without an executable to carry. */
static bool runnable(const struct matrix_run_opts *o, size_t k, char *why, size_t len)
{
	char prog[4200], exe[4200];
	snprintf(prog, sizeof(prog), "%s/%s", o->apps_dir ? o->apps_dir : "apps", app_runs[k].prog);
	if (access(prog, X_OK) != 0) {
		snprintf(why, len, "the example apps/%s is not here (the source tree's)",
		         app_runs[k].prog);
		return false;
	}
	for (size_t i = 0; i < MAX_WITH && app_runs[k].with[i]; i++) {
		const char *name = app_runs[k].with[i];
		if (!strcmp(name, TEMPLATE) || find_exe(name, exe, sizeof(exe)))
			continue;
		if (name[0] == '/')
			snprintf(why, len, "no %s on this host to carry (its Debian package)",
			         name);
		else if (strncmp(name, "bo-", 3) == 0)
			snprintf(
			    why, len,
			    "no %s beside blackout (make builds it where its library is installed)",
			    name);
		else
			snprintf(why, len, "no %s on this host's PATH to carry", name);
		return false;
	}
	return true;
}

/* The fresh PostgreSQL cluster the runs unpack (initdb under TCG takes minutes):
 * apps/postgres/template.sh into BASE/pg-template, bounded, its output in
 * BASE/pg-template.log. On failure why says so. */
static bool make_template(const struct matrix_run_opts *o, const char *base, char *dir, size_t len,
                          char *why, size_t wlen)
{
	char script[4200], log[4200 + 16], abs[PATH_MAX];
	snprintf(script, sizeof(script), "%s/postgres/template.sh",
	         o->apps_dir ? o->apps_dir : "apps");
	if (!realpath(base, abs)) {
		snprintf(why, wlen, "template.sh: %.100s: %s", base, strerror(errno));
		return false;
	}
	snprintf(dir, len, "%s/pg-template", abs);
	snprintf(log, sizeof(log), "%s.log", dir);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0)
			_exit(127);
		alarm(300);
		execl(script, script, dir, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return true;
	char last[120];
	matrix_vm_last_line(log, last, sizeof(last));
	snprintf(why, wlen, "the cluster template failed (apps/postgres/template.sh): %s", last);
	return false;
}

int matrix_apps_run(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err)
{
	if (o->vm_apps && strcmp(o->vm_apps, "none") == 0)
		return 0;
	struct matrix_apps *a = calloc(1, sizeof(*a));
	if (!a)
		return bo_errf(err, -ENOMEM, "out of memory");
	plan(o, m, a);
	if (a->nrows == 0 || a->ncols == 0) {
		free(a);
		return 0;
	}
	m->apps = a;
	char base[4200];
	snprintf(base, sizeof(base), "%s/apps", o->vm_out ? o->vm_out : "build/vm-matrix");
	/* the runs (row, example run) that some column needs, side by side up to --jobs */
	struct {
		size_t r, k;
		pid_t pid;
		char dir[4200 + 64];
	} runs[MAX_ROWS * NRUNS];
	size_t nrun = 0, running = 0, next = 0, done = 0;
	bool template = false, made = false;
	char why[200];
	for (int pass = 0; pass < 2; pass++) /* pass 1: the runs that need the template */
		for (size_t r = 0; r < a->nrows; r++)
			for (size_t k = 0; k < NRUNS; k++) {
				bool need = false;
				for (size_t c = 0; c < a->ncols; c++)
					need |= app_cols[a->col[c]].run == k && !a->cell[r][c].skip;
				if (!need || app_runs[k].template != (pass == 1))
					continue;
				bool can = runnable(o, k, why, sizeof(why));
				if (can && pass == 1 && !template) {
					template = true;
					int rc = bo_mkdir_p(base);
					if (rc)
						return bo_errf(err, rc, "cannot create %s: %s",
						               base, strerror(-rc));
					made = make_template(o, base, a->template,
					                     sizeof(a->template), why, sizeof(why));
				}
				if (!can || (pass == 1 && !made)) {
					for (size_t c = 0; c < a->ncols; c++)
						if (app_cols[a->col[c]].run == k &&
						    !a->cell[r][c].skip)
							snprintf(a->cell[r][c].note,
							         sizeof(a->cell[r][c].note), "%s",
							         why);
					continue;
				}
				runs[nrun].r = r, runs[nrun].k = k, runs[nrun].pid = 0;
				snprintf(runs[nrun].dir, sizeof(runs[nrun].dir), "%s/%s-%s", base,
				         a->id[r], app_runs[k].id);
				int rc = bo_mkdir_p(runs[nrun].dir);
				if (rc)
					return bo_errf(err, rc, "cannot create %s: %s",
					               runs[nrun].dir, strerror(-rc));
				nrun++;
			}
	unsigned jobs = o->jobs ? o->jobs : 1;
	double t0 = bo_now();
	while (done < nrun) {
		while (next < nrun && running < jobs) {
			runs[next].pid =
			    start_run(o, a, runs[next].k, a->stack[runs[next].r], runs[next].dir);
			if (runs[next].pid < 0)
				return bo_errf(err, -errno, "fork: %s", strerror(errno));
			next++, running++;
		}
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			return bo_errf(err, -errno, "waitpid: %s", strerror(errno));
		for (size_t i = 0; i < next; i++)
			if (runs[i].pid == pid) {
				runs[i].pid = 0;
				take_run(a, runs[i].r, runs[i].k, runs[i].dir, base, st,
				         APP_RUN_SECONDS(runs[i].k, o->vm_states));
				running--, done++;
				fprintf(stderr,
				        "matrix: application section: %zu of %zu app runs done, "
				        "%.0f s\n",
				        done, nrun, bo_now() - t0);
			}
	}
	return 0;
}

size_t matrix_apps_failed(const struct matrix *m)
{
	size_t n = 0;
	const struct matrix_apps *a = m->apps;
	for (size_t r = 0; a && r < a->nrows; r++)
		for (size_t c = 0; c < a->ncols; c++)
			n += a->cell[r][c].failed;
	return n;
}

void matrix_apps_free(struct matrix_apps *a)
{
	free(a);
}
