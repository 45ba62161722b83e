// SPDX-License-Identifier: GPL-2.0-or-later
/* cache.c — `cache`: a drive's volatile write cache in front of any device.
 *
 * Dirty data is kept in lines of up to 4 KiB (L sectors, L a power of two no
 * larger than the cache), each with a mask of its dirty sectors, found through an
 * open-addressing hash on the line number (O(1) lookups). Line buffers are
 * reference-counted and copied on write, so a clone (one per crash state) copies
 * only the line table. When the cache is full a line is written back in the
 * configured order: fifo (a ring, O(1)), random (seeded, O(1)) or lba (an elevator
 * sweep, O(log n) amortised). Flush (if honoured) writes everything back and
 * flushes below; FUA (if honoured) writes through. A write over dirty sectors
 * keeps the version it replaces (up to `versions` per sector): a real drive may
 * have written that one back before the overwrite came. At a power cut each dirty
 * sector independently holds its old contents, its newest version or one of its
 * older ones: one decision per dirty sector, in LBA order. Outcome space:
 * docs/models/cache.md. Line buffers and versions: cache_lines.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "dev/cache_int.h"
#include "dev/dev_int.h"

DEV_SINGLE_CHECK(struct cache_dev);

static int64_t find(const struct cache_dev *c, uint64_t no)
{
	if (!c->n)
		return -1;
	for (uint32_t s = slot_of(c, no);; s = (s + 1) & c->tmask) {
		const struct slot *t = &c->tab[s];
		if (!t->i1)
			return -1;
		if (t->no == no)
			return t->i1 - 1;
	}
}

static uint32_t find_slot(const struct cache_dev *c, uint64_t no)
{
	uint32_t s = slot_of(c, no);
	while (c->tab[s].i1 && c->tab[s].no != no)
		s = (s + 1) & c->tmask;
	return s;
}

/* ---- ring (fifo) ------------------------------------------------------------ */

static bool ring_live(const struct cache_dev *c, const struct ring_ent *e)
{
	int64_t i = find(c, e->no);
	return i >= 0 && c->lines[i].seq == e->seq;
}

