// SPDX-License-Identifier: GPL-2.0-or-later
/* mdhole.c — the md write hole checked block by block on the host (docs/md.md, "The
 * write hole, block by block"): each state of a store of md members is read as md
 * would read the array (src/md/view.c) and compared with two consistent references
 * replayed from the recording — the array where the state's cut epoch began and where
 * it ended, the quiescent points around the cut (every earlier write flushed by its
 * member). A block the epoch left unchanged that reads otherwise in the state is the
 * hole. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/endian.h"
#include "blackout/md_view.h"
#include "crash/crash_int.h"

#define BLK MD_BLOCK

struct wr {
	size_t pos; /* run-relative position */
	unsigned dev;
	uint64_t off;        /* byte offset in the concat */
	uint64_t len;        /* bytes */
	const uint8_t *data; /* NULL: a discard, read as zeros */
	bool fua;
	size_t next_flush; /* the device's next flush after it, SIZE_MAX none */
};

/* A reference: base with the run's writes [0, at) laid over the blocks they touch. */
struct ref {
	uint8_t *buf;
	bool *valid;
	size_t at, wi;
};

struct hole {
	const char *dir;
	const struct rec_log *log;
	unsigned ndev;
	uint64_t start[64], bytes[64]; /* each member's place, bytes */
	uint64_t size;
	uint8_t *base;
	size_t run0, runlen;
	struct wr *w;
	size_t nw;
	uint64_t *touched; /* sorted global 4 KiB blocks any run write touched */
	size_t nt;
	struct ref rs, re;
	struct md_array a;
	uint64_t *cand; /* array blocks of the rows the run touched, sorted */
	size_t ncand;
	/* the state being read: base + its delta */
	uint64_t *didx;
	uint8_t *ddata;
	uint32_t dn;
	uint64_t *wrote; /* global blocks written in the state's epoch up to its cut, sorted */
	size_t nwrote;
	/* md's journal replayed over each reference and the state (an array with one) */
	struct md_replay rp_s, rp_e, rp_x;
	size_t rp_s_at, rp_e_at;
	bool *quiet; /* quiet_points */
};

static ssize_t find_idx(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == x ? (ssize_t)lo : -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static size_t uniq(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* `members`: m<I> START BYTES, laid end to end, matching the log's devices. */
static int read_members(struct hole *h, struct bo_err *err)
{
	char p[4200], line[256];
	snprintf(p, sizeof(p), "%s/members", h->dir);
	FILE *f = fopen(p, "r");
	if (!f)
		return bo_errf(err, -errno,
		               "%s: %s (a store of md members has one: vmtest --log of a "
		               "members=yes recording)",
		               p, strerror(errno));
	uint64_t total = 0;
	int rc = 0;
	h->ndev = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		unsigned i;
		unsigned long long s, b;
		char extra;
		if (sscanf(line, "m%u %llu %llu %c", &i, &s, &b, &extra) != 3 || i != h->ndev ||
		    s != total || b == 0 || b % BLK || h->ndev >= 64 || b > (1ull << 40))
			rc = bo_errf(err, -EINVAL, "%s: line %u is not 'm%u %llu BYTES'", p,
			             h->ndev + 1, h->ndev, (unsigned long long)total);
		else {
			h->start[h->ndev] = s;
			h->bytes[h->ndev++] = b;
			total += b;
		}
	}
	fclose(f);
	if (rc)
		return rc;
	unsigned n = rec_log_ndev(h->log);
	uint64_t ss = rec_log_sector_size(h->log);
	if (h->ndev < 2 || h->ndev != n)
		return bo_errf(err, -EINVAL, "%s: %u members, the log has %u devices", p, h->ndev,
		               n);
	for (unsigned d = 0; d < n; d++)
		if (rec_log_dev_sectors(h->log, d) * ss != h->bytes[d])
			return bo_errf(err, -EINVAL, "%s: member m%u is %llu bytes, the log's %llu",
			               p, d, (unsigned long long)h->bytes[d],
			               (unsigned long long)(rec_log_dev_sectors(h->log, d) * ss));
	h->size = total;
	return 0;
}

static int read_base(struct hole *h, struct bo_err *err)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/base.img", h->dir);
	int fd = open(p, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != h->size) {
		int e = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		return bo_errf(err, e ? -e : -EINVAL, "%s: %s", p,
		               e ? strerror(e) : "not a regular file of the members' size");
	}
	if (h->size > CRASH_STORE_MAX_DEVICE || !(h->base = malloc(h->size))) {
		close(fd);
		return bo_errf(err, -ENOMEM, "%s: %llu bytes do not fit in memory", p,
		               (unsigned long long)h->size);
	}
	for (uint64_t off = 0; off < h->size;) {
		ssize_t r =
		    pread(fd, h->base + off,
		          h->size - off > (1u << 24) ? (1u << 24) : h->size - off, (off_t)off);
		if (r <= 0) {
			close(fd);
			return bo_errf(err, -EIO, "%s: read failed at byte %llu", p,
			               (unsigned long long)off);
		}
		off += (uint64_t)r;
	}
	close(fd);
	return 0;
}

