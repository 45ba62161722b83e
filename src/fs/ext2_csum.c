// SPDX-License-Identifier: GPL-2.0-or-later
/* ext2_csum.c — ext4's metadata_csum checksums over raw on-disk bytes (superblock,
 * group descriptors, bitmaps, inodes, and the per-inode seed of directory blocks),
 * with the kernel's seeds and zeroed fields: pure codecs of ext2_format.h. */
#include "blackout/ext2_format.h"
#include "blackout/util.h"

uint32_t ext2_csum_seed(const uint8_t *sb)
{
	if (sb_has_incompat(sb, EXT4_FEATURE_INCOMPAT_CSUM_SEED))
		return sb_get32(sb, SB_CHECKSUM_SEED);
	return crc32c_raw(~0u, sb + SB_UUID, 16);
}

uint32_t ext2_sb_csum(const uint8_t *sb)
{
	return crc32c_raw(~0u, sb, SB_CHECKSUM);
}

uint16_t ext2_gd_csum(uint32_t seed, uint32_t group, const uint8_t *gd, uint32_t desc_size)
{
	static const uint8_t zero[2];
	uint8_t le[4];
	put_le32(le, group);
	uint32_t c = crc32c_raw(seed, le, 4);
	c = crc32c_raw(c, gd, GD_CHECKSUM);
	c = crc32c_raw(c, zero, 2);
	if (desc_size > GD_CHECKSUM + 2)
		c = crc32c_raw(c, gd + GD_CHECKSUM + 2, desc_size - GD_CHECKSUM - 2);
	return (uint16_t)c;
}

uint32_t ext2_bitmap_csum(uint32_t seed, const uint8_t *bm, uint32_t len)
{
	return crc32c_raw(seed, bm, len);
}

uint32_t ext2_inode_csum_seed(uint32_t seed, uint32_t ino, uint32_t gen)
{
	uint8_t le[4];
	put_le32(le, ino);
	uint32_t c = crc32c_raw(seed, le, 4);
	put_le32(le, gen);
	return crc32c_raw(c, le, 4);
}

uint32_t ext2_inode_csum(uint32_t seed, uint32_t ino, const uint8_t *raw, uint32_t isz)
{
	static const uint8_t zero[2];
	uint32_t c = ext2_inode_csum_seed(seed, ino, get_le32(raw + I_GENERATION));
	c = crc32c_raw(c, raw, I_CHECKSUM_LO);
	c = crc32c_raw(c, zero, 2);
	c = crc32c_raw(c, raw + I_CHECKSUM_LO + 2, EXT2_GOOD_OLD_INODE_SIZE - I_CHECKSUM_LO - 2);
	if (isz > EXT2_GOOD_OLD_INODE_SIZE) {
		uint32_t off = I_CHECKSUM_HI;
		c = crc32c_raw(c, raw + EXT2_GOOD_OLD_INODE_SIZE, off - EXT2_GOOD_OLD_INODE_SIZE);
		if (get_le16(raw + I_EXTRA_ISIZE) >= EXT4_INODE_CSUM_HI_EXTRA_END) {
			c = crc32c_raw(c, zero, 2);
			off += 2;
		}
		c = crc32c_raw(c, raw + off, isz - off);
	}
	return c;
}

void ext2_inode_set_csum(uint32_t seed, uint32_t ino, uint8_t *raw, uint32_t isz)
{
	uint32_t c = ext2_inode_csum(seed, ino, raw, isz);
	put_le16(raw + I_CHECKSUM_LO, (uint16_t)c);
	if (isz > EXT2_GOOD_OLD_INODE_SIZE &&
	    get_le16(raw + I_EXTRA_ISIZE) >= EXT4_INODE_CSUM_HI_EXTRA_END)
		put_le16(raw + I_CHECKSUM_HI, (uint16_t)(c >> 16));
}
