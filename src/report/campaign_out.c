// SPDX-License-Identifier: GPL-2.0-or-later
/* campaign_out.c — a campaign's part (units.txt: what the campaign is, which shard, one
 * record per unit), its merge, and the one writer of the report of distinct failures
 * (text and JSON, docs/gen.md and docs/json.md) that a run and a merge share. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/campaign.h"
#include "blackout/json.h"
#include "blackout/util.h"

#define PART_MAGIC "blackout campaign part 2"
#define MAX_TOTAL  (1ull << 40)

static const char *const outcome_tok[] = {"ran", "unsupported", "error"};

void campaign_part_free(struct campaign_part *p)
{
	if (p)
		free(p->u);
	free(p);
}

int campaign_part_write(const struct campaign_part *p, FILE *f)
{
	fprintf(f,
	        PART_MAGIC "\nwhat\t%s\nfs\t%s\nkernels\t%s\nstack\t%s\nmax-states\t%" PRIu64
	                   "\nprune\t%s\nunits\t%" PRIu64 "\nshard\t%u/%u\n",
	        p->what, p->fs, p->kernels, p->stack, p->max_states, p->prune ? "yes" : "no",
	        p->total, p->shard, p->nshards);
	for (size_t i = 0; i < p->n; i++) {
		const struct campaign_unit *u = &p->u[i];
		fprintf(f,
		        "unit\t%" PRIu64 "\t%s\t%s\t%s\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
		        "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\n",
		        u->idx, u->workload, u->fs, u->kernel, outcome_tok[u->outcome], u->judged,
		        u->ok, u->failing, u->pruned, u->refused, u->ops, u->msg);
		for (unsigned h = 0; h < u->nhit; h++)
			fprintf(f, "hit\t%s\t%" PRIu64 "\t%s\t%s\n",
			        crash_inv_name((enum crash_inv)u->hit[h].inv), u->hit[h].states,
			        u->hit[h].state, u->hit[h].rebuild);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- reading a part (untrusted: a file another machine wrote) --------------------- */

#define MAX_FIELDS 13
struct rd {
	struct bo_err *err;
	unsigned line;
	char *f[MAX_FIELDS];
	int nf;
};

static int bad(struct rd *r, const char *what)
{
	return bo_errf(r->err, -EINVAL, "campaign part, line %u: %s", r->line, what);
}

