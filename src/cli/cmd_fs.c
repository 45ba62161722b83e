/* cmd_fs.c — `blackout mkfs|ls|stat|cat|get|put|mkdir|rm|rmdir|mv|ln|symlink|truncate|df`:
 * the filesystem on an image file, without root, like debugfs. Parsing and printing
 * only; every action is an fs.h call. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blackout/fs.h"
#include "blackout/fsck.h"
#include "blackout/util.h"
#include "cli/cli.h"

struct fscmd {
	const char *name;
	const char *usage;
	const char *help;
	int min_args, max_args; /* after IMAGE */
	bool writes;
	int (*run)(const char *cmd, struct fs *fs, int argc, char **argv, bool flag);
	char flag;      /* one optional single-letter flag, e.g. 'l' for ls -l, 'p' mkdir -p */
	uint64_t paths; /* bit i: argument i after IMAGE is a path inside the image */
};

#define ALL_PATHS UINT64_MAX

/* An image file that cannot be opened. The block layer usually names the file
 * already ("x.img: No such file or directory"); a bare errno gets the name added. */
static int image_fail(const char *cmd, const char *image, const struct bo_err *err, int rc,
                      const char *hint)
{
	const char *why = bo_errstr(err, rc);
	bool named = err->msg[0] != 0;
	return cli_fail(cmd, "%s%s%s%s", named ? "" : image, named ? "" : ": ", why,
	                rc == -ENOENT ? hint : "");
}

static int fail_rc(const char *cmd, struct fs *fs, const char *what, int rc)
{
	return cli_fail(cmd, "%s: %s", what, bo_errstr(fs ? fs_err(fs) : NULL, rc));
}

/* fs_err keeps the last detail; show it only if it is about this failure */
static int op_fail(const char *cmd, struct fs *fs, const char *what, int rc)
{
	(void)fs;
	const char *detail = NULL;
	if (rc == -EUCLEAN || rc == -EIO)
		detail = fs_err(fs)->msg;
	if (detail && detail[0] && rc == -EUCLEAN)
		return cli_fail(cmd, "%s: %s: the filesystem is damaged; run `blackout fsck IMAGE`",
		                what, detail);
	if (detail && detail[0])
		return cli_fail(cmd, "%s: %s", what, detail);
	return cli_fail(cmd, "%s: %s", what, strerror(-rc));
}

static char type_char(uint16_t mode)
{
	switch (mode & 0xF000) {
	case 0x4000: return 'd';
	case 0xA000: return 'l';
	case 0x2000: return 'c';
	case 0x6000: return 'b';
	case 0x1000: return 'p';
	case 0xC000: return 's';
	}
	return '-';
}

static void mode_str(uint16_t mode, char out[11])
{
	const char *r = "rwxrwxrwx";
	out[0] = type_char(mode);
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (0400 >> i)) ? r[i] : '-';
	out[10] = 0;
}

struct ls_ctx {
	struct fs *fs;
	const char *dir;
};

static int ls_cb(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)ctx;
	(void)ino;
	(void)ft;
	printf("%s\n", name);
	return 0;
}

static int ls_long_cb(void *ctx, const char *name, uint32_t ino, const struct fs_stat *st)
{
	struct ls_ctx *c = ctx;
	if (!st) {
		printf("?????????? %8u %s\n", ino, name);
		return 0;
	}
	char m[11];
	mode_str(st->mode, m);
	printf("%s %3u %5u %5u %12" PRIu64 " %8u %s", m, st->nlink, st->uid, st->gid, st->size, ino,
	       name);
	if ((st->mode & 0xF000) == 0xA000) {
		char path[4096 + 256], t[4096];
		snprintf(path, sizeof(path), "%s%s%s", c->dir, strcmp(c->dir, "/") ? "/" : "",
		         name);
		ssize_t n = fs_readlink(c->fs, path, t, sizeof(t) - 1);
		if (n >= 0) {
			t[n] = 0;
			printf(" -> %s", t);
		}
	}
	printf("\n");
	return 0;
}

static int run_ls(const char *cmd, struct fs *fs, int argc, char **argv, bool l)
{
	const char *path = argc ? argv[0] : "/";
	struct fs_stat st;
	int rc = fs_stat(fs, path, &st);
	if (rc < 0)
		return op_fail(cmd, fs, path, rc);
	if ((st.mode & 0xF000) != 0x4000) {
		printf("%s\n", path);
		return 0;
	}
	struct ls_ctx c = {fs, path};
	rc = l ? fs_readdir_plus(fs, path, ls_long_cb, &c) : fs_readdir(fs, path, ls_cb, NULL);
	return rc < 0 ? op_fail(cmd, fs, path, rc) : 0;
}

