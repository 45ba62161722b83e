/* cache.c — `cache`: a drive's volatile write cache in front of any device.
 *
 * Dirty sectors live in a dense array indexed by an open-addressing hash on the
 * LBA (O(1) lookups). When the cache is full a batch of them is written back in
 * the configured order; flush (if honoured) writes back everything and flushes
 * the lower device; FUA (if honoured) writes through. At a power cut each dirty
 * sector independently reached the media or not: one two-way decision per dirty
 * sector, in LBA order. Outcome space: docs/models/cache.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"

enum { ORDER_FIFO, ORDER_RANDOM, ORDER_LBA };

struct cache_dev {
	struct bdev dev;
	struct bdev *lower;
	uint32_t cap; /* sectors the cache holds */
	uint32_t n;   /* dirty sectors held */
	bool flush_honor, fua_honor;
	int order;
	struct bo_rng rng;    /* random write-back order: part of the state, cloned */
	uint64_t seq_next;    /* when each sector became dirty, for fifo */
	uint64_t head;        /* lba elevator position */
	uint64_t *lba, *seq;  /* [cap] */
	unsigned char *data;  /* [cap * sector_size] */
	uint32_t *tab, tmask; /* hash slots: dense index + 1, 0 = empty */
	unsigned tbits;
	uint32_t *scratch; /* [cap] indices, for sorting */
	uint64_t reads, read_hits, writes, fua_writes, flushes, writebacks;
};

static inline uint32_t slot_of(const struct cache_dev *c, uint64_t lba)
{
	return (uint32_t)((lba * 0x9e3779b97f4a7c15ull) >> (64 - c->tbits));
}

static inline unsigned char *sector(struct cache_dev *c, uint32_t i)
{
	return c->data + (size_t)i * c->dev.sector_size;
}

static int64_t find(const struct cache_dev *c, uint64_t lba)
{
	if (!c->n)
		return -1;
	for (uint32_t s = slot_of(c, lba);; s = (s + 1) & c->tmask) {
		uint32_t t = c->tab[s];
		if (!t)
			return -1;
		if (c->lba[t - 1] == lba)
			return t - 1;
	}
}

static uint32_t find_slot(const struct cache_dev *c, uint64_t lba)
{
	uint32_t s = slot_of(c, lba);
	while (c->tab[s] && c->lba[c->tab[s] - 1] != lba)
		s = (s + 1) & c->tmask;
	return s;
}

static uint32_t insert(struct cache_dev *c, uint64_t lba)
{
	uint32_t i = c->n++;
	c->lba[i] = lba;
	c->seq[i] = c->seq_next++;
	c->tab[find_slot(c, lba)] = i + 1;
	return i;
}

/* Removes dense entry i: backward-shift deletion in the table, then the last
 * entry moves into i. */
static void remove_entry(struct cache_dev *c, uint32_t i)
{
	uint32_t s = find_slot(c, c->lba[i]);
	for (;;) {
		c->tab[s] = 0;
		uint32_t j = s;
		for (;;) {
			j = (j + 1) & c->tmask;
			if (!c->tab[j])
				goto moved;
			uint32_t k = slot_of(c, c->lba[c->tab[j] - 1]);
			/* the entry at j may fill the hole at s unless its home lies in (s, j] */
			bool home_between = s <= j ? (k > s && k <= j) : (k > s || k <= j);
			if (!home_between) {
				c->tab[s] = c->tab[j];
				s = j;
				break;
			}
		}
	}
moved:;
	uint32_t last = c->n - 1;
	if (i != last) {
		c->tab[find_slot(c, c->lba[last])] = i + 1;
		c->lba[i] = c->lba[last];
		c->seq[i] = c->seq[last];
		memcpy(sector(c, i), sector(c, last), c->dev.sector_size);
	}
	c->n--;
}

static void clear(struct cache_dev *c)
{
	if (c->n)
		memset(c->tab, 0, ((size_t)c->tmask + 1) * sizeof(*c->tab));
	c->n = 0;
}

