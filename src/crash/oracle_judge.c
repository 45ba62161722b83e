// SPDX-License-Identifier: GPL-2.0-or-later
/* oracle_judge.c — what a recovered filesystem must contain at a crash point, judged
 * against the oracle's model (oracle.c); it knows nothing of any filesystem
 * implementation: it judges a tree read back (struct crash_obs_node). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "crash/oracle_int.h"

/* The bytes e wrote at [off, off+len) (inside the write): its materialised copy, or
 * generated into scratch. */
static const uint8_t *ev_view(const struct ev *e, uint64_t off, uint8_t *scratch, size_t len)
{
	if (e->pat)
		return e->pat + (off - e->off);
	crash_pattern_fill(e->tag, off, scratch, len);
	return scratch;
}

static void ev_bytes(const struct ev *e, uint64_t off, uint8_t *buf, size_t len)
{
	const uint8_t *v = ev_view(e, off, buf, len);
	if (v != buf)
		memcpy(buf, v, len);
}

static long last_before(const long *a, size_t n, long c)
{
	long best = NO_STEP;
	for (size_t i = 0; i < n; i++)
		if (a[i] < c && a[i] > best)
			best = a[i];
	return best;
}

/* The step whose state of this node is promised at crash point c. */
static long durable_step(const struct crash_oracle *o, const struct node *n, long c)
{
	long d = last_before(o->syncs, o->nsyncs, c);
	long f = last_before(n->syncs, n->nsyncs, c);
	if (f > d)
		d = f;
	if (d == NO_STEP && n->setup)
		d = SETUP_STEP;
	return d;
}

struct judge {
	const struct crash_oracle *o;
	long c;
	unsigned flags;
	struct crash_verdict *v;
	size_t dlen;
};

