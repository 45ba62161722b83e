/* raid.c — md-style RAID 0/1/4/5/6 over member bdevs: layouts, rmw/rcw, degraded
 * I/O, rebuild, scrub, and what a power cut does to a stripe update in flight (the
 * write hole) with md's three mitigations: write-intent bitmap, PPL, write journal.
 * Parity arithmetic is in raid_parity.c; the spec entries are at the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_internal.h"

#define MAXM RAID_MAX_MEMBERS
#define META 4096u /* bytes of a superblock, a PPL header, a journal header */

#define SB_MAGIC  0x4253444941524f42ull /* "BORAIDSB" */
#define PPL_MAGIC 0x4c50504449415242ull
#define JSB_MAGIC 0x42534a4449415242ull
#define JR_MAGIC  0x524a4a4449415242ull

enum { F_BITMAP = 1, F_PPL = 2, F_JOURNAL = 4 };
enum { PH_SB, PH_BM, PH_LOG, PH_DATA, PH_MAX };

struct raid_stats {
	uint64_t host_reads, host_writes, host_read_sectors, host_write_sectors, flushes;
	uint64_t member_reads, member_writes, member_read_sectors, member_write_sectors;
	uint64_t wr_read_sectors, wr_write_sectors; /* member I/O caused by host writes */
	uint64_t full_stripe, rmw, rcw, reconstruct_write, direct_write;
	uint64_t degraded_reads, member_failures, resync_stripes, resync_skipped;
	uint64_t dirty_degraded_starts, scrub_mismatches, rebuild_stripes;
	uint64_t ppl_writes, ppl_recovered, ppl_skipped, journal_records, journal_replayed;
	uint64_t journal_checkpoints, sb_writes, bitmap_writes;
};

#define BUFPOOL_MAX 24
struct bufpool {
	unsigned n;
	void *p[BUFPOOL_MAX];
	size_t sz[BUFPOOL_MAX];
};

struct raid_dev {
	struct bdev dev;
	struct raid_params p;
	unsigned n, k, m; /* members, data chunks per stripe, parity chunks */
	struct bdev *mem[MAXM];
	struct bdev *jdev;
	uint32_t ss;
	uint64_t cs;              /* chunk, sectors */
	uint64_t meta;            /* META in sectors */
	uint64_t data_off, mdata; /* member sectors: first data sector, data sectors */
	uint64_t stripes;
	/* persistent state as last written to the members */
	uint64_t failed, events;
	int rebuild_idx;
	uint64_t rebuild_pos;
	/* hot replacement (mdadm --replace): repl receives member repl_idx's chunks
	 * while the member keeps serving; below repl_pos it also gets every write.
	 * Kept in RAM only: a power cut abandons it. */
	struct bdev *repl;
	int repl_idx;
	uint64_t repl_pos;
	bool dirty;
	uint64_t bm_off, bm_sectors, bm_stripes, bm_regions;
	unsigned char *bm;
	uint64_t ppl_off;
	uint64_t j_head, j_seq, j_tail;
	bool in_write; /* counts member I/O towards amplification */
	bool inactive; /* dirty and degraded at assembly, and refused to start */
	struct bufpool pool;
	struct raid_stats st;
};

static const struct bdev_ops raid_ops;

static unsigned popcount64(uint64_t v)
{
	unsigned c = 0;
	for (; v; v &= v - 1)
		c++;
	return c;
}

/* ---- layout (md's raid5_compute_sector) ------------------------------------ */

static void map5(enum raid_layout lay, unsigned n, uint64_t stripe, unsigned *dd, int *pd)
{
	unsigned k = n - 1, r = (unsigned)(stripe % n);
	switch (lay) {
	case RAID_LEFT_ASYMMETRIC:
		*pd = (int)(k - r);
		if (*dd >= (unsigned)*pd)
			(*dd)++;
		break;
	case RAID_RIGHT_ASYMMETRIC:
		*pd = (int)r;
		if (*dd >= (unsigned)*pd)
			(*dd)++;
		break;
	case RAID_LEFT_SYMMETRIC:
		*pd = (int)(k - r);
		*dd = (*pd + 1 + *dd) % n;
		break;
	case RAID_RIGHT_SYMMETRIC:
		*pd = (int)r;
		*dd = (*pd + 1 + *dd) % n;
		break;
	case RAID_PARITY_N: *pd = (int)k; break;
	}
}

static void map6(enum raid_layout lay, unsigned n, uint64_t stripe, unsigned *dd, int *pd, int *qd)
{
	unsigned r = (unsigned)(stripe % n);
	switch (lay) {
	case RAID_LEFT_ASYMMETRIC:
	case RAID_RIGHT_ASYMMETRIC:
		*pd = lay == RAID_LEFT_ASYMMETRIC ? (int)(n - 1 - r) : (int)r;
		*qd = *pd + 1;
		if (*pd == (int)n - 1) {
			(*dd)++;
			*qd = 0;
		} else if (*dd >= (unsigned)*pd) {
			*dd += 2;
		}
		break;
	case RAID_LEFT_SYMMETRIC:
	case RAID_RIGHT_SYMMETRIC:
		*pd = lay == RAID_LEFT_SYMMETRIC ? (int)(n - 1 - r) : (int)r;
		*qd = (*pd + 1) % (int)n;
		*dd = (*pd + 2 + *dd) % n;
		break;
	case RAID_PARITY_N:
		*pd = (int)n - 2;
		*qd = (int)n - 1;
		break;
	}
}

static int check_geometry(unsigned level, enum raid_layout layout, unsigned n)
{
	if (n < 2 || n > MAXM)
		return -EINVAL;
	if ((level == 4 || level == 5) && n < 3)
		return -EINVAL;
	if (level == 6 && n < 4)
		return -EINVAL;
	if (level != 0 && level != 1 && level != 4 && level != 5 && level != 6)
		return -EINVAL;
	if (layout != RAID_LEFT_ASYMMETRIC && layout != RAID_RIGHT_ASYMMETRIC &&
	    layout != RAID_LEFT_SYMMETRIC && layout != RAID_RIGHT_SYMMETRIC &&
	    layout != RAID_PARITY_N)
		return -EINVAL;
	return 0;
}

int raid_map_chunk(unsigned level, enum raid_layout layout, unsigned n, uint64_t chunk,
                   unsigned *member, uint64_t *stripe)
{
	if (check_geometry(level, layout, n))
		return -EINVAL;
	if (level == 4)
		layout = RAID_PARITY_N;
	int pd, qd;
	unsigned k = level == 0 ? n : level == 1 ? 1 : level == 6 ? n - 2 : n - 1;
	unsigned dd = (unsigned)(chunk % k);
	*stripe = chunk / k;
	if (level == 1)
		dd = 0;
	else if (level == 4 || level == 5)
		map5(layout, n, *stripe, &dd, &pd);
	else if (level == 6)
		map6(layout, n, *stripe, &dd, &pd, &qd);
	*member = dd;
	return 0;
}

int raid_parity_members(unsigned level, enum raid_layout layout, unsigned n, uint64_t stripe,
                        int *p, int *q)
{
	if (check_geometry(level, layout, n))
		return -EINVAL;
	unsigned dd = 0;
	*p = *q = -1;
	if (level == 4)
		map5(RAID_PARITY_N, n, stripe, &dd, p);
	else if (level == 5)
		map5(layout, n, stripe, &dd, p);
	else if (level == 6)
		map6(layout, n, stripe, &dd, p, q);
	return 0;
}

/* Per stripe: the member of each logical data chunk, its Q slot, and the member of
 * every buffer in slot order (data slots, P, Q). md computes Q over the data disks
 * in member order starting just after Q (raid6_d0), which is the logical order for
 * the symmetric layouts but not for the asymmetric ones. */
struct sgeo {
	unsigned dm[MAXM], slot[MAXM], of_slot[MAXM + 2];
	int pm, qm;
};

static void stripe_geo(const struct raid_dev *r, uint64_t s, struct sgeo *g)
{
	unsigned level = r->p.level;
	g->pm = g->qm = -1;
	for (unsigned j = 0; j < r->k; j++) {
		uint64_t st;
		if (level == 0 || level == 1)
			g->dm[j] = j;
		else
			raid_map_chunk(level, r->p.layout, r->n, s * r->k + j, &g->dm[j], &st);
		g->slot[j] = j;
	}
	if (level >= 4)
		raid_parity_members(level, r->p.layout, r->n, s, &g->pm, &g->qm);
	if (level == 6) {
		unsigned d0 = g->qm == (int)r->n - 1 ? 0 : (unsigned)g->qm + 1, sl = 0;
		unsigned slot_of_member[MAXM];
		for (unsigned c = 0; c < r->n; c++) {
			unsigned i = (d0 + c) % r->n;
			if ((int)i != g->pm && (int)i != g->qm)
				slot_of_member[i] = sl++;
		}
		for (unsigned j = 0; j < r->k; j++)
			g->slot[j] = slot_of_member[g->dm[j]];
	}
	for (unsigned j = 0; j < r->k; j++)
		g->of_slot[g->slot[j]] = g->dm[j];
	if (g->pm >= 0)
		g->of_slot[r->k] = (unsigned)g->pm;
	if (g->qm >= 0)
		g->of_slot[r->k + 1] = (unsigned)g->qm;
}

/* ---- member I/O -------------------------------------------------------------- */

static bool usable(const struct raid_dev *r, unsigned i, uint64_t s)
{
	if (r->failed >> i & 1)
		return false;
	return !(r->rebuild_idx == (int)i && s >= r->rebuild_pos);
}

