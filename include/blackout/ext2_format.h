/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ext2_format.h — the ext2/ext3/ext4 on-disk format as offsets, little-endian accessors
 * and pure codecs (directory hash). The one definition fs/, fsck/ and the journal glue
 * include; it knows layout only, never policy or I/O.
 * Buffers are never cast to structs: every field goes through get_le / put_le here. */
#ifndef BLACKOUT_EXT2_FORMAT_H
#define BLACKOUT_EXT2_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "blackout/endian.h"

/* ---- Superblock: 1024 bytes at byte offset 1024 of the device ------------------ */
#define EXT2_SB_OFFSET 1024
#define EXT2_SB_SIZE   1024
#define EXT2_MAGIC     0xEF53

#define SB_INODES_COUNT        0x000 /* le32 */
#define SB_BLOCKS_COUNT_LO     0x004 /* le32 */
#define SB_R_BLOCKS_COUNT_LO   0x008 /* le32 */
#define SB_FREE_BLOCKS_LO      0x00C /* le32 */
#define SB_FREE_INODES         0x010 /* le32 */
#define SB_FIRST_DATA_BLOCK    0x014 /* le32: 1 for 1 KiB blocks, else 0 */
#define SB_LOG_BLOCK_SIZE      0x018 /* le32: block size = 1024 << this */
#define SB_LOG_CLUSTER_SIZE    0x01C /* le32 */
#define SB_BLOCKS_PER_GROUP    0x020 /* le32 */
#define SB_CLUSTERS_PER_GROUP  0x024 /* le32 */
#define SB_INODES_PER_GROUP    0x028 /* le32 */
#define SB_MTIME               0x02C /* le32 */
#define SB_WTIME               0x030 /* le32 */
#define SB_MNT_COUNT           0x034 /* le16 */
#define SB_MAX_MNT_COUNT       0x036 /* le16 (signed; -1 = no check) */
#define SB_MAGIC               0x038 /* le16 */
#define SB_STATE               0x03A /* le16: EXT2_VALID_FS | EXT2_ERROR_FS */
#define SB_ERRORS              0x03C /* le16: EXT2_ERRORS_* */
#define SB_MINOR_REV_LEVEL     0x03E /* le16 */
#define SB_LASTCHECK           0x040 /* le32 */
#define SB_CHECKINTERVAL       0x044 /* le32 */
#define SB_CREATOR_OS          0x048 /* le32: 0 = Linux */
#define SB_REV_LEVEL           0x04C /* le32: 1 = dynamic */
#define SB_DEF_RESUID          0x050 /* le16 */
#define SB_DEF_RESGID          0x052 /* le16 */
#define SB_FIRST_INO           0x054 /* le32: first non-reserved inode (11) */
#define SB_INODE_SIZE          0x058 /* le16 */
#define SB_BLOCK_GROUP_NR      0x05A /* le16: group holding this copy */
#define SB_FEATURE_COMPAT      0x05C /* le32 */
#define SB_FEATURE_INCOMPAT    0x060 /* le32 */
#define SB_FEATURE_RO_COMPAT   0x064 /* le32 */
#define SB_UUID                0x068 /* u8[16] */
#define SB_VOLUME_NAME         0x078 /* char[16] */
#define SB_LAST_MOUNTED        0x088 /* char[64] */
#define SB_ALGORITHM_BITMAP    0x0C8 /* le32 */
#define SB_PREALLOC_BLOCKS     0x0CC /* u8 */
#define SB_PREALLOC_DIR_BLOCKS 0x0CD /* u8 */
#define SB_RESERVED_GDT_BLOCKS 0x0CE /* le16 */
#define SB_JOURNAL_UUID        0x0D0 /* u8[16] */
#define SB_JOURNAL_INUM        0x0E0 /* le32: 8 */
#define SB_JOURNAL_DEV         0x0E4 /* le32 */
#define SB_LAST_ORPHAN         0x0E8 /* le32: head of the orphan inode list */
#define SB_HASH_SEED           0x0EC /* le32[4] */
#define SB_DEF_HASH_VERSION    0x0FC /* u8: EXT2_HASH_* */
#define SB_JNL_BACKUP_TYPE     0x0FD /* u8: EXT3_JNL_BACKUP_BLOCKS */
#define SB_DESC_SIZE           0x0FE /* le16: 0 or 32 without 64bit */
#define SB_DEFAULT_MOUNT_OPTS  0x100 /* le32 */
#define SB_FIRST_META_BG       0x104 /* le32 */
#define SB_MKFS_TIME           0x108 /* le32 */
#define SB_JNL_BLOCKS          0x10C /* le32[17]: i_block[15], i_size_high, i_size */
#define SB_BLOCKS_COUNT_HI     0x150 /* le32 */
#define SB_R_BLOCKS_COUNT_HI   0x154 /* le32 */
#define SB_FREE_BLOCKS_HI      0x158 /* le32 */
#define SB_MIN_EXTRA_ISIZE     0x15C /* le16 */
#define SB_WANT_EXTRA_ISIZE    0x15E /* le16 */
#define SB_FLAGS               0x160 /* le32: EXT2_FLAGS_* */
#define SB_RAID_STRIDE         0x164 /* le16 */
#define SB_MMP_INTERVAL        0x166 /* le16 */
#define SB_MMP_BLOCK           0x168 /* le64 */
#define SB_RAID_STRIPE_WIDTH   0x170 /* le32 */
#define SB_LOG_GROUPS_PER_FLEX 0x174 /* u8 */
#define SB_CHECKSUM_TYPE       0x175 /* u8: 1 = crc32c */
#define SB_KBYTES_WRITTEN      0x178 /* le64 */
#define SB_ERROR_COUNT         0x194 /* le32 */
#define SB_FIRST_ERROR_TIME    0x198 /* le32 */
#define SB_FIRST_ERROR_INO     0x19C /* le32 */
#define SB_FIRST_ERROR_BLOCK   0x1A0 /* le64 */
#define SB_FIRST_ERROR_FUNC    0x1A8 /* char[32] */
#define SB_FIRST_ERROR_LINE    0x1C8 /* le32 */
#define SB_LAST_ERROR_TIME     0x1CC /* le32 */
#define SB_LAST_ERROR_INO      0x1D0 /* le32 */
#define SB_LAST_ERROR_LINE     0x1D4 /* le32 */
#define SB_LAST_ERROR_BLOCK    0x1D8 /* le64 */
#define SB_LAST_ERROR_FUNC     0x1E0 /* char[32] */
#define SB_MOUNT_OPTS          0x200 /* char[64] */
#define SB_USR_QUOTA_INUM      0x240 /* le32 */
#define SB_GRP_QUOTA_INUM      0x244 /* le32 */
#define SB_OVERHEAD_CLUSTERS   0x248 /* le32 */
#define SB_BACKUP_BGS          0x24C /* le32[2] (sparse_super2) */
#define SB_LPF_INO             0x268 /* le32 */
#define SB_PRJ_QUOTA_INUM      0x26C /* le32 */
#define SB_CHECKSUM_SEED       0x270 /* le32: crc32c(~0, uuid) when csum_seed */
#define SB_CHECKSUM            0x3FC /* le32: crc32c_raw(~0, sb, 0x3FC) */

