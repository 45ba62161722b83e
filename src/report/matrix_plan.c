// SPDX-License-Identifier: GPL-2.0-or-later
/* matrix_plan.c — what a matrix run explores: the row (device stack) and column
 * (filesystem) tables, the subset a run picks, every exploration that fills a cell, and
 * which shard runs which. The plan is a function of the options alone, so every shard
 * and the merge compute the same one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/dev.h"
#include "blackout/json.h"
#include "blackout/matrix.h"
#include "report/matrix_run.h"

/* The stacks. Small media keep each crash state cheap; 1 KiB filesystem blocks over
 * 512-byte sectors, so a torn write can split a block; 4 KiB RAID chunks, so small
 * files share stripes with their neighbours as they do on a real array. `needs` names
 * the model that must be registered for the row to appear. `arm` is a fault rule armed
 * once the set-up is on the media; `verify` runs ext3 with verify=fast (fsck --fast at
 * mount), a row kept only where it changes what the user is told; `budget_div`
 * divides the budget of a row whose every 4 KiB write costs a 4 MiB erase-block
 * rewrite, so --full keeps its time (and of the RAID5-over-caches rows, whose member
 * caches multiply the outcomes of every cut: half the budget still shows hundreds of
 * failing states, and keeps --quick within its minute). `cost` is what one exploration
 * of the row costs, relative to the others (and a column's to the other columns'): the seconds the quick
 * matrix measured per exploration, in 20 ms units (guessed for the full-only rows);
 * only the dealing of explorations to shards reads it. `quick_cols`: the columns --quick
 * runs of a row that answers one verdict (the others are n/a there, --full runs them). */
#define R5(extra) "raid5(chunk=4k" extra ") > [disk > mem(size=6M)] x4"
#define DM        "disk > mem(size=6M)"
#define QB1       (1u << MC_EXT3_ORDERED_B1)
/* RAID5 over members with a 64 KiB write cache each */
#define R5C(extra, flush)                                                                          \
	"raid5(chunk=4k" extra ") > [cache(size=64k,flush=" flush ") > disk > mem(size=6M)] x4"
