// SPDX-License-Identifier: GPL-2.0-or-later
/* flash.c — the NAND flash model: geometry, the NAND layer over the lower medium, the
 * optional RAM write cache, and power cuts as micro-steps. The FTLs that decide what to
 * program where are flash_cheap.c and flash_careful.c; this file knows nothing of maps.
 *
 * A power cut replays the interrupted work (cached writes being destaged, the in-flight
 * write, the garbage collection it triggers) through the normal FTL code while recording
 * every lower write with its before-image, asks the chooser how many micro-steps
 * (erase, program page) completed, and rolls the rest back. RAM state is then
 * worthless: power_restore rebuilds it from the lower, as firmware does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/flash.h"
#include "blackout/util.h"
#include "dev/flash_int.h"
#include "dev/dev_int.h"

DEV_SINGLE_CHECK(struct flash);

#define SB_MAGIC   "BOFLASH1"
#define MIN_EB     (16u << 10)
#define MAX_EB     (8u << 20)
#define MIN_PAGE   512u
#define MAX_PAGE   (64u << 10)
#define MIN_SPARES 3u /* the careful FTL's GC needs room to move into */

void flash_params_default(struct flash_params *p)
{
	memset(p, 0, sizeof(*p));
	p->ftl = FLASH_FTL_CAREFUL;
	p->sector_size = 512;
	p->page_size = 4096;
	p->eb_size = 128u << 10;
	p->size = 64u << 20;
	p->op_percent = 7;
	p->partial_erase = true;
}

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint32_t spare_blocks(const struct flash_params *p, uint64_t nlb)
{
	uint64_t s = (nlb * p->op_percent + 99) / 100;
	if (p->ftl == FLASH_FTL_CAREFUL && s < MIN_SPARES)
		s = MIN_SPARES;
	return (uint32_t)s;
}

/* Layout for a lower of sector size lss. */
static int layout(const struct flash_params *p, uint32_t lss, uint64_t *meta_bytes,
                  uint64_t *data_off, uint64_t *total, struct bo_err *err)
{
	char a[32], b[32];
	if (p->ftl != FLASH_FTL_CHEAP && p->ftl != FLASH_FTL_CAREFUL)
		return bo_errf(err, -EINVAL, "flash: unknown ftl %d", (int)p->ftl);
	if (p->sector_size != 512 && p->sector_size != 4096)
		return bo_errf(err, -EINVAL, "flash: sector size %u (must be 512 or 4096)",
		               p->sector_size);
	if (!pow2(p->page_size) || p->page_size < MIN_PAGE || p->page_size > MAX_PAGE ||
	    p->page_size < p->sector_size || p->page_size < lss)
		return bo_errf(err, -EINVAL,
		               "flash: page size %s must be a power of two from 512 to 64k and at "
		               "least the sector size (%u) and the lower's sector size (%u)",
		               bo_format_size(p->page_size, a, sizeof(a)), p->sector_size, lss);
	if (!pow2(p->eb_size) || p->eb_size < MIN_EB || p->eb_size > MAX_EB ||
	    p->eb_size < p->page_size)
		return bo_errf(err, -EINVAL,
		               "flash: erase block %s must be a power of two from 16k to 8M and at "
		               "least one page",
		               bo_format_size(p->eb_size, a, sizeof(a)));
	if (p->size == 0 || p->size % p->eb_size)
		return bo_errf(err, -EINVAL,
		               "flash: size %s is not a whole number of %s erase blocks",
		               bo_format_size(p->size, a, sizeof(a)),
		               bo_format_size(p->eb_size, b, sizeof(b)));
	if (p->op_percent > 400)
		return bo_errf(err, -EINVAL, "flash: over-provisioning %u%% (at most 400)",
		               p->op_percent);
	uint64_t nlb = p->size / p->eb_size;
	uint64_t nblocks = nlb + spare_blocks(p, nlb);
	uint64_t ppb = p->eb_size / p->page_size;
	if (nblocks > (1u << 24) || nblocks * ppb >= FLASH_NONE)
		return bo_errf(err, -EINVAL, "flash: %llu erase blocks of %llu pages is too large",
		               (unsigned long long)nblocks, (unsigned long long)ppb);
	uint64_t mb = (FLASH_HDR_BYTES + ppb * FLASH_SPARE + lss - 1) / lss * lss;
	uint64_t doff = ((uint64_t)lss + nblocks * mb + 4095) / 4096 * 4096;
	*meta_bytes = mb;
	*data_off = doff;
	*total = doff + nblocks * p->eb_size;
	return 0;
}

