// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_fault.c — every fault rule kind fires exactly where and when its rule
 * says (after=, every=, prob= with its seed, times=, for reads and for writes);
 * sticky sectors stay bad until rewritten; lost and misdirected writes land as
 * documented; rules arm and disarm at run time, exactly; rule errors are clear. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "tap.h"

#define SS 512

static struct bdev *open_spec(const char *spec)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	if (dev_stack_open_text(spec, NULL, &d, &err)) {
		diag("%s: %s", spec, err.msg);
		return NULL;
	}
	return d;
}

static struct bdev *fresh(void)
{
	struct bdev *d = open_spec("fault > mem(size=32k)");
	tap_require(d, "open fault > mem");
	return d;
}

static int arm(struct bdev *d, const char *rule)
{
	struct bo_err err = {{0}};
	int id = dev_fault_arm(d, rule, &err);
	if (id < 0)
		diag("%s: %s", rule, err.msg);
	return id;
}

static unsigned char sec[SS], got[SS];

static void fill(unsigned char v)
{
	memset(sec, v, SS);
}

static void errors_by_range(void)
{
	struct bdev *d = fresh();
	ok(arm(d, "read-error lba=10-19") >= 0, "arm read-error");
	bool right = true;
	for (uint64_t lba = 0; lba < 30; lba++) {
		int rc = blk_read(d, lba, 1, got);
		right = right && rc == ((lba >= 10 && lba <= 19) ? -EIO : 0);
	}
	ok(right, "reads of 10..19 fail with EIO, all others succeed");
	is_int(blk_read(d, 5, 6, got), -EIO, "a read overlapping the range fails");
	ok(strstr(d->err.msg, "injected read error") != NULL, "message: %s", d->err.msg);
	fill(1);
	is_int(blk_write(d, 12, 1, sec, 0), 0, "writes are not affected by a read rule");
	blk_close(d);

	d = fresh();
	arm(d, "write-error lba=4 errno=ENOSPC");
	is_int(blk_write(d, 4, 1, sec, 0), -ENOSPC, "write-error with errno=ENOSPC");
	is_int(blk_write(d, 3, 1, sec, 0), 0, "the sector before is fine");
	is_int(blk_read(d, 4, 1, got), 0, "not sticky: sector 4 stays readable");
	arm(d, "write-error errno=61");
	is_int(blk_write(d, 0, 1, sec, 0), -61, "a numeric errno, whole device");
	blk_close(d);
}

static void triggers(void)
{
	struct bdev *d = fresh();
	int id = arm(d, "read-error after=3");
	unsigned mask = 0;
	for (int i = 0; i < 6; i++)
		if (blk_read(d, 0, 1, got))
			mask |= 1u << i;
	is_int(mask, 0x38, "after=3: the first three reads succeed, then every read fails");
	dev_fault_disarm(d, id);
	id = arm(d, "read-error after=1 every=2");
	mask = 0;
	for (int i = 0; i < 8; i++)
		if (blk_read(d, 0, 1, got))
			mask |= 1u << i;
	is_int(mask, 0xaa, "after=1 every=2: reads 2, 4, 6, 8 fail");
	uint64_t n;
	is_int(dev_fault_fired(d, id, &n), 0, "fired count");
	is_int(n, 4, "fired four times");
	is_int(dev_fault_disarm(d, id), 0, "disarm");
	is_int(dev_fault_disarm(d, id), -ENOENT, "disarm twice is -ENOENT");
	is_int(dev_fault_fired(d, id, &n), -ENOENT, "no such rule any more");
	is_int(blk_read(d, 0, 1, got), 0, "disarmed: reads work");
	id = arm(d, "read-error times=2");
	mask = 0;
	for (int i = 0; i < 5; i++)
		if (blk_read(d, 0, 1, got))
			mask |= 1u << i;
	is_int(mask, 0x3, "times=2: fires twice, then never");
	blk_close(d);

	/* probability: seeded, deterministic, about right */
	unsigned char pat[2][1000];
	for (int rep = 0; rep < 2; rep++) {
		d = fresh();
		arm(d, "read-error prob=0.25 seed=9");
		for (int i = 0; i < 1000; i++)
			pat[rep][i] = blk_read(d, (uint64_t)i % 64, 1, got) != 0;
		blk_close(d);
	}
	int fired = 0;
	for (int i = 0; i < 1000; i++)
		fired += pat[0][i];
	ok(fired > 190 && fired < 310, "prob=0.25 fires about a quarter of the time (%d)", fired);
	ok(memcmp(pat[0], pat[1], 1000) == 0, "the same seed fires on the same operations");
	d = fresh();
	arm(d, "read-error prob=0");
	fired = 0;
	for (int i = 0; i < 100; i++)
		fired += blk_read(d, 0, 1, got) != 0;
	is_int(fired, 0, "prob=0 never fires");
	blk_close(d);
}

