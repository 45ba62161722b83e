// SPDX-License-Identifier: GPL-2.0-or-later
/* ops.c — the public file operations of fs.h: path resolution, create, mkdir,
 * unlink, rmdir, rename, link, symlink, open files, read/write, truncate, attributes,
 * fsync, statfs. Each modifying call is one operation (one journal handle) or a few. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "fs/fs_int.h"

#define FS_MAX_SYMLINKS 40
#define FS_PATH_MAX     4096

/* ---- path resolution ------------------------------------------------------------ */
struct walk {
	uint32_t parent, ino;
	char name[EXT2_NAME_LEN + 1];
	size_t nlen;
};

static int read_link(struct fs *fs, struct fs_inode *in, char *buf, size_t cap, size_t *len);

static int get_dir(struct fs *fs, uint32_t ino, struct fs_inode *in)
{
	int rc = fs_iget(fs, ino, in);
	if (rc < 0)
		return rc;
	if (!mode_is_dir(ino_mode(in->raw)))
		return -ENOTDIR;
	return 0;
}

/* Resolves `path` from directory `cwd`. On success w->ino is the object; -ENOENT with
 * w->parent != 0 means only the last component is missing (w->name holds it). */
static int walk_path(struct fs *fs, uint32_t cwd, const char *path, bool follow, int *links,
                     struct walk *w)
{
	if (strnlen(path, FS_PATH_MAX) >= FS_PATH_MAX)
		return bo_errf(&fs->err, -ENAMETOOLONG, "path too long");
	uint32_t cur = path[0] == '/' ? EXT2_ROOT_INO : cwd;
	w->parent = 0;
	w->ino = cur;
	w->name[0] = 0;
	w->nlen = 0;
	const char *p = path;
	struct fs_inode dir;
	bool have_dir = false; /* dir holds inode `cur` already */
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - p);
		if (n > EXT2_NAME_LEN)
			return bo_errf(&fs->err, -ENAMETOOLONG, "name too long: %.40s...", p);
		const char *q = e;
		while (*q == '/')
			q++;
		bool last = *q == 0;
		int rc = 0;
		if (!have_dir)
			rc = get_dir(fs, cur, &dir);
		else if (!mode_is_dir(ino_mode(dir.raw)))
			rc = -ENOTDIR;
		if (rc < 0)
			return rc;
		memcpy(w->name, p, n);
		w->name[n] = 0;
		w->nlen = n;
		w->parent = cur;
		uint32_t ino;
		rc = fs_dir_lookup(fs, &dir, p, n, &ino, NULL);
		if (rc == -ENOENT) {
			w->ino = 0;
			if (!last)
				w->parent = 0;
			return -ENOENT;
		}
		if (rc < 0)
			return rc;
		if (!last) {
			const char *ne = q;
			while (*ne && *ne != '/')
				ne++;
			fs_dcache_prefetch(fs, ino, q, (size_t)(ne - q));
		}
		struct fs_inode in;
		if ((rc = fs_iget(fs, ino, &in)) < 0)
			return rc;
		if (ino_links(in.raw) == 0 || ino_mode(in.raw) == 0)
			return bo_errf(&fs->err, -EUCLEAN,
			               "directory inode %u: entry '%.*s' points to free inode %u",
			               cur, (int)n, p, ino);
		have_dir = false;
		if (mode_is_lnk(ino_mode(in.raw)) && (!last || follow)) {
			if (++*links > FS_MAX_SYMLINKS)
				return -ELOOP;
			char *target = malloc(FS_PATH_MAX);
			if (!target)
				return -ENOMEM;
			size_t tl;
			rc = read_link(fs, &in, target, FS_PATH_MAX, &tl);
			if (rc == 0) {
				target[tl] = 0;
				struct walk sub;
				rc = walk_path(fs, cur, target, true, links, &sub);
				if (rc == 0)
					ino = sub.ino;
				else if (rc == -ENOENT && last && sub.parent) {
					/* a dangling final symlink: creation goes through it */
					*w = sub;
				}
			}
			free(target);
			if (rc < 0)
				return rc;
		} else if (!last) {
			dir = in;
			have_dir = true;
		}
		cur = ino;
		w->ino = ino;
		p = e;
		if (last && *e == '/') {
			struct fs_inode t;
			if ((rc = get_dir(fs, ino, &t)) < 0)
				return rc;
		}
	}
	return 0;
}

static int lookup(struct fs *fs, const char *path, bool follow, struct walk *w)
{
	int links = 0;
	if (!path || path[0] != '/')
		return bo_errf(&fs->err, -EINVAL, "path must be absolute: '%s'", path ? path : "");
	return walk_path(fs, EXT2_ROOT_INO, path, follow, &links, w);
}