int flash_params_check(const struct flash_params *p, uint32_t lower_sector, uint64_t *lower_bytes,
                       struct bo_err *err)
{
	uint64_t mb, doff, total;
	if (lower_sector != 512 && lower_sector != 4096)
		return bo_errf(err, -EINVAL, "flash: lower sector size %u (must be 512 or 4096)",
		               lower_sector);
	int rc = layout(p, lower_sector, &mb, &doff, &total, err);
	if (rc == 0 && lower_bytes)
		*lower_bytes = total;
	return rc;
}

uint32_t flash_spare_crc(uint64_t seq, uint32_t lpn)
{
	unsigned char b[12];
	put_le64(b, seq);
	put_le32(b + 8, lpn);
	return crc32c(b, sizeof(b));
}

/* ---- recording for power cuts ---- */

static void rec_free(struct flash_rec *r)
{
	if (!r)
		return;
	free(r->arena);
	free(r->w);
	free(r->steps);
	free(r);
}

static void rec_step(struct flash *f, bool program, uint32_t block, uint64_t ppn)
{
	struct flash_rec *r = f->rec;
	if (!r)
		return;
	if (r->nsteps == r->capsteps) {
		uint32_t cap = r->capsteps ? r->capsteps * 2 : 64;
		void *n = realloc(r->steps, cap * sizeof(*r->steps));
		if (!n) {
			r->err = -ENOMEM;
			return;
		}
		r->steps = n;
		r->capsteps = cap;
	}
	r->steps[r->nsteps++] = (struct flash_rstep){program, block, ppn};
}

/* Every write to the lower goes through here so a cut can be rolled back. */
static int lower_write(struct flash *f, uint64_t off, uint32_t len, const void *buf)
{
	struct flash_rec *r = f->rec;
	if (r && r->nsteps) {
		if (r->nw == r->capw) {
			uint32_t cap = r->capw ? r->capw * 2 : 64;
			void *n = realloc(r->w, cap * sizeof(*r->w));
			if (!n)
				return r->err = -ENOMEM;
			r->w = n;
			r->capw = cap;
		}
		if (r->used + len > r->cap) {
			size_t cap = r->cap ? r->cap : 16 * 1024;
			while (cap < r->used + len)
				cap *= 2;
			unsigned char *n = realloc(r->arena, cap);
			if (!n)
				return r->err = -ENOMEM;
			r->arena = n;
			r->cap = cap;
		}
		int rc = blk_pread(f->lower, off, len, r->arena + r->used);
		if (rc)
			return rc;
		r->w[r->nw++] = (struct flash_rwrite){r->nsteps - 1, off, len, r->used};
		r->used += len;
	}
	int rc = blk_pwrite(f->lower, off, len, buf, 0);
	if (rc)
		return bo_errf(&f->dev.err, rc, "flash: lower write failed: %s",
		               bo_errstr(&f->lower->err, rc));
	return 0;
}

/* ---- NAND layer ---- */

int flash_nand_program(struct flash *f, uint64_t ppn, const void *data,
                       const struct flash_spare *sp)
{
	uint32_t block = (uint32_t)(ppn / f->ppb), page = (uint32_t)(ppn % f->ppb);
	rec_step(f, true, block, ppn);
	int rc = lower_write(f, f->data_off + ppn * f->p.page_size, f->p.page_size, data);
	if (rc)
		return rc;
	uint64_t off =
	    f->meta_off + block * f->meta_bytes + FLASH_HDR_BYTES + (uint64_t)page * FLASH_SPARE;
	uint64_t soff = off / f->lss * f->lss;
	rc = blk_pread(f->lower, soff, f->lss, f->sect_buf);
	if (rc)
		return bo_errf(&f->dev.err, rc, "flash: lower read failed: %s",
		               bo_errstr(&f->lower->err, rc));
	unsigned char *e = f->sect_buf + (off - soff);
	put_le64(e, sp->seq);
	put_le32(e + 8, sp->lpn);
	put_le32(e + 12, sp->crc);
	f->st.nand_programs++;
	return lower_write(f, soff, f->lss, f->sect_buf);
}

