/* rec.c — the recorder (a pass-through bdev that logs every operation), the
 * in-memory log, replay of a prefix, and the log file format (docs/log-format.md).
 * Not a tracer of timing: order and content only, which is what crash states need. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/endian.h"
#include "blackout/rec.h"
#include "blackout/util.h"

struct rec_log {
	uint32_t sector_size;
	uint64_t nr_sectors;
	size_t len, cap;
	struct rec_entry *e; /* data and mark owned by the log */
};

int rec_log_new(uint32_t sector_size, uint64_t nr_sectors, struct rec_log **out)
{
	if (sector_size != 512 && sector_size != 4096)
		return -EINVAL;
	struct rec_log *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->sector_size = sector_size;
	l->nr_sectors = nr_sectors;
	*out = l;
	return 0;
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

int rec_log_append(struct rec_log *l, const struct rec_entry *src)
{
	if (l->len == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct rec_entry *e = realloc(l->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		l->e = e;
		l->cap = cap;
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
		e.mark = strdup(src->mark ? src->mark : "");
		if (!e.mark)
			return -ENOMEM;
	}
	l->e[l->len++] = e;
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
	bool paused;
};

static int log_op(struct rec_dev *r, struct rec_entry *e, int result)
{
	if (r->paused)
		return result;
	e->result = result;
	int rc = rec_log_append(r->log, e);
	return rc ? rc : result;
}

static int rec_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct rec_dev *r = (struct rec_dev *)d;
	int rc = blk_read(r->lower, lba, count, buf);
	if (!(r->flags & REC_LOG_READS))
		return rc;
	struct rec_entry e = {.op = REC_READ, .lba = lba, .count = count};
	return log_op(r, &e, rc);
}

static int rec_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct rec_dev *r = (struct rec_dev *)d;
	int rc = blk_write(r->lower, lba, count, buf, flags);
	struct rec_entry e = {
	    .op = REC_WRITE, .flags = flags, .lba = lba, .count = count, .data = buf};
	return log_op(r, &e, rc);
}

static int rec_flush(struct bdev *d)
{
	struct rec_dev *r = (struct rec_dev *)d;
	int rc = blk_flush(r->lower);
	struct rec_entry e = {.op = REC_FLUSH};
	return log_op(r, &e, rc);
}

static int rec_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct rec_dev *r = (struct rec_dev *)d;
	int rc = blk_discard(r->lower, lba, count);
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
	if (log->sector_size != lower->sector_size || log->nr_sectors != lower->nr_sectors)
		return bo_errf(&lower->err, -EINVAL,
		               "recorder: log geometry (%u x %llu) differs from %s (%u x %llu)",
		               log->sector_size, (unsigned long long)log->nr_sectors, lower->name,
		               lower->sector_size, (unsigned long long)lower->nr_sectors);
	struct rec_dev *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	blk_init(&r->dev, &rec_ops, "rec", lower->sector_size, lower->nr_sectors);
	r->lower = lower;
	r->log = log;
	r->flags = flags;
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

int rec_replay(const struct rec_log *l, size_t n, struct bdev *t, struct bo_err *err)
{
	if (n > l->len)
		return bo_errf(err, -EINVAL, "replay of %zu entries: the log has %zu", n, l->len);
	for (size_t i = 0; i < n; i++) {
		int rc = rec_apply(&l->e[i], t);
		if (rc)
			return bo_errf(err, rc, "replay: entry %zu (%s at %llu) failed on %s: %s",
			               i, rec_op_name(l->e[i].op), (unsigned long long)l->e[i].lba,
			               t->name, bo_errstr(&t->err, rc));
	}
	return 0;
}

/* ---- file format ------------------------------------------------------------- */

static const char LOG_MAGIC[8] = {'B', 'L', 'K', 'O', 'U', 'T', 'L', 'G'};
#define LOG_VERSION 1
#define LOG_HDR_LEN 44
#define REC_MAGIC   0x31434552u /* "REC1" */
#define REC_HDR_LEN 36
#define MARK_MAX    255

