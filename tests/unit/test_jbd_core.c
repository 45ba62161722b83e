// SPDX-License-Identifier: GPL-2.0-or-later
/* test_jbd_core.c — the journal's promises on a memory device: commit then crash
 * then recover gives the committed state, for every format variant; escaping,
 * revoke, wrap-around; ids increase across mounts; barriers; write errors abort. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/jbd.h"
#include "tap.h"
#include "test_jbd_dev.h"

#define DEVBLK 2048

static uint32_t crc32_be_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= (uint32_t)p[i] << 24;
		for (int k = 0; k < 8; k++)
			crc = crc & 0x80000000u ? crc << 1 ^ 0x04c11db7u : crc << 1;
	}
	return crc;
}

static void test_crc(void)
{
	uint8_t b[1000];
	fill_block(b, sizeof(b), 7);
	is_int(jbd_crc32_be(~0u, b, sizeof(b)), crc32_be_bitwise(~0u, b, sizeof(b)),
	       "crc32_be matches the bitwise definition");
	is_int(jbd_crc32_be(~0u, "123456789", 9), 0x0376e6e7u,
	       "crc32_be check value (CRC-32/MPEG-2: seed ~0, no inversion)");
}

static struct bdev *mkdev(uint32_t bs)
{
	struct bdev *d;
	if (blk_mem_open(512, (uint64_t)DEVBLK * bs / 512, &d))
		return NULL;
	return d;
}

static int dev_block(struct bdev *d, uint32_t bs, uint64_t b, uint8_t *buf)
{
	return blk_pread(d, b * bs, bs, buf);
}

/* A journal with `feat` on a fresh device. */
static struct jbd_journal *mkjournal(struct bdev *d, struct tj *t, uint32_t bs, uint32_t compat,
                                     uint32_t incompat)
{
	static const uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	struct bo_err err = {{0}};
	tj_init(t, bs, 256, DEVBLK);
	if (jbd_journal_format(d, &t->cfg, uuid, compat, incompat, 1, true, &err))
		return NULL;
	struct jbd_journal *j;
	if (jbd_journal_open(d, &t->cfg, &j, &err))
		return NULL;
	if (jbd_journal_load(j)) {
		jbd_journal_destroy(j, false);
		return NULL;
	}
	return j;
}

static int put_blocks(struct jbd_journal *j, uint32_t bs, uint64_t first, int n, uint64_t seed)
{
	struct jbd_handle *h;
	uint8_t *b = malloc(bs);
	int rc = jbd_journal_start(j, (uint32_t)n, &h);
	for (int i = 0; i < n && !rc; i++) {
		fill_block(b, bs, seed + (uint64_t)i);
		if (i == 0)
			put_be32(b, JBD_MAGIC); /* needs escaping */
		rc = jbd_journal_get_write_access(h, first + (uint64_t)i);
		if (!rc)
			rc = jbd_journal_dirty_metadata(h, first + (uint64_t)i, b);
	}
	if (!rc)
		rc = jbd_journal_stop(h);
	free(b);
	return rc;
}

static bool has_blocks_(struct bdev *d, uint32_t bs, uint64_t first, int n, uint64_t seed,
                        bool magic_first)
{
	uint8_t *b = malloc(bs), *w = malloc(bs);
	bool same = true;
	for (int i = 0; i < n && same; i++) {
		fill_block(w, bs, seed + (uint64_t)i);
		if (i == 0 && magic_first)
			put_be32(w, JBD_MAGIC);
		same = !dev_block(d, bs, first + (uint64_t)i, b) && !memcmp(b, w, bs);
	}
	free(b);
	free(w);
	return same;
}

static bool has_blocks(struct bdev *d, uint32_t bs, uint64_t first, int n, uint64_t seed)
{
	return has_blocks_(d, bs, first, n, seed, true);
}