int flash_nand_erase(struct flash *f, uint32_t block, uint32_t owner, uint32_t gen)
{
	if (f->bad[block])
		return bo_errf(&f->dev.err, -EIO, "flash: erase block %u is bad", block);
	rec_step(f, false, block, 0);
	uint64_t off = f->meta_off + block * f->meta_bytes;
	if (f->p.endurance && f->ec[block] >= f->p.endurance) {
		/* worn out: the erase fails, the old pages stay as they were, and the
		 * block is marked bad in its header (like a bad-block marker) */
		int rc = blk_pread(f->lower, off, f->lss, f->sect_buf);
		if (rc)
			return rc;
		put_le32(f->sect_buf + 4, get_le32(f->sect_buf + 4) | FLASH_BAD);
		rc = lower_write(f, off, f->lss, f->sect_buf);
		if (rc)
			return rc;
		f->bad[block] = 1;
		f->nbad++;
		f->st.erase_failures++;
		return bo_errf(&f->dev.err, -EIO,
		               "flash: erase block %u worn out after %u erases (endurance %u)",
		               block, f->ec[block], f->p.endurance);
	}
	memset(f->meta_buf, 0, f->meta_bytes);
	put_le32(f->meta_buf, f->ec[block] + 1);
	put_le32(f->meta_buf + 8, owner);
	put_le32(f->meta_buf + 12, gen);
	int rc = lower_write(f, off, (uint32_t)f->meta_bytes, f->meta_buf);
	if (rc)
		return rc;
	f->ec[block]++;
	f->st.nand_erases++;
	return 0;
}

int flash_nand_read(struct flash *f, uint64_t ppn, void *buf)
{
	f->st.nand_page_reads++;
	int rc = blk_pread(f->lower, f->data_off + ppn * f->p.page_size, f->p.page_size, buf);
	if (rc)
		return bo_errf(&f->dev.err, rc, "flash: lower read failed: %s",
		               bo_errstr(&f->lower->err, rc));
	return 0;
}

int flash_nand_read_meta(struct flash *f, uint32_t block)
{
	int rc =
	    blk_pread(f->lower, f->meta_off + block * f->meta_bytes, f->meta_bytes, f->meta_buf);
	if (rc)
		return bo_errf(&f->dev.err, rc, "flash: lower read failed: %s",
		               bo_errstr(&f->lower->err, rc));
	return 0;
}

void flash_meta_header(const struct flash *f, uint32_t *ec, uint32_t *flags, uint32_t *owner,
                       uint32_t *gen)
{
	*ec = get_le32(f->meta_buf);
	*flags = get_le32(f->meta_buf + 4);
	*owner = get_le32(f->meta_buf + 8);
	*gen = get_le32(f->meta_buf + 12);
}

void flash_meta_spare(const struct flash *f, uint32_t page, struct flash_spare *sp)
{
	const unsigned char *e = f->meta_buf + FLASH_HDR_BYTES + (size_t)page * FLASH_SPARE;
	sp->seq = get_le64(e);
	sp->lpn = get_le32(e + 8);
	sp->crc = get_le32(e + 12);
}

int flash_scan(struct flash *f, int (*fn)(struct flash *f, uint32_t block, void *ctx), void *ctx)
{
	f->nbad = 0;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		int rc = flash_nand_read_meta(f, b);
		if (rc)
			return rc;
		uint32_t ec, flags, owner, gen;
		flash_meta_header(f, &ec, &flags, &owner, &gen);
		f->ec[b] = ec;
		f->bad[b] = (flags & FLASH_BAD) != 0;
		f->nbad += f->bad[b];
		if (fn && (rc = fn(f, b, ctx)))
			return rc;
	}
	return 0;
}

/* ---- the write cache ---- */

static int ftl_write(struct flash *f, uint64_t lba, uint32_t count, const void *buf)
{
	return f->ftl->write(f, lba, count, buf);
}

static void cache_drop_first(struct flash *f)
{
	f->cache_used -= (uint64_t)f->cache[0].count * f->dev.sector_size;
	free(f->cache[0].data);
	memmove(f->cache, f->cache + 1, (f->ncache - 1) * sizeof(*f->cache));
	f->ncache--;
}

