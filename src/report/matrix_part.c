// SPDX-License-Identifier: GPL-2.0-or-later
/* matrix_part.c — one shard's results of a matrix run (the blackout-matrix-part/1 file,
 * docs/scale.md) and their merge: every shard's explorations folded into the cells,
 * in plan order, so the merged matrix is the unsharded one (which is the one-part
 * merge). A part is read as untrusted bytes: every count, index and length is checked,
 * and a part this build would plan differently is refused. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/json.h"
#include "blackout/util.h"
#include "report/matrix_run.h"

#define PART_SCHEMA "blackout-matrix-part/1"
#define COUNT_MAX   (UINT64_C(1) << 53) /* exact in a JSON number everywhere */
#define MAX_SHARDS  100000

void matrix_part_free(struct matrix_part *p)
{
	if (!p)
		return;
	struct matrix_plan *pl = matrix_plan_of(&p->m);
	for (size_t k = 0; pl && p->res && k < pl->ntask; k++)
		matrix_example_free(p->res[k].example);
	free(p->res);
	matrix_free_cells(&p->m);
	free(p);
}

void matrix_part_describe(const struct matrix_part *p, char *buf, size_t len)
{
	const struct matrix_plan *pl = matrix_plan_of(&p->m);
	size_t mine = 0;
	for (size_t k = 0; k < pl->ntask; k++)
		mine += matrix_task_shard(&p->m, k, p->nshards) == p->shard;
	snprintf(buf, len, "shard %u/%u: %zu of %zu explorations, %.0f s", p->shard, p->nshards,
	         mine, pl->ntask, p->seconds);
}

/* ---- writing ------------------------------------------------------------------- */

static json_t *example_json(const struct matrix_example *e)
{
	json_t *ops = json_array(), *dmg = json_array();
	for (size_t i = 0; ops && i < e->nops; i++) {
		const struct matrix_op *o = &e->ops[i];
		json_array_append_new(ops, json_pack("{s:o,s:I,s:I,s:b,s:o}", "op",
		                                     bo_json_text(o->op), "lba", (json_int_t)o->lba,
		                                     "count", (json_int_t)o->count, "fua", o->fua,
		                                     "mark", bo_json_text(o->mark)));
	}
	for (size_t i = 0; dmg && i < e->ndamage; i++) {
		const struct matrix_damage *d = &e->damage[i];
		json_array_append_new(
		    dmg, json_pack("{s:I,s:o,s:I,s:o}", "block", (json_int_t)d->block, "what",
		                   bo_json_text(d->what), "ino", (json_int_t)d->ino, "owner",
		                   bo_json_text(d->owner)));
	}
	return json_pack("{s:o,s:o,s:o,s:o,s:b,s:I,s:b,s:o,s:o}", "workload",
	                 bo_json_text(e->workload), "state", bo_json_text(e->state_id), "rebuild",
	                 bo_json_text(e->rebuild), "broken", bo_json_text(e->broken), "silent",
	                 e->silent, "cut", (json_int_t)e->cut, "cut_inflight", e->cut_inflight,
	                 "ops", ops, "damage", dmg);
}

static json_t *result_json(size_t k, const struct matrix_tres *r)
{
	json_t *viol = json_array();
	for (int i = 0; viol && i < MI_N; i++)
		json_array_append_new(viol, json_integer((json_int_t)r->viol[i]));
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:b,s:f,s:f}", "task", (json_int_t)k,
	                      "states", (json_int_t)r->states, "ok", (json_int_t)r->ok, "silent",
	                      (json_int_t)r->silent, "detected", (json_int_t)r->detected, "allowed",
	                      (json_int_t)r->allowed, "violations", viol, "exhaustive",
	                      r->exhaustive, "coverage", r->coverage, "seconds", r->seconds);
	if (o) {
		json_object_set_new(o, "silent_lost", json_integer((json_int_t)r->silent_lost));
		json_object_set_new(o, "write_errors", json_integer((json_int_t)r->write_errors));
	}
	if (o && r->kernel[0])
		json_object_set_new(o, "kernel", bo_json_text(r->kernel));
	if (o && r->rc)
		json_object_set_new(o, "error", bo_json_text(r->err));
	if (o)
		json_object_set_new(o, "example",
		                    r->example ? example_json(r->example) : json_null());
	return o;
}

