// SPDX-License-Identifier: GPL-2.0-or-later
/* raid.c — md-style RAID 0/1/4/5/6 as a bdev: assembly (superblocks, recovery after
 * an unclean shutdown), creation, flush to a clean array, the ops table and the
 * array operations of raid.h. Layout, stripe I/O, journal, bitmap/PPL, sync and
 * power cuts are the other raid_*.c files; parity arithmetic is raid_parity.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

/* Everything written before is durable and every stripe consistent: the array
 * is clean again (md's safe mode, reached at each flush here). */
int raid_make_clean(struct raid_dev *r)
{
	struct bdev *d = &r->dev;
	int rc = raid_flush_members(r);
	if (rc)
		return rc;
	if (r->jdev && (rc = blk_flush(r->jdev)))
		return bo_errf(&d->err, rc, "%s: journal flush: %s", d->name,
		               bo_errstr(&r->jdev->err, rc));
	if (r->p.journal && r->j_tail != r->j_head && (rc = raid_jsb_write(r)))
		return rc;
	if (r->p.bitmap) {
		bool any = false;
		for (uint64_t i = 0; i < r->bm_sectors * r->ss; i++)
			any |= r->bm[i] != 0;
		if (any) {
			memset(r->bm, 0, r->bm_sectors * r->ss);
			if ((rc = raid_write_bitmap(r)))
				return rc;
		}
	}
	if (r->dirty) {
		r->dirty = false;
		rc = raid_write_sbs(r);
	}
	return rc;
}

static int raid_flush(struct bdev *d)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return raid_refused(r);
	r->st.flushes++;
	if (r->p.drop_flushes)
		return 0;
	int rc = raid_make_clean(r);
	/* the last stripe is the one a rebuild reaches last: it has lost the most */
	if (rc == 0 && raid_stripe_lost(r, r->stripes - 1) > raid_tolerance(r))
		rc = bo_errf(&d->err, -EIO,
		             "%s: flush: %u of %u members failed or missing, RAID%u survives %u: "
		             "what was written cannot be made durable",
		             d->name, raid_stripe_lost(r, r->stripes - 1), r->n, r->p.level,
		             raid_tolerance(r));
	return rc;
}

/* Idle time: md's safe mode marks the array clean after 200 ms without writes,
 * with the same superblock update a flush ends with here. */
static int raid_settle(struct bdev *d)
{
	struct raid_dev *r = (struct raid_dev *)d;
	return r->inactive ? 0 : raid_make_clean(r);
}

