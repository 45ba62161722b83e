/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jbd.h — a journal in the JBD2 on-disk format (the one ext3/ext4 and e2fsck use),
 * with the jbd2 vocabulary: journal, transaction, handle, buffer. It knows nothing
 * about ext3: it works on a bdev, a block size and a map from journal logical
 * blocks to device blocks supplied by its client (fs/fs_jbd.c is one).
 *
 * Single-threaded and synchronous: a commit writes the log and returns; there is
 * one running transaction at a time. Every function returns 0 or a negative errno
 * with the detail in jbd_journal_err(). */
#ifndef BLACKOUT_JBD_H
#define BLACKOUT_JBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/err.h"

/* ---- On-disk format (all fields big-endian) ---------------------------------- */
#define JBD_MAGIC 0xc03b3998u
enum {
	JBD_DESCRIPTOR_BLOCK = 1,
	JBD_COMMIT_BLOCK = 2,
	JBD_SUPERBLOCK_V1 = 3,
	JBD_SUPERBLOCK_V2 = 4,
	JBD_REVOKE_BLOCK = 5,
};
enum {
	JBD_FLAG_ESCAPE = 1,    /* first 4 bytes of the block were the magic: zeroed in the log */
	JBD_FLAG_SAME_UUID = 2, /* no 16-byte uuid follows this tag */
	JBD_FLAG_DELETED = 4,
	JBD_FLAG_LAST_TAG = 8,
};
enum {
	JBD_FEATURE_COMPAT_CHECKSUM = 0x1, /* v1: crc32_be of the transaction in the commit */
	JBD_FEATURE_INCOMPAT_REVOKE = 0x1,
	JBD_FEATURE_INCOMPAT_64BIT = 0x2,
	JBD_FEATURE_INCOMPAT_ASYNC_COMMIT = 0x4,
	JBD_FEATURE_INCOMPAT_CSUM_V2 = 0x8,
	JBD_FEATURE_INCOMPAT_CSUM_V3 = 0x10,
	JBD_FEATURE_INCOMPAT_FAST_COMMIT = 0x20,
};
enum { JBD_CRC32_CHKSUM = 1, JBD_CRC32C_CHKSUM = 4, JBD_CRC32_CHKSUM_SIZE = 4 };

/* Journal superblock offsets (the first 1024 bytes of journal block 0). */
enum {
	JBD_SB_BLOCKSIZE = 0x0c,
	JBD_SB_MAXLEN = 0x10,
	JBD_SB_FIRST = 0x14,
	JBD_SB_SEQUENCE = 0x18,
	JBD_SB_START = 0x1c,
	JBD_SB_ERRNO = 0x20,
	JBD_SB_FEATURE_COMPAT = 0x24,
	JBD_SB_FEATURE_INCOMPAT = 0x28,
	JBD_SB_FEATURE_RO_COMPAT = 0x2c,
	JBD_SB_UUID = 0x30,
	JBD_SB_NR_USERS = 0x40,
	JBD_SB_MAX_TRANSACTION = 0x48,
	JBD_SB_CHECKSUM_TYPE = 0x50,
	JBD_SB_NUM_FC_BLKS = 0x54,
	JBD_SB_CHECKSUM = 0xfc,
	JBD_SB_USERS = 0x100,
	JBD_SB_SIZE = 1024,
};

/* The superblock fields the journal uses, decoded and checked. */
struct jbd_sb {
	uint32_t blocktype; /* JBD_SUPERBLOCK_V1 or _V2 */
	uint32_t block_size, maxlen, first, sequence, start;
	int32_t errno_; /* s_errno: non-zero after an abort */
	uint32_t compat, incompat, ro_compat;
	uint8_t uuid[16];
	uint8_t checksum_type;
};

/* Decodes and checks a superblock (magic, type, sizes, features, checksum).
 * nr_blocks: the journal's length as the client knows it (0: not checked). */
int jbd_sb_parse(const uint8_t *buf, uint32_t block_size, uint64_t nr_blocks, struct jbd_sb *sb,
                 struct bo_err *err);
/* The big-endian CRC32 (poly 0x04c11db7, no inversion) of the v1 commit checksum. */
uint32_t jbd_crc32_be(uint32_t crc, const void *buf, size_t len);

