// SPDX-License-Identifier: GPL-2.0-or-later
/* bcache.c — the metadata buffer cache: blocks by number in a hash, clean ones in
 * LRU order, dirty ones written home in block order; what is held or in an operation
 * stays. Mount (mount.c) sizes it; the operation bracket (fs.c) trims it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "fs/fs_int.h"

static uint32_t bhash(const struct fs *fs, uint64_t blk)
{
	return (uint32_t)((blk * 0x9E3779B97F4A7C15ull) >> 32) & (fs->hsize - 1);
}

static void lru_unlink(struct fs *fs, struct fs_buf *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		fs->lru_head = b->next;
	if (b->next)
		b->next->prev = b->prev;
	else
		fs->lru_tail = b->prev;
	b->prev = b->next = NULL;
}

static void lru_push(struct fs *fs, struct fs_buf *b)
{
	b->prev = NULL;
	b->next = fs->lru_head;
	if (fs->lru_head)
		fs->lru_head->prev = b;
	fs->lru_head = b;
	if (!fs->lru_tail)
		fs->lru_tail = b;
}

struct fs_buf *fs_buf_find(struct fs *fs, uint64_t blk)
{
	for (struct fs_buf *b = fs->htab[bhash(fs, blk)]; b; b = b->hnext)
		if (b->blk == blk && !b->forgotten)
			return b;
	return NULL;
}

void fs_buf_remove(struct fs *fs, struct fs_buf *b)
{
	struct fs_buf **pp = &fs->htab[bhash(fs, b->blk)];
	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	lru_unlink(fs, b);
	if (b->dirty)
		fs->ndirty--;
	fs->nbufs--;
	free(b->data);
	free(b);
}

static int bwrite_home(struct fs *fs, struct fs_buf *b)
{
	int rc = blk_pwrite(fs->dev, b->blk * fs->bs, fs->bs, b->data, 0);
	if (rc < 0)
		return bo_errf(&fs->err, rc, "writing metadata block %llu: %s",
		               (unsigned long long)b->blk, bo_errstr(&fs->dev->err, rc));
	b->dirty = false;
	fs->ndirty--;
	return 0;
}

static int cmp_buf_blk(const void *a, const void *b)
{
	uint64_t x = (*(struct fs_buf *const *)a)->blk, y = (*(struct fs_buf *const *)b)->blk;
	return x < y ? -1 : x > y;
}

/* Dirty blocks go home in block order, as the kernel's sync of the block device's
 * page cache writes them (ascending index): the order a power cut can interrupt
 * then does not depend on which blocks the cache happened to touch last (it was
 * the LRU order, and a change that only read fewer blocks moved the ext2 cells of
 * the matrix). Out of memory for the list, the LRU order: any order is one a
 * drive could see. */
int fs_writeback(struct fs *fs)
{
	int first = 0;
	uint32_t n = 0;
	struct fs_buf **v = fs->ndirty ? malloc(fs->ndirty * sizeof(*v)) : NULL;
	for (struct fs_buf *b = fs->lru_head; b && n < fs->ndirty; b = b->next) {
		if (!b->dirty)
			continue;
		if (v) {
			v[n++] = b;
			continue;
		}
		int rc = bwrite_home(fs, b);
		if (rc < 0 && !first)
			first = rc;
	}
	if (v) {
		qsort(v, n, sizeof(*v), cmp_buf_blk);
		for (uint32_t i = 0; i < n; i++) {
			int rc = bwrite_home(fs, v[i]);
			if (rc < 0 && !first)
				first = rc;
		}
	}
	free(v);
	return first;
}

/* Doubles the hash once the buffers outnumber its buckets (up to hsize_max). Out of
 * memory, the table stays as it is: longer chains, same answers. */
static void bgrow(struct fs *fs)
{
	if (fs->nbufs < fs->hsize || fs->hsize >= fs->hsize_max)
		return;
	uint32_t old = fs->hsize;
	struct fs_buf **nt = calloc((size_t)old * 2, sizeof(*nt));
	if (!nt)
		return;
	fs->hsize = old * 2;
	for (uint32_t i = 0; i < old; i++)
		for (struct fs_buf *b = fs->htab[i], *next; b; b = next) {
			next = b->hnext;
			uint32_t h = bhash(fs, b->blk);
			b->hnext = nt[h];
			nt[h] = b;
		}
	free(fs->htab);
	fs->htab = nt;
}

