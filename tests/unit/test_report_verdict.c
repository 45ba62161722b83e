// SPDX-License-Identifier: GPL-2.0-or-later
/* test_report_verdict.c — the matrix verdict rules (src/report/matrix_verdict.c): each
 * rule reads its cells by typed key whatever the rows are called, speaks only when its
 * cells ran, in table order, and words zero and non-zero counts as sentences; each
 * verdict's result for scripts, and each cell's fate for the report's opening. */
#include <string.h>

#include "blackout/matrix.h"
#include "tap.h"

static const struct matrix_col cols[] = {
    {"c-ext2", "ext2", "ext2", "", MC_EXT2},
    {"c-b0", "b0", "ext3", "barrier=0", MC_EXT3_ORDERED_B0},
    {"c-b1", "b1", "ext3", "barrier=1", MC_EXT3_ORDERED_B1},
};
/* ids unlike the runner's: the rules must find cells by key, not by these strings */
static const struct matrix_row rows[] = {
    {"row-a", "no cache", "", "", MR_NOCACHE},
    {"row-b", "torn", "", "", MR_TORN},
    {"row-c", "write errors", "", "", MR_WRITE_ERRORS},
    {"row-d", "raid5 journal", "", "", MR_RAID5_DEGRADED_JOURNAL},
    {"row-e", "raid5 degraded", "", "", MR_RAID5_DEGRADED},
    {"row-f", "raid5 caches", "", "", MR_RAID5_CACHE},
    {"row-g", "raid5 lying caches", "", "", MR_RAID5_CACHE_LYING},
    {"row-h", "raid5 no barriers", "", "", MR_RAID5_NOBARRIER},
    {"row-i", "garbage", "", "", MR_GARBAGE},
    {"row-j", "unreadable", "", "", MR_TORN_UNREADABLE},
    {"row-k", "cheap flash", "", "", MR_FLASH_CHEAP_128K},
    {"row-l", "integrity", "", "", MR_INTEGRITY_CHEAP_128K},
};
#define NR (sizeof(rows) / sizeof(rows[0]))
#define NC (sizeof(cols) / sizeof(cols[0]))

static struct matrix_cell cells[NR * NC];

static void set(size_t r, size_t c, uint64_t states, uint64_t ok, uint64_t silent)
{
	struct matrix_cell *x = &cells[r * NC + c];
	*x = (struct matrix_cell){.ran = true,
	                          .states = states,
	                          .ok = ok,
	                          .silent = silent,
	                          .exhaustive = true,
	                          .coverage = 1};
	x->detected = states - ok - silent;
}

static const char *find(const struct matrix_verdict *v, size_t n, const char *exp,
                        const char *start)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].expectation, exp) == 0 &&
		    strncmp(v[i].text, start, strlen(start)) == 0)
			return v[i].text;
	return NULL;
}

/* NO-WRITE-ERRORS: both checkpoint policies side by side; a detected state (a refused
 * mount) is never told as one that kept its synced data. */
