/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fsck_ctx.h — the checker's working state, shared by the passes (super.c, pass1.c ..
 * pass5.c, driven by check.c) and the repairs (repair.c), and the small interface
 * between them: image access (image.c) and the fix list. Nothing global. */
#ifndef BLACKOUT_FSCK_CTX_H
#define BLACKOUT_FSCK_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "blackout/fsck.h"
#include "blackout/ext2_format.h"

/* Per-inode state bits (ck.iflag). */
enum {
	IF_DIR = 1u << 0,
	IF_REACHED = 1u << 1, /* pass 3: connected to root */
	IF_ZEROLEN = 1u << 2, /* size 0 and no blocks */
	IF_HTREE = 1u << 3,   /* directory with a (plausible) hashed index */
	IF_BADBLK = 1u << 4,  /* had out-of-range block pointers */
	IF_WALK = 1u << 5,    /* pass 3: on the current parent walk */
};

struct dblk {
	uint32_t ino, lblk;
	uint32_t pblk; /* 0: a hole */
};

/* A repair the check found, applied by repair.c. */
enum fix_kind {
	FIX_CLEAR_DIRENT,  /* dir block pblk, entry at off: drop it */
	FIX_FILETYPE,      /* dir block pblk, entry at off: set file type `val` */
	FIX_INODE_BLOCKS,  /* inode: zero out-of-range pointers, fix i_blocks/i_size */
	FIX_DTIME,         /* inode: set (val=1) or clear (val=0) dtime */
	FIX_INODE_CSUM,    /* inode: rewrite its checksum */
	FIX_DIRBLK_CSUM,   /* dir block pblk of inode: rewrite tail/dx checksum */
	FIX_IBLOCKS,       /* inode: i_blocks = val (512-byte units) */
	FIX_SIZE,          /* inode: i_size = val blocks * bs */
	FIX_CLEAR_HTREE,   /* inode: drop INDEX_FL (the index blocks read as empty entries) */
	FIX_CLONE,         /* inode: the pointer at (holder block, 0 = the inode; slot off) to
	                   * the multiply-claimed block val gets a private copy */
	FIX_CLEAR_INODE,   /* inode: release it (links 0, dtime set), as e2fsck clears */
	FIX_INODE_FIELDS,  /* inode: zero bad flags/faddr/hi fields, extra_isize, special size */
	FIX_CLEAR_ACL,     /* inode: drop a bad extended attribute block */
	FIX_SALVAGE,       /* dir block pblk: entry at off is broken: end the block there */
	FIX_DOT,           /* dir block pblk: rewrite '.' (off 0) or '..' (off 1) */
	FIX_MODE_DIR,      /* inode: its mode says special file, its block a directory */
	FIX_RESERVED_MODE, /* reserved inode: mode = val (e2fsck's choice per inode) */
	FIX_CLEAR_IN_EA,   /* inode: drop the extended attributes inside it (bad entry) */
	FIX_RESIZE_INODE,  /* the resize inode: made again from the geometry */
	FIX_GD_UNINIT,     /* group val: uninit flags without the feature: cleared */
	FIX_DIR_HOLE,      /* directory inode: a new empty block at logical block off */
	FIX_LARGE_FILE,    /* superblock (and backups): large_file set, revision made dynamic */
};
struct fix {
	enum fix_kind kind;
	uint32_t ino;
	uint32_t pblk;
	uint32_t off;
	uint32_t val;
};

struct ck {
	struct bdev *d;
	const struct fsck_opts *o;
	struct fsck_report *r;
	struct bo_err *err;
	bool stop;    /* max_problems reached */
	bool had_dup; /* some block was claimed twice */
	bool sb_bad;  /* the superblock needs its backup */
	bool gdt_bad; /* the descriptors need their backup */
	/* the repair loop is stuck on local fixes: bitmaps, counts and links are
	 * rewritten from what the check found anyway, so none is left inconsistent */
	bool force_maps;
	uint32_t large_files; /* regular files of 2 GiB or more (pass 1) */
	uint64_t backup_sb;   /* block of the backup superblock checked with (0: primary) */
	uint64_t alloc_cursor;

	uint8_t sb[1024];
	uint32_t bs, bpg, ipg, isz, ngroups, first_ino, desc_size, first_data, ninodes;
	uint32_t gdt_blocks, rsv_gdt, log_bs;
	uint64_t nblocks;
	bool csum, filetype, dir_index, has_journal, ext_attr;
	uint32_t seed, hash_seed[4];
	uint8_t *gdt;     /* ngroups * desc_size */
	uint8_t *grp_bad; /* group's bitmaps/table unusable */
	uint8_t *bbm;     /* on-disk block bitmaps, bpg/8 bytes per group */
	uint8_t *ibm;     /* on-disk inode bitmaps, ipg/8 bytes per group */
	uint8_t *bused;   /* computed: blocks in use */
	uint8_t *iused;   /* computed: inodes in use */
	uint16_t *links;  /* i_links_count */
	uint32_t *counted;
	uint8_t *iflag;
	uint8_t *ftype;     /* EXT2_FT_* of the inode's mode (0: bad mode) */
	uint32_t *parent;   /* directories: first entry found pointing here */
	uint32_t *dotdot;   /* directories: their '..' */
	uint32_t *gen;      /* i_generation (checksums of directory blocks) */
	uint32_t *dir_nblk; /* directories: blocks (i_size / bs) */

