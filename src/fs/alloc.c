// SPDX-License-Identifier: GPL-2.0-or-later
/* alloc.c — block and inode bitmaps: allocation near a goal, freeing, free counts,
 * bitmap checksums and uninitialised groups. Not the block maps of files (inode.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "fs/fs_int.h"

uint8_t *fs_gd(struct fs *fs, uint32_t g)
{
	return fs->gdt + (size_t)g * fs->desc_size;
}

uint64_t fs_group_first_block(const struct fs *fs, uint32_t g)
{
	return fs->first_data_block + (uint64_t)g * fs->bpg;
}

static uint32_t group_nblocks(const struct fs *fs, uint32_t g)
{
	uint64_t first = fs_group_first_block(fs, g);
	uint64_t n = fs->blocks - first;
	return n > fs->bpg ? fs->bpg : (uint32_t)n;
}

static bool test_bit(const uint8_t *b, uint32_t i)
{
	return (b[i >> 3] >> (i & 7)) & 1;
}
static void set_bit(uint8_t *b, uint32_t i)
{
	b[i >> 3] |= (uint8_t)(1u << (i & 7));
}
static void clear_bit(uint8_t *b, uint32_t i)
{
	b[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

/* Blocks at the start of group g that hold a superblock, the descriptors and the
 * reserved descriptors (0 in a group without a backup). */
static uint32_t super_area(const struct fs *fs, uint32_t g)
{
	if (!ext2_bg_has_super(fs->sb, g))
		return 0;
	return 1 + fs->desc_blocks + sb_get16(fs->sb, SB_RESERVED_GDT_BLOCKS);
}

bool fs_in_system_zone(const struct fs *fs, uint64_t blk)
{
	if (blk < fs->first_data_block || blk >= fs->blocks)
		return true;
	uint32_t g = (uint32_t)((blk - fs->first_data_block) / fs->bpg);
	uint64_t first = fs_group_first_block(fs, g);
	if (blk < first + super_area(fs, g))
		return true;
	const uint8_t *gd = fs->gdt + (size_t)g * fs->desc_size;
	uint64_t it = gd_inode_table(gd, fs->desc_size);
	return blk == gd_block_bitmap(gd, fs->desc_size) ||
	       blk == gd_inode_bitmap(gd, fs->desc_size) ||
	       (blk >= it && blk < it + fs->itb_per_group);
}

/* The bitmap of a group whose BLOCK_UNINIT flag says it was never written. */
static void synth_block_bitmap(struct fs *fs, uint32_t g, uint8_t *bm)
{
	memset(bm, 0, fs->bs);
	uint64_t first = fs_group_first_block(fs, g);
	uint32_t n = 0;
	if (ext2_bg_has_super(fs->sb, g))
		n = 1 + fs->desc_blocks + sb_get16(fs->sb, SB_RESERVED_GDT_BLOCKS);
	for (uint32_t i = 0; i < n; i++)
		set_bit(bm, i);
	const uint8_t *gd = fs_gd(fs, g);
	uint64_t m[2] = {gd_block_bitmap(gd, fs->desc_size), gd_inode_bitmap(gd, fs->desc_size)};
	for (int k = 0; k < 2; k++)
		if (m[k] >= first && m[k] < first + fs->bpg)
			set_bit(bm, (uint32_t)(m[k] - first));
	uint64_t it = gd_inode_table(gd, fs->desc_size);
	for (uint32_t i = 0; i < fs->itb_per_group; i++)
		if (it + i >= first && it + i < first + fs->bpg)
			set_bit(bm, (uint32_t)(it + i - first));
	for (uint32_t i = group_nblocks(fs, g); i < fs->bpg; i++)
		set_bit(bm, i);
}

static uint32_t bitmap_csum(struct fs *fs, const uint8_t *bm, uint32_t bits)
{
	return ext2_bitmap_csum(fs->csum_seed, bm, bits / 8);
}

static uint32_t count_zero(const uint8_t *bm, uint32_t n)
{
	uint32_t used = 0, i = 0;
	for (; i + 64 <= n; i += 64)
		used += bo_popcount64(get_le64(bm + i / 8));
	for (; i < n; i++)
		used += test_bit(bm, i);
	return n - used;
}

/* Group g's bitmap is damaged (fs->err says how): the group is left alone from now on. */
static int bad_bitmap(struct fs *fs, uint32_t g, bool inode)
{
	fs->bad_group[g] |= inode ? FS_BAD_IBITMAP : FS_BAD_BBITMAP;
	return fs_error(fs, -EUCLEAN);
}

