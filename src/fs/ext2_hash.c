// SPDX-License-Identifier: GPL-2.0-or-later
/* ext2_hash.c — ext4's directory name hashes (legacy, half_md4, tea; signed and
 * unsigned), as fs/ext4/hash.c computes them: a pure codec of ext2_format.h, used by
 * the htree code of fs/ and by fsck. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "blackout/ext2_format.h"

static uint32_t rol32(uint32_t x, int s)
{
	return x << s | x >> (32 - s);
}

static void tea_transform(uint32_t buf[4], const uint32_t in[4])
{
	uint32_t sum = 0, b0 = buf[0], b1 = buf[1];
	uint32_t a = in[0], b = in[1], c = in[2], d = in[3];
	for (int n = 0; n < 16; n++) {
		sum += 0x9E3779B9u;
		b0 += ((b1 << 4) + a) ^ (b1 + sum) ^ ((b1 >> 5) + b);
		b1 += ((b0 << 4) + c) ^ (b0 + sum) ^ ((b0 >> 5) + d);
	}
	buf[0] += b0;
	buf[1] += b1;
}

#define F(x, y, z)                 ((z) ^ ((x) & ((y) ^ (z))))
#define G(x, y, z)                 (((x) & (y)) + (((x) ^ (y)) & (z)))
#define H(x, y, z)                 ((x) ^ (y) ^ (z))
#define ROUND(f, a, b, c, d, x, s) (a += f(b, c, d) + (x), a = rol32(a, s))
#define K2                         013240474631u
#define K3                         015666365641u

static void half_md4_transform(uint32_t buf[4], const uint32_t in[8])
{
	uint32_t a = buf[0], b = buf[1], c = buf[2], d = buf[3];
	ROUND(F, a, b, c, d, in[0], 3);
	ROUND(F, d, a, b, c, in[1], 7);
	ROUND(F, c, d, a, b, in[2], 11);
	ROUND(F, b, c, d, a, in[3], 19);
	ROUND(F, a, b, c, d, in[4], 3);
	ROUND(F, d, a, b, c, in[5], 7);
	ROUND(F, c, d, a, b, in[6], 11);
	ROUND(F, b, c, d, a, in[7], 19);
	ROUND(G, a, b, c, d, in[1] + K2, 3);
	ROUND(G, d, a, b, c, in[3] + K2, 5);
	ROUND(G, c, d, a, b, in[5] + K2, 9);
	ROUND(G, b, c, d, a, in[7] + K2, 13);
	ROUND(G, a, b, c, d, in[0] + K2, 3);
	ROUND(G, d, a, b, c, in[2] + K2, 5);
	ROUND(G, c, d, a, b, in[4] + K2, 9);
	ROUND(G, b, c, d, a, in[6] + K2, 13);
	ROUND(H, a, b, c, d, in[3] + K3, 3);
	ROUND(H, d, a, b, c, in[7] + K3, 9);
	ROUND(H, c, d, a, b, in[2] + K3, 11);
	ROUND(H, b, c, d, a, in[6] + K3, 15);
	ROUND(H, a, b, c, d, in[1] + K3, 3);
	ROUND(H, d, a, b, c, in[5] + K3, 9);
	ROUND(H, c, d, a, b, in[0] + K3, 11);
	ROUND(H, b, c, d, a, in[4] + K3, 15);
	buf[0] += a;
	buf[1] += b;
	buf[2] += c;
	buf[3] += d;
}

static uint32_t legacy_hash(const char *name, size_t len, bool uns)
{
	uint32_t hash, hash0 = 0x12a3fe2d, hash1 = 0x37abe8f9;
	for (size_t i = 0; i < len; i++) {
		int c = uns ? (int)(unsigned char)name[i] : (int)(signed char)name[i];
		hash = hash1 + (hash0 ^ (uint32_t)(c * 7152373));
		if (hash & 0x80000000u)
			hash -= 0x7fffffff;
		hash1 = hash0;
		hash0 = hash;
	}
	return hash0 << 1;
}

static void str2hashbuf(const char *msg, size_t len, uint32_t *buf, int num, bool uns)
{
	uint32_t pad = (uint32_t)len | ((uint32_t)len << 8);
	pad |= pad << 16;
	uint32_t val = pad;
	if (len > (size_t)num * 4)
		len = (size_t)num * 4;
	for (size_t i = 0; i < len; i++) {
		int c = uns ? (int)(unsigned char)msg[i] : (int)(signed char)msg[i];
		val = (uint32_t)c + (val << 8);
		if ((i % 4) == 3) {
			*buf++ = val;
			val = pad;
			num--;
		}
	}
	if (--num >= 0)
		*buf++ = val;
	while (--num >= 0)
		*buf++ = pad;
}

int ext2_dx_hash(int version, const uint32_t seed[4], const char *name, size_t len,
                 uint32_t *hash_out, uint32_t *minor_out)
{
	uint32_t buf[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
	uint32_t in[8], hash, minor = 0;
	if (seed && (seed[0] | seed[1] | seed[2] | seed[3]))
		memcpy(buf, seed, sizeof(buf));
	bool uns = version >= EXT2_HASH_LEGACY_UNSIGNED;
	switch (version) {
	case EXT2_HASH_LEGACY:
	case EXT2_HASH_LEGACY_UNSIGNED: hash = legacy_hash(name, len, uns); break;
	case EXT2_HASH_HALF_MD4:
	case EXT2_HASH_HALF_MD4_UNSIGNED:
		for (const char *p = name; (ptrdiff_t)len > 0;
		     len = len > 32 ? len - 32 : 0, p += 32) {
			str2hashbuf(p, len, in, 8, uns);
			half_md4_transform(buf, in);
			if (len <= 32)
				break;
		}
		minor = buf[2];
		hash = buf[1];
		break;
	case EXT2_HASH_TEA:
	case EXT2_HASH_TEA_UNSIGNED:
		for (const char *p = name; (ptrdiff_t)len > 0; p += 16) {
			str2hashbuf(p, len, in, 4, uns);
			tea_transform(buf, in);
			if (len <= 16)
				break;
			len -= 16;
		}
		hash = buf[0];
		minor = buf[1];
		break;
	default: return -EINVAL;
	}
	hash &= ~1u;
	if (hash == (0x7fffffffu << 1))
		hash = (0x7fffffffu - 1) << 1;
	*hash_out = hash;
	if (minor_out)
		*minor_out = minor;
	return 0;
}
