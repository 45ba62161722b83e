// SPDX-License-Identifier: GPL-2.0-or-later
/* repair.c — the local fixes for the damage crashes leave, applied from what a check
 * found: entries, inode fields, checksums. Only on a round whose check found none of
 * those do the global ones run (repair_global.c: link counts, lost+found, bitmaps and
 * summary counts; repair_super.c: superblock and descriptors from their backups).
 * fsck_check() loops and re-checks. It reaches the image only through image.c and the
 * fix list (fsck_ctx.h). */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/fsck_int.h"

static int rdb(struct ck *c, uint64_t b, uint8_t *buf)
{
	return blk_pread(c->d, b * c->bs, c->bs, buf);
}

static int wrb(struct ck *c, uint64_t b, const uint8_t *buf)
{
	return ck_wr(c, b, buf);
}

/* Rewrites whichever checksum a directory block carries. */
void ck_dirblk_csum(struct ck *c, uint32_t ino, uint8_t *b)
{
	if (!c->csum)
		return;
	if (de_is_tail(b + c->bs - DIRENT_TAIL_SIZE)) {
		put_le32(b + c->bs - DIRENT_TAIL_SIZE + DT_CHECKSUM,
		         fsck_dirent_csum(c->seed, ino, c->gen[ino], b, c->bs));
		return;
	}
	uint32_t coff = de_inode(b) == 0 ? DX_NODE_ENTRIES : DX_ROOT_ENTRIES;
	fsck_dx_csum_set(c->seed, ino, c->gen[ino], b, c->bs, coff);
}

/* Under metadata_csum, a leaf block that lost its tail gets one back when its last
 * entry has 12 bytes to spare (e2fsck's "directory has no checksum" fix). */
static bool make_tail(struct ck *c, uint8_t *b)
{
	if (!c->csum || de_is_tail(b + c->bs - DIRENT_TAIL_SIZE))
		return true;
	uint32_t off = 0, last = UINT32_MAX;
	while (off < c->bs) {
		uint32_t rl = c->bs - off >= 8 ? de_rec_len(b + off) : 0;
		if (rl < 12 || rl % 4 || off + rl > c->bs)
			return false;
		last = off;
		off += rl;
	}
	uint32_t rl = de_rec_len(b + last);
	uint32_t used =
	    de_inode(b + last) || last == 0 ? ext2_dir_rec_len(de_name_len(b + last)) : 12;
	if (rl < used + DIRENT_TAIL_SIZE)
		return false;
	put_le16(b + last + DE_REC_LEN, (uint16_t)(rl - DIRENT_TAIL_SIZE));
	de_set_tail(b + c->bs - DIRENT_TAIL_SIZE);
	return true;
}

/* An empty directory block for directory ino (with its tail under metadata_csum). */
static void empty_dirblock(struct ck *c, uint32_t ino, uint8_t *b)
{
	memset(b, 0, c->bs);
	uint32_t end = c->csum ? c->bs - DIRENT_TAIL_SIZE : c->bs;
	put_le16(b + DE_REC_LEN, (uint16_t)end);
	if (c->csum) {
		de_set_tail(b + end);
		ck_dirblk_csum(c, ino, b);
	}
}

static int fix_dirent(struct ck *c, const struct fix *f)
{
	uint8_t *b = c->lvl[0];
	int rc = rdb(c, f->pblk, b);
	if (rc)
		return rc;
	uint32_t end = c->bs, off = 0, prev = UINT32_MAX;
	while (off < f->off && off + 8 <= end) {
		uint32_t rl = de_rec_len(b + off);
		if (rl < 8 || off + rl > end)
			return 0; /* no longer the block the check saw */
		prev = off;
		off += rl;
	}
	if (off != f->off || (f->kind == FIX_CLEAR_DIRENT && de_inode(b + off) != f->val))
		return 0;
	if (f->kind == FIX_FILETYPE) {
		b[off + DE_FILE_TYPE] = (uint8_t)f->val;
	} else if (prev == UINT32_MAX) {
		put_le32(b + off + DE_INODE, 0);
	} else {
		put_le16(b + prev + DE_REC_LEN,
		         (uint16_t)(de_rec_len(b + prev) + de_rec_len(b + off)));
	}
	ck_dirblk_csum(c, f->ino, b);
	c->r->nr_fixed++;
	return wrb(c, f->pblk, b);
}

