// SPDX-License-Identifier: GPL-2.0-or-later
/* mkfs.c — makes an ext2/ext3 filesystem the way mke2fs lays one out: groups,
 * sparse_super backups, reserved GDT blocks with the resize inode, an empty JBD2
 * journal in inode 8, root and lost+found. Not mounting or any later change. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "fs/fs_int.h"

void fs_mkfs_opts_default(struct fs_mkfs_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->type = 3;
}

struct mk {
	struct bdev *d;
	struct bo_err *err;
	uint32_t bs, fdb, bpg, ipg, groups, desc_blocks, rsv_gdt, itb, isz, apb;
	uint64_t blocks;
	uint8_t *bmap; /* whole-filesystem block bitmap, one bit per block */
	uint8_t *sb;
	uint8_t *gdt; /* desc_blocks * bs */
	uint32_t now, csum_seed;
	bool csum;
	uint8_t *itab; /* group 0's first inode-table blocks (inodes 1..first) */
	uint32_t itab_blocks;
	uint32_t *dirs; /* directories per group */
	uint8_t *buf;   /* one block: each bitmap, then each backup superblock */
};

static bool mk_used(const struct mk *m, uint64_t b)
{
	return (m->bmap[b >> 3] >> (b & 7)) & 1;
}
static void mk_use(struct mk *m, uint64_t b)
{
	m->bmap[b >> 3] |= (uint8_t)(1u << (b & 7));
}

static uint64_t group_first(const struct mk *m, uint32_t g)
{
	return m->fdb + (uint64_t)g * m->bpg;
}

static uint32_t group_overhead_super(const struct mk *m, uint32_t g)
{
	return ext2_bg_has_super(m->sb, g) ? 1 + m->desc_blocks + m->rsv_gdt : 0;
}

/* first free block at or after goal */
static int mk_alloc(struct mk *m, uint64_t *goal, uint64_t *out)
{
	for (uint64_t b = *goal; b < m->blocks; b++)
		if (!mk_used(m, b)) {
			mk_use(m, b);
			*out = b;
			*goal = b + 1;
			return 0;
		}
	return bo_errf(m->err, -ENOSPC, "mkfs: filesystem too small for its metadata");
}

static int mk_write(struct mk *m, uint64_t blk, const void *data)
{
	int rc = blk_pwrite(m->d, blk * m->bs, m->bs, data, 0);
	if (rc < 0)
		return bo_errf(m->err, rc, "mkfs: writing block %llu: %s", (unsigned long long)blk,
		               bo_errstr(&m->d->err, rc));
	return 0;
}

static int mk_zero(struct mk *m, uint64_t blk, uint64_t n)
{
	size_t chunk = 1u << 20;
	uint8_t *z = calloc(1, chunk);
	if (!z)
		return -ENOMEM;
	int rc = 0;
	uint64_t off = blk * m->bs, len = n * m->bs;
	while (len && rc == 0) {
		size_t k = len > chunk ? chunk : (size_t)len;
		rc = blk_pwrite(m->d, off, k, z, 0);
		off += k;
		len -= k;
	}
	free(z);
	if (rc < 0)
		return bo_errf(m->err, rc, "mkfs: zeroing blocks at %llu: %s",
		               (unsigned long long)blk, bo_errstr(&m->d->err, rc));
	return 0;
}

static uint8_t *mk_inode(struct mk *m, uint32_t ino)
{
	return m->itab + (size_t)(ino - 1) * m->isz;
}

static void mk_inode_init(struct mk *m, uint32_t ino, uint16_t mode, uint16_t links)
{
	uint8_t *in = mk_inode(m, ino);
	memset(in, 0, m->isz);
	put_le16(in + I_MODE, mode);
	put_le16(in + I_LINKS_COUNT, links);
	put_le32(in + I_ATIME, m->now);
	put_le32(in + I_CTIME, m->now);
	put_le32(in + I_MTIME, m->now);
	if (m->isz >= EXT2_GOOD_OLD_INODE_SIZE + EXT4_GOOD_EXTRA_ISIZE) {
		put_le16(in + I_EXTRA_ISIZE, EXT4_GOOD_EXTRA_ISIZE);
		put_le32(in + I_CRTIME, m->now);
	}
}

/* Maps logical block l of a file being laid out in order (like libext2fs does:
 * each indirect block just before the data it maps). */
struct mk_file {
	uint8_t *in;
	uint8_t *ind, *dind, *tind; /* buffers */
	uint64_t ind_blk, dind_blk, tind_blk;
	uint64_t nblocks;
};

static int mk_flush_ind(struct mk *m, struct mk_file *f)
{
	int rc = 0;
	if (f->ind_blk && (rc = mk_write(m, f->ind_blk, f->ind)) < 0)
		return rc;
	if (f->dind_blk && (rc = mk_write(m, f->dind_blk, f->dind)) < 0)
		return rc;
	if (f->tind_blk && (rc = mk_write(m, f->tind_blk, f->tind)) < 0)
		return rc;
	return 0;
}