static int cmp_lba(const void *a, const void *b, void *ctx)
{
	const struct cache_dev *c = ctx;
	uint64_t x = c->lba[*(const uint32_t *)a], y = c->lba[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

static int cmp_seq(const void *a, const void *b, void *ctx)
{
	const struct cache_dev *c = ctx;
	uint64_t x = c->seq[*(const uint32_t *)a], y = c->seq[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

static int cmp_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* scratch[0..n) = every dirty entry, in LBA order */
static void sort_by_lba(struct cache_dev *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		c->scratch[i] = i;
	qsort_r(c->scratch, c->n, sizeof(*c->scratch), cmp_lba, c);
}

static int write_back(struct cache_dev *c, uint32_t i)
{
	int rc = blk_write(c->lower, c->lba[i], 1, sector(c, i), 0);
	if (rc)
		return bo_errf(&c->dev.err, rc, "cache: write-back of sector %llu: %s",
		               (unsigned long long)c->lba[i], bo_errstr(&c->lower->err, rc));
	c->writebacks++;
	return 0;
}

static void reverse(uint32_t *s, uint32_t from, uint32_t to)
{
	while (from + 1 < to) {
		uint32_t t = s[from];
		s[from++] = s[--to];
		s[to] = t;
	}
}

/* Makes room: writes back a batch (1/16 of the cache) chosen by the order. */
static int evict(struct cache_dev *c)
{
	uint32_t batch = c->cap / 16 ? c->cap / 16 : 1;
	if (batch > c->n)
		batch = c->n;
	uint32_t *s = c->scratch;
	for (uint32_t i = 0; i < c->n; i++)
		s[i] = i;
	if (c->order == ORDER_FIFO) {
		qsort_r(s, c->n, sizeof(*s), cmp_seq, c);
	} else if (c->order == ORDER_RANDOM) {
		for (uint32_t k = 0; k < batch; k++) {
			uint32_t j = k + (uint32_t)bo_rng_below(&c->rng, c->n - k);
			uint32_t t = s[k];
			s[k] = s[j];
			s[j] = t;
		}
	} else {
		/* elevator: ascending from the head, wrapping round */
		qsort_r(s, c->n, sizeof(*s), cmp_lba, c);
		uint32_t lo = 0, hi = c->n;
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (c->lba[s[mid]] < c->head)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == c->n)
			lo = 0;
		/* rotate left by lo: the run from the head comes first */
		reverse(s, 0, lo);
		reverse(s, lo, c->n);
		reverse(s, 0, c->n);
		c->head = c->lba[s[batch - 1]] + 1;
	}
	for (uint32_t k = 0; k < batch; k++) {
		int rc = write_back(c, s[k]);
		if (rc)
			return rc;
	}
	/* remove from the highest index down so no chosen entry moves */
	qsort(s, batch, sizeof(*s), cmp_desc);
	for (uint32_t k = 0; k < batch; k++)
		remove_entry(c, s[k]);
	return 0;
}

static void drop_range(struct cache_dev *c, uint64_t lba, uint32_t count)
{
	if (count <= c->n) {
		for (uint32_t k = 0; k < count; k++) {
			int64_t i = find(c, lba + k);
			if (i >= 0)
				remove_entry(c, (uint32_t)i);
		}
		return;
	}
	for (uint32_t i = c->n; i-- > 0;)
		if (c->lba[i] >= lba && c->lba[i] - lba < count)
			remove_entry(c, i);
}

static int cache_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct cache_dev *c = (struct cache_dev *)d;
	size_t ss = d->sector_size;
	unsigned char *out = buf;
	c->reads++;
	uint32_t k = 0;
	while (k < count) {
		int64_t i = find(c, lba + k);
		if (i >= 0) {
			memcpy(out + k * ss, sector(c, (uint32_t)i), ss);
			c->read_hits++;
			k++;
			continue;
		}
		uint32_t j = k + 1;
		while (j < count && find(c, lba + j) < 0)
			j++;
		int rc = blk_read(c->lower, lba + k, j - k, out + k * ss);
		if (rc)
			return bo_errf(&d->err, rc, "cache: %s", bo_errstr(&c->lower->err, rc));
		k = j;
	}
	return 0;
}

static int cache_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf,
                       unsigned flags)
{
	struct cache_dev *c = (struct cache_dev *)d;
	size_t ss = d->sector_size;
	const unsigned char *in = buf;
	c->writes++;
	if (flags & BLK_FUA)
		c->fua_writes++;
	bool through = c->cap == 0 || ((flags & BLK_FUA) && c->fua_honor);
	if (through) {
		/* FUA is durable on completion and orders nothing else: only the sectors
		 * it overwrites leave the cache */
		unsigned lf = c->fua_honor ? flags : 0;
		int rc = blk_write(c->lower, lba, count, buf, lf);
		if (rc)
			return bo_errf(&d->err, rc, "cache: %s", bo_errstr(&c->lower->err, rc));
		drop_range(c, lba, count);
		return 0;
	}
	for (uint32_t k = 0; k < count; k++) {
		int64_t i = find(c, lba + k);
		if (i < 0) {
			if (c->n == c->cap) {
				int rc = evict(c);
				if (rc)
					return rc;
			}
			i = insert(c, lba + k);
		}
		memcpy(sector(c, (uint32_t)i), in + k * ss, ss);
	}
	return 0;
}

static int write_back_all(struct cache_dev *c)
{
	sort_by_lba(c);
	for (uint32_t k = 0; k < c->n; k++) {
		int rc = write_back(c, c->scratch[k]);
		if (rc)
			return rc;
	}
	clear(c);
	return 0;
}

static int cache_flush(struct bdev *d)
{
	struct cache_dev *c = (struct cache_dev *)d;
	c->flushes++;
	if (!c->flush_honor)
		return 0; /* the lying drive: acknowledges, keeps everything volatile */
	int rc = write_back_all(c);
	if (rc == 0)
		rc = blk_flush(c->lower);
	if (rc)
		return bo_errf(&d->err, rc, "cache: flush: %s", bo_errstr(&c->lower->err, rc));
	return 0;
}

static int cache_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct cache_dev *c = (struct cache_dev *)d;
	drop_range(c, lba, count);
	return blk_discard(c->lower, lba, count);
}

