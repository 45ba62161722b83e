// SPDX-License-Identifier: GPL-2.0-or-later
/* test_raid_ack.c — no RAID level acknowledges a write or a flush it cannot make
 * durable: with more members failed than the level survives, every write path
 * (full-stripe, reconstruct-write, read-modify-write, reconstruct, direct) and
 * flush return -EIO without writing anything, also when the members fail under
 * the write itself. Each case has a survivable twin that takes the same path and
 * succeeds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "tap.h"
#include "test_stats.h"

#define SS     512u
#define MEMBER 520u /* 8 sectors of superblock + 64 chunks of 4k */
#define CS     8u   /* sectors per 4k chunk */

static struct bdev *open_array(unsigned level, unsigned n, uint64_t fail)
{
	struct bdev *m[RAID_MAX_MEMBERS];
	for (unsigned i = 0; i < n; i++)
		tap_require(blk_mem_open(SS, MEMBER, &m[i]) == 0, "member opens");
	struct raid_params p = {.level = level, .chunk = CS * SS, .layout = RAID_LEFT_SYMMETRIC};
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_raid_open(&p, m, n, &d, &err) == 0, "raid%u x%u opens: %s", level, n,
	            err.msg);
	for (unsigned i = 0; i < n; i++)
		if (fail >> i & 1)
			tap_require(raid_fail_member(d, i) == 0, "fail member %u", i);
	return d;
}

/* FNV-1a over every member's whole content, failed members included (a failed
 * mem member stays readable underneath). */
static uint64_t members_digest(struct bdev *d, unsigned n)
{
	unsigned char *b = malloc((size_t)MEMBER * SS);
	uint64_t h = 14695981039346656037ull;
	for (unsigned i = 0; i < n; i++) {
		tap_require(blk_read(blk_lower(d, i), 0, MEMBER, b) == 0, "read member %u", i);
		for (size_t x = 0; x < (size_t)MEMBER * SS; x++)
			h = (h ^ b[x]) * 1099511628211ull;
	}
	free(b);
	return h;
}

/* One write path of one level. Stripe 0 of a left-symmetric array of n members
 * (RAID4: parity last) with `twin` failed takes `path` and succeeds; with `fail`
 * failed (more than the level survives) the same write must be refused, and so
 * must a flush. */
struct wcase {
	unsigned level, n;
	const char *path; /* the stats counter of the path; NULL: none (RAID0/1) */
	uint64_t lba;
	uint32_t count;
	uint64_t twin, fail;
	const char *what;
};

static const struct wcase cases[] = {
    /* RAID0 x3: chunk j of stripe 0 on member j */
    {0, 3, NULL, 8, 8, 0, 0x2, "raid0: write to a failed member's chunk"},
    {0, 3, NULL, 0, 8, 0, 0x2, "raid0: write to a healthy chunk of a broken array"},
    /* RAID1 x3 */
    {1, 3, NULL, 0, 8, 0x3, 0x7, "raid1: every mirror failed"},
    /* RAID4 x4: data on 0,1,2, parity on 3 */
    {4, 4, "full_stripe", 0, 3 * CS, 0x1, 0x3, "raid4: full-stripe write"},
    {4, 4, "rmw", 0, 1, 0x2, 0x6, "raid4: read-modify-write"},
    {4, 4, "direct_write", 0, 1, 0x8, 0xa, "raid4: direct write (parity member lost)"},
    {4, 5, "rcw", 0, 3 * CS, 0x1, 0x3, "raid4 x5: reconstruct-write"},
    {4, 4, "reconstruct_write", 6, 4, 0x1, 0x5, "raid4: reconstruct a lost chunk to write"},
    /* RAID5 x5 left-symmetric, stripe 0: parity on 4, chunk j on member j */
    {5, 5, "full_stripe", 0, 4 * CS, 0x1, 0x3, "raid5: full-stripe write"},
    {5, 5, "rcw", 0, 3 * CS, 0x1, 0x3, "raid5: reconstruct-write"},
    {5, 5, "rmw", 0, 1, 0x4, 0xc, "raid5: read-modify-write"},
    {5, 5, "reconstruct_write", 6, 4, 0x1, 0x9, "raid5: reconstruct a lost chunk to write"},
    {5, 5, "direct_write", 0, 1, 0x10, 0x18, "raid5: direct write (parity member lost)"},
    {5, 5, NULL, 0, 4 * CS, 0, 0x1f, "raid5: every member failed"},
    /* RAID6 x5 left-symmetric, stripe 0: P on 4, Q on 0, chunk j on member j+1 */
    {6, 5, "full_stripe", 0, 3 * CS, 0x6, 0xe, "raid6: full-stripe write"},
    {6, 5, "direct_write", 0, 1, 0x11, 0x15, "raid6: direct write (P and Q lost)"},
    {6, 5, "reconstruct_write", 6, 4, 0x2, 0x1a, "raid6: reconstruct a lost chunk to write"},
    /* RAID6 x6: P on 5, Q on 0, chunk j on member j+1 */
    {6, 6, "rmw", 0, 1, 0xc, 0x1c, "raid6 x6: read-modify-write"},
    {6, 6, "rcw", 0, 3 * CS, 0x6, 0xe, "raid6 x6: reconstruct-write"},
    {6, 6, NULL, 0, 4 * CS, 0, 0x3f, "raid6 x6: every member failed"},
};

