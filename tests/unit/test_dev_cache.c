// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_cache.c — the cache model against a reference: reads see cached data,
 * write-back orders when full, flush and FUA semantics, clone independence,
 * behaviour after a cut, statistics, versions of overwritten sectors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "tap.h"

#define SS 512

struct statv {
	const char *key;
	uint64_t v;
};

static void grab(void *ctx, const char *key, uint64_t v)
{
	struct statv *s = ctx;
	if (strcmp(key, s->key) == 0)
		s->v = v;
}

static uint64_t stat(struct bdev *d, const char *key)
{
	struct statv s = {key, UINT64_MAX};
	blk_stats(d, grab, &s);
	return s.v;
}

static struct bdev *open_spec(const char *spec)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	int rc = dev_stack_open_text(spec, NULL, &d, &err);
	if (rc) {
		diag("%s: %s", spec, err.msg);
		return NULL;
	}
	return d;
}

static void fill(unsigned char *b, unsigned char v)
{
	memset(b, v, SS);
}

/* Random reads and writes (with flushes and FUA) against a reference image. */
static void reference(const char *order, const char *size)
{
	char spec[128];
	snprintf(spec, sizeof(spec), "cache(size=%s,order=%s,seed=5) > mem(size=32k)", size, order);
	struct bdev *d = open_spec(spec);
	tap_require(d, "open %s", spec);
	enum { N = 64 };
	unsigned char ref[N * SS], buf[8 * SS];
	memset(ref, 0, sizeof(ref));
	struct bo_rng rng;
	bo_rng_seed(&rng, 42);
	bool same = true;
	int errors = 0;
	for (int op = 0; op < 4000; op++) {
		uint64_t lba = bo_rng_below(&rng, N - 8);
		uint32_t n = 1 + (uint32_t)bo_rng_below(&rng, 8);
		uint64_t k = bo_rng_below(&rng, 10);
		if (k < 5) {
			for (uint32_t i = 0; i < n; i++)
				fill(buf + i * SS, (unsigned char)(op * 8 + i + 1));
			errors += blk_write(d, lba, n, buf, k == 0 ? BLK_FUA : 0) != 0;
			memcpy(ref + lba * SS, buf, n * SS);
		} else if (k < 9) {
			errors += blk_read(d, lba, n, buf) != 0;
			same = same && memcmp(buf, ref + lba * SS, n * SS) == 0;
		} else if (bo_rng_below(&rng, 8) == 0) {
			errors += blk_flush(d) != 0;
		} else {
			errors += blk_discard(d, lba, n) != 0;
			memset(ref + lba * SS, 0, n * SS);
		}
	}
	is_int(errors, 0, "%s: no I/O errors", spec);
	ok(same, "%s: every read saw the latest write", spec);
	/* stat() gives UINT64_MAX for a key the device does not report */
	uint64_t ds = stat(d, "dirty_sectors"), db = stat(d, "dirty_bytes");
	ok(ds != UINT64_MAX && db != UINT64_MAX && db == ds * SS,
	   "%s: stats present: dirty_sectors %llu, dirty_bytes %llu (sectors x %d)", spec,
	   (unsigned long long)ds, (unsigned long long)db, SS);
	ok(stat(d, "writes") > 0 && stat(d, "writes") != UINT64_MAX && stat(d, "reads") > 0 &&
	       stat(d, "reads") != UINT64_MAX && stat(d, "flushes") != UINT64_MAX,
	   "%s: stats present: reads %llu, writes %llu, flushes %llu", spec,
	   (unsigned long long)stat(d, "reads"), (unsigned long long)stat(d, "writes"),
	   (unsigned long long)stat(d, "flushes"));
	/* flush, cut with nothing persisting: the media holds exactly the reference */
	is_int(blk_flush(d), 0, "flush");
	is_int(stat(d, "dirty_sectors"), 0, "a flush empties the cache");
	is_int(blk_power_cut(d, &blk_chooser_zero, NULL), 0, "cut");
	is_int(blk_read(d, 0, 1, buf), -EIO, "I/O after a cut fails with -EIO");
	ok(strstr(d->err.msg, "power cut") != NULL, "and says why: %s", d->err.msg);
	is_int(blk_flush(d), -EIO, "so does a flush");
	is_int(blk_power_restore(d), 0, "restore");
	unsigned char all[N * SS];
	is_int(blk_read(d, 0, N, all), 0, "read after restore");
	ok(memcmp(all, ref, sizeof(all)) == 0, "%s: flushed data survived the cut", spec);
	blk_close(d);
}

