// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_fs.c — `blackout mkfs|ls|stat|cat|get|put|mkdir|rm|rmdir|mv|ln|symlink|truncate|df`:
 * the filesystem on an image file, without root, like debugfs. Parsing and printing
 * only; every action is an fs.h call. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blackout/fs.h"
#include "blackout/fsck.h"
#include "blackout/util.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

struct fscmd {
	struct cli_spec spec; /* operands counted with IMAGE */
	bool writes;
	int (*run)(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags);
	uint64_t paths; /* bit i: argument i after IMAGE is a path inside the image */
};

/* the flags a command's options set */
enum { FS_LONG = 1, FS_ALL = 2, FS_PARENTS = 4, FS_SYMBOLIC = 8 };

#define ALL_PATHS UINT64_MAX

/* An image file that cannot be opened. The block layer usually names the file
 * already ("x.img: No such file or directory"); a bare errno gets the name added.
 * hint: what to do, said only where it applies ("" for none). */
static int image_fail(const char *cmd, const char *image, const struct bo_err *err, int rc,
                      const char *hint)
{
	const char *why = bo_errstr(err, rc);
	bool named = err->msg[0] != 0;
	return cli_fail(cmd, "%s%s%s%s", named ? "" : image, named ? "" : ": ", why, hint);
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
	bool all; /* '.' and '..' too */
};

static bool ls_hidden(const struct ls_ctx *c, const char *name)
{
	return !c->all && (!strcmp(name, ".") || !strcmp(name, ".."));
}

static int ls_cb(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)ino;
	(void)ft;
	if (!ls_hidden(ctx, name))
		printf("%s\n", name);
	return 0;
}

