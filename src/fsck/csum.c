/* csum.c — ext4 metadata_csum checksums and the htree name hash, over raw on-disk
 * bytes. The conventions (seeds, which bytes are zeroed) are the kernel's. */
#include <string.h>

#include "blackout/endian.h"
#include "blackout/util.h"
#include "fs/format.h"
#include "fsck/fsck_int.h"

uint32_t fsck_csum_seed(const uint8_t *sb)
{
	if (sb_has_incompat(sb, EXT4_FEATURE_INCOMPAT_CSUM_SEED))
		return sb_get32(sb, SB_CHECKSUM_SEED);
	return crc32c_raw(~0u, sb + SB_UUID, 16);
}

uint32_t fsck_sb_csum(const uint8_t *sb)
{
	return crc32c_raw(~0u, sb, SB_CHECKSUM);
}

uint16_t fsck_gd_csum(uint32_t seed, uint32_t group, const uint8_t *gd, uint32_t desc_size)
{
	uint8_t le[4];
	static const uint8_t zero[2];
	put_le32(le, group);
	uint32_t c = crc32c_raw(seed, le, 4);
	c = crc32c_raw(c, gd, GD_CHECKSUM);
	c = crc32c_raw(c, zero, 2);
	if (desc_size > GD_CHECKSUM + 2)
		c = crc32c_raw(c, gd + GD_CHECKSUM + 2, desc_size - GD_CHECKSUM - 2);
	return (uint16_t)c;
}

uint32_t fsck_bitmap_csum(uint32_t seed, const uint8_t *bm, uint32_t len)
{
	return crc32c_raw(seed, bm, len);
}

static uint32_t inode_seed(uint32_t seed, uint32_t ino, const uint8_t *in)
{
	uint8_t le[4];
	put_le32(le, ino);
	uint32_t c = crc32c_raw(seed, le, 4);
	return crc32c_raw(c, in + I_GENERATION, 4);
}

static bool inode_has_hi(const uint8_t *in, uint32_t isz)
{
	return isz > EXT2_GOOD_OLD_INODE_SIZE &&
	       get_le16(in + I_EXTRA_ISIZE) >= EXT4_INODE_CSUM_HI_EXTRA_END;
}

uint32_t fsck_inode_csum(uint32_t seed, uint32_t ino, const uint8_t *in, uint32_t isz)
{
	static const uint8_t zero[2];
	uint32_t c = inode_seed(seed, ino, in);
	c = crc32c_raw(c, in, I_CHECKSUM_LO);
	c = crc32c_raw(c, zero, 2);
	c = crc32c_raw(c, in + I_CHECKSUM_LO + 2, EXT2_GOOD_OLD_INODE_SIZE - I_CHECKSUM_LO - 2);
	if (isz > EXT2_GOOD_OLD_INODE_SIZE) {
		c = crc32c_raw(c, in + EXT2_GOOD_OLD_INODE_SIZE,
		               I_CHECKSUM_HI - EXT2_GOOD_OLD_INODE_SIZE);
		if (inode_has_hi(in, isz)) {
			c = crc32c_raw(c, zero, 2);
			c = crc32c_raw(c, in + I_CHECKSUM_HI + 2, isz - I_CHECKSUM_HI - 2);
		} else {
			c = crc32c_raw(c, in + I_CHECKSUM_HI, isz - I_CHECKSUM_HI);
		}
	}
	return c;
}

bool fsck_inode_csum_ok(uint32_t seed, uint32_t ino, const uint8_t *in, uint32_t isz)
{
	uint32_t c = fsck_inode_csum(seed, ino, in, isz);
	uint32_t have = get_le16(in + I_CHECKSUM_LO);
	if (inode_has_hi(in, isz))
		have |= (uint32_t)get_le16(in + I_CHECKSUM_HI) << 16;
	else
		c &= 0xFFFF;
	if (c == have)
		return true;
	for (uint32_t i = 0; i < isz; i++) /* an all-zero inode is valid */
		if (in[i])
			return false;
	return true;
}

