// SPDX-License-Identifier: GPL-2.0-or-later
/* repair_global.c — the global fixes, computed only from a round whose check found no
 * local damage (repair.c): directories reconnected to lost+found and their '..', link
 * counts, then the block and inode bitmaps and the summary counts rewritten from what
 * the passes counted. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/fsck_int.h"

static int find_dir_space(struct ck *c, uint32_t dir, uint32_t need, uint64_t *pblk, uint32_t *off,
                          uint8_t *b)
{
	if (!dir || !(c->iflag[dir] & IF_DIR) || (c->iflag[dir] & IF_HTREE))
		return -ENOENT;
	for (size_t i = 0; i < c->ndb; i++) {
		if (c->db[i].ino != dir)
			continue;
		int rc = ck_rd(c, c->db[i].pblk, b, 1);
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

/* Adds the entry `name` -> ino to directory `dir`; 0 also when there is no room. */
static int add_entry(struct ck *c, uint32_t dir, uint32_t ino, const char *name, int nl)
{
	uint32_t need = ext2_dir_rec_len((uint32_t)nl);
	uint8_t *b = c->lvl[0];
	uint64_t pblk;
	uint32_t off;
	int rc = find_dir_space(c, dir, need, &pblk, &off, b);
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
	ck_dirblk_csum(c, dir, b);
	if ((rc = ck_wr(c, pblk, b)))
		return rc;
	c->counted[ino]++;
	c->r->nr_fixed++;
	return 0;
}

static int reconnect(struct ck *c, uint32_t ino)
{
	char name[16];
	int nl = snprintf(name, sizeof(name), "#%u", ino);
	return add_entry(c, c->lpf, ino, name, nl);
}

/* Points a directory's '..' at `parent`. */
static int set_dotdot(struct ck *c, uint32_t ino, uint32_t parent)
{
	for (size_t i = 0; i < c->ndb; i++) {
		if (c->db[i].ino != ino || c->db[i].lblk != 0)
			continue;
		uint8_t *b = c->lvl[0];
		int rc = ck_rd(c, c->db[i].pblk, b, 1);
		if (rc)
			return rc;
		uint32_t rl = de_rec_len(b);
		if (rl < 12 || rl + 12 > c->bs || de_name_len(b + rl) != 2)
			return 0;
		put_le32(b + rl + DE_INODE, parent);
		if (c->filetype)
			b[rl + DE_FILE_TYPE] = EXT2_FT_DIR;
		ck_dirblk_csum(c, ino, b);
		c->r->nr_fixed++;
		return ck_wr(c, c->db[i].pblk, b);
	}
	return 0;
}

static int fix_links(struct ck *c)
{
	uint8_t in[1024];
	int rc;
	if (c->dotdot[EXT2_ROOT_INO] != EXT2_ROOT_INO &&
	    (rc = set_dotdot(c, EXT2_ROOT_INO, EXT2_ROOT_INO)))
		return rc;
	for (uint32_t ino = 1; ino <= c->ninodes; ino++) {
		if (!(c->iflag[ino] & IF_DIR) || !bit_test(c->iused, ino - 1) ||
		    ino == EXT2_ROOT_INO)
			continue;
		if (!(c->iflag[ino] & IF_REACHED) || !c->parent[ino]) {
			if (!c->lpf && ino == c->first_ino) {
				/* mke2fs's lost+found lost its name: give it back */
				if ((rc = add_entry(c, EXT2_ROOT_INO, ino, "lost+found", 10)))
					return rc;
				if ((rc = set_dotdot(c, ino, EXT2_ROOT_INO)))
					return rc;
				c->lpf = ino;
				continue;
			}
			if (ino == c->lpf || !c->lpf)
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
		if ((c->iflag[ino] & IF_DIR) && want > EXT2_LINK_MAX) {
			/* a link count of 1 means "too many" only with dir_nlink: set it */
			want = 1;
			if (!sb_has_ro_compat(c->sb, EXT4_FEATURE_RO_COMPAT_DIR_NLINK)) {
				sb_put32(c->sb, SB_FEATURE_RO_COMPAT,
				         sb_get32(c->sb, SB_FEATURE_RO_COMPAT) |
				             EXT4_FEATURE_RO_COMPAT_DIR_NLINK);
				c->r->nr_fixed++;
				if ((rc = ck_write_sb(c)))
					return rc;
			}
		}
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
				if ((rc = ck_wr(c, bm, b)))
					return rc;
				if (fl & EXT4_BG_BLOCK_UNINIT) {
					put_le16(d + GD_FLAGS, gd_flags(d) & ~EXT4_BG_BLOCK_UNINIT);
					gdt_dirty = true;
				}
			}
			if (c->csum && !(gd_flags(d) & EXT4_BG_BLOCK_UNINIT)) {
				uint32_t s = ext2_bitmap_csum(c->seed, b, bbytes);
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
			    (rc = ck_wr(c, gd_inode_bitmap(d, c->desc_size), b)))
				return rc;
			if (c->csum) {
				uint32_t s = ext2_bitmap_csum(c->seed, b, ibytes);
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
		    ext2_gd_csum(c->seed, g, d, c->desc_size) != get_le16(d + GD_CHECKSUM)) {
			put_le16(d + GD_CHECKSUM, ext2_gd_csum(c->seed, g, d, c->desc_size));
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
	/* The bitmaps now free the orphans' inodes and blocks (links 0 is unused, as
	 * e2fsck counts it): a list left behind would make a mount free them again. */
	if (sb_get32(c->sb, SB_LAST_ORPHAN)) {
		sb_put32(c->sb, SB_LAST_ORPHAN, 0);
		sb_dirty = true;
	}
	if (sb_dirty) {
		sb_put32(c->sb, SB_FREE_BLOCKS_LO, (uint32_t)free_b);
		sb_put32(c->sb, SB_FREE_INODES, (uint32_t)free_i);
		c->r->nr_fixed++;
		if ((rc = ck_write_sb(c)))
			return rc;
	}
	return 0;
}

int fsck_rewrite_maps(struct ck *c)
{
	/* Counts and maps are only trusted from a round without local fixes. */
	if ((c->nfx && !c->force_maps) || c->o->fast || !c->links)
		return 0;
	int rc = fix_links(c);
	if (!rc)
		rc = fix_maps(c);
	return rc;
}
