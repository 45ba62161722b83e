/* check.c — blackout fsck: e2fsck's five passes over an ext2/ext3 image read straight
 * from a bdev (superblock and descriptors; inodes and blocks; directories;
 * connectivity; reference counts; bitmaps and summary counts). Repairs: repair.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackout/fsck.h"
#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/fsck_int.h"

static const char *const kind_names[] = {
    [FSCK_NEEDS_RECOVERY] = "needs_recovery",
    [FSCK_SUPER] = "superblock",
    [FSCK_GDT] = "group_desc",
    [FSCK_CSUM] = "checksum",
    [FSCK_INODE] = "inode",
    [FSCK_BLOCK_RANGE] = "block_range",
    [FSCK_BLOCK_DUP] = "block_dup",
    [FSCK_SIZE] = "size",
    [FSCK_IBLOCKS] = "i_blocks",
    [FSCK_SYMLINK] = "symlink",
    [FSCK_DIRENT] = "dirent",
    [FSCK_DIR] = "directory",
    [FSCK_HTREE] = "htree",
    [FSCK_CONNECT] = "connectivity",
    [FSCK_LINKS] = "links",
    [FSCK_BITMAP] = "bitmap",
    [FSCK_COUNT] = "count",
    [FSCK_UNSUPPORTED] = "unsupported",
};

const char *fsck_kind_name(enum fsck_kind k)
{
	if ((unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[k])
		return kind_names[k];
	return "?";
}

bool ck_problem(struct ck *c, enum fsck_kind k, uint32_t ino, uint64_t blk, const char *name,
                int name_len, const char *fmt, ...)
{
	struct fsck_report *r = c->r;
	if (c->stop)
		return false;
	struct fsck_problem p = {.kind = k, .ino = ino, .block = blk};
	if (name && name_len > 0) {
		size_t n =
		    (size_t)name_len < sizeof(p.name) - 1 ? (size_t)name_len : sizeof(p.name) - 1;
		for (size_t i = 0; i < n; i++) /* printable: names are untrusted bytes */
			p.name[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p.msg, sizeof(p.msg), fmt, ap);
	va_end(ap);
	r->nr_problems++;
	if (k == FSCK_SUPER && ino == 0)
		c->sb_bad = true;
	if (k == FSCK_GDT)
		c->gdt_bad = true;
	if (k == FSCK_CSUM)
		r->by_checksum = true;
	if (r->nr_kept < FSCK_REPORT_KEEP)
		r->problems[r->nr_kept++] = p;
	if (c->o->on_problem)
		c->o->on_problem(c->o->ctx, &p);
	if (c->o->max_problems && r->nr_problems >= c->o->max_problems)
		c->stop = true;
	return !c->stop;
}

int ck_add_fix(struct ck *c, enum fix_kind k, uint32_t ino, uint32_t pblk, uint32_t off,
               uint32_t val)
{
	if (c->o->repair == FSCK_REPAIR_NONE)
		return 0;
	if (c->nfx == c->cap_fx) {
		size_t n = c->cap_fx ? c->cap_fx * 2 : 64;
		struct fix *f = realloc(c->fx, n * sizeof(*f));
		if (!f)
			return -ENOMEM;
		c->fx = f;
		c->cap_fx = n;
	}
	c->fx[c->nfx++] = (struct fix){k, ino, pblk, off, val};
	return 0;
}

static int rd(struct ck *c, uint64_t blk, void *buf, uint32_t nblk)
{
	int rc = blk_pread(c->d, blk * c->bs, (size_t)nblk * c->bs, buf);
	if (rc)
		return bo_errf(c->err, rc, "reading block %llu: %s", (unsigned long long)blk,
		               bo_errstr(&c->d->err, rc));
	return 0;
}

static uint64_t inode_off(struct ck *c, uint32_t ino)
{
	uint32_t g = (ino - 1) / c->ipg, i = (ino - 1) % c->ipg;
	return gd_inode_table(c->gdt + (size_t)g * c->desc_size, c->desc_size) * c->bs +
	       (uint64_t)i * c->isz;
}

/* Reads (writes) one inode through its whole block (blk_pread needs sector alignment). */
int ck_read_inode(struct ck *c, uint32_t ino, uint8_t *in)
{
	uint64_t off = inode_off(c, ino);
	int rc = rd(c, off / c->bs, c->buf, 1);
	if (!rc)
		memcpy(in, c->buf + off % c->bs, c->isz);
	return rc;
}

int ck_write_inode(struct ck *c, uint32_t ino, uint8_t *in)
{
	uint64_t off = inode_off(c, ino);
	int rc = rd(c, off / c->bs, c->buf, 1);
	if (rc)
		return rc;
	if (c->csum)
		fsck_inode_csum_set(c->seed, ino, in, c->isz);
	memcpy(c->buf + off % c->bs, in, c->isz);
	c->r->modified = true;
	return blk_pwrite(c->d, off / c->bs * c->bs, c->bs, c->buf, 0);
}

static uint64_t grp_first(struct ck *c, uint32_t g)
{
	return c->first_data + (uint64_t)g * c->bpg;
}
static uint32_t grp_nblocks(struct ck *c, uint32_t g)
{
	uint64_t f = grp_first(c, g);
	return c->nblocks - f < c->bpg ? (uint32_t)(c->nblocks - f) : c->bpg;
}
static bool grp_has_super(struct ck *c, uint32_t g)
{
	return ext2_bg_has_super(c->sb, g);
}
static uint8_t *gd(struct ck *c, uint32_t g)
{
	return c->gdt + (size_t)g * c->desc_size;
}
static uint32_t itb_blocks(struct ck *c)
{
	return (uint32_t)(((uint64_t)c->ipg * c->isz + c->bs - 1) / c->bs);
}
/* Inodes of group g that e2fsck reads (the rest are never-used, with uninit_bg-style
 * descriptors under metadata_csum). */
static uint32_t grp_inodes_used_area(struct ck *c, uint32_t g)
{
	if (!c->csum)
		return c->ipg;
	if (gd_flags(gd(c, g)) & EXT4_BG_INODE_UNINIT)
		return 0;
	uint32_t un = gd_itable_unused(gd(c, g), c->desc_size);
	return un > c->ipg ? 0 : c->ipg - un;
}