/* Zeroes the out-of-range pointers of an inode's block tree (levels below are
 * never descended into through a bad pointer). */
static int zero_bad(struct ck *c, uint32_t b, int level, int *changed)
{
	if (level == 0)
		return 0;
	uint8_t *buf = c->lvl[level - 1];
	int rc = rdb(c, b, buf);
	if (rc)
		return rc;
	bool dirty = false;
	for (uint32_t i = 0; i < c->bs / 4; i++) {
		uint32_t e = get_le32(buf + 4 * i);
		if (!e)
			continue;
		if (e < c->first_data || e >= c->nblocks) {
			put_le32(buf + 4 * i, 0);
			dirty = true;
		} else if (level > 1) {
			if ((rc = zero_bad(c, e, level - 1, changed)))
				return rc;
			if ((rc = rdb(c, b, buf))) /* the level buffer was reused below */
				return rc;
		}
	}
	if (dirty) {
		(*changed)++;
		/* re-apply on the fresh copy */
		for (uint32_t i = 0; i < c->bs / 4; i++) {
			uint32_t e = get_le32(buf + 4 * i);
			if (e && (e < c->first_data || e >= c->nblocks))
				put_le32(buf + 4 * i, 0);
		}
		return wrb(c, b, buf);
	}
	return 0;
}

static int untail_index(struct ck *c, uint32_t ino)
{
	uint8_t *b = c->lvl[1];
	uint32_t tail = c->bs - DIRENT_TAIL_SIZE;
	for (size_t i = 0; i < c->ndb; i++) {
		if (c->db[i].ino != ino)
			continue;
		int rc = rdb(c, c->db[i].pblk, b);
		if (rc)
			return rc;
		if (de_is_tail(b + tail))
			continue;
		uint32_t last; /* the entry that runs to the end of the block */
		if (c->db[i].lblk == 0 && de_rec_len(b) == 12 && de_rec_len(b + 12) == c->bs - 12)
			last = 12;
		else if (de_inode(b) == 0 && de_rec_len(b) == c->bs)
			last = 0;
		else
			continue;
		put_le16(b + last + DE_REC_LEN, (uint16_t)(tail - last));
		de_set_tail(b + tail);
		put_le32(b + tail + DT_CHECKSUM,
		         fsck_dirent_csum(c->seed, ino, c->gen[ino], b, c->bs));
		if ((rc = wrb(c, c->db[i].pblk, b)))
			return rc;
	}
	return 0;
}

/* A private copy of the multiply-claimed block f->val for the pointer at (f->pblk,
 * f->off); the inode's own slots are changed in `in`. 1: nothing to do (the pointer
 * moved on); 0 or -errno otherwise. */
/* A block no one uses, by the check's count (marked used); 0 when there is none. */
static uint64_t alloc_block(struct ck *c)
{
	uint64_t nb = 0;
	for (uint64_t n = 0; n < c->nblocks && !nb; n++) {
		uint64_t b = c->first_data + (c->alloc_cursor + n) % (c->nblocks - c->first_data);
		if (!bit_test(c->bused, b))
			nb = b;
	}
	if (!nb)
		return 0;
	c->alloc_cursor = nb - c->first_data + 1;
	bit_set(c->bused, nb);
	return nb;
}

static int fix_clone(struct ck *c, const struct fix *f, uint8_t *in, int *changed)
{
	int rc;
	if (f->ino == EXT2_RESIZE_INO)
		return 1;
	uint64_t nb = alloc_block(c);
	if (!nb)
		return 1;
	uint8_t *blk = c->lvl[2];
	if ((rc = rdb(c, f->val, blk)) || (rc = wrb(c, nb, blk)))
		return rc;
	if (f->pblk == 0) {
		if (f->off >= EXT2_N_BLOCKS || ino_block(in, f->off) != f->val)
			return 1;
		ino_set_block(in, f->off, (uint32_t)nb);
		*changed = 1;
	} else {
		if ((rc = rdb(c, f->pblk, blk)))
			return rc;
		if (f->off >= c->bs / 4 || get_le32(blk + 4 * f->off) != f->val)
			return 1;
		put_le32(blk + 4 * f->off, (uint32_t)nb);
		c->r->nr_fixed++;
		return wrb(c, f->pblk, blk);
	}
	return 0;
}