static const struct matrix_rowspec all_rows[] = {
    {{"nocache", "no write cache", "disk(tear=none) > mem(size=16M)",
      "baseline: atomic sectors, every completed write durable", MR_NOCACHE},
     "disk",
     true,
     NULL,
     false,
     .cost = 1},
    {{"cache", "write cache, flush honoured",
      "cache(size=256k,flush=honor) > disk(tear=none) > mem(size=16M)",
      "WRITE-CACHE: barriers needed and sufficient", MR_CACHE},
     "cache",
     true,
     NULL,
     false,
     .cost = 9},
    {{"cache-lying", "write cache ignoring flush",
      "cache(size=256k,flush=ignore) > disk(tear=none) > mem(size=16M)",
      "WRITE-CACHE: a drive that lies about flushes", MR_CACHE_LYING},
     "cache",
     true,
     NULL,
     false,
     .cost = 6},
    {{"torn", "torn sectors", "disk(tear=byte) > mem(size=16M)",
      "ATOMIC-SECTORS violated: an interrupted write tears sectors", MR_TORN},
     "disk",
     true,
     NULL,
     false,
     .cost = 4},
    {{"torn-unreadable", "torn sectors unreadable",
      "disk(tear=byte,torn=unreadable) > mem(size=16M)",
      "ATOMIC-SECTORS violated, as a drive's ECC reports it: a torn sector reads as a media error",
      MR_TORN_UNREADABLE},
     "disk",
     true,
     NULL,
     false,
     .cost = 1,
     .quick_cols = QB1},
    {{"garbage", "garbage at power loss", "disk(tear=none,garbage=true) > mem(size=16M)",
      "the patch's \"disks may write garbage during powerfail\": the write in flight lands as "
      "garbage",
      MR_GARBAGE},
     "disk",
     true,
     NULL,
     false,
     .cost = 1,
     .quick_cols = QB1 | (1u << MC_EXT3_JOURNAL_B1)},
    {{"flash-cheap-128k", "cheap flash, 128 KiB EB", "flash(ftl=cheap,eb=128k,size=16M)",
      "ATOMIC-SECTORS violated: erase-block read-modify-write destroys bystanders",
      MR_FLASH_CHEAP_128K},
     "flash",
     true,
     NULL,
     false,
     .cost = 23},
    {{"flash-cheap-128k-verify", "  + verify at mount", "flash(ftl=cheap,eb=128k,size=16M)",
      "JOURNAL-HIDES-DAMAGE: the same, with fsck --fast after journal replay",
      MR_FLASH_CHEAP_128K_VERIFY},
     "flash",
     true,
     NULL,
     true,
     .base = MR_FLASH_CHEAP_128K,
     .cost = 21},
    {{"flash-cheap-4m", "cheap flash, 4 MiB EB", "flash(ftl=cheap,eb=4M,size=16M)",
      "ATOMIC-SECTORS violated, with the largest erase blocks", MR_FLASH_CHEAP_4M},
     "flash",
     false,
     NULL,
     false,
     10,
     .cost = 60},
    {{"integrity-cheap-128k", "data checksums, cheap flash",
      "integrity(mode=journal) > flash(ftl=cheap,eb=128k,size=16M)",
      "JOURNAL-HIDES-DAMAGE answered by data checksums: dm-integrity over cheap flash",
      MR_INTEGRITY_CHEAP_128K},
     "integrity",
     true,
     NULL,
     false,
     .cost = 10,
     .quick_cols = QB1},
    {{"flash-careful", "careful flash", "flash(ftl=careful,eb=128k,size=16M)",
      "page-mapped FTL with an atomic map commit: no collateral damage", MR_FLASH_CAREFUL},
     "flash",
     true,
     NULL,
     false,
     .cost = 2},
    {{"raid5", "RAID5, healthy", R5(""), "RAID5 with every member: parity covers a torn stripe",
      MR_RAID5},
     "raid5",
     true,
     NULL,
     false,
     .cost = 31},
    {{"raid5-degraded", "RAID5, one missing", R5(",missing=1"),
      "DEGRADED-RAID: the write hole reconstructs data nobody wrote", MR_RAID5_DEGRADED},
     "raid5",
     true,
     NULL,
     false,
     .cost = 2},
    {{"raid5-degraded-verify", "  + verify at mount", R5(",missing=1"),
      "the write hole's metadata damage, with fsck --fast after journal replay",
      MR_RAID5_DEGRADED_VERIFY},
     "raid5",
     false,
     NULL,
     true,
     .base = MR_RAID5_DEGRADED,
     .cost = 3},
    {{"raid5-degraded-journal", "RAID5, missing, journal",
      "raid5(chunk=4k,missing=1,journal=true) > [" DM " ; " DM " ; " DM " ; " DM " ; mem(size=4M)]",
      "DEGRADED-RAID mitigated: md's write journal closes the hole", MR_RAID5_DEGRADED_JOURNAL},
     "raid5",
     true,
     NULL,
     false,
     .cost = 5},
    {{"raid5-cache", "RAID5 over caches", R5C("", "honor"),
      "WRITE-CACHE on RAID5: members with write caches that honour flushes", MR_RAID5_CACHE},
     "raid5",
     true,
     NULL,
     false,
     .budget_div = 2,
     .cost = 9,
     .quick_cols = QB1},
    {{"raid5-cache-lying", "RAID5 over lying caches", R5C("", "ignore"),
      "WRITE-CACHE on RAID5: members whose caches ignore flushes", MR_RAID5_CACHE_LYING},
     "raid5",
     true,
     NULL,
     false,
     .budget_div = 2,
     .cost = 9,
     .quick_cols = QB1},
    {{"raid5-nobarrier", "RAID5 dropping flushes", R5C(",flush=drop", "honor"),
      "WRITE-CACHE on RAID5 without barrier support: md drops flushes, members keep caching",
      MR_RAID5_NOBARRIER},
     "raid5",
     true,
     NULL,
     false,
     .budget_div = 2,
     .cost = 9,
     .quick_cols = QB1},
    {{"raid6-2missing", "RAID6, two missing", "raid6(chunk=4k,missing=1:2) > [" DM "] x5",
      "DEGRADED-RAID: RAID6 with no redundancy left", MR_RAID6_2MISSING},
     "raid6",
     false,
     NULL,
     false,
     .cost = 4},
/* NO-WRITE-ERRORS as the patch states it: the failures hit home locations after
     * commit. HOME is group 0's descriptors, bitmaps and inode table (blocks 2-579 of
     * the 16 MiB filesystem with 1 KiB blocks; not the superblock), which ext3 writes
     * only when it checkpoints what a returned fsync committed; checkpoint-append
     * makes the run checkpoint. The rules end at the cut, a bad sector's unreadability
     * does not (docs/models/fault.md); ext3 columns mount errors=continue with the
     * checkpoint policy named (docs/journal.md). */
#define HOME "lba=4-1159"
#define FE   "fault > disk(tear=none) > mem(size=16M)"
    {{"write-errors", "home write errors", FE,
      "NO-WRITE-ERRORS: checkpoint writes fail after fsync returned; the journal aborts",
      MR_WRITE_ERRORS},
     "fault",
     true,
     "write-error " HOME,
     false,
     .cost = 1,
     .fs_extra = ",errors=continue,checkpoint_errors=abort",
     .workloads = "checkpoint-append"},
    {{"write-errors-2009", "  + 2009 checkpoint", FE,
      "NO-WRITE-ERRORS as in 2009: the checkpoint ignores the error and frees the log",
      MR_WRITE_ERRORS_2009},
     "fault",
     true,
     "write-error " HOME,
     false,
     .cost = 1,
     .fs_extra = ",errors=continue,checkpoint_errors=ignore",
     .workloads = "checkpoint-append"},
    {{"bad-sectors-2009", "  + sectors stay bad", FE,
      "NO-WRITE-ERRORS as in 2009, the failed sectors unreadable until rewritten",
      MR_BAD_SECTORS_2009},
     "fault",
     true,
     "write-error " HOME " sticky",
     false,
     .cost = 1,
     .fs_extra = ",errors=continue,checkpoint_errors=ignore",
     .workloads = "checkpoint-append"},
    {{"lost-writes", "home writes lost", FE,
      "NO-WRITE-ERRORS: checkpoint writes acknowledged, never stored: no error to act on",
      MR_LOST_WRITES},
     "fault",
     true,
     "lost-write " HOME,
     false,
     .cost = 1,
     .fs_extra = ",errors=continue,checkpoint_errors=abort",
     .workloads = "checkpoint-append"},
#undef HOME
#undef FE
};