int matrix_part_write(const struct matrix_part *p, FILE *f)
{
	const struct matrix_plan *pl = matrix_plan_of(&p->m);
	json_t *res = json_array();
	for (size_t k = 0; res && k < pl->ntask; k++)
		if (matrix_task_shard(&p->m, k, p->nshards) == p->shard)
			json_array_append_new(res, result_json(k, &p->res[k]));
	return bo_json_write(json_pack("{s:s,s:I,s:I,s:o,s:f,s:o}", "schema", PART_SCHEMA, "shard",
	                               (json_int_t)p->shard, "nshards", (json_int_t)p->nshards,
	                               "plan", (json_t *)matrix_plan_json(&p->m), "seconds",
	                               p->seconds, "results", res),
	                     f, 0);
}

/* ---- reading ------------------------------------------------------------------- */

/* A list of ids back into the comma-separated option the plan was made from. */
static void read_list(struct bo_jr *jr, const json_t *o, const char *key, char *buf, size_t len)
{
	json_t *a = bo_jr_get(jr, o, key, JSON_ARRAY);
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; a && i < json_array_size(a); i++) {
		const json_t *v = json_array_get(a, i);
		const char *s = json_is_string(v) ? json_string_value(v) : NULL;
		if (!s || !*s || strchr(s, ',') || n + strlen(s) + 2 > len) {
			bo_jr_fail(jr, key, "item %zu is not an id", i);
			return;
		}
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", s);
	}
	if (a && !n)
		bo_jr_fail(jr, key, "is empty");
}

/* The plan a part names, made again by this build; refused when it plans otherwise. */
static int read_plan(const json_t *root, struct matrix *m, struct bo_err *err)
{
	struct bo_jr jr = {.err = err, .what = "matrix part", .where = "plan"};
	json_t *pj = bo_jr_get(&jr, root, "plan", JSON_OBJECT);
	struct matrix_run_opts o = {0};
	char rows[2048], cols[1024], wls[4096], vwls[4096] = "";
	json_t *mode = bo_jr_get(&jr, pj, "mode", JSON_STRING);
	if (mode && strcmp(json_string_value(mode), "quick") &&
	    strcmp(json_string_value(mode), "full"))
		bo_jr_fail(&jr, "mode", "is neither quick nor full");
	o.full = mode && strcmp(json_string_value(mode), "full") == 0;
	o.seed = bo_jr_count(&jr, pj, "seed", INT64_MAX);
	o.max_states = bo_jr_count(&jr, pj, "max_states", COUNT_MAX);
	read_list(&jr, pj, "rows", rows, sizeof(rows));
	read_list(&jr, pj, "columns", cols, sizeof(cols));
	read_list(&jr, pj, "workloads", wls, sizeof(wls));
	json_t *vm = pj ? json_object_get(pj, "vm") : NULL;
	if (pj && !vm)
		bo_jr_fail(&jr, "vm", "is missing");
	if (vm && !json_is_null(vm)) {
		o.vm = true;
		o.vm_states = (unsigned)bo_jr_count(&jr, vm, "states", 1000000);
		read_list(&jr, vm, "workloads", vwls, sizeof(vwls));
	}
	if (jr.rc)
		return jr.rc;
	o.rows = rows, o.cols = cols, o.workloads = wls, o.vm_workloads = o.vm ? vwls : NULL;
	struct bo_err perr = {{0}};
	int rc = matrix_plan_make(&o, m, &perr);
	if (rc)
		return bo_errf(err, rc, "matrix part: this build cannot plan it: %s", perr.msg);
	json_t *mine = matrix_plan_json(m);
	bool same = mine && json_equal(mine, pj);
	json_decref(mine);
	if (!same)
		return bo_errf(err, -EPROTO,
		               "matrix part: plan: this build plans that matrix otherwise (a part "
		               "made by another version of blackout?)");
	return 0;
}

