/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cache_int.h — what cache.c shares with cache_lines.c: the cache's state
 * (lines, hash slots, the fifo ring, the elevator sweep) and its line buffers and
 * versions of overwritten sectors, which cache_lines.c manages. */
#ifndef BLACKOUT_DEV_CACHE_INT_H
#define BLACKOUT_DEV_CACHE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/util.h"

enum { ORDER_FIFO, ORDER_RANDOM, ORDER_LBA };

#define MAX_VERSIONS 16 /* the most `versions=` may be */

#define FREE_BUFS 64 /* line buffers kept for reuse */

struct lbuf {
	uint32_t ref;
	unsigned char *data; /* a page (blk_page_alloc): it can be handed over */
};

/* An older version of some of a line's dirty sectors: the line's buffer as it was
 * before a write replaced them. Immutable once made and shared (by clones, and by
 * the newer versions whose `next` it is), so a clone copies a pointer. */
struct ver {
	uint32_t ref;
	uint32_t mask;  /* the sectors of buf that a newer write replaced */
	uint32_t depth; /* versions in the chain from this one on */
	struct lbuf *buf;
	struct ver *next; /* the one before it */
};

struct line {
	uint64_t no;  /* line number: lba / L */
	uint64_t seq; /* when it became dirty, for fifo */
	struct lbuf *buf;
	struct ver *old; /* older versions of dirty sectors, newest first */
	uint32_t dirty;  /* mask of dirty sectors in the line */
};

struct ring_ent {
	uint64_t no, seq;
};

/* A hash slot holds the line number beside the index, so that probing and
 * backward-shift deletion never visit the line table. */
struct slot {
	uint64_t no;
	uint32_t i1; /* dense index + 1, 0 = empty */
};

struct cache_dev {
	struct bdev dev;
	struct bdev *lower;
	uint32_t cap; /* dirty sectors the cache holds */
	uint32_t L, lshift;
	uint32_t ndirty; /* dirty sectors held */
	uint32_t n;      /* lines held */
	bool flush_honor, fua_honor;
	int order;
	uint32_t versions; /* versions of a dirty sector a cut may find: 1 = newest only */
	struct bo_rng rng; /* random write-back order: part of the state, cloned */
	uint64_t seq_next;
	struct line *lines; /* [cap], dense */
	struct slot *tab;   /* the hash on line numbers */
	uint32_t tmask;
	unsigned tbits;
	/* fifo: lines in the order they became dirty; stale entries are skipped */
	struct ring_ent *ring;
	uint32_t rcap, rhead, rlen;
	/* lba: the current sweep of the elevator, ascending line numbers */
	uint64_t *sweep; /* [2 lcap]: the sweep, then room to sort it */
	uint32_t spos, slen;
	uint64_t head;
	uint32_t *scratch; /* [lcap] for sorting */
	uint32_t lcap;     /* room in lines, scratch, sweep: grows with n, up to cap */
	struct lbuf *freebuf[FREE_BUFS];
	unsigned nfree;
	struct ver *freever; /* version nodes kept for reuse, through next */
	unsigned nfreever;
	uint64_t reads, read_hits, writes, fua_writes, flushes, writebacks;
};

static inline size_t line_bytes(const struct cache_dev *c)
{
	return (size_t)c->L * c->dev.sector_size;
}

static inline uint32_t slot_of(const struct cache_dev *c, uint64_t no)
{
	return (uint32_t)((no * 0x9e3779b97f4a7c15ull) >> (64 - c->tbits));
}

/* cache_lines.c */
void cache_buf_free(struct lbuf *b);
struct lbuf *cache_buf_get(struct cache_dev *c);
void cache_buf_put(struct cache_dev *c, struct lbuf *b);
struct ver *cache_ver_get(struct cache_dev *c);
void cache_ver_put(struct cache_dev *c, struct ver *v);
struct ver *cache_ver_copy(struct cache_dev *c, const struct ver *v, uint32_t keep, uint32_t mask,
                           int *rc);
int cache_keep_version(struct cache_dev *c, struct line *ln, uint32_t mask, uint32_t over);

#endif