static void write_errors(void)
{
	static const struct matrix_col wc[] = {
	    {"b1", "b1", "ext3", "barrier=1", MC_EXT3_ORDERED_B1}};
	static const struct matrix_row wr[] = {{"abort", "abort", "", "", MR_WRITE_ERRORS},
	                                       {"2009", "2009", "", "", MR_WRITE_ERRORS_2009},
	                                       {"bad", "bad", "", "", MR_BAD_SECTORS_2009},
	                                       {"lost", "lost", "", "", MR_LOST_WRITES}};
	struct matrix_cell c[4] = {
	    {.ran = true, .states = 25, .ok = 22, .detected = 3, .write_errors = 1},
	    {.ran = true,
	     .states = 60,
	     .ok = 25,
	     .silent = 35,
	     .silent_lost = 35,
	     .write_errors = 4},
	    {.ran = true, .states = 60, .ok = 22, .detected = 38, .write_errors = 4},
	    {.ran = true, .states = 64, .ok = 29, .silent = 35, .silent_lost = 35}};
	for (int i = 0; i < 4; i++) /* the wording alone: "sampled" is tested below */
		c[i].exhaustive = true, c[i].coverage = 1;
	struct matrix m = {
	    .mode = "quick", .nrows = 4, .ncols = 1, .rows = wr, .cols = wc, .cells = c};
	struct matrix_verdict v[8];
	size_t n = matrix_verdicts(&m, v, 8);
	is_str(find(v, n, "NO-WRITE-ERRORS", "Home writes failing"),
	       "Home writes failing after fsync returned (checkpoint writes of committed metadata; "
	       "ext3 ordered, barrier=1, errors=continue): under the 2009 checkpoint "
	       "(checkpoint_errors=ignore) 4 failed and it lost synced data silently in 35 of 60 "
	       "states; under today's abort 1 failed and it lost no synced data silently (25 "
	       "states); 3 detected (mount refused or a read failed: durability unknown) — the "
	       "abort keeps the transaction in the log and tells.",
	       "write errors: the 2009 checkpoint loses silently, the abort's refused mounts are "
	       "unknown, not kept");
	is_str(find(v, n, "NO-WRITE-ERRORS", "Home sectors"),
	       "Home sectors left unreadable by a failed checkpoint write, across the cut (2009 "
	       "checkpoint, ext3 ordered, barrier=1): 4 writes failed and the filesystem lost no "
	       "synced data silently (60 states); 38 detected (mount refused or a read failed: "
	       "durability unknown) — the loss is seen only because the old copy cannot be read "
	       "either.",
	       "sectors that stay bad: detected, durability unknown");
	is_str(
	    find(v, n, "NO-WRITE-ERRORS", "Home writes acknowledged"),
	    "Home writes acknowledged but never stored (lost writes at checkpoint, ext3 ordered, "
	    "barrier=1): the filesystem lost synced data silently in 35 of 64 states — no error "
	    "reached it, so no error policy can help.",
	    "lost writes: silent whatever the policy");
	/* every refused mount, nothing silent: still never "kept synced data" */
	c[0] = (struct matrix_cell){.ran = true, .states = 25, .ok = 0, .detected = 25};
	n = matrix_verdicts(&m, v, 8);
	const char *t = find(v, n, "NO-WRITE-ERRORS", "Home writes failing");
	ok(t && strstr(t, "25 detected (mount refused or a read failed: durability unknown)") &&
	       !strstr(t, "never lost") && !strstr(t, "kept"),
	   "all 25 states refused: counted detected, durability unknown");
}