static unsigned tolerance(const struct raid_dev *r)
{
	return r->p.level == 1 ? r->n - 1 : r->m;
}

/* Members that hold nothing current for stripe s: failed, missing, or not yet
 * rebuilt that far. */
static unsigned stripe_lost(const struct raid_dev *r, uint64_t s)
{
	unsigned lost = 0;
	for (unsigned i = 0; i < r->n; i++)
		lost += !usable(r, i, s);
	return lost;
}

/* A stripe with more members lost than the level survives cannot hold what is
 * written to it (md fails such a stripe's I/O, and a RAID0 with a member gone
 * is broken as a whole): acknowledging the write would promise what a later
 * read cannot keep. Checked before a stripe update is planned and again after
 * it ran, since a member can fail under the update itself. */
static int stripe_writable(struct raid_dev *r, uint64_t s)
{
	unsigned lost = stripe_lost(r, s);
	if (lost <= tolerance(r))
		return 0;
	return bo_errf(&r->dev.err, -EIO,
	               "%s: stripe %llu: %u of %u members failed or missing, RAID%u survives %u: "
	               "the write cannot be made durable",
	               r->dev.name, (unsigned long long)s, lost, r->n, r->p.level, tolerance(r));
}

/* The superblock and the journal superblock fill one sector (crc in its first 512
 * bytes) so that a write of them cut by the power lands whole or not at all. */
#define SB_CRC 508

static void sb_encode(const struct raid_dev *r, unsigned i, uint64_t events, bool dirty,
                      unsigned char *b)
{
	memset(b, 0, r->ss);
	put_le64(b + 0, SB_MAGIC);
	put_le32(b + 8, 1);
	put_le32(b + 12, r->p.level);
	put_le32(b + 16, r->n);
	put_le32(b + 20, i);
	put_le32(b + 24, r->p.chunk);
	put_le32(b + 28, (uint32_t)r->p.layout);
	put_le32(b + 32, (r->p.bitmap ? F_BITMAP : 0) | (r->p.ppl ? F_PPL : 0) |
	                     (r->p.journal ? F_JOURNAL : 0));
	put_le32(b + 36, dirty);
	put_le64(b + 40, r->data_off);
	put_le64(b + 48, r->mdata);
	put_le64(b + 56, events);
	put_le64(b + 64, r->failed);
	put_le32(b + 72, r->rebuild_idx < 0 ? 0xffffffffu : (uint32_t)r->rebuild_idx);
	put_le64(b + 80, r->rebuild_pos);
	put_le64(b + 88, r->bm_stripes);
	put_le32(b + SB_CRC, crc32c(b, SB_CRC));
}

static void member_failed(struct raid_dev *r, unsigned i);

static int mread(struct raid_dev *r, unsigned i, uint64_t lba, uint64_t count, void *buf)
{
	int rc = blk_read(r->mem[i], lba, (uint32_t)count, buf);
	r->st.member_reads++;
	r->st.member_read_sectors += count;
	if (r->in_write)
		r->st.wr_read_sectors += count;
	if (rc)
		bo_errf(&r->dev.err, rc, "%s: member %u: read of %llu sectors at %llu: %s",
		        r->dev.name, i, (unsigned long long)count, (unsigned long long)lba,
		        bo_errstr(&r->mem[i]->err, rc));
	if (rc == -EIO)
		member_failed(r, i);
	return rc;
}

static int mwrite_raw(struct raid_dev *r, unsigned i, uint64_t lba, uint64_t count, const void *buf,
                      unsigned flags)
{
	struct bdev *d = i < r->n ? r->mem[i] : r->jdev;
	int rc = blk_write(d, lba, (uint32_t)count, buf, flags);
	r->st.member_writes++;
	r->st.member_write_sectors += count;
	if (r->in_write)
		r->st.wr_write_sectors += count;
	if (rc)
		bo_errf(&r->dev.err, rc, "%s: %s %u: write of %llu sectors at %llu: %s",
		        r->dev.name, i < r->n ? "member" : "journal", i, (unsigned long long)count,
		        (unsigned long long)lba, bo_errstr(&d->err, rc));
	/* a member being hot-replaced: what is already copied gets the write too */
	if (rc == 0 && r->repl && (int)i == r->repl_idx && lba >= r->data_off &&
	    (lba - r->data_off) / r->cs < r->repl_pos) {
		r->st.member_writes++;
		r->st.member_write_sectors += count;
		if (blk_write(r->repl, lba, (uint32_t)count, buf, flags)) {
			blk_close(r->repl); /* the replacement failed: give it up */
			r->repl = NULL;
			r->repl_idx = -1;
		}
	}
	return rc;
}

/* Superblocks to every member still in the array. A member that cannot take its
 * superblock is failed here without another round (the next round records it). */
static int write_sbs(struct raid_dev *r)
{
	unsigned char b[META];
	r->events++;
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		sb_encode(r, i, r->events, r->dirty, b);
		r->st.sb_writes++;
		int rc = mwrite_raw(r, i, 0, 1, b, BLK_FUA);
		if (rc == -EIO) {
			r->failed |= 1ull << i;
			r->st.member_failures++;
		} else if (rc) {
			return rc;
		}
	}
	return 0;
}

static void member_failed(struct raid_dev *r, unsigned i)
{
	if (r->failed >> i & 1)
		return;
	r->failed |= 1ull << i;
	if (r->rebuild_idx == (int)i)
		r->rebuild_idx = -1;
	r->st.member_failures++;
	if (r->repl && r->repl_idx == (int)i) {
		/* as md: a replacement whose source fails becomes a rebuild from where the
		 * copy had got to */
		blk_close(r->mem[i]);
		r->mem[i] = r->repl;
		r->repl = NULL;
		r->repl_idx = -1;
		r->failed &= ~(1ull << i);
		r->rebuild_idx = (int)i;
		r->rebuild_pos = r->repl_pos;
	}
	write_sbs(r);
}

/* ---- plans: the member writes of one stripe update, in phases ---------------- */

struct mw {
	unsigned dev; /* member, or n for the journal device */
	uint64_t lba;
	uint64_t count;
	const unsigned char *data;
	unsigned flags;
};

struct plan {
	unsigned nw[PH_MAX];
	struct mw w[PH_MAX][MAXM + 1];
	void *buf[4 * MAXM + 16];
	size_t bufsz[4 * MAXM + 16];
	unsigned nbuf;
	struct bufpool *pool;
	/* RAM state the phases make true once they are written */
	bool set_dirty;
	uint64_t bm_region;
	bool set_bm;
	uint64_t j_head, j_seq;
	bool set_j;
};

static void plan_init(struct plan *pl, struct raid_dev *r)
{
	memset(pl->nw, 0, sizeof(pl->nw));
	pl->nbuf = 0;
	pl->pool = &r->pool;
	pl->set_dirty = pl->set_bm = pl->set_j = false;
}

/* Buffers go back to the array's pool: allocating and freeing a chunk-sized buffer
 * per stripe makes malloc hand memory back to the kernel and fault it in again. */
static void plan_free(struct plan *pl)
{
	struct bufpool *bp = pl->pool;
	for (unsigned i = 0; i < pl->nbuf; i++) {
		if (bp->n < BUFPOOL_MAX) {
			bp->p[bp->n] = pl->buf[i];
			bp->sz[bp->n++] = pl->bufsz[i];
		} else {
			free(pl->buf[i]);
		}
	}
	pl->nbuf = 0;
}

static unsigned char *plan_alloc(struct plan *pl, size_t len)
{
	if (pl->nbuf == sizeof(pl->buf) / sizeof(pl->buf[0]))
		return NULL;
	size_t want = (len + 63) / 64 * 64;
	struct bufpool *bp = pl->pool;
	unsigned char *p = NULL;
	for (unsigned i = bp->n; i-- > 0;)
		if (bp->sz[i] >= want) {
			p = bp->p[i];
			want = bp->sz[i];
			bp->p[i] = bp->p[--bp->n];
			bp->sz[i] = bp->sz[bp->n];
			break;
		}
	if (!p)
		p = aligned_alloc(64, want ? want : 64);
	if (p) {
		pl->buf[pl->nbuf] = p;
		pl->bufsz[pl->nbuf++] = want;
	}
	return p;
}

static void plan_add(struct plan *pl, unsigned ph, unsigned dev, uint64_t lba, uint64_t count,
                     const unsigned char *data, unsigned flags)
{
	pl->w[ph][pl->nw[ph]++] = (struct mw){dev, lba, count, data, flags};
}

static void plan_commit_phase(struct raid_dev *r, const struct plan *pl, unsigned ph)
{
	if (ph == PH_SB && pl->set_dirty) {
		r->dirty = true;
		r->events++;
	}
	if (ph == PH_BM && pl->set_bm)
		r->bm[pl->bm_region / 8] |= (unsigned char)(1u << (pl->bm_region % 8));
	if (ph == PH_LOG && pl->set_j) {
		r->j_head = pl->j_head;
		r->j_seq = pl->j_seq;
	}
}

static int plan_exec_phase(struct raid_dev *r, struct plan *pl, unsigned ph)
{
	for (unsigned i = 0; i < pl->nw[ph]; i++) {
		const struct mw *w = &pl->w[ph][i];
		if (w->dev < r->n && (r->failed >> w->dev & 1))
			continue;
		int rc = mwrite_raw(r, w->dev, w->lba, w->count, w->data, w->flags);
		if (rc == -EIO && w->dev < r->n)
			member_failed(r, w->dev);
		else if (rc)
			return rc;
	}
	plan_commit_phase(r, pl, ph);
	return 0;
}

