// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_disk_loss.c — the disk's garbage and unreadable sectors at power loss
 * (garbage=true, torn=unreadable): every outcome of a cut with a write in flight,
 * what each sector reads back as, and that an outcome rebuilds bit-exactly. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "tap.h"

#define SS 512

/* what each of the two in-flight sectors read back as, over every outcome */
struct tally {
	unsigned old[2], new_[2], garbage[2], eio[2], other[2];
	unsigned outcomes;
};

static int classify(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct tally *t = ctx;
	unsigned char buf[SS];
	for (unsigned i = 0; i < 2; i++) {
		int rc = blk_read(st, 4 + i, 1, buf);
		size_t same_old = 0, same_new = 0;
		for (size_t j = 0; rc == 0 && j < SS; j++) {
			same_old += buf[j] == 'o';
			same_new += buf[j] == 'n';
		}
		if (rc == -EIO)
			t->eio[i]++;
		else if (rc)
			t->other[i]++;
		else if (same_old == SS)
			t->old[i]++;
		else if (same_new == SS)
			t->new_[i]++;
		else if (same_old + same_new < SS / 2)
			t->garbage[i]++; /* neither old nor new, nor a mix of them */
		else
			t->other[i]++;
	}
	t->outcomes++;
	return 0;
}

static struct bdev *open_written(const char *spec)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text(spec, NULL, &d, &err) == 0, "open %s: %s", spec, err.msg);
	unsigned char old[2 * SS];
	memset(old, 'o', sizeof(old));
	tap_require(blk_write(d, 4, 2, old, 0) == 0, "write the old sectors");
	return d;
}

static const unsigned char *new_data(void)
{
	static unsigned char nw[2 * SS];
	memset(nw, 'n', sizeof(nw));
	return nw;
}

static void tally(const char *spec, struct tally *t)
{
	struct bdev *d = open_written(spec);
	struct blk_inflight w = {.lba = 4, .count = 2, .data = new_data()};
	bool complete = false;
	int64_t n = blk_cut_foreach(d, &w, 1000, classify, t, &complete);
	ok(n == t->outcomes && complete, "%s: every outcome walked (%lld)", spec, (long long)n);
	struct dev_cut_space sp;
	ok(dev_cut_space(d, &w, &sp) == 0 && sp.outcomes == t->outcomes,
	   "%s: dev_cut_space counts the same %u outcomes", spec, t->outcomes);
	blk_close(d);
}

static void garbage_all_or_nothing(void)
{
	struct tally t = {0};
	tally("disk(tear=none,garbage=true) > mem(size=8k)", &t);
	ok(t.outcomes == 3 && t.old[0] == 1 && t.new_[0] == 1 && t.garbage[0] == 1 &&
	       t.garbage[1] == 1 && t.other[0] + t.other[1] == 0,
	   "tear=none,garbage=true: nothing, all, or every sector garbage (3 outcomes)");
}

static void garbage_per_sector(void)
{
	struct tally t = {0};
	tally("disk(tear=sector,garbage=true) > mem(size=8k)", &t);
	ok(t.outcomes == 9 && t.garbage[0] == 3 && t.garbage[1] == 3 && t.old[0] == 3 &&
	       t.new_[1] == 3 && t.other[0] + t.other[1] + t.eio[0] + t.eio[1] == 0,
	   "tear=sector,garbage=true: each sector old, new or garbage (3^2 outcomes)");
	struct tally u = {0};
	tally("disk(tear=sector) > mem(size=8k)", &u);
	ok(u.outcomes == 4 && u.garbage[0] + u.garbage[1] == 0,
	   "without garbage=true no sector is garbage (2^2 outcomes)");
	struct tally b = {0};
	tally("disk(tear=byte,tear_unit=128,garbage=true) > mem(size=8k)", &b);
	ok(b.outcomes == 36 && b.garbage[0] == 6 && b.garbage[1] == 6,
	   "tear=byte,tear_unit=128,garbage=true: 6 values a sector, garbage once each");
}

