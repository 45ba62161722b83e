// SPDX-License-Identifier: GPL-2.0-or-later
/* test_blk_property.c — the media agree: the same seeded random sequence of reads,
 * writes (with and without FUA, of data and of zeroes), flushes and discards on mem, file
 * and cow-over-mem
 * gives identical reads throughout; blk_reads_zero never says "zeroes" of a range
 * that reads otherwise, on an overlay and on stacks over overlays; and the recorder: every prefix of a recorded
 * sequence replays to the state the same prefix gave directly, in memory and
 * through the log file format. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/blk.h"
#include "blackout/dev.h"
#include "blackout/rec.h"
#include "blackout/util.h"
#include "tap.h"

#define NSECT 512 /* small, so operations overlap a lot */
#define MAXIO 16

static void fill(unsigned char *buf, size_t len, uint64_t seed)
{
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = bo_rng_next(&r);
		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
}

static void agree(uint32_t ss, uint64_t seed, int nops)
{
	char path[] = "/tmp/blackout-prop-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	struct bdev *dev[3], *cbase;
	struct bo_err err = {{0}};
	blk_mem_open(ss, NSECT, &dev[0]);
	blk_file_open(path, ss, (uint64_t)NSECT * ss, BLK_FILE_CREATE, &dev[1], &err);
	blk_mem_open(ss, NSECT, &cbase);
	/* a base with content, so the overlay has to merge base and changes */
	unsigned char *buf = malloc((size_t)MAXIO * ss), *got = malloc((size_t)MAXIO * ss);
	for (uint64_t l = 0; l < NSECT; l += MAXIO) {
		fill(buf, (size_t)MAXIO * ss, seed ^ l);
		blk_write(cbase, l, MAXIO, buf, 0);
		blk_write(dev[0], l, MAXIO, buf, 0);
		blk_write(dev[1], l, MAXIO, buf, 0);
	}
	cbase->read_only = true;
	blk_cow_open(cbase, &dev[2]);

	struct bo_rng r;
	bo_rng_seed(&r, seed);
	int mismatches = 0, errors = 0;
	for (int i = 0; i < nops; i++) {
		uint32_t count = 1 + (uint32_t)bo_rng_below(&r, MAXIO);
		uint64_t lba = bo_rng_below(&r, NSECT - count + 1);
		unsigned kind = (unsigned)bo_rng_below(&r, 11);
		if (kind < 4 || kind == 10) {
			/* kind 10 writes zeroes (the overlay holds them as one shared sector) */
			if (kind == 10)
				memset(buf, 0, (size_t)count * ss);
			else
				fill(buf, (size_t)count * ss, seed * 1000003 + (uint64_t)i);
			unsigned fl = kind == 0 ? BLK_FUA : 0;
			for (int d = 0; d < 3; d++)
				errors += blk_write(dev[d], lba, count, buf, fl) != 0;
		} else if (kind < 8) {
			unsigned char *ref = malloc((size_t)count * ss);
			for (int d = 0; d < 3; d++) {
				errors += blk_read(dev[d], lba, count, d ? got : ref) != 0;
				if (d && memcmp(ref, got, (size_t)count * ss) != 0)
					mismatches++;
			}
			free(ref);
		} else if (kind == 8) {
			for (int d = 0; d < 3; d++)
				errors += blk_flush(dev[d]) != 0;
		} else {
			for (int d = 0; d < 3; d++)
				errors += blk_discard(dev[d], lba, count) != 0;
		}
	}
	is_int(errors, 0, "seed %llu, %u-byte sectors: %d operations, no errors",
	       (unsigned long long)seed, ss, nops);
	is_int(mismatches, 0, "seed %llu, %u-byte sectors: mem, file and cow read alike",
	       (unsigned long long)seed, ss);
	for (int d = 0; d < 3; d++)
		blk_close(dev[d]);
	blk_close(cbase);
	unlink(path);
	free(buf);
	free(got);
}

/* blk_reads_zero is only ever sound: over a random sequence of writes of data and of
 * zeroes, discards and flushes, every range it calls zero reads back as zeroes (and
 * it does call some: a hint never given would pass too). The stacks are the crash
 * explorer's, each medium under an overlay. */
static void zero_hint(const char *spec, uint64_t seed, int nops)
{
	struct dev_cow_leaves leaves = {0};
	struct dev_open_opts oo = {.wrap_leaf = dev_wrap_cow, .ctx = &leaves};
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text(spec, &oo, &d, &err) == 0, "%s opens%s%s", spec,
	            err.msg[0] ? ": " : "", err.msg);
	unsigned char *buf = malloc((size_t)MAXIO * d->sector_size);
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	int wrong = 0, said = 0, asked = 0;
	uint64_t n = d->nr_sectors;
	for (int i = 0; i < nops; i++) {
		uint32_t count = 1 + (uint32_t)bo_rng_below(&r, MAXIO);
		uint64_t lba = bo_rng_below(&r, n - count + 1);
		unsigned kind = (unsigned)bo_rng_below(&r, 8);
		if (kind < 3)
			fill(buf, (size_t)count * d->sector_size, seed * 7 + (uint64_t)i);
		else if (kind < 5)
			memset(buf, 0, (size_t)count * d->sector_size);
		if (kind < 5)
			blk_write(d, lba, count, buf, 0);
		else if (kind == 5)
			blk_discard(d, lba, count);
		else if (kind == 6)
			blk_flush(d);
		/* a range anywhere, a short one where the last write went */
		for (int q = 0; q < 2; q++) {
			uint32_t qc = 1 + (uint32_t)bo_rng_below(&r, q ? 4 : MAXIO);
			uint64_t ql = q ? lba : bo_rng_below(&r, n - qc + 1);
			if (ql + qc > n)
				ql = n - qc;
			asked++;
			if (!blk_reads_zero(d, ql, qc))
				continue;
			said++;
			if (blk_read(d, ql, qc, buf)) {
				wrong++;
				continue;
			}
			for (size_t b = 0; b < (size_t)qc * d->sector_size; b++)
				if (buf[b]) {
					wrong++;
					break;
				}
		}
	}
	ok(!blk_reads_zero(d, n, 1) && !blk_reads_zero(d, 0, 0),
	   "%s: nothing is zero outside the device", spec);
	is_int(wrong, 0, "%s, seed %llu: every range called zero reads as zeroes", spec,
	       (unsigned long long)seed);
	ok(said > 0, "%s, seed %llu: %d of %d ranges called zero", spec, (unsigned long long)seed,
	   said, asked);
	blk_close(d);
	dev_cow_leaves_close(&leaves);
	free(buf);
}