static int mk_file_add(struct mk *m, struct mk_file *f, uint64_t l, uint64_t *goal, uint64_t *pb)
{
	int rc;
	uint64_t a = m->apb;
	if (l < EXT2_NDIR_BLOCKS) {
		if ((rc = mk_alloc(m, goal, pb)) < 0)
			return rc;
		ino_set_block(f->in, (unsigned)l, (uint32_t)*pb);
		f->nblocks++;
		return 0;
	}
	l -= EXT2_NDIR_BLOCKS;
	if (l < a) {
		if (l == 0) {
			if ((rc = mk_alloc(m, goal, &f->ind_blk)) < 0)
				return rc;
			memset(f->ind, 0, m->bs);
			ino_set_block(f->in, EXT2_IND_BLOCK, (uint32_t)f->ind_blk);
			f->nblocks++;
		}
		if ((rc = mk_alloc(m, goal, pb)) < 0)
			return rc;
		put_le32(f->ind + 4 * l, (uint32_t)*pb);
		f->nblocks++;
		return 0;
	}
	l -= a;
	if (l >= a * a)
		return bo_errf(m->err, -EFBIG, "mkfs: journal too large for a double-indirect map");
	if (l == 0) {
		if ((rc = mk_alloc(m, goal, &f->dind_blk)) < 0)
			return rc;
		memset(f->dind, 0, m->bs);
		ino_set_block(f->in, EXT2_DIND_BLOCK, (uint32_t)f->dind_blk);
		f->nblocks++;
	}
	if (l % a == 0) {
		if (f->ind_blk && (rc = mk_write(m, f->ind_blk, f->ind)) < 0)
			return rc;
		if ((rc = mk_alloc(m, goal, &f->ind_blk)) < 0)
			return rc;
		memset(f->ind, 0, m->bs);
		put_le32(f->dind + 4 * (l / a), (uint32_t)f->ind_blk);
		f->nblocks++;
	}
	if ((rc = mk_alloc(m, goal, pb)) < 0)
		return rc;
	put_le32(f->ind + 4 * (l % a), (uint32_t)*pb);
	f->nblocks++;
	return 0;
}

static void mk_dir_csum(struct mk *m, uint32_t ino, uint8_t *blk)
{
	if (!m->csum)
		return;
	uint8_t le[4];
	put_le32(le, ino);
	uint32_t c = crc32c_raw(m->csum_seed, le, 4);
	c = crc32c_raw(c, mk_inode(m, ino) + I_GENERATION, 4);
	put_le32(blk + m->bs - DIRENT_TAIL_SIZE + DT_CHECKSUM,
	         crc32c_raw(c, blk, m->bs - DIRENT_TAIL_SIZE));
}

static int mk_dirs(struct mk *m, uint64_t *goal)
{
	uint8_t *b = calloc(1, m->bs);
	if (!b)
		return -ENOMEM;
	uint32_t tail = m->csum ? DIRENT_TAIL_SIZE : 0;
	int rc;
	uint64_t root_blk, lpf[EXT2_NDIR_BLOCKS];
	uint32_t nlpf = 0;
	for (uint32_t size = 0; nlpf < EXT2_NDIR_BLOCKS;) {
		size += m->bs;
		nlpf++;
		if (size >= 16 * 1024 && size >= 2 * m->bs)
			break;
	}
	mk_inode_init(m, EXT2_ROOT_INO, EXT2_S_IFDIR | 0755, 3);
	mk_inode_init(m, EXT2_GOOD_OLD_FIRST_INO, EXT2_S_IFDIR | 0700, 2);
	if ((rc = mk_alloc(m, goal, &root_blk)) < 0)
		goto out;
	for (uint32_t i = 0; i < nlpf; i++)
		if ((rc = mk_alloc(m, goal, &lpf[i])) < 0)
			goto out;
	uint8_t *root = mk_inode(m, EXT2_ROOT_INO), *lp = mk_inode(m, EXT2_GOOD_OLD_FIRST_INO);
	ino_set_block(root, 0, (uint32_t)root_blk);
	ino_set_size(root, m->bs);
	ino_set_blocks(root, m->bs / 512);
	for (uint32_t i = 0; i < nlpf; i++)
		ino_set_block(lp, i, (uint32_t)lpf[i]);
	ino_set_size(lp, (uint64_t)nlpf * m->bs);
	ino_set_blocks(lp, (uint64_t)nlpf * (m->bs / 512));

	memset(b, 0, m->bs);
	de_set(b, EXT2_ROOT_INO, 12, ".", 1, EXT2_FT_DIR);
	de_set(b + 12, EXT2_ROOT_INO, 12, "..", 2, EXT2_FT_DIR);
	de_set(b + 24, EXT2_GOOD_OLD_FIRST_INO, (uint16_t)(m->bs - 24 - tail), "lost+found", 10,
	       EXT2_FT_DIR);
	if (tail)
		de_set_tail(b + m->bs - tail);
	mk_dir_csum(m, EXT2_ROOT_INO, b);
	if ((rc = mk_write(m, root_blk, b)) < 0)
		goto out;
	for (uint32_t i = 0; i < nlpf; i++) {
		memset(b, 0, m->bs);
		if (i == 0) {
			de_set(b, EXT2_GOOD_OLD_FIRST_INO, 12, ".", 1, EXT2_FT_DIR);
			de_set(b + 12, EXT2_ROOT_INO, (uint16_t)(m->bs - 12 - tail), "..", 2,
			       EXT2_FT_DIR);
		} else {
			put_le16(b + DE_REC_LEN, (uint16_t)(m->bs - tail));
		}
		if (tail)
			de_set_tail(b + m->bs - tail);
		mk_dir_csum(m, EXT2_GOOD_OLD_FIRST_INO, b);
		if ((rc = mk_write(m, lpf[i], b)) < 0)
			goto out;
	}
	m->dirs[0] += 2;
out:
	free(b);
	return rc;
}