static const struct matrix_colspec all_cols[] = {
    {{"ext2", "ext2", "ext2", "(no journal)", MC_EXT2}, "ext2", 1},
    {{"ext3-ordered-b0", "ext3 ordered b=0", "ext3", "data=ordered,barrier=0", MC_EXT3_ORDERED_B0},
     "ext3,data=ordered,barrier=0",
     2},
    {{"ext3-ordered-b1", "ext3 ordered b=1", "ext3", "data=ordered,barrier=1", MC_EXT3_ORDERED_B1},
     "ext3,data=ordered,barrier=1",
     1},
    {{"ext3-journal-b1", "ext3 journal b=1", "ext3", "data=journal,barrier=1", MC_EXT3_JOURNAL_B1},
     "ext3,data=journal,barrier=1",
     1},
    {{"ext3-writeback-b1", "ext3 writeback b=1", "ext3", "data=writeback,barrier=1",
      MC_EXT3_WRITEBACK_B1},
     "ext3,data=writeback,barrier=1",
     2},
    {{"ext3-csum", "ext3 + csum", "ext3,metadata_csum", "data=ordered,barrier=1", MC_EXT3_CSUM},
     "ext3,data=ordered,barrier=1,metadata_csum",
     4},
};

static const char *const quick_workloads[] = {"append-fsync",       "replace-dirsync",
                                              "overwrite-fsync",    "create-many-sync",
                                              "reuse-after-delete", "overwrite-stripes"};

