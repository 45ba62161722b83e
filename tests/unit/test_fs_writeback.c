// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_writeback.c — data=writeback delays file data: reads see it at once, a
 * commit made for another file does not wait for it (after a cut the file has its
 * new size over whatever its blocks held before: the mode's stale-data exposure,
 * which data=ordered does not have), fsync of the file and unmount write it, and a
 * delayed write that fails is reported by every later fsync of its file, also when
 * someone else's write pushed it out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/dev.h"
#include "blackout/fs.h"
#include "tap.h"

#define LEN (64u << 10)

static int mkfs(struct bdev *d)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 1024;
	o.now = 1;
	struct bo_err err = {{0}};
	int rc = fs_mkfs(d, &o, &err);
	if (rc < 0)
		diag("mkfs: %s", err.msg);
	return rc;
}

static struct fs *mnt(struct bdev *d, enum fs_data_mode mode)
{
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	mo.now = 1;
	mo.data = mode;
	struct fs *fs = NULL;
	struct bo_err err = {{0}};
	if (fs_mount(d, &mo, &fs, &err) < 0)
		diag("mount: %s", err.msg);
	return fs;
}

/* Writes LEN bytes of `fill`; with do_fsync, fsyncs the file (returns its result). */
static int put(struct fs *fs, const char *path, int fill, bool do_fsync)
{
	static uint8_t buf[LEN];
	memset(buf, fill, sizeof(buf));
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT | FS_O_TRUNC, 0644, &f);
	if (rc < 0)
		return rc;
	ssize_t n = fs_pwrite(f, buf, LEN, 0);
	rc = n == LEN ? 0 : n < 0 ? (int)n : -EIO;
	if (rc == 0 && do_fsync)
		rc = fs_fsync(f);
	fs_close(f);
	return rc;
}

static int fsync_path(struct fs *fs, const char *path)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR, 0, &f);
	if (rc < 0)
		return rc;
	rc = fs_fsync(f);
	fs_close(f);
	return rc;
}

/* What /path holds: its size and the byte most of it holds ('?' if mixed). */
static int content(struct fs *fs, const char *path, uint64_t *size)
{
	static uint8_t buf[LEN];
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDONLY, 0, &f);
	if (rc < 0)
		return rc;
	struct fs_stat st;
	fs_fstat(f, &st);
	*size = st.size;
	ssize_t n = fs_pread(f, buf, sizeof(buf), 0);
	fs_close(f);
	if (n <= 0)
		return 0;
	for (ssize_t i = 1; i < n; i++)
		if (buf[i] != buf[0])
			return '?';
	return buf[0];
}

/* /old ('o') written and synced, deleted and synced (its blocks free and
 * committed), /new ('n') written without fsync, then /a written and fsynced: the
 * commit carries /new's inode. Power is cut; returns what /new holds after
 * recovery ('\0' for zeros), with its size. */
static int cut_after_other_fsync(enum fs_data_mode mode, uint64_t *size, int *during)
{
	struct bdev *d;
	if (blk_mem_open(512, (4u << 20) / 512, &d) < 0 || mkfs(d) < 0)
		return -1;
	struct fs *fs = mnt(d, mode);
	int r = -1;
	*size = 0;
	if (fs && put(fs, "/old", 'o', true) == 0 && fs_unlink(fs, "/old") == 0 &&
	    fs_sync(fs) == 0 && put(fs, "/new", 'n', false) == 0) {
		uint64_t sz;
		*during = content(fs, "/new", &sz);
		if (put(fs, "/a", 'a', true) == 0)
			r = 0;
	}
	fs_abandon(fs); /* the cut */
	if (r == 0) {
		fs = mnt(d, mode);
		r = fs ? content(fs, "/new", size) : -1;
		fs_abandon(fs);
	}
	blk_close(d);
	return r;
}

static int roundtrip(bool do_fsync, bool unmount, uint64_t *size)
{
	struct bdev *d;
	if (blk_mem_open(512, (4u << 20) / 512, &d) < 0 || mkfs(d) < 0)
		return -1;
	struct fs *fs = mnt(d, FS_DATA_WRITEBACK);
	int r = fs ? put(fs, "/f", 'f', do_fsync) : -1;
	if (unmount)
		r = r == 0 ? fs_unmount(fs) : r;
	else
		fs_abandon(fs);
	if (r == 0) {
		fs = mnt(d, FS_DATA_WRITEBACK);
		r = fs ? content(fs, "/f", size) : -1;
		fs_abandon(fs);
	}
	blk_close(d);
	return r;
}

