// SPDX-License-Identifier: GPL-2.0-or-later
/* observe.c — the guest's tree walker (bo-observe, built -static into the initramfs):
 * prints the observation lines of a mounted filesystem (docs/architecture.md,
 * "Observation lines": `dir PATH`, `file SIZE DIGESTS PATH`) in one process, where the
 * shell walk forked a dd and an md5sum per 4 KiB chunk. Not part of libblackout.
 * Usage: bo-observe MOUNTPOINT  (paths printed relative to it, sorted as `sort` does);
 * bo-observe apply DELTADEV OFFSET TARGET writes a state's delta (apply.c); bo-observe
 * snap|linear|unsnap make and remove the per-state dm-snapshot and md members' maps
 * with dm ioctls (dm.c); bo-observe look mounts, walks and unmounts a state in this one
 * process (look.c). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/util.h"
#include "crash/crash_int.h"

#define CHUNK    4096
#define MAXDEPTH 64
#define MAXPATH  4096

struct path {
	char *s;
	bool unlisted; /* a directory whose listing failed (opendir or readdir) */
};

struct paths {
	struct path *v;
	size_t n, cap;
};

static int add(struct paths *p, const char *s)
{
	struct path *v = bo_grow(p->v, &p->cap, p->n, sizeof(*v), 256);
	if (!v)
		return -ENOMEM;
	p->v = v;
	if (!(v[p->n].s = strdup(s)))
		return -ENOMEM;
	v[p->n++].unlisted = false;
	return 0;
}

/* Every path under dir (as `find DIR -mindepth 1` lists them); *unlisted: dir itself
 * could not be listed, whole or past a read error (the judge counts what it then
 * misses as read errors, not as silent loss). */
static int walk(const char *dir, unsigned depth, struct paths *p, bool *unlisted)
{
	*unlisted = false;
	if (depth > MAXDEPTH)
		return 0;
	DIR *d = opendir(dir);
	if (!d) {
		*unlisted = true;
		return 0;
	}
	int rc = 0;
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(d);
		if (!e) {
			*unlisted = errno != 0;
			break;
		}
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[MAXPATH];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
			continue;
		rc = add(p, path);
		size_t me = p->n - 1;
		struct stat st;
		bool bad = false;
		if (rc == 0 && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			rc = walk(path, depth + 1, p, &bad);
		if (rc)
			break;
		p->v[me].unlisted = bad;
	}
	closedir(d);
	return rc;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(((const struct path *)a)->s, ((const struct path *)b)->s);
}

static void hex(const uint8_t md5[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", md5[i]);
}

static void file(const char *path, const char *rel, const struct stat *st)
{
	static uint8_t buf[CHUNK];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("BO:OBS file %lld ! %s\n", (long long)st->st_size, rel);
		return;
	}
	/* the digests are collected first: a read error anywhere makes the line "!" */
	size_t n = ((size_t)st->st_size + CHUNK - 1) / CHUNK, len = 0;
	char *ds = malloc(n * 33 + 2);
	bool bad = !ds;
	for (size_t i = 0; !bad && i < n; i++) {
		size_t want = CHUNK, got = 0;
		if (i == n - 1 && st->st_size % CHUNK)
			want = (size_t)(st->st_size % CHUNK);
		while (!bad && got < want) {
			ssize_t r = read(fd, buf + got, want - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				bad = true; /* EIO, EBADMSG: the read failed, as `cat` would say */
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		uint8_t md5[16];
		crash_md5(buf, got, md5);
		if (len)
			ds[len++] = ',';
		hex(md5, ds + len);
		len += 32;
	}
	close(fd);
	if (bad)
		printf("BO:OBS file %lld ! %s\n", (long long)st->st_size, rel);
	else
		printf("BO:OBS file %lld %s %s\n", (long long)st->st_size, n ? ds : "-", rel);
	free(ds);
}

/* The observation lines of the tree under root, to stdout: 0, or 1 out of memory. */
int bo_observe_tree(const char *root)
{
	size_t rlen = strlen(root);
	struct paths p = {0};
	bool root_unlisted;
	if (walk(root, 0, &p, &root_unlisted) < 0) {
		fprintf(stderr, "bo-observe: out of memory\n");
		return 1;
	}
	if (root_unlisted)
		printf("BO:OBS dir ! /\n");
	qsort(p.v, p.n, sizeof *p.v, cmp);
	for (size_t i = 0; i < p.n; i++) {
		const char *rel = p.v[i].s + rlen;
		struct stat st;
		if (lstat(p.v[i].s, &st) < 0)
			st.st_mode = 0; /* gone or unreadable: the shell walk skipped it too */
		if (S_ISDIR(st.st_mode))
			printf("BO:OBS dir %s%s\n", p.v[i].unlisted ? "! " : "", rel);
		else if (S_ISREG(st.st_mode))
			file(p.v[i].s, rel, &st);
		free(p.v[i].s);
	}
	free(p.v);
	return 0;
}

int bo_apply(int argc, char **argv); /* apply.c */
int bo_fsop(int argc, char **argv);  /* fsop.c */
int bo_dm(int argc, char **argv);    /* dm.c */
int bo_look(int argc, char **argv);  /* look.c */

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "apply"))
		return bo_apply(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "fsop"))
		return bo_fsop(argc, argv);
	if (argc > 1 &&
	    (!strcmp(argv[1], "snap") || !strcmp(argv[1], "unsnap") || !strcmp(argv[1], "linear")))
		return bo_dm(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "look"))
		return bo_look(argc, argv);
	if (argc != 2) {
		fprintf(stderr,
		        "usage: bo-observe MOUNTPOINT | bo-observe apply DELTADEV OFFSET "
		        "TARGET | bo-observe snap NAME SECTORS ORIGIN COW [DELTADEV OFFSET] | "
		        "bo-observe linear NAME SECTORS DEV START... | bo-observe unsnap [--klog] "
		        "NAME... "
		        "| bo-observe look DEV MOUNTPOINT FSTYPE OPTIONS TIMES\n");
		return 2;
	}
	if (bo_observe_tree(argv[1]))
		return 1;
	return fflush(stdout) == 0 ? 0 : 1;
}