/* Writes `n` times to `lba` (FUA on odd ones when `fua`), each with a new value;
 * returns the mask of those that failed, and checks that a failed write wrote
 * nothing and every other one landed. */
static unsigned write_mask(struct bdev *d, uint64_t lba, int n, bool fua, int want_errno,
                           bool *landed_right)
{
	unsigned mask = 0;
	*landed_right = true;
	for (int i = 0; i < n; i++) {
		unsigned char before[SS];
		blk_read(blk_lower(d, 0), lba, 1, before);
		fill((unsigned char)(0x40 + i));
		int rc = blk_write(d, lba, 1, sec, fua && i % 2 ? BLK_FUA : 0);
		blk_read(blk_lower(d, 0), lba, 1, got);
		if (rc) {
			mask |= 1u << i;
			*landed_right =
			    *landed_right && rc == -want_errno && memcmp(got, before, SS) == 0;
		} else {
			*landed_right = *landed_right && got[0] == sec[0];
		}
	}
	return mask;
}

static void write_triggers(void)
{
	bool right;
	struct bdev *d = fresh();
	int id = arm(d, "write-error after=3 errno=ENOSPC");
	is_int(write_mask(d, 2, 6, false, ENOSPC, &right), 0x38,
	       "write after=3: writes 1-3 land, 4-6 fail");
	ok(right, "with ENOSPC, and a failed write leaves the old data");
	ok(strstr(d->err.msg, "injected write error at 2+1") &&
	       strstr(d->err.msg, strerror(ENOSPC)),
	   "message names the write and the errno: %s", d->err.msg);
	uint64_t n;
	dev_fault_fired(d, id, &n);
	is_int(n, 3, "fired three times");
	blk_close(d);

	d = fresh();
	id = arm(d, "write-error every=3");
	is_int(write_mask(d, 0, 10, true, EIO, &right), 0x249,
	       "write every=3: fires on writes 1, 4, 7, 10 (FUA or not)");
	ok(right, "each with EIO, writing nothing");
	blk_close(d);

	d = fresh();
	arm(d, "write-error after=2 every=3 errno=EROFS");
	is_int(write_mask(d, 0, 10, false, EROFS, &right), 0x124,
	       "write after=2 every=3: fires on writes 3, 6, 9");
	ok(right, "each with EROFS");
	blk_close(d);

	d = fresh();
	arm(d, "write-error every=2 times=2 errno=ETIMEDOUT");
	is_int(write_mask(d, 0, 8, false, ETIMEDOUT, &right), 0x5,
	       "write every=2 times=2: fires on writes 1 and 3, then never");
	ok(right, "each with ETIMEDOUT");
	blk_close(d);

	/* Only matching operations count: writes elsewhere, reads, flushes and
	 * discards leave the rule's count alone; a write overlapping the range does
	 * count, and fails whole. */
	d = fresh();
	id = arm(d, "write-error lba=10-19 after=1 every=2 errno=EILSEQ");
	unsigned mask = 0;
	unsigned char four[4 * SS];
	memset(four, 0x33, sizeof(four));
	for (int i = 0; i < 6; i++) {
		fill(1);
		blk_write(d, 0, 1, sec, 0);
		blk_write(d, 20, 1, sec, BLK_FUA);
		blk_read(d, 10, 1, got);
		blk_flush(d);
		blk_discard(d, 12, 1);
		int rc = i % 2 ? blk_write(d, 8, 4, four, 0) : blk_write(d, 10 + i, 1, sec, 0);
		if (rc)
			mask |= 1u << i;
		if (rc && rc != -EILSEQ)
			mask |= 0x100;
	}
	is_int(mask, 0x2a, "lba=10-19 after=1 every=2: matching writes 2, 4, 6 fail, EILSEQ");
	blk_read(blk_lower(d, 0), 8, 1, got);
	ok(got[0] == 0, "the overlapping write that failed wrote none of its sectors");
	dev_fault_fired(d, id, &n);
	is_int(n, 3, "fired three times");
	blk_close(d);

	/* every errno the grammar names, on a write */
	static const struct {
		const char *name;
		int err;
	} errs[] = {
	    {"EIO", EIO},         {"ENOSPC", ENOSPC},       {"EROFS", EROFS},
	    {"ENODEV", ENODEV},   {"ETIMEDOUT", ETIMEDOUT}, {"EILSEQ", EILSEQ},
	    {"EBADMSG", EBADMSG}, {"ENXIO", ENXIO},         {"EPERM", EPERM},
	    {"ENOMEM", ENOMEM},   {"EAGAIN", EAGAIN},       {"ENOLINK", ENOLINK},
	    {"4095", 4095},
	};
	bool all = true;
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		char rule[64];
		snprintf(rule, sizeof(rule), "write-error lba=%zu errno=%s", i, errs[i].name);
		d = fresh();
		arm(d, rule);
		int rc = blk_write(d, i, 1, sec, BLK_FUA);
		if (rc != -errs[i].err) {
			diag("%s: got %d", rule, rc);
			all = false;
		}
		blk_close(d);
	}
	ok(all, "a write fails with each errno the rule names");

	/* two error rules firing on one write: the first armed gives the errno, and
	 * both count it */
	d = fresh();
	int a = arm(d, "write-error every=2 errno=ENXIO");
	int b = arm(d, "write-error errno=EPERM");
	fill(2);
	int rc1 = blk_write(d, 0, 1, sec, 0), rc2 = blk_write(d, 0, 1, sec, 0);
	ok(rc1 == -ENXIO && rc2 == -EPERM, "the first firing rule in arming order decides");
	uint64_t na, nb;
	dev_fault_fired(d, a, &na);
	dev_fault_fired(d, b, &nb);
	ok(na == 1 && nb == 2, "every rule sees every write (fired %llu and %llu)",
	   (unsigned long long)na, (unsigned long long)nb);
	blk_close(d);

	/* lost-write follows the same triggers */
	d = fresh();
	arm(d, "lost-write lba=5 after=1 every=2");
	mask = 0;
	for (int i = 0; i < 6; i++) {
		fill((unsigned char)(i + 1));
		is_int(blk_write(d, 5, 1, sec, 0), 0, "lost write %d completes", i + 1);
		blk_read(d, 5, 1, got);
		if (got[0] != i + 1)
			mask |= 1u << i;
	}
	is_int(mask, 0x2a, "lost-write after=1 every=2: writes 2, 4, 6 are dropped");
	blk_close(d);
}

