// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_workloads.c — the scripted workloads on every block size, with
 * and without metadata_csum: 10,000 files in one (htree) directory, a 6-level tree,
 * 5,000 random renames/unlinks/links (and writes) checked against a model of names,
 * inodes, link counts and bytes, a sparse file whose end is triple-indirect (6 GiB on
 * 4 KiB blocks), a dense triple-indirect file on 1 KiB blocks, fill to ENOSPC then
 * delete. After unmount e2fsck -fn must be silent and debugfs must read back what
 * was written: cat/dump of the files, bmap of sampled blocks of the big ones. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/fs.h"
#include "blackout/util.h"
#include "fs/fs_int.h"
#include "tap.h"
#include "test_fs_util.h"

static struct fs *mnt(struct bdev *d)
{
	struct fs *fs = NULL;
	struct bo_err err = {{0}};
	int rc = fs_mount(d, NULL, &fs, &err);
	if (rc < 0)
		diag("mount: %s", bo_errstr(&err, rc));
	return fs;
}

static int put(struct fs *fs, const char *path, const void *buf, size_t len, uint64_t off)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT, 0644, &f);
	if (rc < 0)
		return rc;
	ssize_t n = fs_pwrite(f, buf, len, off);
	fs_close(f);
	return n == (ssize_t)len ? 0 : n < 0 ? (int)n : -EIO;
}

static int check(struct fs *fs, const char *path, const void *want, size_t len, uint64_t off)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDONLY, 0, &f);
	if (rc < 0)
		return rc;
	char *got = malloc(len);
	ssize_t n = fs_pread(f, got, len, off);
	fs_close(f);
	int same = n == (ssize_t)len && !memcmp(got, want, len);
	free(got);
	return same ? 0 : -EIO;
}

static void content(char *buf, size_t len, uint64_t seed)
{
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)bo_rng_next(&r);
}

struct cfg {
	const char *tag;
	uint32_t bs;
	bool csum;
	uint32_t isz;
};

static void many_files(const struct cfg *c, struct fs *fs, int nfiles)
{
	int bad = 0;
	char name[64], buf[32];
	is_int(fs_mkdir(fs, "/many", 0755), 0, "%s: mkdir /many", c->tag);
	for (int i = 0; i < nfiles && !bad; i++) {
		snprintf(name, sizeof(name), "/many/file-%06d-with-a-longer-name", i);
		snprintf(buf, sizeof(buf), "%d", i);
		if (put(fs, name, buf, strlen(buf), 0) < 0)
			bad = i + 1;
	}
	is_int(bad, 0, "%s: created %d files in one directory", c->tag, nfiles);
	for (int i = 0; i < nfiles && !bad; i += 7) {
		snprintf(name, sizeof(name), "/many/file-%06d-with-a-longer-name", i);
		snprintf(buf, sizeof(buf), "%d", i);
		if (check(fs, name, buf, strlen(buf), 0) < 0)
			bad = i + 1;
	}
	is_int(bad, 0, "%s: every 7th file looks up and reads back", c->tag);
	/* delete a third of them, the htree keeps working */
	for (int i = 0; i < nfiles && !bad; i += 3) {
		snprintf(name, sizeof(name), "/many/file-%06d-with-a-longer-name", i);
		if (fs_unlink(fs, name) < 0)
			bad = i + 1;
	}
	is_int(bad, 0, "%s: deleted every third file", c->tag);
	struct fs_stat st;
	snprintf(name, sizeof(name), "/many/file-%06d-with-a-longer-name", 3);
	is_int(fs_stat(fs, name, &st), -ENOENT, "%s: a deleted one is gone", c->tag);
	snprintf(name, sizeof(name), "/many/file-%06d-with-a-longer-name", 4);
	is_int(fs_stat(fs, name, &st), 0, "%s: a kept one is there", c->tag);
}

static void deep_tree(const struct cfg *c, struct fs *fs)
{
	char path[256] = "";
	int bad = 0;
	for (int l = 0; l < 6 && !bad; l++) {
		size_t pl = strlen(path);
		snprintf(path + pl, sizeof(path) - pl, "/level%d", l);
		if (fs_mkdir(fs, path, 0755) < 0)
			bad = 1;
		for (int k = 0; k < 3 && !bad; k++) {
			char f[300];
			snprintf(f, sizeof(f), "%s/f%d", path, k);
			if (put(fs, f, f, strlen(f), 0) < 0)
				bad = 1;
		}
	}
	is_int(bad, 0, "%s: 6-level tree", c->tag);
	char f[300];
	snprintf(f, sizeof(f), "%s/f2", path);
	is_int(check(fs, f, f, strlen(f), 0), 0, "%s: deepest file reads back", c->tag);
}