int raid_assemble(struct raid_dev *r, bool first, struct bo_err *err)
{
	r->inactive = false;
	unsigned char *b = aligned_alloc(64, META);
	if (!b)
		return -ENOMEM;
	struct sbinfo si[MAXM];
	int best = -1;
	uint64_t invalid = 0;
	for (unsigned i = 0; i < r->n; i++) {
		memset(&si[i], 0, sizeof(si[i]));
		if (blk_read(r->mem[i], 0, 1, b) == 0)
			raid_sb_decode(r, i, b, &si[i]);
		if (!si[i].valid)
			invalid |= 1ull << i;
		else if (best < 0 || si[i].events > si[best].events)
			best = (int)i;
	}
	free(b);
	if (best < 0)
		return bo_errf(err, -EIO, "%s: no member has a readable superblock", r->dev.name);
	r->failed = si[best].failed | invalid | (first ? r->p.missing : 0);
	r->events = si[best].events;
	r->rebuild_idx = si[best].rebuild_idx;
	r->rebuild_pos = si[best].rebuild_pos;
	if (r->rebuild_idx >= 0 && (r->failed >> r->rebuild_idx & 1))
		r->rebuild_idx = -1;
	r->dirty = false;
	for (unsigned i = 0; i < r->n; i++)
		if (!(r->failed >> i & 1))
			r->dirty |= si[i].dirty;
	unsigned lost = bo_popcount64(r->failed);
	if (r->p.level != 0 && lost > raid_tolerance(r))
		return bo_errf(err, -EIO, "%s: %u of %u members are missing, the array survives %u",
		               r->dev.name, lost, r->n, raid_tolerance(r));
	if (r->p.level == 0 && lost)
		return bo_errf(err, -EIO, "%s: RAID0 member missing", r->dev.name);
	int rc = 0;
	bool had_bits = false;
	if (r->p.bitmap) {
		memset(r->bm, 0, r->bm_sectors * r->ss);
		unsigned char *t = malloc(r->bm_sectors * r->ss);
		if (!t)
			return -ENOMEM;
		for (unsigned i = 0; i < r->n; i++) {
			if ((r->failed >> i & 1) ||
			    blk_read(r->mem[i], r->bm_off, (uint32_t)r->bm_sectors, t))
				continue;
			for (uint64_t x = 0; x < r->bm_sectors * r->ss; x++)
				r->bm[x] |= t[x];
		}
		free(t);
		for (uint64_t x = 0; x < r->bm_sectors * r->ss; x++)
			had_bits |= r->bm[x] != 0;
	}
	if (r->p.journal) {
		rc = raid_journal_recover(r);
	} else if (r->dirty || had_bits) {
		bool degraded = r->failed != 0 || r->rebuild_idx >= 0;
		if (degraded && r->p.level != 1 && !r->p.ppl && r->dirty) {
			if (r->p.refuse_dirty_degraded) {
				/* left inactive, as md leaves it: every I/O fails, visibly */
				r->inactive = true;
				return 0;
			}
			r->st.dirty_degraded_starts++;
		}
		if (r->p.ppl) {
			rc = raid_ppl_recover(r);
		} else if (r->p.bitmap) {
			for (uint64_t s = 0; s < r->stripes && rc == 0; s++)
				if (r->bm[s / r->bm_stripes / 8] >> (s / r->bm_stripes % 8) & 1)
					rc = raid_resync_stripe(r, s);
		} else {
			for (uint64_t s = 0; s < r->stripes && rc == 0; s++)
				rc = raid_resync_stripe(r, s);
		}
	}
	if (rc == 0)
		rc = raid_flush_members(r);
	if (rc == 0 && had_bits) {
		memset(r->bm, 0, r->bm_sectors * r->ss);
		rc = raid_write_bitmap(r);
	}
	r->dirty = false;
	if (rc == 0)
		rc = raid_write_sbs(r);
	if (rc)
		return bo_errf(err, rc, "%s: assembly: %s", r->dev.name,
		               bo_errstr(&r->dev.err, rc));
	return 0;
}

/* A new array: superblocks, empty bitmap, PPL and journal; parity made consistent
 * with whatever the members hold (nothing to write on zeroed members). */
static int create(struct raid_dev *r, struct bo_err *err)
{
	r->failed = r->p.missing;
	r->events = 0;
	r->rebuild_idx = -1;
	r->dirty = false;
	int rc = 0;
	unsigned char *z = calloc(1, META);
	if (!z)
		return -ENOMEM;
	for (unsigned i = 0; i < r->n && rc == 0; i++) {
		if (r->failed >> i & 1)
			continue;
		if (r->p.ppl)
			rc = raid_mwrite(r, i, r->ppl_off, r->meta, z, 0);
	}
	free(z);
	if (rc == 0 && r->p.bitmap)
		rc = raid_write_bitmap(r);
	if (rc == 0 && r->p.journal) {
		r->j_head = r->meta;
		r->j_seq = 1;
		rc = raid_jsb_write(r);
	}
	if (rc == 0 && r->p.level != 0 && !r->failed)
		for (uint64_t s = 0; s < r->stripes && rc == 0; s++) {
			uint64_t mism = 0;
			rc = raid_scrub_stripe(r, s, true, &mism);
		}
	if (rc == 0)
		rc = raid_flush_members(r);
	if (rc == 0)
		rc = raid_write_sbs(r);
	return rc ? bo_errf(err, rc, "%s: creating the array: %s", r->dev.name,
	                    bo_errstr(&r->dev.err, rc))
	          : 0;
}

