// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_cut.c — exhaustive power-cut checks of cache and disk: for every
 * combination of flush/fua/tear (and no cache at all), small seeded histories are
 * cut at the end with a write in flight and every outcome is checked against what
 * the parameters promise. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "tap.h"

#define NSEC   16 /* largest device: 16 sectors of 512 bytes */
#define SS     512
#define MAXVER 16

/* every version a sector has held, oldest first; version 0 is the zero fill */
struct sector_hist {
	unsigned n;
	unsigned char tag[MAXVER];
};

struct run {
	unsigned nsec; /* sectors of the device */
	bool cache, flush_honor, fua_honor;
	int tear; /* 0 none, 1 sector, 2 byte */
	struct sector_hist h[NSEC];
	unsigned min[NSEC];    /* version index every outcome must have reached */
	unsigned latest[NSEC]; /* last completed version */
	/* the in-flight write */
	uint64_t if_lba;
	unsigned char if_tag[2];
	/* what the outcomes showed */
	unsigned flushed[NSEC]; /* version completed before the flush (0: none) */
	uint64_t outcomes, bad, torn, partial, all_latest, first_is_min, flushed_lost;
	bool first;
	char why[256];
};

static unsigned version_of(const struct sector_hist *h, unsigned char tag)
{
	for (unsigned v = h->n; v-- > 0;)
		if (h->tag[v] == tag)
			return v;
	return MAXVER;
}

static int check_state(void *ctx, struct bdev *state, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct run *r = ctx;
	unsigned char buf[NSEC * SS];
	if (blk_read(state, 0, r->nsec, buf)) {
		r->bad++;
		snprintf(r->why, sizeof(r->why), "read failed: %.200s", state->err.msg);
		return 0;
	}
	bool all_latest = true, is_min = true;
	unsigned landed = 0;
	for (unsigned s = 0; s < r->nsec; s++) {
		const unsigned char *p = buf + s * SS;
		bool inflight = s >= r->if_lba && s < r->if_lba + 2;
		unsigned char itag = inflight ? r->if_tag[s - r->if_lba] : 0;
		size_t split = SS;
		for (size_t i = 1; i < SS; i++)
			if (p[i] != p[0]) {
				split = i;
				break;
			}
		unsigned char tail = p[SS - 1];
		if (split < SS) {
			/* torn: in-flight bytes up to a quarter boundary, then one old version */
			bool ok_tear =
			    r->tear == 2 && inflight && p[0] == itag && split % (SS / 4) == 0;
			for (size_t i = split; i < SS; i++)
				ok_tear = ok_tear && p[i] == tail;
			unsigned v = version_of(&r->h[s], tail);
			if (!ok_tear || v == MAXVER || v < r->min[s]) {
				r->bad++;
				snprintf(r->why, sizeof(r->why), "sector %u torn badly (split %zu)",
				         s, split);
			}
			r->torn++;
			all_latest = is_min = false;
			continue;
		}
		if (inflight && p[0] == itag) {
			landed++;
			all_latest = is_min = false;
			continue;
		}
		unsigned v = version_of(&r->h[s], p[0]);
		if (r->flushed[s] && v < r->flushed[s])
			r->flushed_lost++;
		if (v == MAXVER || v < r->min[s]) {
			r->bad++;
			snprintf(r->why, sizeof(r->why), "sector %u holds version %u, below %u", s,
			         v, r->min[s]);
		}
		if (v != r->latest[s])
			all_latest = false;
		if (v != r->min[s])
			is_min = false;
	}
	if (landed == 1)
		r->partial++;
	if (r->tear == 0 && landed == 1) {
		r->bad++;
		snprintf(r->why, sizeof(r->why), "tear=none but half the in-flight write landed");
	}
	if (all_latest)
		r->all_latest++;
	if (r->first && is_min)
		r->first_is_min++;
	r->first = false;
	r->outcomes++;
	return 0;
}

/* tear=byte at quarter-sector units: these histories are walked exhaustively, and at
 * any byte (the default) a two-sector in-flight write alone has 513^2 outcomes;
 * byte_tears() checks the byte granularity itself. */
static const char *tears[] = {"none", "sector", "byte,tear_unit=128"};