/* Recovers a clone of d (the crash state) and returns it. */
static struct bdev *crash_recover(struct bdev *d, struct tj *t, struct jbd_recovery_info *info,
                                  int *rcp)
{
	struct bdev *c;
	if (blk_clone(d, &c))
		return NULL;
	struct jbd_journal *j;
	struct bo_err err = {{0}};
	*rcp = jbd_journal_open(c, &t->cfg, &j, &err);
	if (*rcp)
		return c;
	*rcp = jbd_journal_recover(j, info);
	jbd_journal_destroy(j, false);
	return c;
}

static void test_variants(void)
{
	static const struct {
		const char *name;
		uint32_t bs, compat, incompat;
	} v[] = {
	    {"plain 1k", 1024, 0, 0},
	    {"v1 crc32 1k", 1024, JBD_FEATURE_COMPAT_CHECKSUM, 0},
	    {"csum v3 1k", 1024, 0, JBD_FEATURE_INCOMPAT_CSUM_V3},
	    {"csum v2 64bit 4k", 4096, 0,
	     JBD_FEATURE_INCOMPAT_CSUM_V2 | JBD_FEATURE_INCOMPAT_64BIT},
	    {"csum v3 64bit 4k", 4096, 0,
	     JBD_FEATURE_INCOMPAT_CSUM_V3 | JBD_FEATURE_INCOMPAT_64BIT},
	};
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		uint32_t bs = v[k].bs;
		struct bdev *d = mkdev(bs);
		struct tj t;
		struct jbd_journal *j = mkjournal(d, &t, bs, v[k].compat, v[k].incompat);
		tap_require(j, "%s: journal formatted and loaded", v[k].name);
		/* enough tags to need two descriptor blocks in 1k blocks */
		ok(!put_blocks(j, bs, 1000, 60, 1) && !jbd_journal_commit(j),
		   "%s: commit 60 blocks", v[k].name);
		ok(!put_blocks(j, bs, 1030, 10, 500), "%s: second transaction, overlapping",
		   v[k].name);
		struct jbd_handle *h;
		ok(!jbd_journal_start(j, 1, &h) && !jbd_journal_forget(h, 1059) &&
		       !jbd_journal_stop(h),
		   "%s: revoke a block of the first transaction", v[k].name);
		ok(!jbd_journal_commit(j), "%s: second commit", v[k].name);
		ok(!put_blocks(j, bs, 1100, 5, 900), "%s: third transaction, left uncommitted",
		   v[k].name);
		struct jbd_recovery_info info;
		int rc;
		struct bdev *c = crash_recover(d, &t, &info, &rc);
		is_int(rc, 0, "%s: recovery succeeds", v[k].name);
		is_int(info.nr_transactions, 2, "%s: two transactions replayed", v[k].name);
		is_int(info.nr_revoked, 1, "%s: one block skipped as revoked", v[k].name);
		ok(has_blocks(c, bs, 1000, 30, 1) && has_blocks(c, bs, 1030, 10, 500) &&
		       has_blocks_(c, bs, 1040, 19, 41, false),
		   "%s: home blocks hold the newest committed content (escaped blocks restored)",
		   v[k].name);
		uint8_t *z = calloc(1, bs), *b = malloc(bs);
		ok(!dev_block(c, bs, 1059, b) && !memcmp(b, z, bs),
		   "%s: the revoked block is not written", v[k].name);
		ok(!dev_block(c, bs, 1100, b) && !memcmp(b, z, bs),
		   "%s: the uncommitted transaction is not replayed", v[k].name);
		/* the recovered journal is empty and continues with a later id */
		struct jbd_journal *j2;
		struct bo_err err = {{0}};
		ok(!jbd_journal_open(c, &t.cfg, &j2, &err) && !jbd_journal_needs_recovery(j2) &&
		       jbd_journal_next_tid(j2) == 4,
		   "%s: after recovery s_start = 0, next tid = end + 1 (as e2fsck)", v[k].name);
		jbd_journal_destroy(j2, false);
		free(z);
		free(b);
		blk_close(c);
		jbd_journal_destroy(j, false);
		blk_close(d);
	}
}