/* The superblock (dirty) and bitmap writes that must precede a write to stripe s. */
static int plan_meta(struct raid_dev *r, struct plan *pl, uint64_t s)
{
	if (r->p.level == 0)
		return 0;
	if (!r->p.journal && !r->dirty) {
		pl->set_dirty = true;
		for (unsigned i = 0; i < r->n; i++) {
			if (r->failed >> i & 1)
				continue;
			unsigned char *b = plan_alloc(pl, r->ss);
			if (!b)
				return -ENOMEM;
			sb_encode(r, i, r->events + 1, true, b);
			r->st.sb_writes++;
			plan_add(pl, PH_SB, i, 0, 1, b, BLK_FUA);
		}
	}
	if (r->p.bitmap) {
		uint64_t reg = s / r->bm_stripes;
		if (!(r->bm[reg / 8] >> (reg % 8) & 1)) {
			pl->set_bm = true;
			pl->bm_region = reg;
			uint64_t sec = reg / 8 / r->ss;
			for (unsigned i = 0; i < r->n; i++) {
				if (r->failed >> i & 1)
					continue;
				unsigned char *b = plan_alloc(pl, r->ss);
				if (!b)
					return -ENOMEM;
				memcpy(b, r->bm + sec * r->ss, r->ss);
				b[reg / 8 - sec * r->ss] |= (unsigned char)(1u << (reg % 8));
				r->st.bitmap_writes++;
				plan_add(pl, PH_BM, i, r->bm_off + sec, 1, b, BLK_FUA);
			}
		}
	}
	return 0;
}

/* ---- the write journal (md raid5-cache, write-through) ----------------------- */

static int jsb_write(struct raid_dev *r)
{
	unsigned char b[META];
	memset(b, 0, META);
	put_le64(b, JSB_MAGIC);
	put_le64(b + 8, r->j_head);
	put_le64(b + 16, r->j_seq);
	put_le32(b + SB_CRC, crc32c(b, SB_CRC));
	int rc = mwrite_raw(r, r->n, 0, 1, b, BLK_FUA);
	if (rc == 0)
		r->j_tail = r->j_head;
	return rc;
}

static int flush_members(struct raid_dev *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		int rc = blk_flush(r->mem[i]);
		if (rc == -EIO)
			member_failed(r, i);
		else if (rc)
			return bo_errf(&r->dev.err, rc, "%s: member %u: flush: %s", r->dev.name, i,
			               bo_errstr(&r->mem[i]->err, rc));
	}
	return 0;
}

/* Records before the head are on the members once the members are flushed. */
static int journal_checkpoint(struct raid_dev *r, bool wrap)
{
	int rc = flush_members(r);
	if (rc)
		return rc;
	if (wrap)
		r->j_head = r->meta;
	r->st.journal_checkpoints++;
	return jsb_write(r);
}

static int plan_journal(struct raid_dev *r, struct plan *pl)
{
	uint64_t total = 0;
	unsigned nw = pl->nw[PH_DATA];
	for (unsigned i = 0; i < nw; i++)
		total += pl->w[PH_DATA][i].count;
	uint64_t need = r->meta + total;
	if (r->j_head + need > r->jdev->nr_sectors) {
		int rc = journal_checkpoint(r, true);
		if (rc)
			return rc;
	}
	unsigned char *b = plan_alloc(pl, META + total * r->ss);
	if (!b)
		return -ENOMEM;
	memset(b, 0, META);
	put_le64(b, JR_MAGIC);
	put_le64(b + 8, r->j_seq);
	put_le32(b + 16, nw);
	put_le32(b + 20, (uint32_t)total);
	unsigned char *payload = b + META;
	for (unsigned i = 0; i < nw; i++) {
		const struct mw *w = &pl->w[PH_DATA][i];
		put_le32(b + 64 + 16 * i, w->dev);
		put_le32(b + 68 + 16 * i, (uint32_t)w->count);
		put_le64(b + 72 + 16 * i, w->lba);
		memcpy(payload, w->data, w->count * r->ss);
		payload += w->count * r->ss;
	}
	put_le32(b + 24, crc32c(b + META, total * r->ss));
	put_le32(b + META - 4, crc32c(b, META - 4));
	plan_add(pl, PH_LOG, r->n, r->j_head, need, b, BLK_FUA);
	pl->set_j = true;
	pl->j_head = r->j_head + need;
	pl->j_seq = r->j_seq + 1;
	r->st.journal_records++;
	return 0;
}

/* ---- host writes ------------------------------------------------------------- */

/* One stripe's share of a host write: per logical data chunk j the in-chunk
 * sectors [a, b) and where their new data is. */
struct piece {
	uint64_t s;
	uint32_t a[MAXM], b[MAXM], lo, hi;
	const unsigned char *src[MAXM];
};

/* Splits a host range into pieces, one per stripe, and calls fn for each. */
static int for_each_piece(struct raid_dev *r, uint64_t lba, uint64_t count,
                          const unsigned char *buf,
                          int (*fn)(struct raid_dev *, struct piece *, void *), void *ctx)
{
	struct piece pc;
	bool open = false;
	while (count) {
		uint64_t c = lba / r->cs, off = lba % r->cs;
		uint64_t n = r->cs - off < count ? r->cs - off : count;
		uint64_t s = c / r->k;
		unsigned j = (unsigned)(c % r->k);
		if (open && pc.s != s) {
			int rc = fn(r, &pc, ctx);
			if (rc)
				return rc;
			open = false;
		}
		if (!open) {
			memset(&pc, 0, sizeof(pc));
			pc.s = s;
			pc.lo = (uint32_t)r->cs;
			open = true;
		}
		pc.a[j] = (uint32_t)off;
		pc.b[j] = (uint32_t)(off + n);
		pc.src[j] = buf;
		if (pc.a[j] < pc.lo)
			pc.lo = pc.a[j];
		if (pc.b[j] > pc.hi)
			pc.hi = pc.b[j];
		lba += n;
		count -= n;
		if (buf)
			buf += n * r->ss;
	}
	return open ? fn(r, &pc, ctx) : 0;
}

static bool aligned32(const void *p)
{
	return ((uintptr_t)p & 31) == 0;
}

/* Reads members over [lo,hi) of stripe s into B (slot order) and computes whatever
 * is missing. -EAGAIN: a member failed meanwhile, start again. */
static int load_reconstruct(struct raid_dev *r, struct plan *pl, const struct sgeo *g, uint64_t s,
                            uint32_t lo, uint32_t hi, unsigned char **B)
{
	size_t L = (size_t)(hi - lo) * r->ss;
	uint64_t missing = 0;
	for (unsigned x = 0; x < r->k + r->m; x++) {
		unsigned i = g->of_slot[x];
		if (!(B[x] = plan_alloc(pl, L)))
			return -ENOMEM;
		if (!usable(r, i, s)) {
			missing |= 1ull << x;
			continue;
		}
		int rc = mread(r, i, r->data_off + s * r->cs + lo, hi - lo, B[x]);
		if (rc)
			return rc == -EIO ? -EAGAIN : rc;
	}
	if (popcount64(missing) > r->m)
		return bo_errf(&r->dev.err, -EIO,
		               "%s: stripe %llu: %u members missing, the array survives %u",
		               r->dev.name, (unsigned long long)s, popcount64(missing), r->m);
	return raid_recover(r->k, r->m, L, B, missing);
}

