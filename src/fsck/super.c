// SPDX-License-Identifier: GPL-2.0-or-later
/* super.c — pass 0 of blackout fsck: the superblock (features, geometry, counts), the
 * group descriptors and the journal's superblock, before anything is located through
 * them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/problem.h"
#include "fsck/fsck_int.h"

/* ---- pass 0: superblock and group descriptors ------------------------------------ */
/* Decodes c->sb; 1 when it cannot be used (a problem was reported). */
static int sb_parse(struct ck *c)
{
	uint8_t *sb = c->sb;
	if (sb_get16(sb, SB_MAGIC) != EXT2_MAGIC) {
		ck_problem(c, PR_0_SB_MAGIC, 0, 1, NULL, 0, sb_get16(sb, SB_MAGIC));
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
		c->seed = ext2_csum_seed(sb);
		if (sb[SB_CHECKSUM_TYPE] != EXT4_CRC32C_CHKSUM)
			return ck_problem(c, PR_0_CSUM_TYPE, 0, 1, NULL, 0, sb[SB_CHECKSUM_TYPE]),
			       1;
		if (ext2_sb_csum(sb) != sb_get32(sb, SB_CHECKSUM)) {
			ck_problem(c, PR_0_SB_CSUM, 0, 1, NULL, 0);
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

	return 0;
}

/* Geometry: without it nothing else can be located. 1: unusable. */
static int sb_geometry(struct ck *c, uint64_t devsz)
{
	const uint8_t *sb = c->sb;
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
		ck_problem(c, PR_0_SB_FIELD, 0, 1, NULL, 0, bad, (unsigned long long)val);
		return 1;
	}
	if (c->nblocks * c->bs > devsz) {
		ck_problem(c, PR_0_FS_SIZE_WRONG, 0, 1, NULL, 0, (unsigned long long)c->nblocks,
		           (unsigned long long)(devsz / c->bs));
		return 1;
	}
	c->ngroups = (uint32_t)((c->nblocks - c->first_data + c->bpg - 1) / c->bpg);
	c->ninodes = c->ngroups * c->ipg;
	if ((uint64_t)c->ngroups * c->ipg > 0xFFFFFFFFu) {
		ck_problem(c, PR_0_TOO_MANY_INODES, 0, 1, NULL, 0);
		return 1;
	}
	c->gdt_blocks = (uint32_t)(((uint64_t)c->ngroups * c->desc_size + c->bs - 1) / c->bs);
	if (c->gdt_blocks + c->rsv_gdt + 2 >= c->bpg) {
		ck_problem(c, PR_0_GDT_TOO_BIG, 0, 1, NULL, 0);
		return 1;
	}
	return 0;
}

/* Counts and times e2fsck corrects in place. 1: first_ino unusable. */
static int sb_counts(struct ck *c, uint64_t ic)
{
	const uint8_t *sb = c->sb;
	uint32_t inc = sb_get32(sb, SB_FEATURE_INCOMPAT);
	if (ic != c->ninodes)
		ck_problem(c, PR_0_INODE_COUNT_WRONG, 0, 1, NULL, 0, (unsigned long long)ic,
		           c->ninodes);
	if (c->first_ino < EXT2_GOOD_OLD_FIRST_INO || c->first_ino > c->ninodes) {
		ck_problem(c, PR_0_FIRST_INO, 0, 1, NULL, 0, c->first_ino);
		return 1;
	}
	if (sb_r_blocks_count(sb, false) > c->nblocks / 2)
		ck_problem(c, PR_0_RESERVED_BLOCKS, 0, 1, NULL, 0,
		           sb_get32(sb, SB_R_BLOCKS_COUNT_LO));
	if (sb_free_blocks(sb, false) > c->nblocks)
		ck_problem(c, PR_0_FREE_BLOCKS_RANGE, 0, 1, NULL, 0,
		           sb_get32(sb, SB_FREE_BLOCKS_LO));
	if (sb_get32(sb, SB_FREE_INODES) > c->ninodes)
		ck_problem(c, PR_0_FREE_INODES_RANGE, 0, 1, NULL, 0, sb_get32(sb, SB_FREE_INODES));
	uint32_t now = (uint32_t)time(NULL);
	if (sb_get32(sb, SB_MTIME) > now)
		ck_problem(c, PR_0_FUTURE_SB_LAST_MOUNT, 0, 1, NULL, 0);
	if (sb_get32(sb, SB_WTIME) > now)
		ck_problem(c, PR_0_FUTURE_SB_LAST_WRITE, 0, 1, NULL, 0);
	if (inc & EXT3_FEATURE_INCOMPAT_RECOVER) {
		c->r->needs_recovery = true;
		ck_problem(c, PR_0_NEEDS_RECOVERY, 0, 0, NULL, 0,
		           c->o->repair == FSCK_REPAIR_NONE
		               ? "the journal needs recovery: not replayed in a read-only "
		                 "check (-p or -y replays it)"
		               : "the journal needs recovery and could not be replayed");
	}
	return 0;
}

static int check_gdt(struct ck *c)
{
	int rc;
	size_t gsz = (size_t)c->gdt_blocks * c->bs;
	c->gdt = malloc(gsz);
	c->grp_bad = calloc(c->ngroups, 1);
	if (!c->gdt || !c->grp_bad)
		return -ENOMEM;
	if ((rc = ck_rd(c, c->first_data + 1, c->gdt, c->gdt_blocks)))
		return rc;
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint8_t *d = ck_gd(c, g);
		uint64_t first = ck_grp_first(c, g), last = first + ck_grp_nblocks(c, g) - 1;
		uint64_t bb = gd_block_bitmap(d, c->desc_size),
		         ib = gd_inode_bitmap(d, c->desc_size);
		uint64_t it = gd_inode_table(d, c->desc_size);
		if (c->csum &&
		    ext2_gd_csum(c->seed, g, d, c->desc_size) != get_le16(d + GD_CHECKSUM)) {
			ck_problem(c, PR_0_GDT_CSUM, 0, 0, NULL, 0, g);
		}
		if (bb < first || bb > last) {
			ck_problem(c, PR_0_BB_NOT_GROUP, 0, bb, NULL, 0, g, (unsigned long long)bb);
			c->grp_bad[g] = 1;
		}
		if (ib < first || ib > last) {
			ck_problem(c, PR_0_IB_NOT_GROUP, 0, ib, NULL, 0, g, (unsigned long long)ib);
			c->grp_bad[g] = 1;
		}
		if (it < first || it + ck_itb_blocks(c) - 1 > last) {
			ck_problem(c, PR_0_ITABLE_NOT_GROUP, 0, it, NULL, 0, g,
			           (unsigned long long)it);
			c->grp_bad[g] = 1;
		}
		uint16_t fl = gd_flags(d);
		if (!c->csum && (fl & (EXT4_BG_INODE_UNINIT | EXT4_BG_BLOCK_UNINIT))) {
			ck_problem(c, PR_0_GDT_UNINIT, 0, 0, NULL, 0, g, fl);
			ck_add_fix(c, FIX_GD_UNINIT, 0, 0, 0, g); /* e2fsck clears them */
		}
		if (c->csum && (fl & EXT4_BG_BLOCK_UNINIT) && g == c->ngroups - 1)
			ck_problem(c, PR_0_BB_UNINIT_LAST, 0, 0, NULL, 0, g);
		if (c->csum && gd_itable_unused(d, c->desc_size) > c->ipg)
			ck_problem(c, PR_0_GDT_ITABLE_UNUSED, 0, 0, NULL, 0, g,
			           gd_itable_unused(d, c->desc_size));
	}
	return 0;
}