/* The resize inode made again, as mke2fs makes it, from the geometry alone: a new
 * double-indirect block listing the reserved GDT blocks of group 0, each listing its
 * backups. Nothing the damaged inode pointed at is read or written. */
static int make_resize_inode(struct ck *c)
{
	if (c->sb_bad || c->gdt_bad || c->had_dup || !c->rsv_gdt || !ck_itable_plausible(c))
		return 0;
	uint64_t dind = 0;
	for (uint64_t b = c->first_data + 1 + c->gdt_blocks + c->rsv_gdt; b < c->nblocks; b++)
		if (!bit_test(c->bused, b)) {
			dind = b;
			break;
		}
	if (!dind)
		return 0;
	bit_set(c->bused, dind);
	uint32_t per = c->bs / 4, nback = 0;
	uint8_t *d = c->lvl[1], *g = c->lvl[2];
	memset(d, 0, c->bs);
	uint64_t pblk = c->first_data + 1 + c->gdt_blocks;
	int rc = 0;
	for (uint32_t i = 0; i < c->rsv_gdt && !rc; i++, pblk++) {
		put_le32(d + 4 * ((c->gdt_blocks + i) % per), (uint32_t)pblk);
		memset(g, 0, c->bs);
		uint32_t k = 0;
		for (uint32_t grp = 1; grp < c->ngroups && k < per; grp++)
			if (ck_grp_has_super(c, grp))
				put_le32(g + 4 * k++, (uint32_t)(pblk + (uint64_t)grp * c->bpg));
		nback = k;
		rc = wrb(c, pblk, g);
	}
	if (!rc)
		rc = wrb(c, dind, d);
	uint8_t in[1024];
	if (!rc)
		rc = ck_read_inode(c, EXT2_RESIZE_INO, in);
	if (rc)
		return rc;
	memset(in, 0, EXT2_GOOD_OLD_INODE_SIZE);
	put_le16(in + I_MODE, EXT2_S_IFREG | 0600);
	put_le16(in + I_LINKS_COUNT, 1);
	ino_set_block(in, EXT2_DIND_BLOCK, (uint32_t)dind);
	uint64_t p = per;
	ino_set_size(in, (p * p + p + EXT2_NDIR_BLOCKS) * c->bs);
	ino_set_blocks(in, (1 + (uint64_t)c->rsv_gdt * (1 + nback)) * (c->bs / 512));
	uint32_t now = (uint32_t)time(NULL);
	put_le32(in + I_CTIME, now);
	put_le32(in + I_MTIME, now);
	c->r->nr_fixed++;
	return ck_write_inode(c, EXT2_RESIZE_INO, in);
}