static int mk_resize_inode(struct mk *m, uint64_t *goal)
{
	if (!m->rsv_gdt)
		return 0;
	uint32_t *dind = calloc(m->apb, 4);
	uint8_t *b = calloc(1, m->bs);
	int rc = (!dind || !b) ? -ENOMEM : 0;
	uint64_t dblk = 0;
	if (rc == 0)
		rc = mk_alloc(m, goal, &dblk);
	uint64_t nblocks = 1;
	uint8_t *in = mk_inode(m, EXT2_RESIZE_INO);
	for (uint32_t r = 0; rc == 0 && r < m->rsv_gdt; r++) {
		uint64_t gdt_blk = m->fdb + 1 + m->desc_blocks + r;
		dind[(m->desc_blocks + r) % m->apb] = (uint32_t)gdt_blk;
		nblocks++;
		memset(b, 0, m->bs);
		uint32_t last = 0;
		for (uint32_t g = 1; g < m->groups; g++) {
			if (!ext2_bg_has_super(m->sb, g))
				continue;
			put_le32(b + 4 * last++, (uint32_t)(gdt_blk + (uint64_t)g * m->bpg));
			nblocks++;
		}
		rc = mk_write(m, gdt_blk, b);
	}
	if (rc == 0) {
		memset(b, 0, m->bs);
		for (uint32_t i = 0; i < m->apb; i++)
			put_le32(b + 4 * i, dind[i]);
		rc = mk_write(m, dblk, b);
	}
	if (rc == 0) {
		mk_inode_init(m, EXT2_RESIZE_INO, EXT2_S_IFREG | 0600, 1);
		ino_set_block(in, EXT2_DIND_BLOCK, (uint32_t)dblk);
		ino_set_blocks(in, nblocks * (m->bs / 512));
		uint64_t a = m->apb;
		ino_set_size(in, (a * a + a + EXT2_NDIR_BLOCKS) * m->bs);
	}
	free(dind);
	free(b);
	return rc;
}

static int mk_journal(struct mk *m, uint64_t *goal, uint64_t jblocks, const uint8_t *uuid)
{
	struct mk_file f = {0};
	f.in = mk_inode(m, EXT2_JOURNAL_INO);
	mk_inode_init(m, EXT2_JOURNAL_INO, EXT2_S_IFREG | 0600, 1);
	f.ind = calloc(1, m->bs);
	f.dind = calloc(1, m->bs);
	f.tind = calloc(1, m->bs);
	uint8_t *jsb = calloc(1, m->bs);
	int rc = (!f.ind || !f.dind || !f.tind || !jsb) ? -ENOMEM : 0;
	uint64_t first = 0, prev = 0, run = 0;
	for (uint64_t l = 0; rc == 0 && l < jblocks; l++) {
		uint64_t pb = 0;
		rc = mk_file_add(m, &f, l, goal, &pb);
		if (rc < 0)
			break;
		if (l == 0)
			first = pb;
		/* zero the journal in contiguous runs */
		if (run && pb == prev + 1) {
			run++;
		} else {
			if (run && (rc = mk_zero(m, prev + 1 - run, run)) < 0)
				break;
			run = 1;
		}
		prev = pb;
	}
	if (rc == 0 && run)
		rc = mk_zero(m, prev + 1 - run, run);
	if (rc == 0)
		rc = mk_flush_ind(m, &f);
	if (rc == 0) {
		put_be32(jsb + JSB_MAGIC, JBD2_MAGIC);
		put_be32(jsb + JSB_BLOCKTYPE, JBD2_SUPERBLOCK_V2);
		put_be32(jsb + JSB_BLOCKSIZE, m->bs);
		put_be32(jsb + JSB_MAXLEN, (uint32_t)jblocks);
		put_be32(jsb + JSB_FIRST, 1);
		put_be32(jsb + JSB_SEQUENCE, 1);
		put_be32(jsb + JSB_NR_USERS, 1);
		memcpy(jsb + JSB_UUID, uuid, 16);
		rc = mk_write(m, first, jsb);
	}
	if (rc == 0) {
		ino_set_size(f.in, jblocks * m->bs);
		ino_set_blocks(f.in, f.nblocks * (m->bs / 512));
		for (int i = 0; i < EXT2_N_BLOCKS; i++)
			sb_put32(m->sb, SB_JNL_BLOCKS + 4 * i, ino_block(f.in, (unsigned)i));
		sb_put32(m->sb, SB_JNL_BLOCKS + 4 * 15, get_le32(f.in + I_SIZE_HIGH));
		sb_put32(m->sb, SB_JNL_BLOCKS + 4 * 16, get_le32(f.in + I_SIZE_LO));
		m->sb[SB_JNL_BACKUP_TYPE] = EXT3_JNL_BACKUP_BLOCKS;
	}
	free(f.ind);
	free(f.dind);
	free(f.tind);
	free(jsb);
	return rc;
}