/* vmtest's own workloads (docs/vmtest.md), besides the explorer's built-ins */
static const char *const vm_own_workloads[] = {"create", "append", "mixed", "overwrite"};

#define NROWS (sizeof(all_rows) / sizeof(all_rows[0]))
#define NCOLS (sizeof(all_cols) / sizeof(all_cols[0]))

/* The next comma-separated item of *p into buf; false at the end. */
static bool next_item(const char **p, char *buf, size_t len)
{
	while (**p == ',')
		(*p)++;
	if (!**p)
		return false;
	size_t n = strcspn(*p, ",");
	snprintf(buf, len, "%.*s", (int)n, *p);
	*p += n;
	return true;
}

static bool listed(const char *list, const char *id)
{
	char item[96];
	while (next_item(&list, item, sizeof(item)))
		if (strcmp(item, id) == 0)
			return true;
	return false;
}

/* Every id of a --rows/--columns list must name something this build can run. */
static int check_ids(const char *list, const char *what, bool (*known)(const char *, bool), bool vm,
                     struct bo_err *err)
{
	char item[96];
	while (list && next_item(&list, item, sizeof(item)))
		if (!known(item, vm))
			return bo_errf(err, -EINVAL,
			               "unknown %s '%s' (blackout matrix --help lists them)", what,
			               item);
	return 0;
}

static bool row_known(const char *id, bool vm)
{
	(void)vm;
	for (size_t i = 0; i < NROWS; i++)
		if (strcmp(all_rows[i].row.id, id) == 0)
			return dev_model_find(all_rows[i].needs) != NULL;
	return false;
}

static bool col_known(const char *id, bool vm)
{
	for (size_t i = 0; i < NCOLS; i++)
		if (strcmp(all_cols[i].col.id, id) == 0)
			return true;
	for (size_t i = 0; vm && i < matrix_vm_ncols(); i++)
		if (strcmp(matrix_vm_col(i)->col.id, id) == 0)
			return true;
	return false;
}

/* A --workloads or --vm-workloads list into the plan's list (static names). */
static int pick_workloads(const char *list, bool vm, const char **out, size_t *n,
                          struct bo_err *err)
{
	char item[96];
	*n = 0;
	while (next_item(&list, item, sizeof(item))) {
		const struct crash_builtin *b = crash_builtin_find(item);
		const char *name = b ? b->name : NULL;
		for (size_t i = 0; vm && !name && i < 4; i++)
			if (strcmp(item, vm_own_workloads[i]) == 0)
				name = vm_own_workloads[i];
		if (!name)
			return bo_errf(err, -EINVAL,
			               "unknown %sworkload '%s' (blackout workloads lists them)",
			               vm ? "real-kernel " : "", item);
		if (*n == MATRIX_MAX_WLS)
			return bo_errf(err, -EINVAL, "more than %d workloads", MATRIX_MAX_WLS);
		out[(*n)++] = name;
	}
	return *n ? 0 : bo_errf(err, -EINVAL, "an empty workload list");
}

/* The quick plan's own workloads of the rows that have some (the write-errors rows'
 * checkpointing run), after the quick list. */
static int add_row_workloads(struct matrix_plan *p, size_t nr, size_t *nw, struct bo_err *err)
{
	for (size_t r = 0; r < nr; r++) {
		const char *list = p->spec[r]->workloads;
		char item[96];
		while (list && next_item(&list, item, sizeof(item))) {
			const struct crash_builtin *b = crash_builtin_find(item);
			bool have = false;
			for (size_t i = 0; b && i < *nw; i++)
				have = have || strcmp(p->wls[i], b->name) == 0;
			if (!b || (!have && *nw == MATRIX_MAX_WLS))
				return bo_errf(err, -EINVAL, "row %s: workload '%s' %s",
				               p->spec[r]->row.id, item,
				               b ? "is one too many" : "is not a built-in");
			if (!have)
				p->wls[(*nw)++] = b->name;
		}
	}
	return 0;
}

