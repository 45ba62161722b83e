// SPDX-License-Identifier: GPL-2.0-or-later
/* rec_file.c — the I/O log file format (docs/log-format.md): serialise, save, and a
 * reader that holds untrusted bytes to every rule of that page before using them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/endian.h"
#include "blackout/rec.h"
#include "blackout/util.h"

static const char LOG_MAGIC[8] = {'B', 'L', 'K', 'O', 'U', 'T', 'L', 'G'};
#define LOG_VERSION   1
#define LOG_HDR_LEN   44
#define REC_MAGIC     0x31434552u /* "REC1" */
#define REC_HDR_LEN   36
#define LOG_F_DEVICES 1u /* header flag: a device table follows the header */
/* the device table: u32 count, u32 zero, count x u64 sizes, u32 CRC32C of the rest */
#define DEVTAB_LEN(n) (8 + 8 * (size_t)(n) + 4)
/* Linux errno values stop at 4095 (MAX_ERRNO); a result below that is no errno. */
#define RESULT_MIN (-4095)

static size_t payload_len(uint32_t ss, const struct rec_entry *e)
{
	if (e->op == REC_WRITE)
		return (size_t)e->count * ss;
	if (e->op == REC_MARK)
		return strlen(e->mark);
	return 0;
}

static uint32_t record_crc(const unsigned char *p, size_t plen)
{
	uint32_t crc = ~crc32c_raw(~0u, p, 32);
	return ~crc32c_raw(~crc, p + REC_HDR_LEN, plen);
}

int rec_log_serialize(const struct rec_log *l, void **bufp, size_t *lenp)
{
	uint32_t ss = rec_log_sector_size(l);
	unsigned nd = rec_log_ndev(l);
	size_t hlen = LOG_HDR_LEN + (nd > 1 ? DEVTAB_LEN(nd) : 0);
	size_t n = rec_log_len(l), total = hlen;
	for (size_t i = 0; i < n; i++) {
		const struct rec_entry *e = rec_log_get(l, i);
		if (e->op == REC_MARK && strlen(e->mark) > REC_MARK_MAX)
			return -ENAMETOOLONG;
		total += REC_HDR_LEN + payload_len(ss, e);
	}
	unsigned char *b = malloc(total), *p = b;
	if (!b)
		return -ENOMEM;
	memcpy(p, LOG_MAGIC, 8);
	put_le32(p + 8, LOG_VERSION);
	put_le32(p + 12, (uint32_t)hlen);
	put_le32(p + 16, ss);
	put_le32(p + 20, nd > 1 ? LOG_F_DEVICES : 0);
	put_le64(p + 24, rec_log_nr_sectors(l));
	put_le64(p + 32, n);
	put_le32(p + 40, crc32c(p, 40));
	p += LOG_HDR_LEN;
	if (nd > 1) {
		put_le32(p, nd);
		put_le32(p + 4, 0);
		for (unsigned d = 0; d < nd; d++)
			put_le64(p + 8 + 8 * d, rec_log_dev_sectors(l, d));
		put_le32(p + 8 + 8 * nd, crc32c(p, 8 + 8 * nd));
		p += DEVTAB_LEN(nd);
	}
	for (size_t i = 0; i < n; i++) {
		const struct rec_entry *e = rec_log_get(l, i);
		size_t plen = payload_len(ss, e);
		memset(p, 0, REC_HDR_LEN);
		put_le32(p, REC_MAGIC);
		p[4] = (unsigned char)e->op;
		p[5] = (unsigned char)e->dev;
		put_le32(p + 8, e->flags);
		put_le32(p + 12, (uint32_t)e->result);
		put_le64(p + 16, e->lba);
		put_le32(p + 24, e->count);
		put_le32(p + 28, (uint32_t)plen);
		if (plen)
			memcpy(p + REC_HDR_LEN,
			       e->op == REC_WRITE ? e->data : (const void *)e->mark, plen);
		put_le32(p + 32, record_crc(p, plen));
		p += REC_HDR_LEN + plen;
	}
	*bufp = b;
	*lenp = total;
	return 0;
}