/* s_state */
#define EXT2_VALID_FS  0x0001 /* cleanly unmounted */
#define EXT2_ERROR_FS  0x0002
#define EXT3_ORPHAN_FS 0x0004 /* orphans being recovered */
/* s_errors */
#define EXT2_ERRORS_CONTINUE 1
#define EXT2_ERRORS_RO       2
#define EXT2_ERRORS_PANIC    3
/* s_flags */
#define EXT2_FLAGS_SIGNED_HASH   0x0001
#define EXT2_FLAGS_UNSIGNED_HASH 0x0002
#define EXT2_FLAGS_TEST_FILESYS  0x0004
/* s_def_hash_version, dx_root_info.hash_version */
#define EXT2_HASH_LEGACY            0
#define EXT2_HASH_HALF_MD4          1
#define EXT2_HASH_TEA               2
#define EXT2_HASH_LEGACY_UNSIGNED   3 /* in memory only: signed/unsigned from s_flags */
#define EXT2_HASH_HALF_MD4_UNSIGNED 4
#define EXT2_HASH_TEA_UNSIGNED      5
#define EXT2_HASH_SIPHASH           6
/* s_jnl_backup_type */
#define EXT3_JNL_BACKUP_BLOCKS 1
/* s_checksum_type */
#define EXT4_CRC32C_CHKSUM 1
/* s_default_mount_opts */
#define EXT2_DEFM_XATTR_USER 0x0004
#define EXT2_DEFM_ACL        0x0008