/* A larger device: the tables grow to hundreds of lines, with write-back, a clone
 * taken half way (which must keep its own view) and FUA/discard/flush mixed in. */
static void reference_big(const char *order)
{
	char spec[128];
	snprintf(spec, sizeof(spec), "cache(size=256k,order=%s,seed=3) > mem(size=1M)", order);
	struct bdev *d = open_spec(spec), *c = NULL;
	tap_require(d, "open %s", spec);
	enum { N = 2048 };
	unsigned char *ref = calloc(N, SS), *snap = malloc((size_t)N * SS),
	              *all = malloc((size_t)N * SS), buf[8 * SS];
	struct bo_rng rng;
	bo_rng_seed(&rng, 9);
	bool same = true;
	int errors = 0;
	for (int op = 0; op < 20000; op++) {
		uint64_t lba = bo_rng_below(&rng, N - 8);
		uint32_t n = 1 + (uint32_t)bo_rng_below(&rng, 8);
		uint64_t k = bo_rng_below(&rng, 100);
		if (k < 60) {
			for (uint32_t i = 0; i < n; i++)
				fill(buf + i * SS, (unsigned char)(op + i + 1));
			errors += blk_write(d, lba, n, buf, k < 5 ? BLK_FUA : 0) != 0;
			memcpy(ref + lba * SS, buf, n * SS);
		} else if (k < 97) {
			errors += blk_read(d, lba, n, buf) != 0;
			same = same && memcmp(buf, ref + lba * SS, n * SS) == 0;
		} else if (k < 98) {
			errors += blk_flush(d) != 0;
		} else {
			errors += blk_discard(d, lba, n) != 0;
			memset(ref + lba * SS, 0, n * SS);
		}
		if (op == 10000) {
			errors += blk_clone(d, &c) != 0;
			memcpy(snap, ref, (size_t)N * SS);
		}
	}
	is_int(errors, 0, "%s: no I/O errors", spec);
	ok(same, "%s: every read saw the latest write", spec);
	blk_read(d, 0, N, all);
	ok(memcmp(all, ref, (size_t)N * SS) == 0, "%s: the whole device reads right", spec);
	blk_read(c, 0, N, all);
	ok(memcmp(all, snap, (size_t)N * SS) == 0, "%s: the clone kept its own view", spec);
	ok(stat(d, "dirty_sectors") <= 512, "never more dirty than the cache holds");
	blk_flush(c);
	blk_power_cut(c, &blk_chooser_zero, NULL);
	blk_power_restore(c);
	blk_read(c, 0, N, all);
	ok(memcmp(all, snap, (size_t)N * SS) == 0, "%s: the clone's flush made it durable", spec);
	blk_close(c);
	blk_close(d);
	free(ref);
	free(snap);
	free(all);
}

/* which of the first sectors reached the media after a zero cut */
static unsigned landed_mask(struct bdev *d, unsigned nsec)
{
	struct bdev *st;
	unsigned mask = 0;
	if (blk_clone(d, &st))
		return ~0u;
	blk_power_cut(st, &blk_chooser_zero, NULL);
	blk_power_restore(st);
	unsigned char b[SS];
	for (unsigned s = 0; s < nsec; s++) {
		blk_read(st, s, 1, b);
		if (b[0])
			mask |= 1u << s;
	}
	blk_close(st);
	return mask;
}

/* Eviction orders, on 4096-byte sectors so that a line is one sector. */
static unsigned char big_sec[4096];