static int fix_inode(struct ck *c, const struct fix *f)
{
	uint8_t in[1024];
	int rc = ck_read_inode(c, f->ino, in);
	if (rc)
		return rc;
	int changed = 0;
	switch (f->kind) {
	case FIX_INODE_BLOCKS:
		for (unsigned i = 0; i < EXT2_N_BLOCKS; i++) {
			uint32_t b = ino_block(in, i);
			if (!b)
				continue;
			if (b < c->first_data || b >= c->nblocks) {
				ino_set_block(in, i, 0);
				changed++;
			} else if (i >= EXT2_NDIR_BLOCKS &&
			           (rc = zero_bad(c, b, (int)(i - EXT2_NDIR_BLOCKS + 1),
			                          &changed))) {
				return rc;
			}
		}
		break;
	case FIX_DTIME:
		put_le32(in + I_DTIME, f->val ? (uint32_t)time(NULL) : 0);
		changed = 1;
		break;
	case FIX_INODE_CSUM: changed = 1; break;
	case FIX_IBLOCKS:
		ino_set_blocks(in, f->val);
		changed = 1;
		break;
	case FIX_SIZE:
		ino_set_size(in, (uint64_t)f->val * c->bs);
		changed = 1;
		break;
	case FIX_CLEAR_INODE:
		if (f->ino < c->first_ino)
			return 0;
		put_le16(in + I_LINKS_COUNT, 0);
		put_le32(in + I_DTIME, (uint32_t)time(NULL));
		changed = 1;
		break;
	case FIX_CLEAR_ACL:
		ino_set_file_acl(in, 0);
		changed = 1;
		break;
	case FIX_RESERVED_MODE:
		put_le16(in + I_MODE, (uint16_t)f->val);
		changed = 1;
		break;
	case FIX_MODE_DIR:
		put_le16(in + I_MODE, (uint16_t)((ino_mode(in) & 07777) | EXT2_S_IFDIR));
		changed = 1;
		break;
	case FIX_CLEAR_IN_EA: {
		/* as e2fsck: the whole in-inode attribute area goes (its magic cleared) */
		uint32_t ex = get_le16(in + I_EXTRA_ISIZE);
		if (c->isz <= EXT2_GOOD_OLD_INODE_SIZE + ex + 4)
			return 0;
		put_le32(in + EXT2_GOOD_OLD_INODE_SIZE + ex, 0);
		changed = 1;
		break;
	}
	case FIX_INODE_FIELDS: {
		uint16_t m = ino_mode(in);
		uint32_t fl = ino_flags(in) & ~(EXT4_EXTENTS_FL | EXT4_INLINE_DATA_FL);
		if (!mode_is_dir(m) || !c->dir_index)
			fl &= ~EXT2_INDEX_FL;
		put_le32(in + I_FLAGS, fl);
		put_le32(in + I_FADDR, 0);
		put_le16(in + I_BLOCKS_HIGH, 0);
		put_le16(in + I_FILE_ACL_HIGH, 0);
		if (c->isz > EXT2_GOOD_OLD_INODE_SIZE) {
			uint16_t ex = get_le16(in + I_EXTRA_ISIZE);
			if (ex && (ex < 4 || ex > c->isz - EXT2_GOOD_OLD_INODE_SIZE || (ex & 3)))
				put_le16(in + I_EXTRA_ISIZE,
				         c->isz - EXT2_GOOD_OLD_INODE_SIZE >= EXT4_GOOD_EXTRA_ISIZE
				             ? EXT4_GOOD_EXTRA_ISIZE
				             : 0);
		}
		if (!mode_is_dir(m) && !mode_is_reg(m) && !mode_is_lnk(m))
			ino_set_size(in, 0);
		changed = 1;
		break;
	}
	case FIX_CLONE:
		if ((rc = fix_clone(c, f, in, &changed)) != 0)
			return rc < 0 ? rc : 0;
		break;
	case FIX_DIR_HOLE: {
		/* e2fsck: "Directory inode has an unallocated block. Allocate?" */
		if (f->off >= EXT2_NDIR_BLOCKS || ino_block(in, f->off) ||
		    !mode_is_dir(ino_mode(in)))
			return 0;
		uint64_t nb = alloc_block(c);
		if (!nb)
			return 0;
		uint8_t *blk = c->lvl[2];
		empty_dirblock(c, f->ino, blk);
		if ((rc = wrb(c, nb, blk)))
			return rc;
		ino_set_block(in, f->off, (uint32_t)nb);
		ino_set_blocks(in, ino_blocks(in) + c->bs / 512);
		changed = 1;
		break;
	}
	case FIX_CLEAR_HTREE:
		/* Under metadata_csum the index blocks carry no dirent tail: give them one
		 * so they read as (empty) linear blocks. */
		if (c->csum && (rc = untail_index(c, f->ino)))
			return rc;
		put_le32(in + I_FLAGS, ino_flags(in) & ~EXT2_INDEX_FL);
		changed = 1;
		break;
	default: return 0;
	}
	if (!changed)
		return 0;
	c->r->nr_fixed++;
	return ck_write_inode(c, f->ino, in);
}

