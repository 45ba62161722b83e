/* matrix_out.c — the expectations table as a person reads it (terminal, Markdown), as a
 * machine reads it (JSON, docs/matrix.md). Running the explorations is matrix_run.c,
 * the verdicts computed from the cells matrix_verdict.c, the HTML report html.c. */
#include <errno.h>
#include <inttypes.h>
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