/* ---- The client's block map ------------------------------------------------- */
struct jbd_extent {
	uint64_t lblk, pblk, count;
};
struct jbd_map {
	/* either an extent list (sorted by lblk, not required to be contiguous) ... */
	const struct jbd_extent *extents;
	size_t nr_extents;
	/* ... or a callback: *pblk = device block of journal block lblk (0 = hole) */
	int (*bmap)(void *ctx, uint64_t lblk, uint64_t *pblk);
	void *ctx;
};

enum jbd_data_mode { JBD_DATA_ORDERED, JBD_DATA_WRITEBACK, JBD_DATA_JOURNAL };

struct jbd_config {
	uint32_t block_size; /* journal block = filesystem block */
	uint64_t nr_blocks;  /* blocks the map covers (the journal inode's size) */
	struct jbd_map map;
	/* home block numbers must be below this (a filesystem's blocks count); 0 = the
	 * device's size in blocks. Replay never writes at or beyond it. */
	uint64_t fs_blocks;
	enum jbd_data_mode data;
	bool barrier; /* flush before the commit block, commit block FUA; sb FUA */
	/* Seconds written into commit blocks (h_commit_sec); a callback keeps runs
	 * deterministic. NULL: 0. */
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
	/* Recovery as the kernel's mount does it: a transaction whose commit block fails
	 * its checksum (after the ones before it were replayed) fails the recovery with
	 * -EUCLEAN and leaves the log in place, as jbd2_journal_load refuses with
	 * -EFSCORRUPTED. false: as e2fsck does it, report it (failed_commit) and reset. */
	bool corrupt_commit_fails;
	/* Where the content of a block dirtied by reference (jbd_journal_dirty_ref) is
	 * fetched from: fills buf with the client's current content of block; release:
	 * the journal has its copy now (the commit froze the block), the client may let
	 * the block go. Returns 0 or -errno. Needed only by clients that use
	 * jbd_journal_dirty_ref. */
	int (*fetch)(void *ctx, uint64_t block, void *buf, bool release);
	void *fetch_ctx;
	/* A checkpoint's failed home write: false (today's jbd2, and jbd since 2.6.28)
	 * aborts the journal and keeps the transaction in the log; true (the jbd the 2009
	 * expectations patch describes) counts it (checkpoint_errors), notes it in
	 * jbd_journal_err and completes the checkpoint: the tail moves past a transaction
	 * whose only good copy was in the log. */
	bool checkpoint_errors_ignored;
};

struct jbd_journal;
struct jbd_handle;

/* Opens a journal: reads and checks its superblock. Does not recover or write. */
int jbd_journal_open(struct bdev *d, const struct jbd_config *c, struct jbd_journal **out,
                     struct bo_err *err);
const struct bo_err *jbd_journal_err(const struct jbd_journal *j);
const struct jbd_sb *jbd_journal_sb(const struct jbd_journal *j);
/* True when the log holds transactions that may need replay (s_start != 0). */
bool jbd_journal_needs_recovery(const struct jbd_journal *j);

/* What a recovery found and did. */
struct jbd_recovery_info {
	uint32_t start_tid;       /* s_sequence at the start */
	uint32_t end_tid;         /* first transaction not replayed */
	uint32_t nr_transactions; /* complete transactions replayed */
	uint64_t nr_replayed;     /* blocks written home */
	uint64_t nr_revoked;      /* tagged blocks skipped because revoked */
	uint64_t nr_revoke_records;
	uint64_t nr_bad_csum;   /* tagged blocks skipped: data checksum mismatch */
	uint32_t failed_commit; /* tid whose commit was corrupt (replay stopped), or 0 */
	char stop[160];         /* why the scan stopped */
};

/* Three-pass recovery (scan, revoke, replay), as e2fsck and the kernel do it: the
 * scan stops at the first block that is not the expected next one of the log, and
 * at the first transaction whose commit checksum fails. Replayed blocks are made
 * durable, then the superblock is reset (s_start = 0, s_sequence = the next tid)
 * and written durably. -EUCLEAN for a corrupt log (a block number out of range, a
 * bad revoke block, a descriptor checksum failure inside a live transaction, and
 * with corrupt_commit_fails a commit checksum failure): no block is ever written
 * out of range. A no-op when the journal is empty. */
