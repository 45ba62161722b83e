// SPDX-License-Identifier: GPL-2.0-or-later
/* pagecache.c — delayed file data for data=writeback: regular-file blocks written
 * under data=writeback stay in memory until fsync/fdatasync of their file, sync,
 * unmount or memory pressure writes them home. A commit (another file's fsync, the
 * commit interval, a full journal) does not wait for them: that is the mode's
 * promise and its hazard. After a cut, a file whose new size and block map
 * committed before its data was written shows whatever those blocks held before
 * (ext3's data=writeback stale-data exposure). data=ordered and data=journal, and
 * filesystems without a journal, write file data when it is written, as before.
 *
 * A delayed write that fails is not lost silently: its inode is remembered and
 * every later fsync/fdatasync of that inode (and sync) reports -EIO, whoever's
 * write happened to push the page out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs_int.h"

struct fs_dpage {
	uint64_t blk;
	uint32_t ino;
	uint8_t *data;
	struct fs_dpage *hnext;       /* hash chain */
	struct fs_dpage *prev, *next; /* age order: oldest at the head */
};

/* Dirty data blocks held before the oldest are written (the stand-in for the
 * kernel's periodic writeback and dirty limits). */
#define DPAGE_MAX  4096u
#define DPAGE_HASH 4096u

bool fs_delayed_data(const struct fs *fs)
{
	return fs->opts.data == FS_DATA_WRITEBACK && fs->jh && fs->jh->ops->commits;
}

static uint32_t dhash(uint64_t blk)
{
	return (uint32_t)((blk * 0x9E3779B97F4A7C15ull) >> 40) & (DPAGE_HASH - 1);
}

static struct fs_dpage *find(struct fs *fs, uint64_t blk)
{
	if (!fs->dpc.htab)
		return NULL;
	for (struct fs_dpage *p = fs->dpc.htab[dhash(blk)]; p; p = p->hnext)
		if (p->blk == blk)
			return p;
	return NULL;
}

static void unlink_page(struct fs *fs, struct fs_dpage *p)
{
	struct fs_dpage **pp = &fs->dpc.htab[dhash(p->blk)];
	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
	if (p->prev)
		p->prev->next = p->next;
	else
		fs->dpc.head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		fs->dpc.tail = p->prev;
	fs->dpc.n--;
	free(p->data);
	free(p);
}

/* Writes one page home and forgets it; a failure is kept for its inode's fsync. */
static void write_out(struct fs *fs, struct fs_dpage *p)
{
	int rc = fs_data_write_home(fs, p->blk, p->data, 1);
	if (rc < 0) {
		size_t i = 0;
		while (i < fs->dpc.nlost && fs->dpc.lost[i] != p->ino)
			i++;
		if (i == fs->dpc.nlost && i < FS_DPAGE_LOST_MAX)
			fs->dpc.lost[fs->dpc.nlost++] = p->ino;
		else if (i == fs->dpc.nlost)
			fs->dpc.lost_all = true; /* too many to name: every fsync fails */
	}
	unlink_page(fs, p);
}

/* The error of a failed delayed write of inode ino (0: of any). Sticky for the
 * mount: reporting it once and then answering success would tell a retrying
 * application (PostgreSQL's lesson) that data it lost is durable. */
static int lost_err(struct fs *fs, uint32_t ino)
{
	bool lost = fs->dpc.lost_all || (!ino && fs->dpc.nlost);
	for (size_t i = 0; i < fs->dpc.nlost && !lost; i++)
		lost = fs->dpc.lost[i] == ino;
	if (!lost)
		return 0;
	return bo_errf(&fs->err, -EIO, "an earlier write of %s data failed",
	               ino ? "this file's" : "file");
}

int fs_dpage_put(struct fs *fs, uint32_t ino, uint64_t blk, const uint8_t *data)
{
	struct fs_dpage *p = find(fs, blk);
	if (p) {
		memcpy(p->data, data, fs->bs);
		p->ino = ino;
		return 0;
	}
	if (!fs->dpc.htab && !(fs->dpc.htab = calloc(DPAGE_HASH, sizeof(*fs->dpc.htab))))
		return bo_errf(&fs->err, -ENOMEM, "out of memory for file data");
	while (fs->dpc.n >= DPAGE_MAX && fs->dpc.head)
		write_out(fs, fs->dpc.head);
	p = calloc(1, sizeof(*p));
	if (!p || !(p->data = malloc(fs->bs))) {
		free(p);
		return bo_errf(&fs->err, -ENOMEM, "out of memory for file data");
	}
	p->blk = blk;
	p->ino = ino;
	memcpy(p->data, data, fs->bs);
	uint32_t h = dhash(blk);
	p->hnext = fs->dpc.htab[h];
	fs->dpc.htab[h] = p;
	p->prev = fs->dpc.tail;
	if (fs->dpc.tail)
		fs->dpc.tail->next = p;
	else
		fs->dpc.head = p;
	fs->dpc.tail = p;
	fs->dpc.n++;
	return 0;
}

bool fs_dpage_get(struct fs *fs, uint64_t blk, uint8_t *buf)
{
	struct fs_dpage *p = find(fs, blk);
	if (p)
		memcpy(buf, p->data, fs->bs);
	return p != NULL;
}

void fs_dpage_drop(struct fs *fs, uint64_t blk)
{
	struct fs_dpage *p = find(fs, blk);
	if (p)
		unlink_page(fs, p);
}

int fs_dpage_flush(struct fs *fs, uint32_t ino)
{
	struct fs_dpage *p = fs->dpc.head;
	while (p) {
		struct fs_dpage *next = p->next;
		if (!ino || p->ino == ino)
			write_out(fs, p);
		p = next;
	}
	return lost_err(fs, ino);
}

void fs_dpage_release(struct fs *fs)
{
	while (fs->dpc.head)
		unlink_page(fs, fs->dpc.head);
	free(fs->dpc.htab);
	fs->dpc.htab = NULL;
}