/* UTC, so that the same image prints the same on every machine; the raw seconds
 * follow in brackets for scripts. */
static void print_time(const char *label, uint32_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[64];
	if (gmtime_r(&tt, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
		printf("%s: %s (%u)\n", label, buf, t);
	else
		printf("%s: %u\n", label, t);
}

static int run_stat(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	(void)argc;
	struct fs_stat st;
	int rc = fs_lstat(fs, argv[0], &st);
	if (rc < 0)
		return op_fail(cmd, fs, argv[0], rc);
	char m[11];
	mode_str(st.mode, m);
	printf("path: %s\ninode: %u\nmode: %s (0%o)\nlinks: %u\nuid: %u\ngid: %u\n"
	       "size: %" PRIu64 "\nblocks: %" PRIu64 "\n",
	       argv[0], st.ino, m, st.mode, st.nlink, st.uid, st.gid, st.size, st.blocks);
	print_time("atime", st.atime);
	print_time("mtime", st.mtime);
	print_time("ctime", st.ctime);
	return 0;
}

static int copy_out(const char *cmd, struct fs *fs, const char *path, int fd)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDONLY, 0, &f);
	if (rc < 0)
		return op_fail(cmd, fs, path, rc);
	size_t cap = 1u << 20;
	char *buf = malloc(cap);
	if (!buf) {
		fs_close(f);
		return cli_fail(cmd, "out of memory");
	}
	uint64_t off = 0;
	int ret = 0;
	for (;;) {
		ssize_t n = fs_pread(f, buf, cap, off);
		if (n < 0) {
			ret = op_fail(cmd, fs, path, (int)n);
			break;
		}
		if (n == 0)
			break;
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(fd, buf + w, (size_t)(n - w));
			if (k < 0) {
				ret = cli_fail(cmd, "write: %s", strerror(errno));
				goto done;
			}
			w += k;
		}
		off += (uint64_t)n;
	}
done:
	free(buf);
	fs_close(f);
	return ret;
}