static unsigned landed4k(struct bdev *d, unsigned nsec)
{
	struct bdev *st;
	unsigned mask = 0;
	if (blk_clone(d, &st))
		return ~0u;
	blk_power_cut(st, &blk_chooser_zero, NULL);
	blk_power_restore(st);
	for (unsigned s = 0; s < nsec; s++) {
		blk_read(st, s, 1, big_sec);
		if (big_sec[0])
			mask |= 1u << s;
	}
	blk_close(st);
	return mask;
}

static void put4k(struct bdev *d, uint64_t lba, unsigned char v)
{
	memset(big_sec, v, sizeof(big_sec));
	blk_write(d, lba, 1, big_sec, 0);
}

static void orders(void)
{
	/* 4 sectors of cache: the 5th new sector evicts one */
	struct bdev *d = open_spec("cache(size=16k,order=fifo) > mem(size=64k,sector=4096)");
	tap_require(d, "open fifo");
	static const unsigned fifo_seq[] = {3, 1, 7, 5, 2};
	for (int i = 0; i < 5; i++) {
		put4k(d, fifo_seq[i], (unsigned char)(i + 1));
		if (i == 1) /* re-dirtying keeps its place in the queue */
			put4k(d, 3, 9);
	}
	is_int(landed4k(d, 8), 1u << 3, "fifo: the first-dirtied sector was written back");
	is_int(stat(d, "writeback_sectors"), 1, "one write-back");
	put4k(d, 0, 1);
	put4k(d, 6, 1);
	is_int(landed4k(d, 8), 1u << 3 | 1u << 1 | 1u << 7, "fifo: then the next two in order");
	blk_close(d);

	d = open_spec("cache(size=16k,order=lba) > mem(size=64k,sector=4096)");
	tap_require(d, "open lba");
	static const unsigned lba_seq[] = {6, 2, 4, 3, 1};
	for (int i = 0; i < 5; i++)
		put4k(d, lba_seq[i], (unsigned char)(i + 1));
	is_int(landed4k(d, 8), 1u << 2, "lba: the lowest LBA from the head went first");
	put4k(d, 0, 9);
	is_int(landed4k(d, 8), 1u << 2 | 1u << 3, "lba: the elevator moves up, not back to 0");
	put4k(d, 7, 9);
	put4k(d, 5, 9);
	is_int(landed4k(d, 8), 1u << 2 | 1u << 3 | 1u << 4 | 1u << 6,
	       "lba: 4 then 6 (5 arrived behind the sweep)");
	put4k(d, 2, 9);
	is_int(landed4k(d, 8), 1u << 2 | 1u << 3 | 1u << 4 | 1u << 6 | 1u << 7,
	       "lba: 7 (0, 1 and 5 wait for the next sweep)");
	put4k(d, 3, 9);
	is_int(landed4k(d, 8), 1u << 2 | 1u << 3 | 1u << 4 | 1u << 6 | 1u << 7 | 1u << 0,
	       "lba: the sweep wraps round to 0");
	blk_close(d);

	unsigned m[3] = {0};
	for (int rep = 0; rep < 3; rep++) {
		d = open_spec(
		    rep < 2 ? "cache(size=16k,order=random,seed=1) > mem(size=64k,sector=4096)"
		            : "cache(size=16k,order=random,seed=2) > mem(size=64k,sector=4096)");
		for (int i = 0; i < 8; i++)
			put4k(d, (uint64_t)i, (unsigned char)(i + 1));
		m[rep] = landed4k(d, 8);
		blk_close(d);
	}
	ok(__builtin_popcount(m[0]) == 4, "random: four sectors written back (%#x)", m[0]);
	is_int(m[0], m[1], "random: the same seed gives the same order");
	diag("seed 1 wrote back %#x, seed 2 %#x", m[0], m[2]);

	/* 512-byte sectors: lines of up to 4 KiB (here 4 sectors: the cache's size) */
	unsigned char b[SS];
	d = open_spec("cache(size=2k) > mem(size=16k)");
	for (unsigned s = 0; s < 4; s++) {
		fill(b, 1);
		blk_write(d, s * 2, 1, b, 0); /* sectors 0, 2 (line 0), 4, 6 (line 1) */
	}
	fill(b, 2);
	blk_write(d, 9, 1, b, 0);
	is_int(landed_mask(d, 12), 1u << 0 | 1u << 2, "a whole line is written back at once");
	is_int(stat(d, "dirty_sectors"), 3, "three dirty sectors remain");
	blk_close(d);
}

