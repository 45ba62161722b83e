// SPDX-License-Identifier: GPL-2.0-or-later
/* result.c — an exploration's results as JSON (written and read back, for shard
 * merging) and as the terminal summary. Timings stay out of the JSON so that the
 * same exploration run twice gives identical bytes. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/json.h"
#include "blackout/util.h"

/* The value of "blackout_explore": the reader refuses any other. */
#define CRASH_RESULT_FORMAT 1

/* The invariants in mask, by name. */
static json_t *inv_list(unsigned mask)
{
	json_t *a = json_array();
	for (int i = 0; a && i < CRASH_INV_N; i++)
		if (mask & (1u << i))
			json_array_append_new(a, json_string(crash_inv_name((enum crash_inv)i)));
	return a;
}

static json_t *inv_counts(const uint64_t *v)
{
	json_t *o = json_object();
	for (int i = 0; o && i < CRASH_INV_N; i++)
		json_object_set_new(o, crash_inv_name((enum crash_inv)i),
		                    json_integer((json_int_t)v[i]));
	return o;
}

/* Rounded as the text shows them, so a run read back and written again is the same. */
static double round_to(double x, double unit)
{
	return round(x / unit) * unit;
}

int crash_result_write_json(const struct crash_result *r, FILE *f)
{
	json_t *fails = json_array();
	for (size_t i = 0; fails && i < r->nfail; i++) {
		const struct crash_state *s = &r->fail[i];
		json_array_append_new(
		    fails, json_pack("{s:o,s:I,s:b,s:I,s:o,s:o,s:b,s:o,s:i,s:o}", "id",
		                     bo_json_text(s->id), "pos", (json_int_t)s->pos, "inflight",
		                     s->inflight, "completed", (json_int_t)s->completed, "broken",
		                     inv_list(s->broken), "allowed", inv_list(s->allowed),
		                     "detected", s->detected, "detected_by",
		                     bo_json_text(s->detected_by), "e2fsck_agrees",
		                     s->e2fsck_agrees, "detail", bo_json_text(s->detail)));
	}
	json_t *top = json_pack(
	    "{s:i,s:o,s:o,s:o,s:I,s:I,s:i,s:i,s:I,s:I,s:f,s:b,s:I,s:f}", "blackout_explore",
	    CRASH_RESULT_FORMAT, "stack", bo_json_text(r->stack), "fs", bo_json_text(r->fs),
	    "workload", bo_json_text(r->workload), "seed", (json_int_t)r->seed, "max_states",
	    (json_int_t)r->max_states, "shard", (int)r->shard, "nshards", (int)r->nshards, "cuts",
	    (json_int_t)r->cuts, "space", (json_int_t)(r->space > INT64_MAX ? INT64_MAX : r->space),
	    "space_log2", round_to(r->space_log2, 1e-3), "exhaustive", r->exhaustive, "built",
	    (json_int_t)r->built, "coverage", round_to(r->coverage, 1e-6));
	json_t *counts = json_pack(
	    "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o}", "judged", (json_int_t)r->judged,
	    "duplicates", (json_int_t)r->duplicates, "ok", (json_int_t)r->ok, "silent",
	    (json_int_t)r->silent, "detected", (json_int_t)r->detected, "hung", (json_int_t)r->hung,
	    "e2fsck_runs", (json_int_t)r->e2fsck_runs, "e2fsck_disagree",
	    (json_int_t)r->e2fsck_disagree, "violations", inv_counts(r->viol), "allowed",
	    inv_counts(r->allowed), "failures", fails);
	if (top && counts && json_object_update(top, counts) != 0) {
		json_decref(top);
		top = NULL;
	}
	json_decref(counts);
	/* only a real-kernel run's, so every other result keeps its bytes */
	if (top && r->kernel[0] && json_object_set_new(top, "kernel", bo_json_text(r->kernel))) {
		json_decref(top);
		top = NULL;
	}
	if (top && r->rejected[0] &&
	    json_object_set_new(top, "rejected", bo_json_text(r->rejected))) {
		json_decref(top);
		top = NULL;
	}
	/* only where md ran under the filesystem (docs/md.md) */
	if (top && (r->md_started || r->md_refused) &&
	    json_object_set_new(
	        top, "md",
	        json_pack("{s:I,s:I,s:I,s:I,s:I}", "started", (json_int_t)r->md_started, "refused",
	                  (json_int_t)r->md_refused, "forced_ok", (json_int_t)r->md_forced_ok,
	                  "forced_silent", (json_int_t)r->md_forced_silent, "unstarted",
	                  (json_int_t)r->md_unstarted)) != 0) {
		json_decref(top);
		top = NULL;
	}
	/* only where pruning was asked (docs/explore.md, "Pruning") */
	if (top && r->prune_asked &&
	    json_object_set_new(
	        top, "pruned",
	        r->prune_off[0]
	            ? json_pack("{s:s,s:s}", "rule", "journal-replay", "off", r->prune_off)
	            : json_pack("{s:s,s:I,s:I,s:I}", "rule", "journal-replay", "states",
	                        (json_int_t)r->pruned, "checked", (json_int_t)r->prune_checked,
	                        "mismatched", (json_int_t)r->prune_mismatch)) != 0) {
		json_decref(top);
		top = NULL;
	}
	return bo_json_write(top, f, 0);
}

