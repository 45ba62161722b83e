// SPDX-License-Identifier: GPL-2.0-or-later
/* gen.c — ACE-style workload generation (docs/gen.md): the operation set over a fixed
 * tree, a small model of that tree that rejects a sequence at its first step that
 * could not run as written, the bounded-exhaustive walk and the seeded random one.
 * It writes workload text only; running and judging are the explorer's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/gen.h"

/* ---- the fixed tree --------------------------------------------------------- */

static const char *const files[] = {"/foo", "/bar", "/A/foo", "/A/bar"};
static const char *const dirs[] = {"/A", "/B", "/A/C"};
#define NFILES 4
#define NDIRS  3

/* The set-up every generated workload starts from: the directories, and two of the
 * four file names holding 16 KiB (the other two are names to create). */
static const char setup_text[] = "setup\nmkdir /A\nmkdir /B\nmkdir /A/C\ncreate /foo\n"
                                 "write /foo 0 16k\ncreate /A/foo\nwrite /A/foo 0 16k\n";
#define SETUP_SIZE 16384u

/* ---- the model: what exists at each point ----------------------------------- */

#define MAX_ENT 24
struct ent {
	char path[48];
	char kind;     /* 'f' file, 'd' directory, 'l' symlink */
	bool xattr;    /* of the inode: every hard link of it agrees */
	uint64_t size; /* likewise */
	unsigned ino;  /* hard links share it */
};
struct tree {
	struct ent e[MAX_ENT];
	unsigned n;
	unsigned next_ino;
};

/* A change to a's inode, seen through every name it has. */
static void share(struct tree *t, const struct ent *a)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->e[i].ino == a->ino) {
			t->e[i].size = a->size;
			t->e[i].xattr = a->xattr;
		}
}

static struct ent *find(struct tree *t, const char *path)
{
	for (unsigned i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].path, path))
			return &t->e[i];
	return NULL;
}

static void parent_of(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s", path);
	char *s = strrchr(buf, '/');
	if (s == buf)
		s[1] = 0;
	else
		*s = 0;
}

static bool has_parent(struct tree *t, const char *path)
{
	char p[48];
	parent_of(path, p, sizeof p);
	if (!strcmp(p, "/"))
		return true;
	struct ent *e = find(t, p);
	return e && e->kind == 'd';
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/';
}

static bool dir_empty(const struct tree *t, const char *dir)
{
	for (unsigned i = 0; i < t->n; i++)
		if (under(t->e[i].path, dir))
			return false;
	return true;
}

static void add(struct tree *t, const char *path, char kind, uint64_t size)
{
	if (t->n == MAX_ENT)
		return; /* never with 7 names and sequences of the lengths allowed */
	struct ent *e = &t->e[t->n++];
	snprintf(e->path, sizeof e->path, "%s", path);
	e->kind = kind;
	e->xattr = false;
	e->size = size;
	e->ino = ++t->next_ino;
}

static void drop(struct tree *t, struct ent *e)
{
	*e = t->e[--t->n];
}

static void initial(struct tree *t)
{
	t->n = 0;
	t->next_ino = 0;
	for (unsigned i = 0; i < NDIRS; i++)
		add(t, dirs[i], 'd', 0);
	add(t, "/foo", 'f', SETUP_SIZE);
	add(t, "/A/foo", 'f', SETUP_SIZE);
}

/* ---- the operation set ------------------------------------------------------ */

enum gop {
	G_CREAT,
	G_MKDIR,
	G_FALLOC,
	G_WRITE,
	G_DWRITE,
	G_MWRITE,
	G_LINK,
	G_UNLINK,
	G_REMOVE,
	G_RENAME,
	G_SETXATTR,
	G_REMOVEXATTR,
	G_TRUNCATE,
	G_SYMLINK,
	G_FDATASYNC,
	G_FSYNC,
	G_SYNC,
	G_N
};

