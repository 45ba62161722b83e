/* fsck_int.h — what the checker's files share: metadata_csum checksums and the htree
 * name hash, computed from raw on-disk bytes (format.h offsets). Not a public API. */
#ifndef BLACKOUT_FSCK_INT_H
#define BLACKOUT_FSCK_INT_H

#include <stdbool.h>
#include <stdint.h>

/* The checksum seed of a metadata_csum filesystem (csum_seed feature or uuid). */
uint32_t fsck_csum_seed(const uint8_t *sb);
uint32_t fsck_sb_csum(const uint8_t *sb);
uint16_t fsck_gd_csum(uint32_t seed, uint32_t group, const uint8_t *gd, uint32_t desc_size);
/* Over the first `len` bytes of a bitmap (clusters or inodes per group / 8). */
uint32_t fsck_bitmap_csum(uint32_t seed, const uint8_t *bm, uint32_t len);
/* Full 32-bit inode checksum (the caller compares lo 16 bits when there is no hi). */
uint32_t fsck_inode_csum(uint32_t seed, uint32_t ino, const uint8_t *in, uint32_t isz);
bool fsck_inode_csum_ok(uint32_t seed, uint32_t ino, const uint8_t *in, uint32_t isz);
void fsck_inode_csum_set(uint32_t seed, uint32_t ino, uint8_t *in, uint32_t isz);
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