static void report(struct judge *j, enum crash_inv inv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(struct judge *j, enum crash_inv inv, const char *fmt, ...)
{
	unsigned bit = 1u << inv;
	bool allowed = inv == CRASH_INV_STALE && (j->flags & CRASH_ORACLE_WRITEBACK);
	unsigned *mask = allowed ? &j->v->allowed : &j->v->broken;
	if (*mask & bit)
		return; /* the first problem of each kind is enough */
	*mask |= bit;
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	size_t cap = sizeof(j->v->detail);
	if (j->dlen < cap - 1) {
		int n = snprintf(j->v->detail + j->dlen, cap - j->dlen, "%s%s%s: %s",
		                 j->dlen ? "; " : "", crash_inv_name(inv),
		                 allowed ? " (allowed by data=writeback)" : "", msg);
		if (n > 0)
			j->dlen += (size_t)n < cap - j->dlen ? (size_t)n : cap - j->dlen - 1;
	}
}

struct fcheck {
	uint64_t bad;       /* bytes (or 1 for a size problem) that are wrong */
	enum crash_inv inv; /* DURABLE (old/lost synced data) or STALE (never written) */
	char why[256];
};

static bool byte_written_ever(const struct node *n, uint64_t o, uint8_t v)
{
	for (size_t i = 0; i < n->nev; i++) {
		const struct ev *e = &n->ev[i];
		if (!e->trunc && o >= e->off && o - e->off < e->len &&
		    crash_pattern_byte(e->tag, o) == v)
			return true;
	}
	return false;
}

/* Whose data is at data[off..off+8)? Foreign data arrives a whole sector at a time,
 * so it is some write's pattern at an offset congruent modulo 512. */
static bool attribute(const struct crash_oracle *o, const uint8_t *data, uint64_t off,
                      const char **name, long *step)
{
	for (size_t ni = 1; ni < o->nnodes; ni++) {
		const struct node *n = &o->nodes[ni];
		for (size_t k = 0; k < n->nev; k++) {
			const struct ev *e = &n->ev[k];
			if (e->trunc || e->tag == CRASH_PATTERN_ZERO || e->len < 8)
				continue;
			uint64_t first = e->off + ((off - e->off) & 511);
			if (first < e->off)
				first += 512;
			for (uint64_t c = first; c + 8 <= e->off + e->len; c += 512) {
				bool same = true;
				for (unsigned b = 0; b < 8 && same; b++)
					same = data[off + b] == crash_pattern_byte(e->tag, c + b);
				if (!same)
					continue;
				*name = "?";
				for (size_t q = 0; q < o->nents; q++)
					for (size_t m = 0; m < o->ents[q]->nb; m++)
						if (o->ents[q]->b[m].target == ni)
							*name = o->ents[q]->name;
				*step = e->step;
				return true;
			}
		}
	}
	return false;
}

/* The byte test of check_file, a whole aligned chunk at a time: true when the chunk
 * at off is entirely the promised content, entirely zeros past zero_from, or entirely
 * one later write's bytes (each byte would then pass the per-byte test). A file is
 * mostly such chunks; the per-byte test is for the rest. */
#define CHUNK 4096u
static bool chunk_fits(const struct node *n, const struct crash_obs_node *obs, const uint8_t *dbuf,
                       uint64_t dsize, uint64_t zero_from, size_t first_later, size_t end,
                       uint64_t off, uint8_t *pat)
{
	if (off + CHUNK > obs->size)
		return false;
	const uint8_t *d = obs->data + off;
	if (off + CHUNK <= dsize && memcmp(d, dbuf + off, CHUNK) == 0)
		return true;
	if (off >= zero_from && d[0] == 0 && memcmp(d, d + 1, CHUNK - 1) == 0)
		return true;
	for (size_t i = first_later; i < end; i++) {
		const struct ev *e = &n->ev[i];
		if (e->trunc || off < e->off || off + CHUNK - e->off > e->len)
			continue;
		if (memcmp(d, ev_view(e, off, pat, CHUNK), CHUNK) == 0)
			return true;
	}
	return false;
}

static void check_file(const struct judge *j, uint32_t id, const char *path,
                       const struct crash_obs_node *obs, struct fcheck *fc)
{
	const struct node *n = &j->o->nodes[id];
	long d = durable_step(j->o, n, j->c);
	memset(fc, 0, sizeof(*fc));
	if (n->unjudged)
		return;
	/* the promised state: events up to d */
	size_t first_later = 0;
	uint64_t dsize = 0;
	if (d != NO_STEP)
		while (first_later < n->nev && n->ev[first_later].step <= d)
			dsize = n->ev[first_later++].size_after;
	size_t end = first_later;
	while (end < n->nev && n->ev[end].step <= j->c)
		end++;
	uint64_t minsz = d == NO_STEP ? 0 : dsize, maxsz = dsize;
	for (size_t i = first_later; i < end; i++) {
		if (n->ev[i].size_after < minsz)
			minsz = n->ev[i].size_after;
		if (n->ev[i].size_after > maxsz)
			maxsz = n->ev[i].size_after;
	}
	/* a size that no version had is a worse fit than wrong bytes: rank it so */
	if (obs->size < minsz) {
		fc->bad = (1ull << 40) + minsz - obs->size;
		fc->inv = CRASH_INV_DURABLE;
		snprintf(fc->why, sizeof(fc->why),
		         "%.80s is %" PRIu64 " bytes, %" PRIu64 " were synced", path, obs->size,
		         minsz);
		return;
	}
	if (obs->size > maxsz) {
		fc->bad = (1ull << 40) + obs->size - maxsz;
		fc->inv = CRASH_INV_STALE;
		snprintf(fc->why, sizeof(fc->why),
		         "%.80s is %" PRIu64 " bytes, never more than %" PRIu64 " were written",
		         path, obs->size, maxsz);
		return;
	}
	uint8_t *dbuf = NULL;
	if (dsize && !(dbuf = calloc(1, dsize))) {
		fc->bad = 1;
		fc->inv = CRASH_INV_CONSISTENT;
		snprintf(fc->why, sizeof(fc->why), "out of memory");
		return;
	}
	for (size_t i = 0; i < first_later; i++) {
		const struct ev *e = &n->ev[i];
		if (e->trunc) {
			if (e->off < dsize)
				memset(dbuf + e->off, 0, dsize - e->off);
			continue;
		}
		uint64_t l =
		    e->off < dsize ? (dsize - e->off < e->len ? dsize - e->off : e->len) : 0;
		if (l)
			ev_bytes(e, e->off, dbuf + e->off, l);
	}
	/* a later truncate re-exposes zeros from its size on */
	uint64_t zero_from = dsize;
	for (size_t i = first_later; i < end; i++)
		if (n->ev[i].trunc && n->ev[i].off < zero_from)
			zero_from = n->ev[i].off;
	uint64_t first_bad = UINT64_MAX, last_bad = 0, first_stale = 0;
	bool stale = false;
	uint8_t pat[CHUNK];
	for (uint64_t off = 0; off < obs->size; off++) {
		if (!(off & (CHUNK - 1)) &&
		    chunk_fits(n, obs, dbuf, dsize, zero_from, first_later, end, off, pat)) {
			off += CHUNK - 1; /* every byte of it passes the test below */
			continue;
		}
		uint8_t v = obs->data[off];
		if (off < dsize && dbuf[off] == v)
			continue;
		if (v == 0 && off >= zero_from)
			continue;
		bool later = false;
		for (size_t i = first_later; i < end && !later; i++) {
			const struct ev *e = &n->ev[i];
			later = !e->trunc && off >= e->off && off - e->off < e->len &&
			        crash_pattern_byte(e->tag, off) == v;
		}
		if (later)
			continue;
		if (v == 0 || byte_written_ever(n, off, v)) {
			/* zero, or this file's own older bytes, where synced data belongs: lost */
		} else if (!stale) {
			stale = true;
			first_stale = off;
		}
		fc->bad++;
		if (first_bad == UINT64_MAX)
			first_bad = off;
		last_bad = off;
	}
	free(dbuf);
	if (fc->bad) {
		fc->inv = stale ? CRASH_INV_STALE : CRASH_INV_DURABLE;
		char whose[96] = "";
		const char *wn;
		long ws;
		if (stale && first_stale + 8 <= obs->size &&
		    attribute(j->o, obs->data, first_stale, &wn, &ws)) {
			if (ws < 0)
				snprintf(whose, sizeof(whose), " (from %.32s, setup)", wn);
			else
				snprintf(whose, sizeof(whose), " (from %.32s, step %ld)", wn, ws);
		}
		snprintf(fc->why, sizeof(fc->why), "%.80s bytes %" PRIu64 "-%" PRIu64 " %s%.63s",
		         path, first_bad, last_bad,
		         stale ? "hold data never written to this file"
		               : "lost data a sync had made durable",
		         whose);
	}
}

/* POSIX's step up to which entry e's bindings are durable at crash point c: the last
 * sync or fsync of its directory before c. */
static long names_step(const struct judge *j, const struct ent *e)
{
	long d = last_before(j->o->syncs, j->o->nsyncs, j->c);
	const struct node *dn = &j->o->nodes[e->dir];
	long f = last_before(dn->syncs, dn->nsyncs, j->c);
	if (f > d)
		d = f;
	if (d == NO_STEP)
		d = SETUP_STEP;
	return d;
}

/* The bindings an entry may show at crash point c, when those up to step d are
 * durable. */
static size_t targets_from(const struct judge *j, const struct ent *e, long d, uint32_t *out,
                           size_t max)
{
	size_t n = 0;
	uint32_t at_d = 0;
	for (size_t i = 0; i < e->nb; i++) {
		if (e->b[i].step <= d)
			at_d = e->b[i].target;
		else if (e->b[i].step <= j->c && n < max)
			out[n++] = e->b[i].target;
	}
	if (n < max)
		out[n++] = at_d;
	/* dedup */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < m; k++)
			seen |= out[k] == out[i];
		if (!seen)
			out[m++] = out[i];
	}
	return m;
}