/* A bitmap just read must agree with its descriptor's free count and, for blocks,
 * mark the group's own metadata in use (ext4_valid_block_bitmap): else a flipped
 * bit hands out a block or inode that something still owns. */
static int check_bitmap(struct fs *fs, uint32_t g, bool inode, uint64_t blk, const uint8_t *bm)
{
	const uint8_t *gd = fs_gd(fs, g);
	const char *what = inode ? "inode" : "block";
	uint32_t fr = count_zero(bm, inode ? fs->ipg : group_nblocks(fs, g));
	uint32_t want =
	    inode ? gd_free_inodes(gd, fs->desc_size) : gd_free_blocks(gd, fs->desc_size);
	if (fr != want) {
		bo_errf(&fs->err, -EUCLEAN,
		        "%s bitmap of group %u (block %llu): %u free, the descriptor says %u", what,
		        g, (unsigned long long)blk, fr, want);
		return bad_bitmap(fs, g, inode);
	}
	if (inode)
		return 0;
	uint64_t first = fs_group_first_block(fs, g);
	uint64_t it = gd_inode_table(gd, fs->desc_size);
	uint64_t start[4] = {first, gd_block_bitmap(gd, fs->desc_size),
	                     gd_inode_bitmap(gd, fs->desc_size), it};
	uint32_t len[4] = {super_area(fs, g), 1, 1, fs->itb_per_group};
	for (int k = 0; k < 4; k++)
		for (uint32_t j = 0; j < len[k]; j++)
			if (!test_bit(bm, (uint32_t)(start[k] + j - first))) {
				bo_errf(&fs->err, -EUCLEAN,
				        "block bitmap of group %u (block %llu): system zone block "
				        "%llu marked free",
				        g, (unsigned long long)blk,
				        (unsigned long long)(start[k] + j));
				return bad_bitmap(fs, g, false);
			}
	return 0;
}

static int load_bitmap(struct fs *fs, uint32_t g, bool inode, struct fs_buf **out)
{
	uint8_t *gd = fs_gd(fs, g);
	uint64_t blk =
	    inode ? gd_inode_bitmap(gd, fs->desc_size) : gd_block_bitmap(gd, fs->desc_size);
	if (fs->bad_group[g] & (inode ? FS_BAD_IBITMAP : FS_BAD_BBITMAP))
		return bo_errf(&fs->err, -EUCLEAN,
		               "%s bitmap of group %u (block %llu): found damaged earlier",
		               inode ? "inode" : "block", g, (unsigned long long)blk);
	struct fs_buf *b;
	int rc = fs_bread(fs, blk, &b);
	if (rc < 0)
		return rc;
	if (!b->checked) {
		uint16_t fl = gd_flags(gd);
		if (!inode && (fl & EXT4_BG_BLOCK_UNINIT)) {
			synth_block_bitmap(fs, g, b->data);
		} else if (inode && (fl & EXT4_BG_INODE_UNINIT)) {
			memset(b->data, 0, fs->bs);
			memset(b->data + fs->ipg / 8, 0xff, fs->bs - fs->ipg / 8);
		} else if (fs->csum) {
			uint32_t bits = inode ? fs->ipg : fs->bpg;
			uint32_t c = bitmap_csum(fs, b->data, bits);
			uint32_t stored = get_le16(
			    gd + (inode ? GD_INODE_BITMAP_CSUM_LO : GD_BLOCK_BITMAP_CSUM_LO));
			if (fs->desc_size >= 64)
				stored |= (uint32_t)get_le16(gd + (inode ? GD_INODE_BITMAP_CSUM_HI
				                                         : GD_BLOCK_BITMAP_CSUM_HI))
				          << 16;
			else
				c &= 0xffff;
			if (c != stored) {
				bo_errf(&fs->err, -EUCLEAN,
				        "%s bitmap of group %u (block %llu): checksum mismatch",
				        inode ? "inode" : "block", g, (unsigned long long)blk);
				return bad_bitmap(fs, g, inode);
			}
		}
		if ((rc = check_bitmap(fs, g, inode, blk, b->data)) < 0)
			return rc;
		b->checked = true;
	}
	*out = b;
	return 0;
}

