/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dx.h — htree (dir_index) directories: the name hashes and the index operations
 * dir.c calls. Only dir.c uses this. */
#ifndef BLACKOUT_FS_DX_H
#define BLACKOUT_FS_DX_H

#include <stddef.h>
#include <stdint.h>

struct fs;
struct fs_inode;

#define DX_MAX_NODE_BLOCKS 512
#define DX_MAX_CANDIDATES  16

struct dx_info {
	uint8_t hash_version; /* effective: with the unsigned offset added */
	uint8_t levels;
	uint32_t nnodes;
	uint32_t nodes[DX_MAX_NODE_BLOCKS]; /* logical blocks of interior nodes */
};

int fs_dx_read_root(struct fs *fs, struct fs_inode *dir, struct dx_info *info);
/* Leaves that may hold `name`, in order (the first, then hash-collision
 * continuations). */
int fs_dx_candidates(struct fs *fs, struct fs_inode *dir, const char *name, size_t len,
                     uint32_t *leaves, uint32_t max, uint32_t *n);
/* Inserts into an indexed directory, splitting leaves and nodes. -EAGAIN: the index
 * is full at its maximum depth (two levels; the caller answers ENOSPC). */
int fs_dx_add(struct fs *fs, struct fs_inode *dir, const char *name, size_t len, uint32_t ino,
              uint8_t ftype);
/* Turns a one-block linear directory into an indexed one. */
int fs_dx_make_indexed(struct fs *fs, struct fs_inode *dir);

void fs_dx_set_root_csum(struct fs *fs, struct fs_inode *dir, uint8_t *data);

/* from dir.c, for dx.c */
struct fs_buf;
int fs_dir_new_leaf(struct fs *fs, struct fs_inode *dir, uint64_t lblk, struct fs_buf **out);
int fs_dir_block(struct fs *fs, struct fs_inode *dir, uint64_t lblk, struct fs_buf **out);
int fs_dir_leaf_block(struct fs *fs, struct fs_inode *dir, uint64_t lblk, struct fs_buf **out);
/* 1 inserted, 0 no room, -errno */
int fs_dir_leaf_insert(struct fs *fs, struct fs_inode *dir, struct fs_buf *b, const char *name,
                       size_t len, uint32_t ino, uint8_t ft);

#endif
