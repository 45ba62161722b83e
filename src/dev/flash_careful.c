// SPDX-License-Identifier: GPL-2.0-or-later
/* flash_careful.c — the careful FTL of a good SSD: page-mapped, every write goes out of
 * place into a log, and the map commit is atomic because it IS the page program: each
 * page's spare area records {sequence number, logical page, crc}, and on power-on the
 * map is rebuilt by taking, per logical page, the valid spare with the highest
 * sequence number. Garbage collection copies valid pages (with new sequence numbers)
 * before it erases, so no cut at any micro-step can lose a sector that was not being
 * written. Greedy victim choice (fewest valid pages), free blocks reused in FIFO order
 * (dynamic wear levelling) and cold blocks moved when wear drifts (static). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/util.h"
#include "dev/flash_int.h"

enum { B_FREE, B_ACTIVE, B_FULL, B_BAD, B_MOVING };

#define WL_PERIOD 8  /* erases between static wear-levelling checks */
#define WL_DELTA  16 /* erase-count spread that makes cold data move */

struct cblk {
	uint32_t valid, wp, prev, next;
	uint8_t state;
};

struct careful {
	uint32_t *l2p;    /* logical page -> physical page, FLASH_NONE unmapped */
	uint32_t *p2l;    /* physical page -> logical page, FLASH_NONE not valid */
	struct cblk *b;   /* per erase block */
	uint32_t *bucket; /* ppb + 1 list heads: FULL blocks by valid count */
	uint32_t *freeq;  /* ring of free blocks, oldest erased first */
	uint32_t fhead, fcount;
	uint32_t active; /* block being programmed, FLASH_NONE if none */
	uint64_t seq;    /* last sequence number used */
	uint32_t erases_since_wl;
	uint32_t max_ec;            /* highest erase count of a good block */
	uint32_t wl_floor;          /* no good block has fewer erases (from the last scan) */
	unsigned char *buf, *gcbuf; /* scratch */
};

static void careful_free(struct flash *f)
{
	struct careful *c = f->fs;
	free(c->l2p);
	free(c->p2l);
	free(c->b);
	free(c->bucket);
	free(c->freeq);
	free(c->buf);
	free(c->gcbuf);
	free(c);
	f->fs = NULL;
}

static int careful_init(struct flash *f)
{
	struct careful *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	f->fs = c;
	c->l2p = malloc(f->nlpn * sizeof(*c->l2p));
	c->p2l = malloc(f->nppn * sizeof(*c->p2l));
	c->b = calloc(f->nblocks, sizeof(*c->b));
	c->bucket = malloc((f->ppb + 1) * sizeof(*c->bucket));
	c->freeq = malloc(f->nblocks * sizeof(*c->freeq));
	c->buf = malloc(f->p.page_size);
	c->gcbuf = malloc(f->p.page_size);
	return c->l2p && c->p2l && c->b && c->bucket && c->freeq && c->buf && c->gcbuf ? 0
	                                                                               : -ENOMEM;
}

static int careful_clone(const struct flash *f, struct flash *copy)
{
	int rc = careful_init(copy);
	if (rc)
		return rc;
	const struct careful *c = f->fs;
	struct careful *n = copy->fs;
	memcpy(n->l2p, c->l2p, f->nlpn * sizeof(*c->l2p));
	memcpy(n->p2l, c->p2l, f->nppn * sizeof(*c->p2l));
	memcpy(n->b, c->b, f->nblocks * sizeof(*c->b));
	memcpy(n->bucket, c->bucket, (f->ppb + 1) * sizeof(*c->bucket));
	memcpy(n->freeq, c->freeq, f->nblocks * sizeof(*c->freeq));
	n->fhead = c->fhead;
	n->fcount = c->fcount;
	n->active = c->active;
	n->seq = c->seq;
	n->erases_since_wl = c->erases_since_wl;
	n->max_ec = c->max_ec;
	n->wl_floor = c->wl_floor;
	return 0;
}

static void bucket_add(struct careful *c, uint32_t blk)
{
	struct cblk *b = &c->b[blk];
	b->prev = FLASH_NONE;
	b->next = c->bucket[b->valid];
	if (b->next != FLASH_NONE)
		c->b[b->next].prev = blk;
	c->bucket[b->valid] = blk;
}

