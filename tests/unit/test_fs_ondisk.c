// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_ondisk.c — on-disk promises beyond the tree of names: the resize inode
 * (7) and its reserved GDT blocks stay byte-identical through a workload; extended
 * attribute blocks made by debugfs survive blackout's changes to their files and
 * are released (or their refcount dropped) when an inode is freed; mount and
 * unmount keep s_state and s_mnt_count as ext3 does; a directory stops at ext3's
 * 32,000 links and a file too (EMLINK); a directory whose two-level htree is full
 * refuses new names with ENOSPC and keeps nothing of them; sync writes dirty metadata
 * in ascending block order; one-block writes handed
 * to mem as pages (write_swap) land whole. Each image is judged by e2fsck -fn, and e2fsprogs
 * (dumpe2fs, debugfs) reads the fields. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/fs.h"
#include "blackout/rec.h"
#include "blackout/ext2_format.h"
#include "tap.h"
#include "test_fs_util.h"

static struct fs *mnt(struct bdev *d, const struct fs_mount_opts *mo)
{
	struct fs *fs = NULL;
	struct bo_err err = {{0}};
	int rc = fs_mount(d, mo, &fs, &err);
	if (rc < 0)
		diag("mount: %s", bo_errstr(&err, rc));
	return fs;
}

static struct bdev *open_file(const char *path)
{
	struct bdev *d = NULL;
	struct bo_err err = {{0}};
	int rc = blk_file_open(path, 512, 0, 0, &d, &err);
	if (rc < 0)
		diag("open %s: %s", path, bo_errstr(&err, rc));
	return d;
}

static int put(struct fs *fs, const char *path, size_t len, uint64_t off, char fill)
{
	char *buf = malloc(len);
	memset(buf, fill, len);
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT, 0644, &f);
	if (rc == 0) {
		ssize_t n = fs_pwrite(f, buf, len, off);
		rc = n == (ssize_t)len ? 0 : n < 0 ? (int)n : -EIO;
		fs_close(f);
	}
	free(buf);
	return rc;
}

/* The value of a `dumpe2fs -h` field ("Mount count"), or "" if absent. */
static const char *dumpe2fs(const char *img, const char *field)
{
	static char val[256];
	char cmd[600], line[512];
	val[0] = 0;
	snprintf(cmd, sizeof(cmd), "dumpe2fs -h '%s' 2>/dev/null", img);
	FILE *p = popen(cmd, "r");
	if (!p)
		return val;
	size_t fl = strlen(field);
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, field, fl) && line[fl] == ':') {
			char *v = line + fl + 1;
			v += strspn(v, " ");
			v[strcspn(v, "\n")] = 0;
			snprintf(val, sizeof(val), "%s", v);
		}
	pclose(p);
	return val;
}

static void sb_read(struct bdev *d, uint8_t sb[1024])
{
	blk_pread(d, 1024, 1024, sb);
}