/* The bindings an entry may show at crash point c (POSIX). */
static size_t allowed_targets(const struct judge *j, const struct ent *e, uint32_t *out, size_t max)
{
	return targets_from(j, e, names_step(j, e), out, max);
}

/* Under the filesystem's own promise (CRASH_ORACLE_FS_PROMISE), the bindings it
 * allows when that promise asks more than POSIX; 0 when it asks nothing more. */
static size_t promised_targets(const struct judge *j, const struct ent *e, uint32_t *out,
                               size_t max, char *why, size_t whylen)
{
	if (!(j->flags & CRASH_ORACLE_FS_PROMISE))
		return 0;
	long d = names_step(j, e);
	long p = crash_oracle_promise_step(j->o, e, j->c, d, why, whylen);
	return p > d ? targets_from(j, e, p, out, max) : 0;
}

#define MAX_ALLOWED 64
#define MAX_DEPTH   64

static void check_dir(struct judge *j, uint32_t dir, const char *path,
                      const struct crash_obs_node *obs, unsigned depth);

static void promise_missing(struct judge *j, uint32_t dir, const char *path,
                            const struct crash_obs_node *obs);

static bool any_link(const struct judge *j, const uint32_t *t, size_t nt)
{
	for (size_t i = 0; i < nt; i++)
		if (t[i] && j->o->nodes[t[i]].link)
			return true;
	return false;
}