/* falloc's five modes with the range each uses on the 16 KiB files */
static const struct {
	const char *mode;
	uint64_t off, len;
} fmodes[] = {
    {"keep-size", 16384, 16384}, {"punch-hole", 4096, 4096}, {"zero-range", 12288, 8192},
    {"collapse", 4096, 4096},    {"insert", 4096, 4096},
};
#define NFMODES 5

struct tmpl {
	enum gop op;
	const char *a, *b;
	unsigned mode;
};

/* persistence after a step: nothing, fsync, fdatasync or sync */
enum { P_NONE, P_FSYNC, P_FDATASYNC, P_SYNC, P_N };

struct opset {
	struct tmpl t[160];
	unsigned n;
	uint64_t choices; /* step choices per position: templates x their persistence */
};

static bool persists(enum gop op)
{
	return op != G_FDATASYNC && op != G_FSYNC && op != G_SYNC;
}

static void build(struct opset *s)
{
	s->n = 0;
	for (int op = 0; op < G_N; op++) {
		const char *const *dom = op == G_MKDIR || op == G_REMOVE ? dirs : files;
		unsigned nd = op == G_MKDIR || op == G_REMOVE ? NDIRS : NFILES;
		switch (op) {
		case G_LINK:
		case G_SYMLINK:
			for (unsigned i = 0; i < NFILES; i++)
				for (unsigned k = 0; k < NFILES; k++)
					if (i != k)
						s->t[s->n++] =
						    (struct tmpl){op, files[i], files[k], 0};
			break;
		case G_RENAME:
			for (unsigned i = 0; i < NFILES; i++)
				for (unsigned k = 0; k < NFILES; k++)
					if (i != k)
						s->t[s->n++] =
						    (struct tmpl){op, files[i], files[k], 0};
			for (unsigned i = 0; i < NDIRS; i++)
				for (unsigned k = 0; k < NDIRS; k++)
					if (i != k)
						s->t[s->n++] =
						    (struct tmpl){op, dirs[i], dirs[k], 0};
			break;
		case G_FALLOC:
			for (unsigned i = 0; i < NFILES; i++)
				for (unsigned m = 0; m < NFMODES; m++)
					s->t[s->n++] = (struct tmpl){op, files[i], NULL, m};
			break;
		case G_SYNC: s->t[s->n++] = (struct tmpl){op, NULL, NULL, 0}; break;
		case G_FSYNC:
			for (unsigned i = 0; i < NFILES; i++)
				s->t[s->n++] = (struct tmpl){op, files[i], NULL, 0};
			for (unsigned i = 0; i < NDIRS; i++)
				s->t[s->n++] = (struct tmpl){op, dirs[i], NULL, 0};
			break;
		default:
			for (unsigned i = 0; i < nd; i++)
				s->t[s->n++] = (struct tmpl){op, dom[i], NULL, 0};
		}
	}
	s->choices = 0;
	for (unsigned i = 0; i < s->n; i++)
		s->choices += persists(s->t[i].op) ? P_N : 1;
}

/* The name a persistence step after t syncs: the file or directory it changed, or
 * for a removed or symlinked name its parent directory. */
static void subject(const struct tmpl *t, char *buf, size_t len)
{
	switch (t->op) {
	case G_LINK:
	case G_RENAME: snprintf(buf, len, "%s", t->b); break;
	case G_SYMLINK: parent_of(t->b, buf, len); break;
	case G_UNLINK:
	case G_REMOVE: parent_of(t->a, buf, len); break;
	default: snprintf(buf, len, "%s", t->a); break;
	}
}

static bool is_file(const struct ent *e)
{
	return e && e->kind == 'f';
}

/* Applies t to the tree, or returns the reason (>= 0) it could not run as written;
 * -1 when it ran. */