/* Rows, columns and workloads of this run: the mode's, or the lists given. */
static int pick_tables(const struct matrix_run_opts *o, struct matrix_plan *p, struct matrix *m,
                       struct bo_err *err)
{
	int rc;
	if ((rc = check_ids(o->rows, "row", row_known, o->vm, err)) ||
	    (rc = check_ids(o->cols, "column", col_known, o->vm, err)))
		return rc;
	size_t nr = 0, nc = 0;
	for (size_t i = 0; i < NROWS; i++)
		if (dev_model_find(all_rows[i].needs) &&
		    (o->rows ? listed(o->rows, all_rows[i].row.id)
		             : o->full || all_rows[i].quick)) {
			p->spec[nr] = &all_rows[i];
			p->rows[nr++] = all_rows[i].row;
		}
	size_t nvm = o->vm ? matrix_vm_ncols() : 0;
	for (size_t i = 0; i < NCOLS + nvm && nc < MATRIX_MAX_COLS; i++) {
		const struct matrix_colspec *c =
		    i < NCOLS ? &all_cols[i] : matrix_vm_col(i - NCOLS);
		if (!o->cols || listed(o->cols, c->col.id)) {
			p->cspec[nc] = c;
			p->cols[nc++] = c->col;
		}
	}
	if (!nr || !nc)
		return bo_errf(err, -EINVAL, "no %s to run", nr ? "column" : "row");
	size_t nw = 0;
	if (o->workloads) {
		if ((rc = pick_workloads(o->workloads, false, p->wls, &nw, err)))
			return rc;
	} else if (o->full) {
		for (size_t i = 0; i < crash_builtin_count() && nw < MATRIX_MAX_WLS; i++)
			p->wls[nw++] = crash_builtin_get(i)->name;
	} else {
		for (size_t i = 0; i < sizeof(quick_workloads) / sizeof(quick_workloads[0]); i++)
			p->wls[nw++] = quick_workloads[i];
		if ((rc = add_row_workloads(p, nr, &nw, err)))
			return rc;
	}
	if (o->vm && (rc = pick_workloads(o->vm_workloads ? o->vm_workloads : "append-fsync", true,
	                                  p->vm_wls, &p->nvm_wls, err)))
		return rc;
	*m = (struct matrix){.mode = o->full ? "full" : "quick",
	                     .seed = o->seed,
	                     .nrows = nr,
	                     .ncols = nc,
	                     .rows = p->rows,
	                     .cols = p->cols,
	                     .nworkloads = nw,
	                     .workloads = p->wls,
	                     .owned = p};
	return 0;
}

static bool quick_listed(const char *w)
{
	for (size_t i = 0; i < sizeof(quick_workloads) / sizeof(quick_workloads[0]); i++)
		if (strcmp(quick_workloads[i], w) == 0)
			return true;
	return false;
}

/* Whether row r runs workload w. --full: every row every workload. Quick: a row with
 * workloads of its own runs those of the plan's (all of them when it has none there);
 * a workload only such rows bring is theirs alone. A function of the plan alone, so a
 * part re-planned from its workload list plans the same explorations. */
static bool row_runs(const struct matrix_plan *p, const struct matrix *m, size_t r, const char *w)
{
	if (p->opts.full)
		return true;
	const char *own = p->spec[r]->workloads;
	if (own) {
		for (size_t i = 0; i < m->nworkloads; i++)
			if (listed(own, m->workloads[i]))
				return listed(own, w);
		return true;
	}
	if (quick_listed(w))
		return true;
	for (size_t k = 0; k < m->nrows; k++)
		if (p->spec[k]->workloads && listed(p->spec[k]->workloads, w))
			return false;
	return true;
}

struct dealt {
	uint64_t cost;
	uint32_t k;
};

static int by_cost(const void *a, const void *b)
{
	const struct dealt *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return (x->k > y->k) - (x->k < y->k);
}

/* The order explorations are dealt to shards: costliest first (the costs are the
 * tables' estimates, the same in every process), ties in plan order. Dealt back and
 * forth along it, every shard gets about the same share of each cost class, which
 * measured within 3% of the mean for 2 and 3 shards, 15% for 8, on the quick matrix. */
