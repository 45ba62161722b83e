/* matrix_vm.c — `blackout matrix --vm`: rows measured on the real Linux kernel. Each
 * cell is one `scripts/vmtest` run (docs/vmtest.md): Linux's ext3 (the ext4 driver)
 * in qemu on the same modelled stack, power cut at seeded points, rebooted to replay
 * and judged by the harness's oracle; its summary becomes the cell (cuts = states).
 * Only the barrier=0 and barrier=1 ordered columns run; the others say why not. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/util.h"
#include "report/matrix_run.h"

struct vm_rowspec {
	struct matrix_row row;
	const char *workload;
	const char *files;
};

static const struct vm_rowspec vm_rows[] = {
    {{"vm-cache", "Linux: flush honoured", "cache(size=1M,flush=honor) > mem(size=64M)",
      "the real kernel on a write cache: barriers keep fsync's promise"},
     "mixed",
     "12"},
    {{"vm-cache-lying", "Linux: lying cache",
      "cache(size=1M,flush=ignore,fua=ignore) > mem(size=64M)",
      "the real kernel when the drive ignores flushes"},
     "mixed",
     "12"},
    {{"vm-flash-cheap", "Linux: cheap flash 128k", "flash(ftl=cheap,eb=128k,page=4k,size=64M)",
      "the real kernel on a cheap flash card: bystanders in shared erase blocks"},
     "overwrite",
     "16"},
};

/* column id -> vmtest --fs */
static const char *const vm_cols[][2] = {{"ext3-ordered-b0", "ext3,barrier=0"},
                                         {"ext3-ordered-b1", "ext3,barrier=1"}};

static int mkdir_p(const char *path)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

size_t matrix_vm_nrows(void)
{
	return sizeof(vm_rows) / sizeof(vm_rows[0]);
}

/* The integer after "key": in a JSON line, or -1. Our own script's output, but read
 * as untrusted: a missing or malformed field is an error, not a guess. */
static long long jfield(const char *line, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(line, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	char *end;
	errno = 0;
	long long v = strtoll(p, &end, 10);
	return end == p || errno || v < 0 ? -1 : v;
}

/* The summary line of a vmtest results file, into a cell. */
static int read_summary(const char *path, struct matrix_cell *c, struct bo_err *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return bo_errf(err, -errno, "vmtest wrote no results (%s)", path);
	char line[4096], last[4096] = "";
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "\"summary\":true"))
			snprintf(last, sizeof(last), "%s", line);
	fclose(f);
	if (!last[0])
		return bo_errf(err, -EPROTO, "%s: no summary line", path);
	static const char *const keys[] = {"classified",       "ok",           "lost_synced",
	                                   "bystander_damage", "foreign_data", "unmountable",
	                                   "fsck_errors",      "silent",       "detected"};
	long long v[9];
	for (int i = 0; i < 9; i++)
		if ((v[i] = jfield(last, keys[i])) < 0)
			return bo_errf(err, -EPROTO, "%s: summary has no valid \"%s\"", path,
			               keys[i]);
	if (v[1] > v[0] || v[7] + v[8] != v[0] - v[1])
		return bo_errf(err, -EPROTO, "%s: summary counts do not add up", path);
	for (int i = 2; i < 7; i++)
		if (v[i] > v[0] - v[1])
			return bo_errf(err, -EPROTO, "%s: more \"%s\" than failing cuts", path,
			               keys[i]);
	c->states = (uint64_t)v[0];
	c->ok = (uint64_t)v[1];
	c->viol[MI_DURABLE] = (uint64_t)v[2];
	c->viol[MI_BYSTANDER] = (uint64_t)v[3];
	c->viol[MI_STALE] = (uint64_t)v[4];
	uint64_t cons = (uint64_t)v[5] + (uint64_t)v[6];
	c->viol[MI_CONSISTENT] = cons < c->states - c->ok ? cons : c->states - c->ok;
	c->silent = (uint64_t)v[7];
	c->detected = (uint64_t)v[8];
	return 0;
}

/* One vmtest run; its logs stay in dir. */
static int run_vmtest(const struct matrix_run_opts *o, const struct vm_rowspec *r, const char *fs,
                      const char *dir, const char *json, struct bo_err *err)
{
	char cuts[16], seed[24];
	snprintf(cuts, sizeof(cuts), "%u", o->vm_cuts);
	snprintf(seed, sizeof(seed), "%" PRIu64, o->seed);
	char log[4200];
	snprintf(log, sizeof(log), "%s/vmtest.log", dir);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return bo_errf(err, -errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		FILE *l = freopen(log, "w", stdout);
		if (l && dup2(fileno(stdout), 2) < 0)
			_exit(127);
		execl("/bin/bash", "bash", o->vm_script, "--stack", r->row.stack, "--fs", fs,
		      "--workload", r->workload, "--files", r->files, "--cuts", cuts, "--seed",
		      seed, "--out", dir, "--json", json, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return bo_errf(err, -errno, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return bo_errf(err, -EIO, "vmtest on '%s' with %s failed (log: %s)", r->row.stack,
		               fs, log);
	return 0;
}

int matrix_vm_run(const struct matrix_run_opts *o, struct matrix *m, struct matrix_row *room,
                  struct bo_err *err)
{
	size_t nv = matrix_vm_nrows(), nr = m->nrows;
	struct matrix_cell *cells = realloc(m->cells, (nr + nv) * m->ncols * sizeof(*cells));
	if (!cells)
		return bo_errf(err, -ENOMEM, "out of memory");
	memset(cells + nr * m->ncols, 0, nv * m->ncols * sizeof(*cells));
	m->cells = cells;
	const char *base = o->vm_out ? o->vm_out : "build/vm-matrix";
	if (mkdir_p(base) < 0)
		return bo_errf(err, -errno, "cannot create %s: %s", base, strerror(errno));
	for (size_t i = 0; i < nv; i++) {
		room[i] = vm_rows[i].row;
		m->nrows = nr + i + 1;
		for (size_t c = 0; c < m->ncols; c++) {
			struct matrix_cell *x = matrix_cell(m, nr + i, c);
			const char *fs = NULL;
			for (size_t k = 0; k < sizeof(vm_cols) / sizeof(vm_cols[0]); k++)
				if (strcmp(m->cols[c].id, vm_cols[k][0]) == 0)
					fs = vm_cols[k][1];
			if (!fs) {
				snprintf(x->note, sizeof(x->note),
				         "real-kernel rows run ext3 data=ordered, barrier=0 and 1");
				continue;
			}
			char dir[4096], json[4200];
			snprintf(dir, sizeof(dir), "%s/%s-%s", base, vm_rows[i].row.id,
			         m->cols[c].id);
			snprintf(json, sizeof(json), "%s/results.json", dir);
			if (mkdir_p(dir) < 0)
				return bo_errf(err, -errno, "cannot create %s: %s", dir,
				               strerror(errno));
			if (o->progress)
				fprintf(stderr, "matrix --vm: %s, %s (%u cuts)\n",
				        vm_rows[i].row.label, fs, o->vm_cuts);
			double t0 = bo_now();
			int rc = run_vmtest(o, &vm_rows[i], fs, dir, json, err);
			if (rc == 0)
				rc = read_summary(json, x, err);
			if (rc)
				return rc;
			x->ran = true;
			x->seconds = bo_now() - t0;
			x->coverage = 0; /* seeded cut points, no enumerable outcome space */
			snprintf(x->note, sizeof(x->note), "Linux %s in qemu, %u cuts, workload %s",
			         fs, o->vm_cuts, vm_rows[i].workload);
		}
	}
	return 0;
}
