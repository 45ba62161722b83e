// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_probe_hole.c — `stack probe` and the write-hole experiment (`blackout raid
 * hole`) agree on whether each stack the matrix uses destroys data nobody wrote, and
 * the probe names the mechanism (stripe, erase block) with its unit size. The stacks
 * are the rows of src/report/matrix_plan.c (keep them in step), with RAID members of
 * 1 MiB instead of the matrix's 6 MiB: the verdict and the unit follow the chunk, not
 * the member's size, and the hole experiment reads the whole array for each of its
 * hundreds of outcomes (6 MiB members made this the unit suite's longest test). The
 * flash rows keep their size: a 4 MiB erase block needs the 16 MiB to be measured
 * whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "tap.h"

#define DM        "disk > mem(size=1M)"
#define R5(extra) "raid5(chunk=4k" extra ") > [" DM "] x4"

enum expect { NONE, NOT_MEASURED, STRIPE, ERASE_BLOCK };

struct row {
	const char *stack;
	enum expect want; /* what the model says */
	uint64_t unit;    /* chunk or erase block, bytes */
	bool hole;        /* also run the write-hole experiment (RAID rows) */
	bool at_least;    /* the unit is a lower bound: a layer above shifts its boundaries */
};

static const struct row rows[] = {
    {"disk(tear=none) > mem(size=16M)", NONE, 0, false},
    {"cache(size=256k,flush=honor) > disk(tear=none) > mem(size=16M)", NONE, 0, false},
    {"cache(size=256k,flush=ignore) > disk(tear=none) > mem(size=16M)", NOT_MEASURED, 0, false},
    {"disk(tear=byte) > mem(size=16M)", NONE, 0, false},
    {"flash(ftl=cheap,eb=128k,size=16M)", ERASE_BLOCK, 128 << 10, false},
    {"flash(ftl=cheap,eb=4M,size=16M)", ERASE_BLOCK, 4 << 20, false},
    {"flash(ftl=careful,eb=128k,size=16M)", NONE, 0, false},
    {R5(""), NONE, 0, true},
    {R5(",missing=1"), STRIPE, 4096, true},
    {"raid5(chunk=4k,missing=1,journal=true) > [" DM " ; " DM " ; " DM " ; " DM " ; mem(size=1M)]",
     NONE, 0, true},
    {"raid6(chunk=4k,missing=1:2) > [" DM "] x5", STRIPE, 4096, true},
    {"fault > disk(tear=none) > mem(size=16M)", NONE, 0, false},
    /* issue 24's rows: a tear or garbage stays in the sectors being written; dm-integrity
     * turns cheap flash's collateral damage into errors but cannot undo it (its tag area
     * shifts the data off the erase-block boundaries: the unit is a lower bound); RAID5
     * over honest caches has none; a lying cache or a RAID that drops flushes is not
     * measured (the set-up's own sync may never reach the media) */
    {"disk(tear=byte,torn=unreadable) > mem(size=16M)", NONE, 0, false},
    {"disk(tear=none,garbage=true) > mem(size=16M)", NONE, 0, false},
    {"integrity(mode=journal) > flash(ftl=cheap,eb=128k,size=16M)", ERASE_BLOCK, 128 << 10, false,
     true},
    {"raid5(chunk=4k) > [cache(size=64k,flush=honor) > disk > mem(size=1M)] x4", NONE, 0, false},
    {"raid5(chunk=4k) > [cache(size=64k,flush=ignore) > disk > mem(size=1M)] x4", NOT_MEASURED, 0,
     false},
    {"raid5(chunk=4k,flush=drop) > [cache(size=64k,flush=honor) > disk > mem(size=1M)] x4",
     NOT_MEASURED, 0, false},
    /* not a matrix row: a bigger chunk, to see the unit follow it */
    {"raid5(chunk=64k,missing=1) > [mem(size=1M)] x4", STRIPE, 64 << 10, true},
};

/* the write-hole experiment (raid_hole_probe, what `blackout raid hole` runs) at
 * writes in two stripes, in the first and the last chunk of a 4-member stripe:
 * does any destroy a sector that was not written? Each outcome reads the whole
 * array, so two writes keep the test within seconds. */
static bool hole_seen(const char *spec, uint64_t *outcomes)
{
	static const uint64_t lbas[] = {3, 27};
	*outcomes = 0;
	for (unsigned i = 0; i < 2; i++) {
		struct bdev *d;
		struct bo_err err = {{0}};
		struct raid_hole_result res = {0};
		int rc = dev_stack_open_text(spec, NULL, &d, &err);
		if (rc == 0) {
			rc = raid_hole_probe(d, lbas[i], 1, false, 100000, &res, &err);
			blk_close(d);
		}
		if (rc || !res.complete)
			tap_require(0, "raid hole %s at %llu: %s", spec,
			            (unsigned long long)lbas[i],
			            rc ? err.msg : "not every outcome");
		*outcomes += res.outcomes;
		if (res.untouched_bad > 0)
			return true;
	}
	return false;
}

int main(void)
{
	/* Under the sanitizers the 4 MiB erase block's thousand-odd outcomes, each a
	 * read-modify-write of the whole block, took 94 of the test's 131 s; the 128 KiB
	 * rows run the same code, and the plain build runs this row too. */
	bool sanitized = getenv("BLACKOUT_ASAN") != NULL;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		if (sanitized && w->want == ERASE_BLOCK && w->unit >= (4u << 20)) {
			diag("%s: left to the plain build (BLACKOUT_ASAN)", w->stack);
			continue;
		}
		struct dev_spec *s;
		struct bo_err err = {{0}};
		struct dev_probe_result r;
		int rc = dev_spec_parse(w->stack, &s, &err);
		if (rc == 0) {
			rc = dev_probe(s, &r, &err);
			dev_spec_free(s);
		}
		if (rc)
			tap_require(0, "probe %s: %s", w->stack, err.msg);
		switch (w->want) {
		case NOT_MEASURED:
			ok(!r.honors_flush && !r.collateral, "%s: flush not honoured, not measured",
			   w->stack);
			break;
		case NONE:
			ok(r.honors_flush && !r.collateral && r.exhaustive,
			   "%s: no collateral damage", w->stack);
			break;
		case STRIPE:
		case ERASE_BLOCK:
			ok(r.collateral &&
			       r.collateral_kind == (w->want == STRIPE
			                                 ? DEV_COLLATERAL_STRIPE
			                                 : DEV_COLLATERAL_ERASE_BLOCK) &&
			       r.collateral_bytes == w->unit &&
			       r.collateral_at_least == w->at_least,
			   "%s: collateral damage, %s of %llu bytes (probe: kind %d, %llu bytes%s)",
			   w->stack, w->want == STRIPE ? "stripe, chunk" : "erase block",
			   (unsigned long long)w->unit, (int)r.collateral_kind,
			   (unsigned long long)r.collateral_bytes,
			   r.collateral_at_least ? " at least" : "");
			break;
		}
		if (w->hole) {
			uint64_t n;
			bool h = hole_seen(w->stack, &n);
			ok(h == r.collateral, "%s: raid hole (%llu outcomes) %s, probe %s",
			   w->stack, (unsigned long long)n,
			   h ? "destroys untouched sectors" : "destroys none",
			   r.collateral ? "says collateral" : "says none");
		}
	}
	return tap_done();
}
