// SPDX-License-Identifier: GPL-2.0-or-later
/* matrix_vm.c — `blackout matrix --vm`: columns measured on the real Linux kernel (ext4
 * with and without barriers, xfs, btrfs) on each row's stack, served to a qemu guest by
 * the nbdkit plugin. matrix_vm_cell() runs each cell: one vm_explore call (docs/vmtest.md:
 * one boot records the guest's I/O, the explorer enumerates its crash states, guests
 * judge them) in a bounded child process, its result read back in the explorer's format. */
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/app.h"
#include "blackout/blk.h"
#include "blackout/dev.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "blackout/vmexplore.h"
#include "report/matrix_run.h"

/* a real-kernel run (a recording boot, a judging boot, about a second per state)
 * against an explorer row's 20 ms units */
#define VM_COST 2000
/* the bound of one vmtest run: two boots of about 10 s under TCG and a second or two
 * per state, three times that on a loaded machine, with room to spare */
#define VM_RUN_SECONDS(budget) (300u + 10u * (unsigned)(budget))
static const struct matrix_colspec vm_cols[] = {
    {{"linux-ext4-b1", "Linux ext4 b=1", "ext4", "barrier=1", MC_LINUX_EXT4_B1, true},
     "ext4,barrier=1",
     VM_COST},
    {{"linux-ext4-b0", "Linux ext4 b=0", "ext4", "barrier=0", MC_LINUX_EXT4_B0, true},
     "ext4,barrier=0",
     VM_COST},
    {{"linux-xfs", "Linux xfs", "xfs", "defaults", MC_LINUX_XFS, true}, "xfs", VM_COST},
    {{"linux-btrfs", "Linux btrfs", "btrfs", "defaults", MC_LINUX_BTRFS, true}, "btrfs", VM_COST},
    /* md assembles in every judging guest: a little dearer than a plain disk's cell */
    {{"linux-md-ext4", "Linux md + ext4 b=1", "ext4", "barrier=1", MC_LINUX_MD_EXT4, true},
     "ext4,barrier=1",
     VM_COST + VM_COST / 2},
    /* the format wipes the whole device through the plugin: a dearer recording */
    {{"linux-dmint-ext4", "Linux dm-integrity + ext4 b=1", "ext4", "barrier=1", MC_LINUX_DMINT_EXT4,
      true},
     "ext4,barrier=1",
     2 * VM_COST},
};

bool matrix_vm_dmint_on(const struct matrix_rowspec *row, char *why, size_t len)
{
	enum matrix_row_key k = row->row.key;
	if (k == MR_FLASH_CHEAP_128K || k == MR_FLASH_CHEAP_4M || k == MR_TORN)
		return true;
	snprintf(why, len,
	         "dm-integrity's column runs where checksums can turn silent damage "
	         "into errors: the cheap flash and torn-sector rows");
	return false;
}

size_t matrix_vm_ncols(void)
{
	return sizeof(vm_cols) / sizeof(vm_cols[0]);
}

const struct matrix_colspec *matrix_vm_col(size_t i)
{
	return i < matrix_vm_ncols() ? &vm_cols[i] : NULL;
}

/* Each row's stack with its media grown so the device holds a 64 MiB filesystem, the
 * models and their parameters unchanged (the RAID members 22 MiB: three data members
 * give 66 MiB). */
#define R5V(extra) "raid5(chunk=4k" extra ") > [disk > mem(size=22M)] x4"
#define DMV        "disk > mem(size=22M)"
#define R5CV(extra, flush)                                                                         \
	"raid5(chunk=4k" extra ") > [cache(size=64k,flush=" flush ") > disk > mem(size=22M)] x4"
