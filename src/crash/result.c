/* result.c — an exploration's results as JSON (written and read back, for shard
 * merging) and as the terminal summary. Timings stay out of the JSON so that the
 * same exploration run twice gives identical bytes. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/util.h"

static void inv_list(FILE *f, unsigned mask)
{
	fputc('[', f);
	bool first = true;
	for (int i = 0; i < CRASH_INV_N; i++)
		if (mask & (1u << i)) {
			fprintf(f, "%s\"%s\"", first ? "" : ",", crash_inv_name((enum crash_inv)i));
			first = false;
		}
	fputc(']', f);
}

static void inv_counts(FILE *f, const uint64_t *v)
{
	fputc('{', f);
	for (int i = 0; i < CRASH_INV_N; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", crash_inv_name((enum crash_inv)i),
		        v[i]);
	fputc('}', f);
}

int crash_result_write_json(const struct crash_result *r, FILE *f)
{
	fputs("{\"blackout_explore\":1,\"stack\":", f);
	bo_json_str(f, r->stack);
	fputs(",\"fs\":", f);
	bo_json_str(f, r->fs);
	fputs(",\"workload\":", f);
	bo_json_str(f, r->workload);
	fprintf(f,
	        ",\"seed\":%" PRIu64 ",\"max_states\":%" PRIu64 ",\"shard\":%u,\"nshards\":%u"
	        ",\n \"cuts\":%" PRIu64 ",\"space\":%" PRIu64 ",\"space_log2\":%.3f"
	        ",\"exhaustive\":%s,\"built\":%" PRIu64 ",\"coverage\":%.6f"
	        ",\n \"judged\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"ok\":%" PRIu64
	        ",\"silent\":%" PRIu64 ",\"detected\":%" PRIu64 ",\"e2fsck_runs\":%" PRIu64
	        ",\"e2fsck_disagree\":%" PRIu64 ",\n \"violations\":",
	        r->seed, r->max_states, r->shard, r->nshards, r->cuts, r->space, r->space_log2,
	        r->exhaustive ? "true" : "false", r->built, r->coverage, r->judged, r->duplicates,
	        r->ok, r->silent, r->detected, r->e2fsck_runs, r->e2fsck_disagree);
	inv_counts(f, r->viol);
	fputs(",\"allowed\":", f);
	inv_counts(f, r->allowed);
	fputs(",\n \"failures\":[", f);
	for (size_t i = 0; i < r->nfail; i++) {
		const struct crash_state *s = &r->fail[i];
		fprintf(f, "%s\n  {\"id\":", i ? "," : "");
		bo_json_str(f, s->id);
		fprintf(f, ",\"pos\":%zu,\"inflight\":%s,\"completed\":%zu,\"broken\":", s->pos,
		        s->inflight ? "true" : "false", s->completed);
		inv_list(f, s->broken);
		fputs(",\"allowed\":", f);
		inv_list(f, s->allowed);
		fprintf(f, ",\"detected\":%s,\"detected_by\":", s->detected ? "true" : "false");
		bo_json_str(f, s->detected_by);
		fprintf(f, ",\"e2fsck_agrees\":%d,\"detail\":", s->e2fsck_agrees);
		bo_json_str(f, s->detail);
		fputc('}', f);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}

void crash_result_print(const struct crash_result *r, FILE *f)
{
	fprintf(f, "stack:    %s\nfs:       %s\nworkload: %s\n", r->stack, r->fs, r->workload);
	if (r->exhaustive)
		fprintf(f, "states:   %" PRIu64 " built over %" PRIu64 " cut points: exhaustive\n",
		        r->built, r->cuts);
	else
		fprintf(f,
		        "states:   %" PRIu64 " built over %" PRIu64
		        " cut points: sampled (seed %" PRIu64 "), %.3g%% of 2^%.1f outcomes\n",
		        r->built, r->cuts, r->seed, 100.0 * r->coverage, r->space_log2);
	if (r->nshards > 1)
		fprintf(f, "shard:    %u/%u\n", r->shard, r->nshards);
	uint64_t failing = r->judged - r->ok;
	fprintf(f,
	        "judged:   %" PRIu64 " distinct (%" PRIu64 " duplicates), %" PRIu64 " ok, %" PRIu64
	        " failing: %" PRIu64 " SILENT, %" PRIu64 " detected\n",
	        r->judged, r->duplicates, r->ok, failing, r->silent, r->detected);
	fprintf(f, "\n  %-12s %10s %12s\n", "invariant", "broken", "allowed");
	for (int i = 0; i < CRASH_INV_N; i++)
		fprintf(f, "  %-12s %10" PRIu64 " %12" PRIu64 "\n",
		        crash_inv_name((enum crash_inv)i), r->viol[i], r->allowed[i]);
	if (r->e2fsck_runs)
		fprintf(f,
		        "\ne2fsck:   %" PRIu64 " runs, %" PRIu64 " disagreements with own fsck\n",
		        r->e2fsck_runs, r->e2fsck_disagree);
	if (r->ndamage) {
		fprintf(f, "\nsectors not as the stack last held them (%zu ranges%s):\n",
		        r->ndamage, r->damage_truncated ? ", more not shown" : "");
		for (size_t i = 0; i < r->ndamage; i++)
			fprintf(f,
			        "  %-8s sectors %" PRIu64 "-%" PRIu64 " (block %" PRIu64 "): %s\n",
			        r->damage[i].what, r->damage[i].lba,
			        r->damage[i].lba + r->damage[i].count - 1, r->damage[i].block,
			        r->damage[i].owner[0] ? r->damage[i].owner : "free or unknown");
	}
	size_t show = r->nfail < 10 ? r->nfail : 10;
	if (show)
		fprintf(f, "\nfailing states (first %zu of %zu):\n", show, r->nfail);
	for (size_t i = 0; i < show; i++) {
		const struct crash_state *s = &r->fail[i];
		fprintf(f, "  %-14s after step %zu, %s%s: %s\n", s->id, s->completed,
		        s->broken ? (s->detected ? "detected by " : "SILENT") : "allowed",
		        s->broken && s->detected ? s->detected_by : "", s->detail);
	}
}

/* ---- reading results back: a small JSON reader for our own output ---------------
 * The input is untrusted (files from shards): depth, sizes and types are checked. */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	int type;
	bool b;
	double num;
	bool neg;
	uint64_t u; /* exact integer value when the number is one */
	char *str;
	struct jv *items;
	char **keys; /* objects */
	size_t n;
};