/* s_feature_compat */
#define EXT2_FEATURE_COMPAT_DIR_PREALLOC   0x0001
#define EXT2_FEATURE_COMPAT_IMAGIC_INODES  0x0002
#define EXT3_FEATURE_COMPAT_HAS_JOURNAL    0x0004
#define EXT2_FEATURE_COMPAT_EXT_ATTR       0x0008
#define EXT2_FEATURE_COMPAT_RESIZE_INODE   0x0010
#define EXT2_FEATURE_COMPAT_DIR_INDEX      0x0020
#define EXT2_FEATURE_COMPAT_LAZY_BG        0x0040
#define EXT2_FEATURE_COMPAT_EXCLUDE_BITMAP 0x0100
#define EXT4_FEATURE_COMPAT_SPARSE_SUPER2  0x0200
#define EXT4_FEATURE_COMPAT_FAST_COMMIT    0x0400
#define EXT4_FEATURE_COMPAT_STABLE_INODES  0x0800
#define EXT4_FEATURE_COMPAT_ORPHAN_FILE    0x1000
/* s_feature_incompat */
#define EXT2_FEATURE_INCOMPAT_COMPRESSION 0x0001
#define EXT2_FEATURE_INCOMPAT_FILETYPE    0x0002
#define EXT3_FEATURE_INCOMPAT_RECOVER     0x0004 /* needs_recovery */
#define EXT3_FEATURE_INCOMPAT_JOURNAL_DEV 0x0008
#define EXT2_FEATURE_INCOMPAT_META_BG     0x0010
#define EXT4_FEATURE_INCOMPAT_EXTENTS     0x0040
#define EXT4_FEATURE_INCOMPAT_64BIT       0x0080
#define EXT4_FEATURE_INCOMPAT_MMP         0x0100
#define EXT4_FEATURE_INCOMPAT_FLEX_BG     0x0200
#define EXT4_FEATURE_INCOMPAT_EA_INODE    0x0400
#define EXT4_FEATURE_INCOMPAT_DIRDATA     0x1000
#define EXT4_FEATURE_INCOMPAT_CSUM_SEED   0x2000
#define EXT4_FEATURE_INCOMPAT_LARGEDIR    0x4000
#define EXT4_FEATURE_INCOMPAT_INLINE_DATA 0x8000
#define EXT4_FEATURE_INCOMPAT_ENCRYPT     0x10000
#define EXT4_FEATURE_INCOMPAT_CASEFOLD    0x20000
/* s_feature_ro_compat */
#define EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER   0x0001
#define EXT2_FEATURE_RO_COMPAT_LARGE_FILE     0x0002
#define EXT2_FEATURE_RO_COMPAT_BTREE_DIR      0x0004
#define EXT4_FEATURE_RO_COMPAT_HUGE_FILE      0x0008
#define EXT4_FEATURE_RO_COMPAT_GDT_CSUM       0x0010
#define EXT4_FEATURE_RO_COMPAT_DIR_NLINK      0x0020
#define EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE    0x0040
#define EXT4_FEATURE_RO_COMPAT_HAS_SNAPSHOT   0x0080
#define EXT4_FEATURE_RO_COMPAT_QUOTA          0x0100
#define EXT4_FEATURE_RO_COMPAT_BIGALLOC       0x0200
#define EXT4_FEATURE_RO_COMPAT_METADATA_CSUM  0x0400
#define EXT4_FEATURE_RO_COMPAT_REPLICA        0x0800
#define EXT4_FEATURE_RO_COMPAT_READONLY       0x1000
#define EXT4_FEATURE_RO_COMPAT_PROJECT        0x2000
#define EXT4_FEATURE_RO_COMPAT_SHARED_BLOCKS  0x4000
#define EXT4_FEATURE_RO_COMPAT_VERITY         0x8000
#define EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT 0x10000

/* What blackout's fs implements. A mount refuses unknown incompat features and
 * mounts read-only with unknown ro_compat features, as the kernel does. */
#define BO_FS_SUPP_COMPAT                                                                          \
	(EXT2_FEATURE_COMPAT_DIR_PREALLOC | EXT3_FEATURE_COMPAT_HAS_JOURNAL |                      \
	 EXT2_FEATURE_COMPAT_EXT_ATTR | EXT2_FEATURE_COMPAT_RESIZE_INODE |                         \
	 EXT2_FEATURE_COMPAT_DIR_INDEX)
#define BO_FS_SUPP_INCOMPAT                                                                        \
	(EXT2_FEATURE_INCOMPAT_FILETYPE | EXT3_FEATURE_INCOMPAT_RECOVER |                          \
	 EXT4_FEATURE_INCOMPAT_CSUM_SEED)
#define BO_FS_SUPP_RO_COMPAT                                                                       \
	(EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE |                 \
	 EXT4_FEATURE_RO_COMPAT_METADATA_CSUM | EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE |               \
	 EXT4_FEATURE_RO_COMPAT_DIR_NLINK)

/* ---- Reserved inodes ----------------------------------------------------------- */
#define EXT2_BAD_INO            1
#define EXT2_ROOT_INO           2
#define EXT4_USR_QUOTA_INO      3
#define EXT4_GRP_QUOTA_INO      4
#define EXT2_BOOT_LOADER_INO    5
#define EXT2_UNDEL_DIR_INO      6
#define EXT2_RESIZE_INO         7
#define EXT2_JOURNAL_INO        8
#define EXT2_EXCLUDE_INO        9
#define EXT2_GOOD_OLD_FIRST_INO 11

#define EXT2_GOOD_OLD_INODE_SIZE 128
#define EXT2_DYNAMIC_REV         1
#define EXT2_LINK_MAX            32000 /* ext3's limit (ext4 without dir_nlink: 65000) */
#define EXT2_NAME_LEN            255
#define EXT2_MAX_SYMLINK_LEN     4096 /* PATH_MAX, with the terminating byte */

/* ---- Group descriptor (32 bytes without 64bit) ----------------------------------- */
#define EXT2_MIN_DESC_SIZE 32
#define EXT2_MAX_DESC_SIZE 1024

#define GD_BLOCK_BITMAP         0x00 /* le32 */
#define GD_INODE_BITMAP         0x04 /* le32 */
#define GD_INODE_TABLE          0x08 /* le32 */
#define GD_FREE_BLOCKS          0x0C /* le16 */
#define GD_FREE_INODES          0x0E /* le16 */
#define GD_USED_DIRS            0x10 /* le16 */
#define GD_FLAGS                0x12 /* le16: EXT4_BG_* */
#define GD_EXCLUDE_BITMAP       0x14 /* le32 */
#define GD_BLOCK_BITMAP_CSUM_LO 0x18 /* le16 */
#define GD_INODE_BITMAP_CSUM_LO 0x1A /* le16 */
#define GD_ITABLE_UNUSED        0x1C /* le16 */
#define GD_CHECKSUM             0x1E /* le16 */
/* 64bit descriptors (desc_size >= 64) continue: */
#define GD_BLOCK_BITMAP_HI      0x20
#define GD_INODE_BITMAP_HI      0x24
#define GD_INODE_TABLE_HI       0x28
#define GD_FREE_BLOCKS_HI       0x2C
#define GD_FREE_INODES_HI       0x2E
#define GD_USED_DIRS_HI         0x30
#define GD_ITABLE_UNUSED_HI     0x32
#define GD_EXCLUDE_BITMAP_HI    0x34
#define GD_BLOCK_BITMAP_CSUM_HI 0x38 /* le16 */
#define GD_INODE_BITMAP_CSUM_HI 0x3A /* le16 */