static int ring_push(struct cache_dev *c, uint64_t no, uint64_t seq)
{
	if (c->rlen == c->rcap) {
		/* compact: live entries are fewer than lcap; the ring holds 2 lcap + 1 */
		struct ring_ent *r = malloc(c->rcap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		uint32_t w = 0;
		for (uint32_t k = 0; k < c->rlen; k++) {
			struct ring_ent e = c->ring[(c->rhead + k) % c->rcap];
			if (ring_live(c, &e))
				r[w++] = e;
		}
		free(c->ring);
		c->ring = r;
		c->rhead = 0;
		c->rlen = w;
	}
	c->ring[(c->rhead + c->rlen) % c->rcap] = (struct ring_ent){no, seq};
	c->rlen++;
	return 0;
}

/* ---- lines ------------------------------------------------------------------- */

static void remove_line(struct cache_dev *c, uint32_t i);

static int grow(struct cache_dev *c);

static int64_t insert(struct cache_dev *c, uint64_t no)
{
	if (c->n == c->lcap && grow(c))
		return -ENOMEM;
	struct lbuf *b = cache_buf_get(c);
	if (!b)
		return -ENOMEM;
	uint32_t i = c->n++;
	c->lines[i] = (struct line){.no = no, .seq = c->seq_next++, .buf = b, .old = NULL};
	c->tab[find_slot(c, no)] = (struct slot){no, i + 1};
	if (c->order == ORDER_FIFO && ring_push(c, no, c->lines[i].seq)) {
		remove_line(c, i);
		return -ENOMEM;
	}
	return i;
}

/* Backward-shift deletion of dense line i from the table; the last line moves
 * into i (its metadata only: buffers are pointers). */
static void remove_line(struct cache_dev *c, uint32_t i)
{
	c->ndirty -= bo_popcount64(c->lines[i].dirty);
	cache_buf_put(c, c->lines[i].buf);
	cache_ver_put(c, c->lines[i].old);
	uint32_t s = find_slot(c, c->lines[i].no);
	for (;;) {
		c->tab[s].i1 = 0;
		uint32_t j = s;
		for (;;) {
			j = (j + 1) & c->tmask;
			if (!c->tab[j].i1)
				goto moved;
			uint32_t k = slot_of(c, c->tab[j].no);
			/* the entry at j may fill the hole at s unless its home lies in (s, j] */
			bool home_between = s <= j ? (k > s && k <= j) : (k > s || k <= j);
			if (!home_between) {
				c->tab[s] = c->tab[j];
				s = j;
				break;
			}
		}
	}
moved:;
	uint32_t last = c->n - 1;
	if (i != last) {
		c->tab[find_slot(c, c->lines[last].no)].i1 = i + 1;
		c->lines[i] = c->lines[last];
	}
	c->n--;
}

static void clear(struct cache_dev *c)
{
	for (uint32_t i = 0; i < c->n; i++) {
		cache_buf_put(c, c->lines[i].buf);
		cache_ver_put(c, c->lines[i].old);
	}
	if (c->n)
		memset(c->tab, 0, ((size_t)c->tmask + 1) * sizeof(*c->tab));
	c->n = c->ndirty = 0;
	c->rhead = c->rlen = 0;
	c->spos = c->slen = 0;
}

static inline uint32_t full_mask(const struct cache_dev *c)
{
	return c->L == 32 ? ~0u : (1u << c->L) - 1;
}

/* Writes the sectors of `mask` in buffer b of line `no` to the lower device, one
 * write per run; every run is tried, the first error is returned. The caller
 * drops the buffer once it is written back, so a whole line whose buffer no clone
 * or version shares is handed to the device below rather than copied (write_swap;
 * the buffer then holds whatever the device gave back, and the line's data is
 * gone). */
static int write_runs(struct cache_dev *c, uint64_t no, struct lbuf *b, uint32_t mask,
                      bool may_swap)
{
	size_t ss = c->dev.sector_size;
	uint32_t k = 0;
	int first = 0;
	while (mask >> k) {
		if (!(mask >> k & 1)) {
			k++;
			continue;
		}
		uint32_t e = k;
		while (e < c->L && (mask >> e & 1))
			e++;
		uint64_t lba = (no << c->lshift) + k;
		int rc;
		if (may_swap && mask == full_mask(c) && b->ref == 1)
			rc = blk_write_swap(c->lower, lba, c->L, (void **)&b->data, 0);
		else
			rc = blk_write(c->lower, lba, e - k, b->data + k * ss, 0);
		uint64_t bad = lba;
		if (rc && e - k > 1) {
			/* sector by sector, so one refused sector does not take its
			 * neighbours with it; the first error is reported */
			rc = 0;
			for (uint32_t j = k; j < e; j++) {
				int r1 = blk_write(c->lower, lba + j - k, 1, b->data + j * ss, 0);
				if (r1 && !rc) {
					rc = r1;
					bad = lba + j - k;
				}
			}
		}
		if (rc && !first)
			first = bo_errf(&c->dev.err, rc, "cache: write-back of sector %llu: %s",
			                (unsigned long long)bad, bo_errstr(&c->lower->err, rc));
		else if (!rc)
			c->writebacks += e - k;
		k = e;
	}
	return first;
}

/* Writes the newest data of line i's sectors in `mask` back (the line is dropped
 * afterwards by every caller). */
static int write_mask(struct cache_dev *c, uint32_t i, uint32_t mask)
{
	return write_runs(c, c->lines[i].no, c->lines[i].buf, mask, true);
}

static int cmp_line(const void *a, const void *b, void *ctx)
{
	const struct cache_dev *c = ctx;
	uint64_t x = c->lines[*(const uint32_t *)a].no, y = c->lines[*(const uint32_t *)b].no;
	return x < y ? -1 : x > y;
}

/* scratch[0..n) = every line, ascending */
static void sort_lines(struct cache_dev *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		c->scratch[i] = i;
	qsort_r(c->scratch, c->n, sizeof(*c->scratch), cmp_line, c);
}

/* The line to write back next, by the configured order. */
static uint32_t victim(struct cache_dev *c)
{
	if (c->order == ORDER_RANDOM)
		return (uint32_t)bo_rng_below(&c->rng, c->n);
	if (c->order == ORDER_FIFO) {
		while (c->rlen) {
			struct ring_ent e = c->ring[c->rhead];
			c->rhead = (c->rhead + 1) % c->rcap;
			c->rlen--;
			int64_t i = find(c, e.no);
			if (i >= 0 && c->lines[i].seq == e.seq)
				return (uint32_t)i;
		}
		return 0; /* not reached: every line is in the ring */
	}
	for (;;) {
		while (c->spos < c->slen) {
			uint64_t no = c->sweep[c->spos++];
			int64_t i = find(c, no);
			if (i >= 0) {
				c->head = no + 1;
				return (uint32_t)i;
			}
		}
		/* a new sweep from the head upwards, or from 0 when nothing is above it */
		c->spos = c->slen = 0;
		for (uint32_t i = 0; i < c->n; i++)
			if (c->lines[i].no >= c->head)
				c->sweep[c->slen++] = c->lines[i].no;
		if (!c->slen) {
			c->head = 0;
			for (uint32_t i = 0; i < c->n; i++)
				c->sweep[c->slen++] = c->lines[i].no;
		}
		bo_sort_u64(c->sweep, c->slen, c->sweep + c->lcap);
	}
}

static int evict_one(struct cache_dev *c)
{
	uint32_t i = victim(c);
	int rc = write_mask(c, i, c->lines[i].dirty);
	if (rc)
		return rc;
	/* The buffer the medium gave back is the one the write that made room will
	 * fill (buf_get takes the last freed). It is cold: start fetching it now, so
	 * that its misses overlap this bookkeeping rather than fill the store buffer
	 * behind the copy, which stalled every store after it. The first 512 bytes
	 * start the hardware prefetcher on the rest; more blocks on the CPU's miss
	 * buffers (medians of 10 runs of cache > mem: 256 bytes 3.81M writes/s, 512
	 * 3.98M, 1024 3.73M; bare mem 5.43M). With it, bench_dev's cache rows went
	 * from 1.56-2.27x bare mem to 1.26-1.48x. */
	struct lbuf *b = c->lines[i].buf;
	size_t ahead = line_bytes(c) < 512 ? line_bytes(c) : 512;
	if (b->ref == 1 && b->data)
		for (size_t off = 0; off < ahead; off += 64)
			__builtin_prefetch(b->data + off, 1);
	remove_line(c, i);
	return 0;
}

/* Drops the sectors of [lba, lba+count) from line i (removing it if nothing
 * dirty is left): their cached copies are stale or discarded. */
static void trim_line(struct cache_dev *c, uint32_t i, uint64_t lba, uint32_t count)
{
	struct line *ln = &c->lines[i];
	uint64_t base = ln->no << c->lshift;
	uint32_t keep = 0;
	for (uint32_t k = 0; k < c->L; k++)
		if (base + k < lba || base + k - lba >= count)
			keep |= 1u << k;
	if (!(ln->dirty & keep)) {
		remove_line(c, i);
		return;
	}
	c->ndirty -= bo_popcount64(ln->dirty & ~keep);
	ln->dirty &= keep;
	/* older versions of the dropped sectors are history a later write must not
	 * bring back (a FUA write or a discard came after them) */
	bool touched = false;
	for (const struct ver *v = ln->old; v && !touched; v = v->next)
		touched = (v->mask & ~keep) != 0;
	if (touched) {
		int rc = 0;
		struct ver *n = cache_ver_copy(c, ln->old, ~0u, keep, &rc);
		cache_ver_put(c, ln->old);
		/* out of memory: the versions are forgotten, which only narrows what a
		 * cut offers (the newest data is intact) */
		ln->old = rc ? NULL : n;
	}
}

static void drop_range(struct cache_dev *c, uint64_t lba, uint32_t count)
{
	uint64_t first = lba >> c->lshift, last = (lba + count - 1) >> c->lshift;
	if (last - first + 1 <= c->n) {
		for (uint64_t no = first; no <= last; no++) {
			int64_t i = find(c, no);
			if (i >= 0)
				trim_line(c, (uint32_t)i, lba, count);
		}
		return;
	}
	/* a range wider than the cache: walk the lines instead (downwards, so the
	 * line moved into a removed one's place has been seen already) */
	for (uint32_t i = c->n; i-- > 0;)
		if (c->lines[i].no >= first && c->lines[i].no <= last)
			trim_line(c, i, lba, count);
}

static int cache_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct cache_dev *c = (struct cache_dev *)d;
	size_t ss = d->sector_size;
	unsigned char *out = buf;
	c->reads++;
	if (!c->n) {
		int rc = blk_read(c->lower, lba, count, buf);
		return rc ? dev_single_err(d, rc) : 0;
	}
	uint32_t k = 0, miss = 0; /* sectors [k-miss, k) are a run still to read below */
	while (k <= count) {
		const struct line *ln = NULL;
		if (k < count) {
			int64_t i = find(c, (lba + k) >> c->lshift);
			ln = i >= 0 ? &c->lines[i] : NULL;
		}
		uint32_t off = (uint32_t)((lba + k) & (c->L - 1));
		bool hit = ln && (ln->dirty >> off & 1);
		if ((hit || k == count) && miss) {
			int rc = blk_read(c->lower, lba + k - miss, miss, out + (k - miss) * ss);
			if (rc)
				return bo_errf(&d->err, rc, "cache: %s",
				               bo_errstr(&c->lower->err, rc));
			miss = 0;
		}
		if (k == count)
			break;
		if (hit) {
			memcpy(out + k * ss, ln->buf->data + off * ss, ss);
			c->read_hits++;
		} else {
			miss++;
		}
		k++;
	}
	return 0;
}

