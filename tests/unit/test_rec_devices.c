// SPDX-License-Identifier: GPL-2.0-or-later
/* test_rec_devices.c — I/O logs of several devices (docs/log-format.md, "Several
 * devices"): a hand-built file is read and written back byte for byte; each rule of
 * the device table and of a record's device byte has a file that breaks it and is
 * refused with the field named; one-device logs are unchanged; recorders of two
 * members share one order; replay sends a member's flush to that member alone. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/rec.h"
#include "blackout/util.h"
#include "tap.h"

struct file {
	unsigned char b[4096];
	size_t len, hdr;
	uint64_t nrec;
};

/* Header and device table of n devices of sizes sz[] (total: the header's size). */
static void header(struct file *f, unsigned n, const uint64_t *sz, uint64_t total)
{
	memcpy(f->b, "BLKOUTLG", 8);
	put_le32(f->b + 8, 1);
	put_le32(f->b + 12, (uint32_t)(44 + 8 + 8 * n + 4));
	put_le32(f->b + 16, 512);
	put_le32(f->b + 20, 1);
	put_le64(f->b + 24, total);
	put_le64(f->b + 32, f->nrec);
	put_le32(f->b + 40, crc32c(f->b, 40));
	unsigned char *t = f->b + 44;
	put_le32(t, n);
	put_le32(t + 4, 0);
	for (unsigned i = 0; i < n; i++)
		put_le64(t + 8 + 8 * i, sz[i]);
	put_le32(t + 8 + 8 * n, crc32c(t, 8 + 8 * n));
	f->hdr = 44 + 8 + 8 * (size_t)n + 4;
	if (f->len < f->hdr)
		f->len = f->hdr;
}

static unsigned char data[512];

static void record(struct file *f, unsigned op, unsigned dev, uint64_t lba, uint32_t count)
{
	unsigned char *p = f->b + f->len;
	uint32_t plen = op == REC_WRITE ? count * 512 : 0;
	memset(p, 0, 36);
	put_le32(p, 0x31434552u);
	p[4] = (unsigned char)op;
	p[5] = (unsigned char)dev;
	put_le64(p + 16, lba);
	put_le32(p + 24, count);
	put_le32(p + 28, plen);
	if (plen)
		memcpy(p + 36, data, plen);
	uint32_t crc = ~crc32c_raw(~0u, p, 32);
	put_le32(p + 32, ~crc32c_raw(~crc, p + 36, plen));
	f->len += 36 + plen;
	f->nrec++;
}

static const uint64_t SZ[2] = {16, 48};

/* A good two-device file: a write to each, a flush of device 1. */
static void good(struct file *f)
{
	memset(f, 0, sizeof *f);
	header(f, 2, SZ, 64);
	record(f, REC_WRITE, 0, 15, 1);
	record(f, REC_WRITE, 1, 47, 1);
	record(f, REC_FLUSH, 1, 0, 0);
	header(f, 2, SZ, 64); /* the record count */
}

static void refused(const struct file *f, const char *needle, const char *what)
{
	struct rec_log *l = NULL;
	struct bo_err err = {{0}};
	int rc = rec_log_parse(f->b, f->len, &l, &err);
	ok(rc == -EINVAL && !l && strstr(err.msg, needle), "%s: %s", what, err.msg);
	rec_log_free(l);
}