/* bg_flags */
#define EXT4_BG_INODE_UNINIT 0x0001
#define EXT4_BG_BLOCK_UNINIT 0x0002
#define EXT4_BG_INODE_ZEROED 0x0004

/* ---- Inode -------------------------------------------------------------------- */
#define I_MODE          0x00 /* le16 */
#define I_UID           0x02 /* le16 (low) */
#define I_SIZE_LO       0x04 /* le32 */
#define I_ATIME         0x08 /* le32 */
#define I_CTIME         0x0C /* le32 */
#define I_MTIME         0x10 /* le32 */
#define I_DTIME         0x14 /* le32: deletion time; orphan list: next orphan */
#define I_GID           0x18 /* le16 (low) */
#define I_LINKS_COUNT   0x1A /* le16 */
#define I_BLOCKS_LO     0x1C /* le32: 512-byte units (without huge_file) */
#define I_FLAGS         0x20 /* le32: EXT2_*_FL */
#define I_VERSION       0x24 /* le32 (osd1) */
#define I_BLOCK         0x28 /* le32[15]: 12 direct, IND, DIND, TIND; or a fast symlink */
#define I_GENERATION    0x64 /* le32 */
#define I_FILE_ACL_LO   0x68 /* le32: extended attribute block */
#define I_SIZE_HIGH     0x6C /* le32 (dir_acl in rev 0) */
#define I_FADDR         0x70 /* le32 (obsolete) */
#define I_BLOCKS_HIGH   0x74 /* le16 */
#define I_FILE_ACL_HIGH 0x76 /* le16 */
#define I_UID_HIGH      0x78 /* le16 */
#define I_GID_HIGH      0x7A /* le16 */
#define I_CHECKSUM_LO   0x7C /* le16 */
#define I_RESERVED      0x7E /* le16 */
/* large inodes (inode_size > 128): */
#define I_EXTRA_ISIZE                0x80 /* le16: bytes used past 128 */
#define I_CHECKSUM_HI                0x82 /* le16, present when extra_isize >= 4 */
#define I_CTIME_EXTRA                0x84
#define I_MTIME_EXTRA                0x88
#define I_ATIME_EXTRA                0x8C
#define I_CRTIME                     0x90
#define I_CRTIME_EXTRA               0x94
#define I_VERSION_HI                 0x98
#define I_PROJID                     0x9C
#define EXT4_INODE_CSUM_HI_EXTRA_END 4           /* extra_isize needed for i_checksum_hi */
#define EXT4_GOOD_EXTRA_ISIZE        32          /* what mke2fs uses for 256-byte inodes */
#define EXT2_XATTR_IBODY_MAGIC       0xEA020000u /* in-inode xattrs after extra_isize */

#define EXT2_NDIR_BLOCKS 12
#define EXT2_IND_BLOCK   12
#define EXT2_DIND_BLOCK  13
#define EXT2_TIND_BLOCK  14
#define EXT2_N_BLOCKS    15

/* i_flags */
#define EXT2_SECRM_FL        0x00000001
#define EXT2_UNRM_FL         0x00000002
#define EXT2_COMPR_FL        0x00000004
#define EXT2_SYNC_FL         0x00000008
#define EXT2_IMMUTABLE_FL    0x00000010
#define EXT2_APPEND_FL       0x00000020
#define EXT2_NODUMP_FL       0x00000040
#define EXT2_NOATIME_FL      0x00000080
#define EXT2_INDEX_FL        0x00001000 /* hashed-indexed directory */
#define EXT3_JOURNAL_DATA_FL 0x00004000
#define EXT2_DIRSYNC_FL      0x00010000
#define EXT2_TOPDIR_FL       0x00020000
#define EXT4_HUGE_FILE_FL    0x00040000
#define EXT4_EXTENTS_FL      0x00080000
#define EXT4_EA_INODE_FL     0x00200000
#define EXT4_INLINE_DATA_FL  0x10000000

/* i_mode file types (the same values as S_IF*, spelled out for portability) */
#define EXT2_S_IFMT   0xF000
#define EXT2_S_IFSOCK 0xC000
#define EXT2_S_IFLNK  0xA000
#define EXT2_S_IFREG  0x8000
#define EXT2_S_IFBLK  0x6000
#define EXT2_S_IFDIR  0x4000
#define EXT2_S_IFCHR  0x2000
#define EXT2_S_IFIFO  0x1000

