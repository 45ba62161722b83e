// SPDX-License-Identifier: GPL-2.0-or-later
/* cow.c — a copy-on-write overlay over a read-only base device.
 *
 * This is what every crash state is: an overlay holds only the sectors that differ
 * from the base, in a persistent radix tree whose nodes and sector buffers are
 * reference-counted. Cloning an overlay shares the whole tree (O(1)); a write copies
 * only the path it changes. Memory is O(changed sectors). Each held sector carries a
 * hash so the overlay's digest is maintained incrementally (XOR of per-sector
 * hashes), which lets the crash explorer spot duplicate states without reading them.
 *
 * A sector written as all zeroes is held as one shared, never-freed zero sector (its
 * hash, like a discarded sector's, a function of the sector number): mkfs writes the
 * inode tables and the journal as zeroes, and every fsck of every state read them
 * back from a buffer of their own (a third of the explorer's time was that memcpy).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/util.h"

#define FAN_BITS 6
#define FAN      (1u << FAN_BITS)

struct sbuf {
	uint32_t ref;
	uint64_t hash;
	unsigned char data[];
};

struct node {
	uint32_t ref;
	void *slot[FAN]; /* struct node * above the leaves, struct sbuf * at them */
};

/* a discarded sector: reads as zeroes, shared by everyone, never freed */
static struct sbuf discarded = {.ref = 1};
#define DISCARDED (&discarded)

/* a sector written as zeroes (blk_init allows sectors of 512 and 4096 bytes) */
#define ZERO_MAX 4096
static union {
	struct sbuf s;
	unsigned char room[sizeof(struct sbuf) + ZERO_MAX];
} zeroed = {.s = {.ref = 1}};
#define ZEROED (&zeroed.s)
/* a sentinel: its reference count is never touched */
#define SHARED(s) ((s) == DISCARDED || (s) == ZEROED)

struct cow_dev {
	struct bdev dev;
	struct bdev *base;
	struct node *root;
	unsigned levels;
	uint64_t changed;
	uint64_t digest;
};

static void sbuf_put(struct sbuf *s)
{
	if (s && !SHARED(s) && --s->ref == 0)
		free(s);
}

static void node_put(struct node *n, unsigned level)
{
	if (!n || --n->ref > 0)
		return;
	for (unsigned i = 0; i < FAN; i++) {
		if (!n->slot[i])
			continue;
		if (level == 1)
			sbuf_put(n->slot[i]);
		else
			node_put(n->slot[i], level - 1);
	}
	free(n);
}

static struct node *node_new(void)
{
	struct node *n = calloc(1, sizeof(*n));
	if (n)
		n->ref = 1;
	return n;
}

/* A private copy of a shared node: its children gain a reference each. */
static struct node *node_copy(struct node *n, unsigned level)
{
	struct node *c = node_new();
	if (!c)
		return NULL;
	memcpy(c->slot, n->slot, sizeof(c->slot));
	for (unsigned i = 0; i < FAN; i++) {
		if (!c->slot[i])
			continue;
		if (level == 1) {
			if (!SHARED((struct sbuf *)c->slot[i]))
				((struct sbuf *)c->slot[i])->ref++;
		} else {
			((struct node *)c->slot[i])->ref++;
		}
	}
	return c;
}

static unsigned slot_of(uint64_t lba, unsigned level)
{
	return (unsigned)(lba >> ((level - 1) * FAN_BITS)) & (FAN - 1);
}

/* what is held at lba: data, or (data NULL) the sentinel tagged `tag` */
static uint64_t sector_hash(uint64_t lba, const void *data, size_t len, uint64_t tag)
{
	uint64_t h = bo_hash64(BO_HASH64_INIT, &lba, sizeof(lba));
	h = data ? bo_hash64(h, data, len) : h ^ tag;
	/* final avalanche so XOR-combining distinct sectors does not cancel easily */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}
#define TAG_DISCARDED 0xd15ca4dd15ca4dull
#define TAG_ZEROED    0x2e70000002e70ull

/* The leaf slot for lba in a tree made private along the path, or NULL on ENOMEM. */
static void **slot_for_write(struct cow_dev *c, uint64_t lba)
{
	struct node **np = &c->root;
	for (unsigned level = c->levels;; level--) {
		if (!*np) {
			*np = node_new();
			if (!*np)
				return NULL;
		} else if ((*np)->ref > 1) {
			struct node *copy = node_copy(*np, level);
			if (!copy)
				return NULL;
			(*np)->ref--;
			*np = copy;
		}
		void **slot = &(*np)->slot[slot_of(lba, level)];
		if (level == 1)
			return slot;
		np = (struct node **)slot;
	}
}

