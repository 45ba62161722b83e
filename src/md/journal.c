// SPDX-License-Identifier: GPL-2.0-or-later
/* md/journal.c — md's write journal (raid5-cache in write-through mode) replayed as
 * md replays it when it assembles the array: the log is read from the tail the
 * journal device's superblock names, meta block after meta block while each is whole
 * (magic, version, crc32c seeded with the array's uuid, the expected seq and position,
 * every payload page's crc32c), and every stripe whose data and parity the log holds is
 * written back to the members. Only what a host-side reading needs: no write-back
 * cache, no log rewrite. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/md_view.h"
#include "blackout/util.h"

#define R5LOG_MAGIC    0x6433c509u
#define R5LOG_VERSION  1u
#define PAYLOAD_DATA   0u
#define PAYLOAD_PARITY 1u
#define PAYLOAD_FLUSH  2u
#define META_HDR       32u /* magic, checksum, version, pads, meta_size, seq, position */
#define PAGE           MD_BLOCK
#define PAGE_SECTORS   (PAGE / 512u)

/* A stripe the log holds pages of: one 4 KiB row of the members. */
struct stripe {
	uint64_t mblock;
	bool parity;
	size_t page[RAID_MAX_MEMBERS]; /* offset in the replay's buf + 1; 0: none */
};

struct jlog {
	const struct md_array *a;
	md_get_fn get;
	void *ctx;
	unsigned dev;
	uint64_t start, sectors; /* the log area on the journal device, sectors */
	uint32_t seed;
	struct stripe *st;
	size_t nst, capst;
	struct md_replay *r;
};

static const uint8_t *log_page(const struct jlog *j, uint64_t pos)
{
	return j->get(j->ctx, j->dev, (j->start + pos) / PAGE_SECTORS);
}

static uint64_t ring_add(const struct jlog *j, uint64_t pos, uint64_t inc)
{
	pos += inc;
	return pos >= j->sectors ? pos - j->sectors : pos;
}

static int keep_page(struct md_replay *r, const uint8_t *p, size_t *at)
{
	if (r->buf_cap - r->buf_len < PAGE) {
		size_t cap = r->buf_cap ? 2 * r->buf_cap : 64 * PAGE;
		uint8_t *nb = realloc(r->buf, cap);
		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->buf_cap = cap;
	}
	memcpy(r->buf + r->buf_len, p, PAGE);
	*at = r->buf_len;
	r->buf_len += PAGE;
	return 0;
}

static int emit(struct md_replay *r, unsigned dev, uint64_t mblock, size_t at)
{
	struct md_replay_page *np = bo_grow(r->pages, &r->cap, r->n, sizeof(*np), 64);
	if (!np)
		return -ENOMEM;
	r->pages = np;
	r->pages[r->n++] = (struct md_replay_page){dev, mblock, at};
	return 0;
}

/* A stripe with data and parity: md writes every page it logged to its member. */
static int replay_stripe(struct jlog *j, struct stripe *s)
{
	for (unsigned role = 0; role < j->a->n; role++)
		if (s->page[role] && j->a->dev_of_role[role] >= 0) {
			int rc = emit(j->r, (unsigned)j->a->dev_of_role[role], s->mblock,
			              s->page[role] - 1);
			if (rc)
				return rc;
		}
	j->r->stripes++;
	memset(s->page, 0, sizeof(s->page));
	s->parity = false;
	return 0;
}

static struct stripe *stripe_of(struct jlog *j, uint64_t mblock)
{
	for (size_t i = 0; i < j->nst; i++)
		if (j->st[i].mblock == mblock)
			return &j->st[i];
	struct stripe *ns = bo_grow(j->st, &j->capst, j->nst, sizeof(*ns), 64);
	if (!ns)
		return NULL;
	j->st = ns;
	memset(&j->st[j->nst], 0, sizeof(*ns));
	j->st[j->nst].mblock = mblock;
	return &j->st[j->nst++];
}

