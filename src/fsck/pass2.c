// SPDX-License-Identifier: GPL-2.0-or-later
/* pass2.c — pass 2 of blackout fsck: every directory block (entries, '.' and '..',
 * names, file types, duplicates) and the hashed index over them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fsck/fsck_ctx.h"
#include "fsck/problem.h"
#include "fsck/fsck_int.h"

enum { DXT_LEAF, DXT_ROOT, DXT_NODE };
struct dxb {
	uint8_t type, ref, dup, first;
	uint32_t parent;
	uint32_t min, max;   /* of its entries */
	uint32_t nmin, nmax; /* allowed by its parent */
};

struct dirst {
	uint32_t ino;
	uint32_t nblk;
	const uint32_t *pblk; /* per logical block, 0 = hole */
	bool htree;
	int hashv;
	uint32_t depth;
	struct dxb *dx;
};

static int cmp_dblk(const void *a, const void *b)
{
	const struct dblk *x = a, *y = b;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->lblk < y->lblk ? -1 : x->lblk > y->lblk;
}

static uint32_t name_hash(const uint8_t *n, uint32_t len)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ n[i]) * 16777619u;
	return h;
}

static void parse_int_node(struct ck *c, struct dirst *ds, uint32_t lblk, const uint8_t *b)
{
	uint32_t ino = ds->ino;
	uint32_t eoff = lblk == 0 ? DX_ROOT_INFO + b[DX_ROOT_INFO_LENGTH] : DX_NODE_ENTRIES;
	if (eoff + 8 > c->bs)
		return;
	uint32_t limit = get_le16(b + eoff + DX_LIMIT), count = get_le16(b + eoff + DX_COUNT);
	uint32_t expect = (c->bs - eoff - (c->csum ? DX_TAIL_SIZE : 0)) / DX_ENTRY_SIZE;
	if (limit != expect) {
		ck_problem(c, PR_2_HTREE_LIMIT, ino, 0, NULL, 0, ino, lblk, limit, expect);
		ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
		return;
	}
	if (count > expect) {
		ck_problem(c, PR_2_HTREE_COUNT, ino, 0, NULL, 0, ino, lblk, count);
		count = expect;
	}
	uint32_t hash = 0, minh = 0xFFFFFFFF, maxh = 0;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = b + eoff + i * DX_ENTRY_SIZE;
		uint32_t prev = hash;
		hash = i ? get_le32(e + DX_ENTRY_HASH) & ~1u : 0;
		uint32_t blk = get_le32(e + DX_ENTRY_BLOCK) & 0x0FFFFFFF;
		if (blk >= ds->nblk) {
			ck_problem(c, PR_2_HTREE_BAD_BLOCK, ino, 0, NULL, 0, ino, blk, lblk);
			ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
			return;
		}
		if (hash < prev) {
			ck_problem(c, PR_2_HTREE_HASH_ORDER, ino, 0, NULL, 0, ino, lblk);
			ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
			return;
		}
		struct dxb *x = &ds->dx[blk];
		if (x->ref)
			x->dup = 1;
		else {
			x->ref = 1;
			x->parent = lblk;
		}
		if (hash < minh)
			minh = hash;
		if (hash > maxh)
			maxh = hash;
		x->nmin = hash;
		x->nmax =
		    i + 1 < count ? get_le32(e + DX_ENTRY_SIZE + DX_ENTRY_HASH) & ~1u : 0xFFFFFFFE;
		if (i == 0)
			x->first = 1;
	}
	ds->dx[lblk].min = minh;
	ds->dx[lblk].max = maxh;
}

static void dx_classify(struct ck *c, struct dirst *ds, uint32_t lblk, const uint8_t *b)
{
	struct dxb *x = &ds->dx[lblk];
	x->type = DXT_LEAF;
	x->min = 0xFFFFFFFF;
	x->max = 0;
	if (lblk == 0) {
		x->type = DXT_ROOT;
		x->first = 1;
		return;
	}
	uint32_t lim = (c->bs - (8 + (c->csum ? DX_TAIL_SIZE : 0))) / DX_ENTRY_SIZE;
	if (de_inode(b) == 0 && de_rec_len(b) == c->bs && de_name_len(b) == 0 &&
	    get_le16(b + DX_NODE_ENTRIES + DX_LIMIT) == lim)
		x->type = DXT_NODE;
}

/* The entry at off names inode t (dot: 0 '.', 1 '..', 2 any other): is t a valid
 * target, with the right file type, a unique name, a single parent? */
