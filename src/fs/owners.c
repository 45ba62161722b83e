// SPDX-License-Identifier: GPL-2.0-or-later
/* owners.c — what each of a list of blocks belongs to in a mounted filesystem: a
 * file (path and inode), the journal, or a structure of a block group. For reports
 * that must say what a damaged block was (the matrix drill-down); not a checker. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/ext2_format.h"
#include "fs/fs_int.h"
#include "fs/journal_hook.h"

struct walk {
	struct fs *fs;
	const uint64_t *blocks;
	size_t n;
	struct fs_block_owner *out;
	size_t left;   /* blocks still without an owner */
	size_t budget; /* inodes the walk may still visit */
};

static void claim(struct walk *w, uint64_t blk, uint32_t ino, const char *what)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->blocks[i] == blk && !w->out[i].what[0]) {
			w->out[i].ino = ino;
			snprintf(w->out[i].what, sizeof(w->out[i].what), "%s", what);
			w->left--;
		}
}

static void claim_inode_blocks(struct walk *w, uint32_t ino, const char *what)
{
	uint64_t size;
	if (fs_inode_size(w->fs, ino, &size) != 0)
		return;
	uint64_t nblk = (size + w->fs->bs - 1) / w->fs->bs;
	for (uint64_t l = 0; l < nblk && w->left; l++) {
		uint64_t p = 0;
		if (fs_inode_bmap(w->fs, ino, l, &p) == 0 && p)
			claim(w, p, ino, what);
	}
}

struct dir_ctx {
	struct walk *w;
	const char *path;
	int depth;
};

static int visit(void *ctx, const char *name, uint32_t ino, uint8_t type)
{
	struct dir_ctx *d = ctx;
	struct walk *w = d->w;
	(void)type;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || !w->left || !w->budget)
		return 0;
	w->budget--;
	char path[FS_OWNER_WHAT];
	snprintf(path, sizeof(path), "%s/%s", strcmp(d->path, "/") ? d->path : "", name);
	struct fs_stat st;
	if (fs_lstat(w->fs, path, &st) != 0)
		return 0;
	if (S_ISREG(st.mode) || S_ISDIR(st.mode) || S_ISLNK(st.mode))
		claim_inode_blocks(w, ino, path);
	if (S_ISDIR(st.mode) && d->depth < 32) {
		struct dir_ctx sub = {w, path, d->depth + 1};
		fs_readdir(w->fs, path, visit, &sub);
	}
	return 0;
}

int fs_block_owners(struct fs *fs, const uint64_t *blocks, size_t n, struct fs_block_owner *out)
{
	memset(out, 0, n * sizeof(*out));
	struct walk w = {fs, blocks, n, out, n, 1u << 20};
	/* the structures of each group, from the descriptors */
	for (size_t i = 0; i < n; i++) {
		uint64_t b = blocks[i];
		if (b < fs->first_data_block || b >= fs->blocks)
			continue;
		uint32_t g = (uint32_t)((b - fs->first_data_block) / fs->bpg);
		if (g >= fs->groups)
			continue;
		const uint8_t *gd = fs->gdt + (size_t)g * fs->desc_size;
		uint64_t bb = gd_block_bitmap(gd, fs->desc_size),
		         ib = gd_inode_bitmap(gd, fs->desc_size),
		         it = gd_inode_table(gd, fs->desc_size);
		uint64_t gstart = fs->first_data_block + (uint64_t)g * fs->bpg;
		char what[FS_OWNER_WHAT] = "";
		if (b == bb)
			snprintf(what, sizeof(what), "block bitmap of group %u", g);
		else if (b == ib)
			snprintf(what, sizeof(what), "inode bitmap of group %u", g);
		else if (b >= it && b < it + fs->itb_per_group) {
			uint32_t first =
			    g * fs->ipg + 1 + (uint32_t)(b - it) * fs->inodes_per_block;
			snprintf(what, sizeof(what), "inode table of group %u (inodes %u-%u)", g,
			         first, first + fs->inodes_per_block - 1);
		} else if (b >= gstart && b < bb && b < ib && b < it)
			snprintf(what, sizeof(what),
			         "superblock / group descriptors (copy in group %u)", g);
		if (what[0]) {
			out[i].ino = 0;
			snprintf(out[i].what, sizeof(out[i].what), "%s", what);
			w.left--;
		}
	}
	if (w.left)
		claim_inode_blocks(&w, 8, "the journal (inode 8)");
	if (w.left) {
		claim_inode_blocks(&w, 2, "/ (directory)");
		struct dir_ctx root = {&w, "/", 0};
		fs_readdir(fs, "/", visit, &root);
	}
	return 0;
}