/* The REAL-KERNEL line: blackout's ext3 beside Linux ext4 on each row's stack. */
static void real_kernel(void)
{
	static const struct matrix_col vc[] = {
	    {"b0", "b0", "ext3", "barrier=0", MC_EXT3_ORDERED_B0},
	    {"b1", "b1", "ext3", "barrier=1", MC_EXT3_ORDERED_B1},
	    {"l1", "l1", "ext4", "barrier=1", MC_LINUX_EXT4_B1, true},
	    {"l0", "l0", "ext4", "barrier=0", MC_LINUX_EXT4_B0, true},
	};
	static const struct matrix_row vr[] = {
	    {"cache", "a cache", "", "", MR_CACHE},
	    {"flash", "cheap flash", "", "", MR_FLASH_CHEAP_128K}};
	struct matrix_cell c[8] = {{0}};
	struct matrix m = {
	    .mode = "quick", .nrows = 2, .ncols = 4, .rows = vr, .cols = vc, .cells = c};
	struct matrix_verdict v[MATRIX_MAX_VERDICTS];
	/* cache: ext3 b0 loses 30 of 78, b1 nothing; Linux b0 loses 2 of 4 states, b1 nothing */
	c[0] =
	    (struct matrix_cell){.ran = true, .states = 78, .ok = 48, .silent = 30, .coverage = 1};
	c[0].viol[MI_DURABLE] = 30;
	c[1] = (struct matrix_cell){.ran = true, .states = 77, .ok = 77, .coverage = 1};
	c[2] = (struct matrix_cell){.ran = true, .states = 4, .ok = 4};
	c[3] = (struct matrix_cell){.ran = true, .states = 4, .ok = 2, .silent = 2};
	c[3].viol[MI_DURABLE] = 2;
	/* flash: ext3 b1 damages bystanders, Linux (4 states) does not; no b0 cells */
	c[5] =
	    (struct matrix_cell){.ran = true, .states = 80, .ok = 50, .silent = 30, .coverage = 1};
	c[5].viol[MI_BYSTANDER] = 12;
	c[6] = (struct matrix_cell){.ran = true, .states = 4, .ok = 4};
	size_t n = matrix_verdicts(&m, v, MATRIX_MAX_VERDICTS);
	is_str(find(v, n, "REAL-KERNEL", "On a cache"),
	       "On a cache: with barrier=1 they agree: blackout's ext3 never lost synced data (77 "
	       "states), Linux ext4 never lost synced data (4 states); with barrier=0 they agree: "
	       "blackout's ext3 lost synced data in 30 of 78 states, Linux ext4 lost synced data "
	       "in 2 of 4 states — barrier=0 sends no flush, so the cache still holds what fsync "
	       "returned. [sampled: some explorations judged under 0.01% of their outcomes]",
	       "ext3 and ext4 agree on a cache, with the reason barrier=0 loses");
	is_str(find(v, n, "REAL-KERNEL", "On cheap"),
	       "On cheap flash: with barrier=1 they differ: blackout's ext3 never lost synced data "
	       "(80 states), Linux ext4 never lost synced data (4 states) (bystanders damaged: 12 "
	       "and 0) — Linux's cell samples a few crash points, blackout's judges many more. "
	       "[sampled: some explorations judged under 0.01% of their outcomes]",
	       "they differ on bystanders, and the rule knows Linux's cell is a sample");
	is_str(v[n - 3].text,
	       "blackout's ext3 (data=ordered) and Linux ext4 on the same stacks agree on 2 of 3 "
	       "stack and barrier pairs (whether synced data was lost, whether bystanders were "
	       "damaged); they differ on flash barrier=1 (why: below).",
	       "the first REAL-KERNEL line counts where they agree and names where they differ");
	c[6].viol[MI_BYSTANDER] = 1, c[6].ok = 3, c[6].silent = 1;
	c[5].viol[MI_BYSTANDER] = 0;
	n = matrix_verdicts(&m, v, MATRIX_MAX_VERDICTS);
	const char *t = find(v, n, "REAL-KERNEL", "On cheap");
	ok(t && strstr(t, "no rule explains it") != NULL,
	   "Linux worse than the model: no rule claims to know why");
	c[2].ran = false;
	c[3].ran = false;
	n = matrix_verdicts(&m, v, MATRIX_MAX_VERDICTS);
	ok(!find(v, n, "REAL-KERNEL", "On a cache"), "no Linux cell ran on a row: no line for it");
}

