// SPDX-License-Identifier: GPL-2.0-or-later
/* dir.c — directories: checked walking of leaf blocks (with dirent-tail checksums),
 * lookup, insert, remove, the ancestry walk up '..', and htree (dir_index)
 * directories. Not path resolution (ops.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "fs/dx.h"
#include "fs/fs_int.h"

/* ---- the name cache ------------------------------------------------------------ */
static struct fs_dentry *dc_slot(struct fs *fs, uint32_t dir, const char *name, size_t len)
{
	uint64_t h = bo_hash64(BO_HASH64_INIT, &dir, sizeof(dir));
	h = bo_hash64(h, name, len);
	return &fs->dcache[h & fs->dcache_mask];
}

static bool dc_cacheable(const char *name, size_t len)
{
	return len < FS_DCACHE_NAME && len &&
	       !(name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')));
}

static struct fs_dentry *dc_find(struct fs *fs, uint32_t dir, const char *name, size_t len)
{
	if (!dc_cacheable(name, len))
		return NULL;
	struct fs_dentry *e = dc_slot(fs, dir, name, len);
	if (e->ino && e->dir == dir && e->len == len && !memcmp(e->name, name, len))
		return e;
	return NULL;
}

void fs_dcache_prefetch(struct fs *fs, uint32_t dir, const char *name, size_t len)
{
	if (dc_cacheable(name, len))
		__builtin_prefetch(dc_slot(fs, dir, name, len));
}

static uint32_t *dc_complete_slot(struct fs *fs, uint32_t dir)
{
	return &fs->dcomplete[(dir * 2654435761u) % FS_DCOMPLETE_SIZE];
}

static bool dc_complete(struct fs *fs, uint32_t dir)
{
	return *dc_complete_slot(fs, dir) == dir;
}

static void dc_incomplete(struct fs *fs, uint32_t dir)
{
	uint32_t *s = dc_complete_slot(fs, dir);
	if (*s == dir)
		*s = 0;
}

void fs_dcache_new_dir(struct fs *fs, uint32_t dir)
{
	*dc_complete_slot(fs, dir) = dir;
}

static void dc_put(struct fs *fs, uint32_t dir, const char *name, size_t len, uint32_t ino,
                   uint8_t ft)
{
	if (!dc_cacheable(name, len)) {
		if (!(name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'))))
			dc_incomplete(fs, dir);
		return;
	}
	struct fs_dentry *e = dc_slot(fs, dir, name, len);
	if (e->ino && e->dir != dir)
		dc_incomplete(fs, e->dir); /* its name is evicted */
	else if (e->ino && (e->len != len || memcmp(e->name, name, len)))
		dc_incomplete(fs, dir);
	e->dir = dir;
	e->ino = ino;
	e->len = (uint8_t)len;
	e->ft = ft;
	memcpy(e->name, name, len);
}

static void dc_drop(struct fs *fs, uint32_t dir, const char *name, size_t len)
{
	struct fs_dentry *e = dc_find(fs, dir, name, len);
	if (e)
		e->ino = 0;
}

static uint32_t tail_size(const struct fs *fs)
{
	return fs->csum ? DIRENT_TAIL_SIZE : 0;
}

void fs_dirblock_set_csum(struct fs *fs, struct fs_inode *dir, uint8_t *data)
{
	if (!fs->csum)
		return;
	uint8_t *t = data + fs->bs - DIRENT_TAIL_SIZE;
	uint32_t c = fs_inode_csum_seed(fs, dir->ino, get_le32(dir->raw + I_GENERATION));
	put_le32(t + DT_CHECKSUM, crc32c_raw(c, data, fs->bs - DIRENT_TAIL_SIZE));
}

int fs_dirblock_check(struct fs *fs, struct fs_inode *dir, uint64_t lblk, uint8_t *data)
{
	uint32_t end = fs->bs - tail_size(fs);
	if (fs->csum) {
		uint8_t *t = data + end;
		if (!de_is_tail(t))
			return bo_errf(&fs->err, -EUCLEAN,
			               "directory inode %u block %llu: no checksum tail", dir->ino,
			               (unsigned long long)lblk);
		uint32_t c = fs_inode_csum_seed(fs, dir->ino, get_le32(dir->raw + I_GENERATION));
		c = crc32c_raw(c, data, end);
		if (c != get_le32(t + DT_CHECKSUM))
			return bo_errf(&fs->err, -EUCLEAN,
			               "directory inode %u block %llu: checksum mismatch", dir->ino,
			               (unsigned long long)lblk);
	}
	uint32_t off = 0;
	while (off < end) {
		uint8_t *de = data + off;
		if (end - off < 8)
			goto bad;
		uint32_t rl = de_rec_len(de);
		uint32_t nl = de_name_len(de);
		if (rl < 12 || rl % 4 || rl > end - off ||
		    (de_inode(de) && ext2_dir_rec_len(nl) > rl))
			goto bad;
		if (de_inode(de) > fs->inodes_count)
			goto bad;
		off += rl;
	}
	return 0;
bad:
	return bo_errf(&fs->err, -EUCLEAN,
	               "directory inode %u block %llu: corrupt entry at offset %u", dir->ino,
	               (unsigned long long)lblk, off);
}

/* The blocks of an indexed directory that are index nodes, not leaves. */
struct dx_meta {
	bool indexed;
	uint32_t n;
	uint32_t blocks[DX_MAX_NODE_BLOCKS];
};

int fs_dir_block(struct fs *fs, struct fs_inode *dir, uint64_t lblk, struct fs_buf **out)
{
	uint64_t p;
	int rc = fs_bmap(fs, dir, lblk, false, &p);
	if (rc < 0)
		return rc;
	if (!p)
		return bo_errf(&fs->err, -EUCLEAN, "directory inode %u has a hole at block %llu",
		               dir->ino, (unsigned long long)lblk);
	return fs_bread(fs, p, out);
}

int fs_dir_leaf_block(struct fs *fs, struct fs_inode *dir, uint64_t lblk, struct fs_buf **out)
{
	int rc = fs_dir_block(fs, dir, lblk, out);
	if (rc < 0)
		return rc;
	if (!(*out)->checked) {
		if ((rc = fs_dirblock_check(fs, dir, lblk, (*out)->data)) < 0)
			return rc;
		(*out)->checked = true;
	}
	return 0;
}

static uint64_t dir_nblocks(const struct fs *fs, const struct fs_inode *dir)
{
	return ino_size(dir->raw) >> fs->bs_bits;
}

static int dx_meta_load(struct fs *fs, struct fs_inode *dir, struct dx_meta *m)
{
	m->indexed = false;
	m->n = 0;
	if (!(ino_flags(dir->raw) & EXT2_INDEX_FL))
		return 0;
	struct dx_info info;
	int rc = fs_dx_read_root(fs, dir, &info);
	if (rc < 0)
		return rc;
	m->indexed = true;
	m->n = info.nnodes;
	memcpy(m->blocks, info.nodes, sizeof(uint32_t) * info.nnodes);
	return 0;
}

static bool dx_is_node(const struct dx_meta *m, uint64_t lblk)
{
	if (!m->indexed)
		return false;
	if (lblk == 0)
		return true;
	for (uint32_t i = 0; i < m->n; i++)
		if (m->blocks[i] == lblk)
			return true;
	return false;
}

int fs_dir_iterate(struct fs *fs, struct fs_inode *dir,
                   int (*fn)(void *ctx, const char *name, size_t len, uint32_t ino, uint8_t ft),
                   void *ctx)
{
	struct dx_meta m;
	int rc = dx_meta_load(fs, dir, &m);
	if (rc < 0)
		return rc;
	uint64_t n = dir_nblocks(fs, dir);
	for (uint64_t l = 0; l < n; l++) {
		struct fs_buf *b;
		if (dx_is_node(&m, l)) {
			if (l != 0)
				continue;
			/* the root still holds '.' and '..' */
			if ((rc = fs_dir_block(fs, dir, 0, &b)) < 0)
				return rc;
			uint8_t *d = b->data;
			if ((rc = fn(ctx, ".", 1, de_inode(d), EXT2_FT_DIR)) != 0)
				return rc;
			if ((rc = fn(ctx, "..", 2, de_inode(d + 12), EXT2_FT_DIR)) != 0)
				return rc;
			continue;
		}
		if ((rc = fs_dir_leaf_block(fs, dir, l, &b)) < 0)
			return rc;
		uint32_t end = fs->bs - tail_size(fs);
		for (uint32_t off = 0; off < end;) {
			uint8_t *de = b->data + off;
			off += de_rec_len(de);
			if (!de_inode(de))
				continue;
			uint8_t ft = fs->has_filetype ? de_file_type(de) : 0;
			if ((rc = fn(ctx, (const char *)de + DE_NAME, de_name_len(de), de_inode(de),
			             ft)) != 0)
				return rc;
		}
	}
	return 0;
}

/* Finds name; on success blk and off locate the entry and *prev_off the entry before
 * it in the same block (or UINT32_MAX). Returns 1 if found, 0 if not, -errno. */
static int find_entry(struct fs *fs, struct fs_inode *dir, const char *name, size_t len,
                      struct fs_buf **bo, uint64_t *lblk_out, uint32_t *off_out, uint32_t *prev_out)
{
	struct dx_meta m;
	int rc = dx_meta_load(fs, dir, &m);
	if (rc < 0)
		return rc;
	uint64_t n = dir_nblocks(fs, dir);
	uint32_t cand[DX_MAX_CANDIDATES], ncand = 0;
	if (m.indexed && len <= 2 && name[0] == '.' && (len == 1 || name[1] == '.')) {
		/* '.' and '..' live in the htree root, at fixed places */
		struct fs_buf *b;
		if ((rc = fs_dir_block(fs, dir, 0, &b)) < 0)
			return rc;
		uint32_t off = len == 1 ? 0 : 12;
		if (de_name_len(b->data + off) != len || memcmp(b->data + off + DE_NAME, name, len))
			return bo_errf(&fs->err, -EUCLEAN, "directory inode %u: bad htree root",
			               dir->ino);
		*bo = b;
		*lblk_out = 0;
		*off_out = off;
		*prev_out = len == 1 ? UINT32_MAX : 0;
		return 1;
	}
	if (m.indexed) {
		rc = fs_dx_candidates(fs, dir, name, len, cand, DX_MAX_CANDIDATES, &ncand);
		if (rc < 0)
			return rc;
	}
	uint64_t count = m.indexed ? ncand : n;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t l = m.indexed ? cand[i] : i;
		if (dx_is_node(&m, l))
			continue;
		struct fs_buf *b;
		if ((rc = fs_dir_leaf_block(fs, dir, l, &b)) < 0)
			return rc;
		uint32_t end = fs->bs - tail_size(fs), prev = UINT32_MAX;
		for (uint32_t off = 0; off < end;) {
			uint8_t *de = b->data + off;
			if (de_inode(de) && de_name_len(de) == len &&
			    de[DE_NAME + len - 1] == (uint8_t)name[len - 1] &&
			    memcmp(de + DE_NAME, name, len) == 0) {
				*bo = b;
				*lblk_out = l;
				*off_out = off;
				*prev_out = prev;
				return 1;
			}
			prev = off;
			off += de_rec_len(de);
		}
	}
	return 0;
}

int fs_dir_lookup(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t *ino,
                  uint8_t *ftype)
{
	struct fs_dentry *e = dc_find(fs, dir->ino, name, len);
	if (e) {
		*ino = e->ino;
		if (ftype)
			*ftype = e->ft;
		return 0;
	}
	if (dc_complete(fs, dir->ino) && dc_cacheable(name, len))
		return -ENOENT;
	struct fs_buf *b;
	uint64_t l;
	uint32_t off, prev;
	int rc = find_entry(fs, dir, name, len, &b, &l, &off, &prev);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return -ENOENT;
	*ino = de_inode(b->data + off);
	uint8_t ft = fs->has_filetype ? de_file_type(b->data + off) : 0;
	if (ftype)
		*ftype = ft;
	dc_put(fs, dir->ino, name, len, *ino, ft);
	return 0;
}

int fs_dir_set(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t ino,
               uint8_t ftype)
{
	struct fs_buf *b;
	uint64_t l;
	uint32_t off, prev;
	int rc = find_entry(fs, dir, name, len, &b, &l, &off, &prev);
	if (rc <= 0)
		return rc < 0 ? rc : -ENOENT;
	if ((rc = fs_baccess(fs, b)) < 0)
		return rc;
	put_le32(b->data + off + DE_INODE, ino);
	if (fs->has_filetype)
		b->data[off + DE_FILE_TYPE] = ftype;
	dc_put(fs, dir->ino, name, len, ino, fs->has_filetype ? ftype : 0);
	if (l == 0 && (ino_flags(dir->raw) & EXT2_INDEX_FL))
		fs_dx_set_root_csum(fs, dir, b->data);
	else
		fs_dirblock_set_csum(fs, dir, b->data);
	fs_bdirty(fs, b);
	return 0;
}

int fs_dir_remove(struct fs *fs, struct fs_inode *dir, const char *name, size_t len)
{
	struct fs_buf *b;
	uint64_t l;
	uint32_t off, prev;
	int rc = find_entry(fs, dir, name, len, &b, &l, &off, &prev);
	if (rc <= 0)
		return rc < 0 ? rc : -ENOENT;
	if (l == 0 && (ino_flags(dir->raw) & EXT2_INDEX_FL))
		return bo_errf(&fs->err, -EINVAL, "directory inode %u: cannot remove '%.*s'",
		               dir->ino, (int)len, name);
	if ((rc = fs_baccess(fs, b)) < 0)
		return rc;
	dc_drop(fs, dir->ino, name, len);
	uint8_t *de = b->data + off;
	if (prev != UINT32_MAX) {
		uint8_t *p = b->data + prev;
		put_le16(p + DE_REC_LEN, (uint16_t)(de_rec_len(p) + de_rec_len(de)));
		memset(de, 0, 8);
	} else {
		put_le32(de + DE_INODE, 0);
	}
	fs_dirblock_set_csum(fs, dir, b->data);
	fs_bdirty(fs, b);
	return 0;
}

/* Room for a record of `need` bytes in this leaf? Inserts and returns 1. */
int fs_dir_leaf_insert(struct fs *fs, struct fs_inode *dir, struct fs_buf *b, const char *name,
                       size_t len, uint32_t ino, uint8_t ft)
{
	uint32_t need = ext2_dir_rec_len((uint32_t)len);
	uint32_t end = fs->bs - tail_size(fs);
	/* first fit, as ext2; the entries before the hint are known not to fit */
	uint32_t off = need >= b->ins_need ? b->ins_off : 0;
	while (off < end) {
		uint8_t *de = b->data + off;
		uint32_t rl = de_rec_len(de);
		uint32_t used = de_inode(de) ? ext2_dir_rec_len(de_name_len(de)) : 0;
		if (rl - used >= need) {
			int rc = fs_baccess(fs, b);
			if (rc < 0)
				return rc;
			if (used) {
				put_le16(de + DE_REC_LEN, (uint16_t)used);
				de += used;
				rl -= used;
			}
			de_set(de, ino, (uint16_t)rl, name, (uint8_t)len,
			       fs->has_filetype ? ft : 0);
			fs_dirblock_set_csum(fs, dir, b->data);
			fs_bdirty(fs, b);
			b->ins_off = off + used;
			b->ins_need = need;
			return 1;
		}
		off += rl;
	}
	b->ins_off = end;
	b->ins_need = need;
	return 0;
}

/* A new empty leaf at logical block lblk (extends the directory). */
int fs_dir_new_leaf(struct fs *fs, struct fs_inode *dir, uint64_t lblk, struct fs_buf **out)
{
	uint64_t p;
	int rc = fs_bmap(fs, dir, lblk, true, &p);
	if (rc < 0)
		return rc;
	struct fs_buf *b;
	if ((rc = fs_bnew(fs, p, &b)) < 0 || (rc = fs_baccess(fs, b)) < 0)
		return rc;
	memset(b->data, 0, fs->bs);
	put_le16(b->data + DE_REC_LEN, (uint16_t)(fs->bs - tail_size(fs)));
	if (fs->csum)
		de_set_tail(b->data + fs->bs - DIRENT_TAIL_SIZE);
	fs_dirblock_set_csum(fs, dir, b->data);
	fs_bdirty(fs, b);
	b->checked = true;
	if ((lblk + 1) << fs->bs_bits > ino_size(dir->raw))
		ino_set_size(dir->raw, (lblk + 1) << fs->bs_bits);
	*out = b;
	return 0;
}

static int dir_add(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t ino,
                   uint8_t ftype);

int fs_dir_add(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t ino,
               uint8_t ftype)
{
	int rc = dir_add(fs, dir, name, len, ino, ftype);
	if (rc == 0)
		dc_put(fs, dir->ino, name, len, ino, fs->has_filetype ? ftype : 0);
	else
		dc_incomplete(fs, dir->ino); /* the entry may be on disk anyway */
	return rc;
}

static int dir_add(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t ino,
                   uint8_t ftype)
{
	int rc;
	if (ino_flags(dir->raw) & EXT2_INDEX_FL) {
		rc = fs_dx_add(fs, dir, name, len, ino, ftype);
		if (rc == -EAGAIN)
			/* ext3 (and ext4 without large_dir) says the same: the names already
			 * in the directory stay, new ones find no room */
			return bo_errf(&fs->err, -ENOSPC,
			               "directory inode %u: its htree index is full (two levels)",
			               dir->ino);
		return rc;
	}
	uint64_t n = dir_nblocks(fs, dir);
	for (uint64_t l = 0; l < n; l++) {
		struct fs_buf *b;
		if ((rc = fs_dir_leaf_block(fs, dir, l, &b)) < 0)
			return rc;
		if ((rc = fs_dir_leaf_insert(fs, dir, b, name, len, ino, ftype)) != 0)
			return rc < 0 ? rc : fs_iput(fs, dir);
	}
	/* a linear directory whose first block is full becomes indexed */
	if (fs->dir_index && n == 1 && !(ino_flags(dir->raw) & EXT2_INDEX_FL)) {
		rc = fs_dx_make_indexed(fs, dir);
		if (rc == 0)
			return fs_dx_add(fs, dir, name, len, ino, ftype);
		if (rc != -EAGAIN)
			return rc;
	}
	struct fs_buf *b;
	if ((rc = fs_dir_new_leaf(fs, dir, n, &b)) < 0)
		return rc;
	if ((rc = fs_dir_leaf_insert(fs, dir, b, name, len, ino, ftype)) < 0)
		return rc;
	return fs_iput(fs, dir);
}

struct empty_ctx {
	bool empty;
};
static int empty_cb(void *ctx, const char *name, size_t len, uint32_t ino, uint8_t ft)
{
	(void)ino;
	(void)ft;
	struct empty_ctx *c = ctx;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	c->empty = false;
	return 1;
}

int fs_dir_is_empty(struct fs *fs, struct fs_inode *dir, bool *empty)
{
	struct empty_ctx c = {true};
	int rc = fs_dir_iterate(fs, dir, empty_cb, &c);
	if (rc < 0)
		return rc;
	*empty = c.empty;
	return 0;
}

int fs_dir_init(struct fs *fs, struct fs_inode *dir, uint32_t parent)
{
	struct fs_buf *b;
	int rc = fs_dir_new_leaf(fs, dir, 0, &b);
	if (rc < 0)
		return rc;
	uint8_t *d = b->data;
	de_set(d, dir->ino, 12, ".", 1, fs->has_filetype ? EXT2_FT_DIR : 0);
	de_set(d + 12, parent, (uint16_t)(fs->bs - 12 - tail_size(fs)), "..", 2,
	       fs->has_filetype ? EXT2_FT_DIR : 0);
	fs_dirblock_set_csum(fs, dir, d);
	fs_bdirty(fs, b);
	return 0;
}

/* Whether directory `anc` is d or above it, following '..' up to the root. A
 * corrupted image may loop ('..' of a directory below pointing back down): Brent's
 * cycle detection finds that within about twice the loop's depth, so a loop costs
 * no more than a walk of that length. */
int fs_dir_is_ancestor(struct fs *fs, uint32_t anc, uint32_t d, bool *yes)
{
	*yes = false;
	uint32_t mark = d, power = 1, since = 0;
	for (;;) {
		if (d == anc) {
			*yes = true;
			return 0;
		}
		if (d == EXT2_ROOT_INO)
			return 0;
		struct fs_inode in;
		int rc = fs_iget(fs, d, &in);
		if (rc < 0)
			return rc;
		if (!mode_is_dir(ino_mode(in.raw)))
			return -ENOTDIR;
		uint32_t up;
		if ((rc = fs_dir_lookup(fs, &in, "..", 2, &up, NULL)) < 0)
			return rc;
		d = up;
		if (d == mark)
			return bo_errf(&fs->err, -EUCLEAN, "directory loop above inode %u", d);
		if (++since == power) {
			mark = d;
			power *= 2;
			since = 0;
		}
	}
}
