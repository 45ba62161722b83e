// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_fs.c — the filesystem workloads of the issue, blackout beside e2fsprogs'
 * libext2fs on the same kind of image (the same mkfs'd bytes in RAM: blackout on its
 * mem device, libext2fs through a small in-memory io_manager) in the same run:
 * create+write 4 KiB+close of 100,000 files in 1,000 directories, readdir+stat of
 * all, unlink all, 1 GiB sequential write and read; plus memcpy bandwidth as the
 * yardstick for sequential I/O. Prints ratios; never fails on speed.
 *
 * libext2fs never writes a journal, so the like-for-like rows mount blackout with
 * no_journal (the ext3 image written as ext2 writes it, journal untouched, as
 * libext2fs does). The file workload is also run journalled (data=ordered, the
 * default mount), against the same peer, to show what the journal costs.
 *
 * Each workload runs in processes of its own (bench_child.h says why), three
 * rounds in each, best of them all; between rounds its image is re-made in place
 * (zeroed, mkfs'd, copied), never freed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ext2fs/ext2fs.h>

#include "blackout/fs.h"
#include "blackout/util.h"
#include "bench_child.h"

#define NDIRS  1000
#define NFILES 100 /* per directory */
#define SEQ    (1ull << 30)
#define CHUNK  (1u << 20)
#define FAIL() (fprintf(stderr, "bench_fs: failed at line %d\n", __LINE__), -1)

/* An image under test: blackout's mem device, and libext2fs's copy of its bytes. */
struct image {
	struct bdev *dev;
	uint8_t *mem;
	uint64_t size;
};
static struct image images[2]; /* one per size the workloads use */
static struct image B;         /* the current one */

static int make_image(uint64_t size, uint64_t inodes)
{
	struct image *im = NULL;
	for (size_t i = 0; i < sizeof(images) / sizeof(images[0]) && !im; i++)
		if (images[i].size == size || !images[i].dev)
			im = &images[i];
	if (!im)
		return -EINVAL;
	if (!im->dev) {
		int rc = blk_mem_open(512, size / 512, &im->dev);
		if (rc < 0)
			return rc;
		im->size = size;
		if (!(im->mem = malloc(size)))
			return -ENOMEM;
	}
	B = *im;
	/* zeroed by writing, not discarding: every page stays mapped */
	static uint8_t zero[CHUNK];
	for (uint64_t off = 0; off < size; off += CHUNK) {
		int rc = blk_pwrite(B.dev, off, size - off < CHUNK ? size - off : CHUNK, zero, 0);
		if (rc < 0)
			return rc;
	}
	struct bo_err err = {{0}};
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	o.block_size = 4096;
	o.inodes = inodes;
	int rc = fs_mkfs(B.dev, &o, &err);
	if (rc < 0) {
		fprintf(stderr, "bench_fs: mkfs: %s\n", bo_errstr(&err, rc));
		return rc;
	}
	rc = blk_pread(B.dev, 0, size, B.mem);
	return rc < 0 ? rc : 0;
}

static void free_images(void)
{
	for (size_t i = 0; i < sizeof(images) / sizeof(images[0]); i++) {
		if (images[i].dev)
			blk_close(images[i].dev);
		free(images[i].mem);
	}
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

/* journal: the default mount (ext3, data=ordered); else no_journal, as libext2fs */
static struct fs *bo_mount(bool journal)
{
	struct bo_err err = {{0}};
	struct fs_mount_opts o;
	fs_mount_opts_default(&o);
	o.no_journal = !journal;
	struct fs *fs;
	if (fs_mount(B.dev, &o, &fs, &err) < 0) {
		fprintf(stderr, "bench_fs: mount: %s\n", err.msg);
		return NULL;
	}
	return fs;
}

/* readdir+stat: each entry's attributes by its inode number (fs_readdir_plus, as
 * `ls -l` does getdents + fstatat), as the peer reads each entry's inode */
static int scan_cb(void *ctx, const char *name, uint32_t ino, const struct fs_stat *st)
{
	(void)ino;
	uint64_t *n = ctx;
	if (name[0] != '.' && st)
		(*n)++;
	return 0;
}

static int bo_files(struct bo_times *t, bool journal)
{
	struct fs *fs = bo_mount(journal);
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
		fs_readdir_plus(fs, p, scan_cb, &seen);
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
	return 0;
}

static int bo_seq(struct bo_times *t, char *buf, bool journal)
{
	struct fs *fs = bo_mount(journal);
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
	if (ext2fs_new_inode(fs, dir, LINUX_S_IFREG | 0644, 0, &ino))
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
	in.i_mode = LINUX_S_IFREG | 0644;
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
		/* choosing the inode first is how a libext2fs caller learns it without a
		 * second directory search */
		if (ext2fs_new_inode(fs, EXT2_ROOT_INO, LINUX_S_IFDIR | 0755, 0, &dirs[i]))
			return FAIL();
		errcode_t me = ext2fs_mkdir(fs, EXT2_ROOT_INO, dirs[i], name);
		if (me == EXT2_ET_DIR_NO_SPACE && ext2fs_expand_dir(fs, EXT2_ROOT_INO) == 0)
			me = ext2fs_mkdir(fs, EXT2_ROOT_INO, dirs[i], name);
		if (me)
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

#define ROUNDS 3

static void best_of(double *acc, double v)
{
	if (v > 0 && (*acc == 0 || v < *acc)) /* 0: not measured */
		*acc = v;
}

static void best(struct bo_times *acc, const struct bo_times *r)
{
	best_of(&acc->create, r->create);
	best_of(&acc->scan, r->scan);
	best_of(&acc->unlink, r->unlink);
	best_of(&acc->seqw, r->seqw);
	best_of(&acc->seqr, r->seqr);
}

static void print_rows(const char *title, const struct bo_times *b, const struct bo_times *e)
{
	double nf = (double)NDIRS * NFILES;
	printf("%s\n", title);
	printf("%-44s %10.0f/s %10.0f/s %7.2fx\n", "  create+write 4KiB+close, 100k files/1k dirs",
	       nf / b->create, nf / e->create, e->create / b->create);
	printf("%-44s %10.0f/s %10.0f/s %7.2fx\n", "  readdir+stat of all files", nf / b->scan,
	       nf / e->scan, e->scan / b->scan);
	printf("%-44s %10.0f/s %10.0f/s %7.2fx\n", "  unlink all", nf / b->unlink, nf / e->unlink,
	       e->unlink / b->unlink);
	printf("%-44s %8.2fGB/s %8.2fGB/s %7.2fx\n", "  1 GiB sequential write",
	       SEQ / b->seqw / 1e9, SEQ / e->seqw / 1e9, e->seqw / b->seqw);
	printf("%-44s %8.2fGB/s %8.2fGB/s %7.2fx\n", "  1 GiB sequential read", SEQ / b->seqr / 1e9,
	       SEQ / e->seqr / 1e9, e->seqr / b->seqr);
}

static double memcpy_gbs(char *dst, const char *src)
{
	double t0 = bo_now();
	for (uint64_t off = 0; off < SEQ; off += CHUNK)
		memcpy(dst + off % (256u << 20), src + off % (64u << 20), CHUNK);
	return SEQ / (bo_now() - t0) / 1e9;
}

/* One peer's workload, ROUNDS times on a freshly made image, best of them, in a
 * process of its own: a peer's heap and page history never slow the other's. */
enum job { BO_FILES, BO_FILES_J, E2_FILES, BO_SEQ, BO_SEQ_J, E2_SEQ };

static int run_job(enum job j, struct bo_times *out)
{
	bool files = j == BO_FILES || j == BO_FILES_J || j == E2_FILES;
	char *buf = malloc(CHUNK);
	if (!buf)
		return FAIL();
	memset(buf, 'x', CHUNK);
	int rc = 0;
	for (int round = 0; round < ROUNDS && rc == 0; round++) {
		struct bo_times r = {0};
		if ((rc = files ? make_image(1ull << 30, 131072) : make_image(1280ull << 20, 0)))
			break;
		switch (j) {
		case BO_FILES: rc = bo_files(&r, false); break;
		case BO_FILES_J: rc = bo_files(&r, true); break;
		case E2_FILES: rc = e2_files(&r); break;
		case BO_SEQ: rc = bo_seq(&r, buf, false); break;
		case BO_SEQ_J: rc = bo_seq(&r, buf, true); break;
		case E2_SEQ: rc = e2_seq(&r, buf); break;
		}
		best(out, &r);
	}
	free(buf);
	free_images();
	return rc;
}

static int job_fn(void *ctx, void *out)
{
	return run_job(*(enum job *)ctx, out);
}

static int in_child(enum job j, struct bo_times *out)
{
	struct bo_times t = {0};
	if (bench_in_child(job_fn, &j, &t, sizeof(t)))
		return FAIL();
	best(out, &t);
	return 0;
}

/* Best over PROCESSES processes per workload, the peers' processes alternating: on
 * this machine the speed of a process varies as a whole (the same code ran 0.7M
 * and 1.1M creates/s in consecutive processes), and slow spells last tens of
 * seconds (every process of one peer's workload ran slow, then the other's), so
 * each peer gets processes early and late. */
#define PROCESSES 3

int main(void)
{
	initialize_ext2_error_table();
	struct bo_times b = {0}, bj = {0}, e = {0};
	printf("bench_fs: memory-backed images, ext3 with 4 KiB blocks; each workload best of "
	       "%d processes of %d rounds\n",
	       PROCESSES, ROUNDS);
	int rc = 0;
	for (int p = 0; p < PROCESSES && rc == 0; p++) {
		/* the order turns each time, so no peer always runs first */
		static const enum job order[] = {BO_FILES, E2_FILES, BO_FILES_J,
		                                 BO_SEQ,   E2_SEQ,   BO_SEQ_J};
		struct bo_times *acc[] = {&b, &e, &bj, &b, &e, &bj};
		for (int k = 0; k < 6 && rc == 0; k++) {
			int files = (k + p) % 3, seq = 3 + (k + p) % 3;
			int i = k < 3 ? files : seq;
			rc = in_child(order[i], acc[i]);
		}
	}
	if (rc) {
		fprintf(stderr, "bench_fs: a workload failed\n");
		return 1;
	}
	char *big = malloc(256u << 20), *src = malloc(64u << 20);
	if (!big || !src)
		return 1;
	memset(big, 1, 256u << 20);
	memset(src, 2, 64u << 20);
	double mc = 0;
	for (int round = 0; round < ROUNDS; round++) {
		double m = memcpy_gbs(big, src);
		if (m > mc)
			mc = m;
	}
	printf("%-44s %12s %12s %8s\n", "workload", "blackout", "libext2fs", "ratio");
	print_rows("journal untouched by both (blackout mounted no_journal):", &b, &e);
	print_rows("blackout journalling (data=ordered, the default mount), same peer:", &bj, &e);
	printf("%-44s %8.2fGB/s   (blackout write = %.2fx memcpy; journalling %.2fx)\n", "memcpy",
	       mc, SEQ / b.seqw / 1e9 / mc, SEQ / bj.seqw / 1e9 / mc);
	free(big);
	free(src);
	return 0;
}
