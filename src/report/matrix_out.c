/* matrix_out.c — the expectations table as a person reads it (terminal, Markdown), as a
 * machine reads it (JSON, docs/matrix.md), and the verdicts computed from its cells.
 * Running the explorations is matrix_run.c; the HTML report is html.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/matrix.h"
#include "blackout/util.h"

const char *matrix_inv_name(enum matrix_inv i)
{
	static const char *const names[MI_N] = {"durable", "stale", "bystander", "consistent",
	                                        "atomic"};
	return i < MI_N ? names[i] : "?";
}

const struct matrix_cell *matrix_find(const struct matrix *m, const char *row, const char *col)
{
	for (size_t r = 0; r < m->nrows; r++)
		for (size_t c = 0; c < m->ncols; c++)
			if (strcmp(m->rows[r].id, row) == 0 && strcmp(m->cols[c].id, col) == 0)
				return matrix_cell(m, r, c);
	return NULL;
}

static uint64_t violating(const struct matrix_cell *c)
{
	return c->states - c->ok;
}

/* ---- verdicts -------------------------------------------------------------- */

static const struct matrix_cell *ran(const struct matrix *m, const char *row, const char *col)
{
	const struct matrix_cell *c = matrix_find(m, row, col);
	return c && c->ran && c->states ? c : NULL;
}

