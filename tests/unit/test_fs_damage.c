// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_damage.c — the filesystem protects itself on a damaged image, as Linux
 * ext2/ext3 do: descriptors checked at mount, bitmaps checked against their
 * descriptors, no allocation or free in the system zone, every block checked before
 * anything is freed (rm never leaves a file half removed), the superblock's error bit,
 * and errors=continue|remount-ro|panic. Each damage is made by hand on a small image. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fs.h"
#include "blackout/util.h"
#include "blackout/ext2_format.h"
#include "fs/fs_int.h"
#include "tap.h"

#define IMG_BYTES (16u << 20) /* 1 KiB blocks: two groups */

static struct bdev *base_dev;

/* Layout of the base image, read through a mount. */
struct layout {
	uint32_t ino_a, ino_b;       /* /a (20 blocks: direct and indirect), /b (2 blocks) */
	uint64_t a_blk0, a_ind;      /* /a's first data block and its indirect block */
	uint64_t b_blk0;             /* /b's first data block */
	uint64_t bbitmap0, ibitmap0; /* group 0's bitmaps */
	uint64_t itable0;
	uint32_t isz, ipg;
} L;

static struct bdev *copy_of(struct bdev *src)
{
	struct bdev *d;
	if (blk_mem_open(512, IMG_BYTES / 512, &d) < 0)
		return NULL;
	uint8_t *buf = malloc(IMG_BYTES);
	int rc = buf ? blk_pread(src, 0, IMG_BYTES, buf) : -ENOMEM;
	if (rc == 0)
		rc = blk_pwrite(d, 0, IMG_BYTES, buf, 0);
	free(buf);
	if (rc < 0) {
		blk_close(d);
		return NULL;
	}
	return d;
}

static struct fs *mnt(struct bdev *d, const char *opts)
{
	struct fs_mount_opts mo;
	struct bo_err err = {{0}};
	struct fs *fs = NULL;
	if (fs_mount_opts_parse(opts, &mo, &err) < 0)
		return NULL;
	mo.now = 1700000000;
	int rc = fs_mount(d, &mo, &fs, &err);
	if (rc < 0)
		diag("mount: %s", bo_errstr(&err, rc));
	return rc < 0 ? NULL : fs;
}

static int put(struct fs *fs, const char *path, size_t len)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_WRONLY | FS_O_CREAT | FS_O_TRUNC, 0644, &f);
	if (rc < 0)
		return rc;
	uint8_t *buf = malloc(len);
	memset(buf, 0x5a, len);
	ssize_t n = fs_pwrite(f, buf, len, 0);
	free(buf);
	int c = fs_close(f);
	return n < 0 ? (int)n : c;
}

static uint32_t raw32(struct bdev *d, uint64_t off)
{
	uint8_t s[512];
	if (blk_pread(d, off & ~511ull, 512, s) < 0)
		return 0;
	return get_le32(s + (off & 511));
}

static void poke32(struct bdev *d, uint64_t off, uint32_t v)
{
	uint8_t s[512];
	if (blk_pread(d, off & ~511ull, 512, s) < 0)
		return;
	put_le32(s + (off & 511), v);
	(void)blk_pwrite(d, off & ~511ull, 512, s, 0);
}

static void flip_bit(struct bdev *d, uint64_t bitmap_blk, uint32_t bit)
{
	uint8_t s[512];
	uint64_t off = bitmap_blk * 1024 + bit / 8;
	if (blk_pread(d, off & ~511ull, 512, s) < 0)
		return;
	s[off & 511] ^= (uint8_t)(1u << (bit & 7));
	(void)blk_pwrite(d, off & ~511ull, 512, s, 0);
}

static uint64_t inode_off(uint32_t ino)
{
	return L.itable0 * 1024 + (uint64_t)(ino - 1) * L.isz; /* group 0 only */
}

static uint16_t sb_state_on_disk(struct bdev *d)
{
	return (uint16_t)(raw32(d, 1024 + SB_STATE) & 0xffff);
}