/* Many transactions through a small log: checkpoints, wrap-around; a crash after
 * any commit recovers exactly the committed state. */
static void test_wrap(void)
{
	uint32_t bs = 1024;
	struct bdev *d = mkdev(bs);
	struct tj t;
	struct jbd_journal *j = mkjournal(d, &t, bs, 0, JBD_FEATURE_INCOMPAT_CSUM_V3);
	tap_require(j, "wrap: journal");
	uint64_t seeds[64] = {0};
	int bad = 0, wrapped = 0;
	uint32_t prev_head = 0;
	for (int round = 1; round <= 60; round++) {
		uint64_t first = 1000 + (uint64_t)(round * 7 % 50);
		int n = 1 + round % 13;
		if (put_blocks(j, bs, first, n, (uint64_t)round * 1000) || jbd_journal_commit(j)) {
			bad++;
			break;
		}
		for (int i = 0; i < n; i++)
			seeds[first - 1000 + (uint64_t)i] =
			    (uint64_t)round * 1000 + (uint64_t)i + 1;
		struct jbd_stats st;
		jbd_journal_stats(j, &st);
		(void)prev_head;
		if (st.checkpoints)
			wrapped = 1;
		struct jbd_recovery_info info;
		int rc;
		struct bdev *c = crash_recover(d, &t, &info, &rc);
		uint8_t *b = malloc(bs), *w = malloc(bs);
		for (int i = 0; i < 64 && !rc; i++) {
			if (!seeds[i])
				continue;
			/* put_blocks escapes the first block of each transaction */
			fill_block(w, bs, seeds[i] - 1);
			uint64_t s = seeds[i] - 1;
			if (s % 1000 == 0)
				put_be32(w, JBD_MAGIC);
			if (dev_block(c, bs, 1000 + (uint64_t)i, b) || memcmp(b, w, bs))
				bad++;
		}
		if (rc)
			bad++;
		free(b);
		free(w);
		blk_close(c);
	}
	is_int(bad, 0, "wrap: every crash after a commit recovers the committed state (60 rounds)");
	ok(wrapped, "wrap: the log was checkpointed and reused");
	jbd_journal_destroy(j, false);
	blk_close(d);
}

/* The peer bug: ids reset after a clean unmount let stale transactions replay. */
static void test_ids(void)
{
	uint32_t bs = 1024;
	struct bdev *d = mkdev(bs);
	struct tj t;
	struct jbd_journal *j = mkjournal(d, &t, bs, 0, 0);
	tap_require(j, "ids: journal");
	for (int i = 0; i < 20; i++)
		put_blocks(j, bs, 1200 + (uint64_t)i, 3, 7000 + (uint64_t)i * 10),
		    jbd_journal_commit(j);
	uint32_t tid1 = jbd_journal_next_tid(j);
	is_int(jbd_journal_destroy(j, true), 0, "ids: clean unmount");
	struct bo_err err = {{0}};
	ok(!jbd_journal_open(d, &t.cfg, &j, &err) && !jbd_journal_needs_recovery(j),
	   "ids: clean journal needs no recovery");
	is_int(jbd_journal_next_tid(j), tid1, "ids: s_sequence continues after a clean unmount");
	ok(!jbd_journal_load(j), "ids: load");
	/* overwrite home of the first session's blocks, one small new transaction,
	 * then crash: nothing of the first session may replay over it */
	uint8_t *b = malloc(bs);
	memset(b, 0xab, bs);
	for (int i = 0; i < 25; i++)
		blk_pwrite(d, (1200 + (uint64_t)i) * bs, bs, b, 0);
	put_blocks(j, bs, 1500, 1, 1);
	ok(!jbd_journal_commit(j), "ids: commit in the second session");
	ok(jbd_journal_next_tid(j) == tid1 + 1, "ids: the new transaction took the next id");
	struct jbd_recovery_info info;
	int rc;
	struct bdev *c = crash_recover(d, &t, &info, &rc);
	is_int(info.nr_transactions, 1, "ids: only the new transaction is replayed");
	int stale = 0;
	for (int i = 0; i < 25; i++) {
		uint8_t *r = malloc(bs);
		dev_block(c, bs, 1200 + (uint64_t)i, r);
		stale += memcmp(r, b, bs) != 0;
		free(r);
	}
	is_int(stale, 0, "ids: no stale block of the first session replayed");
	blk_close(c);
	free(b);
	jbd_journal_destroy(j, false);
	blk_close(d);
}

