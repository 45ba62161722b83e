/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fs.h — an ext2/ext3-compatible filesystem over any blackout bdev.
 *
 * The on-disk format is ext2/ext3's (optionally ext4 metadata_csum), so e2fsprogs
 * judges every image we write. Paths are absolute, '/'-separated, within the
 * filesystem. Every function returns 0 (or a byte count) or a negative errno; the
 * detail of the last error is in fs_err(fs). */
#ifndef BLACKOUT_FS_H
#define BLACKOUT_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "blackout/blk.h"
#include "blackout/err.h"

struct fs;
struct fs_file;

struct fs_mkfs_opts {
	int type;                /* 2 = ext2, 3 = ext3 (has_journal); default 3 */
	uint32_t block_size;     /* 1024, 2048, 4096; 0 = mke2fs's choice by size */
	uint32_t inode_size;     /* 128 or 256; 0 = 256 */
	uint64_t inodes;         /* 0 = mke2fs's ratio */
	uint64_t journal_blocks; /* 0 = mke2fs's choice */
	bool metadata_csum;
	uint32_t hash_seed[4]; /* directory hash seed; all zero = derived from uuid */
	uint8_t uuid[16];      /* all zero = deterministic from the device size */
	const char *label;
	uint32_t now; /* fixed clock for timestamps (reproducible images); 0 = time(NULL) */
};
void fs_mkfs_opts_default(struct fs_mkfs_opts *o);
int fs_mkfs(struct bdev *d, const struct fs_mkfs_opts *o, struct bo_err *err);

enum fs_data_mode { FS_DATA_ORDERED, FS_DATA_WRITEBACK, FS_DATA_JOURNAL };
/* What a mount does when it finds damage (errors=), as ext3: the superblock records
 * it always; continue goes on, remount-ro and panic drop the operation that met it
 * and write nothing more (remount-ro refuses changes with -EROFS, panic, which a
 * library cannot do, fails every change and sync with -EIO). */
enum fs_errors { FS_ERRORS_CONTINUE, FS_ERRORS_RO, FS_ERRORS_PANIC };

struct fs_mount_opts {
	enum fs_data_mode data;
	bool barrier;        /* ext3's barrier=1 */
	uint32_t commit_ops; /* commit after this many operations; 0 = only on
				  * fsync/sync/unmount or a full journal */
	enum fs_errors errors;
	/* checkpoint_errors=ignore: a failed home write at checkpoint is logged and the
	 * checkpoint completes (jbd before Linux 2.6.28); abort (default): the journal
	 * aborts with the transaction kept in the log (docs/journal.md) */
	bool checkpoint_errors_ignored;
	bool read_only;
	bool no_journal; /* mount ext3 as ext2 (no journalling) */
	uint32_t now;    /* fixed clock for timestamps (reproducible images); 0 = time(NULL) */
};
void fs_mount_opts_default(struct fs_mount_opts *o);
/* "data=ordered,barrier=1,commit=5,errors=continue|remount-ro|panic,
 * checkpoint_errors=abort|ignore,ro" */
int fs_mount_opts_parse(const char *text, struct fs_mount_opts *o, struct bo_err *err);

/* Mount: replays the journal if the image needs recovery, then processes orphans. */
int fs_mount(struct bdev *d, const struct fs_mount_opts *o, struct fs **out, struct bo_err *err);
/* Clean unmount: commits, checkpoints, marks the superblock clean, flushes. */
int fs_unmount(struct fs *fs);
/* Frees everything without writing (the device lost power). */
void fs_abandon(struct fs *fs);
const struct bo_err *fs_err(const struct fs *fs);

struct fs_stat {
	uint32_t ino;
	uint16_t mode; /* S_IFREG | 0644 ... */
	uint16_t nlink;
	uint32_t uid, gid;
	uint64_t size;
	uint64_t blocks; /* 512-byte units, as st_blocks */
	uint32_t atime, mtime, ctime;
};
struct fs_statfs {
	uint32_t block_size;
	uint64_t blocks, free_blocks, avail_blocks;
	uint64_t inodes, free_inodes;
	uint32_t name_max;
};

enum {
	FS_O_RDONLY = 0,
	FS_O_WRONLY = 1,
	FS_O_RDWR = 2,
	FS_O_CREAT = 1 << 4,
	FS_O_EXCL = 1 << 5,
	FS_O_TRUNC = 1 << 6,
	FS_O_APPEND = 1 << 7,
	FS_O_DIRECTORY = 1 << 8, /* open a directory (for fsync of names) */
};

int fs_statfs(struct fs *fs, struct fs_statfs *st);
int fs_stat(struct fs *fs, const char *path, struct fs_stat *st);  /* follows a final symlink */
int fs_lstat(struct fs *fs, const char *path, struct fs_stat *st); /* does not */
int fs_open(struct fs *fs, const char *path, int flags, uint16_t mode, struct fs_file **out);
int fs_close(struct fs_file *f); /* the last close of an unlinked file frees it */
ssize_t fs_pread(struct fs_file *f, void *buf, size_t len, uint64_t off);
ssize_t fs_pwrite(struct fs_file *f, const void *buf, size_t len, uint64_t off);
int fs_fstat(struct fs_file *f, struct fs_stat *st);
int fs_fsync(struct fs_file *f);     /* file data and metadata (and for a directory, its entries) */
int fs_fdatasync(struct fs_file *f); /* data, and metadata only as needed to read it */
int fs_truncate(struct fs *fs, const char *path, uint64_t size);
int fs_mkdir(struct fs *fs, const char *path, uint16_t mode);
int fs_rmdir(struct fs *fs, const char *path);
int fs_unlink(struct fs *fs, const char *path);
int fs_rename(struct fs *fs, const char *from, const char *to);
int fs_link(struct fs *fs, const char *existing, const char *newpath);
int fs_symlink(struct fs *fs, const char *target, const char *linkpath);
ssize_t fs_readlink(struct fs *fs, const char *path, char *buf, size_t len);
/* Calls fn for each entry ('.' and '..' included); fn returning non-zero stops the
 * walk and that value is returned. */
int fs_readdir(struct fs *fs, const char *path,
               int (*fn)(void *ctx, const char *name, uint32_t ino, uint8_t file_type), void *ctx);
/* fs_readdir with each entry's attributes, as lstat would give them (a symlink is
 * not followed), read by the entry's inode number rather than by walking a path:
 * `ls -l`'s getdents + fstatat, NFS's READDIRPLUS. st is NULL when the entry's
 * inode cannot be read (fs_err says why); the walk goes on unless fn says stop. */
int fs_readdir_plus(struct fs *fs, const char *path,
                    int (*fn)(void *ctx, const char *name, uint32_t ino, const struct fs_stat *st),
                    void *ctx);
int fs_chmod(struct fs *fs, const char *path, uint16_t mode);
int fs_chown(struct fs *fs, const char *path, uint32_t uid, uint32_t gid);
int fs_utimes(struct fs *fs, const char *path, uint32_t atime, uint32_t mtime);
int fs_sync(struct fs *fs);

/* What each of `n` filesystem blocks belongs to: a file or directory (its path and
 * inode), the journal, or a group structure (bitmap, inode table, superblock copy).
 * A block no walk claims (free, or an indirect block) gets an empty `what`. For
 * reports of damage, not for checking: it trusts what it reads. */
#define FS_OWNER_WHAT 160
struct fs_block_owner {
	uint32_t ino;
	char what[FS_OWNER_WHAT];
};
int fs_block_owners(struct fs *fs, const uint64_t *blocks, size_t n, struct fs_block_owner *out);

#endif
