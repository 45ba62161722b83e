// SPDX-License-Identifier: GPL-2.0-or-later
/* inode.c — inodes in the inode table (with checksums), their indirect block maps,
 * file data I/O, truncation, release and the orphan list. Not directories (dir.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "fs/fs_int.h"

static int inode_loc(struct fs *fs, uint32_t ino, uint64_t *blk, uint32_t *off)
{
	if (ino < 1 || ino > fs->inodes_count)
		return bo_errf(&fs->err, -EUCLEAN, "inode %u out of range (1..%u)", ino,
		               fs->inodes_count);
	uint32_t g, i;
	if (fs->ipg_bits) {
		g = (ino - 1) >> fs->ipg_bits;
		i = (ino - 1) & (fs->ipg - 1);
	} else {
		g = (ino - 1) / fs->ipg;
		i = (ino - 1) % fs->ipg;
	}
	*blk = gd_inode_table(fs_gd(fs, g), fs->desc_size) + (i >> fs->ipb_bits);
	*off = (i & (fs->inodes_per_block - 1)) * fs->inode_size;
	return 0;
}

int fs_inode_linked(struct fs *fs, uint32_t ino, bool *linked)
{
	uint64_t blk;
	uint32_t off;
	int rc = inode_loc(fs, ino, &blk, &off);
	struct fs_buf *b;
	if (rc == 0 && (rc = fs_bread(fs, blk, &b)) == 0)
		*linked = get_le16(b->data + off + I_LINKS_COUNT) != 0;
	return rc;
}

static uint32_t inode_csum(struct fs *fs, uint32_t ino, const uint8_t *raw)
{
	return ext2_inode_csum(fs->csum_seed, ino, raw, fs->inode_size);
}

static bool csum_hi(const struct fs *fs, const uint8_t *raw)
{
	return fs->inode_size > EXT2_GOOD_OLD_INODE_SIZE &&
	       get_le16(raw + I_EXTRA_ISIZE) >= EXT4_INODE_CSUM_HI_EXTRA_END;
}

int fs_iget(struct fs *fs, uint32_t ino, struct fs_inode *in)
{
	uint64_t blk;
	uint32_t off;
	int rc = inode_loc(fs, ino, &blk, &off);
	if (rc < 0)
		return rc;
	struct fs_buf *b;
	if ((rc = fs_bread(fs, blk, &b)) < 0)
		return rc;
	in->ino = ino;
	memcpy(in->raw, b->data + off, fs->inode_size);
	if (fs->inode_size > EXT2_GOOD_OLD_INODE_SIZE &&
	    get_le16(in->raw + I_EXTRA_ISIZE) > fs->inode_size - EXT2_GOOD_OLD_INODE_SIZE)
		return bo_errf(&fs->err, -EUCLEAN, "inode %u (block %llu): bad extra_isize %u", ino,
		               (unsigned long long)blk, get_le16(in->raw + I_EXTRA_ISIZE));
	if (fs->csum) {
		uint32_t c = inode_csum(fs, ino, in->raw);
		uint32_t st = get_le16(in->raw + I_CHECKSUM_LO);
		if (csum_hi(fs, in->raw))
			st |= (uint32_t)get_le16(in->raw + I_CHECKSUM_HI) << 16;
		else
			c &= 0xffff;
		if (c != st)
			return bo_errf(&fs->err, -EUCLEAN,
			               "inode %u (block %llu): checksum mismatch (stored 0x%x, "
			               "computed 0x%x)",
			               ino, (unsigned long long)blk, st, c);
	}
	uint32_t fl = ino_flags(in->raw);
	if (fl & (EXT4_EXTENTS_FL | EXT4_INLINE_DATA_FL))
		return bo_errf(&fs->err, -EOPNOTSUPP, "inode %u: extents/inline data not supported",
		               ino);
	return 0;
}

int fs_iput(struct fs *fs, struct fs_inode *in)
{
	uint64_t blk;
	uint32_t off;
	int rc = inode_loc(fs, in->ino, &blk, &off);
	if (rc < 0)
		return rc;
	if (fs->csum) {
		uint32_t c = inode_csum(fs, in->ino, in->raw);
		put_le16(in->raw + I_CHECKSUM_LO, (uint16_t)c);
		if (csum_hi(fs, in->raw))
			put_le16(in->raw + I_CHECKSUM_HI, (uint16_t)(c >> 16));
	}
	struct fs_buf *b;
	if ((rc = fs_bread(fs, blk, &b)) < 0)
		return rc;
	if ((rc = fs_baccess(fs, b)) < 0)
		return rc;
	memcpy(b->data + off, in->raw, fs->inode_size);
	fs_bdirty(fs, b);
	return 0;
}

uint64_t fs_max_file_size(const struct fs *fs)
{
	uint64_t a = fs->apb;
	uint64_t nblk = EXT2_NDIR_BLOCKS + a + a * a + a * a * a;
	uint64_t m = nblk * fs->bs;
	/* i_blocks (512-byte units, 32 bits without huge_file) caps the size too */
	uint64_t cap = ((1ull << 32) - 1) * 512 - (a * a + a + 2) * fs->bs;
	if (m > cap)
		m = cap & ~(uint64_t)(fs->bs - 1);
	return m;
}

