// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_hook.c — the journal seam: a test hook that takes ownership of every
 * metadata block (like a journal: nothing goes home before force_commit) proves that
 * ALL metadata writes go through the hook, that get_write_access precedes every
 * dirty_metadata inside a handle, that only announced data blocks reach the device
 * before an fsync, that read_block serves evicted blocks, and that the image is
 * e2fsck-clean once the hook has written its copies home. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fs.h"
#include "fs/fs_int.h"
#include "tap.h"
#include "test_fs_util.h"

#define MAXBLK 65536

/* ---- a device wrapper that remembers which blocks were written ---------------- */
struct spy {
	struct bdev dev;
	struct bdev *lower;
	uint32_t bs;
	uint8_t written[MAXBLK];
};
static int spy_read(struct bdev *d, uint64_t lba, uint32_t n, void *buf)
{
	return blk_read(((struct spy *)d)->lower, lba, n, buf);
}
static int spy_write(struct bdev *d, uint64_t lba, uint32_t n, const void *buf, unsigned fl)
{
	struct spy *s = (struct spy *)d;
	for (uint64_t b = lba * 512 / s->bs; b <= (lba + n - 1) * 512 / s->bs && b < MAXBLK; b++)
		s->written[b] = 1;
	return blk_write(s->lower, lba, n, buf, fl);
}
static int spy_flush(struct bdev *d)
{
	return blk_flush(((struct spy *)d)->lower);
}
static void spy_close(struct bdev *d)
{
	(void)d;
}
static const struct bdev_ops spy_ops = {
    .read = spy_read, .write = spy_write, .flush = spy_flush, .close = spy_close};

/* ---- a hook that owns metadata until force_commit ------------------------------ */
struct th {
	struct fs_jhook base;
	uint8_t *copy[MAXBLK];
	uint64_t access_serial[MAXBLK];
	uint8_t data[MAXBLK];
	uint64_t serial;
	bool in_handle;
	int violations, dirtied, served, handles;
};

static int th_start(struct fs_jhook *j, uint32_t credits)
{
	struct th *t = (struct th *)j;
	if (t->in_handle || credits == 0)
		t->violations++;
	t->in_handle = true;
	t->serial++;
	t->handles++;
	return 0;
}
static int th_access(struct fs_jhook *j, uint64_t b, const void *cur)
{
	struct th *t = (struct th *)j;
	(void)cur;
	if (!t->in_handle || b >= MAXBLK)
		t->violations++;
	else
		t->access_serial[b] = t->serial;
	return 0;
}
static int th_dirty(struct fs_jhook *j, uint64_t b, const void *data)
{
	struct th *t = (struct th *)j;
	uint32_t bs = fs_block_size(j->fs);
	if (!t->in_handle || b >= MAXBLK || t->access_serial[b] != t->serial) {
		t->violations++;
		return -EINVAL;
	}
	if (!t->copy[b])
		t->copy[b] = malloc(bs);
	memcpy(t->copy[b], data, bs);
	t->dirtied++;
	return 0; /* ours now */
}
static int th_dirty_data(struct fs_jhook *j, uint64_t b, const void *data, unsigned flags)
{
	struct th *t = (struct th *)j;
	(void)data;
	(void)flags;
	if (b < MAXBLK)
		t->data[b] = 1;
	return FS_JH_WRITEBACK;
}
static int th_forget(struct fs_jhook *j, uint64_t b)
{
	struct th *t = (struct th *)j;
	if (b < MAXBLK) {
		free(t->copy[b]);
		t->copy[b] = NULL;
	}
	return 0;
}
static int th_read(struct fs_jhook *j, uint64_t b, void *buf)
{
	struct th *t = (struct th *)j;
	if (b >= MAXBLK || !t->copy[b])
		return 0;
	memcpy(buf, t->copy[b], fs_block_size(j->fs));
	t->served++;
	return 1;
}
static int th_stop(struct fs_jhook *j)
{
	struct th *t = (struct th *)j;
	if (!t->in_handle)
		t->violations++;
	t->in_handle = false;
	return 0;
}
static int th_commit(struct fs_jhook *j)
{
	struct th *t = (struct th *)j;
	uint32_t bs = fs_block_size(j->fs);
	for (uint64_t b = 0; b < MAXBLK; b++)
		if (t->copy[b]) {
			if (blk_pwrite(fs_bdev(j->fs), b * bs, bs, t->copy[b], 0) < 0)
				return -EIO;
			free(t->copy[b]);
			t->copy[b] = NULL;
		}
	return blk_flush(fs_bdev(j->fs));
}
static void th_destroy(struct fs_jhook *j, bool clean)
{
	struct th *t = (struct th *)j;
	(void)clean;
	for (uint64_t b = 0; b < MAXBLK; b++)
		free(t->copy[b]);
	memset(t->copy, 0, sizeof(t->copy));
}
static const struct fs_jhook_ops th_ops = {
    .start = th_start,
    .get_write_access = th_access,
    .dirty_metadata = th_dirty,
    .dirty_data = th_dirty_data,
    .forget = th_forget,
    .read_block = th_read,
    .stop = th_stop,
    .force_commit = th_commit,
    .checkpoint = th_commit,
    .destroy = th_destroy,
};
static int th_open(void *ctx, struct fs *fs, struct fs_jhook **out)
{
	struct th *t = ctx;
	t->base.ops = &th_ops;
	t->base.fs = fs;
	*out = &t->base;
	return 0;
}