static size_t count_ops(const struct tdev *t, int op, unsigned flags)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nops; i++)
		n += t->ops[i].op == op && (t->ops[i].flags & flags) == flags;
	return n;
}

static void test_barrier(void)
{
	uint32_t bs = 1024;
	for (int barrier = 0; barrier <= 1; barrier++) {
		struct bdev *m = mkdev(bs);
		struct tdev *td = tdev_open(m);
		struct tj t;
		struct jbd_journal *j = mkjournal(&td->dev, &t, bs, 0, 0);
		jbd_journal_destroy(j, true);
		t.cfg.barrier = barrier;
		t.cfg.data = JBD_DATA_ORDERED;
		struct bo_err err = {{0}};
		jbd_journal_open(&td->dev, &t.cfg, &j, &err);
		jbd_journal_load(j);
		td->nops = 0;
		/* an ordered data block written by the client, then metadata */
		uint8_t *b = calloc(1, bs);
		blk_pwrite(&td->dev, 1700 * (uint64_t)bs, bs, b, 0);
		struct jbd_handle *h;
		jbd_journal_start(j, 2, &h);
		is_int(jbd_journal_dirty_data(h, 1700, b), 1,
		       "barrier=%d: ordered data: client writes", barrier);
		jbd_journal_dirty_metadata(h, 1701, b);
		jbd_journal_stop(h);
		ok(!jbd_journal_force_commit(j), "barrier=%d: force commit", barrier);
		/* find the commit block: the last write */
		size_t last = td->nops;
		while (last && td->ops[last - 1].op != T_WRITE)
			last--;
		bool flush_before = last >= 2 && td->ops[last - 2].op == T_FLUSH;
		bool commit_fua = last && (td->ops[last - 1].flags & BLK_FUA);
		if (barrier) {
			ok(flush_before && commit_fua,
			   "barrier=1: flush (data + log) before the commit block, commit FUA");
		} else {
			ok(!count_ops(td, T_FLUSH, 0) && !count_ops(td, T_WRITE, BLK_FUA),
			   "barrier=0: no flush and no FUA at all");
		}
		/* fsync with only data dirty: a flush with barrier=1 */
		jbd_journal_start(j, 1, &h);
		jbd_journal_dirty_data(h, 1702, b);
		jbd_journal_stop(h);
		size_t flushes = count_ops(td, T_FLUSH, 0);
		jbd_journal_force_commit(j);
		is_int(count_ops(td, T_FLUSH, 0) - flushes, barrier,
		       "barrier=%d: fsync of data alone flushes iff barrier", barrier);
		/* checkpoint: home writes flushed before the superblock moves the tail */
		td->nops = 0;
		jbd_journal_checkpoint(j);
		if (barrier)
			ok(td->nops >= 3 && td->ops[td->nops - 2].op == T_FLUSH &&
			       td->ops[td->nops - 1].flags & BLK_FUA &&
			       td->ops[td->nops - 1].lba == tj_pblk(&t, 0) * bs / 512,
			   "barrier=1: checkpoint: home writes, flush, superblock FUA");
		else
			ok(!count_ops(td, T_FLUSH, 0), "barrier=0: checkpoint without flush");
		free(b);
		jbd_journal_destroy(j, false);
		blk_close(&td->dev);
		blk_close(m);
	}
}