static int balloc(struct fs *fs, uint64_t blk, struct fs_buf **out)
{
	bgrow(fs);
	struct fs_buf *b = calloc(1, sizeof(*b));
	if (!b || !(b->data = malloc(fs->bs))) {
		free(b);
		return bo_errf(&fs->err, -ENOMEM, "out of memory for block cache");
	}
	b->blk = blk;
	uint32_t h = bhash(fs, blk);
	b->hnext = fs->htab[h];
	fs->htab[h] = b;
	lru_push(fs, b);
	fs->nbufs++;
	*out = b;
	return 0;
}

static int read_home(struct fs *fs, uint64_t blk, uint8_t *data)
{
	if (fs->jh && fs->jh->ops->read_block) {
		int r = fs->jh->ops->read_block(fs->jh, blk, data);
		if (r < 0)
			return r;
		if (r > 0)
			return 0;
	}
	int rc = blk_pread(fs->dev, blk * fs->bs, fs->bs, data);
	if (rc < 0)
		return bo_errf(&fs->err, -EIO, "reading block %llu: %s", (unsigned long long)blk,
		               bo_errstr(&fs->dev->err, rc));
	return 0;
}

int fs_bread(struct fs *fs, uint64_t blk, struct fs_buf **out)
{
	if (blk >= fs->blocks)
		return bo_errf(&fs->err, -EUCLEAN, "block %llu is past the end of the filesystem",
		               (unsigned long long)blk);
	fs_spare_prefetch(fs);
	struct fs_buf *b = fs_buf_find(fs, blk);
	if (b) {
		if (fs->lru_head != b) {
			lru_unlink(fs, b);
			lru_push(fs, b);
		}
		*out = b;
		return 0;
	}
	int rc = balloc(fs, blk, &b);
	if (rc < 0)
		return rc;
	rc = read_home(fs, blk, b->data);
	if (rc < 0) {
		fs_buf_remove(fs, b);
		return rc;
	}
	*out = b;
	return 0;
}

int fs_bnew(struct fs *fs, uint64_t blk, struct fs_buf **out)
{
	if (blk >= fs->blocks)
		return bo_errf(&fs->err, -EUCLEAN, "block %llu is past the end of the filesystem",
		               (unsigned long long)blk);
	struct fs_buf *b = fs_buf_find(fs, blk);
	if (!b) {
		int rc = balloc(fs, blk, &b);
		if (rc < 0)
			return rc;
		memset(b->data, 0, fs->bs);
	}
	*out = b;
	return 0;
}

int fs_baccess(struct fs *fs, struct fs_buf *b)
{
	b->ins_off = 0; /* about to change */
	if (fs->op_depth <= 0)
		return bo_errf(&fs->err, -EINVAL, "metadata change outside an operation");
	if (b->access_op == fs->op_serial)
		return 0;
	b->access_op = fs->op_serial;
	if (fs->jh->ops->get_write_access) {
		int rc = fs->jh->ops->get_write_access(fs->jh, b->blk, b->data);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void fs_bdirty(struct fs *fs, struct fs_buf *b)
{
	b->ins_off = 0;
	if (!b->in_op) {
		b->in_op = true;
		b->op_next = fs->op_dirty;
		fs->op_dirty = b;
	}
}

void fs_bforget(struct fs *fs, uint64_t blk)
{
	struct fs_buf *b = fs_buf_find(fs, blk);
	if (b)
		b->held = false; /* the forget below drops the journal's reference */
	if (b && !b->in_op) {
		fs_buf_remove(fs, b);
	} else if (b) {
		/* on this op's list: dropped at the end of the op, never written */
		if (b->dirty) {
			b->dirty = false;
			fs->ndirty--;
		}
		b->forgotten = true;
	}
	if (fs->jh->ops->forget)
		fs->jh->ops->forget(fs->jh, blk);
}

/* After journal replay rewrote blocks underneath: forget every clean copy. */
void fs_cache_drop_clean(struct fs *fs)
{
	struct fs_buf *b = fs->lru_tail;
	while (b) {
		struct fs_buf *p = b->prev;
		if (!b->dirty && !b->in_op && !b->held)
			fs_buf_remove(fs, b);
		b = p;
	}
}

void fs_cache_trim(struct fs *fs)
{
	if (fs->ndirty > fs->max_dirty)
		fs_writeback(fs);
	struct fs_buf *b = fs->lru_tail;
	while (fs->nbufs > fs->max_bufs && b) {
		struct fs_buf *p = b->prev;
		if (!b->dirty && !b->in_op && !b->held)
			fs_buf_remove(fs, b);
		b = p;
	}
}