static void vadd(struct matrix_verdict *out, size_t max, size_t *n, const char *exp,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void vadd(struct matrix_verdict *out, size_t max, size_t *n, const char *exp,
                 const char *fmt, ...)
{
	if (*n >= max)
		return;
	va_list ap;
	snprintf(out[*n].expectation, sizeof(out[*n].expectation), "%s", exp);
	va_start(ap, fmt);
	vsnprintf(out[*n].text, sizeof(out[*n].text), fmt, ap);
	va_end(ap);
	(*n)++;
}

/* "lost synced data in 3 of 120 states" / "never lost synced data (120 states)" */
static const char *measure(const struct matrix_cell *c, uint64_t k, const char *verb,
                           const char *what, char *buf, size_t len)
{
	if (k == 0)
		snprintf(buf, len, "never %s %s (%" PRIu64 " states)", verb, what, c->states);
	else
		snprintf(buf, len, "%s %s in %" PRIu64 " of %" PRIu64 " states", verb, what, k,
		         c->states);
	return buf;
}

size_t matrix_verdicts(const struct matrix *m, struct matrix_verdict *out, size_t max)
{
	size_t n = 0;
	char a[96], b[96], c3[96];
	const struct matrix_cell *hb0 = ran(m, "cache", "ext3-ordered-b0"),
	                         *hb1 = ran(m, "cache", "ext3-ordered-b1"),
	                         *lie = ran(m, "cache-lying", "ext3-ordered-b1"),
	                         *nc0 = ran(m, "nocache", "ext3-ordered-b0"),
	                         *atom = ran(m, "nocache", "ext3-ordered-b1");
	if (hb0 && hb1) {
		const char *concl =
		    hb1->viol[MI_DURABLE] == 0 && hb0->viol[MI_DURABLE] > 0
		        ? "flushes honoured and barrier=1 are enough; barrier=0 is not."
		    : hb1->viol[MI_DURABLE] < hb0->viol[MI_DURABLE]
		        ? "barriers help but did not close the gap."
		    : hb0->viol[MI_DURABLE] == 0 ? "neither setting lost synced data here."
		                                 : "barriers made no difference here.";
		vadd(out, max, &n, "WRITE-CACHE",
		     "With a write cache that honours flushes, ext3 data=ordered %s with barrier=0 "
		     "and %s with barrier=1: %s",
		     measure(hb0, hb0->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)),
		     measure(hb1, hb1->viol[MI_DURABLE], "lost", "synced data", b, sizeof(b)),
		     concl);
	}
	if (lie)
		vadd(out, max, &n, "WRITE-CACHE",
		     "A cache that ignores flushes, ext3 barrier=1: %s%s.",
		     measure(lie, lie->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)),
		     lie->viol[MI_DURABLE] ? " — barriers cannot help when the drive lies" : "");
	if (nc0)
		vadd(out, max, &n, "WRITE-CACHE",
		     "Without a write cache (atomic sectors), ext3 barrier=0 %s%s.",
		     measure(nc0, nc0->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)),
		     nc0->viol[MI_DURABLE] ? ""
		                           : ": barriers matter only when something can hold or "
		                             "reorder writes");

	const struct matrix_cell *torn = ran(m, "torn", "ext3-ordered-b1");
	if (torn && atom)
		vadd(out, max, &n, "ATOMIC-SECTORS",
		     "Torn sectors (ext3 ordered, barrier=1): %s, against %" PRIu64 " of %" PRIu64
		     " on atomic sectors%s.",
		     measure(torn, violating(torn), "broke", "an invariant", a, sizeof(a)),
		     violating(atom), atom->states,
		     torn->silent ? (snprintf(c3, sizeof(c3), "; %" PRIu64 " torn states silently",
		                              torn->silent),
		                     c3)
		                  : "");
	static const char *const cheap_rows[] = {"flash-cheap-128k", "flash-cheap-4m"};
	static const char *const cheap_names[] = {"128 KiB", "4 MiB"};
	for (int i = 0; i < 2; i++) {
		const struct matrix_cell *ch = ran(m, cheap_rows[i], "ext3-ordered-b1"),
		                         *cs = ran(m, cheap_rows[i], "ext3-csum"),
		                         *e2 = ran(m, cheap_rows[i], "ext2");
		if (!ch)
			continue;
		vadd(out, max, &n, "ATOMIC-SECTORS",
		     "Cheap flash (%s erase blocks), ext3 ordered barrier=1: %s; %" PRIu64
		     " of the %" PRIu64 " failing states were silent.",
		     cheap_names[i],
		     measure(ch, ch->viol[MI_BYSTANDER], "damaged", "files nobody was writing", a,
		             sizeof(a)),
		     ch->silent, violating(ch));
		if (cs && violating(cs) && violating(ch)) {
			double fs = (double)cs->silent / (double)violating(cs),
			       fn = (double)ch->silent / (double)violating(ch);
			vadd(out, max, &n, "JOURNAL-HIDES-DAMAGE",
			     "%s on cheap flash (%s) with metadata_csum, %" PRIu64 " of %" PRIu64
			     " failing states were silent (without: %" PRIu64 " of %" PRIu64 ").",
			     fs < fn ? "Checksums turn silent damage into detected damage:"
			             : "Checksums did not make the damage visible here:",
			     cheap_names[i], cs->silent, violating(cs), ch->silent, violating(ch));
		}
		if (e2)
			vadd(out, max, &n, "JOURNAL-HIDES-DAMAGE",
			     "On cheap flash (%s), ext2 — checked in full after every cut — had "
			     "%" PRIu64 " of %" PRIu64
			     " failing states detected; ext3, trusting its "
			     "journal, had %" PRIu64 " of %" PRIu64 ".",
			     cheap_names[i], e2->detected, violating(e2), ch->detected,
			     violating(ch));
	}
	const struct matrix_cell *careful = ran(m, "flash-careful", "ext3-ordered-b1");
	if (careful)
		vadd(out, max, &n, "ATOMIC-SECTORS",
		     "Careful flash firmware (page-mapped, atomic map commit), ext3 ordered "
		     "barrier=1: %s%s.",
		     measure(careful, violating(careful), "broke", "an invariant", a, sizeof(a)),
		     careful->viol[MI_BYSTANDER] == 0 ? ", and never touched a bystander" : "");

	const struct matrix_cell *r5 = ran(m, "raid5", "ext3-ordered-b1"),
	                         *r5d = ran(m, "raid5-degraded", "ext3-ordered-b1"),
	                         *r5j = ran(m, "raid5-degraded-journal", "ext3-ordered-b1"),
	                         *r6 = ran(m, "raid6-2missing", "ext3-ordered-b1");
	if (r5d && atom) {
		double fd = (double)violating(r5d) / (double)r5d->states,
		       fa = (double)violating(atom) / (double)atom->states;
		vadd(out, max, &n, "DEGRADED-RAID",
		     "Degraded RAID5 (ext3 ordered, barrier=1) %s, %" PRIu64
		     " of them silently (bystander files: %" PRIu64 "); a single disk %s: %s",
		     measure(r5d, violating(r5d), "broke", "an invariant", a, sizeof(a)),
		     r5d->silent, r5d->viol[MI_BYSTANDER],
		     measure(atom, violating(atom), "broke", "one", b, sizeof(b)),
		     fd <= fa ? "not worse than a single disk in these workloads."
		     : r5d->viol[MI_BYSTANDER]
		         ? "the write hole makes a degraded array worse than one disk, "
		           "damaging files nobody was writing."
		         : "the write hole makes a degraded array worse than one disk.");
	}
	if (r5)
		vadd(out, max, &n, "DEGRADED-RAID", "Healthy RAID5 %s.",
		     measure(r5, violating(r5), "broke", "an invariant", a, sizeof(a)));
	if (r5j)
		vadd(out, max, &n, "DEGRADED-RAID", "Degraded RAID5 with md's write journal %s%s.",
		     measure(r5j, violating(r5j), "broke", "an invariant", a, sizeof(a)),
		     r5d && violating(r5j) < violating(r5d) ? ": the journal closes the write hole"
		                                            : "");
	if (r6)
		vadd(out, max, &n, "DEGRADED-RAID", "RAID6 with two members missing %s.",
		     measure(r6, violating(r6), "broke", "an invariant", a, sizeof(a)));

	static const char *const verify_rows[][2] = {{"flash-cheap-128k", "cheap flash (128 KiB)"},
	                                             {"raid5-degraded", "degraded RAID5"}};
	for (int i = 0; i < 2; i++) {
		char vid[64];
		snprintf(vid, sizeof(vid), "%s-verify", verify_rows[i][0]);
		const struct matrix_cell *base = ran(m, verify_rows[i][0], "ext3-ordered-b1"),
		                         *ver = ran(m, vid, "ext3-ordered-b1");
		if (base && ver)
			vadd(out, max, &n, "JOURNAL-HIDES-DAMAGE",
			     "Verifying at mount (fsck --fast after journal replay) on %s: %" PRIu64
			     " of %" PRIu64 " failing states silent, against %" PRIu64
			     " of %" PRIu64 " when ext3 trusts its journal.",
			     verify_rows[i][1], ver->silent, violating(ver), base->silent,
			     violating(base));
	}

	const struct matrix_cell *wb = ran(m, "cache", "ext3-writeback-b1"),
	                         *od = ran(m, "cache", "ext3-ordered-b1");
	if (wb && od)
		vadd(out, max, &n, "WRITEBACK",
		     "ext3 data=writeback on a write cache honouring flush: %" PRIu64 " of %" PRIu64
		     " states showed file data the file was never given (what a deleted file "
		     "left in its blocks; the mode allows it), data=ordered %" PRIu64 " of %" PRIu64
		     ".",
		     wb->allowed + wb->viol[MI_STALE], wb->states, od->allowed + od->viol[MI_STALE],
		     od->states);

	static const char *const vm_rows[][2] = {{"vm-cache", "a write cache honouring flush"},
	                                         {"vm-cache-lying", "a cache ignoring flush"},
	                                         {"vm-flash-cheap", "cheap flash (128 KiB)"}};
	for (int i = 0; i < 3; i++) {
		const struct matrix_cell *v0 = ran(m, vm_rows[i][0], "ext3-ordered-b0"),
		                         *v1 = ran(m, vm_rows[i][0], "ext3-ordered-b1");
		if (!v0 || !v1)
			continue;
		char b2[96], b3[96];
		vadd(out, max, &n, "REAL-KERNEL",
		     "Linux ext3 in qemu on %s (cuts, not enumerated states): barrier=1 %s and "
		     "%s; barrier=0 %s.",
		     vm_rows[i][1],
		     measure(v1, v1->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)),
		     measure(v1, v1->viol[MI_BYSTANDER], "damaged", "bystanders", b2, sizeof(b2)),
		     measure(v0, v0->viol[MI_DURABLE], "lost", "synced data", b3, sizeof(b3)));
	}

	const struct matrix_cell *we = ran(m, "write-errors", "ext3-ordered-b1");
	if (we)
		vadd(out, max, &n, "NO-WRITE-ERRORS",
		     "Write errors after set-up (ext3 ordered, barrier=1): %s; %" PRIu64
		     " of the failing states were silent.",
		     measure(we, we->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)),
		     we->silent);
	return n;
}