int fs_block_in_use(struct fs *fs, uint64_t blk, bool *used)
{
	if (!fs_blk_valid(fs, blk))
		return bo_errf(&fs->err, -EUCLEAN, "block %llu is outside the filesystem",
		               (unsigned long long)blk);
	uint32_t g = (uint32_t)((blk - fs->first_data_block) / fs->bpg);
	struct fs_buf *b;
	int rc = load_bitmap(fs, g, false, &b);
	if (rc == 0)
		*used = test_bit(b->data, (uint32_t)((blk - fs->first_data_block) % fs->bpg));
	return rc;
}

int fs_inode_in_use(struct fs *fs, uint32_t ino, bool *used)
{
	if (ino < 1 || ino > fs->inodes_count)
		return bo_errf(&fs->err, -EUCLEAN, "inode %u is out of range", ino);
	struct fs_buf *b;
	int rc = load_bitmap(fs, (ino - 1) / fs->ipg, true, &b);
	if (rc == 0)
		*used = test_bit(b->data, (ino - 1) % fs->ipg);
	return rc;
}

void fs_gd_update_csums(struct fs *fs, uint32_t g)
{
	uint8_t *gd = fs_gd(fs, g);
	for (int inode = 0; inode < 2; inode++) {
		struct fs_buf *b;
		if (inode && (gd_flags(gd) & EXT4_BG_INODE_UNINIT))
			continue;
		if (!inode && (gd_flags(gd) & EXT4_BG_BLOCK_UNINIT))
			continue;
		if (load_bitmap(fs, g, inode, &b) < 0)
			continue;
		uint32_t c = bitmap_csum(fs, b->data, inode ? fs->ipg : fs->bpg);
		put_le16(gd + (inode ? GD_INODE_BITMAP_CSUM_LO : GD_BLOCK_BITMAP_CSUM_LO),
		         (uint16_t)c);
		if (fs->desc_size >= 64)
			put_le16(gd + (inode ? GD_INODE_BITMAP_CSUM_HI : GD_BLOCK_BITMAP_CSUM_HI),
			         (uint16_t)(c >> 16));
	}
}

static void sb_add_free_blocks(struct fs *fs, int64_t d)
{
	sb_put32(fs->sb, SB_FREE_BLOCKS_LO, (uint32_t)(sb_get32(fs->sb, SB_FREE_BLOCKS_LO) + d));
	fs_sb_dirty(fs, SB_FREE_BLOCKS_LO);
}
static void sb_add_free_inodes(struct fs *fs, int64_t d)
{
	sb_put32(fs->sb, SB_FREE_INODES, (uint32_t)(sb_get32(fs->sb, SB_FREE_INODES) + d));
	fs_sb_dirty(fs, SB_FREE_INODES);
}

/* First clear bit in [from, n), or n. */
static uint32_t find_zero(const uint8_t *bm, uint32_t from, uint32_t n)
{
	uint32_t i = from;
	while (i < n && (i & 63)) {
		if (!test_bit(bm, i))
			return i;
		i++;
	}
	while (i + 64 <= n) {
		uint64_t w = get_le64(bm + i / 8);
		if (w != ~0ull)
			return i + (uint32_t)__builtin_ctzll(~w);
		i += 64;
	}
	for (; i < n; i++)
		if (!test_bit(bm, i))
			return i;
	return n;
}

/* find_zero from `from`, starting past the bits *hint says are set; a search that
 * covered [*hint, found) moves the hint to what it found. Same answer as
 * find_zero(bm, from, n): only bits known to be set are skipped. */
static uint32_t find_zero_hinted(const uint8_t *bm, uint32_t from, uint32_t n, uint32_t *hint)
{
	if (from > *hint)
		return find_zero(bm, from, n);
	if (*hint >= n)
		return n;
	uint32_t bit = find_zero(bm, *hint, n);
	*hint = bit;
	return bit;
}

/* A bit of group g's bitmap was cleared: the search must look there again. */
static void hint_freed(struct fs *fs, uint32_t g, bool inode, uint32_t bit)
{
	uint32_t *h = &fs->free_hint[2 * g + inode];
	if (bit < *h)
		*h = bit;
}

/* ---- blocks freed by the running transaction ----------------------------------- */
static uint64_t commits_now(struct fs *fs)
{
	return fs->jh && fs->jh->ops->commits ? fs->jh->ops->commits(fs->jh) : 0;
}

static uint32_t freed_slot(const struct fs_freed *t, uint64_t blk)
{
	return (uint32_t)((blk * 0x9E3779B97F4A7C15ull) >> 32) & (t->cap - 1);
}

