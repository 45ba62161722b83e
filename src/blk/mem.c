/* mem.c — a RAM image: the simplest medium, and the base most tests and crash
 * states stand on. No volatile state: every completed write is durable. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"

struct mem_dev {
	struct bdev dev;
	unsigned char *data;
};

static int mem_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct mem_dev *m = (struct mem_dev *)d;
	memcpy(buf, m->data + lba * d->sector_size, (size_t)count * d->sector_size);
	return 0;
}

static int mem_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct mem_dev *m = (struct mem_dev *)d;
	(void)flags;
	memcpy(m->data + lba * d->sector_size, buf, (size_t)count * d->sector_size);
	return 0;
}

static int mem_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	/* discarded sectors read back as zeroes, as on a device with RZAT */
	struct mem_dev *m = (struct mem_dev *)d;
	memset(m->data + lba * d->sector_size, 0, (size_t)count * d->sector_size);
	return 0;
}

static void mem_close(struct bdev *d)
{
	struct mem_dev *m = (struct mem_dev *)d;
	free(m->data);
	free(m);
}

static int mem_clone(struct bdev *d, struct bdev **out);

static const struct bdev_ops mem_ops = {
    .read = mem_read,
    .write = mem_write,
    .discard = mem_discard,
    .close = mem_close,
    .clone = mem_clone,
};

static int mem_alloc(uint32_t sector_size, uint64_t nr_sectors, struct mem_dev **out)
{
	struct mem_dev *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	int rc = blk_init(&m->dev, &mem_ops, "mem", sector_size, nr_sectors);
	if (rc) {
		free(m);
		return rc;
	}
	if (nr_sectors == 0 || nr_sectors > SIZE_MAX / sector_size) {
		free(m);
		return -EINVAL;
	}
	m->data = calloc(nr_sectors, sector_size);
	if (!m->data) {
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

int blk_mem_open(uint32_t sector_size, uint64_t nr_sectors, struct bdev **out)
{
	struct mem_dev *m;
	int rc = mem_alloc(sector_size, nr_sectors, &m);
	if (rc == 0)
		*out = &m->dev;
	return rc;
}

static int mem_clone(struct bdev *d, struct bdev **out)
{
	struct mem_dev *m;
	int rc = mem_alloc(d->sector_size, d->nr_sectors, &m);
	if (rc)
		return rc;
	memcpy(m->data, ((struct mem_dev *)d)->data, (size_t)d->nr_sectors * d->sector_size);
	m->dev.read_only = d->read_only;
	*out = &m->dev;
	return 0;
}