/* The run's writes (from its `step 0` mark), each with its device's next flush, and
 * the blocks they touch. */
static int collect_writes(struct hole *h, struct bo_err *err)
{
	size_t n = rec_log_len(h->log);
	h->run0 = n;
	for (size_t i = 0; i < n && h->run0 == n; i++) {
		const struct rec_entry *e = rec_log_get(h->log, i);
		if (e->op == REC_MARK && strcmp(e->mark, "step 0") == 0)
			h->run0 = i;
	}
	if (h->run0 == n)
		return bo_errf(err, -EINVAL, "the log has no 'step 0' mark: no run to check");
	h->runlen = n - h->run0;
	h->w = calloc(h->runlen ? h->runlen : 1, sizeof(*h->w));
	if (!h->w)
		return -ENOMEM;
	uint64_t ss = rec_log_sector_size(h->log), nb = 0;
	for (size_t p = 0; p < h->runlen; p++) {
		const struct rec_entry *e = rec_log_get(h->log, h->run0 + p);
		if ((e->op != REC_WRITE && e->op != REC_DISCARD) || e->result != 0)
			continue;
		struct wr *w = &h->w[h->nw++];
		*w = (struct wr){.pos = p,
		                 .dev = e->dev,
		                 .off = (rec_log_dev_start(h->log, e->dev) + e->lba) * ss,
		                 .len = (uint64_t)e->count * ss,
		                 .data = e->op == REC_WRITE ? e->data : NULL,
		                 .fua = e->op == REC_WRITE && (e->flags & BLK_FUA)};
		nb += (w->off + w->len + BLK - 1) / BLK - w->off / BLK;
	}
	size_t nf[64];
	for (unsigned d = 0; d < 64; d++)
		nf[d] = SIZE_MAX;
	for (size_t i = h->runlen, wi = h->nw; i-- > 0;) {
		const struct rec_entry *e = rec_log_get(h->log, h->run0 + i);
		if (e->op == REC_FLUSH && e->result == 0 && e->dev < 64)
			nf[e->dev] = i;
		if (wi > 0 && h->w[wi - 1].pos == i) {
			wi--;
			h->w[wi].next_flush = nf[h->w[wi].dev];
		}
	}
	if (!(h->touched = malloc((nb ? nb : 1) * sizeof(*h->touched))))
		return -ENOMEM;
	for (size_t i = 0; i < h->nw; i++)
		for (uint64_t b = h->w[i].off / BLK; b * BLK < h->w[i].off + h->w[i].len; b++)
			h->touched[h->nt++] = b;
	h->nt = uniq(h->touched, h->nt);
	(void)err;
	return 0;
}

static int ref_init(struct ref *r, size_t nt)
{
	r->buf = malloc((nt ? nt : 1) * BLK);
	r->valid = calloc(nt ? nt : 1, sizeof(*r->valid));
	r->at = r->wi = 0;
	return r->buf && r->valid ? 0 : -ENOMEM;
}

