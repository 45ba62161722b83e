// SPDX-License-Identifier: GPL-2.0-or-later
/* util.c — checksums (through ISA-L), the seeded RNG, hashing, size parsing. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <isa-l/crc.h>

#include "blackout/util.h"

uint32_t crc32c_raw(uint32_t crc, const void *buf, size_t len)
{
	/* ISA-L's crc32_iscsi neither pre- nor post-inverts: exactly the kernel's
	 * crc32c(seed, ...) convention. Its length is an int: feed big buffers in
	 * pieces. */
	const unsigned char *p = buf;
	while (len > 0) {
		int n = len > (1u << 30) ? (1 << 30) : (int)len;
		crc = crc32_iscsi((unsigned char *)p, n, crc);
		p += n;
		len -= (size_t)n;
	}
	return crc;
}

uint32_t crc32c(const void *buf, size_t len)
{
	return ~crc32c_raw(~0u, buf, len);
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void bo_rng_seed(struct bo_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t bo_rng_next(struct bo_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t bo_rng_below(struct bo_rng *r, uint64_t n)
{
	if (n <= 1)
		return 0;
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t v;
	do
		v = bo_rng_next(r);
	while (v >= limit);
	return v % n;
}

void bo_sort_u64(uint64_t *v, size_t n, uint64_t *tmp)
{
	if (n < 2)
		return;
	uint64_t all_or = 0, all_and = ~0ull;
	for (size_t i = 0; i < n; i++) {
		all_or |= v[i];
		all_and &= v[i];
	}
	uint64_t *src = v, *dst = tmp;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		if (!((all_or ^ all_and) >> shift & 0xff))
			continue; /* every key has the same byte here */
		size_t pos[256] = {0};
		for (size_t i = 0; i < n; i++)
			pos[src[i] >> shift & 0xff]++;
		for (size_t b = 0, sum = 0; b < 256; b++) {
			size_t c = pos[b];
			pos[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[pos[src[i] >> shift & 0xff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
}

uint64_t bo_hash64(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	/* FNV-1a over 8-byte words where possible, finished with a mix: fast enough
	 * for hashing whole images, and stable across machines. */
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	while (len--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

int bo_parse_size(const char *s, uint64_t *out, struct bo_err *err)
{
	const char *p = s;
	uint64_t v = 0;
	if (!s || !isdigit((unsigned char)*p))
		return bo_errf(err, -EINVAL, "'%s' is not a size (expected e.g. 4096, 64k, 32M)",
		               s ? s : "");
	while (isdigit((unsigned char)*p)) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return bo_errf(err, -EINVAL, "size '%s' is too large", s);
		v = v * 10 + d;
		p++;
	}
	unsigned shift = 0;
	switch (tolower((unsigned char)*p)) {
	case 'k':
		shift = 10;
		p++;
		break;
	case 'm':
		shift = 20;
		p++;
		break;
	case 'g':
		shift = 30;
		p++;
		break;
	case 't':
		shift = 40;
		p++;
		break;
	default: break;
	}
	if (shift && tolower((unsigned char)*p) == 'i')
		p++;
	if (tolower((unsigned char)*p) == 'b')
		p++;
	if (*p)
		return bo_errf(err, -EINVAL,
		               "'%s' is not a size: unexpected '%c' (units: k, M, G, T)", s, *p);
	if (shift && v > (UINT64_MAX >> shift))
		return bo_errf(err, -EINVAL, "size '%s' is too large", s);
	*out = v << shift;
	return 0;
}

const char *bo_format_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "kMGT";
	int u = -1;
	while (v && (v & 1023) == 0 && u < 3) {
		v >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, units[u]);
	return buf;
}

double bo_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bo_read_file(const char *path, size_t max, char **buf, size_t *len, struct bo_err *err)
{
	*buf = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		return bo_errf(err, -e, "%s: %s", path, strerror(e));
	}
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	int rc = b ? 0 : -ENOMEM;
	while (rc == 0) {
		n += fread(b + n, 1, cap - n, f);
		if (n < cap)
			break;
		if (cap > max) {
			rc = bo_errf(err, -EFBIG, "%s: larger than %zu bytes", path, max);
			break;
		}
		char *nb = realloc(b, cap * 2);
		if (!nb)
			rc = -ENOMEM;
		else
			b = nb, cap *= 2;
	}
	if (rc == 0 && ferror(f))
		rc = bo_errf(err, -EIO, "%s: read error", path);
	else if (rc == -ENOMEM)
		bo_errf(err, rc, "%s: out of memory", path);
	fclose(f);
	if (rc) {
		free(b);
		return rc;
	}
	*buf = b;
	*len = n;
	return 0;
}

int bo_parse_file(const char *path, size_t max, bo_parse_fn parse, void *out, struct bo_err *err)
{
	char *buf;
	size_t n;
	int rc = bo_read_file(path, max, &buf, &n, err);
	if (rc)
		return rc;
	struct bo_err perr = {{0}};
	rc = parse(buf, n, out, &perr);
	free(buf);
	if (rc)
		return bo_errf(err, rc, "%s: %s", path, perr.msg);
	return 0;
}