/* ---- terminal ---------------------------------------------------------------- */

static void cell_text(const struct matrix_cell *c, char *buf, size_t len)
{
	if (!c->ran)
		snprintf(buf, len, "n/a");
	else if (c->states == 0)
		snprintf(buf, len, "none judged");
	else if (violating(c) == 0 && c->allowed)
		snprintf(buf, len, "ok %" PRIu64 " +%" PRIu64 "a", c->states, c->allowed);
	else if (violating(c) == 0)
		snprintf(buf, len, "ok %" PRIu64, c->states);
	else
		snprintf(buf, len, "%" PRIu64 "/%" PRIu64 " %" PRIu64 "s", violating(c), c->states,
		         c->silent);
}

void matrix_print_table(const struct matrix *m, FILE *f, bool color)
{
	const char *red = color ? "\033[1;31m" : "", *yel = color ? "\033[33m" : "",
	           *grn = color ? "\033[32m" : "", *off = color ? "\033[0m" : "";
	fprintf(f,
	        "blackout matrix (%s, seed %" PRIu64 "): crash states violating an invariant / "
	        "states judged, and how many silently (s)\n\n",
	        m->mode, m->seed);
	fprintf(f, "%-24s", "stack \\ filesystem");
	for (size_t c = 0; c < m->ncols; c++)
		fprintf(f, " %-16.16s", m->cols[c].label);
	fputc('\n', f);
	for (size_t r = 0; r < m->nrows; r++) {
		fprintf(f, "%-24.24s", m->rows[r].label);
		for (size_t c = 0; c < m->ncols; c++) {
			const struct matrix_cell *x = matrix_cell(m, r, c);
			char t[64];
			cell_text(x, t, sizeof(t));
			const char *col = !x->ran ? "" : x->silent ? red : violating(x) ? yel : grn;
			fprintf(f, " %s%-16s%s", col, t, *col ? off : "");
		}
		fputc('\n', f);
	}
	fputs("\nkey: ok N = every one of N states kept every invariant; V/N Ks = V of N states "
	      "broke one, K of them silently;\n     +Aa = A states showed what the mode allows "
	      "(data=writeback: stale data), reported\n\nWhat the measurements say:\n",
	      f);
	struct matrix_verdict v[32];
	size_t nv = matrix_verdicts(m, v, 32);
	for (size_t i = 0; i < nv; i++)
		fprintf(f, "  [%s] %s\n", v[i].expectation, v[i].text);
	if (nv == 0)
		fputs("  (no row pair in this run allows a verdict)\n", f);
}