static int plan_parity_stripe(struct raid_dev *r, struct piece *pc, unsigned flags, struct plan *pl)
{
	struct sgeo g;
	stripe_geo(r, pc->s, &g);
	uint64_t s = pc->s, base = r->data_off + s * r->cs;
	uint32_t lo = pc->lo, hi = pc->hi;
	size_t L = (size_t)(hi - lo) * r->ss, ss = r->ss;
	unsigned n2 = 2 * r->n, k = r->k, m = r->m;
	int rc = plan_meta(r, pl, s);
	if (rc)
		return rc;

	/* md's handle_stripe_dirtying: count the reads each way, a failed member's
	 * read as very expensive; reconstruct-write wins ties. */
	unsigned rmw = 0, rcw = 0;
	bool rmw_bad = false, rcw_bad = false;
	for (unsigned j = 0; j < k; j++) {
		bool w = pc->a[j] < pc->b[j], over = pc->a[j] == lo && pc->b[j] == hi;
		bool u = usable(r, g.dm[j], s);
		if (w) {
			rmw += u ? 1 : n2;
			rmw_bad |= !u;
		}
		if (!over) {
			rcw += u ? 1 : n2;
			rcw_bad |= !u;
		}
	}
	bool pu = usable(r, (unsigned)g.pm, s), qu = m > 1 && usable(r, (unsigned)g.qm, s);
	rmw += pu ? 1 : n2;
	rmw_bad |= !pu;
	if (m > 1) {
		rmw += qu ? 1 : n2;
		rmw_bad |= !qu;
	}
	enum { DIRECT, FULL, RMW, RCW, RECON } mode;
	if (!pu && !qu)
		mode = DIRECT;
	else if (rcw == 0)
		mode = FULL;
	else if (rmw < rcw)
		mode = rmw_bad ? RECON : RMW;
	else
		mode = rcw_bad ? RECON : RCW;

	unsigned char *B[MAXM + 2] = {0}, *P = NULL, *Q = NULL;
	if (mode == FULL || mode == RCW) {
		for (unsigned j = 0; j < k; j++) {
			unsigned sl = g.slot[j];
			bool w = pc->a[j] < pc->b[j], over = pc->a[j] == lo && pc->b[j] == hi;
			if (over && aligned32(pc->src[j])) {
				B[sl] = (unsigned char *)pc->src[j];
				continue;
			}
			if (!(B[sl] = plan_alloc(pl, L)))
				return -ENOMEM;
			if (!over) {
				rc = mread(r, g.dm[j], base + lo, hi - lo, B[sl]);
				if (rc)
					return rc == -EIO ? -EAGAIN : rc;
			}
			if (w)
				memcpy(B[sl] + (pc->a[j] - lo) * ss, pc->src[j],
				       (pc->b[j] - pc->a[j]) * ss);
		}
		if (!(P = plan_alloc(pl, L)) || (m > 1 && !(Q = plan_alloc(pl, L))))
			return -ENOMEM;
		rc = raid_gen_parity(k, m, L, B, P, Q);
		if (rc)
			return rc;
		if (mode == FULL)
			r->st.full_stripe++;
		else
			r->st.rcw++;
	} else if (mode == RMW) {
		unsigned char *D[MAXM];
		unsigned slots[MAXM], nd = 0;
		if (!(P = plan_alloc(pl, L)) || (m > 1 && !(Q = plan_alloc(pl, L))))
			return -ENOMEM;
		if ((rc = mread(r, (unsigned)g.pm, base + lo, hi - lo, P)) ||
		    (m > 1 && (rc = mread(r, (unsigned)g.qm, base + lo, hi - lo, Q))))
			return rc == -EIO ? -EAGAIN : rc;
		for (unsigned j = 0; j < k; j++) {
			if (pc->a[j] >= pc->b[j])
				continue;
			unsigned char *dl = plan_alloc(pl, L);
			if (!dl)
				return -ENOMEM;
			memset(dl, 0, L);
			size_t at = (pc->a[j] - lo) * ss, len = (pc->b[j] - pc->a[j]) * ss;
			rc = mread(r, g.dm[j], base + pc->a[j], pc->b[j] - pc->a[j], dl + at);
			if (rc)
				return rc == -EIO ? -EAGAIN : rc;
			raid_xor_into(dl + at, pc->src[j], len);
			D[nd] = dl;
			slots[nd++] = g.slot[j];
		}
		unsigned char *dp = plan_alloc(pl, L), *dq = m > 1 ? plan_alloc(pl, L) : NULL;
		if (!dp || (m > 1 && !dq))
			return -ENOMEM;
		rc = raid_gen_delta(k, m, L, nd, slots, D, dp, dq);
		if (rc)
			return rc;
		raid_xor_into(P, dp, L);
		if (m > 1)
			raid_xor_into(Q, dq, L);
		r->st.rmw++;
	} else if (mode == RECON) {
		rc = load_reconstruct(r, pl, &g, s, lo, hi, B);
		if (rc)
			return rc;
		for (unsigned j = 0; j < k; j++)
			if (pc->a[j] < pc->b[j])
				memcpy(B[g.slot[j]] + (pc->a[j] - lo) * ss, pc->src[j],
				       (pc->b[j] - pc->a[j]) * ss);
		P = B[k];
		Q = m > 1 ? B[k + 1] : NULL;
		rc = raid_gen_parity(k, m, L, B, P, Q);
		if (rc)
			return rc;
		r->st.reconstruct_write++;
	} else {
		r->st.direct_write++;
	}

	/* PPL: the XOR of what this update leaves alone, on the parity member. */
	if (r->p.ppl && pu) {
		unsigned char *b = plan_alloc(pl, META + L);
		if (!b)
			return -ENOMEM;
		unsigned char *pp = b + META;
		memcpy(pp, P, L);
		memset(b, 0, META);
		put_le64(b, PPL_MAGIC);
		put_le64(b + 8, r->events);
		put_le64(b + 16, s);
		put_le32(b + 24, lo);
		put_le32(b + 28, hi);
		put_le32(b + 32, k);
		for (unsigned j = 0; j < k; j++) {
			put_le32(b + 64 + 8 * j, pc->a[j]);
			put_le32(b + 68 + 8 * j, pc->b[j]);
			if (pc->a[j] < pc->b[j])
				raid_xor_into(pp + (pc->a[j] - lo) * ss, pc->src[j],
				              (pc->b[j] - pc->a[j]) * ss);
		}
		put_le32(b + 36, crc32c(pp, L));
		put_le32(b + META - 4, crc32c(b, META - 4));
		plan_add(pl, PH_LOG, (unsigned)g.pm, r->ppl_off, r->meta + (hi - lo), b, BLK_FUA);
		r->st.ppl_writes++;
	}

	for (unsigned j = 0; j < k; j++)
		if (pc->a[j] < pc->b[j] && usable(r, g.dm[j], s))
			plan_add(pl, PH_DATA, g.dm[j], base + pc->a[j], pc->b[j] - pc->a[j],
			         pc->src[j], flags);
	if (pu)
		plan_add(pl, PH_DATA, (unsigned)g.pm, base + lo, hi - lo, P, flags);
	if (qu)
		plan_add(pl, PH_DATA, (unsigned)g.qm, base + lo, hi - lo, Q, flags);
	return r->p.journal ? plan_journal(r, pl) : 0;
}

static int plan_stripe_once(struct raid_dev *r, struct piece *pc, unsigned flags, struct plan *pl)
{
	uint64_t base = r->data_off + pc->s * r->cs;
	int rc = stripe_writable(r, pc->s);
	if (rc)
		return rc;
	if (r->p.level == 0) {
		for (unsigned j = 0; j < r->k; j++)
			if (pc->a[j] < pc->b[j])
				plan_add(pl, PH_DATA, j, base + pc->a[j], pc->b[j] - pc->a[j],
				         pc->src[j], flags);
		return 0;
	}
	if (r->p.level == 1) {
		if ((rc = plan_meta(r, pl, pc->s)))
			return rc;
		for (unsigned i = 0; i < r->n; i++)
			if (usable(r, i, pc->s))
				plan_add(pl, PH_DATA, i, base + pc->a[0], pc->b[0] - pc->a[0],
				         pc->src[0], flags);
		return r->p.journal ? plan_journal(r, pl) : 0;
	}
	return plan_parity_stripe(r, pc, flags, pl);
}

static int plan_stripe(struct raid_dev *r, struct piece *pc, unsigned flags, struct plan *pl)
{
	int rc = -EAGAIN;
	for (unsigned attempt = 0; rc == -EAGAIN && attempt <= r->n; attempt++) {
		plan_free(pl);
		plan_init(pl, r);
		rc = plan_stripe_once(r, pc, flags, pl);
	}
	if (rc == -EAGAIN)
		rc = bo_errf(&r->dev.err, -EIO, "%s: members keep failing", r->dev.name);
	return rc;
}

struct wctx {
	unsigned flags;
};

static int write_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	struct wctx *w = ctx;
	struct plan *pl = malloc(sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	plan_init(pl, r);
	int rc = plan_stripe(r, pc, w->flags, pl);
	for (unsigned ph = 0; rc == 0 && ph < PH_MAX; ph++)
		rc = plan_exec_phase(r, pl, ph);
	if (rc == 0)
		rc = stripe_writable(r, pc->s);
	plan_free(pl);
	free(pl);
	return rc;
}

static int refused(struct raid_dev *r)
{
	return bo_errf(&r->dev.err, -EIO,
	               "%s: not started: the array was dirty and degraded after a crash, so its "
	               "parity may not match its data (the write hole); md refuses to start it "
	               "without --force (start_dirty_degraded=true)",
	               r->dev.name);
}

static int raid_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return refused(r);
	struct wctx w = {flags};
	r->st.host_writes++;
	r->st.host_write_sectors += count;
	r->in_write = true;
	int rc = for_each_piece(r, lba, count, buf, write_piece, &w);
	r->in_write = false;
	return rc;
}

/* ---- host reads -------------------------------------------------------------- */

static int read_degraded(struct raid_dev *r, uint64_t s, unsigned j, uint32_t a, uint32_t b,
                         unsigned char *dst)
{
	struct sgeo g;
	stripe_geo(r, s, &g);
	int rc = -EAGAIN;
	for (unsigned attempt = 0; rc == -EAGAIN && attempt <= r->n; attempt++) {
		struct plan *pl = malloc(sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		plan_init(pl, r);
		unsigned char *B[MAXM + 2];
		rc = load_reconstruct(r, pl, &g, s, a, b, B);
		if (rc == 0)
			memcpy(dst, B[g.slot[j]], (size_t)(b - a) * r->ss);
		plan_free(pl);
		free(pl);
	}
	r->st.degraded_reads++;
	return rc == -EAGAIN ? -EIO : rc;
}

static int read_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	(void)ctx;
	uint64_t s = pc->s, base = r->data_off + s * r->cs;
	struct sgeo g;
	stripe_geo(r, s, &g);
	for (unsigned j = 0; j < r->k; j++) {
		if (pc->a[j] >= pc->b[j])
			continue;
		unsigned char *dst = (unsigned char *)pc->src[j];
		uint32_t a = pc->a[j], b = pc->b[j];
		if (r->p.level == 1) {
			int rc = -EIO;
			for (unsigned i = 0; i < r->n && rc; i++) {
				if (!usable(r, i, s))
					continue;
				rc = mread(r, i, base + a, b - a, dst);
				if (rc && rc != -EIO)
					return rc;
			}
			if (rc)
				return bo_errf(&r->dev.err, -EIO, "%s: no mirror could be read",
				               r->dev.name);
			continue;
		}
		int rc = -EIO;
		if (usable(r, g.dm[j], s)) {
			rc = mread(r, g.dm[j], base + a, b - a, dst);
			if (rc && rc != -EIO)
				return rc;
		}
		if (rc && r->p.level == 0)
			return bo_errf(&r->dev.err, -EIO, "%s: member %u has failed (RAID0)",
			               r->dev.name, g.dm[j]);
		if (rc && (rc = read_degraded(r, s, j, a, b, dst)))
			return rc;
	}
	return 0;
}