/* ---- pass 0: superblock and group descriptors ------------------------------------ */
static int pass0(struct ck *c)
{
	uint8_t *sb = c->sb;
	uint8_t head[4096];
	uint64_t devsz = blk_size_bytes(c->d);
	if (devsz < 4096)
		return bo_errf(c->err, -EINVAL, "device is %llu bytes: too small for ext2",
		               (unsigned long long)devsz);
	int rc = blk_pread(c->d, 0, sizeof(head), head);
	if (rc)
		return bo_errf(c->err, rc, "reading the superblock: %s", bo_errstr(&c->d->err, rc));
	memcpy(sb, head + EXT2_SB_OFFSET, EXT2_SB_SIZE);
	if (sb_get16(sb, SB_MAGIC) != EXT2_MAGIC) {
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "bad magic number 0x%04x in superblock",
		           sb_get16(sb, SB_MAGIC));
		return 1;
	}
	uint32_t inc = sb_get32(sb, SB_FEATURE_INCOMPAT), roc = sb_get32(sb, SB_FEATURE_RO_COMPAT);
	uint32_t inc_ok = EXT2_FEATURE_INCOMPAT_FILETYPE | EXT3_FEATURE_INCOMPAT_RECOVER |
	                  EXT4_FEATURE_INCOMPAT_CSUM_SEED;
	uint32_t ro_ok = EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE |
	                 EXT4_FEATURE_RO_COMPAT_METADATA_CSUM | EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE |
	                 EXT4_FEATURE_RO_COMPAT_DIR_NLINK | EXT2_FEATURE_RO_COMPAT_BTREE_DIR;
	if ((inc & ~inc_ok) || (roc & ~ro_ok))
		return bo_errf(
		    c->err, -EOPNOTSUPP,
		    "unsupported features (incompat 0x%x, ro_compat 0x%x): blackout fsck "
		    "checks ext2/ext3 (+metadata_csum) only",
		    inc & ~inc_ok, roc & ~ro_ok);
	c->csum = roc & EXT4_FEATURE_RO_COMPAT_METADATA_CSUM;
	if (c->csum) {
		c->seed = fsck_csum_seed(sb);
		if (sb[SB_CHECKSUM_TYPE] != EXT4_CRC32C_CHKSUM)
			return ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "unknown checksum type %u",
			                  sb[SB_CHECKSUM_TYPE]),
			       1;
		if (fsck_sb_csum(sb) != sb_get32(sb, SB_CHECKSUM)) {
			ck_problem(c, FSCK_CSUM, 0, 1, NULL, 0,
			           "superblock checksum does not match superblock");
			c->sb_bad = true;
			return 1; /* e2fsck falls back to a backup: nothing here is trusted */
		}
	}
	c->filetype = inc & EXT2_FEATURE_INCOMPAT_FILETYPE;
	c->dir_index = sb_has_compat(sb, EXT2_FEATURE_COMPAT_DIR_INDEX);
	c->has_journal = sb_has_compat(sb, EXT3_FEATURE_COMPAT_HAS_JOURNAL);
	c->ext_attr = sb_has_compat(sb, EXT2_FEATURE_COMPAT_EXT_ATTR);
	c->log_bs = sb_get32(sb, SB_LOG_BLOCK_SIZE);
	c->bs = sb_block_size(sb);
	c->nblocks = sb_blocks_count(sb, false);
	c->first_data = sb_get32(sb, SB_FIRST_DATA_BLOCK);
	c->bpg = sb_get32(sb, SB_BLOCKS_PER_GROUP);
	c->ipg = sb_get32(sb, SB_INODES_PER_GROUP);
	c->isz = sb_inode_size(sb);
	c->first_ino = sb_first_ino(sb);
	c->desc_size = sb_desc_size(sb);
	c->rsv_gdt = sb_get16(sb, SB_RESERVED_GDT_BLOCKS);
	for (int i = 0; i < 4; i++)
		c->hash_seed[i] = sb_get32(sb, SB_HASH_SEED + 4 * i);

	/* Geometry: without it nothing else can be located. */
	const char *bad = NULL;
	uint64_t val = 0;
	if (c->bs && c->log_bs <= 6 && c->bs < c->d->sector_size)
		return bo_errf(c->err, -EOPNOTSUPP,
		               "block size %u is smaller than the %u-byte sectors", c->bs,
		               c->d->sector_size);
	if (c->bs == 0 || c->log_bs > 6)
		bad = "block size", val = c->log_bs;
	else if (sb_get32(sb, SB_LOG_CLUSTER_SIZE) != c->log_bs)
		bad = "cluster size", val = sb_get32(sb, SB_LOG_CLUSTER_SIZE);
	else if (sb_get32(sb, SB_REV_LEVEL) > EXT2_DYNAMIC_REV)
		bad = "revision level", val = sb_get32(sb, SB_REV_LEVEL);
	else if (c->first_data != (c->bs == 1024 ? 1u : 0u))
		bad = "first_data_block", val = c->first_data;
	else if (c->nblocks <= c->first_data + 1)
		bad = "blocks_count", val = c->nblocks;
	else if (c->bpg < 8 || c->bpg > c->bs * 8 || c->bpg % 8)
		bad = "blocks_per_group", val = c->bpg;
	else if (sb_get32(sb, SB_CLUSTERS_PER_GROUP) != c->bpg)
		bad = "clusters_per_group", val = sb_get32(sb, SB_CLUSTERS_PER_GROUP);
	else if (c->isz < EXT2_GOOD_OLD_INODE_SIZE || c->isz > c->bs || (c->isz & (c->isz - 1)))
		bad = "inode_size", val = c->isz;
	else if (c->ipg < c->bs / c->isz || c->ipg > c->bs * 8 || c->ipg % (c->bs / c->isz) ||
	         c->ipg % 8)
		bad = "inodes_per_group", val = c->ipg;
	else if ((uint64_t)c->ipg * c->isz > (uint64_t)c->bpg * c->bs)
		bad = "inodes_per_group (inode table larger than a group)", val = c->ipg;
	else if (c->rsv_gdt > c->bs / 4)
		bad = "reserved_gdt_blocks", val = c->rsv_gdt;
	if (bad) {
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "superblock %s %llu is invalid", bad,
		           (unsigned long long)val);
		return 1;
	}
	if (c->nblocks * c->bs > devsz) {
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0,
		           "filesystem is %llu blocks but the device holds only %llu",
		           (unsigned long long)c->nblocks, (unsigned long long)(devsz / c->bs));
		return 1;
	}
	c->ngroups = (uint32_t)((c->nblocks - c->first_data + c->bpg - 1) / c->bpg);
	c->ninodes = c->ngroups * c->ipg;
	uint64_t ic = sb_get32(sb, SB_INODES_COUNT);
	if ((uint64_t)c->ngroups * c->ipg > 0xFFFFFFFFu) {
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "too many inodes");
		return 1;
	}
	c->gdt_blocks = (uint32_t)(((uint64_t)c->ngroups * c->desc_size + c->bs - 1) / c->bs);
	if (c->gdt_blocks + c->rsv_gdt + 2 >= c->bpg) {
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "group descriptors do not fit a group");
		return 1;
	}
	if (ic != c->ninodes)
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "inodes count %llu, should be %u",
		           (unsigned long long)ic, c->ninodes);
	if (c->first_ino < EXT2_GOOD_OLD_FIRST_INO || c->first_ino > c->ninodes) {
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "first_ino %u is invalid", c->first_ino);
		return 1;
	}
	if (sb_r_blocks_count(sb, false) > c->nblocks / 2)
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "reserved blocks count %u is too large",
		           sb_get32(sb, SB_R_BLOCKS_COUNT_LO));
	if (sb_free_blocks(sb, false) > c->nblocks)
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0,
		           "free blocks count %u is larger than the fs",
		           sb_get32(sb, SB_FREE_BLOCKS_LO));
	if (sb_get32(sb, SB_FREE_INODES) > c->ninodes)
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0,
		           "free inodes count %u is larger than the fs",
		           sb_get32(sb, SB_FREE_INODES));
	uint32_t now = (uint32_t)time(NULL);
	if (sb_get32(sb, SB_MTIME) > now)
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "last mount time is in the future");
	if (sb_get32(sb, SB_WTIME) > now)
		ck_problem(c, FSCK_SUPER, 0, 1, NULL, 0, "last write time is in the future");
	if (inc & EXT3_FEATURE_INCOMPAT_RECOVER) {
		c->r->needs_recovery = true;
		ck_problem(c, FSCK_NEEDS_RECOVERY, 0, 0, NULL, 0,
		           "the journal needs recovery: replay it before checking");
	}

	/* Group descriptors, at the block after the superblock. */
	size_t gsz = (size_t)c->gdt_blocks * c->bs;
	c->gdt = malloc(gsz);
	c->grp_bad = calloc(c->ngroups, 1);
	if (!c->gdt || !c->grp_bad)
		return -ENOMEM;
	if ((rc = rd(c, c->first_data + 1, c->gdt, c->gdt_blocks)))
		return rc;
	bool csum_bad = false;
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint8_t *d = gd(c, g);
		uint64_t first = grp_first(c, g), last = first + grp_nblocks(c, g) - 1;
		uint64_t bb = gd_block_bitmap(d, c->desc_size),
		         ib = gd_inode_bitmap(d, c->desc_size);
		uint64_t it = gd_inode_table(d, c->desc_size);
		if (c->csum &&
		    fsck_gd_csum(c->seed, g, d, c->desc_size) != get_le16(d + GD_CHECKSUM)) {
			ck_problem(c, FSCK_CSUM, 0, 0, NULL, 0,
			           "group %u descriptor checksum is invalid", g);
			csum_bad = true;
		}
		if (bb < first || bb > last) {
			ck_problem(c, FSCK_GDT, 0, bb, NULL, 0,
			           "block bitmap for group %u at %llu is not in the group", g,
			           (unsigned long long)bb);
			c->grp_bad[g] = 1;
		}
		if (ib < first || ib > last) {
			ck_problem(c, FSCK_GDT, 0, ib, NULL, 0,
			           "inode bitmap for group %u at %llu is not in the group", g,
			           (unsigned long long)ib);
			c->grp_bad[g] = 1;
		}
		if (it < first || it + itb_blocks(c) - 1 > last) {
			ck_problem(c, FSCK_GDT, 0, it, NULL, 0,
			           "inode table for group %u at %llu is not in the group", g,
			           (unsigned long long)it);
			c->grp_bad[g] = 1;
		}
		uint16_t fl = gd_flags(d);
		if (!c->csum && (fl & (EXT4_BG_INODE_UNINIT | EXT4_BG_BLOCK_UNINIT)))
			ck_problem(c, FSCK_GDT, 0, 0, NULL, 0,
			           "group %u has uninit flags 0x%x but no group checksums", g, fl);
		if (c->csum && (fl & EXT4_BG_BLOCK_UNINIT) && g == c->ngroups - 1)
			ck_problem(c, FSCK_GDT, 0, 0, NULL, 0, "last group %u has BLOCK_UNINIT set",
			           g);
		if (c->csum && gd_itable_unused(d, c->desc_size) > c->ipg)
			ck_problem(c, FSCK_GDT, 0, 0, NULL, 0,
			           "group %u itable_unused %u is invalid", g,
			           gd_itable_unused(d, c->desc_size));
	}
	(void)csum_bad;
	return 0;
}

