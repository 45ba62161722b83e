// SPDX-License-Identifier: GPL-2.0-or-later
/* md5.c — MD5 (RFC 1321) of a buffer: the per-chunk digest a guest kernel's observer
 * (busybox md5sum) reports, so the judge can compute the digest each allowed version
 * of a chunk would have. Not for security, only for naming content. */
#include <math.h>
#include <string.h>

#include "crash/crash_int.h"

static uint32_t rotl(uint32_t x, unsigned c)
{
	return (x << c) | (x >> (32 - c));
}

static uint32_t get32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void block(uint32_t h[4], const uint8_t *blk, const uint32_t k[64])
{
	static const unsigned s[4][4] = {
	    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
	uint32_t m[16];
	for (int i = 0; i < 16; i++)
		m[i] = get32le(blk + 4 * i);
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
	for (unsigned i = 0; i < 64; i++) {
		uint32_t f;
		unsigned g;
		switch (i / 16) {
		case 0: f = (b & c) | (~b & d), g = i; break;
		case 1: f = (d & b) | (~d & c), g = (5 * i + 1) % 16; break;
		case 2: f = b ^ c ^ d, g = (3 * i + 5) % 16; break;
		default: f = c ^ (b | ~d), g = (7 * i) % 16; break;
		}
		uint32_t t = d;
		d = c;
		c = b;
		b = b + rotl(a + f + k[i] + m[g], s[i / 16][i % 4]);
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

void crash_md5(const void *buf, size_t len, uint8_t out[16])
{
	/* the constants are the integer parts of 2^32 * |sin(i + 1)|; computed per call
	 * (cheap beside a chunk) so no shared state needs a lock */
	uint32_t k[64];
	for (int i = 0; i < 64; i++)
		k[i] = (uint32_t)(fabs(sin((double)(i + 1))) * 4294967296.0);
	uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
	const uint8_t *p = buf;
	size_t n = len;
	for (; n >= 64; n -= 64, p += 64)
		block(h, p, k);
	uint8_t tail[128] = {0};
	memcpy(tail, p, n);
	tail[n] = 0x80;
	size_t tl = n + 1 + 8 <= 64 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;
	for (int i = 0; i < 8; i++)
		tail[tl - 8 + i] = (uint8_t)(bits >> (8 * i));
	block(h, tail, k);
	if (tl == 128)
		block(h, tail + 64, k);
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 4; b++)
			out[4 * i + b] = (uint8_t)(h[i] >> (8 * b));
}