static void bucket_del(struct careful *c, uint32_t blk)
{
	struct cblk *b = &c->b[blk];
	if (b->prev != FLASH_NONE)
		c->b[b->prev].next = b->next;
	else
		c->bucket[b->valid] = b->next;
	if (b->next != FLASH_NONE)
		c->b[b->next].prev = b->prev;
}

static void free_push(struct flash *f, uint32_t blk)
{
	struct careful *c = f->fs;
	c->freeq[(c->fhead + c->fcount) % f->nblocks] = blk;
	c->fcount++;
	c->b[blk] = (struct cblk){0, 0, FLASH_NONE, FLASH_NONE, B_FREE};
}

static void invalidate(struct flash *f, uint32_t ppn)
{
	struct careful *c = f->fs;
	uint32_t blk = ppn / f->ppb;
	c->p2l[ppn] = FLASH_NONE;
	if (c->b[blk].state == B_FULL) {
		bucket_del(c, blk);
		c->b[blk].valid--;
		bucket_add(c, blk);
	} else {
		c->b[blk].valid--;
	}
}

static void open_active(struct flash *f)
{
	struct careful *c = f->fs;
	uint32_t blk = c->freeq[c->fhead];
	c->fhead = (c->fhead + 1) % f->nblocks;
	c->fcount--;
	c->b[blk] = (struct cblk){0, 0, FLASH_NONE, FLASH_NONE, B_ACTIVE};
	c->active = blk;
}

/* Programs lpn's new version at the log head; the caller made sure there is one. */
static int program(struct flash *f, uint32_t lpn, const void *data)
{
	struct careful *c = f->fs;
	if (c->active == FLASH_NONE)
		open_active(f);
	struct cblk *b = &c->b[c->active];
	uint32_t ppn = c->active * f->ppb + b->wp;
	struct flash_spare sp = {c->seq + 1, lpn, flash_spare_crc(c->seq + 1, lpn)};
	int rc = flash_nand_program(f, ppn, data, &sp);
	if (rc)
		return rc;
	c->seq++;
	b->wp++;
	if (c->l2p[lpn] != FLASH_NONE)
		invalidate(f, c->l2p[lpn]);
	c->l2p[lpn] = ppn;
	c->p2l[ppn] = lpn;
	b->valid++;
	if (b->wp == f->ppb) {
		b->state = B_FULL;
		bucket_add(c, c->active);
		c->active = FLASH_NONE;
	}
	return 0;
}

static uint64_t room(const struct flash *f)
{
	const struct careful *c = f->fs;
	uint64_t r = (uint64_t)c->fcount * f->ppb;
	if (c->active != FLASH_NONE)
		r += f->ppb - c->b[c->active].wp;
	return r;
}

/* Copies the block's valid pages to the log head, then erases it. A block that fails
 * its erase goes bad with nothing left on it that is not also elsewhere. */
static int move_block(struct flash *f, uint32_t victim)
{
	struct careful *c = f->fs;
	bucket_del(c, victim);
	c->b[victim].state = B_MOVING;
	for (uint32_t i = 0; i < f->ppb && c->b[victim].valid; i++) {
		uint32_t ppn = victim * f->ppb + i;
		uint32_t lpn = c->p2l[ppn];
		if (lpn == FLASH_NONE)
			continue;
		int rc = flash_nand_read(f, ppn, c->gcbuf);
		if (rc == 0)
			rc = program(f, lpn, c->gcbuf);
		if (rc) {
			c->b[victim].state = B_FULL;
			bucket_add(c, victim);
			return rc;
		}
		f->st.gc_copies++;
	}
	int rc = flash_nand_erase(f, victim, 0, 0);
	if (rc == -EIO) {
		c->b[victim].state = B_BAD;
		return 0;
	}
	if (rc) {
		c->b[victim].state = B_FULL;
		bucket_add(c, victim);
		return rc;
	}
	free_push(f, victim);
	c->erases_since_wl++;
	if (f->ec[victim] > c->max_ec)
		c->max_ec = f->ec[victim];
	return 0;
}

/* Static wear levelling: when the least-worn full block lags the most-worn by more
 * than WL_DELTA erases, its (cold) data moves so the block joins the rotation. The
 * scan for it runs only when the spread may be too wide: erase counts only grow, so
 * the minimum found last time stays a lower bound. */
