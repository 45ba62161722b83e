// SPDX-License-Identifier: GPL-2.0-or-later
/* repair_super.c — the superblock and group descriptors restored from their backups
 * when the primary copies are damaged or disagree about what never changes after
 * mkfs. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/fsck_int.h"

/* Fields that never change after mkfs here (no resize, no tune2fs): a backup that
 * disagrees about one is the better copy. */
static bool sb_static_differs(const uint8_t *a, const uint8_t *b)
{
	static const uint16_t f32[] = {
	    SB_INODES_COUNT,     SB_BLOCKS_COUNT_LO,  SB_FIRST_DATA_BLOCK, SB_LOG_BLOCK_SIZE,
	    SB_LOG_CLUSTER_SIZE, SB_BLOCKS_PER_GROUP, SB_INODES_PER_GROUP, SB_REV_LEVEL,
	    SB_FIRST_INO,        SB_FEATURE_INCOMPAT, SB_FEATURE_RO_COMPAT};
	for (unsigned i = 0; i < sizeof(f32) / sizeof(f32[0]); i++)
		if (sb_get32(a, f32[i]) != sb_get32(b, f32[i]))
			return true;
	return sb_get16(a, SB_INODE_SIZE) != sb_get16(b, SB_INODE_SIZE) ||
	       sb_get16(a, SB_RESERVED_GDT_BLOCKS) != sb_get16(b, SB_RESERVED_GDT_BLOCKS) ||
	       memcmp(a + SB_UUID, b + SB_UUID, 16) != 0;
}

static int restore_sb(struct ck *c, bool only_if_differs)
{
	if (!only_if_differs && c->backup_sb) {
		/* pass 0 checked with the backup (c->backup_sb): it becomes the primary */
		c->r->nr_fixed++;
		int rc = ck_write_sb(c);
		return rc ? rc : 1;
	}
	uint8_t b[EXT2_SB_SIZE];
	uint64_t at;
	uint32_t bs;
	if (!ck_find_backup_sb(c, b, &at, &bs))
		return 0;
	if (only_if_differs && (!sb_static_differs(b, c->sb) || bs != c->bs ||
	                        sb_get32(b, SB_BLOCKS_PER_GROUP) != c->bpg))
		return 0;
	memcpy(c->sb, b, EXT2_SB_SIZE);
	sb_put16(c->sb, SB_BLOCK_GROUP_NR, 0);
	c->r->nr_fixed++;
	int rc = ck_write_sb(c);
	return rc ? rc : 1;
}

static bool gdt_ok(struct ck *c, const uint8_t *gdt)
{
	for (uint32_t g = 0; g < c->ngroups; g++) {
		const uint8_t *d = gdt + (size_t)g * c->desc_size;
		uint64_t first = c->first_data + (uint64_t)g * c->bpg;
		uint64_t last =
		    first + c->bpg - 1 < c->nblocks - 1 ? first + c->bpg - 1 : c->nblocks - 1;
		uint64_t itb = ((uint64_t)c->ipg * c->isz + c->bs - 1) / c->bs;
		uint64_t bb = gd_block_bitmap(d, c->desc_size),
		         ib = gd_inode_bitmap(d, c->desc_size);
		uint64_t it = gd_inode_table(d, c->desc_size);
		if (bb < first || bb > last || ib < first || ib > last || it < first ||
		    it + itb - 1 > last || bb == ib || (bb >= it && bb < it + itb) ||
		    (ib >= it && ib < it + itb))
			return false;
		if (c->csum &&
		    ext2_gd_csum(c->seed, g, d, c->desc_size) != get_le16(d + GD_CHECKSUM))
			return false;
	}
	return true;
}

static int restore_gdt(struct ck *c)
{
	if (!c->gdt || c->ngroups < 2 || !ext2_bg_has_super(c->sb, 1))
		return 0;
	size_t sz = (size_t)c->gdt_blocks * c->bs;
	uint8_t *b = malloc(sz);
	if (!b)
		return -ENOMEM;
	uint64_t at = c->first_data + (uint64_t)c->bpg + 1;
	int rc = blk_pread(c->d, at * c->bs, sz, b);
	/* Locations never move on ext2/ext3 (no online resize here): a backup that
	 * disagrees about one is the better copy. Counts differ legitimately. */
	bool moved = false;
	for (uint32_t g = 0; !rc && g < c->ngroups && !moved; g++) {
		const uint8_t *x = b + (size_t)g * c->desc_size,
		              *y = c->gdt + (size_t)g * c->desc_size;
		moved = gd_block_bitmap(x, c->desc_size) != gd_block_bitmap(y, c->desc_size) ||
		        gd_inode_bitmap(x, c->desc_size) != gd_inode_bitmap(y, c->desc_size) ||
		        gd_inode_table(x, c->desc_size) != gd_inode_table(y, c->desc_size);
	}
	if (!rc && moved && gdt_ok(c, b)) {
		c->r->modified = true;
		c->r->nr_fixed++;
		rc = blk_pwrite(c->d, (uint64_t)(c->first_data + 1) * c->bs, sz, b, 0);
		if (!rc)
			rc = 1;
	}
	free(b);
	return rc;
}

/* Fields e2fsck puts right in place when no backup is better. */
static int fix_sb_fields(struct ck *c)
{
	if (!c->ninodes)
		return 0;
	uint32_t now = (uint32_t)time(NULL);
	bool dirty = false;
	if (sb_get32(c->sb, SB_INODES_COUNT) != c->ninodes)
		sb_put32(c->sb, SB_INODES_COUNT, c->ninodes), dirty = true;
	if (sb_get32(c->sb, SB_MTIME) > now)
		sb_put32(c->sb, SB_MTIME, now), dirty = true;
	if (sb_get32(c->sb, SB_WTIME) > now)
		sb_put32(c->sb, SB_WTIME, now), dirty = true;
	if (sb_get32(c->sb, SB_FREE_INODES) > c->ninodes)
		sb_put32(c->sb, SB_FREE_INODES, 0), dirty = true;
	if (sb_get32(c->sb, SB_FREE_BLOCKS_LO) > c->nblocks)
		sb_put32(c->sb, SB_FREE_BLOCKS_LO, 0), dirty = true;
	if (!dirty)
		return 0;
	c->r->nr_fixed++;
	int rc = ck_write_sb(c);
	return rc ? rc : 1;
}

int fsck_restore_backup(struct ck *c)
{
	int rc = 0;
	if (!c->sb_bad && c->ngroups > 1 && (rc = restore_sb(c, true)))
		return rc;
	if (c->sb_bad) {
		rc = restore_sb(c, false);
		if (!rc)
			rc = fix_sb_fields(c);
		if (rc)
			return rc;
	}
	return restore_gdt(c);
}