static void cache_free(struct cache_dev *c)
{
	free(c->lba);
	free(c->seq);
	free(c->data);
	free(c->tab);
	free(c->scratch);
	free(c);
}

static void cache_close(struct bdev *d)
{
	struct cache_dev *c = (struct cache_dev *)d;
	blk_close(c->lower);
	cache_free(c);
}

static int cache_alloc(struct cache_dev *c)
{
	size_t cap = c->cap ? c->cap : 1;
	c->tbits = 4;
	while (((size_t)1 << c->tbits) < 2 * cap)
		c->tbits++;
	c->tmask = (uint32_t)((1u << c->tbits) - 1);
	c->lba = malloc(cap * sizeof(*c->lba));
	c->seq = malloc(cap * sizeof(*c->seq));
	c->data = malloc(cap * c->dev.sector_size);
	c->tab = calloc((size_t)c->tmask + 1, sizeof(*c->tab));
	c->scratch = malloc(cap * sizeof(*c->scratch));
	return c->lba && c->seq && c->data && c->tab && c->scratch ? 0 : -ENOMEM;
}

static int cache_clone(struct bdev *d, struct bdev **out)
{
	struct cache_dev *c = (struct cache_dev *)d;
	struct cache_dev *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *c;
	n->lba = n->seq = NULL;
	n->data = NULL;
	n->tab = n->scratch = NULL;
	n->lower = NULL;
	int rc = cache_alloc(n);
	if (rc == 0)
		rc = blk_clone(c->lower, &n->lower);
	if (rc) {
		if (rc != -ENOMEM)
			bo_errf(&d->err, rc, "cache: %s", bo_errstr(&c->lower->err, rc));
		cache_free(n);
		return rc;
	}
	memcpy(n->lba, c->lba, c->n * sizeof(*c->lba));
	memcpy(n->seq, c->seq, c->n * sizeof(*c->seq));
	memcpy(n->data, c->data, (size_t)c->n * d->sector_size);
	memcpy(n->tab, c->tab, ((size_t)c->tmask + 1) * sizeof(*c->tab));
	*out = &n->dev;
	return 0;
}

