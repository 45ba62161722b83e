// SPDX-License-Identifier: GPL-2.0-or-later
/* dx.c — htree directories: reading and checking the index
 * (root, one level of nodes, dx_tail checksums), inserting with leaf and node
 * splits, and converting linear <-> indexed. Leaf-block entry handling is dir.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "fs/dx.h"
#include "fs/fs_int.h"

/* ---- index blocks ----------------------------------------------------------------- */
static uint32_t tailsz(const struct fs *fs)
{
	return fs->csum ? DX_TAIL_SIZE : 0;
}
static uint32_t root_limit(const struct fs *fs)
{
	return (fs->bs - DX_ROOT_ENTRIES - tailsz(fs)) / DX_ENTRY_SIZE;
}
static uint32_t node_limit(const struct fs *fs)
{
	return (fs->bs - DX_NODE_ENTRIES - tailsz(fs)) / DX_ENTRY_SIZE;
}

static uint32_t dx_csum(struct fs *fs, struct fs_inode *dir, const uint8_t *data, uint32_t eoff)
{
	uint32_t count = get_le16(data + eoff + DX_COUNT);
	uint32_t limit = get_le16(data + eoff + DX_LIMIT);
	const uint8_t *t = data + eoff + limit * DX_ENTRY_SIZE;
	uint8_t zero[4] = {0, 0, 0, 0};
	uint32_t c = fs_inode_csum_seed(fs, dir->ino, get_le32(dir->raw + I_GENERATION));
	c = crc32c_raw(c, data, eoff + count * DX_ENTRY_SIZE);
	c = crc32c_raw(c, t, DX_TAIL_CHECKSUM);
	return crc32c_raw(c, zero, 4);
}

static void dx_set_csum(struct fs *fs, struct fs_inode *dir, uint8_t *data, uint32_t eoff)
{
	if (!fs->csum)
		return;
	uint32_t limit = get_le16(data + eoff + DX_LIMIT);
	uint8_t *t = data + eoff + limit * DX_ENTRY_SIZE;
	put_le32(t + DX_TAIL_RESERVED, 0);
	put_le32(t + DX_TAIL_CHECKSUM, dx_csum(fs, dir, data, eoff));
}

void fs_dx_set_root_csum(struct fs *fs, struct fs_inode *dir, uint8_t *data)
{
	dx_set_csum(fs, dir, data, DX_ROOT_ENTRIES);
}

/* Reads and checks an index block (root: eoff DX_ROOT_ENTRIES, node: DX_NODE_ENTRIES). */
static int dx_block(struct fs *fs, struct fs_inode *dir, uint32_t lblk, uint32_t eoff,
                    struct fs_buf **out)
{
	struct fs_buf *b;
	int rc = fs_dir_block(fs, dir, lblk, &b);
	if (rc < 0)
		return rc;
	uint32_t want = eoff == DX_ROOT_ENTRIES ? root_limit(fs) : node_limit(fs);
	uint32_t limit = get_le16(b->data + eoff + DX_LIMIT);
	uint32_t count = get_le16(b->data + eoff + DX_COUNT);
	uint64_t nblk = ino_size(dir->raw) >> fs->bs_bits;
	if (limit != want || count == 0 || count > limit)
		return bo_errf(&fs->err, -EUCLEAN,
		               "directory inode %u htree block %u: bad count/limit %u/%u", dir->ino,
		               lblk, count, limit);
	if (!b->checked) {
		if (fs->csum) {
			uint32_t c = dx_csum(fs, dir, b->data, eoff);
			if (c !=
			    get_le32(b->data + eoff + limit * DX_ENTRY_SIZE + DX_TAIL_CHECKSUM))
				return bo_errf(
				    &fs->err, -EUCLEAN,
				    "directory inode %u htree block %u: checksum mismatch",
				    dir->ino, lblk);
		}
		for (uint32_t i = 0; i < count; i++) {
			uint32_t blk =
			    get_le32(b->data + eoff + i * DX_ENTRY_SIZE + DX_ENTRY_BLOCK);
			if (blk == 0 || blk >= nblk)
				goto bad;
		}
		b->checked = true;
	}
	*out = b;
	return 0;
bad:
	return bo_errf(&fs->err, -EUCLEAN,
	               "directory inode %u htree block %u: entry points past the directory",
	               dir->ino, lblk);
}