static bool is_dot(const struct walk *w)
{
	return (w->nlen == 1 && w->name[0] == '.') ||
	       (w->nlen == 2 && w->name[0] == '.' && w->name[1] == '.');
}

static int read_link(struct fs *fs, struct fs_inode *in, char *buf, size_t cap, size_t *len)
{
	uint64_t size = ino_size(in->raw);
	uint64_t ea = ino_file_acl(in->raw) ? fs->bs / 512 : 0;
	if (size == 0 || size >= fs->bs || size >= EXT2_MAX_SYMLINK_LEN)
		return bo_errf(&fs->err, -EUCLEAN, "symlink inode %u: bad size %llu", in->ino,
		               (unsigned long long)size);
	if (ino_blocks(in->raw) == ea) {
		if (size >= 4 * EXT2_N_BLOCKS)
			return bo_errf(&fs->err, -EUCLEAN,
			               "fast symlink inode %u: size %llu too big", in->ino,
			               (unsigned long long)size);
		memcpy(buf, in->raw + I_BLOCK, size < cap ? size : cap);
	} else {
		uint64_t p;
		int rc = fs_bmap(fs, in, 0, false, &p);
		if (rc < 0)
			return rc;
		if (!p)
			return bo_errf(&fs->err, -EUCLEAN, "symlink inode %u: no block", in->ino);
		struct fs_buf *b;
		if ((rc = fs_bread(fs, p, &b)) < 0)
			return rc;
		memcpy(buf, b->data, size < cap ? size : cap);
	}
	*len = size < cap ? size : cap;
	return 0;
}

/* ---- helpers -------------------------------------------------------------------- */
static uint32_t link_max(const struct fs *fs)
{
	(void)fs;
	return EXT2_LINK_MAX;
}

static void touch(struct fs *fs, struct fs_inode *in, bool m, bool c)
{
	uint32_t now = fs_now(fs);
	if (m)
		put_le32(in->raw + I_MTIME, now);
	if (c)
		put_le32(in->raw + I_CTIME, now);
}

static void inode_init(struct fs *fs, struct fs_inode *in, uint32_t ino, uint16_t mode)
{
	memset(in->raw, 0, sizeof(in->raw));
	in->ino = ino;
	uint32_t now = fs_now(fs);
	put_le16(in->raw + I_MODE, mode);
	put_le32(in->raw + I_ATIME, now);
	put_le32(in->raw + I_CTIME, now);
	put_le32(in->raw + I_MTIME, now);
	uint64_t h = bo_hash64(BO_HASH64_INIT, &fs->op_serial, sizeof(fs->op_serial));
	h = bo_hash64(h, &ino, sizeof(ino));
	put_le32(in->raw + I_GENERATION, (uint32_t)h);
	if (fs->inode_size >= EXT2_GOOD_OLD_INODE_SIZE + EXT4_GOOD_EXTRA_ISIZE) {
		put_le16(in->raw + I_EXTRA_ISIZE, EXT4_GOOD_EXTRA_ISIZE);
		put_le32(in->raw + I_CRTIME, now);
	}
}

static int open_count(struct fs *fs, uint32_t ino)
{
	int n = 0;
	for (struct fs_file *f = fs->files; f; f = f->next)
		n += f->ino == ino;
	return n;
}

/* Before the first change of an operation that drops a link of ino: if that frees
 * the inode, every block it frees must be its own (rm must never leave a file half
 * removed); damage found here is recorded and changes nothing. */
static int check_drop(struct fs *fs, uint32_t ino, bool whole_dir)
{
	struct fs_inode in;
	int rc = fs_iget(fs, ino, &in);
	if (rc == 0 && (whole_dir || ino_links(in.raw) <= 1) && !open_count(fs, ino))
		rc = fs_inode_check_release(fs, &in, 0);
	return rc == -EUCLEAN ? fs_error(fs, rc) : rc;
}

/* Drops one link; frees the inode or puts it on the orphan list when it is open. */
static int drop_link(struct fs *fs, uint32_t ino, bool whole_dir)
{
	struct fs_inode in;
	int rc = fs_iget(fs, ino, &in);
	if (rc < 0)
		return rc;
	uint16_t l = ino_links(in.raw);
	if (whole_dir || l <= 1)
		l = 0;
	else
		l--;
	put_le16(in.raw + I_LINKS_COUNT, l);
	touch(fs, &in, false, true);
	if (l)
		return fs_iput(fs, &in);
	if (open_count(fs, ino)) {
		for (struct fs_file *f = fs->files; f; f = f->next)
			f->orphan |= f->ino == ino;
		return fs_orphan_add(fs, &in);
	}
	return fs_inode_release(fs, &in);
}