static uint64_t default_journal_blocks(uint64_t blocks)
{
	if (blocks < 2048)
		return 0;
	if (blocks < 32768)
		return 1024;
	if (blocks < 256 * 1024)
		return 4096;
	if (blocks < 512 * 1024)
		return 8192;
	if (blocks < 4096 * 1024)
		return 16384;
	if (blocks < 8192 * 1024)
		return 32768;
	if (blocks < 16384 * 1024)
		return 65536;
	if (blocks < 32768 * 1024)
		return 131072;
	return 262144;
}

static uint32_t calc_rsv_gdt(uint64_t blocks, uint32_t fdb, uint32_t bpg, uint32_t bs,
                             uint32_t desc_blocks)
{
	uint64_t max_blocks = 0xffffffffull;
	if (blocks < max_blocks / 1024)
		max_blocks = blocks * 1024;
	uint64_t rsv_groups = (max_blocks - fdb + bpg - 1) / bpg;
	uint32_t gdpb = bs / EXT2_MIN_DESC_SIZE;
	uint64_t rsv = (rsv_groups + gdpb - 1) / gdpb;
	rsv = rsv > desc_blocks ? rsv - desc_blocks : 0;
	if (rsv > bs / 4)
		rsv = bs / 4;
	return (uint32_t)rsv;
}

static int mk_geometry(struct mk *m, const struct fs_mkfs_opts *o, uint64_t bytes)
{
	uint64_t ratio = 16384;
	if (bytes < 3ull << 20)
		ratio = 8192;
	else if (bytes < 512ull << 20)
		ratio = 4096;
	m->bs = o->block_size ? o->block_size : (bytes < 512ull << 20 ? 1024 : 4096);
	if (m->bs != 1024 && m->bs != 2048 && m->bs != 4096)
		return bo_errf(m->err, -EINVAL, "mkfs: block size %u (1024, 2048 or 4096)", m->bs);
	if (m->bs < m->d->sector_size)
		return bo_errf(m->err, -EINVAL, "mkfs: block size %u below the sector size %u",
		               m->bs, m->d->sector_size);
	m->isz = o->inode_size ? o->inode_size : 256;
	if (m->isz != 128 && m->isz != 256)
		return bo_errf(m->err, -EINVAL, "mkfs: inode size %u (128 or 256)", m->isz);
	m->blocks = bytes / m->bs;
	if (m->blocks > 0xffffffffull)
		m->blocks = 0xffffffffull;
	m->fdb = m->bs == 1024;
	m->bpg = m->bs * 8;
	m->apb = m->bs / 4;
	uint64_t want_inodes = o->inodes ? o->inodes : m->blocks * m->bs / ratio;
	for (int tries = 0; tries < 4; tries++) {
		if (m->blocks < 64 + m->fdb)
			return bo_errf(m->err, -EINVAL, "mkfs: device too small (%llu blocks)",
			               (unsigned long long)m->blocks);
		m->groups = (uint32_t)((m->blocks - m->fdb + m->bpg - 1) / m->bpg);
		m->desc_blocks = (m->groups + m->bs / 32 - 1) / (m->bs / 32);
		m->rsv_gdt = calc_rsv_gdt(m->blocks, m->fdb, m->bpg, m->bs, m->desc_blocks);
		uint64_t ipg = (want_inodes + m->groups - 1) / m->groups;
		if (ipg < 16)
			ipg = 16;
		if (ipg > m->bs * 8)
			ipg = m->bs * 8;
		uint32_t ipb = m->bs / m->isz;
		m->itb = (uint32_t)((ipg * m->isz + m->bs - 1) / m->bs);
		m->ipg = (m->itb * m->bs / m->isz) & ~7u;
		if (m->ipg > m->bs * 8)
			m->ipg = m->bs * 8;
		m->itb = (m->ipg + ipb - 1) / ipb;
		if ((uint64_t)m->ipg * m->groups > 0xffffffffull)
			return bo_errf(m->err, -EINVAL, "mkfs: too many inodes");
		if (3 + m->itb + m->rsv_gdt + m->desc_blocks > m->bpg)
			return bo_errf(m->err, -EINVAL, "mkfs: too many inodes per group");
		/* a last group too small for its own metadata is dropped, as mke2fs does */
		uint64_t rem = (m->blocks - m->fdb) % m->bpg;
		uint32_t g = m->groups - 1;
		uint32_t over =
		    2 + m->itb + (ext2_group_sparse(g) ? 1 + m->desc_blocks + m->rsv_gdt : 0);
		if (m->groups == 1 && rem && rem < over)
			return bo_errf(m->err, -EINVAL, "mkfs: device too small");
		if (rem && rem < over + 50 && m->groups > 1) {
			m->blocks -= rem;
			continue;
		}
		return 0;
	}
	return 0;
}