static void raid_close(struct bdev *d)
{
	struct raid_dev *r = (struct raid_dev *)d;
	for (unsigned i = 0; i < r->n; i++)
		blk_close(r->mem[i]);
	blk_close(r->jdev);
	blk_close(r->repl);
	for (unsigned i = 0; i < r->pool.n; i++)
		free(r->pool.p[i]);
	free(r->bm);
	free(r);
}

static int raid_clone(struct bdev *d, struct bdev **out)
{
	struct raid_dev *r = (struct raid_dev *)d;
	struct raid_dev *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = *r;
	c->pool.n = 0;
	c->bm = NULL;
	memset(c->mem, 0, sizeof(c->mem));
	c->jdev = NULL;
	c->repl = NULL;
	int rc = 0;
	if (r->bm && !(c->bm = malloc(r->bm_sectors * r->ss)))
		rc = -ENOMEM;
	if (c->bm)
		memcpy(c->bm, r->bm, r->bm_sectors * r->ss);
	for (unsigned i = 0; i < r->n && rc == 0; i++)
		rc = blk_clone(r->mem[i], &c->mem[i]);
	if (rc == 0 && r->jdev)
		rc = blk_clone(r->jdev, &c->jdev);
	if (rc == 0 && r->repl)
		rc = blk_clone(r->repl, &c->repl);
	if (rc) {
		raid_close(&c->dev);
		return bo_errf(&d->err, rc, "%s: clone: %s", d->name, strerror(-rc));
	}
	*out = &c->dev;
	return 0;
}

static struct bdev *raid_lower(struct bdev *d, unsigned i)
{
	struct raid_dev *r = (struct raid_dev *)d;
	struct bdev *extra[2] = {r->jdev ? r->jdev : r->repl, r->jdev ? r->repl : NULL};
	return i < r->n ? r->mem[i] : i - r->n < 2 ? extra[i - r->n] : NULL;
}

static void raid_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct raid_dev *r = (struct raid_dev *)d;
	const struct raid_stats *s = &r->st;
#define E(f) emit(ctx, #f, s->f)
	emit(ctx, "reads", s->host_reads);
	emit(ctx, "writes", s->host_writes);
	emit(ctx, "read_sectors", s->host_read_sectors);
	emit(ctx, "write_sectors", s->host_write_sectors);
	E(flushes);
	E(member_reads);
	E(member_writes);
	E(member_read_sectors);
	E(member_write_sectors);
	emit(ctx, "write_amp_milli",
	     s->host_write_sectors ? s->wr_write_sectors * 1000 / s->host_write_sectors : 0);
	emit(ctx, "write_read_amp_milli",
	     s->host_write_sectors ? s->wr_read_sectors * 1000 / s->host_write_sectors : 0);
	E(full_stripe);
	E(rmw);
	E(rcw);
	E(reconstruct_write);
	E(direct_write);
	E(degraded_reads);
	E(member_failures);
	E(resync_stripes);
	E(resync_skipped);
	E(dirty_degraded_starts);
	E(scrub_mismatches);
	E(rebuild_stripes);
	E(ppl_writes);
	E(ppl_recovered);
	E(ppl_skipped);
	E(journal_records);
	E(journal_replayed);
	E(journal_checkpoints);
	E(sb_writes);
	E(bitmap_writes);
#undef E
	emit(ctx, "failed_members", bo_popcount64(r->failed));
	emit(ctx, "rebuild_pos", r->rebuild_idx < 0 ? r->stripes : r->rebuild_pos);
	emit(ctx, "stripes", r->stripes);
}

static const struct bdev_ops raid_ops;

static unsigned raid_members(struct bdev *d)
{
	return ((struct raid_dev *)d)->n;
}

static int raid_member_fail(struct bdev *d, unsigned idx)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (idx >= r->n)
		return bo_errf(&d->err, -EINVAL, "%s: no member %u", d->name, idx);
	raid_member_failed(r, idx);
	return 0;
}