static int apply(struct tree *tr, const struct tmpl *t)
{
	struct ent *a = t->a ? find(tr, t->a) : NULL;
	struct ent *b = t->b ? find(tr, t->b) : NULL;
	switch (t->op) {
	case G_CREAT:
	case G_MKDIR:
		if (a)
			return GEN_REJ_EXISTS;
		if (!has_parent(tr, t->a))
			return GEN_REJ_NO_PARENT;
		add(tr, t->a, t->op == G_MKDIR ? 'd' : 'f', 0);
		return -1;
	case G_FALLOC: {
		if (!a)
			return GEN_REJ_MISSING;
		if (!is_file(a))
			return GEN_REJ_KIND;
		uint64_t off = fmodes[t->mode].off, len = fmodes[t->mode].len;
		const char *m = fmodes[t->mode].mode;
		/* collapse and insert refuse a range at or past the end (EINVAL) */
		if ((!strcmp(m, "collapse") && off + len >= a->size) ||
		    (!strcmp(m, "insert") && off >= a->size))
			return GEN_REJ_RANGE;
		if (!strcmp(m, "zero-range") && off + len > a->size)
			a->size = off + len;
		else if (!strcmp(m, "collapse"))
			a->size -= len;
		else if (!strcmp(m, "insert"))
			a->size += len;
		share(tr, a);
		return -1;
	}
	case G_WRITE:
	case G_DWRITE:
	case G_MWRITE:
	case G_TRUNCATE:
	case G_FDATASYNC:
		if (!a)
			return GEN_REJ_MISSING;
		if (!is_file(a))
			return GEN_REJ_KIND;
		if (t->op == G_TRUNCATE)
			a->size = 2048;
		else if (t->op == G_WRITE && a->size < 8192)
			a->size = 8192;
		else if ((t->op == G_DWRITE || t->op == G_MWRITE) && a->size < 4096)
			a->size = 4096;
		share(tr, a);
		return -1;
	case G_SETXATTR:
	case G_REMOVEXATTR:
		if (!a)
			return GEN_REJ_MISSING;
		if (!is_file(a))
			return GEN_REJ_KIND;
		if (t->op == G_REMOVEXATTR && !a->xattr)
			return GEN_REJ_NO_XATTR;
		a->xattr = t->op == G_SETXATTR;
		share(tr, a);
		return -1;
	case G_LINK:
	case G_SYMLINK:
		if (t->op == G_LINK && !a)
			return GEN_REJ_MISSING;
		if (t->op == G_LINK && !is_file(a))
			return GEN_REJ_KIND;
		if (b)
			return GEN_REJ_EXISTS;
		if (!has_parent(tr, t->b))
			return GEN_REJ_NO_PARENT;
		add(tr, t->b, t->op == G_LINK ? 'f' : 'l', 0);
		if (t->op == G_LINK) { /* the same inode under a new name */
			struct ent *nb = find(tr, t->b);
			a = find(tr, t->a);
			nb->ino = a->ino;
			tr->next_ino--;
			share(tr, a);
		}
		return -1;
	case G_UNLINK:
		if (!a)
			return GEN_REJ_MISSING;
		if (a->kind == 'd')
			return GEN_REJ_KIND;
		drop(tr, a);
		return -1;
	case G_REMOVE:
		if (!a)
			return GEN_REJ_MISSING;
		if (a->kind != 'd')
			return GEN_REJ_KIND;
		if (!dir_empty(tr, t->a))
			return GEN_REJ_NOT_EMPTY;
		drop(tr, a);
		return -1;
	case G_RENAME: {
		if (!a)
			return GEN_REJ_MISSING;
		if (a->kind == 'd' && under(t->b, t->a))
			return GEN_REJ_INTO_SELF;
		if (!has_parent(tr, t->b))
			return GEN_REJ_NO_PARENT;
		if (b && ((b->kind == 'd') != (a->kind == 'd')))
			return GEN_REJ_KIND;
		if (b && b->kind == 'd' && !dir_empty(tr, t->b))
			return GEN_REJ_NOT_EMPTY;
		char from[48], to[48];
		snprintf(from, sizeof from, "%s", t->a);
		snprintf(to, sizeof to, "%s", t->b);
		if (b)
			drop(tr, b);
		a = find(tr, from); /* drop moved the last entry */
		snprintf(a->path, sizeof a->path, "%s", to);
		size_t fl = strlen(from);
		for (unsigned i = 0; i < tr->n; i++) {
			if (!under(tr->e[i].path, from))
				continue;
			char np[96];
			snprintf(np, sizeof np, "%s%s", to, tr->e[i].path + fl);
			if (strlen(np) >= sizeof tr->e[i].path)
				return GEN_REJ_NO_PARENT; /* deeper than the fixed tree goes */
			memcpy(tr->e[i].path, np, strlen(np) + 1);
		}
		return -1;
	}
	case G_FSYNC:
		/* fsync opens the name, following a symlink to a target that may not exist */
		return !a ? GEN_REJ_MISSING : a->kind == 'l' ? GEN_REJ_KIND : -1;
	case G_SYNC: return -1;
	case G_N: break;
	}
	return GEN_REJ_KIND;
}