static int root_info(struct fs *fs, struct fs_inode *dir, struct fs_buf *b, struct dx_info *info)
{
	const uint8_t *d = b->data;
	uint8_t hv = d[DX_ROOT_HASH_VERSION];
	if (get_le32(d + DX_ROOT_RESERVED_ZERO) != 0 || d[DX_ROOT_INFO_LENGTH] != 8 ||
	    d[DX_ROOT_INDIRECT_LEVELS] >= DX_MAX_LEVELS || hv > EXT2_HASH_TEA ||
	    de_rec_len(d) != 12 || de_rec_len(d + 12) != fs->bs - 12)
		return bo_errf(&fs->err, -EUCLEAN, "directory inode %u: bad htree root", dir->ino);
	info->hash_version = (uint8_t)(hv + fs->hash_unsigned);
	info->levels = d[DX_ROOT_INDIRECT_LEVELS];
	return 0;
}

int fs_dx_read_root(struct fs *fs, struct fs_inode *dir, struct dx_info *info)
{
	struct fs_buf *b;
	int rc = dx_block(fs, dir, 0, DX_ROOT_ENTRIES, &b);
	if (rc < 0)
		return rc;
	if ((rc = root_info(fs, dir, b, info)) < 0)
		return rc;
	info->nnodes = 0;
	if (info->levels) {
		uint32_t count = get_le16(b->data + DX_ROOT_ENTRIES + DX_COUNT);
		for (uint32_t i = 0; i < count && i < DX_MAX_NODE_BLOCKS; i++) {
			uint32_t blk = get_le32(b->data + DX_ROOT_ENTRIES + i * DX_ENTRY_SIZE +
			                        DX_ENTRY_BLOCK);
			if (blk == 0)
				return bo_errf(&fs->err, -EUCLEAN,
				               "directory inode %u: htree node at block 0",
				               dir->ino);
			info->nodes[info->nnodes++] = blk;
		}
	}
	return 0;
}

/* A position in the index: the block holding the entries and the slot taken. */
struct dx_frame {
	struct fs_buf *b;
	uint32_t lblk, eoff, at;
};

static uint32_t ent_hash(const struct dx_frame *f, uint32_t i)
{
	return i ? get_le32(f->b->data + f->eoff + i * DX_ENTRY_SIZE + DX_ENTRY_HASH) : 0;
}
static uint32_t ent_block(const struct dx_frame *f, uint32_t i)
{
	return get_le32(f->b->data + f->eoff + i * DX_ENTRY_SIZE + DX_ENTRY_BLOCK);
}
static uint32_t frame_count(const struct dx_frame *f)
{
	return get_le16(f->b->data + f->eoff + DX_COUNT);
}
static uint32_t frame_limit(const struct dx_frame *f)
{
	return get_le16(f->b->data + f->eoff + DX_LIMIT);
}

static void frame_search(struct dx_frame *f, uint32_t hash)
{
	uint32_t lo = 1, hi = frame_count(f); /* last entry with hash <= target */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (ent_hash(f, mid) > hash)
			hi = mid;
		else
			lo = mid + 1;
	}
	f->at = lo - 1;
}