static bool exists(struct fs *fs, const char *path)
{
	struct fs_stat st;
	return fs_stat(fs, path, &st) == 0;
}

static int make_base(void)
{
	if (blk_mem_open(512, IMG_BYTES / 512, &base_dev) < 0)
		return -1;
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 1024;
	o.inodes = 512;
	o.now = 1700000000;
	struct bo_err err = {{0}};
	if (fs_mkfs(base_dev, &o, &err) < 0)
		return -1;
	struct fs *fs = mnt(base_dev, NULL);
	if (!fs || put(fs, "/a", 20 * 1024) < 0 || put(fs, "/b", 2 * 1024) < 0 ||
	    fs_mkdir(fs, "/d", 0755) < 0)
		return -1;
	struct fs_stat st;
	fs_stat(fs, "/a", &st);
	L.ino_a = st.ino;
	fs_stat(fs, "/b", &st);
	L.ino_b = st.ino;
	fs_inode_bmap(fs, L.ino_a, 0, &L.a_blk0);
	fs_inode_bmap(fs, L.ino_b, 0, &L.b_blk0);
	struct fs_inode in;
	fs_iget(fs, L.ino_a, &in);
	L.a_ind = ino_block(in.raw, EXT2_IND_BLOCK);
	const uint8_t *gd = fs_gd(fs, 0);
	L.bbitmap0 = gd_block_bitmap(gd, fs->desc_size);
	L.ibitmap0 = gd_inode_bitmap(gd, fs->desc_size);
	L.itable0 = gd_inode_table(gd, fs->desc_size);
	L.isz = fs->inode_size;
	L.ipg = fs->ipg;
	int rc = fs_unmount(fs);
	return rc < 0 || !L.a_ind || !L.a_blk0 || !L.b_blk0 ? -1 : 0;
}

/* A block bitmap aimed at a reserved GDT block is refused at mount. */
static void descriptor_in_system_zone(void)
{
	struct bdev *d = copy_of(base_dev);
	/* group 0's descriptor is at block 2; the reserved GDT blocks follow it */
	poke32(d, 2 * 1024 + 0, 3);
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	struct bo_err err = {{0}};
	struct fs *fs = NULL;
	is_int(fs_mount(d, &mo, &fs, &err), -EUCLEAN,
	       "block bitmap over a reserved GDT block: "
	       "mount refused");
	ok(strstr(err.msg, "group descriptor 0") && strstr(err.msg, "block bitmap"),
	   "the message names the descriptor and the field: %s", err.msg);
	fs_abandon(fs);
	blk_close(d);
}

/* A bitmap that disagrees with its descriptor's count is not trusted: the new file's
 * blocks come from another group, never the file block whose bit was cleared. */
static void bitmap_count_mismatch(void)
{
	struct bdev *d = copy_of(base_dev);
	flip_bit(d, L.bbitmap0, (uint32_t)(L.b_blk0 - 1));
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "mounted with a cleared bit in group 0's block bitmap");
	is_int(put(fs, "/new", 4096), 0, "a new file is written (from another group)");
	uint64_t p = 0;
	struct fs_stat st;
	fs_stat(fs, "/new", &st);
	fs_inode_bmap(fs, st.ino, 0, &p);
	ok(p != L.b_blk0 && p > 8192, "its block %llu is not /b's %llu and lies in group 1",
	   (unsigned long long)p, (unsigned long long)L.b_blk0);
	is_int(fs_unlink(fs, "/b"), -EUCLEAN, "rm of a file in the damaged group is refused");
	ok(strstr(fs_err(fs)->msg, "block bitmap of group 0") != NULL, "naming the bitmap: %s",
	   fs_err(fs)->msg);
	ok(exists(fs, "/b"), "and /b is still there");
	is_int(fs_unmount(fs), 0, "unmount");
	ok(sb_state_on_disk(d) & EXT2_ERROR_FS, "the superblock records the error");
	blk_close(d);
}

/* A free inode bit over a linked inode (the count compensated by another flip) is
 * damage: the new file gets another inode. */
