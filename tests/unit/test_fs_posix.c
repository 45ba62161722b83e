// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_posix.c — the POSIX promises of fs.h one by one (results and errnos), on
 * ext3 with 1 KiB blocks and on 4 KiB blocks with metadata_csum; each image is then
 * judged by e2fsck -fn and debugfs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fs.h"
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

static ssize_t put(struct fs *fs, const char *path, const void *buf, size_t len, uint64_t off)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT, 0644, &f);
	if (rc < 0)
		return rc;
	ssize_t n = fs_pwrite(f, buf, len, off);
	fs_close(f);
	return n;
}

static ssize_t get(struct fs *fs, const char *path, void *buf, size_t len, uint64_t off)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDONLY, 0, &f);
	if (rc < 0)
		return rc;
	ssize_t n = fs_pread(f, buf, len, off);
	fs_close(f);
	return n;
}

struct names {
	int n;
	char seen[16][32];
};
static int collect(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)ino;
	(void)ft;
	struct names *c = ctx;
	if (c->n < 16)
		snprintf(c->seen[c->n], sizeof(c->seen[0]), "%s", name);
	c->n++;
	return 0;
}

/* fs_readdir_plus against lstat of each entry's path */
struct plus_check {
	struct fs *fs;
	const char *dir;
	int n, same, stop_after;
};
static int plus_cb(void *ctx, const char *name, uint32_t ino, const struct fs_stat *st)
{
	struct plus_check *c = ctx;
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", c->dir, name);
	struct fs_stat want;
	c->n++;
	if (st && fs_lstat(c->fs, p, &want) == 0 && st->ino == ino && st->ino == want.ino &&
	    st->mode == want.mode && st->nlink == want.nlink && st->uid == want.uid &&
	    st->gid == want.gid && st->size == want.size && st->blocks == want.blocks &&
	    st->atime == want.atime && st->mtime == want.mtime && st->ctime == want.ctime)
		c->same++;
	return c->n == c->stop_after ? 7 : 0;
}

static void readdir_plus(struct fs *fs, const char *tag)
{
	struct fs_stat st;
	ok(fs_mkdir(fs, "/rdp", 0755) == 0 && fs_mkdir(fs, "/rdp/sub", 0700) == 0 &&
	       put(fs, "/rdp/f", "hello", 5, 0) == 5 && fs_symlink(fs, "f", "/rdp/l") == 0 &&
	       fs_link(fs, "/rdp/f", "/rdp/g") == 0,
	   "%s: readdir_plus: a directory of a file, a link, a symlink, a subdir", tag);
	struct plus_check c = {fs, "/rdp", 0, 0, 0};
	is_int(fs_readdir_plus(fs, "/rdp", plus_cb, &c), 0, "%s: readdir_plus", tag);
	is_int(c.n, 6, "%s: readdir_plus sees . .. sub f l g", tag);
	is_int(c.same, 6, "%s: readdir_plus gives what lstat gives (symlink not followed)", tag);
	c = (struct plus_check){fs, "/rdp", 0, 0, 2};
	is_int(fs_readdir_plus(fs, "/rdp", plus_cb, &c), 7, "%s: readdir_plus stops on fn", tag);
	is_int(fs_readdir_plus(fs, "/rdp/f", plus_cb, &c), -ENOTDIR, "%s: readdir_plus of a file",
	       tag);
	ok(fs_unlink(fs, "/rdp/f") == 0 && fs_unlink(fs, "/rdp/g") == 0 &&
	       fs_unlink(fs, "/rdp/l") == 0 && fs_rmdir(fs, "/rdp/sub") == 0 &&
	       fs_rmdir(fs, "/rdp") == 0 && fs_stat(fs, "/rdp", &st) == -ENOENT,
	   "%s: readdir_plus: cleaned up", tag);
}