/* The header's fields, in file order. */
static int check_header(const unsigned char *b, size_t len, struct bo_err *err)
{
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
	uint32_t flags = get_le32(b + 20);
	if (flags & ~LOG_F_DEVICES)
		return bo_errf(err, -EINVAL,
		               "log: header flags 0x%x at byte 20 (only bit 0, a device table, is "
		               "defined)",
		               flags);
	if (!(flags & LOG_F_DEVICES) && get_le32(b + 12) != LOG_HDR_LEN)
		return bo_errf(err, -EINVAL, "log: header length %u at byte 12 (expected %d)",
		               get_le32(b + 12), LOG_HDR_LEN);
	uint32_t ss = get_le32(b + 16);
	if (ss != 512 && ss != 4096)
		return bo_errf(err, -EINVAL, "log: sector size %u at byte 16 (512 or 4096)", ss);
	uint64_t nr = get_le64(b + 24);
	if (nr == 0 || nr > (UINT64_MAX / 4096))
		return bo_errf(err, -EINVAL, "log: device size %llu sectors at byte 24",
		               (unsigned long long)nr);
	return 0;
}

/* The device table of a several-device log (after check_header): sizes[0..*n). */
static int check_devtab(const unsigned char *b, size_t len, unsigned *n, uint64_t *sizes,
                        struct bo_err *err)
{
	if (len < LOG_HDR_LEN + 8)
		return bo_errf(err, -EINVAL, "log: truncated at byte %d: the device table",
		               LOG_HDR_LEN);
	const unsigned char *t = b + LOG_HDR_LEN;
	uint32_t nd = get_le32(t);
	if (nd < 2 || nd > REC_LOG_DEVICES_MAX)
		return bo_errf(err, -EINVAL, "log: device count %u at byte %d (2 to %d)", nd,
		               LOG_HDR_LEN, REC_LOG_DEVICES_MAX);
	if (get_le32(b + 12) != LOG_HDR_LEN + DEVTAB_LEN(nd))
		return bo_errf(err, -EINVAL,
		               "log: header length %u at byte 12 (expected %zu for %u devices)",
		               get_le32(b + 12), LOG_HDR_LEN + DEVTAB_LEN(nd), nd);
	if (len < LOG_HDR_LEN + DEVTAB_LEN(nd))
		return bo_errf(err, -EINVAL, "log: truncated at byte %d: the device table",
		               LOG_HDR_LEN);
	if (get_le32(t + 8 + 8 * nd) != crc32c(t, 8 + 8 * (size_t)nd))
		return bo_errf(err, -EINVAL, "log: device table checksum mismatch at byte %zu",
		               (size_t)LOG_HDR_LEN + 8 + 8 * nd);
	if (get_le32(t + 4) != 0)
		return bo_errf(err, -EINVAL, "log: device table byte %d: padding not zero",
		               LOG_HDR_LEN + 4);
	uint64_t sum = 0, nr = get_le64(b + 24);
	for (uint32_t d = 0; d < nd; d++) {
		sizes[d] = get_le64(t + 8 + 8 * d);
		if (sizes[d] == 0 || sizes[d] > nr - sum)
			return bo_errf(
			    err, -EINVAL,
			    "log: device %u's size %llu sectors at byte %u: zero, or past "
			    "the %llu sectors at byte 24",
			    d, (unsigned long long)sizes[d], LOG_HDR_LEN + 8 + 8 * d,
			    (unsigned long long)nr);
		sum += sizes[d];
	}
	if (sum != nr)
		return bo_errf(err, -EINVAL,
		               "log: the devices' sizes add up to %llu sectors, byte 24 says %llu",
		               (unsigned long long)sum, (unsigned long long)nr);
	*n = nd;
	return 0;
}

/* What is wrong with one record's fields, or NULL; *field names the field. The
 * record's bytes (header and payload) are known to lie inside the buffer. */
