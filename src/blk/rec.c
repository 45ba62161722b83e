// SPDX-License-Identifier: GPL-2.0-or-later
/* rec.c — the recorder (a pass-through bdev that logs every operation), the
 * in-memory log and replay of a prefix; the file format is rec_file.c. Not a tracer
 * of timing: order and content only, which is what crash states need. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/rec.h"

struct rec_log {
	uint32_t sector_size;
	uint64_t nr_sectors;
	size_t len, cap;
	struct rec_entry *e; /* data and mark owned by the log */
	uint64_t bytes;      /* the file format's size of what is held */
	uint64_t max_bytes;  /* 0: no cap */
	uint64_t refused;
	unsigned ndev;                               /* 1, or 2..REC_LOG_DEVICES_MAX */
	uint64_t dev_start[REC_LOG_DEVICES_MAX + 1]; /* dev_start[ndev] = nr_sectors */
};

/* Sizes of the file format (docs/log-format.md), which rec_file.c writes. */
#define FILE_HDR_BYTES 44
#define FILE_REC_BYTES 36
/* a several-device log's table after the header: count, zero, sizes, checksum */
#define FILE_DEVTAB_BYTES(n) (8 + 8 * (uint64_t)(n) + 4)

int rec_log_new(uint32_t sector_size, uint64_t nr_sectors, struct rec_log **out)
{
	if (sector_size != 512 && sector_size != 4096)
		return -EINVAL;
	struct rec_log *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->sector_size = sector_size;
	l->nr_sectors = nr_sectors;
	l->bytes = FILE_HDR_BYTES;
	l->ndev = 1;
	l->dev_start[1] = nr_sectors;
	*out = l;
	return 0;
}

int rec_log_new_devices(uint32_t sector_size, unsigned n, const uint64_t *sizes,
                        struct rec_log **out)
{
	if (n < 2 || n > REC_LOG_DEVICES_MAX)
		return -EINVAL;
	uint64_t start[REC_LOG_DEVICES_MAX + 1] = {0};
	for (unsigned i = 0; i < n; i++) {
		if (sizes[i] == 0 || sizes[i] > UINT64_MAX / 4096 - start[i])
			return -EINVAL;
		start[i + 1] = start[i] + sizes[i];
	}
	int rc = rec_log_new(sector_size, start[n], out);
	if (rc)
		return rc;
	(*out)->ndev = n;
	memcpy((*out)->dev_start, start, sizeof start);
	(*out)->bytes = FILE_HDR_BYTES + FILE_DEVTAB_BYTES(n);
	return 0;
}

unsigned rec_log_ndev(const struct rec_log *l)
{
	return l->ndev;
}

uint64_t rec_log_dev_sectors(const struct rec_log *l, unsigned d)
{
	return d < l->ndev ? l->dev_start[d + 1] - l->dev_start[d] : 0;
}

uint64_t rec_log_dev_start(const struct rec_log *l, unsigned d)
{
	return d < l->ndev ? l->dev_start[d] : 0;
}

void rec_log_free(struct rec_log *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->len; i++) {
		free((void *)l->e[i].data);
		free((void *)l->e[i].mark);
	}
	free(l->e);
	free(l);
}

size_t rec_log_len(const struct rec_log *l)
{
	return l->len;
}

const struct rec_entry *rec_log_get(const struct rec_log *l, size_t i)
{
	return i < l->len ? &l->e[i] : NULL;
}

uint32_t rec_log_sector_size(const struct rec_log *l)
{
	return l->sector_size;
}

uint64_t rec_log_nr_sectors(const struct rec_log *l)
{
	return l->nr_sectors;
}

const char *rec_op_name(enum rec_op op)
{
	switch (op) {
	case REC_WRITE: return "write";
	case REC_FLUSH: return "flush";
	case REC_DISCARD: return "discard";
	case REC_READ: return "read";
	case REC_MARK: return "mark";
	}
	return "?";
}

uint64_t rec_log_bytes(const struct rec_log *l)
{
	return l->bytes;
}

void rec_log_set_cap(struct rec_log *l, uint64_t bytes)
{
	l->max_bytes = bytes;
}

uint64_t rec_log_refused(const struct rec_log *l)
{
	return l->refused;
}

/* What an entry of this kind adds to the file. */
static uint64_t entry_bytes(const struct rec_log *l, enum rec_op op, uint32_t count,
                            const char *mark)
{
	uint64_t n = FILE_REC_BYTES;
	if (op == REC_WRITE)
		n += (uint64_t)count * l->sector_size;
	else if (op == REC_MARK && mark)
		n += strlen(mark);
	return n;
}