/* The whole device into an image file: what a power cut now would leave. */
static int snapshot(struct bdev *d, const char *path)
{
	uint64_t n = blk_size_bytes(d);
	uint8_t *buf = malloc(n);
	int rc = blk_pread(d, 0, n, buf);
	FILE *f = fopen(path, "wb");
	if (rc == 0 && (!f || fwrite(buf, 1, n, f) != n))
		rc = -EIO;
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

/* ---- s_state and s_mnt_count ---------------------------------------------------- */
static void state_and_count(void)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 1024;
	char img[512], snap[512];
	struct bdev *d = tfs_image("state", 16 << 20, &o, img, sizeof(img));
	tap_require(d, "state: image");
	snprintf(snap, sizeof(snap), "%s/state-snap", tfs_tmpdir());
	uint8_t sb[1024];
	sb_read(d, sb);
	uint16_t c0 = sb_get16(sb, SB_MNT_COUNT);
	ok(sb_get16(sb, SB_STATE) & EXT2_VALID_FS, "state: clean after mkfs");

	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "state: mounted");
	is_int(fs_mkdir(fs, "/a", 0755), 0, "state: mkdir");
	is_int(fs_sync(fs), 0, "state: sync");
	sb_read(d, sb);
	ok(sb_has_incompat(sb, EXT3_FEATURE_INCOMPAT_RECOVER),
	   "state: while mounted the image needs recovery");
	/* ext3 journals the superblock: what a power cut leaves is the journalled one */
	tap_require(snapshot(d, snap) == 0, "state: snapshot while mounted");
	ok(tfs_sh("debugfs -w -R journal_run '%s' >/dev/null 2>&1%s", snap, "") == 0,
	   "state: debugfs replays the snapshot's journal");
	is_str(dumpe2fs(snap, "Filesystem state"), "not clean",
	       "state: a power cut while mounted leaves it not clean");
	char want[16];
	snprintf(want, sizeof(want), "%u", c0 + 1);
	is_str(dumpe2fs(snap, "Mount count"), want, "state: ... with the mount counted");
	is_int(fs_unmount(fs), 0, "state: unmount");
	sb_read(d, sb);
	ok((sb_get16(sb, SB_STATE) & EXT2_VALID_FS) &&
	       !sb_has_incompat(sb, EXT3_FEATURE_INCOMPAT_RECOVER),
	   "state: clean after unmount, no recovery needed");
	is_int(sb_get16(sb, SB_MNT_COUNT), c0 + 1, "state: one mount counted");
	is_str(dumpe2fs(img, "Filesystem state"), "clean", "state: dumpe2fs says clean");
	is_str(dumpe2fs(img, "Mount count"), want, "state: dumpe2fs counts %s", want);

	/* without the journal the superblock itself says so while mounted */
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	mo.no_journal = true;
	fs = mnt(d, &mo);
	tap_require(fs, "state: mounted without the journal");
	sb_read(d, sb);
	ok(!(sb_get16(sb, SB_STATE) & EXT2_VALID_FS), "state: nojournal: not clean while mounted");
	is_int(sb_get16(sb, SB_MNT_COUNT), c0 + 2, "state: nojournal: counted at mount");
	is_int(fs_unmount(fs), 0, "state: nojournal: unmount");
	sb_read(d, sb);
	ok(sb_get16(sb, SB_STATE) & EXT2_VALID_FS, "state: nojournal: clean after unmount");
	is_int(sb_get16(sb, SB_MNT_COUNT), c0 + 2, "state: nojournal: two mounts counted");

	/* a read-only mount changes nothing */
	uint8_t before[1024];
	sb_read(d, before);
	fs_mount_opts_default(&mo);
	mo.read_only = true;
	fs = mnt(d, &mo);
	tap_require(fs, "state: mounted read-only");
	sb_read(d, sb);
	ok(!memcmp(sb, before, sizeof(sb)), "state: ro: the superblock is untouched while mounted");
	fs_unmount(fs);
	sb_read(d, sb);
	ok(!memcmp(sb, before, sizeof(sb)), "state: ro: and after unmount");
	ok(tfs_e2fsck_clean(img), "state: e2fsck -fn clean");
	blk_close(d);
}

/* ---- the resize inode ----------------------------------------------------------- */
/* Inode 7, its double indirect block and group 0's reserved GDT blocks (after the
 * descriptors, which change with every allocation). */