/* Lays the writes [at, to) over the reference (from base again when to < at). */
static void ref_advance(struct hole *h, struct ref *r, size_t to)
{
	if (to < r->at) {
		memset(r->valid, 0, h->nt * sizeof(*r->valid));
		r->at = r->wi = 0;
	}
	for (; r->wi < h->nw && h->w[r->wi].pos < to; r->wi++) {
		const struct wr *w = &h->w[r->wi];
		for (uint64_t b = w->off / BLK; b * BLK < w->off + w->len; b++) {
			ssize_t t = find_idx(h->touched, h->nt, b);
			uint8_t *blk = h->base + b * BLK;
			if (t < 0)
				continue; /* cannot happen: every write's blocks are touched */
			uint8_t *dst = r->buf + (size_t)t * BLK;
			if (!r->valid[t])
				memcpy(dst, blk, BLK);
			r->valid[t] = true;
			uint64_t lo = w->off > b * BLK ? w->off : b * BLK;
			uint64_t hi =
			    w->off + w->len < (b + 1) * BLK ? w->off + w->len : (b + 1) * BLK;
			if (w->data)
				memcpy(dst + (lo - b * BLK), w->data + (lo - w->off), hi - lo);
			else
				memset(dst + (lo - b * BLK), 0, hi - lo);
		}
	}
	r->at = to;
}

struct getctx {
	struct hole *h;
	struct ref *ref;            /* NULL: the state (base + delta) */
	const struct md_replay *rp; /* md's journal replayed over it, or NULL */
};

static const uint8_t *get_block(void *ctx, unsigned dev, uint64_t mblock)
{
	struct getctx *g = ctx;
	struct hole *h = g->h;
	if (dev >= h->ndev || mblock >= h->bytes[dev] / BLK)
		return NULL;
	const uint8_t *rp = g->rp ? md_replay_find(g->rp, dev, mblock) : NULL;
	if (rp)
		return rp;
	uint64_t b = h->start[dev] / BLK + mblock;
	if (g->ref) {
		ssize_t t = find_idx(h->touched, h->nt, b);
		if (t >= 0 && g->ref->valid[t])
			return g->ref->buf + (size_t)t * BLK;
	} else {
		ssize_t t = find_idx(h->didx, h->dn, b);
		if (t >= 0)
			return h->ddata + (size_t)t * BLK;
	}
	return h->base + b * BLK;
}

/* The array from the members' superblocks where the run began. */
static int array_of_base(struct hole *h, struct bo_err *err)
{
	struct md_sb sbs[64];
	bool have[64];
	for (unsigned d = 0; d < h->ndev; d++) {
		struct bo_err e2 = {{0}};
		if (h->bytes[d] < 2 * BLK)
			return bo_errf(err, -EINVAL, "member m%u is too small for an md superblock",
			               d);
		int rc =
		    md_sb_parse(h->base + h->start[d] + MD_SB_OFFSET, MD_SB_AREA, &sbs[d], &e2);
		have[d] = rc == 0;
		if (rc && rc != -ENODATA)
			return bo_errf(err, rc, "member m%u: %s", d, bo_errstr(&e2, rc));
	}
	return md_array_assemble(sbs, have, h->ndev, h->bytes, &h->a, err);
}