static int run_cat(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	for (int i = 0; i < argc; i++) {
		int rc = copy_out(cmd, fs, argv[i], 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int run_get(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	(void)argc;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return cli_fail(cmd, "%s: %s", argv[1], strerror(errno));
	int rc = copy_out(cmd, fs, argv[0], fd);
	close(fd);
	return rc;
}

static int run_put(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	(void)argc;
	int fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return cli_fail(cmd, "%s: %s", argv[0], strerror(errno));
	struct fs_file *file;
	int rc = fs_open(fs, argv[1], FS_O_WRONLY | FS_O_CREAT | FS_O_TRUNC, 0644, &file);
	if (rc < 0) {
		close(fd);
		return op_fail(cmd, fs, argv[1], rc);
	}
	size_t cap = 1u << 20;
	char *buf = malloc(cap);
	uint64_t off = 0;
	int ret = buf ? 0 : cli_fail(cmd, "out of memory");
	while (buf && ret == 0) {
		ssize_t n = read(fd, buf, cap);
		if (n < 0) {
			ret = cli_fail(cmd, "%s: %s", argv[0], strerror(errno));
			break;
		}
		if (n == 0)
			break;
		ssize_t w = fs_pwrite(file, buf, (size_t)n, off);
		if (w != n) {
			ret = op_fail(cmd, fs, argv[1], w < 0 ? (int)w : -ENOSPC);
			break;
		}
		off += (uint64_t)n;
	}
	free(buf);
	close(fd);
	rc = fs_close(file);
	if (rc < 0 && ret == 0)
		ret = op_fail(cmd, fs, argv[1], rc);
	return ret;
}

static int mkdir_p(struct fs *fs, const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int rc = fs_mkdir(fs, buf, 0755);
		*p = '/';
		if (rc < 0 && rc != -EEXIST)
			return rc;
	}
	int rc = fs_mkdir(fs, buf, 0755);
	return rc == -EEXIST ? 0 : rc;
}

static int run_mkdir(const char *cmd, struct fs *fs, int argc, char **argv, bool p)
{
	for (int i = 0; i < argc; i++) {
		int rc = p ? mkdir_p(fs, argv[i]) : fs_mkdir(fs, argv[i], 0755);
		if (rc < 0)
			return op_fail(cmd, fs, argv[i], rc);
	}
	return 0;
}

static int run_rm(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	for (int i = 0; i < argc; i++) {
		int rc = fs_unlink(fs, argv[i]);
		if (rc < 0)
			return op_fail(cmd, fs, argv[i], rc);
	}
	return 0;
}

static int run_rmdir(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	for (int i = 0; i < argc; i++) {
		int rc = fs_rmdir(fs, argv[i]);
		if (rc < 0)
			return op_fail(cmd, fs, argv[i], rc);
	}
	return 0;
}

static int run_mv(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	(void)argc;
	int rc = fs_rename(fs, argv[0], argv[1]);
	return rc < 0 ? op_fail(cmd, fs, argv[0], rc) : 0;
}

static int run_ln(const char *cmd, struct fs *fs, int argc, char **argv, bool s)
{
	(void)argc;
	int rc = s ? fs_symlink(fs, argv[0], argv[1]) : fs_link(fs, argv[0], argv[1]);
	return rc < 0 ? op_fail(cmd, fs, argv[1], rc) : 0;
}

static int run_symlink(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	return run_ln(cmd, fs, argc, argv, true);
}

static int run_truncate(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)f;
	(void)argc;
	uint64_t size;
	struct bo_err e = {{0}};
	int rc = bo_parse_size(argv[1], &size, &e);
	if (rc < 0)
		return cli_usage_error(cmd, "%s", bo_errstr(&e, rc));
	rc = fs_truncate(fs, argv[0], size);
	return rc < 0 ? op_fail(cmd, fs, argv[0], rc) : 0;
}

static int run_df(const char *cmd, struct fs *fs, int argc, char **argv, bool f)
{
	(void)cmd;
	(void)argc;
	(void)argv;
	(void)f;
	struct fs_statfs st;
	fs_statfs(fs, &st);
	printf("block size: %u\nblocks: %" PRIu64 "\nfree blocks: %" PRIu64
	       "\navailable blocks: %" PRIu64 "\ninodes: %" PRIu64 "\nfree inodes: %" PRIu64 "\n",
	       st.block_size, st.blocks, st.free_blocks, st.avail_blocks, st.inodes,
	       st.free_inodes);
	return 0;
}

static const struct fscmd fscmds[] = {
    {"ls", "ls [-l] IMAGE [PATH]",
     "List a directory (one name a line; -l: mode, links, uid, gid, size, inode, name).", 0, 1,
     false, run_ls, 'l', 1},
    {"stat", "stat IMAGE PATH", "Print the inode of PATH (not following a final symlink).", 1, 1,
     false, run_stat, 0, 1},
    {"cat", "cat IMAGE PATH...", "Write the contents of files to standard output.", 1, 64, false,
     run_cat, 0, ALL_PATHS},
    {"get", "get IMAGE PATH LOCALFILE", "Copy a file out of the image.", 2, 2, false, run_get, 0,
     1},
    {"put", "put IMAGE LOCALFILE PATH", "Copy a local file into the image (created or replaced).",
     2, 2, true, run_put, 0, 2},
    {"mkdir", "mkdir [-p] IMAGE PATH...",
     "Create directories (-p: with parents, no error if existing).", 1, 64, true, run_mkdir, 'p',
     ALL_PATHS},
    {"rm", "rm IMAGE PATH...", "Remove files (unlink).", 1, 64, true, run_rm, 0, ALL_PATHS},
    {"rmdir", "rmdir IMAGE PATH...", "Remove empty directories.", 1, 64, true, run_rmdir, 0,
     ALL_PATHS},
    {"mv", "mv IMAGE FROM TO", "Rename FROM to TO (replacing TO, as rename(2)).", 2, 2, true,
     run_mv, 0, 3},
    {"ln", "ln [-s] IMAGE TARGET LINKPATH", "Make a hard link (-s: a symbolic link).", 2, 2, true,
     run_ln, 's', 3},
    {"symlink", "symlink IMAGE TARGET LINKPATH",
     "Make a symbolic link LINKPATH pointing to TARGET.", 2, 2, true, run_symlink, 0, 2},
    {"truncate", "truncate IMAGE PATH SIZE",
     "Set the size of a file (grow sparse or shrink); SIZE like 4k, 6G.", 2, 2, true, run_truncate,
     0, 1},
    {"df", "df IMAGE", "Print block and inode counts (statfs).", 0, 0, false, run_df, 0, 0},
};

static void fs_help(const struct fscmd *c)
{
	size_t n = strlen(c->name);
	printf("usage: blackout %s [-o MOUNTOPTS]%s%s\n\n%s\n\n", c->name,
	       c->writes ? " [--force]" : "", c->usage + n, c->help);
	printf("IMAGE is an image file holding an ext2/ext3 filesystem (made by `blackout mkfs`\n"
	       "or mke2fs). Paths inside it are absolute. -o takes mount options\n"
	       "(data=ordered|writeback|journal, barrier=0|1, commit=N,\n"
	       "errors=continue|remount-ro|panic, ro, nojournal). Options come before IMAGE.\n");
	if (c->writes)
		printf(
		    "Before writing, the image is checked as `blackout fsck -n` checks it (after\n"
		    "the journal replay and orphan processing the mount will do, on a copy in\n"
		    "memory); a damaged image is refused, nothing written, with the first\n"
		    "problem named: run `blackout fsck -y IMAGE` first. --force skips that check;\n"
		    "the filesystem's own protection still refuses a change that meets damage.\n");
	printf("Exit status 0 on success, 1 with a one-line reason on stderr on failure, 2 on\n"
	       "a usage error.\n");
}

/* The check a writing command makes before it writes (skipped by --force): the image
 * as this mount will leave it (journal replayed, orphans processed), on a copy-on-write
 * overlay so that nothing reaches the file, checked by blackout's fsck, which agrees
 * with e2fsck -fn. The filesystem's own protection only sees the damage an operation
 * walks into: damage elsewhere that names what the operation changes (a '..' or a
 * file's map aimed at it) is made different, or worse, by a change it cannot see.
 * Returns 0 to go on, or the exit status of a refusal. A mount that fails here fails
 * the real mount too, which reports it: that is not this check's to say. */
static int precheck(const char *cmd, const char *image, struct bdev *d,
                    const struct fs_mount_opts *mo)
{
	struct bdev *cow;
	struct bo_err err = {{0}};
	int rc = blk_cow_open(d, &cow);
	if (rc < 0)
		return cli_fail(cmd, "%s: cannot check before writing: %s", image, strerror(-rc));
	struct fs *fs;
	if (fs_mount(cow, mo, &fs, &err) < 0) {
		blk_close(cow);
		return 0;
	}
	rc = fs_unmount(fs);
	struct fsck_report *r = malloc(sizeof(*r));
	struct fsck_opts fo = {.repair = FSCK_REPAIR_NONE, .max_problems = 1};
	if (rc == 0)
		rc = r ? fsck_check(cow, &fo, r, &err) : -ENOMEM;
	blk_close(cow);
	int ret = 0;
	if (rc < 0)
		ret = cli_fail(cmd, "%s: cannot check before writing: %s (--force writes anyway)",
		               image, bo_errstr(&err, rc));
	else if (r->nr_problems) {
		const struct fsck_problem *p = &r->problems[0];
		ret =
		    cli_fail(cmd,
		             "%s: the filesystem is damaged (%s: %s%s%s%s): nothing written; run "
		             "`blackout fsck -y %s` first (--force writes anyway)",
		             image, fsck_kind_name(p->kind), p->msg, p->name[0] ? " [entry '" : "",
		             p->name, p->name[0] ? "']" : "", image);
	}
	free(r);
	return ret;
}

static int run_fscmd(const struct fscmd *c, int argc, char **argv)
{
	bool flag = false, force = false;
	const char *mopts = NULL;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (cli_is_help(argv[i])) {
			fs_help(c);
			return 0;
		}
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			mopts = argv[++i];
		} else if (c->writes && !strcmp(argv[i], "--force")) {
			force = true;
		} else if (c->flag && argv[i][1] == c->flag && !argv[i][2]) {
			flag = true;
		} else {
			return cli_usage_error(c->name, "unknown option '%s'", argv[i]);
		}
	}
	int nargs = argc - i - 1;
	if (i >= argc || nargs < c->min_args || nargs > c->max_args)
		return cli_usage_error(c->name, "usage: blackout %s", c->usage);
	const char *image = argv[i];
	/* a hard link's TARGET is in the image; a symbolic link's is any text */
	uint64_t paths = c->run == run_ln && flag ? c->paths & ~1ull : c->paths;
	for (int k = 0; k < nargs && k < 64; k++)
		if ((paths >> k & 1) && argv[i + 1 + k][0] != '/')
			return cli_usage_error(
			    c->name, "%s: paths inside the image must be absolute (\"/%s\")",
			    argv[i + 1 + k], argv[i + 1 + k]);
	struct bo_err err = {{0}};
	struct fs_mount_opts mo;
	int rc = fs_mount_opts_parse(mopts, &mo, &err);
	if (rc < 0)
		return cli_usage_error(c->name, "%s", bo_errstr(&err, rc));
	if (!c->writes)
		mo.read_only = true;
	struct bdev *d;
	rc = blk_file_open(image, 512, 0, mo.read_only ? BLK_FILE_RDONLY : 0, &d, &err);
	if (rc < 0)
		return image_fail(c->name, image, &err, rc,
		                  " (make an image first: blackout mkfs IMAGE --size 64M)");
	if (!mo.read_only && !force && (rc = precheck(c->name, image, d, &mo))) {
		blk_close(d);
		return rc;
	}
	struct fs *fs;
	rc = fs_mount(d, &mo, &fs, &err);
	if (rc < 0) {
		blk_close(d);
		if (rc == -EUCLEAN)
			return cli_fail(c->name,
			                "%s: %s: the filesystem is damaged; run `blackout fsck %s`",
			                image, bo_errstr(&err, rc), image);
		return cli_fail(c->name, "%s: %s", image, bo_errstr(&err, rc));
	}
	int ret = c->run(c->name, fs, nargs, argv + i + 1, flag);
	rc = fs_unmount(fs);
	if (rc < 0 && ret == 0)
		ret = fail_rc(c->name, NULL, "unmount", rc);
	blk_close(d);
	return ret;
}