static void test_case(const struct wcase *c)
{
	unsigned char *buf = malloc((size_t)c->count * SS);
	memset(buf, 0xa5, (size_t)c->count * SS);

	struct bdev *d = open_array(c->level, c->n, c->twin);
	uint64_t before = c->path ? tstat(d, c->path) : 0;
	int rc = blk_write(d, c->lba, c->count, buf, 0);
	is_int(rc, 0, "%s: survivable (failed 0x%llx): written", c->what,
	       (unsigned long long)c->twin);
	if (c->path)
		is_int(tstat(d, c->path) - before, 1, "%s: survivable: the write took %s", c->what,
		       c->path);
	is_int(blk_flush(d), 0, "%s: survivable: flushed", c->what);
	blk_close(d);

	d = open_array(c->level, c->n, c->fail);
	uint64_t sum0 = members_digest(d, c->n);
	rc = blk_write(d, c->lba, c->count, buf, 0);
	is_int(rc, -EIO, "%s: failed 0x%llx: refused", c->what, (unsigned long long)c->fail);
	if (rc)
		diag("%s", d->err.msg);
	ok(members_digest(d, c->n) == sum0, "%s: the refused write changed no member", c->what);
	is_int(blk_write(d, c->lba, c->count, buf, BLK_FUA), -EIO, "%s: a FUA write refused too",
	       c->what);
	is_int(blk_flush(d), -EIO, "%s: flush refused", c->what);
	blk_close(d);
	free(buf);
}

/* RAID level over n fault > mem members, 4k chunks (RAID1 keeps md's 512k, so
 * its members are larger). */
static void fault_spec(char *spec, size_t len, unsigned level, unsigned n)
{
	if (level == 1)
		snprintf(spec, len, "raid1 > [fault > mem(size=1040k)] x%u", n);
	else
		snprintf(spec, len, "raid%u(chunk=4k) > [fault > mem(size=260k)] x%u", level, n);
}

/* Members that fail under the write (a write error makes the array fail them):
 * the write had started with every member there, so only the count after it can
 * tell. */
static void test_fail_under_write(unsigned level, unsigned n, unsigned nfail, const char *desc)
{
	char spec[160];
	fault_spec(spec, sizeof(spec), level, n);
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text(spec, NULL, &d, &err) == 0, "%s opens: %s", spec, err.msg);
	for (unsigned i = 0; i < nfail; i++) {
		int id = dev_fault_arm(blk_lower(d, i), "write-error errno=EIO", &err);
		tap_require(id >= 0, "arm a write error on member %u: %s", i, err.msg);
	}
	struct raid_status st;
	raid_status(d, &st);
	unsigned k = st.data_members;
	size_t len = (size_t)k * CS * SS;
	unsigned char *buf = malloc(len);
	memset(buf, 0x3c, len);
	int rc = blk_write(d, 0, k * CS, buf, 0);
	raid_status(d, &st);
	is_int(__builtin_popcountll(st.failed), nfail, "%s: %u members failed under the write",
	       desc, nfail);
	is_int(rc, -EIO, "%s: the write is refused", desc);
	if (rc)
		diag("%s", d->err.msg);
	is_int(blk_flush(d), -EIO, "%s: flush refused", desc);
	blk_close(d);
	free(buf);
}

/* The same with as many failures as the level survives: acknowledged, readable. */
static void test_fail_under_write_survivable(unsigned level, unsigned n, unsigned nfail)
{
	char spec[160];
	fault_spec(spec, sizeof(spec), level, n);
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text(spec, NULL, &d, &err) == 0, "%s opens: %s", spec, err.msg);
	for (unsigned i = 0; i < nfail; i++)
		tap_require(dev_fault_arm(blk_lower(d, i), "write-error errno=EIO", &err) >= 0,
		            "arm member %u", i);
	struct raid_status st;
	raid_status(d, &st);
	size_t len = (size_t)st.data_members * CS * SS;
	unsigned char *buf = malloc(len), *back = malloc(len);
	memset(buf, 0x3c, len);
	int rc = blk_write(d, 0, st.data_members * CS, buf, 0);
	is_int(rc, 0, "raid%u x%u, %u members failing under the write: acknowledged", level, n,
	       nfail);
	is_int(blk_flush(d), 0, "raid%u x%u, %u failing: flushed", level, n, nfail);
	ok(blk_read(d, 0, st.data_members * CS, back) == 0 && memcmp(buf, back, len) == 0,
	   "raid%u x%u, %u failing: reads back", level, n, nfail);
	blk_close(d);
	free(buf);
	free(back);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		test_case(&cases[i]);
	test_fail_under_write(0, 3, 1, "raid0 x3");
	test_fail_under_write(1, 3, 3, "raid1 x3");
	test_fail_under_write(4, 4, 2, "raid4 x4");
	test_fail_under_write(5, 4, 2, "raid5 x4");
	test_fail_under_write(5, 4, 4, "raid5 x4, all members");
	test_fail_under_write(6, 5, 3, "raid6 x5");
	test_fail_under_write_survivable(1, 3, 2);
	test_fail_under_write_survivable(5, 4, 1);
	test_fail_under_write_survivable(6, 5, 2);
	return tap_done();
}