/* Oldest first. A write the NAND refuses (worn out) is reported here, to whichever
 * request made the cache destage: the data is gone, and the host is told. */
static int cache_destage(struct flash *f, uint32_t n)
{
	int first_rc = 0;
	while (n-- && f->ncache) {
		struct flash_centry *e = &f->cache[0];
		int rc = ftl_write(f, e->lba, e->count, e->data);
		f->st.cache_destages++;
		if (rc && !first_rc) {
			char why[sizeof(f->dev.err.msg)];
			snprintf(why, sizeof(why), "%s", bo_errstr(&f->dev.err, rc));
			first_rc = bo_errf(&f->dev.err, rc,
			                   "flash: cached write of %u sectors at %llu failed: %s",
			                   e->count, (unsigned long long)e->lba, why);
		}
		cache_drop_first(f);
	}
	return first_rc;
}

static int cache_add(struct flash *f, uint64_t lba, uint32_t count, const void *buf)
{
	if (f->ncache == f->capcache) {
		uint32_t cap = f->capcache ? f->capcache * 2 : 16;
		void *n = realloc(f->cache, cap * sizeof(*f->cache));
		if (!n)
			return -ENOMEM;
		f->cache = n;
		f->capcache = cap;
	}
	size_t len = (size_t)count * f->dev.sector_size;
	unsigned char *d = malloc(len);
	if (!d)
		return -ENOMEM;
	memcpy(d, buf, len);
	f->cache[f->ncache++] = (struct flash_centry){lba, count, d};
	f->cache_used += len;
	return 0;
}

/* ---- bdev ops ---- */

static int flash_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct flash *f = (struct flash *)d;
	f->st.host_reads++;
	int rc = f->ftl->read(f, lba, count, buf);
	if (rc)
		return rc;
	/* the cache holds newer data than the NAND: overlay it, oldest first */
	size_t ss = d->sector_size;
	for (uint32_t i = 0; i < f->ncache; i++) {
		const struct flash_centry *e = &f->cache[i];
		uint64_t lo = e->lba > lba ? e->lba : lba;
		uint64_t hi = e->lba + e->count < lba + count ? e->lba + e->count : lba + count;
		if (lo < hi)
			memcpy((unsigned char *)buf + (lo - lba) * ss, e->data + (lo - e->lba) * ss,
			       (hi - lo) * ss);
	}
	return 0;
}

static int flash_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf,
                       unsigned flags)
{
	struct flash *f = (struct flash *)d;
	uint64_t len = (uint64_t)count * d->sector_size;
	f->st.host_writes++;
	f->st.host_write_bytes += len;
	if (!f->p.cache_bytes)
		return ftl_write(f, lba, count, buf);
	int rc = 0;
	if (len > f->p.cache_bytes) {
		rc = cache_destage(f, f->ncache);
		int rc2 = ftl_write(f, lba, count, buf);
		return rc ? rc : rc2;
	}
	/* an error destaging an older write is reported, but the cache still makes room */
	while (f->cache_used + len > f->p.cache_bytes && f->ncache) {
		int e = cache_destage(f, 1);
		if (e && !rc)
			rc = e;
	}
	int rc2 = cache_add(f, lba, count, buf);
	if (rc2)
		return rc2;
	if (!rc && (flags & BLK_FUA) && !f->p.flush_ignore)
		rc = cache_destage(f, f->ncache);
	return rc;
}

static int flash_flush(struct bdev *d)
{
	struct flash *f = (struct flash *)d;
	f->st.flushes++;
	int rc = 0;
	if (!f->p.flush_ignore)
		rc = cache_destage(f, f->ncache);
	int rc2 = blk_flush(f->lower);
	return rc ? rc : rc2;
}

/* Idle: the firmware destages its RAM cache even when it ignores flush requests. */
static int flash_settle(struct bdev *d)
{
	struct flash *f = (struct flash *)d;
	return cache_destage(f, f->ncache);
}