/* Field i into dst (len bytes, printable ASCII: what the writer writes). */
static int text(struct rd *r, int i, char *dst, size_t len, const char *name)
{
	if (strlen(r->f[i]) >= len)
		return bo_errf(r->err, -EINVAL, "campaign part, line %u: %s is too long", r->line,
		               name);
	for (const char *c = r->f[i]; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			return bo_errf(
			    r->err, -EINVAL,
			    "campaign part, line %u: %s holds a byte that is not printable "
			    "ASCII",
			    r->line, name);
	memcpy(dst, r->f[i], strlen(r->f[i]) + 1);
	return 0;
}

static int num(struct rd *r, int i, uint64_t max, uint64_t *v, const char *name)
{
	struct bo_err e = {{0}};
	if (bo_parse_num(name, r->f[i], 0, 0, max, v, &e))
		return bo_errf(r->err, -EINVAL, "campaign part, line %u: %s", r->line, e.msg);
	return 0;
}

/* The next line split at tabs (in place), its first field checked against key. */
static int next(struct rd *r, char **pos, char *end, const char *key, int nf)
{
	if (*pos >= end)
		return bo_errf(r->err, -EINVAL, "campaign part: ends before '%s'", key);
	char *nl = memchr(*pos, '\n', (size_t)(end - *pos));
	if (!nl)
		return bo_errf(r->err, -EINVAL, "campaign part, line %u: no newline at its end",
		               r->line + 1);
	*nl = 0;
	r->line++;
	r->nf = 0;
	for (char *s = *pos;;) {
		if (r->nf == MAX_FIELDS)
			return bad(r, "too many fields");
		r->f[r->nf++] = s;
		char *t = strchr(s, '\t');
		if (!t)
			break;
		*t = 0;
		s = t + 1;
	}
	*pos = nl + 1;
	if (strcmp(r->f[0], key))
		return bo_errf(r->err, -EINVAL, "campaign part, line %u: expected '%s'", r->line,
		               key);
	if (r->nf != nf)
		return bo_errf(r->err, -EINVAL,
		               "campaign part, line %u: '%s' takes %d fields, not %d", r->line, key,
		               nf - 1, r->nf - 1);
	return 0;
}

static int read_unit(struct rd *r, const struct campaign_part *p, struct campaign_unit *u)
{
	uint64_t v;
	int rc;
	if ((rc = num(r, 1, p->total - 1, &u->idx, "unit index")) ||
	    (rc = text(r, 2, u->workload, sizeof u->workload, "workload")) ||
	    (rc = text(r, 3, u->fs, sizeof u->fs, "fs")) ||
	    (rc = text(r, 4, u->kernel, sizeof u->kernel, "kernel")))
		return rc;
	for (v = 0; v < CAMPAIGN_OUTCOME_N && strcmp(r->f[5], outcome_tok[v]); v++)
		;
	if (v == CAMPAIGN_OUTCOME_N)
		return bad(r, "the outcome is not ran, unsupported or error");
	u->outcome = (enum campaign_outcome)v;
	if ((rc = num(r, 6, UINT64_MAX, &u->judged, "judged")) ||
	    (rc = num(r, 7, u->judged, &u->ok, "ok")) ||
	    (rc = num(r, 8, u->judged - u->ok, &u->failing, "failing")) ||
	    (rc = num(r, 9, UINT64_MAX, &u->pruned, "pruned")) ||
	    (rc = num(r, 10, CRASH_WL_MAX_STEPS, &u->refused, "refused")) ||
	    (rc = text(r, 11, u->ops, sizeof u->ops, "ops")) ||
	    (rc = text(r, 12, u->msg, sizeof u->msg, "message")))
		return rc;
	if (!u->workload[0])
		return bad(r, "an empty workload name");
	static const char *const fss[] = {CAMPAIGN_MODEL, "ext4", "ext3", "xfs", "btrfs"};
	bool fs_ok = false, model = !strcmp(u->fs, CAMPAIGN_MODEL);
	for (size_t i = 0; i < sizeof fss / sizeof fss[0]; i++)
		fs_ok |= !strcmp(u->fs, fss[i]);
	if (!fs_ok)
		return bad(r, "the fs is not model, ext4, ext3, xfs or btrfs");
	if (model ? strcmp(u->kernel, "-") : strcmp(u->kernel, "6.1") && strcmp(u->kernel, "6.12"))
		return bad(r, "the kernel is not 6.1 or 6.12 (- for the model)");
	if (u->idx % p->nshards != p->shard)
		return bad(r, "a unit of another shard");
	/* only the real kernel's units judge through guests, and only with prune */
	if (u->pruned && (!p->prune || model || u->outcome != CAMPAIGN_RAN))
		return bad(r, "states pruned in a unit that prunes none");
	return 0;
}

static int read_hit(struct rd *r, struct campaign_unit *u)
{
	struct campaign_hit *h = &u->hit[u->nhit];
	unsigned inv;
	int rc;
	for (inv = 0; inv < CRASH_INV_N && strcmp(r->f[1], crash_inv_name(inv)); inv++)
		;
	if (inv == CRASH_INV_N)
		return bad(r, "not an invariant's name");
	if (u->nhit && u->hit[u->nhit - 1].inv >= inv)
		return bad(r, "hits out of invariant order, or repeated");
	h->inv = inv;
	if ((rc = num(r, 2, u->failing, &h->states, "states")) ||
	    (rc = text(r, 3, h->state, sizeof h->state, "state")) ||
	    (rc = text(r, 4, h->rebuild, sizeof h->rebuild, "rebuild line")))
		return rc;
	if (!h->states || !h->state[0])
		return bad(r, "a hit without states");
	u->nhit++;
	return 0;
}

static int read_all(struct rd *r, char *pos, char *end, struct campaign_part *p)
{
	uint64_t v, w;
	int rc;
	if ((rc = next(r, &pos, end, PART_MAGIC, 1)) || (rc = next(r, &pos, end, "what", 2)) ||
	    (rc = text(r, 1, p->what, sizeof p->what, "what")) ||
	    (rc = next(r, &pos, end, "fs", 2)) || (rc = text(r, 1, p->fs, sizeof p->fs, "fs")) ||
	    (rc = next(r, &pos, end, "kernels", 2)) ||
	    (rc = text(r, 1, p->kernels, sizeof p->kernels, "kernels")) ||
	    (rc = next(r, &pos, end, "stack", 2)) ||
	    (rc = text(r, 1, p->stack, sizeof p->stack, "stack")) ||
	    (rc = next(r, &pos, end, "max-states", 2)) ||
	    (rc = num(r, 1, UINT64_MAX, &p->max_states, "max-states")) ||
	    (rc = next(r, &pos, end, "prune", 2)))
		return rc;
	if (strcmp(r->f[1], "yes") && strcmp(r->f[1], "no"))
		return bad(r, "prune is yes or no");
	p->prune = !strcmp(r->f[1], "yes");
	if ((rc = next(r, &pos, end, "units", 2)) ||
	    (rc = num(r, 1, MAX_TOTAL, &p->total, "units")) ||
	    (rc = next(r, &pos, end, "shard", 2)))
		return rc;
	char *slash = strchr(r->f[1], '/');
	if (!slash)
		return bad(r, "shard is I/N");
	*slash = 0;
	if ((rc = num(r, 1, 99999, &v, "shard")))
		return rc;
	r->f[1] = slash + 1;
	if ((rc = num(r, 1, 100000, &w, "shards")))
		return rc;
	if (v >= w)
		return bad(r, "shard is I/N with 0 <= I < N");
	p->shard = (unsigned)v;
	p->nshards = (unsigned)w;
	while (pos < end) {
		bool hit = !strncmp(pos, "hit\t", 4);
		if ((rc = next(r, &pos, end, hit ? "hit" : "unit", hit ? 5 : 13)))
			return rc;
		if (hit) {
			if (!p->n)
				return bad(r, "a hit before any unit");
			if (p->u[p->n - 1].nhit == CRASH_INV_N)
				return bad(r, "more hits than invariants");
			if ((rc = read_hit(r, &p->u[p->n - 1])))
				return rc;
			continue;
		}
		struct campaign_unit *u = bo_grow(p->u, &p->cap, p->n + 1, sizeof(*u), 64);
		if (!u)
			return -ENOMEM;
		p->u = u;
		u = &p->u[p->n];
		memset(u, 0, sizeof(*u));
		if ((rc = read_unit(r, p, u)))
			return rc;
		if (p->n && p->u[p->n - 1].idx >= u->idx)
			return bad(r, "units out of order, or repeated");
		p->n++;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct campaign_unit *u = &p->u[i];
		uint64_t most = 0;
		for (unsigned h = 0; h < u->nhit; h++)
			most = u->hit[h].states > most ? u->hit[h].states : most;
		if ((u->failing && !u->nhit) || most > u->failing || (u->outcome && u->judged))
			return bo_errf(r->err, -EINVAL,
			               "campaign part: unit %" PRIu64 "'s counts disagree", u->idx);
	}
	return 0;
}

int campaign_part_read(const char *data, size_t len, struct campaign_part **out, struct bo_err *err)
{
	struct campaign_part *p = calloc(1, sizeof(*p));
	char *buf = malloc(len + 1);
	if (!p || !buf) {
		free(p);
		free(buf);
		return bo_errf(err, -ENOMEM, "out of memory");
	}
	memcpy(buf, data, len);
	buf[len] = 0;
	struct rd r = {.err = err};
	int rc = memchr(data, 0, len) ? bo_errf(err, -EINVAL, "campaign part: holds a NUL byte")
	                              : read_all(&r, buf, buf + len, p);
	free(buf);
	if (rc) {
		if (rc == -ENOMEM && !err->msg[0])
			bo_errf(err, rc, "out of memory");
		campaign_part_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* ---- merge ---------------------------------------------------------------------- */

static int cmp_unit(const void *a, const void *b)
{
	const struct campaign_unit *x = a, *y = b;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int campaign_merge(struct campaign_part *const *parts, size_t n, struct campaign_part **out,
                   struct bo_err *err)
{
	if (!n)
		return bo_errf(err, -EINVAL, "--merge: no parts");
	const struct campaign_part *a = parts[0];
	size_t units = 0;
	for (size_t i = 0; i < n; i++) {
		const struct campaign_part *b = parts[i];
		if (strcmp(a->what, b->what) || strcmp(a->fs, b->fs) ||
		    strcmp(a->kernels, b->kernels) || strcmp(a->stack, b->stack) ||
		    a->max_states != b->max_states || a->prune != b->prune ||
		    a->total != b->total || a->nshards != b->nshards)
			return bo_errf(err, -EINVAL, "--merge: part %zu is of another campaign",
			               i + 1);
		for (size_t j = 0; j < i; j++)
			if (parts[j]->shard == b->shard)
				return bo_errf(err, -EINVAL, "--merge: shard %u/%u given twice",
				               b->shard, b->nshards);
		units += b->n;
	}
	if (n != a->nshards)
		return bo_errf(err, -EINVAL, "--merge: %zu parts of %u shards: a shard is missing",
		               n, a->nshards);
	if (units != a->total)
		return bo_errf(err, -EINVAL,
		               "--merge: %zu units of %" PRIu64 ": the parts are incomplete", units,
		               a->total);
	struct campaign_part *p = calloc(1, sizeof(*p));
	if (!p || !(p->u = calloc(units ? units : 1, sizeof(*p->u)))) {
		free(p);
		return bo_errf(err, -ENOMEM, "out of memory");
	}
	*p = (struct campaign_part){.u = p->u, .cap = units, .n = units};
	memcpy(p->what, a->what, sizeof p->what);
	memcpy(p->fs, a->fs, sizeof p->fs);
	memcpy(p->kernels, a->kernels, sizeof p->kernels);
	memcpy(p->stack, a->stack, sizeof p->stack);
	p->max_states = a->max_states;
	p->prune = a->prune;
	p->total = a->total;
	p->nshards = 1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < parts[i]->n; j++)
			p->u[k++] = parts[i]->u[j];
	qsort(p->u, p->n, sizeof(*p->u), cmp_unit);
	for (size_t i = 0; i < p->n; i++)
		if (p->u[i].idx != i) {
			campaign_part_free(p);
			return bo_errf(err, -EINVAL, "--merge: unit %zu is missing", i);
		}
	*out = p;
	return 0;
}

/* ---- the report ----------------------------------------------------------------- */

/* A distinct failure: filesystem, kernel, invariant and the workload's operations. */
struct sig {
	const struct campaign_unit *first;
	const struct campaign_hit *hit;
	uint64_t units, states;
};

/* One (fs, kernel) column's counts. */
struct col {
	const char *fs, *kernel;
	uint64_t units, out[CAMPAIGN_OUTCOME_N], judged, pruned, failing, failing_units, sigs;
	uint64_t refused; /* units with a step the kernel refused */
};

struct tally {
	struct sig *s;
	size_t ns, cap;
	struct col c[CAMPAIGN_MAX_FS * CAMPAIGN_MAX_KERNELS];
	size_t nc;
	uint64_t out[CAMPAIGN_OUTCOME_N], judged, pruned, failing, refused;
};

static int tally(const struct campaign_part *p, struct tally *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < p->n; i++) {
		const struct campaign_unit *u = &p->u[i];
		struct col *c = NULL;
		for (size_t j = 0; j < t->nc && !c; j++)
			if (!strcmp(t->c[j].fs, u->fs) && !strcmp(t->c[j].kernel, u->kernel))
				c = &t->c[j];
		if (!c) {
			if (t->nc == sizeof t->c / sizeof t->c[0])
				return -EINVAL;
			c = &t->c[t->nc++];
			c->fs = u->fs;
			c->kernel = u->kernel;
		}
		c->units++;
		c->out[u->outcome]++;
		c->judged += u->judged;
		c->pruned += u->pruned;
		c->failing += u->failing;
		c->failing_units += u->failing > 0;
		c->refused += u->refused > 0;
		t->refused += u->refused > 0;
		t->out[u->outcome]++;
		t->judged += u->judged;
		t->pruned += u->pruned;
		t->failing += u->failing;
		for (unsigned h = 0; h < u->nhit; h++) {
			struct sig *s = NULL;
			for (size_t j = t->ns; j-- > 0 && !s;)
				if (t->s[j].hit->inv == u->hit[h].inv &&
				    !strcmp(t->s[j].first->fs, u->fs) &&
				    !strcmp(t->s[j].first->kernel, u->kernel) &&
				    !strcmp(t->s[j].first->ops, u->ops))
					s = &t->s[j];
			if (!s) {
				struct sig *v = bo_grow(t->s, &t->cap, t->ns + 1, sizeof(*v), 64);
				if (!v)
					return -ENOMEM;
				t->s = v;
				s = &t->s[t->ns++];
				*s = (struct sig){.first = u, .hit = &u->hit[h]};
				c->sigs++;
			}
			s->units++;
			s->states += u->hit[h].states;
		}
	}
	return 0;
}

static void what_line(const struct campaign_part *p, FILE *f)
{
	fprintf(
	    f, "campaign: %s on %s (kernels %s); stack: %s; at most %" PRIu64 " states a unit%s\n",
	    p->what, p->fs, p->kernels, p->stack[0] ? p->stack : "each filesystem's default",
	    p->max_states,
	    p->prune
	        ? "; real-kernel ext3/ext4 states equal to a judged one after journal replay pruned"
	        : "");
	if (p->nshards > 1)
		fprintf(f, "shard %u/%u: %zu of the %" PRIu64 " units\n", p->shard, p->nshards,
		        p->n, p->total);
}

int campaign_report_text(const struct campaign_part *p, FILE *f)
{
	struct tally t;
	int rc = tally(p, &t);
	if (rc) {
		free(t.s);
		return rc;
	}
	what_line(p, f);
	char pr[48] = "";
	if (p->prune)
		snprintf(pr, sizeof pr, " (%" PRIu64 " more pruned)", t.pruned);
	fprintf(f,
	        "units: %zu; ran %" PRIu64 ", not supported by the model %" PRIu64
	        ", errors %" PRIu64 "; %" PRIu64 " states judged%s, %" PRIu64
	        " failing; %zu distinct failures\n",
	        p->n, t.out[CAMPAIGN_RAN], t.out[CAMPAIGN_UNSUPPORTED], t.out[CAMPAIGN_ERROR],
	        t.judged, pr, t.failing, t.ns);
	for (size_t i = 0; i < t.nc; i++) {
		const struct col *c = &t.c[i];
		if (p->prune)
			snprintf(pr, sizeof pr, " (%" PRIu64 " more pruned)", c->pruned);
		fprintf(f,
		        "  %s %s: %" PRIu64 " workloads: ran %" PRIu64
		        ", not supported by the model %" PRIu64 ", errors %" PRIu64 "; %" PRIu64
		        " with a step the kernel refused; %" PRIu64 " states judged%s, %" PRIu64
		        " failing in %" PRIu64 " workloads; %" PRIu64 " distinct failures\n",
		        c->fs, c->kernel, c->units, c->out[CAMPAIGN_RAN],
		        c->out[CAMPAIGN_UNSUPPORTED], c->out[CAMPAIGN_ERROR], c->refused, c->judged,
		        pr, c->failing, c->failing_units, c->sigs);
	}
	if (t.ns)
		fprintf(f, "distinct failures (filesystem, kernel, invariant, operations); rebuild "
		           "lines run in the campaign's directory:\n");
	for (size_t i = 0; i < t.ns; i++) {
		const struct sig *s = &t.s[i];
		fprintf(f,
		        "  %zu. %s %s %s [%s]: %" PRIu64 " workloads, %" PRIu64
		        " states; first %s, state %s\n     %s\n",
		        i + 1, s->first->fs, s->first->kernel, crash_inv_name(s->hit->inv),
		        s->first->ops, s->units, s->states, s->first->workload, s->hit->state,
		        s->hit->rebuild);
	}
	for (size_t i = 0; i < p->n; i++)
		if (p->u[i].outcome == CAMPAIGN_ERROR)
			fprintf(f, "error: %s on %s %s: %s\n", p->u[i].workload, p->u[i].fs,
			        p->u[i].kernel, p->u[i].msg);
	free(t.s);
	return ferror(f) ? -EIO : 0;
}

static json_t *ops_array(const char *ops)
{
	json_t *a = json_array();
	for (const char *s = ops; a && *s;) {
		size_t l = strcspn(s, ",");
		json_array_append_new(a, json_stringn(s, l));
		s += l + (s[l] == ',');
	}
	return a;
}

int campaign_report_json(const struct campaign_part *p, FILE *f)
{
	struct tally t;
	int rc = tally(p, &t);
	if (rc) {
		free(t.s);
		return rc;
	}
	json_t *cols = json_array(), *sigs = json_array(), *errs = json_array();
	for (size_t i = 0; i < t.nc; i++) {
		const struct col *c = &t.c[i];
		json_array_append_new(
		    cols, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		                    "fs", c->fs, "kernel", c->kernel, "workloads",
		                    (json_int_t)c->units, "ran", (json_int_t)c->out[CAMPAIGN_RAN],
		                    "not_supported", (json_int_t)c->out[CAMPAIGN_UNSUPPORTED],
		                    "errors", (json_int_t)c->out[CAMPAIGN_ERROR], "kernel_refused",
		                    (json_int_t)c->refused, "states_judged", (json_int_t)c->judged,
		                    "states_pruned", (json_int_t)c->pruned, "states_failing",
		                    (json_int_t)c->failing, "workloads_failing",
		                    (json_int_t)c->failing_units, "distinct_failures",
		                    (json_int_t)c->sigs));
	}
	for (size_t i = 0; i < t.ns; i++) {
		const struct sig *s = &t.s[i];
		json_array_append_new(
		    sigs,
		    json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:s, s:o}", "fs", s->first->fs,
		              "kernel", s->first->kernel, "invariant", crash_inv_name(s->hit->inv),
		              "ops", ops_array(s->first->ops), "workloads", (json_int_t)s->units,
		              "states", (json_int_t)s->states, "first_workload", s->first->workload,
		              "state", s->hit->state, "rebuild", bo_json_text(s->hit->rebuild)));
	}
	for (size_t i = 0; i < p->n; i++)
		if (p->u[i].outcome == CAMPAIGN_ERROR)
			json_array_append_new(errs, json_pack("{s:s, s:s, s:s, s:o}", "workload",
			                                      p->u[i].workload, "fs", p->u[i].fs,
			                                      "kernel", p->u[i].kernel, "message",
			                                      bo_json_text(p->u[i].msg)));
	json_t *v = json_pack(
	    "{s:s, s:s, s:s, s:o, s:I, s:b, s:I, s:i, s:i, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I}, s:o, s:o, s:o}",
	    "workloads", p->what, "fs", p->fs, "kernels", p->kernels, "stack",
	    p->stack[0] ? bo_json_text(p->stack) : json_null(), "max_states",
	    (json_int_t)p->max_states, "prune", (int)p->prune, "units", (json_int_t)p->total,
	    "shard", (int)p->shard, "shards", (int)p->nshards, "totals", "workloads",
	    (json_int_t)p->n, "ran", (json_int_t)t.out[CAMPAIGN_RAN], "not_supported",
	    (json_int_t)t.out[CAMPAIGN_UNSUPPORTED], "errors", (json_int_t)t.out[CAMPAIGN_ERROR],
	    "kernel_refused", (json_int_t)t.refused, "states_judged", (json_int_t)t.judged,
	    "states_pruned", (json_int_t)t.pruned, "states_failing", (json_int_t)t.failing,
	    "per_fs", cols, "failures", sigs, "errors", errs);
	free(t.s);
	return bo_json_write(v, f, 2);
}

static int write_file(const char *dir, const char *name, const struct campaign_part *p,
                      int (*fn)(const struct campaign_part *, FILE *), struct bo_err *err)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return bo_errf(err, -errno, "cannot write %s: %s", path, strerror(errno));
	int rc = fn(p, f);
	if (fclose(f) && !rc)
		rc = -errno;
	return rc ? bo_errf(err, rc, "cannot write %s: %s", path, strerror(-rc)) : 0;
}

int campaign_write_dir(const struct campaign_part *p, const char *dir, struct bo_err *err)
{
	int rc = bo_mkdir_p(dir);
	if (rc)
		return bo_errf(err, rc, "cannot create %s: %s", dir, strerror(-rc));
	if ((rc = write_file(dir, "units.txt", p, campaign_part_write, err)) ||
	    (rc = write_file(dir, "report.txt", p, campaign_report_text, err)) ||
	    (rc = write_file(dir, "report.json", p, campaign_report_json, err)))
		return rc;
	return 0;
}