static enum crash_inv entry_inv(const struct judge *j, const struct ent *e, const uint32_t *t,
                                size_t nt, enum crash_inv dflt)
{
	if (e->atomic_step != NO_STEP && e->atomic_step <= j->c)
		return CRASH_INV_ATOMIC;
	bool all_by = nt > 0;
	for (size_t i = 0; i < nt; i++) {
		const struct node *n = &j->o->nodes[t[i]];
		all_by &= t[i] != 0 && n->setup && !n->touched && !n->dir;
	}
	return all_by ? CRASH_INV_BYSTANDER : dflt;
}

/* check_file of the observed file kid as node id would hold it; -ENOMEM when its
 * digests cannot be turned into bytes. */
static int file_check_one(const struct judge *j, uint32_t id, const char *path,
                          const struct crash_obs_node *kid, struct fcheck *fc)
{
	if (!(kid->md5 && !kid->data)) {
		check_file(j, id, path, kid, fc);
		return 0;
	}
	/* bytes that fit these digests, as this candidate would have them */
	struct crash_obs_node b = *kid;
	if (!(b.data = crash_oracle_undigest(&j->o->nodes[id], kid)))
		return -ENOMEM;
	check_file(j, id, path, &b, fc);
	free(b.data);
	return 0;
}

/* An entry POSIX found as promised (kid, as node fit): does the filesystem's own
 * promise allow it too? A name it made durable must show one of its targets. */
static void promise_entry(struct judge *j, const struct ent *e, const char *path,
                          const struct crash_obs_node *kid, uint32_t fit)
{
	uint32_t tp[MAX_ALLOWED];
	char why[200] = "";
	size_t np = promised_targets(j, e, tp, MAX_ALLOWED, why, sizeof(why));
	if (!np || any_link(j, tp, np))
		return;
	bool typed = false;
	for (size_t i = 0; i < np; i++) {
		if (!tp[i] || j->o->nodes[tp[i]].dir != kid->dir)
			continue;
		typed = true;
		if (tp[i] == fit || kid->dir)
			return;
		struct fcheck fc;
		if (file_check_one(j, tp[i], path, kid, &fc) == 0 && fc.bad == 0)
			return;
	}
	report(j, CRASH_INV_PROMISE, "%s %s, though %s", path,
	       typed ? "holds what an older name held" : "exists", why);
}