/* Known only when the cache holds no line at all (as after a power cut): reads then
 * go below whole. */
static bool cache_reads_zero(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct cache_dev *c = (struct cache_dev *)d;
	return !c->n && blk_reads_zero(c->lower, lba, count);
}

static int cache_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf,
                       unsigned flags)
{
	struct cache_dev *c = (struct cache_dev *)d;
	size_t ss = d->sector_size;
	const unsigned char *in = buf;
	c->writes++;
	if (flags & BLK_FUA)
		c->fua_writes++;
	if (c->cap == 0 || ((flags & BLK_FUA) && c->fua_honor)) {
		/* FUA is durable on completion and orders nothing else: only the sectors
		 * it overwrites leave the cache */
		int rc = blk_write(c->lower, lba, count, buf, c->fua_honor ? flags : 0);
		if (rc)
			return dev_single_err(d, rc);
		if (c->n)
			drop_range(c, lba, count);
		return 0;
	}
	while (count) {
		uint64_t no = lba >> c->lshift;
		uint32_t off = (uint32_t)(lba & (c->L - 1));
		uint32_t k = c->L - off < count ? c->L - off : count;
		uint32_t mask = (k == 32 ? ~0u : ((1u << k) - 1)) << off;
		int64_t i = find(c, no);
		for (;;) {
			uint32_t have = i >= 0 ? c->lines[i].dirty : 0;
			if (c->ndirty + bo_popcount64(mask & ~have) <= c->cap)
				break;
			int rc = evict_one(c);
			if (rc)
				return rc;
			/* eviction only removes lines: one that was missing still is, one
			 * that was there may have moved or gone */
			if (i >= 0)
				i = find(c, no);
		}
		if (i < 0) {
			i = insert(c, no);
			if (i < 0)
				return bo_errf(&d->err, -ENOMEM, "cache: out of memory");
		}
		struct line *ln = &c->lines[i];
		uint32_t over = mask & ln->dirty;
		if (over && c->versions > 1) {
			if (cache_keep_version(c, ln, mask, over))
				return bo_errf(&d->err, -ENOMEM, "cache: out of memory");
		} else if (ln->buf->ref > 1) {
			/* shared with a clone: copy on write */
			struct lbuf *b = cache_buf_get(c);
			if (!b)
				return bo_errf(&d->err, -ENOMEM, "cache: out of memory");
			memcpy(b->data, ln->buf->data, line_bytes(c));
			ln->buf->ref--;
			ln->buf = b;
		}
		memcpy(ln->buf->data + off * ss, in, k * ss);
		c->ndirty += bo_popcount64(mask & ~ln->dirty);
		ln->dirty |= mask;
		in += k * ss;
		lba += k;
		count -= k;
	}
	return 0;
}

