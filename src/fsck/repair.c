/* repair.c — fixes for the damage crashes leave, applied from what a check found:
 * local fixes first (entries, inode fields, checksums), and only on a round whose
 * check found none of those, the global ones computed from a consistent state (link
 * counts, lost+found, bitmaps and summary counts). fsck_check() loops and re-checks. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "fs/format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/fsck_int.h"

static int rdb(struct ck *c, uint64_t b, uint8_t *buf)
{
	return blk_pread(c->d, b * c->bs, c->bs, buf);
}

static int wrb(struct ck *c, uint64_t b, const uint8_t *buf)
{
	c->r->modified = true;
	return blk_pwrite(c->d, b * c->bs, c->bs, buf, 0);
}

/* Rewrites whichever checksum a directory block carries. */
static void dirblk_csum(struct ck *c, uint32_t ino, uint8_t *b)
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
	dirblk_csum(c, f->ino, b);
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
	case FIX_CLEAR_HTREE:
		/* Under metadata_csum the index blocks carry no dirent tail: a linear
		 * directory needs them rebuilt, which this repair does not do. */
		if (c->csum)
			return 0;
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

static int fix_dirblk_csum(struct ck *c, const struct fix *f)
{
	uint8_t *b = c->lvl[0];
	int rc = rdb(c, f->pblk, b);
	if (rc)
		return rc;
	dirblk_csum(c, f->ino, b);
	c->r->nr_fixed++;
	return wrb(c, f->pblk, b);
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
		default: rc = fix_inode(c, f); break;
		}
	}
	return rc;
}

/* ---- global fixes ---------------------------------------------------------------- */
static int find_lpf_block(struct ck *c, uint32_t need, uint64_t *pblk, uint32_t *off, uint8_t *b)
{
	if (!c->lpf || !(c->iflag[c->lpf] & IF_DIR) || (c->iflag[c->lpf] & IF_HTREE))
		return -ENOENT;
	for (size_t i = 0; i < c->ndb; i++) {
		if (c->db[i].ino != c->lpf)
			continue;
		int rc = rdb(c, c->db[i].pblk, b);
		if (rc)
			return rc;
		uint32_t end = c->csum ? c->bs - DIRENT_TAIL_SIZE : c->bs, o = 0;
		while (o + 8 <= end) {
			uint32_t rl = de_rec_len(b + o);
			if (rl < 8 || o + rl > end)
				break;
			uint32_t used = de_inode(b + o) ? ext2_dir_rec_len(de_name_len(b + o)) : 0;
			if (rl - used >= need) {
				*pblk = c->db[i].pblk;
				*off = o;
				return 0;
			}
			o += rl;
		}
	}
	return -ENOSPC;
}

static int reconnect(struct ck *c, uint32_t ino)
{
	char name[16];
	int nl = snprintf(name, sizeof(name), "#%u", ino);
	uint32_t need = ext2_dir_rec_len((uint32_t)nl);
	uint8_t *b = c->lvl[0];
	uint64_t pblk;
	uint32_t off;
	int rc = find_lpf_block(c, need, &pblk, &off, b);
	if (rc)
		return rc == -ENOENT || rc == -ENOSPC ? 0 : rc;
	uint8_t *de = b + off;
	uint32_t rl = de_rec_len(de);
	uint8_t ft = c->filetype ? c->ftype[ino] : 0;
	if (de_inode(de)) {
		uint32_t used = ext2_dir_rec_len(de_name_len(de));
		put_le16(de + DE_REC_LEN, (uint16_t)used);
		de_set(de + used, ino, (uint16_t)(rl - used), name, (uint8_t)nl, ft);
	} else {
		de_set(de, ino, (uint16_t)rl, name, (uint8_t)nl, ft);
	}
	dirblk_csum(c, c->lpf, b);
	if ((rc = wrb(c, pblk, b)))
		return rc;
	c->counted[ino]++;
	c->r->nr_fixed++;
	return 0;
}