/* The array blocks of every member row the run wrote. */
static int candidates(struct hole *h)
{
	uint64_t *rows = malloc((h->nt ? h->nt : 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	size_t nr = 0;
	for (size_t i = 0; i < h->nt; i++)
		for (unsigned d = 0; d < h->ndev; d++)
			if ((int)d != h->a.journal_dev && h->touched[i] * BLK >= h->start[d] &&
			    h->touched[i] * BLK < h->start[d] + h->bytes[d])
				rows[nr++] = h->touched[i] - h->start[d] / BLK;
	nr = uniq(rows, nr);
	h->cand = malloc((nr ? nr : 1) * RAID_MAX_MEMBERS * sizeof(*h->cand));
	if (!h->cand) {
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		unsigned k;
		md_row_blocks(&h->a, rows[i], h->cand + h->ncand, &k);
		h->ncand += k;
	}
	h->ncand = uniq(h->cand, h->ncand);
	free(rows);
	return 0;
}

/* s<N>.delta (docs/realkernel.md, section 2), every field checked. */
static int read_delta(struct hole *h, size_t n, struct bo_err *err)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/s%zu.delta", h->dir, n);
	FILE *f = fopen(p, "rb");
	if (!f)
		return bo_errf(err, -errno, "%s: %s", p, strerror(errno));
	uint8_t hdr[16], idx[8];
	uint64_t nb = h->size / BLK;
	int rc = 0;
	if (fread(hdr, 1, 16, f) != 16 || memcmp(hdr, "BOSTATE1", 8) || get_le32(hdr + 8) != BLK ||
	    get_le32(hdr + 12) > nb)
		rc = bo_errf(err, -EINVAL, "%s: not a delta of 4 KiB blocks of this store", p);
	uint32_t c = rc ? 0 : get_le32(hdr + 12);
	free(h->didx);
	free(h->ddata);
	h->didx = malloc((c ? c : 1) * sizeof(*h->didx));
	h->ddata = malloc((c ? c : 1) * (size_t)BLK);
	h->dn = 0;
	if (rc == 0 && (!h->didx || !h->ddata))
		rc = -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < c; i++) {
		if (fread(idx, 1, 8, f) != 8 || fread(h->ddata + (size_t)i * BLK, 1, BLK, f) != BLK)
			rc = bo_errf(err, -EINVAL, "%s: truncated in record %u", p, i);
		else if (get_le64(idx) >= nb || (i && get_le64(idx) <= h->didx[i - 1]))
			rc =
			    bo_errf(err, -EINVAL, "%s: record %u: block %llu out of order or range",
			            p, i, (unsigned long long)get_le64(idx));
		else
			h->didx[h->dn++] = get_le64(idx);
	}
	if (rc == 0 && fgetc(f) != EOF)
		rc = bo_errf(err, -EINVAL, "%s: bytes after its %u records", p, c);
	fclose(f);
	return rc;
}

/* "p12-3", "p12w-0", "p40-s7": the run position and whether a write was in flight. */
static int parse_id(const char *id, size_t *pos, bool *inflight)
{
	char *end;
	if (id[0] != 'p' || id[1] < '0' || id[1] > '9')
		return -EINVAL;
	unsigned long long p = strtoull(id + 1, &end, 10);
	*inflight = *end == 'w';
	end += *inflight;
	if (*end != '-' || p > SIZE_MAX / 2)
		return -EINVAL;
	*pos = (size_t)p;
	return 0;
}

/* The points where md is quiescent: every write before them was followed by a flush
 * of its own member (md sends a flush to each member only once the stripes of the
 * writes it orders are complete). A FUA write is durable at once but does not make a
 * point quiescent: md writes a stripe's data and parity as separate member writes, and
 * a cut between them is the write hole itself. quiet[q] for q in 0..runlen. */
static int quiet_points(struct hole *h)
{
	h->quiet = calloc(h->runlen + 1, sizeof(*h->quiet));
	if (!h->quiet)
		return -ENOMEM;
	size_t maxnf = 0, wi = 0;
	bool any = false;
	for (size_t q = 0; q <= h->runlen; q++) {
		for (; wi < h->nw && h->w[wi].pos < q; wi++) {
			any = true;
			if (h->w[wi].next_flush == SIZE_MAX)
				maxnf = SIZE_MAX;
			else if (maxnf != SIZE_MAX && h->w[wi].next_flush > maxnf)
				maxnf = h->w[wi].next_flush;
		}
		h->quiet[q] = !any || maxnf < q;
	}
	return 0;
}

/* The state's cut epoch: from the last quiescent point at or before the cut (every
 * write before it landed: the state holds them) to the first at or after it (every
 * write the state may hold flushed by then), or the run's end. cut: the run entries
 * done; inflight: the write at cut was in flight. */
static void epoch(const struct hole *h, size_t cut, bool inflight, size_t *s, size_t *e)
{
	*s = cut;
	while (*s > 0 && !h->quiet[*s])
		(*s)--;
	*e = cut + inflight;
	while (*e < h->runlen && !h->quiet[*e])
		(*e)++;
}

