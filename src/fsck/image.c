// SPDX-License-Identifier: GPL-2.0-or-later
/* image.c — how the checker and the repairs reach the image: blocks and inodes read
 * and written through the group descriptors, and the group geometry both work from.
 * The one interface repair.c needs from the check side. */
#include <errno.h>
#include <string.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/fsck_int.h"

int ck_rd(struct ck *c, uint64_t blk, void *buf, uint32_t nblk)
{
	int rc = blk_pread(c->d, blk * c->bs, (size_t)nblk * c->bs, buf);
	if (rc)
		return bo_errf(c->err, rc, "reading block %llu: %s", (unsigned long long)blk,
		               bo_errstr(&c->d->err, rc));
	return 0;
}

bool ck_zero(struct ck *c, uint64_t blk, uint32_t nblk)
{
	uint32_t ss = c->d->sector_size;
	uint64_t off = blk * c->bs, len = (uint64_t)nblk * c->bs;
	if (off % ss || len % ss || len / ss > UINT32_MAX)
		return false;
	return blk_reads_zero(c->d, off / ss, (uint32_t)(len / ss));
}

int ck_wr(struct ck *c, uint64_t blk, const void *buf)
{
	c->r->modified = true;
	int rc = blk_pwrite(c->d, blk * c->bs, c->bs, buf, 0);
	if (rc)
		return bo_errf(c->err, rc, "writing block %llu: %s", (unsigned long long)blk,
		               bo_errstr(&c->d->err, rc));
	return 0;
}

static uint64_t inode_off(struct ck *c, uint32_t ino)
{
	uint32_t g = (ino - 1) / c->ipg, i = (ino - 1) % c->ipg;
	return gd_inode_table(ck_gd(c, g), c->desc_size) * c->bs + (uint64_t)i * c->isz;
}

/* Reads (writes) one inode through its whole block (blk_pread needs sector alignment). */
int ck_read_inode(struct ck *c, uint32_t ino, uint8_t *in)
{
	uint64_t off = inode_off(c, ino);
	int rc = ck_rd(c, off / c->bs, c->buf, 1);
	if (!rc)
		memcpy(in, c->buf + off % c->bs, c->isz);
	return rc;
}

int ck_write_inode(struct ck *c, uint32_t ino, uint8_t *in)
{
	uint64_t off = inode_off(c, ino);
	int rc = ck_rd(c, off / c->bs, c->buf, 1);
	if (rc)
		return rc;
	if (c->csum)
		ext2_inode_set_csum(c->seed, ino, in, c->isz);
	memcpy(c->buf + off % c->bs, in, c->isz);
	return ck_wr(c, off / c->bs, c->buf);
}

/* The primary superblock written back from c->sb (checksum refreshed). */
int ck_write_sb(struct ck *c)
{
	if (c->csum)
		sb_put32(c->sb, SB_CHECKSUM, ext2_sb_csum(c->sb));
	uint8_t head[4096];
	int rc = blk_pread(c->d, 0, sizeof(head), head);
	if (rc)
		return bo_errf(c->err, rc, "reading the superblock: %s", bo_errstr(&c->d->err, rc));
	memcpy(head + EXT2_SB_OFFSET, c->sb, EXT2_SB_SIZE);
	c->r->modified = true;
	rc = blk_pwrite(c->d, 0, sizeof(head), head, 0);
	if (rc)
		return bo_errf(c->err, rc, "writing the superblock: %s", bo_errstr(&c->d->err, rc));
	return 0;
}

/* Inodes of group g that e2fsck reads (the rest are never-used, with uninit_bg-style
 * descriptors under metadata_csum). */
uint32_t ck_grp_inodes_used(struct ck *c, uint32_t g)
{
	if (!c->csum)
		return c->ipg;
	if (gd_flags(ck_gd(c, g)) & EXT4_BG_INODE_UNINIT)
		return 0;
	uint32_t un = gd_itable_unused(ck_gd(c, g), c->desc_size);
	return un > c->ipg ? 0 : c->ipg - un;
}

/* Before a repair writes an inode the check could not read sensibly (the journal's,
 * the resize inode): does group 0's inode table, as the descriptor places it, hold a
 * root directory where the root belongs? A table pointer off by a block fails this,
 * and then nothing is written through it. */
bool ck_itable_plausible(struct ck *c)
{
	uint8_t in[1024];
	if (c->grp_bad[0] || ck_read_inode(c, EXT2_ROOT_INO, in))
		return false;
	return mode_is_dir(ino_mode(in)) && ino_links(in) >= 2 && !get_le32(in + I_DTIME);
}
