/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fs_int.h — internals shared by the files of src/fs/: the mounted-filesystem state,
 * the metadata buffer cache, and the helpers each part (alloc, inode, dir) offers. */
#ifndef BLACKOUT_FS_INT_H
#define BLACKOUT_FS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "blackout/fs.h"
#include "blackout/ext2_format.h"
#include "fs/journal_hook.h"

/* A cached metadata block. Pointers to buffers are valid until the end of the
 * current operation (the cache only evicts between operations). */
struct fs_buf {
	uint64_t blk;
	uint8_t *data;
	struct fs_buf *hnext;
	struct fs_buf *prev, *next; /* LRU, most recent first */
	uint64_t access_op;         /* op serial of the last get_write_access */
	bool dirty;                 /* the fs owes a write-back */
	bool in_op;                 /* on the current op's dirty list */
	bool checked;               /* content verified (checksum) since read */
	bool forgotten;             /* freed during this op: drop, never write */
	bool held;                  /* the journal holds it by reference: keep cached */
	/* Directory leaves: no entry starting before ins_off has room for a record of
	 * ins_need bytes (fs_dir_leaf_insert). Any change to the block resets it. */
	uint32_t ins_off, ins_need;
	struct fs_buf *op_next;
};

/* Positive name cache: (directory, name) -> inode; short names only. Direct-mapped,
 * sized at mount from the inode count (a small image mounts without a 12 MiB
 * calloc: the crash explorer mounts thousands of them). */
#define FS_DCACHE_MAX (1u << 18)
#define FS_DCACHE_MIN (1u << 10)
/* Directories made in this mount whose every name is in the cache: a miss there is
 * a certain ENOENT without reading the directory. */
#define FS_DCOMPLETE_SIZE 4096
#define FS_DCACHE_NAME    38
struct fs_dentry {
	uint32_t dir, ino;
	uint8_t len, ft;
	char name[FS_DCACHE_NAME];
};

#define FS_DPAGE_LOST_MAX 64

struct fs_file {
	struct fs *fs;
	uint32_t ino;
	int flags;
	bool orphan; /* its inode lost its last link while open: on the orphan list */
	struct fs_file *next;
};

struct fs {
	struct bdev *dev;
	struct fs_mount_opts opts;
	struct bo_err err;
	struct fs_jhook *jh;
	bool ro;
	/* errors=remount-ro or panic met damage: nothing more reaches the disk but the
	 * superblock's error bit (fs_error) */
	bool aborted;

	uint8_t sb[EXT2_SB_SIZE]; /* authoritative copy */
	uint32_t bs, bs_bits;     /* block size */
	uint64_t blocks;
	uint32_t first_data_block;
	uint32_t bpg, ipg, groups;
	uint32_t inode_size, inodes_per_block, itb_per_group;
	/* log2 of inodes_per_block (always a power of two), and of ipg when it is one
	 * (else 0): inode_loc shifts instead of dividing */
	uint8_t ipb_bits, ipg_bits;
	uint32_t desc_size, desc_per_block, desc_blocks;
	uint32_t inodes_count, first_ino;
	uint32_t apb; /* block addresses per indirect block */
	bool csum;    /* metadata_csum */
	uint32_t csum_seed;
	bool has_filetype, dir_index;
	int hash_unsigned; /* 0 signed, 3 unsigned (added to the hash version) */
	uint32_t hash_seed[4];
	uint8_t def_hash;

	/* group descriptors: the primary table, in memory */
	uint8_t *gdt;
	bool *gd_dirty; /* per group: counts or bitmaps changed this op */
	/* per group, [2g] block bitmap, [2g + 1] inode bitmap: every bit below is set
	 * (in use), so a search for a free one may start there (alloc.c) */
	uint32_t *free_hint;
	/* per group, FS_BAD_*: a bitmap found inconsistent this mount; allocation skips
	 * the group and frees in it are refused (ext4's BBITMAP_CORRUPT) */
	uint8_t *bad_group;
	bool sb_dirty;
	/* 64-byte pieces of sb (bit i: bytes 64i..64i+63) that the buffered superblock
	 * block may not hold yet: an operation that only moved the free counts copies
	 * one piece into it, not 1 KiB (fs_sb_dirty) */
	uint16_t sb_stale;

	/* buffer cache */
	struct fs_buf **htab;
	uint32_t hsize, hsize_max; /* hsize doubles with nbufs up to hsize_max (bcache.c) */
	struct fs_buf *lru_head, *lru_tail;
	uint32_t nbufs, ndirty, max_bufs, max_dirty;

	/* the current operation */
	uint64_t op_serial;
	int op_depth;
	struct fs_buf *op_dirty;

	/* Blocks freed by a transaction that has not committed yet, with the hook's
	 * commit count when they were freed: not reallocated before that transaction
	 * commits (ext3's b_committed_data rule). Reusing one earlier lets new data
	 * land in a block the on-disk metadata still gives to the old file. */
	struct fs_freed {
		uint64_t *blk, *gen; /* open addressing, blk 0 = empty */
		uint32_t cap, n;
		uint64_t max_gen;
	} freed;