static void flash_free(struct flash *f)
{
	if (f->ftl && f->fs)
		f->ftl->free(f);
	while (f->ncache)
		cache_drop_first(f);
	free(f->cache);
	free(f->ec);
	free(f->bad);
	free(f->page_buf);
	free(f->meta_buf);
	free(f->sect_buf);
	rec_free(f->rec);
	blk_close(f->lower);
	if (f->base && --f->base->ref == 0) {
		blk_close(f->base->mem);
		free(f->base);
	}
	free(f);
}

static void flash_close(struct bdev *d)
{
	flash_free((struct flash *)d);
}

static int flash_alloc_common(struct flash *f)
{
	f->ec = calloc(f->nblocks, sizeof(*f->ec));
	f->bad = calloc(f->nblocks, 1);
	f->page_buf = malloc(f->p.page_size);
	f->meta_buf = malloc(f->meta_bytes);
	f->sect_buf = malloc(f->lss);
	return f->ec && f->bad && f->page_buf && f->meta_buf && f->sect_buf ? 0 : -ENOMEM;
}

static int flash_clone(struct bdev *d, struct bdev **out)
{
	struct flash *f = (struct flash *)d;
	struct flash *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = *f;
	c->fs = NULL;
	c->cache = NULL;
	c->ncache = c->capcache = 0;
	c->cache_used = 0;
	c->ec = NULL;
	c->bad = NULL;
	c->page_buf = c->meta_buf = c->sect_buf = NULL;
	c->rec = NULL;
	c->lower = NULL;
	int rc = blk_clone(f->lower, &c->lower);
	if (rc == 0 && c->base)
		c->base->ref++; /* the overlay clone reads the same base */
	else
		c->base = NULL;
	if (rc == 0)
		rc = flash_alloc_common(c);
	if (rc == 0) {
		memcpy(c->ec, f->ec, f->nblocks * sizeof(*f->ec));
		memcpy(c->bad, f->bad, f->nblocks);
		rc = f->ftl->clone(f, c);
	}
	for (uint32_t i = 0; rc == 0 && i < f->ncache; i++)
		rc = cache_add(c, f->cache[i].lba, f->cache[i].count, f->cache[i].data);
	if (rc) {
		char why[sizeof(d->err.msg)];
		snprintf(why, sizeof(why), "%s",
		         c->lower ? bo_errstr(NULL, rc) : bo_errstr(&f->lower->err, rc));
		flash_free(c);
		return bo_errf(&d->err, rc, "flash: clone failed: %s", why);
	}
	*out = &c->dev;
	return 0;
}

static uint64_t garbage_word(struct bo_rng *r)
{
	return bo_rng_next(r);
}

/* After a cut at step k: pages whose program did not happen but whose block's
 * latest erase had happened hold garbage (cheap: the whole rest of the block, since the RAM
 * buffer the firmware was programming from had failed; careful: the page being
 * programmed at the cut). */
static int write_garbage(struct flash *f, uint32_t k)
{
	struct flash_rec *r = f->rec;
	struct bo_rng rng;
	for (uint32_t s = k; s < r->nsteps; s++) {
		const struct flash_rstep *st = &r->steps[s];
		if (!st->program)
			continue;
		bool hit;
		if (f->p.ftl == FLASH_FTL_CAREFUL) {
			hit = s == k;
		} else {
			/* garbage only where the block's latest erase did happen */
			uint32_t e = s;
			while (e-- > 0 && (r->steps[e].program || r->steps[e].block != st->block))
				;
			hit = e < k; /* e wrapped to UINT32_MAX: no erase, the old data stays */
		}
		if (!hit)
			continue;
		bo_rng_seed(&rng, f->p.seed ^ bo_hash64(BO_HASH64_INIT, &st->ppn, sizeof(st->ppn)) ^
		                      ((uint64_t)k << 40));
		for (uint32_t i = 0; i + 8 <= f->p.page_size; i += 8)
			put_le64(f->page_buf + i, garbage_word(&rng));
		struct flash_spare sp = {garbage_word(&rng) | 1, (uint32_t)garbage_word(&rng),
		                         (uint32_t)garbage_word(&rng)};
		if (f->p.ftl == FLASH_FTL_CHEAP) /* cheap firmware keeps no checks */
			sp.crc = flash_spare_crc(sp.seq, sp.lpn);
		else if (sp.crc == flash_spare_crc(sp.seq, sp.lpn))
			sp.crc ^= 1; /* a torn program never passes the check */
		struct flash_rec *saved = f->rec;
		f->rec = NULL;
		int rc = flash_nand_program(f, st->ppn, f->page_buf, &sp);
		f->rec = saved;
		if (rc)
			return rc;
	}
	return 0;
}