static const char *record_fault(const unsigned char *p, const struct rec_entry *e, uint32_t plen,
                                const struct rec_log *l, const char **field)
{
	uint32_t ss = rec_log_sector_size(l);
	*field = rec_log_ndev(l) > 1 ? "device (byte 5)" : "padding (bytes 5-7)";
	if (p[5] >= rec_log_ndev(l))
		return rec_log_ndev(l) > 1 ? "not one of the log's devices" : "not zero";
	*field = "padding (bytes 6-7)";
	if (p[6] || p[7])
		return "not zero";
	uint64_t nr = rec_log_dev_sectors(l, p[5]);
	*field = "result";
	if (e->result > 0)
		return "positive (a result is 0 or a negative errno)";
	if (e->result < RESULT_MIN)
		return "below -4095 (not a negative errno)";
	switch (e->op) {
	case REC_WRITE:
	case REC_DISCARD:
	case REC_READ:
		*field = "range";
		if (e->count == 0 || e->lba >= nr || e->count > nr - e->lba)
			return "outside the device";
		*field = "flags";
		if (e->flags & ~(unsigned)BLK_FUA)
			return "unknown bits (only bit 0, FUA, is defined)";
		if (e->op != REC_WRITE && e->flags)
			return e->op == REC_DISCARD ? "FUA on a discard (only a write carries FUA)"
			                            : "FUA on a read (only a write carries FUA)";
		*field = "payload length";
		if (e->op == REC_WRITE && plen != (uint64_t)e->count * ss)
			return "does not match the sector count";
		if (e->op != REC_WRITE && plen)
			return "not zero (only a write carries data)";
		return NULL;
	case REC_FLUSH:
		*field = "range, flags or payload length";
		if (plen || e->count || e->lba || e->flags)
			return "not zero (a flush carries none)";
		return NULL;
	case REC_MARK:
		*field = "range or flags";
		if (e->count || e->lba || e->flags)
			return "not zero (a mark carries none)";
		*field = "result";
		if (e->result)
			return "not zero (a mark reaches no device)";
		*field = "mark name";
		if (plen == 0)
			return "empty (1 to 255 bytes)";
		if (plen > REC_MARK_MAX)
			return "longer than 255 bytes";
		if (memchr(p + REC_HDR_LEN, 0, plen))
			return "contains a NUL byte";
		return NULL;
	}
	*field = "operation";
	return "unknown";
}

/* Parses the record at b + *off into l (copied); *off moves past it. */
static int parse_record(struct rec_log *l, const unsigned char *b, size_t len, size_t *off,
                        uint64_t i, uint64_t count, struct bo_err *err)
{
	unsigned long long ri = (unsigned long long)i;
	size_t at = *off;
	if (len - at < REC_HDR_LEN)
		return bo_errf(err, -EINVAL,
		               "log: truncated at byte %zu: record %llu of %llu is incomplete", at,
		               ri, (unsigned long long)count);
	const unsigned char *p = b + at;
	if (get_le32(p) != REC_MAGIC)
		return bo_errf(err, -EINVAL, "log: record %llu at byte %zu: bad magic", ri, at);
	uint32_t plen = get_le32(p + 28);
	if (plen > len - at - REC_HDR_LEN)
		return bo_errf(err, -EINVAL,
		               "log: truncated at byte %zu: record %llu needs %u payload bytes", at,
		               ri, plen);
	if (record_crc(p, plen) != get_le32(p + 32))
		return bo_errf(err, -EINVAL, "log: record %llu at byte %zu: checksum mismatch", ri,
		               at);
	struct rec_entry e = {.op = p[4],
	                      .dev = p[5],
	                      .flags = get_le32(p + 8),
	                      .result = (int)get_le32(p + 12),
	                      .lba = get_le64(p + 16),
	                      .count = get_le32(p + 24)};
	if (e.op < REC_WRITE || e.op > REC_MARK)
		return bo_errf(err, -EINVAL,
		               "log: record %llu at byte %zu: operation code %u unknown (1 to 5)",
		               ri, at, p[4]);
	const char *field = NULL;
	const char *why = record_fault(p, &e, plen, l, &field);
	if (why)
		return bo_errf(err, -EINVAL, "log: record %llu (%s) at byte %zu: %s %s", ri,
		               rec_op_name(e.op), at, field, why);
	char mark[REC_MARK_MAX + 1];
	if (e.op == REC_WRITE)
		e.data = p + REC_HDR_LEN;
	if (e.op == REC_MARK) {
		memcpy(mark, p + REC_HDR_LEN, plen);
		mark[plen] = 0;
		e.mark = mark;
	}
	int rc = rec_log_append(l, &e);
	if (rc)
		return bo_errf(err, rc, "log: record %llu at byte %zu: %s", ri, at, strerror(-rc));
	*off = at + REC_HDR_LEN + plen;
	return 0;
}