static const struct bdev_ops raid_ops = {
    .read = raid_read,
    .write = raid_write,
    .flush = raid_flush,
    .discard = raid_discard,
    .close = raid_close,
    .clone = raid_clone,
    .power_cut = raid_power_cut,
    .power_restore = raid_power_restore,
    .lower = raid_lower,
    .stats = raid_stats,
    .settle = raid_settle,
    .members = raid_members,
    .member_fail = raid_member_fail,
};

bool raid_is(const struct bdev *d)
{
	return d && d->ops == &raid_ops;
}

int raid_status(struct bdev *d, struct raid_status *st)
{
	if (!raid_is(d))
		return -EINVAL;
	struct raid_dev *r = (struct raid_dev *)d;
	*st = (struct raid_status){.level = r->p.level,
	                           .members = r->n,
	                           .data_members = r->k,
	                           .chunk = r->p.chunk,
	                           .failed = r->failed,
	                           .rebuilding = r->rebuild_idx,
	                           .rebuild_pos = r->rebuild_pos,
	                           .stripes = r->stripes,
	                           .dirty = r->dirty,
	                           .inactive = r->inactive,
	                           .replacing = r->repl ? r->repl_idx : -1,
	                           .replace_pos = r->repl_pos,
	                           .data_offset = r->data_off};
	return 0;
}

int raid_force_start(struct bdev *d)
{
	if (!raid_is(d))
		return -EINVAL;
	struct raid_dev *r = (struct raid_dev *)d;
	if (!r->inactive)
		return 0;
	r->inactive = false;
	r->st.dirty_degraded_starts++;
	r->dirty = false;
	return raid_write_sbs(r);
}

/* Through the ops: any layer with members, whatever its name. */
int raid_fail_member(struct bdev *d, unsigned idx)
{
	if (!dev_has_cap(d, DEV_CAP_MEMBERS))
		return -EINVAL;
	return d->ops->member_fail(d, idx);
}

/* The parameters on their own (defaults filled in): what md would refuse. */
static int check_params(struct raid_params *pp, unsigned nlowers, const char *name,
                        struct bo_err *err)
{
	struct raid_params p = *pp;
	if (p.chunk == 0)
		p.chunk = 512 * 1024;
	if (p.bitmap_chunk == 0)
		p.bitmap_chunk = 64ull << 20;
	if (p.level == 4)
		p.layout = RAID_PARITY_N;
	*pp = p;
	unsigned n = nlowers - (p.journal ? 1 : 0);
	if (nlowers < 1 + (p.journal ? 1u : 0u) || raid_check_geometry(p.level, p.layout, n))
		return bo_errf(err, -EINVAL, "%s: %u members is not a valid RAID%u (%s)", name, n,
		               p.level,
		               p.level == 6   ? "4 to 32 members"
		               : p.level >= 4 ? "3 to 32 members"
		                              : "2 to 32 members");
	if (p.chunk < 4096 || p.chunk > (1u << 20) || (p.chunk & (p.chunk - 1)))
		return bo_errf(err, -EINVAL, "%s: chunk %u is not a power of two from 4k to 1M",
		               name, p.chunk);
	if (p.level == 0 && (p.missing || p.bitmap || p.ppl || p.journal))
		return bo_errf(
		    err, -EINVAL,
		    "raid0: no redundancy, so no missing member, bitmap, ppl or journal");
	if (p.ppl && p.level != 5)
		return bo_errf(err, -EINVAL, "%s: ppl is a RAID5 feature (as in md)", name);
	if (p.ppl && (p.bitmap || p.journal))
		return bo_errf(
		    err, -EINVAL,
		    "%s: ppl excludes bitmap and journal (md allows one consistency policy)", name);
	if (p.journal && p.level < 4)
		return bo_errf(err, -EINVAL, "%s: a write journal is for RAID4/5/6 (as in md)",
		               name);
	if (n < 64 && (p.missing >> n))
		return bo_errf(err, -EINVAL, "%s: missing names a member past the last (%u)", name,
		               n - 1);
	return 0;
}