int crash_result_add(struct crash_result *r, const struct crash_state *s,
                     const struct crash_outcome *o)
{
	if (o->broken || o->allowed) {
		/* a result read back or merged holds exactly nfail entries */
		if (r->fail_cap < r->nfail)
			r->fail_cap = r->nfail;
		struct crash_state *nf = bo_grow(r->fail, &r->fail_cap, r->nfail, sizeof(*nf), 16);
		if (!nf)
			return -ENOMEM;
		r->fail = nf;
		struct crash_state *f = &r->fail[r->nfail++];
		*f = *s;
		f->broken = o->broken;
		f->allowed = o->allowed;
		f->detected = o->detected;
		f->e2fsck_agrees = o->e2fsck_agrees;
		snprintf(f->detected_by, sizeof(f->detected_by), "%s", o->detected_by);
		snprintf(f->detail, sizeof(f->detail), "%s", o->detail);
	}
	for (int i = 0; i < CRASH_INV_N; i++) {
		r->viol[i] += (o->broken >> i) & 1;
		r->allowed[i] += (o->allowed >> i) & 1;
	}
	if (!o->broken)
		r->ok++;
	else if (o->detected)
		r->detected++;
	else
		r->silent++;
	r->hung += o->detected && strcmp(o->detected_by, "hung") == 0;
	/* md's start, beside the verdict (an outside observer's guest, docs/md.md) */
	r->md_started += o->md == CRASH_MD_STARTED;
	r->md_refused += o->md == CRASH_MD_FORCED || o->md == CRASH_MD_UNSTARTED;
	r->md_unstarted += o->md == CRASH_MD_UNSTARTED;
	r->md_forced_ok += o->md == CRASH_MD_FORCED && !o->broken;
	r->md_forced_silent += o->md == CRASH_MD_FORCED && o->broken && !o->detected;
	r->e2fsck_disagree += o->e2fsck_agrees == 0;
	return 0;
}

static void print_md(const struct crash_result *r, FILE *f)
{
	uint64_t n = r->md_started + r->md_refused;
	if (!n)
		return;
	if (!r->md_refused) {
		fprintf(f, "md:       started all %" PRIu64 " states without being forced\n", n);
		return;
	}
	uint64_t forced = r->md_refused - r->md_unstarted;
	uint64_t failing = forced - r->md_forced_ok;
	fprintf(f,
	        "md:       refused to start %" PRIu64 " of %" PRIu64
	        " states; forced (--run --force): %" PRIu64 " ok, %" PRIu64 " failing (%" PRIu64
	        " SILENT, %" PRIu64 " detected), %" PRIu64 " would not start\n",
	        r->md_refused, n, r->md_forced_ok, failing, r->md_forced_silent,
	        failing - r->md_forced_silent, r->md_unstarted);
}