static uint8_t *resize_bytes(struct bdev *d, size_t *len, uint32_t *dind, uint32_t *rsv_out)
{
	uint8_t sb[1024], gd[512], sec[1024];
	sb_read(d, sb);
	uint32_t bs = sb_block_size(sb), first = sb_get32(sb, SB_FIRST_DATA_BLOCK);
	uint32_t bpg = sb_get32(sb, SB_BLOCKS_PER_GROUP), isz = sb_inode_size(sb);
	uint64_t ngroups = (sb_get32(sb, SB_BLOCKS_COUNT_LO) - first + bpg - 1) / bpg;
	uint64_t gdt = first + 1, gdt_blocks = (ngroups * sb_desc_size(sb) + bs - 1) / bs;
	uint32_t rsv = sb_get16(sb, SB_RESERVED_GDT_BLOCKS);
	blk_pread(d, gdt * bs, sizeof(gd), gd);
	uint64_t ioff = (uint64_t)get_le32(gd + GD_INODE_TABLE) * bs + 6ull * isz;
	*len = isz + bs + (size_t)rsv * bs;
	uint8_t *buf = calloc(1, *len);
	blk_pread(d, ioff & ~511ull, sizeof(sec), sec);
	memcpy(buf, sec + (ioff & 511), isz);
	*dind = ino_block(buf, EXT2_DIND_BLOCK);
	*rsv_out = rsv;
	if (*dind)
		blk_pread(d, (uint64_t)*dind * bs, bs, buf + isz);
	if (rsv)
		blk_pread(d, (gdt + gdt_blocks) * bs, (uint64_t)rsv * bs, buf + isz + bs);
	return buf;
}

/* Files, a double indirect one, directories, fill to ENOSPC, delete everything. */
static void busy(const char *tag, struct fs *fs)
{
	int bad = 0, i;
	bad |= fs_mkdir(fs, "/w", 0755) < 0;
	for (i = 0; i < 500 && !bad; i++) {
		char n[64];
		snprintf(n, sizeof(n), "/w/f%d", i);
		bad |= put(fs, n, 3000, 0, 'a') < 0;
	}
	bad |= put(fs, "/w/big", 1, 400 << 10, 'b') < 0;
	is_int(bad, 0, "%s: files, a double indirect one", tag);
	int rc = 0;
	for (i = 0; rc == 0; i++) {
		char n[64];
		snprintf(n, sizeof(n), "/fill%d", i);
		rc = put(fs, n, 256 << 10, 0, 'c');
	}
	is_int(rc, -ENOSPC, "%s: filled to ENOSPC", tag);
	for (int k = 0; k < i; k++) {
		char n[64];
		snprintf(n, sizeof(n), "/fill%d", k);
		fs_unlink(fs, n);
	}
	for (int k = 0; k < 500; k += 2) {
		char n[64];
		snprintf(n, sizeof(n), "/w/f%d", k);
		fs_unlink(fs, n);
	}
}

static void resize_inode(const char *tag, bool mke2fs, bool csum)
{
	char img[512];
	struct bdev *d;
	if (mke2fs) {
		snprintf(img, sizeof(img), "%s/%s", tfs_tmpdir(), tag);
		tap_require(
		    tfs_sh("mke2fs -q -F -t ext3 -b 1024 '%s' 24M >/dev/null 2>&1%s", img, "") == 0,
		    "%s: mke2fs", tag);
		d = open_file(img);
	} else {
		struct fs_mkfs_opts o;
		fs_mkfs_opts_default(&o);
		o.block_size = 1024;
		o.metadata_csum = csum;
		d = tfs_image(tag, 24 << 20, &o, img, sizeof(img));
	}
	tap_require(d, "%s: image", tag);
	size_t len, len2;
	uint32_t dind, dind2, rsv, rsv2;
	uint8_t *before = resize_bytes(d, &len, &dind, &rsv);
	ok(dind && rsv, "%s: a resize inode with %u reserved GDT blocks", tag, rsv);
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "%s: mounted", tag);
	busy(tag, fs);
	is_int(fs_unmount(fs), 0, "%s: unmount", tag);
	uint8_t *after = resize_bytes(d, &len2, &dind2, &rsv2);
	ok(len == len2 && !memcmp(before, after, len),
	   "%s: inode 7, its map and the reserved GDT blocks are byte-identical", tag);
	char script[64], out[256];
	snprintf(script, sizeof(script), "testb %u\n", dind);
	tfs_debugfs_script(img, script, out, sizeof(out));
	ok(strstr(out, "marked in use") != NULL, "%s: its block is still in use: %s", tag,
	   strtok(out, "\n") ? out : "");
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean", tag);
	free(before);
	free(after);
	blk_close(d);
}