/* Writes every line back in LBA order. On an error the lines already written
 * back leave the cache (they are on the device below, and their buffers may have
 * gone with them); the rest stay dirty. */
static int write_back_all(struct cache_dev *c)
{
	sort_lines(c);
	for (uint32_t k = 0; k < c->n; k++) {
		struct line *ln = &c->lines[c->scratch[k]];
		int rc = write_mask(c, c->scratch[k], ln->dirty);
		if (rc) {
			/* downwards, so a line moved into a removed one's place was seen */
			for (uint32_t j = c->n; j-- > 0;)
				if (!c->lines[j].dirty)
					remove_line(c, j);
			return rc;
		}
		c->ndirty -= bo_popcount64(ln->dirty);
		ln->dirty = 0;
	}
	clear(c);
	return 0;
}

static int cache_flush(struct bdev *d)
{
	struct cache_dev *c = (struct cache_dev *)d;
	c->flushes++;
	if (!c->flush_honor)
		return 0; /* the lying drive: acknowledges, keeps everything volatile */
	int rc = write_back_all(c);
	if (rc)
		return rc;
	rc = blk_flush(c->lower);
	if (rc)
		return bo_errf(&d->err, rc, "cache: flush: %s", bo_errstr(&c->lower->err, rc));
	return 0;
}