struct jp {
	const char *s, *end, *start;
	struct bo_err *err;
	unsigned depth;
};

static void jv_free(struct jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

static int jerr(struct jp *p, const char *what)
{
	return bo_errf(p->err, -EINVAL, "result JSON, byte %zu: %s", (size_t)(p->s - p->start),
	               what);
}

static void ws(struct jp *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\n' || *p->s == '\t' || *p->s == '\r'))
		p->s++;
}

static int jstr(struct jp *p, char **out)
{
	p->s++; /* opening quote */
	size_t cap = 32, n = 0;
	char *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	while (p->s < p->end && *p->s != '"') {
		unsigned c = (unsigned char)*p->s++;
		if (c < 0x20) {
			free(b);
			return jerr(p, "control byte in a string");
		}
		if (c == '\\') {
			if (p->s >= p->end)
				break;
			char e = *p->s++;
			switch (e) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case '"':
			case '\\':
			case '/': c = (unsigned char)e; break;
			case 'u': {
				if (p->end - p->s < 4) {
					free(b);
					return jerr(p, "short \\u escape");
				}
				unsigned v = 0;
				for (int i = 0; i < 4; i++) {
					char h = p->s[i];
					v = v * 16 +
					    (unsigned)(h >= '0' && h <= '9'   ? h - '0'
					               : h >= 'a' && h <= 'f' ? h - 'a' + 10
					               : h >= 'A' && h <= 'F' ? h - 'A' + 10
					                                      : 99);
					if (v > 0xffff) {
						free(b);
						return jerr(p, "bad \\u escape");
					}
				}
				p->s += 4;
				/* we write one escape per byte (bo_json_str); others become '?' */
				c = v < 0x100 ? v : '?';
				break;
			}
			default: free(b); return jerr(p, "bad escape");
			}
		}
		if (n + 2 > cap) {
			if (cap > (1u << 24)) {
				free(b);
				return jerr(p, "string too long");
			}
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		b[n++] = (char)c;
	}
	if (p->s >= p->end) {
		free(b);
		return jerr(p, "unterminated string");
	}
	p->s++;
	b[n] = 0;
	*out = b;
	return 0;
}

static int jval(struct jp *p, struct jv *v);

static int jlist(struct jp *p, struct jv *v, bool obj)
{
	char close = obj ? '}' : ']';
	p->s++;
	size_t cap = 0;
	ws(p);
	if (p->s < p->end && *p->s == close) {
		p->s++;
		return 0;
	}
	for (;;) {
		if (v->n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			if (nc > (1u << 22))
				return jerr(p, "too many elements");
			struct jv *ni = realloc(v->items, nc * sizeof(*ni));
			if (!ni)
				return -ENOMEM;
			v->items = ni;
			if (obj) {
				char **nk = realloc(v->keys, nc * sizeof(*nk));
				if (!nk)
					return -ENOMEM;
				v->keys = nk;
			}
			cap = nc;
		}
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		ws(p);
		if (obj) {
			v->keys[v->n] = NULL;
			if (p->s >= p->end || *p->s != '"')
				return jerr(p, "expected a key");
			int rc = jstr(p, &v->keys[v->n]);
			if (rc)
				return rc;
			ws(p);
			if (p->s >= p->end || *p->s != ':') {
				v->n++;
				return jerr(p, "expected ':'");
			}
			p->s++;
		}
		int rc = jval(p, &v->items[v->n]);
		v->n++;
		if (rc)
			return rc;
		ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		if (p->s < p->end && *p->s == close) {
			p->s++;
			return 0;
		}
		return jerr(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int jval(struct jp *p, struct jv *v)
{
	ws(p);
	if (p->s >= p->end)
		return jerr(p, "unexpected end");
	if (++p->depth > 16)
		return jerr(p, "nested too deep");
	int rc = 0;
	char c = *p->s;
	if (c == '{' || c == '[') {
		v->type = c == '{' ? J_OBJ : J_ARR;
		rc = jlist(p, v, c == '{');
	} else if (c == '"') {
		v->type = J_STR;
		rc = jstr(p, &v->str);
	} else if (p->end - p->s >= 4 && memcmp(p->s, "true", 4) == 0) {
		v->type = J_BOOL;
		v->b = true;
		p->s += 4;
	} else if (p->end - p->s >= 5 && memcmp(p->s, "false", 5) == 0) {
		v->type = J_BOOL;
		p->s += 5;
	} else if (p->end - p->s >= 4 && memcmp(p->s, "null", 4) == 0) {
		v->type = J_NULL;
		p->s += 4;
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		v->type = J_NUM;
		char buf[64];
		size_t n = 0;
		while (p->s < p->end && n < sizeof(buf) - 1 && strchr("+-0123456789.eE", *p->s) &&
		       *p->s)
			buf[n++] = *p->s++;
		buf[n] = 0;
		char *e;
		v->num = strtod(buf, &e);
		if (*e)
			return jerr(p, "bad number");
		v->neg = buf[0] == '-';
		if (!strpbrk(buf, ".eE") && !v->neg) {
			errno = 0;
			v->u = strtoull(buf, &e, 10);
			if (errno)
				return jerr(p, "integer out of range");
		}
	} else {
		rc = jerr(p, "unexpected character");
	}
	p->depth--;
	return rc;
}

static const struct jv *jget(const struct jv *o, const char *key)
{
	if (o->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->items[i];
	return NULL;
}

struct jread {
	struct bo_err *err;
	int rc;
};

static uint64_t ju64(struct jread *r, const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);
	if (!v || v->type != J_NUM || v->neg) {
		if (!r->rc)
			r->rc = bo_errf(r->err, -EINVAL, "result JSON: '%s' missing or not a count",
			                key);
		return 0;
	}
	return v->u;
}

static double jnum(struct jread *r, const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);
	if (!v || v->type != J_NUM) {
		if (!r->rc)
			r->rc = bo_errf(r->err, -EINVAL,
			                "result JSON: '%s' missing or not a number", key);
		return 0;
	}
	return v->num;
}

static bool jbool(struct jread *r, const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);
	if (!v || v->type != J_BOOL) {
		if (!r->rc)
			r->rc = bo_errf(r->err, -EINVAL,
			                "result JSON: '%s' missing or not a boolean", key);
		return false;
	}
	return v->b;
}

static void jstrcpy(struct jread *r, const struct jv *o, const char *key, char *dst, size_t len)
{
	const struct jv *v = jget(o, key);
	if (!v || v->type != J_STR) {
		if (!r->rc)
			r->rc = bo_errf(r->err, -EINVAL,
			                "result JSON: '%s' missing or not a string", key);
		return;
	}
	snprintf(dst, len, "%s", v->str);
}

static unsigned jinvs(struct jread *r, const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);
	unsigned m = 0;
	if (!v || v->type != J_ARR) {
		if (!r->rc)
			r->rc = bo_errf(r->err, -EINVAL, "result JSON: '%s' missing or not a list",
			                key);
		return 0;
	}
	for (size_t i = 0; i < v->n; i++) {
		int k = -1;
		for (int j = 0; j < CRASH_INV_N; j++)
			if (v->items[i].type == J_STR &&
			    strcmp(v->items[i].str, crash_inv_name((enum crash_inv)j)) == 0)
				k = j;
		if (k < 0 && !r->rc)
			r->rc =
			    bo_errf(r->err, -EINVAL, "result JSON: unknown invariant in '%s'", key);
		if (k >= 0)
			m |= 1u << k;
	}
	return m;
}

static void jcounts(struct jread *r, const struct jv *o, const char *key, uint64_t *out)
{
	const struct jv *v = jget(o, key);
	if (!v || v->type != J_OBJ) {
		if (!r->rc)
			r->rc = bo_errf(r->err, -EINVAL, "result JSON: '%s' missing", key);
		return;
	}
	for (int i = 0; i < CRASH_INV_N; i++)
		out[i] = ju64(r, v, crash_inv_name((enum crash_inv)i));
}

int crash_result_read_json(const char *text, size_t len, struct crash_result **out,
                           struct bo_err *err)
{
	*out = NULL;
	struct jp p = {text, text + len, text, err, 0};
	struct jv root = {0};
	int rc = jval(&p, &root);
	if (rc == 0) {
		ws(&p);
		if (p.s != p.end)
			rc = bo_errf(err, -EINVAL, "result JSON: trailing bytes after the object");
	}
	if (rc == 0 && (root.type != J_OBJ || !jget(&root, "blackout_explore")))
		rc = bo_errf(err, -EINVAL, "not a blackout explore result (no 'blackout_explore')");
	struct crash_result *r = rc ? NULL : calloc(1, sizeof(*r));
	if (rc == 0 && !r)
		rc = -ENOMEM;
	if (rc) {
		jv_free(&root);
		return rc;
	}
	struct jread jr = {err, 0};
	jstrcpy(&jr, &root, "stack", r->stack, sizeof(r->stack));
	jstrcpy(&jr, &root, "fs", r->fs, sizeof(r->fs));
	jstrcpy(&jr, &root, "workload", r->workload, sizeof(r->workload));
	r->seed = ju64(&jr, &root, "seed");
	r->max_states = ju64(&jr, &root, "max_states");
	r->shard = (unsigned)ju64(&jr, &root, "shard");
	r->nshards = (unsigned)ju64(&jr, &root, "nshards");
	r->cuts = ju64(&jr, &root, "cuts");
	r->space = ju64(&jr, &root, "space");
	r->space_log2 = jnum(&jr, &root, "space_log2");
	r->exhaustive = jbool(&jr, &root, "exhaustive");
	r->built = ju64(&jr, &root, "built");
	r->coverage = jnum(&jr, &root, "coverage");
	r->judged = ju64(&jr, &root, "judged");
	r->duplicates = ju64(&jr, &root, "duplicates");
	r->ok = ju64(&jr, &root, "ok");
	r->silent = ju64(&jr, &root, "silent");
	r->detected = ju64(&jr, &root, "detected");
	r->e2fsck_runs = ju64(&jr, &root, "e2fsck_runs");
	r->e2fsck_disagree = ju64(&jr, &root, "e2fsck_disagree");
	jcounts(&jr, &root, "violations", r->viol);
	jcounts(&jr, &root, "allowed", r->allowed);
	const struct jv *fl = jget(&root, "failures");
	if (!jr.rc && (!fl || fl->type != J_ARR))
		jr.rc = bo_errf(err, -EINVAL, "result JSON: 'failures' missing");
	if (!jr.rc && fl->n && !(r->fail = calloc(fl->n, sizeof(*r->fail))))
		jr.rc = -ENOMEM;
	for (size_t i = 0; !jr.rc && i < fl->n; i++) {
		const struct jv *f = &fl->items[i];
		struct crash_state *s = &r->fail[r->nfail++];
		if (f->type != J_OBJ) {
			jr.rc =
			    bo_errf(err, -EINVAL, "result JSON: failure %zu is not an object", i);
			break;
		}
		jstrcpy(&jr, f, "id", s->id, sizeof(s->id));
		s->pos = (size_t)ju64(&jr, f, "pos");
		s->inflight = jbool(&jr, f, "inflight");
		s->completed = (size_t)ju64(&jr, f, "completed");
		s->broken = jinvs(&jr, f, "broken");
		s->allowed = jinvs(&jr, f, "allowed");
		s->detected = jbool(&jr, f, "detected");
		jstrcpy(&jr, f, "detected_by", s->detected_by, sizeof(s->detected_by));
		s->e2fsck_agrees = (int)jnum(&jr, f, "e2fsck_agrees");
		jstrcpy(&jr, f, "detail", s->detail, sizeof(s->detail));
	}
	jv_free(&root);
	if (jr.rc) {
		crash_result_free(r);
		return jr.rc;
	}
	*out = r;
	return 0;
}

/* Enumeration order of a state: its cut (position, then during-the-write), then
 * its ordinal within the cut, read back from the id. */
static int cmp_state(const void *a, const void *b)
{
	const struct crash_state *x = a, *y = b;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->inflight != y->inflight)
		return x->inflight ? 1 : -1;
	const char *kx = strrchr(x->id, '-'), *ky = strrchr(y->id, '-');
	unsigned long long ix = kx ? strtoull(kx + 1 + (kx[1] == 's'), NULL, 10) : 0;
	unsigned long long iy = ky ? strtoull(ky + 1 + (ky[1] == 's'), NULL, 10) : 0;
	return ix < iy ? -1 : ix > iy;
}