static const struct fscmd *find(const char *name)
{
	for (size_t i = 0; i < sizeof(fscmds) / sizeof(fscmds[0]); i++)
		if (!strcmp(fscmds[i].name, name))
			return &fscmds[i];
	return NULL;
}

#define FSCMD(fn, nm)                                                                              \
	int fn(int argc, char **argv)                                                              \
	{                                                                                          \
		return run_fscmd(find(nm), argc, argv);                                            \
	}
FSCMD(cmd_ls, "ls")
FSCMD(cmd_stat, "stat")
FSCMD(cmd_cat, "cat")
FSCMD(cmd_get, "get")
FSCMD(cmd_put, "put")
FSCMD(cmd_mkdir, "mkdir")
FSCMD(cmd_rm, "rm")
FSCMD(cmd_rmdir, "rmdir")
FSCMD(cmd_mv, "mv")
FSCMD(cmd_ln, "ln")
FSCMD(cmd_symlink, "symlink")
FSCMD(cmd_truncate, "truncate")
FSCMD(cmd_df, "df")

/* ---- mkfs ----------------------------------------------------------------------- */
static void mkfs_help(void)
{
	printf("usage: blackout mkfs IMAGE [--size SIZE] [-t ext2|ext3] [-b BLOCKSIZE] [-I "
	       "INODESIZE]\n"
	       "                     [-O metadata_csum] [-J size=MIB] [-N INODES] [-L LABEL] "
	       "[-q]\n\n"
	       "Make an ext2 or ext3 filesystem (default ext3) on IMAGE, laid out as mke2fs\n"
	       "does: block groups, sparse_super backups, reserved GDT blocks and the resize\n"
	       "inode, an empty JBD2 journal in inode 8 (ext3), lost+found. --size creates or\n"
	       "extends the image file (SIZE like 64M, 1G); without it the file's size is used.\n"
	       "-b: 1024, 2048 or 4096 (default: 1024 under 512 MiB, else 4096). -J size= is in\n"
	       "MiB, as mke2fs. -O metadata_csum adds ext4 crc32c checksums to all metadata.\n"
	       "On success it prints one line: the type, the size, the block and inode counts\n"
	       "(-q: nothing). The result is checked by `e2fsck -fn`.\n");
}