/* Zeroes are always held as ZEROED, so its hash need only be a function of lba
 * (hashing 512 zero bytes again at every overwrite was 3% of the explorer's time). */
static uint64_t held_hash(const struct sbuf *s, uint64_t lba)
{
	if (s == DISCARDED)
		return sector_hash(lba, NULL, 0, TAG_DISCARDED);
	return s == ZEROED ? sector_hash(lba, NULL, 0, TAG_ZEROED) : s->hash;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, sizeof w);
		if (w)
			return false;
	}
	return true;
}

/* data NULL discards the sector */
static int set_sector(struct cow_dev *c, uint64_t lba, const void *data)
{
	size_t ss = c->dev.sector_size;
	void **slot = slot_for_write(c, lba);
	if (!slot)
		return -ENOMEM;
	struct sbuf *old = *slot, *s;
	if (!data) {
		s = DISCARDED;
	} else if (ss <= ZERO_MAX && all_zero(data, ss)) {
		s = ZEROED;
	} else if (old && !SHARED(old) && old->ref == 1) {
		s = old; /* sole owner: overwrite in place */
	} else {
		s = malloc(sizeof(*s) + ss);
		if (!s)
			return -ENOMEM;
		s->ref = 1;
	}
	if (old)
		c->digest ^= held_hash(old, lba);
	else
		c->changed++;
	if (!SHARED(s)) {
		memcpy(s->data, data, ss);
		s->hash = sector_hash(lba, data, ss, 0);
	}
	if (old != s)
		sbuf_put(old);
	*slot = s;
	c->digest ^= held_hash(s, lba);
	return 0;
}

/* The leaf node holding lba's slot, NULL when the overlay holds nothing near it. */
static const struct node *leaf_of(const struct cow_dev *c, uint64_t lba)
{
	const struct node *n = c->root;
	for (unsigned level = c->levels; n && level > 1; level--)
		n = n->slot[slot_of(lba, level)];
	return n;
}

/* Reads look each leaf up once for its FAN sectors, not once per sector (and twice at
 * the end of a run): the fsck and mount of every crash state read through here. */
static int cow_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct cow_dev *c = (struct cow_dev *)d;
	size_t ss = d->sector_size;
	unsigned char *out = buf;
	const struct node *leaf = NULL;
	uint64_t leaf_key = UINT64_MAX;
	uint32_t i = 0;
	while (i < count) {
		uint64_t at = lba + i;
		if (at >> FAN_BITS != leaf_key) {
			leaf_key = at >> FAN_BITS;
			leaf = leaf_of(c, at);
		}
		struct sbuf *s = leaf ? leaf->slot[at & (FAN - 1)] : NULL;
		if (s) {
			if (s == DISCARDED || s == ZEROED)
				memset(out + (size_t)i * ss, 0, ss);
			else
				memcpy(out + (size_t)i * ss, s->data, ss);
			i++;
			continue;
		}
		/* a run of sectors the overlay does not hold: one read of the base */
		uint32_t j = i + 1;
		while (j < count) {
			uint64_t a = lba + j;
			if (a >> FAN_BITS != leaf_key) {
				leaf_key = a >> FAN_BITS;
				leaf = leaf_of(c, a);
			}
			if (!leaf) { /* nothing held in this leaf's span: skip it whole */
				uint64_t next = (leaf_key + 1) << FAN_BITS;
				j = next - lba >= count ? count : (uint32_t)(next - lba);
				continue;
			}
			if (leaf->slot[a & (FAN - 1)])
				break;
			j++;
		}
		int rc = blk_read(c->base, lba + i, j - i, out + (size_t)i * ss);
		if (rc)
			return bo_errf(&d->err, rc, "cow: base read failed: %s",
			               bo_errstr(&c->base->err, rc));
		i = j;
	}
	return 0;
}

/* Every sector zero or discarded in the overlay, or not held and known zero below. */
static bool cow_reads_zero(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct cow_dev *c = (struct cow_dev *)d;
	uint32_t i = 0;
	while (i < count) {
		uint64_t at = lba + i, key = at >> FAN_BITS;
		const struct node *leaf = leaf_of(c, at);
		/* the sectors of [at, end) all lie in this leaf's span */
		uint64_t next = (key + 1) << FAN_BITS;
		uint32_t end = next - lba >= count ? count : (uint32_t)(next - lba);
		uint32_t run = 0; /* a run of sectors the overlay does not hold */
		for (; i < end; i++) {
			const struct sbuf *s = leaf ? leaf->slot[(lba + i) & (FAN - 1)] : NULL;
			if (!s) {
				run++;
				continue;
			}
			if (run && !blk_reads_zero(c->base, lba + i - run, run))
				return false;
			run = 0;
			if (s != ZEROED && s != DISCARDED)
				return false;
		}
		if (run && !blk_reads_zero(c->base, lba + i - run, run))
			return false;
	}
	return true;
}

