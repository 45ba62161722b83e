// SPDX-License-Identifier: GPL-2.0-or-later
/* test_flash_spec.c — the flash model through the registry: specs with and without a
 * lower medium, parameter errors, the round trip, and the black-box probe: every verdict
 * equals what the declared parameters imply, the erase-block size included. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "blackout/dev.h"
#include "tap.h"
#include "test_flash_util.h"

/* Parses and probes spec, one TAP line for each; false if either failed. */
static bool probe_spec(const char *spec, struct dev_probe_result *r)
{
	struct dev_spec *s;
	struct bo_err err = {{0}};
	if (!ok(dev_spec_parse(spec, &s, &err) == 0, "parse %s", spec)) {
		diag("%s", err.msg);
		return false;
	}
	int rc = dev_probe(s, r, &err);
	dev_spec_free(s);
	if (!ok(rc == 0, "probe %s", spec)) {
		diag("%s", err.msg);
		return false;
	}
	return true;
}

static void probe_is(const char *spec, bool collateral, uint64_t eb, bool at_least)
{
	struct dev_probe_result r;
	if (!probe_spec(spec, &r))
		return;
	is_int(r.collateral, collateral, "%s: collateral damage %s", spec,
	       collateral ? "yes" : "no");
	is_int(r.collateral_bytes, eb, "%s: erase block inferred", spec);
	is_int(r.collateral_at_least, at_least, "%s: %s", spec,
	       at_least ? "only a lower bound" : "exact");
	ok(!r.volatile_cache && r.honors_flush, "%s: no volatile cache", spec);
}

struct verdicts {
	bool vol, flush, fua, tw, ts, collateral;
	uint64_t eb;
};

static void probe_all(const char *spec, struct verdicts w)
{
	struct dev_probe_result r;
	if (!probe_spec(spec, &r))
		return;
	bool right = r.volatile_cache == w.vol && r.honors_flush == w.flush &&
	             r.honors_fua == w.fua && r.tears_writes == w.tw && r.tears_sectors == w.ts &&
	             r.collateral == w.collateral && r.collateral_bytes == w.eb &&
	             !r.collateral_at_least && r.exhaustive;
	ok(right,
	   "%s: volatile=%d flush=%d fua=%d tears-writes=%d tears-sectors=%d collateral=%d "
	   "eb=%llu%s (%llu outcomes%s)",
	   spec, r.volatile_cache, r.honors_flush, r.honors_fua, r.tears_writes, r.tears_sectors,
	   r.collateral, (unsigned long long)r.collateral_bytes,
	   r.collateral_at_least ? " at least" : "", (unsigned long long)r.outcomes,
	   r.exhaustive ? "" : ", bounded");
	if (!right)
		diag("expected volatile=%d flush=%d fua=%d tears-writes=%d tears-sectors=%d "
		     "collateral=%d eb=%llu",
		     w.vol, w.flush, w.fua, w.tw, w.ts, w.collateral, (unsigned long long)w.eb);
}

/* What the parameters promise (docs/models/flash.md). flush= governs FUA too: flash
 * has no separate fua= parameter. Writes are atomic per page and pages are 4k, so a
 * 2-sector write across a page boundary can persist in part, whatever the FTL; only
 * the cheap FTL erases before it programs, which leaves a written sector erased (or
 * weakened, or garbage): neither old nor new. It also destroys flushed neighbours in
 * the erase block; flushes it ignores leave nothing to measure that against. */