static int dx_probe(struct fs *fs, struct fs_inode *dir, uint32_t hash, struct dx_info *info,
                    struct dx_frame fr[DX_MAX_LEVELS], int *nfr)
{
	int rc = dx_block(fs, dir, 0, DX_ROOT_ENTRIES, &fr[0].b);
	if (rc < 0)
		return rc;
	if ((rc = root_info(fs, dir, fr[0].b, info)) < 0)
		return rc;
	fr[0].lblk = 0;
	fr[0].eoff = DX_ROOT_ENTRIES;
	frame_search(&fr[0], hash);
	*nfr = 1;
	if (info->levels) {
		uint32_t nb = ent_block(&fr[0], fr[0].at);
		if (nb == 0)
			return bo_errf(&fs->err, -EUCLEAN, "directory inode %u: htree loop",
			               dir->ino);
		if ((rc = dx_block(fs, dir, nb, DX_NODE_ENTRIES, &fr[1].b)) < 0)
			return rc;
		fr[1].lblk = nb;
		fr[1].eoff = DX_NODE_ENTRIES;
		frame_search(&fr[1], hash);
		*nfr = 2;
	}
	return 0;
}

static int name_hash(struct fs *fs, const struct dx_info *info, const char *name, size_t len,
                     uint32_t *hash)
{
	int rc = ext2_dx_hash(info->hash_version, fs->hash_seed, name, len, hash, NULL);
	return rc < 0 ? bo_errf(&fs->err, -EUCLEAN, "unknown htree hash %u", info->hash_version)
	              : 0;
}

int fs_dx_candidates(struct fs *fs, struct fs_inode *dir, const char *name, size_t len,
                     uint32_t *leaves, uint32_t max, uint32_t *n)
{
	struct dx_info info;
	uint32_t hash;
	int rc = fs_dx_read_root(fs, dir, &info);
	if (rc < 0 || (rc = name_hash(fs, &info, name, len, &hash)) < 0)
		return rc;
	struct dx_frame fr[DX_MAX_LEVELS];
	int nfr;
	if ((rc = dx_probe(fs, dir, hash, &info, fr, &nfr)) < 0)
		return rc;
	*n = 0;
	struct dx_frame *f = &fr[nfr - 1];
	leaves[(*n)++] = ent_block(f, f->at);
	/* collisions continue into the following leaves while their hash matches */
	while (*n < max) {
		if (f->at + 1 < frame_count(f)) {
			f->at++;
		} else if (nfr == 2 && fr[0].at + 1 < frame_count(&fr[0])) {
			fr[0].at++;
			uint32_t nb = ent_block(&fr[0], fr[0].at);
			if ((rc = dx_block(fs, dir, nb, DX_NODE_ENTRIES, &fr[1].b)) < 0)
				return rc;
			fr[1].lblk = nb;
			fr[1].at = 0;
			if ((ent_hash(&fr[0], fr[0].at) & ~1u) != hash)
				break;
			leaves[(*n)++] = ent_block(f, 0);
			continue;
		} else {
			break;
		}
		if ((ent_hash(f, f->at) & ~1u) != hash)
			break;
		leaves[(*n)++] = ent_block(f, f->at);
	}
	return 0;
}

static void frame_insert(struct dx_frame *f, uint32_t after, uint32_t hash, uint32_t blk)
{
	uint8_t *e = f->b->data + f->eoff;
	uint32_t count = frame_count(f);
	memmove(e + (after + 2) * DX_ENTRY_SIZE, e + (after + 1) * DX_ENTRY_SIZE,
	        (count - after - 1) * DX_ENTRY_SIZE);
	put_le32(e + (after + 1) * DX_ENTRY_SIZE + DX_ENTRY_HASH, hash);
	put_le32(e + (after + 1) * DX_ENTRY_SIZE + DX_ENTRY_BLOCK, blk);
	put_le16(e + DX_COUNT, (uint16_t)(count + 1));
}

static void init_node(struct fs *fs, uint8_t *d)
{
	memset(d, 0, fs->bs);
	put_le16(d + DE_REC_LEN, (uint16_t)fs->bs);
	put_le16(d + DX_NODE_ENTRIES + DX_LIMIT, (uint16_t)node_limit(fs));
}