static void flush_fua(void)
{
	unsigned char b[SS], r[SS];
	/* FUA does not order other writes, and only the FUA sector leaves the cache */
	struct bdev *d = open_spec("cache > mem(size=16k)");
	fill(b, 1);
	blk_write(d, 0, 1, b, 0);
	fill(b, 2);
	blk_write(d, 1, 1, b, BLK_FUA);
	is_int(landed_mask(d, 4), 1u << 1, "fua=honor: the FUA write, and only it, is durable");
	is_int(stat(d, "fua_writes"), 1, "counted as a FUA write");
	is_int(stat(d, "dirty_sectors"), 1, "the other write is still dirty");
	fill(b, 3);
	blk_write(d, 0, 1, b, BLK_FUA);
	is_int(stat(d, "dirty_sectors"), 0, "a FUA overwrite removes the stale cached copy");
	blk_read(d, 0, 1, r);
	ok(r[0] == 3, "and reads see the FUA data");
	blk_close(d);

	d = open_spec("cache(fua=ignore) > mem(size=16k)");
	fill(b, 2);
	blk_write(d, 1, 1, b, BLK_FUA);
	is_int(landed_mask(d, 4), 0, "fua=ignore: the FUA write can be lost");
	is_int(blk_flush(d), 0, "flush");
	is_int(landed_mask(d, 4), 1u << 1, "flush=honor still makes it durable");
	is_int(stat(d, "flushes"), 1, "one flush counted");
	blk_close(d);

	d = open_spec("cache(flush=ignore) > mem(size=16k)");
	fill(b, 2);
	blk_write(d, 1, 1, b, 0);
	is_int(blk_flush(d), 0, "flush=ignore: the flush succeeds");
	is_int(landed_mask(d, 4), 0, "and made nothing durable");
	is_int(stat(d, "dirty_bytes"), SS, "one dirty sector remains");
	blk_close(d);

	d = open_spec("cache(size=0,flush=ignore) > mem(size=16k)");
	fill(b, 2);
	blk_write(d, 1, 1, b, 0);
	is_int(landed_mask(d, 4), 1u << 1, "size=0: no cache, every write goes through");
	blk_close(d);
}

static void clones(void)
{
	unsigned char b[SS], r[SS];
	struct bdev *d = open_spec("cache > disk > mem(size=16k)"), *c;
	fill(b, 1);
	blk_write(d, 0, 1, b, 0);
	is_int(blk_clone(d, &c), 0, "clone");
	fill(b, 2);
	blk_write(c, 0, 1, b, 0);
	blk_write(c, 1, 1, b, 0);
	blk_read(d, 0, 1, r);
	ok(r[0] == 1, "the original does not see the clone's writes");
	is_int(stat(d, "dirty_sectors"), 1, "original: one dirty sector");
	is_int(stat(c, "dirty_sectors"), 2, "clone: two dirty sectors");
	blk_flush(c);
	blk_power_cut(d, &blk_chooser_zero, NULL);
	blk_power_restore(d);
	blk_read(d, 0, 1, r);
	ok(r[0] == 0, "cutting the original loses its dirty sector");
	blk_read(c, 0, 1, r);
	ok(r[0] == 2, "the clone is unaffected");
	ok(dev_stack_find(c, "mem", 0) != dev_stack_find(d, "mem", 0), "media are separate");
	blk_close(d);
	blk_close(c);
}

