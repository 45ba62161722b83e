// SPDX-License-Identifier: GPL-2.0-or-later
/* journal.c — finds an ext3 image's journal by itself (the journal inode's block map,
 * or the superblock's backup of it when the inode is damaged) and replays it before
 * a check, as e2fsck does; needs_recovery is cleared after a successful replay. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/fsck_int.h"

/* The journal's logical blocks in order, as extents, built from an i_block array. */
struct jmap {
	struct ck *c;
	struct jbd_extent *e;
	size_t n, cap;
	uint64_t have, want;
	uint8_t *lvl;  /* 3 blocks: one per indirect level */
	uint64_t *ind; /* the indirect blocks walked: not part of the journal */
	size_t nind, capind;
	char why[160];
};

static int jm_add(struct jmap *m, uint64_t p)
{
	if (m->have >= m->want)
		return 0;
	if (!p || !ck_blk_valid(m->c, p)) {
		snprintf(m->why, sizeof(m->why), "journal block %llu is %s",
		         (unsigned long long)m->have, p ? "beyond the filesystem" : "a hole");
		return -EUCLEAN;
	}
	if (m->n && m->e[m->n - 1].pblk + m->e[m->n - 1].count == p) {
		m->e[m->n - 1].count++;
	} else {
		struct jbd_extent *ne = bo_grow(m->e, &m->cap, m->n, sizeof(*ne), 16);
		if (!ne)
			return -ENOMEM;
		m->e = ne;
		m->e[m->n++] = (struct jbd_extent){m->have, p, 1};
	}
	m->have++;
	return 0;
}

static int jm_walk(struct jmap *m, uint64_t blk, int level)
{
	if (m->have >= m->want)
		return 0;
	if (!blk || !ck_blk_valid(m->c, blk)) {
		snprintf(m->why, sizeof(m->why), "indirect block %llu is %s",
		         (unsigned long long)blk, blk ? "beyond the filesystem" : "missing");
		return -EUCLEAN;
	}
	uint64_t *ni = bo_grow(m->ind, &m->capind, m->nind, sizeof(*ni), 8);
	if (!ni)
		return -ENOMEM;
	m->ind = ni;
	m->ind[m->nind++] = blk;
	uint32_t bs = m->c->bs;
	uint8_t *b = m->lvl + (size_t)(level - 1) * bs;
	int rc = ck_rd(m->c, blk, b, 1);
	for (uint32_t i = 0; i < bs / 4 && m->have < m->want && !rc; i++) {
		uint64_t p = get_le32(b + 4 * i);
		rc = level == 1 ? jm_add(m, p) : jm_walk(m, p, level - 1);
	}
	return rc;
}

/* Maps a journal described by i_block (60 bytes) and its size; -EUCLEAN with m->why
 * when the map is unusable, including when its first block holds no journal
 * superblock. */
static int jm_build(struct jmap *m, const uint8_t *iblock, uint64_t size)
{
	struct ck *c = m->c;
	m->n = m->nind = 0;
	m->have = 0;
	m->want = size / c->bs;
	if (m->want < 16 || size % c->bs) {
		snprintf(m->why, sizeof(m->why), "size %llu is not a journal's",
		         (unsigned long long)size);
		return -EUCLEAN;
	}
	int rc = 0;
	for (int i = 0; i < EXT2_NDIR_BLOCKS && !rc; i++)
		rc = jm_add(m, get_le32(iblock + 4 * i));
	for (int l = 1; l <= 3 && !rc && m->have < m->want; l++)
		rc = jm_walk(m, get_le32(iblock + 4 * (EXT2_NDIR_BLOCKS + l - 1)), l);
	if (!rc && m->have < m->want) {
		snprintf(m->why, sizeof(m->why), "maps %llu of %llu blocks",
		         (unsigned long long)m->have, (unsigned long long)m->want);
		rc = -EUCLEAN;
	}
	if (rc)
		return rc;
	if ((rc = ck_rd(c, m->e[0].pblk, c->buf, 1)))
		return rc;
	if (get_be32(c->buf + JSB_MAGIC) != JBD2_MAGIC) {
		snprintf(m->why, sizeof(m->why), "block %llu holds no journal superblock",
		         (unsigned long long)m->e[0].pblk);
		return -EUCLEAN;
	}
	return 0;
}

/* The journal inode first, as e2fsck; the superblock's copy of its block map when
 * the inode is damaged. */