/* ---- extended attribute blocks -------------------------------------------------- */
static uint32_t file_acl(const char *img, const char *path)
{
	char script[300], out[8192];
	unsigned acl = 0;
	snprintf(script, sizeof(script), "stat %s\n", path);
	if (tfs_debugfs_script(img, script, out, sizeof(out)) >= 0) {
		const char *p = strstr(out, "File ACL: ");
		if (p)
			sscanf(p, "File ACL: %u", &acl);
	}
	return acl;
}

static bool in_use(const char *img, uint32_t blk)
{
	char script[64], out[256];
	snprintf(script, sizeof(script), "testb %u\n", blk);
	tfs_debugfs_script(img, script, out, sizeof(out));
	return strstr(out, "marked in use") != NULL;
}

/* debugfs's `ea_get` of attr on path is exactly want. */
static bool ea_is(const char *img, const char *path, const char *attr, const char *want, size_t len)
{
	char script[700], out[64], dump[512];
	snprintf(dump, sizeof(dump), "%s/ea-out", tfs_tmpdir());
	unlink(dump);
	snprintf(script, sizeof(script), "ea_get -f %s %s %s\n", dump, path, attr);
	tfs_debugfs_script(img, script, out, sizeof(out));
	return tfs_file_is(dump, want, len);
}