static void file_rules(void)
{
	struct file f;
	good(&f);
	struct rec_log *l = NULL;
	struct bo_err err = {{0}};
	ok(rec_log_parse(f.b, f.len, &l, &err) == 0 && rec_log_ndev(l) == 2 &&
	       rec_log_dev_sectors(l, 0) == 16 && rec_log_dev_sectors(l, 1) == 48 &&
	       rec_log_dev_start(l, 1) == 16 && rec_log_nr_sectors(l) == 64,
	   "a two-device log parses with its table %s", err.msg);
	const struct rec_entry *e = l ? rec_log_get(l, 1) : NULL;
	ok(e && e->dev == 1 && e->lba == 47 && rec_log_get(l, 2)->dev == 1,
	   "each record keeps its device and the device's own LBA");
	void *buf = NULL;
	size_t len = 0;
	ok(l && rec_log_serialize(l, &buf, &len) == 0 && len == f.len && memcmp(buf, f.b, len) == 0,
	   "and is written back byte for byte (%zu bytes)", f.len);
	free(buf);
	ok(l && rec_log_bytes(l) == f.len, "rec_log_bytes counts the table");
	rec_log_free(l);

	good(&f);
	unsigned char *p2 = f.b + f.hdr + 36 + 512; /* the second record: device 2 of 2 */
	p2[5] = 2;
	uint32_t c2 = ~crc32c_raw(~0u, p2, 32);
	put_le32(p2 + 32, ~crc32c_raw(~c2, p2 + 36, 512));
	refused(&f, "record 1 (write) at byte 620: device (byte 5) not one of the log's devices",
	        "a device past the table");
	{ /* device 0's write at LBA 15..16: inside the 64, outside device 0's 16 */
		struct file g;
		memset(&g, 0, sizeof g);
		header(&g, 2, SZ, 64);
		record(&g, REC_WRITE, 0, 16, 1);
		header(&g, 2, SZ, 64);
		refused(&g, "range outside the device", "a range past its own device");
	}
	good(&f);
	header(&f, 1, SZ, 16);
	refused(&f, "device count 1", "a table of one device");
	good(&f);
	header(&f, 65, (uint64_t[65]){0}, 64);
	refused(&f, "device count 65", "a table of 65 devices");
	good(&f);
	header(&f, 2, (uint64_t[]){16, 40}, 64);
	refused(&f, "add up to 56 sectors", "sizes that do not add up");
	good(&f);
	header(&f, 2, (uint64_t[]){0, 64}, 64);
	refused(&f, "device 0's size 0", "a device of no sectors");
	good(&f);
	f.b[44 + 8] ^= 1;
	refused(&f, "device table checksum", "a corrupted table");
	good(&f);
	put_le32(f.b + 48, 7);
	put_le32(f.b + 44 + 8 + 16, crc32c(f.b + 44, 8 + 16));
	refused(&f, "padding not zero", "table padding");
	good(&f);
	put_le32(f.b + 12, 44);
	put_le32(f.b + 40, crc32c(f.b, 40));
	refused(&f, "header length 44", "a header length without the table");
	good(&f);
	put_le32(f.b + 20, 3);
	put_le32(f.b + 40, crc32c(f.b, 40));
	refused(&f, "header flags 0x3", "an unknown header flag");
	good(&f);
	refused(&(struct file){.len = 50, .b = {0}}, "bad magic", "junk");
	struct file t = f;
	t.len = 50;
	refused(&t, "truncated at byte 44", "a file ending inside the table");

	/* a one-device log: byte 5 must stay zero, so old files read as before */
	struct rec_log *one;
	rec_log_new(512, 64, &one);
	rec_log_append(one,
	               &(struct rec_entry){.op = REC_WRITE, .lba = 1, .count = 1, .data = data});
	void *ob;
	size_t olen;
	rec_log_serialize(one, &ob, &olen);
	ok(olen == 44 + 36 + 512 && get_le32((unsigned char *)ob + 20) == 0 &&
	       get_le32((unsigned char *)ob + 12) == 44,
	   "a one-device log keeps the 44-byte header and flags 0");
	unsigned char *p = (unsigned char *)ob + 44;
	p[5] = 1;
	uint32_t crc = ~crc32c_raw(~0u, p, 32);
	put_le32(p + 32, ~crc32c_raw(~crc, p + 36, 512));
	struct file of = {.len = olen};
	memcpy(of.b, ob, olen);
	refused(&of, "padding (bytes 5-7) not zero", "a device byte in a one-device log");
	free(ob);
	ok(rec_log_append(one, &(struct rec_entry){.op = REC_FLUSH, .dev = 1}) == -EINVAL,
	   "appending an entry of device 1 to a one-device log is refused");
	rec_log_free(one);
}

/* Two recorders over a concat's members, one log; replay keeps a flush per member. */
static void recorders(void)
{
	struct bo_err err = {{0}};
	struct bdev *top, *live;
	const char *spec = "concat > [cache(size=64k,flush=honor) > mem(size=8k) ; "
	                   "cache(size=64k,flush=honor) > mem(size=24k)]";
	tap_require(dev_stack_open_text(spec, NULL, &top, &err) == 0, "the concat %s", err.msg);
	uint64_t sz[2] = {16, 48};
	struct rec_log *l;
	struct bdev *r0, *r1, *bad;
	tap_require(rec_log_new_devices(512, 2, sz, &l) == 0, "a two-device log");
	ok(rec_open_dev(blk_lower(top, 0), l, 1, 0, &bad) == -EINVAL &&
	       rec_open(blk_lower(top, 0), l, 0, &bad) == -EINVAL,
	   "a recorder of the wrong member, or of no member, is refused");
	tap_require(rec_open_dev(blk_lower(top, 0), l, 0, 0, &r0) == 0 &&
	                rec_open_dev(blk_lower(top, 1), l, 1, 0, &r1) == 0,
	            "a recorder per member");
	unsigned char a[512], b[512];
	memset(a, 0xaa, sizeof a);
	memset(b, 0xbb, sizeof b);
	blk_write(r1, 0, 1, b, 0);
	blk_write(r0, 3, 1, a, 0);
	blk_flush(r0);
	ok(rec_log_len(l) == 3 && rec_log_get(l, 0)->dev == 1 && rec_log_get(l, 1)->dev == 0 &&
	       rec_log_get(l, 2)->op == REC_FLUSH && rec_log_get(l, 2)->dev == 0,
	   "the members' requests in the one order they came, each with its device");
	blk_close(r0);
	blk_close(r1);

	/* replayed onto a fresh concat, then the power cut with nothing volatile kept */
	tap_require(dev_stack_open_text(spec, NULL, &live, &err) == 0, "a fresh concat");
	ok(rec_replay(l, rec_log_len(l), live, &err) == 0, "the log replays onto the concat %s",
	   err.msg);
	blk_power_cut(live, &blk_chooser_zero, NULL);
	blk_power_restore(live);
	unsigned char got0[512], got1[512];
	blk_read(live, 3, 1, got0);
	blk_read(live, 16, 1, got1);
	ok(memcmp(got0, a, 512) == 0, "member 0's write, flushed on member 0, survived the cut");
	ok(got1[0] == 0, "member 1's write, never flushed on member 1, did not");
	struct bdev *m;
	ok(dev_stack_open_text("mem(size=32k)", NULL, &m, &err) == 0 &&
	       rec_replay(l, rec_log_len(l), m, &err) == -EINVAL &&
	       strstr(err.msg, "not the concat of the log's 2 devices"),
	   "replay onto a device that is not the members' concat is refused: %s", err.msg);
	blk_close(m);
	blk_close(live);
	blk_close(top);
	rec_log_free(l);
}

int main(void)
{
	file_rules();
	recorders();
	return tap_done();
}