/* ---- Directory entries ------------------------------------------------------- */
#define DE_INODE       0x00 /* le32, 0 = unused */
#define DE_REC_LEN     0x04 /* le16 */
#define DE_NAME_LEN    0x06 /* u8 (with filetype; le16 without) */
#define DE_FILE_TYPE   0x07 /* u8: EXT2_FT_* */
#define DE_NAME        0x08
#define EXT2_DIR_ROUND 4
/* The smallest record holding a name of n bytes. */
static inline uint32_t ext2_dir_rec_len(uint32_t name_len)
{
	return (8 + name_len + 3) & ~3u;
}

#define EXT2_FT_UNKNOWN  0
#define EXT2_FT_REG_FILE 1
#define EXT2_FT_DIR      2
#define EXT2_FT_CHRDEV   3
#define EXT2_FT_BLKDEV   4
#define EXT2_FT_FIFO     5
#define EXT2_FT_SOCK     6
#define EXT2_FT_SYMLINK  7
#define EXT2_FT_MAX      8
#define EXT2_FT_DIR_CSUM 0xDE /* the dirent tail's file_type */

/* metadata_csum: a 12-byte fake entry at the end of each directory leaf block. */
#define DIRENT_TAIL_SIZE  12
#define DT_RESERVED_ZERO1 0x00 /* le32 = 0 (looks like an unused entry) */
#define DT_REC_LEN        0x04 /* le16 = 12 */
#define DT_RESERVED_ZERO2 0x06 /* u8 = 0 */
#define DT_RESERVED_FT    0x07 /* u8 = 0xDE */
#define DT_CHECKSUM       0x08 /* le32 */

/* ---- htree (dir_index) ---------------------------------------------------------
 * Block 0 of an indexed directory: '.' (rec_len 12), '..' (rec_len bs-12), then
 * dx_root_info at 0x18 and the dx_entry array at 0x20 whose first slot is the
 * count/limit header. Interior nodes: a fake empty dirent (inode 0, rec_len bs),
 * then count/limit at 0x08. With metadata_csum a dx_tail (8 bytes) follows the
 * `limit` entries and limit is one smaller. */
#define DX_ROOT_INFO            0x18
#define DX_ROOT_RESERVED_ZERO   0x18 /* le32 */
#define DX_ROOT_HASH_VERSION    0x1C /* u8 */
#define DX_ROOT_INFO_LENGTH     0x1D /* u8 = 8 */
#define DX_ROOT_INDIRECT_LEVELS 0x1E /* u8: 0 or 1 (2 with largedir) */
#define DX_ROOT_UNUSED_FLAGS    0x1F /* u8 */
#define DX_ROOT_ENTRIES         0x20
#define DX_NODE_ENTRIES         0x08
#define DX_LIMIT                0x00 /* le16 within the entries' first slot */
#define DX_COUNT                0x02 /* le16 */
#define DX_ENTRY_HASH           0x00 /* le32 (0 in slot 0, whose block is at 4) */
#define DX_ENTRY_BLOCK          0x04 /* le32: logical block in the directory */
#define DX_ENTRY_SIZE           8
#define DX_TAIL_SIZE            8
#define DX_TAIL_RESERVED        0x00 /* le32 */
#define DX_TAIL_CHECKSUM        0x04 /* le32 */
#define DX_MAX_LEVELS           2    /* without largedir: root + one level of nodes */

/* ---- Extended attribute block -------------------------------------------------- */
#define EXT2_XATTR_MAGIC 0xEA020000u
#define XH_MAGIC         0x00 /* le32 */
#define XH_REFCOUNT      0x04 /* le32 */
#define XH_BLOCKS        0x08 /* le32 = 1 */
#define XH_HASH          0x0C /* le32 */
#define XH_CHECKSUM      0x10 /* le32: crc32c(seed, le64 blocknr, block) */
#define XH_HEADER_SIZE   0x20

/* ---- JBD2 journal superblock (big-endian, in journal block 0) ------------------- */
#define JBD2_MAGIC              0xC03B3998u
#define JBD2_DESCRIPTOR_BLOCK   1
#define JBD2_COMMIT_BLOCK       2
#define JBD2_SUPERBLOCK_V1      3
#define JBD2_SUPERBLOCK_V2      4
#define JBD2_REVOKE_BLOCK       5
#define JSB_MAGIC               0x00  /* be32 */
#define JSB_BLOCKTYPE           0x04  /* be32 */
#define JSB_HSEQUENCE           0x08  /* be32 */
#define JSB_BLOCKSIZE           0x0C  /* be32 */
#define JSB_MAXLEN              0x10  /* be32: journal length in blocks */
#define JSB_FIRST               0x14  /* be32: first log block (1) */
#define JSB_SEQUENCE            0x18  /* be32: first expected transaction id */
#define JSB_START               0x1C  /* be32: first block of the log, 0 = empty */
#define JSB_ERRNO               0x20  /* be32 */
#define JSB_FEATURE_COMPAT      0x24  /* be32 */
#define JSB_FEATURE_INCOMPAT    0x28  /* be32 */
#define JSB_FEATURE_RO_COMPAT   0x2C  /* be32 */
#define JSB_UUID                0x30  /* u8[16] */
#define JSB_NR_USERS            0x40  /* be32 */
#define JSB_DYNSUPER            0x44  /* be32 */
#define JSB_MAX_TRANSACTION     0x48  /* be32 */
#define JSB_MAX_TRANS_DATA      0x4C  /* be32 */
#define JSB_CHECKSUM_TYPE       0x50  /* u8 */
#define JSB_NUM_FC_BLKS         0x54  /* be32 */
#define JSB_HEAD                0x58  /* be32 */
#define JSB_CHECKSUM            0xFC  /* be32 */
#define JSB_USERS               0x100 /* u8[16*48] */
#define JBD2_MIN_JOURNAL_BLOCKS 1024