static const struct {
	enum matrix_row_key row;
	const char *stack;
} vm_stacks[] = {
    {MR_NOCACHE, "disk(tear=none) > mem(size=64M)"},
    {MR_CACHE, "cache(size=256k,flush=honor) > disk(tear=none) > mem(size=64M)"},
    {MR_CACHE_LYING, "cache(size=256k,flush=ignore) > disk(tear=none) > mem(size=64M)"},
    {MR_TORN, "disk(tear=byte) > mem(size=64M)"},
    {MR_FLASH_CHEAP_128K, "flash(ftl=cheap,eb=128k,size=64M)"},
    {MR_FLASH_CHEAP_4M, "flash(ftl=cheap,eb=4M,size=64M)"},
    {MR_FLASH_CAREFUL, "flash(ftl=careful,eb=128k,size=64M)"},
    {MR_RAID5, R5V("")},
    {MR_RAID5_DEGRADED, R5V(",missing=1")},
    {MR_RAID5_DEGRADED_JOURNAL, "raid5(chunk=4k,missing=1,journal=true) > [" DMV " ; " DMV " ; " DMV
                                " ; " DMV " ; mem(size=4M)]"},
    {MR_RAID6_2MISSING, "raid6(chunk=4k,missing=1:2) > [" DMV "] x5"},
    {MR_RAID5_CACHE, R5CV("", "honor")},
    {MR_RAID5_CACHE_LYING, R5CV("", "ignore")},
    {MR_RAID5_NOBARRIER, R5CV(",flush=drop", "honor")},
};

const char *matrix_vm_stack(const struct matrix_rowspec *row, char *why, size_t len)
{
	if (row->verify) {
		snprintf(why, len, "verify=fast is blackout's own check at mount; Linux has none");
		return NULL;
	}
	if (row->arm) {
		snprintf(why, len,
		         "vmtest cannot arm a fault rule once the guest's set-up is done");
		return NULL;
	}
	const char *stack = NULL;
	for (size_t i = 0; i < sizeof(vm_stacks) / sizeof(vm_stacks[0]); i++)
		if (vm_stacks[i].row == row->row.key)
			stack = vm_stacks[i].stack;
	if (!stack) {
		snprintf(why, len, "no stack of this row is sized for a guest");
		return NULL;
	}
	/* opening costs little: media allocate their pages when written */
	struct bdev *d;
	struct bo_err err = {{0}};
	int rc = dev_stack_open_text(stack, NULL, &d, &err);
	if (rc) {
		snprintf(why, len, "the plugin cannot serve it: %.90s", bo_errstr(&err, rc));
		return NULL;
	}
	uint64_t bytes = blk_size_bytes(d);
	blk_close(d);
	if (bytes < MATRIX_VM_FS_BYTES) {
		snprintf(why, len,
		         "the device holds %" PRIu64 " KiB: a 64 MiB filesystem does not fit",
		         bytes >> 10);
		return NULL;
	}
	return stack;
}

int matrix_vm_md_of(const struct matrix_rowspec *row, struct matrix_vm_md *md, char *why,
                    size_t len)
{
	memset(md, 0, sizeof(*md));
	const char *stack = matrix_vm_stack(row, why, len);
	if (!stack)
		return -EINVAL;
	struct dev_spec *s;
	struct bo_err err = {{0}};
	int rc = dev_spec_parse(stack, &s, &err);
	if (rc) {
		snprintf(why, len, "%.100s", bo_errstr(&err, rc));
		return rc;
	}
	struct raid_md_args a;
	rc = raid_md_counterpart(s, &a, why, len);
	dev_spec_free(s);
	if (rc)
		return rc;
	_Static_assert(sizeof(md->stack) == sizeof(a.stack) && sizeof(md->md) == sizeof(a.md) &&
	                   sizeof(md->chunk) == sizeof(a.chunk),
	               "matrix_vm_md holds raid_md_args");
	memcpy(md->stack, a.stack, sizeof(md->stack));
	memcpy(md->md, a.md, sizeof(md->md));
	memcpy(md->chunk, a.chunk, sizeof(md->chunk));
	return 0;
}

/* xfs refuses filesystems under 300 MiB (mkfs.xfs 6.1): its cells get the row's stack
 * with every 64 MiB medium grown to 320 MiB and every 22 MiB RAID member to 108 MiB
 * (three data members: 324 MiB), the models unchanged. */