/* Applies op i of a seeded random sequence to d. */
static void random_op(struct bdev *d, struct bo_rng *r, uint64_t seed, int i, unsigned char *buf)
{
	uint32_t ss = d->sector_size;
	uint32_t count = 1 + (uint32_t)bo_rng_below(r, MAXIO);
	uint64_t lba = bo_rng_below(r, NSECT - count + 1);
	unsigned kind = (unsigned)bo_rng_below(r, 8);
	if (kind < 5) {
		fill(buf, (size_t)count * ss, seed + (uint64_t)i * 7919);
		blk_write(d, lba, count, buf, kind == 0 ? BLK_FUA : 0);
	} else if (kind == 5) {
		blk_flush(d);
	} else if (kind == 6) {
		blk_discard(d, lba, count);
	} else {
		blk_read(d, lba, count, buf);
	}
}

static bool same_image(struct bdev *a, struct bdev *b)
{
	size_t len = (size_t)NSECT * a->sector_size;
	unsigned char *x = malloc(len), *y = malloc(len);
	blk_read(a, 0, NSECT, x);
	blk_read(b, 0, NSECT, y);
	bool same = memcmp(x, y, len) == 0;
	free(x);
	free(y);
	return same;
}

static void recorder_round_trip(uint32_t ss, uint64_t seed, int nops)
{
	unsigned char *buf = malloc((size_t)MAXIO * ss);
	struct rec_log *log;
	struct bdev *target, *rec;
	blk_mem_open(ss, NSECT, &target);
	rec_log_new(ss, NSECT, &log);
	rec_open(target, log, REC_OWN_LOWER | REC_LOG_READS, &rec);
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	for (int i = 0; i < nops; i++) {
		random_op(rec, &r, seed, i, buf);
		if (i % 50 == 0)
			rec_log_mark(log, "checkpoint");
	}
	blk_close(rec);

	/* through the file format and back */
	void *ser;
	size_t serlen;
	struct rec_log *back;
	struct bo_err err = {{0}};
	is_int(rec_log_serialize(log, &ser, &serlen), 0, "serialise the log");
	is_int(rec_log_parse(ser, serlen, &back, &err), 0, "parse it back");
	is_int(rec_log_len(back), rec_log_len(log), "same number of entries");

	/* every prefix: replaying n entries == applying the ops up to the same point */
	struct bdev *direct, *replayed;
	blk_mem_open(ss, NSECT, &direct);
	bo_rng_seed(&r, seed);
	int bad = 0, checked = 0;
	size_t n = 0;
	for (int i = 0; i <= nops; i++) {
		/* n = log entries produced by ops [0, i), marks included */
		while (n < rec_log_len(back)) {
			const struct rec_entry *e = rec_log_get(back, n);
			if (e->op != REC_MARK)
				break;
			n++;
		}
		blk_mem_open(ss, NSECT, &replayed);
		bad += rec_replay(back, n, replayed, &err) != 0;
		bad += !same_image(direct, replayed);
		checked++;
		blk_close(replayed);
		if (i == nops)
			break;
		random_op(direct, &r, seed, i, buf);
		n++;
	}
	is_int(bad, 0, "seed %llu: all %d prefixes replay to the directly applied state",
	       (unsigned long long)seed, checked);

	/* damage is found and located */
	unsigned char *dmg = malloc(serlen);
	memcpy(dmg, ser, serlen);
	dmg[serlen / 2] ^= 0x40;
	struct rec_log *tmp = NULL;
	int rc = rec_log_parse(dmg, serlen, &tmp, &err);
	ok(rc < 0 && strstr(err.msg, "byte") != NULL, "a flipped bit is reported: %s", err.msg);
	rc = rec_log_parse(ser, serlen - 7, &tmp, &err);
	ok(rc < 0 && strstr(err.msg, "truncated") != NULL, "truncation is reported: %s", err.msg);
	rec_log_free(tmp);
	free(dmg);
	free(ser);
	rec_log_free(back);
	rec_log_free(log);
	blk_close(direct);
	free(buf);
}

int main(void)
{
	const uint64_t seeds[] = {1, 42, 20260101};
	for (int s = 0; s < 3; s++) {
		agree(512, seeds[s], 10000);
		agree(4096, seeds[s], 10000);
	}
	const char *stacks[] = {"mem(size=1M)", "disk > mem(size=1M)",
	                        "disk(sector=4096) > mem(size=1M)",
	                        "cache(size=64k,flush=honor) > disk > mem(size=1M)"};
	for (int k = 0; k < 4; k++)
		for (int s = 0; s < 2; s++)
			zero_hint(stacks[k], seeds[s], 3000);
	recorder_round_trip(512, 7, 400);
	recorder_round_trip(4096, 99, 300);
	return tap_done();
}