/* The churn's reference model: three directories of 200 possible names, each name
 * empty or naming a file; a file has the inode number blackout gave it, a link count
 * and its bytes. */
#define CH_DIRS  3
#define CH_NAMES 200
#define CH_MAXF  8192
#define CH_CAP   8192
struct ch_file {
	uint32_t ino;
	int nlink;
	size_t size;
	unsigned char data[CH_CAP];
};
struct churn_model {
	int slot[CH_DIRS][CH_NAMES]; /* index into f, -1 = no such name */
	struct ch_file *f;
	int nf, renames, unlinks, links, writes;
};
static const char *ch_dirs[CH_DIRS] = {"/churn", "/churn/a", "/churn/b"};

static void ch_unref(struct churn_model *m, int fi)
{
	if (--m->f[fi].nlink == 0)
		m->f[fi].ino = 0;
}

/* 5,000 renames, unlinks and links among the names (plus writes, not counted), each
 * result checked against the model as it happens. */
static struct churn_model *churn(const struct cfg *c, struct fs *fs, int ops, uint64_t seed)
{
	struct churn_model *m = calloc(1, sizeof(*m));
	m->f = calloc(CH_MAXF, sizeof(*m->f));
	memset(m->slot, -1, sizeof(m->slot));
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	fs_mkdir(fs, "/churn", 0755);
	fs_mkdir(fs, "/churn/a", 0755);
	fs_mkdir(fs, "/churn/b", 0755);
	int wrong = 0;
	static unsigned char buf[4096];
	while (m->renames + m->unlinks + m->links < ops && !wrong) {
		int d1 = (int)bo_rng_below(&r, CH_DIRS), n1 = (int)bo_rng_below(&r, CH_NAMES);
		int d2 = (int)bo_rng_below(&r, CH_DIRS), n2 = (int)bo_rng_below(&r, CH_NAMES);
		char p1[64], p2[64];
		snprintf(p1, sizeof(p1), "%s/n%d", ch_dirs[d1], n1);
		snprintf(p2, sizeof(p2), "%s/n%d", ch_dirs[d2], n2);
		int *s1 = &m->slot[d1][n1], *s2 = &m->slot[d2][n2];
		int rc, want;
		switch (bo_rng_below(&r, 4)) {
		case 0: {
			size_t len = 1 + bo_rng_below(&r, 3000), off = bo_rng_below(&r, 4000);
			for (size_t i = 0; i < len; i++)
				buf[i] = (unsigned char)bo_rng_next(&r);
			rc = put(fs, p1, buf, len, off);
			want = 0;
			if (rc == 0 && *s1 < 0) {
				if (m->nf == CH_MAXF) {
					diag("%s: the churn model is full", c->tag);
					wrong++;
					break;
				}
				struct fs_stat st;
				*s1 = m->nf++;
				m->f[*s1].nlink = 1;
				m->f[*s1].ino = fs_stat(fs, p1, &st) == 0 ? st.ino : 0;
				for (int k = 0; k < *s1; k++)
					if (m->f[k].nlink && m->f[k].ino == m->f[*s1].ino) {
						diag("%s: %s got inode %u, still used", c->tag, p1,
						     m->f[k].ino);
						wrong++;
					}
			}
			if (rc == 0) {
				struct ch_file *f = &m->f[*s1];
				memcpy(f->data + off, buf, len);
				if (off + len > f->size)
					f->size = off + len;
			}
			m->writes++;
			break;
		}
		case 1:
			rc = fs_rename(fs, p1, p2);
			want = *s1 < 0 ? -ENOENT : 0;
			if (want == 0 && *s2 != *s1) {
				if (*s2 >= 0)
					ch_unref(m, *s2);
				*s2 = *s1;
				*s1 = -1;
			}
			m->renames++;
			break;
		case 2:
			rc = fs_unlink(fs, p1);
			want = *s1 < 0 ? -ENOENT : 0;
			if (want == 0) {
				ch_unref(m, *s1);
				*s1 = -1;
			}
			m->unlinks++;
			break;
		default:
			rc = fs_link(fs, p1, p2);
			want = *s1 < 0 ? -ENOENT : *s2 >= 0 ? -EEXIST : 0;
			if (want == 0) {
				*s2 = *s1;
				m->f[*s1].nlink++;
			}
			m->links++;
			break;
		}
		if (rc != want) {
			diag("%s: churn op on %s, %s: %d, the model says %d", c->tag, p1, p2, rc,
			     want);
			wrong++;
		}
	}
	is_int(wrong, 0, "%s: %d renames, %d unlinks, %d links (and %d writes) as the model says",
	       c->tag, m->renames, m->unlinks, m->links, m->writes);
	return m;
}