/* Which of `n` writes a probabilistic rule fails (as bytes 0/1). */
static void prob_pattern(const char *rule, unsigned char *pat, int n, bool other_rule)
{
	struct bdev *d = fresh();
	arm(d, rule);
	if (other_rule) /* with a generator of its own that must not disturb the first */
		arm(d, "read-error prob=0.5 seed=1");
	fill(3);
	for (int i = 0; i < n; i++) {
		if (other_rule)
			blk_read(d, 1, 1, got);
		int rc = blk_write(d, (uint64_t)i % 64, 1, sec, i % 3 ? 0 : BLK_FUA);
		pat[i] = rc != 0;
		if (rc && rc != -ENOSPC)
			pat[i] = 2;
	}
	blk_close(d);
}

static void write_prob(void)
{
	enum { N = 400 };
	unsigned char a[N], b[N], c[N], e[N];
	prob_pattern("write-error prob=0.3 seed=7 errno=ENOSPC", a, N, false);
	prob_pattern("write-error prob=0.3 seed=7 errno=ENOSPC", b, N, false);
	prob_pattern("write-error prob=0.3 seed=8 errno=ENOSPC", c, N, false);
	prob_pattern("write-error prob=0.3 seed=7 errno=ENOSPC", e, N, true);
	int fired = 0, twos = 0;
	for (int i = 0; i < N; i++) {
		fired += a[i] == 1;
		twos += a[i] == 2;
	}
	ok(fired > 80 && fired < 160 && twos == 0,
	   "write prob=0.3 fails about 30%% of writes (%d of %d), with ENOSPC", fired, N);
	ok(memcmp(a, b, N) == 0, "the same seed fails the same writes");
	ok(memcmp(a, c, N) != 0, "another seed fails other writes");
	ok(memcmp(a, e, N) == 0, "another rule's draws do not change which (its own generator)");

	/* prob applies after after= and every=: it only draws for operations they pass */
	struct bdev *d = fresh();
	int id = arm(d, "write-error after=5 every=2 prob=0.5 seed=3");
	unsigned mask = 0;
	fill(4);
	for (int i = 0; i < 30; i++)
		if (blk_write(d, 0, 1, sec, 0))
			mask |= 1u << i;
	uint64_t n;
	dev_fault_fired(d, id, &n);
	/* writes 6, 8, 10 ... are bits 5, 7, 9 ... */
	ok((mask & ~0xaaaaaaa0u) == 0 && n > 0 && (uint64_t)__builtin_popcount(mask) == n,
	   "after=5 every=2 prob=0.5: only writes 6, 8, 10 ... can fail; %llu did (mask %#x)",
	   (unsigned long long)n, mask);
	blk_close(d);
	/* and draws only for those: the k-th of them fails as the k-th write does
	 * under the same seed without after= and every= */
	d = fresh();
	arm(d, "write-error prob=0.5 seed=3");
	bool same_draws = true;
	for (int k = 0; 5 + 2 * k < 30; k++)
		same_draws =
		    same_draws && (blk_write(d, 0, 1, sec, 0) != 0) == !!(mask & 1u << (5 + 2 * k));
	ok(same_draws, "prob= draws only for the writes after= and every= let through");
	blk_close(d);

	/* a clone carries the generator and the counters: both go on identically */
	d = fresh();
	arm(d, "write-error prob=0.5 seed=11 every=2");
	for (int i = 0; i < 17; i++)
		blk_write(d, 0, 1, sec, 0);
	struct bdev *c2;
	tap_require(blk_clone(d, &c2) == 0, "clone");
	bool same = true;
	for (int i = 0; i < 64; i++)
		same =
		    same && (blk_write(d, 0, 1, sec, 0) != 0) == (blk_write(c2, 0, 1, sec, 0) != 0);
	ok(same, "a clone fires on the same later writes as the original");
	blk_close(c2);
	blk_close(d);
}