static int vm_sized_stack(const char *fs, const char *stack, char *buf, size_t len)
{
	struct dev_spec *s;
	int rc = dev_spec_parse(stack, &s, NULL);
	if (rc)
		return rc;
	if (strncmp(fs, "xfs", 3) == 0 &&
	    ((rc = dev_spec_resize_media(s, 64ull << 20, 320ull << 20, NULL)) ||
	     (rc = dev_spec_resize_media(s, 22ull << 20, 108ull << 20, NULL)))) {
		dev_spec_free(s);
		return rc;
	}
	int n = dev_spec_format_given(s, buf, len);
	dev_spec_free(s);
	return n < 0 ? n : (size_t)n >= len ? -ENAMETOOLONG : 0;
}

void matrix_vm_last_line(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "(no output)");
	FILE *f = fopen(path, "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0])
			snprintf(buf, len, "%.100s", line);
	}
	if (f)
		fclose(f);
}

/* vmtest's result in the explorer's format, read by the explorer's own reader; counts
 * that do not add up are refused. */
int matrix_vm_result_load(const char *path, struct crash_result **out, struct bo_err *err)
{
	struct crash_result *r = NULL;
	int rc = crash_result_load(path, &r, err);
	if (rc)
		return rc;
	uint64_t failing = r->judged >= r->ok ? r->judged - r->ok : 0;
	bool sane = r->ok <= r->judged && r->silent + r->detected == failing;
	for (int i = 0; i < CRASH_INV_N; i++)
		sane = sane && r->viol[i] <= failing;
	if (!sane) {
		crash_result_free(r);
		return bo_errf(err, -EPROTO, "%s: the result's counts do not add up", path);
	}
	*out = r;
	return 0;
}

/* A stand-in's arguments (BLACKOUT_VM_CELL, the compat tests' cells without guests):
 * the run's options spelled as `blackout vmtest` and `blackout app` take them, without
 * the command's name. */
static void standin_args(const struct vm_explore_opts *vo, unsigned jobs, const char *json,
                         char (*num)[24], const char **argv, size_t max)
{
	const struct crash_config *c = &vo->cfg;
	size_t k = 0;
	snprintf(num[0], 24, "%" PRIu64, c->max_states);
	snprintf(num[1], 24, "%" PRIu64, c->seed);
	snprintf(num[2], 24, "%u", jobs);
	snprintf(num[3], 24, "%u", vo->md_chunk);
	if (vo->app)
		argv[k++] = "--checker", argv[k++] = vo->app->checker;
	argv[k++] = "--stack", argv[k++] = c->stack;
	argv[k++] = "--fs", argv[k++] = c->fs;
	if (!vo->app)
		argv[k++] = "--workload", argv[k++] = c->workload;
	argv[k++] = "--max-states", argv[k++] = num[0];
	argv[k++] = "--seed", argv[k++] = num[1];
	argv[k++] = "--jobs", argv[k++] = num[2];
	argv[k++] = "--out", argv[k++] = vo->out;
	argv[k++] = "--json", argv[k++] = json;
	if (vo->md) {
		argv[k++] = "--md", argv[k++] = vo->md;
		argv[k++] = "--md-chunk", argv[k++] = num[3];
	}
	if (vo->integrity)
		argv[k++] = "--integrity";
	if (vo->app) {
		snprintf(num[4], 24, "%u", vo->app->prog_timeout);
		snprintf(num[5], 24, "%u", vo->app->check_timeout);
		argv[k++] = "--timeout", argv[k++] = num[4];
		argv[k++] = "--check-timeout", argv[k++] = num[5];
	}
	if (vo->app && vo->state_timeout) {
		snprintf(num[6], 24, "%u", vo->state_timeout);
		argv[k++] = "--state-timeout", argv[k++] = num[6];
	}
	for (size_t i = 0; vo->app && i < vo->app->nwith && k + 4 < max; i++)
		argv[k++] = "--with", argv[k++] = vo->app->with[i];
	if (vo->app) {
		argv[k++] = vo->app->prog;
		for (size_t i = 0; i < vo->app->nargs && k + 1 < max; i++)
			argv[k++] = vo->app->args[i];
	}
	argv[k] = NULL;
}