/* a cache of 1,000 dirty sectors: 1,000 independent decisions */
static void big(void)
{
	struct bdev *d = open_spec("cache(size=1M) > mem(size=1M)");
	unsigned char b[SS];
	for (int i = 0; i < 1000; i++) {
		fill(b, (unsigned char)(i | 1));
		blk_write(d, (uint64_t)i * 2, 1, b, 0);
	}
	struct dev_cut_space sp;
	is_int(dev_cut_space(d, NULL, &sp), 0, "space of 1000 dirty sectors");
	is_int(sp.decisions, 1000, "1000 decisions");
	ok(sp.outcomes == UINT64_MAX && sp.log2 > 999.9 && sp.log2 < 1000.1,
	   "2^1000 outcomes (saturated count, log2 %.1f)", sp.log2);
	/* 5,000 dirty sectors: more than a decision list holds, still counted */
	struct bdev *big5 = open_spec("cache(size=4M) > mem(size=4M)");
	for (int i = 0; i < 5000; i++) {
		fill(b, 1);
		blk_write(big5, (uint64_t)i, 1, b, 0);
	}
	is_int(dev_cut_space(big5, NULL, &sp), 0, "space of 5000 dirty sectors");
	is_int(sp.decisions, 5000, "5000 decisions counted");
	struct bdev *k5;
	is_int(dev_cut_outcome(big5, NULL, 5, &k5), 0, "outcome 5 of them");
	unsigned landed5 = 0;
	for (int i = 0; i < 8; i++) {
		blk_read(k5, (uint64_t)i, 1, b);
		landed5 |= (unsigned)(b[0] != 0) << i;
	}
	is_int(landed5, 5, "sectors 0 and 2 landed, as 5 = 0b101 says");
	blk_close(k5);
	blk_close(big5);
	struct bdev *st[3];
	unsigned char pat[3][1000];
	for (int k = 0; k < 3; k++) {
		is_int(dev_cut_sample(d, NULL, k == 2 ? 4 : 3, &st[k]), 0, "sample %d", k);
		for (int i = 0; i < 1000; i++) {
			blk_read(st[k], (uint64_t)i * 2, 1, b);
			pat[k][i] = b[0] != 0;
		}
		blk_close(st[k]);
	}
	int landed = 0;
	for (int i = 0; i < 1000; i++)
		landed += pat[0][i];
	ok(landed > 400 && landed < 600, "a random outcome lands about half (%d)", landed);
	ok(memcmp(pat[0], pat[1], 1000) == 0, "the same seed gives the same outcome");
	ok(memcmp(pat[0], pat[2], 1000) != 0, "another seed another");
	blk_close(d);
}

/* Whole lines written back are handed to mem (write_swap) and the cache reuses
 * the pages mem gives back: what mem holds must still be exactly what was
 * written, through many rounds of recycled buffers. */