static int add_links(struct fs *fs, uint32_t ino, int d)
{
	struct fs_inode in;
	int rc = fs_iget(fs, ino, &in);
	if (rc < 0)
		return rc;
	put_le16(in.raw + I_LINKS_COUNT, (uint16_t)(ino_links(in.raw) + d));
	touch(fs, &in, true, true);
	return fs_iput(fs, &in);
}

/* Creates an inode of `mode` named by the missing last component of w. */
static int create_at(struct fs *fs, struct walk *w, uint16_t mode, uint32_t *out,
                     struct fs_inode *in)
{
	struct fs_inode dir;
	int rc = get_dir(fs, w->parent, &dir);
	if (rc < 0)
		return rc;
	bool isdir = mode_is_dir(mode);
	if (isdir && ino_links(dir.raw) >= link_max(fs))
		return -EMLINK;
	uint32_t ino;
	if ((rc = fs_alloc_inode(fs, w->parent, isdir, &ino)) < 0)
		return rc;
	inode_init(fs, in, ino, mode);
	put_le16(in->raw + I_LINKS_COUNT, isdir ? 2 : 1);
	if ((isdir && (rc = fs_dir_init(fs, in, w->parent)) < 0) || (rc = fs_iput(fs, in)) < 0 ||
	    /* `dir` is still the parent as it is on disk: nothing above wrote it
	     * (the new inode is another one), and fs_dir_add writes the changes it
	     * makes to it through `dir` itself, so it stays so */
	    (rc = fs_dir_add(fs, &dir, w->name, w->nlen, ino, mode_to_ftype(mode))) < 0) {
		/* no room for the name (the directory's index is full, or no block for
		 * it, or a damaged bitmap): the inode goes again with its blocks, as in
		 * ext3, rather than stay allocated with no name */
		struct bo_err why = fs->err;
		if (fs_inode_release(fs, in) == 0)
			fs->err = why;
		return rc;
	}
	if (isdir)
		fs_dcache_new_dir(fs, ino);
	if (isdir)
		put_le16(dir.raw + I_LINKS_COUNT, (uint16_t)(ino_links(dir.raw) + 1));
	touch(fs, &dir, true, true);
	if ((rc = fs_iput(fs, &dir)) < 0)
		return rc;
	*out = ino;
	return 0;
}

static void fill_stat(const struct fs_inode *in, struct fs_stat *st)
{
	st->ino = in->ino;
	st->mode = ino_mode(in->raw);
	st->nlink = ino_links(in->raw);
	st->uid = ino_uid(in->raw);
	st->gid = ino_gid(in->raw);
	st->size = ino_size(in->raw);
	st->blocks = ino_blocks(in->raw);
	st->atime = get_le32(in->raw + I_ATIME);
	st->mtime = get_le32(in->raw + I_MTIME);
	st->ctime = get_le32(in->raw + I_CTIME);
}

/* ---- the API -------------------------------------------------------------------- */
int fs_statfs(struct fs *fs, struct fs_statfs *st)
{
	st->block_size = fs->bs;
	st->blocks = fs->blocks;
	uint64_t fb = 0, fi = 0;
	for (uint32_t g = 0; g < fs->groups; g++) {
		fb += gd_free_blocks(fs_gd(fs, g), fs->desc_size);
		fi += gd_free_inodes(fs_gd(fs, g), fs->desc_size);
	}
	uint64_t r = sb_get32(fs->sb, SB_R_BLOCKS_COUNT_LO);
	st->free_blocks = fb;
	st->avail_blocks = fb > r ? fb - r : 0;
	st->inodes = fs->inodes_count;
	st->free_inodes = fi;
	st->name_max = EXT2_NAME_LEN;
	return 0;
}

static int do_stat(struct fs *fs, const char *path, struct fs_stat *st, bool follow)
{
	struct walk w;
	int rc = lookup(fs, path, follow, &w);
	if (rc < 0)
		return rc;
	struct fs_inode in;
	if ((rc = fs_iget(fs, w.ino, &in)) < 0)
		return rc;
	fill_stat(&in, st);
	return 0;
}

int fs_stat(struct fs *fs, const char *path, struct fs_stat *st)
{
	return do_stat(fs, path, st, true);
}

int fs_lstat(struct fs *fs, const char *path, struct fs_stat *st)
{
	return do_stat(fs, path, st, false);
}