/* A superblock at byte offset `off` that can stand in for a primary of block size bs
 * and bpg blocks per group: the backup of group 1, checksum included. */
static bool backup_ok(const uint8_t *b, uint32_t bs, uint32_t bpg)
{
	return sb_get16(b, SB_MAGIC) == EXT2_MAGIC && sb_block_size(b) == bs &&
	       sb_get32(b, SB_BLOCKS_PER_GROUP) == bpg && sb_get16(b, SB_BLOCK_GROUP_NR) == 1 &&
	       (!sb_has_ro_compat(b, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM) ||
	        ext2_sb_csum(b) == sb_get32(b, SB_CHECKSUM));
}

int ck_find_backup_sb(struct ck *c, uint8_t *out, uint64_t *blk, uint32_t *bsz)
{
	/* Where e2fsck looks (group 1 of a filesystem with 8 x block size blocks per
	 * group), then the other group sizes mke2fs -g can make. */
	uint32_t own = sb_get32(c->sb, SB_BLOCKS_PER_GROUP);
	static const uint32_t bss[] = {1024, 2048, 4096};
	for (unsigned i = 0; i < 3; i++) {
		uint32_t bs = bss[i];
		uint32_t cand[] = {bs * 8, own, 8192, 4096, 2048, 1024, 512, 256};
		for (unsigned k = 0; k < sizeof(cand) / sizeof(cand[0]); k++) {
			uint32_t bpg = cand[k];
			if (bpg < 256 || bpg > bs * 8 || bpg % 8 || (k && bpg == bs * 8))
				continue;
			uint64_t at = (bs == 1024 ? 1ull : 0ull) + bpg;
			if ((at + 1) * bs > blk_size_bytes(c->d) ||
			    blk_pread(c->d, at * bs, EXT2_SB_SIZE, out))
				continue;
			if (!backup_ok(out, bs, bpg))
				continue;
			*blk = at;
			*bsz = bs;
			return 1;
		}
	}
	return 0;
}