static void handover(void)
{
	struct bdev *d = open_spec("cache(size=16k) > mem(size=256k)");
	struct bdev *m = blk_lower(d, 0);
	unsigned char b[4096], r[4096];
	int bad = 0;
	for (unsigned round = 0; round < 4; round++)
		for (unsigned pg = 0; pg < 64; pg++) {
			memset(b, (int)(round * 64 + pg), sizeof(b));
			b[0] = (unsigned char)round;
			blk_write(d, pg * 8, 8, b, 0);
		}
	blk_flush(d);
	for (unsigned pg = 0; pg < 64; pg++) {
		blk_read(m, pg * 8, 8, r);
		memset(b, (int)(3 * 64 + pg), sizeof(b));
		b[0] = 3;
		bad += memcmp(r, b, sizeof(b)) != 0;
	}
	is_int(bad, 0, "every page of mem holds the last write, after 256 handed-over lines");
	blk_close(d);

	/* a write-back that fails part-way: the lines written before it leave the
	 * cache (they are below now), the failed one and those after stay dirty */
	d = open_spec("cache(size=16k) > fault(rules=\"write-error lba=8-15\") > mem(size=64k)");
	for (unsigned pg = 0; pg < 3; pg++) {
		memset(b, 0x60 + (int)pg, sizeof(b));
		blk_write(d, pg * 8, 8, b, 0);
	}
	is_int(stat(d, "dirty_sectors"), 24, "three dirty lines");
	ok(blk_flush(d) < 0, "flush fails at the refused line");
	is_int(stat(d, "dirty_sectors"), 16, "the line written back left the cache");
	blk_read(d, 0, 8, r);
	ok(r[0] == 0x60, "and reads from below: %#x", r[0]);
	blk_read(d, 16, 8, r);
	ok(r[0] == 0x62, "the line after the failure is still cached: %#x", r[0]);
	blk_close(d);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The elevator's sweep is sorted by bo_sort_u64: it must agree with qsort on keys
 * spread over every byte, on keys sharing most bytes, and on duplicates. */
static void radix_sort(void)
{
	static uint64_t a[5000], b[5000], tmp[5000];
	const uint64_t masks[] = {~0ull, 0xff00, 0x00ff00ff000000ffull, 0x7};
	struct bo_rng rng;
	bo_rng_seed(&rng, 11);
	for (int k = 0; k < 4; k++) {
		size_t n = k == 3 ? 5000 : 1000 + (size_t)k * 1000;
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] = (bo_rng_next(&rng) & masks[k]) | 0x1000000000ull;
		bo_sort_u64(a, n, tmp);
		qsort(b, n, sizeof(*b), cmp_u64);
		ok(memcmp(a, b, n * sizeof(*a)) == 0,
		   "radix sort agrees with qsort (mask %#llx, %zu keys)",
		   (unsigned long long)masks[k], n);
	}
}

/* What one sector holds over every outcome of a cut: the set of first bytes. */
struct held {
	uint64_t lba;
	unsigned n;
	bool seen[256];
};

static int note_held(void *ctx, struct bdev *st, const struct blk_chooser_list *dec)
{
	(void)dec;
	struct held *h = ctx;
	unsigned char r[SS];
	if (blk_read(st, h->lba, 1, r) == 0)
		h->seen[r[0]] = true;
	h->n++;
	return 0;
}

/* The byte values sector lba may hold after a cut of d, as a string ("0" for
 * zero), and the number of outcomes; also checks the count against dev_cut_space. */
static unsigned held_at(struct bdev *d, uint64_t lba, char *out)
{
	struct held h = {.lba = lba};
	bool complete;
	int64_t n = blk_cut_foreach(d, NULL, 100000, note_held, &h, &complete);
	struct dev_cut_space sp;
	if (dev_cut_space(d, NULL, &sp) || (uint64_t)n != sp.outcomes || !complete)
		diag("outcomes %lld, dev_cut_space %llu", (long long)n,
		     (unsigned long long)sp.outcomes);
	char *o = out;
	for (int v = 0; v < 256; v++)
		if (h.seen[v])
			*o++ = v ? (char)v : '0';
	*o = 0;
	return (uint64_t)n == sp.outcomes ? h.n : 0;
}

static void put1(struct bdev *d, uint64_t lba, char v, unsigned flags)
{
	unsigned char b[SS];
	fill(b, (unsigned char)v);
	blk_write(d, lba, 1, b, flags);
}

/* Writes each byte of `vals` to sector 0 of a fresh lying cache with `versions`,
 * then checks what a cut may leave there. */
static void overwrites(const char *versions, const char *vals, unsigned want_n, const char *want,
                       const char *what)
{
	char spec[96], got[257];
	snprintf(spec, sizeof(spec), "cache(flush=ignore%s) > mem(size=16k)", versions);
	struct bdev *d = open_spec(spec);
	for (const char *v = vals; *v; v++)
		put1(d, 0, *v, 0);
	is_int(held_at(d, 0, got), want_n, "%s: %u outcomes", what, want_n);
	is_str(got, want, "%s: what sector 0 may hold", what);
	blk_close(d);
}

/* A sector overwritten while dirty: a drive may have written an older version back
 * before the overwrite came, so a cut may leave any of them (up to versions=). */