static int put(struct fs *fs, const char *path, const char *s, size_t len)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT, 0644, &f);
	if (rc == 0) {
		rc = fs_pwrite(f, s, len, 0) == (ssize_t)len ? 0 : -EIO;
		fs_close(f);
	}
	return rc;
}

static void run(const char *tag, uint32_t bs, bool csum)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = bs;
	o.metadata_csum = csum;
	char img[512];
	struct bdev *file = tfs_image(tag, 16 << 20, &o, img, sizeof(img));
	tap_require(file, "%s: image", tag);
	struct spy *s = calloc(1, sizeof(*s));
	blk_init(&s->dev, &spy_ops, "spy", 512, file->nr_sectors);
	s->lower = file;
	s->bs = bs;
	struct th *t = calloc(1, sizeof(*t));
	struct fs *fs;
	struct bo_err err = {{0}};
	tap_require(fs_mount_hooked(&s->dev, NULL, th_open, t, &fs, &err) == 0,
	            "%s: mounted with the test hook", tag);
	fs->max_bufs = 16; /* evict often: reads of owned blocks must come from the hook */
	memset(s->written, 0, sizeof(s->written));

	static char big[300000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	int rc = 0;
	rc |= fs_mkdir(fs, "/d", 0755);
	rc |= fs_mkdir(fs, "/d/e", 0755);
	rc |= put(fs, "/d/e/big", big, sizeof(big));
	rc |= put(fs, "/small", "tiny", 4);
	for (int i = 0; i < 300 && rc == 0; i++) {
		char n[64];
		snprintf(n, sizeof(n), "/d/file-with-a-name-%d", i);
		rc |= put(fs, n, n, strlen(n));
	}
	rc |= fs_rename(fs, "/small", "/d/e/renamed");
	rc |= fs_unlink(fs, "/d/file-with-a-name-7");
	rc |= fs_symlink(fs, "/a/target/long/enough/to/need/its/own/block/xxxxxxxxxxxxxxxxxxxxxxxx",
	                 "/slow");
	rc |= fs_truncate(fs, "/d/e/big", 100000);
	is_int(rc, 0, "%s: workload ran", tag);

	int stray = 0;
	for (uint64_t b = 0; b < MAXBLK; b++)
		if (s->written[b] && !t->data[b])
			stray++;
	is_int(stray, 0, "%s: before fsync only announced data blocks reached the device", tag);
	is_int(t->violations, 0, "%s: every dirty_metadata inside a handle, after access", tag);
	ok(t->dirtied > 300, "%s: the hook saw the metadata (%d dirty_metadata, %d handles)", tag,
	   t->dirtied, t->handles);
	ok(t->served > 0, "%s: evicted owned blocks were read back through the hook (%d)", tag,
	   t->served);
	char buf[16] = {0};
	struct fs_file *f;
	is_int(fs_open(fs, "/d/e/renamed", FS_O_RDONLY, 0, &f), 0, "%s: lookup after eviction",
	       tag);
	is_int(fs_pread(f, buf, sizeof(buf), 0), 4, "%s: read", tag);
	ok(!memcmp(buf, "tiny", 4), "%s: the renamed file reads back its 4 bytes", tag);
	fs_close(f);
	/* through the hook's copies (the cache holds 16 blocks): the big file's map and a
	 * name file's directory block were evicted long ago */
	static char back[100001];
	int same = fs_open(fs, "/d/e/big", FS_O_RDONLY, 0, &f) == 0 &&
	           fs_pread(f, back, sizeof(back), 0) == 100000 && !memcmp(back, big, 100000);
	fs_close(f);
	ok(same, "%s: the truncated big file reads back its first 100000 bytes", tag);
	int names_ok = 0;
	for (int i = 0; i < 300; i += 37) {
		char n[64], got[64] = {0};
		snprintf(n, sizeof(n), "/d/file-with-a-name-%d", i);
		if (i == 7 || fs_open(fs, n, FS_O_RDONLY, 0, &f) < 0)
			continue;
		names_ok +=
		    fs_pread(f, got, sizeof(got), 0) == (ssize_t)strlen(n) && !strcmp(got, n);
		fs_close(f);
	}
	is_int(names_ok, 9, "%s: 9 of the small files read back their own names", tag);
	is_int(fs_unmount(fs), 0, "%s: unmount (the hook writes its copies home)", tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean", tag);
	ok(tfs_debugfs_cat(img, "/d/e/big", big, 100000), "%s: debugfs reads the big file", tag);
	blk_close(file);
	free(t);
	free(s);
}

int main(void)
{
	run("hook-1k", 1024, false);
	run("hook-4k-csum", 4096, true);
	tfs_cleanup();
	return tap_done();
}