static int count_cb(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)name;
	(void)ino;
	(void)ft;
	(*(int *)ctx)++;
	return 0;
}

/* Every name of the model is there with its file's inode, link count and bytes, and
 * no other name is. */
static void churn_compare(const struct cfg *c, struct fs *fs, const struct churn_model *m)
{
	int wrong = 0, names = 0;
	for (int d = 0; d < CH_DIRS; d++) {
		int here = 0, listed = 0;
		for (int n = 0; n < CH_NAMES; n++) {
			int fi = m->slot[d][n];
			if (fi < 0)
				continue;
			here++;
			const struct ch_file *f = &m->f[fi];
			char p[64];
			snprintf(p, sizeof(p), "%s/n%d", ch_dirs[d], n);
			struct fs_stat st;
			if (fs_stat(fs, p, &st) < 0 || st.ino != f->ino ||
			    st.nlink != (uint16_t)f->nlink || st.size != f->size ||
			    check(fs, p, f->data, f->size, 0) < 0) {
				if (wrong++ < 5)
					diag("%s: %s: inode %u links %u size %llu, model %u %d %zu",
					     c->tag, p, st.ino, st.nlink,
					     (unsigned long long)st.size, f->ino, f->nlink,
					     f->size);
			}
		}
		fs_readdir(fs, ch_dirs[d], count_cb, &listed);
		/* '.', '..' and, in /churn, the subdirectories a and b */
		if (listed != here + 2 + (d == 0 ? 2 : 0)) {
			diag("%s: %s lists %d entries, the model %d names", c->tag, ch_dirs[d],
			     listed, here);
			wrong++;
		}
		names += here;
	}
	is_int(wrong, 0, "%s: the %d churned names have the model's inodes, links and bytes",
	       c->tag, names);
}

/* The same through e2fsprogs after unmount: one debugfs run dumps every churned
 * file and stats it; bytes, inode numbers and link counts must be the model's. */
static void churn_debugfs(const struct cfg *c, const char *img, const struct churn_model *m)
{
	size_t cap = 4 << 20, sl = 0;
	char *script = malloc(cap), *out = malloc(cap);
	for (int d = 0; d < CH_DIRS; d++)
		for (int n = 0; n < CH_NAMES; n++)
			if (m->slot[d][n] >= 0)
				sl += (size_t)snprintf(script + sl, cap - sl,
				                       "dump %s/n%d %s/dump-%d-%d\nstat %s/n%d\n",
				                       ch_dirs[d], n, tfs_tmpdir(), d, n,
				                       ch_dirs[d], n);
	ok(tfs_debugfs_script(img, script, out, cap) >= 0, "%s: debugfs ran", c->tag);
	int wrong = 0, files = 0;
	const char *o = out;
	for (int d = 0; d < CH_DIRS; d++)
		for (int n = 0; n < CH_NAMES; n++) {
			int fi = m->slot[d][n];
			if (fi < 0)
				continue;
			files++;
			const struct ch_file *f = &m->f[fi];
			char dump[512];
			snprintf(dump, sizeof(dump), "%s/dump-%d-%d", tfs_tmpdir(), d, n);
			unsigned ino = 0, links = 0;
			const char *i = strstr(o, "Inode: "), *l = i ? strstr(i, "Links: ") : NULL;
			if (i && l) {
				sscanf(i, "Inode: %u", &ino);
				sscanf(l, "Links: %u", &links);
				o = l + 1;
			}
			if (!tfs_file_is(dump, f->data, f->size) || ino != f->ino ||
			    links != (unsigned)f->nlink) {
				if (wrong++ < 5)
					diag("%s: debugfs %s/n%d: inode %u links %u, model %u %d",
					     c->tag, ch_dirs[d], n, ino, links, f->ino, f->nlink);
			}
			unlink(dump);
		}
	is_int(wrong, 0, "%s: debugfs reads the %d churned files: bytes, inodes, links", c->tag,
	       files);
	free(script);
	free(out);
}

/* What a file should hold: zeros but for these written extents (later ones win). */
struct extent {
	uint64_t off;
	size_t len;
	const char *data;
};