const char *gen_reject_name(enum gen_reject r)
{
	static const char *const n[GEN_REJ_N] = {
	    [GEN_REJ_MISSING] = "missing",     [GEN_REJ_EXISTS] = "exists",
	    [GEN_REJ_NO_PARENT] = "no-parent", [GEN_REJ_KIND] = "kind",
	    [GEN_REJ_INTO_SELF] = "into-self", [GEN_REJ_NOT_EMPTY] = "not-empty",
	    [GEN_REJ_RANGE] = "range",         [GEN_REJ_NO_XATTR] = "no-xattr",
	};
	return (unsigned)r < GEN_REJ_N ? n[r] : "?";
}

/* ---- workload text ---------------------------------------------------------- */

struct step {
	const struct tmpl *t;
	unsigned persist;
	bool subject_dir; /* the persistence subject is a directory (fsync-dir) */
};

static void step_text(const struct step *s, char *buf, size_t len)
{
	const struct tmpl *t = s->t;
	switch (t->op) {
	case G_CREAT: snprintf(buf, len, "create %s", t->a); break;
	case G_MKDIR: snprintf(buf, len, "mkdir %s", t->a); break;
	case G_FALLOC:
		snprintf(buf, len, "falloc %s %s %llu %llu", t->a, fmodes[t->mode].mode,
		         (unsigned long long)fmodes[t->mode].off,
		         (unsigned long long)fmodes[t->mode].len);
		break;
	case G_WRITE: snprintf(buf, len, "write %s 0 8k", t->a); break;
	case G_DWRITE: snprintf(buf, len, "dwrite %s 0 4k", t->a); break;
	case G_MWRITE: snprintf(buf, len, "mwrite %s 0 4k", t->a); break;
	case G_LINK: snprintf(buf, len, "link %s %s", t->a, t->b); break;
	case G_UNLINK: snprintf(buf, len, "unlink %s", t->a); break;
	case G_REMOVE: snprintf(buf, len, "rmdir %s", t->a); break;
	case G_RENAME: snprintf(buf, len, "rename %s %s", t->a, t->b); break;
	case G_SETXATTR: snprintf(buf, len, "setxattr %s user.bo v1", t->a); break;
	case G_REMOVEXATTR: snprintf(buf, len, "removexattr %s user.bo", t->a); break;
	case G_TRUNCATE: snprintf(buf, len, "truncate %s 2k", t->a); break;
	case G_SYMLINK: snprintf(buf, len, "symlink %s %s", t->a, t->b); break;
	case G_FDATASYNC: snprintf(buf, len, "fdatasync %s", t->a); break;
	case G_FSYNC: snprintf(buf, len, "fsync %s", t->a); break;
	case G_SYNC: snprintf(buf, len, "sync"); break;
	case G_N: buf[0] = 0; break;
	}
}

static void persist_text(const struct step *s, char *buf, size_t len)
{
	char subj[48];
	subject(s->t, subj, sizeof subj);
	switch (s->persist) {
	case P_FSYNC:
		snprintf(buf, len, "%s %s", s->subject_dir ? "fsync-dir" : "fsync", subj);
		break;
	case P_FDATASYNC: snprintf(buf, len, "fdatasync %s", subj); break;
	case P_SYNC: snprintf(buf, len, "sync"); break;
	default: buf[0] = 0;
	}
}