void crash_coverage_text(double coverage, char *buf, size_t len)
{
	snprintf(buf, len, "%.3g%%", 100.0 * coverage);
}

void crash_result_print(const struct crash_result *r, FILE *f)
{
	char cov[32];
	crash_coverage_text(r->coverage, cov, sizeof(cov));
	fprintf(f, "stack:    %s\nfs:       %s\nworkload: %s\n", r->stack, r->fs, r->workload);
	if (r->kernel[0])
		fprintf(f, "kernel:   %s\n", r->kernel);
	if (r->rejected[0])
		fprintf(f, "rejected: %s\n", r->rejected);
	if (r->exhaustive)
		fprintf(f, "states:   %" PRIu64 " built over %" PRIu64 " cut points: exhaustive\n",
		        r->built, r->cuts);
	else
		fprintf(f,
		        "states:   %" PRIu64 " built over %" PRIu64
		        " cut points: sampled (seed %" PRIu64 "), %s of %s2^%.1f outcomes\n",
		        r->built, r->cuts, r->seed, cov, r->space_log2 >= 1024 ? "over " : "",
		        r->space_log2);
	if (r->nshards > 1)
		fprintf(f, "shard:    %u/%u\n", r->shard, r->nshards);
	uint64_t failing = r->judged - r->ok;
	fprintf(f,
	        "judged:   %" PRIu64 " distinct (%" PRIu64 " duplicates), %" PRIu64 " ok, %" PRIu64
	        " failing: %" PRIu64 " SILENT, %" PRIu64 " detected\n",
	        r->judged, r->duplicates, r->ok, failing, r->silent, r->detected);
	if (r->hung)
		fprintf(f,
		        "hung:     %" PRIu64 " states stopped the observer's system (detected)\n",
		        r->hung);
	if (r->prune_asked && r->prune_off[0])
		fprintf(f, "pruned:   none (%s)\n", r->prune_off);
	else if (r->prune_asked)
		fprintf(f,
		        "pruned:   %" PRIu64
		        " states equal to a judged one after journal replay; %" PRIu64
		        " of them judged anyway, %" PRIu64 " with another outcome\n",
		        r->pruned, r->prune_checked, r->prune_mismatch);
	if (r->write_errors)
		fprintf(f, "failed:   %" PRIu64 " writes of the recorded run failed (--arm)\n",
		        r->write_errors);
	print_md(r, f);
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
		for (size_t i = 0; i < r->ndamage; i++) {
			const struct crash_damage *d = &r->damage[i];
			const char *owner = d->owner[0] ? d->owner : "free or unknown";
			fprintf(f, "  %-8s sectors %" PRIu64 "-%" PRIu64, d->what, d->lba,
			        d->lba + d->count - 1);
			if (d->blocks > 1)
				fprintf(f, " (blocks %" PRIu64 "-%" PRIu64 "): the first, %s\n",
				        d->block, d->block + d->blocks - 1, owner);
			else if (d->blocks == 1)
				fprintf(f, " (block %" PRIu64 "): %s\n", d->block, owner);
			else
				fprintf(f, ": %s\n", owner);
		}
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

/* ---- reading results back (shards, vmtest) ----------------------------------------
 * The input is untrusted: every field is checked for its type and range, and the
 * counts against each other, so a bad file is refused with the field named. */

/* No count an exploration can reach comes near this; it leaves room to add shards. */
#define COUNT_MAX (UINT64_C(1) << 53)

static unsigned read_invs(struct bo_jr *jr, const json_t *o, const char *key)
{
	json_t *v = bo_jr_get(jr, o, key, JSON_ARRAY);
	unsigned m = 0;
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x)
	{
		int k = -1;
		for (int j = 0; j < CRASH_INV_N; j++)
			if (json_is_string(x) &&
			    strcmp(json_string_value(x), crash_inv_name((enum crash_inv)j)) == 0)
				k = j;
		if (k < 0)
			bo_jr_fail(jr, key, "item %zu is not an invariant's name", i);
		else
			m |= 1u << k;
	}
	return m;
}