static int rollback(struct flash *f, uint32_t k)
{
	struct flash_rec *r = f->rec;
	for (uint32_t i = r->nw; i-- > 0;) {
		if (r->w[i].step < k)
			break;
		int rc =
		    blk_pwrite(f->lower, r->w[i].off, r->w[i].len, r->arena + r->w[i].before, 0);
		if (rc)
			return rc;
	}
	return f->p.garbage ? write_garbage(f, k) : 0;
}

/* A cut inside the erase of step e (cheap FTL): the erase pulses had begun to pull the
 * cells towards the erased state, so every page programmed before reads back its old
 * data with some 0 bits turned to 1 (each with probability 1/256, seeded by the page
 * and the outcome). The spares keep their pages programmed: cheap firmware checks
 * nothing and hands the weakened data to the host. */
static int partial_erase(struct flash *f, uint32_t e, uint64_t k)
{
	uint32_t block = f->rec->steps[e].block;
	int rc = flash_nand_read_meta(f, block);
	if (rc)
		return rc;
	struct flash_rec *saved = f->rec;
	f->rec = NULL;
	for (uint32_t i = 0; rc == 0 && i < f->ppb; i++) {
		struct flash_spare sp;
		flash_meta_spare(f, i, &sp);
		if (sp.seq == 0)
			continue;
		uint64_t ppn = (uint64_t)block * f->ppb + i;
		rc = flash_nand_read(f, ppn, f->page_buf);
		if (rc)
			break;
		struct bo_rng rng;
		bo_rng_seed(&rng, f->p.seed ^ bo_hash64(BO_HASH64_INIT, &ppn, sizeof(ppn)) ^
		                      (k << 40) ^ 0x9e3779b97f4a7c15ull);
		for (uint32_t o = 0; o + 8 <= f->p.page_size; o += 8) {
			uint64_t m = ~0ull;
			for (int j = 0; j < 8; j++)
				m &= bo_rng_next(&rng); /* each bit set with probability 2^-8 */
			put_le64(f->page_buf + o, get_le64(f->page_buf + o) | m);
		}
		/* rewrites the page and its spare (the same one) through sect_buf: meta_buf,
		 * read once above, stays valid */
		rc = flash_nand_program(f, ppn, f->page_buf, &sp);
	}
	f->rec = saved;
	return rc;
}

/* The erase steps a cut can fall inside: the cheap FTL's, with partial_erase. */
static uint32_t partial_erases(const struct flash *f)
{
	uint32_t n = 0;
	if (f->p.ftl == FLASH_FTL_CHEAP && f->p.partial_erase)
		for (uint32_t s = 0; s < f->rec->nsteps; s++)
			n += !f->rec->steps[s].program;
	return n;
}

/* Outcome k of a cut: k <= steps, the first k micro-steps completed; past that, the
 * cut fell inside the (k - steps - 1)-th erase, the steps before it completed. */
static int cut_at(struct flash *f, uint64_t k)
{
	struct flash_rec *r = f->rec;
	if (k <= r->nsteps)
		return rollback(f, (uint32_t)k);
	uint64_t j = k - r->nsteps - 1;
	uint32_t e = 0;
	for (;; e++)
		if (!r->steps[e].program && j-- == 0)
			break;
	int rc = rollback(f, e);
	return rc ? rc : partial_erase(f, e, k);
}