struct dx_map {
	uint32_t hash, minor, off, size;
};
static int map_cmp(const void *a, const void *b)
{
	const struct dx_map *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return 0;
}

/* Rewrites `dst` with the entries map[from..to) of `src`, packed. */
static void pack(struct fs *fs, uint8_t *dst, const uint8_t *src, const struct dx_map *map,
                 uint32_t from, uint32_t to)
{
	uint32_t end = fs->bs - (fs->csum ? DIRENT_TAIL_SIZE : 0), off = 0;
	uint8_t *last = NULL;
	memset(dst, 0, end);
	for (uint32_t i = from; i < to; i++) {
		memcpy(dst + off, src + map[i].off, map[i].size);
		last = dst + off;
		put_le16(last + DE_REC_LEN, (uint16_t)map[i].size);
		off += map[i].size;
	}
	if (last)
		put_le16(last + DE_REC_LEN, (uint16_t)(de_rec_len(last) + end - off));
	else
		put_le16(dst + DE_REC_LEN, (uint16_t)end);
	if (fs->csum)
		de_set_tail(dst + end);
}

/* Splits the full leaf at frame f's slot; returns the leaf `hash` now belongs in. */
static int split_leaf(struct fs *fs, struct fs_inode *dir, const struct dx_info *info,
                      struct dx_frame *f, uint32_t hash, struct fs_buf **target)
{
	uint32_t lblk = ent_block(f, f->at);
	struct fs_buf *ob;
	int rc = fs_dir_leaf_block(fs, dir, lblk, &ob);
	if (rc < 0)
		return rc;
	uint8_t *copy = malloc(fs->bs);
	struct dx_map *map = malloc(sizeof(*map) * (fs->bs / 12 + 1));
	if (!copy || !map) {
		free(copy);
		free(map);
		return -ENOMEM;
	}
	memcpy(copy, ob->data, fs->bs);
	uint32_t end = fs->bs - (fs->csum ? DIRENT_TAIL_SIZE : 0), n = 0;
	for (uint32_t off = 0; off < end; off += de_rec_len(copy + off)) {
		const uint8_t *de = copy + off;
		if (!de_inode(de))
			continue;
		map[n].off = off;
		map[n].size = ext2_dir_rec_len(de_name_len(de));
		ext2_dx_hash(info->hash_version, fs->hash_seed, (const char *)de + DE_NAME,
		             de_name_len(de), &map[n].hash, &map[n].minor);
		n++;
	}
	rc = 0;
	if (n < 2) {
		rc =
		    bo_errf(&fs->err, -EUCLEAN, "directory inode %u block %u: full with %u entries",
		            dir->ino, lblk, n);
		goto out;
	}
	qsort(map, n, sizeof(*map), map_cmp);
	uint32_t split = n / 2;
	uint32_t hash2 = map[split].hash;
	uint32_t continued = hash2 == map[split - 1].hash;
	uint64_t newl = ino_size(dir->raw) >> fs->bs_bits;
	struct fs_buf *nb;
	if ((rc = fs_dir_new_leaf(fs, dir, newl, &nb)) < 0)
		goto out;
	if ((rc = fs_baccess(fs, ob)) < 0)
		goto out;
	pack(fs, nb->data, copy, map, split, n);
	pack(fs, ob->data, copy, map, 0, split);
	fs_dirblock_set_csum(fs, dir, nb->data);
	fs_dirblock_set_csum(fs, dir, ob->data);
	fs_bdirty(fs, nb);
	fs_bdirty(fs, ob);
	if ((rc = fs_baccess(fs, f->b)) < 0)
		goto out;
	frame_insert(f, f->at, hash2 | continued, (uint32_t)newl);
	fs_bdirty(fs, f->b);
	*target = hash >= hash2 ? nb : ob;
out:
	free(copy);
	free(map);
	return rc;
}