/* Derived, not random, when not given: the same options give the same UUID and hash seed. */
static void mk_uuid(const struct mk *m, const struct fs_mkfs_opts *o, uint8_t uuid[16])
{
	memcpy(uuid, o->uuid, 16);
	bool zero_uuid = true;
	for (int i = 0; i < 16; i++)
		zero_uuid &= uuid[i] == 0;
	if (zero_uuid) {
		uint64_t h = bo_hash64(BO_HASH64_INIT, &m->blocks, sizeof(m->blocks));
		h = bo_hash64(h, &m->bs, sizeof(m->bs));
		put_le64(uuid, h);
		put_le64(uuid + 8, bo_hash64(h, "blackout", 8));
		uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);
		uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
	}
}

/* Checked before anything is written, so a bad journal size leaves the image untouched. */
static int mk_journal_size(const struct mk *m, const struct fs_mkfs_opts *o, uint64_t *jblocks)
{
	*jblocks = o->journal_blocks ? o->journal_blocks : default_journal_blocks(m->blocks);
	/* mke2fs's table gives no journal below 2048 blocks: say the image is small */
	if (!o->journal_blocks && *jblocks == 0)
		return bo_errf(m->err, -EINVAL,
		               "mkfs: the image is too small for ext3: %llu blocks of %u bytes, "
		               "and a journal needs at least 2048 blocks (2 MiB with 1 KiB "
		               "blocks); give a larger size, or make ext2",
		               (unsigned long long)m->blocks, m->bs);
	if (*jblocks < JBD2_MIN_JOURNAL_BLOCKS || *jblocks > m->blocks / 2)
		return bo_errf(m->err, -EINVAL,
		               "mkfs: journal of %llu blocks (at least %u, at most half the "
		               "filesystem)",
		               (unsigned long long)*jblocks, JBD2_MIN_JOURNAL_BLOCKS);
	return 0;
}

/* The layout is built in memory before it is written: these hold it until then. */
static int mk_alloc_state(struct mk *m)
{
	m->bmap = calloc(1, (size_t)(m->blocks + 7) / 8 + 8);
	m->gdt = calloc(m->desc_blocks, m->bs);
	m->itab_blocks = (EXT2_GOOD_OLD_FIRST_INO * m->isz + m->bs - 1) / m->bs;
	m->itab = calloc(m->itab_blocks, m->bs);
	m->dirs = calloc(m->groups, sizeof(uint32_t));
	m->buf = calloc(1, m->bs);
	if (!m->bmap || !m->gdt || !m->itab || !m->dirs || !m->buf)
		return -ENOMEM;
	return 0;
}

/* The one way out once the superblock buffer exists; parts not allocated are NULL. */
static void mk_free_state(struct mk *m)
{
	free(m->buf);
	free(m->bmap);
	free(m->gdt);
	free(m->itab);
	free(m->dirs);
	free(m->sb);
}

/* Every group's fixed metadata is marked used before the first allocation can take it. */
static void mk_place_groups(struct mk *m)
{
	for (uint32_t g = 0; g < m->groups; g++) {
		uint64_t b = group_first(m, g);
		for (uint32_t i = 0; i < group_overhead_super(m, g); i++)
			mk_use(m, b + i);
		b += group_overhead_super(m, g);
		uint8_t *gd = m->gdt + (size_t)g * EXT2_MIN_DESC_SIZE;
		put_le32(gd + GD_BLOCK_BITMAP, (uint32_t)b);
		put_le32(gd + GD_INODE_BITMAP, (uint32_t)(b + 1));
		put_le32(gd + GD_INODE_TABLE, (uint32_t)(b + 2));
		for (uint32_t i = 0; i < 2 + m->itb; i++)
			mk_use(m, b + i);
	}
	if (m->fdb)
		mk_use(m, 0);
}