static int raid_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return refused(r);
	r->st.host_reads++;
	r->st.host_read_sectors += count;
	return for_each_piece(r, lba, count, buf, read_piece, NULL);
}

/* ---- flush, scrub, resync, rebuild ------------------------------------------- */

static int write_bitmap(struct raid_dev *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		r->st.bitmap_writes++;
		int rc = mwrite_raw(r, i, r->bm_off, r->bm_sectors, r->bm, BLK_FUA);
		if (rc == -EIO)
			member_failed(r, i);
		else if (rc)
			return rc;
	}
	return 0;
}

/* Everything written before is durable and every stripe consistent: the array
 * is clean again (md's safe mode, reached at each flush here). */
static int make_clean(struct raid_dev *r)
{
	struct bdev *d = &r->dev;
	int rc = flush_members(r);
	if (rc)
		return rc;
	if (r->jdev && (rc = blk_flush(r->jdev)))
		return bo_errf(&d->err, rc, "%s: journal flush: %s", d->name,
		               bo_errstr(&r->jdev->err, rc));
	if (r->p.journal && r->j_tail != r->j_head && (rc = jsb_write(r)))
		return rc;
	if (r->p.bitmap) {
		bool any = false;
		for (uint64_t i = 0; i < r->bm_sectors * r->ss; i++)
			any |= r->bm[i] != 0;
		if (any) {
			memset(r->bm, 0, r->bm_sectors * r->ss);
			if ((rc = write_bitmap(r)))
				return rc;
		}
	}
	if (r->dirty) {
		r->dirty = false;
		rc = write_sbs(r);
	}
	return rc;
}

static int raid_flush(struct bdev *d)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return refused(r);
	r->st.flushes++;
	int rc = make_clean(r);
	/* the last stripe is the one a rebuild reaches last: it has lost the most */
	if (rc == 0 && stripe_lost(r, r->stripes - 1) > tolerance(r))
		rc = bo_errf(&d->err, -EIO,
		             "%s: flush: %u of %u members failed or missing, RAID%u survives %u: "
		             "what was written cannot be made durable",
		             d->name, stripe_lost(r, r->stripes - 1), r->n, r->p.level,
		             tolerance(r));
	return rc;
}

/* Idle time: md's safe mode marks the array clean after 200 ms without writes,
 * with the same superblock update a flush ends with here. */
static int raid_settle(struct bdev *d)
{
	struct raid_dev *r = (struct raid_dev *)d;
	return r->inactive ? 0 : make_clean(r);
}

/* Checks (and with repair, fixes) one whole stripe; counts mismatched sectors. */
static int scrub_stripe(struct raid_dev *r, uint64_t s, bool repair, uint64_t *mism)
{
	size_t L = (size_t)r->cs * r->ss, ss = r->ss;
	uint64_t base = r->data_off + s * r->cs;
	struct plan *pl = malloc(sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	plan_init(pl, r);
	int rc = 0;
	uint64_t bad = 0;
	if (r->p.level == 1) {
		unsigned first = r->n;
		unsigned char *ref = plan_alloc(pl, L), *b = plan_alloc(pl, L);
		if (!ref || !b) {
			rc = -ENOMEM;
			goto out;
		}
		for (unsigned i = 0; i < r->n && rc == 0; i++) {
			if (!usable(r, i, s))
				continue;
			if (first == r->n) {
				first = i;
				rc = mread(r, i, base, r->cs, ref);
				continue;
			}
			if ((rc = mread(r, i, base, r->cs, b)))
				break;
			uint64_t here = 0;
			for (uint64_t x = 0; x < r->cs; x++)
				here += memcmp(ref + x * ss, b + x * ss, ss) != 0;
			bad += here;
			if (here && repair)
				rc = mwrite_raw(r, i, base, r->cs, ref, 0);
		}
		goto out;
	}
	struct sgeo g;
	stripe_geo(r, s, &g);
	unsigned char *B[MAXM + 2], *P = plan_alloc(pl, L),
	                            *Q = r->m > 1 ? plan_alloc(pl, L) : NULL;
	if (!P || (r->m > 1 && !Q)) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned x = 0; x < r->k + r->m && rc == 0; x++) {
		unsigned i = g.of_slot[x];
		if (!usable(r, i, s)) {
			rc = bo_errf(&r->dev.err, -EBUSY, "%s: member %u is missing", r->dev.name,
			             i);
			break;
		}
		if (!(B[x] = plan_alloc(pl, L)))
			rc = -ENOMEM;
		else
			rc = mread(r, i, base, r->cs, B[x]);
	}
	if (rc || (rc = raid_gen_parity(r->k, r->m, L, B, P, Q)))
		goto out;
	bool pbad = false, qbad = false;
	for (uint64_t x = 0; x < r->cs; x++) {
		bool pb = memcmp(P + x * ss, B[r->k] + x * ss, ss) != 0;
		bool qb = r->m > 1 && memcmp(Q + x * ss, B[r->k + 1] + x * ss, ss) != 0;
		bad += pb || qb;
		pbad |= pb;
		qbad |= qb;
	}
	if (repair && pbad)
		rc = mwrite_raw(r, (unsigned)g.pm, base, r->cs, P, 0);
	if (repair && qbad && rc == 0)
		rc = mwrite_raw(r, (unsigned)g.qm, base, r->cs, Q, 0);
out:
	*mism += bad;
	plan_free(pl);
	free(pl);
	return rc;
}

int raid_scrub(struct bdev *d, bool repair, uint64_t *mismatches)
{
	*mismatches = 0;
	if (!raid_is(d))
		return -EINVAL;
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return refused(r);
	if (r->p.level == 0)
		return bo_errf(&d->err, -EINVAL, "%s: RAID0 has nothing to check", d->name);
	if (r->failed || r->rebuild_idx >= 0)
		return bo_errf(&d->err, -EBUSY, "%s: scrub needs every member (array is degraded)",
		               d->name);
	for (uint64_t s = 0; s < r->stripes; s++) {
		int rc = scrub_stripe(r, s, repair, mismatches);
		if (rc)
			return rc;
	}
	r->st.scrub_mismatches += *mismatches;
	return repair ? flush_members(r) : 0;
}

/* Parity recomputed from data (or mirrors copied) where every member is there;
 * a degraded stripe cannot be resynced and keeps whatever the cut left. */
static int resync_stripe(struct raid_dev *r, uint64_t s)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!usable(r, i, s) && r->p.level != 1) {
			r->st.resync_skipped++;
			return 0;
		}
	uint64_t mism = 0;
	r->st.resync_stripes++;
	return scrub_stripe(r, s, true, &mism);
}

/* Copies member repl_idx onto its replacement (reconstructing where the member
 * cannot be read), then swaps them. */