/* For logical blocks sampled across the direct, indirect, double and triple
 * indirect ranges of `path`: debugfs's bmap and blackout's mapping agree, a hole is
 * 0 for both, and the block at that address in the image holds what was written. */
static void map_compare(const struct cfg *c, struct fs *fs, struct bdev *d, const char *img,
                        const char *path, uint64_t size, const struct extent *x, int nx)
{
	uint64_t a = c->bs / 4, nblk = (size + c->bs - 1) / c->bs;
	uint64_t ind = 12, dind = ind + a, tind = dind + a * a;
	uint64_t want_l[] = {0,        3,        11,       ind,          ind + 1,
	                     dind - 1, dind,     dind + a, tind - 1,     tind,
	                     tind + 1, tind + a, nblk / 2, nblk * 3 / 4, nblk - 1};
	uint64_t lb[64];
	int n = 0;
	for (size_t i = 0; i < sizeof(want_l) / sizeof(want_l[0]); i++)
		if (want_l[i] < nblk)
			lb[n++] = want_l[i];
	for (int i = 0; i < nx && n < 60; i++) {
		lb[n++] = x[i].off / c->bs;
		lb[n++] = (x[i].off + x[i].len - 1) / c->bs;
	}
	char script[8192], out[8192];
	size_t sl = 0;
	for (int i = 0; i < n; i++)
		sl += (size_t)snprintf(script + sl, sizeof(script) - sl, "bmap %s %llu\n", path,
		                       (unsigned long long)lb[i]);
	tap_require(tfs_debugfs_script(img, script, out, sizeof(out)) >= 0, "%s: debugfs bmap",
	            c->tag);
	struct fs_stat st;
	struct fs_inode in;
	tap_require(fs_stat(fs, path, &st) == 0 && fs_iget(fs, st.ino, &in) == 0, "%s: inode of %s",
	            c->tag, path);
	unsigned char *got = malloc(c->bs), *want = malloc(c->bs);
	int wrong = 0, data = 0, holes = 0, in_tind = 0;
	const char *o = out;
	for (int i = 0; i < n; i++) {
		unsigned long long theirs = ~0ull;
		int used = 0;
		if (sscanf(o, "%llu\n%n", &theirs, &used) >= 1)
			o += used;
		uint64_t ours = ~0ull;
		fs_bmap(fs, &in, lb[i], false, &ours);
		memset(want, 0, c->bs);
		uint64_t b0 = lb[i] * c->bs;
		for (int k = 0; k < nx; k++)
			for (size_t j = 0; j < x[k].len; j++)
				if (x[k].off + j >= b0 && x[k].off + j < b0 + c->bs)
					want[x[k].off + j - b0] = (unsigned char)x[k].data[j];
		bool same = theirs == ours;
		if (same && ours) {
			same = blk_pread(d, ours * c->bs, c->bs, got) == 0 &&
			       !memcmp(got, want, c->bs);
			data++;
			in_tind += lb[i] >= tind;
		} else if (same) {
			for (uint32_t j = 0; j < c->bs; j++)
				same = same && !want[j];
			holes++;
		}
		if (!same && wrong++ < 5)
			diag("%s: %s block %llu: debugfs %llu, blackout %llu", c->tag, path,
			     (unsigned long long)lb[i], theirs, (unsigned long long)ours);
	}
	is_int(wrong, 0,
	       "%s: %s: %d sampled blocks map alike in debugfs and blackout "
	       "(%d data, %d in the tind range, %d holes) and hold what was written",
	       c->tag, path, n, data, in_tind, holes);
	ok(in_tind > 0, "%s: %s reaches the triple-indirect range", c->tag, path);
	free(got);
	free(want);
}

static void fill(const struct cfg *c, struct fs *fs)
{
	static char blk[1 << 16];
	memset(blk, 0x5a, sizeof(blk));
	fs_mkdir(fs, "/fill", 0755);
	int i, rc = 0;
	char name[64];
	for (i = 0; i < 100000; i++) {
		snprintf(name, sizeof(name), "/fill/f%d", i);
		if ((rc = put(fs, name, blk, sizeof(blk), 0)) < 0)
			break;
	}
	is_int(rc, -ENOSPC, "%s: filled to ENOSPC (%d files)", c->tag, i);
	struct fs_statfs sf;
	fs_statfs(fs, &sf);
	ok(sf.free_blocks < 64, "%s: almost no free blocks left (%llu)", c->tag,
	   (unsigned long long)sf.free_blocks);
	for (int k = 0; k <= i; k++) {
		snprintf(name, sizeof(name), "/fill/f%d", k);
		fs_unlink(fs, name);
	}
	fs_statfs(fs, &sf);
	ok(sf.free_blocks > 1000, "%s: space back after deleting (%llu)", c->tag,
	   (unsigned long long)sf.free_blocks);
}

