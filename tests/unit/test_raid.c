// SPDX-License-Identifier: GPL-2.0-or-later
/* test_raid.c — every level and layout against a reference image: seeded random
 * writes, then every set of failed members the level survives; scrub after a clean
 * shutdown; rebuild byte for byte; md's rmw/rcw choice; -EIO members; the spec. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "tap.h"
#include "test_stats.h"

#define SS     512u
#define MEMBER 520u /* sectors per member: 8 of superblock + 64 chunks of 4k */

struct cfg {
	unsigned level, n;
	enum raid_layout layout;
	uint32_t chunk;
	const char *name;
};

static const struct cfg cfgs[] = {
    {0, 3, RAID_LEFT_SYMMETRIC, 4096, "raid0 x3"},
    {1, 3, RAID_LEFT_SYMMETRIC, 4096, "raid1 x3"},
    {4, 4, RAID_PARITY_N, 4096, "raid4 x4"},
    {5, 3, RAID_LEFT_SYMMETRIC, 4096, "raid5 x3 left-symmetric"},
    {5, 4, RAID_LEFT_SYMMETRIC, 4096, "raid5 x4 left-symmetric"},
    {5, 4, RAID_LEFT_ASYMMETRIC, 4096, "raid5 x4 left-asymmetric"},
    {5, 4, RAID_RIGHT_SYMMETRIC, 4096, "raid5 x4 right-symmetric"},
    {5, 4, RAID_RIGHT_ASYMMETRIC, 8192, "raid5 x4 right-asymmetric 8k"},
    {6, 4, RAID_LEFT_SYMMETRIC, 4096, "raid6 x4 left-symmetric"},
    {6, 5, RAID_LEFT_SYMMETRIC, 4096, "raid6 x5 left-symmetric"},
    {6, 5, RAID_LEFT_ASYMMETRIC, 4096, "raid6 x5 left-asymmetric"},
    {6, 5, RAID_RIGHT_SYMMETRIC, 8192, "raid6 x5 right-symmetric 8k"},
    {6, 6, RAID_RIGHT_ASYMMETRIC, 4096, "raid6 x6 right-asymmetric"},
};

static struct bdev *open_array(const struct cfg *c, uint64_t missing)
{
	struct bdev *m[RAID_MAX_MEMBERS];
	for (unsigned i = 0; i < c->n; i++)
		tap_require(blk_mem_open(SS, MEMBER, &m[i]) == 0, "member opens");
	struct raid_params p = {
	    .level = c->level, .chunk = c->chunk, .layout = c->layout, .missing = missing};
	struct bdev *d;
	struct bo_err err = {{0}};
	int rc = dev_raid_open(&p, m, c->n, &d, &err);
	if (rc) {
		for (unsigned i = 0; i < c->n; i++)
			blk_close(m[i]);
		diag("%s", err.msg);
		return NULL;
	}
	return d;
}

static void random_writes(struct bdev *d, unsigned char *ref, struct bo_rng *rng, unsigned n)
{
	uint64_t ns = d->nr_sectors;
	unsigned char *buf = malloc(64 * SS);
	for (unsigned w = 0; w < n; w++) {
		uint32_t cnt = 1 + (uint32_t)bo_rng_below(rng, 48);
		if (bo_rng_below(rng, 8) == 0)
			cnt = 1 + (uint32_t)bo_rng_below(rng, 4);
		uint64_t lba = bo_rng_below(rng, ns - cnt + 1);
		for (size_t i = 0; i < cnt * SS; i++)
			buf[i] = (unsigned char)bo_rng_next(rng);
		int rc = blk_write(d, lba, cnt, buf, 0);
		if (rc) {
			ok(0, "write of %u at %llu: %s", cnt, (unsigned long long)lba,
			   bo_errstr(&d->err, rc));
			break;
		}
		memcpy(ref + lba * SS, buf, cnt * SS);
	}
	free(buf);
}

static bool same_as(struct bdev *d, const unsigned char *ref)
{
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *got = malloc(len);
	int rc = blk_read(d, 0, (uint32_t)d->nr_sectors, got);
	bool same = rc == 0 && memcmp(got, ref, len) == 0;
	if (rc)
		diag("read: %s", bo_errstr(&d->err, rc));
	free(got);
	return same;
}