int fs_dx_add(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t ino,
              uint8_t ftype)
{
	struct dx_info info;
	uint32_t hash;
	struct dx_frame fr[DX_MAX_LEVELS];
	int nfr, rc;
	if ((rc = fs_dx_read_root(fs, dir, &info)) < 0)
		return rc;
	if ((rc = name_hash(fs, &info, name, len, &hash)) < 0)
		return rc;
	if ((rc = dx_probe(fs, dir, hash, &info, fr, &nfr)) < 0)
		return rc;
	struct dx_frame *f = &fr[nfr - 1];
	struct fs_buf *leaf;
	if ((rc = fs_dir_leaf_block(fs, dir, ent_block(f, f->at), &leaf)) < 0)
		return rc;
	if ((rc = fs_dir_leaf_insert(fs, dir, leaf, name, len, ino, ftype)) != 0)
		return rc < 0 ? rc : fs_iput(fs, dir);

	/* the leaf is full: make room in its index block first */
	if (frame_count(f) == frame_limit(f)) {
		uint64_t newl = ino_size(dir->raw) >> fs->bs_bits;
		struct fs_buf *nb;
		if (nfr == 1) {
			/* root full, no nodes yet: move its entries into a node, add a level */
			if ((rc = fs_dir_new_leaf(fs, dir, newl, &nb)) < 0)
				return rc;
			init_node(fs, nb->data);
			uint32_t count = frame_count(f);
			memcpy(nb->data + DX_NODE_ENTRIES + 4, f->b->data + f->eoff + 4,
			       count * DX_ENTRY_SIZE - 4);
			put_le16(nb->data + DX_NODE_ENTRIES + DX_COUNT, (uint16_t)count);
			if ((rc = fs_baccess(fs, f->b)) < 0)
				return rc;
			put_le16(f->b->data + f->eoff + DX_COUNT, 1);
			put_le32(f->b->data + f->eoff + DX_ENTRY_BLOCK, (uint32_t)newl);
			f->b->data[DX_ROOT_INDIRECT_LEVELS] = 1;
			dx_set_csum(fs, dir, f->b->data, f->eoff);
			fs_bdirty(fs, f->b);
			fr[1].b = nb;
			fr[1].lblk = (uint32_t)newl;
			fr[1].eoff = DX_NODE_ENTRIES;
			fr[1].at = fr[0].at;
			fr[0].at = 0;
			nfr = 2;
			f = &fr[1];
			nb->checked = true;
		} else {
			struct dx_frame *r = &fr[0];
			if (frame_count(r) == frame_limit(r))
				return -EAGAIN; /* two full levels: the index cannot grow */
			if ((rc = fs_dir_new_leaf(fs, dir, newl, &nb)) < 0)
				return rc;
			init_node(fs, nb->data);
			uint32_t count = frame_count(f), keep = count / 2;
			uint32_t hash2 = ent_hash(f, keep);
			memcpy(nb->data + DX_NODE_ENTRIES,
			       f->b->data + f->eoff + keep * DX_ENTRY_SIZE,
			       (count - keep) * DX_ENTRY_SIZE);
			put_le16(nb->data + DX_NODE_ENTRIES + DX_LIMIT, (uint16_t)node_limit(fs));
			put_le16(nb->data + DX_NODE_ENTRIES + DX_COUNT, (uint16_t)(count - keep));
			if ((rc = fs_baccess(fs, f->b)) < 0 || (rc = fs_baccess(fs, r->b)) < 0)
				return rc;
			put_le16(f->b->data + f->eoff + DX_COUNT, (uint16_t)keep);
			frame_insert(r, r->at, hash2, (uint32_t)newl);
			dx_set_csum(fs, dir, r->b->data, r->eoff);
			fs_bdirty(fs, r->b);
			nb->checked = true;
			if (f->at >= keep) {
				dx_set_csum(fs, dir, f->b->data, f->eoff);
				fs_bdirty(fs, f->b);
				f->b = nb;
				f->lblk = (uint32_t)newl;
				f->at -= keep;
			} else {
				dx_set_csum(fs, dir, nb->data, DX_NODE_ENTRIES);
				fs_bdirty(fs, nb);
			}
		}
	}
	struct fs_buf *target = NULL;
	if ((rc = split_leaf(fs, dir, &info, f, hash, &target)) < 0)
		return rc;
	for (int i = 0; i < nfr; i++) {
		dx_set_csum(fs, dir, fr[i].b->data, fr[i].eoff);
		fs_bdirty(fs, fr[i].b);
	}
	rc = fs_dir_leaf_insert(fs, dir, target, name, len, ino, ftype);
	if (rc == 0)
		rc = bo_errf(&fs->err, -EUCLEAN, "directory inode %u: no room after a split",
		             dir->ino);
	if (rc < 0)
		return rc;
	return fs_iput(fs, dir);
}