static size_t payload_len(const struct rec_log *l, const struct rec_entry *e)
{
	if (e->op == REC_WRITE)
		return (size_t)e->count * l->sector_size;
	if (e->op == REC_MARK)
		return strlen(e->mark);
	return 0;
}

int rec_log_serialize(const struct rec_log *l, void **bufp, size_t *lenp)
{
	size_t total = LOG_HDR_LEN;
	for (size_t i = 0; i < l->len; i++) {
		if (l->e[i].op == REC_MARK && strlen(l->e[i].mark) > MARK_MAX)
			return -ENAMETOOLONG;
		total += REC_HDR_LEN + payload_len(l, &l->e[i]);
	}
	unsigned char *b = malloc(total), *p = b;
	if (!b)
		return -ENOMEM;
	memcpy(p, LOG_MAGIC, 8);
	put_le32(p + 8, LOG_VERSION);
	put_le32(p + 12, LOG_HDR_LEN);
	put_le32(p + 16, l->sector_size);
	put_le32(p + 20, 0);
	put_le64(p + 24, l->nr_sectors);
	put_le64(p + 32, l->len);
	put_le32(p + 40, crc32c(p, 40));
	p += LOG_HDR_LEN;
	for (size_t i = 0; i < l->len; i++) {
		const struct rec_entry *e = &l->e[i];
		size_t plen = payload_len(l, e);
		memset(p, 0, REC_HDR_LEN);
		put_le32(p, REC_MAGIC);
		p[4] = (unsigned char)e->op;
		put_le32(p + 8, e->flags);
		put_le32(p + 12, (uint32_t)e->result);
		put_le64(p + 16, e->lba);
		put_le32(p + 24, e->count);
		put_le32(p + 28, (uint32_t)plen);
		if (plen)
			memcpy(p + REC_HDR_LEN,
			       e->op == REC_WRITE ? e->data : (const void *)e->mark, plen);
		uint32_t crc = ~crc32c_raw(~0u, p, 32);
		crc = ~crc32c_raw(~crc, p + REC_HDR_LEN, plen);
		put_le32(p + 32, crc);
		p += REC_HDR_LEN + plen;
	}
	*bufp = b;
	*lenp = total;
	return 0;
}