/* The workload text of steps[0..n): malloc'd, NULL when out of memory. */
static char *workload_text(const char *name, const char *what, const struct step *steps, unsigned n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	char summary[200], a[128], b[64];
	int sl = snprintf(summary, sizeof summary, "%s:", what);
	for (unsigned i = 0; i < n && sl < 150; i++) {
		step_text(&steps[i], a, sizeof a);
		persist_text(&steps[i], b, sizeof b);
		sl += snprintf(summary + sl, sizeof summary - (size_t)sl, "%s %s%s%s", i ? ";" : "",
		               a, b[0] ? ", " : "", b);
	}
	if (sl >= 150 && n > 1)
		snprintf(summary + 140, sizeof summary - 140, " ...");
	fprintf(f, "name %s\nsummary %s\n%srun\n", name, summary, setup_text);
	for (unsigned i = 0; i < n; i++) {
		step_text(&steps[i], a, sizeof a);
		persist_text(&steps[i], b, sizeof b);
		fprintf(f, "%s\n", a);
		if (b[0])
			fprintf(f, "%s\n", b);
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- the walks -------------------------------------------------------------- */

struct walk {
	struct opset ops_store;
	const struct opset *ops;
	unsigned len;
	struct step steps[GEN_MAX_RANDOM_LEN];
	gen_emit_fn emit;
	void *ctx;
	struct gen_stats *st;
	const char *prefix;
	uint64_t seed;
};

static int emit_one(struct walk *w)
{
	w->st->workloads++;
	if (!w->emit)
		return 0;
	char name[64], what[64];
	if (w->prefix[0] == 's') {
		snprintf(name, sizeof name, "seq%u-%06llu", w->len,
		         (unsigned long long)w->st->workloads);
		snprintf(what, sizeof what, "generated seq-%u", w->len);
	} else {
		snprintf(name, sizeof name, "rand%llu-%06llu", (unsigned long long)w->seed,
		         (unsigned long long)w->st->workloads);
		snprintf(what, sizeof what, "generated, seed %llu", (unsigned long long)w->seed);
	}
	char *text = workload_text(name, what, w->steps, w->len);
	if (!text)
		return -ENOMEM;
	int rc = w->emit(w->ctx, name, text);
	free(text);
	return rc;
}

/* Persistence that could not run as meant: fdatasync of a directory (POSIX defines
 * a directory's names through fsync), or any fsync of a symlink (it would open the
 * link's target, which may not exist). */
static bool bad_persist(unsigned p, const struct ent *se)
{
	if (p == P_NONE || p == P_SYNC)
		return false;
	return (se && se->kind == 'l') || (p == P_FDATASYNC && (!se || se->kind == 'd'));
}

static uint64_t ipow(uint64_t b, unsigned e)
{
	uint64_t r = 1;
	while (e--)
		r *= b;
	return r;
}

static int walk(struct walk *w, const struct tree *tr, unsigned depth)
{
	if (depth == w->len)
		return emit_one(w);
	uint64_t rest = ipow(w->ops->choices, w->len - depth - 1);
	for (unsigned i = 0; i < w->ops->n; i++) {
		const struct tmpl *t = &w->ops->t[i];
		unsigned np = persists(t->op) ? P_N : 1;
		struct tree next = *tr;
		int why = apply(&next, t);
		if (why >= 0) {
			w->st->rejected += np * rest;
			w->st->reason[why] += np * rest;
			continue;
		}
		char subj[48];
		subject(t, subj, sizeof subj);
		const struct ent *se = find(&next, subj);
		bool sdir = !se || se->kind == 'd';
		for (unsigned p = 0; p < np; p++) {
			if (bad_persist(p, se)) {
				/* fdatasync of a directory: not what POSIX defines names by */
				w->st->rejected += rest;
				w->st->reason[GEN_REJ_KIND] += rest;
				continue;
			}
			w->steps[depth] = (struct step){t, p, sdir};
			int rc = walk(w, &next, depth + 1);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* splitmix64: the same seed, the same draws on every machine */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct walk *walk_new(unsigned len, gen_emit_fn emit, void *ctx, struct gen_stats *st,
                             const char *prefix)
{
	struct walk *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	build(&w->ops_store);
	w->ops = &w->ops_store;
	w->len = len;
	w->emit = emit;
	w->ctx = ctx;
	w->st = st;
	w->prefix = prefix;
	st->templates = w->ops->n;
	st->choices = w->ops->choices;
	return w;
}

int gen_exhaustive(unsigned len, gen_emit_fn emit, void *ctx, struct gen_stats *st,
                   struct bo_err *err)
{
	memset(st, 0, sizeof *st);
	if (len < 1 || len > GEN_MAX_EXHAUSTIVE)
		return bo_errf(err, -EINVAL,
		               "--len %u: bounded-exhaustive sequences are 1..%u long", len,
		               GEN_MAX_EXHAUSTIVE);
	struct walk *w = walk_new(len, emit, ctx, st, "s");
	if (!w)
		return -ENOMEM;
	struct tree tr;
	initial(&tr);
	int rc = walk(w, &tr, 0);
	free(w);
	return rc;
}

int gen_random(uint64_t seed, unsigned count, unsigned len, gen_emit_fn emit, void *ctx,
               struct gen_stats *st, struct bo_err *err)
{
	memset(st, 0, sizeof *st);
	if (len < 1 || len > GEN_MAX_RANDOM_LEN)
		return bo_errf(err, -EINVAL, "--length %u: random sequences are 1..%u long", len,
		               GEN_MAX_RANDOM_LEN);
	struct walk *w = walk_new(len, emit, ctx, st, "r");
	if (!w)
		return -ENOMEM;
	w->seed = seed;
	uint64_t rs = seed;
	int rc = 0;
	for (unsigned n = 0; rc == 0 && n < count; n++) {
		struct tree tr;
		initial(&tr);
		for (unsigned d = 0; d < len;) {
			/* one draw among every step choice, persistence included */
			uint64_t c = next_rand(&rs) % w->ops->choices;
			unsigned i = 0, np = 0;
			for (; i < w->ops->n; i++, c -= np)
				if (c < (np = persists(w->ops->t[i].op) ? P_N : 1))
					break;
			const struct tmpl *t = &w->ops->t[i];
			struct tree next = tr;
			int why = apply(&next, t);
			if (why >= 0) {
				/* counted and drawn again; a tree where nothing could run
				 * does not exist here (sync always runs) */
				st->rejected++;
				st->reason[why]++;
				continue;
			}
			char subj[48];
			subject(t, subj, sizeof subj);
			const struct ent *se = find(&next, subj);
			bool sdir = !se || se->kind == 'd';
			if (persists(t->op) && bad_persist((unsigned)c, se)) {
				st->rejected++;
				st->reason[GEN_REJ_KIND]++;
				continue;
			}
			w->steps[d++] = (struct step){t, (unsigned)c, sdir};
			tr = next;
		}
		rc = emit_one(w);
	}
	free(w);
	return rc;
}

int gen_check(const char *const *steps, unsigned n, unsigned *at, enum gen_reject *why,
              struct bo_err *err)
{
	struct opset *ops = malloc(sizeof *ops);
	if (!ops)
		return -ENOMEM;
	build(ops);
	struct tree tr;
	initial(&tr);
	int rc = 0;
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		const struct tmpl *t = NULL;
		char text[128];
		for (unsigned k = 0; k < ops->n && !t; k++) {
			step_text(&(struct step){&ops->t[k], P_NONE, false}, text, sizeof text);
			if (!strcmp(text, steps[i]))
				t = &ops->t[k];
		}
		if (!t) {
			rc = bo_errf(err, -EINVAL,
			             "step %u: '%s' is not one of the generator's operations",
			             i + 1, steps[i]);
			break;
		}
		int r = apply(&tr, t);
		if (r >= 0) {
			*at = i;
			*why = (enum gen_reject)r;
			rc = 1;
		}
	}
	free(ops);
	return rc;
}