/* Do valid entries run from `off` exactly to `end`? */
static bool chain_ok(const uint8_t *b, uint32_t off, uint32_t end)
{
	if (off == end)
		return true;
	while (off < end) {
		if (end - off < 12)
			return false;
		uint32_t rl = de_rec_len(b + off);
		if (rl < 12 || rl % 4 || off + rl > end ||
		    ext2_dir_rec_len(de_name_len(b + off)) > rl)
			return false;
		off += rl;
	}
	return off == end;
}

static int fix_dirblock(struct ck *c, const struct fix *f)
{
	uint8_t *b = c->lvl[0];
	int rc = rdb(c, f->pblk, b);
	if (rc)
		return rc;
	uint32_t end =
	    c->csum && de_is_tail(b + c->bs - DIRENT_TAIL_SIZE) ? c->bs - DIRENT_TAIL_SIZE : c->bs;
	if (f->kind == FIX_SALVAGE) {
		uint32_t off = f->off, prev = UINT32_MAX, o = 0;
		while (o < off) {
			uint32_t rl = de_rec_len(b + o);
			if (rl < 12 || o + rl > off)
				return 0;
			prev = o;
			o += rl;
		}
		if (o != off || off >= end)
			return 0;
		uint32_t nl = off + 8 <= end ? de_name_len(b + off) : 0;
		uint32_t want = ext2_dir_rec_len(nl);
		if (nl && off + want <= end && chain_ok(b, off + want, end)) {
			/* only the record length was hit: the entries after it are intact */
			put_le16(b + off + DE_REC_LEN, (uint16_t)want);
		} else {
			/* resynchronise: the first offset from which valid entries run to the
			 * end; what lies between is given to the previous entry (or to an
			 * empty one). At worst that is the end of the block. */
			uint32_t o2 = prev != UINT32_MAX
			                  ? prev + ext2_dir_rec_len(de_name_len(b + prev))
			                  : off + 12;
			o2 = (o2 + 3) & ~3u;
			while (o2 < end && !chain_ok(b, o2, end))
				o2 += 4;
			if (o2 > end)
				o2 = end;
			if (prev != UINT32_MAX) {
				put_le16(b + prev + DE_REC_LEN, (uint16_t)(o2 - prev));
			} else {
				if (o2 - off < 12)
					return 0;
				memset(b + off, 0, 8);
				put_le16(b + off + DE_REC_LEN, (uint16_t)(o2 - off));
			}
		}
	} else if (f->off == 0) { /* '.' */
		uint32_t rl = de_rec_len(b);
		if (rl < 12 || rl > end)
			return 0;
		uint8_t ft = c->filetype ? EXT2_FT_DIR : 0;
		if (rl > 24) {
			/* e2fsck splits a big '.'; a '..' it swallowed keeps its inode,
			 * else the root's until pass 3 finds the parent */
			uint32_t dd = de_name_len(b + 12) == 2 && b[12 + DE_NAME] == '.' &&
			                      b[13 + DE_NAME] == '.'
			                  ? de_inode(b + 12)
			                  : 0;
			uint32_t rest = rl - 12;
			de_set(b, f->ino, 12, ".", 1, ft);
			memset(b + 9, 0, 3);
			de_set(b + 12, dd ? dd : EXT2_ROOT_INO, (uint16_t)rest, "..", 2, ft);
		} else {
			de_set(b, f->ino, (uint16_t)rl, ".", 1, ft);
			if (rl > 9)
				b[9] = 0;
		}
	} else { /* '..' at offset f->val */
		uint32_t off = f->val, rl = off + 8 <= end ? de_rec_len(b + off) : 0;
		if (rl < 12 || off + rl > end)
			return 0;
		uint32_t p = c->parent[f->ino];
		uint32_t old = de_inode(b + off);
		if (!p)
			p = old && old <= c->ninodes && (c->iflag[old] & IF_DIR) ? old
			                                                         : EXT2_ROOT_INO;
		de_set(b + off, p, (uint16_t)rl, "..", 2, c->filetype ? EXT2_FT_DIR : 0);
		if (rl > 10)
			b[off + 10] = 0;
	}
	if (!make_tail(c, b))
		return 0; /* no room for the checksum: a later round sees the block again */
	ck_dirblk_csum(c, f->ino, b);
	c->r->nr_fixed++;
	return wrb(c, f->pblk, b);
}