static void xattr(const char *tag, int isz)
{
	char img[512], val[512], val2[512], data[512], cmds[512], isz_s[16];
	snprintf(img, sizeof(img), "%s/%s", tfs_tmpdir(), tag);
	snprintf(val, sizeof(val), "%s/val", tfs_tmpdir());
	snprintf(val2, sizeof(val2), "%s/val2", tfs_tmpdir());
	snprintf(data, sizeof(data), "%s/data", tfs_tmpdir());
	snprintf(cmds, sizeof(cmds), "%s/cmds", tfs_tmpdir());
	snprintf(isz_s, sizeof(isz_s), "%d", isz);
	/* values too big for the inode's own space: each goes to a block */
	static char v1[600], v2[700];
	for (size_t i = 0; i < sizeof(v1); i++)
		v1[i] = (char)('a' + i % 26);
	for (size_t i = 0; i < sizeof(v2); i++)
		v2[i] = (char)('A' + i % 23);
	FILE *f = fopen(val, "w");
	fwrite(v1, 1, sizeof(v1), f);
	fclose(f);
	f = fopen(val2, "w");
	fwrite(v2, 1, sizeof(v2), f);
	fclose(f);
	f = fopen(data, "w");
	fputs("some data\n", f);
	fclose(f);
	f = fopen(cmds, "w");
	fprintf(f,
	        "write %s /f\nwrite %s /g\nwrite %s /h\nmkdir /d\n"
	        "ea_set -f %s /f user.big\nea_set -f %s /g user.other\n",
	        data, data, data, val, val2);
	fclose(f);
	tap_require(tfs_sh("mke2fs -q -F -t ext3 -b 1024 -N 256 -I %s '%s' 8M >/dev/null 2>&1",
	                   isz_s, img) == 0,
	            "%s: mke2fs", tag);
	tap_require(tfs_sh("debugfs -w -f '%s' '%s' >/dev/null 2>&1", cmds, img) == 0,
	            "%s: debugfs ea_set", tag);
	uint32_t bf = file_acl(img, "/f"), bg = file_acl(img, "/g");
	ok(bf && bg && bf != bg, "%s: /f and /g have xattr blocks (%u, %u)", tag, bf, bg);
	/* /h shares /f's block: refcount 2, one more block in its i_blocks */
	struct bdev *d = open_file(img);
	tap_require(d, "%s: open", tag);
	uint8_t blk[1024];
	blk_pread(d, (uint64_t)bf * 1024, 1024, blk);
	put_le32(blk + XH_REFCOUNT, 2);
	blk_pwrite(d, (uint64_t)bf * 1024, 1024, blk, 0);
	blk_close(d);
	char sif[300];
	snprintf(sif, sizeof(sif), "sif /h file_acl %u\nsif /h blocks 4\n", bf);
	f = fopen(cmds, "w");
	fputs(sif, f);
	fclose(f);
	tap_require(tfs_sh("debugfs -w -f '%s' '%s' >/dev/null 2>&1", cmds, img) == 0,
	            "%s: debugfs shares the block", tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn accepts the image debugfs made", tag);

	d = open_file(img);
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "%s: mounted", tag);
	int rc = 0;
	rc |= put(fs, "/f", 40000, 10, 'x'); /* into the indirect blocks */
	rc |= fs_rename(fs, "/f", "/d/f2");
	rc |= fs_chmod(fs, "/d/f2", 0600);
	rc |= fs_truncate(fs, "/g", 0);
	rc |= put(fs, "/g", 5000, 0, 'y');
	rc |= fs_unlink(fs, "/h");
	is_int(rc, 0, "%s: write, rename, chmod, truncate, unlink one sharer", tag);
	struct fs_stat st;
	fs_stat(fs, "/d/f2", &st);
	is_int(st.blocks, (1 + (40010 + 1023) / 1024 + 1) * 2,
	       "%s: i_blocks counts data, indirect and xattr block", tag);
	is_int(fs_unmount(fs), 0, "%s: unmount", tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean", tag);
	is_int(file_acl(img, "/d/f2"), bf, "%s: /f keeps its xattr block", tag);
	ok(ea_is(img, "/d/f2", "user.big", v1, sizeof(v1)), "%s: debugfs reads its attribute", tag);
	ok(ea_is(img, "/g", "user.other", v2, sizeof(v2)), "%s: /g's attribute survives truncate",
	   tag);
	blk_pread(d, (uint64_t)bf * 1024, 1024, blk);
	is_int(get_le32(blk + XH_REFCOUNT), 1, "%s: the shared block's refcount dropped to 1", tag);
	ok(in_use(img, bf), "%s: ... and it is still in use", tag);

	fs = mnt(d, NULL);
	tap_require(fs, "%s: remounted", tag);
	is_int(fs_unlink(fs, "/d/f2"), 0, "%s: unlink the last user", tag);
	struct fs_file *of;
	is_int(fs_open(fs, "/g", FS_O_RDWR, 0, &of), 0, "%s: open /g", tag);
	is_int(fs_unlink(fs, "/g"), 0, "%s: unlink /g while open", tag);
	is_int(fs_close(of), 0, "%s: close frees it", tag);
	is_int(fs_unmount(fs), 0, "%s: unmount", tag);
	ok(!in_use(img, bf), "%s: the last user's xattr block is free", tag);
	ok(!in_use(img, bg), "%s: the orphan's xattr block is free", tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean after the frees", tag);
	blk_close(d);
}

/* ---- EMLINK ----------------------------------------------------------------------- */
static void link_limit(void)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 1024;
	o.inode_size = 128;
	o.inodes = 34000;
	char img[512];
	struct bdev *d = tfs_image("emlink", 80 << 20, &o, img, sizeof(img));
	tap_require(d, "emlink: image");
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "emlink: mounted");
	fs_mkdir(fs, "/top", 0755);
	int bad = 0, i;
	char n[64];
	/* '.' and the parent's entry make 2; each subdirectory's '..' adds one */
	for (i = 0; i < 32000 - 2 && !bad; i++) {
		snprintf(n, sizeof(n), "/top/d%d", i);
		bad = fs_mkdir(fs, n, 0755) < 0 ? i + 1 : 0;
	}
	is_int(bad, 0, "emlink: 31,998 subdirectories");
	struct fs_stat st;
	fs_stat(fs, "/top", &st);
	is_int(st.nlink, 32000, "emlink: the directory has 32,000 links");
	is_int(fs_mkdir(fs, "/top/one-more", 0755), -EMLINK, "emlink: mkdir is EMLINK");
	fs_mkdir(fs, "/other", 0755);
	is_int(fs_rename(fs, "/other", "/top/other"), -EMLINK, "emlink: moving a directory in too");
	is_int(fs_rename(fs, "/top/d0", "/top/d0-renamed"), 0, "emlink: renaming inside is fine");
	is_int(put(fs, "/top/file", 10, 0, 'f'), 0, "emlink: files need no link of the directory");
	is_int(fs_rmdir(fs, "/top/d1"), 0, "emlink: rmdir");
	is_int(fs_mkdir(fs, "/top/again", 0755), 0, "emlink: then mkdir works again");

	is_int(put(fs, "/x", 10, 0, 'x'), 0, "emlink: a file");
	fs_mkdir(fs, "/links", 0755);
	for (i = 1; i < 32000 && !bad; i++) {
		snprintf(n, sizeof(n), "/links/l%d", i);
		bad = fs_link(fs, "/x", n) < 0 ? i : 0;
	}
	is_int(bad, 0, "emlink: 31,999 more links to the file");
	fs_stat(fs, "/x", &st);
	is_int(st.nlink, 32000, "emlink: the file has 32,000 links");
	is_int(fs_link(fs, "/x", "/links/too-many"), -EMLINK, "emlink: link is EMLINK");
	is_int(fs_unmount(fs), 0, "emlink: unmount");
	ok(tfs_e2fsck_clean(img), "emlink: e2fsck -fn clean");
	blk_close(d);
}

