/* test_fs_corrupt.c — corrupted images: seeded byte flips in the superblock, group
 * descriptors, bitmaps, inodes, directory and indirect blocks, directory loops and
 * out-of-range block pointers. Every operation must fail cleanly (a negative errno,
 * -EUCLEAN/-EIO with a message naming the inode or block) or succeed; never crash,
 * hang or touch memory out of bounds (run under ASan by make check-asan). With
 * metadata_csum a flipped byte in checksummed metadata must be detected. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fs.h"
#include "blackout/util.h"
#include "fs/format.h"
#include "tap.h"

#define IMG_BYTES (4u << 20)

struct walk_stats {
	int calls, errors, bad_errno, unnamed;
};

static void note(struct walk_stats *w, struct fs *fs, int rc)
{
	w->calls++;
	if (rc >= 0)
		return;
	w->errors++;
	switch (-rc) {
	case EUCLEAN:
	case EIO: {
		const char *m = fs_err(fs)->msg;
		if (!strstr(m, "inode") && !strstr(m, "block") && !strstr(m, "group") &&
		    !strstr(m, "superblock") && !strstr(m, "orphan") && !strstr(m, "directory")) {
			if (w->unnamed++ < 3)
				diag("unnamed error: %s", m);
		}
		break;
	}
	case ENOENT:
	case ENOTDIR:
	case EISDIR:
	case EEXIST:
	case ENOTEMPTY:
	case ELOOP:
	case EINVAL:
	case ENOSPC:
	case EFBIG:
	case ENAMETOOLONG:
	case EMLINK:
	case EOPNOTSUPP:
	case EROFS:
	case EPERM:
	case EBUSY: break;
	default:
		if (w->bad_errno++ < 3)
			diag("unexpected errno %d", rc);
	}
}

struct wctx {
	struct fs *fs;
	struct walk_stats *w;
	char path[512];
	int depth;
	char names[64][64];
	int n;
};

static int wcb(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)ino;
	(void)ft;
	struct wctx *c = ctx;
	if (strcmp(name, ".") && strcmp(name, "..") && c->n < 64)
		snprintf(c->names[c->n++], 64, "%s", name);
	return 0;
}

static void walk(struct fs *fs, struct walk_stats *w, const char *path, int depth)
{
	if (depth > 12)
		return;
	struct wctx *c = calloc(1, sizeof(*c));
	c->fs = fs;
	c->w = w;
	note(w, fs, fs_readdir(fs, path, wcb, c));
	for (int i = 0; i < c->n; i++) {
		char p[600];
		snprintf(p, sizeof(p), "%s/%s", strcmp(path, "/") ? path : "", c->names[i]);
		struct fs_stat st;
		int rc = fs_lstat(fs, p, &st);
		note(w, fs, rc);
		if (rc < 0)
			continue;
		if ((st.mode & 0xF000) == 0x4000) {
			walk(fs, w, p, depth + 1);
		} else if ((st.mode & 0xF000) == 0xA000) {
			char t[4096];
			ssize_t n = fs_readlink(fs, p, t, sizeof(t));
			note(w, fs, n < 0 ? (int)n : 0);
		} else {
			struct fs_file *f;
			rc = fs_open(fs, p, FS_O_RDONLY, 0, &f);
			note(w, fs, rc);
			if (rc == 0) {
				static char buf[65536];
				for (uint64_t off = 0; off < st.size && off < (1u << 20);
				     off += sizeof(buf)) {
					ssize_t n = fs_pread(f, buf, sizeof(buf), off);
					note(w, fs, n < 0 ? (int)n : 0);
					if (n <= 0)
						break;
				}
				fs_close(f);
			}
		}
	}
	free(c);
}

static void modify(struct fs *fs, struct walk_stats *w)
{
	struct fs_file *f;
	int rc = fs_open(fs, "/newfile", FS_O_RDWR | FS_O_CREAT, 0644, &f);
	note(w, fs, rc);
	if (rc == 0) {
		static char buf[20000];
		memset(buf, 'q', sizeof(buf));
		ssize_t n = fs_pwrite(f, buf, sizeof(buf), 0);
		note(w, fs, n < 0 ? (int)n : 0);
		fs_close(f);
	}
	note(w, fs, fs_mkdir(fs, "/dir/newdir", 0755));
	note(w, fs, fs_rename(fs, "/small", "/dir/moved"));
	note(w, fs, fs_unlink(fs, "/big"));
	note(w, fs, fs_rmdir(fs, "/dir/sub"));
	note(w, fs, fs_truncate(fs, "/mid", 10));
	note(w, fs, fs_link(fs, "/mid", "/hash/linked"));
	note(w, fs, fs_unlink(fs, "/hash/name-17"));
}

static int put(struct fs *fs, const char *path, size_t len, uint64_t seed)
{
	char *buf = malloc(len);
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)bo_rng_next(&r);
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT, 0644, &f);
	if (rc == 0) {
		rc = fs_pwrite(f, buf, len, 0) == (ssize_t)len ? 0 : -EIO;
		fs_close(f);
	}
	free(buf);
	return rc;
}

static struct bdev *pristine(bool csum)
{
	struct bdev *d;
	if (blk_mem_open(512, IMG_BYTES / 512, &d) < 0)
		return NULL;
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 1024;
	o.metadata_csum = csum;
	o.journal_blocks = 1024;
	struct bo_err err = {{0}};
	struct fs *fs;
	if (fs_mkfs(d, &o, &err) < 0 || fs_mount(d, NULL, &fs, &err) < 0) {
		diag("pristine: %s", err.msg);
		return NULL;
	}
	int rc = 0;
	rc |= fs_mkdir(fs, "/dir", 0755);
	rc |= fs_mkdir(fs, "/dir/sub", 0755);
	rc |= fs_mkdir(fs, "/hash", 0755);
	rc |= put(fs, "/small", 100, 1);
	rc |= put(fs, "/mid", 5000, 2);
	rc |= put(fs, "/big", 400000, 3); /* double indirect on 1 KiB blocks */
	rc |= put(fs, "/dir/sub/f", 3000, 4);
	rc |= fs_symlink(fs, "/small", "/fast");
	rc |= fs_symlink(
	    fs, "/a/very/long/target/that/does/not/fit/in/the/inode/itself/so/it/is/slow", "/slow");
	rc |= fs_link(fs, "/mid", "/dir/hard");
	for (int i = 0; i < 200 && rc == 0; i++) {
		char n[64];
		snprintf(n, sizeof(n), "/hash/name-%d", i);
		rc |= put(fs, n, 10, (uint64_t)i);
	}
	rc |= fs_unmount(fs);
	if (rc) {
		diag("pristine: populate failed");
		return NULL;
	}
	return d;
}

