// SPDX-License-Identifier: GPL-2.0-or-later
/* test_raid_hole.c — the write hole, exhaustively over every outcome of a power cut
 * during one small write: what a degraded RAID5/6 reads back afterwards without a
 * mitigation, and exactly what the bitmap, PPL and the write journal each promise. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "tap.h"

#define SS     512u
#define CHUNK  4096u
#define CS     (CHUNK / SS)
#define MEMBER 88u /* sectors: metadata + a few whole chunks */

enum mit { NONE, BITMAP, PPL, JOURNAL };
static const char *const mit_name[] = {"none", "bitmap", "ppl", "journal"};

struct scen {
	unsigned level, n;
	uint64_t missing;
	enum mit mit;
	uint64_t lba;
	uint32_t count;
	bool fail_after; /* non-degraded: also fail each member after recovery */
};

struct result {
	uint64_t outcomes;
	uint64_t untouched_bad;  /* outcomes where a sector not being written changed */
	uint64_t inflight_torn;  /* ... where a written sector is neither old nor new */
	uint64_t inflight_mixed; /* ... where the write is partly old, partly new */
	uint64_t max_resync;
	bool complete;
};

struct ctx {
	const struct scen *sc;
	const unsigned char *old, *new_;
	size_t len;
	struct result *res;
	unsigned char *got;
};

static uint64_t stat_resync;
static void emit(void *c, const char *key, uint64_t v)
{
	(void)c;
	if (strcmp(key, "resync_stripes") == 0)
		stat_resync = v;
}

/* judges one view of the array: returns bit 0 untouched bad, bit 1 torn, bit 2 mixed */
static unsigned judge(struct ctx *c, struct bdev *d)
{
	const struct scen *sc = c->sc;
	if (blk_read(d, 0, (uint32_t)d->nr_sectors, c->got))
		return 1;
	unsigned v = 0, nold = 0, nnew = 0;
	for (uint64_t s = 0; s < d->nr_sectors; s++) {
		const unsigned char *g = c->got + s * SS;
		bool in = s >= sc->lba && s < sc->lba + sc->count;
		bool is_old = memcmp(g, c->old + s * SS, SS) == 0;
		if (!in) {
			if (!is_old)
				v |= 1;
			continue;
		}
		bool is_new = memcmp(g, c->new_ + (s - sc->lba) * SS, SS) == 0;
		if (is_new)
			nnew++;
		else if (is_old)
			nold++;
		else
			v |= 2;
	}
	if (nold && nnew)
		v |= 4;
	return v;
}

static int check(void *ctxp, struct bdev *state, const struct blk_chooser_list *l)
{
	(void)l;
	struct ctx *c = ctxp;
	stat_resync = 0;
	blk_stats(state, emit, NULL);
	if (stat_resync > c->res->max_resync)
		c->res->max_resync = stat_resync;
	unsigned v = judge(c, state);
	if (c->sc->fail_after)
		for (unsigned i = 0; i < c->sc->n; i++) {
			struct bdev *x;
			if (blk_clone(state, &x))
				return -ENOMEM;
			raid_fail_member(x, i);
			v |= judge(c, x) & 1;
			blk_close(x);
		}
	c->res->outcomes++;
	c->res->untouched_bad += v & 1;
	c->res->inflight_torn += (v >> 1) & 1;
	c->res->inflight_mixed += (v >> 2) & 1;
	return 0;
}

static struct result run(const struct scen *sc)
{
	struct result res = {0};
	struct bdev *m[8];
	unsigned nl = sc->n + (sc->mit == JOURNAL);
	for (unsigned i = 0; i < nl; i++)
		if (blk_mem_open(SS, MEMBER, &m[i]))
			tap_require(0, "member opens");
	struct raid_params p = {.level = sc->level,
	                        .chunk = CHUNK,
	                        .layout = RAID_LEFT_SYMMETRIC,
	                        .missing = sc->missing,
	                        .bitmap = sc->mit == BITMAP,
	                        .bitmap_chunk = CHUNK,
	                        .ppl = sc->mit == PPL,
	                        .journal = sc->mit == JOURNAL};
	struct bdev *d;
	struct bo_err err = {{0}};
	int rc = dev_raid_open(&p, m, nl, &d, &err);
	if (rc)
		tap_require(0, "array opens: %s", err.msg);
	size_t len = (size_t)d->nr_sectors * SS;
	unsigned char *old = malloc(len), *nw = malloc((size_t)sc->count * SS);
	struct bo_rng rng;
	bo_rng_seed(&rng, sc->lba * 131 + sc->missing + sc->level);
	for (size_t i = 0; i < len; i++)
		old[i] = (unsigned char)bo_rng_next(&rng);
	for (size_t i = 0; i < (size_t)sc->count * SS; i++)
		nw[i] = (unsigned char)bo_rng_next(&rng);
	if (blk_write(d, 0, (uint32_t)d->nr_sectors, old, 0) || blk_flush(d))
		tap_require(0, "fill and flush");
	struct ctx c = {sc, old, nw, len, &res, malloc(len)};
	struct blk_inflight w = {.lba = sc->lba, .count = sc->count, .data = nw};
	int64_t n = blk_cut_foreach(d, &w, 1u << 20, check, &c, &res.complete);
	if (n < 0)
		diag("cut_foreach: %s", bo_errstr(&d->err, (int)n));
	free(c.got);
	free(old);
	free(nw);
	blk_close(d);
	return res;
}