static int flash_power_cut(struct bdev *d, struct blk_chooser *ch,
                           const struct blk_inflight *inflight)
{
	struct flash *f = (struct flash *)d;
	int rc = 0;
	if (f->ncache || inflight) {
		/* The pending work in the order the firmware does it (cached writes oldest
		 * first, then the write in flight, which with a cache was being accepted
		 * into it) is one sequence of micro-steps; the cut falls between two of
		 * them, or inside one of the cheap FTL's erases. One decision whose radix
		 * does not depend on anything asked before, so the outcome space is exactly
		 * steps + 1 (+ erases). */
		f->rec = calloc(1, sizeof(*f->rec));
		if (!f->rec)
			return -ENOMEM;
		/* an FTL error (worn out) ends that write where it happened */
		for (uint32_t i = 0; i < f->ncache && !f->rec->err; i++)
			(void)ftl_write(f, f->cache[i].lba, f->cache[i].count, f->cache[i].data);
		if (inflight && !f->rec->err)
			(void)ftl_write(f, inflight->lba, inflight->count, inflight->data);
		rc = f->rec->err;
		if (rc == 0) {
			uint64_t k =
			    blk_choose(ch, (uint64_t)f->rec->nsteps + 1 + partial_erases(f),
			               "flash: micro-steps (erase, program page) of the "
			               "pending writes that completed, or the erase the "
			               "cut fell inside");
			rc = cut_at(f, k);
		}
		rec_free(f->rec);
		f->rec = NULL;
	}
	while (f->ncache)
		cache_drop_first(f);
	int rc2 = blk_power_cut(f->lower, ch, NULL);
	return rc ? rc : rc2;
}

static int flash_power_restore(struct bdev *d)
{
	struct flash *f = (struct flash *)d;
	int rc = blk_power_restore(f->lower);
	if (rc == 0)
		rc = f->ftl->rebuild(f);
	return rc;
}

static void flash_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct flash *f = (struct flash *)d;
	const struct flash_stats *s = &f->st;
	emit(ctx, "host_writes", s->host_writes);
	emit(ctx, "host_write_bytes", s->host_write_bytes);
	emit(ctx, "host_reads", s->host_reads);
	emit(ctx, "flushes", s->flushes);
	emit(ctx, "nand_programs", s->nand_programs);
	emit(ctx, "nand_erases", s->nand_erases);
	emit(ctx, "nand_page_reads", s->nand_page_reads);
	uint64_t nand_bytes = s->nand_programs * f->p.page_size;
	emit(ctx, "write_amplification",
	     s->host_write_bytes ? nand_bytes * 1000 / s->host_write_bytes : 0);
	uint32_t mx = 0, mn = UINT32_MAX;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		if (f->ec[b] > mx)
			mx = f->ec[b];
		if (!f->bad[b] && f->ec[b] < mn)
			mn = f->ec[b];
	}
	emit(ctx, "max_erase_count", mx);
	emit(ctx, "min_erase_count", mn == UINT32_MAX ? mx : mn);
	emit(ctx, "bad_blocks", f->nbad);
	emit(ctx, "erase_failures", s->erase_failures);
	emit(ctx, "gc_runs", s->gc_runs);
	emit(ctx, "gc_copies", s->gc_copies);
	emit(ctx, "wl_moves", s->wl_moves);
	emit(ctx, "dirty_bytes", f->cache_used);
	if (f->ftl->stats)
		f->ftl->stats(f, emit, ctx);
}

static const struct bdev_ops flash_ops = {
    .read = flash_read,
    .write = flash_write,
    .flush = flash_flush,
    .settle = flash_settle,
    .close = flash_close,
    .clone = flash_clone,
    .power_cut = flash_power_cut,
    .power_restore = flash_power_restore,
    .lower = dev_single_lower,
    .stats = flash_stats,
};

/* The superblock names the geometry so a lower formatted for another one is refused
 * instead of misread. */
static void sb_encode(const struct flash *f, unsigned char *b)
{
	memset(b, 0, f->lss);
	memcpy(b, SB_MAGIC, 8);
	put_le32(b + 8, (uint32_t)f->p.ftl);
	put_le32(b + 12, f->p.page_size);
	put_le32(b + 16, f->ppb);
	put_le32(b + 20, f->nblocks);
	put_le32(b + 24, f->nlb);
	put_le32(b + 28, f->lss);
	put_le32(b + 32, crc32c(b, 32));
}