static uint64_t tstat(struct bdev *d, const char *key);

static unsigned tolerance(const struct cfg *c)
{
	return c->level == 0 ? 0 : c->level == 1 ? c->n - 1 : c->level == 6 ? 2 : 1;
}

static void member_data(struct bdev *d, unsigned i, unsigned char *out)
{
	struct raid_status st;
	raid_status(d, &st);
	struct bdev *m = blk_lower(d, i);
	uint64_t len = st.stripes * (st.chunk / SS);
	blk_read(m, st.data_offset, (uint32_t)len, out);
}

static void test_cfg(const struct cfg *c, uint64_t seed)
{
	struct bdev *d = open_array(c, 0);
	tap_require(d != NULL, "%s opens", c->name);
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *ref = calloc(1, len);
	struct bo_rng rng;
	bo_rng_seed(&rng, seed);
	random_writes(d, ref, &rng, 120);
	ok(same_as(d, ref), "%s: reads equal the reference after 120 random writes", c->name);
	is_int(blk_flush(d), 0, "%s: flush", c->name);

	/* every set of failed members the level survives */
	unsigned tol = tolerance(c), sets = 0, good = 0;
	for (uint64_t mask = 1; mask < (1ull << c->n); mask++) {
		unsigned bits = (unsigned)__builtin_popcountll(mask);
		if (bits > tol)
			continue;
		struct bdev *x;
		if (blk_clone(d, &x))
			continue;
		for (unsigned i = 0; i < c->n; i++)
			if (mask >> i & 1)
				raid_fail_member(x, i);
		sets++;
		bool same = same_as(x, ref);
		if (same)
			good++;
		else
			diag("%s: failed set 0x%llx reads differently", c->name,
			     (unsigned long long)mask);
		blk_close(x);
	}
	if (tol)
		is_int(good, sets, "%s: all %u survivable failed sets read the reference", c->name,
		       sets);

	if (c->level != 0) {
		uint64_t mism = 99;
		is_int(raid_scrub(d, false, &mism), 0, "%s: scrub check runs", c->name);
		is_int(mism, 0, "%s: scrub after a clean shutdown finds 0 mismatches", c->name);
		/* power cut with nothing in flight after the flush: nothing to resync */
		struct bdev *x;
		tap_require(blk_clone(d, &x) == 0, "clone");
		ok(blk_power_cut(x, &blk_chooser_zero, NULL) == 0 && blk_power_restore(x) == 0,
		   "%s: cut and restore after flush", c->name);
		is_int(tstat(x, "resync_stripes"), 0, "%s: a clean array is not resynced", c->name);
		ok(same_as(x, ref), "%s: reads survive a clean power cycle", c->name);
		blk_close(x);
	}

	/* degraded writes, then rebuild onto a fresh member, byte-identical */
	if (tol) {
		struct raid_status st;
		raid_status(d, &st);
		size_t mlen = (size_t)st.stripes * st.chunk;
		unsigned char *want = malloc(mlen), *got = malloc(mlen);
		unsigned victim = (unsigned)(seed % c->n);
		struct bdev *x;
		tap_require(blk_clone(d, &x) == 0, "clone");
		raid_fail_member(x, victim);
		if (c->level == 6)
			raid_fail_member(x, (victim + 2) % c->n);
		random_writes(x, ref, &rng, 60);
		ok(same_as(x, ref), "%s: degraded writes read back", c->name);
		struct bdev *fresh;
		blk_mem_open(SS, MEMBER, &fresh);
		struct bo_err err = {{0}};
		int rc = raid_replace(x, victim, fresh, &err);
		is_int(rc, 0, "%s: replace member %u: %s", c->name, victim, err.msg);
		uint64_t done = 0, total = 0, steps = 0;
		while (rc == 0 && done < total + (total == 0)) {
			rc = raid_rebuild_step(x, 7, &done, &total);
			steps++;
			if (done == total)
				break;
		}
		ok(rc == 0 && done == total && steps > 1,
		   "%s: rebuilt in %llu steps with progress %llu/%llu", c->name,
		   (unsigned long long)steps, (unsigned long long)done, (unsigned long long)total);
		if (c->level == 6) {
			unsigned second = (victim + 2) % c->n;
			blk_mem_open(SS, MEMBER, &fresh);
			rc = raid_replace(x, second, fresh, &err);
			while (rc == 0 && (rc = raid_rebuild_step(x, 1000, &done, &total)) == 0 &&
			       done < total)
				;
			is_int(rc, 0, "%s: second member rebuilt", c->name);
		}
		raid_status(x, &st);
		ok(st.failed == 0 && st.rebuilding < 0, "%s: array whole again", c->name);
		ok(same_as(x, ref), "%s: reads after rebuild equal the reference", c->name);
		uint64_t mism = 99;
		raid_scrub(x, false, &mism);
		is_int(mism, 0, "%s: rebuilt array scrubs clean", c->name);
		/* byte-identical: member `victim` of the healthy array, rebuilt from the
		 * others onto a blank device */
		member_data(d, victim, want);
		struct bdev *z;
		tap_require(blk_clone(d, &z) == 0, "clone");
		raid_fail_member(z, victim);
		blk_mem_open(SS, MEMBER, &fresh);
		raid_replace(z, victim, fresh, &err);
		while ((rc = raid_rebuild_step(z, 1000, &done, &total)) == 0 && done < total)
			;
		member_data(z, victim, got);
		ok(rc == 0 && memcmp(want, got, mlen) == 0, "%s: member %u rebuilt byte-identical",
		   c->name, victim);
		blk_close(z);
		blk_close(x);
		free(want);
		free(got);
	}
	free(ref);
	blk_close(d);
}