/* ---- bitmaps ---------------------------------------------------------------------- */
static bool claim(struct ck *c, uint64_t b, uint32_t ino, const char *what)
{
	if (bit_test(c->bused, b)) {
		c->had_dup = true;
		if (ino)
			ck_problem(c, FSCK_BLOCK_DUP, ino, b, NULL, 0,
			           "inode %u %s block %llu is claimed twice", ino, what,
			           (unsigned long long)b);
		else {
			ck_problem(c, FSCK_BLOCK_DUP, 0, b, NULL, 0,
			           "%s at block %llu conflicts with another fs block", what,
			           (unsigned long long)b);
			c->gdt_bad = true;
		}
		return false;
	}
	bit_set(c->bused, b);
	return true;
}

static int load_bitmaps(struct ck *c)
{
	uint32_t bbytes = c->bpg / 8, ibytes = c->ipg / 8;
	c->bbm = calloc((size_t)c->ngroups * bbytes + FSCK_MAP_SLACK, 1);
	c->ibm = calloc((size_t)c->ngroups * ibytes + FSCK_MAP_SLACK, 1);
	if (!c->bbm || !c->ibm)
		return -ENOMEM;
	/* Group metadata: marked first, so files claiming it are double claims. */
	for (uint32_t g = 0; g < c->ngroups; g++) {
		uint64_t f = grp_first(c, g);
		if (grp_has_super(c, g))
			for (uint32_t i = 0; i < 1 + c->gdt_blocks + c->rsv_gdt; i++)
				if (f + i < c->nblocks)
					claim(c, f + i, 0, "superblock/descriptors");
	}
	for (uint32_t g = 0; g < c->ngroups; g++) {
		if (c->grp_bad[g])
			continue;
		uint8_t *d = gd(c, g);
		claim(c, gd_block_bitmap(d, c->desc_size), 0, "block bitmap");
		claim(c, gd_inode_bitmap(d, c->desc_size), 0, "inode bitmap");
		uint64_t it = gd_inode_table(d, c->desc_size);
		for (uint32_t i = 0; i < itb_blocks(c); i++)
			if (!claim(c, it + i, 0, "inode table"))
				break;
	}
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint8_t *d = gd(c, g), *bm = c->bbm + (size_t)g * bbytes,
		        *im = c->ibm + (size_t)g * ibytes;
		uint16_t fl = c->csum ? gd_flags(d) : 0;
		if (c->grp_bad[g])
			continue;
		int rc;
		if (fl & EXT4_BG_BLOCK_UNINIT) {
			/* What libext2fs makes of an uninitialised bitmap: the group's own
			 * metadata. */
			uint64_t f = grp_first(c, g);
			for (uint32_t i = 0; i < grp_nblocks(c, g); i++)
				if (bit_test(c->bused, f + i))
					bit_set(bm, i);
		} else {
			uint64_t b = gd_block_bitmap(d, c->desc_size);
			if ((rc = rd(c, b, c->buf, 1)))
				return rc;
			memcpy(bm, c->buf, bbytes);
			bool pad = true;
			for (uint32_t i = bbytes; i < c->bs; i++)
				pad &= c->buf[i] == 0xFF;
			for (uint32_t i = grp_nblocks(c, g); i < c->bpg; i++)
				pad &= bit_test(bm, i);
			if (!pad)
				ck_problem(c, FSCK_BITMAP, 0, b, NULL, 0,
				           "padding at end of block bitmap of group %u is not set",
				           g);
			if (c->csum) {
				uint32_t s = fsck_bitmap_csum(c->seed, bm, bbytes);
				uint32_t have = get_le16(d + GD_BLOCK_BITMAP_CSUM_LO);
				if (c->desc_size >= 0x3C)
					have |= (uint32_t)get_le16(d + GD_BLOCK_BITMAP_CSUM_HI)
					        << 16;
				else
					s &= 0xFFFF;
				if (s != have)
					ck_problem(
					    c, FSCK_CSUM, 0, b, NULL, 0,
					    "block bitmap checksum of group %u does not match", g);
			}
		}
		if (!(fl & EXT4_BG_INODE_UNINIT)) {
			uint64_t b = gd_inode_bitmap(d, c->desc_size);
			if ((rc = rd(c, b, c->buf, 1)))
				return rc;
			memcpy(im, c->buf, ibytes);
			bool pad = true;
			for (uint32_t i = ibytes; i < c->bs; i++)
				pad &= c->buf[i] == 0xFF;
			if (!pad)
				ck_problem(c, FSCK_BITMAP, 0, b, NULL, 0,
				           "padding at end of inode bitmap of group %u is not set",
				           g);
			if (c->csum) {
				uint32_t s = fsck_bitmap_csum(c->seed, im, ibytes);
				uint32_t have = get_le16(d + GD_INODE_BITMAP_CSUM_LO);
				if (c->desc_size >= 0x3C)
					have |= (uint32_t)get_le16(d + GD_INODE_BITMAP_CSUM_HI)
					        << 16;
				else
					s &= 0xFFFF;
				if (s != have)
					ck_problem(
					    c, FSCK_CSUM, 0, b, NULL, 0,
					    "inode bitmap checksum of group %u does not match", g);
			}
		}
	}
	return 0;
}

/* ---- pass 1: inodes and their blocks ------------------------------------------------ */
struct walk {
	uint32_t ino;
	bool dir, resize, fast;
	uint64_t nblk;
	int64_t last; /* last logical block mapped, -1 none */
	uint32_t nbad;
};

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

static bool blk_valid(struct ck *c, uint64_t b)
{
	return b >= c->first_data && b < c->nblocks;
}