/* Issue 24's verdicts: like with like, each drawn from cells of its own. */
static void seeds(struct matrix *m)
{
	struct matrix_verdict v[32];
	/* degraded RAID5 damages bystanders, one disk nothing (sampled: says so) */
	set(0, 2, 185, 185, 0);
	set(1, 2, 734, 734, 0);
	set(4, 2, 339, 316, 18);
	cells[4 * NC + 2].viol[MI_BYSTANDER] = 10;
	cells[4 * NC + 2].exhaustive = false;
	cells[4 * NC + 2].coverage = 0.05;
	size_t n = matrix_verdicts(m, v, 32);
	const char *t = find(v, n, "DEGRADED-RAID", "Degraded RAID5 (");
	ok(t && strstr(t, "damaged files nobody was writing in 10 of 339 states") &&
	       strstr(t, "never damaged a bystander") && strstr(t, "second disk failure") &&
	       strstr(t, "only when a second failure would be tolerable") &&
	       !strstr(t, "worse than"),
	   "degraded RAID: bystanders against one disk, and the article's conclusion, never "
	   "'worse than one disk'");
	ok(t && strstr(t, "[sampled: each exploration judged at least 5% of its outcomes]"),
	   "a line drawn from a sampled cell says so, with its fraction");
	t = find(v, n, "ATOMIC-SECTORS", "Torn");
	ok(t && !strstr(t, "sampled"), "a line from exhaustive cells does not say sampled");
	cells[4 * NC + 2].coverage = 0;
	n = matrix_verdicts(m, v, 32);
	t = find(v, n, "DEGRADED-RAID", "Degraded RAID5 (");
	ok(t && strstr(t, "[sampled: some explorations judged under 0.01% of their outcomes]"),
	   "a fraction too small to print: said so");

	/* RAID5 over caches: honest keeps synced data, lying and flush-dropping lose it */
	set(5, 2, 1443, 1443, 0);
	set(6, 2, 1765, 826, 614);
	cells[6 * NC + 2].viol[MI_DURABLE] = 743;
	set(7, 2, 1721, 805, 740);
	cells[7 * NC + 2].viol[MI_DURABLE] = 819;
	n = matrix_verdicts(m, v, 32);
	is_str(find(v, n, "WRITE-CACHE", "RAID5 over"),
	       "RAID5 over member write caches (ext3 ordered, barrier=1): caches honouring flushes "
	       "never lost synced data (1443 states); caches ignoring flushes lost synced data in "
	       "743 of 1765 states; an array that drops flushes (md before barrier support) over "
	       "honest caches lost synced data in 819 of 1721 states: RAID5 keeps synced data only "
	       "when flushes reach the disks and the disks obey them.",
	       "RAID5 over caches: the three rows in one line");

	/* garbage: nothing synced lost; unreadable tears all detected */
	set(8, 2, 321, 312, 8);
	set(9, 2, 965, 640, 0);
	n = matrix_verdicts(m, v, 32);
	t = find(v, n, "ATOMIC-SECTORS", "Garbage");
	ok(t && strstr(t, "never lost synced data (321 states)") &&
	       strstr(t, "of the 9 failing states (8 silent), 9 kept every synced byte"),
	   "garbage: synced data kept, the in-flight damage counted apart");
	cells[8 * NC + 2].viol[MI_DURABLE] = 2;
	n = matrix_verdicts(m, v, 32);
	t = find(v, n, "ATOMIC-SECTORS", "Garbage");
	ok(t && strstr(t, "lost synced data in 2 of 321 states: the durability promise broke") &&
	       strstr(t, "of the 9 failing states (8 silent), 7 kept every synced byte"),
	   "garbage losing synced data: which promise broke");
	is_str(find(v, n, "ATOMIC-SECTORS", "Torn sectors that"),
	       "Torn sectors that read back as media errors (ext3 ordered, barrier=1) broke an "
	       "invariant in 325 of 965 states: 325 detected, 0 silent — a tear the drive reports "
	       "is damage the system sees.",
	       "unreadable torn sectors: reported detected");

	/* metadata checksums against data checksums */
	static const struct matrix_col ccols[] = {
	    {"b1", "b1", "ext3", "barrier=1", MC_EXT3_ORDERED_B1},
	    {"cs", "cs", "ext3,metadata_csum", "barrier=1", MC_EXT3_CSUM},
	};
	static const struct matrix_row crows[] = {{"f", "f", "", "", MR_FLASH_CHEAP_128K},
	                                          {"i", "i", "", "", MR_INTEGRITY_CHEAP_128K}};
	struct matrix_cell cc[4] = {{0}};
	struct matrix cm = {
	    .mode = "quick", .nrows = 2, .ncols = 2, .rows = crows, .cols = ccols, .cells = cc};
	for (size_t i = 0; i < 3; i++)
		cc[i] = (struct matrix_cell){
		    .ran = true, .states = 1536, .ok = 460, .silent = 267, .exhaustive = true};
	cc[2].ok = 979, cc[2].silent = 0, cc[2].viol[MI_BYSTANDER] = 61;
	n = matrix_verdicts(&cm, v, 32);
	is_str(find(v, n, "JOURNAL-HIDES-DAMAGE", "On cheap flash (128 KiB), ext3 ordered"),
	       "On cheap flash (128 KiB), ext3 ordered barrier=1: without checksums 267 of 1076 "
	       "failing states were silent; with metadata checksums (metadata_csum) 267 of 1076 — "
	       "they cover the filesystem's structures, not the files' bytes; with data checksums "
	       "(dm-integrity below the filesystem) 0 of 557: every damaged sector, bystanders' "
	       "included, read back as an error.",
	       "checksums: metadata and data checksums, both measured");
	memset(cells, 0, sizeof(cells));
}