	/* A page (blk_page_alloc) for the next single-block data write to a device
	 * that takes pages over (write_swap): the data is copied into it, the device
	 * keeps it and gives back the page it replaced, which becomes this one. NULL
	 * until first needed. inode.c, write_raw. */
	void *spare_page;
	uint32_t spare_pf; /* bytes of it prefetched so far (fs_spare_prefetch) */

	/* data=writeback: file data not yet written home (pagecache.c) */
	struct {
		struct fs_dpage **htab, *head, *tail;
		uint32_t n;
		uint32_t lost[FS_DPAGE_LOST_MAX]; /* inodes with a failed delayed write */
		size_t nlost;
		bool lost_all;
	} dpc;

	struct fs_file *files; /* open files */
	struct fs_dentry *dcache;
	uint32_t dcache_mask;
	uint32_t *dcomplete;
	uint32_t last_alloc_group;
	uint32_t now_override; /* nonzero: fixed clock (tests) */
};

/* ---- buffer cache (bcache.c) ---- */
int fs_bread(struct fs *fs, uint64_t blk, struct fs_buf **out);
/* bcache.c, for fs.c and mount.c: a cached block or NULL; dropping one copy; after
 * journal replay rewrote blocks underneath, every clean copy forgotten; written back
 * and shrunk to its bounds (an operation's end). */
struct fs_buf *fs_buf_find(struct fs *fs, uint64_t blk);
void fs_buf_remove(struct fs *fs, struct fs_buf *b);
void fs_cache_drop_clean(struct fs *fs);
void fs_cache_trim(struct fs *fs);
/* fs.c: a group descriptor's checksum (mount.c checks it) */
uint16_t fs_gd_csum(const struct fs *fs, uint32_t g, const uint8_t *gd);
/* A buffer for a block about to be completely overwritten (no read). */
int fs_bnew(struct fs *fs, uint64_t blk, struct fs_buf **out);
/* Before changing b->data: tells the journal (once per operation). */
int fs_baccess(struct fs *fs, struct fs_buf *b);
/* After changing b->data. */
void fs_bdirty(struct fs *fs, struct fs_buf *b);
/* The block was freed: drop it from the cache, tell the journal. */
void fs_bforget(struct fs *fs, uint64_t blk);
bool fs_blk_valid(const struct fs *fs, uint64_t blk);

/* fsync of inode ino, or sync with ino 0 (mount.c) */
int fs_sync_ino(struct fs *fs, uint32_t ino);

/* ---- operations bracket (fs.c) ---- */
int fs_op_begin(struct fs *fs, uint32_t credits);
int fs_op_end(struct fs *fs, int rc);
/* The page the next one-block data write will be copied into (spare_page) came
 * back cold from the device. Fetching it all at once stalls on the CPU's miss
 * buffers, and fetching none leaves the copy to stall every store after it; so
 * each buffer lookup (about 18 per file created) fetches the next 256 bytes of it,
 * and its misses overlap the bookkeeping of the operations before that write.
 * bench_fs's create workload run alone (medians of 6 runs): 256-byte steps 1.35M
 * files/s; 128-byte 1.14M; 512-byte 1.14M; the first 1 KiB at once, after the
 * write, 1.11-1.16M. */
static inline void fs_spare_prefetch(struct fs *fs)
{
	if (fs->spare_pf < BLK_PAGE_BYTES) {
		for (unsigned k = 0; k < 256; k += 64)
			__builtin_prefetch((uint8_t *)fs->spare_page + fs->spare_pf + k, 1);
		fs->spare_pf += 256;
	}
}
/* fs->sb was changed at byte `off` (FS_SB_ANY: anywhere, or more than one field):
 * the operation's end writes it into the superblock's buffer. */
#define FS_SB_ANY 0xffffffffu
static inline void fs_sb_dirty(struct fs *fs, uint32_t off)
{
	fs->sb_dirty = true;
	fs->sb_stale |= off == FS_SB_ANY ? 0xffffu : (uint16_t)(1u << (off / 64));
}

/* Damage was found (the message is in fs->err): the superblock records it and the
 * errors= option decides what follows, as in ext3. Returns rc. */
int fs_error(struct fs *fs, int rc);

/* ---- checksums (fs.c) ---- */
uint32_t fs_inode_csum_seed(const struct fs *fs, uint32_t ino, uint32_t gen);

/* ---- allocation (alloc.c) ---- */
int fs_alloc_block(struct fs *fs, uint64_t goal, uint64_t *out);
int fs_free_block(struct fs *fs, uint64_t blk);
/* -ENOSPC from an operation while blocks freed by the running transaction wait for
 * its commit: commits (outside any operation) and returns true, so the caller may
 * retry once; false otherwise. */
bool fs_enospc_retry(struct fs *fs, int rc);
void fs_freed_release(struct fs *fs);
int fs_alloc_inode(struct fs *fs, uint32_t parent, bool dir, uint32_t *out);
int fs_free_inode(struct fs *fs, uint32_t ino, bool dir);
#define FS_BAD_BBITMAP 1
#define FS_BAD_IBITMAP 2
/* Whether blk is a superblock, descriptor, reserved descriptor, bitmap or inode table
 * block: what no file may own (Linux's "system zone"). */
