// SPDX-License-Identifier: GPL-2.0-or-later
/* fddev.c — a real block device (or a file) as a bdev for the probe: O_DIRECT so the
 * page cache neither hides nor merges the probe's writes, FUA as a RWF_DSYNC write (the
 * kernel sends REQ_FUA for it on a direct write to a device that has FUA), a flush as
 * fdatasync (REQ_PREFLUSH). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/fs.h>

#include "blackout/probe.h"

struct fd_dev {
	struct bdev dev;
	int fd;
	char path[200];
};

static int fd_io(struct bdev *d, bool wr, uint64_t lba, uint32_t count, void *buf, int rwf)
{
	struct fd_dev *f = (struct fd_dev *)d;
	size_t len = (size_t)count * d->sector_size;
	off_t off = (off_t)(lba * d->sector_size);
	unsigned char *p = buf;
	while (len > 0) {
		struct iovec iov = {.iov_base = p, .iov_len = len};
		ssize_t n = wr ? pwritev2(f->fd, &iov, 1, off, rwf) : pread(f->fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			return bo_errf(&d->err, -e, "%s: %s at byte %lld: %s", f->path,
			               wr ? "write" : "read", (long long)off, strerror(e));
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static int fd_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	return fd_io(d, false, lba, count, buf, 0);
}

static int fd_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	return fd_io(d, true, lba, count, (void *)buf, flags & BLK_FUA ? RWF_DSYNC : 0);
}

static int fd_flush(struct bdev *d)
{
	struct fd_dev *f = (struct fd_dev *)d;
	while (fdatasync(f->fd) < 0)
		if (errno != EINTR)
			return bo_errf(&d->err, -errno, "%s: flush (fdatasync): %s", f->path,
			               strerror(errno));
	return 0;
}

static void fd_close(struct bdev *d)
{
	struct fd_dev *f = (struct fd_dev *)d;
	close(f->fd);
	free(f);
}

static const struct bdev_ops fd_ops = {
    .read = fd_read, .write = fd_write, .flush = fd_flush, .close = fd_close};

int probe_fd_open(const char *path, bool writable, struct bdev **out, struct bo_err *err)
{
	int base = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	/* O_EXCL on a block device: the kernel refuses it while mounted or claimed */
	struct stat st;
	if (stat(path, &st) < 0)
		return bo_errf(err, -errno, "%s: %s: name a block device (or a file)", path,
		               strerror(errno));
	bool blkdev = S_ISBLK(st.st_mode);
	if (!blkdev && !S_ISREG(st.st_mode))
		return bo_errf(err, -EINVAL, "%s: neither a block device nor a file", path);
	int fd = open(path, base | O_DIRECT | (blkdev && writable ? O_EXCL : 0));
	if (fd < 0 && errno == EINVAL && !blkdev)
		fd = open(path, base); /* a file system without O_DIRECT (tmpfs) */
	if (fd < 0) {
		int e = errno;
		return bo_errf(err, -e, "%s: %s%s", path, strerror(e),
		               e == EBUSY ? ": it is in use (mounted, or held by another program): "
		                            "unmount it first"
		               : e == EACCES || e == EPERM
		                   ? ": run as root or get write access to it"
		                   : "");
	}
	uint64_t size = (uint64_t)st.st_size;
	int ss = 512;
	if (blkdev && (ioctl(fd, BLKGETSIZE64, &size) < 0 || ioctl(fd, BLKSSZGET, &ss) < 0)) {
		int e = errno;
		close(fd);
		return bo_errf(err, -e, "%s: cannot read its size: %s", path, strerror(e));
	}
	if (ss != 512 && ss != 4096) {
		close(fd);
		return bo_errf(err, -EINVAL, "%s: logical sector size %d (only 512 and 4096)", path,
		               ss);
	}
	struct fd_dev *f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return bo_errf(err, -ENOMEM, "out of memory");
	}
	f->fd = fd;
	snprintf(f->path, sizeof(f->path), "%s", path);
	int rc = blk_init(&f->dev, &fd_ops, "probe-fd", (uint32_t)ss, size / (uint64_t)ss);
	if (rc) {
		fd_close(&f->dev);
		return bo_errf(err, rc, "%s: unusable geometry", path);
	}
	*out = &f->dev;
	return 0;
}
