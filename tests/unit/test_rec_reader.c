// SPDX-License-Identifier: GPL-2.0-or-later
/* test_rec_reader.c — the log reader holds files to docs/log-format.md: each rule of
 * the format has a hand-built file that breaks it and must be refused with the
 * record and field named; the loader refuses devices, FIFOs and huge files at once. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/endian.h"
#include "blackout/rec.h"
#include "blackout/util.h"
#include "tap.h"

#define NSECT 64

/* A log file built by hand, field by field, as the format page describes it. */
struct file {
	unsigned char b[8192];
	size_t len;
	uint64_t nrec;
};

static void header(struct file *f, uint32_t flags)
{
	memcpy(f->b, "BLKOUTLG", 8);
	put_le32(f->b + 8, 1);
	put_le32(f->b + 12, 44);
	put_le32(f->b + 16, 512);
	put_le32(f->b + 20, flags);
	put_le64(f->b + 24, NSECT);
	put_le64(f->b + 32, f->nrec);
	put_le32(f->b + 40, crc32c(f->b, 40));
	if (f->len < 44)
		f->len = 44;
}

struct rec {
	unsigned op, flags;
	int result;
	uint64_t lba;
	uint32_t count;
	const void *payload;
	uint32_t plen;
	unsigned char pad; /* value of byte 6 */
};

static void record(struct file *f, const struct rec *r)
{
	unsigned char *p = f->b + f->len;
	memset(p, 0, 36);
	put_le32(p, 0x31434552u);
	p[4] = (unsigned char)r->op;
	p[6] = r->pad;
	put_le32(p + 8, r->flags);
	put_le32(p + 12, (uint32_t)r->result);
	put_le64(p + 16, r->lba);
	put_le32(p + 24, r->count);
	put_le32(p + 28, r->plen);
	if (r->plen)
		memcpy(p + 36, r->payload, r->plen);
	uint32_t crc = ~crc32c_raw(~0u, p, 32);
	put_le32(p + 32, ~crc32c_raw(~crc, p + 36, r->plen));
	f->len += 36 + r->plen;
	f->nrec++;
	header(f, 0);
}

static unsigned char data[1024];

/* A good log: a write, a mark, a flush, then the record under test. */
static int parse_with(const struct rec *last, struct bo_err *err)
{
	static struct file f;
	memset(&f, 0, sizeof f);
	header(&f, 0);
	record(&f,
	       &(struct rec){.op = REC_WRITE, .lba = 3, .count = 2, .payload = data, .plen = 1024});
	record(&f, &(struct rec){.op = REC_MARK, .payload = "fsync a", .plen = 7});
	record(&f, &(struct rec){.op = REC_FLUSH});
	if (last)
		record(&f, last);
	struct rec_log *l = NULL;
	memset(err, 0, sizeof *err);
	int rc = rec_log_parse(f.b, f.len, &l, err);
	rec_log_free(l);
	return rc;
}

/* The last record is refused, and the message names record 3 and the field. */
static void refused(const struct rec *r, const char *field, const char *what)
{
	struct bo_err err;
	int rc = parse_with(r, &err);
	ok(rc == -EINVAL && strstr(err.msg, "record 3") && strstr(err.msg, field),
	   "%s: refused naming record 3 and '%s' (%s)", what, field, err.msg);
}

static void accepted(const struct rec *r, const char *what)
{
	struct bo_err err;
	is_int(parse_with(r, &err), 0, "%s: accepted %s", what, err.msg);
}