/* Idle: even a drive that lies about flushes writes its cache back eventually. */
static int cache_settle(struct bdev *d)
{
	return write_back_all((struct cache_dev *)d);
}

static int cache_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct cache_dev *c = (struct cache_dev *)d;
	if (c->n)
		drop_range(c, lba, count);
	int rc = blk_discard(c->lower, lba, count);
	return rc ? dev_single_err(d, rc) : 0;
}

static void cache_free(struct cache_dev *c)
{
	if (c->lines)
		for (uint32_t i = 0; i < c->n; i++) {
			cache_buf_put(c, c->lines[i].buf);
			cache_ver_put(c, c->lines[i].old);
		}
	for (unsigned i = 0; i < c->nfree; i++)
		cache_buf_free(c->freebuf[i]);
	while (c->freever) {
		struct ver *v = c->freever;
		c->freever = v->next;
		free(v);
	}
	free(c->lines);
	free(c->tab);
	free(c->ring);
	free(c->sweep);
	free(c->scratch);
	free(c);
}

static void cache_close(struct bdev *d)
{
	struct cache_dev *c = (struct cache_dev *)d;
	blk_close(c->lower);
	cache_free(c);
}

/* Tables for `want` lines (at least 16): the line table, its hash (load <= 1/2),
 * the fifo ring or the elevator sweep. Sized by what is dirty, not by the cache's
 * capacity, so that cloning a large cache holding little is cheap. */
static int cache_alloc(struct cache_dev *c, uint32_t want)
{
	c->lcap = 16;
	while (c->lcap < want)
		c->lcap *= 2;
	c->tbits = 1;
	while ((1u << c->tbits) < 2 * c->lcap)
		c->tbits++;
	c->tmask = (1u << c->tbits) - 1;
	c->lines = malloc(c->lcap * sizeof(*c->lines));
	c->tab = calloc((size_t)c->tmask + 1, sizeof(*c->tab));
	c->scratch = malloc(c->lcap * sizeof(*c->scratch));
	if (!c->lines || !c->tab || !c->scratch)
		return -ENOMEM;
	if (c->order == ORDER_FIFO) {
		c->rcap = 2 * c->lcap + 1;
		c->ring = malloc(c->rcap * sizeof(*c->ring));
		if (!c->ring)
			return -ENOMEM;
	}
	if (c->order == ORDER_LBA) {
		c->sweep = malloc(2 * c->lcap * sizeof(*c->sweep)); /* and sort room */
		if (!c->sweep)
			return -ENOMEM;
	}
	return 0;
}

static void rehash(struct cache_dev *c)
{
	memset(c->tab, 0, ((size_t)c->tmask + 1) * sizeof(*c->tab));
	for (uint32_t i = 0; i < c->n; i++)
		c->tab[find_slot(c, c->lines[i].no)] = (struct slot){c->lines[i].no, i + 1};
}

/* Copies the live part of src's ring (in order) into dst's, from its start. */
static void ring_copy(struct cache_dev *dst, const struct cache_dev *src, struct ring_ent *from)
{
	uint32_t w = 0;
	for (uint32_t k = 0; k < src->rlen; k++) {
		struct ring_ent e = from[(src->rhead + k) % src->rcap];
		if (ring_live(dst, &e))
			dst->ring[w++] = e;
	}
	dst->rhead = 0;
	dst->rlen = w;
}

/* Copies the rest of src's sweep that is still dirty into dst's. */
static void sweep_copy(struct cache_dev *dst, const struct cache_dev *src, uint64_t *from)
{
	uint32_t w = 0;
	for (uint32_t k = src->spos; k < src->slen; k++)
		if (find(dst, from[k]) >= 0)
			dst->sweep[w++] = from[k];
	dst->spos = 0;
	dst->slen = w;
}