static void write_arm_disarm(void)
{
	struct bdev *d = fresh();
	fill(5);
	is_int(blk_write(d, 0, 1, sec, 0), 0, "no rule: the write lands");
	int id = arm(d, "write-error errno=EBADMSG");
	is_int(blk_write(d, 0, 1, sec, 0), -EBADMSG, "armed: the very next write fails");
	is_int(blk_write(d, 0, 1, sec, BLK_FUA), -EBADMSG, "and the next");
	is_int(dev_fault_disarm(d, id), 0, "disarm");
	is_int(blk_write(d, 0, 1, sec, 0), 0, "disarmed: the very next write lands");
	int id2 = arm(d, "write-error errno=EBADMSG");
	ok(id2 >= 0 && id2 != id, "re-armed with a new id (%d, was %d)", id2, id);
	is_int(blk_write(d, 0, 1, sec, 0), -EBADMSG, "re-armed: the very next write fails");
	dev_fault_disarm(d, id2);

	/* a rule counts only the writes after it was armed */
	bool right;
	for (int i = 0; i < 5; i++)
		blk_write(d, 0, 1, sec, 0);
	id = arm(d, "write-error lba=0 after=2 every=2");
	is_int(write_mask(d, 0, 7, false, EIO, &right), 0x54,
	       "armed after 5 writes, after=2 every=2: its writes 3, 5, 7 fail");
	ok(right, "writing nothing");

	/* disarming one rule leaves another's cadence exactly where it was */
	int other = arm(d, "write-error lba=1");
	is_int(blk_write(d, 1, 1, sec, 0), -EIO, "the second rule fires on sector 1");
	is_int(write_mask(d, 0, 2, false, EIO, &right), 0x2,
	       "the first goes on: its writes 8 (passes) and 9 (fails)");
	is_int(dev_fault_disarm(d, other), 0, "disarm the second rule");
	is_int(blk_write(d, 1, 1, sec, 0), 0, "sector 1 is writable again");
	is_int(write_mask(d, 0, 4, false, EIO, &right), 0xa,
	       "the first rule's writes 10-13: 11 and 13 fail, as before the disarm");
	uint64_t n;
	is_int(dev_fault_fired(d, id, &n), 0, "its count is still there");
	is_int(n, 6, "fired six times: its writes 3, 5, 7, 9, 11, 13");
	is_int(dev_fault_disarm(d, id), 0, "disarm it");
	is_int(write_mask(d, 0, 8, false, EIO, &right), 0, "no rule left: every write lands");
	ok(right, "and reads back");
	blk_close(d);
}