static int walk_ind(struct ck *c, struct walk *w, uint32_t b, int level, uint64_t lblk)
{
	/* level 1 = indirect block whose entries are data blocks. */
	uint8_t *buf = c->lvl[level - 1];
	int rc = rd(c, b, buf, 1);
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
	if (!blk_valid(c, b)) {
		w->nbad++;
		c->iflag[w->ino] |= IF_BADBLK;
		ck_problem(c, FSCK_BLOCK_RANGE, w->ino, b, NULL, 0,
		           "inode %u has illegal %s block %u at logical %llu", w->ino,
		           level ? "indirect" : "data", b, (unsigned long long)lblk);
		return 0;
	}
	w->nblk++;
	if (w->resize) {
		/* Only its double-indirect block is the inode's own; the rest are the
		 * reserved GDT blocks, marked as group metadata. */
		if (level == 2)
			claim(c, b, w->ino, "double indirect");
		return level ? walk_ind(c, w, b, level, lblk) : 0;
	}
	if (!claim(c, b, w->ino, level ? "indirect" : "data")) {
		/* e2fsck clones a multiply-claimed block for the later claimant */
		ck_add_fix(c, FIX_CLONE, w->ino, holder, idx, b);
		return 0; /* never descend twice into one block: bounds the walk */
	}
	if (level)
		return walk_ind(c, w, b, level, lblk);
	if ((int64_t)lblk > w->last)
		w->last = (int64_t)lblk;
	if (w->dir) {
		if (lblk >= (1ull << (21 - c->log_bs))) {
			ck_problem(c, FSCK_DIR, w->ino, b, NULL, 0, "directory %u is too big",
			           w->ino);
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
	if (!c->ext_attr || !blk_valid(c, b)) {
		ck_problem(c, FSCK_INODE, ino, b, NULL, 0,
		           "inode %u extended attribute block %llu is invalid", ino,
		           (unsigned long long)b);
		ck_add_fix(c, FIX_CLEAR_ACL, ino, 0, 0, 0);
		return 0;
	}
	if (ea_seen(c, (uint32_t)b)) {
		w->nblk++;
		return 0;
	}
	int rc = rd(c, b, c->buf, 1);
	if (rc)
		return rc;
	if (get_le32(c->buf + XH_MAGIC) != EXT2_XATTR_MAGIC || get_le32(c->buf + XH_BLOCKS) != 1) {
		ck_problem(c, FSCK_INODE, ino, b, NULL, 0,
		           "inode %u has a bad extended attribute block %llu", ino,
		           (unsigned long long)b);
		ck_add_fix(c, FIX_CLEAR_ACL, ino, 0, 0, 0);
		return 0;
	}
	if (c->csum && fsck_xattr_csum(c->seed, b, c->buf, c->bs) != get_le32(c->buf + XH_CHECKSUM))
		ck_problem(c, FSCK_CSUM, ino, b, NULL, 0,
		           "extended attribute block %llu checksum does not match",
		           (unsigned long long)b);
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
	claim(c, b, ino, "extended attribute");
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
		ok = ok && size < c->bs && blk_valid(c, b);
		if (ok) {
			int rc = rd(c, b, c->buf, 1);
			if (rc)
				return rc;
			ok = strnlen((const char *)c->buf, c->bs) == size;
		}
	}
	if (!ok)
		ck_problem(c, FSCK_SYMLINK, ino, 0, NULL, 0, "symlink inode %u is invalid", ino);
	return 0;
}

static int check_inode(struct ck *c, uint32_t ino, const uint8_t *in)
{
	uint16_t mode = ino_mode(in);
	uint32_t fl = ino_flags(in);
	struct walk w = {.ino = ino, .last = -1};
	int rc = 0;
	bool walk = false, special = false;
	uint32_t before = c->r->nr_problems;

	if ((fl & EXT2_INDEX_FL) && (!c->dir_index || !mode_is_dir(mode))) {
		ck_problem(c, FSCK_INODE, ino, 0, NULL, 0, "inode %u has INDEX_FL set %s", ino,
		           c->dir_index ? "but is not a directory" : "without dir_index");
		ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
	}
	if (fl & (EXT4_EXTENTS_FL | EXT4_INLINE_DATA_FL)) {
		ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
		           "inode %u has %s set on a filesystem without that feature", ino,
		           fl & EXT4_EXTENTS_FL ? "EXTENTS_FL" : "INLINE_DATA_FL");
		ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
	}
	if (get_le32(in + I_FADDR) || get_le16(in + I_BLOCKS_HIGH) ||
	    get_le16(in + I_FILE_ACL_HIGH)) {
		ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
		           "inode %u has nonzero i_faddr/i_blocks_hi/i_file_acl_hi", ino);
		ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
	}
	if (c->isz > EXT2_GOOD_OLD_INODE_SIZE) {
		uint16_t ex = get_le16(in + I_EXTRA_ISIZE);
		if (ex && (ex < 4 || ex > c->isz - EXT2_GOOD_OLD_INODE_SIZE || (ex & 3))) {
			ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
			           "inode %u extra size %u is invalid", ino, ex);
			ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
		}
	}
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
			ck_problem(c, FSCK_INODE, ino, 0, NULL, 0, "special inode %u is invalid",
			           ino);
			ck_add_fix(c, FIX_CLEAR_INODE, ino, 0, 0, 0);
		}
		if (ino_size(in)) {
			ck_problem(c, FSCK_SIZE, ino, 0, NULL, 0,
			           "special inode %u has nonzero size", ino);
			ck_add_fix(c, FIX_INODE_FIELDS, ino, 0, 0, 0);
		}
		special = true;
		break;
	}
	default:
		c->ftype[ino] = 0;
		ck_problem(c, FSCK_INODE, ino, 0, NULL, 0, "inode %u has bad mode 0%o", ino, mode);
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
		ck_problem(c, FSCK_IBLOCKS, ino, 0, NULL, 0,
		           "inode %u i_blocks is %llu, should be %llu", ino,
		           (unsigned long long)ino_blocks(in), (unsigned long long)want);
		if (!w.nbad)
			ck_add_fix(c, FIX_IBLOCKS, ino, 0, 0, (uint32_t)want);
	}
	uint64_t size = ino_size(in);
	if (w.dir) {
		uint64_t nb = size / c->bs;
		if (!w.nblk)
			ck_problem(c, FSCK_DIR, ino, 0, NULL, 0, "directory inode %u has no blocks",
			           ino);
		else if ((size & (c->bs - 1)) || nb > (uint64_t)(w.last + 1) ||
		         (uint64_t)(w.last + 1) - nb > c->sb[SB_PREALLOC_DIR_BLOCKS]) {
			ck_problem(c, FSCK_SIZE, ino, 0, NULL, 0,
			           "directory inode %u i_size %llu is wrong", ino,
			           (unsigned long long)size);
			if (!w.nbad)
				ck_add_fix(c, FIX_SIZE, ino, 0, 0, (uint32_t)(w.last + 1));
		}
		c->dir_nblk[ino] = (uint32_t)(w.last + 1);
	} else if (mode_is_reg(mode)) {
		if ((w.last >= 0 && size < (uint64_t)w.last * c->bs) || size > max_file_size(c)) {
			ck_problem(c, FSCK_SIZE, ino, 0, NULL, 0, "inode %u i_size %llu is wrong",
			           ino, (unsigned long long)size);
			if (!w.nbad)
				ck_add_fix(c, FIX_SIZE, ino, 0, 0, (uint32_t)(w.last + 1));
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
	struct walk w = {.ino = ino, .last = -1};
	int rc;
	if (ino == EXT2_JOURNAL_INO && !c->has_journal) {
		if (ino_links(in) || ino_blocks(in) || ino_block(in, 0))
			ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
			           "journal inode is not in use, but contains data");
		return 0;
	}
	if (ino == EXT2_RESIZE_INO) {
		if (!sb_has_compat(c->sb, EXT2_FEATURE_COMPAT_RESIZE_INODE))
			return 0;
		if (mode && !mode_is_reg(mode))
			return ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
			                  "resize inode has bad mode"),
			       0;
		w.resize = true;
	} else if (ino != EXT2_BAD_INO && mode && !mode_is_reg(mode)) {
		ck_problem(c, FSCK_INODE, ino, 0, NULL, 0, "reserved inode %u has bad mode 0%o",
		           ino, mode);
		return 0;
	}
	if (ino == EXT2_JOURNAL_INO && !mode_is_reg(mode))
		ck_problem(c, FSCK_INODE, ino, 0, NULL, 0, "journal inode is not a regular file");
	if ((rc = walk_blocks(c, &w, in)))
		return rc;
	uint64_t want = w.nblk * (c->bs / 512);
	if (ino_blocks(in) != want)
		ck_problem(c, FSCK_IBLOCKS, ino, 0, NULL, 0,
		           "inode %u i_blocks is %llu, should be %llu", ino,
		           (unsigned long long)ino_blocks(in), (unsigned long long)want);
	if (ino == EXT2_RESIZE_INO && w.nblk) {
		/* Its double-indirect block lists the reserved GDT blocks of group 0,
		 * each listing its backups: check that it still does. */
		uint32_t dind = ino_block(in, EXT2_DIND_BLOCK);
		bool ok = blk_valid(c, dind);
		for (unsigned i = 0; i < EXT2_N_BLOCKS && ok; i++)
			ok = i == EXT2_DIND_BLOCK || ino_block(in, i) == 0;
		if (ok && (rc = rd(c, dind, c->lvl[2], 1)))
			return rc;
		uint64_t pblk = c->first_data + 1 + c->gdt_blocks;
		uint32_t per = c->bs / 4;
		for (uint32_t i = 0; ok && i < c->rsv_gdt; i++, pblk++) {
			uint32_t off = (c->gdt_blocks + i) % per;
			if (get_le32(c->lvl[2] + 4 * off) != pblk) {
				ok = false;
				break;
			}
			if ((rc = rd(c, pblk, c->lvl[1], 1)))
				return rc;
			uint32_t k = 0;
			for (uint32_t g = 1; g < c->ngroups && ok && k < per; g++) {
				if (!grp_has_super(c, g))
					continue;
				ok = get_le32(c->lvl[1] + 4 * k) == pblk + (uint64_t)g * c->bpg;
				k++;
			}
		}
		if (!ok)
			ck_problem(c, FSCK_INODE, ino, 0, NULL, 0, "resize inode is not valid");
	}
	return 0;
}

static int pass1(struct ck *c)
{
	uint32_t per_chunk = (uint32_t)(c->cap_db ? 0 : 0) + (256u * 1024 / c->isz);
	if (per_chunk < c->bs / c->isz)
		per_chunk = c->bs / c->isz;
	per_chunk -= per_chunk % (c->bs / c->isz);
	int rc;
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint32_t n = grp_inodes_used_area(c, g);
		if (c->grp_bad[g])
			n = 0;
		uint64_t it = gd_inode_table(gd(c, g), c->desc_size);
		for (uint32_t i0 = 0; i0 < n && !c->stop; i0 += per_chunk) {
			uint32_t k = n - i0 < per_chunk ? n - i0 : per_chunk;
			uint64_t byte0 = (uint64_t)i0 * c->isz;
			uint32_t nblk = (uint32_t)(((uint64_t)k * c->isz + c->bs - 1) / c->bs);
			if ((rc = rd(c, it + byte0 / c->bs, c->ibuf, nblk)))
				return rc;
			for (uint32_t j = 0; j < k && !c->stop; j++) {
				uint32_t ino = g * c->ipg + i0 + j + 1;
				const uint8_t *in = c->ibuf + (size_t)j * c->isz;
				if (c->csum && !fsck_inode_csum_ok(c->seed, ino, in, c->isz)) {
					ck_problem(c, FSCK_CSUM, ino, 0, NULL, 0,
					           "inode %u checksum does not match inode", ino);
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
						ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
						           "root inode is not a directory");
						continue;
					}
					if (get_le32(in + I_DTIME))
						ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
						           "root inode has dtime set");
				} else if (!ino_links(in)) {
					if (!get_le32(in + I_DTIME) && ino_mode(in)) {
						ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
						           "deleted inode %u has zero dtime", ino);
						ck_add_fix(c, FIX_DTIME, ino, 0, 0, 1);
					}
					continue;
				} else {
					bit_set(c->iused, ino - 1);
					if (get_le32(in + I_DTIME)) {
						ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
						           "inode %u is in use, but has dtime set",
						           ino);
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
			ck_problem(
			    c, FSCK_INODE, 0, c->ea[3 * i], NULL, 0,
			    "extended attribute block %u has reference count %u, should be %u",
			    c->ea[3 * i], c->ea[3 * i + 1], c->ea[3 * i + 2]);
	return 0;
}

