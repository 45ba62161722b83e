// SPDX-License-Identifier: GPL-2.0-or-later
/* fromlog.c — a recorded run (a real kernel's, through the nbdkit plugin's recorder;
 * docs/realkernel.md, section 1) checked before the explorer enumerates it: the marks
 * name the stack, filesystem and workload it was recorded with, the run is delimited,
 * the geometry is the stack's. The oracle gets the workload's dry run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crash/crash_int.h"

/* "ext4" and "ext4,defaults" are the same mount. */
static bool same_fs(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	static const char dflt[] = ",defaults";
	const size_t ld = sizeof(dflt) - 1;
	if (la > ld && strcmp(a + la - ld, dflt) == 0)
		la -= ld;
	if (lb > ld && strcmp(b + lb - ld, dflt) == 0)
		lb -= ld;
	return la == lb && memcmp(a, b, la) == 0;
}

/* The value of mark "NAME VALUE" among entries [0, end), or NULL. */
static const char *mark_value(const struct rec_log *log, size_t end, const char *name)
{
	size_t ln = strlen(name);
	for (size_t i = 0; i < end; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->op == REC_MARK && strncmp(e->mark, name, ln) == 0 && e->mark[ln] == ' ')
			return e->mark + ln + 1;
	}
	return NULL;
}

/* "step I" / "fail I": I, or -1 when the mark is another one or I is not a number. */
static long long step_of(const char *mark, const char *word)
{
	size_t lw = strlen(word);
	if (strncmp(mark, word, lw) != 0 || mark[lw] != ' ')
		return -1;
	const char *d = mark + lw + 1;
	if (!*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 9)
		return -1;
	return strtoll(d, NULL, 10);
}

/* The run's marks: `step 0`, `step 1` ... in order, each below the workload's length,
 * `fail I` after step I began; the run is over at `end`, or at a `fail` of the last
 * step that began (a guest stops at its first failure). *begun: steps that began. */
static int check_run(const struct rec_log *log, const char *path, size_t nrun, size_t *run0,
                     bool *failed, size_t *begun, struct bo_err *err)
{
	size_t n = rec_log_len(log);
	long long next = 0, last_fail = -1;
	bool end = false;
	*run0 = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->op != REC_MARK)
			continue;
		long long st = step_of(e->mark, "step"), fl = step_of(e->mark, "fail");
		if (st >= 0) {
			if (end || st != next)
				return bo_errf(
				    err, -EINVAL,
				    "%s: record %zu: mark 'step %lld' where 'step %lld' was "
				    "due%s",
				    path, i, st, next, end ? " (after 'end')" : "");
			if ((size_t)st >= nrun)
				return bo_errf(
				    err, -EINVAL,
				    "%s: record %zu: mark 'step %lld', but the workload has "
				    "%zu run steps",
				    path, i, st, nrun);
			if (st == 0)
				*run0 = i;
			next++;
		} else if (fl >= 0) {
			if (fl >= next || end)
				return bo_errf(err, -EINVAL, "%s: record %zu: mark 'fail %lld' %s",
				               path, i, fl,
				               end ? "after 'end'" : "before its step began");
			failed[fl] = true;
			last_fail = fl;
		} else if (strcmp(e->mark, "end") == 0 && *run0 != SIZE_MAX) {
			end = true;
		}
	}
	*begun = (size_t)next;
	if (*run0 == SIZE_MAX)
		return bo_errf(err, -EINVAL,
		               "%s: no 'step 0' mark: the workload's run never began (was the "
		               "recording cut short?)",
		               path);
	bool stopped = last_fail >= 0 && last_fail == next - 1; /* at its first failure */
	if (!end && !stopped)
		return bo_errf(err, -EINVAL,
		               "%s: no 'end' mark after the run's steps, and no 'fail' ended it: "
		               "the recording stopped during the run (%lld of %zu steps began)",
		               path, next, nrun);
	if (end && (size_t)next != nrun)
		return bo_errf(err, -EINVAL,
		               "%s: %lld 'step' marks for a workload of %zu run steps", path, next,
		               nrun);
	return 0;
}

/* The index of the first `step` mark (the log's length without one). */
static size_t first_step(const struct rec_log *log)
{
	size_t n = rec_log_len(log);
	for (size_t i = 0; i < n; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->op == REC_MARK && step_of(e->mark, "step") >= 0)
			return i;
	}
	return n;
}