static void sticky(void)
{
	struct bdev *d = fresh();
	fill(7);
	blk_write(d, 5, 1, sec, 0);
	int id = arm(d, "write-error lba=5-6 times=1 sticky");
	unsigned char four[4 * SS];
	memset(four, 8, sizeof(four));
	is_int(blk_write(d, 4, 4, four, 0), -EIO, "the write over 4..7 fails");
	is_int(blk_read(d, 4, 1, got), 0, "sector 4 (outside the rule) stays readable");
	is_int(blk_read(d, 5, 1, got), -EIO, "sector 5 is now unreadable");
	is_int(blk_read(d, 6, 1, got), -EIO, "sector 6 too");
	is_int(blk_read(d, 5, 1, got), -EIO, "and stays unreadable");
	ok(strstr(d->err.msg, "bad") != NULL, "says the sector is bad: %s", d->err.msg);
	is_int(blk_read(d, 7, 1, got), 0, "sector 7 (outside the rule) was never bad");
	is_int(dev_fault_disarm(d, id), 0, "disarming the rule does not heal the sectors");
	is_int(blk_read(d, 6, 1, got), -EIO, "sector 6 still bad");
	fill(9);
	is_int(blk_write(d, 5, 1, sec, 0), 0, "rewriting sector 5 succeeds");
	is_int(blk_read(d, 5, 1, got), 0, "and heals it");
	ok(got[0] == 9, "with the new data");
	is_int(blk_read(d, 6, 1, got), -EIO, "sector 6 is still bad");
	struct bdev *c;
	is_int(blk_clone(d, &c), 0, "clone");
	blk_write(c, 6, 1, sec, 0);
	is_int(blk_read(c, 6, 1, got), 0, "healing in the clone...");
	is_int(blk_read(d, 6, 1, got), -EIO, "...leaves the original bad");
	blk_close(c);
	blk_close(d);
}