/* ---- a full htree --------------------------------------------------------------- */
/* A directory whose two-level index is full (1 KiB blocks, 255-byte names: three to
 * a leaf) refuses a name whose leaf would have to split with ENOSPC, as ext3 does,
 * while the filesystem still has room; every name made before stays found, other
 * directories still take names, and the image stays e2fsck-clean and indexed. */
static void htree_full(bool csum)
{
	const char *tag = csum ? "htree-full-csum" : "htree-full";
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 1024;
	o.inode_size = 128;
	o.inodes = 72000;
	o.metadata_csum = csum;
	char img[512];
	struct bdev *d = tfs_image(tag, 96 << 20, &o, img, sizeof(img));
	tap_require(d, "%s: image", tag);
	struct fs *fs = mnt(d, NULL);
	tap_require(fs, "%s: mounted", tag);
	fs_mkdir(fs, "/big", 0755);
	char n[300];
	int made = 0, rc = 0;
	for (; made < 70000; made++) {
		snprintf(n, sizeof(n), "/big/%06d-%0248d", made, made);
		struct fs_file *f;
		if ((rc = fs_open(fs, n, FS_O_WRONLY | FS_O_CREAT, 0644, &f)) < 0)
			break;
		fs_close(f);
	}
	is_int(rc, -ENOSPC, "%s: the directory refused a name after %d (ENOSPC)", tag, made);
	ok(strstr(fs_err(fs)->msg, "index is full") != NULL, "%s: the message says why: %s", tag,
	   fs_err(fs)->msg);
	ok(made > 20000, "%s: after tens of thousands of names", tag);
	struct fs_statfs sf;
	fs_statfs(fs, &sf);
	ok(sf.free_inodes > 1000 && sf.free_blocks > 1000, "%s: with room left on the filesystem",
	   tag);
	/* the refused names leave nothing behind: no inode, no block */
	snprintf(n, sizeof(n), "/big/%06d-%0248d", made, made);
	is_int(fs_mkdir(fs, n, 0755), -ENOSPC, "%s: mkdir there is ENOSPC too", tag);
	struct fs_statfs sf2;
	fs_statfs(fs, &sf2);
	ok(sf2.free_inodes == sf.free_inodes && sf2.free_blocks == sf.free_blocks,
	   "%s: the refused directory took no inode or block", tag);
	int lost = 0;
	for (int i = 0; i < made; i += 97) {
		struct fs_stat st;
		snprintf(n, sizeof(n), "/big/%06d-%0248d", i, i);
		lost += fs_stat(fs, n, &st) != 0;
	}
	is_int(lost, 0, "%s: the names made before are found", tag);
	is_int(put(fs, "/elsewhere", 10, 0, 'e'), 0, "%s: another directory takes a name", tag);
	snprintf(n, sizeof(n), "/big/%06d-%0248d", 0, 0);
	is_int(fs_unlink(fs, n), 0, "%s: unlink from the full directory", tag);
	is_int(fs_unmount(fs), 0, "%s: unmount", tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean", tag);
	/* debugfs's dump of the root: two levels, every root entry taken */
	static char out[4096];
	unsigned count = 0, limit = 1;
	const char *c = NULL, *l = NULL;
	if (tfs_debugfs_script(img, "htree /big", out, sizeof(out)) > 0) {
		c = strstr(out, "Number of entries (count): ");
		l = strstr(out, "Number of entries (limit): ");
	}
	if (c && l) {
		count = (unsigned)atoi(c + strlen("Number of entries (count): "));
		limit = (unsigned)atoi(l + strlen("Number of entries (limit): "));
	}
	ok(strstr(out, "Indirect levels: 1") && count == limit,
	   "%s: debugfs: still indexed, two levels, root full (%u of %u)", tag, count, limit);
	blk_close(d);
}

/* ---- the order of metadata write-back -------------------------------------------- */
/* Without a journal, sync writes the dirty metadata home in ascending block order,
 * as the kernel's sync of the block device does, whatever order the operations
 * (and reads in between) touched the blocks in. */
static void writeback_order(void)
{
	struct bdev *m, *d;
	struct rec_log *log;
	tap_require(blk_mem_open(512, (32u << 20) / 512, &m) == 0, "order: mem");
	tap_require(rec_log_new(512, (32u << 20) / 512, &log) == 0 &&
	                rec_open(m, log, REC_OWN_LOWER, &d) == 0,
	            "order: recorder");
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 1024;
	o.now = 1;
	struct bo_err err = {{0}};
	tap_require(fs_mkfs(d, &o, &err) == 0, "order: mkfs");
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	mo.no_journal = true;
	struct fs *fs = mnt(d, &mo);
	tap_require(fs != NULL, "order: mount");
	char path[64];
	int bad = 0;
	for (int i = 0; i < 7; i++) {
		snprintf(path, sizeof(path), "/d%d", i);
		bad += fs_mkdir(fs, path, 0755) != 0;
	}
	for (int i = 0; i < 300; i++) {
		snprintf(path, sizeof(path), "/d%d/f%d", (i * 5) % 7, i);
		bad += put(fs, path, 1500, 0, 'o') != 0;
	}
	struct fs_stat st;
	for (int i = 299; i >= 0; i -= 3) { /* reads in another order */
		snprintf(path, sizeof(path), "/d%d/f%d", (i * 5) % 7, i);
		bad += fs_stat(fs, path, &st) != 0;
	}
	is_int(bad, 0, "order: 300 files in 7 directories, then stat in reverse");
	size_t from = rec_log_len(log);
	is_int(fs_sync(fs), 0, "order: sync");
	uint64_t last = 0;
	size_t writes = 0, out_of_order = 0;
	for (size_t i = from; i < rec_log_len(log); i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->op == REC_FLUSH)
			break;
		if (e->op != REC_WRITE)
			continue;
		out_of_order += writes && e->lba <= last;
		last = e->lba;
		writes++;
	}
	ok(writes > 20, "order: sync wrote %zu metadata blocks", writes);
	is_int((int)out_of_order, 0, "order: in ascending block order, before its flush");
	fs_unmount(fs);
	blk_close(d);
	rec_log_free(log);
}

