// SPDX-License-Identifier: GPL-2.0-or-later
/* pass1.c — pass 1 of blackout fsck: every inode, its fields and its block tree
 * (who owns which block), extended attribute blocks; and the --fast metadata scrub. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/problem.h"
#include "fsck/fsck_int.h"

/* Block ownership: the first claimant owns a block; a second claim is reported. */
bool ck_claim(struct ck *c, uint64_t b, uint32_t ino, const char *what)
{
	if (bit_test(c->bused, b)) {
		c->had_dup = true;
		if (ino)
			ck_problem(c, PR_1_DUP_BLOCK, ino, b, NULL, 0, ino, what,
			           (unsigned long long)b);
		else {
			ck_problem(c, PR_1_META_CONFLICT, 0, b, NULL, 0, what,
			           (unsigned long long)b);
			c->gdt_bad = true;
		}
		return false;
	}
	bit_set(c->bused, b);
	return true;
}

struct walk {
	uint32_t ino;
	bool dir, resize, fast;
	uint64_t nblk;
	int64_t last; /* last logical block mapped, -1 none */
	/* the same counting multiply-claimed blocks: still the file's (e2fsck clones
	 * them), so they count for i_size as e2fsck's last_block does */
	int64_t last_all;
	uint32_t nbad;
	/* The resize inode's walk reads each reserved GDT block under its double-indirect
	 * block: what check_reserved needs of them is kept here (bit = slot in that
	 * block), so they are not read a second time. NULL: not kept. */
	uint32_t rsv_dind;
	uint8_t *rsv_seen, *rsv_good;
};

/* Does reserved GDT block pblk, read into b, list its backups (one per group with a
 * superblock copy, from group 1) where the resize inode needs them? */
static bool rsv_backups_ok(const struct ck *c, const uint8_t *b, uint64_t pblk)
{
	uint32_t per = c->bs / 4, k = 0;
	bool ok = true;
	for (uint32_t g = 1; g < c->ngroups && ok && k < per; g++) {
		if (!ck_grp_has_super(c, g))
			continue;
		ok = get_le32(b + 4 * k) == pblk + (uint64_t)g * c->bpg;
		k++;
	}
	return ok;
}

