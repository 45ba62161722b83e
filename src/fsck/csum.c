// SPDX-License-Identifier: GPL-2.0-or-later
/* csum.c — ext4 metadata_csum checksums and the htree name hash, over raw on-disk
 * bytes. The conventions (seeds, which bytes are zeroed) are the kernel's. */
#include <string.h>

#include "blackout/endian.h"
#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_int.h"

static bool inode_has_hi(const uint8_t *in, uint32_t isz)
{
	return isz > EXT2_GOOD_OLD_INODE_SIZE &&
	       get_le16(in + I_EXTRA_ISIZE) >= EXT4_INODE_CSUM_HI_EXTRA_END;
}

bool fsck_inode_csum_ok(uint32_t seed, uint32_t ino, const uint8_t *in, uint32_t isz)
{
	uint32_t c = ext2_inode_csum(seed, ino, in, isz);
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

/* The directory hash is the filesystem's own (one implementation to agree with the
 * kernel's): ext2_dx_hash in src/fs/ext2_hash.c. */
uint32_t fsck_dirhash(int version, const uint8_t *name, int len, const uint32_t seed[4])
{
	uint32_t hash = 0, minor;
	if (len < 0 || ext2_dx_hash(version, seed, (const char *)name, (size_t)len, &hash, &minor))
		return 0;
	return hash;
}