static void probe_combinations(void)
{
	static const char *const ftls[] = {"cheap", "careful"};
	static const char *const caches[] = {"0", "8k"};
	static const char *const hi[] = {"honor", "ignore"};
	static const unsigned sectors[] = {512, 4096};
	for (int t = 0; t < 2; t++)
		for (int c = 0; c < 2; c++)
			for (int f = 0; f < 2; f++)
				for (int g = 0; g < 2; g++)
					for (int z = 0; z < 2; z++) {
						bool cheap = t == 0, cache = c == 1;
						bool honest = !cache || f == 0;
						char spec[256];
						snprintf(spec, sizeof(spec),
						         "flash(ftl=%s,eb=16k,size=256k,sector=%u,"
						         "cache=%s,flush=%s,garbage=%d)",
						         ftls[t], sectors[z], caches[c], hi[f], g);
						probe_all(spec,
						          (struct verdicts){
						              .vol = cache,
						              .flush = honest,
						              .fua = honest,
						              .tw = true,
						              .ts = cheap,
						              .collateral = cheap && honest,
						              .eb = cheap && honest ? 16 << 10 : 0,
						          });
					}
	/* partial erases off: the cheap FTL still leaves an erased sector */
	probe_all("flash(ftl=cheap,eb=16k,size=256k,partial_erase=0)",
	          (struct verdicts){.flush = true,
	                            .fua = true,
	                            .tw = true,
	                            .ts = true,
	                            .collateral = true,
	                            .eb = 16 << 10});
	/* one page is the whole device: no write spans pages, so none tears */
	probe_all("flash(ftl=careful,eb=16k,page=16k,size=16k)",
	          (struct verdicts){.flush = true, .fua = true});
	probe_all("flash(ftl=careful,eb=16k,page=512,size=256k)",
	          (struct verdicts){.flush = true, .fua = true, .tw = true});
}

static int count_cb(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)st;
	(void)dec;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* The crash explorer spells outcome k in the radices of the all-zero path: that is
 * only exact if no radix depends on an earlier answer, cache or not. */
static void cut_space_is_exact(const char *spec)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	if (!ok(dev_stack_open_text(spec, NULL, &d, &err) == 0, "open %s", spec))
		return;
	unsigned char b[4096];
	memset(b, 0x77, sizeof(b));
	for (int i = 0; i < 3; i++)
		blk_write(d, (uint64_t)i * 40, 2, b, 0);
	struct blk_inflight in = {9, 8, 0, b};
	struct dev_cut_space sp;
	is_int(dev_cut_space(d, &in, &sp), 0, "%s: cut space", spec);
	uint64_t seen = 0;
	bool complete = false;
	blk_cut_foreach(d, &in, 100000, count_cb, &seen, &complete);
	ok(complete && seen == sp.outcomes && sp.decisions == 1,
	   "%s: %llu outcomes enumerated, %llu counted, in one decision", spec,
	   (unsigned long long)seen, (unsigned long long)sp.outcomes);
	blk_close(d);
}

/* A NAND image in a file survives closing the device: reopening mounts it (the map is
 * rebuilt from the spare areas), and a different geometry is refused. */
static void file_image(const char *ftl)
{
	char path[] = "/tmp/blackout-flash-XXXXXX";
	int fd = mkstemp(path);
	tap_require(fd >= 0, "temporary image");
	close(fd);
	char spec[512];
	snprintf(spec, sizeof(spec), "flash(ftl=%s,eb=16k,size=512k) > file(path=%s,size=640k)",
	         ftl, path);
	struct bdev *d;
	struct bo_err err = {{0}};
	unsigned char b[512], got[512];
	is_int(dev_stack_open_text(spec, NULL, &d, &err), 0, "%s over a file%s%s", ftl,
	       err.msg[0] ? ": " : "", err.msg);
	for (uint64_t lba = 0; lba < 1024; lba += 37) {
		tsector(lba, lba + 1, b, 512);
		blk_write(d, lba, 1, b, 0);
	}
	blk_flush(d);
	blk_close(d);
	is_int(dev_stack_open_text(spec, NULL, &d, &err), 0, "%s: reopen the image", ftl);
	int good = 0;
	for (uint64_t lba = 0; lba < 1024; lba++) {
		if (blk_read(d, lba, 1, got))
			break;
		good += tversion(lba, got, 512) == (lba % 37 ? 0 : (int64_t)lba + 1);
	}
	is_int(good, 1024, "%s: every sector reads back after the remount", ftl);
	blk_close(d);
	snprintf(spec, sizeof(spec), "flash(ftl=%s,eb=32k,size=512k) > file(path=%s,size=640k)",
	         ftl, path);
	is_int(dev_stack_open_text(spec, NULL, &d, &err), -EINVAL,
	       "%s: another geometry is refused", ftl);
	unlink(path);
}