/* 0 when the entry fits under the cap; else counts the refusal. */
static int room_for(struct rec_log *l, uint64_t n)
{
	if (l->max_bytes && (l->bytes > l->max_bytes || n > l->max_bytes - l->bytes)) {
		l->refused++;
		return -ENOSPC;
	}
	return 0;
}

int rec_log_append(struct rec_log *l, const struct rec_entry *src)
{
	if (src->dev >= l->ndev)
		return -EINVAL;
	uint64_t add = entry_bytes(l, src->op, src->count, src->mark);
	int rc = room_for(l, add);
	if (rc)
		return rc;
	if (l->len == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct rec_entry *e = realloc(l->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		l->e = e;
		l->cap = cap;
	}
	if (src->op == REC_MARK) {
		/* a name the file format cannot hold would make the log unsaveable */
		size_t n = src->mark ? strlen(src->mark) : 0;
		if (n == 0)
			return -EINVAL;
		if (n > REC_MARK_MAX)
			return -ENAMETOOLONG;
	}
	struct rec_entry e = *src;
	e.data = NULL;
	e.mark = NULL;
	if (src->op == REC_WRITE) {
		size_t n = (size_t)src->count * l->sector_size;
		void *d = malloc(n);
		if (!d)
			return -ENOMEM;
		memcpy(d, src->data, n);
		e.data = d;
	} else if (src->op == REC_MARK) {
		e.mark = strdup(src->mark);
		if (!e.mark)
			return -ENOMEM;
	}
	l->e[l->len++] = e;
	l->bytes += add;
	return 0;
}

int rec_log_mark(struct rec_log *l, const char *name)
{
	struct rec_entry e = {.op = REC_MARK, .mark = name};
	return rec_log_append(l, &e);
}

/* ---- the recording bdev -------------------------------------------------------- */

struct rec_dev {
	struct bdev dev;
	struct bdev *lower;
	struct rec_log *log;
	unsigned flags;
	unsigned index; /* the log's device this recorder stands for */
	bool paused;
};

/* Refuses an operation the log has no room for before the lower device sees it:
 * the log never misses an operation the device performed. */
static int check_room(struct rec_dev *r, enum rec_op op, uint32_t count)
{
	if (r->paused)
		return 0;
	struct rec_log *l = r->log;
	int rc = room_for(l, entry_bytes(l, op, count, NULL));
	if (rc)
		return bo_errf(
		    &r->dev.err, rc,
		    "recorder: the log is full (%zu records, %llu bytes; cap %llu bytes): "
		    "%s refused",
		    l->len, (unsigned long long)l->bytes, (unsigned long long)l->max_bytes,
		    rec_op_name(op));
	return 0;
}

static int log_op(struct rec_dev *r, struct rec_entry *e, int result)
{
	if (r->paused)
		return result;
	e->result = result;
	e->dev = r->index;
	int rc = rec_log_append(r->log, e);
	return rc ? rc : result;
}

static int rec_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct rec_dev *r = (struct rec_dev *)d;
	if (!(r->flags & REC_LOG_READS))
		return blk_read(r->lower, lba, count, buf);
	int rc = check_room(r, REC_READ, 0);
	if (rc)
		return rc;
	rc = blk_read(r->lower, lba, count, buf);
	struct rec_entry e = {.op = REC_READ, .lba = lba, .count = count};
	return log_op(r, &e, rc);
}

static int rec_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct rec_dev *r = (struct rec_dev *)d;
	int rc = check_room(r, REC_WRITE, count);
	if (rc)
		return rc;
	rc = blk_write(r->lower, lba, count, buf, flags);
	struct rec_entry e = {
	    .op = REC_WRITE, .flags = flags, .lba = lba, .count = count, .data = buf};
	return log_op(r, &e, rc);
}

static int rec_flush(struct bdev *d)
{
	struct rec_dev *r = (struct rec_dev *)d;
	int rc = check_room(r, REC_FLUSH, 0);
	if (rc)
		return rc;
	rc = blk_flush(r->lower);
	struct rec_entry e = {.op = REC_FLUSH};
	return log_op(r, &e, rc);
}

static int rec_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct rec_dev *r = (struct rec_dev *)d;
	int rc = check_room(r, REC_DISCARD, 0);
	if (rc)
		return rc;
	rc = blk_discard(r->lower, lba, count);
	struct rec_entry e = {.op = REC_DISCARD, .lba = lba, .count = count};
	return log_op(r, &e, rc);
}

static void rec_close(struct bdev *d)
{
	struct rec_dev *r = (struct rec_dev *)d;
	if (r->flags & REC_OWN_LOWER)
		blk_close(r->lower);
	free(r);
}