void fsck_inode_csum_set(uint32_t seed, uint32_t ino, uint8_t *in, uint32_t isz)
{
	uint32_t c = fsck_inode_csum(seed, ino, in, isz);
	put_le16(in + I_CHECKSUM_LO, (uint16_t)c);
	if (inode_has_hi(in, isz))
		put_le16(in + I_CHECKSUM_HI, (uint16_t)(c >> 16));
}

uint32_t fsck_dirent_csum(uint32_t seed, uint32_t ino, uint32_t gen, const uint8_t *blk,
                          uint32_t bs)
{
	uint8_t le[8];
	put_le32(le, ino);
	put_le32(le + 4, gen);
	uint32_t c = crc32c_raw(seed, le, 8);
	return crc32c_raw(c, blk, bs - DIRENT_TAIL_SIZE);
}

bool fsck_dx_csum(uint32_t seed, uint32_t ino, uint32_t gen, const uint8_t *blk, uint32_t bs,
                  uint32_t count_off, uint32_t *out)
{
	uint32_t limit = get_le16(blk + count_off + DX_LIMIT);
	uint32_t count = get_le16(blk + count_off + DX_COUNT);
	uint64_t tail = count_off + (uint64_t)limit * DX_ENTRY_SIZE;
	if (count > limit || tail + DX_TAIL_SIZE > bs)
		return false;
	static const uint8_t zero[4];
	uint8_t le[8];
	put_le32(le, ino);
	put_le32(le + 4, gen);
	uint32_t c = crc32c_raw(seed, le, 8);
	c = crc32c_raw(c, blk, count_off + count * DX_ENTRY_SIZE);
	c = crc32c_raw(c, blk + tail, 4);
	c = crc32c_raw(c, zero, 4);
	*out = c;
	return true;
}

void fsck_dx_csum_set(uint32_t seed, uint32_t ino, uint32_t gen, uint8_t *blk, uint32_t bs,
                      uint32_t count_off)
{
	uint32_t c;
	if (!fsck_dx_csum(seed, ino, gen, blk, bs, count_off, &c))
		return;
	uint32_t limit = get_le16(blk + count_off + DX_LIMIT);
	put_le32(blk + count_off + limit * DX_ENTRY_SIZE + DX_TAIL_CHECKSUM, c);
}

uint32_t fsck_xattr_csum(uint32_t seed, uint64_t blk, const uint8_t *b, uint32_t bs)
{
	static const uint8_t zero[4];
	uint8_t le[8];
	put_le64(le, blk);
	uint32_t c = crc32c_raw(seed, le, 8);
	c = crc32c_raw(c, b, XH_CHECKSUM);
	c = crc32c_raw(c, zero, 4);
	return crc32c_raw(c, b + XH_CHECKSUM + 4, bs - XH_CHECKSUM - 4);
}

/* ---- htree hash ------------------------------------------------------------ */
static void tea_transform(uint32_t buf[4], const uint32_t in[4])
{
	uint32_t sum = 0, b0 = buf[0], b1 = buf[1];
	for (int n = 0; n < 16; n++) {
		sum += 0x9E3779B9u;
		b0 += ((b1 << 4) + in[0]) ^ (b1 + sum) ^ ((b1 >> 5) + in[1]);
		b1 += ((b0 << 4) + in[2]) ^ (b0 + sum) ^ ((b0 >> 5) + in[3]);
	}
	buf[0] += b0;
	buf[1] += b1;
}

static inline uint32_t rol(uint32_t x, int s)
{
	return (x << s) | (x >> (32 - s));
}
#define MD4F(x, y, z)            ((z) ^ ((x) & ((y) ^ (z))))
#define MD4G(x, y, z)            (((x) & (y)) + (((x) ^ (y)) & (z)))
#define MD4H(x, y, z)            ((x) ^ (y) ^ (z))
#define RND(f, a, b, c, d, x, s) (a = rol(a + f(b, c, d) + (x), s))