static int wear_level(struct flash *f)
{
	struct careful *c = f->fs;
	if (c->erases_since_wl < WL_PERIOD)
		return 0;
	c->erases_since_wl = 0;
	if (c->max_ec - c->wl_floor <= WL_DELTA)
		return 0;
	uint32_t cold = FLASH_NONE, floor = UINT32_MAX;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		if (c->b[b].state == B_BAD)
			continue;
		if (f->ec[b] < floor)
			floor = f->ec[b];
		if (c->b[b].state == B_FULL && (cold == FLASH_NONE || f->ec[b] < f->ec[cold]))
			cold = b;
	}
	c->wl_floor = floor == UINT32_MAX ? c->max_ec : floor;
	if (cold == FLASH_NONE || c->max_ec - f->ec[cold] <= WL_DELTA || c->fcount < 2 ||
	    room(f) < (uint64_t)f->ppb + c->b[cold].valid)
		return 0;
	f->st.wl_moves++;
	return move_block(f, cold);
}

/* Makes room for one host page while keeping a free block in reserve for the GC
 * (without it the log could fill up with no place left to copy into). GC runs as soon
 * as the reserve is short, not when the log head is full: after a cut in the middle of
 * a GC the open block has just enough room to finish moving the victim. */
static int host_space(struct flash *f)
{
	struct careful *c = f->fs;
	while (c->fcount < 2) {
		uint32_t v = FLASH_NONE;
		for (uint32_t n = 0; n < f->ppb && v == FLASH_NONE; n++)
			v = c->bucket[n];
		if (v == FLASH_NONE || room(f) < c->b[v].valid)
			break;
		int rc = move_block(f, v);
		if (rc)
			return rc;
		f->st.gc_runs++;
	}
	int rc = wear_level(f);
	if (rc)
		return rc;
	if (c->active != FLASH_NONE)
		return 0;
	if (c->fcount < 2)
		return bo_errf(
		    &f->dev.err, -EIO,
		    "flash: no erase block left to write into (%u bad of %u): the device "
		    "is worn out; data already written stays readable",
		    f->nbad, f->nblocks);
	open_active(f);
	return 0;
}

static int careful_read(struct flash *f, uint64_t lba, uint32_t count, void *out)
{
	struct careful *c = f->fs;
	size_t ss = f->dev.sector_size;
	unsigned char *o = out;
	while (count) {
		uint32_t lpn = (uint32_t)(lba / f->spp);
		uint32_t in = (uint32_t)(lba % f->spp);
		uint32_t n = f->spp - in < count ? f->spp - in : count;
		uint32_t ppn = c->l2p[lpn];
		if (ppn == FLASH_NONE) {
			memset(o, 0xff, (size_t)n * ss);
		} else if (n == f->spp) {
			int rc = flash_nand_read(f, ppn, o);
			if (rc)
				return rc;
		} else {
			int rc = flash_nand_read(f, ppn, c->buf);
			if (rc)
				return rc;
			memcpy(o, c->buf + (size_t)in * ss, (size_t)n * ss);
		}
		o += (size_t)n * ss;
		lba += n;
		count -= n;
	}
	return 0;
}

static int careful_write(struct flash *f, uint64_t lba, uint32_t count, const void *data)
{
	struct careful *c = f->fs;
	size_t ss = f->dev.sector_size;
	const unsigned char *d = data;
	while (count) {
		uint32_t lpn = (uint32_t)(lba / f->spp);
		uint32_t in = (uint32_t)(lba % f->spp);
		uint32_t n = f->spp - in < count ? f->spp - in : count;
		int rc = host_space(f);
		if (rc)
			return rc;
		const void *src = d;
		if (n != f->spp) {
			/* a partial page: the new version carries the old sectors along */
			uint32_t ppn = c->l2p[lpn];
			if (ppn == FLASH_NONE)
				memset(c->buf, 0xff, f->p.page_size);
			else if ((rc = flash_nand_read(f, ppn, c->buf)))
				return rc;
			memcpy(c->buf + (size_t)in * ss, d, (size_t)n * ss);
			src = c->buf;
		}
		rc = program(f, lpn, src);
		if (rc)
			return rc;
		d += (size_t)n * ss;
		lba += n;
		count -= n;
	}
	return 0;
}

struct scan_ctx {
	uint64_t *best; /* highest valid seq seen per logical page */
	uint64_t maxseq;
	uint32_t open; /* the partly programmed block written last */
	uint64_t open_seq;
};

