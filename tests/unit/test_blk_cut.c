// SPDX-License-Identifier: GPL-2.0-or-later
/* test_blk_cut.c — power cuts and choosers: the DFS walk visits every outcome of
 * a decision tree exactly once (also when later decisions depend on earlier ones),
 * a decision list replays one outcome exactly, the random chooser is deterministic,
 * a medium's in-flight write persists as a prefix of its sectors, and after a cut
 * every I/O fails with -EIO, on a medium and on every kind of stack, until the power
 * is back, when only what was persistent is visible. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/dev.h"
#include "tap.h"

/* A toy model over mem: at a cut it asks "did A land?" and, only if so, "which of
 * three versions of B?" — a tree with 4 leaves of uneven depth. */
struct toy {
	struct bdev dev;
	struct bdev *lower;
};

static int toy_read(struct bdev *d, uint64_t lba, uint32_t n, void *b)
{
	return blk_read(((struct toy *)d)->lower, lba, n, b);
}
static int toy_write(struct bdev *d, uint64_t lba, uint32_t n, const void *b, unsigned f)
{
	return blk_write(((struct toy *)d)->lower, lba, n, b, f);
}
static void toy_close(struct bdev *d)
{
	blk_close(((struct toy *)d)->lower);
	free(d);
}
static int toy_open(struct bdev *lower, struct bdev **out);
static int toy_clone(struct bdev *d, struct bdev **out)
{
	struct bdev *l;
	int rc = blk_clone(((struct toy *)d)->lower, &l);
	return rc ? rc : toy_open(l, out);
}
static int toy_cut(struct bdev *d, struct blk_chooser *ch, const struct blk_inflight *in)
{
	(void)in;
	unsigned char s[512] = {0};
	if (blk_choose(ch, 2, "A landed")) {
		s[0] = 'A';
		s[1] = (unsigned char)('0' + blk_choose(ch, 3, "version of B"));
	} else {
		s[0] = '-';
	}
	blk_write(((struct toy *)d)->lower, 0, 1, s, 0);
	return blk_power_cut(((struct toy *)d)->lower, ch, NULL);
}
static struct bdev *toy_lower(struct bdev *d, unsigned i)
{
	return i == 0 ? ((struct toy *)d)->lower : NULL;
}
static const struct bdev_ops toy_ops = {.lower = toy_lower,
                                        .read = toy_read,
                                        .write = toy_write,
                                        .close = toy_close,
                                        .clone = toy_clone,
                                        .power_cut = toy_cut};
static int toy_open(struct bdev *lower, struct bdev **out)
{
	struct toy *t = calloc(1, sizeof(*t));
	blk_init(&t->dev, &toy_ops, "toy", 512, lower->nr_sectors);
	t->lower = lower;
	*out = &t->dev;
	return 0;
}

struct seen {
	char v[16][3];
	int n;
};
static int record(void *ctx, struct bdev *state, const struct blk_chooser_list *dec)
{
	struct seen *s = ctx;
	unsigned char b[512];
	(void)dec;
	if (blk_read(state, 0, 1, b) != 0 || s->n >= 16)
		return -EIO;
	s->v[s->n][0] = (char)b[0];
	s->v[s->n][1] = (char)b[1];
	s->v[s->n][2] = 0;
	s->n++;
	return 0;
}

static int prefix_cb(void *ctx, struct bdev *state, const struct blk_chooser_list *dec)
{
	int *landed = ctx;
	unsigned char b[512 * 3];
	(void)dec;
	blk_read(state, 0, 3, b);
	int n = 0;
	for (int i = 0; i < 3; i++)
		n += b[i * 512] == 'w';
	/* a prefix: sector i landed only if every sector before it did */
	if (n > 0 && b[(n - 1) * 512] != 'w')
		return -EINVAL;
	landed[n]++;
	return 0;
}

/* Every device of the stack is off (or, all == false, on). A copy-on-write
 * overlay's base is not part of it: shared by clones, only read, never cut. */
static bool all_off(struct bdev *d, bool all)
{
	if (d->powered_off != all)
		return false;
	if (strcmp(d->name, "cow") == 0)
		return true;
	struct bdev *l;
	for (unsigned i = 0; (l = blk_lower(d, i)) != NULL; i++)
		if (!all_off(l, all))
			return false;
	return true;
}

/* The documented refusal (docs/blk.md): -EIO and "NAME: OP after a power cut". */
static void refused(struct bdev *d, int rc, const char *op, const char *what)
{
	char want[160];
	snprintf(want, sizeof(want), "%s: %s after a power cut (device is off)", d->name, op);
	is_int(rc, -EIO, "%s: %s after the cut fails with -EIO", d->name, what);
	is_str(d->err.msg, want, "%s: %s says why", d->name, what);
	d->err.msg[0] = 0; /* so the next check cannot pass on a stale message */
}

