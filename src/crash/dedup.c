// SPDX-License-Identifier: GPL-2.0-or-later
/* dedup.c — which crash states are distinct (a digest of the COW overlays each state
 * wrote, and their bytes compared when digests match) and which shard judges each, so
 * `--shard I/N` runs partition the states. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "crash/crash_int.h"

uint64_t crash_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t slot(uint64_t key, size_t cap)
{
	return (size_t)(key * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

enum { MAX_COW = 64 };

/* The overlays of a state in the order digest_walk meets them. */
static void collect_cows(struct bdev *d, struct bdev **out, unsigned *n, unsigned depth)
{
	struct bdev *low = blk_lower(d, 0);
	if (strcmp(d->name, "cow") == 0) {
		if (*n < MAX_COW)
			out[*n] = d;
		++*n;
		return;
	}
	if (!low || depth > 64)
		return;
	for (unsigned i = 0; (low = blk_lower(d, i)); i++)
		collect_cows(low, out, n, depth + 1);
}

/* Whether kept state k holds the same bytes as the state whose overlays are cow[0..n). */
static bool same_state(const struct crash_seen_kept *k, struct bdev *const *cow, unsigned n)
{
	if (!k->cow || k->ncow != n)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (!blk_cow_same(k->cow[i], cow[i]))
			return false;
	return true;
}

static void let_go(struct crash_seen_kept *k)
{
	for (unsigned i = 0; i < k->ncow; i++)
		blk_close(k->cow[i]);
	free(k->cow);
	k->cow = NULL;
	k->ncow = 0;
}

static int grow(struct crash_seen *s)
{
	size_t nc = s->cap ? s->cap * 2 : 4096;
	struct crash_seen_entry *ne = calloc(nc, sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->e[i].key) {
			size_t j = slot(s->e[i].key, nc);
			while (ne[j].key)
				j = (j + 1) & (nc - 1);
			ne[j] = s->e[i];
		}
	free(s->e);
	s->e = ne;
	s->cap = nc;
	return 0;
}

/* Keeps clones of the state's overlays as kept[nth] (shared trees: O(1) each). */
static int keep_cows(struct crash_seen *s, size_t nth, size_t completed, struct bdev *const *cow,
                     unsigned n)
{
	struct crash_seen_kept *nk = bo_grow(s->kept, &s->kept_cap, nth, sizeof(*nk), 1024);
	if (!nk)
		return -ENOMEM;
	s->kept = nk;
	while (s->nkept <= nth)
		s->kept[s->nkept++] = (struct crash_seen_kept){0};
	struct crash_seen_kept *k = &s->kept[nth];
	k->completed = completed;
	k->cow = calloc(n, sizeof(*k->cow));
	if (!k->cow)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		int rc = blk_clone(cow[i], &k->cow[i]);
		if (rc) {
			let_go(k);
			return rc;
		}
		k->ncow = i + 1;
	}
	return 0;
}

/* Lets go of the overlays of states at crash points before `completed`: a key match
 * compares only states at the same crash point, so none can be the same again. */
static void release_before(struct crash_seen *s, size_t completed)
{
	while (s->released < s->nkept && s->kept[s->released].completed < completed)
		let_go(&s->kept[s->released++]);
}

/* The table's core: a key match is a duplicate only when same(ctx, entry) says the
 * bytes are equal (1); same NULL: no bytes to compare, so never a duplicate. */
static int seen_add(struct crash_seen *s, uint64_t key, size_t completed, uint64_t ordinal,
                    int (*same)(void *ctx, const struct crash_seen_entry *e), void *ctx, bool *dup,
                    uint64_t *first, struct crash_seen_entry **added)
{
	if (s->key_hook)
		key = s->key_hook(key);
	if (key == 0)
		key = 1;
	int rc;
	if ((s->n + 1) * 2 > s->cap && (rc = grow(s)))
		return rc;
	size_t j = slot(key, s->cap);
	for (; s->e[j].key; j = (j + 1) & (s->cap - 1)) {
		if (s->e[j].key != key)
			continue;
		s->compared++;
		rc = same && s->e[j].completed == completed ? same(ctx, &s->e[j]) : 0;
		if (rc < 0)
			return rc;
		if (rc) {
			*dup = true;
			*first = s->e[j].first;
			return 0;
		}
		/* the keys collide, the bytes differ: a distinct state, look on */
	}
	struct crash_seen_entry *e = &s->e[j];
	e->key = key;
	e->first = ordinal;
	e->completed = completed;
	e->nth = s->n++;
	*dup = false;
	*first = ordinal;
	*added = e;
	return 0;
}

struct cows {
	const struct crash_seen *s;
	struct bdev *cow[MAX_COW];
	unsigned n;
};

static int same_cows(void *ctx, const struct crash_seen_entry *e)
{
	const struct cows *c = ctx;
	return e->nth < c->s->nkept && same_state(&c->s->kept[e->nth], c->cow, c->n);
}

int crash_seen_add(struct crash_seen *s, uint64_t key, struct bdev *state, size_t completed,
                   uint64_t ordinal, bool *dup, uint64_t *first)
{
	struct cows c = {.s = s, .n = 0};
	release_before(s, completed);
	if (state)
		collect_cows(state, c.cow, &c.n, 0);
	if (c.n > MAX_COW)
		c.n = 0; /* too many to keep: judged without dedup, as with none */
	struct crash_seen_entry *e = NULL;
	int rc = seen_add(s, key, completed, ordinal, c.n ? same_cows : NULL, &c, dup, first, &e);
	if (rc == 0 && !*dup && c.n) /* on failure the entry compares as different */
		rc = keep_cows(s, e->nth, completed, c.cow, c.n);
	return rc;
}

int crash_seen_add_by(struct crash_seen *s, uint64_t key, size_t completed, uint64_t ordinal,
                      int (*same)(void *ctx, const struct crash_seen_entry *e), void *ctx,
                      bool *dup, uint64_t *first)
{
	struct crash_seen_entry *e;
	return seen_add(s, key, completed, ordinal, same, ctx, dup, first, &e);
}

static void digest_walk(struct bdev *d, uint64_t *h, unsigned *ncow, unsigned depth)
{
	struct bdev *low = blk_lower(d, 0);
	bool cow = strcmp(d->name, "cow") == 0; /* its base is shared by every state */
	if (cow || !low || depth > 64) {
		uint64_t v = cow ? blk_cow_digest(d) : 0;
		*ncow += cow;
		*h = crash_mix64(*h ^ v) + 0x9e3779b97f4a7c15ull;
		return;
	}
	for (unsigned i = 0; (low = blk_lower(d, i)); i++)
		digest_walk(low, h, ncow, depth + 1);
}

uint64_t crash_state_key(struct bdev *state, size_t completed, uint64_t ordinal)
{
	uint64_t key = 0x243f6a8885a308d3ull ^ (uint64_t)completed;
	unsigned ncow = 0;
	digest_walk(state, &key, &ncow, 0);
	if (ncow == 0) /* no overlay to digest (a model with private media): no dedup */
		key = crash_mix64(key ^ ordinal);
	return key;
}

void crash_seen_free(struct crash_seen *s)
{
	for (size_t i = 0; i < s->nkept; i++)
		let_go(&s->kept[i]);
	free(s->kept);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

bool crash_shard_mine(uint64_t first, unsigned shard, unsigned nshards)
{
	return nshards <= 1 || crash_mix64(first) % nshards == shard;
}