void fs_add_blocks(struct fs *fs, struct fs_inode *in, int64_t nblocks)
{
	ino_set_blocks(in->raw, ino_blocks(in->raw) + nblocks * (int64_t)(fs->bs / 512));
}

/* Reads pointer i of indirect block blk, range-checked. */
static int ind_get(struct fs *fs, struct fs_inode *in, uint64_t blk, uint32_t i, uint64_t *v)
{
	struct fs_buf *b;
	int rc = fs_bread(fs, blk, &b);
	if (rc < 0)
		return rc;
	*v = get_le32(b->data + 4 * i);
	if (*v && !fs_blk_valid(fs, *v))
		return bo_errf(&fs->err, -EUCLEAN,
		               "inode %u: indirect block %llu entry %u points outside the "
		               "filesystem (%llu)",
		               in->ino, (unsigned long long)blk, i, (unsigned long long)*v);
	return 0;
}

static int new_meta_block(struct fs *fs, struct fs_inode *in, uint64_t goal, uint64_t *out)
{
	int rc = fs_alloc_block(fs, goal, out);
	if (rc < 0)
		return rc;
	struct fs_buf *b;
	if ((rc = fs_bnew(fs, *out, &b)) < 0)
		return rc;
	if ((rc = fs_baccess(fs, b)) < 0)
		return rc;
	memset(b->data, 0, fs->bs);
	fs_bdirty(fs, b);
	fs_add_blocks(fs, in, 1);
	return 0;
}

static uint64_t inode_goal(struct fs *fs, const struct fs_inode *in)
{
	uint32_t g = (in->ino - 1) / fs->ipg;
	return fs_group_first_block(fs, g);
}

