/* dedup.c — which crash states are distinct (a digest of the COW overlays each state
 * wrote) and which shard judges each, so `--shard I/N` runs partition the states. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crash/internal.h"

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

int crash_seen_add(struct crash_seen *s, uint64_t key, uint64_t ordinal, bool *dup, uint64_t *first)
{
	if (key == 0)
		key = 1;
	if ((s->n + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 4096;
		uint64_t *nk = calloc(nc, sizeof(*nk)), *nf = calloc(nc, sizeof(*nf));
		if (!nk || !nf) {
			free(nk);
			free(nf);
			return -ENOMEM;
		}
		for (size_t i = 0; i < s->cap; i++)
			if (s->key[i]) {
				size_t j = slot(s->key[i], nc);
				while (nk[j])
					j = (j + 1) & (nc - 1);
				nk[j] = s->key[i];
				nf[j] = s->first[i];
			}
		free(s->key);
		free(s->first);
		s->key = nk;
		s->first = nf;
		s->cap = nc;
	}
	size_t j = slot(key, s->cap);
	while (s->key[j]) {
		if (s->key[j] == key) {
			*dup = true;
			*first = s->first[j];
			return 0;
		}
		j = (j + 1) & (s->cap - 1);
	}
	s->key[j] = key;
	s->first[j] = ordinal;
	s->n++;
	*dup = false;
	*first = ordinal;
	return 0;
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
	free(s->key);
	free(s->first);
	memset(s, 0, sizeof(*s));
}

bool crash_shard_mine(uint64_t first, unsigned shard, unsigned nshards)
{
	return nshards <= 1 || crash_mix64(first) % nshards == shard;
}