int fs_dx_make_indexed(struct fs *fs, struct fs_inode *dir)
{
	struct fs_buf *root;
	int rc = fs_dir_leaf_block(fs, dir, 0, &root);
	if (rc < 0)
		return rc;
	uint8_t *d = root->data;
	uint32_t end = fs->bs - (fs->csum ? DIRENT_TAIL_SIZE : 0);
	if (de_rec_len(d) != 12 || de_rec_len(d + 12) < 12 || 12u + de_rec_len(d + 12) > end)
		return -EAGAIN;
	if (root_limit(fs) < 2)
		return -EAGAIN;
	/* the entries after '..' move into a new leaf, block 1 */
	struct fs_buf *leaf;
	if ((rc = fs_dir_new_leaf(fs, dir, 1, &leaf)) < 0)
		return rc;
	uint8_t *l = leaf->data;
	uint32_t dotdot_end = 12 + ext2_dir_rec_len(de_name_len(d + 12));
	uint32_t first = 12 + de_rec_len(d + 12);
	uint32_t off = 0;
	uint8_t *last = NULL;
	memset(l, 0, end);
	/* entries packed inside '..''s own record (rare) and after it */
	for (uint32_t p = dotdot_end; p < end;) {
		uint8_t *de = d + p;
		uint32_t rl;
		if (p < first) {
			/* slack inside '..': nothing there */
			p = first;
			continue;
		}
		rl = de_rec_len(de);
		if (de_inode(de)) {
			uint32_t sz = ext2_dir_rec_len(de_name_len(de));
			memcpy(l + off, de, sz);
			last = l + off;
			put_le16(last + DE_REC_LEN, (uint16_t)sz);
			off += sz;
		}
		p += rl;
	}
	if (last)
		put_le16(last + DE_REC_LEN, (uint16_t)(de_rec_len(last) + end - off));
	else
		put_le16(l + DE_REC_LEN, (uint16_t)end);
	fs_dirblock_set_csum(fs, dir, l);
	fs_bdirty(fs, leaf);

	if ((rc = fs_baccess(fs, root)) < 0)
		return rc;
	put_le16(d + 12 + DE_REC_LEN, (uint16_t)(fs->bs - 12));
	memset(d + DX_ROOT_INFO, 0, fs->bs - DX_ROOT_INFO);
	d[DX_ROOT_HASH_VERSION] = fs->def_hash <= EXT2_HASH_TEA ? fs->def_hash : EXT2_HASH_HALF_MD4;
	d[DX_ROOT_INFO_LENGTH] = 8;
	put_le16(d + DX_ROOT_ENTRIES + DX_LIMIT, (uint16_t)root_limit(fs));
	put_le16(d + DX_ROOT_ENTRIES + DX_COUNT, 1);
	put_le32(d + DX_ROOT_ENTRIES + DX_ENTRY_BLOCK, 1);
	put_le32(dir->raw + I_FLAGS, ino_flags(dir->raw) | EXT2_INDEX_FL);
	dx_set_csum(fs, dir, d, DX_ROOT_ENTRIES);
	fs_bdirty(fs, root);
	root->checked = true;
	return fs_iput(fs, dir);
}