/* The marks that say what was recorded against what the explorer was asked for. */
static int check_names(const struct crash_config *cfg, const char *path, const struct rec_log *log,
                       size_t run0, struct bo_err *err)
{
	const struct rec_entry *e0 = rec_log_len(log) ? rec_log_get(log, 0) : NULL;
	const char *stack =
	    e0 && e0->op == REC_MARK && strncmp(e0->mark, "stack ", 6) == 0 ? e0->mark + 6 : NULL;
	if (!stack)
		return bo_errf(err, -EINVAL, "%s: its first record is not a 'stack SPEC' mark",
		               path);
	if (strcmp(stack, cfg->stack) != 0)
		return bo_errf(err, -EINVAL, "%s was recorded on stack '%s', not on --stack '%s'",
		               path, stack, cfg->stack);
	const char *fs = mark_value(log, run0, "fs");
	if (!fs)
		return bo_errf(err, -EINVAL, "%s: no 'fs' mark before the run", path);
	if (!same_fs(fs, cfg->fs))
		return bo_errf(err, -EINVAL, "%s was recorded with fs '%s', not with --fs '%s'",
		               path, fs, cfg->fs);
	const char *wl = mark_value(log, run0, "workload");
	const char *want = cfg->workload ? cfg->workload : cfg->wl ? cfg->wl->name : "";
	if (!wl)
		return bo_errf(err, -EINVAL, "%s: no 'workload' mark before the run", path);
	/* the guest marks the workload's name; a file's name may differ from its path */
	if (strcmp(wl, want) != 0 && !(cfg->wl && strcmp(wl, cfg->wl->name) == 0))
		return bo_errf(err, -EINVAL,
		               "%s was recorded with workload '%s', not with --workload '%s'", path,
		               wl, want);
	return 0;
}

int crash_log_check(const struct crash_config *cfg, const struct rec_log *log, uint32_t sector_size,
                    uint64_t nr_sectors, size_t nrun, size_t *run0, bool *failed, size_t *begun,
                    struct bo_err *err)
{
	const char *path = cfg->log ? cfg->log : "the log";
	if (rec_log_sector_size(log) != sector_size || rec_log_nr_sectors(log) != nr_sectors)
		return bo_errf(err, -EINVAL,
		               "%s: recorded on a device of %llu sectors of %u bytes; the stack "
		               "has %llu of %u",
		               path, (unsigned long long)rec_log_nr_sectors(log),
		               rec_log_sector_size(log), (unsigned long long)nr_sectors,
		               sector_size);
	/* what was recorded first: a log of another workload has other steps too */
	int rc = check_names(cfg, path, log, first_step(log), err);
	return rc ? rc : check_run(log, path, nrun, run0, failed, begun, err);
}

/* A several-device log (the plugin's members=) replays onto the concat of its members:
 * lower d of the stack must have device d's size, or a member's flush would reach the
 * wrong cache. */
static int check_members(const struct crash_config *cfg, const struct rec_log *log,
                         const struct bdev *stack, struct bo_err *err)
{
	const char *path = cfg->log ? cfg->log : "the log";
	unsigned n = rec_log_ndev(log);
	for (unsigned d = 0; n > 1 && d <= n; d++) {
		struct bdev *m = blk_lower((struct bdev *)stack, d);
		if (d == n ? m != NULL : !m || m->nr_sectors != rec_log_dev_sectors(log, d))
			return bo_errf(err, -EINVAL,
			               "%s: recorded on %u member devices; the stack's lower %u %s",
			               path, n, d,
			               d == n ? "is one too many"
			               : m    ? "has another size than that member"
			                      : "is missing (a members log replays onto a concat)");
	}
	return 0;
}

int crash_log_open(const struct crash_config *cfg, const struct bdev *stack, struct rec_log **log,
                   size_t *run0, struct crash_exec *exec, struct bo_err *err)
{
	const struct crash_workload *wl = cfg->wl;
	bool *failed = calloc(wl->nrun ? wl->nrun : 1, sizeof(*failed));
	if (!failed)
		return -ENOMEM;
	struct bo_err e2 = {{0}};
	int rc = rec_log_load(cfg->log, log, &e2);
	if (rc) {
		free(failed);
		return bo_errf(err, rc, "--log: %s", bo_errstr(&e2, rc));
	}
	size_t begun = 0;
	rc = crash_log_check(cfg, *log, stack->sector_size, stack->nr_sectors, wl->nrun, run0,
	                     failed, &begun, err);
	if (rc == 0)
		rc = check_members(cfg, *log, stack, err);
	/* the oracle models the steps as a dry run executes them; the guest ran the same
	 * bytes at the same offsets (vmtest compile); a step it said failed, or never
	 * began (it stopped at a failure), did not happen */
	if (rc == 0 && (rc = crash_workload_dry_run(wl, exec, &e2)))
		rc = bo_errf(err, rc, "%s: %s", wl->name, bo_errstr(&e2, rc));
	for (size_t i = 0; rc == 0 && i < wl->nrun; i++)
		if (failed[i] || i >= begun) {
			exec[i].rc = failed[i] ? -EIO : -ECANCELED;
			exec[i].done = 0;
		}
	free(failed);
	if (rc) {
		rec_log_free(*log);
		*log = NULL;
	}
	return rc;
}
