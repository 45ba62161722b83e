// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_corrupt.c — corrupted images: seeded byte flips in the superblock, group
 * descriptors, inodes, the root directory, /big's indirect and double indirect
 * blocks, a directory block, an htree root, leaf and interior node; targeted damage
 * (block pointers out of range in an inode and in indirect blocks, a corrupt
 * directory entry, htree entries past the directory or over their limit, a '..'
 * loop). Every operation must fail cleanly (a negative errno, -EUCLEAN/-EIO with a
 * message naming the inode or block) or succeed; never crash, hang or touch memory
 * out of bounds (run under ASan by make check-asan). With metadata_csum a flipped
 * byte in checksummed metadata must be detected. CORRUPT_DEBUG=1 prints every
 * -EUCLEAN/-EIO message the walks meet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fs.h"
#include "blackout/util.h"
#include "fs/dx.h"
#include "blackout/ext2_format.h"
#include "fs/fs_int.h"
#include "tap.h"

#define IMG_BYTES  (4u << 20)
#define DEEP_NAMES 700

struct walk_stats {
	int calls, errors, damage, bad_errno, unnamed;
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
		w->damage++;
		if (getenv("CORRUPT_DEBUG"))
			diag("damage: %s", m);
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
	char names[64][EXT2_NAME_LEN + 1];
	int n;
};

static int wcb(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)ino;
	(void)ft;
	struct wctx *c = ctx;
	if (strcmp(name, ".") && strcmp(name, "..") && c->n < 64)
		snprintf(c->names[c->n++], sizeof(c->names[0]), "%s", name);
	return 0;
}

