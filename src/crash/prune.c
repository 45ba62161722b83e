// SPDX-License-Identifier: GPL-2.0-or-later
/* prune.c — states the journal makes equivalent, found before an outside observer is
 * given them: a state is replayed with blackout's jbd (the kernel's three passes) on
 * the device's view, and two states whose images then agree outside the log are one
 * state to judge (docs/explore.md, "Pruning"). Only where the journal is one this
 * code reads completely; anything else is judged as before. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/ext2_format.h"
#include "blackout/jbd.h"
#include "crash/crash_int.h"

#define BLOCK 4096u /* the store's block: a view is compared in these */

/* jbd features whose replay blackout's jbd does as Linux's jbd2 does; anything else
 * (fast commits, async commits, csum v2) leaves the journal unpruned */
#define PRUNE_JBD_INCOMPAT                                                                         \
	(JBD_FEATURE_INCOMPAT_REVOKE | JBD_FEATURE_INCOMPAT_64BIT | JBD_FEATURE_INCOMPAT_CSUM_V3)

static int off(struct crash_prune *p, const char *fmt, const char *what)
{
	snprintf(p->why_not, sizeof(p->why_not), fmt, what);
	p->on = false;
	return 0;
}

static int add_block(struct crash_prune *p, uint64_t pb)
{
	if (!pb || pb >= p->fs_blocks)
		return -EUCLEAN;
	if (p->next && p->ext[p->next - 1].pblk + p->ext[p->next - 1].count == pb) {
		p->ext[p->next - 1].count++;
	} else {
		if (p->next == p->cap) {
			size_t nc = p->cap ? p->cap * 2 : 16;
			struct jbd_extent *e = realloc(p->ext, nc * sizeof(*e));
			if (!e)
				return -ENOMEM;
			p->ext = e;
			p->cap = nc;
		}
		p->ext[p->next++] = (struct jbd_extent){p->jblocks, pb, 1};
	}
	p->jblocks++;
	return 0;
}

/* An indirect block of the journal inode (ext3), read from the base view. */
static int walk(struct crash_prune *p, const uint8_t *base, uint64_t blk, int level, uint64_t want)
{
	if (!blk || blk >= p->fs_blocks || (blk + 1) * p->bs > p->size)
		return -EUCLEAN;
	const uint8_t *b = base + blk * p->bs;
	int rc = 0;
	for (uint32_t i = 0; i < p->bs / 4 && p->jblocks < want && !rc; i++) {
		uint64_t pb = get_le32(b + 4 * i);
		rc = level == 1 ? add_block(p, pb) : walk(p, base, pb, level - 1, want);
	}
	return rc;
}

/* The journal inode's map from the superblock's copy of its i_block (what mke2fs
 * writes and what e2fsck and blackout's mount read): ext3's block pointers, or
 * ext4's extents held in the inode itself (depth 0). */
static int map_journal(struct crash_prune *p, const uint8_t *base, const uint8_t *sb)
{
	const uint8_t *ib = sb + SB_JNL_BLOCKS;
	uint64_t size = get_le32(ib + 64) | (uint64_t)get_le32(ib + 60) << 32;
	uint64_t want = size / p->bs;
	if (want < 16 || want > p->fs_blocks)
		return -EUCLEAN;
	if (get_le16(ib) == 0xF30A) { /* an extent header */
		unsigned n = get_le16(ib + 2), depth = get_le16(ib + 6);
		if (depth != 0 || n > 4)
			return -EOPNOTSUPP;
		for (unsigned i = 0; i < n; i++) {
			const uint8_t *e = ib + 12 + 12 * i;
			uint64_t lblk = get_le32(e), len = get_le16(e + 4);
			uint64_t pb = get_le32(e + 8) | (uint64_t)get_le16(e + 6) << 32;
			if (len > 32768 || lblk != p->jblocks) /* uninitialized, or a hole */
				return -EUCLEAN;
			for (uint64_t k = 0; k < len && p->jblocks < want; k++) {
				int rc = add_block(p, pb + k);
				if (rc)
					return rc;
			}
		}
	} else {
		int rc = 0;
		for (unsigned i = 0; i < 12 && p->jblocks < want && !rc; i++)
			rc = add_block(p, get_le32(ib + 4 * i));
		for (int lv = 1; lv <= 3 && p->jblocks < want && !rc; lv++)
			rc = walk(p, base, get_le32(ib + 4 * (11 + lv)), lv, want);
		if (rc)
			return rc;
	}
	return p->jblocks == want ? 0 : -EUCLEAN;
}