static int fix_dirblk_csum(struct ck *c, const struct fix *f)
{
	uint8_t *b = c->lvl[0];
	int rc = rdb(c, f->pblk, b);
	if (rc)
		return rc;
	if (f->val == 2 && !make_tail(c, b))
		return 0;
	ck_dirblk_csum(c, f->ino, b);
	c->r->nr_fixed++;
	return wrb(c, f->pblk, b);
}

/* large_file set in the superblock and every backup (a backup that disagreed about a
 * feature would be taken for the better copy); revision 0 becomes dynamic first. */
static int set_large_file(struct ck *c)
{
	if (sb_get32(c->sb, SB_REV_LEVEL) == 0) {
		sb_put32(c->sb, SB_REV_LEVEL, 1);
		sb_put32(c->sb, SB_FIRST_INO, EXT2_GOOD_OLD_FIRST_INO);
		sb_put16(c->sb, SB_INODE_SIZE, EXT2_GOOD_OLD_INODE_SIZE);
	}
	sb_put32(c->sb, SB_FEATURE_RO_COMPAT,
	         sb_get32(c->sb, SB_FEATURE_RO_COMPAT) | EXT2_FEATURE_RO_COMPAT_LARGE_FILE);
	c->r->nr_fixed++;
	int rc = ck_write_sb(c);
	uint8_t copy[EXT2_SB_SIZE];
	for (uint32_t g = 1; g < c->ngroups && !rc; g++) {
		if (!ck_grp_has_super(c, g))
			continue;
		memcpy(copy, c->sb, sizeof(copy));
		sb_put16(copy, SB_BLOCK_GROUP_NR, (uint16_t)g);
		if (c->csum)
			sb_put32(copy, SB_CHECKSUM, ext2_sb_csum(copy));
		rc = blk_pwrite(c->d, ck_grp_first(c, g) * c->bs, sizeof(copy), copy, 0);
		if (rc)
			rc = bo_errf(c->err, rc, "writing the backup superblock of group %u: %s", g,
			             bo_errstr(&c->d->err, rc));
	}
	return rc;
}

/* Uninit flags on a filesystem without group checksums mean nothing: cleared (the
 * bitmaps are then read as written, and pass 5 puts them right). */
static int clear_gd_uninit(struct ck *c, uint32_t g)
{
	if (g >= c->ngroups)
		return 0;
	uint8_t *d = ck_gd(c, g);
	put_le16(d + GD_FLAGS,
	         gd_flags(d) & (uint16_t) ~(EXT4_BG_INODE_UNINIT | EXT4_BG_BLOCK_UNINIT));
	c->r->modified = true;
	c->r->nr_fixed++;
	int rc = blk_pwrite(c->d, (uint64_t)(c->first_data + 1) * c->bs,
	                    (size_t)c->gdt_blocks * c->bs, c->gdt, 0);
	return rc ? bo_errf(c->err, rc, "writing the group descriptors: %s",
	                    bo_errstr(&c->d->err, rc))
	          : 0;
}

int fsck_apply_fixes(struct ck *c)
{
	int rc = 0;
	for (size_t i = 0; i < c->nfx && !rc; i++) {
		const struct fix *f = &c->fx[i];
		/* An inode fixed once per round: later fixes of it see the next check. */
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = c->fx[j].kind == f->kind && c->fx[j].ino == f->ino &&
			      c->fx[j].pblk == f->pblk && c->fx[j].off == f->off;
		if (dup)
			continue;
		switch (f->kind) {
		case FIX_CLEAR_DIRENT:
		case FIX_FILETYPE: rc = fix_dirent(c, f); break;
		case FIX_DIRBLK_CSUM: rc = fix_dirblk_csum(c, f); break;
		case FIX_SALVAGE:
		case FIX_DOT: rc = fix_dirblock(c, f); break;
		case FIX_RESIZE_INODE: rc = make_resize_inode(c); break;
		case FIX_GD_UNINIT: rc = clear_gd_uninit(c, f->val); break;
		case FIX_LARGE_FILE: rc = set_large_file(c); break;
		default: rc = fix_inode(c, f); break;
		}
	}
	return rc;
}