static int cache_power_cut(struct bdev *d, struct blk_chooser *ch,
                           const struct blk_inflight *inflight)
{
	struct cache_dev *c = (struct cache_dev *)d;
	sort_by_lba(c);
	for (uint32_t k = 0; k < c->n; k++) {
		if (!blk_choose(ch, 2, "cache: dirty sector reached the media"))
			continue;
		int rc = write_back(c, c->scratch[k]);
		if (rc)
			return rc;
	}
	clear(c);
	/* the interrupted write was on its way down: the device below decides */
	return blk_power_cut(c->lower, ch, inflight);
}

static int cache_power_restore(struct bdev *d)
{
	return blk_power_restore(((struct cache_dev *)d)->lower);
}

static struct bdev *cache_lower(struct bdev *d, unsigned i)
{
	return i == 0 ? ((struct cache_dev *)d)->lower : NULL;
}

static void cache_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct cache_dev *c = (struct cache_dev *)d;
	emit(ctx, "reads", c->reads);
	emit(ctx, "read_hit_sectors", c->read_hits);
	emit(ctx, "writes", c->writes);
	emit(ctx, "fua_writes", c->fua_writes);
	emit(ctx, "flushes", c->flushes);
	emit(ctx, "dirty_sectors", c->n);
	emit(ctx, "dirty_bytes", (uint64_t)c->n * d->sector_size);
	emit(ctx, "writeback_sectors", c->writebacks);
}

static const struct bdev_ops cache_ops = {
    .read = cache_read,
    .write = cache_write,
    .flush = cache_flush,
    .discard = cache_discard,
    .close = cache_close,
    .clone = cache_clone,
    .power_cut = cache_power_cut,
    .power_restore = cache_power_restore,
    .lower = cache_lower,
    .stats = cache_stats,
};

static const char *const honor_ignore[] = {"honor", "ignore", NULL};
static const char *const orders[] = {"fifo", "random", "lba", NULL};

static int cache_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                      struct bdev **out, struct bo_err *err)
{
	uint64_t size, seed;
	int fl, fu, order;
	int rc = dev_arg_size(a, "size", &size, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "flush", honor_ignore, &fl, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "fua", honor_ignore, &fu, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "order", orders, &order, err);
	if (rc == 0)
		rc = dev_arg_u64(a, "seed", &seed, err);
	if (rc)
		return rc;
	if (nlowers != 1)
		return bo_errf(err, -EINVAL, "cache: takes one lower device");
	struct bdev *lower = lowers[0];
	uint64_t cap = size / lower->sector_size;
	if (cap > (1u << 30))
		return bo_errf(err, -EINVAL, "cache: size %llu bytes is more than 2^30 sectors",
		               (unsigned long long)size);
	struct cache_dev *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	blk_init(&c->dev, &cache_ops, "cache", lower->sector_size, lower->nr_sectors);
	c->cap = (uint32_t)cap;
	c->flush_honor = fl == 0;
	c->fua_honor = fu == 0;
	c->order = order;
	bo_rng_seed(&c->rng, seed);
	if (cache_alloc(c)) {
		cache_free(c);
		return bo_errf(err, -ENOMEM, "cache: cannot allocate %llu bytes",
		               (unsigned long long)size);
	}
	c->lower = lower;
	*out = &c->dev;
	return 0;
}

static const struct dev_param cache_params[] = {
    {"size", "1M", "capacity of the volatile cache in bytes; 0 = no cache (write-through)",
     DEV_PT_SIZE},
    {"flush", "honor",
     "honor: flush writes back and flushes below; ignore: a drive lying "
     "about flushes",
     DEV_PT_ENUM, honor_ignore},
    {"fua", "honor",
     "honor: a FUA write goes through to the media; ignore: cached like any "
     "write",
     DEV_PT_ENUM, honor_ignore},
    {"order", "fifo", "write-back order when full: fifo|random (seeded)|lba (elevator)",
     DEV_PT_ENUM, orders},
    {"seed", "0", "seed of the random write-back order", DEV_PT_U64},
    {NULL},
};

const struct dev_model dev_model_cache = {
    .name = "cache",
    .summary = "volatile write cache: unflushed writes may or may not reach the media at a "
               "power cut",
    .params = cache_params,
    .min_lowers = 1,
    .max_lowers = 1,
    .open = cache_open,
};