static void test_data_journal(void)
{
	uint32_t bs = 1024;
	struct bdev *d = mkdev(bs);
	struct tj t;
	tj_init(&t, bs, 256, DEVBLK);
	struct jbd_journal *j = mkjournal(d, &t, bs, 0, 0);
	jbd_journal_destroy(j, true);
	t.cfg.data = JBD_DATA_JOURNAL;
	struct bo_err err = {{0}};
	jbd_journal_open(d, &t.cfg, &j, &err);
	jbd_journal_load(j);
	uint8_t *b = malloc(bs);
	fill_block(b, bs, 42);
	struct jbd_handle *h;
	jbd_journal_start(j, 1, &h);
	is_int(jbd_journal_dirty_data(h, 1800, b), 0,
	       "data=journal: the journal takes data blocks");
	jbd_journal_stop(h);
	jbd_journal_commit(j);
	uint8_t *r = malloc(bs);
	ok(jbd_journal_read_block(j, 1800, r) == 1 && !memcmp(r, b, bs),
	   "data=journal: the newest content readable from the journal");
	struct jbd_recovery_info info;
	int rc;
	struct bdev *c = crash_recover(d, &t, &info, &rc);
	ok(!rc && !dev_block(c, bs, 1800, r) && !memcmp(r, b, bs),
	   "data=journal: a data block replayed after a crash");
	blk_close(c);
	free(b);
	free(r);
	jbd_journal_destroy(j, false);
	blk_close(d);
}

static void test_errors(void)
{
	uint32_t bs = 1024;
	struct bdev *m = mkdev(bs);
	struct tdev *td = tdev_open(m);
	struct tj t;
	struct jbd_journal *j = mkjournal(&td->dev, &t, bs, 0, 0);
	tap_require(j, "errors: journal");
	put_blocks(j, bs, 1000, 4, 1);
	/* the commit block write fails */
	td->fail_after = (long)td->writes + 5;
	int rc = jbd_journal_force_commit(j);
	ok(rc < 0, "errors: a failed commit write is returned by force commit (%d)", rc);
	ok(jbd_journal_aborted(j) != 0, "errors: the journal is aborted");
	td->fail_after = -1;
	struct jbd_handle *h;
	ok(jbd_journal_start(j, 1, &h) < 0, "errors: later handles fail");
	ok(jbd_journal_force_commit(j) < 0, "errors: a later fsync never reports success");
	ok(jbd_journal_destroy(j, true) < 0, "errors: a clean unmount reports the error");

	/* checkpoint write failure */
	j = mkjournal(&td->dev, &t, bs, 0, 0);
	put_blocks(j, bs, 1000, 4, 1);
	jbd_journal_commit(j);
	td->fail_lo = 1002 * (uint64_t)bs / 512;
	td->fail_hi = td->fail_lo + 2;
	ok(jbd_journal_checkpoint(j) < 0 && jbd_journal_aborted(j),
	   "errors: a failed checkpoint write aborts the journal");
	td->fail_lo = td->fail_hi = 0;
	ok(jbd_journal_force_commit(j) < 0, "errors: and fsync fails afterwards");
	jbd_journal_destroy(j, false);
	struct bo_err err = {{0}};
	ok(!jbd_journal_open(&td->dev, &t.cfg, &j, &err) && jbd_journal_sb(j)->errno_ != 0,
	   "errors: s_errno recorded in the journal superblock");
	ok(jbd_journal_load(j) == -EUCLEAN, "errors: an aborted journal is refused until checked");
	jbd_journal_destroy(j, false);
	blk_close(&td->dev);
	blk_close(m);
}