int crash_result_merge(struct crash_result *const *parts, size_t n, struct crash_result **out,
                       struct bo_err *err)
{
	*out = NULL;
	if (n == 0)
		return bo_errf(err, -EINVAL, "nothing to merge");
	const struct crash_result *a = parts[0];
	unsigned nshards = a->nshards;
	uint64_t seen_mask = 0;
	size_t nfail = 0;
	for (size_t i = 0; i < n; i++) {
		const struct crash_result *b = parts[i];
		if (strcmp(a->stack, b->stack) || strcmp(a->fs, b->fs) ||
		    strcmp(a->workload, b->workload) || a->seed != b->seed ||
		    a->max_states != b->max_states || a->built != b->built || a->cuts != b->cuts)
			return bo_errf(
			    err, -EINVAL,
			    "part %zu is another exploration (stack, fs, workload, seed, "
			    "budget and states must match)",
			    i + 1);
		if (b->nshards != nshards || b->shard >= nshards || nshards > 64)
			return bo_errf(err, -EINVAL, "part %zu: shard %u/%u does not fit %u shards",
			               i + 1, b->shard, b->nshards, nshards);
		if (seen_mask & (1ull << b->shard))
			return bo_errf(err, -EINVAL, "shard %u given twice", b->shard);
		seen_mask |= 1ull << b->shard;
		nfail += b->nfail;
	}
	if (seen_mask != (nshards == 64 ? ~0ull : (1ull << nshards) - 1))
		return bo_errf(err, -EINVAL, "shards missing: %zu of %u given", n, nshards);
	struct crash_result *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*m = *a;
	m->fail = NULL;
	m->io = NULL;
	m->damage = NULL;
	m->ndamage = 0;
	m->nio = 0;
	m->nfail = 0;
	m->shard = 0;
	m->nshards = 1;
	m->judged = m->duplicates = m->ok = m->silent = m->detected = 0;
	m->e2fsck_runs = m->e2fsck_disagree = 0;
	memset(m->viol, 0, sizeof(m->viol));
	memset(m->allowed, 0, sizeof(m->allowed));
	if (nfail && !(m->fail = calloc(nfail, sizeof(*m->fail)))) {
		free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct crash_result *b = parts[i];
		m->judged += b->judged;
		m->duplicates += b->duplicates;
		m->ok += b->ok;
		m->silent += b->silent;
		m->detected += b->detected;
		m->e2fsck_runs += b->e2fsck_runs;
		m->e2fsck_disagree += b->e2fsck_disagree;
		for (int k = 0; k < CRASH_INV_N; k++) {
			m->viol[k] += b->viol[k];
			m->allowed[k] += b->allowed[k];
		}
		if (b->nfail)
			memcpy(m->fail + m->nfail, b->fail, b->nfail * sizeof(*b->fail));
		m->nfail += b->nfail;
	}
	if (m->nfail)
		qsort(m->fail, m->nfail, sizeof(*m->fail), cmp_state);
	m->t_record = m->t_construct = m->t_recover = m->t_oracle = m->t_fsck = m->t_total = 0;
	*out = m;
	return 0;
}

int crash_result_load(const char *path, struct crash_result **out, struct bo_err *err)
{
	*out = NULL;
	char *buf;
	size_t n;
	int rc = bo_read_file(path, 1u << 30, &buf, &n, err);
	if (rc)
		return rc;
	struct bo_err perr = {{0}};
	rc = crash_result_read_json(buf, n, out, &perr);
	free(buf);
	if (rc)
		return bo_errf(err, rc, "%s: %s", path, perr.msg);
	return 0;
}

void crash_result_free(struct crash_result *r)
{
	if (!r)
		return;
	free(r->fail);
	free(r->io);
	free(r->damage);
	free(r);
}