static int set_size(struct fs *fs, struct fs_inode *in, uint64_t size)
{
	uint64_t old = ino_size(in->raw);
	int rc = 0;
	if (size > fs_max_file_size(fs))
		return -EFBIG;
	if (size < old) {
		uint64_t keep = (size + fs->bs - 1) >> fs->bs_bits, p = 0;
		uint32_t part = (uint32_t)(size & (fs->bs - 1));
		/* the last kept block is mapped before anything is freed: a damaged
		 * pointer to it must refuse the truncate, not stop it half done */
		if (part && (rc = fs_bmap(fs, in, size >> fs->bs_bits, false, &p)) < 0)
			return rc;
		if ((rc = fs_truncate_blocks(fs, in, keep)) < 0)
			return rc;
		if (part && p) {
			/* zero the tail of the last block so a later extension reads zeros */
			uint8_t *z = calloc(1, fs->bs - part);
			if (!z)
				return -ENOMEM;
			rc = fs_write_data(fs, in, z, fs->bs - part, size);
			free(z);
			if (rc < 0)
				return rc;
		}
	}
	if (size > 0x7fffffffull && !sb_has_ro_compat(fs->sb, EXT2_FEATURE_RO_COMPAT_LARGE_FILE)) {
		sb_put32(fs->sb, SB_FEATURE_RO_COMPAT,
		         sb_get32(fs->sb, SB_FEATURE_RO_COMPAT) |
		             EXT2_FEATURE_RO_COMPAT_LARGE_FILE);
		fs_sb_dirty(fs, FS_SB_ANY);
	}
	ino_set_size(in->raw, size);
	touch(fs, in, true, true);
	return fs_iput(fs, in);
}

static int truncate_ino(struct fs *fs, uint32_t ino, uint64_t size)
{
	struct fs_inode in;
	int rc = fs_op_begin(fs, 64);
	if (rc < 0)
		return rc;
	rc = fs_iget(fs, ino, &in);
	if (rc == 0 && mode_is_dir(ino_mode(in.raw)))
		rc = -EISDIR;
	else if (rc == 0 && !mode_is_reg(ino_mode(in.raw)))
		rc = -EINVAL;
	if (rc == 0)
		rc = set_size(fs, &in, size);
	return fs_op_end(fs, rc);
}

int fs_truncate(struct fs *fs, const char *path, uint64_t size)
{
	struct walk w;
	int rc = lookup(fs, path, true, &w);
	return rc < 0 ? rc : truncate_ino(fs, w.ino, size);
}

int fs_open(struct fs *fs, const char *path, int flags, uint16_t mode, struct fs_file **out)
{
	*out = NULL;
	int acc = flags & 3;
	if (acc == 3)
		return -EINVAL;
	bool creat = flags & FS_O_CREAT, excl = flags & FS_O_EXCL;
	struct walk w;
	int rc = lookup(fs, path, !(creat && excl), &w);
	struct fs_inode in;
	if (rc == -ENOENT && creat && w.parent) {
		uint32_t ino;
		for (int tries = 0;; tries++) {
			if ((rc = fs_op_begin(fs, 16)) < 0)
				return rc;
			rc =
			    create_at(fs, &w, (uint16_t)(EXT2_S_IFREG | (mode & 07777)), &ino, &in);
			rc = fs_op_end(fs, rc);
			if (tries || !fs_enospc_retry(fs, rc))
				break;
		}
		if (rc < 0)
			return rc;
		w.ino = ino;
	} else if (rc < 0) {
		return rc;
	} else {
		if (creat && excl)
			return -EEXIST;
		if ((rc = fs_iget(fs, w.ino, &in)) < 0)
			return rc;
		uint16_t m = ino_mode(in.raw);
		if (mode_is_dir(m) && acc != FS_O_RDONLY)
			return -EISDIR;
		if ((flags & FS_O_DIRECTORY) && !mode_is_dir(m))
			return -ENOTDIR;
		if (!mode_is_dir(m) && !mode_is_reg(m) && acc != FS_O_RDONLY)
			return -EINVAL;
		if ((flags & FS_O_TRUNC) && acc != FS_O_RDONLY && mode_is_reg(m) &&
		    ino_size(in.raw) > 0 && (rc = truncate_ino(fs, w.ino, 0)) < 0)
			return rc;
	}
	struct fs_file *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fs = fs;
	f->ino = w.ino;
	f->flags = flags;
	f->next = fs->files;
	fs->files = f;
	*out = f;
	return 0;
}