static int rd(struct bdev *d, uint64_t off, void *buf, size_t len)
{
	uint64_t s = off & ~511ull, e = (off + len + 511) & ~511ull;
	uint8_t *tmp = malloc(e - s);
	int rc = blk_pread(d, s, e - s, tmp);
	memcpy(buf, tmp + (off - s), len);
	free(tmp);
	return rc;
}

static int wr(struct bdev *d, uint64_t off, const void *buf, size_t len)
{
	uint64_t s = off & ~511ull, e = (off + len + 511) & ~511ull;
	uint8_t *tmp = malloc(e - s);
	int rc = blk_pread(d, s, e - s, tmp);
	memcpy(tmp + (off - s), buf, len);
	if (rc == 0)
		rc = blk_pwrite(d, s, e - s, tmp, 0);
	free(tmp);
	return rc;
}

struct layout {
	uint64_t itable, root_blk, hash_blk0, big_ind;
	uint32_t isz;
};

static void find_layout(struct bdev *d, struct layout *l)
{
	uint8_t sb[1024], gd[32], in[256];
	rd(d, 1024, sb, sizeof(sb));
	rd(d, 2048, gd, sizeof(gd));
	l->isz = sb_inode_size(sb);
	l->itable = get_le32(gd + GD_INODE_TABLE);
	rd(d, l->itable * 1024 + l->isz, in, l->isz); /* inode 2 */
	l->root_blk = ino_block(in, 0);
}