static int deal_tasks(struct matrix_plan *p)
{
	struct dealt *order = malloc((p->ntask ? p->ntask : 1) * sizeof(*order));
	p->deal = malloc((p->ntask ? p->ntask : 1) * sizeof(*p->deal));
	if (!order || !p->deal) {
		free(order);
		return -ENOMEM;
	}
	for (size_t k = 0; k < p->ntask; k++) {
		const struct matrix_task *t = &p->tasks[k];
		order[k] = (struct dealt){(uint64_t)p->spec[t->row]->cost * p->cspec[t->col]->cost,
		                          (uint32_t)k};
	}
	qsort(order, p->ntask, sizeof(*order), by_cost);
	for (size_t i = 0; i < p->ntask; i++)
		p->deal[order[i].k] = (uint32_t)i;
	free(order);
	return 0;
}

/* The explorations, costliest first: a real-kernel one boots qemu again and again, and
 * among the explorer's the larger workloads come last in the built-in list. Dealt to
 * shards in this order, each shard gets its share of every kind. */
static int plan_tasks(struct matrix_plan *p, struct matrix *m)
{
	size_t nr = m->nrows, nc = m->ncols, nw = m->nworkloads, cap = 0;
	for (size_t c = 0; c < nc; c++)
		cap += nr * (p->cols[c].vm ? p->nvm_wls : nw);
	p->tasks = calloc(cap ? cap : 1, sizeof(*p->tasks));
	p->na = calloc(nr * nc, sizeof(*p->na));
	if (!p->tasks || !p->na)
		return -ENOMEM;
	bool served[MATRIX_MAX_ROWS] = {false};
	for (size_t r = 0; r < nr; r++) {
		char why[sizeof(*p->na)];
		served[r] = matrix_vm_stack(p->spec[r], why, sizeof(why)) != NULL;
		for (size_t c = 0; c < nc && !served[r]; c++)
			if (p->cols[c].vm)
				snprintf(p->na[r * nc + c], sizeof(*p->na), "%s", why);
		struct matrix_vm_md md;
		for (size_t c = 0; c < nc && served[r]; c++)
			if ((p->cols[c].key == MC_LINUX_MD_EXT4 &&
			     matrix_vm_md_of(p->spec[r], &md, why, sizeof(why))) ||
			    (p->cols[c].key == MC_LINUX_DMINT_EXT4 &&
			     !matrix_vm_dmint_on(p->spec[r], why, sizeof(why))))
				snprintf(p->na[r * nc + c], sizeof(*p->na), "%s", why);
	}
	for (size_t r = 0; r < nr; r++)
		for (size_t c = 0; c < nc && !p->opts.full && p->spec[r]->quick_cols; c++)
			if (!p->cols[c].vm && !(p->spec[r]->quick_cols >> p->cols[c].key & 1))
				snprintf(p->na[r * nc + c], sizeof(*p->na),
				         "the quick run leaves this cell out; --full runs it");
	size_t k = 0;
	for (size_t w = 0; w < p->nvm_wls; w++)
		for (size_t r = 0; r < nr; r++)
			for (size_t c = 0; c < nc; c++)
				if (p->cols[c].vm && served[r] && !p->na[r * nc + c][0])
					p->tasks[k++] = (struct matrix_task){
					    (uint32_t)r, (uint32_t)c, (uint32_t)w};
	for (size_t w = nw; w-- > 0;)
		for (size_t r = 0; r < nr; r++)
			for (size_t c = 0; c < nc; c++)
				if (!p->cols[c].vm && !p->na[r * nc + c][0] &&
				    row_runs(p, m, r, m->workloads[w]))
					p->tasks[k++] = (struct matrix_task){
					    (uint32_t)r, (uint32_t)c, (uint32_t)w};
	p->ntask = k;
	return deal_tasks(p);
}