static int ls_long_cb(void *ctx, const char *name, uint32_t ino, const struct fs_stat *st)
{
	struct ls_ctx *c = ctx;
	if (ls_hidden(c, name))
		return 0;
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

static int run_ls(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
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
	struct ls_ctx c = {fs, path, flags & FS_ALL};
	rc = flags & FS_LONG ? fs_readdir_plus(fs, path, ls_long_cb, &c)
	                     : fs_readdir(fs, path, ls_cb, &c);
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

static int run_stat(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	(void)argc;
	struct fs_stat st;
	int rc = fs_lstat(fs, argv[0], &st);
	if (rc < 0)
		return op_fail(cmd, fs, argv[0], rc);
	char m[11];
	mode_str(st.mode, m);
	printf("path: %s\ninode: %u\nmode: %s (0%o)\nlinks: %u\nuid: %u\ngid: %u\n"
	       "size: %" PRIu64 "\nblocks: %" PRIu64 " (512-byte units: %" PRIu64 " bytes)\n",
	       argv[0], st.ino, m, st.mode, st.nlink, st.uid, st.gid, st.size, st.blocks,
	       st.blocks * 512);
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

static int run_cat(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	for (int i = 0; i < argc; i++) {
		int rc = copy_out(cmd, fs, argv[i], 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int run_get(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	(void)argc;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return cli_fail(cmd, "%s: %s", argv[1], strerror(errno));
	int rc = copy_out(cmd, fs, argv[0], fd);
	close(fd);
	return rc;
}

/* put's copy goes to a temporary name beside PATH, renamed over it once whole: a
 * failure (ENOSPC) removes it and leaves PATH as it was. */
static int put_tmpname(const char *path, char *tmp, size_t len)
{
	const char *base = strrchr(path, '/') + 1;
	int n = snprintf(tmp, len, "%.*s.%s.blackout-put", (int)(base - path), path, base);
	return n < 0 || (size_t)n >= len || strlen(base) + 15 > 255 ? -ENAMETOOLONG : 0;
}

static int run_put(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	(void)argc;
	char tmp[4096 + 32];
	if (put_tmpname(argv[1], tmp, sizeof(tmp)) < 0)
		return cli_fail(cmd, "%s: %s", argv[1], strerror(ENAMETOOLONG));
	int fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return cli_fail(cmd, "%s: %s", argv[0], strerror(errno));
	struct fs_file *file;
	int rc = fs_open(fs, tmp, FS_O_WRONLY | FS_O_CREAT | FS_O_TRUNC, 0644, &file);
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
	if (ret == 0 && (rc = fs_rename(fs, tmp, argv[1])) < 0)
		ret = op_fail(cmd, fs, argv[1], rc);
	if (ret)
		fs_unlink(fs, tmp);
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

static int run_mkdir(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	for (int i = 0; i < argc; i++) {
		int rc = flags & FS_PARENTS ? mkdir_p(fs, argv[i]) : fs_mkdir(fs, argv[i], 0755);
		if (rc < 0)
			return op_fail(cmd, fs, argv[i], rc);
	}
	return 0;
}

static int run_rm(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	for (int i = 0; i < argc; i++) {
		int rc = fs_unlink(fs, argv[i]);
		if (rc < 0)
			return op_fail(cmd, fs, argv[i], rc);
	}
	return 0;
}

static int run_rmdir(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	for (int i = 0; i < argc; i++) {
		int rc = fs_rmdir(fs, argv[i]);
		if (rc < 0)
			return op_fail(cmd, fs, argv[i], rc);
	}
	return 0;
}

static int run_mv(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	(void)argc;
	int rc = fs_rename(fs, argv[0], argv[1]);
	return rc < 0 ? op_fail(cmd, fs, argv[0], rc) : 0;
}

static int run_ln(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)argc;
	int rc =
	    flags & FS_SYMBOLIC ? fs_symlink(fs, argv[0], argv[1]) : fs_link(fs, argv[0], argv[1]);
	return rc < 0 ? op_fail(cmd, fs, argv[1], rc) : 0;
}

static int run_symlink(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	return run_ln(cmd, fs, argc, argv, FS_SYMBOLIC);
}

static int run_truncate(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)flags;
	(void)argc;
	uint64_t size;
	struct bo_err e = {{0}};
	int rc = bo_parse_size(argv[1], &size, &e);
	if (rc < 0)
		return cli_usage_error(cmd, "%s", bo_errstr(&e, rc));
	rc = fs_truncate(fs, argv[0], size);
	return rc < 0 ? op_fail(cmd, fs, argv[0], rc) : 0;
}

static int run_df(const char *cmd, struct fs *fs, int argc, char **argv, unsigned flags)
{
	(void)cmd;
	(void)argc;
	(void)argv;
	(void)flags;
	struct fs_statfs st;
	fs_statfs(fs, &st);
	printf("block size: %u\nblocks: %" PRIu64 "\nfree blocks: %" PRIu64
	       "\navailable blocks: %" PRIu64 "\ninodes: %" PRIu64 "\nfree inodes: %" PRIu64 "\n",
	       st.block_size, st.blocks, st.free_blocks, st.avail_blocks, st.inodes,
	       st.free_inodes);
	return 0;
}

#define FS_IMAGE_TEXT                                                                              \
	"IMAGE is an image file holding an ext2/ext3 filesystem (made by `blackout mkfs`\n"        \
	"or mke2fs). Paths inside it are absolute.\n"
#define FS_WRITE_TEXT                                                                              \
	"\nBefore writing, the image is checked as `blackout fsck -n` checks it (after\n"          \
	"the journal replay and orphan processing the mount will do, on a copy in\n"               \
	"memory); a damaged image is refused, nothing written, with the first\n"                   \
	"problem named: run `blackout fsck -y IMAGE` first. --force skips that check;\n"           \
	"the filesystem's own protection still refuses a change that meets damage.\n"
#define FS_MOUNT_OPT                                                                               \
	{                                                                                          \
		'o', "options", "MOUNTOPTS",                                                       \
		    "mount options: data=ordered|writeback|journal,\n"                             \
		    "barrier=0|1, commit=N, errors=continue|remount-ro|panic,\n"                   \
		    "ro, nojournal",                                                               \
		    0                                                                              \
	}
#define FS_FORCE_OPT                                                                               \
	{                                                                                          \
		'f', "force", NULL, "write without checking the image first", 0                    \
	}

static const struct cli_opt fs_read_opts[] = {FS_MOUNT_OPT, {0}};
static const struct cli_opt fs_write_opts[] = {FS_MOUNT_OPT, FS_FORCE_OPT, {0}};
static const struct cli_opt ls_opts[] = {
    {'l', "long", NULL, "mode, links, uid, gid, size, inode and name", 0},
    {'a', "all", NULL, "also the entries '.' and '..'", 0},
    FS_MOUNT_OPT,
    {0}};
static const struct cli_opt mkdir_opts[] = {
    {'p', "parents", NULL, "make parents as needed; no error if existing", 0},
    FS_MOUNT_OPT,
    FS_FORCE_OPT,
    {0}};
static const struct cli_opt ln_opts[] = {
    {'s', "symbolic", NULL, "a symbolic link (TARGET is any text)", 0},
    FS_MOUNT_OPT,
    FS_FORCE_OPT,
    {0}};

#define EX_IMG "$ blackout mkfs a.img --size 64M\n"
static const struct fscmd fscmds[] = {
    {{"ls", "list a directory of a filesystem image", "[OPTIONS] IMAGE [PATH]",
      "List a directory (default /), one name a line, without '.' and '..' unless -a.\n"
      "A PATH that is not a directory is printed as it is.\n\n" FS_IMAGE_TEXT,
      ls_opts, 1, 2, NULL,
      EX_IMG "$ blackout ls -l a.img /\n  every entry of the root with its inode\n", NULL},
     false,
     run_ls,
     1},
    {{"stat", "show an inode of a filesystem image", "[OPTIONS] IMAGE PATH",
      "Print the inode of PATH (not following a final symlink): its number, mode,\n"
      "links, owner, size in bytes, blocks in 512-byte units and the three times in\n"
      "UTC with the raw seconds in brackets.\n\n" FS_IMAGE_TEXT,
      fs_read_opts, 2, 2, NULL, "$ blackout stat a.img /lost+found\n", NULL},
     false,
     run_stat,
     1},
    {{"cat", "print files of a filesystem image", "[OPTIONS] IMAGE PATH...",
      "Write the contents of files to standard output.\n\n" FS_IMAGE_TEXT, fs_read_opts, 2, 65,
      NULL, "$ blackout cat a.img /etc/motd /etc/hosts\n", NULL},
     false,
     run_cat,
     ALL_PATHS},
    {{"get", "copy a file out of a filesystem image", "[OPTIONS] IMAGE PATH LOCALFILE",
      "Copy the file PATH out of the image into LOCALFILE.\n\n" FS_IMAGE_TEXT, fs_read_opts, 3, 3,
      NULL, "$ blackout get a.img /hello.txt hello.txt\n", NULL},
     false,
     run_get,
     1},
    {{"put", "copy a file into a filesystem image", "[OPTIONS] IMAGE LOCALFILE PATH",
      "Copy a local file into the image: PATH is created or replaced. The copy is\n"
      "written under a temporary name in PATH's directory and renamed over PATH once\n"
      "complete, so a failure (the filesystem full) leaves PATH as it was.\n\n" FS_IMAGE_TEXT
          FS_WRITE_TEXT,
      fs_write_opts, 3, 3, NULL, "$ blackout put a.img hello.txt /hello.txt\n", NULL},
     true,
     run_put,
     2},
    {{"mkdir", "make directories in a filesystem image", "[OPTIONS] IMAGE PATH...",
      "Create directories.\n\n" FS_IMAGE_TEXT FS_WRITE_TEXT, mkdir_opts, 2, 65, NULL,
      "$ blackout mkdir -p a.img /d/e/f\n", NULL},
     true,
     run_mkdir,
     ALL_PATHS},
    {{"rm", "remove files from a filesystem image", "[OPTIONS] IMAGE PATH...",
      "Remove files (unlink).\n\n" FS_IMAGE_TEXT FS_WRITE_TEXT, fs_write_opts, 2, 65, NULL,
      "$ blackout rm a.img /hello.txt\n", NULL},
     true,
     run_rm,
     ALL_PATHS},
    {{"rmdir", "remove directories from a filesystem image", "[OPTIONS] IMAGE PATH...",
      "Remove empty directories.\n\n" FS_IMAGE_TEXT FS_WRITE_TEXT, fs_write_opts, 2, 65, NULL,
      "$ blackout rmdir a.img /d/e/f\n", NULL},
     true,
     run_rmdir,
     ALL_PATHS},
    {{"mv", "rename within a filesystem image", "[OPTIONS] IMAGE FROM TO",
      "Rename FROM to TO (replacing TO, as rename(2)).\n\n" FS_IMAGE_TEXT FS_WRITE_TEXT,
      fs_write_opts, 3, 3, NULL, "$ blackout mv a.img /hello.txt /hi.txt\n", NULL},
     true,
     run_mv,
     3},
    {{"ln", "hard or symbolic link in a filesystem image", "[OPTIONS] IMAGE TARGET LINKPATH",
      "Make a hard link LINKPATH to TARGET (-s: a symbolic link).\n\n" FS_IMAGE_TEXT FS_WRITE_TEXT,
      ln_opts, 3, 3, NULL, "$ blackout ln -s a.img ../hi.txt /d/link\n", NULL},
     true,
     run_ln,
     3},
    {{"symlink", "symbolic link in a filesystem image", "[OPTIONS] IMAGE TARGET LINKPATH",
      "Make a symbolic link LINKPATH pointing to TARGET (as ln -s).\n\n" FS_IMAGE_TEXT
          FS_WRITE_TEXT,
      fs_write_opts, 3, 3, NULL, "$ blackout symlink a.img /hi.txt /link\n", NULL},
     true,
     run_symlink,
     2},
    {{"truncate", "set a file's size in a filesystem image", "[OPTIONS] IMAGE PATH SIZE",
      "Set the size of a file (grow sparse or shrink); SIZE like 4k, 6G.\n\n" FS_IMAGE_TEXT
          FS_WRITE_TEXT,
      fs_write_opts, 3, 3, NULL, "$ blackout truncate a.img /hi.txt 1M\n", NULL},
     true,
     run_truncate,
     1},
    {{"df", "block and inode counts of a filesystem image", "[OPTIONS] IMAGE",
      "Print block and inode counts (statfs).\n\n" FS_IMAGE_TEXT, fs_read_opts, 1, 1, NULL,
      "$ blackout df a.img\n", NULL},
     false,
     run_df,
     0},
};

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
	unsigned flags = 0;
	bool force = false;
	const char *mopts = NULL;
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &c->spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		switch (k) {
		case 'o': mopts = p.arg; break;
		case 'f': force = true; break;
		case 'l': flags |= FS_LONG; break;
		case 'a': flags |= FS_ALL; break;
		case 'p': flags |= FS_PARENTS; break;
		case 's': flags |= FS_SYMBOLIC; break;
		}
	}
	if (k < 0)
		return p.status;
	int i = 0, nargs = p.nargs - 1;
	argv = p.args;
	const char *image = argv[i];
	/* a hard link's TARGET is in the image; a symbolic link's is any text */
	uint64_t paths = c->run == run_ln && (flags & FS_SYMBOLIC) ? c->paths & ~1ull : c->paths;
	for (int j = 0; j < nargs && j < 64; j++)
		if ((paths >> j & 1) && argv[i + 1 + j][0] != '/')
			return cli_usage_error(
			    c->spec.name, "%s: paths inside the image must be absolute (\"/%s\")",
			    argv[i + 1 + j], argv[i + 1 + j]);
	struct bo_err err = {{0}};
	struct fs_mount_opts mo;
	int rc = fs_mount_opts_parse(mopts, &mo, &err);
	if (rc < 0)
		return cli_usage_error(c->spec.name, "%s", bo_errstr(&err, rc));
	if (!c->writes)
		mo.read_only = true;
	struct bdev *d;
	rc = blk_file_open(image, 512, 0, mo.read_only ? BLK_FILE_RDONLY : 0, &d, &err);
	if (rc < 0)
		return image_fail(
		    c->spec.name, image, &err, rc,
		    rc == -ENOENT ? " (make an image first: blackout mkfs IMAGE --size 64M)" : "");
	if (!mo.read_only && !force && (rc = precheck(c->spec.name, image, d, &mo))) {
		blk_close(d);
		return rc;
	}
	struct fs *fs;
	rc = fs_mount(d, &mo, &fs, &err);
	if (rc < 0) {
		blk_close(d);
		if (rc == -EUCLEAN)
			return cli_fail(c->spec.name,
			                "%s: %s: the filesystem is damaged; run `blackout fsck %s`",
			                image, bo_errstr(&err, rc), image);
		return cli_fail(c->spec.name, "%s: %s", image, bo_errstr(&err, rc));
	}
	int ret = c->run(c->spec.name, fs, nargs, argv + i + 1, flags);
	rc = fs_unmount(fs);
	if (rc < 0 && ret == 0)
		ret = fail_rc(c->spec.name, NULL, "unmount", rc);
	blk_close(d);
	return ret;
}

static const struct fscmd *find(const char *name)
{
	for (size_t i = 0; i < sizeof(fscmds) / sizeof(fscmds[0]); i++)
		if (!strcmp(fscmds[i].spec.name, name))
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
enum { MKFS_SIZE = 's' };
static const struct cli_opt mkfs_opts[] = {
    {MKFS_SIZE, "size", "SIZE",
     "create the image file, or extend it, to SIZE (like 64M,\n1G); without it the file's size is "
     "used",
     0},
    {'t', "type", "ext2|ext3", "the filesystem type (default ext3)", 0},
    {'b', "block-size", "BLOCKSIZE", "1024, 2048 or 4096 (default: 1024 under 512 MiB,\nelse 4096)",
     0},
    {'I', "inode-size", "INODESIZE", "bytes per inode: 128 or 256 (default 256)", 0},
    {'N', "inodes", "INODES", "the number of inodes (default: one per 4 KiB)", 0},
    {'O', "features", "metadata_csum",
     "ext4 crc32c checksums on all metadata\n(^metadata_csum: none)", 0},
    {'J', "journal", "size=MIB", "the journal's size in MiB, as mke2fs", 0},
    {'L', "label", "LABEL",
     "the volume label, at most 16 bytes (longer: truncated,\nwith a warning, "
     "as mke2fs)",
     0},
    {'q', "quiet", NULL, "print nothing on success", 0},
    {0}};

static const struct cli_spec mkfs_spec = {
    "mkfs",
    "make an ext2/ext3 filesystem on an image",
    "[OPTIONS] IMAGE",
    "Make an ext2 or ext3 filesystem (default ext3) on IMAGE, laid out as mke2fs\n"
    "does: block groups, sparse_super backups, reserved GDT blocks and the resize\n"
    "inode, an empty JBD2 journal in inode 8 (ext3), lost+found. The result is\n"
    "checked by `e2fsck -fn`.\n"
    "\n"
    "On success it prints one line: the type, the size, the block and inode counts.\n"
    "On failure an image file that mkfs created is removed, and one it extended is\n"
    "cut back to its size.\n",
    mkfs_opts,
    1,
    1,
    NULL,
    "$ blackout mkfs a.img --size 64M\n"
    "  a.img: ext3, 64 MiB: 65536 blocks of 1024 bytes, 16384 inodes\n"
    "$ blackout mkfs -t ext2 -b 4096 -L data b.img --size 1G\n",
    NULL};

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

/* -O's list: metadata_csum or ^metadata_csum */
static int mkfs_features(const char *v, struct fs_mkfs_opts *o)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", v);
	char *save;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "metadata_csum"))
			o->metadata_csum = true;
		else if (!strcmp(t, "^metadata_csum"))
			o->metadata_csum = false;
		else
			return cli_usage_error("mkfs", "-O %s: only metadata_csum", t);
	}
	return 0;
}