/* Flip `n` random bytes in [lo, hi) of a copy of base, run everything on it. */
static void trial(struct bdev *base, uint64_t lo, uint64_t hi, int n, uint64_t seed,
                  struct walk_stats *w, int *mounted, int *caught)
{
	struct bdev *d;
	if (blk_cow_open(base, &d) < 0)
		return;
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	for (int i = 0; i < n; i++) {
		uint64_t off = lo + bo_rng_below(&r, hi - lo);
		uint8_t b;
		rd(d, off, &b, 1);
		b ^= (uint8_t)(1 + bo_rng_below(&r, 255));
		wr(d, off, &b, 1);
	}
	struct fs *fs;
	struct bo_err err = {{0}};
	int rc = fs_mount(d, NULL, &fs, &err);
	if (rc == 0) {
		(*mounted)++;
		int before = w->errors;
		walk(fs, w, "/", 0);
		modify(fs, w);
		walk(fs, w, "/", 0);
		if (w->errors > before)
			(*caught)++;
		fs_unmount(fs);
	} else {
		(*caught)++;
		w->calls++;
		if (rc != -EUCLEAN && rc != -EIO && rc != -EINVAL && rc != -EOPNOTSUPP &&
		    rc != -EROFS) {
			if (w->bad_errno++ < 3)
				diag("mount: unexpected errno %d (%s)", rc, err.msg);
		}
	}
	blk_close(d);
}

static void region(const char *tag, struct bdev *base, const char *what, uint64_t lo, uint64_t hi,
                   int trials, int flips, bool must_catch)
{
	struct walk_stats w = {0};
	int mounted = 0, caught = 0;
	for (int t = 0; t < trials; t++)
		trial(base, lo, hi, flips, (uint64_t)t * 7919 + lo, &w, &mounted, &caught);
	is_int(w.bad_errno, 0, "%s: %s flips: only POSIX errnos (%d calls, %d errors)", tag, what,
	       w.calls, w.errors);
	is_int(w.unnamed, 0, "%s: %s flips: every -EUCLEAN/-EIO names what is damaged", tag, what);
	if (must_catch)
		is_int(caught, trials, "%s: %s flips detected in every trial", tag, what);
}