static int replace_step(struct raid_dev *r, uint64_t max_stripes, uint64_t *done, uint64_t *total)
{
	unsigned idx = (unsigned)r->repl_idx;
	size_t L = (size_t)r->cs * r->ss;
	int rc = 0;
	for (uint64_t c = 0; c < max_stripes && r->repl && r->repl_pos < r->stripes && rc == 0;
	     c++) {
		uint64_t s = r->repl_pos, base = r->data_off + s * r->cs;
		struct plan *pl = malloc(sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		plan_init(pl, r);
		unsigned char *src = plan_alloc(pl, L);
		if (!src)
			rc = -ENOMEM;
		else
			rc = mread(r, idx, base, r->cs, src);
		if (rc == -EIO)
			rc = 0; /* the member failed: now a rebuild (member_failed) */
		else if (rc == 0 && blk_write(r->repl, base, (uint32_t)r->cs, src, 0))
			rc = bo_errf(&r->dev.err, -EIO, "%s: writing the replacement of member %u",
			             r->dev.name, idx);
		else if (rc == 0) {
			r->repl_pos++;
			r->st.rebuild_stripes++;
		}
		plan_free(pl);
		free(pl);
	}
	if (rc == 0 && r->repl && r->repl_pos >= r->stripes) {
		if ((rc = blk_flush(r->repl)))
			return rc;
		blk_close(r->mem[idx]);
		r->mem[idx] = r->repl;
		r->repl = NULL;
		r->repl_idx = -1;
		if (r->p.bitmap)
			rc = mwrite_raw(r, idx, r->bm_off, r->bm_sectors, r->bm, 0);
		if (rc == 0)
			rc = write_sbs(r);
	}
	*total = r->stripes;
	*done = r->repl ? r->repl_pos : r->rebuild_idx >= 0 ? r->rebuild_pos : r->stripes;
	return rc;
}

int raid_rebuild_step(struct bdev *d, uint64_t max_stripes, uint64_t *done, uint64_t *total)
{
	if (!raid_is(d))
		return -EINVAL;
	struct raid_dev *r = (struct raid_dev *)d;
	*total = r->stripes;
	*done = r->rebuild_idx < 0 ? r->stripes : r->rebuild_pos;
	if (r->inactive)
		return refused(r);
	if (r->repl)
		return replace_step(r, max_stripes, done, total);
	if (r->rebuild_idx < 0)
		return 0;
	unsigned idx = (unsigned)r->rebuild_idx;
	size_t L = (size_t)r->cs * r->ss;
	int rc = 0;
	for (uint64_t c = 0; c < max_stripes && r->rebuild_pos < r->stripes && rc == 0; c++) {
		uint64_t s = r->rebuild_pos, base = r->data_off + s * r->cs;
		struct plan *pl = malloc(sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		plan_init(pl, r);
		unsigned char *src = NULL;
		if (r->p.level == 1) {
			rc = -EIO;
			for (unsigned i = 0; i < r->n && rc; i++) {
				if (i == idx || !usable(r, i, s))
					continue;
				if (!(src = plan_alloc(pl, L))) {
					rc = -ENOMEM;
					break;
				}
				rc = mread(r, i, base, r->cs, src);
			}
		} else {
			struct sgeo g;
			stripe_geo(r, s, &g);
			unsigned char *B[MAXM + 2];
			rc = load_reconstruct(r, pl, &g, s, 0, (uint32_t)r->cs, B);
			for (unsigned x = 0; rc == 0 && x < r->k + r->m; x++)
				if (g.of_slot[x] == idx)
					src = B[x];
		}
		if (rc == 0)
			rc = mwrite_raw(r, idx, base, r->cs, src, 0);
		if (rc == 0) {
			r->rebuild_pos++;
			r->st.rebuild_stripes++;
		}
		plan_free(pl);
		free(pl);
	}
	if (rc)
		return rc == -EAGAIN ? -EIO : rc;
	if (r->rebuild_pos >= r->stripes) {
		if ((rc = blk_flush(r->mem[idx])))
			return rc;
		r->rebuild_idx = -1;
	}
	*done = r->rebuild_idx < 0 ? r->stripes : r->rebuild_pos;
	return write_sbs(r);
}

/* ---- assembly: superblocks, and recovery after an unclean shutdown ----------- */

struct sbinfo {
	bool valid, dirty;
	uint64_t events, failed, rebuild_pos;
	int rebuild_idx;
};

static void sb_decode(const struct raid_dev *r, unsigned i, const unsigned char *b,
                      struct sbinfo *si)
{
	memset(si, 0, sizeof(*si));
	if (get_le64(b) != SB_MAGIC || get_le32(b + SB_CRC) != crc32c(b, SB_CRC))
		return;
	uint32_t feat =
	    (r->p.bitmap ? F_BITMAP : 0) | (r->p.ppl ? F_PPL : 0) | (r->p.journal ? F_JOURNAL : 0);
	if (get_le32(b + 8) != 1 || get_le32(b + 12) != r->p.level || get_le32(b + 16) != r->n ||
	    get_le32(b + 20) != i || get_le32(b + 24) != r->p.chunk ||
	    get_le32(b + 28) != (uint32_t)r->p.layout || get_le32(b + 32) != feat ||
	    get_le64(b + 40) != r->data_off || get_le64(b + 48) != r->mdata ||
	    get_le64(b + 88) != r->bm_stripes)
		return;
	uint32_t ri = get_le32(b + 72);
	si->valid = true;
	si->dirty = get_le32(b + 36) != 0;
	si->events = get_le64(b + 56);
	si->failed = get_le64(b + 64) & ((r->n == 64 ? 0 : (1ull << r->n)) - 1);
	si->rebuild_idx = ri < r->n ? (int)ri : -1;
	si->rebuild_pos = get_le64(b + 80);
	if (si->rebuild_pos > r->stripes)
		si->rebuild_pos = r->stripes;
}

static int ppl_recover(struct raid_dev *r)
{
	size_t ss = r->ss;
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		struct plan *pl = malloc(sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		plan_init(pl, r);
		int rc = 0;
		unsigned char *h = plan_alloc(pl, META), *pp = NULL;
		if (!h || mread(r, i, r->ppl_off, r->meta, h))
			goto next;
		if (get_le64(h) != PPL_MAGIC || get_le32(h + META - 4) != crc32c(h, META - 4))
			goto next;
		uint64_t s = get_le64(h + 16);
		uint32_t lo = get_le32(h + 24), hi = get_le32(h + 28);
		if (s >= r->stripes || lo >= hi || hi > r->cs || get_le32(h + 32) != r->k)
			goto next;
		struct sgeo g;
		stripe_geo(r, s, &g);
		if (g.pm != (int)i || !usable(r, i, s))
			goto next;
		uint32_t a[MAXM], b[MAXM];
		bool ok = true;
		for (unsigned j = 0; j < r->k; j++) {
			a[j] = get_le32(h + 64 + 8 * j);
			b[j] = get_le32(h + 68 + 8 * j);
			if (a[j] > b[j] || (a[j] < b[j] && (a[j] < lo || b[j] > hi)))
				ok = false;
		}
		size_t L = (size_t)(hi - lo) * ss;
		if (!ok || !(pp = plan_alloc(pl, L)) ||
		    mread(r, i, r->ppl_off + r->meta, hi - lo, pp) ||
		    get_le32(h + 36) != crc32c(pp, L))
			goto next;
		unsigned char *cur = plan_alloc(pl, L), *par = plan_alloc(pl, L);
		if (!cur || !par)
			goto next;
		uint64_t base = r->data_off + s * r->cs;
		/* Row by row: a sector row whose modified chunks are all present gets
		 * parity = pp ^ their current data; a row with a modified chunk on a lost
		 * member is left alone (md: "no PPL recovery for this stripe"; md decides
		 * per 4 KiB page, here per sector, so only sectors being written are lost). */
		if ((rc = mread(r, i, base + lo, hi - lo, par)))
			goto next;
		for (unsigned j = 0; j < r->k && rc == 0; j++) {
			if (a[j] >= b[j] || !usable(r, g.dm[j], s))
				continue;
			rc = mread(r, g.dm[j], base + a[j], b[j] - a[j], cur + (a[j] - lo) * ss);
			if (rc == 0)
				raid_xor_into(pp + (a[j] - lo) * ss, cur + (a[j] - lo) * ss,
				              (b[j] - a[j]) * ss);
		}
		bool skipped = false;
		for (uint32_t x = lo; x < hi && rc == 0; x++) {
			bool lost = false;
			for (unsigned j = 0; j < r->k; j++)
				lost |= a[j] <= x && x < b[j] && !usable(r, g.dm[j], s);
			if (lost) {
				memcpy(pp + (x - lo) * ss, par + (x - lo) * ss, ss);
				skipped = true;
			}
		}
		if (skipped)
			r->st.ppl_skipped++;
		if (rc == 0 && (rc = mwrite_raw(r, i, base + lo, hi - lo, pp, 0)) == 0)
			r->st.ppl_recovered++;
	next:
		plan_free(pl);
		free(pl);
		if (rc && rc != -EIO)
			return rc;
	}
	return 0;
}

static int journal_recover(struct raid_dev *r)
{
	unsigned char *h = aligned_alloc(64, META);
	if (!h)
		return -ENOMEM;
	uint64_t pos = r->meta, seq = 1;
	int rc = blk_read(r->jdev, 0, 1, h);
	if (rc == 0 && get_le64(h) == JSB_MAGIC && get_le32(h + SB_CRC) == crc32c(h, SB_CRC)) {
		pos = get_le64(h + 8);
		seq = get_le64(h + 16);
		if (pos < r->meta || pos > r->jdev->nr_sectors)
			pos = r->meta;
	}
	rc = 0;
	while (rc == 0 && pos + r->meta <= r->jdev->nr_sectors) {
		if (blk_read(r->jdev, pos, (uint32_t)r->meta, h))
			break;
		if (get_le64(h) != JR_MAGIC || get_le32(h + META - 4) != crc32c(h, META - 4) ||
		    get_le64(h + 8) != seq)
			break;
		uint32_t nw = get_le32(h + 16), total = get_le32(h + 20);
		/* a record is one stripe update: at most a chunk on every member */
		if (nw > r->n || total > (uint64_t)r->n * r->cs ||
		    total > r->jdev->nr_sectors - pos - r->meta)
			break;
		uint64_t sum = 0;
		bool ok = true;
		for (unsigned i = 0; i < nw; i++) {
			uint32_t dev = get_le32(h + 64 + 16 * i), cnt = get_le32(h + 68 + 16 * i);
			uint64_t lba = get_le64(h + 72 + 16 * i);
			if (dev >= r->n || cnt == 0 || lba < r->data_off ||
			    lba >= r->data_off + r->mdata || cnt > r->data_off + r->mdata - lba)
				ok = false;
			sum += cnt;
		}
		if (!ok || sum != total)
			break;
		unsigned char *p = malloc((size_t)total * r->ss);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		if (blk_read(r->jdev, pos + r->meta, total, p) ||
		    get_le32(h + 24) != crc32c(p, (size_t)total * r->ss)) {
			free(p);
			break;
		}
		unsigned char *q = p;
		for (unsigned i = 0; i < nw && rc == 0; i++) {
			uint32_t dev = get_le32(h + 64 + 16 * i), cnt = get_le32(h + 68 + 16 * i);
			if (!(r->failed >> dev & 1)) {
				rc = mwrite_raw(r, dev, get_le64(h + 72 + 16 * i), cnt, q, 0);
				if (rc == -EIO) {
					member_failed(r, dev);
					rc = 0;
				}
			}
			q += (size_t)cnt * r->ss;
		}
		free(p);
		r->st.journal_replayed++;
		pos += r->meta + total;
		seq++;
	}
	free(h);
	if (rc)
		return rc;
	r->j_head = pos;
	r->j_seq = seq;
	return journal_checkpoint(r, false);
}

static int assemble(struct raid_dev *r, bool first, struct bo_err *err)
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
			sb_decode(r, i, b, &si[i]);
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
	unsigned lost = popcount64(r->failed);
	if (r->p.level != 0 && lost > tolerance(r))
		return bo_errf(err, -EIO, "%s: %u of %u members are missing, the array survives %u",
		               r->dev.name, lost, r->n, tolerance(r));
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
		rc = journal_recover(r);
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
			rc = ppl_recover(r);
		} else if (r->p.bitmap) {
			for (uint64_t s = 0; s < r->stripes && rc == 0; s++)
				if (r->bm[s / r->bm_stripes / 8] >> (s / r->bm_stripes % 8) & 1)
					rc = resync_stripe(r, s);
		} else {
			for (uint64_t s = 0; s < r->stripes && rc == 0; s++)
				rc = resync_stripe(r, s);
		}
	}
	if (rc == 0)
		rc = flush_members(r);
	if (rc == 0 && had_bits) {
		memset(r->bm, 0, r->bm_sectors * r->ss);
		rc = write_bitmap(r);
	}
	r->dirty = false;
	if (rc == 0)
		rc = write_sbs(r);
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
			rc = mwrite_raw(r, i, r->ppl_off, r->meta, z, 0);
	}
	free(z);
	if (rc == 0 && r->p.bitmap)
		rc = write_bitmap(r);
	if (rc == 0 && r->p.journal) {
		r->j_head = r->meta;
		r->j_seq = 1;
		rc = jsb_write(r);
	}
	if (rc == 0 && r->p.level != 0 && !r->failed)
		for (uint64_t s = 0; s < r->stripes && rc == 0; s++) {
			uint64_t mism = 0;
			rc = scrub_stripe(r, s, true, &mism);
		}
	if (rc == 0)
		rc = flush_members(r);
	if (rc == 0)
		rc = write_sbs(r);
	return rc ? bo_errf(err, rc, "%s: creating the array: %s", r->dev.name,
	                    bo_errstr(&r->dev.err, rc))
	          : 0;
}