static void format_rules(void)
{
	struct bo_err err;
	is_int(parse_with(NULL, &err), 0, "a hand-built log of a write, a mark, a flush parses");

	static struct file f;
	header(&f, 0x4);
	int rc = rec_log_parse(f.b, f.len, &(struct rec_log *){NULL}, &err);
	ok(rc == -EINVAL && strstr(err.msg, "flags") && strstr(err.msg, "byte 20"),
	   "header flags not 0: refused naming the field and byte (%s)", err.msg);

	refused(&(struct rec){.op = REC_FLUSH, .pad = 1}, "padding", "non-zero padding");
	refused(&(struct rec){.op = REC_DISCARD, .flags = BLK_FUA, .lba = 1, .count = 1},
	        "FUA on a discard", "FUA on a discard");
	refused(&(struct rec){.op = REC_READ, .flags = BLK_FUA, .lba = 1, .count = 1},
	        "FUA on a read", "FUA on a read");
	refused(
	    &(struct rec){
	        .op = REC_WRITE, .flags = 2, .lba = 1, .count = 1, .payload = data, .plen = 512},
	    "flags", "unknown write flag");
	refused(&(struct rec){.op = REC_MARK}, "mark name", "empty mark");
	refused(&(struct rec){.op = REC_MARK, .payload = "a\0b", .plen = 3}, "NUL",
	        "NUL in a mark");
	refused(&(struct rec){.op = REC_MARK, .lba = 5, .payload = "m", .plen = 1}, "range",
	        "a mark with a sector");
	refused(&(struct rec){.op = REC_MARK, .result = -5, .payload = "m", .plen = 1}, "result",
	        "a mark with a result");
	refused(&(struct rec){.op = REC_FLUSH, .result = 5}, "result", "positive result");
	refused(&(struct rec){.op = REC_WRITE,
	                      .result = INT_MIN,
	                      .lba = 1,
	                      .count = 1,
	                      .payload = data,
	                      .plen = 512},
	        "result", "result -2^31");
	refused(&(struct rec){.op = REC_FLUSH, .lba = 2}, "carries none", "a flush with a sector");
	refused(&(struct rec){.op = REC_DISCARD, .lba = 60, .count = 5}, "range",
	        "a discard past the end");
	refused(&(struct rec){.op = REC_WRITE, .lba = 1, .count = 2, .payload = data, .plen = 512},
	        "payload length", "a write short of its data");
	refused(&(struct rec){.op = 9}, "operation code 9", "unknown operation");

	accepted(&(struct rec){.op = REC_WRITE,
	                       .flags = BLK_FUA,
	                       .result = -EIO,
	                       .lba = 63,
	                       .count = 1,
	                       .payload = data,
	                       .plen = 512},
	         "a FUA write that failed with EIO");
	accepted(&(struct rec){.op = REC_FLUSH, .result = -4095}, "a flush with result -4095");
	accepted(&(struct rec){.op = REC_MARK, .payload = "\x1b[2J", .plen = 4},
	         "a mark with control bytes (they are escaped when printed)");
}

static void append_rules(void)
{
	struct rec_log *l;
	rec_log_new(512, NSECT, &l);
	is_int(rec_log_mark(l, ""), -EINVAL, "an empty mark cannot be appended");
	char big[REC_MARK_MAX + 2];
	memset(big, 'm', sizeof big - 1);
	big[sizeof big - 1] = 0;
	is_int(rec_log_mark(l, big), -ENAMETOOLONG, "a 256-byte mark cannot be appended");
	big[REC_MARK_MAX] = 0;
	is_int(rec_log_mark(l, big), 0, "a 255-byte mark can");
	is_int(rec_log_len(l), 1, "only that one is in the log");
	rec_log_free(l);
}

static void load_refuses(const char *path, int want, const char *needle, const char *what)
{
	struct rec_log *l = NULL;
	struct bo_err err = {{0}};
	alarm(10); /* a reader that blocks or reads forever fails the suite, never hangs it */
	int rc = rec_log_load(path, &l, &err);
	alarm(0);
	ok(rc == want && l == NULL && strstr(err.msg, needle), "%s: refused at once (%s)", what,
	   err.msg);
	rec_log_free(l);
}

static void loader_rules(void)
{
	load_refuses("/dev/zero", -EINVAL, "not a regular file", "/dev/zero");
	load_refuses("/tmp", -EINVAL, "not a regular file", "a directory");
	char dir[] = "/tmp/test_rec_reader.XXXXXX";
	tap_require(mkdtemp(dir) != NULL, "a temporary directory");
	char fifo[64], big[64];
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	snprintf(big, sizeof big, "%s/big", dir);
	tap_require(mkfifo(fifo, 0600) == 0, "a FIFO with no writer");
	load_refuses(fifo, -EINVAL, "not a regular file", "a FIFO with no writer");
	int fd = open(big, O_CREAT | O_WRONLY, 0600);
	tap_require(fd >= 0 && ftruncate(fd, (off_t)REC_LOG_FILE_MAX + 1) == 0,
	            "a sparse file one byte over the limit");
	close(fd);
	load_refuses(big, -EFBIG, "limit", "a file over 1 GiB");
	unlink(fifo);
	unlink(big);
	rmdir(dir);
}

static void escaping(void)
{
	char out[64];
	const char in[] = "a\x1b[31m\n\\\x80z";
	size_t n = bo_escape(out, sizeof out, in, sizeof in - 1);
	is_str(out, "a\\x1b[31m\\n\\\\\\x80z", "control, backslash and high bytes are escaped");
	is_int(n, strlen(out), "the returned length is the rendering's");
	n = bo_escape(out, 5, in, sizeof in - 1);
	ok(strlen(out) == 4 && n > 4, "a short buffer is cut and NUL-terminated (%s)", out);
}

int main(void)
{
	memset(data, 0xab, sizeof data);
	format_rules();
	append_rules();
	loader_rules();
	escaping();
	return tap_done();
}