int jbd_journal_recover(struct jbd_journal *j, struct jbd_recovery_info *info);

/* Prepares for new transactions (recovers first if needed). Ids continue from
 * s_sequence: they strictly increase across mounts and clean unmounts. */
int jbd_journal_load(struct jbd_journal *j);

/* Handles: one fs operation. credits = distinct blocks it may dirty. Starting a
 * handle may commit and checkpoint the running transaction to make room. */
int jbd_journal_start(struct jbd_journal *j, uint32_t credits, struct jbd_handle **out);
int jbd_journal_stop(struct jbd_handle *h);
int jbd_journal_get_write_access(struct jbd_handle *h, uint64_t block);
/* The new content of a metadata block (copied). It goes home at checkpoint. */
int jbd_journal_dirty_metadata(struct jbd_handle *h, uint64_t block, const void *data);
/* The same, by reference: the client keeps the block's newest content and hands
 * it over only when the transaction commits (cfg.fetch, release = true), so a
 * block changed by many handles of one transaction is copied once, not once per
 * handle (JBD2 keeps the buffer, not a copy, in the running transaction). Until
 * then the client must keep that content: it is what the commit will log. */
int jbd_journal_dirty_ref(struct jbd_handle *h, uint64_t block);
/* A data block. data=journal: logged like metadata (return 0). ordered/writeback:
 * the client writes it home itself; the journal only notes that a flush is due
 * before the next commit record (returns 1 = "client writes it"). */
int jbd_journal_dirty_data(struct jbd_handle *h, uint64_t block, const void *data);
/* The block was freed: drop any logged copy and write a revoke record so replay
 * never writes old content over a block that may be reused. */
int jbd_journal_forget(struct jbd_handle *h, uint64_t block);

/* Commits the running transaction (if any): log blocks, (flush), commit block. */
int jbd_journal_commit(struct jbd_journal *j);
/* fsync: everything so far durable when it returns 0 (barrier=1). */
int jbd_journal_force_commit(struct jbd_journal *j);
/* Writes every committed block home, (flushes), advances the log tail durably. */
int jbd_journal_checkpoint(struct jbd_journal *j);
/* Newest content of `block` if the journal holds it (running or committed, not yet
 * home): 1 with buf filled, 0 if not held. */
int jbd_journal_read_block(struct jbd_journal *j, uint64_t block, void *buf);
/* clean: commit, checkpoint and mark the journal empty (s_start = 0, s_sequence =
 * next tid), durably. !clean: free without writing (power loss). */
int jbd_journal_destroy(struct jbd_journal *j, bool clean);

/* Aborted after a failed journal/commit/checkpoint write: every later operation
 * fails with this error (a later fsync never reports success). 0 if not aborted. */
int jbd_journal_aborted(const struct jbd_journal *j);
uint32_t jbd_journal_next_tid(const struct jbd_journal *j);

/* Writes a fresh, empty journal superblock (v2, first = 1, sequence = `sequence`)
 * at journal block 0 and zeroes the rest of the journal if `zero` is set. features:
 * JBD_FEATURE_INCOMPAT_* bits; compat: JBD_FEATURE_COMPAT_CHECKSUM or 0. */
int jbd_journal_format(struct bdev *d, const struct jbd_config *c, const uint8_t uuid[16],
                       uint32_t compat, uint32_t incompat, uint32_t sequence, bool zero,
                       struct bo_err *err);

/* Changes the superblock's feature bits (e.g. turns on checksums) of an empty
 * journal (s_start = 0) before load; -EBUSY if the log holds transactions. */
int jbd_journal_set_features(struct jbd_journal *j, uint32_t compat, uint32_t incompat);

/* Counters for benchmarks and tests. */
struct jbd_stats {
	uint64_t commits, log_blocks, checkpoints, home_writes, flushes, fua_writes;
	uint64_t checkpoint_errors; /* home writes that failed, the checkpoint went on */
};
void jbd_journal_stats(const struct jbd_journal *j, struct jbd_stats *st);

#endif