	struct dblk *db;
	size_t ndb, cap_db;
	struct fix *fx;
	size_t nfx, cap_fx;
	uint32_t *ea; /* EA blocks referenced: pairs (blk, refcount on disk) */
	size_t nea, cap_ea;

	uint8_t *buf, *ibuf; /* one block; an inode-table chunk */
	uint8_t *lvl[3];     /* indirect blocks being walked */
	uint16_t *dedup;     /* per-block name table (pass 2) */
	uint32_t dedup_mask;
	uint32_t lpf; /* lost+found inode (0: none) */
};

/* check.c: queue a repair (problems are recorded by problem.c: problem.h). */
int ck_add_fix(struct ck *c, enum fix_kind k, uint32_t ino, uint32_t pblk, uint32_t off,
               uint32_t val);

/* image.c: the image as both sides reach it. */
int ck_rd(struct ck *c, uint64_t blk, void *buf, uint32_t nblk);
/* true when the device knows blocks [blk, blk + nblk) read as zeroes (blk_reads_zero) */
bool ck_zero(struct ck *c, uint64_t blk, uint32_t nblk);
int ck_wr(struct ck *c, uint64_t blk, const void *buf);
int ck_read_inode(struct ck *c, uint32_t ino, uint8_t *in);
int ck_write_inode(struct ck *c, uint32_t ino, uint8_t *in);
int ck_write_sb(struct ck *c);
uint32_t ck_grp_inodes_used(struct ck *c, uint32_t g);
bool ck_itable_plausible(struct ck *c);

/* The passes, in the order check.c runs them. */
int ck_pass0(struct ck *c); /* super.c: superblock and group descriptors */
/* super.c: a valid backup superblock (1: found, into out[1024]; 0: none). */
int ck_find_backup_sb(struct ck *c, uint8_t *out, uint64_t *blk, uint32_t *bs);
int ck_check_journal(struct ck *c); /* super.c: the journal's superblock */
int ck_load_bitmaps(struct ck *c);  /* pass5.c: group metadata claimed, maps read */
int ck_pass1(struct ck *c);         /* pass1.c: inodes and their blocks */
int ck_fast_scan(struct ck *c);     /* pass1.c: the --fast metadata scrub */
int ck_pass2(struct ck *c);         /* pass2.c: directory structure */
void ck_pass3(struct ck *c);        /* pass3.c: connectivity */
void ck_pass4(struct ck *c);        /* pass4.c: reference counts */
void ck_pass5(struct ck *c);        /* pass5.c: bitmaps and summary counts */
bool ck_claim(struct ck *c, uint64_t b, uint32_t ino, const char *what);

/* repair.c: the local fixes, and the checksum a directory block carries rewritten */
int fsck_apply_fixes(struct ck *c);
void ck_dirblk_csum(struct ck *c, uint32_t ino, uint8_t *b);
int fsck_rewrite_maps(struct ck *c);   /* repair_global.c */
int fsck_restore_backup(struct ck *c); /* repair_super.c */

/* ---- group geometry ---- */
static inline uint8_t *ck_gd(struct ck *c, uint32_t g)
{
	return c->gdt + (size_t)g * c->desc_size;
}
static inline uint64_t ck_grp_first(const struct ck *c, uint32_t g)
{
	return c->first_data + (uint64_t)g * c->bpg;
}
static inline uint32_t ck_grp_nblocks(const struct ck *c, uint32_t g)
{
	uint64_t f = ck_grp_first(c, g);
	return c->nblocks - f < c->bpg ? (uint32_t)(c->nblocks - f) : c->bpg;
}
static inline bool ck_grp_has_super(const struct ck *c, uint32_t g)
{
	return ext2_bg_has_super(c->sb, g);
}
static inline uint32_t ck_itb_blocks(const struct ck *c)
{
	return (uint32_t)(((uint64_t)c->ipg * c->isz + c->bs - 1) / c->bs);
}
static inline bool ck_blk_valid(const struct ck *c, uint64_t b)
{
	return b >= c->first_data && b < c->nblocks;
}

static inline bool bit_test(const uint8_t *m, uint64_t i)
{
	return (m[i >> 3] >> (i & 7)) & 1;
}
/* The 32 bits of m from bit i on; m must have 8 bytes of slack past its end
 * (FSCK_MAP_SLACK). */
#define FSCK_MAP_SLACK 8
static inline uint32_t bits32(const uint8_t *m, uint64_t i)
{
	const uint8_t *p = m + (i >> 3);
	uint64_t w = 0;
	for (int k = 7; k >= 0; k--)
		w = w << 8 | p[k];
	return (uint32_t)(w >> (i & 7));
}
/* The first set bit of m at or after i, or n if none before n. */
static inline uint64_t bit_next(const uint8_t *m, uint64_t i, uint64_t n)
{
	while (i < n) {
		uint32_t w = bits32(m, i);
		if (w)
			return i + (uint64_t)__builtin_ctz(w) < n ? i + (uint64_t)__builtin_ctz(w)
			                                          : n;
		i += 32;
	}
	return n;
}
static inline void bit_set(uint8_t *m, uint64_t i)
{
	m[i >> 3] |= (uint8_t)(1u << (i & 7));
}
static inline void bit_clear(uint8_t *m, uint64_t i)
{
	m[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

/* The first inode at or after ino that pass 1 found in use, or ninodes + 1. */
static inline uint32_t ck_next_used(const struct ck *c, uint32_t ino)
{
	return (uint32_t)bit_next(c->iused, ino - 1, c->ninodes) + 1;
}

#endif