static int sb_check(struct flash *f, struct bo_err *err)
{
	unsigned char *want = malloc(f->lss);
	if (!want)
		return -ENOMEM;
	int rc = blk_pread(f->lower, 0, f->lss, f->sect_buf);
	if (rc) {
		free(want);
		return bo_errf(err, rc, "flash: reading the lower failed: %s",
		               bo_errstr(&f->lower->err, rc));
	}
	sb_encode(f, want);
	bool blank = true;
	for (uint32_t i = 0; i < f->lss; i++)
		blank &= f->sect_buf[i] == 0;
	if (blank) {
		rc = blk_pwrite(f->lower, 0, f->lss, want, 0);
		if (rc == 0)
			rc = blk_flush(f->lower);
	} else if (memcmp(f->sect_buf, SB_MAGIC, 8) != 0) {
		rc = bo_errf(err, -EINVAL,
		             "flash: the lower device is neither blank nor a flash "
		             "image (no superblock in its first sector)");
	} else if (memcmp(f->sect_buf, want, 36) != 0) {
		const unsigned char *b = f->sect_buf;
		rc = bo_errf(err, -EINVAL,
		             "flash: the lower device holds a flash image of another geometry "
		             "(ftl %u, page %u, %u pages per block, %u blocks, %u user blocks); "
		             "this one is ftl %u, page %u, %u pages per block, %u blocks, %u user "
		             "blocks",
		             get_le32(b + 8), get_le32(b + 12), get_le32(b + 16), get_le32(b + 20),
		             get_le32(b + 24), (unsigned)f->p.ftl, f->p.page_size, f->ppb,
		             f->nblocks, f->nlb);
	}
	free(want);
	return rc;
}

int dev_flash_open(const struct flash_params *p, struct bdev *lower, struct bdev **out,
                   struct bo_err *err)
{
	*out = NULL;
	uint64_t mb, doff, total;
	int rc = layout(p, lower->sector_size, &mb, &doff, &total, err);
	if (rc)
		return rc;
	if (blk_size_bytes(lower) < total) {
		char a[32], b[32];
		rc = bo_errf(err, -EINVAL,
		             "flash: the lower device is %s; this geometry needs %s (%llu bytes)",
		             bo_format_size(blk_size_bytes(lower), a, sizeof(a)),
		             bo_format_size(total, b, sizeof(b)), (unsigned long long)total);
		return rc;
	}
	struct flash *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->p = *p;
	f->lower = lower;
	f->ftl = p->ftl == FLASH_FTL_CHEAP ? &flash_cheap_ops : &flash_careful_ops;
	rc = blk_init(&f->dev, &flash_ops, "flash", p->sector_size, p->size / p->sector_size);
	f->lss = lower->sector_size;
	f->ppb = (uint32_t)(p->eb_size / p->page_size);
	f->nlb = (uint32_t)(p->size / p->eb_size);
	f->nblocks = f->nlb + spare_blocks(p, f->nlb);
	f->spp = p->page_size / p->sector_size;
	f->nlpn = (uint64_t)f->nlb * f->ppb;
	f->nppn = (uint64_t)f->nblocks * f->ppb;
	f->meta_off = f->lss;
	f->meta_bytes = mb;
	f->data_off = doff;
	f->lower_bytes = total;
	if (rc == 0)
		rc = flash_alloc_common(f);
	if (rc == 0)
		rc = sb_check(f, err);
	if (rc) {
		f->lower = NULL; /* the caller keeps it */
		flash_free(f);
		return rc;
	}
	rc = f->ftl->init(f);
	if (rc == 0)
		rc = f->ftl->rebuild(f);
	if (rc) {
		bo_errf(err, rc, "flash: mounting the %s FTL failed: %s", f->ftl->name,
		        bo_errstr(&f->dev.err, rc));
		f->lower = NULL;
		flash_free(f);
		return rc;
	}
	*out = &f->dev;
	return 0;
}

int dev_flash_open_ram(const struct flash_params *p, struct bdev **out, struct bo_err *err)
{
	uint64_t need;
	*out = NULL;
	int rc = flash_params_check(p, 512, &need, err);
	if (rc)
		return rc;
	struct flash_base *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	struct bdev *cow = NULL;
	rc = blk_mem_open(512, need / 512, &b->mem);
	if (rc == 0)
		rc = blk_cow_open(b->mem, &cow);
	if (rc == 0)
		rc = dev_flash_open(p, cow, out, err);
	if (rc) {
		if (err && !err->msg[0])
			bo_errf(err, rc, "flash: cannot allocate a %llu-byte RAM medium",
			        (unsigned long long)need);
		blk_close(cow);
		blk_close(b->mem);
		free(b);
		return rc;
	}
	b->ref = 1;
	((struct flash *)*out)->base = b;
	return 0;
}