int rec_log_parse(const void *buf, size_t len, struct rec_log **out, struct bo_err *err)
{
	const unsigned char *b = buf;
	*out = NULL;
	int rc = check_header(b, len, err);
	if (rc)
		return rc;
	struct rec_log *l;
	unsigned nd = 1;
	uint64_t sizes[REC_LOG_DEVICES_MAX];
	if ((get_le32(b + 20) & LOG_F_DEVICES) && (rc = check_devtab(b, len, &nd, sizes, err)))
		return rc;
	rc = nd > 1 ? rec_log_new_devices(get_le32(b + 16), nd, sizes, &l)
	            : rec_log_new(get_le32(b + 16), get_le64(b + 24), &l);
	if (rc)
		return rc;
	uint64_t count = get_le64(b + 32);
	size_t off = LOG_HDR_LEN + (nd > 1 ? DEVTAB_LEN(nd) : 0);
	for (uint64_t i = 0; i < count && rc == 0; i++)
		rc = parse_record(l, b, len, &off, i, count, err);
	if (rc == 0 && off != len)
		rc = bo_errf(err, -EINVAL,
		             "log: %zu bytes of junk after the last record at byte %zu", len - off,
		             off);
	if (rc) {
		rec_log_free(l);
		return rc;
	}
	*out = l;
	return 0;
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

/* The whole of a regular file of at most REC_LOG_FILE_MAX bytes. Opened without
 * blocking, so a FIFO with no writer is refused instead of waited on. */
static int read_log_file(const char *path, unsigned char **bufp, size_t *lenp, struct bo_err *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return bo_errf(err, -errno, "%s: %s", path, strerror(errno));
	struct stat st;
	int rc = 0;
	unsigned char *b = NULL;
	if (fstat(fd, &st) < 0)
		rc = bo_errf(err, -errno, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = bo_errf(err, -EINVAL, "%s: not a regular file (an I/O log is a file)", path);
	else if ((unsigned long long)st.st_size > REC_LOG_FILE_MAX)
		rc =
		    bo_errf(err, -EFBIG, "%s: %lld bytes, larger than the %llu-byte limit of a log",
		            path, (long long)st.st_size, (unsigned long long)REC_LOG_FILE_MAX);
	else if (!(b = malloc(st.st_size ? (size_t)st.st_size : 1)))
		rc = bo_errf(err, -ENOMEM, "%s: out of memory", path);
	size_t n = 0;
	while (rc == 0 && n < (size_t)st.st_size) {
		ssize_t r = read(fd, b + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rc = bo_errf(err, -errno, "%s: %s", path, strerror(errno));
		else if (r == 0)
			rc = bo_errf(err, -EIO, "%s: shrank while being read", path);
		else
			n += (size_t)r;
	}
	close(fd);
	if (rc) {
		free(b);
		return rc;
	}
	*bufp = b;
	*lenp = n;
	return 0;
}

int rec_log_load(const char *path, struct rec_log **out, struct bo_err *err)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	*out = NULL;
	int rc = read_log_file(path, &buf, &len, err);
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