int fs_bmap(struct fs *fs, struct fs_inode *in, uint64_t lblk, bool alloc, uint64_t *pblk)
{
	uint64_t a = fs->apb;
	uint32_t path[4];
	int depth;
	if (lblk < EXT2_NDIR_BLOCKS) {
		path[0] = (uint32_t)lblk;
		depth = 0;
	} else if ((lblk -= EXT2_NDIR_BLOCKS) < a) {
		path[0] = EXT2_IND_BLOCK;
		path[1] = (uint32_t)lblk;
		depth = 1;
	} else if ((lblk -= a) < a * a) {
		path[0] = EXT2_DIND_BLOCK;
		path[1] = (uint32_t)(lblk / a);
		path[2] = (uint32_t)(lblk % a);
		depth = 2;
	} else if ((lblk -= a * a) < a * a * a) {
		path[0] = EXT2_TIND_BLOCK;
		path[1] = (uint32_t)(lblk / (a * a));
		path[2] = (uint32_t)(lblk / a % a);
		path[3] = (uint32_t)(lblk % a);
		depth = 3;
	} else {
		return bo_errf(&fs->err, -EFBIG, "inode %u: block beyond the triple indirect map",
		               in->ino);
	}
	uint64_t cur = ino_block(in->raw, path[0]);
	if (cur && !fs_blk_valid(fs, cur))
		return bo_errf(&fs->err, -EUCLEAN, "inode %u: block pointer %u out of range (%llu)",
		               in->ino, path[0], (unsigned long long)cur);
	uint64_t goal = inode_goal(fs, in);
	if (!cur) {
		if (!alloc) {
			*pblk = 0;
			return 0;
		}
		int rc =
		    depth ? new_meta_block(fs, in, goal, &cur) : fs_alloc_block(fs, goal, &cur);
		if (rc < 0)
			return rc;
		if (!depth)
			fs_add_blocks(fs, in, 1);
		ino_set_block(in->raw, path[0], (uint32_t)cur);
	}
	for (int l = 1; l <= depth; l++) {
		uint64_t next;
		int rc = ind_get(fs, in, cur, path[l], &next);
		if (rc < 0)
			return rc;
		if (!next) {
			if (!alloc) {
				*pblk = 0;
				return 0;
			}
			rc = l < depth ? new_meta_block(fs, in, cur + 1, &next)
			               : fs_alloc_block(fs, cur + 1 + path[l], &next);
			if (rc < 0)
				return rc;
			if (l == depth)
				fs_add_blocks(fs, in, 1);
			struct fs_buf *b;
			if ((rc = fs_bread(fs, cur, &b)) < 0 || (rc = fs_baccess(fs, b)) < 0)
				return rc;
			put_le32(b->data + 4 * path[l], (uint32_t)next);
			fs_bdirty(fs, b);
		}
		cur = next;
	}
	*pblk = cur;
	return 0;
}

int fs_inode_bmap(struct fs *fs, uint32_t ino, uint64_t lblk, uint64_t *pblk)
{
	struct fs_inode in;
	int rc = fs_iget(fs, ino, &in);
	return rc < 0 ? rc : fs_bmap(fs, &in, lblk, false, pblk);
}

int fs_inode_size(struct fs *fs, uint32_t ino, uint64_t *size)
{
	struct fs_inode in;
	int rc = fs_iget(fs, ino, &in);
	if (rc == 0)
		*size = ino_size(in.raw);
	return rc;
}

/* ---- the check before anything is freed --------------------------------------- */
struct relcheck {
	struct fs *fs;
	uint32_t ino;
	uint64_t *v;
	size_t n, cap;
};

static int rel_add(struct relcheck *c, uint64_t blk, const char *what)
{
	struct fs *fs = c->fs;
	bool used = false;
	if (!fs_blk_valid(fs, blk))
		return bo_errf(&fs->err, -EUCLEAN, "inode %u: %s %llu is outside the filesystem",
		               c->ino, what, (unsigned long long)blk);
	if (fs_in_system_zone(fs, blk))
		return bo_errf(&fs->err, -EUCLEAN,
		               "inode %u: %s %llu is in the system zone (superblock, descriptors, "
		               "bitmaps or inode table)",
		               c->ino, what, (unsigned long long)blk);
	int rc = fs_block_in_use(fs, blk, &used);
	if (rc < 0)
		return rc;
	if (!used)
		return bo_errf(&fs->err, -EUCLEAN,
		               "inode %u: %s %llu is marked free in the block bitmap", c->ino, what,
		               (unsigned long long)blk);
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 64;
		uint64_t *nv = realloc(c->v, nc * sizeof(*nv));
		if (!nv)
			return bo_errf(&fs->err, -ENOMEM, "out of memory");
		c->v = nv;
		c->cap = nc;
	}
	c->v[c->n++] = blk;
	return 0;
}