/* Points a directory's '..' at `parent`. */
static int set_dotdot(struct ck *c, uint32_t ino, uint32_t parent)
{
	for (size_t i = 0; i < c->ndb; i++) {
		if (c->db[i].ino != ino || c->db[i].lblk != 0)
			continue;
		uint8_t *b = c->lvl[0];
		int rc = rdb(c, c->db[i].pblk, b);
		if (rc)
			return rc;
		uint32_t rl = de_rec_len(b);
		if (rl < 12 || rl + 12 > c->bs || de_name_len(b + rl) != 2)
			return 0;
		put_le32(b + rl + DE_INODE, parent);
		dirblk_csum(c, ino, b);
		c->r->nr_fixed++;
		return wrb(c, c->db[i].pblk, b);
	}
	return 0;
}

static int fix_links(struct ck *c)
{
	uint8_t in[1024];
	int rc;
	for (uint32_t ino = 1; ino <= c->ninodes; ino++) {
		if (!(c->iflag[ino] & IF_DIR) || !bit_test(c->iused, ino - 1) ||
		    ino == EXT2_ROOT_INO)
			continue;
		if (!(c->iflag[ino] & IF_REACHED) || !c->parent[ino]) {
			if (ino == c->lpf)
				continue;
			if ((rc = reconnect(c, ino)))
				return rc;
			if ((rc = set_dotdot(c, ino, c->lpf)))
				return rc;
		} else if (c->dotdot[ino] != c->parent[ino] &&
		           (rc = set_dotdot(c, ino, c->parent[ino]))) {
			return rc;
		}
	}
	for (uint32_t ino = 1; ino <= c->ninodes; ino++) {
		if (ino == EXT2_BAD_INO || (ino > EXT2_ROOT_INO && ino < c->first_ino) ||
		    !bit_test(c->iused, ino - 1))
			continue;
		uint32_t want = c->counted[ino];
		if (want == 0 && (c->iflag[ino] & IF_DIR))
			continue; /* reconnected above (or not possible) */
		if (want == 0 && (c->iflag[ino] & IF_ZEROLEN)) {
			/* e2fsck clears unattached empty inodes */
			if ((rc = ck_read_inode(c, ino, in)))
				return rc;
			put_le16(in + I_LINKS_COUNT, 0);
			put_le32(in + I_DTIME, (uint32_t)time(NULL));
			if ((rc = ck_write_inode(c, ino, in)))
				return rc;
			bit_clear(c->iused, ino - 1);
			c->r->nr_fixed++;
			continue;
		}
		if (want == 0) {
			if ((rc = reconnect(c, ino)))
				return rc;
			want = c->counted[ino];
			if (!want)
				continue;
		}
		if ((c->iflag[ino] & IF_DIR) && want > EXT2_LINK_MAX)
			want = 1;
		if (c->links[ino] != want) {
			if ((rc = ck_read_inode(c, ino, in)))
				return rc;
			put_le16(in + I_LINKS_COUNT, (uint16_t)want);
			if ((rc = ck_write_inode(c, ino, in)))
				return rc;
			c->r->nr_fixed++;
		}
	}
	return 0;
}

