// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_reuse.c — blocks freed by a transaction that has not committed are not
 * handed out again before it commits (ext3's rule: otherwise new data lands in
 * blocks the on-disk metadata still gives to the old file, and a crash shows the
 * old file with someone else's data). Once committed they are reusable; a full
 * filesystem whose only free blocks wait for a commit commits and retries instead
 * of failing with ENOSPC. Without a journal, frees are reusable at once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/fs.h"
#include "tap.h"

#define FS_SIZE (4u << 20)

static struct bdev *image(int type)
{
	struct bdev *d;
	if (blk_mem_open(512, FS_SIZE / 512, &d) < 0)
		return NULL;
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.type = type;
	o.block_size = 1024;
	o.now = 1;
	struct bo_err err = {{0}};
	if (fs_mkfs(d, &o, &err) < 0) {
		diag("mkfs: %s", err.msg);
		blk_close(d);
		return NULL;
	}
	return d;
}

static struct fs *mnt(struct bdev *d)
{
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	mo.now = 1;
	struct fs *fs = NULL;
	struct bo_err err = {{0}};
	if (fs_mount(d, &mo, &fs, &err) < 0)
		diag("mount: %s", err.msg);
	return fs;
}

static ssize_t put(struct fs *fs, const char *path, size_t len, int fill)
{
	uint8_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memset(buf, fill, len);
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT | FS_O_TRUNC, 0644, &f);
	ssize_t n = rc < 0 ? rc : fs_pwrite(f, buf, len, 0);
	if (rc == 0)
		fs_close(f);
	free(buf);
	return n;
}

/* Marks in `own` (one byte per block) every block whose owner is inode `ino`. */
static void owned(struct fs *fs, uint32_t ino, uint8_t *own, uint64_t nblocks)
{
	uint64_t *blocks = malloc(nblocks * sizeof(*blocks));
	struct fs_block_owner *out = calloc(nblocks, sizeof(*out));
	for (uint64_t i = 0; i < nblocks; i++)
		blocks[i] = i;
	if (blocks && out && fs_block_owners(fs, blocks, nblocks, out) == 0)
		for (uint64_t i = 0; i < nblocks; i++)
			own[i] = out[i].ino == ino && ino;
	free(blocks);
	free(out);
}

static uint64_t overlap(const uint8_t *a, const uint8_t *b, uint64_t n)
{
	uint64_t k = 0;
	for (uint64_t i = 0; i < n; i++)
		k += a[i] && b[i];
	return k;
}

static uint32_t ino_of(struct fs *fs, const char *path)
{
	struct fs_stat st;
	return fs_stat(fs, path, &st) == 0 ? (uint32_t)st.ino : 0;
}

/* Write /old and sync; then `free_it` frees its blocks; /new is written without a
 * commit in between. Returns how many of /old's former blocks /new got (or -1). */
static int64_t reuse_before_commit(int type, int (*free_it)(struct fs *), bool commit_between)
{
	struct bdev *d = image(type);
	struct fs *fs = d ? mnt(d) : NULL;
	if (!fs) {
		blk_close(d);
		return -1;
	}
	uint64_t nb = FS_SIZE / 1024;
	uint8_t *a = calloc(nb, 1), *b = calloc(nb, 1);
	int64_t r = -1;
	if (put(fs, "/old", 64 << 10, 'o') == 64 << 10 && fs_sync(fs) == 0) {
		owned(fs, ino_of(fs, "/old"), a, nb);
		if (free_it(fs) == 0 && (!commit_between || fs_sync(fs) == 0) &&
		    put(fs, "/new", 64 << 10, 'n') == 64 << 10) {
			owned(fs, ino_of(fs, "/new"), b, nb);
			r = (int64_t)overlap(a, b, nb);
		}
	}
	free(a);
	free(b);
	fs_abandon(fs);
	blk_close(d);
	return r;
}

static int do_unlink(struct fs *fs)
{
	return fs_unlink(fs, "/old");
}
static int do_truncate(struct fs *fs)
{
	return fs_truncate(fs, "/old", 0);
}
static int do_rename_over(struct fs *fs)
{
	/* the atomic-replace pattern: the old file's blocks are freed by the rename */
	return put(fs, "/tmp", 1024, 't') == 1024 ? fs_rename(fs, "/tmp", "/old") : -1;
}

/* Fill the filesystem, sync, delete the big file and write it again at once: every
 * free block waits for the delete's commit. */
static int refill(void)
{
	struct bdev *d = image(3);
	struct fs *fs = d ? mnt(d) : NULL;
	if (!fs) {
		blk_close(d);
		return -1;
	}
	struct fs_statfs st;
	int rc = fs_statfs(fs, &st);
	size_t len = rc == 0 ? (size_t)(st.free_blocks - 80) * st.block_size : 0;
	ssize_t n = put(fs, "/big", len, 'b');
	int res = -1;
	if (n > 0 && fs_sync(fs) == 0 && fs_unlink(fs, "/big") == 0) {
		ssize_t m = put(fs, "/big2", (size_t)n, 'c');
		res = m == n ? 0 : (int)(m < 0 ? m : -EIO);
		if (m != n)
			diag("rewrite of %zd bytes gave %zd", n, m);
	}
	fs_abandon(fs);
	blk_close(d);
	return res;
}

int main(void)
{
	int64_t k = reuse_before_commit(3, do_unlink, false);
	ok(k == 0,
	   "ext3: unlink, then a new file before the commit: none of the freed blocks "
	   "reused (%lld)",
	   (long long)k);
	k = reuse_before_commit(3, do_truncate, false);
	ok(k == 0, "ext3: truncate, then a new file before the commit: none reused (%lld)",
	   (long long)k);
	k = reuse_before_commit(3, do_rename_over, false);
	ok(k == 0,
	   "ext3: rename over a file, then a new file before the commit: none reused (%lld)",
	   (long long)k);
	k = reuse_before_commit(3, do_unlink, true);
	ok(k > 0, "ext3: after the commit the freed blocks are reused (%lld of 64)", (long long)k);
	k = reuse_before_commit(2, do_unlink, false);
	ok(k > 0, "ext2 (no journal): freed blocks are reusable at once (%lld of 64)",
	   (long long)k);
	int rc = refill();
	ok(rc == 0,
	   "ext3: a full filesystem whose free blocks wait for a commit commits and "
	   "retries instead of ENOSPC (%d)",
	   rc);
	return tap_done();
}