static void check_entry(struct judge *j, const struct ent *e, const char *path,
                        const struct crash_obs_node *kid, unsigned depth)
{
	uint32_t t[MAX_ALLOWED];
	size_t nt = allowed_targets(j, e, t, MAX_ALLOWED);
	if (any_link(j, t, nt))
		return; /* a name that may be a symlink is not judged */
	uint32_t cand[MAX_ALLOWED];
	size_t nc = 0;
	for (size_t i = 0; i < nt; i++)
		if (t[i] && j->o->nodes[t[i]].dir == kid->dir)
			cand[nc++] = t[i];
	if (nc == 0) {
		report(j, entry_inv(j, e, t, nt, CRASH_INV_DURABLE),
		       "%s exists as a %s, which a sync had made impossible", path,
		       kid->dir ? "directory" : "file");
		return;
	}
	if (kid->dir) {
		/* several directories may own this name (rmdir + mkdir): judge the first
		 * that fits, else the first */
		size_t pick = 0;
		for (size_t i = 0; i < nc && nc > 1; i++) {
			struct crash_verdict tv = {0};
			struct judge tj = {j->o, j->c, j->flags, &tv, 0};
			check_dir(&tj, cand[i], path, kid, depth + 1);
			if (!tv.broken) {
				pick = i;
				break;
			}
		}
		check_dir(j, cand[pick], path, kid, depth + 1);
		promise_entry(j, e, path, kid, cand[pick]);
		return;
	}
	if (kid->read_rc) {
		j->v->read_errors++;
		report(j, entry_inv(j, e, cand, nc, CRASH_INV_DURABLE), "%s cannot be read (%s)",
		       path, strerror(-kid->read_rc));
		return;
	}
	if (!kid->data && !kid->md5 && kid->size) {
		/* a damaged inode: neither a directory nor a regular file any more */
		report(j, entry_inv(j, e, cand, nc, CRASH_INV_DURABLE),
		       "%s is no longer a regular file", path);
		return;
	}
	struct fcheck best = {0}, fc;
	size_t besti = 0;
	for (size_t i = 0; i < nc; i++) {
		if (file_check_one(j, cand[i], path, kid, &fc)) {
			report(j, CRASH_INV_CONSISTENT, "out of memory judging %s", path);
			return;
		}
		if (fc.bad == 0) {
			promise_entry(j, e, path, kid, cand[i]);
			return;
		}
		if (i == 0 || fc.bad < best.bad) {
			best = fc;
			besti = i;
		}
	}
	uint32_t who = cand[besti];
	enum crash_inv inv = best.inv;
	if (inv == CRASH_INV_DURABLE || inv == CRASH_INV_STALE)
		inv = entry_inv(j, e, &who, 1, inv);
	if (e->atomic_step != NO_STEP && e->atomic_step <= j->c)
		inv = CRASH_INV_ATOMIC;
	report(j, inv, "%s", best.why);
}

static void join(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);
}