static void run(const struct cfg *c)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = c->bs;
	o.metadata_csum = c->csum;
	o.inode_size = c->isz;
	o.inodes = 16384;
	char img[512];
	struct bdev *d = tfs_image(c->tag, 48 << 20, &o, img, sizeof(img));
	tap_require(d, "%s: image", c->tag);
	struct fs *fs = mnt(d);
	tap_require(fs, "%s: mounted", c->tag);
	many_files(c, fs, 10000);
	deep_tree(c, fs);
	struct churn_model *cm = churn(c, fs, 5000, c->bs + c->csum);
	churn_compare(c, fs, cm);

	/* a big sparse file: 6 GiB on 4 KiB blocks; on every block size its end is in
	 * the triple-indirect range */
	char tailbuf[5000];
	content(tailbuf, sizeof(tailbuf), 42);
	uint64_t far = c->bs == 4096 ? 6ull << 30 : c->bs == 1024 ? (80ull << 20) : 3ull << 30;
	is_int(put(fs, "/sparse", tailbuf, sizeof(tailbuf), far - sizeof(tailbuf)), 0,
	       "%s: write at %llu", c->tag, (unsigned long long)far);
	is_int(put(fs, "/sparse", tailbuf, 100, 3 * (uint64_t)c->bs), 0, "%s: write near start",
	       c->tag);
	is_int(check(fs, "/sparse", tailbuf, sizeof(tailbuf), far - sizeof(tailbuf)), 0,
	       "%s: far end reads back", c->tag);
	struct fs_stat st;
	fs_stat(fs, "/sparse", &st);
	is_int(st.size, far, "%s: sparse size", c->tag);
	ok(st.blocks < 64 * (c->bs / 512), "%s: sparse file stays sparse (%llu sectors)", c->tag,
	   (unsigned long long)st.blocks);
	const struct extent sparse_x[] = {{3 * (uint64_t)c->bs, 100, tailbuf},
	                                  {far - sizeof(tailbuf), sizeof(tailbuf), tailbuf}};
	/* a dense file reaching the triple-indirect map on 1 KiB blocks, kept there */
	uint64_t toff = (12 + 256 + 65536) * 1024ull;
	static char chunk[1 << 16];
	const struct extent tind_x[] = {{toff - 4096, 4096 + 100, chunk}};
	if (c->bs == 1024) {
		content(chunk, sizeof(chunk), 7);
		is_int(put(fs, "/tind", chunk, sizeof(chunk), toff - 4096), 0,
		       "%s: write across the triple-indirect boundary", c->tag);
		is_int(check(fs, "/tind", chunk, sizeof(chunk), toff - 4096), 0,
		       "%s: triple-indirect data reads back", c->tag);
		is_int(fs_truncate(fs, "/tind", toff + 100), 0, "%s: shrink into the tind range",
		       c->tag);
		/* and another one that gives its triple-indirect blocks back */
		is_int(put(fs, "/tind-gone", chunk, sizeof(chunk), toff - 4096), 0,
		       "%s: a second file across the boundary", c->tag);
		is_int(fs_truncate(fs, "/tind-gone", toff - 2000), 0, "%s: shrink out of it",
		       c->tag);
	}
	is_int(fs_unmount(fs), 0, "%s: unmount", c->tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean after the workloads", c->tag);
	const char *deep = "/level0/level1/level2/level3/level4/level5/f1";
	ok(tfs_debugfs_cat(img, deep, deep, strlen(deep)), "%s: debugfs reads the deepest file",
	   c->tag);
	ok(tfs_debugfs_cat(img, "/many/file-000004-with-a-longer-name", "4", 1),
	   "%s: debugfs finds a file in the big directory", c->tag);
	churn_debugfs(c, img, cm);
	if (c->bs == 1024) {
		char *want = calloc(1, toff + 100);
		memcpy(want + toff - 4096, chunk, 4096 + 100);
		ok(tfs_debugfs_cat(img, "/tind", want, toff + 100),
		   "%s: debugfs cat reads the triple-indirect file byte for byte", c->tag);
		free(want);
	}

	fs = mnt(d);
	tap_require(fs, "%s: remounted", c->tag);
	churn_compare(c, fs, cm);
	free(cm->f);
	free(cm);
	is_int(check(fs, "/sparse", tailbuf, sizeof(tailbuf), far - sizeof(tailbuf)), 0,
	       "%s: sparse tail after remount", c->tag);
	map_compare(c, fs, d, img, "/sparse", far, sparse_x, 2);
	if (c->bs == 1024)
		map_compare(c, fs, d, img, "/tind", toff + 100, tind_x, 1);
	fill(c, fs);
	is_int(fs_unmount(fs), 0, "%s: unmount after fill", c->tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean after fill and delete", c->tag);
	blk_close(d);
	if (!getenv("BLACKOUT_KEEP_IMAGES"))
		unlink(img);
}

/* Names with bytes >= 0x80 hash differently with signed and unsigned chars: an
 * htree built under either superblock flag must satisfy e2fsck. */
static void hash_signedness(void)
{
	for (int uns = 0; uns < 2; uns++) {
		struct fs_mkfs_opts o;
		fs_mkfs_opts_default(&o);
		o.block_size = 1024;
		char img[512], tag[32];
		snprintf(tag, sizeof(tag), "hash-%s", uns ? "unsigned" : "signed");
		struct bdev *d = tfs_image(tag, 16 << 20, &o, img, sizeof(img));
		tap_require(d, "%s: image", tag);
		uint8_t sec[512];
		blk_pread(d, 1024, 512, sec);
		uint32_t fl = get_le32(sec + 0x160) & ~3u;
		put_le32(sec + 0x160, fl | (uns ? 2u : 1u));
		blk_pwrite(d, 1024, 512, sec, 0);
		struct fs *fs = mnt(d);
		tap_require(fs, "%s: mounted", tag);
		fs_mkdir(fs, "/u", 0755);
		int bad = 0;
		for (int i = 0; i < 1500 && !bad; i++) {
			char n[64];
			snprintf(n, sizeof(n), "/u/\xc3\xa9t\xc3\xa9-\xff\x80-%d", i);
			bad = put(fs, n, "x", 1, 0) < 0;
		}
		is_int(bad, 0, "%s: 1500 names with high bytes", tag);
		struct fs_stat st;
		is_int(fs_stat(fs, "/u/\xc3\xa9t\xc3\xa9-\xff\x80-777", &st), 0, "%s: lookup", tag);
		is_int(fs_unmount(fs), 0, "%s: unmount", tag);
		ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn agrees with the htree", tag);
		blk_close(d);
	}
}

/* The buffer hash starts at 256 buckets and doubles as buffers come in (bcache.c):
 * every block read stays findable across the growth, which stops at its bound. */
static void buffer_hash_grows(void)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 1024;
	char img[512];
	struct bdev *d = tfs_image("bhash.img", 16 << 20, &o, img, sizeof(img));
	struct fs *fs = d ? mnt(d) : NULL;
	if (!fs) {
		ok(0, "buffer hash: an image to mount");
		blk_close(d);
		return;
	}
	ok(fs->hsize == 256 && fs->hsize_max > 256,
	   "a mount starts with 256 buckets (bound %u for its %u buffers)", fs->hsize_max,
	   fs->max_bufs);
	uint32_t n = 3000, missing = 0;
	for (uint64_t blk = 1; blk <= n; blk++) {
		struct fs_buf *b;
		if (fs_bread(fs, blk, &b) < 0)
			missing++;
	}
	for (uint64_t blk = 1; blk <= n; blk++)
		missing += fs_buf_find(fs, blk) == NULL;
	ok(fs->nbufs >= n && fs->hsize >= 2048 && fs->hsize <= fs->hsize_max,
	   "after %u reads the hash grew to %u buckets for %u buffers", n, fs->hsize, fs->nbufs);
	is_int((int)missing, 0, "every block read is found after the growth");
	fs_unmount(fs);
	blk_close(d);
}

int main(void)
{
	hash_signedness();
	buffer_hash_grows();
	const struct cfg cfgs[] = {
	    {"1k", 1024, false},          {"2k", 2048, false},
	    {"4k", 4096, false},          {"1k-csum", 1024, true},
	    {"2k-csum", 2048, true},      {"4k-csum", 4096, true},
	    {"4k-128", 4096, false, 128}, {"1k-128-csum", 1024, true, 128},
	};
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		run(&cfgs[i]);
	tfs_cleanup();
	return tap_done();
}