/* One seeded history: W W F W FUA W, then a 2-sector write in flight. */
static void one_run(struct run *r, uint64_t seed, unsigned *applicable_ignore)
{
	char spec[256];
	r->nsec = 8;
	if (r->cache)
		snprintf(spec, sizeof(spec),
		         "cache(size=4k,flush=%s,fua=%s) > disk(tear=%s) > mem(size=4k)",
		         r->flush_honor ? "honor" : "ignore", r->fua_honor ? "honor" : "ignore",
		         tears[r->tear]);
	else
		snprintf(spec, sizeof(spec), "disk(tear=%s) > mem(size=4k)", tears[r->tear]);
	struct bdev *d;
	struct bo_err err = {{0}};
	if (dev_stack_open_text(spec, NULL, &d, &err)) {
		ok(0, "open %s: %s", spec, err.msg);
		return;
	}
	struct bo_rng rng;
	bo_rng_seed(&rng, seed);
	for (unsigned s = 0; s < r->nsec; s++) {
		r->h[s].n = 1;
		r->h[s].tag[0] = 0;
		r->min[s] = r->latest[s] = r->flushed[s] = 0;
	}
	unsigned char tag = 1;
	static const char ops[] = "WWFWUW";
	bool pre_flush[NSEC] = {0}; /* written before the flush and not made durable since */
	for (const char *op = ops; *op; op++) {
		if (*op == 'F') {
			blk_flush(d);
			for (unsigned s = 0; s < r->nsec; s++) {
				if (r->flush_honor || !r->cache)
					r->min[s] = r->latest[s];
				pre_flush[s] = r->latest[s] > 0;
				r->flushed[s] = r->latest[s];
			}
			continue;
		}
		uint64_t lba = bo_rng_below(&rng, r->nsec - 1);
		uint32_t n = 1 + (uint32_t)bo_rng_below(&rng, 2);
		unsigned char buf[2 * SS];
		bool fua = *op == 'U';
		for (uint32_t i = 0; i < n; i++) {
			memset(buf + i * SS, tag, SS);
			struct sector_hist *h = &r->h[lba + i];
			h->tag[h->n] = tag;
			r->latest[lba + i] = h->n++;
			if (!r->cache || (fua && r->fua_honor)) {
				r->min[lba + i] = r->latest[lba + i];
				pre_flush[lba + i] = false;
			}
			tag++;
		}
		if (blk_write(d, lba, n, buf, fua ? BLK_FUA : 0))
			ok(0, "write: %s", d->err.msg);
	}
	bool applicable = false;
	for (unsigned s = 0; s < r->nsec; s++)
		applicable = applicable || pre_flush[s];
	/* the in-flight write */
	r->if_lba = bo_rng_below(&rng, r->nsec - 1);
	unsigned char ibuf[2 * SS];
	for (unsigned i = 0; i < 2; i++) {
		r->if_tag[i] = tag;
		memset(ibuf + i * SS, tag++, SS);
	}
	struct blk_inflight w = {.lba = r->if_lba, .count = 2, .data = ibuf};
	struct dev_cut_space space;
	int rc = dev_cut_space(d, &w, &space);
	bool complete = false;
	r->first = true;
	int64_t n = blk_cut_foreach(d, &w, 1u << 20, check_state, r, &complete);
	char what[300];
	snprintf(what, sizeof(what), "%s seed %llu", spec, (unsigned long long)seed);
	ok(rc == 0 && n > 0 && complete && (uint64_t)n == space.outcomes,
	   "%s: %lld outcomes, all visited, as counted", what, (long long)n);
	ok(r->bad == 0, "%s: every outcome allowed%s%s", what, r->bad ? ": " : "", r->why);
	ok(r->first_is_min == 1, "%s: the all-zero outcome keeps only what was promised", what);
	ok(r->all_latest > 0, "%s: some outcome has every completed write", what);
	if (r->tear == 2)
		ok(r->torn > 0, "%s: some outcome tears a sector", what);
	else
		ok(r->torn == 0, "%s: no outcome tears a sector", what);
	if (r->tear >= 1)
		ok(r->partial > 0, "%s: some outcome persists part of the in-flight write", what);
	if (r->cache && !r->flush_honor && applicable) {
		(*applicable_ignore)++;
		ok(r->flushed_lost > 0, "%s: flush=ignore: some outcome loses a flushed write",
		   what);
	} else if (r->flush_honor || !r->cache) {
		ok(r->flushed_lost == 0, "%s: no outcome loses a flushed write", what);
	}
	blk_close(d);
}

/* Longer random histories (writes, FUA writes, flushes, discards) on 16 sectors,
 * with a cache that may have to write back (size=2k: 4 sectors) or not (8k: two
 * lines of 8). Write-back only makes more durable, so the promise per sector is
 * the same; the all-zero outcome is only "minimal" without write-back. */