/* The blocks every write of the run touches, counted once per write: what
 * epoch_writes may collect before it sorts them and drops repeats (more than the
 * distinct blocks nt, as a journal's blocks are written again and again). */
static size_t written_blocks(const struct hole *h)
{
	size_t n = 1;
	for (size_t i = 0; i < h->nw; i++)
		for (uint64_t b = h->w[i].off / BLK; b * BLK < h->w[i].off + h->w[i].len; b++)
			n++;
	return n;
}

/* The blocks the writes [s, to) touched: a present member's block written in the
 * epoch is not "unchanged" even when it ends as it began. */
static void epoch_writes(struct hole *h, size_t s, size_t to)
{
	h->nwrote = 0;
	for (size_t i = 0; i < h->nw && h->w[i].pos < to; i++)
		if (h->w[i].pos >= s)
			for (uint64_t b = h->w[i].off / BLK; b * BLK < h->w[i].off + h->w[i].len;
			     b++)
				h->wrote[h->nwrote++] = b;
	h->nwrote = uniq(h->wrote, h->nwrote);
}

/* md takes the state's members as this reader does: each superblock where the run
 * began is still there and whole, and no member's events lag the newest by more than
 * one (md kicks such a member at assembly). *why: the reason when not. */
static int state_members(struct hole *h, char *why, size_t len)
{
	struct getctx g = {h, NULL};
	uint64_t ev[64], max = 0;
	for (unsigned d = 0; d < h->ndev; d++) {
		if (h->a.role_of_dev[d] < 0)
			continue;
		struct md_sb sb;
		struct bo_err e2 = {{0}};
		const uint8_t *p = get_block(&g, d, MD_SB_OFFSET / BLK);
		int rc = p ? md_sb_parse(p, MD_SB_AREA, &sb, &e2) : -EIO;
		if (rc) {
			snprintf(why, len, "member m%u: %s", d, bo_errstr(&e2, rc));
			return -EINVAL;
		}
		ev[d] = sb.events;
		max = sb.events > max ? sb.events : max;
	}
	for (unsigned d = 0; d < h->ndev; d++)
		if (h->a.role_of_dev[d] >= 0 && ev[d] + 1 < max) {
			snprintf(why, len, "member m%u's events %llu lag the newest %llu", d,
			         (unsigned long long)ev[d], (unsigned long long)max);
			return -EINVAL;
		}
	return 0;
}

static void add_example(struct md_hole_result *res, size_t n, const char *id, uint64_t b,
                        const struct md_array *a, unsigned role, uint64_t stripe)
{
	if (res->nex >= MD_HOLE_EXAMPLES)
		return;
	struct md_hole_example *x = &res->ex[res->nex++];
	x->state = n;
	snprintf(x->id, sizeof(x->id), "%s", id);
	x->block = b;
	x->role = role;
	x->missing = a->dev_of_role[role] < 0;
	x->dev = x->missing ? role : (unsigned)a->dev_of_role[role];
	x->stripe = stripe;
}

/* md's journal replayed over a reference or the state, when the array has one: what
 * md writes back at assembly before anything reads the array. */
static int replay(struct hole *h, struct getctx *g, struct md_replay *rp, struct bo_err *err)
{
	md_replay_free(rp);
	if (h->a.journal_dev < 0)
		return 0;
	struct getctx raw = {h, g->ref, NULL};
	int rc = md_journal_replay(&h->a, get_block, &raw, rp, err);
	if (rc == 0)
		g->rp = rp;
	return rc;
}

/* The references (replayed only when they moved) and the state, as md assembles them;
 * 1 (with *why) when one cannot be read. */