static void inode_bit_lost(void)
{
	struct bdev *d = copy_of(base_dev);
	flip_bit(d, L.ibitmap0, L.ino_a - 1);
	flip_bit(d, L.ibitmap0, L.ipg - 1); /* the last inode of group 0: set, count kept */
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "mounted with /a's inode bit moved");
	int rc = put(fs, "/new", 100);
	struct fs_stat st = {0};
	fs_stat(fs, "/new", &st);
	ok(rc == 0 && st.ino != L.ino_a, "a new file does not take /a's inode %u (got %u, rc %d)",
	   L.ino_a, st.ino, rc);
	struct fs_stat sa;
	ok(fs_stat(fs, "/a", &sa) == 0 && sa.size == 20 * 1024, "/a is intact");
	fs_abandon(fs);
	blk_close(d);
}

/* rm of a file whose block pointer is aimed at the inode table: refused before the
 * name goes, and the inode table block is not freed. */
static void rm_pointer_in_system_zone(void)
{
	struct bdev *d = copy_of(base_dev);
	poke32(d, inode_off(L.ino_b) + I_BLOCK + 4, (uint32_t)L.itable0 + 1);
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "mounted with /b's second pointer on the inode table");
	is_int(fs_unlink(fs, "/b"), -EUCLEAN, "rm is refused");
	ok(strstr(fs_err(fs)->msg, "system zone") != NULL, "naming the system zone: %s",
	   fs_err(fs)->msg);
	ok(exists(fs, "/b"), "the name is still there");
	bool used = false;
	ok(fs_block_in_use(fs, L.itable0 + 1, &used) == 0 && used,
	   "the inode table block is still in use");
	is_int(fs_truncate(fs, "/b", 0), -EUCLEAN, "truncate is refused too");
	struct fs_stat st;
	ok(fs_stat(fs, "/b", &st) == 0 && st.size == 2048, "and /b keeps its size");
	is_int(fs_mkdir(fs, "/e", 0755), 0, "errors=continue: other changes go on");
	fs_abandon(fs);
	blk_close(d);
}

/* A block already free (the bitmap's count kept by another flip), or a block mapped
 * twice: rm refuses before the name goes. */
static void rm_block_free_or_twice(void)
{
	struct bdev *d = copy_of(base_dev);
	flip_bit(d, L.bbitmap0, (uint32_t)(L.a_blk0 - 1));
	flip_bit(d, L.bbitmap0, 8000); /* a free block far away: set, count kept */
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "mounted with /a's first block marked free");
	is_int(fs_unlink(fs, "/a"), -EUCLEAN, "rm of a file with a free block is refused");
	ok(strstr(fs_err(fs)->msg, "marked free") != NULL, "saying so: %s", fs_err(fs)->msg);
	ok(exists(fs, "/a"), "the name is still there");
	fs_abandon(fs);
	blk_close(d);

	d = copy_of(base_dev);
	poke32(d, inode_off(L.ino_a) + I_BLOCK + 4, (uint32_t)L.a_blk0);
	fs = mnt(d, NULL);
	tap_require(fs, "mounted with /a's block 1 = block 0");
	is_int(fs_unlink(fs, "/a"), -EUCLEAN, "rm of a file mapping a block twice is refused");
	ok(strstr(fs_err(fs)->msg, "mapped twice") != NULL, "saying so: %s", fs_err(fs)->msg);
	ok(exists(fs, "/a"), "the name is still there");
	fs_abandon(fs);
	blk_close(d);
}

/* truncate to a size inside a block whose pointer is out of range: refused before
 * the blocks past it are freed (it used to free them, then fail on zeroing the
 * tail of that block). */