static int mkfs_opt(struct cli_parse *p, int k, struct fs_mkfs_opts *o, uint64_t *size,
                    uint64_t *jmib)
{
	struct bo_err err = {{0}};
	uint64_t n = 0;
	int rc = 0;
	char l[64];
	switch (k) {
	case MKFS_SIZE: rc = bo_parse_size(p->arg, size, &err); break;
	case 't':
		if (!strcmp(p->arg, "ext2") || !strcmp(p->arg, "ext3"))
			o->type = p->arg[3] - '0';
		else
			return cli_usage_error("mkfs", "-t %s: ext2 or ext3", p->arg);
		break;
	case 'b':
		rc = bo_parse_size(p->arg, &n, &err);
		o->block_size = (uint32_t)n;
		if (rc == 0 && n != 1024 && n != 2048 && n != 4096)
			return cli_usage_error("mkfs", "-b %s: 1024, 2048 or 4096", p->arg);
		break;
	case 'I':
		rc = bo_parse_size(p->arg, &n, &err);
		o->inode_size = (uint32_t)n;
		if (rc == 0 && (n < 128 || n > 4096 || (n & (n - 1))))
			return cli_usage_error(
			    "mkfs", "-I %s: a power of two from 128 to the block size", p->arg);
		break;
	case 'N': rc = bo_parse_size(p->arg, &o->inodes, &err); break;
	case 'L':
		o->label = p->arg;
		if (strlen(p->arg) > 16)
			fprintf(stderr,
			        "blackout mkfs: warning: label too long; truncated to '%.16s'\n",
			        p->arg);
		break;
	case 'O': return mkfs_features(p->arg, o);
	case 'J':
		if (strncmp(p->arg, "size=", 5) != 0)
			return cli_usage_error("mkfs", "-J %s: size=MIB", p->arg);
		rc = bo_parse_size(p->arg + 5, jmib, &err);
		break;
	}
	if (rc < 0)
		return cli_usage_error("mkfs", "%s %s: %s",
		                       cli_opt_label(&mkfs_spec, k, l, sizeof(l)), p->arg,
		                       bo_errstr(&err, rc));
	return 0;
}

