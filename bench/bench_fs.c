/* bench_fs.c — the filesystem workloads of the issue, blackout beside e2fsprogs'
 * libext2fs on the same kind of image (the same mkfs'd bytes in RAM: blackout on its
 * mem device, libext2fs through a small in-memory io_manager) in the same run: create+write 4 KiB+close of 100,000 files in 1,000 directories,
 * readdir+stat of all, unlink all, 1 GiB sequential write and read; plus memcpy
 * bandwidth as the yardstick for sequential I/O. Prints ratios; never fails on speed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ext2fs/ext2fs.h>

#include "blackout/fs.h"
#include "blackout/util.h"

#define NDIRS  1000
#define NFILES 100 /* per directory */
#define SEQ    (1ull << 30)
#define CHUNK  (1u << 20)
#define FAIL() (fprintf(stderr, "bench_fs: failed at line %d\n", __LINE__), -1)

/* The image under test: blackout's mem device; libext2fs gets a copy of its bytes. */
struct bench {
	struct bdev *dev;
	uint8_t *mem; /* libext2fs's image */
	uint64_t size;
};
static struct bench B;

static int make_image(uint64_t size, uint64_t inodes)
{
	if (B.dev)
		blk_close(B.dev);
	free(B.mem);
	B.mem = NULL;
	B.size = size;
	struct bo_err err = {{0}};
	int rc = blk_mem_open(512, size / 512, &B.dev);
	if (rc < 0)
		return rc;
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 4096;
	o.inodes = inodes;
	rc = fs_mkfs(B.dev, &o, &err);
	if (rc < 0) {
		fprintf(stderr, "bench_fs: mkfs: %s\n", bo_errstr(&err, rc));
		return rc;
	}
	B.mem = malloc(size);
	if (!B.mem)
		return -ENOMEM;
	/* both images fully touched, so neither side pays first-use page faults */
	rc = blk_pread(B.dev, 0, size, B.mem);
	return rc < 0 ? rc : blk_pwrite(B.dev, 0, size, B.mem, 0);
}

/* ---- a memory io_manager for libext2fs ------------------------------------------- */
static struct struct_io_manager mem_io_manager;

static errcode_t mem_open(const char *name, int flags, io_channel *out)
{
	(void)flags;
	io_channel ch;
	errcode_t e = ext2fs_get_memzero(sizeof(*ch), &ch);
	if (e)
		return e;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = &mem_io_manager;
	ch->name = strdup(name);
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->flags = flags;
	*out = ch;
	return 0;
}
static errcode_t mem_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	free(ch->name);
	ext2fs_free_mem(&ch);
	return 0;
}
static errcode_t mem_set_blksize(io_channel ch, int bs)
{
	ch->block_size = bs;
	return 0;
}
static uint8_t *mem_at(io_channel ch, unsigned long long blk, int count, size_t *len)
{
	uint64_t off = blk * (uint64_t)ch->block_size;
	*len = count < 0 ? (size_t)-count : (size_t)count * (size_t)ch->block_size;
	return off + *len > B.size ? NULL : B.mem + off;
}
static errcode_t mem_read64(io_channel ch, unsigned long long blk, int count, void *buf)
{
	size_t len;
	uint8_t *p = mem_at(ch, blk, count, &len);
	if (!p)
		return EXT2_ET_SHORT_READ;
	memcpy(buf, p, len);
	return 0;
}
static errcode_t mem_write64(io_channel ch, unsigned long long blk, int count, const void *buf)
{
	size_t len;
	uint8_t *p = mem_at(ch, blk, count, &len);
	if (!p)
		return EXT2_ET_SHORT_WRITE;
	memcpy(p, buf, len);
	return 0;
}
static errcode_t mem_read(io_channel ch, unsigned long blk, int count, void *buf)
{
	return mem_read64(ch, blk, count, buf);
}
static errcode_t mem_write(io_channel ch, unsigned long blk, int count, const void *buf)
{
	return mem_write64(ch, blk, count, buf);
}
static errcode_t mem_write_byte(io_channel ch, unsigned long off, int count, const void *buf)
{
	(void)ch;
	if (off + (unsigned)count > B.size)
		return EXT2_ET_SHORT_WRITE;
	memcpy(B.mem + off, buf, (size_t)count);
	return 0;
}
static errcode_t mem_flush(io_channel ch)
{
	(void)ch;
	return 0;
}
static errcode_t mem_set_option(io_channel ch, const char *opt, const char *arg)
{
	(void)ch;
	(void)opt;
	(void)arg;
	return EXT2_ET_INVALID_ARGUMENT;
}
static struct struct_io_manager mem_io_manager = {
    .magic = EXT2_ET_MAGIC_IO_MANAGER,
    .name = "blackout bench memory",
    .open = mem_open,
    .close = mem_close,
    .set_blksize = mem_set_blksize,
    .read_blk = mem_read,
    .write_blk = mem_write,
    .flush = mem_flush,
    .write_byte = mem_write_byte,
    .set_option = mem_set_option,
    .read_blk64 = mem_read64,
    .write_blk64 = mem_write64,
};

