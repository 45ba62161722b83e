// SPDX-License-Identifier: GPL-2.0-or-later
/* fdio.c — whole reads and writes on a file descriptor, positioned or streamed (pipes,
 * sockets): retried on EINTR and short transfers, so callers see all of it or an error.
 * Shared by the host (the state store's packer, the matrix's workers, the recorder) and
 * the guest's static bo-observe. */
#include <errno.h>
#include <unistd.h>

#include "blackout/util.h"

int bo_pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA; /* the file or device ends first */
		got += (size_t)r;
	}
	return 0;
}

int bo_pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}

int bo_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA; /* the writer closed first */
		got += (size_t)r;
	}
	return 0;
}

int bo_write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}
