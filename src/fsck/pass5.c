// SPDX-License-Identifier: GPL-2.0-or-later
/* pass5.c — pass 5 of blackout fsck: the on-disk bitmaps (read before pass 1, group
 * metadata claimed first) against what the passes found in use; summary counts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/problem.h"
#include "fsck/fsck_int.h"

/* The two bitmaps of a group, told apart only by these: one code path reads and
 * checks both (the twin checks have one home). */
struct mapkind {
	const char *name; /* "block", "inode" */
	uint16_t csum_lo, csum_hi;
};
static const struct mapkind MAP_BLOCK = {"block", GD_BLOCK_BITMAP_CSUM_LO, GD_BLOCK_BITMAP_CSUM_HI};
static const struct mapkind MAP_INODE = {"inode", GD_INODE_BITMAP_CSUM_LO, GD_INODE_BITMAP_CSUM_HI};

/* Reads group g's bitmap of kind k at block b into m; checks its padding (bits past
 * `valid`, bytes past the map) and its checksum. */
static int load_map(struct ck *c, const struct mapkind *k, uint32_t g, uint64_t b, uint8_t *m,
                    uint32_t bits, uint32_t valid)
{
	uint32_t bytes = bits / 8;
	int rc = ck_rd(c, b, c->buf, 1);
	if (rc)
		return rc;
	memcpy(m, c->buf, bytes);
	bool pad = true;
	for (uint32_t i = bytes; i < c->bs; i++)
		pad &= c->buf[i] == 0xFF;
	for (uint32_t i = valid; i < bits; i++)
		pad &= bit_test(m, i);
	if (!pad)
		ck_problem(c, PR_5_BITMAP_PADDING, 0, b, NULL, 0, k->name, g);
	if (!c->csum)
		return 0;
	const uint8_t *d = ck_gd(c, g);
	uint32_t s = ext2_bitmap_csum(c->seed, m, bytes);
	uint32_t have = get_le16(d + k->csum_lo);
	if (c->desc_size >= 0x3C)
		have |= (uint32_t)get_le16(d + k->csum_hi) << 16;
	else
		s &= 0xFFFF;
	if (s != have)
		ck_problem(c, PR_5_BITMAP_CSUM, 0, b, NULL, 0, k->name, g);
	return 0;
}

/* Group metadata: marked first, so files claiming it are double claims. */
static void claim_group_metadata(struct ck *c)
{
	for (uint32_t g = 0; g < c->ngroups; g++) {
		uint64_t f = ck_grp_first(c, g);
		if (ck_grp_has_super(c, g))
			for (uint32_t i = 0; i < 1 + c->gdt_blocks + c->rsv_gdt; i++)
				if (f + i < c->nblocks)
					ck_claim(c, f + i, 0, "superblock/descriptors");
	}
	for (uint32_t g = 0; g < c->ngroups; g++) {
		if (c->grp_bad[g])
			continue;
		uint8_t *d = ck_gd(c, g);
		ck_claim(c, gd_block_bitmap(d, c->desc_size), 0, "block bitmap");
		ck_claim(c, gd_inode_bitmap(d, c->desc_size), 0, "inode bitmap");
		uint64_t it = gd_inode_table(d, c->desc_size);
		for (uint32_t i = 0; i < ck_itb_blocks(c); i++)
			if (!ck_claim(c, it + i, 0, "inode table"))
				break;
	}
}

int ck_load_bitmaps(struct ck *c)
{
	uint32_t bbytes = c->bpg / 8, ibytes = c->ipg / 8;
	c->bbm = calloc((size_t)c->ngroups * bbytes + FSCK_MAP_SLACK, 1);
	c->ibm = calloc((size_t)c->ngroups * ibytes + FSCK_MAP_SLACK, 1);
	if (!c->bbm || !c->ibm)
		return -ENOMEM;
	claim_group_metadata(c);
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint8_t *d = ck_gd(c, g), *bm = c->bbm + (size_t)g * bbytes,
		        *im = c->ibm + (size_t)g * ibytes;
		uint16_t fl = c->csum ? gd_flags(d) : 0;
		if (c->grp_bad[g])
			continue;
		int rc;
		if (fl & EXT4_BG_BLOCK_UNINIT) {
			/* What libext2fs makes of an uninitialised bitmap: the group's own
			 * metadata. */
			uint64_t f = ck_grp_first(c, g);
			for (uint32_t i = 0; i < ck_grp_nblocks(c, g); i++)
				if (bit_test(c->bused, f + i))
					bit_set(bm, i);
		} else if ((rc = load_map(c, &MAP_BLOCK, g, gd_block_bitmap(d, c->desc_size), bm,
		                          c->bpg, ck_grp_nblocks(c, g)))) {
			return rc;
		}
		if (!(fl & EXT4_BG_INODE_UNINIT) &&
		    (rc = load_map(c, &MAP_INODE, g, gd_inode_bitmap(d, c->desc_size), im, c->ipg,
		                   c->ipg)))
			return rc;
	}
	return 0;
}