static int grow(struct cache_dev *c)
{
	struct cache_dev old = *c;
	struct cache_dev n = *c;
	n.lines = NULL;
	n.tab = NULL;
	n.scratch = NULL;
	n.ring = NULL;
	n.sweep = NULL;
	if (cache_alloc(&n, c->lcap * 2)) {
		free(n.lines);
		free(n.tab);
		free(n.scratch);
		free(n.ring);
		free(n.sweep);
		return -ENOMEM;
	}
	memcpy(n.lines, c->lines, c->n * sizeof(*c->lines));
	rehash(&n);
	if (c->ring)
		ring_copy(&n, &old, old.ring);
	if (c->sweep)
		sweep_copy(&n, &old, old.sweep);
	free(c->lines);
	free(c->tab);
	free(c->scratch);
	free(c->ring);
	free(c->sweep);
	*c = n;
	return 0;
}

static int cache_clone(struct bdev *d, struct bdev **out)
{
	struct cache_dev *c = (struct cache_dev *)d;
	struct cache_dev *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *c;
	n->lines = NULL;
	n->tab = NULL;
	n->scratch = NULL;
	n->ring = NULL;
	n->sweep = NULL;
	n->lower = NULL;
	n->nfree = 0;
	n->freever = NULL;
	n->nfreever = 0;
	n->n = 0;
	int rc = cache_alloc(n, c->n);
	if (rc == 0)
		rc = blk_clone(c->lower, &n->lower);
	if (rc) {
		if (rc != -ENOMEM)
			dev_single_err(d, rc);
		cache_free(n);
		return rc;
	}
	/* lines share their buffers (copied on write); the tables are rebuilt */
	n->n = c->n;
	memcpy(n->lines, c->lines, c->n * sizeof(*c->lines));
	for (uint32_t i = 0; i < c->n; i++) {
		c->lines[i].buf->ref++;
		if (c->lines[i].old)
			c->lines[i].old->ref++;
	}
	rehash(n);
	if (c->ring)
		ring_copy(n, c, c->ring);
	if (c->sweep)
		sweep_copy(n, c, c->sweep);
	*out = &n->dev;
	return 0;
}

static int cache_power_cut(struct bdev *d, struct blk_chooser *ch,
                           const struct blk_inflight *inflight)
{
	struct cache_dev *c = (struct cache_dev *)d;
	sort_lines(c);
	const struct ver *vers[MAX_VERSIONS];
	uint32_t from[MAX_VERSIONS]; /* sectors landing with each older version */
	for (uint32_t k = 0; k < c->n; k++) {
		uint32_t i = c->scratch[k], landed = 0, nv = 0;
		const struct line *ln = &c->lines[i];
		for (const struct ver *v = ln->old; v && nv < c->versions - 1; v = v->next) {
			vers[nv] = v;
			from[nv++] = 0;
		}
		for (uint32_t b = 0; b < c->L; b++) {
			if (!(ln->dirty >> b & 1))
				continue;
			/* 0: nothing landed, 1: the newest data, 2.. its older versions,
			 * newest first */
			uint32_t h = 0, at[MAX_VERSIONS];
			for (uint32_t j = 0; j < nv; j++)
				if (vers[j]->mask >> b & 1)
					at[h++] = j;
			uint64_t x = h ? blk_choose(ch, 2 + h,
			                            "cache: dirty sector: none|newest|an "
			                            "older version reached the media")
			               : blk_choose(ch, 2, "cache: dirty sector reached the media");
			if (x == 1)
				landed |= 1u << b;
			else if (x >= 2)
				from[at[x - 2]] |= 1u << b;
		}
		/* a write-back the device below refuses (a fault rule) simply did not
		 * land: the power was going anyway. Versions are shared: never handed
		 * over. */
		for (uint32_t j = 0; j < nv; j++)
			if (from[j] &&
			    write_runs(c, ln->no, vers[j]->buf, from[j], false) == -ENOMEM)
				return -ENOMEM;
		int rc = write_mask(c, i, landed);
		if (rc == -ENOMEM)
			return rc;
	}
	clear(c);
	/* the interrupted write was on its way down: the device below decides */
	return blk_power_cut(c->lower, ch, inflight);
}

