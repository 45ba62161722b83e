// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_integrity.c — the dm-integrity model: over cheap flash a power cut that
 * destroys a bystander sector makes it read as an error, never as other bytes;
 * mode=journal never exposes a data/tag mismatch after a cut, mode=direct can; the
 * spec round-trips. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "tap.h"

#define SS   512
#define NSEC 48 /* sectors written before the cut: bystanders and the target */
#define HIT  20 /* the sector in flight */

struct walk {
	unsigned nsec;
	uint64_t hit;
	uint32_t count;
	unsigned outcomes, errors, wrong, bystander_errors;
};

/* sector s holds 's' + its number before the cut; the in-flight write holds 'N' */
static void fill(unsigned char *p, unsigned s)
{
	memset(p, (int)('A' + s % 50), SS);
	p[0] = (unsigned char)s;
}

static int check(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct walk *w = ctx;
	unsigned char buf[SS], want[SS];
	for (unsigned s = 0; s < w->nsec; s++) {
		bool inflight = s >= w->hit && s < w->hit + w->count;
		int rc = blk_read(st, s, 1, buf);
		if (rc) {
			w->errors++;
			w->bystander_errors += !inflight;
			continue;
		}
		fill(want, s);
		bool old = memcmp(buf, want, SS) == 0;
		memset(want, 'N', SS);
		bool nw = inflight && memcmp(buf, want, SS) == 0;
		w->wrong += !old && !nw;
	}
	w->outcomes++;
	return 0;
}

static void walk(const char *spec, struct walk *w, uint64_t max, bool *complete)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text(spec, NULL, &d, &err) == 0, "open %s: %s", spec, err.msg);
	unsigned char buf[SS];
	int rc = 0;
	for (unsigned s = 0; s < w->nsec && rc == 0; s++) {
		fill(buf, s);
		rc = blk_write(d, s, 1, buf, 0);
	}
	tap_require(rc == 0 && blk_flush(d) == 0 && blk_settle(d) == 0,
	            "write and flush %u sectors", w->nsec);
	unsigned char *nw = malloc((size_t)w->count * SS);
	memset(nw, 'N', (size_t)w->count * SS);
	struct blk_inflight in = {.lba = w->hit, .count = w->count, .data = nw};
	int64_t n = blk_cut_foreach(d, &in, max, check, w, complete);
	tap_require(n > 0, "%s: cut outcomes walked: %lld", spec, (long long)n);
	free(nw);
	blk_close(d);
}

static void cheap_flash(void)
{
	const char *flash = "flash(ftl=cheap,eb=16k,page=1k,size=256k)";
	char spec[256];
	snprintf(spec, sizeof(spec), "integrity(interleave=64) > %s", flash);
	struct walk w = {.nsec = NSEC, .hit = HIT, .count = 1};
	bool complete = false;
	walk(spec, &w, 20000, &complete);
	diag("%s: %u outcomes, %u read errors (%u on bystanders), %u wrong", spec, w.outcomes,
	     w.errors, w.bystander_errors, w.wrong);
	ok(w.bystander_errors > 0, "a cut destroying bystander sectors is seen: %u read errors",
	   w.bystander_errors);
	ok(w.wrong == 0, "no sector ever reads as other bytes over %u outcomes", w.outcomes);

	/* the same cut without the layer: the damage reads back as bytes */
	struct walk raw = {.nsec = NSEC, .hit = HIT, .count = 1};
	walk(flash, &raw, 20000, &complete);
	ok(raw.wrong > 0 && raw.errors == 0,
	   "without integrity the same damage reads as wrong bytes (%u sectors), no error",
	   raw.wrong);

	struct walk dir = {.nsec = NSEC, .hit = HIT, .count = 1};
	snprintf(spec, sizeof(spec), "integrity(mode=direct,interleave=64) > %s", flash);
	walk(spec, &dir, 20000, &complete);
	ok(dir.wrong == 0 && dir.bystander_errors > 0,
	   "mode=direct too: destroyed sectors are errors (%u), never wrong bytes",
	   dir.bystander_errors);
}

static void journal_vs_direct(void)
{
	struct walk j = {.nsec = 16, .hit = 6, .count = 4};
	bool complete = false;
	walk("integrity(mode=journal,interleave=64) > disk(tear=sector) > mem(size=64k)", &j, 10000,
	     &complete);
	ok(complete && j.errors == 0 && j.wrong == 0,
	   "journal: every one of %u outcomes reads each sector old or new, no mismatch",
	   j.outcomes);
	struct walk d = {.nsec = 16, .hit = 6, .count = 4};
	walk("integrity(mode=direct,interleave=64) > disk(tear=sector) > mem(size=64k)", &d, 10000,
	     &complete);
	ok(complete && d.errors > 0 && d.wrong == 0 && d.bystander_errors == 0,
	   "direct: %u sector reads over %u outcomes hit a data/tag mismatch, as an error",
	   d.errors, d.outcomes);
	/* a write across the boundary of two tag groups */
	struct walk x = {.nsec = 16, .hit = 6, .count = 4};
	walk("integrity(mode=journal,interleave=8) > disk(tear=sector) > mem(size=64k)", &x, 10000,
	     &complete);
	ok(complete && x.errors == 0 && x.wrong == 0,
	   "journal, a write across two tag areas: no mismatch in %u outcomes", x.outcomes);
}

static void spec_and_errors(void)
{
	struct bo_err err = {{0}};
	struct dev_spec *a, *b;
	char buf[512];
	const char *text = "integrity(mode=direct,interleave=128) > mem(size=1M)";
	tap_require(dev_spec_parse(text, &a, &err) == 0, "parse %s", text);
	tap_require(dev_spec_format(a, buf, sizeof(buf)) > 0, "format");
	is_str(buf, "integrity(mode=direct,interleave=128) > mem(size=1M,sector=512)",
	       "canonical text");
	ok(dev_spec_parse(buf, &b, &err) == 0 && dev_spec_equal(a, b), "parses back equal");
	dev_spec_free(a);
	dev_spec_free(b);
	struct bdev *d;
	ok(dev_stack_open_text("integrity(interleave=12) > mem(size=1M)", NULL, &d, &err) ==
	           -EINVAL &&
	       strstr(err.msg, "power of two"),
	   "interleave=12 refused: %s", err.msg);
	ok(dev_stack_open_text("integrity > mem(size=1k)", NULL, &d, &err) == -EINVAL &&
	       strstr(err.msg, "no data sector"),
	   "a device too small for one data sector refused: %s", err.msg);
	tap_require(
	    dev_stack_open_text("integrity(interleave=64) > mem(size=1M)", NULL, &d, &err) == 0,
	    "open");
	unsigned char z[SS], zero[SS] = {0};
	ok(blk_read(d, d->nr_sectors - 1, 1, z) == 0 && memcmp(z, zero, SS) == 0,
	   "a formatted, never-written sector reads (zeros)");
	/* 1M = 2048 sectors: 1 superblock, groups of 1 tag + 64 data sectors */
	is_int(d->nr_sectors, 2047 / 65 * 64 + (2047 % 65 - 1), "capacity after tag areas");
	blk_close(d);
}

int main(void)
{
	cheap_flash();
	journal_vs_direct();
	spec_and_errors();
	return tap_done();
}