int fs_close(struct fs_file *f)
{
	if (!f)
		return 0;
	struct fs *fs = f->fs;
	struct fs_file **pp = &fs->files;
	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
	uint32_t ino = f->ino;
	bool orphan = f->orphan;
	free(f);
	/* only an inode unlinked while open (drop_link marked its handles) can be
	 * left without a name: the last close of any other needs nothing */
	if (!orphan || open_count(fs, ino) || fs->ro)
		return 0;
	struct fs_inode in;
	int rc = fs_iget(fs, ino, &in);
	if (rc < 0 || ino_links(in.raw) != 0)
		return rc;
	/* the last close of an unlinked file */
	if ((rc = fs_op_begin(fs, 64)) < 0)
		return rc;
	rc = fs_orphan_del(fs, &in);
	if (rc == 0)
		rc = fs_inode_release(fs, &in);
	return fs_op_end(fs, rc);
}

ssize_t fs_pread(struct fs_file *f, void *buf, size_t len, uint64_t off)
{
	struct fs *fs = f->fs;
	if ((f->flags & 3) == FS_O_WRONLY)
		return -EBADF;
	struct fs_inode in;
	int rc = fs_iget(fs, f->ino, &in);
	if (rc < 0)
		return rc;
	if (mode_is_dir(ino_mode(in.raw)))
		return -EISDIR;
	uint64_t size = ino_size(in.raw);
	if (off >= size)
		return 0;
	if (len > size - off)
		len = (size_t)(size - off);
	if (len > (size_t)SSIZE_MAX)
		len = SSIZE_MAX;
	rc = fs_read_data(fs, &in, buf, len, off);
	return rc < 0 ? rc : (ssize_t)len;
}

#define WRITE_CHUNK (1u << 22)

ssize_t fs_pwrite(struct fs_file *f, const void *buf, size_t len, uint64_t off)
{
	struct fs *fs = f->fs;
	int acc = f->flags & 3;
	if (acc != FS_O_WRONLY && acc != FS_O_RDWR)
		return -EBADF;
	if (fs->ro)
		return -EROFS;
	size_t done = 0;
	bool retried = false;
	while (done < len || len == 0) {
		struct fs_inode in;
		int rc = fs_op_begin(fs, (uint32_t)(WRITE_CHUNK / fs->bs / fs->apb + 16));
		if (rc < 0)
			return done ? (ssize_t)done : rc;
		rc = fs_iget(fs, f->ino, &in);
		if (rc == 0 && !mode_is_reg(ino_mode(in.raw)))
			rc = mode_is_dir(ino_mode(in.raw)) ? -EISDIR : -EINVAL;
		uint64_t old = rc == 0 ? ino_size(in.raw) : 0;
		uint64_t pos = (f->flags & FS_O_APPEND) ? old : off + done;
		size_t n = len - done > WRITE_CHUNK ? WRITE_CHUNK : len - done;
		if (rc == 0 && (pos + n > fs_max_file_size(fs) || pos + n < pos))
			rc = -EFBIG;
		if (rc == 0 && n)
			rc = fs_write_data(fs, &in, (const uint8_t *)buf + done, n, pos);
		if (rc == 0) {
			if (pos + n > old) {
				ino_set_size(in.raw, pos + n);
				if (pos + n > 0x7fffffffull &&
				    !sb_has_ro_compat(fs->sb, EXT2_FEATURE_RO_COMPAT_LARGE_FILE)) {
					sb_put32(fs->sb, SB_FEATURE_RO_COMPAT,
					         sb_get32(fs->sb, SB_FEATURE_RO_COMPAT) |
					             EXT2_FEATURE_RO_COMPAT_LARGE_FILE);
					fs_sb_dirty(fs, FS_SB_ANY);
				}
			}
			touch(fs, &in, true, true);
			rc = fs_iput(fs, &in);
		} else if (in.ino == f->ino && mode_is_reg(ino_mode(in.raw))) {
			/* give back what this chunk allocated past the old end */
			int r = fs_truncate_blocks(fs, &in, (old + fs->bs - 1) >> fs->bs_bits);
			if (r == 0)
				fs_iput(fs, &in);
		}
		rc = fs_op_end(fs, rc);
		if (rc < 0 && !retried && fs_enospc_retry(fs, rc)) {
			retried = true; /* the blocks this write waited for are free now */
			continue;
		}
		if (rc < 0)
			return done ? (ssize_t)done : rc;
		retried = false;
		done += n;
		if (len == 0)
			break;
	}
	return (ssize_t)done;
}

int fs_fstat(struct fs_file *f, struct fs_stat *st)
{
	struct fs_inode in;
	int rc = fs_iget(f->fs, f->ino, &in);
	if (rc == 0)
		fill_stat(&in, st);
	return rc;
}

int fs_fsync(struct fs_file *f)
{
	return fs_sync_ino(f->fs, f->ino);
}