/* ---- pass 2: directory structure ---------------------------------------------------- */
enum { DXT_LEAF, DXT_ROOT, DXT_NODE };
struct dxb {
	uint8_t type, ref, dup, first;
	uint32_t parent;
	uint32_t min, max;   /* of its entries */
	uint32_t nmin, nmax; /* allowed by its parent */
};

struct dirst {
	uint32_t ino;
	uint32_t nblk;
	const uint32_t *pblk; /* per logical block, 0 = hole */
	bool htree;
	int hashv;
	uint32_t depth;
	struct dxb *dx;
};

static int cmp_dblk(const void *a, const void *b)
{
	const struct dblk *x = a, *y = b;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->lblk < y->lblk ? -1 : x->lblk > y->lblk;
}

static uint32_t name_hash(const uint8_t *n, uint32_t len)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ n[i]) * 16777619u;
	return h;
}

static void parse_int_node(struct ck *c, struct dirst *ds, uint32_t lblk, const uint8_t *b)
{
	uint32_t ino = ds->ino;
	uint32_t eoff = lblk == 0 ? DX_ROOT_INFO + b[DX_ROOT_INFO_LENGTH] : DX_NODE_ENTRIES;
	if (eoff + 8 > c->bs)
		return;
	uint32_t limit = get_le16(b + eoff + DX_LIMIT), count = get_le16(b + eoff + DX_COUNT);
	uint32_t expect = (c->bs - eoff - (c->csum ? DX_TAIL_SIZE : 0)) / DX_ENTRY_SIZE;
	if (limit != expect) {
		ck_problem(c, FSCK_HTREE, ino, 0, NULL, 0,
		           "htree directory %u block %u has limit %u, should be %u", ino, lblk,
		           limit, expect);
		ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
		return;
	}
	if (count > expect) {
		ck_problem(c, FSCK_HTREE, ino, 0, NULL, 0,
		           "htree directory %u block %u count %u > limit", ino, lblk, count);
		count = expect;
	}
	uint32_t hash = 0, minh = 0xFFFFFFFF, maxh = 0;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = b + eoff + i * DX_ENTRY_SIZE;
		uint32_t prev = hash;
		hash = i ? get_le32(e + DX_ENTRY_HASH) & ~1u : 0;
		uint32_t blk = get_le32(e + DX_ENTRY_BLOCK) & 0x0FFFFFFF;
		if (blk >= ds->nblk) {
			ck_problem(c, FSCK_HTREE, ino, 0, NULL, 0,
			           "htree directory %u: bad block number %u in index block %u", ino,
			           blk, lblk);
			ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
			return;
		}
		if (hash < prev) {
			ck_problem(c, FSCK_HTREE, ino, 0, NULL, 0,
			           "htree directory %u index block %u has out-of-order hashes", ino,
			           lblk);
			ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
			return;
		}
		struct dxb *x = &ds->dx[blk];
		if (x->ref)
			x->dup = 1;
		else {
			x->ref = 1;
			x->parent = lblk;
		}
		if (hash < minh)
			minh = hash;
		if (hash > maxh)
			maxh = hash;
		x->nmin = hash;
		x->nmax =
		    i + 1 < count ? get_le32(e + DX_ENTRY_SIZE + DX_ENTRY_HASH) & ~1u : 0xFFFFFFFE;
		if (i == 0)
			x->first = 1;
	}
	ds->dx[lblk].min = minh;
	ds->dx[lblk].max = maxh;
}

static void dx_classify(struct ck *c, struct dirst *ds, uint32_t lblk, const uint8_t *b)
{
	struct dxb *x = &ds->dx[lblk];
	x->type = DXT_LEAF;
	x->min = 0xFFFFFFFF;
	x->max = 0;
	if (lblk == 0) {
		x->type = DXT_ROOT;
		x->first = 1;
		return;
	}
	uint32_t lim = (c->bs - (8 + (c->csum ? DX_TAIL_SIZE : 0))) / DX_ENTRY_SIZE;
	if (de_inode(b) == 0 && de_rec_len(b) == c->bs && de_name_len(b) == 0 &&
	    get_le16(b + DX_NODE_ENTRIES + DX_LIMIT) == lim)
		x->type = DXT_NODE;
}

static void check_dirents(struct ck *c, struct dirst *ds, uint32_t lblk, uint32_t pblk, uint8_t *b,
                          uint32_t end)
{
	uint32_t ino = ds->ino, off = 0;
	int dot = lblk == 0 ? 0 : 2;
	memset(c->dedup, 0xFF, ((size_t)c->dedup_mask + 1) * sizeof(uint16_t));
	struct dxb *x = ds->htree ? &ds->dx[lblk] : NULL;
	while (off < end && !c->stop) {
		uint8_t *de = b + off;
		uint32_t rl = end - off >= 8 ? de_rec_len(de) : 0;
		uint32_t nl = end - off >= 8 ? de_name_len(de) : 0;
		if (rl < 12 || rl % 4 || off + rl > end || ext2_dir_rec_len(nl) > rl) {
			ck_problem(
			    c, FSCK_DIRENT, ino, pblk, NULL, 0,
			    "directory %u block %u (%u): entry at offset %u is corrupted (rec_len "
			    "%u, name_len %u)",
			    ino, lblk, pblk, off, rl, nl);
			ck_add_fix(c, FIX_SALVAGE, ino, pblk, off, end);
			return;
		}
		uint32_t t = de_inode(de);
		const char *name = (const char *)de + DE_NAME;
		uint8_t ft = c->filetype ? de_file_type(de) : 0;
		if (dot == 0) {
			if (!t || nl != 1 || name[0] != '.' || (rl > 8 + 1 && name[1] != 0) ||
			    t != ino || rl > 24) {
				ck_problem(c, FSCK_DIR, ino, pblk, name, (int)nl,
				           "directory %u: first entry is not a valid '.'", ino);
				ck_add_fix(c, FIX_DOT, ino, pblk, 0, ino);
				t = ino;
			}
		} else if (dot == 1) {
			if (!t || nl != 2 || name[0] != '.' || name[1] != '.' ||
			    (rl > 10 && name[2] != 0)) {
				ck_problem(c, FSCK_DIR, ino, pblk, name, (int)nl,
				           "directory %u: second entry is not a valid '..'", ino);
				ck_add_fix(c, FIX_DOT, ino, pblk, 1, off);
				t = 0;
			} else
				c->dotdot[ino] = t;
		} else if (t == ino) {
			ck_problem(c, FSCK_DIRENT, ino, pblk, name, (int)nl,
			           "directory %u: entry is a link to '.'", ino);
			ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
		}
		if (!c->filetype && de_file_type(de))
			ck_problem(c, FSCK_DIRENT, ino, pblk, name, (int)nl,
			           "directory %u: entry has filetype set", ino);
		if (t) {
			bool isdot = nl == 1 && name[0] == '.';
			bool isdotdot = nl == 2 && name[0] == '.' && name[1] == '.';
			const char *bad = NULL;
			if ((t != EXT2_ROOT_INO && t < c->first_ino) || t > c->ninodes)
				bad = "has a bad inode number";
			else if (!bit_test(c->iused, t - 1))
				bad = "points to an unused inode";
			else if (dot > 1 && isdot)
				bad = "is a duplicate '.'";
			else if (dot > 1 && isdotdot)
				bad = "is a duplicate '..'";
			else if (dot > 1 && t == EXT2_ROOT_INO)
				bad = "is a link to the root inode";
			else if (dot > 1 && nl == 0)
				bad = "has a zero-length name";
			if (bad) {
				ck_problem(c, FSCK_DIRENT, ino, pblk, name, (int)nl,
				           "directory %u: entry '%.*s' (inode %u) %s", ino, (int)nl,
				           name, t, bad);
				ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
				if ((t != EXT2_ROOT_INO && t < c->first_ino) || t > c->ninodes)
					goto next;
			}
			for (uint32_t i = 0; i < nl; i++)
				if (name[i] == '/' || name[i] == 0) {
					ck_problem(c, FSCK_DIRENT, ino, pblk, name, (int)nl,
					           "directory %u: entry has an illegal character "
					           "in its name",
					           ino);
					ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
					break;
				}
			/* A zero filetype e2fsck sets silently (it is no error under -n). */
			if (c->filetype && bit_test(c->iused, t - 1) && ft != c->ftype[t] && ft) {
				ck_problem(c, FSCK_DIRENT, ino, pblk, name, (int)nl,
				           "directory %u: entry '%.*s' (inode %u) has filetype %u, "
				           "should be %u",
				           ino, (int)nl, name, t, ft, c->ftype[t]);
				/* '.'/'..' to a non-directory are pass 3's to fix */
				if (!bad && (dot > 1 || c->ftype[t] == EXT2_FT_DIR))
					ck_add_fix(c, FIX_FILETYPE, ino, pblk, off, c->ftype[t]);
			}
			if (x && x->type == DXT_LEAF) {
				uint32_t h = fsck_dirhash(ds->hashv, (const uint8_t *)name, (int)nl,
				                          c->hash_seed);
				if (h < x->min)
					x->min = h;
				if (h > x->max)
					x->max = h;
			}
			if (dot > 1 && (c->iflag[t] & IF_DIR) && !bad) {
				if (c->parent[t]) {
					ck_problem(c, FSCK_DIRENT, ino, pblk, name, (int)nl,
					           "directory %u: entry '%.*s' is a second link to "
					           "directory %u",
					           ino, (int)nl, name, t);
					ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
				} else
					c->parent[t] = ino;
			}
			/* duplicate names within the block */
			uint32_t h = name_hash((const uint8_t *)name, nl) & c->dedup_mask;
			for (;;) {
				uint16_t o = c->dedup[h];
				if (o == 0xFFFF) {
					c->dedup[h] = (uint16_t)(off / 4);
					break;
				}
				const uint8_t *pe = b + (uint32_t)o * 4;
				if (de_name_len(pe) == nl && !memcmp(pe + DE_NAME, name, nl)) {
					ck_problem(c, FSCK_DIRENT, ino, pblk, name, (int)nl,
					           "directory %u: duplicate entry '%.*s'", ino,
					           (int)nl, name);
					ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
					break;
				}
				h = (h + 1) & c->dedup_mask;
			}
			if (ino == EXT2_ROOT_INO && nl == 10 && !memcmp(name, "lost+found", 10) &&
			    !c->lpf)
				c->lpf = t;
			if (c->counted[t] < UINT32_MAX)
				c->counted[t]++;
		}
	next:
		if (dot < 2)
			dot++;
		off += rl;
	}
	if (dot < 2 && !c->stop)
		ck_problem(c, FSCK_DIR, ino, pblk, NULL, 0, "directory %u: missing '.' or '..'",
		           ino);
}