static void versions(void)
{
	char got[257];
	overwrites("", "ABC", 4, "0ABC", "three writes to one sector");
	overwrites(",versions=2", "ABC", 3, "0BC", "versions=2, the oldest forgotten");
	overwrites(",versions=1", "AB", 2, "0B", "versions=1, the newest only");
	/* many overwrites: the chain is cut back, the newest versions= are offered */
	overwrites("", "abcdefghijklmnopqrstuvwxyz", 5, "0wxyz", "26 writes, versions=4");
	struct bdev *d;

	/* a version belongs to the sectors it replaced: a multi-sector line */
	d = open_spec("cache(flush=ignore) > mem(size=16k)");
	unsigned char b8[8 * SS];
	memset(b8, 'A', sizeof(b8));
	blk_write(d, 0, 8, b8, 0);
	put1(d, 3, 'B', 0);
	is_int(held_at(d, 3, got), 128 * 3, "8 sectors, one overwritten: 2^7 x 3");
	is_str(got, "0AB", "the overwritten one: nothing, A or B");
	held_at(d, 4, got);
	is_str(got, "0A", "its neighbour: nothing or A");
	blk_close(d);

	/* flushed data is durable; only what came after is versioned */
	d = open_spec("cache > mem(size=16k)");
	put1(d, 0, 'A', 0);
	blk_flush(d);
	put1(d, 0, 'B', 0);
	put1(d, 0, 'C', 0);
	held_at(d, 0, got);
	is_str(got, "ABC", "after a flush of A: A, B or C, never zero");
	blk_close(d);

	/* a FUA write or a discard over a dirty sector ends its history */
	d = open_spec("cache(flush=ignore) > mem(size=16k)");
	put1(d, 0, 'A', 0);
	put1(d, 0, 'B', 0);
	put1(d, 0, 'C', BLK_FUA);
	put1(d, 0, 'D', 0);
	held_at(d, 0, got);
	is_str(got, "CD", "FUA C then D: C or D, never A or B");
	put1(d, 1, 'E', 0);
	put1(d, 1, 'F', 0);
	blk_discard(d, 1, 1);
	put1(d, 1, 'G', 0);
	held_at(d, 1, got);
	is_str(got, "0G", "discard then G: zero or G, never E or F");
	blk_close(d);

	/* clones share versions and stay independent */
	d = open_spec("cache(flush=ignore) > mem(size=16k)");
	struct bdev *c;
	put1(d, 0, 'A', 0);
	put1(d, 0, 'B', 0);
	tap_require(blk_clone(d, &c) == 0, "clone");
	put1(c, 0, 'C', 0);
	put1(c, 0, 'D', 0);
	put1(c, 0, 'E', 0);
	held_at(d, 0, got);
	is_str(got, "0AB", "the original keeps its versions");
	held_at(c, 0, got);
	is_str(got, "0BCDE", "the clone has its own (the newest four)");
	blk_close(c);
	held_at(d, 0, got);
	is_str(got, "0AB", "and still after the clone is gone");
	/* a flush-honouring settle writes the newest, leaving no versions */
	blk_settle(d);
	held_at(d, 0, got);
	is_str(got, "B", "settled: B");
	blk_close(d);

	struct bo_err err = {{0}};
	struct bdev *bad;
	ok(dev_stack_open_text("cache(versions=0) > mem", NULL, &bad, &err) == -EINVAL &&
	       strstr(err.msg, "versions"),
	   "versions=0 refused: %s", err.msg);
	ok(dev_stack_open_text("cache(versions=17) > mem", NULL, &bad, &err) == -EINVAL,
	   "versions=17 refused");
}

int main(void)
{
	static const char *const ords[] = {"fifo", "random", "lba"};
	static const char *const sizes[] = {"4k", "16k", "1M"};
	for (int o = 0; o < 3; o++)
		for (int s = 0; s < 3; s++)
			reference(ords[o], sizes[s]);
	for (int o = 0; o < 3; o++)
		reference_big(ords[o]);
	orders();
	flush_fua();
	clones();
	big();
	handover();
	radix_sort();
	versions();
	return tap_done();
}