static void read_example(struct bo_jr *jr, const json_t *o, struct matrix_example *e)
{
	bo_jr_text(jr, o, "workload", e->workload, sizeof(e->workload));
	bo_jr_text(jr, o, "state", e->state_id, sizeof(e->state_id));
	bo_jr_text(jr, o, "rebuild", e->rebuild, sizeof(e->rebuild));
	bo_jr_text(jr, o, "broken", e->broken, sizeof(e->broken));
	e->silent = bo_jr_bool(jr, o, "silent");
	e->cut = (size_t)bo_jr_count(jr, o, "cut", MATRIX_EX_MAX_OPS);
	e->cut_inflight = bo_jr_bool(jr, o, "cut_inflight");
	json_t *ops = bo_jr_get(jr, o, "ops", JSON_ARRAY);
	json_t *dmg = bo_jr_get(jr, o, "damage", JSON_ARRAY);
	if (jr->rc)
		return;
	if (json_array_size(ops) > MATRIX_EX_MAX_OPS ||
	    json_array_size(dmg) > MATRIX_EX_MAX_DAMAGE) {
		bo_jr_fail(jr, "ops", "or damage: more than %d ops or %d blocks", MATRIX_EX_MAX_OPS,
		           MATRIX_EX_MAX_DAMAGE);
		return;
	}
	e->nops = json_array_size(ops);
	e->ndamage = json_array_size(dmg);
	e->ops = e->nops ? calloc(e->nops, sizeof(*e->ops)) : NULL;
	e->damage = e->ndamage ? calloc(e->ndamage, sizeof(*e->damage)) : NULL;
	if ((e->nops && !e->ops) || (e->ndamage && !e->damage)) {
		bo_jr_fail(jr, "ops", "out of memory");
		return;
	}
	for (size_t i = 0; i < e->nops && !jr->rc; i++) {
		struct matrix_op *x = &e->ops[i];
		const json_t *v = json_array_get(ops, i);
		bo_jr_text(jr, v, "op", x->op, sizeof(x->op));
		x->lba = bo_jr_count(jr, v, "lba", INT64_MAX);
		x->count = (uint32_t)bo_jr_count(jr, v, "count", UINT32_MAX);
		x->fua = bo_jr_bool(jr, v, "fua");
		bo_jr_text(jr, v, "mark", x->mark, sizeof(x->mark));
	}
	for (size_t i = 0; i < e->ndamage && !jr->rc; i++) {
		struct matrix_damage *x = &e->damage[i];
		const json_t *v = json_array_get(dmg, i);
		x->block = bo_jr_count(jr, v, "block", INT64_MAX);
		bo_jr_text(jr, v, "what", x->what, sizeof(x->what));
		x->ino = (uint32_t)bo_jr_count(jr, v, "ino", UINT32_MAX);
		bo_jr_text(jr, v, "owner", x->owner, sizeof(x->owner));
	}
	if (!jr->rc && e->nops && e->cut >= e->nops)
		bo_jr_fail(jr, "cut", "(%zu) is past the %zu ops", e->cut, e->nops);
}