/* ---- data blocks handed to the device -------------------------------------------- */
/* On mem, a one-block write of a 4 KiB-block filesystem hands the device a page
 * (write_swap) and reuses the page it gets back. Every file must still read back,
 * after rewrites (mem gives back pages it adopted), a remount, and on the image
 * e2fsck and debugfs see; with and without the journal. */
static void handed_pages(const char *tag, bool journal)
{
	struct bdev *d;
	tap_require(blk_mem_open(512, (64u << 20) / 512, &d) == 0, "mem");
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 4096;
	o.now = 1;
	struct bo_err err = {{0}};
	tap_require(fs_mkfs(d, &o, &err) == 0, "%s: mkfs: %s", tag, err.msg);
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	mo.now = 1;
	mo.no_journal = !journal;
	struct fs *fs = mnt(d, &mo);
	tap_require(fs != NULL, "%s: mount", tag);
	enum { N = 600 };
	char path[64];
	int bad = 0;
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < N; i += round + 1) { /* all, evens, threes */
			snprintf(path, sizeof(path), "/f%d", i);
			bad += put(fs, path, 4096, 0, (char)(round * 7 + i)) != 0;
		}
	is_int(bad, 0, "%s: %d one-block files written, then rewritten twice", tag, N);
	is_int(fs_unmount(fs), 0, "%s: unmount", tag);
	fs = mnt(d, &mo);
	tap_require(fs != NULL, "%s: mount again", tag);
	char want[4096], got[4096];
	int wrong = 0;
	for (int i = 0; i < N; i++) {
		int round = i % 3 == 0 ? 2 : i % 2 == 0 ? 1 : 0;
		memset(want, (char)(round * 7 + i), sizeof(want));
		snprintf(path, sizeof(path), "/f%d", i);
		struct fs_file *f;
		if (fs_open(fs, path, FS_O_RDONLY, 0, &f) < 0 ||
		    fs_pread(f, got, sizeof(got), 0) != (ssize_t)sizeof(got)) {
			wrong++;
			continue;
		}
		fs_close(f);
		wrong += memcmp(got, want, sizeof(got)) != 0;
	}
	is_int(wrong, 0, "%s: after a remount every file holds its last write", tag);
	is_int(fs_unmount(fs), 0, "%s: unmount", tag);
	char img[300];
	snprintf(img, sizeof(img), "%s/%s", tfs_tmpdir(), tag);
	is_int(snapshot(d, img), 0, "%s: image of the device", tag);
	ok(tfs_e2fsck_clean(img), "%s: e2fsck -fn clean", tag);
	memset(want, (char)(2 * 7 + 0), sizeof(want));
	ok(tfs_debugfs_cat(img, "/f0", want, sizeof(want)),
	   "%s: debugfs reads a rewritten file back", tag);
	memset(want, (char)(0 * 7 + 1), sizeof(want));
	ok(tfs_debugfs_cat(img, "/f1", want, sizeof(want)), "%s: and one written once", tag);
	blk_close(d);
}

int main(void)
{
	state_and_count();
	resize_inode("resize-blackout", false, false);
	resize_inode("resize-blackout-csum", false, true);
	resize_inode("resize-mke2fs", true, false);
	xattr("xattr-128", 128);
	xattr("xattr-256", 256);
	link_limit();
	htree_full(false);
	htree_full(true);
	writeback_order();
	handed_pages("pages-nojournal", false);
	handed_pages("pages-ordered", true);
	tfs_cleanup();
	return tap_done();
}
