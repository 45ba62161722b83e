/* test_fs_workloads.c — the scripted workloads on every block size, with
 * and without metadata_csum: 10,000 files in one (htree) directory, a 6-level tree,
 * a sparse 6 GiB file on 4 KiB blocks, a triple-indirect file on 1 KiB blocks, fill
 * to ENOSPC then delete, thousands of random renames/unlinks/links. After unmount
 * e2fsck -fn must be silent and debugfs must read back what was written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fs.h"
#include "blackout/util.h"
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

static void churn(const struct cfg *c, struct fs *fs, int ops, uint64_t seed)
{
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	fs_mkdir(fs, "/churn", 0755);
	fs_mkdir(fs, "/churn/a", 0755);
	fs_mkdir(fs, "/churn/b", 0755);
	int unexpected = 0;
	const char *dirs[] = {"/churn", "/churn/a", "/churn/b"};
	for (int i = 0; i < ops; i++) {
		char p1[64], p2[64];
		snprintf(p1, sizeof(p1), "%s/n%u", dirs[bo_rng_below(&r, 3)],
		         (unsigned)bo_rng_below(&r, 200));
		snprintf(p2, sizeof(p2), "%s/n%u", dirs[bo_rng_below(&r, 3)],
		         (unsigned)bo_rng_below(&r, 200));
		int rc;
		switch (bo_rng_below(&r, 4)) {
		case 0: rc = put(fs, p1, p1, strlen(p1), 0); break;
		case 1: rc = fs_rename(fs, p1, p2); break;
		case 2: rc = fs_unlink(fs, p1); break;
		default: rc = fs_link(fs, p1, p2); break;
		}
		if (rc < 0 && rc != -ENOENT && rc != -EEXIST)
			unexpected++;
	}
	is_int(unexpected, 0, "%s: %d random renames/unlinks/links, only ENOENT/EEXIST", c->tag,
	       ops);
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
	o.inodes = 16384;
	char img[512];
	struct bdev *d = tfs_image(c->tag, 48 << 20, &o, img, sizeof(img));
	tap_require(d, "%s: image", c->tag);
	struct fs *fs = mnt(d);
	tap_require(fs, "%s: mounted", c->tag);
	many_files(c, fs, c->bs == 2048 || c->csum ? 3000 : 10000);
	deep_tree(c, fs);
	churn(c, fs, 2000, c->bs + c->csum);

	/* a big sparse file: 6 GiB on 4 KiB blocks (double/triple indirect on 1 KiB) */
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
	/* a dense file reaching the triple-indirect map on 1 KiB blocks */
	if (c->bs == 1024) {
		uint64_t off = (12 + 256 + 65536) * 1024ull;
		static char chunk[1 << 16];
		content(chunk, sizeof(chunk), 7);
		is_int(put(fs, "/tind", chunk, sizeof(chunk), off - 4096), 0,
		       "%s: write across the triple-indirect boundary", c->tag);
		is_int(check(fs, "/tind", chunk, sizeof(chunk), off - 4096), 0,
		       "%s: triple-indirect data reads back", c->tag);
		is_int(fs_truncate(fs, "/tind", off + 100), 0, "%s: shrink into the tind range",
		       c->tag);
		is_int(fs_truncate(fs, "/tind", off - 2000), 0, "%s: shrink out of it", c->tag);
	}
	is_int(fs_unmount(fs), 0, "%s: unmount", c->tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean after the workloads", c->tag);
	const char *deep = "/level0/level1/level2/level3/level4/level5/f1";
	ok(tfs_debugfs_cat(img, deep, deep, strlen(deep)), "%s: debugfs reads the deepest file",
	   c->tag);
	ok(tfs_debugfs_cat(img, "/many/file-000004-with-a-longer-name", "4", 1),
	   "%s: debugfs finds a file in the big directory", c->tag);

	fs = mnt(d);
	tap_require(fs, "%s: remounted", c->tag);
	is_int(check(fs, "/sparse", tailbuf, sizeof(tailbuf), far - sizeof(tailbuf)), 0,
	       "%s: sparse tail after remount", c->tag);
	fill(c, fs);
	is_int(fs_unmount(fs), 0, "%s: unmount after fill", c->tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean after fill and delete", c->tag);
	blk_close(d);
	if (!getenv("BLACKOUT_KEEP_IMAGES"))
		unlink(img);
}

int main(void)
{
	const struct cfg cfgs[] = {
	    {"1k", 1024, false},     {"2k", 2048, false},     {"4k", 4096, false},
	    {"1k-csum", 1024, true}, {"2k-csum", 2048, true}, {"4k-csum", 4096, true},
	};
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		run(&cfgs[i]);
	tfs_cleanup();
	return tap_done();
}