static int check_dir(struct ck *c, struct dirst *ds)
{
	uint32_t ino = ds->ino;
	uint8_t *b = c->buf;
	int rc = 0;
	if (ds->htree) {
		/* The root must be sane before the index is believed (e2fsck pass 1). */
		rc = ds->pblk[0] ? rd(c, ds->pblk[0], b, 1) : 0;
		if (ds->pblk[0] && !rc) {
			uint8_t hv = b[DX_ROOT_HASH_VERSION];
			if (get_le32(b + DX_ROOT_RESERVED_ZERO) || b[DX_ROOT_INFO_LENGTH] != 8 ||
			    b[DX_ROOT_INDIRECT_LEVELS] >= DX_MAX_LEVELS ||
			    (hv != EXT2_HASH_LEGACY && hv != EXT2_HASH_HALF_MD4 &&
			     hv != EXT2_HASH_TEA) ||
			    (b[DX_ROOT_UNUSED_FLAGS] & 1)) {
				ck_problem(c, FSCK_HTREE, ino, ds->pblk[0], NULL, 0,
				           "htree directory %u has an invalid root node", ino);
				ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
				ds->htree = false;
			} else {
				ds->hashv = hv;
				if (c->sb[SB_FLAGS] & EXT2_FLAGS_UNSIGNED_HASH)
					ds->hashv += 3;
				ds->depth = b[DX_ROOT_INDIRECT_LEVELS] + 1u;
			}
		} else if (rc) {
			return rc;
		} else {
			ds->htree = false;
		}
		if (ds->htree) {
			ds->dx = calloc(ds->nblk, sizeof(*ds->dx));
			if (!ds->dx)
				return -ENOMEM;
		}
	}
	for (uint32_t l = 0; l < ds->nblk && !c->stop; l++) {
		uint32_t p = ds->pblk[l];
		if (!p) {
			ck_problem(c, FSCK_DIR, ino, 0, NULL, 0,
			           "directory inode %u has an unallocated block #%u", ino, l);
			continue;
		}
		if ((rc = rd(c, p, b, 1)))
			return rc;
		bool leaf = true;
		if (ds->htree) {
			dx_classify(c, ds, l, b);
			leaf = ds->dx[l].type == DXT_LEAF;
		}
		uint32_t end = c->bs;
		if (c->csum) {
			if (!leaf) {
				uint32_t coff = l == 0 ? DX_ROOT_ENTRIES : DX_NODE_ENTRIES, s;
				if (fsck_dx_csum(c->seed, ino, c->gen[ino], b, c->bs, coff, &s) &&
				    s != get_le32(b + coff +
				                  get_le16(b + coff + DX_LIMIT) * DX_ENTRY_SIZE +
				                  DX_TAIL_CHECKSUM)) {
					ck_problem(c, FSCK_CSUM, ino, p, NULL, 0,
					           "htree directory %u index block %u checksum "
					           "does not match",
					           ino, l);
					ck_add_fix(c, FIX_DIRBLK_CSUM, ino, p, l, 1);
				}
			} else if (!de_is_tail(b + c->bs - DIRENT_TAIL_SIZE)) {
				ck_problem(c, FSCK_CSUM, ino, p, NULL, 0,
				           "directory %u block %u has no space for its checksum",
				           ino, l);
			} else {
				end = c->bs - DIRENT_TAIL_SIZE;
				if (fsck_dirent_csum(c->seed, ino, c->gen[ino], b, c->bs) !=
				    get_le32(b + c->bs - DIRENT_TAIL_SIZE + DT_CHECKSUM)) {
					ck_problem(c, FSCK_CSUM, ino, p, NULL, 0,
					           "directory %u block %u checksum does not match",
					           ino, l);
					ck_add_fix(c, FIX_DIRBLK_CSUM, ino, p, l, 0);
				}
			}
		}
		check_dirents(c, ds, l, p, b, end);
		if (ds->htree && !leaf)
			parse_int_node(c, ds, l, b);
	}
	if (ds->htree && !c->stop) {
		bool bad = false;
		for (uint32_t l = 0; l < ds->nblk && !bad; l++) {
			struct dxb *x = &ds->dx[l];
			if (!ds->pblk[l])
				continue;
			if (x->type == DXT_LEAF) {
				uint32_t depth = 0, p = l;
				while (p != 0 && depth <= DX_MAX_LEVELS + 1) {
					p = ds->dx[p].parent;
					depth++;
				}
				if (!x->first && x->min < x->nmin && x->min != 0xFFFFFFFF)
					bad = true;
				else if (l && x->max > x->nmax)
					bad = true;
				else if (depth != ds->depth)
					bad = true;
			}
			if (l && (!x->ref || x->dup))
				bad = true;
		}
		if (bad) {
			ck_problem(
			    c, FSCK_HTREE, ino, 0, NULL, 0,
			    "htree directory %u: index does not match its blocks (hash order, "
			    "references or depth)",
			    ino);
			ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
		}
	}
	free(ds->dx);
	ds->dx = NULL;
	return 0;
}

static int pass2(struct ck *c)
{
	if (c->ndb)
		qsort(c->db, c->ndb, sizeof(*c->db), cmp_dblk);
	uint32_t maxent = c->bs / 12 + 1, sz = 1;
	while (sz < 2 * maxent)
		sz <<= 1;
	c->dedup = malloc(sz * sizeof(uint16_t));
	if (!c->dedup)
		return -ENOMEM;
	c->dedup_mask = sz - 1;
	uint32_t *map = NULL;
	size_t mapcap = 0;
	int rc = 0;
	for (size_t i = 0; i < c->ndb && !c->stop;) {
		size_t j = i;
		uint32_t ino = c->db[i].ino;
		while (j < c->ndb && c->db[j].ino == ino)
			j++;
		uint32_t n = c->dir_nblk[ino];
		if (n > mapcap) {
			uint32_t *m = realloc(map, (size_t)n * sizeof(*m));
			if (!m) {
				rc = -ENOMEM;
				break;
			}
			map = m;
			mapcap = n;
		}
		memset(map, 0, (size_t)n * sizeof(*map));
		for (size_t k = i; k < j; k++)
			if (c->db[k].lblk < n)
				map[c->db[k].lblk] = c->db[k].pblk;
		struct dirst ds = {
		    .ino = ino, .nblk = n, .pblk = map, .htree = (c->iflag[ino] & IF_HTREE) != 0};
		if ((rc = check_dir(c, &ds)))
			break;
		i = j;
	}
	free(map);
	return rc;
}