/* One result; its task must be this shard's and not seen before. */
static void read_result(struct bo_jr *jr, const json_t *v, struct matrix_part *p)
{
	const struct matrix_plan *pl = matrix_plan_of(&p->m);
	uint64_t k = bo_jr_count(jr, v, "task", COUNT_MAX);
	if (jr->rc)
		return;
	if (k >= pl->ntask || matrix_task_shard(&p->m, k, p->nshards) != p->shard ||
	    p->res[k].done) {
		bo_jr_fail(jr, "task",
		           "%" PRIu64 " is not one of this shard's explorations, or "
		           "is given twice",
		           k);
		return;
	}
	struct matrix_tres *r = &p->res[k];
	r->done = true;
	r->states = bo_jr_count(jr, v, "states", COUNT_MAX);
	r->ok = bo_jr_count(jr, v, "ok", COUNT_MAX);
	r->silent = bo_jr_count(jr, v, "silent", COUNT_MAX);
	r->detected = bo_jr_count(jr, v, "detected", COUNT_MAX);
	r->allowed = bo_jr_count(jr, v, "allowed", COUNT_MAX);
	r->silent_lost = bo_jr_count(jr, v, "silent_lost", COUNT_MAX);
	r->write_errors = bo_jr_count(jr, v, "write_errors", COUNT_MAX);
	if (json_object_get(v, "kernel")) /* a real-kernel run's only */
		bo_jr_text(jr, v, "kernel", r->kernel, sizeof(r->kernel));
	json_t *viol = bo_jr_get(jr, v, "violations", JSON_ARRAY);
	if (viol && json_array_size(viol) != MI_N)
		bo_jr_fail(jr, "violations", "holds %zu counts, not %d", json_array_size(viol),
		           MI_N);
	for (size_t i = 0; !jr->rc && i < MI_N; i++) {
		const json_t *x = json_array_get(viol, i);
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    (uint64_t)json_integer_value(x) > COUNT_MAX)
			bo_jr_fail(jr, "violations", "item %zu is not a count", i);
		else
			r->viol[i] = (uint64_t)json_integer_value(x);
	}
	r->exhaustive = bo_jr_bool(jr, v, "exhaustive");
	r->coverage = bo_jr_real(jr, v, "coverage", 0, 1);
	r->seconds = bo_jr_real(jr, v, "seconds", 0, 1e9);
	if (!jr->rc && json_object_get(v, "error")) {
		r->rc = -EIO;
		bo_jr_text(jr, v, "error", r->err, sizeof(r->err));
		if (!p->m.cols[pl->tasks[k].col].vm)
			bo_jr_fail(jr, "error", "only a real-kernel exploration may have failed");
	}
	uint64_t failing = r->states - (r->ok <= r->states ? r->ok : r->states);
	if (!jr->rc && (r->ok > r->states || r->silent + r->detected != failing ||
	                r->allowed > r->ok || r->silent_lost > r->silent))
		bo_jr_fail(jr, "states",
		           "the counts do not add up (ok + failing = states, "
		           "silent + detected = failing, allowed <= ok, silent_lost <= silent)");
	for (size_t i = 0; !jr->rc && i < MI_N; i++)
		if (r->viol[i] > failing)
			bo_jr_fail(jr, "violations", "item %zu is more than the failing states", i);
	json_t *ex = json_object_get(v, "example");
	if (!jr->rc && !ex)
		bo_jr_fail(jr, "example", "is missing");
	if (jr->rc || json_is_null(ex))
		return;
	if (!json_is_object(ex) || !(r->example = calloc(1, sizeof(*r->example)))) {
		bo_jr_fail(jr, "example", "is neither null nor an object");
		return;
	}
	read_example(jr, ex, r->example);
}