static int jm_find(struct jmap *m, struct fsck_replay *out)
{
	struct ck *c = m->c;
	uint32_t jino = sb_get32(c->sb, SB_JOURNAL_INUM);
	if (sb_has_incompat(c->sb, EXT3_FEATURE_INCOMPAT_JOURNAL_DEV) ||
	    sb_get32(c->sb, SB_JOURNAL_DEV))
		return bo_errf(c->err, -EOPNOTSUPP, "external journals are not supported");
	int rc = -EUCLEAN;
	if (jino >= 1 && jino <= c->ninodes && !c->grp_bad[(jino - 1) / c->ipg]) {
		uint8_t in[1024];
		if ((rc = ck_read_inode(c, jino, in)))
			return rc;
		if (!mode_is_reg(ino_mode(in)) || (ino_flags(in) & EXT4_EXTENTS_FL)) {
			snprintf(m->why, sizeof(m->why), "mode 0%o, flags 0x%x", ino_mode(in),
			         ino_flags(in));
			rc = -EUCLEAN;
		} else {
			rc = jm_build(m, in + I_BLOCK, ino_size(in));
		}
		if (rc != -EUCLEAN)
			return rc;
	} else {
		snprintf(m->why, sizeof(m->why), "its inode table is not usable");
	}
	char why[200];
	snprintf(why, sizeof(why), "journal inode %u: %s", jino, m->why);
	if (jino != EXT2_JOURNAL_INO || c->sb[SB_JNL_BACKUP_TYPE] != EXT3_JNL_BACKUP_BLOCKS)
		return bo_errf(c->err, -EUCLEAN,
		               "%s, and the superblock has no backup of its "
		               "blocks",
		               why);
	const uint8_t *bk = c->sb + SB_JNL_BLOCKS;
	uint64_t size = get_le32(bk + 64) | (uint64_t)get_le32(bk + 60) << 32;
	if ((rc = jm_build(m, bk, size)) == -EUCLEAN)
		return bo_errf(c->err, rc, "%s; the superblock's backup of its blocks: %s", why,
		               m->why);
	if (!rc)
		out->from_backup = true;
	return rc;
}

/* needs_recovery off in the (replayed) primary superblock. */
static int clear_recover_flag(struct ck *c)
{
	uint8_t head[4096];
	int rc = blk_pread(c->d, 0, sizeof(head), head);
	if (rc)
		return bo_errf(c->err, rc, "reading the superblock: %s", bo_errstr(&c->d->err, rc));
	memcpy(c->sb, head + EXT2_SB_OFFSET, EXT2_SB_SIZE);
	if (sb_get16(c->sb, SB_MAGIC) != EXT2_MAGIC)
		return bo_errf(c->err, -EUCLEAN, "the replay left no valid superblock");
	uint32_t inc = sb_get32(c->sb, SB_FEATURE_INCOMPAT);
	if (!(inc & EXT3_FEATURE_INCOMPAT_RECOVER))
		return 0;
	sb_put32(c->sb, SB_FEATURE_INCOMPAT, inc & ~(uint32_t)EXT3_FEATURE_INCOMPAT_RECOVER);
	c->csum = sb_has_ro_compat(c->sb, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM);
	return ck_write_sb(c);
}

static int replay(struct ck *c, struct jmap *m, struct fsck_replay *out)
{
	struct jbd_config cfg = {.block_size = c->bs,
	                         .nr_blocks = m->want,
	                         .map = {.extents = m->e, .nr_extents = m->n},
	                         .fs_blocks = c->nblocks,
	                         .barrier = true};
	struct jbd_journal *j;
	int rc = jbd_journal_open(c->d, &cfg, &j, c->err);
	if (rc)
		return rc;
	bool flag = sb_has_incompat(c->sb, EXT3_FEATURE_INCOMPAT_RECOVER);
	out->needed = flag || jbd_journal_needs_recovery(j);
	out->info.start_tid = out->info.end_tid = jbd_journal_sb(j)->sequence;
	if (out->needed) {
		rc = jbd_journal_recover(j, &out->info);
		if (rc)
			bo_errf(c->err, rc, "journal replay: %s",
			        bo_errstr(jbd_journal_err(j), rc));
		else
			out->done = true;
	}
	jbd_journal_destroy(j, false);
	if (!rc && out->done) {
		c->r->modified = true;
		rc = clear_recover_flag(c);
	}
	return rc;
}

/* As e2fsck: a journal inode that lost its block map gets it back from the
 * superblock's copy (its i_blocks is then pass 1's to put right). */
