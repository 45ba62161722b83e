/* test_blk_cut.c — power cuts and choosers: the DFS walk visits every outcome of
 * a decision tree exactly once (also when later decisions depend on earlier ones),
 * a decision list replays one outcome exactly, the random chooser is deterministic,
 * and a medium's in-flight write persists as a prefix of its sectors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
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
	return tap_done();
}