static void targeted(const char *tag, struct bdev *base, bool csum)
{
	struct layout l;
	find_layout(base, &l);
	struct bdev *d;
	struct fs *fs;
	struct bo_err err = {{0}};
	struct fs_stat st;

	/* a block pointer out of range in /big's inode */
	tap_require(blk_cow_open(base, &d) == 0, "%s: overlay", tag);
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "%s: mount", tag);
	fs_stat(fs, "/big", &st);
	uint32_t big = st.ino;
	fs_unmount(fs);
	uint64_t ioff = l.itable * 1024 + (uint64_t)(big - 1) * l.isz;
	uint8_t in[256];
	rd(d, ioff, in, l.isz);
	put_le32(in + I_BLOCK + 4 * 5, 0xfffffff0u);
	if (csum) {
		/* keep the inode checksum right so the range check itself is tested */
		uint8_t zero[2] = {0, 0}, le[4];
		uint32_t seed;
		uint8_t sb[1024];
		rd(d, 1024, sb, sizeof(sb));
		seed = crc32c_raw(~0u, sb + SB_UUID, 16);
		put_le32(le, big);
		uint32_t c = crc32c_raw(seed, le, 4);
		c = crc32c_raw(c, in + I_GENERATION, 4);
		c = crc32c_raw(c, in, I_CHECKSUM_LO);
		c = crc32c_raw(c, zero, 2);
		c = crc32c_raw(c, in + I_CHECKSUM_LO + 2, 128 - I_CHECKSUM_LO - 2);
		c = crc32c_raw(c, in + 128, 2);
		c = crc32c_raw(c, zero, 2);
		c = crc32c_raw(c, in + 132, l.isz - 132);
		put_le16(in + I_CHECKSUM_LO, (uint16_t)c);
		put_le16(in + I_CHECKSUM_HI, (uint16_t)(c >> 16));
	}
	wr(d, ioff, in, l.isz);
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "%s: mount with a bad pointer", tag);
	struct fs_file *f;
	static char buf[400000];
	is_int(fs_open(fs, "/big", FS_O_RDONLY, 0, &f), 0, "%s: open /big", tag);
	ssize_t n = fs_pread(f, buf, sizeof(buf), 0);
	is_int(n, -EUCLEAN, "%s: out-of-range block pointer is -EUCLEAN", tag);
	char want[64];
	snprintf(want, sizeof(want), "inode %u", big);
	ok(strstr(fs_err(fs)->msg, want) != NULL, "%s: message names the inode: %s", tag,
	   fs_err(fs)->msg);
	fs_close(f);
	is_int(fs_unlink(fs, "/big"), -EUCLEAN, "%s: freeing it fails cleanly too", tag);
	fs_abandon(fs);
	blk_close(d);

	/* a directory loop: /dir/sub's '..'-like entry turned into a link to /dir */
	tap_require(blk_cow_open(base, &d) == 0, "%s: overlay", tag);
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "%s: mount", tag);
	struct fs_stat sd, ss;
	fs_stat(fs, "/dir", &sd);
	fs_stat(fs, "/dir/sub", &ss);
	fs_unmount(fs);
	/* point /dir's entry 'sub' at /dir itself */
	uint8_t dirin[256], blk[1024];
	rd(d, l.itable * 1024 + (uint64_t)(sd.ino - 1) * l.isz, dirin, l.isz);
	uint64_t db = ino_block(dirin, 0);
	rd(d, db * 1024, blk, 1024);
	for (uint32_t off = 0; off < 1024 - 12 && de_rec_len(blk + off) >= 12;
	     off += de_rec_len(blk + off))
		if (de_inode(blk + off) == ss.ino)
			put_le32(blk + off, sd.ino);
	wr(d, db * 1024, blk, 1024);
	if (fs_mount(d, NULL, &fs, &err) == 0) {
		struct walk_stats w = {0};
		walk(fs, &w, "/", 0);
		is_int(w.bad_errno, 0, "%s: directory loop: walk ends with POSIX errnos", tag);
		int rc = fs_rename(fs, "/dir", "/dir/sub/x");
		ok(rc < 0, "%s: rename into a looped directory fails (%d)", tag, rc);
		fs_abandon(fs);
	} else {
		ok(1, "%s: directory loop refused at mount", tag);
		ok(1, "%s: (nothing to rename)", tag);
	}
	blk_close(d);
}

static void run(const char *tag, bool csum)
{
	struct bdev *base = pristine(csum);
	tap_require(base, "%s: pristine image", tag);
	struct layout l;
	find_layout(base, &l);
	region(tag, base, "superblock", 1024, 1024 + 256, 40, 1, csum);
	region(tag, base, "group descriptor", 2048, 2048 + 32, 40, 1, csum);
	region(tag, base, "inode table (first inodes)", l.itable * 1024,
	       l.itable * 1024 + 16 * l.isz, 60, 2, false);
	region(tag, base, "root directory block", l.root_blk * 1024, l.root_blk * 1024 + 1024, 40,
	       1, csum);
	region(tag, base, "everything in use", 0, 1200 * 1024, 150, 8, false);
	targeted(tag, base, csum);
	blk_close(base);
}

int main(void)
{
	run("plain", false);
	run("csum", true);
	return tap_done();
}