/* What mkfs made, read back through a read-only mount (it names what was really
 * written, not what was asked for). Returns the exit status. */
static int mkfs_summary(struct bdev *d, const char *image, int type)
{
	struct fs_mount_opts mo;
	struct bo_err err = {{0}};
	struct fs *fs;
	int rc = fs_mount_opts_parse("ro", &mo, &err);
	if (rc == 0)
		rc = fs_mount(d, &mo, &fs, &err);
	if (rc < 0)
		return cli_fail("mkfs", "%s: made, but cannot be mounted back: %s", image,
		                bo_errstr(&err, rc));
	struct fs_statfs st;
	rc = fs_statfs(fs, &st);
	fs_unmount(fs);
	if (rc < 0)
		return cli_fail("mkfs", "%s: made, but statfs failed: %s", image, strerror(-rc));
	uint64_t kib = st.blocks * st.block_size / 1024;
	printf("%s: ext%d, %" PRIu64 " %s: %" PRIu64 " blocks of %u bytes, %" PRIu64 " inodes\n",
	       image, type, kib % 1024 ? kib : kib / 1024, kib % 1024 ? "KiB" : "MiB", st.blocks,
	       st.block_size, st.inodes);
	return 0;
}

int cmd_mkfs(int argc, char **argv)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	const char *image = NULL;
	uint64_t size = 0, jmib = 0;
	bool quiet = false;
	struct bo_err err = {{0}};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			mkfs_help();
			return 0;
		}
		if (a[0] != '-') {
			if (image)
				return cli_usage_error("mkfs", "more than one IMAGE");
			image = a;
			continue;
		}
		if (!strcmp(a, "-q")) {
			quiet = true;
			continue;
		}
		if (!v)
			return cli_usage_error("mkfs", "option %s needs a value", a);
		i++;
		int rc = 0;
		uint64_t n;
		if (!strcmp(a, "--size") || !strcmp(a, "-s")) {
			rc = bo_parse_size(v, &size, &err);
		} else if (!strcmp(a, "-t")) {
			if (!strcmp(v, "ext2"))
				o.type = 2;
			else if (!strcmp(v, "ext3"))
				o.type = 3;
			else
				return cli_usage_error("mkfs", "-t %s: ext2 or ext3", v);
		} else if (!strcmp(a, "-b")) {
			rc = bo_parse_size(v, &n, &err);
			o.block_size = (uint32_t)n;
		} else if (!strcmp(a, "-I")) {
			rc = bo_parse_size(v, &n, &err);
			o.inode_size = (uint32_t)n;
		} else if (!strcmp(a, "-N")) {
			rc = bo_parse_size(v, &o.inodes, &err);
		} else if (!strcmp(a, "-L")) {
			o.label = v;
		} else if (!strcmp(a, "-O")) {
			char buf[256];
			snprintf(buf, sizeof(buf), "%s", v);
			for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
				if (!strcmp(t, "metadata_csum"))
					o.metadata_csum = true;
				else if (!strcmp(t, "^metadata_csum"))
					o.metadata_csum = false;
				else
					return cli_usage_error("mkfs", "-O %s: only metadata_csum",
					                       t);
			}
		} else if (!strcmp(a, "-J")) {
			if (strncmp(v, "size=", 5) != 0)
				return cli_usage_error("mkfs", "-J size=MIB");
			rc = bo_parse_size(v + 5, &jmib, &err);
		} else {
			return cli_usage_error("mkfs", "unknown option '%s'", a);
		}
		if (rc < 0)
			return cli_usage_error("mkfs", "%s %s: %s", a, v, bo_errstr(&err, rc));
	}
	if (!image)
		return cli_usage_error("mkfs", "no IMAGE given");
	struct bdev *d;
	int rc = blk_file_open(image, 512, size, size ? BLK_FILE_CREATE : 0, &d, &err);
	if (rc < 0)
		return image_fail("mkfs", image, &err, rc,
		                  " (to create the image, give its size: --size 64M)");
	if (jmib) {
		uint32_t bs = o.block_size ? o.block_size
		                           : (blk_size_bytes(d) < (512ull << 20) ? 1024 : 4096);
		o.journal_blocks = (jmib << 20) / bs;
	}
	rc = fs_mkfs(d, &o, &err);
	/* the library's messages start with "mkfs: ", which the CLI's prefix already says */
	const char *why = bo_errstr(&err, rc);
	if (!strncmp(why, "mkfs: ", 6))
		why += 6;
	int ret = rc < 0  ? cli_fail("mkfs", "%s: %s", image, why)
	          : quiet ? 0
	                  : mkfs_summary(d, image, o.type);
	blk_close(d);
	return ret;
}
