// SPDX-License-Identifier: GPL-2.0-or-later
/* oracle.c — what a recovered filesystem must contain at each crash point, as a pure
 * model of the workload's executed steps. It knows nothing of any filesystem
 * implementation: it judges a tree read back (struct crash_obs_node). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/util.h"
#include "crash/oracle_int.h"

#define NO_STEP (-2L)
#define ROOT    1u

struct bind {
	long step;
	uint32_t target; /* 0: no entry */
};

struct ent {
	uint32_t dir;
	char *name;
	struct bind *b;
	size_t nb, cap;
	long atomic_step; /* from this step on, an atomic-replace target; NO_STEP if never */
	struct ent *hnext;
};

#define HBITS 12

struct crash_oracle {
	struct node *nodes; /* index 0 unused, 1 = root */
	size_t nnodes, ncap;
	struct ent **ents;
	size_t nents, ecap;
	struct ent *hash[1u << HBITS];
	long *syncs; /* run steps that were a completed sync */
	size_t nsyncs, scap;
	size_t nrun;
	struct {
		char name[32];
		uint32_t id; /* the node it holds open, 0: none (its open failed) */
		bool used;
	} fds[CRASH_WL_MAX_FDS];
};

static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need == 0)
		return 0;
	void *np = bo_grow(*p, cap, need - 1, sz, 8);
	if (!np)
		return -ENOMEM;
	*p = np;
	return 0;
}

static unsigned hash_ent(uint32_t dir, const char *name)
{
	uint64_t h = bo_hash64(BO_HASH64_INIT, &dir, sizeof(dir));
	h = bo_hash64(h, name, strlen(name));
	return (unsigned)(h & ((1u << HBITS) - 1));
}