int crash_prune_open(struct crash_prune *p, const uint8_t *base, uint64_t size)
{
	memset(p, 0, sizeof(*p));
	p->size = size;
	if (size < 2 * BLOCK || size % BLOCK)
		return off(p, "%s", "the device is not whole 4 KiB blocks");
	const uint8_t *sb = base + EXT2_SB_OFFSET;
	if (get_le16(sb + SB_MAGIC) != EXT2_MAGIC)
		return off(p, "%s", "no ext2/3/4 superblock on the device");
	uint32_t compat = get_le32(sb + SB_FEATURE_COMPAT),
	         incompat = get_le32(sb + SB_FEATURE_INCOMPAT),
	         lg = get_le32(sb + SB_LOG_BLOCK_SIZE);
	if (!(compat & EXT3_FEATURE_COMPAT_HAS_JOURNAL))
		return off(p, "%s", "the filesystem has no journal");
	if (compat & EXT4_FEATURE_COMPAT_FAST_COMMIT)
		return off(p, "%s", "fast commits (their replay is not blackout's)");
	if ((incompat & EXT3_FEATURE_INCOMPAT_JOURNAL_DEV) || get_le32(sb + SB_JOURNAL_DEV) ||
	    get_le32(sb + SB_JOURNAL_INUM) != 8)
		return off(p, "%s", "an external journal, or a journal inode other than 8");
	if (sb[SB_JNL_BACKUP_TYPE] != 1 /* EXT3_JNL_BACKUP_BLOCKS */)
		return off(p, "%s", "no copy of the journal inode's map in the superblock");
	if (lg > 6)
		return off(p, "%s", "a block size over 64 KiB");
	p->bs = 1024u << lg;
	p->fs_blocks = get_le32(sb + SB_BLOCKS_COUNT_LO) |
	               (incompat & EXT4_FEATURE_INCOMPAT_64BIT
	                    ? (uint64_t)get_le32(sb + SB_BLOCKS_COUNT_HI) << 32
	                    : 0);
	if (p->fs_blocks == 0 || p->fs_blocks > size / p->bs)
		return off(p, "%s", "a block count beyond the device");
	int rc = map_journal(p, base, sb);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return off(p, "%s",
		           "the journal inode's map (a tree of extents, or a bad pointer)");
	/* the journal superblock: its features decide whether replay is understood */
	const uint8_t *jsb = base + p->ext[0].pblk * p->bs;
	uint32_t jin = get_be32(jsb + JBD_SB_FEATURE_INCOMPAT);
	if (get_be32(jsb) != JBD_MAGIC || get_be32(jsb + 4) != JBD_SUPERBLOCK_V2)
		return off(p, "%s", "the journal superblock is not JBD2 v2");
	if (jin & ~(uint32_t)PRUNE_JBD_INCOMPAT)
		return off(p, "%s", "journal features other than revoke, 64bit and csum v3");
	p->mask = calloc(size / BLOCK, 1);
	if (!p->mask)
		return -ENOMEM;
	/* the 4 KiB blocks made only of log blocks other than the journal superblock: a
	 * 4 KiB block that also holds that superblock or anything outside the journal
	 * (1 KiB blocks at an extent's ends) is compared whole */
	unsigned per = p->bs < BLOCK ? BLOCK / p->bs : 1;
	for (size_t i = 0; i < p->next; i++)
		for (uint64_t k = 0; k < p->ext[i].count; k++) {
			uint64_t jb = p->ext[i].lblk + k, pb = p->ext[i].pblk + k;
			if (jb == 0)
				continue;
			for (uint64_t b = pb * p->bs / BLOCK;
			     b < (pb + 1) * p->bs / BLOCK || b == pb * p->bs / BLOCK; b++)
				p->mask[b]++;
		}
	for (uint64_t b = 0; b < size / BLOCK; b++)
		p->mask[b] = p->mask[b] == per;
	rc = blk_mem_open(512, size / 512, &p->img);
	if (rc == 0)
		rc = blk_pwrite(p->img, 0, size, base, 0);
	if (rc)
		return rc;
	p->on = true;
	return 0;
}