static void check_dir(struct judge *j, uint32_t dir, const char *path,
                      const struct crash_obs_node *obs, unsigned depth)
{
	if (depth > MAX_DEPTH)
		return;
	char sub[CRASH_WL_MAX_PATH + 260];
	for (size_t i = 0; i < obs->nkids; i++) {
		const struct crash_obs_node *kid = &obs->kids[i];
		join(sub, sizeof(sub), path, kid->name);
		const struct ent *e = crash_oracle_ent_find(j->o, dir, kid->name);
		if (!e) {
			if (dir == ROOT && strcmp(kid->name, "lost+found") == 0)
				continue;
			report(j, CRASH_INV_STALE, "%s appeared though no step created it", sub);
			continue;
		}
		check_entry(j, e, sub, kid, depth);
	}
	/* names that must be there */
	for (size_t i = 0; i < j->o->nents; i++) {
		const struct ent *e = j->o->ents[i];
		if (e->dir != dir)
			continue;
		bool present = false;
		for (size_t k = 0; k < obs->nkids && !present; k++)
			present = strcmp(obs->kids[k].name, e->name) == 0;
		if (present)
			continue;
		uint32_t t[MAX_ALLOWED];
		size_t nt = allowed_targets(j, e, t, MAX_ALLOWED);
		bool may_be_absent = any_link(j, t, nt);
		for (size_t k = 0; k < nt; k++)
			may_be_absent |= t[k] == 0;
		if (may_be_absent)
			continue;
		join(sub, sizeof(sub), path, e->name);
		if (obs->read_rc) {
			/* the listing failed: the filesystem reported the loss, so it is a
			 * read error (detected), not a name that silently vanished */
			j->v->read_errors++;
			report(j, entry_inv(j, e, t, nt, CRASH_INV_DURABLE),
			       "%s cannot be read: %s cannot be listed (%s)", sub, path,
			       strerror(-obs->read_rc));
			continue;
		}
		report(j, entry_inv(j, e, t, nt, CRASH_INV_DURABLE),
		       "%s is missing, a sync had made it durable", sub);
	}
	promise_missing(j, dir, path, obs);
}

/* Names POSIX lets be absent that the filesystem's own promise made durable. */
static void promise_missing(struct judge *j, uint32_t dir, const char *path,
                            const struct crash_obs_node *obs)
{
	if (!(j->flags & CRASH_ORACLE_FS_PROMISE) || obs->read_rc)
		return;
	char sub[CRASH_WL_MAX_PATH + 260];
	for (size_t i = 0; i < j->o->nents; i++) {
		const struct ent *e = j->o->ents[i];
		if (e->dir != dir)
			continue;
		bool present = false;
		for (size_t k = 0; k < obs->nkids && !present; k++)
			present = strcmp(obs->kids[k].name, e->name) == 0;
		uint32_t t[MAX_ALLOWED], tp[MAX_ALLOWED];
		size_t nt = allowed_targets(j, e, t, MAX_ALLOWED);
		bool posix_absent = any_link(j, t, nt);
		for (size_t k = 0; k < nt; k++)
			posix_absent |= t[k] == 0;
		if (present || !posix_absent)
			continue; /* judged above */
		char why[200] = "";
		size_t np = promised_targets(j, e, tp, MAX_ALLOWED, why, sizeof(why));
		bool may_be_absent = !np || any_link(j, tp, np);
		for (size_t k = 0; k < np; k++)
			may_be_absent |= tp[k] == 0;
		if (may_be_absent)
			continue;
		join(sub, sizeof(sub), path, e->name);
		report(j, CRASH_INV_PROMISE, "%s is missing, though %s", sub, why);
	}
}

int crash_oracle_check(const struct crash_oracle *o, size_t completed,
                       const struct crash_obs_node *root, unsigned flags, struct crash_verdict *v)
{
	memset(v, 0, sizeof(*v));
	if (completed > o->nrun)
		return -ERANGE;
	if (!root->dir)
		return -EINVAL;
	struct judge j = {o, (long)completed, flags, v, 0};
	check_dir(&j, ROOT, "/", root, 0);
	return 0;
}

const char *crash_inv_name(enum crash_inv i)
{
	static const char *const names[] = {"durable",    "stale",  "bystander",
	                                    "consistent", "atomic", "fs-promise"};
	return (unsigned)i < CRASH_INV_N ? names[i] : "?";
}

void crash_obs_free(struct crash_obs_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		crash_obs_free(&n->kids[i]);
	free(n->kids);
	free(n->name);
	free(n->data);
	free(n->md5);
	n->kids = NULL;
	n->name = NULL;
	n->data = NULL;
	n->md5 = NULL;
	n->nkids = 0;
}