/* ---- JSON ---------------------------------------------------------------------- */

static void json_example(const struct matrix_example *e, FILE *f)
{
	fputs("{\"workload\":", f);
	bo_json_str(f, e->workload);
	fputs(",\"state\":", f);
	bo_json_str(f, e->state_id);
	fputs(",\"rebuild\":", f);
	bo_json_str(f, e->rebuild);
	fputs(",\"broken\":", f);
	bo_json_str(f, e->broken);
	fprintf(f, ",\"silent\":%s,\"cut\":%zu,\"cut_inflight\":%s,\"ops\":[",
	        e->silent ? "true" : "false", e->cut, e->cut_inflight ? "true" : "false");
	for (size_t i = 0; i < e->nops; i++) {
		const struct matrix_op *o = &e->ops[i];
		fprintf(f, "%s{\"op\":\"%s\"", i ? "," : "", o->op);
		if (strcmp(o->op, "mark") == 0) {
			fputs(",\"mark\":", f);
			bo_json_str(f, o->mark);
		} else if (strcmp(o->op, "flush") != 0) {
			fprintf(f, ",\"lba\":%" PRIu64 ",\"count\":%u", o->lba, o->count);
		}
		if (o->fua)
			fputs(",\"fua\":true", f);
		fputc('}', f);
	}
	fputs("],\"damage\":[", f);
	for (size_t i = 0; i < e->ndamage; i++) {
		const struct matrix_damage *d = &e->damage[i];
		fprintf(f, "%s{\"block\":%" PRIu64 ",\"what\":\"%s\",\"ino\":%u,\"owner\":",
		        i ? "," : "", d->block, d->what, d->ino);
		bo_json_str(f, d->owner);
		fputc('}', f);
	}
	fputs("]}", f);
}