static int rel_tree(struct relcheck *c, uint64_t blk, int level, uint64_t base, uint64_t from,
                    int budget)
{
	struct fs *fs = c->fs;
	int rc = rel_add(c, blk, "indirect block");
	if (rc < 0)
		return rc;
	if (budget <= 0)
		return bo_errf(&fs->err, -EUCLEAN, "inode %u: indirect tree too deep", c->ino);
	uint64_t span = 1;
	for (int i = 1; i < level; i++)
		span *= fs->apb;
	uint32_t start = from > base ? (uint32_t)((from - base) / span) : 0;
	for (uint32_t i = start; i < fs->apb; i++) {
		struct fs_buf *b;
		if ((rc = fs_bread(fs, blk, &b)) < 0)
			return rc;
		uint64_t v = get_le32(b->data + 4 * i);
		if (!v)
			continue;
		rc = level > 1 ? rel_tree(c, v, level - 1, base + i * span, from, budget - 1)
		               : rel_add(c, v, "block");
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static bool is_fast_symlink(const struct fs *fs, const struct fs_inode *in);

int fs_inode_check_release(struct fs *fs, struct fs_inode *in, uint64_t from)
{
	struct relcheck c = {.fs = fs, .ino = in->ino};
	int rc = 0;
	bool blocks = from > 0 || !is_fast_symlink(fs, in);
	for (uint32_t i = (uint32_t)from; blocks && i < EXT2_NDIR_BLOCKS && rc == 0; i++)
		if (ino_block(in->raw, i))
			rc = rel_add(&c, ino_block(in->raw, i), "block");
	uint64_t base = EXT2_NDIR_BLOCKS, span = fs->apb;
	for (int level = 1; blocks && level <= 3 && rc == 0; level++) {
		uint64_t v = ino_block(in->raw, EXT2_NDIR_BLOCKS + level - 1);
		if (v && base + span > from)
			rc = rel_tree(&c, v, level, base, from < base ? base : from, 8);
		base += span;
		span *= fs->apb;
	}
	if (rc == 0 && from == 0 && ino_file_acl(in->raw))
		rc = rel_add(&c, ino_file_acl(in->raw), "xattr block");
	if (rc == 0 && c.n > 1) { /* qsort must not get NULL, even for 0 items */
		qsort(c.v, c.n, sizeof(*c.v), cmp_u64);
		for (size_t i = 1; i < c.n && rc == 0; i++)
			if (c.v[i] == c.v[i - 1])
				rc = bo_errf(&fs->err, -EUCLEAN,
				             "inode %u: block %llu is mapped twice", in->ino,
				             (unsigned long long)c.v[i]);
	}
	free(c.v);
	bool used = true;
	if (rc == 0 && from == 0 && (rc = fs_inode_in_use(fs, in->ino, &used)) == 0 && !used)
		rc = bo_errf(&fs->err, -EUCLEAN, "inode %u is marked free in the inode bitmap",
		             in->ino);
	return rc;
}

/* Frees the blocks of an indirect tree rooted at `blk` (level 1 = pointers to data)
 * covering logical blocks [base, ...) that are >= from. *all: the whole tree went. */
static int free_tree(struct fs *fs, struct fs_inode *in, uint64_t blk, int level, uint64_t base,
                     uint64_t from, int budget, bool *all)
{
	uint64_t a = fs->apb, span = 1;
	for (int i = 1; i < level; i++)
		span *= a;
	if (budget <= 0)
		return bo_errf(&fs->err, -EUCLEAN, "inode %u: indirect tree too deep", in->ino);
	struct fs_buf *b;
	int rc = fs_bread(fs, blk, &b);
	if (rc < 0)
		return rc;
	bool any_left = false, changed = false;
	uint32_t start = 0;
	if (from > base)
		start = (uint32_t)((from - base) / span);
	for (uint32_t i = 0; i < a; i++) {
		uint64_t v = get_le32(b->data + 4 * i);
		if (!v)
			continue;
		if (i < start) {
			any_left = true;
			continue;
		}
		if (!fs_blk_valid(fs, v))
			return bo_errf(&fs->err, -EUCLEAN,
			               "inode %u: indirect block %llu entry %u out of range (%llu)",
			               in->ino, (unsigned long long)blk, i, (unsigned long long)v);
		bool sub_all = true;
		if (level > 1) {
			rc = free_tree(fs, in, v, level - 1, base + i * span, from, budget - 1,
			               &sub_all);
			if (rc < 0)
				return rc;
			if ((rc = fs_bread(fs, blk, &b)) < 0)
				return rc;
		}
		if (sub_all) {
			if (level > 1 || !mode_is_reg(ino_mode(in->raw)))
				fs_bforget(fs, v);
			if ((rc = fs_free_block(fs, v)) < 0)
				return rc;
			fs_add_blocks(fs, in, -1);
			if ((rc = fs_baccess(fs, b)) < 0)
				return rc;
			put_le32(b->data + 4 * i, 0);
			changed = true;
		} else {
			any_left = true;
		}
	}
	if (changed)
		fs_bdirty(fs, b);
	*all = !any_left;
	return 0;
}

int fs_truncate_blocks(struct fs *fs, struct fs_inode *in, uint64_t from)
{
	/* a free of a block that is not the file's would destroy what owns it */
	int rc = fs_inode_check_release(fs, in, from);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < EXT2_NDIR_BLOCKS; i++) {
		uint64_t v = ino_block(in->raw, i);
		if (i < from || !v)
			continue;
		if (!fs_blk_valid(fs, v))
			return bo_errf(&fs->err, -EUCLEAN, "inode %u: block %u out of range (%llu)",
			               in->ino, i, (unsigned long long)v);
		if (!mode_is_reg(ino_mode(in->raw)))
			fs_bforget(fs, v);
		if ((rc = fs_free_block(fs, v)) < 0)
			return rc;
		fs_add_blocks(fs, in, -1);
		ino_set_block(in->raw, i, 0);
	}
	uint64_t a = fs->apb, base = EXT2_NDIR_BLOCKS, span = a;
	for (int level = 1; level <= 3; level++) {
		uint32_t slot = EXT2_NDIR_BLOCKS + level - 1;
		uint64_t v = ino_block(in->raw, slot);
		if (v && base + span > from) {
			if (!fs_blk_valid(fs, v))
				return bo_errf(&fs->err, -EUCLEAN,
				               "inode %u: indirect pointer %u out of range (%llu)",
				               in->ino, slot, (unsigned long long)v);
			bool all;
			rc = free_tree(fs, in, v, level, base, from < base ? base : from, 8, &all);
			if (rc < 0)
				return rc;
			if (all) {
				fs_bforget(fs, v);
				if ((rc = fs_free_block(fs, v)) < 0)
					return rc;
				fs_add_blocks(fs, in, -1);
				ino_set_block(in->raw, slot, 0);
			}
		}
		base += span;
		span *= a;
	}
	return 0;
}

static bool is_fast_symlink(const struct fs *fs, const struct fs_inode *in)
{
	uint64_t ea = ino_file_acl(in->raw) ? fs->bs / 512 : 0;
	return mode_is_lnk(ino_mode(in->raw)) && ino_blocks(in->raw) == ea;
}

static int release_xattr(struct fs *fs, struct fs_inode *in)
{
	uint64_t ea = ino_file_acl(in->raw);
	if (!ea)
		return 0;
	if (!fs_blk_valid(fs, ea))
		return bo_errf(&fs->err, -EUCLEAN, "inode %u: xattr block %llu out of range",
		               in->ino, (unsigned long long)ea);
	struct fs_buf *b;
	int rc = fs_bread(fs, ea, &b);
	if (rc < 0)
		return rc;
	if (get_le32(b->data + XH_MAGIC) != EXT2_XATTR_MAGIC)
		return bo_errf(&fs->err, -EUCLEAN, "inode %u: xattr block %llu has bad magic",
		               in->ino, (unsigned long long)ea);
	uint32_t ref = get_le32(b->data + XH_REFCOUNT);
	if (ref > 1) {
		if ((rc = fs_baccess(fs, b)) < 0)
			return rc;
		put_le32(b->data + XH_REFCOUNT, ref - 1);
		if (fs->csum) {
			uint8_t le[8];
			put_le64(le, ea);
			put_le32(b->data + XH_CHECKSUM, 0);
			uint32_t c = crc32c_raw(fs->csum_seed, le, 8);
			put_le32(b->data + XH_CHECKSUM, crc32c_raw(c, b->data, fs->bs));
		}
		fs_bdirty(fs, b);
	} else {
		fs_bforget(fs, ea);
		if ((rc = fs_free_block(fs, ea)) < 0)
			return rc;
	}
	fs_add_blocks(fs, in, -1);
	ino_set_file_acl(in->raw, 0);
	return 0;
}

int fs_inode_release(struct fs *fs, struct fs_inode *in)
{
	int rc = 0;
	bool dir = mode_is_dir(ino_mode(in->raw));
	if (!is_fast_symlink(fs, in))
		rc = fs_truncate_blocks(fs, in, 0);
	if (rc == 0)
		rc = release_xattr(fs, in);
	if (rc < 0)
		return rc;
	ino_set_size(in->raw, 0);
	if (is_fast_symlink(fs, in))
		memset(in->raw + I_BLOCK, 0, 4 * EXT2_N_BLOCKS);
	put_le16(in->raw + I_LINKS_COUNT, 0);
	put_le32(in->raw + I_DTIME, fs_now(fs));
	if ((rc = fs_iput(fs, in)) < 0)
		return rc;
	return fs_free_inode(fs, in->ino, dir);
}

/* ---- data ----------------------------------------------------------------------- */
/* Only data=journal puts file data in the journal: in ordered and writeback
 * modes a data block's newest content is home (or delayed, fs->dpc), never in
 * the journal: a block logged as metadata and reused for data was revoked. */
static bool data_in_journal(const struct fs *fs)
{
	return fs->opts.data == FS_DATA_JOURNAL && fs->jh->ops->read_block;
}

int fs_read_data(struct fs *fs, struct fs_inode *in, void *buf, size_t len, uint64_t off)
{
	uint8_t *out = buf;
	uint8_t *tmp = NULL;
	int rc = 0;
	while (len) {
		uint64_t lblk = off >> fs->bs_bits;
		uint32_t boff = (uint32_t)(off & (fs->bs - 1));
		uint64_t pblk;
		if ((rc = fs_bmap(fs, in, lblk, false, &pblk)) < 0)
			break;
		if (boff == 0 && len >= fs->bs && pblk && !data_in_journal(fs) && !fs->dpc.n) {
			/* a run of whole, physically contiguous blocks in one read */
			uint64_t n = 1, p2;
			while ((n + 1) * fs->bs <= len && n < 2048) {
				if ((rc = fs_bmap(fs, in, lblk + n, false, &p2)) < 0)
					break;
				if (p2 != pblk + n)
					break;
				n++;
			}
			if (rc < 0)
				break;
			rc = blk_pread(fs->dev, pblk * fs->bs, n * fs->bs, out);
			if (rc < 0) {
				rc = bo_errf(&fs->err, -EIO, "inode %u: reading block %llu: %s",
				             in->ino, (unsigned long long)pblk,
				             bo_errstr(&fs->dev->err, rc));
				break;
			}
			out += n * fs->bs;
			off += n * fs->bs;
			len -= n * fs->bs;
			continue;
		}
		size_t n = fs->bs - boff;
		if (n > len)
			n = len;
		if (!pblk) {
			memset(out, 0, n);
		} else {
			if (!tmp && !(tmp = malloc(fs->bs))) {
				rc = -ENOMEM;
				break;
			}
			int r = fs_data_read_block(fs, pblk, tmp);
			if (r < 0) {
				rc = bo_errf(&fs->err, -EIO, "inode %u: reading block %llu: %s",
				             in->ino, (unsigned long long)pblk,
				             bo_errstr(&fs->dev->err, r));
				break;
			}
			memcpy(out, tmp + boff, n);
		}
		out += n;
		off += n;
		len -= n;
	}
	free(tmp);
	return rc;
}

/* One block written by handing the device a page (write_swap) rather than having it
 * copy: possible when a block is a page and the device takes pages over (mem, disk
 * over mem). The data is on the device when this returns, as with blk_pwrite. */
static int write_page(struct fs *fs, uint64_t pblk, const uint8_t *data)
{
	memcpy(fs->spare_page, data, fs->bs);
	uint32_t per = fs->bs / fs->dev->sector_size;
	int rc = blk_write_swap(fs->dev, pblk * per, per, &fs->spare_page, 0);
	/* the page given back (or NULL: the next write takes one from the pool) is
	 * the next one copied into; it is fetched while the next operations run */
	fs->spare_pf = fs->spare_page ? 0 : BLK_PAGE_BYTES;
	return rc;
}

static int write_raw(struct fs *fs, uint64_t pblk, const uint8_t *data, uint32_t n)
{
	int rc;
	if (n == 1 && fs->bs == BLK_PAGE_BYTES && fs->dev->ops->write_swap &&
	    (fs->spare_page || (fs->spare_page = blk_page_alloc())))
		rc = write_page(fs, pblk, data);
	else
		rc = blk_pwrite(fs->dev, pblk * fs->bs, (size_t)n * fs->bs, data, 0);
	return rc < 0 ? bo_errf(&fs->err, -EIO, "writing data block %llu: %s",
	                        (unsigned long long)pblk, bo_errstr(&fs->dev->err, rc))
	              : 0;
}

int fs_data_write_home(struct fs *fs, uint64_t pblk, const uint8_t *data, uint32_t n)
{
	const struct fs_jhook_ops *o = fs->jh->ops;
	int rc = write_raw(fs, pblk, data, n);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; o->dirty_data && i < n; i++)
		if ((rc = o->dirty_data(fs->jh, pblk + i, data + (size_t)i * fs->bs, 0)) < 0)
			return rc;
	return 0;
}