int dev_raid_open(const struct raid_params *pin, struct bdev **lowers, unsigned nlowers,
                  struct bdev **out, struct bo_err *err)
{
	struct raid_params p = *pin;
	char name[16];
	snprintf(name, sizeof(name), "raid%u", p.level);
	int rc = check_params(&p, nlowers, name, err);
	if (rc)
		return rc;
	unsigned n = nlowers - (p.journal ? 1 : 0);
	struct raid_dev *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->p = p;
	r->n = n;
	r->k = p.level == 0 ? n : p.level == 1 ? 1 : p.level == 6 ? n - 2 : n - 1;
	r->m = p.level == 6 ? 2 : p.level >= 4 ? 1 : 0;
	unsigned tol = p.level == 1 ? n - 1 : r->m;
	if (bo_popcount64(p.missing) > tol) {
		free(r);
		return bo_errf(err, -EINVAL, "%s: %u members missing, the level survives %u", name,
		               bo_popcount64(p.missing), tol);
	}
	uint64_t msz = UINT64_MAX;
	r->ss = lowers[0]->sector_size;
	for (unsigned i = 0; i < nlowers; i++) {
		if (lowers[i]->sector_size != lowers[0]->sector_size) {
			free(r);
			return bo_errf(err, -EINVAL,
			               "%s: lower %u has %u-byte sectors, lower 0 has %u", name, i,
			               lowers[i]->sector_size, lowers[0]->sector_size);
		}
		if (i < n && lowers[i]->nr_sectors < msz)
			msz = lowers[i]->nr_sectors;
	}
	r->cs = p.chunk / r->ss;
	r->meta = META / r->ss;
	r->bm_stripes = p.bitmap_chunk / p.chunk ? p.bitmap_chunk / p.chunk : 1;
	uint64_t off = r->meta;
	if (p.bitmap) {
		r->bm_regions = (msz / r->cs + r->bm_stripes - 1) / r->bm_stripes;
		r->bm_off = off;
		r->bm_sectors = ((r->bm_regions + 7) / 8 + META - 1) / META * r->meta;
		off += r->bm_sectors;
	}
	if (p.ppl) {
		r->ppl_off = off;
		off += r->meta + r->cs;
	}
	r->data_off = off;
	r->mdata = msz > off ? (msz - off) / r->cs * r->cs : 0;
	r->stripes = r->mdata / r->cs;
	if (r->stripes == 0) {
		free(r);
		return bo_errf(err, -EINVAL,
		               "%s: members of %llu sectors hold no whole %u-byte chunk after %llu "
		               "sectors of metadata",
		               name, (unsigned long long)msz, p.chunk, (unsigned long long)off);
	}
	if (p.journal) {
		r->jdev = lowers[n];
		uint64_t need = 2 * r->meta + (uint64_t)n * r->cs;
		if (r->jdev->nr_sectors < need) {
			free(r);
			return bo_errf(err, -EINVAL,
			               "%s: the journal device needs at least %llu sectors (one "
			               "whole stripe update)",
			               name, (unsigned long long)need);
		}
	}
	if (p.bitmap && !(r->bm = calloc(r->bm_sectors, r->ss))) {
		free(r);
		return -ENOMEM;
	}
	uint64_t asz = r->p.level == 1 ? r->mdata : r->mdata * r->k;
	blk_init(&r->dev, &raid_ops, name, r->ss, asz);
	memcpy(r->mem, lowers, n * sizeof(*lowers));
	r->rebuild_idx = -1;
	r->repl_idx = -1;

	/* assemble when every present member already carries this array */
	unsigned char *b = aligned_alloc(64, META);
	bool existing = b != NULL;
	for (unsigned i = 0; i < n && existing; i++) {
		if (p.missing >> i & 1)
			continue;
		struct sbinfo si;
		si.valid = false;
		if (blk_read(r->mem[i], 0, 1, b) == 0)
			raid_sb_decode(r, i, b, &si);
		existing = si.valid;
	}
	free(b);
	rc = existing ? raid_assemble(r, true, err) : create(r, err);
	if (rc) {
		free(r->bm);
		free(r);
		return rc;
	}
	*out = &r->dev;
	return 0;
}