int matrix_write_json(const struct matrix *m, FILE *f)
{
	fprintf(f,
	        "{\"schema\":\"blackout-matrix/1\",\"mode\":\"%s\",\"seed\":%" PRIu64
	        ",\"seconds\":%.1f,\n\"workloads\":[",
	        m->mode, m->seed, m->seconds);
	for (size_t i = 0; i < m->nworkloads; i++) {
		fputs(i ? "," : "", f);
		bo_json_str(f, m->workloads[i]);
	}
	fputs("],\n\"invariants\":[", f);
	for (int i = 0; i < MI_N; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", matrix_inv_name((enum matrix_inv)i));
	fputs("],\n\"rows\":[", f);
	for (size_t r = 0; r < m->nrows; r++) {
		fprintf(f, "%s\n {\"id\":", r ? "," : "");
		bo_json_str(f, m->rows[r].id);
		fputs(",\"label\":", f);
		bo_json_str(f, m->rows[r].label);
		fputs(",\"stack\":", f);
		bo_json_str(f, m->rows[r].stack);
		fputs(",\"tests\":", f);
		bo_json_str(f, m->rows[r].what);
		fputc('}', f);
	}
	fputs("],\n\"columns\":[", f);
	for (size_t c = 0; c < m->ncols; c++) {
		fprintf(f, "%s\n {\"id\":", c ? "," : "");
		bo_json_str(f, m->cols[c].id);
		fputs(",\"label\":", f);
		bo_json_str(f, m->cols[c].label);
		fputs(",\"mkfs\":", f);
		bo_json_str(f, m->cols[c].mkfs);
		fputs(",\"mount\":", f);
		bo_json_str(f, m->cols[c].mount);
		fputc('}', f);
	}
	fputs("],\n\"cells\":[", f);
	bool first = true;
	for (size_t r = 0; r < m->nrows; r++)
		for (size_t c = 0; c < m->ncols; c++) {
			const struct matrix_cell *x = matrix_cell(m, r, c);
			fprintf(f, "%s\n {\"row\":", first ? "" : ",");
			first = false;
			bo_json_str(f, m->rows[r].id);
			fputs(",\"col\":", f);
			bo_json_str(f, m->cols[c].id);
			fprintf(f, ",\"ran\":%s", x->ran ? "true" : "false");
			if (x->note[0]) {
				fputs(",\"note\":", f);
				bo_json_str(f, x->note);
			}
			fprintf(f,
			        ",\"states\":%" PRIu64 ",\"ok\":%" PRIu64 ",\"silent\":%" PRIu64
			        ",\"detected\":%" PRIu64 ",\"allowed\":%" PRIu64
			        ",\"exhaustive\":%s,\"coverage\":%.4f,"
			        "\"seconds\":%.2f,\"violations\":{",
			        x->states, x->ok, x->silent, x->detected, x->allowed,
			        x->exhaustive ? "true" : "false", x->coverage, x->seconds);
			for (int i = 0; i < MI_N; i++)
				fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "",
				        matrix_inv_name((enum matrix_inv)i), x->viol[i]);
			fputs("},\"example\":", f);
			if (x->example)
				json_example(x->example, f);
			else
				fputs("null", f);
			fputc('}', f);
		}
	fputs("],\n\"verdicts\":[", f);
	struct matrix_verdict v[32];
	size_t nv = matrix_verdicts(m, v, 32);
	for (size_t i = 0; i < nv; i++) {
		fprintf(f, "%s\n {\"expectation\":\"%s\",\"text\":", i ? "," : "",
		        v[i].expectation);
		bo_json_str(f, v[i].text);
		fputc('}', f);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- Markdown ------------------------------------------------------------------ */

int matrix_write_md(const struct matrix *m, FILE *f)
{
	fprintf(f,
	        "# blackout matrix (%s)\n\nCrash states that broke an invariant / states "
	        "judged; **bold** = some silently. Seed %" PRIu64 ", %.0f s.\n\n",
	        m->mode, m->seed, m->seconds);
	fputs("| stack | spec |", f);
	for (size_t c = 0; c < m->ncols; c++)
		fprintf(f, " %s |", m->cols[c].label);
	fputs("\n|---|---|", f);
	for (size_t c = 0; c < m->ncols; c++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t r = 0; r < m->nrows; r++) {
		fprintf(f, "| %s | `%s` |", m->rows[r].label, m->rows[r].stack);
		for (size_t c = 0; c < m->ncols; c++) {
			const struct matrix_cell *x = matrix_cell(m, r, c);
			char t[64];
			cell_text(x, t, sizeof(t));
			fprintf(f, x->silent ? " **%s** |" : " %s |", t);
		}
		fputc('\n', f);
	}
	fputs("\n## Violations by invariant\n\n| stack | filesystem |", f);
	for (int i = 0; i < MI_N; i++)
		fprintf(f, " %s |", matrix_inv_name((enum matrix_inv)i));
	fputs(" silent | detected |\n|---|---|", f);
	for (int i = 0; i < MI_N + 2; i++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t r = 0; r < m->nrows; r++)
		for (size_t c = 0; c < m->ncols; c++) {
			const struct matrix_cell *x = matrix_cell(m, r, c);
			if (!x->ran || violating(x) == 0)
				continue;
			fprintf(f, "| %s | %s |", m->rows[r].label, m->cols[c].label);
			for (int i = 0; i < MI_N; i++)
				fprintf(f, " %" PRIu64 " |", x->viol[i]);
			fprintf(f, " %" PRIu64 " | %" PRIu64 " |\n", x->silent, x->detected);
		}
	fputs("\n## Verdicts\n\n", f);
	struct matrix_verdict v[32];
	size_t nv = matrix_verdicts(m, v, 32);
	for (size_t i = 0; i < nv; i++)
		fprintf(f, "- **%s**: %s\n", v[i].expectation, v[i].text);
	return ferror(f) ? -EIO : 0;
}

int matrix_write_all(const struct matrix *m, const char *dir, struct bo_err *err)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return bo_errf(err, -errno, "%s: cannot create: %s", dir, strerror(errno));
	static const char *const names[] = {"matrix.json", "matrix.md", "report.html"};
	int (*const fns[])(const struct matrix *, FILE *) = {matrix_write_json, matrix_write_md,
	                                                     matrix_write_html};
	for (int i = 0; i < 3; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		FILE *f = fopen(path, "w");
		if (!f)
			return bo_errf(err, -errno, "%s: %s", path, strerror(errno));
		int rc = fns[i](m, f);
		if (fclose(f) != 0 && rc == 0)
			rc = -EIO;
		if (rc)
			return bo_errf(err, rc, "%s: write failed", path);
	}
	return 0;
}

void matrix_example_free(struct matrix_example *e)
{
	if (!e)
		return;
	free(e->ops);
	free(e->damage);
	free(e);
}

void matrix_free_cells(struct matrix *m)
{
	for (size_t i = 0; i < m->nrows * m->ncols; i++)
		matrix_example_free(m->cells[i].example);
	free(m->cells);
	m->cells = NULL;
	free(m->owned);
	m->owned = NULL;
}