/* Puts the view's differing blocks into img (which holds base). */
static int load(struct crash_prune *p, const uint8_t *view, const uint64_t *blocks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = blk_pwrite(p->img, blocks[i] * BLOCK, BLOCK, view + blocks[i] * BLOCK, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* The image after replay against base: a digest of the blocks outside the log where
 * it differs (two independent lanes), and img put back to base. */
static int digest_restore(struct crash_prune *p, const uint8_t *base, uint64_t h[2])
{
	enum { CHUNK = 256u << 10 };
	uint8_t *buf = p->buf;
	for (uint64_t o = 0; o < p->size; o += CHUNK) {
		size_t n = p->size - o < CHUNK ? (size_t)(p->size - o) : CHUNK;
		int rc = blk_pread(p->img, o, n, buf);
		if (rc)
			return rc;
		for (uint64_t b = o / BLOCK; b < (o + n) / BLOCK; b++) {
			const uint8_t *v = buf + (b * BLOCK - o);
			if (memcmp(v, base + b * BLOCK, BLOCK) == 0)
				continue;
			if ((rc = blk_pwrite(p->img, b * BLOCK, BLOCK, base + b * BLOCK, 0)))
				return rc;
			if (p->mask[b])
				continue;
			h[0] = crash_mix64(h[0] ^ b) + 0x9e3779b97f4a7c15ull;
			h[1] =
			    crash_mix64(h[1] ^ (b * 0xff51afd7ed558ccdull)) + 0x632be59bd9b4e019ull;
			for (size_t i = 0; i < BLOCK; i += 8) {
				uint64_t w = get_le64(v + i);
				h[0] = crash_mix64(h[0] ^ w);
				h[1] = crash_mix64(h[1] + w * 0xc4ceb9fe1a85ec53ull);
			}
		}
	}
	return 0;
}

int crash_prune_key(struct crash_prune *p, const uint8_t *base, const uint8_t *view,
                    const uint64_t *blocks, size_t n, size_t completed, uint64_t key[2],
                    bool *keyed)
{
	*keyed = false;
	if (!p->on)
		return 0;
	if (!p->buf && !(p->buf = malloc(256u << 10)))
		return -ENOMEM;
	int rc = load(p, view, blocks, n);
	struct jbd_config c = {.block_size = p->bs,
	                       .nr_blocks = p->jblocks,
	                       .map = {.extents = p->ext, .nr_extents = p->next},
	                       .fs_blocks = p->fs_blocks,
	                       .barrier = true,
	                       .corrupt_commit_fails = true};
	struct jbd_journal *j = NULL;
	struct jbd_recovery_info info = {0};
	struct bo_err err = {{0}};
	/* a state whose log this replay doubts (a bad superblock, a checksum that fails,
	 * a corrupt block) is judged as it is: only a clean replay says two are one */
	bool clean = rc == 0 && jbd_journal_open(p->img, &c, &j, &err) == 0;
	if (clean && jbd_journal_needs_recovery(j))
		clean = jbd_journal_recover(j, &info) == 0 && info.nr_bad_csum == 0 &&
		        info.failed_commit == 0;
	if (j)
		jbd_journal_destroy(j, false);
	uint64_t h[2] = {0x452821e638d01377ull ^ (uint64_t)completed,
	                 0xbe5466cf34e90c6cull + (uint64_t)completed};
	if (rc == 0)
		rc = digest_restore(p, base, h);
	if (rc)
		return rc;
	if (clean) {
		p->replays++;
		key[0] = h[0];
		key[1] = h[1];
		*keyed = true;
	} else {
		p->doubted++;
	}
	return 0;
}

static size_t slot(uint64_t k, size_t cap)
{
	return (size_t)(k * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

int crash_prune_seen(struct crash_prune *p, const uint64_t key[2], uint64_t ordinal, bool *found,
                     uint64_t *first)
{
	if ((p->n + 1) * 2 > p->tcap) {
		size_t nc = p->tcap ? p->tcap * 2 : 1024;
		struct crash_prune_slot *nt = calloc(nc, sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		for (size_t i = 0; i < p->tcap; i++)
			if (p->t[i].used) {
				size_t j = slot(p->t[i].k[0], nc);
				while (nt[j].used)
					j = (j + 1) & (nc - 1);
				nt[j] = p->t[i];
			}
		free(p->t);
		p->t = nt;
		p->tcap = nc;
	}
	size_t j = slot(key[0], p->tcap);
	for (; p->t[j].used; j = (j + 1) & (p->tcap - 1))
		if (p->t[j].k[0] == key[0] && p->t[j].k[1] == key[1]) {
			*found = true;
			*first = p->t[j].first;
			return 0;
		}
	p->t[j] = (struct crash_prune_slot){.used = true, .k = {key[0], key[1]}, .first = ordinal};
	p->n++;
	*found = false;
	*first = ordinal;
	return 0;
}

void crash_prune_close(struct crash_prune *p)
{
	blk_close(p->img);
	free(p->ext);
	free(p->mask);
	free(p->buf);
	free(p->t);
	memset(p, 0, sizeof(*p));
}