/* Forgets every entry once all of them have committed. */
static void freed_expire(struct fs *fs)
{
	struct fs_freed *t = &fs->freed;
	if (t->n && commits_now(fs) > t->max_gen) {
		memset(t->blk, 0, (size_t)t->cap * sizeof(*t->blk));
		t->n = 0;
	}
}

static int freed_add(struct fs *fs, uint64_t blk)
{
	struct fs_freed *t = &fs->freed;
	if (!fs->jh || !fs->jh->ops->commits)
		return 0;
	freed_expire(fs);
	if ((t->n + 1) * 2 > t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 256;
		uint64_t *nb = calloc(nc, sizeof(*nb)), *ng = malloc(nc * sizeof(*ng));
		if (!nb || !ng) {
			free(nb);
			free(ng);
			return bo_errf(&fs->err, -ENOMEM, "out of memory");
		}
		struct fs_freed o = *t;
		t->blk = nb;
		t->gen = ng;
		t->cap = nc;
		for (uint32_t i = 0; i < o.cap; i++) {
			if (!o.blk[i])
				continue;
			uint32_t k = freed_slot(t, o.blk[i]);
			while (t->blk[k])
				k = (k + 1) & (nc - 1);
			t->blk[k] = o.blk[i];
			t->gen[k] = o.gen[i];
		}
		free(o.blk);
		free(o.gen);
	}
	uint64_t gen = commits_now(fs);
	uint32_t k = freed_slot(t, blk);
	while (t->blk[k] && t->blk[k] != blk)
		k = (k + 1) & (t->cap - 1);
	if (!t->blk[k])
		t->n++;
	t->blk[k] = blk;
	t->gen[k] = gen;
	if (gen > t->max_gen || t->n == 1)
		t->max_gen = gen;
	return 0;
}

/* Freed by a transaction that has not committed: not to be handed out yet. */
static bool freed_waiting(struct fs *fs, uint64_t blk, uint64_t now)
{
	const struct fs_freed *t = &fs->freed;
	if (!t->n)
		return false;
	for (uint32_t k = freed_slot(t, blk); t->blk[k]; k = (k + 1) & (t->cap - 1))
		if (t->blk[k] == blk)
			return t->gen[k] >= now;
	return false;
}

void fs_freed_release(struct fs *fs)
{
	free(fs->freed.blk);
	free(fs->freed.gen);
	memset(&fs->freed, 0, sizeof(fs->freed));
}

bool fs_enospc_retry(struct fs *fs, int rc)
{
	if (rc != -ENOSPC || fs->op_depth || !fs->jh->ops->force_commit)
		return false;
	freed_expire(fs);
	if (!fs->freed.n)
		return false;
	if (fs->jh->ops->force_commit(fs->jh) < 0)
		return false;
	freed_expire(fs);
	return fs->freed.n == 0;
}

/* First free bit in [from, n) of group g's bitmap whose block may be handed out;
 * *skipped is set when a free bit was passed over because its block waits. */
static uint32_t find_free(struct fs *fs, uint32_t g, const uint8_t *bm, uint32_t from, uint32_t n,
                          uint64_t now, bool *skipped)
{
	uint64_t first = fs_group_first_block(fs, g);
	uint32_t bit = find_zero_hinted(bm, from, n, &fs->free_hint[2 * g]);
	while (bit < n && freed_waiting(fs, first + bit, now)) {
		*skipped = true;
		bit = find_zero(bm, bit + 1, n);
	}
	return bit;
}

static int take_block(struct fs *fs, uint32_t g, uint32_t bit, struct fs_buf *b, uint64_t *out)
{
	uint64_t blk = fs_group_first_block(fs, g) + bit;
	if (fs_in_system_zone(fs, blk)) {
		bo_errf(&fs->err, -EUCLEAN,
		        "block bitmap of group %u: allocating block %llu in the system zone", g,
		        (unsigned long long)blk);
		return bad_bitmap(fs, g, false);
	}
	int rc = fs_baccess(fs, b);
	if (rc < 0)
		return rc;
	uint8_t *gd = fs_gd(fs, g);
	if (gd_flags(gd) & EXT4_BG_BLOCK_UNINIT)
		put_le16(gd + GD_FLAGS, gd_flags(gd) & ~EXT4_BG_BLOCK_UNINIT);
	set_bit(b->data, bit);
	fs_bdirty(fs, b);
	gd_set_free_blocks(gd, fs->desc_size, gd_free_blocks(gd, fs->desc_size) - 1);
	fs->gd_dirty[g] = true;
	sb_add_free_blocks(fs, -1);
	*out = fs_group_first_block(fs, g) + bit;
	return 0;
}

