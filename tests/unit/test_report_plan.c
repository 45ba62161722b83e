// SPDX-License-Identifier: GPL-2.0-or-later
/* test_report_plan.c — the matrix plan (src/report/matrix_plan.c, matrix_vm.c): which
 * explorations a run makes, how they are dealt to shards (each to exactly one, shares
 * even), what a plan's JSON identity tells apart, and which rows Linux can be given. */
#include <jansson.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/dev.h"
#include "report/matrix_run.h"
#include "tap.h"

static size_t plan(struct matrix_run_opts o, struct matrix *m, struct bo_err *err)
{
	if (matrix_plan_make(&o, m, err) != 0)
		return 0;
	return matrix_plan_of(m)->ntask;
}

/* Every exploration in exactly one of n shards, shares within one of each other. */
static void dealing(const struct matrix *m, unsigned n)
{
	size_t ntask = matrix_plan_of(m)->ntask, count[64] = {0};
	bool ok_range = true;
	for (size_t k = 0; k < ntask; k++) {
		unsigned s = matrix_task_shard(m, k, n);
		ok_range = ok_range && s < n;
		if (s < n)
			count[s]++;
	}
	size_t lo = ntask, hi = 0, sum = 0;
	for (unsigned s = 0; s < n; s++) {
		lo = count[s] < lo ? count[s] : lo;
		hi = count[s] > hi ? count[s] : hi;
		sum += count[s];
	}
	ok(ok_range && sum == ntask && hi - lo <= 1,
	   "%u shards: each exploration in one, %zu to %zu each", n, lo, hi);
}

/* Quick: the write-errors rows run their checkpointing workload alone, and no other row
 * runs it; a plan made again from its own workload list (as a part is read) is the same. */
static void row_workloads(const struct matrix *m)
{
	const struct matrix_plan *p = matrix_plan_of(m);
	size_t own = 0, others = 0, stray = 0;
	for (size_t k = 0; k < p->ntask; k++) {
		const struct matrix_task *t = &p->tasks[k];
		bool ckpt = strcmp(matrix_task_workload(m, t), "checkpoint-append") == 0;
		if (p->spec[t->row]->workloads)
			own += ckpt, stray += !ckpt;
		else
			others += ckpt;
	}
	ok(own == 24 && others == 0 && stray == 0,
	   "quick: checkpoint-append on the 4 write-errors rows x 6 columns only (%zu, %zu, %zu)",
	   own, others, stray);
	char list[512] = "";
	for (size_t i = 0; i < m->nworkloads; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "",
		         m->workloads[i]);
	struct matrix again;
	struct bo_err err = {{0}};
	size_t n = plan((struct matrix_run_opts){.seed = 1, .max_states = 300, .workloads = list},
	                &again, &err);
	json_t *a = matrix_plan_json(m), *b = matrix_plan_json(&again);
	ok(n == p->ntask && json_equal(a, b), "re-planned from its list (%s): the same plan", list);
	json_decref(a), json_decref(b);
	matrix_free_cells(&again);
}

int main(void)
{
	struct bo_err err = {{0}};
	struct matrix m, f, v;
	is_int(plan((struct matrix_run_opts){.seed = 1, .max_states = 300}, &m, &err), 426,
	       "quick: 10 rows x 6 columns x 6 workloads, 4 write-errors rows x 6 x their one, "
	       "6 rows x 7 quick cells x 6");
	is_int(
	    plan((struct matrix_run_opts){.full = true, .seed = 1, .max_states = 3000}, &f, &err),
	    2346, "full: 23 rows x 6 columns x 17 workloads");
	is_int(
	    plan(
	        (struct matrix_run_opts){.seed = 1, .max_states = 300, .vm = true, .vm_states = 20},
	        &v, &err),
	    426 + 48 + 5 + 2,
	    "--vm: 4 Linux columns on the 12 quick rows that can serve a guest, Linux md on the "
	    "5 quick RAID rows it has a counterpart for, dm-integrity on the 2 quick cheap flash "
	    "and torn rows");
	const struct matrix_plan *vp = matrix_plan_of(&v);
	ok(v.cols[vp->tasks[0].col].vm && vp->deal[0] < 55,
	   "real-kernel runs come first and are dealt first");
	for (unsigned n = 1; n <= 7; n += 2)
		dealing(&m, n);
	dealing(&f, 64);
	dealing(&v, 5);

	/* the plan's identity: the same options plan the same, another seed does not */
	struct matrix m2, m3;
	plan((struct matrix_run_opts){.seed = 1, .max_states = 300}, &m2, &err);
	plan((struct matrix_run_opts){.seed = 2, .max_states = 300}, &m3, &err);
	json_t *a = matrix_plan_json(&m), *b = matrix_plan_json(&m2), *c = matrix_plan_json(&m3);
	ok(json_equal(a, b) && !json_equal(a, c),
	   "equal plans have equal JSON; a seed tells them apart");
	json_decref(a), json_decref(b), json_decref(c);
	ok(memcmp(matrix_plan_of(&m)->deal, matrix_plan_of(&m2)->deal, 426 * sizeof(uint32_t)) == 0,
	   "planned twice, dealt the same");
	row_workloads(&m);

	/* refusals name what is wrong */
	struct matrix x;
	ok(plan((struct matrix_run_opts){.rows = "cache,no-such"}, &x, &err) == 0 &&
	       strstr(err.msg, "unknown row 'no-such'"),
	   "an unknown row is refused by name: %s", err.msg);
	ok(plan((struct matrix_run_opts){.cols = "linux-xfs"}, &x, &err) == 0 &&
	       strstr(err.msg, "unknown column 'linux-xfs'"),
	   "a Linux column without --vm is refused: %s", err.msg);
	ok(plan((struct matrix_run_opts){.workloads = "append-fsync,nope"}, &x, &err) == 0 &&
	       strstr(err.msg, "unknown workload 'nope'"),
	   "an unknown workload is refused: %s", err.msg);

	/* every row Linux gets holds a 64 MiB filesystem; the others say why not */
	size_t served = 0, refused = 0;
	bool big = true, why = true;
	const struct matrix_plan *fp = matrix_plan_of(&f);
	for (size_t r = 0; r < f.nrows; r++) {
		char reason[128] = "";
		const char *s = matrix_vm_stack(fp->spec[r], reason, sizeof(reason));
		if (!s) {
			refused++;
			why = why && reason[0];
			continue;
		}
		served++;
		struct bdev *d;
		if (dev_stack_open_text(s, NULL, &d, &err) != 0) {
			big = false;
			continue;
		}
		big = big && blk_size_bytes(d) >= MATRIX_VM_FS_BYTES;
		blk_close(d);
	}
	ok(served == 14 && big, "14 rows' stacks, media grown, hold 64 MiB (%zu served)", served);
	ok(refused == 9 && why,
	   "the verify rows, the armed-fault rows and three of issue 24's rows (no guest-sized "
	   "stack yet) say why not (%zu)",
	   refused);
	struct matrix_rowspec none = {.row = {.id = "x", .key = MR_N}};
	char reason[128] = "";
	ok(!matrix_vm_stack(&none, reason, sizeof(reason)) && strstr(reason, "no stack"),
	   "a row with no guest-sized stack says so: %s", reason);

	matrix_free_cells(&m), matrix_free_cells(&f), matrix_free_cells(&v);
	matrix_free_cells(&m2), matrix_free_cells(&m3);
	return tap_done();
}