/* md's choice: small writes read-modify-write, full stripes read nothing, a write
 * to a failed member's chunk reconstructs. */
static void test_write_modes(void)
{
	struct cfg c = {5, 5, RAID_LEFT_SYMMETRIC, 4096, "raid5 x5"};
	struct bdev *d = open_array(&c, 0);
	unsigned char buf[16 * 4096];
	memset(buf, 0x5a, sizeof(buf));
	uint64_t rmw0 = tstat(d, "rmw"), full0 = tstat(d, "full_stripe");
	blk_write(d, 1, 1, buf, 0);
	is_int(tstat(d, "rmw") - rmw0, 1, "one-sector write is read-modify-write");
	blk_write(d, 4 * 8, 4 * 8, buf, 0);
	is_int(tstat(d, "full_stripe") - full0, 1, "whole-stripe write is a full-stripe write");
	uint64_t rcw0 = tstat(d, "rcw");
	blk_write(d, 8 * 8, 3 * 8, buf, 0); /* 3 of 4 chunks of stripe 2 */
	is_int(tstat(d, "rcw") - rcw0, 1, "three of four chunks: reconstruct-write reads less");
	uint64_t amp = tstat(d, "write_amp_milli");
	ok(amp > 1000 && amp < 3000, "write amplification %.3f is reported", amp / 1000.0);
	/* stripe 0 left-symmetric x5: chunk 0 on member 0; fail it and write there */
	raid_fail_member(d, 0);
	uint64_t rcw1 = tstat(d, "rcw"), rmw1 = tstat(d, "rmw");
	blk_write(d, 2, 1, buf, 0);
	ok(tstat(d, "rcw") - rcw1 == 1 && tstat(d, "rmw") == rmw1,
	   "a write to a failed member's chunk is reconstruct-write (its rmw read is expensive)");
	uint64_t rec0 = tstat(d, "reconstruct_write");
	blk_write(d, 6, 4, buf, 0); /* needs the failed chunk's old sectors 0..5 */
	is_int(tstat(d, "reconstruct_write") - rec0, 1,
	       "a write that needs a failed member's old data reconstructs it first");
	unsigned char back[4 * 512];
	blk_read(d, 6, 4, back);
	ok(memcmp(back, buf, sizeof(back)) == 0, "and it reads back");
	unsigned char got[512];
	blk_read(d, 2, 1, got);
	ok(memcmp(got, buf, 512) == 0, "and reads back through parity");
	blk_close(d);
}