pid_t matrix_vm_start(const struct matrix_run_opts *o, const struct vm_explore_opts *vo,
                      const char *log, const char *json, unsigned seconds)
{
	unlink(json); /* a result left by an earlier run must not stand for this one */
	fflush(NULL);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	FILE *l = freopen(log, "w", stdout);
	if (!l || dup2(fileno(stdout), 2) < 0)
		_exit(127);
	/* bounded like every process here: the scripts and guests bound themselves, the
	 * alarm the whole run (its scripts get SIGTERM and its guests SIGKILL as it ends) */
	alarm(seconds);
	if (o->vm_cmd) {
		char num[7][24];
		const char *argv[64] = {o->vm_cmd};
		standin_args(vo, vo->jobs, json, num, argv + 1, 62);
		execvp(o->vm_cmd, (char *const *)argv);
		_exit(127);
	}
	struct crash_result *r = NULL;
	struct vm_explore_info info;
	struct bo_err err = {{0}};
	int rc = vm_explore(vo, &r, &info, &err);
	FILE *f = rc ? NULL : fopen(json, "w");
	if (f && (crash_result_write_json(r, f) || fclose(f)))
		rc = bo_errf(&err, -EIO, "writing %s failed", json);
	else if (!f && rc == 0)
		rc = bo_errf(&err, -errno, "cannot write %s", json);
	if (rc)
		printf("%s\n", bo_errstr(&err, rc));
	else
		crash_result_print(r, stdout); /* the log ends with the run's summary */
	int status = rc ? 1 : r->judged != r->ok ? 3 : 0;
	crash_result_free(r);
	fflush(NULL);
	_exit(status);
}

bool matrix_vm_timed_out(int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return code == 124 || code == 137 || code == 128 + SIGALRM;
}

int matrix_vm_cell(const struct matrix_run_opts *o, const char *stack, const char *fs,
                   const struct matrix_vm_md *md, bool integrity, const char *workload,
                   unsigned budget, const char *dir, struct crash_result **out, struct bo_err *err)
{
	int rc = bo_mkdir_p(dir);
	if (rc)
		return bo_errf(err, rc, "cannot create %s: %s", dir, strerror(-rc));
	char sized[1024];
	if (vm_sized_stack(fs, stack, sized, sizeof(sized)))
		return bo_errf(err, -ENAMETOOLONG, "the stack is too long to grow for %s", fs);
	char log[4200], json[4200];
	snprintf(log, sizeof(log), "%s/vmtest.log", dir);
	snprintf(json, sizeof(json), "%s/explore.json", dir);
	/* one guest per cell: the matrix already runs --jobs cells side by side */
	struct vm_explore_opts vo = {.cfg = {.stack = sized,
	                                     .fs = fs,
	                                     .workload = workload,
	                                     .max_states = budget,
	                                     .seed = o->seed,
	                                     .nshards = 1},
	                             .files = 24,
	                             .jobs = 1,
	                             .out = dir,
	                             .integrity = integrity};
	if (md) {
		vo.md = md->md;
		vo.md_chunk = (unsigned)strtoul(md->chunk, NULL, 10);
	}
	pid_t pid = matrix_vm_start(o, &vo, log, json, VM_RUN_SECONDS(budget));
	if (pid < 0)
		return bo_errf(err, -errno, "fork: %s", strerror(errno));
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return bo_errf(err, -errno, "waitpid: %s", strerror(errno));
	/* 3: the run found states that broke an invariant, which is a result */
	if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3)) {
		char last[120];
		matrix_vm_last_line(log, last, sizeof(last));
		fprintf(stderr, "matrix --vm: vmtest --stack '%s' --fs %s failed; log: %s\n", sized,
		        fs, log);
		/* no path in the message: it goes into a cell, the same in every shard */
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (matrix_vm_timed_out(st))
			return bo_errf(err, -ETIMEDOUT, "vmtest did not finish in %u s",
			               VM_RUN_SECONDS(budget));
		return bo_errf(err, -EIO, "vmtest failed (exit %d): %s", code, last);
	}
	return matrix_vm_result_load(json, out, err);
}