/* ---- power ------------------------------------------------------------------- */

struct cutctx {
	struct blk_chooser *ch;
	uint64_t target, idx;
	struct plan *pl; /* the plan of the stripe caught in flight */
	struct blk_inflight mi[MAXM + 1];
	bool has[MAXM + 1];
	unsigned flags;
};

static int cut_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	struct cutctx *c = ctx;
	if (c->idx > c->target)
		return 0;
	if (c->idx++ < c->target) {
		struct wctx w = {c->flags};
		return write_piece(r, pc, &w);
	}
	int rc = plan_stripe(r, pc, c->flags, c->pl);
	if (rc)
		return rc;
	unsigned phases[PH_MAX], np = 0;
	for (unsigned ph = 0; ph < PH_MAX; ph++)
		if (c->pl->nw[ph])
			phases[np++] = ph;
	uint64_t at = blk_choose(c->ch, np, "raid: phase of the stripe update at the cut");
	for (uint64_t x = 0; x < at && rc == 0; x++)
		rc = plan_exec_phase(r, c->pl, phases[x]);
	if (rc || np == 0)
		return rc;
	unsigned ph = phases[at];
	for (unsigned i = 0; i < c->pl->nw[ph]; i++) {
		const struct mw *w = &c->pl->w[ph][i];
		uint64_t fate =
		    blk_choose(c->ch, 3, "raid: member write not started / completed / in flight");
		if (fate == 1) {
			rc = mwrite_raw(r, w->dev, w->lba, w->count, w->data, w->flags);
			if (rc)
				return rc;
		} else if (fate == 2) {
			c->mi[w->dev] =
			    (struct blk_inflight){w->lba, (uint32_t)w->count, w->flags, w->data};
			c->has[w->dev] = true;
		}
	}
	return 0;
}

static int count_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	(void)r;
	(void)pc;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* The stripe updates of an in-flight host write: those before a chosen one done,
 * the chosen one caught in a chosen phase with each of that phase's member writes
 * not started, completed or itself in flight (the member decides how much of it
 * landed), the rest not started. Then every member loses power. */
static int raid_power_cut(struct bdev *d, struct blk_chooser *ch,
                          const struct blk_inflight *inflight)
{
	struct raid_dev *r = (struct raid_dev *)d;
	struct cutctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->pl = malloc(sizeof(*c->pl));
	if (!c->pl) {
		free(c);
		return -ENOMEM;
	}
	plan_init(c->pl, r);
	c->ch = ch;
	int rc = 0;
	if (inflight && !r->inactive) {
		uint64_t nst = 0;
		for_each_piece(r, inflight->lba, inflight->count, NULL, count_piece, &nst);
		c->target = blk_choose(ch, nst, "raid: stripe of the in-flight write at the cut");
		c->flags = inflight->flags;
		r->in_write = true;
		/* an error here (a member failing) only shortens what persisted */
		for_each_piece(r, inflight->lba, inflight->count, inflight->data, cut_piece, c);
		r->in_write = false;
	}
	for (unsigned i = 0; i <= r->n && rc == 0; i++) {
		struct bdev *m = i < r->n ? r->mem[i] : r->jdev;
		if (m)
			rc = blk_power_cut(m, ch, c->has[i] ? &c->mi[i] : NULL);
	}
	if (rc == 0 && r->repl)
		rc = blk_power_cut(r->repl, ch, NULL);
	plan_free(c->pl);
	free(c->pl);
	free(c);
	return rc;
}

static int raid_power_restore(struct bdev *d)
{
	struct raid_dev *r = (struct raid_dev *)d;
	for (unsigned i = 0; i <= r->n; i++) {
		struct bdev *m = i < r->n ? r->mem[i] : r->jdev;
		int rc = m ? blk_power_restore(m) : 0;
		if (rc)
			return bo_errf(&d->err, rc, "%s: restoring lower %u: %s", d->name, i,
			               bo_errstr(&m->err, rc));
	}
	if (r->repl) { /* not recorded on the members: the replacement is abandoned */
		blk_close(r->repl);
		r->repl = NULL;
		r->repl_idx = -1;
	}
	return assemble(r, false, &d->err);
}

/* ---- the rest of the bdev ---------------------------------------------------- */

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

/* md raid456 forwards no discard unless members are known to return zeroes
 * (devices_handle_discard_safely), since parity would no longer match; RAID0/1
 * pass it through. */
