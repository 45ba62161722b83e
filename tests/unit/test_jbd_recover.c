// SPDX-License-Identifier: GPL-2.0-or-later
/* test_jbd_recover.c — recovery of corrupt journals: bad superblocks, block
 * numbers beyond the filesystem, bad revoke counts, truncated transactions, and
 * thousands of random corruptions: an error or a safe stop, never a write out of
 * range (a tracing device counts every write outside the allowed blocks). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/jbd.h"
#include "blackout/util.h"
#include "tap.h"
#include "test_jbd_dev.h"

#define DEVBLK 2048
#define FSBLK  1900 /* home blocks below this; the journal's blocks are inside */
#define BS     1024

static const uint8_t uuid[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};

/* A device with a journal holding three committed transactions (and a revoke)
 * and one uncommitted. */
static struct bdev *build(struct tj *t, uint32_t compat, uint32_t incompat)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	if (blk_mem_open(512, (uint64_t)DEVBLK * BS / 512, &d))
		return NULL;
	tj_init(t, BS, 256, FSBLK);
	if (jbd_journal_format(d, &t->cfg, uuid, compat, incompat, 77, true, &err))
		return NULL;
	struct jbd_journal *j;
	if (jbd_journal_open(d, &t->cfg, &j, &err) || jbd_journal_load(j))
		return NULL;
	uint8_t b[BS];
	for (int tx = 0; tx < 4; tx++) {
		struct jbd_handle *h;
		jbd_journal_start(j, 20, &h);
		for (int i = 0; i < 12; i++) {
			fill_block(b, BS, (uint64_t)(tx * 100 + i));
			if (i == 3)
				put_be32(b, JBD_MAGIC);
			jbd_journal_dirty_metadata(h, 1000 + (uint64_t)(tx * 5 + i), b);
		}
		if (tx == 2)
			jbd_journal_forget(h, 1001);
		jbd_journal_stop(h);
		if (tx < 3)
			jbd_journal_commit(j);
	}
	jbd_journal_destroy(j, false);
	return d;
}

/* Recovers a clone of base (after `mut` corrupts it) through a tracing device;
 * *outside = writes outside the home range and the journal superblock. */
static int recover_traced(struct bdev *base, struct tj *t, unsigned long *outside,
                          unsigned long *writes, struct jbd_recovery_info *info)
{
	struct bdev *c;
	blk_cow_open(base, &c);
	struct tdev *td = tdev_open(c);
	td->allow_lo = 0;
	td->allow_hi = (uint64_t)FSBLK * BS / 512;
	struct jbd_journal *j;
	struct bo_err err = {{0}};
	int rc = jbd_journal_open(&td->dev, &t->cfg, &j, &err);
	if (!rc) {
		rc = jbd_journal_recover(j, info);
		jbd_journal_destroy(j, false);
	}
	*outside = td->outside;
	*writes = td->writes;
	blk_close(&td->dev);
	blk_close(c);
	return rc;
}

static void poke32(struct bdev *d, const struct tj *t, uint64_t lblk, uint32_t off, uint32_t v)
{
	uint8_t b[BS];
	blk_pread(d, tj_pblk(t, lblk) * BS, BS, b);
	put_be32(b + off, v);
	blk_pwrite(d, tj_pblk(t, lblk) * BS, BS, b, 0);
}