static struct bdev *rec_lower(struct bdev *d, unsigned i)
{
	return i == 0 ? ((struct rec_dev *)d)->lower : NULL;
}

static void rec_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct rec_dev *r = (struct rec_dev *)d;
	emit(ctx, "log_entries", rec_log_len(r->log));
	blk_stats(r->lower, emit, ctx);
}

static const struct bdev_ops rec_ops = {
    .read = rec_read,
    .write = rec_write,
    .flush = rec_flush,
    .discard = rec_discard,
    .close = rec_close,
    .lower = rec_lower,
    .stats = rec_stats,
};

int rec_open(struct bdev *lower, struct rec_log *log, unsigned flags, struct bdev **out)
{
	if (log->ndev != 1)
		return bo_errf(&lower->err, -EINVAL,
		               "recorder: the log has %u devices; say which one (rec_open_dev)",
		               log->ndev);
	return rec_open_dev(lower, log, 0, flags, out);
}

int rec_open_dev(struct bdev *lower, struct rec_log *log, unsigned dev, unsigned flags,
                 struct bdev **out)
{
	if (dev >= log->ndev)
		return bo_errf(&lower->err, -EINVAL, "recorder: device %u of a log of %u", dev,
		               log->ndev);
	uint64_t nr = rec_log_dev_sectors(log, dev);
	if (log->sector_size != lower->sector_size || nr != lower->nr_sectors)
		return bo_errf(&lower->err, -EINVAL,
		               "recorder: log geometry (%u x %llu) differs from %s (%u x %llu)",
		               log->sector_size, (unsigned long long)nr, lower->name,
		               lower->sector_size, (unsigned long long)lower->nr_sectors);
	struct rec_dev *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	blk_init(&r->dev, &rec_ops, "rec", lower->sector_size, lower->nr_sectors);
	r->lower = lower;
	r->log = log;
	r->flags = flags;
	r->index = dev;
	*out = &r->dev;
	return 0;
}

void rec_pause(struct bdev *d, bool paused)
{
	((struct rec_dev *)d)->paused = paused;
}

int rec_apply(const struct rec_entry *e, struct bdev *t)
{
	if (e->result != 0)
		return 0; /* it failed when recorded: it changed nothing we can know of */
	switch (e->op) {
	case REC_WRITE: return blk_write(t, e->lba, e->count, e->data, e->flags);
	case REC_FLUSH: return blk_flush(t);
	case REC_DISCARD: return blk_discard(t, e->lba, e->count);
	case REC_READ:
	case REC_MARK: return 0;
	}
	return -EINVAL;
}

struct bdev *rec_flush_target(const struct rec_log *l, const struct rec_entry *e, struct bdev *t)
{
	if (l->ndev == 1)
		return t;
	if (t->nr_sectors != l->nr_sectors || e->dev >= l->ndev)
		return NULL;
	struct bdev *m = blk_lower(t, e->dev);
	if (!m || m->nr_sectors != rec_log_dev_sectors(l, e->dev))
		return NULL;
	return m;
}

int rec_apply_log(const struct rec_log *l, const struct rec_entry *e, struct bdev *t)
{
	if (l->ndev == 1 || e->result != 0)
		return rec_apply(e, t);
	if (e->op == REC_FLUSH) {
		struct bdev *m = rec_flush_target(l, e, t);
		if (!m)
			return bo_errf(&t->err, -EINVAL,
			               "replay: %s is not the concat of the log's %u devices",
			               t->name, l->ndev);
		return blk_flush(m);
	}
	struct rec_entry flat = *e;
	flat.lba += rec_log_dev_start(l, e->dev);
	return rec_apply(&flat, t);
}

int rec_replay(const struct rec_log *l, size_t n, struct bdev *t, struct bo_err *err)
{
	if (n > l->len)
		return bo_errf(err, -EINVAL, "replay of %zu entries: the log has %zu", n, l->len);
	if (l->ndev > 1 && t->nr_sectors != l->nr_sectors)
		return bo_errf(
		    err, -EINVAL, "replay: %s has %llu sectors, the log's %u devices %llu", t->name,
		    (unsigned long long)t->nr_sectors, l->ndev, (unsigned long long)l->nr_sectors);
	for (size_t i = 0; i < n; i++) {
		int rc = rec_apply_log(l, &l->e[i], t);
		if (rc)
			return bo_errf(err, rc, "replay: entry %zu (%s at %llu) failed on %s: %s",
			               i, rec_op_name(l->e[i].op), (unsigned long long)l->e[i].lba,
			               t->name, bo_errstr(&t->err, rc));
	}
	return 0;
}