static int wcb_count(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)name;
	(void)ino;
	(void)ft;
	(*(int *)ctx)++;
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
		char p[800];
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
	/* a two-level htree: long names, all hard links of one file, so that the
	 * index needs more leaves than its root can point at */
	rc |= fs_mkdir(fs, "/deep", 0755);
	rc |= put(fs, "/deep/x", 10, 5);
	for (int i = 0; i < DEEP_NAMES && rc == 0; i++) {
		char n[300];
		snprintf(n, sizeof(n), "/deep/%0200d", i);
		rc |= fs_link(fs, "/deep/x", n);
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

/* Where the pristine image keeps what the targeted damage hits (1 KiB blocks, one
 * group). */
struct layout {
	uint64_t itable, root_blk;
	uint32_t isz;
	uint32_t big, dir, sub, hash, deep; /* inode numbers */
	uint64_t big_ind, big_dind;         /* /big's indirect and double indirect blocks */
	uint64_t dir_blk;                   /* /dir's first block */
	uint64_t hash_blk0, hash_leaf;      /* /hash: htree root, a leaf */
	uint32_t hash_used;                 /* bytes of /hash's root its checksum covers */
	uint64_t deep_node[8];              /* /deep: the htree's interior nodes */
	uint32_t deep_nodes, deep_used;     /* ... and the bytes of the first one in use */
};

static uint64_t phys(struct fs *fs, uint32_t ino, uint64_t lblk)
{
	struct fs_inode in;
	uint64_t p = 0;
	if (fs_iget(fs, ino, &in) < 0 || fs_bmap(fs, &in, lblk, false, &p) < 0)
		return 0;
	return p;
}

static uint32_t ino_of(struct fs *fs, const char *path)
{
	struct fs_stat st;
	return fs_lstat(fs, path, &st) == 0 ? st.ino : 0;
}

static void find_layout(struct bdev *base, struct layout *l)
{
	memset(l, 0, sizeof(*l));
	uint8_t sb[1024], gd[32], in[256], blk[1024];
	rd(base, 1024, sb, sizeof(sb));
	rd(base, 2048, gd, sizeof(gd));
	l->isz = sb_inode_size(sb);
	l->itable = get_le32(gd + GD_INODE_TABLE);
	rd(base, l->itable * 1024 + l->isz, in, l->isz); /* inode 2 */
	l->root_blk = ino_block(in, 0);
	/* the rest through the filesystem itself, on an overlay: base stays unmounted */
	struct bdev *d;
	struct fs *fs;
	struct bo_err err = {{0}};
	tap_require(blk_cow_open(base, &d) == 0 && fs_mount(d, NULL, &fs, &err) == 0,
	            "layout: mount");
	l->big = ino_of(fs, "/big");
	l->dir = ino_of(fs, "/dir");
	l->sub = ino_of(fs, "/dir/sub");
	l->hash = ino_of(fs, "/hash");
	l->deep = ino_of(fs, "/deep");
	struct fs_inode bi;
	if (fs_iget(fs, l->big, &bi) == 0) {
		l->big_ind = ino_block(bi.raw, EXT2_IND_BLOCK);
		l->big_dind = ino_block(bi.raw, EXT2_DIND_BLOCK);
	}
	l->dir_blk = phys(fs, l->dir, 0);
	l->hash_blk0 = phys(fs, l->hash, 0);
	l->hash_leaf = phys(fs, l->hash, 1);
	/* an index block's checksum covers its header and the entries in use, not
	 * the free slots after them */
	rd(d, l->hash_blk0 * 1024, blk, sizeof(blk));
	l->hash_used = DX_ROOT_ENTRIES + get_le16(blk + DX_ROOT_ENTRIES + DX_COUNT) * DX_ENTRY_SIZE;
	uint64_t droot = phys(fs, l->deep, 0);
	rd(d, droot * 1024, blk, sizeof(blk));
	if (blk[DX_ROOT_INDIRECT_LEVELS] == 1) {
		uint32_t count = get_le16(blk + DX_ROOT_ENTRIES + DX_COUNT);
		for (uint32_t i = 0; i < count && l->deep_nodes < 8; i++)
			l->deep_node[l->deep_nodes++] = phys(
			    fs, l->deep,
			    get_le32(blk + DX_ROOT_ENTRIES + i * DX_ENTRY_SIZE + DX_ENTRY_BLOCK));
	}
	rd(d, l->deep_node[0] * 1024, blk, sizeof(blk));
	l->deep_used = DX_NODE_ENTRIES + get_le16(blk + DX_NODE_ENTRIES + DX_COUNT) * DX_ENTRY_SIZE;
	fs_unmount(fs);
	blk_close(d);
	tap_require(l->big_ind && l->big_dind && l->dir_blk && l->hash_blk0 && l->hash_leaf,
	            "layout: /big is double indirect, /dir and /hash have blocks");
	tap_require(l->deep_nodes > 0, "layout: /deep has a two-level htree (%u nodes)",
	            l->deep_nodes);
}

enum sig { SIG_NONE, SIG_DIRBLOCK, SIG_DXROOT };

/* Writes a damaged copy of block blk; with metadata_csum it is first signed again
 * by the filesystem's own checksum code as block of directory ino, so that what
 * catches the damage is the structure check behind the checksum. */
static void put_block(struct bdev *d, uint64_t blk, uint8_t *data, uint32_t ino, enum sig sig)
{
	struct fs *fs;
	struct bo_err err = {{0}};
	if (sig != SIG_NONE && fs_mount(d, NULL, &fs, &err) == 0) {
		struct fs_inode in;
		if (fs_iget(fs, ino, &in) == 0 && fs->csum) {
			if (sig == SIG_DXROOT)
				fs_dx_set_root_csum(fs, &in, data);
			else
				fs_dirblock_set_csum(fs, &in, data);
		}
		fs_unmount(fs);
	}
	wr(d, blk * 1024, data, 1024);
}

/* The message of the last error names the inode and the block (by number). */
static int names(struct fs *fs, const char *tag, const char *what, uint32_t ino, uint64_t blk)
{
	const char *m = fs_err(fs)->msg;
	char i[32], b[32];
	snprintf(i, sizeof(i), "inode %u", ino);
	snprintf(b, sizeof(b), " %llu", (unsigned long long)blk);
	int yes = strstr(m, i) && strstr(m, b);
	ok(yes, "%s: %s: the message names inode %u and block %llu: %s", tag, what, ino,
	   (unsigned long long)blk, m);
	return yes;
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
		/* ordinary errors do not count: modify() always meets some (ENOTEMPTY) */
		int before = w->damage;
		walk(fs, w, "/", 0);
		modify(fs, w);
		walk(fs, w, "/", 0);
		if (w->damage > before)
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

/* Entries of /big's indirect and double indirect blocks pointing outside the
 * filesystem: ind_get's range check, naming the inode and the indirect block. */
static void damaged_maps(const char *tag, struct bdev *base, const struct layout *l)
{
	static char buf[400000];
	const struct {
		const char *what;
		uint64_t blk, off; /* the damaged block; a file offset whose map reads it */
	} cases[] = {{"indirect block", l->big_ind, 12 * 1024},
	             {"double indirect block", l->big_dind, (12 + 256) * 1024}};
	for (int k = 0; k < 2; k++) {
		struct bdev *d;
		tap_require(blk_cow_open(base, &d) == 0, "%s: overlay", tag);
		uint8_t blk[1024];
		rd(d, cases[k].blk * 1024, blk, sizeof(blk));
		put_le32(blk + 4 * 0, 0xfffffff0u);
		put_block(d, cases[k].blk, blk, 0, SIG_NONE);
		struct fs *fs;
		struct bo_err err = {{0}};
		tap_require(fs_mount(d, NULL, &fs, &err) == 0, "%s: mount", tag);
		struct fs_file *f;
		is_int(fs_open(fs, "/big", FS_O_RDONLY, 0, &f), 0, "%s: open /big", tag);
		is_int(fs_pread(f, buf, 1024, cases[k].off), -EUCLEAN,
		       "%s: %s entry out of range is -EUCLEAN", tag, cases[k].what);
		names(fs, tag, cases[k].what, l->big, cases[k].blk);
		is_int(fs_pread(f, buf, 1024, 0), 1024, "%s: %s: the direct blocks still read", tag,
		       cases[k].what);
		fs_close(f);
		is_int(fs_truncate(fs, "/big", 0), -EUCLEAN,
		       "%s: %s: freeing the map fails cleanly", tag, cases[k].what);
		ok(strstr(fs_err(fs)->msg, "inode") != NULL, "%s: ... naming the inode: %s", tag,
		   fs_err(fs)->msg);
		fs_abandon(fs);
		blk_close(d);
	}
}

/* A corrupt entry in /dir's block, a /hash htree root entry pointing past the
 * directory, /deep's interior htree nodes with a count over their limit. */
static void damaged_dirs(const char *tag, struct bdev *base, const struct layout *l)
{
	struct bdev *d;
	struct fs *fs;
	struct fs_stat st;
	uint8_t blk[1024];

	tap_require(blk_cow_open(base, &d) == 0, "%s: overlay", tag);
	rd(d, l->dir_blk * 1024, blk, sizeof(blk));
	/* '.', '..', then the first name: its rec_len is no multiple of 4 */
	uint32_t off = de_rec_len(blk);
	off += de_rec_len(blk + off);
	put_le16(blk + off + 4, 6);
	put_block(d, l->dir_blk, blk, l->dir, SIG_DIRBLOCK);
	struct bo_err err = {{0}};
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "%s: mount", tag);
	is_int(fs_stat(fs, "/dir/sub", &st), -EUCLEAN, "%s: corrupt directory entry: lookup", tag);
	names(fs, tag, "directory block", l->dir, 0);
	is_int(fs_readdir(fs, "/dir", wcb_count, &(int){0}), -EUCLEAN,
	       "%s: corrupt directory entry: readdir", tag);
	is_int(fs_mkdir(fs, "/dir/new", 0755), -EUCLEAN, "%s: corrupt directory entry: insert",
	       tag);
	fs_abandon(fs);
	blk_close(d);

	tap_require(blk_cow_open(base, &d) == 0, "%s: overlay", tag);
	rd(d, l->hash_blk0 * 1024, blk, sizeof(blk));
	ok(get_le16(blk + DX_ROOT_ENTRIES + DX_COUNT) >= 2, "%s: /hash is indexed", tag);
	put_le32(blk + DX_ROOT_ENTRIES + DX_ENTRY_SIZE + DX_ENTRY_BLOCK, 0x7fff);
	put_block(d, l->hash_blk0, blk, l->hash, SIG_DXROOT);
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "%s: mount", tag);
	is_int(fs_stat(fs, "/hash/name-17", &st), -EUCLEAN, "%s: htree root entry past the end",
	       tag);
	names(fs, tag, "htree root", l->hash, 0);
	is_int(put(fs, "/hash/another", 10, 1), -EUCLEAN, "%s: htree root: insert fails", tag);
	fs_abandon(fs);
	blk_close(d);

	tap_require(blk_cow_open(base, &d) == 0, "%s: overlay", tag);
	for (uint32_t i = 0; i < l->deep_nodes; i++) {
		rd(d, l->deep_node[i] * 1024, blk, sizeof(blk));
		uint16_t limit = get_le16(blk + DX_NODE_ENTRIES + DX_LIMIT);
		put_le16(blk + DX_NODE_ENTRIES + DX_COUNT, (uint16_t)(limit + 1));
		put_block(d, l->deep_node[i], blk, 0, SIG_NONE);
	}
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "%s: mount", tag);
	char n[300];
	snprintf(n, sizeof(n), "/deep/%0200d", 77);
	is_int(fs_stat(fs, n, &st), -EUCLEAN, "%s: htree node count over its limit", tag);
	ok(strstr(fs_err(fs)->msg, "inode") && strstr(fs_err(fs)->msg, "htree block"),
	   "%s: ... the message names the directory inode and htree block: %s", tag,
	   fs_err(fs)->msg);
	is_int(fs_link(fs, "/deep/x", "/deep/y"), -EUCLEAN, "%s: htree node: insert fails", tag);
	fs_abandon(fs);
	blk_close(d);
}