int rec_log_parse(const void *buf, size_t len, struct rec_log **out, struct bo_err *err)
{
	const unsigned char *b = buf;
	*out = NULL;
	if (len < LOG_HDR_LEN)
		return bo_errf(err, -EINVAL, "log: %zu bytes is shorter than the %d-byte header",
		               len, LOG_HDR_LEN);
	if (memcmp(b, LOG_MAGIC, 8) != 0)
		return bo_errf(err, -EINVAL, "log: bad magic at byte 0 (not a blackout I/O log)");
	if (get_le32(b + 40) != crc32c(b, 40))
		return bo_errf(err, -EINVAL, "log: header checksum mismatch at byte 40");
	if (get_le32(b + 8) != LOG_VERSION)
		return bo_errf(err, -EINVAL, "log: version %u at byte 8 (this blackout reads %d)",
		               get_le32(b + 8), LOG_VERSION);
	if (get_le32(b + 12) != LOG_HDR_LEN)
		return bo_errf(err, -EINVAL, "log: header length %u at byte 12 (expected %d)",
		               get_le32(b + 12), LOG_HDR_LEN);
	uint32_t ss = get_le32(b + 16);
	uint64_t nr = get_le64(b + 24), count = get_le64(b + 32);
	if (ss != 512 && ss != 4096)
		return bo_errf(err, -EINVAL, "log: sector size %u at byte 16", ss);
	if (nr == 0 || nr > (UINT64_MAX / 4096))
		return bo_errf(err, -EINVAL, "log: device size %llu sectors at byte 24",
		               (unsigned long long)nr);
	struct rec_log *l;
	int rc = rec_log_new(ss, nr, &l);
	if (rc)
		return rc;
	size_t off = LOG_HDR_LEN;
	for (uint64_t i = 0; i < count; i++) {
		if (len - off < REC_HDR_LEN) {
			rc =
			    bo_errf(err, -EINVAL,
			            "log: truncated at byte %zu: record %llu of %llu is incomplete",
			            off, (unsigned long long)i, (unsigned long long)count);
			goto fail;
		}
		const unsigned char *p = b + off;
		if (get_le32(p) != REC_MAGIC) {
			rc = bo_errf(err, -EINVAL, "log: record %llu at byte %zu: bad magic",
			             (unsigned long long)i, off);
			goto fail;
		}
		struct rec_entry e = {.op = p[4],
		                      .flags = get_le32(p + 8),
		                      .result = (int)get_le32(p + 12),
		                      .lba = get_le64(p + 16),
		                      .count = get_le32(p + 24)};
		uint32_t plen = get_le32(p + 28);
		if (plen > len - off - REC_HDR_LEN) {
			rc = bo_errf(
			    err, -EINVAL,
			    "log: truncated at byte %zu: record %llu needs %u payload bytes", off,
			    (unsigned long long)i, plen);
			goto fail;
		}
		uint32_t crc = ~crc32c_raw(~0u, p, 32);
		crc = ~crc32c_raw(~crc, p + REC_HDR_LEN, plen);
		if (crc != get_le32(p + 32)) {
			rc =
			    bo_errf(err, -EINVAL, "log: record %llu at byte %zu: checksum mismatch",
			            (unsigned long long)i, off);
			goto fail;
		}
		const char *why = NULL;
		char mark[MARK_MAX + 1];
		switch (e.op) {
		case REC_WRITE:
		case REC_DISCARD:
		case REC_READ:
			if (e.count == 0 || e.lba >= nr || e.count > nr - e.lba)
				why = "range outside the device";
			else if (e.op == REC_WRITE && plen != (uint64_t)e.count * ss)
				why = "payload length does not match the sector count";
			else if (e.op != REC_WRITE && plen)
				why = "unexpected payload";
			else if (e.flags & ~(unsigned)BLK_FUA)
				why = "unknown flags";
			e.data = p + REC_HDR_LEN;
			break;
		case REC_FLUSH:
			if (plen || e.count || e.lba || e.flags)
				why = "a flush carries no range, flags or payload";
			break;
		case REC_MARK:
			if (plen > MARK_MAX || memchr(p + REC_HDR_LEN, 0, plen))
				why = "marker name too long or contains NUL";
			else {
				memcpy(mark, p + REC_HDR_LEN, plen);
				mark[plen] = 0;
				e.mark = mark;
			}
			break;
		default: why = "unknown operation"; break;
		}
		if (why) {
			rc = bo_errf(err, -EINVAL, "log: record %llu at byte %zu: %s",
			             (unsigned long long)i, off, why);
			goto fail;
		}
		rc = rec_log_append(l, &e);
		if (rc)
			goto fail;
		off += REC_HDR_LEN + plen;
	}
	if (off != len) {
		rc = bo_errf(err, -EINVAL,
		             "log: %zu bytes of junk after the last record at byte %zu", len - off,
		             off);
		goto fail;
	}
	*out = l;
	return 0;
fail:
	rec_log_free(l);
	return rc;
}

int rec_log_save(const struct rec_log *l, const char *path, struct bo_err *err)
{
	void *buf;
	size_t len;
	int rc = rec_log_serialize(l, &buf, &len);
	if (rc)
		return bo_errf(err, rc, "log: cannot serialise: %s", strerror(-rc));
	FILE *f = fopen(path, "wb");
	if (!f) {
		rc = -errno;
		free(buf);
		return bo_errf(err, rc, "%s: %s", path, strerror(-rc));
	}
	size_t n = fwrite(buf, 1, len, f);
	free(buf);
	if (n != len || fclose(f) != 0) {
		return bo_errf(err, -EIO, "%s: write failed", path);
	}
	return 0;
}

int rec_log_load(const char *path, struct rec_log **out, struct bo_err *err)
{
	char *buf;
	size_t len;
	int rc = bo_read_file(path, SIZE_MAX, &buf, &len, err);
	if (rc)
		return rc;
	rc = rec_log_parse(buf, len, out, err);
	free(buf);
	if (rc && err) {
		struct bo_err inner = *err;
		bo_errf(err, rc, "%.200s: %.300s", path, inner.msg);
	}
	return rc;
}