static void check_target(struct ck *c, struct dirst *ds, struct dxb *x, const uint8_t *b,
                         uint32_t pblk, uint32_t off, uint32_t t, int dot)
{
	uint32_t ino = ds->ino;
	const uint8_t *de = b + off;
	uint32_t nl = de_name_len(de);
	const char *name = (const char *)de + DE_NAME;
	uint8_t ft = c->filetype ? de_file_type(de) : 0;
	bool isdot = nl == 1 && name[0] == '.';
	bool isdotdot = nl == 2 && name[0] == '.' && name[1] == '.';
	const char *bad = NULL;
	if ((t != EXT2_ROOT_INO && t < c->first_ino) || t > c->ninodes)
		bad = "has a bad inode number";
	else if (!bit_test(c->iused, t - 1))
		bad = "points to an unused inode";
	else if (dot > 1 && isdot)
		bad = "is a duplicate '.'";
	else if (dot > 1 && isdotdot)
		bad = "is a duplicate '..'";
	else if (dot > 1 && t == EXT2_ROOT_INO)
		bad = "is a link to the root inode";
	else if (dot > 1 && nl == 0)
		bad = "has a zero-length name";
	if (bad) {
		ck_problem(c, PR_2_BAD_ENTRY_INODE, ino, pblk, name, (int)nl, ino, (int)nl, name, t,
		           bad);
		ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
		if ((t != EXT2_ROOT_INO && t < c->first_ino) || t > c->ninodes)
			return;
	}
	for (uint32_t i = 0; i < nl; i++)
		if (name[i] == '/' || name[i] == 0) {
			ck_problem(c, PR_2_BAD_NAME, ino, pblk, name, (int)nl, ino);
			ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
			break;
		}
	/* A zero filetype e2fsck sets silently (it is no error under -n). */
	if (c->filetype && bit_test(c->iused, t - 1) && ft != c->ftype[t] && ft) {
		ck_problem(c, PR_2_BAD_FILETYPE, ino, pblk, name, (int)nl, ino, (int)nl, name, t,
		           ft, c->ftype[t]);
		/* '.'/'..' to a non-directory are pass 3's to fix */
		if (!bad && (dot > 1 || c->ftype[t] == EXT2_FT_DIR))
			ck_add_fix(c, FIX_FILETYPE, ino, pblk, off, c->ftype[t]);
	}
	if (x && x->type == DXT_LEAF) {
		uint32_t h = fsck_dirhash(ds->hashv, (const uint8_t *)name, (int)nl, c->hash_seed);
		if (h < x->min)
			x->min = h;
		if (h > x->max)
			x->max = h;
	}
	if (dot > 1 && (c->iflag[t] & IF_DIR) && !bad) {
		if (c->parent[t]) {
			ck_problem(c, PR_2_LINK_DIR, ino, pblk, name, (int)nl, ino, (int)nl, name,
			           t);
			ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
		} else
			c->parent[t] = ino;
	}
	/* duplicate names within the block */
	uint32_t h = name_hash((const uint8_t *)name, nl) & c->dedup_mask;
	for (;;) {
		uint16_t o = c->dedup[h];
		if (o == 0xFFFF) {
			c->dedup[h] = (uint16_t)(off / 4);
			break;
		}
		const uint8_t *pe = b + (uint32_t)o * 4;
		if (de_name_len(pe) == nl && !memcmp(pe + DE_NAME, name, nl)) {
			ck_problem(c, PR_2_DUPLICATE_ENTRY, ino, pblk, name, (int)nl, ino, (int)nl,
			           name);
			ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
			break;
		}
		h = (h + 1) & c->dedup_mask;
	}
	if (ino == EXT2_ROOT_INO && nl == 10 && !memcmp(name, "lost+found", 10) && !c->lpf)
		c->lpf = t;
	if (c->counted[t] < UINT32_MAX)
		c->counted[t]++;
}