/* ---- Accessors: superblock ---------------------------------------------------- */
static inline uint32_t sb_get32(const uint8_t *sb, unsigned off)
{
	return get_le32(sb + off);
}
static inline uint16_t sb_get16(const uint8_t *sb, unsigned off)
{
	return get_le16(sb + off);
}
static inline void sb_put32(uint8_t *sb, unsigned off, uint32_t v)
{
	put_le32(sb + off, v);
}
static inline void sb_put16(uint8_t *sb, unsigned off, uint16_t v)
{
	put_le16(sb + off, v);
}
static inline uint64_t sb_blocks_count(const uint8_t *sb, bool is64)
{
	return sb_get32(sb, SB_BLOCKS_COUNT_LO) |
	       (is64 ? (uint64_t)sb_get32(sb, SB_BLOCKS_COUNT_HI) << 32 : 0);
}
static inline uint64_t sb_free_blocks(const uint8_t *sb, bool is64)
{
	return sb_get32(sb, SB_FREE_BLOCKS_LO) |
	       (is64 ? (uint64_t)sb_get32(sb, SB_FREE_BLOCKS_HI) << 32 : 0);
}
static inline uint64_t sb_r_blocks_count(const uint8_t *sb, bool is64)
{
	return sb_get32(sb, SB_R_BLOCKS_COUNT_LO) |
	       (is64 ? (uint64_t)sb_get32(sb, SB_R_BLOCKS_COUNT_HI) << 32 : 0);
}
static inline bool sb_has_compat(const uint8_t *sb, uint32_t f)
{
	return (sb_get32(sb, SB_FEATURE_COMPAT) & f) != 0;
}
static inline bool sb_has_incompat(const uint8_t *sb, uint32_t f)
{
	return (sb_get32(sb, SB_FEATURE_INCOMPAT) & f) != 0;
}
static inline bool sb_has_ro_compat(const uint8_t *sb, uint32_t f)
{
	return (sb_get32(sb, SB_FEATURE_RO_COMPAT) & f) != 0;
}
/* Block size from s_log_block_size; 0 if the value is out of ext2's range. */
static inline uint32_t sb_block_size(const uint8_t *sb)
{
	uint32_t l = sb_get32(sb, SB_LOG_BLOCK_SIZE);
	return l <= 6 ? 1024u << l : 0;
}
static inline uint16_t sb_inode_size(const uint8_t *sb)
{
	return sb_get32(sb, SB_REV_LEVEL) == 0 ? EXT2_GOOD_OLD_INODE_SIZE
	                                       : sb_get16(sb, SB_INODE_SIZE);
}
static inline uint32_t sb_first_ino(const uint8_t *sb)
{
	return sb_get32(sb, SB_REV_LEVEL) == 0 ? EXT2_GOOD_OLD_FIRST_INO
	                                       : sb_get32(sb, SB_FIRST_INO);
}
static inline uint32_t sb_desc_size(const uint8_t *sb)
{
	if (!sb_has_incompat(sb, EXT4_FEATURE_INCOMPAT_64BIT))
		return EXT2_MIN_DESC_SIZE;
	uint16_t d = sb_get16(sb, SB_DESC_SIZE);
	return d ? d : EXT2_MIN_DESC_SIZE;
}