/* Derived from the UUID when not given, for the same reason the UUID is derived. */
static void mk_hash_seed(uint8_t *sb, const struct fs_mkfs_opts *o, const uint8_t *uuid)
{
	uint32_t seed[4];
	memcpy(seed, o->hash_seed, sizeof(seed));
	if (!(seed[0] | seed[1] | seed[2] | seed[3])) {
		uint64_t h = bo_hash64(BO_HASH64_INIT, uuid, 16);
		seed[0] = (uint32_t)h;
		seed[1] = (uint32_t)(h >> 32);
		h = bo_hash64(h, uuid, 16);
		seed[2] = (uint32_t)h;
		seed[3] = (uint32_t)(h >> 32);
	}
	for (int i = 0; i < 4; i++)
		sb_put32(sb, SB_HASH_SEED + 4 * i, seed[i]);
}

/* All of the superblock but what later steps add: journal map, free counts, group number. */
static void mk_superblock(struct mk *m, const struct fs_mkfs_opts *o, const uint8_t *uuid)
{
	uint8_t *sb = m->sb;
	uint32_t compat = EXT2_FEATURE_COMPAT_EXT_ATTR | EXT2_FEATURE_COMPAT_RESIZE_INODE |
	                  EXT2_FEATURE_COMPAT_DIR_INDEX;
	if (!m->rsv_gdt)
		compat &= ~EXT2_FEATURE_COMPAT_RESIZE_INODE;
	if (o->type == 3)
		compat |= EXT3_FEATURE_COMPAT_HAS_JOURNAL;
	uint32_t ro = EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE;
	if (m->csum)
		ro |= EXT4_FEATURE_RO_COMPAT_METADATA_CSUM;
	sb_put32(sb, SB_INODES_COUNT, m->ipg * m->groups);
	sb_put32(sb, SB_BLOCKS_COUNT_LO, (uint32_t)m->blocks);
	sb_put32(sb, SB_R_BLOCKS_COUNT_LO, (uint32_t)(m->blocks * 5 / 100));
	sb_put32(sb, SB_FIRST_DATA_BLOCK, m->fdb);
	sb_put32(sb, SB_LOG_BLOCK_SIZE, m->bs == 1024 ? 0 : m->bs == 2048 ? 1 : 2);
	sb_put32(sb, SB_LOG_CLUSTER_SIZE, m->bs == 1024 ? 0 : m->bs == 2048 ? 1 : 2);
	sb_put32(sb, SB_BLOCKS_PER_GROUP, m->bpg);
	sb_put32(sb, SB_CLUSTERS_PER_GROUP, m->bpg);
	sb_put32(sb, SB_INODES_PER_GROUP, m->ipg);
	sb_put32(sb, SB_WTIME, m->now);
	sb_put16(sb, SB_MAX_MNT_COUNT, 0xffff);
	sb_put16(sb, SB_MAGIC, EXT2_MAGIC);
	sb_put16(sb, SB_STATE, EXT2_VALID_FS);
	sb_put16(sb, SB_ERRORS, EXT2_ERRORS_CONTINUE);
	sb_put32(sb, SB_LASTCHECK, m->now);
	sb_put32(sb, SB_REV_LEVEL, EXT2_DYNAMIC_REV);
	sb_put32(sb, SB_FIRST_INO, EXT2_GOOD_OLD_FIRST_INO);
	sb_put16(sb, SB_INODE_SIZE, (uint16_t)m->isz);
	sb_put32(sb, SB_FEATURE_COMPAT, compat);
	sb_put32(sb, SB_FEATURE_INCOMPAT, EXT2_FEATURE_INCOMPAT_FILETYPE);
	sb_put32(sb, SB_FEATURE_RO_COMPAT, ro);
	memcpy(sb + SB_UUID, uuid, 16);
	if (o->label)
		strncpy((char *)sb + SB_VOLUME_NAME, o->label, 16);
	sb_put16(sb, SB_RESERVED_GDT_BLOCKS, (uint16_t)m->rsv_gdt);
	if (o->type == 3)
		sb_put32(sb, SB_JOURNAL_INUM, EXT2_JOURNAL_INO);
	mk_hash_seed(sb, o, uuid);
	sb[SB_DEF_HASH_VERSION] = EXT2_HASH_HALF_MD4;
	sb_put32(sb, SB_DEFAULT_MOUNT_OPTS, EXT2_DEFM_XATTR_USER | EXT2_DEFM_ACL);
	sb_put32(sb, SB_MKFS_TIME, m->now);
	if (m->isz > EXT2_GOOD_OLD_INODE_SIZE) {
		sb_put16(sb, SB_MIN_EXTRA_ISIZE, EXT4_GOOD_EXTRA_ISIZE);
		sb_put16(sb, SB_WANT_EXTRA_ISIZE, EXT4_GOOD_EXTRA_ISIZE);
	}
	sb_put32(sb, SB_FLAGS, ((char)-1 < 0) ? EXT2_FLAGS_SIGNED_HASH : EXT2_FLAGS_UNSIGNED_HASH);
	if (m->csum)
		sb[SB_CHECKSUM_TYPE] = EXT4_CRC32C_CHKSUM;
}