static int assemble_all(struct hole *h, struct getctx *gs, struct getctx *ge, struct getctx *gx,
                        struct md_hole_result *res, char *why, size_t len)
{
	struct bo_err e2 = {{0}};
	int rc = 0;
	if (h->rp_s_at != h->rs.at) {
		rc = replay(h, gs, &h->rp_s, &e2);
		h->rp_s_at = rc ? SIZE_MAX : h->rs.at;
	}
	if (rc == 0 && h->rp_e_at != h->re.at) {
		rc = replay(h, ge, &h->rp_e, &e2);
		h->rp_e_at = rc ? SIZE_MAX : h->re.at;
	}
	if (rc == 0)
		rc = replay(h, gx, &h->rp_x, &e2);
	if (rc) {
		snprintf(why, len, "%.190s", e2.msg);
		return 1;
	}
	if (h->a.journal_dev >= 0) {
		gs->rp = &h->rp_s;
		ge->rp = &h->rp_e;
		res->replayed += h->rp_x.stripes;
		if (h->rp_x.data_only) {
			snprintf(why, len,
			         "md's journal holds %u stripes of data without parity (write-back "
			         "mode, not read here)",
			         h->rp_x.data_only);
			return 1;
		}
	}
	return 0;
}

/* One state: every candidate block unchanged between the references, read in the
 * state. 1 (with *why) when the state cannot be read as md would. */
static int check_state(struct hole *h, size_t n, const char *id, size_t cut, bool inflight,
                       FILE *list, struct md_hole_result *res, char *why, size_t len)
{
	size_t s, e;
	epoch(h, cut, inflight, &s, &e);
	ref_advance(h, &h->rs, s);
	ref_advance(h, &h->re, e);
	epoch_writes(h, s, cut + inflight);
	struct getctx gs = {h, &h->rs, NULL}, ge = {h, &h->re, NULL}, gx = {h, NULL, NULL};
	if (assemble_all(h, &gs, &ge, &gx, res, why, len))
		return 1;
	static uint8_t x[BLK], y[BLK], z[BLK];
	uint64_t holes = 0;
	for (size_t i = 0; i < h->ncand; i++) {
		uint64_t b = h->cand[i], stripe, mb;
		unsigned role;
		if (md_block_where(&h->a, b, &role, &stripe, &mb))
			continue;
		int dev = h->a.dev_of_role[role];
		if (dev >= 0 && find_idx(h->wrote, h->nwrote, h->start[dev] / BLK + mb) >= 0)
			continue;
		if (md_read_block(&h->a, b, get_block, &gs, x) ||
		    md_read_block(&h->a, b, get_block, &ge, y) || memcmp(x, y, BLK))
			continue;
		res->unchanged++;
		if (md_read_block(&h->a, b, get_block, &gx, z) || memcmp(x, z, BLK) == 0)
			continue;
		holes++;
		add_example(res, n, id, b, &h->a, role, stripe);
		if (list)
			fprintf(list,
			        "s%zu %s: md block %llu (role %u, %s, stripe %llu) reads otherwise "
			        "than at the epoch's start (run entry %zu) and end (%zu)\n",
			        n, id, (unsigned long long)b, role, dev < 0 ? "missing" : "present",
			        (unsigned long long)stripe, s, e);
	}
	res->hole_blocks += holes;
	res->hole_states += holes > 0;
	return 0;
}

static void describe(const struct md_array *a, char *buf, size_t len)
{
	static const char *const lay[] = {
	    "left-asymmetric", "right-asymmetric", "left-symmetric", "right-symmetric", "",
	    "parity-last"};
	int k = snprintf(buf, len, "RAID%u %s, %u members, %u KiB chunks", a->level,
	                 a->level == 4 ? "" : lay[a->layout], a->n, a->chunk / 1024);
	for (unsigned r = 0; r < a->n && k > 0 && (size_t)k < len; r++)
		if (a->dev_of_role[r] < 0)
			k += snprintf(buf + k, len - (size_t)k, ", role %u missing", r);
	if (a->nmissing == 0 && k > 0 && (size_t)k < len)
		k += snprintf(buf + k, len - (size_t)k, ", healthy");
	if (a->journal_dev >= 0 && k > 0 && (size_t)k < len)
		snprintf(buf + k, len - (size_t)k, ", write journal on m%d", a->journal_dev);
}

static void hole_free(struct hole *h)
{
	free(h->base);
	free(h->w);
	free(h->touched);
	free(h->rs.buf);
	free(h->rs.valid);
	free(h->re.buf);
	free(h->re.valid);
	free(h->cand);
	free(h->didx);
	free(h->ddata);
	free(h->wrote);
	md_replay_free(&h->rp_s);
	md_replay_free(&h->rp_e);
	md_replay_free(&h->rp_x);
	free(h->quiet);
}