static void test_eio_member(void)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	int rc =
	    dev_stack_open_text("raid6(chunk=4k) > [fault > mem(size=260k)] x5", NULL, &d, &err);
	tap_require(rc == 0, "raid6 over fault members opens: %s", err.msg);
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *ref = calloc(1, len);
	struct bo_rng rng;
	bo_rng_seed(&rng, 77);
	random_writes(d, ref, &rng, 80);
	struct bdev *f1 = blk_lower(d, 1), *f3 = blk_lower(d, 3);
	rc = dev_fault_arm(f1, "read-error lba=0-519 errno=EIO", &err);
	ok(rc >= 0, "arm a read error on member 1: %s", err.msg);
	ok(same_as(d, ref), "reads are served around a member returning -EIO");
	struct raid_status st;
	raid_status(d, &st);
	is_int(st.failed, 2, "the member returning -EIO is failed");
	rc = dev_fault_arm(f3, "write-error lba=0-519 errno=EIO sticky", &err);
	ok(rc >= 0, "arm a write error on member 3: %s", err.msg);
	random_writes(d, ref, &rng, 20);
	raid_status(d, &st);
	is_int(st.failed, 0xa, "a member failing writes is failed too");
	ok(same_as(d, ref), "two failures in RAID6: still the reference");
	blk_close(d);
	free(ref);
}

static void test_spec(void)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	int rc =
	    dev_stack_open_text("raid5(chunk=64k,missing=2) > [mem(size=1M)] x4", NULL, &d, &err);
	is_int(rc, 0, "raid5 spec with missing opens: %s", err.msg);
	if (rc == 0) {
		struct raid_status st;
		raid_status(d, &st);
		is_int(st.failed, 4, "member 2 is missing");
		ok(d->nr_sectors % 128 == 0 && d->nr_sectors >= 3 * 1792 - 3 * 128,
		   "size is 3 data members (%llu sectors)", (unsigned long long)d->nr_sectors);
		blk_close(d);
	}
	rc = dev_stack_open_text("raid5(missing=0:1) > [mem(size=2M)] x4", NULL, &d, &err);
	is_int(rc, -EINVAL, "two missing in RAID5 is refused: %s", err.msg);
	rc = dev_stack_open_text("raid6(ppl=1) > [mem(size=2M)] x4", NULL, &d, &err);
	ok(rc != 0, "ppl on RAID6 is refused (not a RAID6 parameter)");
	rc = dev_stack_open_text("raid5(chunk=2k) > [mem(size=2M)] x4", NULL, &d, &err);
	is_int(rc, -EINVAL, "a 2k chunk is refused: %s", err.msg);
	rc = dev_stack_open_text("raid5(journal=1) > [mem(size=1M)] x4", NULL, &d, &err);
	is_int(rc, -EINVAL, "a journal smaller than a stripe update is refused: %s", err.msg);
	rc = dev_stack_open_text("raid5(journal=1,chunk=4k) > [mem(size=1M) ; mem(size=1M) ; "
	                         "mem(size=1M) ; mem(size=256k)]",
	                         NULL, &d, &err);
	is_int(rc, 0, "raid5 with a journal device opens: %s", err.msg);
	if (rc == 0) {
		struct raid_status st;
		raid_status(d, &st);
		is_int(st.members, 3, "the last lower is the journal, not a member");
		blk_close(d);
	}
	rc = dev_stack_open_text("raid1(missing=0,bitmap=1) > [mem(size=1M)] x2", NULL, &d, &err);
	is_int(rc, 0, "raid1 with a bitmap opens: %s", err.msg);
	if (rc == 0)
		blk_close(d);
	rc = dev_stack_open_text("raid5 > [mem(size=64k)] x3", NULL, &d, &err);
	is_int(rc, -EINVAL, "members too small for one 512k chunk: %s", err.msg);
}