static void truncate_into_bad_pointer(void)
{
	struct bdev *d = copy_of(base_dev);
	poke32(d, inode_off(L.ino_a) + I_BLOCK + 4 * 4, 0x60dcbf42);
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "mounted with /a's block 4 out of range");
	is_int(fs_truncate(fs, "/a", 4 * 1024 + 100), -EUCLEAN, "truncate into block 4 is refused");
	ok(strstr(fs_err(fs)->msg, "out of range") != NULL, "saying so: %s", fs_err(fs)->msg);
	bool used = false;
	ok(fs_block_in_use(fs, L.a_ind, &used) == 0 && used, "/a's indirect block is still in use");
	struct fs_stat st;
	ok(fs_stat(fs, "/a", &st) == 0 && st.size == 20 * 1024, "and /a keeps its size");
	fs_abandon(fs);
	blk_close(d);
}

/* errors=remount-ro and errors=panic: the operation that met the damage is dropped,
 * nothing more is written but the error bit, later changes fail. */
static void errors_policy(const char *opt, int later)
{
	struct bdev *d = copy_of(base_dev);
	flip_bit(d, L.bbitmap0, (uint32_t)(L.b_blk0 - 1));
	flip_bit(d, L.bbitmap0, 8000);
	struct fs *fs = mnt(d, opt);
	tap_require(fs, "%s: mounted", opt);
	is_int(fs_unlink(fs, "/b"), -EUCLEAN, "%s: rm meets the damage", opt);
	is_int(fs_mkdir(fs, "/later", 0755), later, "%s: a later change fails", opt);
	struct fs_stat st;
	is_int(fs_stat(fs, "/a", &st), 0, "%s: reads still work", opt);
	ok(sb_state_on_disk(d) & EXT2_ERROR_FS, "%s: the error bit is on disk at once", opt);
	fs_unmount(fs);
	fs = mnt(d, NULL);
	tap_require(fs, "%s: mounts again (journal replayed)", opt);
	ok(exists(fs, "/b") && !exists(fs, "/later"), "%s: /b is there, /later is not", opt);
	fs_abandon(fs);
	blk_close(d);
}

/* Damage met in the middle of a change (no block bitmap is usable, found when the
 * first data block is allocated): errors=continue keeps what the operations before
 * did; remount-ro drops the running transaction, so the file made just before is
 * not there after a replay either. */
static void damage_mid_change(const char *opt, bool kept)
{
	struct bdev *d = copy_of(base_dev);
	flip_bit(d, L.bbitmap0, 8000);
	flip_bit(d, L.bbitmap0 + 8192, 100); /* group 1's block bitmap: its first block */
	struct fs *fs = mnt(d, opt);
	tap_require(fs, "%s: mounted with both block bitmaps damaged", opt);
	struct fs_file *f;
	is_int(fs_open(fs, "/n", FS_O_WRONLY | FS_O_CREAT, 0644, &f), 0, "%s: /n created", opt);
	is_int((int)fs_pwrite(f, "x", 1, 0), -EUCLEAN, "%s: its first block cannot be had", opt);
	fs_close(f);
	fs_unmount(fs);
	fs = mnt(d, NULL);
	tap_require(fs, "%s: mounts again", opt);
	ok(exists(fs, "/n") == kept, "%s: /n %s", opt, kept ? "kept (empty)" : "dropped");
	fs_abandon(fs);
	blk_close(d);
}

static void options(void)
{
	struct fs_mount_opts mo;
	struct bo_err err = {{0}};
	is_int(fs_mount_opts_parse("errors=panic", &mo, &err), 0, "errors=panic parses");
	ok(mo.errors == FS_ERRORS_PANIC, "as FS_ERRORS_PANIC");
	ok(fs_mount_opts_parse("errors=abort", &mo, &err) == -EINVAL, "errors=abort is unknown");
}

int main(void)
{
	tap_require(make_base() == 0, "base image: /a, /b, /d");
	options();
	descriptor_in_system_zone();
	bitmap_count_mismatch();
	inode_bit_lost();
	rm_pointer_in_system_zone();
	rm_block_free_or_twice();
	truncate_into_bad_pointer();
	errors_policy("errors=remount-ro", -EROFS);
	errors_policy("errors=panic", -EIO);
	damage_mid_change("errors=continue", true);
	damage_mid_change("errors=remount-ro", false);
	blk_close(base_dev);
	return tap_done();
}
