/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fsck_int.h — what the checker's files share: metadata_csum checksums and the htree
 * name hash, computed from raw on-disk bytes (ext2_format.h offsets). Not a public API. */
#ifndef BLACKOUT_FSCK_INT_H
#define BLACKOUT_FSCK_INT_H

#include <stdbool.h>
#include <stdint.h>

/* The superblock, descriptor, bitmap and inode checksums themselves are the format's
 * codecs (ext2_csum_seed ... ext2_inode_set_csum in blackout/ext2_format.h), shared
 * with the filesystem. Whether an inode's stored checksum (lo, and hi where the inode
 * has room for it) matches: */
bool fsck_inode_csum_ok(uint32_t seed, uint32_t ino, const uint8_t *in, uint32_t isz);
/* Leaf block: checksum over the block up to its 12-byte tail at bs - 12. */
uint32_t fsck_dirent_csum(uint32_t seed, uint32_t ino, uint32_t gen, const uint8_t *blk,
                          uint32_t bs);
/* Index block: count_off is the offset of the limit/count header (0x20 root, 8 node). */
bool fsck_dx_csum(uint32_t seed, uint32_t ino, uint32_t gen, const uint8_t *blk, uint32_t bs,
                  uint32_t count_off, uint32_t *out);
void fsck_dx_csum_set(uint32_t seed, uint32_t ino, uint32_t gen, uint8_t *blk, uint32_t bs,
                      uint32_t count_off);
uint32_t fsck_xattr_csum(uint32_t seed, uint64_t blk, const uint8_t *b, uint32_t bs);

/* ext2 directory hash (legacy, half_md4, tea; version + 3 = unsigned chars). */
uint32_t fsck_dirhash(int version, const uint8_t *name, int len, const uint32_t seed[4]);

#endif