static int fix_maps(struct ck *c)
{
	uint32_t bbytes = c->bpg / 8, ibytes = c->ipg / 8;
	uint8_t *b = c->lvl[0];
	uint64_t free_b = 0, free_i = 0;
	bool gdt_dirty = false;
	int rc;
	if (c->had_dup)
		return 0; /* a bitmap may sit on another structure: never write through it */
	for (uint32_t g = 0; g < c->ngroups; g++) {
		if (c->grp_bad[g])
			return 0; /* relocating group metadata is beyond these repairs */
		uint8_t *d = c->gdt + (size_t)g * c->desc_size;
		uint64_t f = c->first_data + (uint64_t)g * c->bpg;
		uint32_t nb = c->nblocks - f < c->bpg ? (uint32_t)(c->nblocks - f) : c->bpg;
		uint32_t fb = 0, fi = 0, dirs = 0;
		uint16_t fl = c->csum ? gd_flags(d) : 0;
		memset(b, 0xFF, c->bs);
		memset(b, 0, bbytes);
		for (uint32_t i = 0; i < c->bpg; i++)
			if (i >= nb || bit_test(c->bused, f + i))
				bit_set(b, i);
			else
				fb++;
		if (memcmp(b, c->bbm + (size_t)g * bbytes, bbytes) ||
		    !(fl & EXT4_BG_BLOCK_UNINIT)) {
			uint64_t bm = gd_block_bitmap(d, c->desc_size);
			if (memcmp(b, c->bbm + (size_t)g * bbytes, bbytes)) {
				if ((rc = wrb(c, bm, b)))
					return rc;
				if (fl & EXT4_BG_BLOCK_UNINIT) {
					put_le16(d + GD_FLAGS, gd_flags(d) & ~EXT4_BG_BLOCK_UNINIT);
					gdt_dirty = true;
				}
			}
			if (c->csum && !(gd_flags(d) & EXT4_BG_BLOCK_UNINIT)) {
				uint32_t s = fsck_bitmap_csum(c->seed, b, bbytes);
				if (get_le16(d + GD_BLOCK_BITMAP_CSUM_LO) != (uint16_t)s) {
					put_le16(d + GD_BLOCK_BITMAP_CSUM_LO, (uint16_t)s);
					gdt_dirty = true;
				}
			}
		}
		memset(b, 0xFF, c->bs);
		memset(b, 0, ibytes);
		for (uint32_t i = 0; i < c->ipg; i++) {
			uint32_t ino = g * c->ipg + i + 1;
			if (bit_test(c->iused, ino - 1)) {
				bit_set(b, i);
				if (c->iflag[ino] & IF_DIR)
					dirs++;
			} else {
				fi++;
			}
		}
		if (!(fl & EXT4_BG_INODE_UNINIT)) {
			if (memcmp(b, c->ibm + (size_t)g * ibytes, ibytes) &&
			    (rc = wrb(c, gd_inode_bitmap(d, c->desc_size), b)))
				return rc;
			if (c->csum) {
				uint32_t s = fsck_bitmap_csum(c->seed, b, ibytes);
				if (get_le16(d + GD_INODE_BITMAP_CSUM_LO) != (uint16_t)s) {
					put_le16(d + GD_INODE_BITMAP_CSUM_LO, (uint16_t)s);
					gdt_dirty = true;
				}
			}
		}
		free_b += fb;
		free_i += fi;
		if (gd_free_blocks(d, c->desc_size) != fb ||
		    gd_free_inodes(d, c->desc_size) != fi ||
		    gd_used_dirs(d, c->desc_size) != dirs) {
			gd_set_free_blocks(d, c->desc_size, fb);
			gd_set_free_inodes(d, c->desc_size, fi);
			gd_set_used_dirs(d, c->desc_size, dirs);
			gdt_dirty = true;
		}
		if (c->csum &&
		    fsck_gd_csum(c->seed, g, d, c->desc_size) != get_le16(d + GD_CHECKSUM)) {
			put_le16(d + GD_CHECKSUM, fsck_gd_csum(c->seed, g, d, c->desc_size));
			gdt_dirty = true;
		}
	}
	if (gdt_dirty) {
		c->r->modified = true;
		if ((rc = blk_pwrite(c->d, (uint64_t)(c->first_data + 1) * c->bs,
		                     (size_t)c->gdt_blocks * c->bs, c->gdt, 0)))
			return rc;
		c->r->nr_fixed++;
	}
	bool sb_dirty =
	    sb_free_blocks(c->sb, false) != free_b || sb_get32(c->sb, SB_FREE_INODES) != free_i;
	if (sb_dirty) {
		sb_put32(c->sb, SB_FREE_BLOCKS_LO, (uint32_t)free_b);
		sb_put32(c->sb, SB_FREE_INODES, (uint32_t)free_i);
		if (c->csum)
			sb_put32(c->sb, SB_CHECKSUM, fsck_sb_csum(c->sb));
		uint8_t head[4096];
		if ((rc = blk_pread(c->d, 0, sizeof(head), head)))
			return rc;
		memcpy(head + EXT2_SB_OFFSET, c->sb, EXT2_SB_SIZE);
		c->r->modified = true;
		c->r->nr_fixed++;
		if ((rc = blk_pwrite(c->d, 0, sizeof(head), head, 0)))
			return rc;
	}
	return 0;
}

int fsck_rewrite_maps(struct ck *c)
{
	/* Counts and maps are only trusted from a round without local fixes. */
	if (c->nfx || c->o->fast || !c->links)
		return 0;
	int rc = fix_links(c);
	if (!rc)
		rc = fix_maps(c);
	return rc;
}
