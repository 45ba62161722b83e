/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_fs_util.h — helpers for the fs unit tests: images in temporary files and the
 * e2fsprogs judges (e2fsck -fn must print no problem line; debugfs cat). */
#ifndef BLACKOUT_TEST_FS_UTIL_H
#define BLACKOUT_TEST_FS_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/fs.h"
#include "tap.h"

static char tfs_dir_[256];

static inline const char *tfs_tmpdir(void)
{
	if (!tfs_dir_[0]) {
		snprintf(tfs_dir_, sizeof(tfs_dir_), "/tmp/blackout-fs-test-XXXXXX");
		if (!mkdtemp(tfs_dir_)) {
			perror("mkdtemp");
			exit(1);
		}
	}
	return tfs_dir_;
}

static inline void tfs_cleanup(void)
{
	if (tfs_dir_[0] && getenv("BLACKOUT_KEEP_IMAGES")) {
		diag("images kept in %s", tfs_dir_);
		return;
	}
	if (tfs_dir_[0]) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tfs_dir_);
		if (system(cmd) != 0)
			diag("could not remove %s", tfs_dir_);
	}
}

/* A fresh image file of `size` bytes, formatted with `o`. */
static inline struct bdev *tfs_image(const char *name, uint64_t size, const struct fs_mkfs_opts *o,
                                     char *path, size_t plen)
{
	snprintf(path, plen, "%s/%s", tfs_tmpdir(), name);
	unlink(path);
	struct bdev *d = NULL;
	struct bo_err err = {{0}};
	int rc = blk_file_open(path, 512, size, BLK_FILE_CREATE, &d, &err);
	if (rc < 0) {
		diag("blk_file_open %s: %s", path, bo_errstr(&err, rc));
		return NULL;
	}
	if (o && (rc = fs_mkfs(d, o, &err)) < 0) {
		diag("fs_mkfs: %s", bo_errstr(&err, rc));
		blk_close(d);
		return NULL;
	}
	return d;
}

/* Runs the shell command fmt (two %s for a and b); its exit status, or -1 when it
 * did not exit. */
static inline int tfs_sh(const char *fmt, const char *a, const char *b)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), fmt, a, b);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* e2fsck -fn: exit 0 and nothing but the pass headers and the summary. */
static inline int tfs_e2fsck_clean(const char *path)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "e2fsck -fn '%s' 2>&1", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return 0;
	char line[1024];
	int bad = 0;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "e2fsck ", 7) || !strncmp(line, "Pass ", 5) ||
		    (strstr(line, " files (") && strstr(line, " blocks")))
			continue;
		if (bad++ < 15)
			diag("e2fsck: %s", strtok(line, "\n") ? line : "");
	}
	int st = pclose(p);
	if (st != 0 && !bad)
		diag("e2fsck exit status %d", st);
	return st == 0 && bad == 0;
}

/* The stream holds exactly want[0..len) (one byte more is read to see the end);
 * *n: how many bytes it held, up to len + 1. */
static inline int tfs_stream_is(FILE *f, const void *want, size_t len, size_t *n)
{
	unsigned char *got = malloc(len + 1);
	*n = got ? fread(got, 1, len + 1, f) : 0;
	int same = got && *n == len && memcmp(got, want, len) == 0;
	free(got);
	return same;
}

/* debugfs -R 'cat PATH' returns exactly want[0..len). */
static inline int tfs_debugfs_cat(const char *img, const char *path, const void *want, size_t len)
{
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "debugfs -R 'cat \"%s\"' '%s' 2>/dev/null", path, img);
	FILE *p = popen(cmd, "r");
	if (!p)
		return 0;
	size_t n;
	int same = tfs_stream_is(p, want, len, &n);
	pclose(p);
	if (!same)
		diag("debugfs cat %s: got %zu bytes, want %zu", path, n, len);
	return same;
}

/* Runs the debugfs commands in `script` (one a line, read-only) on img and leaves
 * what they print in out, without the echoed "debugfs: COMMAND" lines: one debugfs
 * process for many questions. Returns the bytes in out, or -1. */
static inline int tfs_debugfs_script(const char *img, const char *script, char *out, size_t cap)
{
	char cmds[512], cmd[1200];
	snprintf(cmds, sizeof(cmds), "%s/debugfs.cmds", tfs_tmpdir());
	FILE *f = fopen(cmds, "w");
	if (!f || fputs(script, f) < 0 || fclose(f) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "DEBUGFS_PAGER=__none__ debugfs -f '%s' '%s' 2>/dev/null", cmds,
	         img);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char line[4096];
	size_t n = 0;
	out[0] = 0;
	while (fgets(line, sizeof(line), p)) {
		size_t l = strlen(line);
		if (!strncmp(line, "debugfs: ", 9) || n + l + 1 > cap)
			continue;
		memcpy(out + n, line, l + 1);
		n += l;
	}
	return pclose(p) == 0 ? (int)n : -1;
}

/* The host file at path holds exactly want[0..len). */
static inline int tfs_file_is(const char *path, const void *want, size_t len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t n;
	int same = tfs_stream_is(f, want, len, &n);
	fclose(f);
	return same;
}

#endif