static struct ent *ent_find(const struct crash_oracle *o, uint32_t dir, const char *name)
{
	for (struct ent *e = o->hash[hash_ent(dir, name)]; e; e = e->hnext)
		if (e->dir == dir && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static int ent_get(struct crash_oracle *o, uint32_t dir, const char *name, struct ent **out)
{
	struct ent *e = ent_find(o, dir, name);
	if (!e) {
		if (grow((void **)&o->ents, &o->ecap, o->nents + 1, sizeof(*o->ents)))
			return -ENOMEM;
		e = calloc(1, sizeof(*e));
		if (!e || !(e->name = strdup(name))) {
			free(e);
			return -ENOMEM;
		}
		e->dir = dir;
		e->atomic_step = NO_STEP;
		unsigned h = hash_ent(dir, name);
		e->hnext = o->hash[h];
		o->hash[h] = e;
		o->ents[o->nents++] = e;
	}
	*out = e;
	return 0;
}

static uint32_t ent_now(const struct ent *e)
{
	return e && e->nb ? e->b[e->nb - 1].target : 0;
}

static int ent_set(struct ent *e, long step, uint32_t target)
{
	if (e->nb && e->b[e->nb - 1].step == step) {
		e->b[e->nb - 1].target = target;
		return 0;
	}
	if (grow((void **)&e->b, &e->cap, e->nb + 1, sizeof(*e->b)))
		return -ENOMEM;
	e->b[e->nb++] = (struct bind){step, target};
	return 0;
}

static int node_new(struct crash_oracle *o, bool dir, uint32_t *id)
{
	if (grow((void **)&o->nodes, &o->ncap, o->nnodes + 1, sizeof(*o->nodes)))
		return -ENOMEM;
	memset(&o->nodes[o->nnodes], 0, sizeof(o->nodes[0]));
	o->nodes[o->nnodes].dir = dir;
	*id = (uint32_t)o->nnodes++;
	return 0;
}

static int node_ev(struct node *n, const struct ev *e)
{
	if (grow((void **)&n->ev, &n->cap, n->nev + 1, sizeof(*n->ev)))
		return -ENOMEM;
	n->ev[n->nev++] = *e;
	return 0;
}

static int push_step(long **arr, size_t *n, size_t *cap, long step)
{
	if (grow((void **)arr, cap, *n + 1, sizeof(**arr)))
		return -ENOMEM;
	(*arr)[(*n)++] = step;
	return 0;
}

/* Resolves a path in the current namespace: the parent directory, the last
 * component, and the entry there (may be NULL). */
static int resolve(struct crash_oracle *o, const char *path, uint32_t *parent, const char **last,
                   struct ent **e)
{
	uint32_t dir = ROOT;
	const char *p = path + 1;
	char comp[256];
	for (;;) {
		const char *slash = strchr(p, '/');
		if (!slash) {
			*parent = dir;
			*last = p;
			*e = ent_find(o, dir, p);
			return 0;
		}
		size_t len = (size_t)(slash - p);
		if (len == 0 || len >= sizeof(comp))
			return -ENOENT;
		memcpy(comp, p, len);
		comp[len] = 0;
		uint32_t t = ent_now(ent_find(o, dir, comp));
		if (!t || !o->nodes[t].dir)
			return -ENOENT;
		dir = t;
		p = slash + 1;
	}
}

static uint32_t lookup(struct crash_oracle *o, const char *path)
{
	uint32_t parent;
	const char *last;
	struct ent *e;
	if (strcmp(path, "/") == 0)
		return ROOT;
	if (resolve(o, path, &parent, &last, &e))
		return 0;
	return ent_now(e);
}

static bool dir_empty(const struct crash_oracle *o, uint32_t dir)
{
	for (size_t i = 0; i < o->nents; i++)
		if (o->ents[i]->dir == dir && ent_now(o->ents[i]))
			return false;
	return true;
}

/* The node's last content change or sync at or before `step`: whether its
 * content was made durable after its last change. */
static bool synced_since_change(const struct crash_oracle *o, const struct node *n, long step)
{
	long last_change = n->nev ? n->ev[n->nev - 1].step : NO_STEP;
	if (last_change == SETUP_STEP)
		return true; /* setup ends with a sync */
	for (size_t i = 0; i < n->nsyncs; i++)
		if (n->syncs[i] > last_change && n->syncs[i] < step)
			return true;
	for (size_t i = 0; i < o->nsyncs; i++)
		if (o->syncs[i] > last_change && o->syncs[i] < step)
			return true;
	return false;
}

static bool is_write(enum crash_op op)
{
	return op == CRASH_OP_WRITE || op == CRASH_OP_APPEND || op == CRASH_OP_FILL ||
	       op == CRASH_OP_DWRITE || op == CRASH_OP_MWRITE || op == CRASH_OP_OSYNC ||
	       op == CRASH_OP_DWRITE_OSYNC;
}

static int fd_find(const struct crash_oracle *o, const char *name)
{
	for (int i = 0; i < CRASH_WL_MAX_FDS; i++)
		if (o->fds[i].used && !strcmp(o->fds[i].name, name))
			return i;
	return -1;
}

/* fallocate's effect on the bytes a reader sees: plain and zero-range extend the size
 * (zero-range also zeroes), punch-hole zeroes inside the size, keep-size changes
 * nothing visible; collapse and insert shift the bytes, which the model does not
 * follow, so the file's bytes and size are not judged (docs/oracle.md). */
static int apply_falloc(struct crash_oracle *o, const struct crash_step *s, long step)
{
	uint32_t id = lookup(o, s->path);
	if (!id || o->nodes[id].dir)
		return 0;
	struct node *n = &o->nodes[id];
	n->touched |= step >= 0;
	uint64_t end = s->off + s->len;
	switch (s->mode) {
	case CRASH_FALLOC_PLAIN:
		if (end <= n->size)
			return 0;
		n->size = end;
		return node_ev(n, &(struct ev){step, true, 0, end, 0, end, NULL});
	case CRASH_FALLOC_ZERO:
	case CRASH_FALLOC_PUNCH: {
		if (s->mode == CRASH_FALLOC_PUNCH && end > n->size)
			end = n->size;
		if (end <= s->off)
			return 0;
		if (end > n->size)
			n->size = end;
		struct ev ev = {step,    false, CRASH_PATTERN_ZERO, s->off, end - s->off,
		                n->size, NULL};
		return node_ev(n, &ev);
	}
	case CRASH_FALLOC_COLLAPSE:
	case CRASH_FALLOC_INSERT: n->unjudged = true; return 0;
	default: return 0;
	}
}

/* Applies one step to the model. A step the real run saw fail changes nothing. */
static int apply(struct crash_oracle *o, const struct crash_step *s, long step,
                 const struct crash_exec *x)
{
	if (x && x->rc < 0 && !(x->done > 0 && is_write(s->op)))
		return 0;
	bool run = step >= 0;
	uint32_t parent, id;
	const char *last;
	struct ent *e;
	int rc = 0;
	switch (s->op) {
	case CRASH_OP_MKDIR:
	case CRASH_OP_CREATE:
		if (resolve(o, s->path, &parent, &last, &e))
			return 0;
		if (ent_now(e)) {
			if (run)
				o->nodes[ent_now(e)].touched = true;
			return 0; /* create of an existing file opens it */
		}
		if ((rc = node_new(o, s->op == CRASH_OP_MKDIR, &id)))
			return rc;
		o->nodes[id].touched = run;
		if (!e && (rc = ent_get(o, parent, last, &e)))
			return rc;
		return ent_set(e, step, id);
	case CRASH_OP_WRITE:
	case CRASH_OP_DWRITE:
	case CRASH_OP_MWRITE:
	case CRASH_OP_OSYNC:
	case CRASH_OP_DWRITE_OSYNC:
	case CRASH_OP_APPEND:
	case CRASH_OP_FILL: {
		id = lookup(o, s->path);
		if (!id || o->nodes[id].dir)
			return 0;
		struct node *n = &o->nodes[id];
		n->touched |= run;
		bool at_end = s->op == CRASH_OP_APPEND || s->op == CRASH_OP_FILL;
		uint64_t off = !at_end ? s->off : x ? x->off : n->size;
		uint64_t len = x ? x->done : s->len;
		if (!x && s->op == CRASH_OP_FILL)
			return 0; /* a fill's extent is only known from its execution */
		if (len == 0)
			return 0;
		struct ev ev = {step, false, s->tag, off, len, 0};
		if (off + len > n->size)
			n->size = off + len;
		ev.size_after = n->size;
		if ((rc = node_ev(n, &ev)))
			return rc;
		/* O_SYNC: the write returned once it was durable, as an fsync after it
		 * (mwrite's msync is not modelled as a promise: it judges nothing) */
		if (run && (s->op == CRASH_OP_OSYNC || s->op == CRASH_OP_DWRITE_OSYNC) &&
		    !(x && x->rc < 0))
			return push_step(&n->syncs, &n->nsyncs, &n->scap, step);
		return 0;
	}
	case CRASH_OP_TRUNCATE: {
		id = lookup(o, s->path);
		if (!id || o->nodes[id].dir)
			return 0;
		struct node *n = &o->nodes[id];
		n->touched |= run;
		n->size = s->off;
		struct ev ev = {step, true, 0, s->off, 0, s->off};
		return node_ev(n, &ev);
	}
	case CRASH_OP_RENAME:
	case CRASH_OP_LINK: {
		uint32_t sp, dp;
		const char *sl, *dl;
		struct ent *se, *de;
		if (resolve(o, s->path, &sp, &sl, &se) || !ent_now(se))
			return 0;
		if (resolve(o, s->path2, &dp, &dl, &de))
			return 0;
		uint32_t src = ent_now(se), old = ent_now(de);
		if (src == old)
			return 0;
		if (s->op == CRASH_OP_LINK && (old || o->nodes[src].dir))
			return 0;
		if (old && (o->nodes[old].dir != o->nodes[src].dir ||
		            (o->nodes[old].dir && !dir_empty(o, old))))
			return 0;
		o->nodes[src].touched |= run;
		if (old)
			o->nodes[old].touched |= run;
		if (!de && (rc = ent_get(o, dp, dl, &de)))
			return rc;
		/* rename over a file whose new content was made durable: old or new */
		if (run && s->op == CRASH_OP_RENAME && old && !o->nodes[src].dir &&
		    synced_since_change(o, &o->nodes[src], step) && de->atomic_step == NO_STEP)
			de->atomic_step = step;
		if ((rc = ent_set(de, step, src)))
			return rc;
		if (s->op == CRASH_OP_RENAME) {
			se = ent_find(o, sp, sl); /* de may have been added to the same table */
			return ent_set(se, step, 0);
		}
		return 0;
	}
	case CRASH_OP_UNLINK:
	case CRASH_OP_RMDIR:
		if (resolve(o, s->path, &parent, &last, &e) || !ent_now(e))
			return 0;
		id = ent_now(e);
		if (o->nodes[id].dir != (s->op == CRASH_OP_RMDIR))
			return 0;
		if (o->nodes[id].dir && !dir_empty(o, id))
			return 0;
		o->nodes[id].touched |= run;
		return ent_set(e, step, 0);
	case CRASH_OP_FSYNC:
	case CRASH_OP_FDATASYNC:
	case CRASH_OP_FSYNC_DIR:
		id = lookup(o, s->path);
		if (!id || !run)
			return 0;
		o->nodes[id].touched = true;
		return push_step(&o->nodes[id].syncs, &o->nodes[id].nsyncs, &o->nodes[id].scap,
		                 step);
	case CRASH_OP_SYNC: return run ? push_step(&o->syncs, &o->nsyncs, &o->scap, step) : 0;
	case CRASH_OP_MARK: return 0;
	case CRASH_OP_FALLOC: return apply_falloc(o, s, step);
	case CRASH_OP_SYMLINK:
		if (resolve(o, s->path2, &parent, &last, &e) || ent_now(e))
			return 0;
		if ((rc = node_new(o, false, &id)))
			return rc;
		o->nodes[id].link = o->nodes[id].unjudged = true;
		o->nodes[id].touched = run;
		if (!e && (rc = ent_get(o, parent, last, &e)))
			return rc;
		return ent_set(e, step, id);
	case CRASH_OP_SETXATTR:
	case CRASH_OP_REMOVEXATTR:
		/* xattrs are not observed: the step only makes the file no bystander */
		if ((id = lookup(o, s->path)) && run)
			o->nodes[id].touched = true;
		return 0;
	case CRASH_OP_OPEN: {
		int i;
		for (i = 0; i < CRASH_WL_MAX_FDS && o->fds[i].used; i++)
			;
		if (i == CRASH_WL_MAX_FDS)
			return 0; /* the parser allows no more */
		o->fds[i].used = true;
		snprintf(o->fds[i].name, sizeof(o->fds[i].name), "%s", s->arg);
		o->fds[i].id = lookup(o, s->path);
		return 0;
	}
	case CRASH_OP_CLOSE: {
		int i = fd_find(o, s->arg);
		if (i >= 0)
			o->fds[i].used = false;
		return 0;
	}
	case CRASH_OP_FSYNC_FD:
	case CRASH_OP_FDATASYNC_FD: {
		/* the file held open, whatever its names now: an unlinked file's data is
		 * synced, which promises nothing a reader can see */
		int i = fd_find(o, s->arg);
		if (i < 0 || !(id = o->fds[i].id) || !run)
			return 0;
		o->nodes[id].touched = true;
		return push_step(&o->nodes[id].syncs, &o->nodes[id].nsyncs, &o->nodes[id].scap,
		                 step);
	}
	}
	return 0;
}

/* Every write's bytes generated once: the judge compares each crash state's files
 * with them, and generating the pattern per state and byte was most of the time of
 * large workloads. Up to PAT_BUDGET bytes in all; past it, generated on demand. */
#define PAT_BUDGET (256ull << 20)
static void materialise(struct crash_oracle *o)
{
	uint64_t used = 0;
	for (size_t i = 0; i < o->nnodes; i++)
		for (size_t k = 0; k < o->nodes[i].nev; k++) {
			struct ev *e = &o->nodes[i].ev[k];
			if (e->trunc || e->tag == CRASH_PATTERN_ZERO || !e->len ||
			    e->len > PAT_BUDGET - used)
				continue;
			if (!(e->pat = malloc(e->len)))
				return; /* fine: generated on demand */
			crash_pattern_fill(e->tag, e->off, e->pat, e->len);
			used += e->len;
		}
}

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

int crash_oracle_new(const struct crash_workload *w, const struct crash_exec *exec,
                     struct crash_oracle **out, struct bo_err *err)
{
	*out = NULL;
	struct crash_oracle *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	uint32_t id;
	int rc = node_new(o, true, &id); /* 0: unused */
	if (rc == 0)
		rc = node_new(o, true, &id); /* 1: root */
	for (size_t i = 0; rc == 0 && i < w->nsetup; i++) {
		if (w->setup[i].op == CRASH_OP_FILL) {
			/* a fill's extent is only known from a run; setup has none recorded */
			rc = bo_errf(err, -EINVAL, "workload line %u: fill is only allowed in run",
			             w->setup[i].line);
			break;
		}
		rc = apply(o, &w->setup[i], SETUP_STEP, NULL);
	}
	for (size_t i = 1; rc == 0 && i < o->nnodes; i++)
		o->nodes[i].setup = true;
	for (size_t i = 0; rc == 0 && i < w->nrun; i++) {
		if (exec && exec[i].rc == -ENOSYS && !crash_model_supports(w->run[i].op)) {
			/* blackout's ext3 did not run it: nothing recorded can be judged */
			rc = crash_workload_model_check(w, err);
			break;
		}
		rc = apply(o, &w->run[i], (long)i, exec ? &exec[i] : NULL);
	}
	o->nrun = w->nrun;
	if (rc == 0)
		materialise(o);
	if (rc) {
		crash_oracle_free(o);
		return rc == -ENOMEM ? bo_errf(err, rc, "oracle: out of memory") : rc;
	}
	*out = o;
	return 0;
}

void crash_oracle_free(struct crash_oracle *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nnodes; i++) {
		for (size_t k = 0; k < o->nodes[i].nev; k++)
			free(o->nodes[i].ev[k].pat);
		free(o->nodes[i].ev);
		free(o->nodes[i].syncs);
	}
	free(o->nodes);
	for (size_t i = 0; i < o->nents; i++) {
		free(o->ents[i]->name);
		free(o->ents[i]->b);
		free(o->ents[i]);
	}
	free(o->ents);
	free(o->syncs);
	free(o);
}

/* ---- judging ---------------------------------------------------------------- */

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

/* The bindings an entry may show at crash point c. */
static size_t allowed_targets(const struct judge *j, const struct ent *e, uint32_t *out, size_t max)
{
	long d = last_before(j->o->syncs, j->o->nsyncs, j->c);
	const struct node *dn = &j->o->nodes[e->dir];
	long f = last_before(dn->syncs, dn->nsyncs, j->c);
	if (f > d)
		d = f;
	if (d == NO_STEP)
		d = SETUP_STEP;
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

#define MAX_ALLOWED 64
#define MAX_DEPTH   64

static void check_dir(struct judge *j, uint32_t dir, const char *path,
                      const struct crash_obs_node *obs, unsigned depth);

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
		if (kid->md5 && !kid->data) {
			/* bytes that fit these digests, as this candidate would have them */
			struct crash_obs_node b = *kid;
			if (!(b.data = crash_oracle_undigest(&j->o->nodes[cand[i]], kid))) {
				report(j, CRASH_INV_CONSISTENT, "out of memory judging %s", path);
				return;
			}
			check_file(j, cand[i], path, &b, &fc);
			free(b.data);
		} else {
			check_file(j, cand[i], path, kid, &fc);
		}
		if (fc.bad == 0)
			return;
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
		const struct ent *e = ent_find(j->o, dir, kid->name);
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
	static const char *const names[] = {"durable", "stale", "bystander", "consistent",
	                                    "atomic"};
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