/* Each verdict's result for scripts (matrix.json schema 2): the property it is about,
 * holds or broken over the cells it rests on, a cell the rule would also compare that
 * did not run named as not measured; and each cell's fate for the report's opening. */
static void results(void)
{
	static const struct matrix_col rc[] = {
	    {"b0", "b0", "ext3", "barrier=0", MC_EXT3_ORDERED_B0},
	    {"b1", "b1", "ext3", "barrier=1", MC_EXT3_ORDERED_B1},
	    {"j1", "j1", "ext3", "data=journal,barrier=1", MC_EXT3_JOURNAL_B1}};
	static const struct matrix_row rr[] = {{"g", "garbage", "", "", MR_GARBAGE},
	                                       {"c", "cache", "", "", MR_CACHE}};
	struct matrix_cell c[6] = {{0}};
	c[1] = (struct matrix_cell){.ran = true,
	                            .states = 321,
	                            .ok = 312,
	                            .silent = 8,
	                            .detected = 1,
	                            .coverage = 1.65e-24};
	c[3] = (struct matrix_cell){
	    .ran = true, .states = 200, .ok = 150, .silent = 50, .exhaustive = true, .coverage = 1};
	c[3].viol[MI_DURABLE] = 5;
	c[4] = (struct matrix_cell){
	    .ran = true, .states = 190, .ok = 190, .exhaustive = true, .coverage = 1};
	c[5] = (struct matrix_cell){
	    .ran = true, .states = 90, .ok = 80, .detected = 10, .exhaustive = true, .coverage = 1};
	struct matrix m = {
	    .mode = "quick", .nrows = 2, .ncols = 3, .rows = rr, .cols = rc, .cells = c};
	struct matrix_verdict v[8];
	size_t n = matrix_verdicts(&m, v, 8);
	size_t g = n, w = n;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(v[i].text, "Garbage", 7) == 0)
			g = i;
		if (strncmp(v[i].text, "With a write cache", 18) == 0)
			w = i;
	}
	ok(g < n && w < n, "the garbage and write-cache lines are there");
	if (g == n || w == n)
		return;
	struct matrix_verdict_sum sum;
	matrix_verdict_sum(&m, v, n, g, &sum);
	ok(v[g].prop == MP_DURABLE && sum.result == MV_HOLDS && sum.ncells == 1 &&
	       sum.states == 321 && sum.count == 0 && !sum.exhaustive && sum.coverage == 1.65e-24,
	   "garbage: durable holds over its one measured cell, its coverage kept (1.65e-24)");
	ok(v[g].nunmeasured == 1 && strcmp(v[g].unmeasured[0].row, "g") == 0 &&
	       strcmp(v[g].unmeasured[0].col, "j1") == 0,
	   "garbage: the data=journal cell, in the table but not run, is named not measured");
	matrix_verdict_sum(&m, v, n, w, &sum);
	ok(sum.result == MV_BROKEN && sum.count == 5 && sum.states == 390 && sum.exhaustive,
	   "write cache: broken, 5 of the 390 states its two cells judged lost synced data");
	is_str(matrix_result_name(MV_UNMEASURED), "not measured", "result names");
	ok(matrix_cell_fate(&c[0]) == MF_NOT_RUN && matrix_cell_fate(&c[1]) == MF_SILENT &&
	       matrix_cell_fate(&c[3]) == MF_LOST && matrix_cell_fate(&c[4]) == MF_SAFE &&
	       matrix_cell_fate(&c[5]) == MF_REPORTED,
	   "fates: not run, silent, lost synced data, safe, damage reported");
}