/* A crash at every write of a commit: the state is the old or the new one. */
static void test_torn_commit(void)
{
	uint32_t bs = 1024;
	int bad = 0, tried = 0;
	for (long cut = 0; cut < 12; cut++) {
		struct bdev *m = mkdev(bs);
		struct tdev *td = tdev_open(m);
		struct tj t;
		struct jbd_journal *j =
		    mkjournal(&td->dev, &t, bs, 0, JBD_FEATURE_INCOMPAT_CSUM_V3);
		put_blocks(j, bs, 1000, 8, 1);
		jbd_journal_commit(j);
		put_blocks(j, bs, 1004, 8, 100);
		td->fail_after = (long)td->writes + cut;
		jbd_journal_commit(j);
		jbd_journal_destroy(j, false);
		struct jbd_recovery_info info;
		int rc;
		struct bdev *c = crash_recover(m, &t, &info, &rc);
		bool old = has_blocks(c, bs, 1000, 8, 1);
		bool new = has_blocks(c, bs, 1000, 4, 1) && has_blocks(c, bs, 1004, 8, 100);
		bad += rc || !(old || new);
		tried++;
		blk_close(c);
		blk_close(&td->dev);
		blk_close(m);
	}
	is_int(bad, 0, "torn commit: a cut at each of %d writes gives the old or the new state",
	       tried);
}

/* A handle larger than a quarter of the log still works up to what fits in it. */
static void test_big_handle(void)
{
	uint32_t bs = 1024;
	struct bdev *d = mkdev(bs);
	struct tj t;
	struct jbd_journal *j = mkjournal(d, &t, bs, 0, JBD_FEATURE_INCOMPAT_CSUM_V3);
	ok(!put_blocks(j, bs, 1000, 200, 3) && !jbd_journal_commit(j),
	   "big handle: 200 blocks in a 256-block journal commit");
	struct jbd_recovery_info info;
	int rc;
	struct bdev *c = crash_recover(d, &t, &info, &rc);
	ok(!rc && has_blocks(c, bs, 1000, 200, 3), "big handle: and recover");
	blk_close(c);
	ok(put_blocks(j, bs, 1000, 300, 3) == -ENOSPC,
	   "big handle: 300 blocks do not fit the log: -ENOSPC, not a corrupt log");
	jbd_journal_destroy(j, false);
	blk_close(d);
}

/* A block logged as metadata, freed, then written home as ordered data: neither
 * replay nor checkpoint may put the old metadata over the data. */
static void test_reuse_as_data(void)
{
	uint32_t bs = 1024;
	struct bdev *d = mkdev(bs);
	struct tj t;
	struct jbd_journal *j = mkjournal(d, &t, bs, 0, 0);
	put_blocks(j, bs, 1300, 2, 11);
	jbd_journal_commit(j);
	uint8_t *data = malloc(bs), *r = malloc(bs);
	memset(data, 0xda, bs);
	blk_pwrite(d, 1301 * (uint64_t)bs, bs, data, 0); /* the client writes data home */
	struct jbd_handle *h;
	jbd_journal_start(j, 1, &h);
	is_int(jbd_journal_dirty_data(h, 1301, data), 1,
	       "reuse: ordered data written by the client");
	jbd_journal_stop(h);
	jbd_journal_commit(j);
	struct jbd_recovery_info info;
	int rc;
	struct bdev *c = crash_recover(d, &t, &info, &rc);
	ok(!rc && !dev_block(c, bs, 1301, r) && !memcmp(r, data, bs) && info.nr_revoked == 1,
	   "reuse: replay does not write the old metadata over the data (revoked)");
	blk_close(c);
	jbd_journal_checkpoint(j);
	ok(!dev_block(d, bs, 1301, r) && !memcmp(r, data, bs), "reuse: nor does the checkpoint");
	ok(has_blocks(d, bs, 1300, 1, 11), "reuse: the other block of the transaction went home");
	free(data);
	free(r);
	jbd_journal_destroy(j, false);
	blk_close(d);
}

/* The client of a by-reference journal: its current block contents, and what the
 * journal fetched. */
struct ref_client {
	uint32_t bs;
	uint8_t cur[4][1024]; /* blocks 1400..1403 */
	int fetches, releases;
};
static int ref_fetch(void *ctx, uint64_t block, void *buf, bool release)
{
	struct ref_client *c = ctx;
	if (block < 1400 || block > 1403)
		return -EIO;
	memcpy(buf, c->cur[block - 1400], c->bs);
	c->fetches++;
	c->releases += release;
	return 0;
}

