// SPDX-License-Identifier: GPL-2.0-or-later
/* oracle_promise.c — the names a filesystem's own fsync promises beyond POSIX (ext4,
 * xfs, btrfs: docs/oracle.md, "Stronger promises"): a file's fsync also makes its
 * new names and the removal of its old ones durable. Judged as `fs-promise`. */
#include <stdio.h>
#include <string.h>

#include "blackout/crash.h"
#include "crash/oracle_int.h"

/* A file's fsync after step b and before crash point c, NO_STEP if none. */
static long fsync_after(const struct node *n, long b, long c)
{
	long f = NO_STEP;
	for (size_t i = 0; i < n->nfsyncs; i++)
		if (n->fsyncs[i] > b && n->fsyncs[i] < c && (f == NO_STEP || n->fsyncs[i] < f))
			f = n->fsyncs[i];
	return f;
}

/* Whether node id had a name before step b: a file created at b is new, a file
 * that had one was renamed or linked to this name. */
static bool named_before(const struct crash_oracle *o, uint32_t id, long b)
{
	for (size_t i = 0; i < o->nents; i++)
		for (size_t k = 0; k < o->ents[i]->nb; k++)
			if (o->ents[i]->b[k].target == id && o->ents[i]->b[k].step < b)
				return true;
	return false;
}

/* Whether node id still has a name right after step b (other than in e). */
static bool named_after(const struct crash_oracle *o, const struct ent *e, uint32_t id, long b)
{
	for (size_t i = 0; i < o->nents; i++) {
		const struct ent *x = o->ents[i];
		uint32_t t = 0;
		for (size_t k = 0; k < x->nb && x->b[k].step <= b; k++)
			t = x->b[k].target;
		if (x != e && t == id)
			return true;
	}
	return false;
}

static bool plain_file(const struct crash_oracle *o, uint32_t id)
{
	return id && !o->nodes[id].dir && !o->nodes[id].link;
}

long crash_oracle_promise_step(const struct crash_oracle *o, const struct ent *e, long c, long d,
                               char *why, size_t whylen)
{
	long best = d;
	for (size_t i = 0; i < e->nb; i++) {
		long b = e->b[i].step;
		uint32_t t = e->b[i].target;
		if (b <= best || b < 0 || b >= c)
			continue;
		if (plain_file(o, t)) {
			/* a name given to a file, then the file's fsync: the name is durable */
			long f = fsync_after(&o->nodes[t], b, c);
			if (f == NO_STEP)
				continue;
			best = b;
			snprintf(why, whylen,
			         named_before(o, t, b)
			             ? "the fsync at step %ld of a file renamed or linked here at "
			               "step %ld promised its new name"
			             : "the fsync at step %ld of a file created at step %ld "
			               "promised its name",
			         f, b);
		} else if (!t && i > 0 && plain_file(o, e->b[i - 1].target)) {
			/* a name taken from a file, then the file's fsync (through a name left
			 * or an open fd): the removal is durable */
			uint32_t was = e->b[i - 1].target;
			long f = fsync_after(&o->nodes[was], b, c);
			if (f == NO_STEP)
				continue;
			best = b;
			snprintf(why, whylen,
			         named_after(o, e, was, b)
			             ? "the fsync at step %ld of a file whose name was removed or "
			               "renamed away at step %ld promised the removal"
			             : "the fsync at step %ld of an unlinked open file (unlinked "
			               "at step %ld) promised its deletion",
			         f, b);
		}
	}
	return best;
}

bool crash_oracle_fs_promises(const char *fs)
{
	if (!fs)
		return false;
	if (strncmp(fs, "linux-", 6) == 0)
		fs += 6;
	size_t n = strcspn(fs, ",");
	static const char *const own[] = {"ext4", "xfs", "btrfs"};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (n == strlen(own[i]) && strncmp(fs, own[i], n) == 0)
			return true;
	return false;
}