/* Old image contents must not read as inodes or as reserved descriptor blocks. */
static int mk_zero_tables(struct mk *m)
{
	int rc = 0;
	for (uint32_t g = 0; g < m->groups && rc == 0; g++)
		rc = mk_zero(m, get_le32(m->gdt + (size_t)g * 32 + GD_INODE_TABLE), m->itb);
	for (uint32_t g = 1; g < m->groups && rc == 0; g++)
		if (ext2_bg_has_super(m->sb, g) && m->rsv_gdt)
			rc = mk_zero(m, group_first(m, g) + 1 + m->desc_blocks, m->rsv_gdt);
	return rc;
}

/* The special inodes are built in memory, then checksummed and written in one pass. */
static int mk_inodes(struct mk *m, uint64_t jblocks, const uint8_t *uuid)
{
	int rc = mk_zero_tables(m);
	uint64_t goal = get_le32(m->gdt + GD_INODE_TABLE) + m->itb;
	if (rc == 0)
		rc = mk_dirs(m, &goal);
	if (rc == 0)
		rc = mk_resize_inode(m, &goal);
	if (rc == 0 && jblocks)
		rc = mk_journal(m, &goal, jblocks, uuid);
	if (rc < 0)
		return rc;
	for (uint32_t i = 1; i <= EXT2_GOOD_OLD_FIRST_INO; i++) {
		uint8_t *in = mk_inode(m, i);
		bool zero = true;
		for (uint32_t k = 0; k < m->isz && zero; k++)
			zero = in[k] == 0;
		if (m->csum && !zero)
			ext2_inode_set_csum(m->csum_seed, i, in, m->isz);
	}
	uint64_t it0 = get_le32(m->gdt + GD_INODE_TABLE);
	for (uint32_t i = 0; i < m->itab_blocks && rc == 0; i++)
		rc = mk_write(m, it0 + i, m->itab + (size_t)i * m->bs);
	return rc;
}

/* Bits past a short last group are set so nothing allocates them; returns the free count. */
static uint32_t mk_block_bitmap(const struct mk *m, uint32_t g, uint8_t *buf)
{
	uint64_t first = group_first(m, g);
	uint32_t n = (uint32_t)(m->blocks - first < m->bpg ? m->blocks - first : m->bpg);
	memset(buf, 0, m->bs);
	uint32_t freeb = 0;
	for (uint32_t i = 0; i < m->bpg; i++) {
		if (i >= n || mk_used(m, first + i))
			buf[i >> 3] |= (uint8_t)(1u << (i & 7));
		else
			freeb++;
	}
	return freeb;
}

/* Reserved inodes (group 0) and the padding past ipg are in use; returns the used count. */
static uint32_t mk_inode_bitmap(const struct mk *m, uint32_t g, uint8_t *buf)
{
	memset(buf, 0, m->bs);
	uint32_t usedi = g == 0 ? EXT2_GOOD_OLD_FIRST_INO : 0;
	for (uint32_t i = 0; i < usedi; i++)
		buf[i >> 3] |= (uint8_t)(1u << (i & 7));
	for (uint32_t i = m->ipg; i < m->bs * 8; i++)
		buf[i >> 3] |= (uint8_t)(1u << (i & 7));
	return usedi;
}

/* Set last, as it covers the whole descriptor (its own field read as zero). */
static void mk_desc_csum(const struct mk *m, uint32_t g, uint8_t *gd)
{
	put_le16(gd + GD_FLAGS, EXT4_BG_INODE_ZEROED);
	uint8_t le[4], zero2[2] = {0, 0};
	put_le32(le, g);
	uint32_t c = crc32c_raw(m->csum_seed, le, 4);
	c = crc32c_raw(c, gd, GD_CHECKSUM);
	c = crc32c_raw(c, zero2, 2);
	put_le16(gd + GD_CHECKSUM, (uint16_t)c);
}

/* The descriptor holds the bitmaps' checksums and the counts, so it is completed here. */
static int mk_group(struct mk *m, uint32_t g, uint32_t *freeb, uint32_t *freei)
{
	uint8_t *gd = m->gdt + (size_t)g * EXT2_MIN_DESC_SIZE;
	*freeb = mk_block_bitmap(m, g, m->buf);
	if (m->csum)
		put_le16(gd + GD_BLOCK_BITMAP_CSUM_LO,
		         (uint16_t)crc32c_raw(m->csum_seed, m->buf, m->bpg / 8));
	int rc = mk_write(m, get_le32(gd + GD_BLOCK_BITMAP), m->buf);
	if (rc < 0)
		return rc;
	uint32_t usedi = mk_inode_bitmap(m, g, m->buf);
	*freei = m->ipg - usedi;
	if (m->csum)
		put_le16(gd + GD_INODE_BITMAP_CSUM_LO,
		         (uint16_t)crc32c_raw(m->csum_seed, m->buf, m->ipg / 8));
	rc = mk_write(m, get_le32(gd + GD_INODE_BITMAP), m->buf);
	put_le16(gd + GD_FREE_BLOCKS, (uint16_t)*freeb);
	put_le16(gd + GD_FREE_INODES, (uint16_t)*freei);
	put_le16(gd + GD_USED_DIRS, (uint16_t)m->dirs[g]);
	if (m->csum)
		mk_desc_csum(m, g, gd);
	return rc;
}