static void flips(void)
{
	struct bdev *d = fresh();
	struct bdev *media = blk_lower(d, 0);
	fill(0);
	blk_write(d, 3, 1, sec, 0);
	arm(d, "flip-read lba=3 bit=9");
	unsigned char two[2 * SS];
	blk_read(d, 2, 2, two);
	ok(two[SS + 1] == 0x02 && two[0] == 0,
	   "flip-read: bit 9 of sector 3 flipped, sector 2 not");
	blk_read(media, 3, 1, got);
	ok(got[1] == 0, "the media itself is intact");
	blk_close(d);

	d = fresh();
	media = blk_lower(d, 0);
	fill(0xf0);
	blk_write(d, 4, 1, sec, 0);
	blk_write(d, 5, 1, sec, 0);
	int id = arm(d, "flip-rest lba=4-5 bit=0");
	blk_read(media, 4, 1, got);
	ok(got[0] == 0xf0, "flip-rest: nothing rots before the next operation");
	blk_flush(d);
	blk_read(media, 4, 1, got);
	ok(got[0] == 0xf1, "after it, sector 4 rotted on the media");
	blk_read(media, 5, 1, got);
	ok(got[0] == 0xf1, "so did sector 5");
	blk_read(d, 4, 1, got);
	ok(got[0] == 0xf1, "reads through the fault device see the rot (once, not again)");
	uint64_t n;
	dev_fault_fired(d, id, &n);
	is_int(n, 1, "flip-rest fires once by default");
	blk_close(d);
}

static void lost_misdirected(void)
{
	struct bdev *d = fresh();
	unsigned char four[4 * SS];
	memset(four, 1, sizeof(four));
	blk_write(d, 0, 4, four, 0);
	arm(d, "lost-write lba=2");
	memset(four, 2, sizeof(four));
	is_int(blk_write(d, 0, 4, four, BLK_FUA), 0, "a lost write completes successfully");
	blk_read(d, 0, 4, four);
	ok(four[0] == 2 && four[SS] == 2 && four[2 * SS] == 1 && four[3 * SS] == 2,
	   "only sector 2 was dropped (it reads the old data)");
	blk_close(d);

	d = fresh();
	arm(d, "misdirect lba=6 shift=10");
	fill(5);
	is_int(blk_write(d, 6, 1, sec, 0), 0, "a misdirected write completes");
	blk_read(d, 6, 1, got);
	ok(got[0] == 0, "sector 6 never got it");
	blk_read(d, 16, 1, got);
	ok(got[0] == 5, "sector 16 did");
	blk_close(d);

	d = fresh();
	arm(d, "misdirect shift=-1 after=1 times=1");
	fill(6);
	blk_write(d, 0, 1, sec, 0);
	fill(7);
	blk_write(d, 0, 1, sec, 0);
	blk_read(d, 0, 1, got);
	ok(got[0] == 6, "the second write to 0 missed it");
	blk_read(d, d->nr_sectors - 1, 1, got);
	ok(got[0] == 7, "and landed one sector before, wrapping to the last sector");
	blk_close(d);
}