/* A real loop on disk: /dir's '..' names /dir/sub, whose '..' names /dir, so going
 * up from /dir/sub never reaches the root. Moving a directory under /dir/sub must
 * see it (is_ancestor) rather than loop or move. */
static void dir_loop(const char *tag, struct bdev *base, const struct layout *l)
{
	struct bdev *d;
	tap_require(blk_cow_open(base, &d) == 0, "%s: overlay", tag);
	uint8_t blk[1024];
	rd(d, l->dir_blk * 1024, blk, sizeof(blk));
	uint32_t dotdot = de_rec_len(blk);
	tap_require(de_name_len(blk + dotdot) == 2 && de_inode(blk + dotdot) == EXT2_ROOT_INO,
	            "%s: /dir's second entry is '..'", tag);
	put_le32(blk + dotdot, l->sub);
	put_block(d, l->dir_blk, blk, l->dir, SIG_DIRBLOCK);
	struct fs *fs;
	struct bo_err err = {{0}};
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "%s: mount with a loop", tag);
	struct walk_stats w = {0};
	walk(fs, &w, "/", 0);
	is_int(w.bad_errno, 0, "%s: directory loop: a walk ends with POSIX errnos", tag);
	is_int(fs_rename(fs, "/hash", "/dir/sub/hash"), -EUCLEAN,
	       "%s: moving a directory under the loop is -EUCLEAN", tag);
	char want[64];
	snprintf(want, sizeof(want), "directory loop above inode");
	ok(strstr(fs_err(fs)->msg, want) != NULL, "%s: ... and says so: %s", tag, fs_err(fs)->msg);
	struct fs_stat st;
	is_int(fs_stat(fs, "/hash", &st), 0, "%s: the directory did not move", tag);
	is_int(fs_stat(fs, "/dir/sub/../../f", &st), 0,
	       "%s: /dir/sub/../../f is /dir/sub/f: a walk follows what is on disk", tag);
	is_int(fs_rename(fs, "/small", "/dir/sub/small"), 0,
	       "%s: a file may still move there (no ancestry to check)", tag);
	fs_abandon(fs);
	blk_close(d);
}