/* /b written (delayed), then its blocks made to fail; `push` more data is written
 * to /c (pushing /b out when it exceeds the delayed-data limit). Returns the first
 * and the second fsync of /b. */
static void lost_write(size_t push, int *first, int *second)
{
	*first = *second = 1;
	struct bdev *top;
	struct bo_err err = {{0}};
	if (dev_stack_open_text("fault > mem(size=16M)", NULL, &top, &err) < 0 || mkfs(top) < 0) {
		diag("stack: %s", err.msg);
		return;
	}
	struct fs *fs = mnt(top, FS_DATA_WRITEBACK);
	if (!fs || put(fs, "/b", 'b', false) < 0) {
		fs_abandon(fs);
		blk_close(top);
		return;
	}
	/* the 64 blocks of /b: find them, then fail every write to them */
	uint64_t nb = (16u << 20) / 1024, lo = 0, hi = 0;
	uint64_t *blocks = malloc(nb * sizeof(*blocks));
	struct fs_block_owner *own = calloc(nb, sizeof(*own));
	struct fs_stat st;
	fs_stat(fs, "/b", &st);
	for (uint64_t i = 0; i < nb; i++)
		blocks[i] = i;
	fs_block_owners(fs, blocks, nb, own);
	for (uint64_t i = 0; i < nb; i++)
		if (own[i].ino == st.ino) {
			if (!lo)
				lo = i;
			hi = i;
		}
	free(blocks);
	free(own);
	char rule[96];
	snprintf(rule, sizeof(rule), "write-error lba=%llu-%llu errno=EIO",
	         (unsigned long long)lo * 2, (unsigned long long)hi * 2 + 1);
	if (!lo || dev_fault_arm(dev_stack_find(top, "fault", 0), rule, &err) < 0) {
		diag("no blocks of /b found, or arm failed: %s", err.msg);
		fs_abandon(fs);
		blk_close(top);
		return;
	}
	for (size_t i = 0; i < push; i++) {
		char p[32];
		snprintf(p, sizeof(p), "/c%zu", i);
		put(fs, p, 'c', false);
	}
	*first = fsync_path(fs, "/b");
	*second = fsync_path(fs, "/b");
	fs_abandon(fs);
	blk_close(top);
}

int main(void)
{
	uint64_t size;
	int during = 0;
	int got = cut_after_other_fsync(FS_DATA_WRITEBACK, &size, &during);
	ok(during == 'n', "writeback: a read sees the delayed data at once ('%c')", during);
	ok(got == 'o' && size == LEN,
	   "writeback: another file's fsync committed /new's size before its data: after the "
	   "cut it holds the deleted file's bytes (got '%c', %llu bytes)",
	   got > 0 ? got : '0', (unsigned long long)size);
	got = cut_after_other_fsync(FS_DATA_ORDERED, &size, &during);
	ok(got == 'n' && size == LEN,
	   "ordered: the same sequence keeps /new's own data (got '%c', %llu bytes)",
	   got > 0 ? got : '0', (unsigned long long)size);
	got = roundtrip(true, false, &size);
	ok(got == 'f' && size == LEN, "writeback: fsync of the file makes its data durable ('%c')",
	   got > 0 ? got : '0');
	got = roundtrip(false, true, &size);
	ok(got == 'f' && size == LEN, "writeback: unmount writes the delayed data ('%c')",
	   got > 0 ? got : '0');
	size = 0;
	got = roundtrip(false, false, &size);
	/* -ENOENT: the name was never committed; a set-up failure (-1) must not pass */
	ok(got == -ENOENT || (got >= 0 && size == 0),
	   "writeback: without fsync nothing was committed (%d, %llu bytes)", got,
	   (unsigned long long)size);
	int first, second;
	lost_write(0, &first, &second);
	ok(first == -EIO, "writeback: fsync reports the failed write of the file's data (%d)",
	   first);
	ok(second == -EIO,
	   "writeback: a second fsync does not report the lost data as durable either (%d)",
	   second);
	lost_write(80, &first, &second);
	ok(first == -EIO,
	   "writeback: pushed out by another file's writes, the failure still reaches the "
	   "file's fsync (%d)",
	   first);
	return tap_done();
}