static void read_counts(struct bo_jr *jr, const json_t *o, const char *key, uint64_t *out)
{
	json_t *v = bo_jr_get(jr, o, key, JSON_OBJECT);
	if (!v)
		return;
	snprintf(jr->where, sizeof(jr->where), "%s", key);
	for (int i = 0; i < CRASH_INV_N; i++)
		/* results written before fs-promise was judged have no count for it */
		if (i != CRASH_INV_PROMISE || json_object_get(v, crash_inv_name(CRASH_INV_PROMISE)))
			out[i] = bo_jr_count(jr, v, crash_inv_name((enum crash_inv)i), COUNT_MAX);
	jr->where[0] = 0;
}

static void read_failure(struct bo_jr *jr, const json_t *f, size_t i, struct crash_state *s)
{
	snprintf(jr->where, sizeof(jr->where), "failures[%zu]", i);
	if (!json_is_object(f)) {
		bo_jr_fail(jr, "", "is not an object");
		return;
	}
	bo_jr_text(jr, f, "id", s->id, sizeof(s->id));
	s->pos = (size_t)bo_jr_count(jr, f, "pos", COUNT_MAX);
	s->inflight = bo_jr_bool(jr, f, "inflight");
	s->completed = (size_t)bo_jr_count(jr, f, "completed", COUNT_MAX);
	s->broken = read_invs(jr, f, "broken");
	s->allowed = read_invs(jr, f, "allowed");
	s->detected = bo_jr_bool(jr, f, "detected");
	bo_jr_text(jr, f, "detected_by", s->detected_by, sizeof(s->detected_by));
	json_t *ag = bo_jr_get(jr, f, "e2fsck_agrees", JSON_INTEGER);
	if (ag && (json_integer_value(ag) < -1 || json_integer_value(ag) > 1))
		bo_jr_fail(jr, "e2fsck_agrees", "is not -1, 0 or 1");
	s->e2fsck_agrees = ag ? (int)json_integer_value(ag) : 0;
	bo_jr_text(jr, f, "detail", s->detail, sizeof(s->detail));
	jr->where[0] = 0;
}

/* The counts of one result must add up: a file that says otherwise is damaged. */
static void check_sums(struct bo_jr *jr, const struct crash_result *r)
{
	if (r->ok > r->judged)
		bo_jr_fail(jr, "ok", "(%" PRIu64 ") is more than 'judged' (%" PRIu64 ")", r->ok,
		           r->judged);
	else if (r->silent + r->detected > r->judged - r->ok)
		bo_jr_fail(jr, "silent",
		           "+ 'detected' (%" PRIu64 ") is more than the %" PRIu64 " failing states",
		           r->silent + r->detected, r->judged - r->ok);
	if (r->hung > r->detected)
		bo_jr_fail(jr, "hung", "(%" PRIu64 ") is more than 'detected' (%" PRIu64 ")",
		           r->hung, r->detected);
	if (r->md_started + r->md_refused > r->judged)
		bo_jr_fail(jr, "md",
		           "'started' + 'refused' (%" PRIu64 ") is more than 'judged' (%" PRIu64
		           ")",
		           r->md_started + r->md_refused, r->judged);
	else if (r->md_forced_ok + r->md_forced_silent + r->md_unstarted > r->md_refused)
		bo_jr_fail(jr, "md",
		           "'forced_ok' + 'forced_silent' + 'unstarted' (%" PRIu64
		           ") is more than 'refused' (%" PRIu64 ")",
		           r->md_forced_ok + r->md_forced_silent + r->md_unstarted, r->md_refused);
	if (r->nshards == 0 || r->nshards > 64 || r->shard >= r->nshards)
		bo_jr_fail(jr, "shard", "%u of %u is not a shard (1 to 64 shards)", r->shard,
		           r->nshards);
}