static void run(const char *tag, uint32_t bs, bool csum)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = bs;
	o.metadata_csum = csum;
	char img[512];
	struct bdev *d = tfs_image(tag, 32 << 20, &o, img, sizeof(img));
	tap_require(d, "%s: image made", tag);
	tap_require(tfs_e2fsck_clean(img), "%s: fresh mkfs is e2fsck-clean", tag);
	struct fs *fs = mnt(d);
	tap_require(fs, "%s: mounted", tag);
	struct fs_statfs sf;
	fs_statfs(fs, &sf);
	is_int(sf.block_size, bs, "%s: statfs block size", tag);
	uint64_t free_inodes0 = sf.free_inodes;

	/* create, write, read, sparse holes */
	is_int(put(fs, "/a", "hello", 5, 0), 5, "%s: write 5 bytes", tag);
	char buf[8192];
	memset(buf, 'x', sizeof(buf));
	is_int(get(fs, "/a", buf, sizeof(buf), 0), 5, "%s: read back 5 bytes", tag);
	ok(!memcmp(buf, "hello", 5), "%s: same bytes", tag);
	is_int(put(fs, "/sparse", "end", 3, 1000000), 3, "%s: write past a hole", tag);
	struct fs_stat st;
	is_int(fs_stat(fs, "/sparse", &st), 0, "%s: stat sparse", tag);
	is_int(st.size, 1000003, "%s: sparse size", tag);
	ok(st.blocks <= 4 * (bs / 512) * 2, "%s: sparse file has few blocks (%llu)", tag,
	   (unsigned long long)st.blocks);
	memset(buf, 'x', sizeof(buf));
	is_int(get(fs, "/sparse", buf, 4096, 500000), 4096, "%s: read in the hole", tag);
	int zeros = 1;
	for (int i = 0; i < 4096; i++)
		zeros &= buf[i] == 0;
	ok(zeros, "%s: a hole reads as zeros", tag);

	/* open errors */
	struct fs_file *f;
	is_int(fs_open(fs, "/a", FS_O_RDWR | FS_O_CREAT | FS_O_EXCL, 0644, &f), -EEXIST,
	       "%s: O_EXCL on an existing file", tag);
	is_int(fs_open(fs, "/nope", FS_O_RDONLY, 0, &f), -ENOENT, "%s: missing file", tag);
	is_int(fs_open(fs, "/nodir/x", FS_O_RDWR | FS_O_CREAT, 0644, &f), -ENOENT,
	       "%s: missing parent", tag);
	is_int(fs_open(fs, "/a/x", FS_O_RDWR | FS_O_CREAT, 0644, &f), -ENOTDIR,
	       "%s: file as a directory", tag);
	char longname[300];
	memset(longname, 'n', sizeof(longname));
	longname[0] = '/';
	longname[257] = 0;
	is_int(fs_open(fs, longname, FS_O_RDWR | FS_O_CREAT, 0644, &f), -ENAMETOOLONG,
	       "%s: 256-byte name", tag);
	longname[256] = 0;
	is_int(put(fs, longname, "x", 1, 0), 1, "%s: 255-byte name works", tag);

	/* directories */
	is_int(fs_mkdir(fs, "/d", 0755), 0, "%s: mkdir", tag);
	is_int(fs_mkdir(fs, "/d", 0755), -EEXIST, "%s: mkdir existing", tag);
	is_int(fs_mkdir(fs, "/d/e", 0755), 0, "%s: mkdir nested", tag);
	is_int(fs_stat(fs, "/d", &st), 0, "%s: stat dir", tag);
	is_int(st.nlink, 3, "%s: dir with a subdir has 3 links", tag);
	is_int(fs_rmdir(fs, "/d"), -ENOTEMPTY, "%s: rmdir non-empty", tag);
	is_int(fs_rmdir(fs, "/a"), -ENOTDIR, "%s: rmdir a file", tag);
	is_int(fs_unlink(fs, "/d"), -EISDIR, "%s: unlink a directory", tag);
	is_int(fs_rmdir(fs, "/"), -EBUSY, "%s: rmdir /", tag);
	is_int(fs_rmdir(fs, "/d/e/."), -EINVAL, "%s: rmdir .", tag);
	struct names nm = {0};
	is_int(fs_readdir(fs, "/d", collect, &nm), 0, "%s: readdir", tag);
	is_int(nm.n, 3, "%s: readdir sees . .. e", tag);
	readdir_plus(fs, tag);

	/* rename */
	is_int(put(fs, "/b", "bbbb", 4, 0), 4, "%s: write /b", tag);
	is_int(fs_rename(fs, "/b", "/a"), 0, "%s: rename over a file", tag);
	is_int(get(fs, "/a", buf, sizeof(buf), 0), 4, "%s: replaced content size", tag);
	ok(!memcmp(buf, "bbbb", 4), "%s: replaced content", tag);
	is_int(fs_stat(fs, "/b", &st), -ENOENT, "%s: old name gone", tag);
	is_int(fs_rename(fs, "/d", "/d/e/f"), -EINVAL, "%s: dir into its own subtree", tag);
	is_int(fs_mkdir(fs, "/full", 0755), 0, "%s: mkdir /full", tag);
	is_int(put(fs, "/full/x", "x", 1, 0), 1, "%s: file in /full", tag);
	is_int(fs_rename(fs, "/d", "/full"), -ENOTEMPTY, "%s: dir over non-empty dir", tag);
	is_int(fs_rename(fs, "/a", "/full"), -EISDIR, "%s: file over dir", tag);
	is_int(fs_rename(fs, "/full", "/a"), -ENOTDIR, "%s: dir over file", tag);
	is_int(fs_rename(fs, "/d/e", "/full/e"), 0, "%s: dir across dirs", tag);
	is_int(fs_stat(fs, "/d", &st), 0, "%s: stat old parent", tag);
	is_int(st.nlink, 2, "%s: old parent lost a link", tag);
	is_int(fs_stat(fs, "/full", &st), 0, "%s: stat new parent", tag);
	is_int(st.nlink, 3, "%s: new parent gained a link", tag);
	is_int(fs_stat(fs, "/full/e/..", &st), 0, "%s: moved dir's ..", tag);
	struct fs_stat st2;
	fs_stat(fs, "/full", &st2);
	is_int(st.ino, st2.ino, "%s: '..' points to the new parent", tag);
	is_int(fs_mkdir(fs, "/empty", 0755), 0, "%s: mkdir /empty", tag);
	is_int(fs_rename(fs, "/d", "/empty"), 0, "%s: dir over empty dir", tag);
	is_int(fs_stat(fs, "/", &st), 0, "%s: stat /", tag);
	is_int(fs_rename(fs, "/a", "/a"), 0, "%s: rename to itself", tag);

	/* links */
	is_int(fs_link(fs, "/a", "/full/a2"), 0, "%s: hard link", tag);
	is_int(fs_stat(fs, "/a", &st), 0, "%s: stat linked", tag);
	is_int(st.nlink, 2, "%s: two links", tag);
	is_int(fs_link(fs, "/full", "/full2"), -EPERM, "%s: link a directory", tag);
	is_int(fs_link(fs, "/a", "/full/a2"), -EEXIST, "%s: link over existing", tag);
	is_int(fs_unlink(fs, "/full/a2"), 0, "%s: unlink one link", tag);
	fs_stat(fs, "/a", &st);
	is_int(st.nlink, 1, "%s: one link left", tag);

	/* symlinks */
	char target[600];
	memset(target, 't', sizeof(target));
	target[0] = '/';
	target[500] = 0;
	is_int(fs_symlink(fs, "/a", "/fast"), 0, "%s: fast symlink", tag);
	is_int(fs_symlink(fs, target, "/slow"), 0, "%s: slow symlink", tag);
	char lb[700];
	is_int(fs_readlink(fs, "/fast", lb, sizeof(lb)), 2, "%s: readlink fast", tag);
	is_int(fs_readlink(fs, "/slow", lb, sizeof(lb)), 500, "%s: readlink slow", tag);
	ok(!memcmp(lb, target, 500), "%s: slow target intact", tag);
	is_int(fs_stat(fs, "/fast", &st), 0, "%s: stat through a symlink", tag);
	is_int(st.size, 4, "%s: stat follows", tag);
	is_int(fs_lstat(fs, "/fast", &st), 0, "%s: lstat", tag);
	is_int(st.mode & 0xF000, 0xA000, "%s: lstat does not follow", tag);
	is_int(fs_symlink(fs, "/loop2", "/loop1"), 0, "%s: loop1", tag);
	is_int(fs_symlink(fs, "/loop1", "/loop2"), 0, "%s: loop2", tag);
	is_int(fs_stat(fs, "/loop1", &st), -ELOOP, "%s: symlink loop", tag);
	is_int(fs_readlink(fs, "/a", lb, sizeof(lb)), -EINVAL, "%s: readlink a file", tag);

	/* truncate */
	char big[10000];
	for (int i = 0; i < 10000; i++)
		big[i] = (char)('a' + i % 26);
	is_int(put(fs, "/t", big, sizeof(big), 0), 10000, "%s: write 10000", tag);
	is_int(fs_truncate(fs, "/t", 5000), 0, "%s: shrink", tag);
	is_int(fs_truncate(fs, "/t", 20000), 0, "%s: grow", tag);
	static char tb[20000];
	is_int(get(fs, "/t", tb, sizeof(tb), 0), 20000, "%s: read grown", tag);
	ok(!memcmp(tb, big, 5000), "%s: kept part intact", tag);
	zeros = 1;
	for (int i = 5000; i < 20000; i++)
		zeros &= tb[i] == 0;
	ok(zeros, "%s: shrunk-then-grown tail is zeros", tag);
	is_int(fs_truncate(fs, "/full", 0), -EISDIR, "%s: truncate a dir", tag);

	/* attributes */
	is_int(fs_chmod(fs, "/t", 0600), 0, "%s: chmod", tag);
	is_int(fs_chown(fs, "/t", 1000, 70000), 0, "%s: chown", tag);
	is_int(fs_utimes(fs, "/t", 1234, 5678), 0, "%s: utimes", tag);
	fs_stat(fs, "/t", &st);
	is_int(st.mode, 0100600, "%s: mode", tag);
	is_int(st.uid, 1000, "%s: uid", tag);
	is_int(st.gid, 70000, "%s: 32-bit gid", tag);
	is_int(st.atime, 1234, "%s: atime", tag);
	is_int(st.mtime, 5678, "%s: mtime", tag);

	/* unlinked but open */
	struct fs_statfs sf0, sf1;
	fs_statfs(fs, &sf0);
	is_int(put(fs, "/open", big, sizeof(big), 0), 10000, "%s: write /open", tag);
	is_int(fs_open(fs, "/open", FS_O_RDWR, 0, &f), 0, "%s: open", tag);
	is_int(fs_unlink(fs, "/open"), 0, "%s: unlink while open", tag);
	is_int(fs_stat(fs, "/open", &st), -ENOENT, "%s: name gone", tag);
	is_int(fs_pread(f, tb, 10000, 0), 10000, "%s: still readable", tag);
	ok(!memcmp(tb, big, 10000), "%s: unlinked content intact", tag);
	is_int(fs_pwrite(f, "zz", 2, 0), 2, "%s: still writable", tag);
	is_int(fs_close(f), 0, "%s: last close", tag);
	fs_statfs(fs, &sf1);
	ok(sf1.free_inodes == sf0.free_inodes && sf1.free_blocks == sf0.free_blocks,
	   "%s: the last close released its inode and blocks", tag);

	/* two handles: the first close keeps the inode, the second releases it */
	struct fs_file *f2;
	is_int(put(fs, "/two", big, sizeof(big), 0), 10000, "%s: write /two", tag);
	is_int(fs_open(fs, "/two", FS_O_RDONLY, 0, &f), 0, "%s: open /two", tag);
	is_int(fs_open(fs, "/two", FS_O_RDONLY, 0, &f2), 0, "%s: open /two again", tag);
	is_int(fs_unlink(fs, "/two"), 0, "%s: unlink /two", tag);
	is_int(fs_close(f), 0, "%s: close one handle", tag);
	fs_statfs(fs, &sf1);
	ok(sf1.free_inodes == sf0.free_inodes - 1, "%s: the inode lives on", tag);
	is_int(fs_pread(f2, tb, 10000, 0), 10000, "%s: the other handle reads it", tag);
	ok(!memcmp(tb, big, 10000), "%s: intact", tag);
	is_int(fs_close(f2), 0, "%s: close the other", tag);
	fs_statfs(fs, &sf1);
	ok(sf1.free_inodes == sf0.free_inodes && sf1.free_blocks == sf0.free_blocks,
	   "%s: released at the last close", tag);

	/* a name replaced by rename while its old inode is open */
	is_int(put(fs, "/r1", "new", 3, 0), 3, "%s: write /r1", tag);
	is_int(put(fs, "/r2", big, sizeof(big), 0), 10000, "%s: write /r2", tag);
	is_int(fs_open(fs, "/r2", FS_O_RDONLY, 0, &f), 0, "%s: open /r2", tag);
	is_int(fs_rename(fs, "/r1", "/r2"), 0, "%s: rename /r1 over the open /r2", tag);
	is_int(fs_pread(f, tb, 10000, 0), 10000, "%s: the handle still reads the old /r2", tag);
	ok(!memcmp(tb, big, 10000), "%s: its bytes intact", tag);
	is_int(fs_close(f), 0, "%s: close it", tag);
	fs_statfs(fs, &sf1);
	ok(sf1.free_inodes == sf0.free_inodes - 1, "%s: only the renamed file's inode in use", tag);
	is_int(fs_unlink(fs, "/r2"), 0, "%s: unlink /r2", tag);

	/* errors */
	is_int(fs_open(fs, "/big", FS_O_RDWR | FS_O_CREAT, 0644, &f), 0, "%s: open /big", tag);
	is_int(fs_pwrite(f, "x", 1, 1ull << 50), -EFBIG, "%s: EFBIG", tag);
	fs_close(f);
	is_int(fs_open(fs, "/full", FS_O_RDWR, 0, &f), -EISDIR, "%s: open dir for write", tag);
	is_int(fs_open(fs, "/a", FS_O_RDONLY | FS_O_DIRECTORY, 0, &f), -ENOTDIR,
	       "%s: O_DIRECTORY on a file", tag);
	is_int(fs_unlink(fs, "/nope"), -ENOENT, "%s: unlink missing", tag);

	/* orphan recovery: unlinked while open, synced, power lost */
	is_int(put(fs, "/orph", big, sizeof(big), 0), 10000, "%s: write /orph", tag);
	is_int(fs_open(fs, "/orph", FS_O_RDWR, 0, &f), 0, "%s: open /orph", tag);
	is_int(fs_unlink(fs, "/orph"), 0, "%s: unlink /orph", tag);
	is_int(fs_sync(fs), 0, "%s: sync", tag);
	fs_abandon(fs);
	fs = mnt(d);
	tap_require(fs, "%s: remounted after the cut", tag);
	is_int(fs_unmount(fs), 0, "%s: unmount", tag);
	ok(tfs_e2fsck_clean(img), "%s: orphan processed, e2fsck clean", tag);

	fs = mnt(d);
	tap_require(fs, "%s: mounted again", tag);
	fs_statfs(fs, &sf);
	ok(sf.free_inodes < free_inodes0, "%s: inodes in use", tag);
	is_int(fs_unmount(fs), 0, "%s: unmount", tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean after the workload", tag);
	memset(tb, 0, sizeof(tb));
	memcpy(tb, big, 5000);
	ok(tfs_debugfs_cat(img, "/t", tb, 20000), "%s: debugfs reads /t", tag);
	ok(tfs_debugfs_cat(img, "/a", "bbbb", 4), "%s: debugfs reads /a", tag);

	/* read-only mount */
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	mo.read_only = true;
	struct bo_err err = {{0}};
	is_int(fs_mount(d, &mo, &fs, &err), 0, "%s: mount ro", tag);
	is_int(fs_mkdir(fs, "/ro", 0755), -EROFS, "%s: EROFS", tag);
	fs_unmount(fs);
	blk_close(d);
}