static void show(const char *what, const struct scen *sc, const struct result *r)
{
	diag("%s raid%u missing=0x%llx %s write %u@%llu: %llu outcomes%s, untouched wrong in %llu, "
	     "in-flight torn %llu, mixed %llu, resync <= %llu",
	     what, sc->level, (unsigned long long)sc->missing, mit_name[sc->mit], sc->count,
	     (unsigned long long)sc->lba, (unsigned long long)r->outcomes,
	     r->complete ? "" : " (incomplete)", (unsigned long long)r->untouched_bad,
	     (unsigned long long)r->inflight_torn, (unsigned long long)r->inflight_mixed,
	     (unsigned long long)r->max_resync);
}

/* Degraded RAID5 x4 (left-symmetric: stripe 0 is members 0 1 2 + P on 3): every
 * missing member and a one-sector write into each data chunk of stripe 0, and a
 * write over the last 2 sectors of chunk 0, all of chunk 1 and 4 sectors of chunk 2. */
static void raid5_degraded(enum mit mit, struct result *sum, struct result *hole_case,
                           struct result *span_case)
{
	memset(sum, 0, sizeof(*sum));
	sum->complete = true;
	for (unsigned miss = 0; miss < 4; miss++)
		for (unsigned j = 0; j <= 3; j++) {
			struct scen sc = {5,
			                  4,
			                  1ull << miss,
			                  mit,
			                  j < 3 ? j * CS + 3 : CS - 2,
			                  j < 3 ? 1u : CS + 4,
			                  false};
			struct result r = run(&sc);
			if (miss == 1 && j == 0)
				*hole_case = r;
			if (miss == 0 && j == 3)
				*span_case = r;
			sum->outcomes += r.outcomes;
			sum->untouched_bad += r.untouched_bad;
			sum->inflight_torn += r.inflight_torn;
			sum->inflight_mixed += r.inflight_mixed;
			sum->complete &= r.complete;
			if (r.untouched_bad || r.inflight_torn)
				show("  ", &sc, &r);
		}
}