/* ---- pass 3: connectivity; pass 4: reference counts; pass 5: bitmaps, counts -------- */
/* The first inode at or after ino that pass 1 found in use, or ninodes + 1. */
static uint32_t next_used(const struct ck *c, uint32_t ino)
{
	return (uint32_t)bit_next(c->iused, ino - 1, c->ninodes) + 1;
}

static void pass3(struct ck *c)
{
	if (!bit_test(c->iused, EXT2_ROOT_INO - 1) || !(c->iflag[EXT2_ROOT_INO] & IF_DIR)) {
		ck_problem(c, FSCK_CONNECT, EXT2_ROOT_INO, 0, NULL, 0,
		           "root inode is not a directory");
		return;
	}
	c->iflag[EXT2_ROOT_INO] |= IF_REACHED;
	if (c->dotdot[EXT2_ROOT_INO] != EXT2_ROOT_INO)
		ck_problem(c, FSCK_CONNECT, EXT2_ROOT_INO, 0, NULL, 0,
		           "'..' of the root is %u, not 2", c->dotdot[EXT2_ROOT_INO]);
	for (uint32_t ino = next_used(c, 1); ino <= c->ninodes && !c->stop;
	     ino = next_used(c, ino + 1)) {
		if (!(c->iflag[ino] & IF_DIR) || (c->iflag[ino] & IF_REACHED))
			continue;
		/* Walk up the parents until something reached; a loop or a dead end
		 * leaves the walk unconnected. */
		uint32_t p = ino;
		bool ok = false;
		while (p && !(c->iflag[p] & IF_WALK)) {
			if (c->iflag[p] & IF_REACHED) {
				ok = true;
				break;
			}
			c->iflag[p] |= IF_WALK;
			p = c->parent[p];
		}
		for (uint32_t q = ino; q && (c->iflag[q] & IF_WALK); q = c->parent[q]) {
			c->iflag[q] &= (uint8_t)~IF_WALK;
			if (ok)
				c->iflag[q] |= IF_REACHED;
		}
		if (!ok) {
			ck_problem(c, FSCK_CONNECT, ino, 0, NULL, 0,
			           "unconnected directory inode %u", ino);
			c->iflag[ino] |= IF_REACHED; /* reported once */
		}
	}
	for (uint32_t ino = next_used(c, 1); ino <= c->ninodes && !c->stop;
	     ino = next_used(c, ino + 1)) {
		if (!(c->iflag[ino] & IF_DIR) || ino == EXT2_ROOT_INO || !c->parent[ino])
			continue;
		if (c->dotdot[ino] != c->parent[ino])
			ck_problem(c, FSCK_CONNECT, ino, 0, NULL, 0,
			           "'..' in directory %u is %u, should be %u", ino, c->dotdot[ino],
			           c->parent[ino]);
	}
}

static void pass4(struct ck *c)
{
	for (uint32_t ino = next_used(c, 1); ino <= c->ninodes && !c->stop;
	     ino = next_used(c, ino + 1)) {
		if (ino == EXT2_BAD_INO || (ino > EXT2_ROOT_INO && ino < c->first_ino))
			continue;
		uint32_t have = c->links[ino], want = c->counted[ino];
		if (want == 0) {
			ck_problem(c, FSCK_LINKS, ino, 0, NULL, 0, "unattached %sinode %u",
			           c->iflag[ino] & IF_ZEROLEN ? "zero-length " : "", ino);
			continue;
		}
		if ((c->iflag[ino] & IF_DIR) && want > EXT2_LINK_MAX)
			want = 1;
		if (have != want)
			ck_problem(c, FSCK_LINKS, ino, 0, NULL, 0,
			           "inode %u ref count is %u, should be %u", ino, have, want);
	}
}

static void pass5(struct ck *c)
{
	uint32_t bbytes = c->bpg / 8, ibytes = c->ipg / 8;
	uint64_t free_b = 0, free_i = 0;
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint8_t *d = gd(c, g);
		uint64_t f = grp_first(c, g);
		uint32_t nb = grp_nblocks(c, g), fb = 0, fi = 0, dirs = 0, diffb = 0, diffi = 0;
		uint64_t first_diff = 0;
		/* 32 blocks at a time: this loop is most of a clean check's time */
		const uint8_t *bm = c->bbm + (size_t)g * bbytes;
		for (uint32_t i = 0; i < nb; i += 32) {
			uint32_t k = nb - i < 32 ? nb - i : 32;
			uint32_t mask = k == 32 ? ~0u : (1u << k) - 1;
			uint32_t used = bits32(c->bused, f + i) & mask;
			fb += k - (uint32_t)__builtin_popcount(used);
			uint32_t x = c->grp_bad[g] ? 0 : (used ^ bits32(bm, i)) & mask;
			if (x) {
				if (!diffb)
					first_diff = f + i + (uint32_t)__builtin_ctz(x);
				diffb += (uint32_t)__builtin_popcount(x);
			}
		}
		if (diffb)
			ck_problem(c, FSCK_BITMAP, 0, first_diff, NULL, 0,
			           "block bitmap differences in group %u: %u blocks (first %llu)",
			           g, diffb, (unsigned long long)first_diff);
		uint32_t ifirst = 0;
		const uint8_t *im = c->ibm + (size_t)g * ibytes;
		for (uint32_t i = 0; i < c->ipg; i += 32) {
			uint32_t k = c->ipg - i < 32 ? c->ipg - i : 32;
			uint32_t mask = k == 32 ? ~0u : (1u << k) - 1;
			uint64_t ino0 = (uint64_t)g * c->ipg + i + 1;
			uint32_t used = bits32(c->iused, ino0 - 1) & mask;
			fi += k - (uint32_t)__builtin_popcount(used);
			for (uint32_t u = used; u; u &= u - 1)
				if (c->iflag[ino0 + (uint32_t)__builtin_ctz(u)] & IF_DIR)
					dirs++;
			uint32_t x = c->grp_bad[g] ? 0 : (used ^ bits32(im, i)) & mask;
			if (x) {
				if (!diffi)
					ifirst = (uint32_t)ino0 + (uint32_t)__builtin_ctz(x);
				diffi += (uint32_t)__builtin_popcount(x);
			}
		}
		if (diffi)
			ck_problem(c, FSCK_BITMAP, ifirst, 0, NULL, 0,
			           "inode bitmap differences in group %u: %u inodes (first %u)", g,
			           diffi, ifirst);
		free_b += fb;
		free_i += fi;
		if (gd_free_blocks(d, c->desc_size) != fb)
			ck_problem(c, FSCK_COUNT, 0, 0, NULL, 0,
			           "free blocks count wrong for group %u (%u, counted=%u)", g,
			           gd_free_blocks(d, c->desc_size), fb);
		if (gd_free_inodes(d, c->desc_size) != fi)
			ck_problem(c, FSCK_COUNT, 0, 0, NULL, 0,
			           "free inodes count wrong for group %u (%u, counted=%u)", g,
			           gd_free_inodes(d, c->desc_size), fi);
		if (gd_used_dirs(d, c->desc_size) != dirs)
			ck_problem(c, FSCK_COUNT, 0, 0, NULL, 0,
			           "directories count wrong for group %u (%u, counted=%u)", g,
			           gd_used_dirs(d, c->desc_size), dirs);
	}
	if (c->stop)
		return;
	if (sb_free_blocks(c->sb, false) != free_b)
		ck_problem(
		    c, FSCK_COUNT, 0, 0, NULL, 0, "free blocks count wrong (%llu, counted=%llu)",
		    (unsigned long long)sb_free_blocks(c->sb, false), (unsigned long long)free_b);
	if (sb_get32(c->sb, SB_FREE_INODES) != free_i)
		ck_problem(c, FSCK_COUNT, 0, 0, NULL, 0,
		           "free inodes count wrong (%u, counted=%llu)",
		           sb_get32(c->sb, SB_FREE_INODES), (unsigned long long)free_i);
}