int crash_result_read_json(const char *text, size_t len, struct crash_result **out,
                           struct bo_err *err)
{
	*out = NULL;
	json_t *root;
	int rc = bo_json_parse(text, len, "result JSON", &root, err);
	if (rc)
		return rc;
	json_t *ver = json_object_get(root, "blackout_explore");
	if (!json_is_object(root) || !ver) {
		json_decref(root);
		return bo_errf(err, -EINVAL,
		               "not a blackout explore result (no 'blackout_explore')");
	}
	if (!json_is_integer(ver) || json_integer_value(ver) != CRASH_RESULT_FORMAT) {
		bool num = json_is_integer(ver);
		json_decref(root);
		return bo_errf(err, -EINVAL,
		               "result JSON: 'blackout_explore' (the format version) is %s; this "
		               "blackout reads version %d",
		               num ? "another number" : "not a number", CRASH_RESULT_FORMAT);
	}
	struct crash_result *r = calloc(1, sizeof(*r));
	if (!r) {
		json_decref(root);
		return -ENOMEM;
	}
	struct bo_jr jr = {.err = err, .what = "result JSON"};
	bo_jr_text(&jr, root, "stack", r->stack, sizeof(r->stack));
	bo_jr_text(&jr, root, "fs", r->fs, sizeof(r->fs));
	bo_jr_text(&jr, root, "workload", r->workload, sizeof(r->workload));
	/* a real-kernel run's only */
	if (json_object_get(root, "kernel"))
		bo_jr_text(&jr, root, "kernel", r->kernel, sizeof(r->kernel));
	if (json_object_get(root, "rejected"))
		bo_jr_text(&jr, root, "rejected", r->rejected, sizeof(r->rejected));
	r->seed = bo_jr_count(&jr, root, "seed", INT64_MAX);
	r->max_states = bo_jr_count(&jr, root, "max_states", COUNT_MAX);
	r->shard = (unsigned)bo_jr_count(&jr, root, "shard", 63);
	r->nshards = (unsigned)bo_jr_count(&jr, root, "nshards", 64);
	r->cuts = bo_jr_count(&jr, root, "cuts", COUNT_MAX);
	/* saturated: the writer caps it at INT64_MAX, the largest integer JSON readers keep */
	r->space = bo_jr_count(&jr, root, "space", INT64_MAX);
	if (r->space == INT64_MAX)
		r->space = UINT64_MAX;
	r->space_log2 = bo_jr_real(&jr, root, "space_log2", 0, 1e9);
	r->exhaustive = bo_jr_bool(&jr, root, "exhaustive");
	r->built = bo_jr_count(&jr, root, "built", COUNT_MAX);
	r->coverage = bo_jr_real(&jr, root, "coverage", 0, 1);
	r->judged = bo_jr_count(&jr, root, "judged", COUNT_MAX);
	r->duplicates = bo_jr_count(&jr, root, "duplicates", COUNT_MAX);
	r->ok = bo_jr_count(&jr, root, "ok", COUNT_MAX);
	r->silent = bo_jr_count(&jr, root, "silent", COUNT_MAX);
	r->detected = bo_jr_count(&jr, root, "detected", COUNT_MAX);
	/* results written before "hung" existed had none */
	if (json_object_get(root, "hung"))
		r->hung = bo_jr_count(&jr, root, "hung", COUNT_MAX);
	r->e2fsck_runs = bo_jr_count(&jr, root, "e2fsck_runs", COUNT_MAX);
	r->e2fsck_disagree = bo_jr_count(&jr, root, "e2fsck_disagree", COUNT_MAX);
	json_t *pr = json_object_get(root, "pruned");
	if (json_is_object(pr)) {
		r->prune_asked = true;
		const char *why = json_string_value(json_object_get(pr, "off"));
		if (why)
			snprintf(r->prune_off, sizeof(r->prune_off), "%s", why);
		else {
			r->pruned = bo_jr_count(&jr, pr, "states", COUNT_MAX);
			r->prune_checked = bo_jr_count(&jr, pr, "checked", COUNT_MAX);
			r->prune_mismatch = bo_jr_count(&jr, pr, "mismatched", COUNT_MAX);
		}
	}
	read_counts(&jr, root, "violations", r->viol);
	read_counts(&jr, root, "allowed", r->allowed);
	json_t *md = json_object_get(root, "md"); /* only where md ran */
	if (md && !json_is_object(md))
		bo_jr_fail(&jr, "md", "is not an object");
	else if (md) {
		snprintf(jr.where, sizeof(jr.where), "md");
		r->md_started = bo_jr_count(&jr, md, "started", COUNT_MAX);
		r->md_refused = bo_jr_count(&jr, md, "refused", COUNT_MAX);
		r->md_forced_ok = bo_jr_count(&jr, md, "forced_ok", COUNT_MAX);
		r->md_forced_silent = bo_jr_count(&jr, md, "forced_silent", COUNT_MAX);
		r->md_unstarted = bo_jr_count(&jr, md, "unstarted", COUNT_MAX);
		jr.where[0] = 0;
	}
	if (!jr.rc)
		check_sums(&jr, r);
	json_t *fl = bo_jr_get(&jr, root, "failures", JSON_ARRAY);
	size_t nf = fl ? json_array_size(fl) : 0;
	if (nf && !(r->fail = calloc(nf, sizeof(*r->fail))) && !jr.rc)
		jr.rc = -ENOMEM;
	for (size_t i = 0; !jr.rc && i < nf; i++)
		read_failure(&jr, json_array_get(fl, i), i, &r->fail[r->nfail++]);
	json_decref(root);
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
		    strcmp(a->workload, b->workload) || strcmp(a->kernel, b->kernel) ||
		    a->seed != b->seed || a->max_states != b->max_states || a->built != b->built ||
		    a->cuts != b->cuts)
			return bo_errf(
			    err, -EINVAL,
			    "part %zu is another exploration (stack, fs, workload, kernel, "
			    "seed, budget and states must match)",
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
	m->judged = m->duplicates = m->ok = m->silent = m->detected = m->hung = 0;
	m->e2fsck_runs = m->e2fsck_disagree = 0;
	m->pruned = m->prune_checked = m->prune_mismatch = 0;
	m->md_started = m->md_refused = m->md_forced_ok = m->md_forced_silent = 0;
	m->md_unstarted = 0;
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
		m->hung += b->hung;
		m->e2fsck_runs += b->e2fsck_runs;
		m->e2fsck_disagree += b->e2fsck_disagree;
		m->pruned += b->pruned;
		m->prune_checked += b->prune_checked;
		m->prune_mismatch += b->prune_mismatch;
		m->md_started += b->md_started;
		m->md_refused += b->md_refused;
		m->md_forced_ok += b->md_forced_ok;
		m->md_forced_silent += b->md_forced_silent;
		m->md_unstarted += b->md_unstarted;
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

static int parse_result(const char *buf, size_t n, void *out, struct bo_err *err)
{
	return crash_result_read_json(buf, n, out, err);
}

int crash_result_load(const char *path, struct crash_result **out, struct bo_err *err)
{
	*out = NULL;
	return bo_parse_file(path, 1u << 30, parse_result, out, err);
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
