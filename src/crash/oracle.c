// SPDX-License-Identifier: GPL-2.0-or-later
/* oracle.c — the oracle's model of a workload: each executed step applied to files,
 * names and syncs, from which oracle_judge.c says what a crash point promises. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/util.h"
#include "crash/oracle_int.h"

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

struct ent *crash_oracle_ent_find(const struct crash_oracle *o, uint32_t dir, const char *name)
{
	for (struct ent *e = o->hash[hash_ent(dir, name)]; e; e = e->hnext)
		if (e->dir == dir && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static int ent_get(struct crash_oracle *o, uint32_t dir, const char *name, struct ent **out)
{
	struct ent *e = crash_oracle_ent_find(o, dir, name);
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
			*e = crash_oracle_ent_find(o, dir, p);
			return 0;
		}
		size_t len = (size_t)(slash - p);
		if (len == 0 || len >= sizeof(comp))
			return -ENOENT;
		memcpy(comp, p, len);
		comp[len] = 0;
		uint32_t t = ent_now(crash_oracle_ent_find(o, dir, comp));
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
		    !(x && x->rc < 0)) {
			if ((rc = push_step(&n->fsyncs, &n->nfsyncs, &n->fcap, step)))
				return rc;
			return push_step(&n->syncs, &n->nsyncs, &n->scap, step);
		}
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
			se = crash_oracle_ent_find(
			    o, sp, sl); /* de may have been added to the same table */
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
		if (s->op == CRASH_OP_FSYNC && !o->nodes[id].dir &&
		    (rc = push_step(&o->nodes[id].fsyncs, &o->nodes[id].nfsyncs, &o->nodes[id].fcap,
		                    step)))
			return rc;
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
		if (s->op == CRASH_OP_FSYNC_FD && !o->nodes[id].dir &&
		    (rc = push_step(&o->nodes[id].fsyncs, &o->nodes[id].nfsyncs, &o->nodes[id].fcap,
		                    step)))
			return rc;
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
		free(o->nodes[i].fsyncs);
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
