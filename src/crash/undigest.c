// SPDX-License-Identifier: GPL-2.0-or-later
/* undigest.c — an observed file given as per-chunk MD5s (a guest kernel's observer
 * ships digests, not bytes) turned back into the bytes the oracle's byte judge reads,
 * as one node of the model would have them (docs/architecture.md, "Digests"). */
#include <stdlib.h>
#include <string.h>

#include "crash/crash_int.h"
#include "crash/oracle_int.h"

static size_t chunk_len(const struct crash_obs_node *obs, size_t c)
{
	uint64_t off = (uint64_t)c * obs->chunk;
	return obs->size - off < obs->chunk ? (size_t)(obs->size - off) : obs->chunk;
}

static bool digest_is(const uint8_t *buf, size_t len, const uint8_t want[16])
{
	uint8_t d[16];
	crash_md5(buf, len, d);
	return memcmp(d, want, 16) == 0;
}

/* Applies one change of the file to ver (obs->size bytes) and returns the range of
 * chunks it touched. */
static void apply_ev(const struct ev *e, uint8_t *ver, uint64_t size, uint32_t chunk, size_t *c0,
                     size_t *c1)
{
	uint64_t from = e->off, to = e->trunc ? size : e->off + e->len;
	if (to > size)
		to = size;
	*c0 = *c1 = 0;
	if (from >= to)
		return;
	if (e->trunc)
		memset(ver + from, 0, to - from);
	else
		crash_pattern_fill(e->tag, from, ver + from, to - from);
	*c0 = from / chunk;
	*c1 = (to + chunk - 1) / chunk;
}

/* A byte at off that no write to n put there, and not zero. */
static uint8_t foreign_byte(const struct node *n, uint64_t off)
{
	for (unsigned v = 1; v < 256; v++) {
		bool used = false;
		for (size_t i = 0; i < n->nev && !used; i++) {
			const struct ev *e = &n->ev[i];
			used = !e->trunc && off >= e->off && off - e->off < e->len &&
			       crash_pattern_byte(e->tag, off) == v;
		}
		if (!used)
			return (uint8_t)v;
	}
	return 1; /* 255 writes over one byte each with another value: cannot happen */
}

/* The device persists a write sector by sector (a torn multi-sector write, a cache
 * keeping some of a block's sectors), so a chunk may hold, sector by sector, different
 * versions of the file: each sector old or new is not data from elsewhere. Tries every
 * such mix of the chunk's versions while there are at most MIX_MAX; 1 with the mix in
 * out when one has the observed digest. */
#define MIX_SECTOR 512u
#define MIX_MAX    65536u
static int chunk_mix(const struct node *n, const struct crash_obs_node *obs, size_t c, uint8_t *out)
{
	size_t at = c * obs->chunk, len = chunk_len(obs, c);
	size_t nsec = (len + MIX_SECTOR - 1) / MIX_SECTOR, nv = 1, cap = 8;
	uint8_t *ver = calloc(1, obs->size), *vs = calloc(cap, len), *mix = malloc(len);
	size_t *opt = NULL, *nopt = calloc(nsec, sizeof(*nopt)),
	       *pick = calloc(nsec, sizeof(*pick));
	int found = 0;
	if (!ver || !vs || !mix || !nopt || !pick)
		goto out;
	/* the chunk's versions: zeros, then after each change that touched it */
	for (size_t i = 0; i < n->nev; i++) {
		size_t c0, c1;
		apply_ev(&n->ev[i], ver, obs->size, obs->chunk, &c0, &c1);
		if (c < c0 || c >= c1 || !memcmp(vs + (nv - 1) * len, ver + at, len))
			continue;
		if (nv == cap) {
			uint8_t *g = realloc(vs, 2 * cap * len);
			if (!g)
				goto out;
			vs = g, cap *= 2;
		}
		memcpy(vs + nv++ * len, ver + at, len);
	}
	/* per sector, the versions that differ there; the product bounds the search */
	if (!(opt = calloc(nsec * nv, sizeof(*opt))))
		goto out;
	uint64_t combos = 1;
	for (size_t k = 0; k < nsec; k++) {
		size_t o = k * MIX_SECTOR, l = len - o < MIX_SECTOR ? len - o : MIX_SECTOR;
		for (size_t v = 0; v < nv; v++) {
			bool dup = false;
			for (size_t j = 0; j < nopt[k] && !dup; j++)
				dup = !memcmp(vs + opt[k * nv + j] * len + o, vs + v * len + o, l);
			if (!dup)
				opt[k * nv + nopt[k]++] = v;
		}
		combos *= nopt[k];
		if (combos > MIX_MAX)
			goto out;
	}
	for (uint64_t t = 0; t < combos && !found; t++) {
		for (size_t k = 0; k < nsec; k++) {
			size_t o = k * MIX_SECTOR, l = len - o < MIX_SECTOR ? len - o : MIX_SECTOR;
			memcpy(mix + o, vs + opt[k * nv + pick[k]] * len + o, l);
		}
		if (digest_is(mix, len, obs->md5[c])) {
			memcpy(out + at, mix, len);
			found = 1;
		}
		for (size_t k = 0; k < nsec && ++pick[k] == nopt[k]; k++) /* odometer */
			pick[k] = 0;
	}
out:
	free(ver), free(vs), free(mix), free(opt), free(nopt), free(pick);
	return found;
}

uint8_t *crash_oracle_undigest(const struct node *n, const struct crash_obs_node *obs)
{
	uint64_t size = obs->size;
	size_t nch = obs->chunk ? (size_t)((size + obs->chunk - 1) / obs->chunk) : 0;
	uint8_t *out = calloc(1, size ? size : 1), *ver = calloc(1, size ? size : 1);
	bool *ok = calloc(nch ? nch : 1, sizeof(*ok));
	if (!out || !ver || !ok) {
		free(out);
		free(ver);
		free(ok);
		return NULL;
	}
	/* zeros: never written, or allocated and not yet written */
	for (size_t c = 0; c < nch; c++)
		ok[c] = digest_is(ver + (size_t)c * obs->chunk, chunk_len(obs, c), obs->md5[c]);
	/* the file after each of its changes, in order */
	for (size_t i = 0; i < n->nev; i++) {
		size_t c0, c1;
		apply_ev(&n->ev[i], ver, size, obs->chunk, &c0, &c1);
		for (size_t c = c0; c < c1 && c < nch; c++) {
			size_t at = c * obs->chunk, len = chunk_len(obs, c);
			if (!ok[c] && digest_is(ver + at, len, obs->md5[c])) {
				memcpy(out + at, ver + at, len);
				ok[c] = true;
			}
		}
	}
	for (size_t c = 0; c < nch; c++)
		if (!ok[c] && !chunk_mix(n, obs, c, out))
			for (size_t b = 0, at = c * obs->chunk; b < chunk_len(obs, c); b++)
				out[at + b] = foreign_byte(n, at + b);
	free(ver);
	free(ok);
	return out;
}