static int cow_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct cow_dev *c = (struct cow_dev *)d;
	(void)flags;
	for (uint32_t i = 0; i < count; i++) {
		int rc =
		    set_sector(c, lba + i, (const unsigned char *)buf + (size_t)i * d->sector_size);
		if (rc)
			return rc;
	}
	return 0;
}

static int cow_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct cow_dev *c = (struct cow_dev *)d;
	for (uint32_t i = 0; i < count; i++) {
		int rc = set_sector(c, lba + i, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

static void cow_close(struct bdev *d)
{
	struct cow_dev *c = (struct cow_dev *)d;
	node_put(c->root, c->levels);
	free(c);
}

static int cow_clone(struct bdev *d, struct bdev **out)
{
	struct cow_dev *c = (struct cow_dev *)d;
	struct cow_dev *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *c;
	if (n->root)
		n->root->ref++;
	*out = &n->dev;
	return 0;
}

static struct bdev *cow_lower(struct bdev *d, unsigned i)
{
	return i == 0 ? ((struct cow_dev *)d)->base : NULL;
}

static void cow_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	emit(ctx, "cow_changed_sectors", ((struct cow_dev *)d)->changed);
}

static const struct bdev_ops cow_ops = {
    .read = cow_read,
    .write = cow_write,
    .reads_zero = cow_reads_zero,
    .discard = cow_discard,
    .close = cow_close,
    .clone = cow_clone,
    .lower = cow_lower,
    .stats = cow_stats,
};

int blk_cow_open(struct bdev *base, struct bdev **out)
{
	struct cow_dev *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	int rc = blk_init(&c->dev, &cow_ops, "cow", base->sector_size, base->nr_sectors);
	if (rc) {
		free(c);
		return rc;
	}
	c->base = base;
	c->levels = 1;
	while (c->levels * FAN_BITS < 64 && (base->nr_sectors - 1) >> (c->levels * FAN_BITS))
		c->levels++;
	*out = &c->dev;
	return 0;
}

uint64_t blk_cow_changed(const struct bdev *d)
{
	return ((const struct cow_dev *)d)->changed;
}

uint64_t blk_cow_digest(const struct bdev *d)
{
	const struct cow_dev *c = (const struct cow_dev *)d;
	return c->digest ^ c->changed;
}

/* Whether two trees hold the same sectors with the same bytes. Clones share
 * subtrees, so a shared pointer settles a whole subtree without reading it. */
static bool node_same(const struct node *a, const struct node *b, unsigned level, size_t ss)
{
	if (a == b)
		return true;
	if (!a || !b)
		return false; /* (an emptied node would read as different: only dedup lost) */
	for (unsigned i = 0; i < FAN; i++) {
		if (level > 1) {
			if (!node_same(a->slot[i], b->slot[i], level - 1, ss))
				return false;
			continue;
		}
		const struct sbuf *x = a->slot[i], *y = b->slot[i];
		if (x == y)
			continue;
		if (!x || !y || x == DISCARDED || y == DISCARDED || memcmp(x->data, y->data, ss))
			return false;
	}
	return true;
}

bool blk_cow_same(const struct bdev *a, const struct bdev *b)
{
	if (a->ops != &cow_ops || b->ops != &cow_ops)
		return false;
	const struct cow_dev *x = (const struct cow_dev *)a, *y = (const struct cow_dev *)b;
	return x->base == y->base && x->levels == y->levels && x->changed == y->changed &&
	       a->sector_size == b->sector_size &&
	       node_same(x->root, y->root, x->levels, a->sector_size);
}

static int walk(const struct node *n, unsigned level, uint64_t prefix,
                int (*fn)(void *, uint64_t, const void *), void *ctx)
{
	for (unsigned i = 0; i < FAN; i++) {
		if (!n->slot[i])
			continue;
		uint64_t key = prefix << FAN_BITS | i;
		int rc;
		if (level == 1) {
			const struct sbuf *s = n->slot[i];
			rc = fn(ctx, key, s == DISCARDED ? NULL : s->data);
		} else {
			rc = walk(n->slot[i], level - 1, key, fn, ctx);
		}
		if (rc)
			return rc;
	}
	return 0;
}

int blk_cow_foreach(const struct bdev *d, int (*fn)(void *ctx, uint64_t lba, const void *data),
                    void *ctx)
{
	const struct cow_dev *c = (const struct cow_dev *)d;
	return c->root ? walk(c->root, c->levels, 0, fn, ctx) : 0;
}
