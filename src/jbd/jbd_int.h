/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jbd_int.h — internals shared by the journal's source files (format helpers, the
 * block-keyed map, the journal struct). Not a public interface. */
#ifndef BLACKOUT_JBD_INT_H
#define BLACKOUT_JBD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/jbd.h"

/* A map keyed by block number, in insertion order: the running transaction's
 * buffers, the committed-but-not-home buffers, revoke tables. Entries removed
 * stay in place (live = false) so iteration order is stable. */
struct jmap_ent {
	uint64_t block;
	uint64_t val;  /* revoke tables: the tid */
	uint8_t *data; /* buffer maps: the block's content (owned) */
	bool live;
	bool ref; /* running map: content is the client's until commit (cfg.fetch) */
};
/* Block buffers kept for reuse: a transaction's copies are freed at commit or
 * checkpoint and the next transaction needs as many again; recycling them spares
 * the allocator and the page faults of a heap that shrank and grows back. */
struct jbuf_pool {
	uint8_t **b;
	size_t n, max;
};
uint8_t *jbuf_get(struct jbuf_pool *p, size_t bytes); /* NULL: out of memory */
void jbuf_put(struct jbuf_pool *p, uint8_t *b);       /* p NULL or full: freed */
void jbuf_pool_free(struct jbuf_pool *p);

struct jmap {
	struct jbuf_pool *pool; /* where freed entry data goes (NULL: free) */
	struct jmap_ent *e;
	size_t n, cap, live;
	uint32_t *slot; /* index + 1 into e, 0 = empty */
	size_t nslots;
};
void jmap_init(struct jmap *m);
void jmap_free(struct jmap *m);
void jmap_clear(struct jmap *m);
/* index of the live entry for block, or -1 */
long jmap_find(const struct jmap *m, uint64_t block);
/* finds or creates (live) the entry for block; *idx its index. -ENOMEM. */
int jmap_put(struct jmap *m, uint64_t block, size_t *idx);
void jmap_del(struct jmap *m, size_t idx);

struct jbd_handle {
	struct jbd_journal *j;
	uint32_t credits;
};

struct jbd_journal {
	struct bdev *d;
	struct jbd_config cfg;
	struct jbd_extent *ext; /* our copy of the client's extent list */
	uint64_t dev_blocks;    /* device size in blocks */
	uint64_t fs_blocks;     /* home blocks must be below this */
	struct jbd_sb sb;
	uint8_t *sbbuf; /* the superblock's journal block as read: rewritten in place */

	/* format, from the superblock features */
	bool csum_v23, csum_v3, v64, csum_v1;
	uint32_t tag_bytes;
	uint32_t csum_seed;

	/* the log: blocks [first, last) of the journal */
	uint32_t first, last;
	uint32_t head;     /* next log block to write */
	uint32_t tail;     /* oldest log block still needed */
	uint32_t next_tid; /* id of the next transaction to commit */
	uint64_t used;     /* log blocks from tail to head */
	bool sb_empty;     /* the superblock on disk says s_start = 0 */
	bool loaded;

	struct jmap running;   /* the running transaction's buffers */
	struct jmap revokes;   /* its revoke records */
	struct jmap ckpt;      /* committed content not yet written home */
	struct jbuf_pool pool; /* the two maps' block buffers, for reuse */
	uint32_t depth;        /* open handles (nesting) */
	uint64_t reserved;     /* credits of the running transaction */
	uint64_t max_buffers;
	struct jbd_handle handle;
	bool data_dirty; /* ordered/writeback data written since the last flush */

	int aborted;
	struct bo_err err;
	struct jbd_stats st;
	uint8_t *tmp, *tmp2;
	uint8_t *rbuf; /* replay: the blocks of one descriptor */
	size_t rbuf_blocks;
};

/* format.c */
uint32_t jbd_sb_csum(const uint8_t *sbbuf);
void jbd_sb_encode(struct jbd_journal *j); /* j->sb into j->sbbuf, checksum updated */
int jbd_setup_format(struct jbd_journal *j);
uint32_t jbd_tag_csum(const struct jbd_journal *j, uint32_t tid, const void *block);
uint32_t jbd_block_tail_csum(const struct jbd_journal *j, const uint8_t *block);
bool jbd_block_tail_ok(const struct jbd_journal *j, const uint8_t *block);
uint32_t jbd_commit_csum(const struct jbd_journal *j, const uint8_t *block);
bool jbd_commit_csum_ok(const struct jbd_journal *j, const uint8_t *block);

/* journal.c */
int jbd_bmap(struct jbd_journal *j, uint64_t lblk, uint64_t *pblk);
int jbd_log_read(struct jbd_journal *j, uint64_t lblk, void *buf);
int jbd_log_read_n(struct jbd_journal *j, uint32_t lblk, uint32_t n, uint8_t *buf);
int jbd_log_write(struct jbd_journal *j, uint64_t lblk, const void *buf, unsigned flags);
int jbd_write_sb(struct jbd_journal *j, unsigned flags);
static inline uint32_t jbd_wrap(const struct jbd_journal *j, uint64_t b)
{
	/* a corrupt descriptor may skip further than one turn of the log */
	return (uint32_t)(b >= j->last ? j->first + (b - j->first) % (j->last - j->first) : b);
}

#endif