static int discard_piece(struct raid_dev *r, struct piece *pc, void *ctx)
{
	(void)ctx;
	uint64_t base = r->data_off + pc->s * r->cs;
	for (unsigned j = 0; j < r->k; j++) {
		if (pc->a[j] >= pc->b[j])
			continue;
		for (unsigned i = 0; i < r->n; i++) {
			if ((r->p.level == 0 && i != j) || (r->failed >> i & 1))
				continue;
			int rc = blk_discard(r->mem[i], base + pc->a[j], pc->b[j] - pc->a[j]);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int raid_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->inactive)
		return refused(r);
	if (r->p.level >= 4)
		return 0;
	return for_each_piece(r, lba, count, NULL, discard_piece, NULL);
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
	emit(ctx, "failed_members", popcount64(r->failed));
	emit(ctx, "rebuild_pos", r->rebuild_idx < 0 ? r->stripes : r->rebuild_pos);
	emit(ctx, "stripes", r->stripes);
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
	return write_sbs(r);
}

int raid_fail_member(struct bdev *d, unsigned idx)
{
	if (!raid_is(d))
		return -EINVAL;
	struct raid_dev *r = (struct raid_dev *)d;
	if (idx >= r->n)
		return bo_errf(&d->err, -EINVAL, "%s: no member %u", d->name, idx);
	member_failed(r, idx);
	return 0;
}

int raid_replace(struct bdev *d, unsigned idx, struct bdev *newdev, struct bo_err *err)
{
	if (!raid_is(d))
		return bo_errf(err, -EINVAL, "not a RAID device");
	struct raid_dev *r = (struct raid_dev *)d;
	if (r->p.level == 0)
		return bo_errf(err, -EINVAL, "%s: RAID0 cannot rebuild a member", d->name);
	if (idx >= r->n)
		return bo_errf(err, -EINVAL, "%s: no member %u", d->name, idx);
	if (r->rebuild_idx >= 0 || r->repl)
		return bo_errf(err, -EBUSY, "%s: member %d is still being rebuilt or replaced",
		               d->name, r->rebuild_idx >= 0 ? r->rebuild_idx : r->repl_idx);
	if (newdev->sector_size != r->ss || newdev->nr_sectors < r->data_off + r->mdata)
		return bo_errf(err, -EINVAL,
		               "%s: replacement needs %u-byte sectors and %llu sectors", d->name,
		               r->ss, (unsigned long long)(r->data_off + r->mdata));
	if (!(r->failed >> idx & 1)) {
		/* hot replace of a working member: it keeps serving while copied */
		int rc = 0;
		if (r->p.ppl) {
			unsigned char *z = calloc(1, META);
			rc = z ? blk_write(newdev, r->ppl_off, (uint32_t)r->meta, z, 0) : -ENOMEM;
			free(z);
		}
		if (rc)
			return bo_errf(err, rc, "%s: preparing the replacement: %s", d->name,
			               bo_errstr(&newdev->err, rc));
		r->repl = newdev;
		r->repl_idx = (int)idx;
		r->repl_pos = 0;
		return 0;
	}
	blk_close(r->mem[idx]);
	r->mem[idx] = newdev;
	r->failed &= ~(1ull << idx);
	r->rebuild_idx = (int)idx;
	r->rebuild_pos = 0;
	int rc = 0;
	unsigned char *z = calloc(1, META);
	if (!z)
		return -ENOMEM;
	if (r->p.ppl)
		rc = mwrite_raw(r, idx, r->ppl_off, r->meta, z, 0);
	free(z);
	if (rc == 0 && r->p.bitmap)
		rc = mwrite_raw(r, idx, r->bm_off, r->bm_sectors, r->bm, 0);
	if (rc == 0)
		rc = write_sbs(r);
	return rc ? bo_errf(err, rc, "%s: %s", d->name, bo_errstr(&d->err, rc)) : 0;
}

int dev_raid_open(const struct raid_params *pin, struct bdev **lowers, unsigned nlowers,
                  struct bdev **out, struct bo_err *err)
{
	struct raid_params p = *pin;
	char name[16];
	snprintf(name, sizeof(name), "raid%u", p.level);
	if (p.chunk == 0)
		p.chunk = 512 * 1024;
	if (p.bitmap_chunk == 0)
		p.bitmap_chunk = 64ull << 20;
	if (p.level == 4)
		p.layout = RAID_PARITY_N;
	unsigned n = nlowers - (p.journal ? 1 : 0);
	if (nlowers < 1 + (p.journal ? 1u : 0u) || check_geometry(p.level, p.layout, n))
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
	struct raid_dev *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->p = p;
	r->n = n;
	r->k = p.level == 0 ? n : p.level == 1 ? 1 : p.level == 6 ? n - 2 : n - 1;
	r->m = p.level == 6 ? 2 : p.level >= 4 ? 1 : 0;
	unsigned tol = p.level == 1 ? n - 1 : r->m;
	if (popcount64(p.missing) > tol) {
		free(r);
		return bo_errf(err, -EINVAL, "%s: %u members missing, the level survives %u", name,
		               popcount64(p.missing), tol);
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
			sb_decode(r, i, b, &si);
		existing = si.valid;
	}
	free(b);
	int rc = existing ? assemble(r, true, err) : create(r, err);
	if (rc) {
		free(r->bm);
		free(r);
		return rc;
	}
	*out = &r->dev;
	return 0;
}

/* ---- registry entries -------------------------------------------------------- */

static const char *const layout_names[] = {"left-symmetric", "left-asymmetric", "right-symmetric",
                                           "right-asymmetric", NULL};
static const enum raid_layout layout_values[] = {RAID_LEFT_SYMMETRIC, RAID_LEFT_ASYMMETRIC,
                                                 RAID_RIGHT_SYMMETRIC, RAID_RIGHT_ASYMMETRIC};

static int parse_missing(const char *s, uint64_t *out, struct bo_err *err)
{
	*out = 0;
	if (!s || !*s || strcmp(s, "none") == 0)
		return 0;
	const char *p = s;
	while (*p) {
		if (*p < '0' || *p > '9')
			return bo_errf(err, -EINVAL,
			               "raid: missing=%s: expected member numbers like 1 or 0,2",
			               s);
		unsigned v = 0;
		while (*p >= '0' && *p <= '9' && v < 1000)
			v = v * 10 + (unsigned)(*p++ - '0');
		if (v >= MAXM)
			return bo_errf(err, -EINVAL, "raid: missing=%s: member %u is past %d", s, v,
			               MAXM - 1);
		*out |= 1ull << v;
		if (*p == ',' || *p == ':')
			p++;
		else if (*p)
			return bo_errf(err, -EINVAL,
			               "raid: missing=%s: expected member numbers like 1 or 0,2",
			               s);
	}
	return 0;
}

static bool has_param(const struct dev_args *a, const char *name)
{
	const struct dev_param *p = dev_args_model(a)->params;
	for (; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return true;
	return false;
}

static int open_level(unsigned level, const struct dev_args *a, struct bdev **lowers,
                      unsigned nlowers, struct bdev **out, struct bo_err *err)
{
	struct raid_params p = {.level = level, .layout = RAID_LEFT_SYMMETRIC};
	uint64_t v;
	int rc, li;
	if (has_param(a, "chunk")) {
		if ((rc = dev_arg_size(a, "chunk", &v, err)))
			return rc;
		if (v > (1u << 20) || v < 4096)
			return bo_errf(err, -EINVAL, "raid%u: chunk must be 4k to 1M", level);
		p.chunk = (uint32_t)v;
	}
	if (has_param(a, "layout")) {
		if ((rc = dev_arg_enum(a, "layout", layout_names, &li, err)))
			return rc;
		p.layout = layout_values[li];
	}
	if (has_param(a, "missing") &&
	    (rc = parse_missing(dev_arg_str(a, "missing"), &p.missing, err)))
		return rc;
	if (has_param(a, "bitmap") && (rc = dev_arg_bool(a, "bitmap", &p.bitmap, err)))
		return rc;
	if (has_param(a, "bitmap_chunk") &&
	    (rc = dev_arg_size(a, "bitmap_chunk", &p.bitmap_chunk, err)))
		return rc;
	if (has_param(a, "ppl") && (rc = dev_arg_bool(a, "ppl", &p.ppl, err)))
		return rc;
	if (has_param(a, "journal") && (rc = dev_arg_bool(a, "journal", &p.journal, err)))
		return rc;
	bool start = true;
	if (has_param(a, "start_dirty_degraded") &&
	    (rc = dev_arg_bool(a, "start_dirty_degraded", &start, err)))
		return rc;
	p.refuse_dirty_degraded = !start;
	return dev_raid_open(&p, lowers, nlowers, out, err);
}

#define OPENER(L)                                                                                  \
	static int open_raid##L(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,  \
	                        struct bdev **out, struct bo_err *err)                             \
	{                                                                                          \
		return open_level(L, a, lowers, nlowers, out, err);                                \
	}
OPENER(0)
OPENER(1)
OPENER(4)
OPENER(5)
OPENER(6)

#define P_CHUNK                                                                                    \
	{                                                                                          \
		"chunk", "512k", "chunk size, 4k to 1M (md's default 512k)", DEV_PT_SIZE, NULL,    \
		    1u << 20                                                                       \
	}
#define P_LAYOUT                                                                                   \
	{                                                                                          \
		"layout", "left-symmetric",                                                        \
		    "parity rotation as md: "                                                      \
		    "left-symmetric|left-asymmetric|right-symmetric|right-asymmetric",             \
		    DEV_PT_ENUM, layout_names                                                      \
	}
#define P_MISSING                                                                                  \
	{                                                                                          \
		"missing", "none", "members absent at assembly: none, I or I,J (degraded array)",  \
		    DEV_PT_STR                                                                     \
	}
#define P_BITMAP                                                                                   \
	{                                                                                          \
		"bitmap", "false", "write-intent bitmap: resync only dirty regions after a crash", \
		    DEV_PT_BOOL                                                                    \
	}
#define P_START                                                                                    \
	{                                                                                          \
		"start_dirty_degraded", "true",                                                    \
		    "after a crash, start a dirty degraded array (as md with --force); false: "    \
		    "refuse, "                                                                     \
		    "as md does by default",                                                       \
		    DEV_PT_BOOL                                                                    \
	}
#define P_BMCHUNK                                                                                  \
	{                                                                                          \
		"bitmap_chunk", "64M", "member data covered by one bitmap bit", DEV_PT_SIZE        \
	}
#define P_JOURNAL                                                                                  \
	{                                                                                          \
		"journal", "false",                                                                \
		    "last lower device is a write journal (md raid5-cache): closes the "           \
		    "write hole",                                                                  \
		    DEV_PT_BOOL                                                                    \
	}

static const struct dev_param raid0_params[] = {P_CHUNK, {NULL}};
static const struct dev_param raid1_params[] = {P_MISSING, P_BITMAP, P_BMCHUNK, {NULL}};
static const struct dev_param raid4_params[] = {P_CHUNK,   P_MISSING, P_BITMAP, P_BMCHUNK,
                                                P_JOURNAL, P_START,   {NULL}};
static const struct dev_param raid5_params[] = {
    P_CHUNK,
    P_LAYOUT,
    P_MISSING,
    P_BITMAP,
    P_BMCHUNK,
    {"ppl", "false", "partial parity log on each stripe's parity member (md raid5-ppl)",
     DEV_PT_BOOL},
    P_JOURNAL,
    P_START,
    {NULL}};
static const struct dev_param raid6_params[] = {P_CHUNK,   P_LAYOUT,  P_MISSING, P_BITMAP,
                                                P_BMCHUNK, P_JOURNAL, P_START,   {NULL}};

const struct dev_model dev_model_raid0 = {
    .name = "raid0",
    .summary = "striping (md raid0): no redundancy, one member lost loses the array",
    .params = raid0_params,
    .min_lowers = 2,
    .max_lowers = MAXM,
    .open = open_raid0,
};
const struct dev_model dev_model_raid1 = {
    .name = "raid1",
    .summary = "n-way mirror (md raid1): mirrors diverge on a cut, resync after",
    .params = raid1_params,
    .min_lowers = 2,
    .max_lowers = MAXM,
    .open = open_raid1,
};
const struct dev_model dev_model_raid4 = {
    .name = "raid4",
    .summary = "striping with dedicated parity member (md raid4): the write hole",
    .params = raid4_params,
    .min_lowers = 3,
    .max_lowers = MAXM + 1,
    .open = open_raid4,
};
const struct dev_model dev_model_raid5 = {
    .name = "raid5",
    .summary = "striping with rotating parity (md raid5): the write hole when degraded",
    .params = raid5_params,
    .min_lowers = 3,
    .max_lowers = MAXM + 1,
    .open = open_raid5,
};
const struct dev_model dev_model_raid6 = {
    .name = "raid6",
    .summary = "striping with P+Q parity (md raid6): the write hole with two missing",
    .params = raid6_params,
    .min_lowers = 4,
    .max_lowers = MAXM + 1,
    .open = open_raid6,
};
