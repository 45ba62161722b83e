// SPDX-License-Identifier: GPL-2.0-or-later
/* fsop.c — `bo-observe fsop ...`: the workload steps busybox cannot make in the guest
 * (fallocate modes, xattrs, O_DIRECT / O_SYNC / mmap writes, fsync of an inherited fd),
 * as crash_guest_compile emits them (docs/workloads.md). Each prints why it failed and
 * exits 1, so the compiled run marks the step failed; it never retries. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "blackout/util.h"

#define FSOP_MAX (64ull << 20) /* one write, as the workload language allows */

static int fail(const char *op, const char *what, int e)
{
	fprintf(stderr, "bo-observe fsop %s: %s: %s\n", op, what, strerror(e));
	return 1;
}

static int num(const char *s, unsigned long long *v)
{
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || s[0] == '-' ? -EINVAL : 0;
}

static int do_falloc(char **a)
{
	static const char *const names[] = {"plain",      "keep-size", "punch-hole",
	                                    "zero-range", "collapse",  "insert"};
	static const int modes[] = {0,
	                            FALLOC_FL_KEEP_SIZE,
	                            FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	                            FALLOC_FL_ZERO_RANGE,
	                            FALLOC_FL_COLLAPSE_RANGE,
	                            FALLOC_FL_INSERT_RANGE};
	int m = -1;
	for (int i = 0; i < 6; i++)
		if (!strcmp(a[0], names[i]))
			m = i;
	unsigned long long off, len;
	if (m < 0 || num(a[1], &off) || num(a[2], &len))
		return fail("falloc", "usage: falloc MODE OFF LEN PATH", EINVAL);
	int fd = open(a[3], O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("falloc", a[3], errno);
	if (fallocate(fd, modes[m], (off_t)off, (off_t)len) < 0)
		return fail("falloc", a[3], errno);
	return close(fd) < 0 ? fail("falloc", a[3], errno) : 0;
}

/* write KIND PAYLOAD OFF PATH: KIND direct, sync, direct-sync or mmap */
static int do_write(char **a)
{
	unsigned long long off;
	int flags = O_WRONLY | O_CLOEXEC;
	bool mm = !strcmp(a[0], "mmap");
	if (!strcmp(a[0], "direct"))
		flags |= O_DIRECT;
	else if (!strcmp(a[0], "sync"))
		flags |= O_SYNC;
	else if (!strcmp(a[0], "direct-sync"))
		flags |= O_DIRECT | O_SYNC;
	else if (mm)
		flags = O_RDWR | O_CLOEXEC; /* a shared writable mapping needs read access */
	else
		return fail("write", a[0], EINVAL);
	if (num(a[2], &off))
		return fail("write", "OFF", EINVAL);
	int pfd = open(a[1], O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (pfd < 0 || fstat(pfd, &st) < 0)
		return fail("write", a[1], errno);
	size_t len = (size_t)st.st_size;
	void *buf = NULL;
	/* O_DIRECT wants the buffer aligned; 4096 suits every logical block size */
	if (len == 0 || len > FSOP_MAX || posix_memalign(&buf, 4096, len))
		return fail("write", a[1], len ? ENOMEM : EINVAL);
	int rc = bo_pread_full(pfd, buf, len, 0);
	if (rc)
		return fail("write", a[1], -rc);
	close(pfd);
	int fd = open(a[3], flags);
	if (fd < 0)
		return fail("write", a[3], errno);
	if (!mm) {
		ssize_t w = pwrite(fd, buf, len, (off_t)off);
		if (w < 0)
			return fail("write", a[3], errno);
		if ((size_t)w != len)
			return fail("write", "short write", EIO);
		return close(fd) < 0 ? fail("write", a[3], errno) : 0;
	}
	/* mmap cannot grow a file: extend it first, as the model's write would */
	if (fstat(fd, &st) < 0)
		return fail("mwrite", a[3], errno);
	if ((unsigned long long)st.st_size < off + len && ftruncate(fd, (off_t)(off + len)) < 0)
		return fail("mwrite", a[3], errno);
	long pg = sysconf(_SC_PAGESIZE);
	off_t base = (off_t)(off / (unsigned long long)pg * (unsigned long long)pg);
	size_t maplen = (size_t)(off - (unsigned long long)base) + len;
	char *map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
	if (map == MAP_FAILED)
		return fail("mwrite", a[3], errno);
	memcpy(map + (off - (unsigned long long)base), buf, len);
	if (msync(map, maplen, MS_SYNC) < 0)
		return fail("mwrite", "msync", errno);
	munmap(map, maplen);
	free(buf);
	return close(fd) < 0 ? fail("mwrite", a[3], errno) : 0;
}

int bo_fsop(int argc, char **argv)
{
	const char *op = argc > 2 ? argv[2] : "";
	char **a = argv + 3;
	int n = argc - 3;
	unsigned long long fd;
	if (!strcmp(op, "falloc") && n == 4)
		return do_falloc(a);
	if (!strcmp(op, "write") && n == 4)
		return do_write(a);
	if (!strcmp(op, "setxattr") && n == 3)
		return setxattr(a[0], a[1], a[2], strlen(a[2]), 0) < 0 ? fail(op, a[0], errno) : 0;
	if (!strcmp(op, "removexattr") && n == 2)
		return removexattr(a[0], a[1]) < 0 ? fail(op, a[0], errno) : 0;
	if ((!strcmp(op, "fsync") || !strcmp(op, "fdatasync")) && n == 1 && !num(a[0], &fd) &&
	    fd < 1024) {
		/* an fd the shell holds open (exec N<FILE): its name may be gone */
		int r = op[1] == 's' ? fsync((int)fd) : fdatasync((int)fd);
		return r < 0 ? fail(op, a[0], errno) : 0;
	}
	fprintf(stderr, "usage: bo-observe fsop falloc MODE OFF LEN PATH | write "
	                "direct|sync|direct-sync|mmap PAYLOAD OFF PATH | setxattr PATH NAME VALUE "
	                "| removexattr PATH NAME | fsync FD | fdatasync FD\n");
	return 2;
}