bool fs_in_system_zone(const struct fs *fs, uint64_t blk);
/* Whether blk is marked in use in its group's bitmap; -EUCLEAN if the bitmap is bad. */
int fs_block_in_use(struct fs *fs, uint64_t blk, bool *used);
int fs_inode_in_use(struct fs *fs, uint32_t ino, bool *used);
uint8_t *fs_gd(struct fs *fs, uint32_t g);
void fs_gd_update_csums(struct fs *fs, uint32_t g);
uint64_t fs_group_first_block(const struct fs *fs, uint32_t g);

/* ---- inodes (inode.c) ---- */
struct fs_inode {
	uint32_t ino;
	uint8_t raw[1024];
};
int fs_iget(struct fs *fs, uint32_t ino, struct fs_inode *in);
/* Whether the inode table says ino has links (a free inode has none). */
int fs_inode_linked(struct fs *fs, uint32_t ino, bool *linked);
int fs_iput(struct fs *fs, struct fs_inode *in);
/* Map logical block; alloc: allocate (and zero-fill metadata) if a hole. */
int fs_bmap(struct fs *fs, struct fs_inode *in, uint64_t lblk, bool alloc, uint64_t *pblk);
/* Free every block at or past logical block `from`. */
int fs_truncate_blocks(struct fs *fs, struct fs_inode *in, uint64_t from);
/* Before freeing anything: every block at or past `from` (and, from 0, the xattr
 * block and the inode's own bitmap bit) is inside the filesystem, outside the
 * system zone, marked in use and owned once; -EUCLEAN naming the first that is not. */
int fs_inode_check_release(struct fs *fs, struct fs_inode *in, uint64_t from);
int fs_inode_release(struct fs *fs, struct fs_inode *in); /* free an unlinked inode */
uint64_t fs_max_file_size(const struct fs *fs);
void fs_add_blocks(struct fs *fs, struct fs_inode *in, int64_t nblocks);
int fs_read_data(struct fs *fs, struct fs_inode *in, void *buf, size_t len, uint64_t off);
int fs_write_data(struct fs *fs, struct fs_inode *in, const void *buf, size_t len, uint64_t off);
int fs_orphan_add(struct fs *fs, struct fs_inode *in);
int fs_orphan_del(struct fs *fs, struct fs_inode *in);
int fs_orphans_process(struct fs *fs);

/* Writes n data blocks at pblk to the device and tells the journal (ordered data). */
int fs_data_write_home(struct fs *fs, uint64_t pblk, const uint8_t *data, uint32_t n);
/* The current content of data block pblk: delayed data, the journal's, or the disk's. */
int fs_data_read_block(struct fs *fs, uint64_t pblk, uint8_t *buf);

/* ---- delayed file data, data=writeback (pagecache.c) ---- */
struct fs_dpage;
bool fs_delayed_data(const struct fs *fs);
int fs_dpage_put(struct fs *fs, uint32_t ino, uint64_t blk, const uint8_t *data);
bool fs_dpage_get(struct fs *fs, uint64_t blk, uint8_t *buf);
void fs_dpage_drop(struct fs *fs, uint64_t blk); /* the block was freed */
/* Writes home the delayed data of inode ino (0: of every inode). */
int fs_dpage_flush(struct fs *fs, uint32_t ino);
void fs_dpage_release(struct fs *fs); /* forgets everything, writes nothing */

/* ---- directories (dir.c) ---- */
/* Starts fetching the name cache's slot for (dir, name) into the CPU cache: a path
 * walk calls it for the next component before reading the directory's inode, so
 * the likely cache miss overlaps that work. No effect on results. */
void fs_dcache_prefetch(struct fs *fs, uint32_t dir, const char *name, size_t len);
int fs_dir_lookup(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t *ino,
                  uint8_t *ftype);
int fs_dir_add(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t ino,
               uint8_t ftype);
int fs_dir_remove(struct fs *fs, struct fs_inode *dir, const char *name, size_t len);
/* Change an existing entry's inode (rename over, '..' update). */
int fs_dir_set(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t ino,
               uint8_t ftype);
int fs_dir_iterate(struct fs *fs, struct fs_inode *dir,
                   int (*fn)(void *ctx, const char *name, size_t len, uint32_t ino, uint8_t ft),
                   void *ctx);
int fs_dir_is_empty(struct fs *fs, struct fs_inode *dir, bool *empty);
int fs_dir_init(struct fs *fs, struct fs_inode *dir, uint32_t parent);
/* Whether directory anc is d or above it (following '..'); -EUCLEAN on a loop. */
int fs_dir_is_ancestor(struct fs *fs, uint32_t anc, uint32_t d, bool *yes);
/* A directory just made (empty): the name cache knows all of it from now on. */
void fs_dcache_new_dir(struct fs *fs, uint32_t dir);
int fs_dirblock_check(struct fs *fs, struct fs_inode *dir, uint64_t lblk, uint8_t *data);
void fs_dirblock_set_csum(struct fs *fs, struct fs_inode *dir, uint8_t *data);

#endif