/* ---- Accessors: group descriptor (the 32-byte part; hi halves when 64bit) ------- */
static inline uint64_t gd_block_bitmap(const uint8_t *gd, uint32_t desc_size)
{
	return get_le32(gd + GD_BLOCK_BITMAP) |
	       (desc_size >= 64 ? (uint64_t)get_le32(gd + GD_BLOCK_BITMAP_HI) << 32 : 0);
}
static inline uint64_t gd_inode_bitmap(const uint8_t *gd, uint32_t desc_size)
{
	return get_le32(gd + GD_INODE_BITMAP) |
	       (desc_size >= 64 ? (uint64_t)get_le32(gd + GD_INODE_BITMAP_HI) << 32 : 0);
}
static inline uint64_t gd_inode_table(const uint8_t *gd, uint32_t desc_size)
{
	return get_le32(gd + GD_INODE_TABLE) |
	       (desc_size >= 64 ? (uint64_t)get_le32(gd + GD_INODE_TABLE_HI) << 32 : 0);
}
static inline uint32_t gd_free_blocks(const uint8_t *gd, uint32_t desc_size)
{
	return get_le16(gd + GD_FREE_BLOCKS) |
	       (desc_size >= 64 ? (uint32_t)get_le16(gd + GD_FREE_BLOCKS_HI) << 16 : 0);
}
static inline uint32_t gd_free_inodes(const uint8_t *gd, uint32_t desc_size)
{
	return get_le16(gd + GD_FREE_INODES) |
	       (desc_size >= 64 ? (uint32_t)get_le16(gd + GD_FREE_INODES_HI) << 16 : 0);
}
static inline uint32_t gd_used_dirs(const uint8_t *gd, uint32_t desc_size)
{
	return get_le16(gd + GD_USED_DIRS) |
	       (desc_size >= 64 ? (uint32_t)get_le16(gd + GD_USED_DIRS_HI) << 16 : 0);
}
static inline uint32_t gd_itable_unused(const uint8_t *gd, uint32_t desc_size)
{
	return get_le16(gd + GD_ITABLE_UNUSED) |
	       (desc_size >= 64 ? (uint32_t)get_le16(gd + GD_ITABLE_UNUSED_HI) << 16 : 0);
}
static inline uint16_t gd_flags(const uint8_t *gd)
{
	return get_le16(gd + GD_FLAGS);
}
static inline void gd_set_free_blocks(uint8_t *gd, uint32_t desc_size, uint32_t v)
{
	put_le16(gd + GD_FREE_BLOCKS, (uint16_t)v);
	if (desc_size >= 64)
		put_le16(gd + GD_FREE_BLOCKS_HI, (uint16_t)(v >> 16));
}
static inline void gd_set_free_inodes(uint8_t *gd, uint32_t desc_size, uint32_t v)
{
	put_le16(gd + GD_FREE_INODES, (uint16_t)v);
	if (desc_size >= 64)
		put_le16(gd + GD_FREE_INODES_HI, (uint16_t)(v >> 16));
}
static inline void gd_set_used_dirs(uint8_t *gd, uint32_t desc_size, uint32_t v)
{
	put_le16(gd + GD_USED_DIRS, (uint16_t)v);
	if (desc_size >= 64)
		put_le16(gd + GD_USED_DIRS_HI, (uint16_t)(v >> 16));
}
static inline void gd_set_itable_unused(uint8_t *gd, uint32_t desc_size, uint32_t v)
{
	put_le16(gd + GD_ITABLE_UNUSED, (uint16_t)v);
	if (desc_size >= 64)
		put_le16(gd + GD_ITABLE_UNUSED_HI, (uint16_t)(v >> 16));
}

/* ---- Accessors: inode --------------------------------------------------------- */
static inline uint16_t ino_mode(const uint8_t *in)
{
	return get_le16(in + I_MODE);
}
static inline uint32_t ino_uid(const uint8_t *in)
{
	return get_le16(in + I_UID) | (uint32_t)get_le16(in + I_UID_HIGH) << 16;
}
static inline uint32_t ino_gid(const uint8_t *in)
{
	return get_le16(in + I_GID) | (uint32_t)get_le16(in + I_GID_HIGH) << 16;
}
static inline void ino_set_uid(uint8_t *in, uint32_t v)
{
	put_le16(in + I_UID, (uint16_t)v);
	put_le16(in + I_UID_HIGH, (uint16_t)(v >> 16));
}
static inline void ino_set_gid(uint8_t *in, uint32_t v)
{
	put_le16(in + I_GID, (uint16_t)v);
	put_le16(in + I_GID_HIGH, (uint16_t)(v >> 16));
}
static inline uint64_t ino_size(const uint8_t *in)
{
	return get_le32(in + I_SIZE_LO) | (uint64_t)get_le32(in + I_SIZE_HIGH) << 32;
}
static inline void ino_set_size(uint8_t *in, uint64_t v)
{
	put_le32(in + I_SIZE_LO, (uint32_t)v);
	put_le32(in + I_SIZE_HIGH, (uint32_t)(v >> 32));
}
/* i_blocks in 512-byte units (huge_file's block-unit flag is not supported). */
static inline uint64_t ino_blocks(const uint8_t *in)
{
	return get_le32(in + I_BLOCKS_LO) | (uint64_t)get_le16(in + I_BLOCKS_HIGH) << 32;
}
static inline void ino_set_blocks(uint8_t *in, uint64_t v)
{
	put_le32(in + I_BLOCKS_LO, (uint32_t)v);
	put_le16(in + I_BLOCKS_HIGH, (uint16_t)(v >> 32));
}
static inline uint64_t ino_file_acl(const uint8_t *in)
{
	return get_le32(in + I_FILE_ACL_LO) | (uint64_t)get_le16(in + I_FILE_ACL_HIGH) << 32;
}
static inline void ino_set_file_acl(uint8_t *in, uint64_t v)
{
	put_le32(in + I_FILE_ACL_LO, (uint32_t)v);
	put_le16(in + I_FILE_ACL_HIGH, (uint16_t)(v >> 32));
}
static inline uint16_t ino_links(const uint8_t *in)
{
	return get_le16(in + I_LINKS_COUNT);
}
static inline uint32_t ino_flags(const uint8_t *in)
{
	return get_le32(in + I_FLAGS);
}
static inline uint32_t ino_block(const uint8_t *in, unsigned i)
{
	return get_le32(in + I_BLOCK + 4 * i);
}
static inline void ino_set_block(uint8_t *in, unsigned i, uint32_t v)
{
	put_le32(in + I_BLOCK + 4 * i, v);
}
static inline bool mode_is_dir(uint16_t m)
{
	return (m & EXT2_S_IFMT) == EXT2_S_IFDIR;
}
static inline bool mode_is_reg(uint16_t m)
{
	return (m & EXT2_S_IFMT) == EXT2_S_IFREG;
}
static inline bool mode_is_lnk(uint16_t m)
{
	return (m & EXT2_S_IFMT) == EXT2_S_IFLNK;
}
static inline uint8_t mode_to_ftype(uint16_t m)
{
	switch (m & EXT2_S_IFMT) {
	case EXT2_S_IFREG: return EXT2_FT_REG_FILE;
	case EXT2_S_IFDIR: return EXT2_FT_DIR;
	case EXT2_S_IFCHR: return EXT2_FT_CHRDEV;
	case EXT2_S_IFBLK: return EXT2_FT_BLKDEV;
	case EXT2_S_IFIFO: return EXT2_FT_FIFO;
	case EXT2_S_IFSOCK: return EXT2_FT_SOCK;
	case EXT2_S_IFLNK: return EXT2_FT_SYMLINK;
	}
	return EXT2_FT_UNKNOWN;
}