int matrix_part_read(const char *text, size_t len, struct matrix_part **out, struct bo_err *err)
{
	*out = NULL;
	json_t *root;
	int rc = bo_json_parse(text, len, "matrix part", &root, err);
	if (rc)
		return rc;
	struct matrix_part *p = calloc(1, sizeof(*p));
	if (!p) {
		json_decref(root);
		return bo_errf(err, -ENOMEM, "out of memory");
	}
	struct bo_jr jr = {.err = err, .what = "matrix part"};
	json_t *schema = bo_jr_get(&jr, root, "schema", JSON_STRING);
	if (schema && strcmp(json_string_value(schema), PART_SCHEMA) != 0)
		bo_jr_fail(&jr, "schema", "is not %s (is this a matrix part?)", PART_SCHEMA);
	p->nshards = (unsigned)bo_jr_count(&jr, root, "nshards", MAX_SHARDS);
	p->shard = (unsigned)bo_jr_count(&jr, root, "shard", MAX_SHARDS);
	if (!jr.rc && (p->nshards == 0 || p->shard >= p->nshards))
		bo_jr_fail(&jr, "shard", "%u of %u is not a shard", p->shard, p->nshards);
	p->seconds = bo_jr_real(&jr, root, "seconds", 0, 1e9);
	json_t *res = bo_jr_get(&jr, root, "results", JSON_ARRAY);
	rc = jr.rc ? jr.rc : read_plan(root, &p->m, err);
	const struct matrix_plan *pl = rc ? NULL : matrix_plan_of(&p->m);
	if (pl && !(p->res = calloc(pl->ntask ? pl->ntask : 1, sizeof(*p->res))))
		rc = bo_errf(err, -ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < json_array_size(res); i++) {
		snprintf(jr.where, sizeof(jr.where), "results[%zu]", i);
		const json_t *v = json_array_get(res, i);
		if (!json_is_object(v))
			bo_jr_fail(&jr, "", "is not an object");
		else
			read_result(&jr, v, p);
		rc = jr.rc;
	}
	for (size_t k = 0; rc == 0 && k < pl->ntask; k++)
		if (matrix_task_shard(&p->m, k, p->nshards) == p->shard && !p->res[k].done)
			rc = bo_errf(err, -EPROTO,
			             "matrix part: results: exploration %zu of shard %u is missing "
			             "(a shard that did not finish?)",
			             k, p->shard);
	json_decref(root);
	if (rc) {
		matrix_part_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

static int parse_part(const char *buf, size_t n, void *out, struct bo_err *err)
{
	return matrix_part_read(buf, n, out, err);
}

int matrix_part_load(const char *path, struct matrix_part **out, struct bo_err *err)
{
	*out = NULL;
	return bo_parse_file(path, 1u << 30, parse_part, out, err);
}

/* ---- merging ------------------------------------------------------------------- */

/* A second struct matrix with the same plan (its own copy), cells empty. */
static int plan_copy(const struct matrix *src, struct matrix *dst)
{
	const struct matrix_plan *a = matrix_plan_of(src);
	struct matrix_plan *b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	*b = *a;
	size_t ncell = src->nrows * src->ncols;
	b->tasks = malloc((a->ntask ? a->ntask : 1) * sizeof(*b->tasks));
	b->deal = malloc((a->ntask ? a->ntask : 1) * sizeof(*b->deal));
	b->na = malloc(ncell * sizeof(*b->na));
	struct matrix_cell *cells = calloc(ncell, sizeof(*cells));
	if (!b->tasks || !b->deal || !b->na || !cells) {
		free(b->tasks);
		free(b->deal);
		free(b->na);
		free(b);
		free(cells);
		return -ENOMEM;
	}
	memcpy(b->tasks, a->tasks, a->ntask * sizeof(*b->tasks));
	memcpy(b->deal, a->deal, a->ntask * sizeof(*b->deal));
	memcpy(b->na, a->na, ncell * sizeof(*b->na));
	*dst = *src;
	dst->rows = b->rows;
	dst->cols = b->cols;
	dst->workloads = b->wls;
	dst->cells = cells;
	dst->owned = b;
	return 0;
}

/* Which part is which shard: every one once, all of the same plan. */
static int order_parts(struct matrix_part *const *parts, const char *const *names, size_t n,
                       const struct matrix_part **by, struct bo_err *err)
{
#define NAME(i) (names && names[i] ? names[i] : "part")
	unsigned ns = parts[0]->nshards;
	json_t *plan0 = matrix_plan_json(&parts[0]->m);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct matrix_part *p = parts[i];
		json_t *pj = matrix_plan_json(&p->m);
		if (p->nshards != ns)
			rc = bo_errf(err, -EINVAL, "%s is shard %u of %u, %s of %u", NAME(i),
			             p->shard, p->nshards, NAME(0), ns);
		else if (!pj || !json_equal(pj, plan0)) {
			const char *key = "plan";
			const char *k;
			json_t *v;
			for (void *it = json_object_iter(plan0); it;
			     it = json_object_iter_next(plan0, it)) {
				k = json_object_iter_key(it);
				v = json_object_iter_value(it);
				if (pj && !json_equal(v, json_object_get(pj, k))) {
					key = k;
					break;
				}
			}
			rc = bo_errf(err, -EINVAL,
			             "%s and %s are parts of different matrices (their %s differ)",
			             NAME(0), NAME(i), key);
		} else if (by[p->shard])
			rc = bo_errf(err, -EINVAL, "shard %u of %u is given twice (%s)", p->shard,
			             ns, NAME(i));
		else
			by[p->shard] = p;
		json_decref(pj);
	}
	json_decref(plan0);
	for (unsigned s = 0; s < ns && rc == 0; s++)
		if (!by[s])
			rc = bo_errf(err, -EINVAL, "shard %u of %u is missing", s, ns);
	return rc;
#undef NAME
}

/* One exploration's result into its cell. */
static int fold_one(struct matrix *m, const struct matrix_task *tk, const struct matrix_tres *r,
                    uint32_t *ex_wl)
{
	struct matrix_cell *c = matrix_cell(m, tk->row, tk->col);
	const struct matrix_plan *pl = matrix_plan_of(m);
	if (r->rc) {
		c->failed = true;
		snprintf(c->note, sizeof(c->note), "not run (%s): %.100s",
		         matrix_task_workload(m, tk), r->err);
		return 0;
	}
	if (!c->ran)
		c->exhaustive = true, c->coverage = 1.0;
	c->ran = true;
	c->states += r->states;
	c->ok += r->ok;
	for (int i = 0; i < MI_N; i++)
		c->viol[i] += r->viol[i];
	c->silent += r->silent;
	c->detected += r->detected;
	c->allowed += r->allowed;
	c->silent_lost += r->silent_lost;
	c->write_errors += r->write_errors;
	c->exhaustive = c->exhaustive && r->exhaustive;
	if (r->coverage < c->coverage)
		c->coverage = r->coverage;
	c->seconds += r->seconds;
	if (!c->kernel[0])
		snprintf(c->kernel, sizeof(c->kernel), "%s", r->kernel);
	if (m->cols[tk->col].vm && !c->note[0])
		snprintf(c->note, sizeof(c->note),
		         "Linux %s in qemu: up to %u crash state%s per workload, enumerated "
		         "from one recorded run",
		         pl->cspec[tk->col]->fs, pl->opts.vm_states,
		         pl->opts.vm_states == 1 ? "" : "s");
	if (r->example && matrix_example_better(r->example, tk->wl, c->example, *ex_wl)) {
		struct matrix_example *e = matrix_example_copy(r->example);
		if (!e)
			return -ENOMEM;
		matrix_example_free(c->example);
		c->example = e;
		*ex_wl = tk->wl;
	}
	return 0;
}

/* A verify-at-mount row is shown only where it changes what the user is told: if
 * every cell has the same silent and detected counts as the row it varies, it goes. */
static void drop_unchanged_verify_rows(struct matrix *m)
{
	struct matrix_plan *p = matrix_plan_of(m);
	size_t w = 0;
	for (size_t r = 0; r < m->nrows; r++) {
		bool keep = true;
		if (p->spec[r]->verify) {
			size_t base = m->nrows;
			for (size_t b = 0; b < m->nrows; b++)
				if (m->rows[b].key == p->spec[r]->base)
					base = b;
			if (base < m->nrows) {
				keep = false;
				for (size_t c = 0; c < m->ncols; c++) {
					const struct matrix_cell *x = matrix_cell(m, r, c),
					                         *y = matrix_cell(m, base, c);
					if (!m->cols[c].vm &&
					    (x->silent != y->silent || x->detected != y->detected))
						keep = true;
				}
			}
		}
		if (!keep) {
			for (size_t c = 0; c < m->ncols; c++)
				matrix_example_free(matrix_cell(m, r, c)->example);
			continue;
		}
		if (w != r) {
			p->rows[w] = p->rows[r];
			p->spec[w] = p->spec[r];
			memmove(matrix_cell(m, w, 0), matrix_cell(m, r, 0),
			        m->ncols * sizeof(*m->cells));
		}
		w++;
	}
	m->nrows = w;
}

int matrix_merge(struct matrix_part *const *parts, const char *const *names, size_t n,
                 struct matrix *m, struct bo_err *err)
{
	if (n == 0)
		return bo_errf(err, -EINVAL, "no parts to merge");
	const struct matrix_part **by = calloc(parts[0]->nshards, sizeof(*by));
	if (!by)
		return bo_errf(err, -ENOMEM, "out of memory");
	int rc = order_parts(parts, names, n, by, err);
	if (rc == 0 && (rc = plan_copy(&parts[0]->m, m)) < 0)
		bo_errf(err, rc, "out of memory");
	if (rc) {
		free(by);
		return rc;
	}
	const struct matrix_plan *pl = matrix_plan_of(m);
	uint32_t *ex_wl = calloc(m->nrows * m->ncols, sizeof(*ex_wl));
	for (size_t k = 0; ex_wl && rc == 0 && k < pl->ntask; k++) {
		const struct matrix_part *p = by[matrix_task_shard(m, k, parts[0]->nshards)];
		const struct matrix_task *tk = &pl->tasks[k];
		rc = fold_one(m, tk, &p->res[k], &ex_wl[tk->row * m->ncols + tk->col]);
	}
	if (!ex_wl)
		rc = -ENOMEM;
	m->seconds = 0;
	for (size_t i = 0; i < n; i++)
		if (parts[i]->seconds > m->seconds)
			m->seconds = parts[i]->seconds;
	for (size_t i = 0; rc == 0 && i < m->nrows * m->ncols; i++)
		if (!m->cells[i].ran && !m->cells[i].note[0])
			snprintf(m->cells[i].note, sizeof(m->cells[i].note), "%s", pl->na[i]);
	free(ex_wl);
	free(by);
	if (rc) {
		matrix_free_cells(m);
		return bo_errf(err, rc, "out of memory");
	}
	drop_unchanged_verify_rows(m);
	return 0;
}