/* A rebuild cut by the power resumes from the position the superblocks recorded. */
static void test_rebuild_resume(void)
{
	struct cfg c = {5, 4, RAID_LEFT_SYMMETRIC, 4096, "raid5 x4"};
	struct bdev *d = open_array(&c, 0);
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *ref = calloc(1, len);
	struct bo_rng rng;
	bo_rng_seed(&rng, 5);
	random_writes(d, ref, &rng, 60);
	blk_flush(d);
	raid_fail_member(d, 2);
	struct bdev *fresh;
	blk_mem_open(SS, MEMBER, &fresh);
	struct bo_err err = {{0}};
	is_int(raid_replace(d, 2, fresh, &err), 0, "replace member 2");
	uint64_t done, total;
	raid_rebuild_step(d, 20, &done, &total);
	is_int(done, 20, "20 stripes rebuilt");
	ok(blk_power_cut(d, &blk_chooser_zero, NULL) == 0 && blk_power_restore(d) == 0,
	   "power cycle mid-rebuild");
	struct raid_status st;
	raid_status(d, &st);
	ok(st.rebuilding == 2 && st.rebuild_pos == 20,
	   "assembly resumes the rebuild of member 2 at stripe 20 (%d, %llu)", st.rebuilding,
	   (unsigned long long)st.rebuild_pos);
	ok(same_as(d, ref), "reads are right mid-rebuild");
	random_writes(d, ref, &rng, 30); /* writes above and below the rebuild position */
	int rc;
	while ((rc = raid_rebuild_step(d, 16, &done, &total)) == 0 && done < total)
		;
	ok(rc == 0 && done == total, "rebuild finishes");
	uint64_t mism = 99;
	raid_scrub(d, false, &mism);
	is_int(mism, 0, "scrub clean after the resumed rebuild");
	raid_fail_member(d, 0);
	ok(same_as(d, ref), "and the rebuilt member serves reads when another fails");
	free(ref);
	blk_close(d);
}

/* Members with volatile write caches: a cut loses any subset of unflushed member
 * writes; after resync nothing that was flushed and not rewritten is wrong, even
 * when a member is lost afterwards. */
static void test_cached_members(void)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	int rc = dev_stack_open_text("raid5(chunk=4k) > [cache(size=8k) > mem(size=68k)] x3", NULL,
	                             &d, &err);
	tap_require(rc == 0, "raid5 over cached members opens: %s", err.msg);
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *ref = malloc(len), *got = malloc(len);
	for (size_t i = 0; i < len; i++)
		ref[i] = (unsigned char)(i * 7 + 1);
	blk_write(d, 0, (uint32_t)d->nr_sectors, ref, 0);
	blk_flush(d);
	unsigned char w[SS];
	memset(w, 0xee, SS);
	blk_write(d, 3, 1, w, 0);
	blk_write(d, 20, 1, w, 0);
	uint64_t states = 0, bad = 0;
	struct blk_chooser_dfs *dfs = malloc(sizeof(*dfs));
	blk_chooser_dfs_init(dfs);
	do {
		struct bdev *x;
		if (blk_clone(d, &x))
			break;
		blk_chooser_dfs_rewind(dfs);
		if (blk_power_cut(x, &dfs->list.base, NULL) == 0 && blk_power_restore(x) == 0) {
			for (unsigned f = 0; f <= 3; f++) {
				struct bdev *y;
				if (blk_clone(x, &y))
					break;
				if (f < 3)
					raid_fail_member(y, f);
				blk_read(y, 0, (uint32_t)y->nr_sectors, got);
				for (uint64_t sct = 0; sct < y->nr_sectors; sct++)
					if (sct != 3 && sct != 20 &&
					    memcmp(got + sct * SS, ref + sct * SS, SS)) {
						bad++;
						break;
					}
				blk_close(y);
			}
			states++;
		}
		blk_close(x);
	} while (states < 5000 && blk_chooser_dfs_next(dfs));
	free(dfs);
	ok(states > 1, "%llu cut outcomes of the member caches", (unsigned long long)states);
	is_int(bad, 0,
	       "none makes a flushed, untouched block wrong, with or without a lost member");
	free(ref);
	free(got);
	blk_close(d);
}

/* flush=drop (md before barrier support): a flush or a FUA write completes without
 * reaching the members' caches, so a cut that keeps none of what they hold loses it;
 * flush=pass keeps it. */