static int scan_cb(struct flash *f, uint32_t blk, void *ctx)
{
	struct careful *c = f->fs;
	struct scan_ctx *s = ctx;
	uint32_t wp = 0;
	uint64_t blk_seq = 0;
	for (uint32_t i = 0; i < f->ppb; i++) {
		struct flash_spare sp;
		flash_meta_spare(f, i, &sp);
		if (sp.seq == 0)
			continue;
		wp = i + 1;
		/* untrusted: a torn program or a foreign image must not index anything */
		if (sp.crc != flash_spare_crc(sp.seq, sp.lpn) || sp.lpn >= f->nlpn)
			continue;
		if (sp.seq > s->maxseq)
			s->maxseq = sp.seq;
		if (sp.seq > blk_seq)
			blk_seq = sp.seq;
		if (sp.seq > s->best[sp.lpn]) {
			s->best[sp.lpn] = sp.seq;
			c->l2p[sp.lpn] = blk * f->ppb + i;
		}
	}
	c->b[blk] = (struct cblk){0, wp, FLASH_NONE, FLASH_NONE,
	                          f->bad[blk] ? B_BAD
	                          : wp        ? B_FULL
	                                      : B_FREE};
	/* the log head at the cut: programming resumes after its last programmed page
	 * (a torn one included), as firmware appends to its open block */
	if (!f->bad[blk] && wp && wp < f->ppb && (s->open == FLASH_NONE || blk_seq > s->open_seq)) {
		s->open = blk;
		s->open_seq = blk_seq;
	}
	return 0;
}

static int careful_rebuild(struct flash *f)
{
	struct careful *c = f->fs;
	struct scan_ctx s = {calloc(f->nlpn, sizeof(uint64_t)), 0, FLASH_NONE, 0};
	if (!s.best)
		return -ENOMEM;
	for (uint64_t i = 0; i < f->nlpn; i++)
		c->l2p[i] = FLASH_NONE;
	for (uint64_t i = 0; i < f->nppn; i++)
		c->p2l[i] = FLASH_NONE;
	for (uint32_t i = 0; i <= f->ppb; i++)
		c->bucket[i] = FLASH_NONE;
	int rc = flash_scan(f, scan_cb, &s);
	free(s.best);
	if (rc)
		return rc;
	for (uint64_t l = 0; l < f->nlpn; l++) {
		uint32_t ppn = c->l2p[l];
		if (ppn != FLASH_NONE) {
			c->p2l[ppn] = (uint32_t)l;
			c->b[ppn / f->ppb].valid++;
		}
	}
	c->fhead = c->fcount = 0;
	c->seq = s.maxseq;
	c->erases_since_wl = 0;
	c->max_ec = c->wl_floor = 0;
	for (uint32_t b = 0; b < f->nblocks; b++)
		if (!f->bad[b] && f->ec[b] > c->max_ec)
			c->max_ec = f->ec[b];
	/* free blocks least worn first (key: erase count, then block number): a good
	 * start for the FIFO's dynamic wear levelling */
	uint64_t *keys = malloc(2 * (size_t)f->nblocks * sizeof(*keys)); /* and sort room */
	if (!keys)
		return -ENOMEM;
	c->active = FLASH_NONE;
	if (s.open != FLASH_NONE) {
		c->b[s.open].state = B_ACTIVE;
		c->active = s.open;
	}
	uint32_t nfree = 0;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		if (c->b[b].state == B_FULL)
			bucket_add(c, b); /* a partly programmed block stays closed until GC */
		else if (c->b[b].state == B_FREE)
			keys[nfree++] = (uint64_t)f->ec[b] << 32 | b;
	}
	bo_sort_u64(keys, nfree, keys + f->nblocks);
	for (uint32_t i = 0; i < nfree; i++)
		c->freeq[i] = (uint32_t)keys[i];
	free(keys);
	c->fcount = nfree;
	return 0;
}

static void careful_stats(struct flash *f, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct careful *c = f->fs;
	emit(ctx, "free_blocks", c->fcount);
}

const struct flash_ftl_ops flash_careful_ops = {
    .name = "careful",
    .init = careful_init,
    .rebuild = careful_rebuild,
    .read = careful_read,
    .write = careful_write,
    .clone = careful_clone,
    .free = careful_free,
    .stats = careful_stats,
};