int fs_fdatasync(struct fs_file *f)
{
	return fs_sync_ino(f->fs, f->ino);
}

int fs_mkdir(struct fs *fs, const char *path, uint16_t mode)
{
	struct walk w;
	int rc = lookup(fs, path, false, &w);
	if (rc == 0)
		return -EEXIST;
	if (rc != -ENOENT || !w.parent)
		return rc;
	for (int tries = 0;; tries++) {
		if ((rc = fs_op_begin(fs, 16)) < 0)
			return rc;
		uint32_t ino;
		struct fs_inode in;
		rc = create_at(fs, &w, (uint16_t)(EXT2_S_IFDIR | (mode & 07777)), &ino, &in);
		rc = fs_op_end(fs, rc);
		if (tries || !fs_enospc_retry(fs, rc))
			return rc;
	}
}

int fs_unlink(struct fs *fs, const char *path)
{
	struct walk w;
	int rc = lookup(fs, path, false, &w);
	if (rc < 0)
		return rc;
	if (!w.parent)
		return -EISDIR;
	struct fs_inode in;
	if ((rc = fs_iget(fs, w.ino, &in)) < 0)
		return rc;
	if (mode_is_dir(ino_mode(in.raw)))
		return -EISDIR;
	if ((rc = check_drop(fs, w.ino, false)) < 0)
		return rc;
	if ((rc = fs_op_begin(fs, 32)) < 0)
		return rc;
	struct fs_inode dir;
	rc = get_dir(fs, w.parent, &dir);
	if (rc == 0)
		rc = fs_dir_remove(fs, &dir, w.name, w.nlen);
	if (rc == 0) {
		touch(fs, &dir, true, true);
		rc = fs_iput(fs, &dir);
	}
	if (rc == 0)
		rc = drop_link(fs, w.ino, false);
	return fs_op_end(fs, rc);
}

int fs_rmdir(struct fs *fs, const char *path)
{
	struct walk w;
	int rc = lookup(fs, path, false, &w);
	if (rc < 0)
		return rc;
	if (!w.parent)
		return -EBUSY;
	if (w.nlen == 1 && w.name[0] == '.')
		return -EINVAL;
	if (is_dot(&w))
		return -ENOTEMPTY;
	struct fs_inode in;
	if ((rc = fs_iget(fs, w.ino, &in)) < 0)
		return rc;
	if (!mode_is_dir(ino_mode(in.raw)))
		return -ENOTDIR;
	bool empty;
	if ((rc = fs_dir_is_empty(fs, &in, &empty)) < 0)
		return rc;
	if (!empty)
		return -ENOTEMPTY;
	if ((rc = check_drop(fs, w.ino, true)) < 0)
		return rc;
	if ((rc = fs_op_begin(fs, 32)) < 0)
		return rc;
	struct fs_inode dir;
	rc = get_dir(fs, w.parent, &dir);
	if (rc == 0)
		rc = fs_dir_remove(fs, &dir, w.name, w.nlen);
	if (rc == 0) {
		if (ino_links(dir.raw) > 2)
			put_le16(dir.raw + I_LINKS_COUNT, (uint16_t)(ino_links(dir.raw) - 1));
		touch(fs, &dir, true, true);
		rc = fs_iput(fs, &dir);
	}
	if (rc == 0)
		rc = drop_link(fs, w.ino, true);
	return fs_op_end(fs, rc);
}