static int hole_open(struct hole *h, const char *dir, const struct rec_log *log, struct bo_err *err)
{
	memset(h, 0, sizeof(*h));
	h->rp_s_at = h->rp_e_at = SIZE_MAX;
	h->dir = dir;
	h->log = log;
	int rc = read_members(h, err);
	if (rc == 0)
		rc = read_base(h, err);
	if (rc == 0)
		rc = collect_writes(h, err);
	if (rc == 0)
		rc = quiet_points(h);
	if (rc == 0)
		rc = array_of_base(h, err);
	if (rc == 0 && (ref_init(&h->rs, h->nt) || ref_init(&h->re, h->nt) ||
	                !(h->wrote = malloc(written_blocks(h) * sizeof(*h->wrote)))))
		rc = -ENOMEM;
	if (rc == 0)
		rc = candidates(h);
	return rc;
}

int md_hole_check(const char *dir, const struct rec_log *log, FILE *list,
                  struct md_hole_result *res, struct bo_err *err)
{
	memset(res, 0, sizeof(*res));
	struct hole h;
	int rc = hole_open(&h, dir, log, err);
	char p[4200], line[512];
	FILE *ix = NULL;
	if (rc == 0) {
		describe(&h.a, res->array, sizeof(res->array));
		res->missing = h.a.nmissing;
		snprintf(p, sizeof(p), "%s/index", dir);
		if (!(ix = fopen(p, "r")))
			rc = bo_errf(err, -errno, "%s: %s", p, strerror(errno));
	}
	for (size_t n = 0; rc == 0 && fgets(line, sizeof(line), ix); n++) {
		char id[48];
		size_t sn, cut;
		bool inflight;
		if (sscanf(line, "s%zu %47s", &sn, id) != 2 || sn != n ||
		    parse_id(id, &cut, &inflight)) {
			rc = bo_errf(err, -EINVAL, "%s: line %zu is not 's%zu ID COMPLETED'", p,
			             n + 1, n);
			break;
		}
		if (cut + inflight > h.runlen) {
			rc = bo_errf(
			    err, -EINVAL,
			    "%s: state s%zu (%s) is cut past the log's run of %zu entries: a "
			    "store of another recording?",
			    p, n, id, h.runlen);
			break;
		}
		if ((rc = read_delta(&h, n, err)))
			break;
		res->states++;
		char why[200];
		if (state_members(&h, why, sizeof(why)) == 0 &&
		    check_state(&h, n, id, cut, inflight, list, res, why, sizeof(why)) == 0)
			continue;
		if (res->unread++ == 0)
			snprintf(res->first_unread, sizeof(res->first_unread), "s%zu %s: %.150s", n,
			         id, why);
	}
	if (ix)
		fclose(ix);
	hole_free(&h);
	return rc;
}

int md_hole_array_image(const char *dir, const struct rec_log *log, const char *path,
                        struct bo_err *err)
{
	struct hole h;
	int rc = hole_open(&h, dir, log, err);
	FILE *f = NULL;
	if (rc == 0 && !(f = fopen(path, "wb")))
		rc = bo_errf(err, -errno, "%s: %s", path, strerror(errno));
	if (rc == 0)
		ref_advance(&h, &h.rs, h.runlen);
	struct getctx g = {&h, &h.rs, NULL};
	if (rc == 0)
		rc = replay(&h, &g, &h.rp_s, err);
	static uint8_t buf[BLK];
	for (uint64_t b = 0; rc == 0 && b < h.a.blocks; b++) {
		if ((rc = md_read_block(&h.a, b, get_block, &g, buf)))
			rc =
			    bo_errf(err, rc, "md block %llu cannot be read", (unsigned long long)b);
		else if (fwrite(buf, 1, BLK, f) != BLK)
			rc = bo_errf(err, -EIO, "%s: write failed", path);
	}
	if (f && fclose(f) && rc == 0)
		rc = bo_errf(err, -EIO, "%s: write failed", path);
	hole_free(&h);
	return rc;
}