/* Sector 1 written and flushed, sector 3 written with FUA, sector 5 written and not
 * flushed, sectors 6-7 the same; then the cut (every decision 0: nothing optional
 * persists). Which of them then hold the new data: */
enum {
	KEEP_ALL = 0xea,     /* no volatile cache: every completed write */
	KEEP_DURABLE = 0x0a, /* an honest cache: the flushed and the FUA sector */
	KEEP_NONE = 0x00,    /* a cache ignoring flush and FUA */
};
static void off_until_restored(const char *spec, unsigned kept)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	if (!ok(dev_stack_open_text(spec, NULL, &d, &err) == 0, "open %s", spec)) {
		diag("%s", err.msg);
		return;
	}
	size_t ss = d->sector_size;
	unsigned char *old = malloc(8 * ss), *buf = malloc(8 * ss), *got = malloc(8 * ss);
	void *swap = blk_page_alloc();
	tap_require(old && buf && got && swap, "memory");
	tap_require(blk_read(d, 0, 8, old) == 0, "%s: read the fresh device", spec);
	for (size_t i = 0; i < 8 * ss; i++)
		buf[i] = (unsigned char)(i / ss * 16 + 1 + i % 7);
	bool done = blk_write(d, 1, 1, buf + ss, 0) == 0 && blk_flush(d) == 0 &&
	            blk_write(d, 3, 1, buf + 3 * ss, BLK_FUA) == 0 &&
	            blk_write(d, 5, 1, buf + 5 * ss, 0) == 0 &&
	            blk_write(d, 6, 2, buf + 6 * ss, 0) == 0;
	ok(done, "%s: flushed, FUA and plain writes before the cut", spec);

	is_int(blk_power_cut(d, &blk_chooser_zero, NULL), 0, "%s: cut", spec);
	ok(all_off(d, true), "%s: every device of the stack is off", spec);
	memset(got, 0x99, 8 * ss);
	refused(d, blk_read(d, 1, 1, got), "read", "read");
	ok(got[0] == 0x99, "%s: the refused read returned nothing", spec);
	refused(d, blk_write(d, 1, 1, buf, 0), "write", "write");
	refused(d, blk_write(d, 3, 1, buf, BLK_FUA), "write", "FUA write");
	memset(swap, 0x42, ss);
	void *before = swap;
	refused(d, blk_write_swap(d, 5, 1, &swap, 0), "write", "handed-over write");
	ok(swap == before, "%s: the refused hand-over kept the caller's buffer", spec);
	refused(d, blk_discard(d, 1, 2), "discard", "discard");
	refused(d, blk_flush(d), "flush", "flush");
	refused(d, blk_settle(d), "settle", "settle");
	refused(d, blk_pwrite(d, 0, ss, buf, 0), "write", "byte-addressed write");
	refused(d, blk_pread(d, 0, ss, got), "read", "byte-addressed read");
	refused(d, blk_read(d, 0, 8, got), "read", "read of the whole range");
	is_int(blk_power_cut(d, &blk_chooser_zero, NULL), 0, "%s: a second cut is a no-op", spec);

	is_int(blk_power_restore(d), 0, "%s: power restored", spec);
	ok(all_off(d, false), "%s: every device of the stack is on again", spec);
	is_int(blk_read(d, 0, 8, got), 0, "%s: reads work again", spec);
	bool same = true;
	for (unsigned s = 0; s < 8; s++) {
		const unsigned char *want = (kept & 1u << s ? buf : old) + s * ss;
		if (memcmp(got + s * ss, want, ss) != 0) {
			diag("%s: sector %u holds %s", spec, s,
			     memcmp(got + s * ss, old + s * ss, ss) == 0 ? "its old data"
			                                                 : "other data");
			same = false;
		}
	}
	ok(same, "%s: only persistent state is visible (%s)", spec,
	   kept == KEEP_ALL       ? "every completed write"
	   : kept == KEEP_DURABLE ? "the flushed and the FUA write"
	                          : "no write: flush and FUA were ignored");
	is_int(blk_write(d, 0, 1, buf, BLK_FUA), 0, "%s: writes work again", spec);
	is_int(blk_flush(d), 0, "%s: flushes work again", spec);
	blk_close(d);
	free(old);
	free(buf);
	free(got);
	blk_page_free(swap);
}