static void check_dirents(struct ck *c, struct dirst *ds, uint32_t lblk, uint32_t pblk, uint8_t *b,
                          uint32_t end)
{
	uint32_t ino = ds->ino, off = 0;
	int dot = lblk == 0 ? 0 : 2;
	memset(c->dedup, 0xFF, ((size_t)c->dedup_mask + 1) * sizeof(uint16_t));
	struct dxb *x = ds->htree ? &ds->dx[lblk] : NULL;
	while (off < end && !c->stop) {
		uint8_t *de = b + off;
		uint32_t rl = end - off >= 8 ? de_rec_len(de) : 0;
		uint32_t nl = end - off >= 8 ? de_name_len(de) : 0;
		if (rl < 12 || rl % 4 || off + rl > end || ext2_dir_rec_len(nl) > rl) {
			ck_problem(c, PR_2_DIR_CORRUPTED, ino, pblk, NULL, 0, ino, lblk, pblk, off,
			           rl, nl);
			ck_add_fix(c, FIX_SALVAGE, ino, pblk, off, end);
			return;
		}
		uint32_t t = de_inode(de);
		const char *name = (const char *)de + DE_NAME;
		if (dot == 0) {
			if (!t || nl != 1 || name[0] != '.' || (rl > 8 + 1 && name[1] != 0) ||
			    t != ino || rl > 24) {
				ck_problem(c, PR_2_BAD_DOT, ino, pblk, name, (int)nl, ino);
				ck_add_fix(c, FIX_DOT, ino, pblk, 0, ino);
				t = ino;
			}
		} else if (dot == 1) {
			if (!t || nl != 2 || name[0] != '.' || name[1] != '.' ||
			    (rl > 10 && name[2] != 0)) {
				ck_problem(c, PR_2_BAD_DOTDOT, ino, pblk, name, (int)nl, ino);
				ck_add_fix(c, FIX_DOT, ino, pblk, 1, off);
				t = 0;
			} else
				c->dotdot[ino] = t;
		} else if (t == ino) {
			ck_problem(c, PR_2_LINK_DOT, ino, pblk, name, (int)nl, ino);
			ck_add_fix(c, FIX_CLEAR_DIRENT, ino, pblk, off, t);
		}
		if (!c->filetype && de_file_type(de))
			ck_problem(c, PR_2_FILETYPE_SET, ino, pblk, name, (int)nl, ino);
		if (t)
			check_target(c, ds, x, b, pblk, off, t, dot);
		if (dot < 2)
			dot++;
		off += rl;
	}
	if (dot < 2 && !c->stop)
		ck_problem(c, PR_2_MISSING_DOT, ino, pblk, NULL, 0, ino);
}

static int check_dir(struct ck *c, struct dirst *ds)
{
	uint32_t ino = ds->ino;
	uint8_t *b = c->buf;
	int rc = 0;
	if (ds->htree) {
		/* The root must be sane before the index is believed (e2fsck pass 1). */
		rc = ds->pblk[0] ? ck_rd(c, ds->pblk[0], b, 1) : 0;
		if (ds->pblk[0] && !rc) {
			uint8_t hv = b[DX_ROOT_HASH_VERSION];
			if (get_le32(b + DX_ROOT_RESERVED_ZERO) || b[DX_ROOT_INFO_LENGTH] != 8 ||
			    b[DX_ROOT_INDIRECT_LEVELS] >= DX_MAX_LEVELS ||
			    (hv != EXT2_HASH_LEGACY && hv != EXT2_HASH_HALF_MD4 &&
			     hv != EXT2_HASH_TEA) ||
			    (b[DX_ROOT_UNUSED_FLAGS] & 1)) {
				ck_problem(c, PR_2_HTREE_BAD_ROOT, ino, ds->pblk[0], NULL, 0, ino);
				ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
				ds->htree = false;
			} else {
				ds->hashv = hv;
				if (c->sb[SB_FLAGS] & EXT2_FLAGS_UNSIGNED_HASH)
					ds->hashv += 3;
				ds->depth = b[DX_ROOT_INDIRECT_LEVELS] + 1u;
			}
		} else if (rc) {
			return rc;
		} else {
			ds->htree = false;
		}
		if (ds->htree) {
			ds->dx = calloc(ds->nblk, sizeof(*ds->dx));
			if (!ds->dx)
				return -ENOMEM;
		}
	}
	for (uint32_t l = 0; l < ds->nblk && !c->stop; l++) {
		uint32_t p = ds->pblk[l];
		if (!p) {
			ck_problem(c, PR_2_DIRECTORY_HOLE, ino, 0, NULL, 0, ino, l);
			ck_add_fix(c, FIX_DIR_HOLE, ino, 0, l, 0);
			continue;
		}
		if ((rc = ck_rd(c, p, b, 1)))
			return rc;
		bool leaf = true;
		if (ds->htree) {
			dx_classify(c, ds, l, b);
			leaf = ds->dx[l].type == DXT_LEAF;
		}
		uint32_t end = c->bs;
		if (c->csum) {
			if (!leaf) {
				uint32_t coff = l == 0 ? DX_ROOT_ENTRIES : DX_NODE_ENTRIES, s;
				if (fsck_dx_csum(c->seed, ino, c->gen[ino], b, c->bs, coff, &s) &&
				    s != get_le32(b + coff +
				                  get_le16(b + coff + DX_LIMIT) * DX_ENTRY_SIZE +
				                  DX_TAIL_CHECKSUM)) {
					ck_problem(c, PR_2_HTREE_CSUM, ino, p, NULL, 0, ino, l);
					ck_add_fix(c, FIX_DIRBLK_CSUM, ino, p, l, 1);
				}
			} else if (!de_is_tail(b + c->bs - DIRENT_TAIL_SIZE)) {
				ck_problem(c, PR_2_LEAF_NO_SPACE_CSUM, ino, p, NULL, 0, ino, l);
				ck_add_fix(c, FIX_DIRBLK_CSUM, ino, p, l, 2);
			} else {
				end = c->bs - DIRENT_TAIL_SIZE;
				if (fsck_dirent_csum(c->seed, ino, c->gen[ino], b, c->bs) !=
				    get_le32(b + c->bs - DIRENT_TAIL_SIZE + DT_CHECKSUM)) {
					ck_problem(c, PR_2_LEAF_CSUM, ino, p, NULL, 0, ino, l);
					ck_add_fix(c, FIX_DIRBLK_CSUM, ino, p, l, 0);
				}
			}
		}
		check_dirents(c, ds, l, p, b, end);
		if (ds->htree && !leaf)
			parse_int_node(c, ds, l, b);
	}
	if (ds->htree && !c->stop) {
		bool bad = false;
		for (uint32_t l = 0; l < ds->nblk && !bad; l++) {
			struct dxb *x = &ds->dx[l];
			if (!ds->pblk[l])
				continue;
			if (x->type == DXT_LEAF) {
				uint32_t depth = 0, p = l;
				while (p != 0 && depth <= DX_MAX_LEVELS + 1) {
					p = ds->dx[p].parent;
					depth++;
				}
				if (!x->first && x->min < x->nmin && x->min != 0xFFFFFFFF)
					bad = true;
				else if (l && x->max > x->nmax)
					bad = true;
				else if (depth != ds->depth)
					bad = true;
			}
			if (l && (!x->ref || x->dup))
				bad = true;
		}
		if (bad) {
			ck_problem(c, PR_2_HTREE_MISMATCH, ino, 0, NULL, 0, ino);
			ck_add_fix(c, FIX_CLEAR_HTREE, ino, 0, 0, 0);
		}
	}
	free(ds->dx);
	ds->dx = NULL;
	return 0;
}