int fs_rename(struct fs *fs, const char *from, const char *to)
{
	struct walk fw, tw;
	int rc = lookup(fs, from, false, &fw);
	if (rc < 0)
		return rc;
	if (!fw.parent || is_dot(&fw))
		return fw.parent ? -EINVAL : -EBUSY;
	rc = lookup(fs, to, false, &tw);
	if (rc < 0 && !(rc == -ENOENT && tw.parent))
		return rc;
	if (rc == 0 && (!tw.parent || is_dot(&tw)))
		return tw.parent ? -EINVAL : -EBUSY;
	bool exists = rc == 0;
	if (exists && tw.ino == fw.ino)
		return 0;
	struct fs_inode fin, tin;
	if ((rc = fs_iget(fs, fw.ino, &fin)) < 0)
		return rc;
	bool fdir = mode_is_dir(ino_mode(fin.raw)), tdir = false;
	if (exists) {
		if ((rc = fs_iget(fs, tw.ino, &tin)) < 0)
			return rc;
		tdir = mode_is_dir(ino_mode(tin.raw));
		if (fdir && !tdir)
			return -ENOTDIR;
		if (!fdir && tdir)
			return -EISDIR;
		if (tdir) {
			bool empty;
			if ((rc = fs_dir_is_empty(fs, &tin, &empty)) < 0)
				return rc;
			if (!empty)
				return -ENOTEMPTY;
		}
	}
	if (fdir) {
		bool inside;
		if ((rc = fs_dir_is_ancestor(fs, fw.ino, tw.parent, &inside)) < 0)
			return rc;
		if (inside)
			return -EINVAL;
	}
	struct fs_inode tp;
	if ((rc = get_dir(fs, tw.parent, &tp)) < 0)
		return rc;
	if (fdir && !exists && tw.parent != fw.parent && ino_links(tp.raw) >= link_max(fs))
		return -EMLINK;
	if (exists && (rc = check_drop(fs, tw.ino, tdir)) < 0)
		return rc;
	if ((rc = fs_op_begin(fs, 64)) < 0)
		return rc;
	uint8_t ft = mode_to_ftype(ino_mode(fin.raw));
	if (exists)
		rc = fs_dir_set(fs, &tp, tw.name, tw.nlen, fw.ino, ft);
	else
		rc = fs_dir_add(fs, &tp, tw.name, tw.nlen, fw.ino, ft);
	struct fs_inode fp;
	if (rc == 0 && (rc = get_dir(fs, fw.parent, &fp)) == 0)
		rc = fs_dir_remove(fs, &fp, fw.name, fw.nlen);
	if (rc == 0 && fdir && fw.parent != tw.parent) {
		/* the moved directory's '..' now links the new parent; a replaced
		 * directory's '..' link to the new parent goes away with it */
		if ((rc = fs_iget(fs, fw.ino, &fin)) == 0)
			rc = fs_dir_set(fs, &fin, "..", 2, tw.parent, EXT2_FT_DIR);
		if (rc == 0)
			rc = add_links(fs, fw.parent, -1);
		if (rc == 0 && !exists)
			rc = add_links(fs, tw.parent, 1);
	} else if (rc == 0 && fdir && exists) {
		rc = add_links(fs, tw.parent, -1);
	}
	if (rc == 0) {
		rc = add_links(fs, fw.parent, 0);
		if (rc == 0 && tw.parent != fw.parent)
			rc = add_links(fs, tw.parent, 0);
	}
	if (rc == 0 && (rc = fs_iget(fs, fw.ino, &fin)) == 0) {
		touch(fs, &fin, false, true);
		rc = fs_iput(fs, &fin);
	}
	if (rc == 0 && exists)
		rc = drop_link(fs, tw.ino, tdir);
	return fs_op_end(fs, rc);
}

int fs_link(struct fs *fs, const char *existing, const char *newpath)
{
	struct walk ew, nw;
	int rc = lookup(fs, existing, false, &ew);
	if (rc < 0)
		return rc;
	struct fs_inode in;
	if ((rc = fs_iget(fs, ew.ino, &in)) < 0)
		return rc;
	if (mode_is_dir(ino_mode(in.raw)))
		return -EPERM;
	rc = lookup(fs, newpath, false, &nw);
	if (rc == 0)
		return -EEXIST;
	if (rc != -ENOENT || !nw.parent)
		return rc;
	if (ino_links(in.raw) >= link_max(fs))
		return -EMLINK;
	if ((rc = fs_op_begin(fs, 16)) < 0)
		return rc;
	struct fs_inode dir;
	rc = get_dir(fs, nw.parent, &dir);
	if (rc == 0)
		rc =
		    fs_dir_add(fs, &dir, nw.name, nw.nlen, ew.ino, mode_to_ftype(ino_mode(in.raw)));
	if (rc == 0 && (rc = fs_iget(fs, nw.parent, &dir)) == 0) {
		touch(fs, &dir, true, true);
		rc = fs_iput(fs, &dir);
	}
	if (rc == 0)
		rc = add_links(fs, ew.ino, 1);
	return fs_op_end(fs, rc);
}

int fs_symlink(struct fs *fs, const char *target, const char *linkpath)
{
	size_t tl = strnlen(target, FS_PATH_MAX);
	if (tl == 0)
		return -ENOENT;
	if (tl >= FS_PATH_MAX || tl >= fs->bs)
		return -ENAMETOOLONG;
	struct walk w;
	int rc = lookup(fs, linkpath, false, &w);
	if (rc == 0)
		return -EEXIST;
	if (rc != -ENOENT || !w.parent)
		return rc;
	if ((rc = fs_op_begin(fs, 16)) < 0)
		return rc;
	uint32_t ino;
	struct fs_inode in;
	rc = create_at(fs, &w, EXT2_S_IFLNK | 0777, &ino, &in);
	if (rc == 0 && (rc = fs_iget(fs, ino, &in)) == 0) {
		if (tl < 4 * EXT2_N_BLOCKS) {
			memcpy(in.raw + I_BLOCK, target, tl);
		} else {
			uint64_t p;
			struct fs_buf *b;
			rc = fs_bmap(fs, &in, 0, true, &p);
			if (rc == 0)
				rc = fs_bnew(fs, p, &b);
			if (rc == 0)
				rc = fs_baccess(fs, b);
			if (rc == 0) {
				memset(b->data, 0, fs->bs);
				memcpy(b->data, target, tl);
				fs_bdirty(fs, b);
			}
		}
		ino_set_size(in.raw, tl);
		if (rc == 0)
			rc = fs_iput(fs, &in);
	}
	return fs_op_end(fs, rc);
}