/* The primary is unusable: check through a backup, as e2fsck does, and say which. A
 * primary without even the magic and no backup: not an ext2/ext3 filesystem. */
static int use_backup(struct ck *c, uint64_t devsz)
{
	uint8_t b[EXT2_SB_SIZE];
	uint64_t at;
	uint32_t bs;
	bool magic = sb_get16(c->sb, SB_MAGIC) == EXT2_MAGIC;
	if (!ck_find_backup_sb(c, b, &at, &bs)) {
		if (!magic)
			return bo_errf(c->err, -EINVAL,
			               "not an ext2/ext3 filesystem (no superblock magic at byte "
			               "1024, and no backup superblock where e2fsck -b looks)");
		return 1;
	}
	ck_problem(c, PR_0_BACKUP_SB, 0, at, NULL, 0, (unsigned long long)at, bs,
	           (unsigned long long)at, bs);
	memcpy(c->sb, b, EXT2_SB_SIZE);
	sb_put16(c->sb, SB_BLOCK_GROUP_NR, 0);
	if (sb_has_ro_compat(c->sb, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM))
		sb_put32(c->sb, SB_CHECKSUM, ext2_sb_csum(c->sb));
	c->sb_bad = true;
	c->backup_sb = at;
	int rc = sb_parse(c);
	return rc ? rc : sb_geometry(c, devsz);
}

int ck_pass0(struct ck *c)
{
	uint64_t devsz = blk_size_bytes(c->d);
	if (devsz < 4096)
		return bo_errf(c->err, -EINVAL, "device is %llu bytes: too small for ext2",
		               (unsigned long long)devsz);
	uint8_t head[4096];
	int rc = blk_pread(c->d, 0, sizeof(head), head);
	if (rc)
		return bo_errf(c->err, rc, "reading the superblock: %s", bo_errstr(&c->d->err, rc));
	memcpy(c->sb, head + EXT2_SB_OFFSET, EXT2_SB_SIZE);
	rc = sb_parse(c);
	if (!rc)
		rc = sb_geometry(c, devsz);
	if (rc == 1 && !c->stop)
		rc = use_backup(c, devsz);
	else if (rc == 1 && sb_get16(c->sb, SB_MAGIC) != EXT2_MAGIC &&
	         !ck_find_backup_sb(c, head, &(uint64_t){0}, &(uint32_t){0}))
		rc = bo_errf(c->err, -EINVAL, "not an ext2/ext3 filesystem");
	if (rc)
		return rc;
	if ((rc = sb_counts(c, sb_get32(c->sb, SB_INODES_COUNT))))
		return rc;
	return check_gdt(c);
}
/* The journal superblock, as far as e2fsck's pre-check looks at it. */
int ck_check_journal(struct ck *c)
{
	if (!c->has_journal)
		return 0;
	uint32_t jino = sb_get32(c->sb, SB_JOURNAL_INUM);
	if (jino != EXT2_JOURNAL_INO || sb_get32(c->sb, SB_JOURNAL_DEV)) {
		ck_problem(c, PR_0_JOURNAL_UNSUPP_INODE, 0, 0, NULL, 0, jino);
		return 0;
	}
	uint8_t in[1024];
	if (c->grp_bad[0])
		return 0;
	int rc = ck_read_inode(c, EXT2_JOURNAL_INO, in);
	if (rc)
		return rc;
	uint32_t b = ino_block(in, 0);
	if (!mode_is_reg(ino_mode(in)) || !ck_blk_valid(c, b)) {
		ck_problem(c, PR_0_JOURNAL_BAD_INODE, EXT2_JOURNAL_INO, 0, NULL, 0);
		return 0;
	}
	if ((rc = ck_rd(c, b, c->buf, 1)))
		return rc;
	uint32_t t = get_be32(c->buf + JSB_BLOCKTYPE);
	if (get_be32(c->buf + JSB_MAGIC) != JBD2_MAGIC ||
	    (t != JBD2_SUPERBLOCK_V1 && t != JBD2_SUPERBLOCK_V2) ||
	    get_be32(c->buf + JSB_BLOCKSIZE) != c->bs) {
		ck_problem(c, PR_0_JOURNAL_BAD_SUPER, EXT2_JOURNAL_INO, b, NULL, 0);
		return 0;
	}
	if (get_be32(c->buf + JSB_START) && !c->r->needs_recovery)
		ck_problem(c, PR_0_JOURNAL_HAS_DATA, EXT2_JOURNAL_INO, b, NULL, 0);
	return 0;
}