/* One payload's header: type, page count, location; its length in the meta block. */
static int payload_hdr(const struct jlog *j, const uint8_t *mb, uint32_t off, uint32_t size,
                       unsigned *type, uint32_t *pages, uint64_t *loc, uint32_t *len)
{
	if (off + 8 > size)
		return -EINVAL;
	*type = get_le16(mb + off);
	uint32_t sz = get_le32(mb + off + 4);
	if (*type == PAYLOAD_FLUSH) {
		/* sz checked against the room left before 8 + sz is formed: a size near 2^32
		 * wrapped it to 0, and the caller's walk stood still on that payload forever */
		*pages = 0;
		if (sz % 8 || sz > size - off - 8)
			return -EINVAL;
		*len = 8 + sz;
		return 0;
	}
	if ((*type != PAYLOAD_DATA && *type != PAYLOAD_PARITY) || off + 16 > size ||
	    sz % PAGE_SECTORS || sz == 0)
		return -EINVAL;
	*pages = sz / PAGE_SECTORS;
	unsigned want = *type == PAYLOAD_DATA ? 1 : j->a->level == 6 ? 2 : 1;
	*loc = get_le64(mb + off + 8);
	*len = 16 + 4 * *pages;
	return *pages == want && off + *len <= size ? 0 : -EINVAL;
}

/* The meta block at pos, whole and next in the chain: its payloads checked (every
 * page's crc32c). 0, or -EINVAL: the log ends here (*why says how). */
static int meta_ok(const struct jlog *j, uint64_t pos, uint64_t seq, uint32_t *size,
                   uint64_t *total, const char **why)
{
	const uint8_t *p = log_page(j, pos);
	static uint8_t mb[PAGE];
	if (!p)
		return *why = "a meta block outside the journal device", -EINVAL;
	memcpy(mb, p, PAGE);
	uint32_t stored = get_le32(mb + 4);
	put_le32(mb + 4, 0);
	if (get_le32(mb) != R5LOG_MAGIC)
		return *why = "no meta block (magic)", -EINVAL;
	if (crc32c_raw(j->seed, mb, PAGE) != stored)
		return *why = "a meta block's checksum", -EINVAL;
	if (p[8] != R5LOG_VERSION || get_le64(mb + 16) != seq || get_le64(mb + 24) != pos)
		return *why = "a meta block out of sequence (seq or position)", -EINVAL;
	*size = get_le32(mb + 12);
	if (*size < META_HDR || *size > PAGE)
		return *why = "a meta block's size", -EINVAL;
	uint64_t lp = ring_add(j, pos, PAGE_SECTORS);
	*total = PAGE_SECTORS;
	for (uint32_t off = META_HDR; off < *size;) {
		unsigned type;
		uint32_t pages, len;
		uint64_t loc;
		if (payload_hdr(j, mb, off, *size, &type, &pages, &loc, &len))
			return *why = "a payload header", -EINVAL;
		for (uint32_t i = 0; i < pages; i++) {
			const uint8_t *d = log_page(j, lp);
			if (!d || crc32c_raw(j->seed, d, PAGE) != get_le32(mb + off + 16 + 4 * i))
				return *why = "a payload page's checksum", -EINVAL;
			lp = ring_add(j, lp, PAGE_SECTORS);
			*total += PAGE_SECTORS;
		}
		off += len;
	}
	return 0;
}

/* Loads one checked meta block's pages into their stripes, as md's recovery does: a
 * stripe that already had parity is replayed before new data of it is loaded. */
static int load_meta(struct jlog *j, uint64_t pos, uint32_t size)
{
	static uint8_t mb[PAGE];
	memcpy(mb, log_page(j, pos), PAGE);
	const struct md_array *a = j->a;
	uint64_t lp = ring_add(j, pos, PAGE_SECTORS), cb = a->chunk / PAGE;
	for (uint32_t off = META_HDR; off < size;) {
		unsigned type, role;
		uint32_t pages, len;
		uint64_t loc, stripe, mblock;
		payload_hdr(j, mb, off, size, &type, &pages, &loc, &len);
		off += len;
		int pd = -1, qd = -1, rc = 0;
		if (type == PAYLOAD_FLUSH)
			continue; /* write-back's: its stripes are not in a write-through log */
		if (type == PAYLOAD_DATA) {
			if (loc % PAGE_SECTORS ||
			    md_block_where(a, loc / PAGE_SECTORS, &role, &stripe, &mblock))
				return -EINVAL;
		} else {
			if (loc % PAGE_SECTORS || loc / PAGE_SECTORS >= a->stripes * cb)
				return -EINVAL;
			mblock = a->data_offset / PAGE + loc / PAGE_SECTORS;
			stripe = loc / PAGE_SECTORS / cb;
			raid_parity_members(a->level, a->layout, a->n, stripe, &pd, &qd);
		}
		struct stripe *s = stripe_of(j, mblock);
		if (!s)
			return -ENOMEM;
		if (type == PAYLOAD_DATA && s->parity && (rc = replay_stripe(j, s)))
			return rc;
		for (uint32_t i = 0; i < pages; i++) {
			size_t at;
			if ((rc = keep_page(j->r, log_page(j, lp), &at)))
				return rc;
			int r = type == PAYLOAD_DATA ? (int)role : i == 0 ? pd : qd;
			if (r >= 0)
				s->page[r] = at + 1;
			lp = ring_add(j, lp, PAGE_SECTORS);
		}
		s->parity |= type == PAYLOAD_PARITY;
	}
	return 0;
}

