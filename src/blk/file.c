// SPDX-License-Identifier: GPL-2.0-or-later
/* file.c — an image file or a block device as a medium: pread/pwrite with EINTR and
 * short transfers handled, flush = fdatasync, FUA = write then fdatasync. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "blackout/blk.h"

struct file_dev {
	struct bdev dev;
	int fd;
	char path[256];
};

static int full_io(struct bdev *d, bool write, uint64_t lba, uint32_t count, void *buf)
{
	struct file_dev *f = (struct file_dev *)d;
	size_t len = (size_t)count * d->sector_size;
	off_t off = (off_t)(lba * d->sector_size);
	unsigned char *p = buf;
	while (len > 0) {
		ssize_t n = write ? pwrite(f->fd, p, len, off) : pread(f->fd, p, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			return bo_errf(&d->err, -e, "%s: %s at byte %lld: %s", f->path,
			               write ? "write" : "read", (long long)off, strerror(e));
		}
		if (n == 0) {
			if (write)
				return bo_errf(&d->err, -EIO,
				               "%s: write at byte %lld made no progress", f->path,
				               (long long)off);
			/* a file shorter than its device reads as zeroes past its end */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static int file_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	return full_io(d, false, lba, count, buf);
}

static int file_sync(struct bdev *d)
{
	struct file_dev *f = (struct file_dev *)d;
	while (fdatasync(f->fd) < 0) {
		if (errno == EINTR)
			continue;
		int e = errno;
		return bo_errf(&d->err, -e, "%s: fdatasync: %s", f->path, strerror(e));
	}
	return 0;
}

static int file_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	int rc = full_io(d, true, lba, count, (void *)buf);
	if (rc == 0 && (flags & BLK_FUA))
		rc = file_sync(d);
	return rc;
}

static int file_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	/* zeroes, so that discard reads back the same on every medium */
	struct file_dev *f = (struct file_dev *)d;
	off_t off = (off_t)(lba * d->sector_size), len = (off_t)count * d->sector_size;
	if (fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) == 0)
		return 0;
	void *z = calloc(count, d->sector_size);
	if (!z)
		return -ENOMEM;
	int rc = full_io(d, true, lba, count, z);
	free(z);
	return rc;
}

static void file_close(struct bdev *d)
{
	struct file_dev *f = (struct file_dev *)d;
	close(f->fd);
	free(f);
}

static const struct bdev_ops file_ops = {
    .read = file_read,
    .write = file_write,
    .flush = file_sync,
    .discard = file_discard,
    .close = file_close,
};

int blk_file_open(const char *path, uint32_t sector_size, uint64_t size, unsigned flags,
                  struct bdev **out, struct bo_err *err)
{
	bool rdonly = flags & BLK_FILE_RDONLY;
	int oflags = (rdonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	if ((flags & BLK_FILE_CREATE) && !rdonly)
		oflags |= O_CREAT;
	int fd = open(path, oflags, 0644);
	if (fd < 0) {
		int e = errno;
		if (e == EACCES || e == EROFS)
			return bo_errf(err, -e, "%s: cannot open for %s: %s%s", path,
			               rdonly ? "reading" : "writing", strerror(e),
			               rdonly ? "" : " (read-only file? open it read-only)");
		return bo_errf(err, -e, "%s: %s", path, strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return bo_errf(err, -e, "%s: stat: %s", path, strerror(e));
	}
	uint64_t have = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &have) < 0) {
		int e = errno;
		close(fd);
		return bo_errf(err, -e, "%s: cannot read the block device size: %s", path,
		               strerror(e));
	} else if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		close(fd);
		return bo_errf(err, -EINVAL, "%s: not a regular file or block device", path);
	}
	if (size == 0)
		size = have;
	if (size == 0) {
		close(fd);
		return bo_errf(err, -EINVAL, "%s: empty file", path);
	}
	if (sector_size != 512 && sector_size != 4096) {
		close(fd);
		return bo_errf(err, -EINVAL, "%s: sector size %u (must be 512 or 4096)", path,
		               sector_size);
	}
	if (size % sector_size) {
		close(fd);
		return bo_errf(err, -EINVAL,
		               "%s: size %llu bytes is not a multiple of the %u-byte sector size",
		               path, (unsigned long long)size, sector_size);
	}
	if (size > have) {
		if (!(flags & BLK_FILE_CREATE) || S_ISBLK(st.st_mode)) {
			close(fd);
			return bo_errf(err, -EINVAL, "%s: is %llu bytes, smaller than %llu", path,
			               (unsigned long long)have, (unsigned long long)size);
		}
		if (ftruncate(fd, (off_t)size) < 0) {
			int e = errno;
			close(fd);
			return bo_errf(err, -e, "%s: cannot extend to %llu bytes: %s", path,
			               (unsigned long long)size, strerror(e));
		}
	}
	struct file_dev *f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	blk_init(&f->dev, &file_ops, "file", sector_size, size / sector_size);
	f->dev.read_only = rdonly;
	f->fd = fd;
	snprintf(f->path, sizeof(f->path), "%s", path);
	*out = &f->dev;
	return 0;
}