static void random_run(const char *csize, bool flush_honor, bool fua_honor, int tear, uint64_t seed)
{
	struct run *r = calloc(1, sizeof(*r));
	r->nsec = 16;
	r->cache = true;
	r->flush_honor = flush_honor;
	r->fua_honor = fua_honor;
	r->tear = tear;
	char spec[256];
	snprintf(spec, sizeof(spec),
	         "cache(size=%s,flush=%s,fua=%s,order=%s,seed=%llu) > disk(tear=%s) > mem(size=8k)",
	         csize, flush_honor ? "honor" : "ignore", fua_honor ? "honor" : "ignore",
	         seed % 3 == 0   ? "fifo"
	         : seed % 3 == 1 ? "lba"
	                         : "random",
	         (unsigned long long)seed, tears[tear]);
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text(spec, NULL, &d, &err) == 0, "open %s", spec);
	for (unsigned s = 0; s < r->nsec; s++)
		r->h[s].n = 1;
	struct bo_rng rng;
	bo_rng_seed(&rng, seed);
	unsigned char tag = 1, buf[3 * SS];
	int errors = 0;
	for (int op = 0; op < 12; op++) {
		uint64_t k = bo_rng_below(&rng, 20);
		if (k < 3) {
			errors += blk_flush(d) != 0;
			for (unsigned s = 0; s < r->nsec && flush_honor; s++)
				r->min[s] = r->latest[s];
			continue;
		}
		uint64_t lba = bo_rng_below(&rng, r->nsec - 2);
		uint32_t n = 1 + (uint32_t)bo_rng_below(&rng, 3);
		bool discard = k < 5, fua = k >= 5 && k < 9;
		for (uint32_t i = 0; i < n; i++) {
			struct sector_hist *h = &r->h[lba + i];
			unsigned char t = discard ? 0 : tag++;
			memset(buf + i * SS, t, SS);
			h->tag[h->n] = t;
			r->latest[lba + i] = h->n++;
			if (discard || (fua && fua_honor))
				r->min[lba + i] = r->latest[lba + i];
		}
		errors += (discard ? blk_discard(d, lba, n)
		                   : blk_write(d, lba, n, buf, fua ? BLK_FUA : 0)) != 0;
	}
	r->if_lba = bo_rng_below(&rng, r->nsec - 1);
	unsigned char ibuf[2 * SS];
	for (unsigned i = 0; i < 2; i++) {
		r->if_tag[i] = tag;
		memset(ibuf + i * SS, tag++, SS);
	}
	struct blk_inflight w = {.lba = r->if_lba, .count = 2, .data = ibuf};
	struct dev_cut_space space;
	int rc = dev_cut_space(d, &w, &space);
	bool complete = false;
	r->first = true;
	int64_t n = blk_cut_foreach(d, &w, 1u << 20, check_state, r, &complete);
	ok(errors == 0 && rc == 0 && complete && (uint64_t)n == space.outcomes && r->bad == 0 &&
	       r->all_latest > 0 && (tear == 2) == (r->torn > 0) &&
	       (tear == 0) == (r->partial == 0),
	   "%s seed %llu: %lld outcomes, all allowed%s%s", spec, (unsigned long long)seed,
	   (long long)n, r->bad ? ": " : "", r->why);
	if (strcmp(csize, "8k") == 0)
		ok(r->first_is_min == 1,
		   "no write-back: the all-zero outcome keeps only the promised");
	blk_close(d);
	free(r);
}

/* dev_cut_outcome(k) spells k in the decisions: bit i = dirty sector i landed */
static void outcome_numbering(void)
{
	struct bdev *d;
	struct bo_err err;
	tap_require(dev_stack_open_text("cache(size=4k) > mem(size=4k)", NULL, &d, &err) == 0,
	            "open");
	unsigned char buf[SS];
	for (unsigned s = 0; s < 3; s++) {
		memset(buf, 0x10 + s, SS);
		blk_write(d, 2 * s, 1, buf, 0);
	}
	struct dev_cut_space sp;
	is_int(dev_cut_space(d, NULL, &sp), 0, "space");
	is_int(sp.decisions, 3, "three decisions");
	is_int(sp.outcomes, 8, "eight outcomes");
	ok(sp.log2 > 2.99 && sp.log2 < 3.01, "log2 is 3");
	bool all = true;
	for (uint64_t k = 0; k < 8; k++) {
		struct bdev *st;
		if (dev_cut_outcome(d, NULL, k, &st)) {
			all = false;
			continue;
		}
		for (unsigned s = 0; s < 3; s++) {
			blk_read(st, 2 * s, 1, buf);
			bool landed = buf[0] == 0x10 + s;
			all = all && landed == !!(k & (1u << s));
		}
		blk_close(st);
	}
	ok(all, "outcome k has dirty sector i landed iff bit i of k");
	struct bdev *st;
	is_int(dev_cut_outcome(d, NULL, 8, &st), -ERANGE, "outcome 8 is out of range");
	/* the original is untouched */
	blk_read(d, 4, 1, buf);
	ok(buf[0] == 0x12, "the device itself still reads its cached data");
	blk_close(d);
}

