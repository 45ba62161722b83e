// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_examples.c — the worked examples of the pages in docs/models/, checked: outcome
 * counts and what every outcome holds. If a doc changes, this changes with it. */
#include <errno.h>
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

static void put(struct bdev *d, uint64_t lba, char v, unsigned flags)
{
	unsigned char b[SS];
	memset(b, v, SS);
	blk_write(d, lba, 1, b, flags);
}

struct seen {
	unsigned n, bad, lost_a, b_at_1;
	bool ignore, newest_only;
};

static char at(struct bdev *st, uint64_t lba)
{
	unsigned char b[SS];
	blk_read(st, lba, 1, b);
	for (int i = 1; i < SS; i++)
		if (b[i] != b[0])
			return '?';
	return b[0] ? (char)b[0] : '0';
}

static int cache_outcome(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct seen *s = ctx;
	char s0 = at(st, 0), s1 = at(st, 1), s2 = at(st, 2), s3 = at(st, 3), s4 = at(st, 4),
	     s5 = at(st, 5);
	bool okk = s2 == 'D' && (s3 == '0' || s3 == 'E') && s4 == s5 && (s4 == '0' || s4 == 'F');
	if (!s->ignore) /* the flush put A and B on the media */
		okk = okk && s0 == 'A' && (s1 == 'B' || s1 == 'C');
	else if (s->newest_only) /* versions=1: B, overwritten in the cache, is gone */
		okk = okk && (s0 == 'A' || s0 == '0') && (s1 == '0' || s1 == 'C');
	else /* B may have been written back before C replaced it */
		okk = okk && (s0 == 'A' || s0 == '0') && (s1 == '0' || s1 == 'B' || s1 == 'C');
	s->lost_a += s0 != 'A';
	s->b_at_1 += s1 == 'B';
	s->bad += !okk;
	s->n++;
	return 0;
}

static void cache_example(bool ignore, bool newest_only)
{
	struct bdev *d = open_spec(
	    !ignore       ? "cache > disk(tear=none) > mem(size=64k)"
	    : newest_only ? "cache(flush=ignore,versions=1) > disk(tear=none) > mem(size=64k)"
	                  : "cache(flush=ignore) > disk(tear=none) > mem(size=64k)");
	put(d, 0, 'A', 0);
	put(d, 1, 'B', 0);
	blk_flush(d);
	put(d, 1, 'C', 0);
	put(d, 2, 'D', BLK_FUA);
	put(d, 3, 'E', 0);
	unsigned char f[2 * SS];
	memset(f, 'F', sizeof(f));
	struct blk_inflight w = {.lba = 4, .count = 2, .data = f};
	struct seen s = {.ignore = ignore, .newest_only = newest_only};
	bool complete;
	int64_t n = blk_cut_foreach(d, &w, 1000, cache_outcome, &s, &complete);
	/* flush=ignore: sectors 0 and 3 two ways, sector 1 three (nothing, B, C) or, with
	 * versions=1, two; F two */
	int64_t want = !ignore ? 8 : newest_only ? 16 : 24;
	const char *how = !ignore       ? ""
	                  : newest_only ? " (flush=ignore,versions=1)"
	                                : " (flush=ignore)";
	is_int(n, want, "cache.md example%s: outcomes", how);
	ok(complete && s.bad == 0, "every outcome as the page says");
	is_int(s.lost_a, ignore ? want / 2 : 0, "A is lost in %s",
	       ignore ? "half of them" : "none");
	is_int(s.b_at_1,
	       !ignore       ? want / 2
	       : newest_only ? 0
	                     : want / 3,
	       "B is at sector 1 in %s",
	       !ignore       ? "half"
	       : newest_only ? "none"
	                     : "a third");
	blk_close(d);
}

static int count(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)st;
	(void)dec;
	(*(unsigned *)ctx)++;
	return 0;
}

static unsigned outcomes(const char *spec, uint64_t lba, uint32_t n)
{
	struct bdev *d = open_spec(spec);
	unsigned char buf[8 * SS];
	memset(buf, 'n', sizeof(buf));
	struct blk_inflight w = {.lba = lba, .count = n, .data = buf};
	unsigned c = 0;
	blk_cut_foreach(d, &w, 100000, count, &c, NULL);
	blk_close(d);
	return c;
}

/* the number of outcomes, counted rather than walked */
static int64_t space(const char *spec, uint64_t lba, uint32_t n)
{
	struct bdev *d = open_spec(spec);
	unsigned char buf[8 * SS];
	memset(buf, 'n', sizeof(buf));
	struct blk_inflight w = {.lba = lba, .count = n, .data = buf};
	struct dev_cut_space sp = {0};
	dev_cut_space(d, &w, &sp);
	blk_close(d);
	return (int64_t)sp.outcomes;
}

int main(void)
{
	cache_example(false, false);
	cache_example(true, false);
	cache_example(true, true);
	is_int(space("disk(tear=byte) > mem(size=64k)", 4, 2), 513 * 513,
	       "disk.md: tear=byte, 513 x 513");
	is_int(outcomes("disk(tear=byte,tear_unit=128) > mem(size=64k)", 4, 2), 25,
	       "disk.md: tear=byte,tear_unit=128, 25");
	is_int(outcomes("disk(tear=sector) > mem(size=64k)", 4, 2), 4, "disk.md: tear=sector, 4");
	is_int(outcomes("disk(tear=none) > mem(size=64k)", 4, 2), 2, "disk.md: tear=none, 2");
	is_int(outcomes("mem(size=64k)", 10, 3), 4, "mem.md: 3 sectors in flight, 4 outcomes");
	is_int(outcomes("concat > [disk(tear=none) > mem(size=4k) ; disk(tear=sector) > "
	                "mem(size=4k)]",
	                6, 4),
	       8, "concat.md: 8 outcomes");

	/* fault.md's table */
	struct bdev *d =
	    open_spec("fault(rules=\"write-error lba=8-15 after=2 sticky; lost-write lba=3\") > "
	              "mem(size=64k)");
	unsigned char b[3 * SS];
	memset(b, 'x', sizeof(b));
	is_int(blk_write(d, 8, 1, b, 0), 0, "fault.md: write 8 ok");
	is_int(blk_write(d, 9, 2, b, 0), 0, "write 9-10 ok");
	is_int(blk_write(d, 12, 1, b, 0), -EIO, "write 12 fails");
	is_int(blk_read(d, 12, 1, b), -EIO, "read 12 fails: bad sector");
	is_int(blk_write(d, 12, 1, b, 0), -EIO, "write 12 fails again");
	memset(b, 'y', sizeof(b));
	is_int(blk_write(d, 2, 3, b, 0), 0, "write 2-4 ok");
	blk_read(d, 2, 3, b);
	ok(b[0] == 'y' && b[SS] == 0 && b[2 * SS] == 'y', "but sector 3 kept its old data");
	blk_close(d);
	return tap_done();
}
