// SPDX-License-Identifier: GPL-2.0-or-later
/* corrupt.c — the seeded corruption injector: damages one kind of ext2/ext3 structure
 * the way a lost or torn write would, and says exactly which bytes changed. It never
 * fixes checksums up: damage is damage. Not a checker (check.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fsck.h"
#include "blackout/util.h"
#include "blackout/ext2_format.h"

static const char *const what_names[FSCK_C_NR] = {
    "superblock", "gdt", "bitmap", "inode", "dirent", "htree", "indirect", "data",
};

const char *fsck_corrupt_name(enum fsck_corrupt_what w)
{
	return (unsigned)w < FSCK_C_NR ? what_names[w] : "?";
}

int fsck_corrupt_parse(const char *s, enum fsck_corrupt_what *w)
{
	for (int i = 0; i < FSCK_C_NR; i++)
		if (!strcmp(s, what_names[i])) {
			*w = (enum fsck_corrupt_what)i;
			return 0;
		}
	return -EINVAL;
}

struct cr {
	struct bdev *d;
	struct bo_rng rng;
	struct bo_err *err;
	char *log;
	size_t logsz, loglen;
	uint8_t sb[1024];
	uint32_t bs, bpg, ipg, isz, ngroups, first_ino, first_data;
	uint64_t nblocks;
	uint8_t *gdt;
	uint8_t *blk;
	/* in-use inodes by class */
	uint32_t *inos, ninos;
	uint32_t *dirs, ndirs;
	uint32_t *htdirs, nhtdirs;
	uint32_t *regs, nregs;
	uint32_t *inds, ninds; /* inodes with an indirect block */
	int made;
};