int fs_alloc_block(struct fs *fs, uint64_t goal, uint64_t *out)
{
	if (!fs_blk_valid(fs, goal))
		goal = fs->first_data_block;
	freed_expire(fs);
	uint64_t now = fs->freed.n ? commits_now(fs) : 0;
	bool waited = false, bad = false;
	uint32_t g0 = (uint32_t)((goal - fs->first_data_block) / fs->bpg);
	for (uint32_t k = 0; k <= fs->groups; k++) {
		uint32_t g = (g0 + k) % fs->groups;
		uint8_t *gd = fs_gd(fs, g);
		if (gd_free_blocks(gd, fs->desc_size) == 0)
			continue;
		struct fs_buf *b;
		int rc = load_bitmap(fs, g, false, &b);
		if (rc == -EUCLEAN) {
			bad = true; /* recorded; the other groups serve (as in ext4) */
			continue;
		}
		if (rc < 0)
			return rc;
		uint32_t n = group_nblocks(fs, g);
		uint32_t from = k == 0 ? (uint32_t)(goal - fs_group_first_block(fs, g)) : 0;
		bool skipped = false;
		uint32_t bit = find_free(fs, g, b->data, from, n, now, &skipped);
		if (bit == n && from)
			bit = find_free(fs, g, b->data, 0, from, now, &skipped);
		if (bit >= n) {
			/* the descriptor's free blocks may all wait for the commit */
			waited = waited || skipped;
			if (k == 0 || skipped)
				continue;
			bo_errf(&fs->err, -EUCLEAN,
			        "group %u: descriptor says %u free blocks, bitmap has none", g,
			        gd_free_blocks(gd, fs->desc_size));
			bad_bitmap(fs, g, false);
			bad = true;
			continue;
		}
		rc = take_block(fs, g, bit, b, out);
		if (rc != -EUCLEAN)
			return rc;
		bad = true;
	}
	if (bad) /* fs->err names the damaged bitmap */
		return -EUCLEAN;
	if (waited)
		return bo_errf(&fs->err, -ENOSPC,
		               "no free blocks but those the running transaction freed");
	return bo_errf(&fs->err, -ENOSPC, "no free blocks");
}

int fs_free_block(struct fs *fs, uint64_t blk)
{
	if (!fs_blk_valid(fs, blk))
		return bo_errf(&fs->err, -EUCLEAN, "freeing block %llu: out of range",
		               (unsigned long long)blk);
	if (fs_in_system_zone(fs, blk))
		return bo_errf(&fs->err, -EUCLEAN, "freeing block %llu: in the system zone",
		               (unsigned long long)blk);
	uint32_t g = (uint32_t)((blk - fs->first_data_block) / fs->bpg);
	uint32_t bit = (uint32_t)((blk - fs->first_data_block) % fs->bpg);
	struct fs_buf *b;
	int rc = load_bitmap(fs, g, false, &b);
	if (rc < 0)
		return rc;
	if (!test_bit(b->data, bit))
		return bo_errf(&fs->err, -EUCLEAN, "freeing block %llu: already free",
		               (unsigned long long)blk);
	if ((rc = fs_baccess(fs, b)) < 0)
		return rc;
	if ((rc = freed_add(fs, blk)) < 0)
		return rc;
	fs_dpage_drop(fs, blk); /* delayed data of a freed block is never written */
	clear_bit(b->data, bit);
	hint_freed(fs, g, false, bit);
	fs_bdirty(fs, b);
	uint8_t *gd = fs_gd(fs, g);
	gd_set_free_blocks(gd, fs->desc_size, gd_free_blocks(gd, fs->desc_size) + 1);
	fs->gd_dirty[g] = true;
	sb_add_free_blocks(fs, 1);
	return 0;
}