/* The journal superblock, as far as e2fsck's pre-check looks at it. */
static int check_journal(struct ck *c)
{
	if (!c->has_journal)
		return 0;
	uint32_t jino = sb_get32(c->sb, SB_JOURNAL_INUM);
	if (jino != EXT2_JOURNAL_INO || sb_get32(c->sb, SB_JOURNAL_DEV)) {
		ck_problem(c, FSCK_SUPER, 0, 0, NULL, 0, "journal inode %u is not supported here",
		           jino);
		return 0;
	}
	uint8_t in[1024];
	if (c->grp_bad[0])
		return 0;
	int rc = ck_read_inode(c, EXT2_JOURNAL_INO, in);
	if (rc)
		return rc;
	uint32_t b = ino_block(in, 0);
	if (!mode_is_reg(ino_mode(in)) || !blk_valid(c, b)) {
		ck_problem(c, FSCK_SUPER, EXT2_JOURNAL_INO, 0, NULL, 0,
		           "superblock has an invalid journal (inode 8)");
		return 0;
	}
	if ((rc = rd(c, b, c->buf, 1)))
		return rc;
	uint32_t t = get_be32(c->buf + JSB_BLOCKTYPE);
	if (get_be32(c->buf + JSB_MAGIC) != JBD2_MAGIC ||
	    (t != JBD2_SUPERBLOCK_V1 && t != JBD2_SUPERBLOCK_V2) ||
	    get_be32(c->buf + JSB_BLOCKSIZE) != c->bs) {
		ck_problem(c, FSCK_SUPER, EXT2_JOURNAL_INO, b, NULL, 0,
		           "journal superblock is corrupt");
		return 0;
	}
	if (get_be32(c->buf + JSB_START) && !c->r->needs_recovery)
		ck_problem(c, FSCK_SUPER, EXT2_JOURNAL_INO, b, NULL, 0,
		           "superblock needs_recovery flag is clear, but journal has data");
	return 0;
}

/* The fast scrub: what a mount after an unclean shutdown can afford. */
static int fast_scan(struct ck *c)
{
	uint32_t per_chunk = 256u * 1024 / c->isz;
	per_chunk -= per_chunk % (c->bs / c->isz);
	if (!per_chunk)
		per_chunk = c->bs / c->isz;
	int rc;
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint32_t n = c->grp_bad[g] ? 0 : grp_inodes_used_area(c, g);
		uint64_t it = gd_inode_table(gd(c, g), c->desc_size);
		for (uint32_t i0 = 0; i0 < n && !c->stop; i0 += per_chunk) {
			uint32_t k = n - i0 < per_chunk ? n - i0 : per_chunk;
			uint32_t nblk = (uint32_t)(((uint64_t)k * c->isz + c->bs - 1) / c->bs);
			if ((rc = rd(c, it + (uint64_t)i0 * c->isz / c->bs, c->ibuf, nblk)))
				return rc;
			for (uint32_t j = 0; j < k && !c->stop; j++) {
				uint32_t ino = g * c->ipg + i0 + j + 1;
				const uint8_t *in = c->ibuf + (size_t)j * c->isz;
				if (c->csum && !fsck_inode_csum_ok(c->seed, ino, in, c->isz))
					ck_problem(c, FSCK_CSUM, ino, 0, NULL, 0,
					           "inode %u checksum does not match inode", ino);
				uint16_t m = ino_mode(in);
				if (ino < c->first_ino || !ino_links(in))
					continue;
				if (!mode_to_ftype(m))
					ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
					           "inode %u has bad mode 0%o", ino, m);
				if (get_le32(in + I_DTIME))
					ck_problem(c, FSCK_INODE, ino, 0, NULL, 0,
					           "inode %u is in use, but has dtime set", ino);
				if (mode_is_reg(m) || mode_is_dir(m) ||
				    (mode_is_lnk(m) && ino_size(in) >= 60))
					for (unsigned i = 0; i < EXT2_N_BLOCKS; i++) {
						uint32_t b = ino_block(in, i);
						if (b && !blk_valid(c, b)) {
							ck_problem(c, FSCK_BLOCK_RANGE, ino, b,
							           NULL, 0,
							           "inode %u has illegal block %u",
							           ino, b);
							break;
						}
					}
			}
		}
	}
	return 0;
}

static void ck_free(struct ck *c)
{
	free(c->gdt);
	free(c->grp_bad);
	free(c->bbm);
	free(c->ibm);
	free(c->bused);
	free(c->iused);
	free(c->links);
	free(c->counted);
	free(c->iflag);
	free(c->ftype);
	free(c->parent);
	free(c->dotdot);
	free(c->gen);
	free(c->dir_nblk);
	free(c->db);
	free(c->fx);
	free(c->ea);
	free(c->buf);
	free(c->ibuf);
	for (int i = 0; i < 3; i++)
		free(c->lvl[i]);
	free(c->dedup);
}

static int run_check(struct ck *c)
{
	int rc = pass0(c);
	if (rc)
		return rc < 0 ? rc : 0;
	size_t n = (size_t)c->ninodes + 1;
	c->buf = malloc(c->bs);
	c->ibuf = malloc(256u * 1024 + c->bs);
	for (int i = 0; i < 3; i++)
		c->lvl[i] = malloc(c->bs);
	c->bused = calloc((c->nblocks + 7) / 8 + FSCK_MAP_SLACK, 1);
	c->iused = calloc((n + 7) / 8 + FSCK_MAP_SLACK, 1);
	if (!c->buf || !c->ibuf || !c->lvl[0] || !c->lvl[1] || !c->lvl[2] || !c->bused || !c->iused)
		return -ENOMEM;
	if ((rc = load_bitmaps(c)) || c->stop)
		return rc;
	if (c->o->fast)
		return fast_scan(c);
	c->links = calloc(n, sizeof(*c->links));
	c->counted = calloc(n, sizeof(*c->counted));
	c->iflag = calloc(n, 1);
	c->ftype = calloc(n, 1);
	c->parent = calloc(n, sizeof(*c->parent));
	c->dotdot = calloc(n, sizeof(*c->dotdot));
	c->gen = calloc(n, sizeof(*c->gen));
	c->dir_nblk = calloc(n, sizeof(*c->dir_nblk));
	if (!c->links || !c->counted || !c->iflag || !c->ftype || !c->parent || !c->dotdot ||
	    !c->gen || !c->dir_nblk)
		return -ENOMEM;
	if ((rc = check_journal(c)) || c->stop)
		return rc;
	if ((rc = pass1(c)) || c->stop)
		return rc;
	if ((rc = pass2(c)) || c->stop)
		return rc;
	pass3(c);
	if (!c->stop)
		pass4(c);
	if (!c->stop)
		pass5(c);
	return 0;
}

static int check_once(struct bdev *d, const struct fsck_opts *o, struct fsck_report *r,
                      struct bo_err *err, bool repair)
{
	struct ck c = {.d = d, .o = o, .r = r, .err = err};
	bool modified = r->modified;
	uint32_t fixed = r->nr_fixed;
	memset(r, 0, sizeof(*r));
	r->modified = modified;
	r->nr_fixed = fixed;
	int rc = run_check(&c);
	if (!rc && repair && r->nr_problems && !r->needs_recovery) {
		int done = 0;
		if (c.sb_bad || c.gdt_bad || c.gdt)
			rc = done = fsck_restore_backup(&c);
		if (!done && c.links) {
			rc = fsck_apply_fixes(&c);
			if (!rc)
				rc = fsck_rewrite_maps(&c);
		}
		if (rc > 0)
			rc = 0;
	}
	ck_free(&c);
	return rc;
}

int fsck_check(struct bdev *d, const struct fsck_opts *o, struct fsck_report *r, struct bo_err *err)
{
	static const struct fsck_opts defaults;
	if (!o)
		o = &defaults;
	memset(r, 0, sizeof(*r));
	if (o->repair == FSCK_REPAIR_NONE || o->fast)
		return check_once(d, o, r, err, false);
	/* Repair: check and fix until a check finds nothing more it can fix. */
	struct fsck_opts q = *o;
	q.max_problems = 0;
	uint32_t before = 0;
	for (int round = 0; round < 8; round++) {
		void (*cb)(void *, const struct fsck_problem *) = round ? NULL : o->on_problem;
		q.on_problem = cb;
		uint32_t fixed_before = r->nr_fixed;
		int rc = check_once(d, &q, r, err, true);
		if (rc)
			return rc;
		if (round && r->nr_fixed == fixed_before)
			break; /* this round changed nothing: the rest is beyond these repairs */
		if (round == 0)
			before = r->nr_problems;
		if (!r->nr_problems || r->needs_recovery || !r->modified)
			break;
	}
	/* The verdict after repair: a plain check. */
	q.repair = FSCK_REPAIR_NONE;
	q.on_problem = NULL;
	bool modified = r->modified;
	int rc = check_once(d, &q, r, err, false);
	r->modified = modified;
	r->nr_fixed = before > r->nr_problems ? before - r->nr_problems : 0;
	if (modified && !r->nr_fixed)
		r->nr_fixed = 1;
	if (!rc && modified && !r->nr_problems)
		rc = blk_flush(d);
	return rc;
}

int fsck_exit_code(const struct fsck_report *r)
{
	if (r->nr_problems)
		return 4;
	return r->modified ? 1 : 0;
}