/* Compares n bits of the computed map `used` from bit `base` with the on-disk `disk`
 * (NULL: not trusted, no differences). Returns the free count; *ndiff and *first: the
 * differences. dirs (may be NULL): directories among the used inodes. */
static uint32_t compare_map(const struct ck *c, const uint8_t *used, uint64_t base,
                            const uint8_t *disk, uint32_t n, uint32_t *ndiff, uint64_t *first,
                            uint32_t *dirs)
{
	uint32_t nfree = 0;
	*ndiff = 0;
	/* 32 bits at a time: this loop is most of a clean check's time */
	for (uint32_t i = 0; i < n; i += 32) {
		uint32_t k = n - i < 32 ? n - i : 32;
		uint32_t mask = k == 32 ? ~0u : (1u << k) - 1;
		uint32_t u = bits32(used, base + i) & mask;
		nfree += k - bo_popcount64(u);
		if (dirs)
			for (uint32_t v = u; v; v &= v - 1)
				if (c->iflag[base + i + (uint32_t)__builtin_ctz(v) + 1] & IF_DIR)
					(*dirs)++;
		uint32_t x = disk ? (u ^ bits32(disk, i)) & mask : 0;
		if (x) {
			if (!*ndiff)
				*first = base + i + (uint32_t)__builtin_ctz(x);
			*ndiff += bo_popcount64(x);
		}
	}
	return nfree;
}

void ck_pass5(struct ck *c)
{
	uint32_t bbytes = c->bpg / 8, ibytes = c->ipg / 8;
	uint64_t free_b = 0, free_i = 0;
	for (uint32_t g = 0; g < c->ngroups && !c->stop; g++) {
		uint8_t *d = ck_gd(c, g);
		bool bad = c->grp_bad[g];
		uint32_t diffb, diffi, dirs = 0;
		uint64_t firstb = 0, firsti = 0;
		uint32_t fb = compare_map(c, c->bused, ck_grp_first(c, g),
		                          bad ? NULL : c->bbm + (size_t)g * bbytes,
		                          ck_grp_nblocks(c, g), &diffb, &firstb, NULL);
		if (diffb)
			ck_problem(c, PR_5_BLOCK_BITMAP, 0, firstb, NULL, 0, g, diffb,
			           (unsigned long long)firstb);
		uint32_t fi = compare_map(c, c->iused, (uint64_t)g * c->ipg,
		                          bad ? NULL : c->ibm + (size_t)g * ibytes, c->ipg, &diffi,
		                          &firsti, &dirs);
		if (diffi)
			ck_problem(c, PR_5_INODE_BITMAP, (uint32_t)firsti + 1, 0, NULL, 0, g, diffi,
			           (uint32_t)firsti + 1);
		free_b += fb;
		free_i += fi;
		if (gd_free_blocks(d, c->desc_size) != fb)
			ck_problem(c, PR_5_FREE_BLOCK_COUNT_GROUP, 0, 0, NULL, 0, g,
			           gd_free_blocks(d, c->desc_size), fb);
		if (gd_free_inodes(d, c->desc_size) != fi)
			ck_problem(c, PR_5_FREE_INODE_COUNT_GROUP, 0, 0, NULL, 0, g,
			           gd_free_inodes(d, c->desc_size), fi);
		if (gd_used_dirs(d, c->desc_size) != dirs)
			ck_problem(c, PR_5_FREE_DIR_COUNT_GROUP, 0, 0, NULL, 0, g,
			           gd_used_dirs(d, c->desc_size), dirs);
	}
	if (c->stop)
		return;
	if (sb_free_blocks(c->sb, false) != free_b)
		ck_problem(c, PR_5_FREE_BLOCK_COUNT, 0, 0, NULL, 0,
		           (unsigned long long)sb_free_blocks(c->sb, false),
		           (unsigned long long)free_b);
	if (sb_get32(c->sb, SB_FREE_INODES) != free_i)
		ck_problem(c, PR_5_FREE_INODE_COUNT, 0, 0, NULL, 0, sb_get32(c->sb, SB_FREE_INODES),
		           (unsigned long long)free_i);
}