static void logf_(struct cr *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct cr *c, const char *fmt, ...)
{
	if (!c->log || c->loglen + 1 >= c->logsz)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(c->log + c->loglen, c->logsz - c->loglen, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->loglen +=
		    (size_t)n < c->logsz - c->loglen ? (size_t)n : c->logsz - c->loglen - 1;
}

static uint64_t rnd(struct cr *c, uint64_t n)
{
	return bo_rng_below(&c->rng, n ? n : 1);
}

static int rdb(struct cr *c, uint64_t b, uint8_t *buf)
{
	if (b >= c->nblocks || (b + 1) * c->bs > blk_size_bytes(c->d))
		return bo_errf(c->err, -EINVAL, "block %llu is outside the image",
		               (unsigned long long)b);
	return blk_pread(c->d, b * c->bs, c->bs, buf);
}

/* Sets `width` bytes (1, 2 or 4, little-endian) at absolute byte `off` to v. */
static int poke(struct cr *c, uint64_t off, int width, uint32_t v, const char *what)
{
	uint64_t b = off / c->bs;
	int rc = rdb(c, b, c->blk);
	if (rc)
		return rc;
	uint8_t *p = c->blk + off % c->bs;
	uint32_t old = width == 1 ? p[0] : width == 2 ? get_le16(p) : get_le32(p);
	if (old == v) /* a change must change something */
		v = width == 4 ? old ^ 1u : (old ^ 1u) & (width == 1 ? 0xFFu : 0xFFFFu);
	if (width == 1)
		p[0] = (uint8_t)v;
	else if (width == 2)
		put_le16(p, (uint16_t)v);
	else
		put_le32(p, v);
	if ((rc = blk_pwrite(c->d, b * c->bs, c->bs, c->blk, 0)))
		return rc;
	c->made++;
	logf_(c, "%s: block %llu offset %u (%d bytes): 0x%x -> 0x%x\n", what, (unsigned long long)b,
	      (unsigned)(off % c->bs), width, old, v);
	return 0;
}

static uint8_t *gdp(struct cr *c, uint32_t g)
{
	return c->gdt + (size_t)g * EXT2_MIN_DESC_SIZE;
}

static uint64_t ino_off(struct cr *c, uint32_t ino)
{
	uint32_t g = (ino - 1) / c->ipg;
	return gd_inode_table(gdp(c, g), EXT2_MIN_DESC_SIZE) * c->bs +
	       (uint64_t)((ino - 1) % c->ipg) * c->isz;
}

static int rd_inode(struct cr *c, uint32_t ino, uint8_t *in)
{
	uint64_t off = ino_off(c, ino);
	int rc = rdb(c, off / c->bs, c->blk);
	if (!rc)
		memcpy(in, c->blk + off % c->bs, c->isz);
	return rc;
}

static int push(uint32_t **a, uint32_t *n, uint32_t v)
{
	if (!(*n & (*n - 1)) || *n == 0) {
		uint32_t cap = *n ? *n * 2 : 16;
		uint32_t *p = realloc(*a, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*a = p;
	}
	(*a)[(*n)++] = v;
	return 0;
}

static int load(struct cr *c)
{
	uint8_t head[4096];
	if (blk_size_bytes(c->d) < sizeof(head))
		return bo_errf(c->err, -EINVAL, "image too small");
	int rc = blk_pread(c->d, 0, sizeof(head), head);
	if (rc)
		return rc;
	memcpy(c->sb, head + EXT2_SB_OFFSET, EXT2_SB_SIZE);
	if (sb_get16(c->sb, SB_MAGIC) != EXT2_MAGIC)
		return bo_errf(c->err, -EINVAL, "not an ext2/3 image (bad superblock magic)");
	c->bs = sb_block_size(c->sb);
	c->bpg = sb_get32(c->sb, SB_BLOCKS_PER_GROUP);
	c->ipg = sb_get32(c->sb, SB_INODES_PER_GROUP);
	c->isz = sb_inode_size(c->sb);
	c->first_ino = sb_first_ino(c->sb);
	c->first_data = sb_get32(c->sb, SB_FIRST_DATA_BLOCK);
	c->nblocks = sb_blocks_count(c->sb, false);
	if (!c->bs || c->bs < c->d->sector_size || !c->bpg || !c->ipg || c->isz < 128 ||
	    c->isz > c->bs || sb_desc_size(c->sb) != EXT2_MIN_DESC_SIZE ||
	    c->nblocks * c->bs > blk_size_bytes(c->d) || c->nblocks <= c->first_data)
		return bo_errf(c->err, -EINVAL, "superblock geometry is not usable for corruption");
	c->ngroups = (uint32_t)((c->nblocks - c->first_data + c->bpg - 1) / c->bpg);
	uint32_t gblocks = (c->ngroups * EXT2_MIN_DESC_SIZE + c->bs - 1) / c->bs;
	c->blk = malloc(c->bs);
	c->gdt = malloc((size_t)gblocks * c->bs);
	if (!c->blk || !c->gdt)
		return -ENOMEM;
	if ((rc = blk_pread(c->d, (uint64_t)(c->first_data + 1) * c->bs, (size_t)gblocks * c->bs,
	                    c->gdt)))
		return rc;
	uint8_t in[1024];
	for (uint32_t ino = 1; ino <= c->ngroups * c->ipg; ino++) {
		if (ino != EXT2_ROOT_INO && ino < c->first_ino)
			continue;
		uint32_t g = (ino - 1) / c->ipg;
		uint64_t it = gd_inode_table(gdp(c, g), EXT2_MIN_DESC_SIZE);
		if (it == 0 || it >= c->nblocks)
			continue;
		if (sb_has_ro_compat(c->sb, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM) &&
		    ((gd_flags(gdp(c, g)) & EXT4_BG_INODE_UNINIT) ||
		     (ino - 1) % c->ipg >=
		         c->ipg - gd_itable_unused(gdp(c, g), EXT2_MIN_DESC_SIZE)))
			continue;
		if ((rc = rd_inode(c, ino, in)))
			return rc;
		if (!ino_links(in))
			continue;
		uint16_t m = ino_mode(in);
		rc = push(&c->inos, &c->ninos, ino);
		if (!rc && mode_is_dir(m) && ino_block(in, 0))
			rc = push(&c->dirs, &c->ndirs, ino);
		if (!rc && mode_is_dir(m) && (ino_flags(in) & EXT2_INDEX_FL))
			rc = push(&c->htdirs, &c->nhtdirs, ino);
		if (!rc && mode_is_reg(m) && ino_block(in, 0))
			rc = push(&c->regs, &c->nregs, ino);
		if (!rc && (mode_is_reg(m) || mode_is_dir(m)) && ino_block(in, EXT2_IND_BLOCK))
			rc = push(&c->inds, &c->ninds, ino);
		if (rc)
			return rc;
	}
	return 0;
}

static uint32_t pick(struct cr *c, const uint32_t *a, uint32_t n)
{
	return a[rnd(c, n)];
}

/* A value for a block pointer: out of range, a block already in use, zero, random. */
static uint32_t bad_block(struct cr *c)
{
	switch (rnd(c, 4)) {
	case 0: return (uint32_t)(c->nblocks + rnd(c, 1u << 20));
	case 1: return c->first_data + (uint32_t)rnd(c, 3); /* superblock / descriptors */
	case 2: return (uint32_t)(c->first_data + rnd(c, c->nblocks - c->first_data));
	default: return (uint32_t)bo_rng_next(&c->rng);
	}
}

static int c_super(struct cr *c)
{
	static const struct {
		uint16_t off;
		uint8_t w;
		const char *name;
	} f[] = {
	    {SB_INODES_COUNT, 4, "s_inodes_count"},
	    {SB_BLOCKS_COUNT_LO, 4, "s_blocks_count"},
	    {SB_FREE_BLOCKS_LO, 4, "s_free_blocks_count"},
	    {SB_FREE_INODES, 4, "s_free_inodes_count"},
	    {SB_FIRST_DATA_BLOCK, 4, "s_first_data_block"},
	    {SB_LOG_BLOCK_SIZE, 4, "s_log_block_size"},
	    {SB_BLOCKS_PER_GROUP, 4, "s_blocks_per_group"},
	    {SB_INODES_PER_GROUP, 4, "s_inodes_per_group"},
	    {SB_MAGIC, 2, "s_magic"},
	    {SB_INODE_SIZE, 2, "s_inode_size"},
	    {SB_FIRST_INO, 4, "s_first_ino"},
	    {SB_R_BLOCKS_COUNT_LO, 4, "s_r_blocks_count"},
	    {SB_MTIME, 4, "s_mtime"},
	    {SB_REV_LEVEL, 4, "s_rev_level"},
	};
	unsigned i = (unsigned)rnd(c, sizeof(f) / sizeof(f[0]));
	uint32_t old = f[i].w == 2 ? sb_get16(c->sb, f[i].off) : sb_get32(c->sb, f[i].off), v;
	switch (rnd(c, 3)) {
	case 0: v = old + 1 + (uint32_t)rnd(c, 16); break;
	case 1: v = old - 1 - (uint32_t)rnd(c, 16); break;
	default: v = (uint32_t)bo_rng_next(&c->rng); break;
	}
	if (f[i].w == 2)
		v &= 0xFFFF;
	char what[64];
	snprintf(what, sizeof(what), "superblock %s", f[i].name);
	int rc = poke(c, EXT2_SB_OFFSET + f[i].off, f[i].w, v, what);
	if (!rc)
		rc = blk_pread(c->d, 1024, 1024, c->sb); /* later changes see this one */
	return rc;
}

static int c_gdt(struct cr *c)
{
	static const struct {
		uint8_t off, w;
		const char *name;
	} f[] = {
	    {GD_BLOCK_BITMAP, 4, "bg_block_bitmap"},
	    {GD_INODE_BITMAP, 4, "bg_inode_bitmap"},
	    {GD_INODE_TABLE, 4, "bg_inode_table"},
	    {GD_FREE_BLOCKS, 2, "bg_free_blocks_count"},
	    {GD_FREE_INODES, 2, "bg_free_inodes_count"},
	    {GD_USED_DIRS, 2, "bg_used_dirs_count"},
	    {GD_CHECKSUM, 2, "bg_checksum"},
	};
	uint32_t g = (uint32_t)rnd(c, c->ngroups);
	unsigned i = (unsigned)rnd(c, sizeof(f) / sizeof(f[0]));
	uint8_t *d = gdp(c, g);
	uint32_t old = f[i].w == 2 ? get_le16(d + f[i].off) : get_le32(d + f[i].off), v;
	if (f[i].w == 4)
		v = rnd(c, 2) ? bad_block(c) : old + (uint32_t)rnd(c, 8) - 4;
	else
		v = (old + (uint32_t)rnd(c, 64) - 32) & 0xFFFF;
	char what[80];
	snprintf(what, sizeof(what), "group %u descriptor %s", g, f[i].name);
	uint64_t off =
	    (uint64_t)(c->first_data + 1) * c->bs + (uint64_t)g * EXT2_MIN_DESC_SIZE + f[i].off;
	int rc = poke(c, off, f[i].w, v, what);
	if (!rc) {
		if (f[i].w == 2)
			put_le16(d + f[i].off, (uint16_t)v);
		else
			put_le32(d + f[i].off, v);
	}
	return rc;
}

static int c_bitmap(struct cr *c)
{
	uint32_t g = (uint32_t)rnd(c, c->ngroups);
	bool inode = rnd(c, 2);
	uint8_t *d = gdp(c, g);
	if (sb_has_ro_compat(c->sb, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM) &&
	    (gd_flags(d) & (inode ? EXT4_BG_INODE_UNINIT : EXT4_BG_BLOCK_UNINIT)))
		inode = !inode;
	uint64_t bm =
	    inode ? gd_inode_bitmap(d, EXT2_MIN_DESC_SIZE) : gd_block_bitmap(d, EXT2_MIN_DESC_SIZE);
	uint64_t first = c->first_data + (uint64_t)g * c->bpg;
	uint32_t n =
	    inode ? c->ipg : (uint32_t)(c->nblocks - first < c->bpg ? c->nblocks - first : c->bpg);
	uint32_t bit = (uint32_t)rnd(c, n);
	int rc = rdb(c, bm, c->blk);
	if (rc)
		return rc;
	uint8_t v = c->blk[bit / 8] ^ (uint8_t)(1u << (bit % 8));
	char what[96];
	snprintf(what, sizeof(what), "group %u %s bitmap bit %u (%s %llu)", g,
	         inode ? "inode" : "block", bit, inode ? "inode" : "block",
	         (unsigned long long)(inode ? g * c->ipg + bit + 1 : first + bit));
	return poke(c, bm * c->bs + bit / 8, 1, v, what);
}

static int c_inode(struct cr *c)
{
	if (!c->ninos)
		return 0;
	uint32_t ino = pick(c, c->inos, c->ninos);
	uint8_t in[1024];
	int rc = rd_inode(c, ino, in);
	if (rc)
		return rc;
	uint64_t base = ino_off(c, ino);
	char what[96];
	uint32_t off, v;
	int w;
	switch (rnd(c, 10)) {
	case 0:
		off = I_MODE, w = 2;
		v = rnd(c, 2) ? (uint32_t)(ino_mode(in) ^ (rnd(c, 16) << 12))
		              : (uint32_t)rnd(c, 65536);
		break;
	case 1:
		off = I_LINKS_COUNT, w = 2;
		v = rnd(c, 3) ? (uint32_t)(ino_links(in) + rnd(c, 3) - 1) : 0;
		break;
	case 2:
		off = I_SIZE_LO, w = 4;
		v = rnd(c, 2) ? (uint32_t)(get_le32(in + I_SIZE_LO) + (rnd(c, 2) ? c->bs : -c->bs))
		              : (uint32_t)bo_rng_next(&c->rng);
		break;
	case 3:
		off = I_BLOCKS_LO, w = 4;
		v = get_le32(in + I_BLOCKS_LO) + (uint32_t)(rnd(c, 2) ? 2 : -2);
		break;
	case 4:
	case 5: {
		unsigned i = (unsigned)rnd(c, EXT2_N_BLOCKS);
		off = I_BLOCK + 4 * i, w = 4;
		v = rnd(c, 4) ? bad_block(c) : 0;
		break;
	}
	case 6: off = I_DTIME, w = 4, v = (uint32_t)bo_rng_next(&c->rng) | 1; break;
	case 7:
		off = I_FLAGS, w = 4;
		v = ino_flags(in) ^
		    (rnd(c, 2) ? (rnd(c, 2) ? EXT2_INDEX_FL : EXT4_EXTENTS_FL) : 1u << rnd(c, 32));
		break;
	case 8: off = I_FILE_ACL_LO, w = 4, v = bad_block(c); break;
	default:
		off = (uint32_t)rnd(c, EXT2_GOOD_OLD_INODE_SIZE), w = 1;
		v = (uint32_t)rnd(c, 256);
		break;
	}
	snprintf(what, sizeof(what), "inode %u offset 0x%x", ino, off);
	return poke(c, base + off, w, v, what);
}

/* Physical block of logical block 0..11 of an inode (direct blocks only). */
static uint32_t dir_block(struct cr *c, uint32_t ino, uint32_t *lblk)
{
	uint8_t in[1024];
	if (rd_inode(c, ino, in))
		return 0;
	uint32_t n = 0;
	while (n < EXT2_NDIR_BLOCKS && ino_block(in, n))
		n++;
	if (!n)
		return 0;
	*lblk = (uint32_t)rnd(c, n);
	return ino_block(in, *lblk);
}

static int c_dirent(struct cr *c)
{
	if (!c->ndirs)
		return 0;
	uint32_t ino = pick(c, c->dirs, c->ndirs), lblk;
	uint32_t b = dir_block(c, ino, &lblk);
	if (!b || b >= c->nblocks)
		return 0;
	int rc = rdb(c, b, c->blk);
	if (rc)
		return rc;
	/* the entries of the block; pick one */
	uint32_t offs[1024], n = 0, off = 0;
	while (off + 8 <= c->bs && n < 1024) {
		uint32_t rl = de_rec_len(c->blk + off);
		if (rl < 8 || off + rl > c->bs)
			break;
		if (de_inode(c->blk + off) || off == 0)
			offs[n++] = off;
		off += rl;
	}
	if (!n)
		return 0;
	off = offs[rnd(c, n)];
	uint8_t *de = c->blk + off;
	uint64_t at = (uint64_t)b * c->bs + off;
	char what[128];
	snprintf(what, sizeof(what), "directory %u block %u entry at %u '%.*s'", ino, lblk, off,
	         de_name_len(de) < 40 ? de_name_len(de) : 40, (const char *)de + DE_NAME);
	switch (rnd(c, 6)) {
	case 0: {
		uint32_t v = rnd(c, 2) ? (uint32_t)rnd(c, sb_get32(c->sb, SB_INODES_COUNT) + 64)
		                       : (c->ninos ? pick(c, c->inos, c->ninos) : 0);
		return poke(c, at + DE_INODE, 4, v, what);
	}
	case 1:
		return poke(c, at + DE_REC_LEN, 2,
		            rnd(c, 2) ? (uint32_t)(de_rec_len(de) + 4 * (rnd(c, 2) ? 1 : -1))
		                      : (uint32_t)rnd(c, 65536),
		            what);
	case 2:
		return poke(c, at + DE_NAME_LEN, 1,
		            rnd(c, 2) ? (uint32_t)(de_name_len(de) + rnd(c, 9))
		                      : (uint32_t)rnd(c, 256),
		            what);
	case 3: return poke(c, at + DE_FILE_TYPE, 1, (uint32_t)rnd(c, 9), what);
	case 4: return poke(c, at + DE_INODE, 4, 0, what);
	default:
		if (!de_name_len(de))
			return poke(c, at + DE_NAME_LEN, 1, 1, what);
		return poke(c, at + DE_NAME + rnd(c, de_name_len(de)), 1, rnd(c, 2) ? '/' : 0,
		            what);
	}
}

static int c_htree(struct cr *c)
{
	if (!c->nhtdirs)
		return 0;
	uint32_t ino = pick(c, c->htdirs, c->nhtdirs);
	uint8_t in[1024];
	int rc = rd_inode(c, ino, in);
	if (rc)
		return rc;
	uint32_t b = ino_block(in, 0);
	if (!b || b >= c->nblocks || (rc = rdb(c, b, c->blk)))
		return rc;
	uint64_t at = (uint64_t)b * c->bs;
	uint32_t count = get_le16(c->blk + DX_ROOT_ENTRIES + DX_COUNT);
	char what[96];
	snprintf(what, sizeof(what), "htree directory %u root", ino);
	switch (rnd(c, 7)) {
	case 0: return poke(c, at + DX_ROOT_HASH_VERSION, 1, (uint32_t)rnd(c, 8), what);
	case 1: return poke(c, at + DX_ROOT_INDIRECT_LEVELS, 1, (uint32_t)rnd(c, 4), what);
	case 2: return poke(c, at + DX_ROOT_INFO_LENGTH, 1, (uint32_t)rnd(c, 16), what);
	case 3:
		return poke(c, at + DX_ROOT_ENTRIES + DX_COUNT, 2,
		            rnd(c, 2) ? count + 1 + (uint32_t)rnd(c, 4) : count - 1, what);
	case 4: return poke(c, at + DX_ROOT_ENTRIES + DX_LIMIT, 2, (uint32_t)rnd(c, 600), what);
	default: {
		if (count < 2)
			return poke(c, at + DX_ROOT_ENTRIES + DX_ENTRY_BLOCK, 4,
			            (uint32_t)rnd(c, 64), what);
		uint32_t e = 1 + (uint32_t)rnd(c, count - 1);
		uint64_t eo = at + DX_ROOT_ENTRIES + e * DX_ENTRY_SIZE;
		if (rnd(c, 2))
			return poke(c, eo + DX_ENTRY_HASH, 4, (uint32_t)bo_rng_next(&c->rng), what);
		return poke(c, eo + DX_ENTRY_BLOCK, 4, (uint32_t)rnd(c, 64), what);
	}
	}
}

static int c_indirect(struct cr *c)
{
	if (!c->ninds)
		return 0;
	uint32_t ino = pick(c, c->inds, c->ninds);
	uint8_t in[1024];
	int rc = rd_inode(c, ino, in);
	if (rc)
		return rc;
	uint32_t b = ino_block(in, EXT2_IND_BLOCK);
	if (b >= c->nblocks || (rc = rdb(c, b, c->blk)))
		return rc;
	uint32_t n = 0;
	while (n < c->bs / 4 && get_le32(c->blk + 4 * n))
		n++;
	uint32_t i = (uint32_t)rnd(c, n ? n + 1 : 1);
	char what[96];
	snprintf(what, sizeof(what), "inode %u indirect block entry %u", ino, i);
	return poke(c, (uint64_t)b * c->bs + 4 * i, 4, rnd(c, 5) ? bad_block(c) : 0, what);
}

static int c_data(struct cr *c)
{
	if (!c->nregs)
		return 0;
	uint32_t ino = pick(c, c->regs, c->nregs), lblk;
	uint8_t in[1024];
	int rc = rd_inode(c, ino, in);
	if (rc)
		return rc;
	uint32_t n = 0;
	while (n < EXT2_NDIR_BLOCKS && ino_block(in, n))
		n++;
	lblk = (uint32_t)rnd(c, n);
	uint32_t b = ino_block(in, lblk);
	if (b >= c->nblocks)
		return 0;
	char what[96];
	snprintf(what, sizeof(what), "inode %u data block %u", ino, lblk);
	return poke(c, (uint64_t)b * c->bs + rnd(c, c->bs), 1, (uint32_t)rnd(c, 256), what);
}

int fsck_corrupt(struct bdev *d, enum fsck_corrupt_what what, uint64_t seed, uint32_t count,
                 char *log, size_t logsz, struct bo_err *err)
{
	struct cr c = {.d = d, .err = err, .log = log, .logsz = logsz};
	if (log && logsz)
		log[0] = 0;
	bo_rng_seed(&c.rng, seed * 0x9E3779B97F4A7C15ull + (uint64_t)what);
	int rc = (unsigned)what < FSCK_C_NR ? load(&c) : bo_errf(err, -EINVAL, "unknown kind");
	for (uint32_t i = 0; !rc && i < count; i++) {
		switch (what) {
		case FSCK_C_SUPERBLOCK: rc = c_super(&c); break;
		case FSCK_C_GDT: rc = c_gdt(&c); break;
		case FSCK_C_BITMAP: rc = c_bitmap(&c); break;
		case FSCK_C_INODE: rc = c_inode(&c); break;
		case FSCK_C_DIRENT: rc = c_dirent(&c); break;
		case FSCK_C_HTREE: rc = c_htree(&c); break;
		case FSCK_C_INDIRECT: rc = c_indirect(&c); break;
		case FSCK_C_DATA: rc = c_data(&c); break;
		default: rc = -EINVAL;
		}
	}
	free(c.blk);
	free(c.gdt);
	free(c.inos);
	free(c.dirs);
	free(c.htdirs);
	free(c.regs);
	free(c.inds);
	if (!rc)
		rc = blk_flush(d);
	return rc ? rc : c.made;
}