/* The superblock's free counts are the sums of the groups'. */
static int mk_groups(struct mk *m)
{
	uint64_t free_total = 0, free_inodes_total = 0;
	int rc = 0;
	for (uint32_t g = 0; g < m->groups && rc == 0; g++) {
		uint32_t freeb = 0, freei = 0;
		rc = mk_group(m, g, &freeb, &freei);
		free_total += freeb;
		free_inodes_total += freei;
	}
	sb_put32(m->sb, SB_FREE_BLOCKS_LO, (uint32_t)free_total);
	sb_put32(m->sb, SB_FREE_INODES, (uint32_t)free_inodes_total);
	return rc;
}

/* The primary superblock sits at byte 1024 whatever the block size, not at a block. */
static int mk_write_primary_sb(struct mk *m)
{
	uint8_t *sbb = calloc(1, m->bs > 2048 ? m->bs : 2048);
	if (!sbb)
		return -ENOMEM;
	/* keep the boot block of a 1 KiB filesystem as it was */
	size_t len = m->bs == 1024 ? 1024 : m->bs;
	uint64_t off = m->bs == 1024 ? 1024 : 0;
	memcpy(sbb + (m->bs == 1024 ? 0 : 1024), m->sb, EXT2_SB_SIZE);
	int rc = blk_pwrite(m->d, off, len, sbb, 0);
	free(sbb);
	if (rc < 0)
		return bo_errf(m->err, rc, "mkfs: writing the superblock: %s",
		               bo_errstr(&m->d->err, rc));
	return 0;
}

/* Written last, to describe what is on the media; each copy has its own group number. */
static int mk_write_copies(struct mk *m)
{
	uint8_t *sb = m->sb;
	int rc = 0;
	for (uint32_t g = 0; g < m->groups && rc == 0; g++) {
		if (!ext2_bg_has_super(sb, g))
			continue;
		uint64_t first = group_first(m, g);
		sb_put16(sb, SB_BLOCK_GROUP_NR, (uint16_t)g);
		if (m->csum)
			sb_put32(sb, SB_CHECKSUM, crc32c_raw(~0u, sb, SB_CHECKSUM));
		if (g == 0) {
			rc = mk_write_primary_sb(m);
		} else {
			memset(m->buf, 0, m->bs);
			memcpy(m->buf, sb, EXT2_SB_SIZE);
			rc = mk_write(m, first, m->buf);
		}
		for (uint32_t i = 0; i < m->desc_blocks && rc == 0; i++)
			rc = mk_write(m, first + 1 + i, m->gdt + (size_t)i * m->bs);
	}
	return rc;
}

int fs_mkfs(struct bdev *d, const struct fs_mkfs_opts *o, struct bo_err *err)
{
	struct fs_mkfs_opts defo;
	if (!o) {
		fs_mkfs_opts_default(&defo);
		o = &defo;
	}
	if (o->type != 2 && o->type != 3)
		return bo_errf(err, -EINVAL, "mkfs: type must be ext2 or ext3");
	struct mk mm = {0}, *m = &mm;
	m->d = d;
	m->err = err;
	m->sb = calloc(1, EXT2_SB_SIZE);
	if (!m->sb)
		return -ENOMEM;
	/* sparse_super must be known before the geometry (backup placement) */
	sb_put32(m->sb, SB_FEATURE_RO_COMPAT, EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER);
	int rc = mk_geometry(m, o, blk_size_bytes(d));
	uint8_t uuid[16];
	mk_uuid(m, o, uuid);
	m->csum = o->metadata_csum;
	m->csum_seed = crc32c_raw(~0u, uuid, 16);
	m->now = o->now ? o->now : (uint32_t)time(NULL);
	uint64_t jblocks = 0;
	if (rc == 0 && o->type == 3)
		rc = mk_journal_size(m, o, &jblocks);
	if (rc == 0)
		rc = mk_alloc_state(m);
	if (rc == 0) {
		mk_place_groups(m);
		mk_superblock(m, o, uuid);
		rc = mk_inodes(m, jblocks, uuid);
	}
	if (rc == 0)
		rc = mk_groups(m);
	if (rc == 0)
		rc = mk_write_copies(m);
	if (rc == 0 && (rc = blk_flush(d)) < 0)
		rc = bo_errf(err, rc, "mkfs: flush: %s", bo_errstr(&d->err, rc));
	mk_free_state(m);
	return rc;
}