static void test_drop_flushes(void)
{
	for (int drop = 0; drop <= 1; drop++) {
		char spec[128];
		snprintf(spec, sizeof(spec),
		         "raid5(chunk=4k,flush=%s) > [cache(size=8k) > mem(size=68k)] x3",
		         drop ? "drop" : "pass");
		struct bdev *d;
		struct bo_err err = {{0}};
		int rc = dev_stack_open_text(spec, NULL, &d, &err);
		tap_require(rc == 0, "%s opens: %s", spec, err.msg);
		unsigned char w[SS], f[SS], got[SS];
		memset(w, 0x5a, SS);
		memset(f, 0xa5, SS);
		blk_write(d, 5, 1, w, 0);
		blk_flush(d);
		blk_write(d, 30, 1, f, BLK_FUA);
		ok(blk_power_cut(d, &blk_chooser_zero, NULL) == 0 && blk_power_restore(d) == 0,
		   "flush=%s: cut keeping nothing the caches hold", drop ? "drop" : "pass");
		blk_read(d, 5, 1, got);
		ok((memcmp(got, w, SS) == 0) == !drop, "flush=%s: the flushed sector %s",
		   drop ? "drop" : "pass", drop ? "is lost" : "survives");
		blk_read(d, 30, 1, got);
		ok((memcmp(got, f, SS) == 0) == !drop, "flush=%s: the FUA sector %s",
		   drop ? "drop" : "pass", drop ? "is lost" : "survives");
		blk_close(d);
	}
}

/* mdadm --replace: the member being replaced keeps the array redundant. */
static void test_hot_replace(unsigned level, unsigned n, bool fail_source)
{
	struct cfg c = {level, n, RAID_LEFT_SYMMETRIC, 4096, "hot replace"};
	struct bdev *d = open_array(&c, 0);
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *ref = calloc(1, len);
	struct bo_rng rng;
	bo_rng_seed(&rng, 11 + level + fail_source);
	random_writes(d, ref, &rng, 60);
	struct bdev *fresh;
	blk_mem_open(SS, MEMBER, &fresh);
	struct bo_err err = {{0}};
	is_int(raid_replace(d, 1, fresh, &err), 0, "raid%u: hot replace of working member 1: %s",
	       level, err.msg);
	uint64_t done, total;
	int rc = raid_rebuild_step(d, 25, &done, &total);
	struct raid_status st;
	raid_status(d, &st);
	ok(rc == 0 && st.replacing == 1 && st.replace_pos == 25 && st.failed == 0,
	   "raid%u: 25 stripes copied, the array still whole", level);
	random_writes(d, ref, &rng, 40); /* above and below the copy position */
	if (fail_source) {
		raid_fail_member(d, 1);
		raid_status(d, &st);
		ok(st.replacing < 0 && st.rebuilding == 1 && st.rebuild_pos == 25,
		   "raid%u: the source failing turns the copy into a rebuild at stripe 25", level);
	} else {
		struct bdev *x;
		tap_require(blk_clone(d, &x) == 0, "clone");
		raid_fail_member(x, level == 1 ? 0 : 2);
		ok(same_as(x, ref), "raid%u: mid-replace, another member can fail: still redundant",
		   level);
		blk_close(x);
	}
	while ((rc = raid_rebuild_step(d, 16, &done, &total)) == 0 && done < total)
		;
	raid_status(d, &st);
	ok(rc == 0 && st.replacing < 0 && st.rebuilding < 0 && st.failed == 0,
	   "raid%u: replacement complete", level);
	ok(blk_lower(d, 1) == fresh, "raid%u: the new device is member 1", level);
	ok(same_as(d, ref), "raid%u: reads equal the reference", level);
	uint64_t mism = 99;
	raid_scrub(d, false, &mism);
	is_int(mism, 0, "raid%u: scrub clean after the replacement", level);
	raid_fail_member(d, 0);
	ok(same_as(d, ref), "raid%u: the new member serves when another fails", level);
	free(ref);
	blk_close(d);
}