static int cmp_page(const void *x, const void *y)
{
	const struct md_replay_page *a = x, *b = y;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->mblock != b->mblock)
		return a->mblock < b->mblock ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at; /* the later write last */
}

/* Sorted, and of each block only the last write kept. */
static void finish(struct md_replay *r)
{
	if (r->n > 1)
		qsort(r->pages, r->n, sizeof(*r->pages), cmp_page);
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (k && r->pages[k - 1].dev == r->pages[i].dev &&
		    r->pages[k - 1].mblock == r->pages[i].mblock)
			k--;
		r->pages[k++] = r->pages[i];
	}
	r->n = k;
}

/* The journal device's superblock in this state: where its log lies, its tail. */
static int journal_sb(struct jlog *j, uint64_t *tail, struct bo_err *err)
{
	const uint8_t *p = j->get(j->ctx, j->dev, MD_SB_OFFSET / PAGE);
	struct md_sb sb;
	struct bo_err e2 = {{0}};
	int rc = p ? md_sb_parse(p, MD_SB_AREA, &sb, &e2) : -EIO;
	if (rc)
		return bo_errf(err, rc ? rc : -EIO, "the journal device m%u: %s", j->dev,
		               p ? bo_errstr(&e2, rc) : "cannot be read");
	if (sb.role != MD_ROLE_JOURNAL)
		return bo_errf(err, -EINVAL, "the journal device m%u is no longer a journal",
		               j->dev);
	j->start = sb.data_offset;
	j->sectors = sb.data_size / PAGE_SECTORS * PAGE_SECTORS;
	*tail = sb.journal_tail;
	if (j->sectors < 2 * PAGE_SECTORS || *tail % PAGE_SECTORS || *tail >= j->sectors)
		return bo_errf(err, -EINVAL,
		               "the journal device m%u: tail %llu outside its log of %llu sectors",
		               j->dev, (unsigned long long)*tail, (unsigned long long)j->sectors);
	return 0;
}

int md_journal_replay(const struct md_array *a, md_get_fn get, void *ctx, struct md_replay *r,
                      struct bo_err *err)
{
	memset(r, 0, sizeof(*r));
	if (a->journal_dev < 0)
		return 0;
	struct jlog j = {.a = a, .get = get, .ctx = ctx, .dev = (unsigned)a->journal_dev, .r = r};
	uint64_t pos = 0;
	int rc = journal_sb(&j, &pos, err);
	if (rc)
		return rc;
	j.seed = crc32c_raw(~0u, a->uuid, 16);
	const uint8_t *first = log_page(&j, pos);
	uint64_t seq = first ? get_le64(first + 16) : 0;
	const char *why = "the end of the journal device's log";
	/* each meta block takes at least a page: the ring holds no more of them */
	for (uint64_t k = 0; k < j.sectors / PAGE_SECTORS; k++) {
		uint32_t size;
		uint64_t total;
		if (meta_ok(&j, pos, seq, &size, &total, &why))
			break;
		if ((rc = load_meta(&j, pos, size)))
			break;
		r->metas++;
		pos = ring_add(&j, pos, total);
		seq++;
	}
	for (size_t i = 0; rc == 0 && i < j.nst; i++) {
		if (j.st[i].parity)
			rc = replay_stripe(&j, &j.st[i]);
		else
			for (unsigned role = 0; role < a->n; role++)
				if (j.st[i].page[role]) {
					r->data_only++;
					break;
				}
	}
	snprintf(r->end, sizeof(r->end), "%s", why);
	free(j.st);
	if (rc) {
		md_replay_free(r);
		return bo_errf(err, rc, "replaying md's journal: %s",
		               rc == -ENOMEM ? "out of memory" : "a payload outside the array");
	}
	finish(r);
	return 0;
}

const uint8_t *md_replay_find(const struct md_replay *r, unsigned dev, uint64_t mblock)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct md_replay_page *p = &r->pages[mid];
		if (p->dev < dev || (p->dev == dev && p->mblock < mblock))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->n && r->pages[lo].dev == dev && r->pages[lo].mblock == mblock)
		return r->buf + r->pages[lo].at;
	return NULL;
}

void md_replay_free(struct md_replay *r)
{
	free(r->pages);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