static void half_md4(uint32_t buf[4], const uint32_t in[8])
{
	const uint32_t k2 = 013240474631u, k3 = 015666365641u;
	uint32_t a = buf[0], b = buf[1], c = buf[2], d = buf[3];
	RND(MD4F, a, b, c, d, in[0], 3);
	RND(MD4F, d, a, b, c, in[1], 7);
	RND(MD4F, c, d, a, b, in[2], 11);
	RND(MD4F, b, c, d, a, in[3], 19);
	RND(MD4F, a, b, c, d, in[4], 3);
	RND(MD4F, d, a, b, c, in[5], 7);
	RND(MD4F, c, d, a, b, in[6], 11);
	RND(MD4F, b, c, d, a, in[7], 19);
	RND(MD4G, a, b, c, d, in[1] + k2, 3);
	RND(MD4G, d, a, b, c, in[3] + k2, 5);
	RND(MD4G, c, d, a, b, in[5] + k2, 9);
	RND(MD4G, b, c, d, a, in[7] + k2, 13);
	RND(MD4G, a, b, c, d, in[0] + k2, 3);
	RND(MD4G, d, a, b, c, in[2] + k2, 5);
	RND(MD4G, c, d, a, b, in[4] + k2, 9);
	RND(MD4G, b, c, d, a, in[6] + k2, 13);
	RND(MD4H, a, b, c, d, in[3] + k3, 3);
	RND(MD4H, d, a, b, c, in[7] + k3, 9);
	RND(MD4H, c, d, a, b, in[2] + k3, 11);
	RND(MD4H, b, c, d, a, in[6] + k3, 15);
	RND(MD4H, a, b, c, d, in[1] + k3, 3);
	RND(MD4H, d, a, b, c, in[5] + k3, 9);
	RND(MD4H, c, d, a, b, in[0] + k3, 11);
	RND(MD4H, b, c, d, a, in[4] + k3, 15);
	buf[0] += a;
	buf[1] += b;
	buf[2] += c;
	buf[3] += d;
}

static int ch(const uint8_t *p, int i, bool uns)
{
	return uns ? (int)p[i] : (int)(signed char)p[i];
}

static void str2hashbuf(const uint8_t *msg, int len, uint32_t *buf, int num, bool uns)
{
	uint32_t pad = (uint32_t)len | ((uint32_t)len << 8);
	pad |= pad << 16;
	uint32_t val = pad;
	if (len > num * 4)
		len = num * 4;
	for (int i = 0; i < len; i++) {
		val = (uint32_t)ch(msg, i, uns) + (val << 8);
		if (i % 4 == 3) {
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

uint32_t fsck_dirhash(int version, const uint8_t *name, int len, const uint32_t seed[4])
{
	uint32_t buf[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}, in[8], hash;
	if (seed && (seed[0] | seed[1] | seed[2] | seed[3]))
		memcpy(buf, seed, sizeof(buf));
	bool uns = version >= EXT2_HASH_LEGACY_UNSIGNED;
	switch (version) {
	case EXT2_HASH_LEGACY:
	case EXT2_HASH_LEGACY_UNSIGNED: {
		uint32_t h0 = 0x12a3fe2d, h1 = 0x37abe8f9;
		for (int i = 0; i < len; i++) {
			uint32_t h = h1 + (h0 ^ (uint32_t)(ch(name, i, uns) * 7152373));
			if (h & 0x80000000u)
				h -= 0x7fffffff;
			h1 = h0;
			h0 = h;
		}
		hash = h0 << 1;
		break;
	}
	case EXT2_HASH_HALF_MD4:
	case EXT2_HASH_HALF_MD4_UNSIGNED:
		for (const uint8_t *p = name; len > 0; len -= 32, p += 32) {
			str2hashbuf(p, len, in, 8, uns);
			half_md4(buf, in);
		}
		hash = buf[1];
		break;
	case EXT2_HASH_TEA:
	case EXT2_HASH_TEA_UNSIGNED:
		for (const uint8_t *p = name; len > 0; len -= 16, p += 16) {
			str2hashbuf(p, len, in, 4, uns);
			tea_transform(buf, in);
		}
		hash = buf[0];
		break;
	default: return 0;
	}
	return hash & ~1u;
}