/* md's default: a dirty degraded array is not started after a crash until forced. */
static void test_refuse_dirty_degraded(void)
{
	struct bdev *m[4];
	for (unsigned i = 0; i < 4; i++)
		blk_mem_open(SS, MEMBER, &m[i]);
	struct raid_params p = {.level = 5,
	                        .chunk = 4096,
	                        .layout = RAID_LEFT_SYMMETRIC,
	                        .missing = 1u << 3,
	                        .refuse_dirty_degraded = true};
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_raid_open(&p, m, 4, &d, &err) == 0, "degraded raid5 opens: %s", err.msg);
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *ref = calloc(1, len), *got = malloc(len);
	struct bo_rng rng;
	bo_rng_seed(&rng, 3);
	random_writes(d, ref, &rng, 10); /* dirty, no flush */
	ok(blk_power_cut(d, &blk_chooser_zero, NULL) == 0 && blk_power_restore(d) == 0,
	   "power cycle while dirty and degraded");
	struct raid_status st;
	raid_status(d, &st);
	ok(st.inactive, "the array is left inactive");
	is_int(blk_read(d, 0, 1, got), -EIO, "reads fail: %s", d->err.msg);
	is_int(blk_write(d, 0, 1, got, 0), -EIO, "writes fail");
	is_int(raid_force_start(d), 0, "forced start (mdadm --assemble --force)");
	is_int(tstat(d, "dirty_degraded_starts"), 1, "counted as a dirty degraded start");
	ok(same_as(d, ref), "nothing was in flight, so everything reads back");
	free(ref);
	free(got);
	blk_close(d);
}

/* File members: the array is found again on its members after it is closed. */
static void test_reassemble(void)
{
	char path[4][64];
	struct bdev *m[4];
	struct bo_err err = {{0}};
	for (unsigned i = 0; i < 4; i++) {
		snprintf(path[i], sizeof(path[i]), "/tmp/blackout-raid-%d-%u.img", (int)getpid(),
		         i);
		tap_require(blk_file_open(path[i], SS, MEMBER * SS, BLK_FILE_CREATE, &m[i], &err) ==
		                0,
		            "member file: %s", err.msg);
	}
	struct raid_params p = {.level = 6, .chunk = 4096, .layout = RAID_LEFT_SYMMETRIC};
	struct bdev *d;
	tap_require(dev_raid_open(&p, m, 4, &d, &err) == 0, "raid6 on files: %s", err.msg);
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *ref = calloc(1, len);
	struct bo_rng rng;
	bo_rng_seed(&rng, 9);
	random_writes(d, ref, &rng, 40);
	raid_fail_member(d, 1);
	random_writes(d, ref, &rng, 20);
	blk_flush(d);
	blk_close(d);
	for (unsigned i = 0; i < 4; i++)
		blk_file_open(path[i], SS, 0, 0, &m[i], &err);
	tap_require(dev_raid_open(&p, m, 4, &d, &err) == 0, "reassembled: %s", err.msg);
	struct raid_status st;
	raid_status(d, &st);
	is_int(st.failed, 2, "the superblocks remember member 1 failed");
	ok(same_as(d, ref), "the data is all there");
	blk_close(d);
	for (unsigned i = 0; i < 4; i++)
		unlink(path[i]);
	free(ref);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		test_cfg(&cfgs[i], 1000 + i);
	test_write_modes();
	test_eio_member();
	test_spec();
	test_rebuild_resume();
	test_cached_members();
	test_drop_flushes();
	test_reassemble();
	test_refuse_dirty_degraded();
	{
		/* idle time (blk_settle): md's safe mode marks the array clean */
		struct cfg c = {5, 4, RAID_LEFT_SYMMETRIC, 4096, "settle"};
		struct bdev *d = open_array(&c, 0);
		unsigned char w[SS] = {1};
		blk_write(d, 9, 1, w, 0);
		struct raid_status st;
		raid_status(d, &st);
		ok(st.dirty, "a write makes the array dirty");
		is_int(blk_settle(d), 0, "settle");
		raid_status(d, &st);
		ok(!st.dirty, "idle: the array is clean again");
		ok(blk_power_cut(d, &blk_chooser_zero, NULL) == 0 && blk_power_restore(d) == 0 &&
		       tstat(d, "resync_stripes") == 0,
		   "a cut after idle time needs no resync");
		blk_close(d);
	}
	test_hot_replace(5, 4, false);
	test_hot_replace(6, 5, false);
	test_hot_replace(1, 2, false);
	test_hot_replace(5, 4, true);
	return tap_done();
}
