// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_fs_image.c — libFuzzer target: mounts a mutated small ext2 image (plain or
 * metadata_csum), walks the tree, reads every file and symlink, makes a few changes
 * and unmounts. The input is a list of byte patches over a built-in populated image:
 * byte 0 bit 0 picks metadata_csum, then 4-byte records (le24 offset, xor value). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/fs.h"

#define IMG_BYTES (512u << 10)

static int put(struct fs *fs, const char *path, size_t len, char c)
{
	char buf[70000];
	memset(buf, c, len);
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT, 0644, &f);
	if (rc == 0) {
		fs_pwrite(f, buf, len, 0);
		fs_close(f);
	}
	return rc;
}

static struct bdev *make_base(bool csum)
{
	struct bdev *d;
	if (blk_mem_open(512, IMG_BYTES / 512, &d) < 0)
		return NULL;
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.type = 2;
	o.block_size = 1024;
	o.metadata_csum = csum;
	struct fs *fs;
	if (fs_mkfs(d, &o, NULL) < 0 || fs_mount(d, NULL, &fs, NULL) < 0)
		abort(); /* the harness itself is broken: not an input problem */
	fs_mkdir(fs, "/d", 0755);
	fs_mkdir(fs, "/d/e", 0755);
	fs_mkdir(fs, "/h", 0755);
	put(fs, "/small", 50, 's');
	put(fs, "/ind", 70000, 'i');
	put(fs, "/d/e/f", 3000, 'f');
	fs_symlink(fs, "/small", "/fast");
	fs_symlink(fs, "/d/e/f/a/long/name/that/needs/a/block/of/its/own/to/be/stored/in", "/slow");
	fs_link(fs, "/small", "/d/hard");
	for (int i = 0; i < 80; i++) {
		char n[64];
		snprintf(n, sizeof(n), "/h/a-file-with-a-long-name-number-%d", i);
		put(fs, n, 5, 'h');
	}
	fs_unmount(fs);
	return d;
}

struct wctx {
	char names[32][256];
	int n;
};
static int cb(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)ino;
	(void)ft;
	struct wctx *c = ctx;
	if (strcmp(name, ".") && strcmp(name, "..") && c->n < 32)
		snprintf(c->names[c->n++], sizeof(c->names[0]), "%s", name);
	return 0;
}

/* readdir_plus reads every entry's inode by number, whatever the entry says */
static int plus_cb(void *ctx, const char *name, uint32_t ino, const struct fs_stat *st)
{
	(void)name;
	(void)ino;
	if (st)
		(*(int *)ctx)++;
	return 0;
}

static void walk(struct fs *fs, const char *path, int depth)
{
	if (depth > 8)
		return;
	struct wctx *c = calloc(1, sizeof(*c));
	if (!c)
		return;
	fs_readdir(fs, path, cb, c);
	int readable = 0;
	fs_readdir_plus(fs, path, plus_cb, &readable);
	for (int i = 0; i < c->n; i++) {
		char p[600];
		snprintf(p, sizeof(p), "%s/%s", strcmp(path, "/") ? path : "", c->names[i]);
		struct fs_stat st;
		if (fs_lstat(fs, p, &st) < 0)
			continue;
		if ((st.mode & 0xF000) == 0x4000) {
			walk(fs, p, depth + 1);
		} else if ((st.mode & 0xF000) == 0xA000) {
			char t[4096];
			fs_readlink(fs, p, t, sizeof(t));
		} else {
			struct fs_file *f;
			if (fs_open(fs, p, FS_O_RDONLY, 0, &f) == 0) {
				static char buf[16384];
				for (uint64_t off = 0; off < st.size && off < (256u << 10);
				     off += sizeof(buf))
					if (fs_pread(f, buf, sizeof(buf), off) <= 0)
						break;
				fs_close(f);
			}
		}
	}
	free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bdev *base[2];
	if (size < 1)
		return 0;
	int which = data[0] & 1;
	if (!base[which] && !(base[which] = make_base(which)))
		return 0;
	struct bdev *d;
	if (blk_cow_open(base[which], &d) < 0)
		return 0;
	uint8_t sec[512];
	for (size_t i = 1; i + 4 <= size; i += 4) {
		uint32_t off =
		    (data[i] | data[i + 1] << 8 | (uint32_t)data[i + 2] << 16) % IMG_BYTES;
		if (blk_pread(d, off & ~511u, 512, sec) < 0)
			break;
		sec[off & 511] ^= data[i + 3];
		if (blk_pwrite(d, off & ~511u, 512, sec, 0) < 0)
			break;
	}
	struct fs *fs;
	if (fs_mount(d, NULL, &fs, NULL) == 0) {
		walk(fs, "/", 0);
		put(fs, "/new", 5000, 'n');
		fs_mkdir(fs, "/d/new", 0755);
		fs_rename(fs, "/small", "/h/moved");
		fs_unlink(fs, "/ind");
		fs_truncate(fs, "/d/e/f", 10);
		walk(fs, "/", 0);
		fs_unmount(fs);
	}
	blk_close(d);
	return 0;
}
