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
		if (!ok[c])
			for (size_t b = 0, at = c * obs->chunk; b < chunk_len(obs, c); b++)
				out[at + b] = foreign_byte(n, at + b);
	free(ver);
	free(ok);
	return out;
}
