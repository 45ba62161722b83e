/* matrix_vm.c — `blackout matrix --vm`: rows measured on the real Linux kernel. Each
 * cell is one `scripts/vmtest` run (docs/vmtest.md): Linux's ext3 (the ext4 driver)
 * in qemu on the same modelled stack, power cut at seeded points, rebooted to replay
 * and judged by the harness's oracle; its result, written in the crash explorer's
 * format (--explore-json), becomes the cell (cuts = states).
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
      "the real kernel on a write cache: barriers keep fsync's promise", MR_VM_CACHE},
     "append-fsync", /* an explorer workload: judged by the explorer's oracle */
     "12"},
    {{"vm-cache-lying", "Linux: lying cache",
      "cache(size=1M,flush=ignore,fua=ignore) > mem(size=64M)",
      "the real kernel when the drive ignores flushes", MR_VM_CACHE_LYING},
     "append-fsync",
     "12"},
    {{"vm-flash-cheap", "Linux: cheap flash 128k", "flash(ftl=cheap,eb=128k,page=4k,size=64M)",
      "the real kernel on a cheap flash card: bystanders in shared erase blocks",
      MR_VM_FLASH_CHEAP},
     "overwrite", /* the harness's: many bystanders beside the rewritten files */
     "16"},
};

/* the columns the real kernel runs, and their vmtest --fs */
static const struct {
	enum matrix_col_key col;
	const char *fs;
} vm_cols[] = {{MC_EXT3_ORDERED_B0, "ext3,barrier=0"}, {MC_EXT3_ORDERED_B1, "ext3,barrier=1"}};

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

/* vmtest's result in the explorer's format (--explore-json), read by the explorer's
 * own reader, into a cell; counts that do not add up are refused. */
static int read_result(const char *path, struct matrix_cell *c, struct bo_err *err)
{
	struct crash_result *r = NULL;
	int rc = crash_result_load(path, &r, err);
	if (rc)
		return rc;
	uint64_t failing = r->judged >= r->ok ? r->judged - r->ok : 0;
	bool sane = r->ok <= r->judged && r->silent + r->detected == failing;
	for (int i = 0; i < MI_N && i < CRASH_INV_N; i++) {
		sane = sane && r->viol[i] <= failing;
		c->viol[i] = r->viol[i];
	}
	c->states = r->judged;
	c->ok = r->ok;
	c->silent = r->silent;
	c->detected = r->detected;
	crash_result_free(r);
	if (!sane)
		return bo_errf(err, -EPROTO, "%s: the result's counts do not add up", path);
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
		      seed, "--out", dir, "--explore-json", json, (char *)NULL);
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
				if (m->cols[c].key == vm_cols[k].col)
					fs = vm_cols[k].fs;
			if (!fs) {
				snprintf(x->note, sizeof(x->note),
				         "real-kernel rows run ext3 data=ordered, barrier=0 and 1");
				continue;
			}
			char dir[4096], json[4200];
			snprintf(dir, sizeof(dir), "%s/%s-%s", base, vm_rows[i].row.id,
			         m->cols[c].id);
			snprintf(json, sizeof(json), "%s/explore.json", dir);
			if (mkdir_p(dir) < 0)
				return bo_errf(err, -errno, "cannot create %s: %s", dir,
				               strerror(errno));
			if (o->progress)
				fprintf(stderr, "matrix --vm: %s, %s (%u cuts)\n",
				        vm_rows[i].row.label, fs, o->vm_cuts);
			double t0 = bo_now();
			int rc = run_vmtest(o, &vm_rows[i], fs, dir, json, err);
			if (rc == 0)
				rc = read_result(json, x, err);
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