static void cache_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct cache_dev *c = (struct cache_dev *)d;
	emit(ctx, "reads", c->reads);
	emit(ctx, "read_hit_sectors", c->read_hits);
	emit(ctx, "writes", c->writes);
	emit(ctx, "fua_writes", c->fua_writes);
	emit(ctx, "flushes", c->flushes);
	emit(ctx, "dirty_sectors", c->ndirty);
	emit(ctx, "dirty_bytes", (uint64_t)c->ndirty * d->sector_size);
	emit(ctx, "writeback_sectors", c->writebacks);
}

static const struct bdev_ops cache_ops = {
    .read = cache_read,
    .write = cache_write,
    .flush = cache_flush,
    .settle = cache_settle,
    .discard = cache_discard,
    .close = cache_close,
    .clone = cache_clone,
    .power_cut = cache_power_cut,
    .power_restore = dev_single_power_restore,
    .lower = dev_single_lower,
    .stats = cache_stats,
    .reads_zero = cache_reads_zero,
};

static const char *const honor_ignore[] = {"honor", "ignore", NULL};
static const char *const orders[] = {"fifo", "random", "lba", NULL};

static int cache_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                      struct bdev **out, struct bo_err *err)
{
	uint64_t size, seed, versions;
	int fl, fu, order;
	int rc = dev_arg_size(a, "size", &size, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "flush", honor_ignore, &fl, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "fua", honor_ignore, &fu, err);
	if (rc == 0)
		rc = dev_arg_enum(a, "order", orders, &order, err);
	if (rc == 0)
		rc = dev_arg_u64(a, "seed", &seed, err);
	if (rc == 0)
		rc = dev_arg_u64(a, "versions", &versions, err);
	if (rc)
		return rc;
	if (versions < 1 || versions > MAX_VERSIONS)
		return bo_errf(err, -EINVAL, "cache: versions=%llu: must be 1 to %d",
		               (unsigned long long)versions, MAX_VERSIONS);
	if (nlowers != 1)
		return bo_errf(err, -EINVAL, "cache: takes one lower device");
	struct bdev *lower = lowers[0];
	uint64_t cap = size / lower->sector_size;
	if (cap > (1u << 28))
		return bo_errf(err, -EINVAL, "cache: size %llu bytes is more than 2^28 sectors",
		               (unsigned long long)size);
	struct cache_dev *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	blk_init(&c->dev, &cache_ops, "cache", lower->sector_size, lower->nr_sectors);
	c->cap = (uint32_t)cap;
	/* lines of up to a page (their buffers), never larger than the cache itself */
	c->L = 1;
	c->lshift = 0;
	while (c->L * 2 * lower->sector_size <= BLK_PAGE_BYTES && c->L * 2 <= c->cap) {
		c->L *= 2;
		c->lshift++;
	}
	c->flush_honor = fl == 0;
	c->fua_honor = fu == 0;
	c->order = order;
	c->versions = (uint32_t)versions;
	bo_rng_seed(&c->rng, seed);
	if (cache_alloc(c, 0)) {
		cache_free(c);
		return bo_errf(err, -ENOMEM, "cache: cannot allocate its tables");
	}
	c->lower = lower;
	*out = &c->dev;
	return 0;
}

static const struct dev_param cache_params[] = {
    {"size", "1M",
     "capacity of the volatile cache in bytes, at most 4G; 0 = no cache (write-through)",
     DEV_PT_SIZE, NULL, 4ull << 30, DEV_RAM_ALWAYS},
    {"flush", "honor",
     "honor: flush writes back and flushes below; ignore: a drive lying about flushes", DEV_PT_ENUM,
     honor_ignore},
    {"fua", "honor", "honor: a FUA write goes through to the media; ignore: cached like any write",
     DEV_PT_ENUM, honor_ignore},
    {"order", "fifo", "write-back order when full: fifo|random (seeded)|lba (elevator)",
     DEV_PT_ENUM, orders},
    {"seed", "0", "seed of the random write-back order", DEV_PT_U64},
    {"versions", "4",
     "versions of a sector overwritten while dirty that a power cut may leave (1 = newest only)",
     DEV_PT_U64},
    {NULL},
};

const struct dev_model dev_model_cache = {
    .name = "cache",
    .summary = "volatile write cache: unflushed writes may or may not reach the media at a "
               "power cut",
    .params = cache_params,
    .min_lowers = 1,
    .max_lowers = 1,
    .open = cache_open,
};