static void targeted(const char *tag, struct bdev *base, const struct layout *lp, bool csum)
{
	const struct layout l = *lp;
	struct bdev *d;
	struct fs *fs;
	struct bo_err err = {{0}};

	/* a block pointer out of range in /big's inode */
	tap_require(blk_cow_open(base, &d) == 0, "%s: overlay", tag);
	uint32_t big = l.big;
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
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	mo.errors = FS_ERRORS_RO;
	tap_require(fs_mount(d, &mo, &fs, &err) == 0, "%s: mount errors=remount-ro", tag);
	is_int(fs_unlink(fs, "/big"), -EUCLEAN, "%s: damage found while changing", tag);
	is_int(fs_mkdir(fs, "/after", 0755), -EROFS, "%s: errors=remount-ro stops writes", tag);
	fs_abandon(fs);
	blk_close(d);

	damaged_maps(tag, base, &l);
	damaged_dirs(tag, base, &l);
	dir_loop(tag, base, &l);
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
	/* metadata past the journal, block by block; only checksums can catch every
	 * flip (an indirect block has none, and a flipped name is still a name) */
	region(tag, base, "/big's indirect block", l.big_ind * 1024, l.big_ind * 1024 + 1024, 30, 2,
	       false);
	region(tag, base, "/big's double indirect block", l.big_dind * 1024,
	       l.big_dind * 1024 + 1024, 30, 2, false);
	region(tag, base, "/dir's block", l.dir_blk * 1024, l.dir_blk * 1024 + 1024, 30, 1, csum);
	region(tag, base, "/hash's htree root (in use)", l.hash_blk0 * 1024,
	       l.hash_blk0 * 1024 + l.hash_used, 30, 1, csum);
	region(tag, base, "a /hash htree leaf", l.hash_leaf * 1024, l.hash_leaf * 1024 + 1024, 30,
	       1, csum);
	region(tag, base, "a /deep htree node (in use)", l.deep_node[0] * 1024,
	       l.deep_node[0] * 1024 + l.deep_used, 30, 1, csum);
	targeted(tag, base, &l, csum);
	blk_close(base);
}

int main(void)
{
	run("plain", false);
	run("csum", true);
	return tap_done();
}