static int take_inode(struct fs *fs, uint32_t g, bool dir, uint32_t *out)
{
	uint8_t *gd = fs_gd(fs, g);
	struct fs_buf *b;
	int rc = load_bitmap(fs, g, true, &b);
	if (rc < 0)
		return rc;
	uint32_t from = 0;
	if (g == 0)
		from = fs->first_ino - 1;
	uint32_t bit = find_zero_hinted(b->data, from, fs->ipg, &fs->free_hint[2 * g + 1]);
	if (bit >= fs->ipg)
		return 1;
	/* a free bit over an inode that still has links: the bitmap lost it (ext2's
	 * "free inode in use" check); taking it would give one inode two files */
	bool linked = false;
	if (!(gd_flags(gd) & EXT4_BG_INODE_UNINIT) &&
	    (!fs->csum || bit < fs->ipg - gd_itable_unused(gd, fs->desc_size)) &&
	    (rc = fs_inode_linked(fs, g * fs->ipg + bit + 1, &linked)) < 0)
		return rc;
	if (linked) {
		bo_errf(&fs->err, -EUCLEAN,
		        "inode bitmap of group %u (block %llu): inode %u marked free but linked", g,
		        (unsigned long long)gd_inode_bitmap(gd, fs->desc_size),
		        g * fs->ipg + bit + 1);
		return bad_bitmap(fs, g, true);
	}
	if ((rc = fs_baccess(fs, b)) < 0)
		return rc;
	set_bit(b->data, bit);
	fs_bdirty(fs, b);
	uint16_t fl = gd_flags(gd);
	if (fl & EXT4_BG_INODE_UNINIT)
		put_le16(gd + GD_FLAGS, fl & ~EXT4_BG_INODE_UNINIT);
	if (fs->csum) {
		uint32_t unused = gd_itable_unused(gd, fs->desc_size);
		if (bit >= fs->ipg - unused)
			gd_set_itable_unused(gd, fs->desc_size, fs->ipg - bit - 1);
	}
	gd_set_free_inodes(gd, fs->desc_size, gd_free_inodes(gd, fs->desc_size) - 1);
	if (dir)
		gd_set_used_dirs(gd, fs->desc_size, gd_used_dirs(gd, fs->desc_size) + 1);
	fs->gd_dirty[g] = true;
	sb_add_free_inodes(fs, -1);
	*out = g * fs->ipg + bit + 1;
	return 0;
}

int fs_alloc_inode(struct fs *fs, uint32_t parent, bool dir, uint32_t *out)
{
	uint32_t pg = parent ? (parent - 1) / fs->ipg : 0;
	uint32_t start = pg;
	bool bad = false;
	if (dir) {
		/* spread directories: the next group with more free inodes than average */
		uint64_t avg = sb_get32(fs->sb, SB_FREE_INODES) / fs->groups;
		for (uint32_t k = 1; k <= fs->groups; k++) {
			uint32_t g = (fs->last_alloc_group + k) % fs->groups;
			if (gd_free_inodes(fs_gd(fs, g), fs->desc_size) > avg &&
			    gd_free_blocks(fs_gd(fs, g), fs->desc_size) > 0) {
				start = g;
				break;
			}
		}
		fs->last_alloc_group = start;
	}
	for (uint32_t k = 0; k < fs->groups; k++) {
		uint32_t g = (start + k) % fs->groups;
		if (gd_free_inodes(fs_gd(fs, g), fs->desc_size) == 0)
			continue;
		int rc = take_inode(fs, g, dir, out);
		if (rc <= 0 && rc != -EUCLEAN)
			return rc;
		bad |= rc == -EUCLEAN;
	}
	if (bad) /* fs->err names the damaged bitmap */
		return -EUCLEAN;
	return bo_errf(&fs->err, -ENOSPC, "no free inodes");
}

int fs_free_inode(struct fs *fs, uint32_t ino, bool dir)
{
	if (ino < 1 || ino > fs->inodes_count)
		return bo_errf(&fs->err, -EUCLEAN, "freeing inode %u: out of range", ino);
	uint32_t g = (ino - 1) / fs->ipg, bit = (ino - 1) % fs->ipg;
	struct fs_buf *b;
	int rc = load_bitmap(fs, g, true, &b);
	if (rc < 0)
		return rc;
	if (!test_bit(b->data, bit))
		return bo_errf(&fs->err, -EUCLEAN, "freeing inode %u: already free", ino);
	if ((rc = fs_baccess(fs, b)) < 0)
		return rc;
	clear_bit(b->data, bit);
	hint_freed(fs, g, true, bit);
	fs_bdirty(fs, b);
	uint8_t *gd = fs_gd(fs, g);
	gd_set_free_inodes(gd, fs->desc_size, gd_free_inodes(gd, fs->desc_size) + 1);
	if (dir && gd_used_dirs(gd, fs->desc_size))
		gd_set_used_dirs(gd, fs->desc_size, gd_used_dirs(gd, fs->desc_size) - 1);
	fs->gd_dirty[g] = true;
	sb_add_free_inodes(fs, 1);
	return 0;
}