static int add_dblk(struct ck *c, uint32_t ino, uint32_t lblk, uint32_t pblk)
{
	if (c->ndb == c->cap_db) {
		size_t n = c->cap_db ? c->cap_db * 2 : 256;
		struct dblk *p = realloc(c->db, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->db = p;
		c->cap_db = n;
	}
	c->db[c->ndb++] = (struct dblk){ino, lblk, pblk};
	return 0;
}

static int walk_ptr(struct ck *c, struct walk *w, uint32_t b, int level, uint64_t lblk,
                    uint32_t holder, uint32_t idx);

static int walk_ind(struct ck *c, struct walk *w, uint32_t b, int level, uint64_t lblk)
{
	/* level 1 = indirect block whose entries are data blocks. */
	uint8_t *buf = c->lvl[level - 1];
	int rc = ck_rd(c, b, buf, 1);
	if (rc)
		return rc;
	uint32_t per = c->bs / 4;
	uint64_t span = 1;
	for (int i = 1; i < level; i++)
		span *= per;
	for (uint32_t i = 0; i < per && !c->stop; i++) {
		uint32_t e = get_le32(buf + 4 * i);
		if (e && (rc = walk_ptr(c, w, e, level - 1, lblk + i * span, b, i)))
			return rc;
	}
	return 0;
}

/* holder: the indirect block holding the pointer (0: the inode), idx its slot. */
static int walk_ptr(struct ck *c, struct walk *w, uint32_t b, int level, uint64_t lblk,
                    uint32_t holder, uint32_t idx)
{
	if (!ck_blk_valid(c, b)) {
		w->nbad++;
		c->iflag[w->ino] |= IF_BADBLK;
		ck_problem(c, PR_1_ILLEGAL_BLOCK, w->ino, b, NULL, 0, w->ino,
		           level ? "indirect" : "data", b, (unsigned long long)lblk);
		return 0;
	}
	w->nblk++;
	if (w->resize) {
		/* Only its double-indirect block is the inode's own; the rest are the
		 * reserved GDT blocks, marked as group metadata. */
		if (level == 2)
			ck_claim(c, b, w->ino, "double indirect");
		if (!level)
			return 0;
		int rc = walk_ind(c, w, b, level, lblk);
		if (!rc && level == 1 && w->rsv_seen && holder && holder == w->rsv_dind) {
			/* c->lvl[0] still holds b: its entries are data, nothing read after */
			bit_set(w->rsv_seen, idx);
			if (rsv_backups_ok(c, c->lvl[0], b))
				bit_set(w->rsv_good, idx);
		}
		return rc;
	}
	if (!ck_claim(c, b, w->ino, level ? "indirect" : "data")) {
		/* e2fsck clones a multiply-claimed block for the later claimant */
		ck_add_fix(c, FIX_CLONE, w->ino, holder, idx, b);
		if (!level && (int64_t)lblk > w->last_all)
			w->last_all = (int64_t)lblk;
		return 0; /* never descend twice into one block: bounds the walk */
	}
	if (level)
		return walk_ind(c, w, b, level, lblk);
	if ((int64_t)lblk > w->last)
		w->last = (int64_t)lblk;
	if ((int64_t)lblk > w->last_all)
		w->last_all = (int64_t)lblk;
	if (w->dir) {
		if (lblk >= (1ull << (21 - c->log_bs))) {
			ck_problem(c, PR_1_DIR_TOO_BIG, w->ino, b, NULL, 0, w->ino);
			return 0;
		}
		return add_dblk(c, w->ino, (uint32_t)lblk, b);
	}
	return 0;
}

static int walk_blocks(struct ck *c, struct walk *w, const uint8_t *in)
{
	int rc;
	uint32_t per = c->bs / 4;
	for (unsigned i = 0; i < EXT2_NDIR_BLOCKS && !c->stop; i++) {
		uint32_t b = ino_block(in, i);
		if (b && (rc = walk_ptr(c, w, b, 0, i, 0, i)))
			return rc;
	}
	uint64_t base = EXT2_NDIR_BLOCKS, span = per;
	for (int l = 1; l <= 3 && !c->stop; l++) {
		uint32_t b = ino_block(in, EXT2_NDIR_BLOCKS + l - 1);
		if (b && (rc = walk_ptr(c, w, b, l, base, 0, EXT2_NDIR_BLOCKS + (uint32_t)l - 1)))
			return rc;
		base += span;
		span *= per;
	}
	return 0;
}

static bool ea_seen(struct ck *c, uint32_t b)
{
	for (size_t i = 0; i < c->nea; i++)
		if (c->ea[3 * i] == b) {
			c->ea[3 * i + 2]++;
			return true;
		}
	return false;
}

static int check_ea(struct ck *c, uint32_t ino, uint64_t b, struct walk *w)
{
	if (!c->ext_attr || !ck_blk_valid(c, b)) {
		ck_problem(c, PR_1_EA_BLOCK_INVALID, ino, b, NULL, 0, ino, (unsigned long long)b);
		ck_add_fix(c, FIX_CLEAR_ACL, ino, 0, 0, 0);
		return 0;
	}
	if (ea_seen(c, (uint32_t)b)) {
		w->nblk++;
		return 0;
	}
	int rc = ck_rd(c, b, c->buf, 1);
	if (rc)
		return rc;
	if (get_le32(c->buf + XH_MAGIC) != EXT2_XATTR_MAGIC || get_le32(c->buf + XH_BLOCKS) != 1) {
		ck_problem(c, PR_1_EA_BLOCK_BAD, ino, b, NULL, 0, ino, (unsigned long long)b);
		ck_add_fix(c, FIX_CLEAR_ACL, ino, 0, 0, 0);
		return 0;
	}
	if (c->csum && fsck_xattr_csum(c->seed, b, c->buf, c->bs) != get_le32(c->buf + XH_CHECKSUM))
		ck_problem(c, PR_1_EA_BLOCK_CSUM, ino, b, NULL, 0, (unsigned long long)b);
	if (c->nea == c->cap_ea) {
		size_t n = c->cap_ea ? c->cap_ea * 2 : 16;
		uint32_t *p = realloc(c->ea, n * 3 * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->ea = p;
		c->cap_ea = n;
	}
	c->ea[3 * c->nea] = (uint32_t)b;
	c->ea[3 * c->nea + 1] = get_le32(c->buf + XH_REFCOUNT);
	c->ea[3 * c->nea + 2] = 1;
	c->nea++;
	ck_claim(c, b, ino, "extended attribute");
	w->nblk++;
	return 0;
}

static uint64_t max_file_size(struct ck *c)
{
	uint64_t p = c->bs / 4;
	return (EXT2_NDIR_BLOCKS + p + p * p + p * p * p) * c->bs;
}

static int check_symlink(struct ck *c, uint32_t ino, const uint8_t *in, bool *fast)
{
	uint64_t size = ino_size(in);
	uint32_t fl = ino_flags(in);
	*fast = size > 0 && size < 60;
	bool ok = size != 0 && !get_le32(in + I_SIZE_HIGH) && !(fl & EXT2_INDEX_FL) &&
	          !(fl & (EXT2_IMMUTABLE_FL | EXT2_APPEND_FL));
	if (ok && *fast) {
		ok = strnlen((const char *)in + I_BLOCK, 60) == size;
	} else if (ok) {
		uint32_t b = ino_block(in, 0);
		for (unsigned i = 1; i < EXT2_N_BLOCKS; i++)
			ok &= ino_block(in, i) == 0;
		ok = ok && size < c->bs && ck_blk_valid(c, b);
		if (ok) {
			int rc = ck_rd(c, b, c->buf, 1);
			if (rc)
				return rc;
			ok = strnlen((const char *)c->buf, c->bs) == size;
		}
	}
	if (!ok)
		ck_problem(c, PR_1_SYMLINK_INVALID, ino, 0, NULL, 0, ino);
	return 0;
}

/* e2fsck's check_is_really_dir: a device, FIFO or socket inode whose first block
 * reads as a directory's first block ('.' naming it, then '..'), all of its pointers
 * valid and unclaimed, is a directory whose mode was damaged. */
static bool really_dir(struct ck *c, uint32_t ino, const uint8_t *in)
{
	uint16_t mode = ino_mode(in);
	/* as e2fsck: any mode but a directory, file or symlink (an invalid type too) */
	if (mode_is_dir(mode) || mode_is_reg(mode) || mode_is_lnk(mode) || !ino_block(in, 0))
		return false;
	bool not_device = false;
	for (unsigned i = 0; i < EXT2_N_BLOCKS; i++) {
		uint32_t b = ino_block(in, i);
		if (!b)
			continue;
		not_device |= i >= 4;
		if (!ck_blk_valid(c, b) || bit_test(c->bused, b))
			return false;
	}
	uint16_t t = mode & EXT2_S_IFMT;
	if ((t == EXT2_S_IFCHR || t == EXT2_S_IFBLK) && ino_links(in) == 1 && !not_device)
		return false;
	if (ck_rd(c, ino_block(in, 0), c->buf, 1))
		return false;
	const uint8_t *b = c->buf;
	uint32_t rl = de_rec_len(b);
	if (de_name_len(b) != 1 || b[DE_NAME] != '.' || de_inode(b) != ino || rl < 12 || rl % 4 ||
	    rl >= c->bs - 12)
		return false;
	const uint8_t *d = b + rl;
	uint32_t rl2 = de_rec_len(d);
	return de_name_len(d) == 2 && d[DE_NAME] == '.' && d[DE_NAME + 1] == '.' && rl2 >= 12 &&
	       rl2 % 4 == 0;
}

/* The hash of an extended attribute entry over its name and value (value words
 * little-endian, zero past the end of the region); signed: names as signed chars,
 * which e2fsck also accepts. */
static uint32_t ea_entry_hash(const uint8_t *e, const uint8_t *region, uint32_t rlen, uint32_t voff,
                              uint32_t vsize, bool sign)
{
	uint32_t h = 0;
	for (uint32_t i = 0; i < e[0]; i++) {
		uint32_t ch = sign ? (uint32_t)(int32_t)(int8_t)e[16 + i] : e[16 + i];
		h = (h << 5) ^ (h >> 27) ^ ch;
	}
	for (uint32_t o = voff; vsize && o < voff + ((vsize + 3) & ~3u); o += 4) {
		uint32_t w = 0;
		for (uint32_t k = 0; k < 4; k++)
			w |= (uint32_t)(o + k < rlen ? region[o + k] : 0) << (8 * k);
		h = (h << 16) ^ (h >> 16) ^ w;
	}
	return h;
}

/* The extended attributes stored inside a large inode, after i_extra_isize: entries
 * inside the inode, values inside it, no external value inodes, hashes right. */
static void check_inode_ea(struct ck *c, uint32_t ino, const uint8_t *in)
{
	uint32_t ex = c->isz > EXT2_GOOD_OLD_INODE_SIZE ? get_le16(in + I_EXTRA_ISIZE) : 0;
	if (ex < 4 || ex > c->isz - EXT2_GOOD_OLD_INODE_SIZE || (ex & 3))
		return;
	uint32_t start = EXT2_GOOD_OLD_INODE_SIZE + ex;
	if (start + 4 > c->isz || get_le32(in + start) != EXT2_XATTR_MAGIC)
		return;
	const uint8_t *first = in + start + 4;
	uint32_t room = c->isz - start - 4, off = 0;
	const char *bad = NULL;
	while (!bad && off + 4 <= room && get_le32(first + off)) {
		const uint8_t *e = first + off;
		uint32_t len = off + 16 <= room ? ((uint32_t)e[0] + 16 + 3) & ~3u : 0;
		uint32_t voff = len ? get_le16(e + 2) : 0, vsize = len ? get_le32(e + 8) : 0;
		if (!len || off + len > room)
			bad = "runs past the inode";
		else if (get_le32(e + 4))
			bad = "keeps its value in another inode";
		else if (voff > room || vsize > room - voff)
			bad = "has its value outside the inode";
		else if (get_le32(e + 12) &&
		         get_le32(e + 12) != ea_entry_hash(e, first, room, voff, vsize, false) &&
		         get_le32(e + 12) != ea_entry_hash(e, first, room, voff, vsize, true))
			bad = "has a bad hash";
		off += len;
	}
	if (bad) {
		ck_problem(c, PR_1_INODE_EA_BAD, ino, 0, NULL, 0, ino, bad);
		ck_add_fix(c, FIX_CLEAR_IN_EA, ino, 0, 0, 0);
	}
}

/* Flags and fields e2fsck checks on every inode in use, whatever its type. */
static void check_inode_fields(struct ck *c, uint32_t ino, const uint8_t *in, uint16_t mode)
{
	uint32_t fl = ino_flags(in);
	if ((fl & EXT2_INDEX_FL) && (!c->dir_index || !mode_is_dir(mode))) {
		ck_problem(c, PR_1_INDEX_FL, ino, 0, NULL, 0, ino,
		           c->dir_index ? "but is not a directory" : "without dir_index");
		ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
	}
	if (fl & (EXT4_EXTENTS_FL | EXT4_INLINE_DATA_FL)) {
		ck_problem(c, PR_1_FEATURE_FL, ino, 0, NULL, 0, ino,
		           fl & EXT4_EXTENTS_FL ? "EXTENTS_FL" : "INLINE_DATA_FL");
		ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
	}
	if (get_le32(in + I_FADDR) || get_le16(in + I_BLOCKS_HIGH) ||
	    get_le16(in + I_FILE_ACL_HIGH)) {
		ck_problem(c, PR_1_HIGH_FIELDS, ino, 0, NULL, 0, ino);
		ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
	}
	if (c->isz > EXT2_GOOD_OLD_INODE_SIZE) {
		uint16_t ex = get_le16(in + I_EXTRA_ISIZE);
		if (ex && (ex < 4 || ex > c->isz - EXT2_GOOD_OLD_INODE_SIZE || (ex & 3))) {
			ck_problem(c, PR_1_EXTRA_ISIZE, ino, 0, NULL, 0, ino, ex);
			ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
		}
	}
}

static int check_inode(struct ck *c, uint32_t ino, const uint8_t *in)
{
	uint16_t mode = ino_mode(in);
	uint32_t fl = ino_flags(in);
	struct walk w = {.ino = ino, .last = -1, .last_all = -1};
	int rc = 0;
	bool walk = false, special = false;
	uint32_t before = c->r->nr_problems;

	if (really_dir(c, ino, in)) {
		ck_problem(c, PR_1_TREAT_AS_DIRECTORY, ino, 0, NULL, 0, ino, mode);
		/* as e2fsck: once fixed, the rest of the check sees a directory */
		if (c->o->repair != FSCK_REPAIR_NONE) {
			ck_add_fix(c, FIX_MODE_DIR, ino, 0, 0, 0);
			mode = (uint16_t)((mode & 07777) | EXT2_S_IFDIR);
		}
	}
	check_inode_ea(c, ino, in);

	check_inode_fields(c, ino, in, mode);
	c->ftype[ino] = mode_to_ftype(mode);
	switch (mode & EXT2_S_IFMT) {
	case EXT2_S_IFDIR:
		c->iflag[ino] |= IF_DIR;
		w.dir = true;
		walk = true;
		break;
	case EXT2_S_IFREG: walk = true; break;
	case EXT2_S_IFLNK:
		if ((rc = check_symlink(c, ino, in, &w.fast)))
			return rc;
		if (c->r->nr_problems != before)
			ck_add_fix(c, FIX_CLEAR_INODE, ino, 0, 0, 0);
		walk = !w.fast;
		break;
	case EXT2_S_IFCHR:
	case EXT2_S_IFBLK:
	case EXT2_S_IFIFO:
	case EXT2_S_IFSOCK: {
		bool ok =
		    !(fl & (EXT2_INDEX_FL | EXT4_EXTENTS_FL | EXT2_IMMUTABLE_FL | EXT2_APPEND_FL));
		for (unsigned i = 4; i < EXT2_N_BLOCKS; i++)
			ok &= ino_block(in, i) == 0;
		if (!ok) {
			ck_problem(c, PR_1_SPECIAL_INVALID, ino, 0, NULL, 0, ino);
			ck_add_fix(c, FIX_CLEAR_INODE, ino, 0, 0, 0);
		}
		if (ino_size(in)) {
			ck_problem(c, PR_1_SPECIAL_SIZE, ino, 0, NULL, 0, ino);
			ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
		}
		special = true;
		break;
	}
	default:
		c->ftype[ino] = 0;
		ck_problem(c, PR_1_BAD_MODE, ino, 0, NULL, 0, ino, mode);
		ck_add_fix(c, FIX_CLEAR_INODE, ino, 0, 0, 0);
		special = true;
	}
	(void)special;
	if (walk && (rc = walk_blocks(c, &w, in)))
		return rc;
	if (w.nbad)
		ck_add_fix(c, FIX_INODE_BLOCKS, ino, 0, 0, 0);
	uint64_t acl = ino_file_acl(in);
	if (acl && (rc = check_ea(c, ino, acl, &w)))
		return rc;
	uint64_t want = w.nblk * (c->bs / 512);
	if (ino_blocks(in) != want) {
		ck_problem(c, PR_1_BAD_I_BLOCKS, ino, 0, NULL, 0, ino,
		           (unsigned long long)ino_blocks(in), (unsigned long long)want);
		if (!w.nbad)
			ck_add_fix(c, FIX_IBLOCKS, ino, 0, 0, (uint32_t)want);
	}
	uint64_t size = ino_size(in);
	/* e2fsck's rules (pass 1, bad_size), over every block the inode maps */
	uint64_t nlast = (uint64_t)(w.last_all + 1);
	if (w.dir) {
		uint64_t nb = size / c->bs;
		if (!w.nblk)
			ck_problem(c, PR_1_DIR_NO_BLOCKS, ino, 0, NULL, 0, ino);
		else if ((size & (c->bs - 1)) || nb > nlast ||
		         nlast - nb > c->sb[SB_PREALLOC_DIR_BLOCKS]) {
			ck_problem(c, PR_1_BAD_I_SIZE, ino, 0, NULL, 0, ino,
			           (unsigned long long)size, (unsigned long long)(nlast * c->bs));
			if (!w.nbad)
				ck_add_fix(c, FIX_SIZE, ino, 0, 0, (uint32_t)nlast);
		}
		c->dir_nblk[ino] = (uint32_t)(w.last + 1);
	} else if (mode_is_reg(mode)) {
		if (size >= 0x80000000ull)
			c->large_files++;
		if ((w.last_all >= 0 && size < (uint64_t)w.last_all * c->bs) ||
		    size > max_file_size(c)) {
			ck_problem(c, PR_1_BAD_I_SIZE, ino, 0, NULL, 0, ino,
			           (unsigned long long)size, (unsigned long long)(nlast * c->bs));
			if (!w.nbad)
				ck_add_fix(c, FIX_SIZE, ino, 0, 0, (uint32_t)nlast);
		}
	}
	if (ino_blocks(in) == 0 && (mode_is_reg(mode) || mode_is_dir(mode)))
		c->iflag[ino] |= IF_ZEROLEN;
	if (mode_is_dir(mode) && (fl & EXT2_INDEX_FL) && c->dir_index)
		c->iflag[ino] |= IF_HTREE;
	return 0;
}

static int check_reserved(struct ck *c, uint32_t ino, const uint8_t *in)
{
	uint16_t mode = ino_mode(in);
	struct walk w = {.ino = ino, .last = -1, .last_all = -1};
	uint8_t rsv_seen[65536 / 4 / 8], rsv_good[65536 / 4 / 8]; /* bs <= 64 KiB */
	int rc;
	if (ino == EXT2_JOURNAL_INO && !c->has_journal) {
		if (ino_links(in) || ino_blocks(in) || ino_block(in, 0))
			ck_problem(c, PR_1_JOURNAL_UNUSED_DATA, ino, 0, NULL, 0);
		return 0;
	}
	/* A bad mode is fixed as e2fsck fixes it; the blocks are walked (claimed) all
	 * the same: a repair must never free blocks an inode still points at. */
	if (ino == EXT2_RESIZE_INO) {
		if (!sb_has_compat(c->sb, EXT2_FEATURE_COMPAT_RESIZE_INODE))
			return 0;
		if (mode && !mode_is_reg(mode)) {
			ck_problem(c, PR_1_RESIZE_BAD_MODE, ino, 0, NULL, 0);
			ck_add_fix(c, FIX_RESERVED_MODE, ino, 0, 0, 0);
		}
		w.resize = true;
		w.rsv_dind = ino_block(in, EXT2_DIND_BLOCK);
		w.rsv_seen = rsv_seen;
		w.rsv_good = rsv_good;
		memset(rsv_seen, 0, (size_t)c->bs / 4 / 8);
		memset(rsv_good, 0, (size_t)c->bs / 4 / 8);
	} else if (ino == EXT2_JOURNAL_INO) {
		if (!mode_is_reg(mode)) {
			ck_problem(c, PR_1_JOURNAL_BAD_MODE, ino, 0, NULL, 0);
			ck_add_fix(c, FIX_RESERVED_MODE, ino, 0, 0, EXT2_S_IFREG);
		}
	} else if (ino != EXT2_BAD_INO && mode && !mode_is_reg(mode)) {
		ck_problem(c, PR_1_RESERVED_BAD_MODE, ino, 0, NULL, 0, ino, mode);
		ck_add_fix(c, FIX_RESERVED_MODE, ino, 0, 0, 0);
	}
	if ((rc = walk_blocks(c, &w, in)))
		return rc;
	uint64_t want = w.nblk * (c->bs / 512);
	if (ino_blocks(in) != want)
		ck_problem(c, PR_1_BAD_I_BLOCKS, ino, 0, NULL, 0, ino,
		           (unsigned long long)ino_blocks(in), (unsigned long long)want);
	if (ino == EXT2_RESIZE_INO && c->rsv_gdt) {
		/* Its double-indirect block lists the reserved GDT blocks of group 0,
		 * each listing its backups: check that it still does. */
		uint32_t dind = ino_block(in, EXT2_DIND_BLOCK);
		bool ok = ck_blk_valid(c, dind);
		for (unsigned i = 0; i < EXT2_N_BLOCKS && ok; i++)
			ok = i == EXT2_DIND_BLOCK || ino_block(in, i) == 0;
		if (ok && (rc = ck_rd(c, dind, c->lvl[2], 1)))
			return rc;
		uint64_t pblk = c->first_data + 1 + c->gdt_blocks;
		uint32_t per = c->bs / 4;
		for (uint32_t i = 0; ok && i < c->rsv_gdt; i++, pblk++) {
			uint32_t off = (c->gdt_blocks + i) % per;
			if (get_le32(c->lvl[2] + 4 * off) != pblk) {
				ok = false;
				break;
			}
			if (dind == w.rsv_dind && bit_test(rsv_seen, off)) {
				ok = bit_test(rsv_good, off); /* the walk read it */
				continue;
			}
			if ((rc = ck_rd(c, pblk, c->lvl[1], 1)))
				return rc;
			ok = rsv_backups_ok(c, c->lvl[1], pblk);
		}
		if (!ok) {
			ck_problem(c, PR_1_RESIZE_INVALID, ino, 0, NULL, 0);
			ck_add_fix(c, FIX_RESIZE_INODE, ino, 0, 0, 0);
		}
	}
	return 0;
}

/* A deleted inode (links 0): a deletion time, and not one that is an orphan list's
 * link to the next inode (a list a crash or damage left behind: e2fsck's
 * PR_1_LOW_DTIME, judged only when the superblock's times are believable). */
static void check_deleted(struct ck *c, uint32_t ino, const uint8_t *in)
{
	uint32_t dt = get_le32(in + I_DTIME), ic = sb_get32(c->sb, SB_INODES_COUNT);
	bool times_ok = true;
	static const uint16_t times[] = {SB_WTIME, SB_MTIME, SB_MKFS_TIME};
	for (unsigned i = 0; i < 3; i++)
		times_ok &= !sb_get32(c->sb, times[i]) || sb_get32(c->sb, times[i]) >= ic;
	if (dt && dt < ic && times_ok) {
		ck_problem(c, PR_1_LOW_DTIME, ino, 0, NULL, 0, ino, dt);
		ck_add_fix(c, FIX_DTIME, ino, 0, 0, 1);
	} else if (!dt && ino_mode(in)) {
		ck_problem(c, PR_1_ZERO_DTIME, ino, 0, NULL, 0, ino);
		ck_add_fix(c, FIX_DTIME, ino, 0, 0, 1);
	}
}

/* skip[b] for the blocks [b0, b1) of a chunk starting at blk: the device knows them
 * zeroes. One question for the whole range, halved only where the answer is no, so an
 * unused group's table costs one. */
static void zero_blocks(struct ck *c, uint64_t blk, uint32_t b0, uint32_t b1, bool *skip)
{
	if (ck_zero(c, blk + b0, b1 - b0)) {
		for (uint32_t b = b0; b < b1; b++)
			skip[b] = true;
		return;
	}
	if (b1 - b0 == 1)
		return;
	uint32_t mid = b0 + (b1 - b0) / 2;
	zero_blocks(c, blk, b0, mid, skip);
	zero_blocks(c, blk, mid, b1, skip);
}

/* Reads the chunk's nblk inode-table blocks from blk into c->ibuf, all but those the
 * device knows are zeroes and that hold no reserved inode (first: the chunk's first
 * inode); skip[b] says which were left out. Pass 1 does nothing with a zero inode past
 * the reserved ones (no links: check_deleted, which finds no dtime and no mode; an
 * all-zero inode's checksum is valid), so it need not read them: mkfs leaves most of
 * an inode table so, and every crash state's fsck read it whole. */
static int read_itable(struct ck *c, uint64_t blk, uint32_t nblk, uint32_t first, bool *skip)
{
	uint32_t ipb = c->bs / c->isz, b0 = 0;
	/* reserved inodes (the root among them) are checked whatever they hold, even
	 * under a superblock whose first inode is damaged */
	uint32_t reserved =
	    c->first_ino > EXT2_GOOD_OLD_FIRST_INO ? c->first_ino : EXT2_GOOD_OLD_FIRST_INO;
	while (b0 < nblk && first + b0 * ipb < reserved)
		skip[b0++] = false;
	for (uint32_t b = b0; b < nblk; b++)
		skip[b] = false;
	if (b0 < nblk)
		zero_blocks(c, blk, b0, nblk, skip);
	for (uint32_t b = 0, e; b < nblk; b = e) {
		for (e = b + 1; e < nblk && skip[e] == skip[b];)
			e++;
		int rc = skip[b] ? 0 : ck_rd(c, blk + b, c->ibuf + (size_t)b * c->bs, e - b);
		if (rc)
			return rc;
	}
	return 0;
}

#define PASS1_CHUNK (256u * 1024)

int ck_pass1(struct ck *c)
{
	uint32_t per_chunk = PASS1_CHUNK / c->isz;
	if (per_chunk < c->bs / c->isz)
		per_chunk = c->bs / c->isz;
	per_chunk -= per_chunk % (c->bs / c->isz);
	uint32_t ipb = c->bs / c->isz;
	bool skip[PASS1_CHUNK / 1024]; /* a chunk's blocks (1 KiB the smallest) */
	int rc;
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint32_t n = ck_grp_inodes_used(c, g);
		if (c->grp_bad[g])
			n = 0;
		uint64_t it = gd_inode_table(ck_gd(c, g), c->desc_size);
		for (uint32_t i0 = 0; i0 < n && !c->stop; i0 += per_chunk) {
			uint32_t k = n - i0 < per_chunk ? n - i0 : per_chunk;
			uint64_t byte0 = (uint64_t)i0 * c->isz;
			uint32_t nblk = (uint32_t)(((uint64_t)k * c->isz + c->bs - 1) / c->bs);
			if ((rc = read_itable(c, it + byte0 / c->bs, nblk, g * c->ipg + i0 + 1,
			                      skip)))
				return rc;
			for (uint32_t j = 0; j < k && !c->stop; j++) {
				uint32_t ino = g * c->ipg + i0 + j + 1;
				const uint8_t *in = c->ibuf + (size_t)j * c->isz;
				if (skip[j / ipb]) { /* zeroes: what reading them would give */
					uint32_t n_skip = ipb - j % ipb;
					if (n_skip > k - j)
						n_skip = k - j;
					memset(&c->links[ino], 0, n_skip * sizeof(*c->links));
					memset(&c->gen[ino], 0, n_skip * sizeof(*c->gen));
					j += n_skip - 1;
					continue;
				}
				if (c->csum && !fsck_inode_csum_ok(c->seed, ino, in, c->isz)) {
					ck_problem(c, PR_1_INODE_CSUM, ino, 0, NULL, 0, ino);
					ck_add_fix(c, FIX_INODE_CSUM, ino, 0, 0, 0);
				}
				c->links[ino] = ino_links(in);
				c->gen[ino] = get_le32(in + I_GENERATION);
				if (ino < c->first_ino && ino != EXT2_ROOT_INO) {
					bit_set(c->iused, ino - 1);
					if ((rc = check_reserved(c, ino, in)))
						return rc;
					continue;
				}
				if (ino == EXT2_ROOT_INO) {
					bit_set(c->iused, ino - 1);
					if (!mode_is_dir(ino_mode(in))) {
						ck_problem(c, PR_1_ROOT_NO_DIR, ino, 0, NULL, 0);
						/* a damaged mode over a directory's blocks: the
						 * mode is given back (check_inode), as e2fsck's
						 * check_is_really_dir would, rather than the
						 * root cleared with everything under it */
						if (!really_dir(c, ino, in))
							continue;
					}
					if (get_le32(in + I_DTIME))
						ck_problem(c, PR_1_ROOT_DTIME, ino, 0, NULL, 0);
				} else if (!ino_links(in)) {
					check_deleted(c, ino, in);
					continue;
				} else {
					bit_set(c->iused, ino - 1);
					if (get_le32(in + I_DTIME)) {
						ck_problem(c, PR_1_SET_DTIME, ino, 0, NULL, 0, ino);
						ck_add_fix(c, FIX_DTIME, ino, 0, 0, 0);
					}
				}
				if ((rc = check_inode(c, ino, in)))
					return rc;
			}
		}
	}
	/* Extended attribute blocks: reference counts. */
	for (size_t i = 0; i < c->nea && !c->stop; i++)
		if (c->ea[3 * i + 1] != c->ea[3 * i + 2])
			ck_problem(c, PR_1_EA_REFCOUNT, 0, c->ea[3 * i], NULL, 0, c->ea[3 * i],
			           c->ea[3 * i + 1], c->ea[3 * i + 2]);
	return 0;
}

/* The fast scrub: what a mount after an unclean shutdown can afford. */
int ck_fast_scan(struct ck *c)
{
	uint32_t per_chunk = 256u * 1024 / c->isz;
	per_chunk -= per_chunk % (c->bs / c->isz);
	if (!per_chunk)
		per_chunk = c->bs / c->isz;
	int rc;
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint32_t n = c->grp_bad[g] ? 0 : ck_grp_inodes_used(c, g);
		uint64_t it = gd_inode_table(ck_gd(c, g), c->desc_size);
		for (uint32_t i0 = 0; i0 < n && !c->stop; i0 += per_chunk) {
			uint32_t k = n - i0 < per_chunk ? n - i0 : per_chunk;
			uint32_t nblk = (uint32_t)(((uint64_t)k * c->isz + c->bs - 1) / c->bs);
			if ((rc = ck_rd(c, it + (uint64_t)i0 * c->isz / c->bs, c->ibuf, nblk)))
				return rc;
			for (uint32_t j = 0; j < k && !c->stop; j++) {
				uint32_t ino = g * c->ipg + i0 + j + 1;
				const uint8_t *in = c->ibuf + (size_t)j * c->isz;
				if (c->csum && !fsck_inode_csum_ok(c->seed, ino, in, c->isz))
					ck_problem(c, PR_1_INODE_CSUM, ino, 0, NULL, 0, ino);
				uint16_t m = ino_mode(in);
				if (ino < c->first_ino || !ino_links(in))
					continue;
				if (!mode_to_ftype(m))
					ck_problem(c, PR_1_BAD_MODE, ino, 0, NULL, 0, ino, m);
				if (get_le32(in + I_DTIME))
					ck_problem(c, PR_1_SET_DTIME, ino, 0, NULL, 0, ino);
				if (mode_is_reg(m) || mode_is_dir(m) ||
				    (mode_is_lnk(m) && ino_size(in) >= 60))
					for (unsigned i = 0; i < EXT2_N_BLOCKS; i++) {
						uint32_t b = ino_block(in, i);
						if (b && !ck_blk_valid(c, b)) {
							ck_problem(c, PR_1_FAST_ILLEGAL_BLOCK, ino,
							           b, NULL, 0, ino, b);
							break;
						}
					}
			}
		}
	}
	return 0;
}