int main(void)
{
	struct matrix m = {
	    .mode = "quick", .nrows = NR, .ncols = NC, .rows = rows, .cols = cols, .cells = cells};
	struct matrix_verdict v[32];

	ok(matrix_cell_at(&m, MR_TORN, MC_EXT3_ORDERED_B1) == &cells[1 * NC + 2],
	   "matrix_cell_at finds the cell by keys");
	ok(matrix_cell_at(&m, MR_CACHE, MC_EXT2) == NULL &&
	       matrix_cell_at(&m, MR_TORN, MC_EXT3_CSUM) == NULL,
	   "a row or column this run has not got: NULL");
	is_int(matrix_verdicts(&m, v, 32), 0, "no cell ran: no verdict");

	set(0, 1, 148, 148, 0); /* nocache b0 */
	set(0, 2, 148, 148, 0); /* nocache b1 */
	set(1, 2, 734, 734, 0); /* torn b1 */
	set(2, 2, 74, 74, 0);   /* write errors b1 */
	size_t n = matrix_verdicts(&m, v, 32);
	is_int(n, 3, "three rules have their cells: nocache b0, torn, write errors");
	is_str(v[0].expectation, "WRITE-CACHE", "table order: WRITE-CACHE first");
	is_str(v[n - 1].expectation, "NO-WRITE-ERRORS", "table order: NO-WRITE-ERRORS last");
	is_str(find(v, n, "ATOMIC-SECTORS", "Torn"),
	       "Torn sectors (ext3 ordered, barrier=1) never broke an invariant (734 states); "
	       "atomic sectors never broke one (148 states).",
	       "torn vs atomic, nothing broken: two plain measurements");
	is_str(find(v, n, "NO-WRITE-ERRORS", "Home"),
	       "Home writes failing after fsync returned (checkpoint writes of committed metadata; "
	       "ext3 ordered, barrier=1, errors=continue): under today's abort 0 failed and it "
	       "lost no synced data silently (74 states).",
	       "write errors, nothing broken, the 2009 row missing: one plain measurement");

	set(1, 2, 734, 700, 5);
	set(0, 2, 148, 146, 0);
	set(2, 2, 74, 70, 3);
	cells[2 * NC + 2].viol[MI_DURABLE] = 2;
	n = matrix_verdicts(&m, v, 32);
	is_str(find(v, n, "ATOMIC-SECTORS", "Torn"),
	       "Torn sectors (ext3 ordered, barrier=1) broke an invariant in 34 of 734 states, 5 "
	       "of them silently; atomic sectors broke one in 2 of 148 states.",
	       "torn vs atomic with failures");
	cells[2 * NC + 2].silent_lost = 2;
	cells[2 * NC + 2].write_errors = 5;
	is_str(find(v, n = matrix_verdicts(&m, v, 32), "NO-WRITE-ERRORS", "Home"),
	       "Home writes failing after fsync returned (checkpoint writes of committed metadata; "
	       "ext3 ordered, barrier=1, errors=continue): under today's abort 5 failed and it "
	       "lost synced data silently in 2 of 74 states; 1 detected (mount refused or a read "
	       "failed: durability unknown).",
	       "write errors with failures");

	/* an optional cell: the journal rule speaks without the degraded row */
	set(3, 2, 499, 499, 0);
	n = matrix_verdicts(&m, v, 32);
	is_str(
	    find(v, n, "DEGRADED-RAID", "Degraded RAID5 with"),
	    "Degraded RAID5 with md's write journal never broke an invariant (499 states), never "
	    "damaged a bystander.",
	    "a rule with an optional cell missing still speaks");
	/* a cell that ran but judged nothing supports no sentence */
	cells[1 * NC + 2].states = 0;
	n = matrix_verdicts(&m, v, 32);
	ok(!find(v, n, "ATOMIC-SECTORS", "Torn"), "a cell with no states: its rule is silent");
	is_int(matrix_verdicts(&m, v, 1), 1, "max bounds the verdicts written");
	seeds(&m);
	real_kernel();
	write_errors();
	results();
	return tap_done();
}