int main(void)
{
	struct result sum, hole, span;

	/* no mitigation: the write hole */
	raid5_degraded(NONE, &sum, &hole, &span);
	ok(sum.complete && sum.outcomes > 0, "raid5 degraded, none: %llu outcomes, all visited",
	   (unsigned long long)sum.outcomes);
	ok(hole.untouched_bad > 0,
	   "raid5 missing member 1, write to chunk 0: %llu cuts make chunk 1 (never written) "
	   "read back wrong",
	   (unsigned long long)hole.untouched_bad);
	ok(sum.untouched_bad > 0, "raid5 degraded, none: the write hole (%llu outcomes)",
	   (unsigned long long)sum.untouched_bad);

	/* bitmap: only narrows resync; on a degraded array it cannot help */
	raid5_degraded(BITMAP, &sum, &hole, &span);
	ok(sum.complete, "raid5 degraded, bitmap: %llu outcomes", (unsigned long long)sum.outcomes);
	ok(hole.untouched_bad > 0, "raid5 degraded, bitmap: the hole stays open (%llu outcomes)",
	   (unsigned long long)hole.untouched_bad);

	/* PPL: untouched chunks never wrong; in-flight data on a lost member can be */
	raid5_degraded(PPL, &sum, &hole, &span);
	ok(sum.complete, "raid5 degraded, ppl: %llu outcomes", (unsigned long long)sum.outcomes);
	is_int(sum.untouched_bad, 0,
	       "raid5 degraded, ppl: no untouched block ever reads back wrong");
	ok(span.inflight_torn > 0,
	   "raid5 missing a written member, ppl: in-flight data can be lost (%llu outcomes), as "
	   "md documents",
	   (unsigned long long)span.inflight_torn);

	/* journal: closes the hole, and the stripe update is all or nothing */
	raid5_degraded(JOURNAL, &sum, &hole, &span);
	ok(sum.complete, "raid5 degraded, journal: %llu outcomes",
	   (unsigned long long)sum.outcomes);
	is_int(sum.untouched_bad, 0,
	       "raid5 degraded, journal: no untouched block reads back wrong");
	is_int(sum.inflight_torn + sum.inflight_mixed, 0,
	       "raid5 degraded, journal: the write reads back wholly old or wholly new");

	/* not degraded: resync after the cut closes the hole for a later failure */
	for (int mi = NONE; mi <= PPL; mi++) {
		struct scen sc = {5, 4, 0, (enum mit)mi, 3, 1, true};
		struct result r = run(&sc);
		ok(r.complete && r.untouched_bad == 0,
		   "raid5 whole at the cut, %s: after recovery any member can fail, nothing "
		   "untouched is wrong (%llu outcomes)",
		   mit_name[mi], (unsigned long long)r.outcomes);
		if (mi == NONE)
			ok(r.max_resync >= MEMBER / CS - 2,
			   "raid5, none: an unclean shutdown resyncs the whole array (%llu "
			   "stripes)",
			   (unsigned long long)r.max_resync);
		if (mi == BITMAP)
			is_int(r.max_resync, 1, "raid5, bitmap: only the dirty region is resynced");
		if (mi == PPL)
			is_int(r.max_resync, 0, "raid5, ppl: PPL recovery replaces resync");
	}

	/* RAID6 with two missing: the same story */
	struct scen s6 = {6, 5, 0x6, NONE, 3, 1, false};
	struct result r6 = run(&s6);
	ok(r6.complete && r6.untouched_bad > 0,
	   "raid6 missing 1,2, none: the write hole (%llu of %llu outcomes)",
	   (unsigned long long)r6.untouched_bad, (unsigned long long)r6.outcomes);
	s6.mit = BITMAP;
	r6 = run(&s6);
	ok(r6.complete && r6.untouched_bad > 0, "raid6 missing 1,2, bitmap: still open (%llu)",
	   (unsigned long long)r6.untouched_bad);
	s6.mit = JOURNAL;
	r6 = run(&s6);
	ok(r6.complete && r6.untouched_bad == 0 && r6.inflight_torn == 0,
	   "raid6 missing 1,2, journal: closed (%llu outcomes)", (unsigned long long)r6.outcomes);
	struct scen s6w = {6, 5, 0, NONE, CS - 2, 4, true};
	r6 = run(&s6w);
	ok(r6.complete && r6.untouched_bad == 0,
	   "raid6 whole at the cut: resync, then any member fails, nothing untouched wrong");

	/* RAID4 (parity always on member 3): the same hole, the same cure */
	struct scen s4 = {4, 4, 0x2, NONE, 3, 1, false};
	struct result r4 = run(&s4);
	ok(r4.complete && r4.untouched_bad > 0,
	   "raid4 missing 1, none: the write hole (%llu of %llu)",
	   (unsigned long long)r4.untouched_bad, (unsigned long long)r4.outcomes);
	s4.mit = JOURNAL;
	r4 = run(&s4);
	ok(r4.complete && r4.untouched_bad == 0, "raid4 missing 1, journal: closed");

	/* RAID1: mirrors may diverge at the cut; resync makes them agree */
	struct scen s1 = {1, 2, 0, NONE, 5, 3, true};
	struct result r1 = run(&s1);
	ok(r1.complete && r1.untouched_bad == 0 && r1.inflight_torn == 0,
	   "raid1: after resync either mirror alone reads old-or-new (%llu outcomes)",
	   (unsigned long long)r1.outcomes);

	/* the same experiment through the library call behind `blackout raid hole` */
	struct raid_hole_result hr;
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text("raid5(chunk=4k,missing=1) > [disk > mem(size=64k)] x4",
	                                NULL, &d, &err) == 0,
	            "spec opens: %s", err.msg);
	is_int(raid_hole_probe(d, 3, 1, false, 1u << 20, &hr, &err), 0, "raid_hole_probe runs");
	ok(hr.complete && hr.untouched_bad > 0,
	   "raid_hole_probe over disks: the hole (%llu of %llu)",
	   (unsigned long long)hr.untouched_bad, (unsigned long long)hr.outcomes);
	uint64_t holes = hr.untouched_bad;
	is_int(raid_hole_probe(d, d->nr_sectors, 1, false, 10, &hr, &err), -EINVAL,
	       "a write past the end is refused");
	blk_close(d);
	tap_require(dev_stack_open_text("raid5(chunk=4k,missing=1,start_dirty_degraded=false) > "
	                                "[disk > mem(size=64k)] x4",
	                                NULL, &d, &err) == 0,
	            "spec opens: %s", err.msg);
	is_int(raid_hole_probe(d, 3, 1, false, 1u << 20, &hr, &err), 0, "raid_hole_probe runs");
	ok(hr.untouched_bad == 0 && hr.unreadable >= holes,
	   "refusing a dirty degraded array (md's default): no silent damage, %llu outcomes "
	   "refused",
	   (unsigned long long)hr.unreadable);
	blk_close(d);
	tap_require(dev_stack_open_text("raid6(chunk=4k,journal=1) > [disk > mem(size=64k)] x6",
	                                NULL, &d, &err) == 0,
	            "spec opens: %s", err.msg);
	is_int(raid_hole_probe(d, 5, 9, true, 1u << 20, &hr, &err), 0, "raid_hole_probe runs");
	ok(hr.complete && hr.untouched_bad == 0 && hr.inflight_torn == 0 && hr.inflight_mixed == 0,
	   "raid6 + journal over disks, a member lost after restart: nothing wrong (%llu outcomes)",
	   (unsigned long long)hr.outcomes);
	blk_close(d);
	return tap_done();
}