int main(void)
{
	file_image("cheap");
	file_image("careful");
	cut_space_is_exact("flash(ftl=careful,eb=16k,size=1M,cache=8k)");
	cut_space_is_exact("flash(ftl=cheap,eb=16k,size=1M,cache=8k,garbage=1)");
	cut_space_is_exact("flash(ftl=careful,eb=16k,size=1M)");
	struct bdev *d;
	struct bo_err err = {{0}};
	is_int(dev_stack_open_text("flash(ftl=cheap,eb=128k,page=4k,size=8M)", NULL, &d, &err), 0,
	       "flash with no lower keeps its pages in RAM: %s", err.msg);
	is_int(blk_size_bytes(d), 8 << 20, "8M exported");
	unsigned char b[512], got[512];
	tsector(7, 1, b, 512);
	is_int(blk_write(d, 7, 1, b, 0), 0, "write");
	struct bdev *c;
	is_int(blk_clone(d, &c), 0, "clone shares the RAM medium");
	blk_close(d);
	is_int(blk_read(c, 7, 1, got), 0, "the clone outlives the original");
	ok(memcmp(got, b, 512) == 0, "and reads its data");
	blk_close(c);

	is_int(
	    dev_stack_open_text("flash(ftl=careful,eb=16k,size=1M) > mem(size=2M)", NULL, &d, &err),
	    0, "flash over an explicit medium");
	ok(blk_lower(d, 0) != NULL && strcmp(blk_lower(d, 0)->name, "mem") == 0,
	   "which is its lower");
	blk_close(d);
	is_int(dev_stack_open_text("flash(eb=16k,size=1M) > mem(size=1M)", NULL, &d, &err), -EINVAL,
	       "a too-small medium is refused");
	ok(strstr(err.msg, "needs") != NULL, "naming what it needs: %s", err.msg);
	is_int(dev_stack_open_text("flash(eb=12k)", NULL, &d, &err), -EINVAL, "bad erase block");
	is_int(dev_stack_open_text("flash(ftl=sloppy)", NULL, &d, &err), -EINVAL, "bad ftl");

	struct dev_spec *s, *s2;
	tap_require(dev_spec_parse("flash(ftl=cheap,garbage=yes,cache=64k)", &s, &err) == 0,
	            "parse");
	char text[1024];
	dev_spec_format(s, text, sizeof(text));
	is_str(text,
	       "flash(ftl=cheap,size=64M,eb=128k,page=4k,sector=512,op=7,endurance=0,cache=64k,"
	       "flush=honor,garbage=true,partial_erase=true,seed=0)",
	       "canonical form spells every parameter");
	tap_require(dev_spec_parse(text, &s2, &err) == 0, "parse it back");
	ok(dev_spec_equal(s, s2), "round trip");
	dev_spec_free(s);
	dev_spec_free(s2);

	probe_is("flash(ftl=cheap,eb=16k,size=1M)", true, 16 << 10, false);
	probe_is("flash(ftl=cheap,eb=64k,page=2k,size=4M) > mem(size=5M)", true, 64 << 10, false);
	probe_is("flash(ftl=cheap,eb=1M,size=2M)", true, 512 << 10, true);
	probe_is("flash(ftl=careful,eb=16k,size=1M)", false, 0, false);
	probe_is("disk(tear=sector) > mem(size=1M)", false, 0, false);
	probe_combinations();
	return tap_done();
}