int main(void)
{
	struct bdev *m, *t;
	blk_mem_open(512, 8, &m);
	toy_open(m, &t);
	struct seen s = {.n = 0};
	bool complete = false;
	int64_t n = blk_cut_foreach(t, NULL, 100, record, &s, &complete);
	is_int(n, 4, "DFS visits the 4 leaves of an uneven decision tree");
	ok(complete, "and says it visited them all");
	int distinct = 1;
	for (int i = 0; i < s.n; i++)
		for (int j = 0; j < i; j++)
			distinct &= strcmp(s.v[i], s.v[j]) != 0;
	ok(distinct, "each outcome once: %s %s %s %s", s.v[0], s.v[1], s.v[2], s.v[3]);
	s.n = 0;
	n = blk_cut_foreach(t, NULL, 2, record, &s, &complete);
	ok(n == 2 && !complete, "a budget of 2 stops early and says so");
	unsigned char b[512];
	blk_read(t, 0, 1, b);
	ok(b[0] == 0 && !t->powered_off, "the device itself was never cut");

	/* one outcome replayed by its decision list */
	struct blk_chooser_list list;
	uint64_t dec[] = {1, 2};
	struct bdev *c;
	blk_clone(t, &c);
	blk_chooser_list_init(&list, dec, 2);
	blk_power_cut(c, &list.base, NULL);
	is_int(blk_read(c, 0, 1, b), -EIO, "I/O after a cut fails");
	blk_power_restore(c);
	blk_read(c, 0, 1, b);
	ok(b[0] == 'A' && b[1] == '2', "decision list {1,2} gives outcome A2");
	ok(list.pos == 2 && list.n[0] == 2 && list.n[1] == 3, "and records the radices asked");
	blk_close(c);

	/* random chooser: same seed, same decisions */
	struct blk_chooser_random r1, r2;
	blk_chooser_random_init(&r1, 5);
	blk_chooser_random_init(&r2, 5);
	int same = 1;
	for (int i = 0; i < 100; i++)
		same &= blk_choose(&r1.base, 1000, "x") == blk_choose(&r2.base, 1000, "x");
	ok(same, "the random chooser is deterministic for a seed");
	blk_close(t);

	/* a medium cut during a 3-sector write persists a prefix of it */
	struct bdev *mem;
	blk_mem_open(512, 8, &mem);
	unsigned char w[512 * 3];
	memset(w, 'w', sizeof(w));
	struct blk_inflight in = {.lba = 0, .count = 3, .data = w};
	int landed[4] = {0};
	n = blk_cut_foreach(mem, &in, 100, prefix_cb, landed, &complete);
	is_int(n, 4, "in-flight 3-sector write on a medium: 4 outcomes");
	ok(landed[0] == 1 && landed[1] == 1 && landed[2] == 1 && landed[3] == 1,
	   "0, 1, 2 and 3 sectors landed, once each");
	struct blk_inflight bad = {.lba = 7, .count = 3, .data = w};
	n = blk_cut_foreach(mem, &bad, 100, prefix_cb, landed, &complete);
	is_int(n, -EINVAL, "an in-flight write outside the device is -EINVAL");
	blk_close(mem);

	off_until_restored("mem(size=64k)", KEEP_ALL);
	off_until_restored("mem(size=64k,sector=4096)", KEEP_ALL);
	off_until_restored("cache > disk > mem(size=64k)", KEEP_DURABLE);
	off_until_restored("cache(flush=ignore,fua=ignore) > disk(tear=byte) > mem(size=64k)",
	                   KEEP_NONE);
	off_until_restored("cache(fua=ignore) > disk > mem(size=64k)", KEEP_DURABLE & ~0x08u);
	off_until_restored("disk(tear=byte) > mem(size=64k)", KEEP_ALL);
	off_until_restored("flash(ftl=cheap,eb=16k,size=64k)", KEEP_ALL);
	off_until_restored("flash(ftl=careful,eb=16k,size=256k,sector=4096)", KEEP_ALL);
	off_until_restored("flash(ftl=careful,eb=16k,size=64k,cache=8k) > mem(size=256k)",
	                   KEEP_DURABLE);
	off_until_restored("flash(ftl=cheap,eb=16k,size=64k,cache=8k,flush=ignore)", KEEP_NONE);
	off_until_restored("fault > mem(size=64k)", KEEP_ALL);
	off_until_restored("fault(rules=\"read-error lba=60\") > cache > disk > mem(size=64k)",
	                   KEEP_DURABLE);
	off_until_restored("raid1 > [mem(size=1M)] x2", KEEP_ALL);
	off_until_restored("raid5(chunk=4k) > [mem(size=64k)] x4", KEEP_ALL);
	off_until_restored("raid6(chunk=4k,bitmap=true) > [cache > disk > mem(size=64k)] x4",
	                   KEEP_DURABLE);
	off_until_restored("concat > [mem(size=2k) ; cache > mem(size=64k)]", KEEP_DURABLE);
	return tap_done();
}