int matrix_plan_make(const struct matrix_run_opts *o, struct matrix *m, struct bo_err *err)
{
	struct matrix_plan *p = calloc(1, sizeof(*p));
	if (!p)
		return bo_errf(err, -ENOMEM, "out of memory");
	p->opts = *o;
	p->opts.rows = p->opts.cols = p->opts.workloads = p->opts.vm_workloads = NULL;
	int rc = pick_tables(o, p, m, err);
	if (rc == 0 && (rc = plan_tasks(p, m)) < 0)
		bo_errf(err, rc, "out of memory");
	if (rc == 0)
		m->cells = calloc(m->nrows * m->ncols, sizeof(*m->cells));
	if (rc == 0 && !m->cells)
		rc = bo_errf(err, -ENOMEM, "out of memory");
	if (rc) {
		free(p->tasks);
		free(p->deal);
		free(p->na);
		free(p);
		m->owned = NULL;
		m->cells = NULL;
		m->nrows = 0;
		return rc;
	}
	return 0;
}

/* Back and forth along the dealing order (0 1 2 2 1 0 0 1 ...), so no shard gets
 * every round's costliest one. */
unsigned matrix_task_shard(const struct matrix *m, size_t k, unsigned nshards)
{
	if (nshards <= 1)
		return 0;
	size_t pos = matrix_plan_of(m)->deal[k], round = pos / nshards, i = pos % nshards;
	return (unsigned)(round % 2 ? nshards - 1 - i : i);
}

const char *matrix_task_workload(const struct matrix *m, const struct matrix_task *t)
{
	const struct matrix_plan *p = matrix_plan_of(m);
	return m->cols[t->col].vm ? p->vm_wls[t->wl] : m->workloads[t->wl];
}

void *matrix_plan_json(const struct matrix *m)
{
	const struct matrix_plan *p = matrix_plan_of(m);
	json_t *rows = json_array(), *cols = json_array(), *wls = json_array(), *vw = json_array();
	for (size_t i = 0; i < m->nrows; i++)
		json_array_append_new(rows, json_string(m->rows[i].id));
	for (size_t i = 0; i < m->ncols; i++)
		json_array_append_new(cols, json_string(m->cols[i].id));
	for (size_t i = 0; i < m->nworkloads; i++)
		json_array_append_new(wls, json_string(m->workloads[i]));
	for (size_t i = 0; i < p->nvm_wls; i++)
		json_array_append_new(vw, json_string(p->vm_wls[i]));
	json_t *vm = p->opts.vm ? json_pack("{s:I,s:o}", "states", (json_int_t)p->opts.vm_states,
	                                    "workloads", vw)
	                        : (json_decref(vw), json_null());
	return json_pack("{s:s,s:I,s:I,s:o,s:o,s:o,s:o,s:I}", "mode", m->mode, "seed",
	                 (json_int_t)m->seed, "max_states", (json_int_t)p->opts.max_states, "rows",
	                 rows, "columns", cols, "workloads", wls, "vm", vm, "explorations",
	                 (json_int_t)p->ntask);
}

bool matrix_example_better(const struct matrix_example *a, uint32_t awl,
                           const struct matrix_example *b, uint32_t bwl)
{
	if (!b)
		return a != NULL;
	if (!a)
		return false;
	if (a->silent != b->silent)
		return a->silent;
	return awl < bwl;
}

struct matrix_example *matrix_example_copy(const struct matrix_example *e)
{
	struct matrix_example *x = malloc(sizeof(*x));
	if (!x)
		return NULL;
	*x = *e;
	x->ops = e->nops ? malloc(e->nops * sizeof(*e->ops)) : NULL;
	x->damage = e->ndamage ? malloc(e->ndamage * sizeof(*e->damage)) : NULL;
	if ((e->nops && !x->ops) || (e->ndamage && !x->damage)) {
		free(x->ops);
		free(x->damage);
		free(x);
		return NULL;
	}
	if (e->nops)
		memcpy(x->ops, e->ops, e->nops * sizeof(*e->ops));
	if (e->ndamage)
		memcpy(x->damage, e->damage, e->ndamage * sizeof(*e->damage));
	return x;
}

int matrix_plan_check(const struct matrix_run_opts *o, struct bo_err *err)
{
	struct matrix m = {0};
	int rc = matrix_plan_make(o, &m, err);
	if (rc == 0)
		matrix_free_cells(&m);
	return rc;
}