int ck_pass2(struct ck *c)
{
	if (c->ndb)
		qsort(c->db, c->ndb, sizeof(*c->db), cmp_dblk);
	uint32_t maxent = c->bs / 12 + 1, sz = 1;
	while (sz < 2 * maxent)
		sz <<= 1;
	c->dedup = malloc(sz * sizeof(uint16_t));
	if (!c->dedup)
		return -ENOMEM;
	c->dedup_mask = sz - 1;
	uint32_t *map = NULL;
	size_t mapcap = 0;
	int rc = 0;
	for (size_t i = 0; i < c->ndb && !c->stop;) {
		size_t j = i;
		uint32_t ino = c->db[i].ino;
		while (j < c->ndb && c->db[j].ino == ino)
			j++;
		uint32_t n = c->dir_nblk[ino];
		if (n > mapcap) {
			uint32_t *m = realloc(map, (size_t)n * sizeof(*m));
			if (!m) {
				rc = -ENOMEM;
				break;
			}
			map = m;
			mapcap = n;
		}
		memset(map, 0, (size_t)n * sizeof(*map));
		for (size_t k = i; k < j; k++)
			if (c->db[k].lblk < n)
				map[c->db[k].lblk] = c->db[k].pblk;
		struct dirst ds = {
		    .ino = ino, .nblk = n, .pblk = map, .htree = (c->iflag[ino] & IF_HTREE) != 0};
		if ((rc = check_dir(c, &ds)))
			break;
		i = j;
	}
	free(map);
	/* e2fsck, end of pass 2: large files need the feature (revision 0 cannot carry it:
	 * the fix makes the revision dynamic, as ext2fs_update_dynamic_rev) */
	if (!rc && !c->stop && c->large_files &&
	    !(sb_get32(c->sb, SB_FEATURE_RO_COMPAT) & EXT2_FEATURE_RO_COMPAT_LARGE_FILE)) {
		ck_problem(c, PR_2_FEATURE_LARGE_FILES, 0, 0, NULL, 0);
		rc = ck_add_fix(c, FIX_LARGE_FILE, 0, 0, 0, 0);
	}
	return rc;
}