static void enospc(void)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.type = 2;
	char img[512];
	struct bdev *d = tfs_image("small", 1 << 20, &o, img, sizeof(img));
	tap_require(d, "small image");
	struct fs *fs = mnt(d);
	tap_require(fs, "small mounted");
	static char blk[65536];
	memset(blk, 7, sizeof(blk));
	int i, rc = 0;
	char name[32];
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "/f%d", i);
		ssize_t n = put(fs, name, blk, sizeof(blk), 0);
		if (n != (ssize_t)sizeof(blk)) {
			rc = (int)n;
			break;
		}
	}
	is_int(rc, -ENOSPC, "full filesystem gives ENOSPC (after %d files)", i);
	for (int k = 0; k <= i; k++) {
		snprintf(name, sizeof(name), "/f%d", k);
		fs_unlink(fs, name);
	}
	is_int(put(fs, "/again", blk, sizeof(blk), 0), (ssize_t)sizeof(blk),
	       "space comes back after deleting");
	is_int(fs_unmount(fs), 0, "unmount small");
	ok(tfs_e2fsck_clean(img), "small: e2fsck clean after ENOSPC and delete");
	blk_close(d);
}

int main(void)
{
	run("ext3-1k", 1024, false);
	run("ext3-4k-csum", 4096, true);
	run("ext3-2k", 2048, false);
	enospc();
	tfs_cleanup();
	return tap_done();
}