ssize_t fs_readlink(struct fs *fs, const char *path, char *buf, size_t len)
{
	struct walk w;
	int rc = lookup(fs, path, false, &w);
	if (rc < 0)
		return rc;
	struct fs_inode in;
	if ((rc = fs_iget(fs, w.ino, &in)) < 0)
		return rc;
	if (!mode_is_lnk(ino_mode(in.raw)))
		return -EINVAL;
	size_t n;
	if ((rc = read_link(fs, &in, buf, len, &n)) < 0)
		return rc;
	return (ssize_t)n;
}

struct rd_ctx {
	struct fs *fs;
	int (*fn)(void *ctx, const char *name, uint32_t ino, uint8_t file_type);
	int (*plus)(void *ctx, const char *name, uint32_t ino, const struct fs_stat *st);
	void *ctx;
};
static int rd_cb(void *ctx, const char *name, size_t len, uint32_t ino, uint8_t ft)
{
	struct rd_ctx *c = ctx;
	char n[EXT2_NAME_LEN + 1];
	memcpy(n, name, len);
	n[len] = 0;
	if (!c->plus)
		return c->fn(c->ctx, n, ino, ft);
	/* by the entry's inode number, as getdents + fstatat: no path walk */
	struct fs_inode in;
	struct fs_stat st;
	if (fs_iget(c->fs, ino, &in) < 0)
		return c->plus(c->ctx, n, ino, NULL);
	fill_stat(&in, &st);
	return c->plus(c->ctx, n, ino, &st);
}

static int readdir_with(struct fs *fs, const char *path, struct rd_ctx *c)
{
	struct walk w;
	int rc = lookup(fs, path, true, &w);
	if (rc < 0)
		return rc;
	struct fs_inode dir;
	if ((rc = get_dir(fs, w.ino, &dir)) < 0)
		return rc;
	return fs_dir_iterate(fs, &dir, rd_cb, c);
}

int fs_readdir(struct fs *fs, const char *path,
               int (*fn)(void *ctx, const char *name, uint32_t ino, uint8_t file_type), void *ctx)
{
	struct rd_ctx c = {fs, fn, NULL, ctx};
	return readdir_with(fs, path, &c);
}

int fs_readdir_plus(struct fs *fs, const char *path,
                    int (*fn)(void *ctx, const char *name, uint32_t ino, const struct fs_stat *st),
                    void *ctx)
{
	struct rd_ctx c = {fs, NULL, fn, ctx};
	return readdir_with(fs, path, &c);
}

static int setattr(struct fs *fs, const char *path, int what, uint32_t a, uint32_t b)
{
	struct walk w;
	int rc = lookup(fs, path, true, &w);
	if (rc < 0)
		return rc;
	if ((rc = fs_op_begin(fs, 4)) < 0)
		return rc;
	struct fs_inode in;
	rc = fs_iget(fs, w.ino, &in);
	if (rc == 0) {
		if (what == 0) {
			put_le16(in.raw + I_MODE,
			         (uint16_t)((ino_mode(in.raw) & EXT2_S_IFMT) | (a & 07777)));
		} else if (what == 1) {
			ino_set_uid(in.raw, a);
			ino_set_gid(in.raw, b);
		} else {
			put_le32(in.raw + I_ATIME, a);
			put_le32(in.raw + I_MTIME, b);
		}
		touch(fs, &in, false, true);
		rc = fs_iput(fs, &in);
	}
	return fs_op_end(fs, rc);
}

int fs_chmod(struct fs *fs, const char *path, uint16_t mode)
{
	return setattr(fs, path, 0, mode, 0);
}

int fs_chown(struct fs *fs, const char *path, uint32_t uid, uint32_t gid)
{
	return setattr(fs, path, 1, uid, gid);
}

int fs_utimes(struct fs *fs, const char *path, uint32_t atime, uint32_t mtime)
{
	return setattr(fs, path, 2, atime, mtime);
}