int fs_data_read_block(struct fs *fs, uint64_t pblk, uint8_t *buf)
{
	if (fs->dpc.n && fs_dpage_get(fs, pblk, buf))
		return 0;
	int r = 0;
	if (data_in_journal(fs))
		r = fs->jh->ops->read_block(fs->jh, pblk, buf);
	if (r == 0)
		r = blk_pread(fs->dev, pblk * fs->bs, fs->bs, buf);
	return r < 0 ? r : 0;
}

static int write_block(struct fs *fs, uint32_t ino, uint64_t pblk, const uint8_t *data, uint32_t n)
{
	const struct fs_jhook_ops *o = fs->jh->ops;
	if (fs_delayed_data(fs)) {
		for (uint32_t i = 0; i < n; i++) {
			int rc = fs_dpage_put(fs, ino, pblk + i, data + (size_t)i * fs->bs);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	bool journal = fs->opts.data == FS_DATA_JOURNAL && o->dirty_data;
	for (uint32_t i = 0; journal && i < n; i++) {
		int r =
		    o->dirty_data(fs->jh, pblk + i, data + (size_t)i * fs->bs, FS_JH_DATA_BEFORE);
		if (r < 0)
			return r;
		if (r != FS_JH_WRITEBACK) {
			/* the journal took it; write what came before, go on after */
			if (i && (r = write_block(fs, ino, pblk, data, i)) < 0)
				return r;
			return n - i - 1 ? write_block(fs, ino, pblk + i + 1,
			                               data + (size_t)(i + 1) * fs->bs, n - i - 1)
			                 : 0;
		}
	}
	/* data=journal: blocks the journal declined need no ordering note */
	return journal ? write_raw(fs, pblk, data, n) : fs_data_write_home(fs, pblk, data, n);
}

int fs_write_data(struct fs *fs, struct fs_inode *in, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *src = buf;
	uint8_t *tmp = NULL;
	int rc = 0;
	while (len) {
		uint64_t lblk = off >> fs->bs_bits;
		uint32_t boff = (uint32_t)(off & (fs->bs - 1));
		uint64_t pblk, before;
		if ((rc = fs_bmap(fs, in, lblk, false, &before)) < 0)
			break;
		if ((rc = fs_bmap(fs, in, lblk, true, &pblk)) < 0)
			break;
		if (boff == 0 && len >= fs->bs) {
			uint64_t n = 1, p2;
			while ((n + 1) * fs->bs <= len && n < 256) {
				if ((rc = fs_bmap(fs, in, lblk + n, true, &p2)) < 0)
					break;
				if (p2 != pblk + n) {
					/* keep p2: it is allocated and will be written next round */
					break;
				}
				n++;
			}
			if (rc < 0)
				break;
			if ((rc = write_block(fs, in->ino, pblk, src, (uint32_t)n)) < 0)
				break;
			src += n * fs->bs;
			off += n * fs->bs;
			len -= n * fs->bs;
			continue;
		}
		size_t n = fs->bs - boff;
		if (n > len)
			n = len;
		if (!tmp && !(tmp = malloc(fs->bs))) {
			rc = -ENOMEM;
			break;
		}
		if (before) {
			int r = fs_data_read_block(fs, pblk, tmp);
			if (r < 0) {
				rc = bo_errf(&fs->err, -EIO, "inode %u: reading block %llu",
				             in->ino, (unsigned long long)pblk);
				break;
			}
		} else {
			memset(tmp, 0, fs->bs);
		}
		memcpy(tmp + boff, src, n);
		if ((rc = write_block(fs, in->ino, pblk, tmp, 1)) < 0)
			break;
		src += n;
		off += n;
		len -= n;
	}
	free(tmp);
	return rc;
}

/* ---- orphans ------------------------------------------------------------------- */
int fs_orphan_add(struct fs *fs, struct fs_inode *in)
{
	put_le32(in->raw + I_DTIME, sb_get32(fs->sb, SB_LAST_ORPHAN));
	sb_put32(fs->sb, SB_LAST_ORPHAN, in->ino);
	fs_sb_dirty(fs, FS_SB_ANY);
	return fs_iput(fs, in);
}

int fs_orphan_del(struct fs *fs, struct fs_inode *in)
{
	uint32_t next = get_le32(in->raw + I_DTIME);
	uint32_t cur = sb_get32(fs->sb, SB_LAST_ORPHAN);
	if (cur == in->ino) {
		sb_put32(fs->sb, SB_LAST_ORPHAN, next);
		fs_sb_dirty(fs, FS_SB_ANY);
	} else {
		for (uint32_t steps = 0; cur && steps < fs->inodes_count; steps++) {
			struct fs_inode p;
			int rc = fs_iget(fs, cur, &p);
			if (rc < 0)
				return rc;
			uint32_t pn = get_le32(p.raw + I_DTIME);
			if (pn == in->ino) {
				put_le32(p.raw + I_DTIME, next);
				if ((rc = fs_iput(fs, &p)) < 0)
					return rc;
				break;
			}
			cur = pn;
		}
	}
	put_le32(in->raw + I_DTIME, 0);
	return 0;
}

int fs_orphans_process(struct fs *fs)
{
	uint32_t cur = sb_get32(fs->sb, SB_LAST_ORPHAN);
	for (uint32_t steps = 0; cur; steps++) {
		if (steps > fs->inodes_count || cur < fs->first_ino || cur > fs->inodes_count)
			return bo_errf(&fs->err, -EUCLEAN, "orphan list: bad inode %u", cur);
		struct fs_inode in;
		int rc = fs_iget(fs, cur, &in);
		if (rc < 0)
			return rc;
		uint32_t next = get_le32(in.raw + I_DTIME);
		sb_put32(fs->sb, SB_LAST_ORPHAN, next);
		fs_sb_dirty(fs, FS_SB_ANY);
		put_le32(in.raw + I_DTIME, 0);
		if (ino_links(in.raw) == 0) {
			rc = fs_inode_release(fs, &in);
		} else {
			uint64_t keep = (ino_size(in.raw) + fs->bs - 1) >> fs->bs_bits;
			rc = fs_truncate_blocks(fs, &in, keep);
			if (rc == 0)
				rc = fs_iput(fs, &in);
		}
		if (rc < 0)
			return rc;
		cur = next;
	}
	return 0;
}
