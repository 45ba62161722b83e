/* SPDX-License-Identifier: GPL-2.0-or-later */
/* oracle_int.h — the oracle's model of one file or directory, shared by oracle.c
 * and undigest.c (which rebuilds observed bytes from per-chunk digests). */
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
	uint64_t size;
};

/* Bytes for an observed file given as per-chunk MD5s (obs->md5), as node n would
 * have them: a chunk whose digest is that of zeros or of n's content after one of its
 * changes gets those bytes; a chunk that no version explains gets, at every offset, a
 * byte no write to n ever put there, so the byte judge calls it stale. obs->size
 * bytes, malloc'd; NULL when out of memory. */
uint8_t *crash_oracle_undigest(const struct node *n, const struct crash_obs_node *obs);

#endif