/* tear=byte: a torn sector is new up to any byte and old after it, each split
 * exactly once; the space of a longer write is the product. */
struct splits {
	unsigned ss, old_n, new_n, bad;
	unsigned *at; /* [ss]: outcomes torn after i bytes */
};

static int note_split(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct splits *sp = ctx;
	unsigned char b[4096];
	if (blk_read(st, 0, 1, b)) {
		sp->bad++;
		return 0;
	}
	unsigned k = 0;
	while (k < sp->ss && b[k] == 'N')
		k++;
	for (unsigned i = k; i < sp->ss; i++)
		if (b[i] != 'O') {
			sp->bad++;
			return 0;
		}
	if (k == 0)
		sp->old_n++;
	else if (k == sp->ss)
		sp->new_n++;
	else
		sp->at[k]++;
	return 0;
}

static void byte_tears(unsigned ss, const char *unit, unsigned step)
{
	char spec[128];
	snprintf(spec, sizeof(spec), "disk(sector=%u,tear=byte%s) > mem(size=16k,sector=%u)", ss,
	         unit, ss);
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text(spec, NULL, &d, &err) == 0, "open %s: %s", spec, err.msg);
	unsigned char old[2 * 4096], nw[2 * 4096];
	memset(old, 'O', sizeof(old));
	memset(nw, 'N', sizeof(nw));
	blk_write(d, 0, 2, old, 0);
	struct splits sp = {.ss = ss, .at = calloc(ss, sizeof(unsigned))};
	struct blk_inflight w = {.lba = 0, .count = 1, .data = nw};
	bool complete;
	int64_t n = blk_cut_foreach(d, &w, 10000, note_split, &sp, &complete);
	unsigned want = 1 + ss / step;
	is_int(n, want, "%s: one sector in flight, %u outcomes", spec, want);
	unsigned once = 0, other = 0;
	for (unsigned k = 1; k < ss; k++) {
		if (k % step == 0)
			once += sp.at[k] == 1;
		else
			other += sp.at[k];
	}
	ok(complete && sp.bad == 0 && sp.old_n == 1 && sp.new_n == 1 && once == ss / step - 1 &&
	       other == 0,
	   "old, new, and new up to every multiple of %u bytes then old, each once", step);
	struct blk_inflight w2 = {.lba = 0, .count = 2, .data = nw};
	struct dev_cut_space space;
	is_int(dev_cut_space(d, &w2, &space), 0, "count a two-sector write");
	is_int(space.outcomes, (int64_t)want * want, "two sectors: %u^2 outcomes", want);
	free(sp.at);
	blk_close(d);
}

static void tear_unit_errors(void)
{
	static const char *const bad[] = {"disk(tear=byte,tear_unit=0) > mem",
	                                  "disk(tear=byte,tear_unit=3) > mem",
	                                  "disk(tear=byte,tear_unit=512) > mem"};
	for (unsigned i = 0; i < 3; i++) {
		struct bdev *d;
		struct bo_err err = {{0}};
		ok(dev_stack_open_text(bad[i], NULL, &d, &err) == -EINVAL &&
		       strstr(err.msg, "tear_unit"),
		   "%s refused: %s", bad[i], err.msg);
	}
}

int main(void)
{
	unsigned applicable_ignore = 0;
	for (int cache = 0; cache <= 1; cache++)
		for (int fl = 0; fl <= cache; fl++)
			for (int fu = 0; fu <= cache; fu++)
				for (int tear = 0; tear < 3; tear++)
					for (uint64_t seed = 1; seed <= 6; seed++) {
						struct run r = {.cache = cache,
						                .flush_honor = !fl,
						                .fua_honor = !fu,
						                .tear = tear};
						one_run(&r, seed * 7919 + (uint64_t)tear,
						        &applicable_ignore);
					}
	ok(applicable_ignore > 0, "flush=ignore histories with a flushed write: %u",
	   applicable_ignore);
	for (int sz = 0; sz < 2; sz++)
		for (int fl = 0; fl < 2; fl++)
			for (int fu = 0; fu < 2; fu++)
				for (int tear = 0; tear < 3; tear++)
					for (uint64_t seed = 1; seed <= 4; seed++)
						random_run(sz ? "8k" : "2k", !fl, !fu, tear,
						           seed * 31 +
						               (uint64_t)(tear * 7 + fu * 3 + fl));
	outcome_numbering();
	byte_tears(512, "", 1);
	byte_tears(4096, "", 1);
	byte_tears(512, ",tear_unit=128", 128);
	tear_unit_errors();
	return tap_done();
}