static void test_superblock(void)
{
	struct tj t;
	struct bdev *d = build(&t, 0, JBD_FEATURE_INCOMPAT_CSUM_V3);
	tap_require(d, "built a journal");
	struct jbd_recovery_info info;
	unsigned long outside, writes;
	is_int(recover_traced(d, &t, &outside, &writes, &info), 0, "intact journal recovers");
	is_int(info.nr_transactions, 3, "three committed transactions");
	ok(info.nr_revoked >= 1, "the revoked block is skipped");
	is_int(info.start_tid, 77, "ids start at s_sequence");

	static const struct {
		uint32_t off, v;
		const char *what;
	} bad[] = {
	    {0, 0x12345678, "bad magic"},
	    {4, 9, "bad block type"},
	    {JBD_SB_BLOCKSIZE, 512, "block size"},
	    {JBD_SB_MAXLEN, 100000, "s_maxlen beyond the journal"},
	    {JBD_SB_FIRST, 0, "s_first 0"},
	    {JBD_SB_FIRST, 300, "s_first beyond s_maxlen"},
	    {JBD_SB_START, 5000, "s_start out of range"},
	    {JBD_SB_FEATURE_INCOMPAT, 0x80, "unknown incompat feature"},
	    {JBD_SB_UUID, 0, "superblock checksum (uuid changed)"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bdev *c;
		blk_clone(d, &c);
		poke32(c, &t, 0, bad[i].off, bad[i].v);
		int rc = recover_traced(c, &t, &outside, &writes, &info);
		ok(rc < 0 && writes == 0, "superblock %s: refused (%d), nothing written",
		   bad[i].what, rc);
		blk_close(c);
	}
	blk_close(d);
}

static void test_log_corruption(void)
{
	struct tj t;
	struct bdev *d = build(&t, 0, 0); /* no checksums: the checks must stand alone */
	struct jbd_recovery_info info;
	unsigned long outside, writes;

	/* transaction 1 starts at log block 1: descriptor, 12 blocks, commit; the
	 * second descriptor is at 15 */
	struct bdev *c;
	blk_clone(d, &c);
	poke32(c, &t, 15, 12, 5000000); /* first tag's block beyond the fs */
	int rc = recover_traced(c, &t, &outside, &writes, &info);
	ok(rc == -EUCLEAN && writes == 0,
	   "tag naming a block beyond the filesystem: -EUCLEAN, nothing written (%d, %lu writes)",
	   rc, writes);
	ok(info.nr_transactions == 0 && info.end_tid == info.start_tid,
	   "... and the counts say so: transactions %u..%u, %u replayed", info.start_tid,
	   info.end_tid, info.nr_transactions);
	blk_close(c);

	/* a crash left the last transaction without its commit block and its
	 * descriptor half written (garbage tags): the end of the log, not corruption;
	 * what committed before it is replayed */
	uint32_t tdesc = 0, tcommit = 0;
	for (uint32_t l = 1; l < 80; l++) {
		uint8_t hb[BS];
		blk_pread(d, tj_pblk(&t, l) * BS, BS, hb);
		if (get_be32(hb) != JBD_MAGIC || get_be32(hb + 8) != 77 + 2)
			continue;
		if (get_be32(hb + 4) == JBD_DESCRIPTOR_BLOCK && !tdesc)
			tdesc = l;
		if (get_be32(hb + 4) == JBD_COMMIT_BLOCK)
			tcommit = l;
	}
	ok(tdesc && tcommit, "transaction 79: descriptor at %u, commit at %u", tdesc, tcommit);
	blk_clone(d, &c);
	poke32(c, &t, tcommit, 0, 0); /* the commit block never reached the disk */
	poke32(c, &t, tdesc, 12, 5000000);
	rc = recover_traced(c, &t, &outside, &writes, &info);
	ok(rc == 0 && info.nr_transactions == 2 && outside == 0,
	   "garbage tags in an uncommitted tail: the two committed transactions replayed "
	   "(%d, %u)",
	   rc, info.nr_transactions);
	blk_close(c);

	blk_clone(d, &c);
	poke32(c, &t, 15, 12, FSBLK); /* exactly the first block past the end */
	rc = recover_traced(c, &t, &outside, &writes, &info);
	ok(rc == -EUCLEAN && writes == 0, "tag naming block fs_blocks: refused");
	blk_close(c);

	/* transaction 3's revoke block is at log block 29 */
	uint8_t b[BS];
	blk_pread(d, tj_pblk(&t, 29) * BS, BS, b);
	ok(get_be32(b + 4) == JBD_REVOKE_BLOCK, "the revoke block is where expected");
	static const uint32_t counts[] = {BS + 4, 0xffffffffu, 15, 0};
	for (size_t i = 0; i < 4; i++) {
		blk_clone(d, &c);
		poke32(c, &t, 29, 12, counts[i]);
		rc = recover_traced(c, &t, &outside, &writes, &info);
		ok(rc == -EUCLEAN && writes == 0, "revoke r_count %u: -EUCLEAN, nothing replayed",
		   counts[i]);
		blk_close(c);
	}

	/* a truncated transaction: the log ends inside transaction 2 */
	blk_clone(d, &c);
	uint8_t z[BS] = {0};
	blk_pwrite(c, tj_pblk(&t, 28) * BS, BS, z, 0);
	rc = recover_traced(c, &t, &outside, &writes, &info);
	ok(rc == 0 && info.nr_transactions == 1 && outside == 0,
	   "commit block of transaction 2 lost: only transaction 1 replayed");
	blk_close(c);

	/* a descriptor whose tags run to the end of the block (no LAST_TAG) */
	blk_clone(d, &c);
	blk_pread(c, tj_pblk(&t, 1) * BS, BS, b);
	for (uint32_t off = 12 + 8 + 16; off + 8 <= BS; off += 8) {
		put_be32(b + off, 1000);
		put_be16(b + off + 6, JBD_FLAG_SAME_UUID);
	}
	blk_pwrite(c, tj_pblk(&t, 1) * BS, BS, b, 0);
	rc = recover_traced(c, &t, &outside, &writes, &info);
	ok(outside == 0, "descriptor without LAST_TAG: no write out of range (rc %d)", rc);
	blk_close(c);

	/* a log whose blocks all claim one transaction and never commit: must end */
	blk_clone(d, &c);
	for (uint64_t l = 1; l < 256; l++) {
		memset(b, 0, BS);
		put_be32(b, JBD_MAGIC);
		put_be32(b + 4, JBD_REVOKE_BLOCK);
		put_be32(b + 8, 77);
		put_be32(b + 12, 16);
		blk_pwrite(c, tj_pblk(&t, l) * BS, BS, b, 0);
	}
	rc = recover_traced(c, &t, &outside, &writes, &info);
	ok(outside == 0 && info.nr_transactions == 0,
	   "a log of revoke blocks that never commits: the scan ends (rc %d: %s)", rc, info.stop);
	blk_close(c);

	/* the block map points beyond the device */
	struct tj t2 = t;
	t2.ext[0].count = 20;
	t2.ext[1] = (struct jbd_extent){20, DEVBLK - 2, 236};
	t2.cfg.map.extents = t2.ext;
	rc = recover_traced(d, &t2, &outside, &writes, &info);
	ok(rc < 0 && outside == 0, "block map beyond the device: an error, not a wild read (%d)",
	   rc);
	blk_close(d);
}

/* tid's commit block, or 0 */
static uint32_t commit_of(struct bdev *d, const struct tj *t, uint32_t tid)
{
	for (uint32_t l = 1; l < 80; l++) {
		uint8_t hb[BS];
		blk_pread(d, tj_pblk(t, l) * BS, BS, hb);
		if (get_be32(hb) == JBD_MAGIC && get_be32(hb + 4) == JBD_COMMIT_BLOCK &&
		    get_be32(hb + 8) == tid)
			return l;
	}
	return 0;
}

/* A committed transaction whose commit block fails its checksum (v3): e2fsck
 * replays what came before, reports it and resets the log; a mount (as the
 * kernel's jbd2_journal_load) refuses, keeping the log for fsck. */
static void test_commit_csum(void)
{
	struct tj t;
	struct bdev *d = build(&t, 0, JBD_FEATURE_INCOMPAT_CSUM_V3);
	tap_require(d, "built a journal with checksums v3");
	uint32_t at = commit_of(d, &t, 77 + 2);
	ok(at != 0, "transaction 79 commits at log block %u", at);
	struct bdev *c;
	blk_clone(d, &c);
	poke32(c, &t, at, 0x40, 0xdeadbeef); /* inside the commit block, past its header */
	struct jbd_recovery_info info;
	unsigned long outside, writes;
	int rc = recover_traced(c, &t, &outside, &writes, &info);
	ok(rc == 0 && info.nr_transactions == 2 && info.failed_commit == 79 && outside == 0,
	   "e2fsck's way: two transactions replayed, transaction %u reported corrupt (%d: %s)",
	   info.failed_commit, rc, info.stop);
	blk_close(c);

	blk_clone(d, &c);
	poke32(c, &t, at, 0x40, 0xdeadbeef);
	struct tj k = t;
	k.cfg.corrupt_commit_fails = true;
	rc = recover_traced(c, &k, &outside, &writes, &info);
	ok(rc == -EUCLEAN && info.failed_commit == 79 && writes > 0 && outside == 0,
	   "the kernel's way: -EUCLEAN after replaying what came before (%lu writes)", writes);
	ok(info.nr_transactions == 2 && info.end_tid == info.start_tid + 2,
	   "... counted: transactions %u..%u, %u replayed", info.start_tid, info.end_tid,
	   info.nr_transactions);
	struct jbd_journal *j;
	struct bo_err err = {{0}};
	tap_require(jbd_journal_open(c, &k.cfg, &j, &err) == 0, "reopen");
	ok(jbd_journal_needs_recovery(j), "the log is kept: recovery is still needed");
	jbd_journal_destroy(j, false);
	blk_close(c);

	/* an intact log is not affected by the kernel's way */
	rc = recover_traced(d, &k, &outside, &writes, &info);
	ok(rc == 0 && info.nr_transactions == 3 && info.failed_commit == 0,
	   "intact log, the kernel's way: three transactions replayed");
	blk_close(d);
}

static void test_random(void)
{
	static const uint32_t inc[] = {0, JBD_FEATURE_INCOMPAT_CSUM_V3,
	                               JBD_FEATURE_INCOMPAT_CSUM_V2 | JBD_FEATURE_INCOMPAT_64BIT};
	static const uint32_t com[] = {JBD_FEATURE_COMPAT_CHECKSUM, 0, 0};
	struct bo_rng r;
	bo_rng_seed(&r, 1234);
	const char *asan = getenv("BLACKOUT_ASAN");
	int iters = asan ? 300 : 1000;
	for (int v = 0; v < 3; v++) {
		struct tj t;
		struct bdev *d = build(&t, com[v], inc[v]);
		unsigned long total_outside = 0, errors = 0, stops = 0;
		for (int it = 0; it < iters; it++) {
			struct bdev *c;
			blk_cow_open(d, &c);
			int flips = 1 + (int)bo_rng_below(&r, 4);
			for (int f = 0; f < flips; f++) {
				uint64_t l = bo_rng_below(&r, 48);
				uint32_t off = bo_rng_below(&r, 2) ? (uint32_t)bo_rng_below(&r, 64)
				                                   : (uint32_t)bo_rng_below(&r, BS);
				uint8_t b[BS];
				blk_pread(c, tj_pblk(&t, l) * BS, BS, b);
				b[off] ^= (uint8_t)(1 + bo_rng_below(&r, 255));
				blk_pwrite(c, tj_pblk(&t, l) * BS, BS, b, 0);
			}
			struct jbd_recovery_info info;
			unsigned long outside, writes;
			int rc = recover_traced(c, &t, &outside, &writes, &info);
			total_outside += outside;
			errors += rc != 0;
			stops += rc == 0 && info.nr_transactions < 3;
			blk_close(c);
		}
		is_int(total_outside, 0,
		       "variant %d: %d random corruptions, no write out of range (%lu errors, %lu "
		       "early "
		       "stops)",
		       v, iters, errors, stops);
		blk_close(d);
	}
}

int main(void)
{
	test_superblock();
	test_log_corruption();
	test_commit_csum();
	test_random();
	return tap_done();
}