int cmd_mkfs(int argc, char **argv)
{
	struct fs_mkfs_opts o;
	fs_mkfs_opts_default(&o);
	uint64_t size = 0, jmib = 0;
	bool quiet = false;
	struct bo_err err = {{0}};
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &mkfs_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		if (k == 'q')
			quiet = true;
		else if (mkfs_opt(&p, k, &o, &size, &jmib))
			return CLI_EXIT_USAGE;
	}
	if (k < 0)
		return p.status;
	const char *image = p.args[0];
	/* what was there before, so that a failure leaves it as it was */
	struct stat before;
	bool existed = stat(image, &before) == 0;
	struct bdev *d;
	int rc = blk_file_open(image, 512, size, size ? BLK_FILE_CREATE : 0, &d, &err);
	if (rc < 0) {
		/* without --size, a missing or empty file needs one */
		bool empty = existed && S_ISREG(before.st_mode) && before.st_size == 0;
		return image_fail("mkfs", image, &err, rc,
		                  !size && (empty || rc == -ENOENT)
		                      ? " (to create the image, give its size: --size 64M)"
		                      : "");
	}
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
	if (rc < 0 && !existed)
		unlink(image);
	else if (rc < 0 && S_ISREG(before.st_mode) && truncate(image, before.st_size) < 0)
		fprintf(stderr, "blackout mkfs: %s: cannot cut back to %lld bytes: %s\n", image,
		        (long long)before.st_size, strerror(errno));
	return ret;
}