static void test_dirty_ref(void)
{
	uint32_t bs = 1024;
	struct bdev *d = mkdev(bs);
	struct tj t;
	struct jbd_journal *j = mkjournal(d, &t, bs, 0, 0);
	struct jbd_handle *h;
	jbd_journal_start(j, 1, &h);
	is_int(jbd_journal_dirty_ref(h, 1400), -EINVAL, "ref: refused without a fetch callback");
	jbd_journal_stop(h);
	jbd_journal_destroy(j, false);

	static struct ref_client c = {.bs = 1024};
	t.cfg.fetch = ref_fetch;
	t.cfg.fetch_ctx = &c;
	struct bo_err err = {{0}};
	ok(jbd_journal_open(d, &t.cfg, &j, &err) == 0 && jbd_journal_load(j) == 0, "ref: reopen");
	/* three handles change block 1400; 1401 and 1402 once each */
	for (int k = 0; k < 3; k++) {
		jbd_journal_start(j, 2, &h);
		fill_block(c.cur[0], bs, 100 + (uint64_t)k);
		jbd_journal_get_write_access(h, 1400);
		ok(jbd_journal_dirty_ref(h, 1400) == 0, "ref: handle %d dirties 1400", k);
		if (k < 2) {
			fill_block(c.cur[1 + k], bs, 200 + (uint64_t)k);
			jbd_journal_dirty_ref(h, 1401 + (uint64_t)k);
		}
		jbd_journal_stop(h);
	}
	is_int(c.fetches, 0, "ref: nothing copied while the transaction runs");
	uint8_t *r = malloc(bs), *w = malloc(bs);
	ok(jbd_journal_read_block(j, 1400, r) == 1 && !memcmp(r, c.cur[0], bs) && c.fetches == 1 &&
	       c.releases == 0,
	   "ref: read_block fetches the client's content and keeps the reference");
	/* 1402 freed before the commit: no fetch, a revoke */
	jbd_journal_start(j, 1, &h);
	jbd_journal_forget(h, 1402);
	jbd_journal_stop(h);
	fill_block(c.cur[0], bs, 999); /* changed after the last handle: still this tx's */
	c.fetches = 0;
	is_int(jbd_journal_commit(j), 0, "ref: commit");
	is_int(c.fetches, 2, "ref: the commit fetched each held block once (1400, 1401)");
	is_int(c.releases, 2, "ref: and released them");
	jbd_journal_start(j, 1, &h);
	fill_block(c.cur[3], bs, 300);
	jbd_journal_dirty_ref(h, 1403);
	jbd_journal_stop(h);
	fill_block(c.cur[0], bs, 555); /* after its commit: the journal's copy is the old one */
	struct jbd_recovery_info info;
	int rc;
	struct bdev *cr = crash_recover(d, &t, &info, &rc);
	fill_block(w, bs, 999);
	ok(!rc && !dev_block(cr, bs, 1400, r) && !memcmp(r, w, bs),
	   "ref: replay writes 1400 as it was at the commit");
	fill_block(w, bs, 200);
	ok(!dev_block(cr, bs, 1401, r) && !memcmp(r, w, bs), "ref: and 1401");
	ok(!dev_block(cr, bs, 1403, r) && memcmp(r, c.cur[3], bs),
	   "ref: the uncommitted 1403 is not replayed");
	blk_close(cr);
	free(r);
	free(w);
	jbd_journal_destroy(j, false);
	blk_close(d);
}

int main(void)
{
	test_dirty_ref();
	test_reuse_as_data();
	test_big_handle();
	test_crc();
	test_variants();
	test_wrap();
	test_ids();
	test_barrier();
	test_data_journal();
	test_errors();
	test_torn_commit();
	return tap_done();
}