/* ---- Accessors: directory entry ---------------------------------------------- */
static inline uint32_t de_inode(const uint8_t *de)
{
	return get_le32(de + DE_INODE);
}
static inline uint16_t de_rec_len(const uint8_t *de)
{
	return get_le16(de + DE_REC_LEN);
}
static inline uint8_t de_name_len(const uint8_t *de)
{
	return de[DE_NAME_LEN];
}
static inline uint8_t de_file_type(const uint8_t *de)
{
	return de[DE_FILE_TYPE];
}
static inline void de_set(uint8_t *de, uint32_t ino, uint16_t rec_len, const char *name,
                          uint8_t name_len, uint8_t ftype)
{
	put_le32(de + DE_INODE, ino);
	put_le16(de + DE_REC_LEN, rec_len);
	de[DE_NAME_LEN] = name_len;
	de[DE_FILE_TYPE] = ftype;
	if (name_len)
		memcpy(de + DE_NAME, name, name_len);
}
/* Is the 12 bytes at `t` a metadata_csum dirent tail? */
static inline bool de_is_tail(const uint8_t *t)
{
	return get_le32(t + DT_RESERVED_ZERO1) == 0 &&
	       get_le16(t + DT_REC_LEN) == DIRENT_TAIL_SIZE && t[DT_RESERVED_ZERO2] == 0 &&
	       t[DT_RESERVED_FT] == EXT2_FT_DIR_CSUM;
}
static inline void de_set_tail(uint8_t *t)
{
	memset(t, 0, DIRENT_TAIL_SIZE);
	put_le16(t + DT_REC_LEN, DIRENT_TAIL_SIZE);
	t[DT_RESERVED_FT] = EXT2_FT_DIR_CSUM;
}

/* ---- Layout helpers ------------------------------------------------------------ */
/* sparse_super: backups in groups 0, 1 and powers of 3, 5 and 7. */
static inline bool ext2_group_sparse(uint32_t g)
{
	if (g <= 1)
		return true;
	if (!(g & 1))
		return false;
	for (uint32_t p = 3; p <= 7; p += 2) {
		uint64_t x = p;
		while (x < g)
			x *= p;
		if (x == g)
			return true;
	}
	return false;
}
static inline bool ext2_bg_has_super(const uint8_t *sb, uint32_t g)
{
	if (!sb_has_ro_compat(sb, EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER))
		return true;
	return ext2_group_sparse(g);
}

/* ---- pure codecs ---- */
/* ext4's directory hash (legacy, half_md4, tea; signed and unsigned variants: the
 * EXT2_HASH_* version, with 3 added for unsigned). seed: the superblock's s_hash_seed
 * (all zero: the default). Returns -EINVAL for an unknown version. src/fs/ext2_hash.c. */
int ext2_dx_hash(int version, const uint32_t seed[4], const char *name, size_t len, uint32_t *hash,
                 uint32_t *minor);

/* metadata_csum (src/fs/ext2_csum.c), the kernel's conventions: seed = the
 * filesystem's seed (s_checksum_seed, or crc32c(~0, uuid)). */
uint32_t ext2_csum_seed(const uint8_t *sb);
uint32_t ext2_sb_csum(const uint8_t *sb);
uint16_t ext2_gd_csum(uint32_t seed, uint32_t group, const uint8_t *gd, uint32_t desc_size);
/* len: bytes of the bitmap covered (blocks or inodes per group / 8); 16 bits are
 * stored when the descriptor is 32 bytes */
uint32_t ext2_bitmap_csum(uint32_t seed, const uint8_t *bm, uint32_t len);
/* The seed of an inode's own checksum and of its directory blocks' tails. */
uint32_t ext2_inode_csum_seed(uint32_t seed, uint32_t ino, uint32_t gen);
/* All 32 bits; 16 are stored when the inode has no room for the high half. */
uint32_t ext2_inode_csum(uint32_t seed, uint32_t ino, const uint8_t *raw, uint32_t isz);
void ext2_inode_set_csum(uint32_t seed, uint32_t ino, uint8_t *raw, uint32_t isz);

#endif