static int restore_journal_inode(struct ck *c)
{
	uint8_t in[1024];
	uint32_t jino = EXT2_JOURNAL_INO;
	if (c->grp_bad[(jino - 1) / c->ipg] || !ck_itable_plausible(c))
		return 0;
	int rc = ck_read_inode(c, jino, in);
	if (rc)
		return rc;
	const uint8_t *bk = c->sb + SB_JNL_BLOCKS;
	memcpy(in + I_BLOCK, bk, 60);
	ino_set_size(in, get_le32(bk + 64) | (uint64_t)get_le32(bk + 60) << 32);
	if (!mode_is_reg(ino_mode(in)))
		put_le16(in + I_MODE, EXT2_S_IFREG | 0600);
	put_le32(in + I_FLAGS, ino_flags(in) & ~(uint32_t)EXT4_EXTENTS_FL);
	put_le16(in + I_LINKS_COUNT, 1);
	put_le32(in + I_DTIME, 0);
	return ck_write_inode(c, jino, in);
}

/* One look at the filesystem: geometry through pass 0 (quietly), then the map. */
struct jfs {
	struct fsck_opts o;
	struct fsck_report r;
	struct ck c;
	struct jmap m;
};

static int jfs_open(struct jfs *f, struct bdev *d, struct fsck_replay *out, struct bo_err *err)
{
	memset(f, 0, sizeof(*f));
	f->o.repair = FSCK_REPAIR_YES;
	f->c = (struct ck){.d = d, .o = &f->o, .r = &f->r, .err = err};
	f->m.c = &f->c;
	struct ck *c = &f->c;
	int rc = ck_pass0(c);
	if (rc > 0)
		return bo_errf(err, -EUCLEAN, "not a usable ext2/ext3 superblock: %s",
		               f->r.nr_kept ? f->r.problems[0].msg : "?");
	if (rc)
		return rc;
	out->needed = sb_has_incompat(c->sb, EXT3_FEATURE_INCOMPAT_RECOVER);
	if (!sb_has_compat(c->sb, EXT3_FEATURE_COMPAT_HAS_JOURNAL))
		return bo_errf(err, -ENOENT, "the filesystem has no journal");
	c->buf = malloc(c->bs);
	f->m.lvl = malloc((size_t)c->bs * 3);
	if (!c->buf || !f->m.lvl)
		return -ENOMEM;
	return jm_find(&f->m, out);
}

static void jfs_close(struct jfs *f)
{
	free(f->m.e);
	free(f->m.ind);
	free(f->m.lvl);
	free(f->c.buf);
	free(f->c.gdt);
	free(f->c.grp_bad);
	free(f->c.fx); /* pass 0 may queue fixes; they are the check's to make */
}

int fsck_journal_map(struct bdev *d, struct fsck_journal_map *out, struct bo_err *err)
{
	struct jfs f;
	struct fsck_replay rp = {0};
	memset(out, 0, sizeof(*out));
	int rc = jfs_open(&f, d, &rp, err);
	if (!rc) {
		out->block_size = f.c.bs;
		out->fs_blocks = f.c.nblocks;
		out->nr_blocks = f.m.want;
		out->from_backup = rp.from_backup;
		out->ext = f.m.e;
		out->nr_ext = f.m.n;
		out->indirect = f.m.ind;
		out->nr_indirect = f.m.nind;
		f.m.e = NULL;
		f.m.ind = NULL;
	}
	jfs_close(&f);
	return rc;
}

void fsck_journal_map_free(struct fsck_journal_map *m)
{
	free(m->ext);
	free(m->indirect);
	memset(m, 0, sizeof(*m));
}

int fsck_journal_recover(struct bdev *d, struct fsck_replay *out, struct bo_err *err)
{
	struct jfs f;
	memset(out, 0, sizeof(*out));
	int rc = jfs_open(&f, d, out, err);
	if (!rc)
		rc = replay(&f.c, &f.m, out);
	else if (rc == -ENOENT && out->needed) {
		/* as e2fsck: needs_recovery without a journal is a stale flag: cleared */
		out->needed = false;
		out->stale_flag = true;
		f.r.modified = true;
		rc = clear_recover_flag(&f.c);
	}
	/* The inode is rewritten only where pass 0 trusted everything: a descriptor
	 * pointing at the wrong inode table must never direct a write. */
	uint32_t others = f.r.nr_problems - (f.r.needs_recovery ? 1 : 0);
	if (!rc && out->from_backup && !others && !f.c.gdt_bad && !f.c.sb_bad)
		rc = restore_journal_inode(&f.c);
	out->modified = f.r.modified;
	jfs_close(&f);
	return rc;
}