/* ---- blackout ------------------------------------------------------------------- */
struct bo_times {
	double create, scan, unlink, seqw, seqr;
};

static struct fs *bo_mount(struct bdev **dp)
{
	struct bo_err err = {{0}};
	*dp = B.dev;
	struct fs *fs;
	if (fs_mount(*dp, NULL, &fs, &err) < 0) {
		fprintf(stderr, "bench_fs: mount: %s\n", err.msg);
		return NULL;
	}
	return fs;
}

struct scan_ctx {
	struct fs *fs;
	const char *dir;
	uint64_t n;
};
static int scan_cb(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)ino;
	(void)ft;
	struct scan_ctx *c = ctx;
	if (name[0] == '.')
		return 0;
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", c->dir, name);
	struct fs_stat st;
	if (fs_lstat(c->fs, p, &st) == 0)
		c->n++;
	return 0;
}

static int bo_files(struct bo_times *t)
{
	struct bdev *d;
	struct fs *fs = bo_mount(&d);
	if (!fs)
		return FAIL();
	static char buf[4096];
	memset(buf, 'b', sizeof(buf));
	char p[128];
	double t0 = bo_now();
	for (int i = 0; i < NDIRS; i++) {
		snprintf(p, sizeof(p), "/d%d", i);
		if (fs_mkdir(fs, p, 0755) < 0)
			return FAIL();
		for (int k = 0; k < NFILES; k++) {
			snprintf(p, sizeof(p), "/d%d/f%d", i, k);
			struct fs_file *f;
			if (fs_open(fs, p, FS_O_WRONLY | FS_O_CREAT, 0644, &f) < 0 ||
			    fs_pwrite(f, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
				return FAIL();
			fs_close(f);
		}
	}
	fs_sync(fs);
	t->create = bo_now() - t0;
	t0 = bo_now();
	uint64_t seen = 0;
	for (int i = 0; i < NDIRS; i++) {
		snprintf(p, sizeof(p), "/d%d", i);
		struct scan_ctx c = {fs, p, 0};
		fs_readdir(fs, p, scan_cb, &c);
		seen += c.n;
	}
	t->scan = bo_now() - t0;
	if (seen != (uint64_t)NDIRS * NFILES)
		fprintf(stderr, "bench_fs: blackout saw %llu files\n", (unsigned long long)seen);
	t0 = bo_now();
	for (int i = 0; i < NDIRS; i++)
		for (int k = 0; k < NFILES; k++) {
			snprintf(p, sizeof(p), "/d%d/f%d", i, k);
			if (fs_unlink(fs, p) < 0)
				return FAIL();
		}
	fs_sync(fs);
	t->unlink = bo_now() - t0;
	fs_unmount(fs);
	(void)d;
	return 0;
}

static int bo_seq(struct bo_times *t, char *buf)
{
	struct bdev *d;
	struct fs *fs = bo_mount(&d);
	if (!fs)
		return FAIL();
	struct fs_file *f;
	if (fs_open(fs, "/seq", FS_O_RDWR | FS_O_CREAT, 0644, &f) < 0)
		return FAIL();
	double t0 = bo_now();
	for (uint64_t off = 0; off < SEQ; off += CHUNK)
		if (fs_pwrite(f, buf, CHUNK, off) != CHUNK)
			return FAIL();
	fs_fsync(f);
	t->seqw = bo_now() - t0;
	t0 = bo_now();
	for (uint64_t off = 0; off < SEQ; off += CHUNK)
		if (fs_pread(f, buf, CHUNK, off) != CHUNK)
			return FAIL();
	t->seqr = bo_now() - t0;
	fs_close(f);
	fs_unmount(fs);
	(void)d;
	return 0;
}

/* ---- libext2fs ------------------------------------------------------------------ */
static ext2_filsys e2_open(void)
{
	ext2_filsys fs;
	errcode_t e =
	    ext2fs_open("mem", EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0, &mem_io_manager, &fs);
	if (e || ext2fs_read_bitmaps(fs)) {
		fprintf(stderr, "bench_fs: ext2fs_open: %ld\n", (long)e);
		return NULL;
	}
	return fs;
}

static int e2_create(ext2_filsys fs, ext2_ino_t dir, const char *name, const void *buf,
                     unsigned len)
{
	ext2_ino_t ino;
	if (ext2fs_new_inode(fs, dir, 010644, 0, &ino))
		return FAIL();
	errcode_t e = ext2fs_link(fs, dir, name, ino, EXT2_FT_REG_FILE);
	if (e == EXT2_ET_DIR_NO_SPACE) {
		if (ext2fs_expand_dir(fs, dir))
			return FAIL();
		e = ext2fs_link(fs, dir, name, ino, EXT2_FT_REG_FILE);
	}
	if (e)
		return FAIL();
	ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	struct ext2_inode in;
	memset(&in, 0, sizeof(in));
	in.i_mode = 010644;
	in.i_links_count = 1;
	in.i_atime = in.i_ctime = in.i_mtime = (uint32_t)time(NULL);
	if (ext2fs_write_new_inode(fs, ino, &in))
		return FAIL();
	ext2_file_t f;
	unsigned written;
	if (ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f))
		return FAIL();
	if (len && ext2fs_file_write(f, buf, len, &written))
		return FAIL();
	return ext2fs_file_close(f) ? -1 : (int)ino;
}

struct e2_scan {
	ext2_filsys fs;
	uint64_t n;
};
static int e2_scan_cb(struct ext2_dir_entry *de, int off, int bs, char *b, void *priv)
{
	(void)off;
	(void)bs;
	(void)b;
	struct e2_scan *c = priv;
	if ((de->name_len & 0xff) && de->name[0] == '.')
		return 0;
	struct ext2_inode in;
	if (ext2fs_read_inode(c->fs, de->inode, &in) == 0)
		c->n++;
	return 0;
}

static int e2_files(struct bo_times *t)
{
	ext2_filsys fs = e2_open();
	if (!fs)
		return FAIL();
	static char buf[4096];
	memset(buf, 'e', sizeof(buf));
	static ext2_ino_t dirs[NDIRS];
	char name[64];
	double t0 = bo_now();
	for (int i = 0; i < NDIRS; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		errcode_t me = ext2fs_mkdir(fs, EXT2_ROOT_INO, 0, name);
		if (me == EXT2_ET_DIR_NO_SPACE && ext2fs_expand_dir(fs, EXT2_ROOT_INO) == 0)
			me = ext2fs_mkdir(fs, EXT2_ROOT_INO, 0, name);
		if (me || ext2fs_lookup(fs, EXT2_ROOT_INO, name, (int)strlen(name), NULL, &dirs[i]))
			return FAIL();
		for (int k = 0; k < NFILES; k++) {
			snprintf(name, sizeof(name), "f%d", k);
			if (e2_create(fs, dirs[i], name, buf, sizeof(buf)) < 0)
				return FAIL();
		}
	}
	ext2fs_flush(fs);
	t->create = bo_now() - t0;
	t0 = bo_now();
	struct e2_scan c = {fs, 0};
	for (int i = 0; i < NDIRS; i++)
		ext2fs_dir_iterate(fs, dirs[i], 0, NULL, e2_scan_cb, &c);
	t->scan = bo_now() - t0;
	if (c.n != (uint64_t)NDIRS * NFILES)
		fprintf(stderr, "bench_fs: libext2fs saw %llu files\n", (unsigned long long)c.n);
	t0 = bo_now();
	for (int i = 0; i < NDIRS; i++)
		for (int k = 0; k < NFILES; k++) {
			snprintf(name, sizeof(name), "f%d", k);
			ext2_ino_t ino;
			struct ext2_inode in;
			if (ext2fs_lookup(fs, dirs[i], name, (int)strlen(name), NULL, &ino) ||
			    ext2fs_unlink(fs, dirs[i], name, ino, 0) ||
			    ext2fs_read_inode(fs, ino, &in))
				return FAIL();
			in.i_links_count = 0;
			in.i_dtime = (uint32_t)time(NULL);
			if (ext2fs_punch(fs, ino, &in, NULL, 0, ~0ULL) ||
			    ext2fs_write_inode(fs, ino, &in))
				return FAIL();
			ext2fs_inode_alloc_stats2(fs, ino, -1, 0);
		}
	ext2fs_flush(fs);
	t->unlink = bo_now() - t0;
	ext2fs_close(fs);
	return 0;
}

static int e2_seq(struct bo_times *t, char *buf)
{
	ext2_filsys fs = e2_open();
	if (!fs)
		return FAIL();
	int ino = e2_create(fs, EXT2_ROOT_INO, "seq", buf, 0);
	if (ino < 0)
		return FAIL();
	ext2_file_t f;
	unsigned n;
	if (ext2fs_file_open(fs, (ext2_ino_t)ino, EXT2_FILE_WRITE, &f))
		return FAIL();
	double t0 = bo_now();
	for (uint64_t off = 0; off < SEQ; off += CHUNK)
		if (ext2fs_file_write(f, buf, CHUNK, &n) || n != CHUNK)
			return FAIL();
	ext2fs_file_flush(f);
	ext2fs_flush(fs);
	t->seqw = bo_now() - t0;
	ext2fs_file_llseek(f, 0, EXT2_SEEK_SET, NULL);
	t0 = bo_now();
	for (uint64_t off = 0; off < SEQ; off += CHUNK)
		if (ext2fs_file_read(f, buf, CHUNK, &n) || n != CHUNK)
			return FAIL();
	t->seqr = bo_now() - t0;
	ext2fs_file_close(f);
	ext2fs_close(fs);
	return 0;
}

static double memcpy_gbs(char *dst, const char *src)
{
	double t0 = bo_now();
	for (uint64_t off = 0; off < SEQ; off += CHUNK)
		memcpy(dst + off % (256u << 20), src + off % (64u << 20), CHUNK);
	return SEQ / (bo_now() - t0) / 1e9;
}

int main(void)
{
	initialize_ext2_error_table();
	char *buf = malloc(CHUNK), *big = malloc(256u << 20), *src = malloc(64u << 20);
	if (!buf || !big || !src)
		return 1;
	memset(buf, 'x', CHUNK);
	memset(big, 1, 256u << 20);
	memset(src, 2, 64u << 20);
	struct bo_times b = {0}, e = {0};
	int rc = 0;
	printf(
	    "bench_fs: memory-backed images, ext3 with 4 KiB blocks (journal untouched by both)\n");
	if ((rc = make_image(1ull << 30, 131072)) == 0)
		rc |= bo_files(&b) | e2_files(&e);
	if (rc == 0 && (rc = make_image(1280ull << 20, 0)) == 0)
		rc |= bo_seq(&b, buf) | e2_seq(&e, buf);
	double mc = memcpy_gbs(big, src);
	if (B.dev)
		blk_close(B.dev);
	free(B.mem);
	if (rc) {
		fprintf(stderr, "bench_fs: a workload failed\n");
		return 1;
	}
	double nf = (double)NDIRS * NFILES;
	printf("%-44s %12s %12s %8s\n", "workload", "blackout", "libext2fs", "ratio");
	printf("%-44s %10.0f/s %10.0f/s %7.2fx\n", "create+write 4KiB+close, 100k files/1k dirs",
	       nf / b.create, nf / e.create, e.create / b.create);
	printf("%-44s %10.0f/s %10.0f/s %7.2fx\n", "readdir+stat of all files", nf / b.scan,
	       nf / e.scan, e.scan / b.scan);
	printf("%-44s %10.0f/s %10.0f/s %7.2fx\n", "unlink all", nf / b.unlink, nf / e.unlink,
	       e.unlink / b.unlink);
	printf("%-44s %8.2fGB/s %8.2fGB/s %7.2fx\n", "1 GiB sequential write", SEQ / b.seqw / 1e9,
	       SEQ / e.seqw / 1e9, e.seqw / b.seqw);
	printf("%-44s %8.2fGB/s %8.2fGB/s %7.2fx\n", "1 GiB sequential read", SEQ / b.seqr / 1e9,
	       SEQ / e.seqr / 1e9, e.seqr / b.seqr);
	printf("%-44s %8.2fGB/s   (blackout write = %.2fx memcpy)\n", "memcpy", mc,
	       SEQ / b.seqw / 1e9 / mc);
	free(buf);
	free(big);
	free(src);
	return 0;
}