static void rule_errors(void)
{
	struct bdev *d = fresh();
	static const struct {
		const char *rule, *why;
	} bad[] = {
	    {"", "empty"},
	    {"explode", "unknown kind"},
	    {"read-error colour=red", "unknown key"},
	    {"read-error lba=64", "outside the device"},
	    {"read-error lba=9-3", "empty or outside"},
	    {"read-error lba=x", "lba=N or lba=A-B"},
	    {"read-error sticky", "only a write-error can be sticky"},
	    {"read-error errno=EWHAT", "expected EIO"},
	    {"lost-write errno=EIO", "errno= is for"},
	    {"read-error prob=1.5", "probability"},
	    {"read-error every=0", "at least 1"},
	    {"flip-rest", "needs lba="},
	    {"misdirect shift=0", "non-zero"},
	    {"read-error after", "key=value"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bo_err err = {{0}};
		int rc = dev_fault_arm(d, bad[i].rule, &err);
		ok(rc == -EINVAL && strstr(err.msg, bad[i].why), "'%s' rejected: %s", bad[i].rule,
		   err.msg);
	}
	struct bdev *m;
	blk_mem_open(512, 8, &m);
	struct bo_err err;
	is_int(dev_fault_arm(m, "read-error", &err), -EINVAL, "arming a non-fault device");
	blk_close(m);
	blk_close(d);

	d = open_spec("fault(rules=\"read-error lba=1; lost-write lba=2 ;\") > mem(size=4k)");
	ok(d != NULL, "rules in the spec, ';'-separated");
	if (d) {
		is_int(blk_read(d, 1, 1, got), -EIO, "the first rule is armed");
		fill(3);
		blk_write(d, 2, 1, sec, 0);
		blk_read(d, 2, 1, got);
		ok(got[0] == 0, "so is the second");
		blk_close(d);
	}
	struct bdev *x;
	int rc = dev_stack_open_text("fault(rules=\"read-error lba=99\") > mem(size=4k)", NULL, &x,
	                             &err);
	ok(rc == -EINVAL && strstr(err.msg, "outside the device"),
	   "a bad rule in a spec fails the open: %s", err.msg);
}

static void power(void)
{
	struct bdev *d = open_spec("fault(rules=\"read-error lba=0\") > cache > mem(size=4k)");
	fill(4);
	blk_write(d, 1, 1, sec, 0);
	is_int(blk_power_cut(d, &blk_chooser_zero, NULL), 0, "a cut passes through fault");
	blk_power_restore(d);
	blk_read(d, 1, 1, got);
	ok(got[0] == 0, "the cache below lost its dirty sector");
	is_int(blk_read(d, 0, 1, got), -EIO, "rules survive the cut");
	struct dev_cut_space sp;
	blk_write(d, 1, 1, sec, 0);
	dev_cut_space(d, NULL, &sp);
	is_int(sp.outcomes, 2, "fault adds no decisions of its own");
	blk_close(d);

	/* a write-back refused below at the cut is a sector that did not land */
	d = open_spec("cache > fault(rules=\"write-error lba=1\") > mem(size=4k)");
	fill(5);
	blk_write(d, 1, 1, sec, 0);
	blk_write(d, 2, 1, sec, 0);
	struct bdev *st;
	is_int(dev_cut_outcome(d, NULL, 3, &st), 0, "cut with both dirty sectors landing");
	if (st) {
		blk_read(st, 1, 1, got);
		ok(got[0] == 0, "sector 1 (write-error below) did not land");
		blk_read(st, 2, 1, got);
		ok(got[0] == 5, "sector 2 did");
		blk_close(st);
	}
	blk_close(d);
	d = open_spec("disk(tear=sector) > fault(rules=\"write-error lba=0\") > mem(size=4k)");
	unsigned char two[2 * SS];
	memset(two, 6, sizeof(two));
	struct blk_inflight w = {.lba = 0, .count = 2, .data = two};
	dev_cut_space(d, &w, &sp);
	is_int(sp.outcomes, 4, "disk over a failing sector: still 4 outcomes");
	is_int(dev_cut_outcome(d, &w, 3, &st), 0, "both sectors landing");
	if (st) {
		blk_read(st, 0, 2, two);
		ok(two[0] == 0 && two[SS] == 6, "sector 0 refused, sector 1 landed");
		blk_close(st);
	}
	blk_close(d);
}

int main(void)
{
	errors_by_range();
	triggers();
	write_triggers();
	write_prob();
	write_arm_disarm();
	sticky();
	flips();
	lost_misdirected();
	rule_errors();
	power();
	return tap_done();
}
