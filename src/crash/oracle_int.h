/* SPDX-License-Identifier: GPL-2.0-or-later */
/* oracle_int.h — the oracle's model of files, names and syncs, shared by oracle.c (which
 * builds it), oracle_judge.c and undigest.c (which rebuilds observed bytes from digests). */
#ifndef BLACKOUT_CRASH_ORACLE_INT_H
#define BLACKOUT_CRASH_ORACLE_INT_H

#include "blackout/crash.h"

#define SETUP_STEP (-1L)

struct ev {
	long step;
	bool trunc;
	uint32_t tag;
	uint64_t off, len;
	uint64_t size_after;
	uint8_t *pat; /* the bytes it wrote, [off, off+len), when materialised */
};

struct node {
	bool dir;
	bool setup;    /* existed when setup ended */
	bool touched;  /* a run step named it */
	bool link;     /* a symlink: its name is not judged (observers do not report links) */
	bool unjudged; /* its bytes and size are not modelled (falloc collapse/insert) */
	struct ev *ev;
	size_t nev, cap;
	long *syncs; /* run steps that fsync/fdatasync'd it (dirs: fsync-dir) */
	size_t nsyncs, scap;
	long *fsyncs; /* of those, a file's fsync (by name or fd) or O_SYNC write: the
	               * syncs a filesystem's own promise of names rests on */
	size_t nfsyncs, fcap;
	uint64_t size;
};

#define NO_STEP (-2L)
#define ROOT    1u

struct bind {
	long step;
	uint32_t target; /* 0: no entry */
};

struct ent {
	uint32_t dir;
	char *name;
	struct bind *b;
	size_t nb, cap;
	long atomic_step; /* from this step on, an atomic-replace target; NO_STEP if never */
	struct ent *hnext;
};

#define HBITS 12

struct crash_oracle {
	struct node *nodes; /* index 0 unused, 1 = root */
	size_t nnodes, ncap;
	struct ent **ents;
	size_t nents, ecap;
	struct ent *hash[1u << HBITS];
	long *syncs; /* run steps that were a completed sync */
	size_t nsyncs, scap;
	size_t nrun;
	struct {
		char name[32];
		uint32_t id; /* the node it holds open, 0: none (its open failed) */
		bool used;
	} fds[CRASH_WL_MAX_FDS];
};

struct ent *crash_oracle_ent_find(const struct crash_oracle *o, uint32_t dir, const char *name);

static inline uint32_t ent_now(const struct ent *e)
{
	return e && e->nb ? e->b[e->nb - 1].target : 0;
}

/* The step up to which entry e's bindings are promised at crash point c by the
 * filesystem's own promise (docs/oracle.md, "Stronger promises"), at least d (POSIX's
 * step for it). When it is later than d, *why names the promise and the fsync. */
long crash_oracle_promise_step(const struct crash_oracle *o, const struct ent *e, long c, long d,
                               char *why, size_t whylen);

/* Bytes for an observed file given as per-chunk MD5s (obs->md5), as node n would
 * have them: a chunk whose digest is that of zeros or of n's content after one of its
 * changes gets those bytes; a chunk that no version explains gets, at every offset, a
 * byte no write to n ever put there, so the byte judge calls it stale. obs->size
 * bytes, malloc'd; NULL when out of memory. */
uint8_t *crash_oracle_undigest(const struct node *n, const struct crash_obs_node *obs);

#endif