/* the same outcome number gives the same bytes: a state rebuilds by its id */
static void garbage_rebuilds(void)
{
	struct bdev *d = open_written("disk(tear=sector,garbage=true) > mem(size=8k)");
	struct blk_inflight w = {.lba = 4, .count = 2, .data = new_data()};
	unsigned char a[2 * SS], b[2 * SS];
	struct bdev *s1, *s2;
	/* decision 0 = 2 (garbage), decision 1 = 2 (garbage): k = 2 + 2 * 3 */
	tap_require(dev_cut_outcome(d, &w, 8, &s1) == 0 && dev_cut_outcome(d, &w, 8, &s2) == 0,
	            "cut twice with outcome 8");
	ok(blk_read(s1, 4, 2, a) == 0 && blk_read(s2, 4, 2, b) == 0 && memcmp(a, b, sizeof(a)) == 0,
	   "outcome 8 twice: the same garbage, byte for byte");
	ok(memcmp(a, a + SS, SS) != 0, "the two garbage sectors differ from each other");
	blk_close(s1);
	blk_close(s2);
	blk_close(d);
}

static void unreadable(void)
{
	struct tally t = {0};
	tally("disk(tear=byte,torn=unreadable) > mem(size=8k)", &t);
	ok(t.outcomes == 9 && t.eio[0] == 3 && t.eio[1] == 3 && t.old[0] == 3 && t.new_[0] == 3 &&
	       t.other[0] + t.other[1] + t.garbage[0] + t.garbage[1] == 0,
	   "torn=unreadable: each sector old, new or a media error, never a readable mix");
	struct tally g = {0};
	tally("disk(tear=byte,torn=unreadable,garbage=true) > mem(size=8k)", &g);
	ok(g.outcomes == 16 && g.eio[0] == 4 && g.garbage[1] == 4, "and with garbage: 4^2");

	/* outcome 2 + 0 * 3: sector 4 torn (unreadable), sector 5 old */
	struct bdev *d = open_written("disk(tear=byte,torn=unreadable) > mem(size=8k)");
	struct blk_inflight w = {.lba = 4, .count = 2, .data = new_data()};
	struct bdev *s, *c;
	unsigned char buf[2 * SS];
	tap_require(dev_cut_outcome(d, &w, 2, &s) == 0, "cut with outcome 2");
	ok(blk_read(s, 4, 1, buf) == -EIO && strstr(s->err.msg, "sector 4 unreadable"),
	   "the torn sector reads as -EIO: %s", s->err.msg);
	ok(blk_read(s, 3, 3, buf) == -EIO, "so does a read spanning it");
	ok(blk_read(s, 5, 1, buf) == 0 && buf[0] == 'o', "its neighbour reads");
	tap_require(blk_clone(s, &c) == 0, "clone the state");
	ok(blk_read(c, 4, 1, buf) == -EIO, "a clone carries the unreadable sector");
	tap_require(blk_power_cut(c, NULL, NULL) == 0 && blk_power_restore(c) == 0,
	            "another cut, nothing in flight");
	ok(blk_read(c, 4, 1, buf) == -EIO, "it stays unreadable across a cut");
	blk_close(c);
	ok(blk_write(s, 4, 1, new_data(), 0) == 0 && blk_read(s, 4, 1, buf) == 0 && buf[0] == 'n',
	   "rewritten, it reads back the new bytes");
	blk_close(s);
	blk_close(d);
}

static void refused_and_round_trip(void)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	ok(dev_stack_open_text("disk(tear=sector,torn=unreadable) > mem", NULL, &d, &err) ==
	           -EINVAL &&
	       strstr(err.msg, "torn=unreadable needs tear=byte"),
	   "torn=unreadable without tear=byte refused: %s", err.msg);
	const char *text = "disk(tear=byte,torn=unreadable,garbage=yes) > mem(size=8k)";
	struct dev_spec *a, *b;
	char buf[512];
	tap_require(dev_spec_parse(text, &a, &err) == 0, "parse %s: %s", text, err.msg);
	tap_require(dev_spec_format(a, buf, sizeof(buf)) > 0, "format");
	ok(strstr(buf, "torn=unreadable") && strstr(buf, "garbage=true"), "canonical: %s", buf);
	ok(dev_spec_parse(buf, &b, &err) == 0 && dev_spec_equal(a, b), "parses back equal");
	dev_spec_free(a);
	dev_spec_free(b);
}

int main(void)
{
	garbage_all_or_nothing();
	garbage_per_sector();
	garbage_rebuilds();
	unreadable();
	refused_and_round_trip();
	return tap_done();
}
