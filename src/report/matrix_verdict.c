// SPDX-License-Identifier: GPL-2.0-or-later
/* matrix_verdict.c — the verdict rules: one sentence per expectation of the sources
 * docs/matrix.md quotes, and the property its result is about, each rule a row of a table that names the cells it compares by typed ids
 * (matrix.h) beside the row and column tables of matrix_plan.c and matrix_vm.c; then,
 * per row, blackout's own ext3 held against Linux ext4 on the same stack. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "blackout/matrix.h"
#include "report/matrix_run.h"

const struct matrix_cell *matrix_cell_at(const struct matrix *m, enum matrix_row_key row,
                                         enum matrix_col_key col)
{
	for (size_t r = 0; r < m->nrows; r++)
		if (m->rows[r].key == row)
			for (size_t c = 0; c < m->ncols; c++)
				if (m->cols[c].key == col)
					return matrix_cell(m, r, c);
	return NULL;
}

static uint64_t violating(const struct matrix_cell *c)
{
	return c->states - c->ok;
}

/* A cell's coverage as matrix.json's "coverage" prints it: the sentences were worded from
 * that field, and a verdict must read the same whether its cell carries more digits. */
static double cov4(const struct matrix_cell *c)
{
	return round(c->coverage * 1e4) / 1e4;
}

const char *matrix_prop_name(enum matrix_prop p)
{
	static const char *const names[MP_N] = {"any",    "durable", "bystander",
	                                        "silent", "stale",   "silent_lost"};
	return p < MP_N ? names[p] : "?";
}

uint64_t matrix_prop_count(const struct matrix_cell *c, enum matrix_prop p)
{
	switch (p) {
	case MP_ANY: return violating(c);
	case MP_DURABLE: return c->viol[MI_DURABLE];
	case MP_BYSTANDER: return c->viol[MI_BYSTANDER];
	case MP_SILENT: return c->silent;
	case MP_STALE: return c->viol[MI_STALE] + c->allowed;
	case MP_SILENT_LOST: return c->silent_lost;
	default: return 0;
	}
}

enum matrix_fate matrix_cell_fate(const struct matrix_cell *c)
{
	if (!c->ran || c->states == 0)
		return MF_NOT_RUN;
	if (c->viol[MI_DURABLE] || c->silent_lost)
		return MF_LOST;
	return c->silent ? MF_SILENT : c->ok < c->states ? MF_REPORTED : MF_SAFE;
}

const char *matrix_result_name(enum matrix_result r)
{
	return r == MV_HOLDS ? "holds" : r == MV_BROKEN ? "broken" : "not measured";
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

#define RULE_CELLS 3

/* A rule's sentence from its cells (c[i] is the rule's cells[i]; an optional cell that
 * did not run is NULL); false: these cells allow no verdict. `arg` is the rule's. */
typedef bool (*say_fn)(const struct matrix_cell *const *c, const char *arg, char *t, size_t n);

struct cell_ref {
	enum matrix_row_key row;
	enum matrix_col_key col;
};

struct verdict_rule {
	const char *expectation;
	struct cell_ref cells[RULE_CELLS];
	unsigned ncells;
	unsigned optional; /* bit i: cells[i] may be missing */
	say_fn say;
	const char *arg;       /* what the sentence calls the stack, for rules used twice */
	enum matrix_prop prop; /* what the verdict's result says held or broke */
};

static bool say_cache_barriers(const struct matrix_cell *const *c, const char *arg, char *t,
                               size_t n)
{
	(void)arg;
	const struct matrix_cell *hb0 = c[0], *hb1 = c[1];
	char a[96], b[96];
	const char *concl = hb1->viol[MI_DURABLE] == 0 && hb0->viol[MI_DURABLE] > 0
	                        ? "flushes honoured and barrier=1 are enough; barrier=0 is not."
	                    : hb1->viol[MI_DURABLE] < hb0->viol[MI_DURABLE]
	                        ? "barriers help but did not close the gap."
	                    : hb0->viol[MI_DURABLE] == 0 ? "neither setting lost synced data here."
	                                                 : "barriers made no difference here.";
	snprintf(t, n,
	         "With a write cache that honours flushes, ext3 data=ordered %s with barrier=0 "
	         "and %s with barrier=1: %s",
	         measure(hb0, hb0->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)),
	         measure(hb1, hb1->viol[MI_DURABLE], "lost", "synced data", b, sizeof(b)), concl);
	return true;
}

static bool say_cache_lying(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	char a[96];
	snprintf(t, n, "A cache that ignores flushes, ext3 barrier=1: %s%s.",
	         measure(c[0], c[0]->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)),
	         c[0]->viol[MI_DURABLE] ? " — barriers cannot help when the drive lies" : "");
	return true;
}

static bool say_nocache_b0(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	char a[96];
	snprintf(t, n, "Without a write cache (atomic sectors), ext3 barrier=0 %s%s.",
	         measure(c[0], c[0]->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)),
	         c[0]->viol[MI_DURABLE] ? ""
	                                : ": barriers matter only when something can hold or "
	                                  "reorder writes");
	return true;
}

static bool say_torn(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	const struct matrix_cell *torn = c[0], *atom = c[1];
	char a[96], b[96], s[64] = "";
	if (violating(torn))
		snprintf(s, sizeof(s), ", %" PRIu64 " of them silently", torn->silent);
	snprintf(t, n, "Torn sectors (ext3 ordered, barrier=1) %s%s; atomic sectors %s.",
	         measure(torn, violating(torn), "broke", "an invariant", a, sizeof(a)), s,
	         measure(atom, violating(atom), "broke", "one", b, sizeof(b)));
	return true;
}

static bool say_cheap_bystanders(const struct matrix_cell *const *c, const char *eb, char *t,
                                 size_t n)
{
	const struct matrix_cell *ch = c[0];
	char a[96];
	snprintf(t, n,
	         "Cheap flash (%s erase blocks), ext3 ordered barrier=1: %s; %" PRIu64
	         " of the %" PRIu64 " failing states were silent.",
	         eb,
	         measure(ch, ch->viol[MI_BYSTANDER], "damaged", "files nobody was writing", a,
	                 sizeof(a)),
	         ch->silent, violating(ch));
	return true;
}

/* Metadata checksums (metadata_csum) against data checksums (dm-integrity below the
 * same ext3): only the second covers the bystanders' bytes. c[2] is optional. */
static bool say_cheap_csum(const struct matrix_cell *const *c, const char *eb, char *t, size_t n)
{
	const struct matrix_cell *ch = c[0], *cs = c[1], *dc = c[2];
	if (!violating(cs) || !violating(ch))
		return false;
	double fs = (double)cs->silent / (double)violating(cs),
	       fn = (double)ch->silent / (double)violating(ch);
	size_t o = (size_t)snprintf(
	    t, n,
	    "On cheap flash (%s), ext3 ordered barrier=1: without checksums %" PRIu64 " of %" PRIu64
	    " failing states were silent; with metadata checksums (metadata_csum) %" PRIu64
	    " of %" PRIu64 "%s",
	    eb, ch->silent, violating(ch), cs->silent, violating(cs),
	    fs < fn ? "" : " — they cover the filesystem's structures, not the files' bytes");
	if (dc && o < n)
		snprintf(t + o, n - o,
		         "; with data checksums (dm-integrity below the filesystem) %" PRIu64
		         " of %" PRIu64 "%s.",
		         dc->silent, violating(dc),
		         dc->silent ? ""
		         : dc->viol[MI_BYSTANDER]
		             ? ": every damaged sector, bystanders' included, read back as an error"
		             : ": every damaged sector read back as an error");
	else if (o < n)
		snprintf(t + o, n - o, ".");
	return true;
}

/* Linux ext4 on the row's device with and without dm-integrity's data checksums below
 * it (c[0], c[1]); c[2], optional: blackout's ext3 with metadata checksums. */
static bool say_real_integrity(const struct matrix_cell *const *c, const char *what, char *t,
                               size_t n)
{
	const struct matrix_cell *ln = c[0], *di = c[1], *cs = c[2];
	int o = snprintf(
	    t, n,
	    "On %s, Linux ext4 barrier=1: without checksums %" PRIu64 " of %" PRIu64
	    " failing states were silent (bystanders damaged in %" PRIu64 "); over dm-integrity's "
	    "data checksums %" PRIu64 " of %" PRIu64 " (bystanders damaged in %" PRIu64 ")%s",
	    what, ln->silent, violating(ln), ln->viol[MI_BYSTANDER], di->silent, violating(di),
	    di->viol[MI_BYSTANDER],
	    violating(di) && !di->silent ? ": every damaged sector read back as an error" : "");
	if (cs && violating(cs) && o > 0 && (size_t)o < n)
		o += snprintf(t + o, n - (size_t)o,
		              "; blackout's ext3 with metadata checksums (metadata_csum): %" PRIu64
		              " of %" PRIu64,
		              cs->silent, violating(cs));
	else if (cs && o > 0 && (size_t)o < n)
		o += snprintf(t + o, n - (size_t)o,
		              "; blackout's ext3 with metadata checksums (metadata_csum) broke no "
		              "invariant in %" PRIu64 " states",
		              cs->states);
	if (o > 0 && (size_t)o < n)
		snprintf(t + o, n - (size_t)o, ".");
	return true;
}

static bool say_cheap_ext2(const struct matrix_cell *const *c, const char *eb, char *t, size_t n)
{
	const struct matrix_cell *ch = c[0], *e2 = c[1];
	snprintf(t, n,
	         "On cheap flash (%s), ext2 — checked in full after every cut — had %" PRIu64
	         " of %" PRIu64 " failing states detected; ext3, trusting its journal, had %" PRIu64
	         " of %" PRIu64 ".",
	         eb, e2->detected, violating(e2), ch->detected, violating(ch));
	return true;
}

static bool say_careful(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	char a[96];
	snprintf(t, n,
	         "Careful flash firmware (page-mapped, atomic map commit), ext3 ordered "
	         "barrier=1: %s%s.",
	         measure(c[0], violating(c[0]), "broke", "an invariant", a, sizeof(a)),
	         c[0]->viol[MI_BYSTANDER] == 0 ? ", and never touched a bystander" : "");
	return true;
}

static bool say_degraded(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	const struct matrix_cell *r5d = c[0], *atom = c[1];
	char a[96], b[96], d[96];
	snprintf(t, n,
	         "Degraded RAID5 (ext3 ordered, barrier=1) %s, %" PRIu64
	         " of them silently, and %s (the write hole); a single disk under the same "
	         "workloads %s and %s. That compares crash states only: the degraded array has "
	         "also lost its redundancy, so a second disk failure loses it, while the single "
	         "disk has none against its first, the likelier failure. Write to a degraded "
	         "array only when a second failure would be tolerable.",
	         measure(r5d, violating(r5d), "broke", "an invariant", a, sizeof(a)), r5d->silent,
	         measure(r5d, r5d->viol[MI_BYSTANDER], "damaged", "files nobody was writing", d,
	                 sizeof(d)),
	         measure(atom, violating(atom), "broke", "one", b, sizeof(b)),
	         atom->viol[MI_BYSTANDER] ? "damaged bystanders too" : "never damaged a bystander");
	return true;
}

/* The article: "This is especially true on RAID5/6 systems, where write barriers are
 * still not properly supported." c[1] and c[2] optional. */
static bool say_raid_caches(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	char a[96], b[96], d[96];
	size_t o = (size_t)snprintf(
	    t, n,
	    "RAID5 over member write caches (ext3 ordered, barrier=1): caches honouring flushes %s",
	    measure(c[0], c[0]->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)));
	if (c[1] && o < n)
		o += (size_t)snprintf(
		    t + o, n - o, "; caches ignoring flushes %s",
		    measure(c[1], c[1]->viol[MI_DURABLE], "lost", "synced data", b, sizeof(b)));
	if (c[2] && o < n)
		o += (size_t)snprintf(
		    t + o, n - o,
		    "; an array that drops flushes (md before barrier support) over "
		    "honest caches %s",
		    measure(c[2], c[2]->viol[MI_DURABLE], "lost", "synced data", d, sizeof(d)));
	bool lies = (c[1] && c[1]->viol[MI_DURABLE]) || (c[2] && c[2]->viol[MI_DURABLE]);
	if (o < n)
		snprintf(
		    t + o, n - o, "%s",
		    c[0]->viol[MI_DURABLE] == 0 && lies
		        ? ": RAID5 keeps synced data only when flushes reach the disks and the "
		          "disks obey them."
		        : ".");
	return true;
}

/* The patch: "disks may write garbage during powerfail". c[1] optional. */
static bool say_garbage(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	const struct matrix_cell *g = c[0], *gj = c[1];
	char a[96], b[96];
	uint64_t other = violating(g) -
	                 (g->viol[MI_DURABLE] < violating(g) ? g->viol[MI_DURABLE] : violating(g));
	size_t o = (size_t)snprintf(
	    t, n,
	    "Garbage at power loss (the write in flight lands as bytes neither old nor new), ext3 "
	    "ordered barrier=1: %s",
	    measure(g, g->viol[MI_DURABLE], "lost", "synced data", a, sizeof(a)));
	if (o < n && g->viol[MI_DURABLE] == 0)
		o +=
		    (size_t)snprintf(t + o, n - o,
		                     ": barrier=1 flushes the data and the commit before fsync "
		                     "returns, so the only synced blocks a later write can hit are "
		                     "checkpoint writes, which journal replay writes again");
	else if (o < n)
		o += (size_t)snprintf(
		    t + o, n - o,
		    ": the durability promise broke — a write in flight rewrote a "
		    "block that already held synced bytes (see the cell's example)");
	if (o < n && other)
		o += (size_t)snprintf(
		    t + o, n - o,
		    "; of the %" PRIu64 " failing states (%" PRIu64 " silent), %" PRIu64
		    " kept every synced byte: the garbage landed where an unsynced "
		    "write was going",
		    violating(g), g->silent, other);
	if (gj && o < n)
		o += (size_t)snprintf(
		    t + o, n - o, "; data=journal %s",
		    measure(gj, gj->viol[MI_DURABLE], "lost", "synced data", b, sizeof(b)));
	if (o < n)
		snprintf(t + o, n - o, ".");
	return true;
}

static bool say_unreadable(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	const struct matrix_cell *u = c[0];
	char a[96];
	snprintf(
	    t, n,
	    "Torn sectors that read back as media errors (ext3 ordered, barrier=1) %s: %" PRIu64
	    " detected, %" PRIu64 " silent%s.",
	    measure(u, violating(u), "broke", "an invariant", a, sizeof(a)), u->detected, u->silent,
	    u->silent == 0 && violating(u) ? " — a tear the drive reports is damage the system sees"
	                                   : "");
	return true;
}

/* "<arg> never broke an invariant (N states)." */
static bool say_broke(const struct matrix_cell *const *c, const char *what, char *t, size_t n)
{
	char a[96];
	snprintf(t, n, "%s %s.", what,
	         measure(c[0], violating(c[0]), "broke", "an invariant", a, sizeof(a)));
	return true;
}

static bool say_raid_journal(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	const struct matrix_cell *r5j = c[0], *r5d = c[1]; /* r5d optional */
	char a[96];
	snprintf(t, n, "Degraded RAID5 with md's write journal %s%s%s.",
	         measure(r5j, violating(r5j), "broke", "an invariant", a, sizeof(a)),
	         r5j->viol[MI_BYSTANDER] ? "" : ", never damaged a bystander",
	         r5d && violating(r5j) < violating(r5d) ? ": the journal closes the write hole"
	                                                : "");
	return true;
}

static bool say_verify(const struct matrix_cell *const *c, const char *stack, char *t, size_t n)
{
	const struct matrix_cell *base = c[0], *ver = c[1];
	snprintf(t, n,
	         "Verifying at mount (fsck --fast after journal replay) on %s: %" PRIu64
	         " of %" PRIu64 " failing states silent, against %" PRIu64 " of %" PRIu64
	         " when ext3 trusts its journal.",
	         stack, ver->silent, violating(ver), base->silent, violating(base));
	return true;
}

static bool say_writeback(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	const struct matrix_cell *wb = c[0], *od = c[1];
	snprintf(t, n,
	         "ext3 data=writeback on a write cache honouring flush: %" PRIu64 " of %" PRIu64
	         " states showed file data the file was never given (what a deleted file "
	         "left in its blocks; the mode allows it), data=ordered %" PRIu64 " of %" PRIu64
	         ".",
	         wb->allowed + wb->viol[MI_STALE], wb->states, od->allowed + od->viol[MI_STALE],
	         od->states);
	return true;
}

/* "lost synced data silently in 3 of 60 states; 2 detected (...): durability unknown" —
 * a detected state (the mount refused, a read failed) is never counted as one that
 * kept its synced data: nobody looked. */
static const char *silent_loss(const struct matrix_cell *c, char *buf, size_t len)
{
	int o = c->silent_lost
	            ? snprintf(buf, len,
	                       "lost synced data silently in %" PRIu64 " of %" PRIu64 " states",
	                       c->silent_lost, c->states)
	            : snprintf(buf, len, "lost no synced data silently (%" PRIu64 " states)",
	                       c->states);
	if (c->detected && o > 0 && (size_t)o < len)
		snprintf(buf + o, len - (size_t)o,
		         "; %" PRIu64 " detected (mount refused or a read failed: durability "
		         "unknown)",
		         c->detected);
	return buf;
}

/* c[0] checkpoint_errors=abort, c[1] =ignore (the 2009 jbd), optional. */
static bool say_write_errors(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	const struct matrix_cell *ab = c[0], *old = c[1];
	char a[200], b[200];
	int o = snprintf(t, n,
	                 "Home writes failing after fsync returned (checkpoint writes of "
	                 "committed metadata; ext3 ordered, barrier=1, errors=continue): ");
	if (old && o > 0 && (size_t)o < n)
		o += snprintf(t + o, n - (size_t)o,
		              "under the 2009 checkpoint (checkpoint_errors=ignore) %" PRIu64
		              " failed and it %s; ",
		              old->write_errors, silent_loss(old, a, sizeof(a)));
	if (o > 0 && (size_t)o < n)
		o += snprintf(t + o, n - (size_t)o,
		              "under today's abort %" PRIu64 " failed and it %s%s",
		              ab->write_errors, silent_loss(ab, b, sizeof(b)),
		              old && old->silent_lost && !ab->silent_lost
		                  ? " — the abort keeps the transaction in the log and tells"
		                  : "");
	if (o > 0 && (size_t)o < n)
		snprintf(t + o, n - (size_t)o, ".");
	return true;
}

static bool say_bad_sectors(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	char a[200];
	snprintf(t, n,
	         "Home sectors left unreadable by a failed checkpoint write, across the cut "
	         "(2009 checkpoint, ext3 ordered, barrier=1): %" PRIu64 " writes failed and the "
	         "filesystem %s%s.",
	         c[0]->write_errors, silent_loss(c[0], a, sizeof(a)),
	         c[0]->detected && !c[0]->silent_lost
	             ? " — the loss is seen only because the old copy cannot be read either"
	             : "");
	return true;
}

static bool say_lost_writes(const struct matrix_cell *const *c, const char *arg, char *t, size_t n)
{
	(void)arg;
	char a[320];
	snprintf(t, n,
	         "Home writes acknowledged but never stored (lost writes at checkpoint, ext3 "
	         "ordered, barrier=1): the filesystem %s%s.",
	         silent_loss(c[0], a, sizeof(a)),
	         c[0]->silent_lost ? " — no error reached it, so no error policy can help" : "");
	return true;
}

#define B0 MC_EXT3_ORDERED_B0
#define B1 MC_EXT3_ORDERED_B1
/* In the order the verdicts are printed. */
static const struct verdict_rule rules[] = {
    {"WRITE-CACHE", {{MR_CACHE, B0}, {MR_CACHE, B1}}, 2, 0, say_cache_barriers, NULL, MP_DURABLE},
    {"WRITE-CACHE", {{MR_CACHE_LYING, B1}}, 1, 0, say_cache_lying, NULL, MP_DURABLE},
    {"WRITE-CACHE", {{MR_NOCACHE, B0}}, 1, 0, say_nocache_b0, NULL, MP_DURABLE},
    {"ATOMIC-SECTORS", {{MR_TORN, B1}, {MR_NOCACHE, B1}}, 2, 0, say_torn, NULL, MP_ANY},
    {"ATOMIC-SECTORS",
     {{MR_FLASH_CHEAP_128K, B1}},
     1,
     0,
     say_cheap_bystanders,
     "128 KiB",
     MP_BYSTANDER},
    {"ATOMIC-SECTORS", {{MR_TORN_UNREADABLE, B1}}, 1, 0, say_unreadable, NULL, MP_SILENT},
    {"ATOMIC-SECTORS",
     {{MR_GARBAGE, B1}, {MR_GARBAGE, MC_EXT3_JOURNAL_B1}},
     2,
     1u << 1,
     say_garbage,
     NULL,
     MP_DURABLE},
    {"JOURNAL-HIDES-DAMAGE",
     {{MR_FLASH_CHEAP_128K, B1},
      {MR_FLASH_CHEAP_128K, MC_EXT3_CSUM},
      {MR_INTEGRITY_CHEAP_128K, B1}},
     3,
     1u << 2,
     say_cheap_csum,
     "128 KiB",
     MP_SILENT},
    {"REAL-INTEGRITY",
     {{MR_FLASH_CHEAP_128K, MC_LINUX_EXT4_B1},
      {MR_FLASH_CHEAP_128K, MC_LINUX_DMINT_EXT4},
      {MR_FLASH_CHEAP_128K, MC_EXT3_CSUM}},
     3,
     1u << 2,
     say_real_integrity,
     "cheap flash (128 KiB erase blocks)",
     MP_SILENT},
    {"REAL-INTEGRITY",
     {{MR_FLASH_CHEAP_4M, MC_LINUX_EXT4_B1},
      {MR_FLASH_CHEAP_4M, MC_LINUX_DMINT_EXT4},
      {MR_FLASH_CHEAP_4M, MC_EXT3_CSUM}},
     3,
     1u << 2,
     say_real_integrity,
     "cheap flash (4 MiB erase blocks)",
     MP_SILENT},
    {"REAL-INTEGRITY",
     {{MR_TORN, MC_LINUX_EXT4_B1}, {MR_TORN, MC_LINUX_DMINT_EXT4}, {MR_TORN, MC_EXT3_CSUM}},
     3,
     1u << 2,
     say_real_integrity,
     "torn sectors",
     MP_SILENT},
    {"JOURNAL-HIDES-DAMAGE",
     {{MR_FLASH_CHEAP_128K, B1}, {MR_FLASH_CHEAP_128K, MC_EXT2}},
     2,
     0,
     say_cheap_ext2,
     "128 KiB",
     MP_SILENT},
    {"ATOMIC-SECTORS",
     {{MR_FLASH_CHEAP_4M, B1}},
     1,
     0,
     say_cheap_bystanders,
     "4 MiB",
     MP_BYSTANDER},
    {"JOURNAL-HIDES-DAMAGE",
     {{MR_FLASH_CHEAP_4M, B1}, {MR_FLASH_CHEAP_4M, MC_EXT3_CSUM}},
     2,
     0,
     say_cheap_csum,
     "4 MiB",
     MP_SILENT},
    {"JOURNAL-HIDES-DAMAGE",
     {{MR_FLASH_CHEAP_4M, B1}, {MR_FLASH_CHEAP_4M, MC_EXT2}},
     2,
     0,
     say_cheap_ext2,
     "4 MiB",
     MP_SILENT},
    {"ATOMIC-SECTORS", {{MR_FLASH_CAREFUL, B1}}, 1, 0, say_careful, NULL, MP_ANY},
    {"DEGRADED-RAID",
     {{MR_RAID5_DEGRADED, B1}, {MR_NOCACHE, B1}},
     2,
     0,
     say_degraded,
     NULL,
     MP_ANY},
    {"DEGRADED-RAID", {{MR_RAID5, B1}}, 1, 0, say_broke, "Healthy RAID5", MP_ANY},
    {"DEGRADED-RAID",
     {{MR_RAID5_DEGRADED_JOURNAL, B1}, {MR_RAID5_DEGRADED, B1}},
     2,
     1u << 1,
     say_raid_journal,
     NULL,
     MP_ANY},
    {"DEGRADED-RAID",
     {{MR_RAID6_2MISSING, B1}},
     1,
     0,
     say_broke,
     "RAID6 with two members missing",
     MP_ANY},
    {"WRITE-CACHE",
     {{MR_RAID5_CACHE, B1}, {MR_RAID5_CACHE_LYING, B1}, {MR_RAID5_NOBARRIER, B1}},
     3,
     (1u << 1) | (1u << 2),
     say_raid_caches,
     NULL,
     MP_DURABLE},
    {"JOURNAL-HIDES-DAMAGE",
     {{MR_FLASH_CHEAP_128K, B1}, {MR_FLASH_CHEAP_128K_VERIFY, B1}},
     2,
     0,
     say_verify,
     "cheap flash (128 KiB)",
     MP_SILENT},
    {"JOURNAL-HIDES-DAMAGE",
     {{MR_RAID5_DEGRADED, B1}, {MR_RAID5_DEGRADED_VERIFY, B1}},
     2,
     0,
     say_verify,
     "degraded RAID5",
     MP_SILENT},
    {"WRITEBACK",
     {{MR_CACHE, MC_EXT3_WRITEBACK_B1}, {MR_CACHE, B1}},
     2,
     0,
     say_writeback,
     NULL,
     MP_STALE},
    {"NO-WRITE-ERRORS",
     {{MR_WRITE_ERRORS, B1}, {MR_WRITE_ERRORS_2009, B1}},
     2,
     1u << 1,
     say_write_errors,
     NULL,
     MP_SILENT_LOST},
    {"NO-WRITE-ERRORS", {{MR_BAD_SECTORS_2009, B1}}, 1, 0, say_bad_sectors, NULL, MP_SILENT_LOST},
    {"NO-WRITE-ERRORS", {{MR_LOST_WRITES, B1}}, 1, 0, say_lost_writes, NULL, MP_SILENT_LOST},
};

/* A line drawn from a sampled cell says so, with the smallest fraction of its outcomes
 * any exploration of those cells judged (matrix.json rounds it to 0.01%). */
static void say_sampled(const struct matrix_cell *const *c, size_t nc, char *t, size_t n)
{
	bool sampled = false;
	double cov = 1;
	for (size_t i = 0; i < nc; i++)
		if (c[i] && !c[i]->exhaustive) {
			sampled = true;
			cov = cov4(c[i]) < cov ? cov4(c[i]) : cov;
		}
	size_t o = strlen(t);
	if (!sampled || o + 1 >= n)
		return;
	if (cov >= 1e-4)
		snprintf(t + o, n - o,
		         " [sampled: each exploration judged at least %.2g%% of its outcomes]",
		         cov * 100);
	else
		snprintf(t + o, n - o,
		         " [sampled: some explorations judged under 0.01%% of their outcomes]");
}

/* Names the cells a verdict was drawn from: the JSON lists them, so a reader (and a
 * test) can tell which cells a line rests on and whether they were sampled. */
static void name_cells(const struct matrix *m, const struct matrix_cell *const *c, size_t nc,
                       struct matrix_verdict *v)
{
	v->ncells = 0;
	for (size_t i = 0; i < nc; i++)
		for (size_t k = 0; c[i] && k < m->nrows * m->ncols; k++)
			if (&m->cells[k] == c[i] && v->ncells < MATRIX_VERDICT_CELLS) {
				v->cells[v->ncells].row = m->rows[k / m->ncols].id;
				v->cells[v->ncells++].col = m->cols[k % m->ncols].id;
			}
}

/* A cell that ran and judged something, or NULL. */
static const struct matrix_cell *judged(const struct matrix *m, size_t r, enum matrix_col_key col)
{
	const struct matrix_cell *x = matrix_cell_at(m, m->rows[r].key, col);
	return x && x->ran && x->states ? x : NULL;
}

/* "lost synced data in 3 of 120 states" / "never lost synced data (4 states)" */
static void lost(const struct matrix_cell *c, const char *unit, char *buf, size_t len)
{
	uint64_t k = c->viol[MI_DURABLE];
	if (k)
		snprintf(buf, len, "lost synced data in %" PRIu64 " of %" PRIu64 " %s", k,
		         c->states, unit);
	else
		snprintf(buf, len, "never lost synced data (%" PRIu64 " %.*s)", c->states,
		         (int)strlen(unit) - (c->states == 1), unit);
}

/* What the rules know of why ext3 under blackout and ext4 under Linux part ways, or
 * why they lose together. */
static const char *why(enum matrix_row_key row, bool b0, const struct matrix_cell *own,
                       const struct matrix_cell *lx)
{
	bool od = own->viol[MI_DURABLE] > 0, ld = lx->viol[MI_DURABLE] > 0;
	bool ob = own->viol[MI_BYSTANDER] > 0, lb = lx->viol[MI_BYSTANDER] > 0;
	bool sampled = cov4(lx) < 1 && lx->states < own->states;
	if (od && ld && b0 && (row == MR_CACHE || row == MR_CACHE_LYING))
		return "barrier=0 sends no flush, so the cache still holds what fsync returned";
	if (od && ld && row == MR_CACHE_LYING)
		return "the drive ignores the flushes barrier=1 sends";
	if (((od && !ld) || (ob && !lb)) && !(ld && !od) && !(lb && !ob) && sampled)
		return "Linux's cell samples a few crash points, blackout's judges many more";
	if (od != ld || ob != lb)
		return "no rule explains it: compare the two cells' examples";
	return NULL;
}

/* One line per row: blackout's ext3 (data=ordered) and Linux ext4 with barrier=1 and
 * barrier=0 on that row's stack. */
static size_t say_real_kernel(const struct matrix *m, struct matrix_verdict *out, size_t max)
{
	static const struct {
		enum matrix_col_key own, lx;
		const char *name;
	} pairs[] = {{MC_EXT3_ORDERED_B1, MC_LINUX_EXT4_B1, "barrier=1"},
	             {MC_EXT3_ORDERED_B0, MC_LINUX_EXT4_B0, "barrier=0"}};
	/* out[0] sums up (written last); each row's line follows it */
	size_t n = 1, npairs = 0, nagree = 0, od = 0;
	char differ[400] = "";
	for (size_t r = 0; r < m->nrows && n < max; r++) {
		char body[700], *t = body;
		size_t len = sizeof(body), o = 0;
		for (size_t i = 0; i < 2; i++) {
			const struct matrix_cell *own = judged(m, r, pairs[i].own),
			                         *lx = judged(m, r, pairs[i].lx);
			if (!own || !lx || o >= len)
				continue;
			char a[96], b[96];
			lost(own, "states", a, sizeof(a));
			lost(lx, "states", b, sizeof(b));
			bool agree = (own->viol[MI_DURABLE] > 0) == (lx->viol[MI_DURABLE] > 0) &&
			             (own->viol[MI_BYSTANDER] > 0) == (lx->viol[MI_BYSTANDER] > 0);
			const char *w = why(m->rows[r].key, i == 1, own, lx);
			npairs++;
			nagree += agree;
			if (!agree && od < sizeof(differ))
				od +=
				    (size_t)snprintf(differ + od, sizeof(differ) - od, "%s%s %s",
				                     od ? ", " : "", m->rows[r].id, pairs[i].name);
			o += (size_t)snprintf(t + o, len - o,
			                      "%s%s they %s: blackout's ext3 %s, Linux ext4 %s",
			                      o ? "; with " : "with ", pairs[i].name,
			                      agree ? "agree" : "differ", a, b);
			if (own->viol[MI_BYSTANDER] || lx->viol[MI_BYSTANDER])
				o += (size_t)snprintf(
				    t + o, o < len ? len - o : 0,
				    " (bystanders damaged: %" PRIu64 " and %" PRIu64 ")",
				    own->viol[MI_BYSTANDER], lx->viol[MI_BYSTANDER]);
			if (w && o < len)
				o += (size_t)snprintf(t + o, len - o, " — %s", w);
		}
		if (o == 0)
			continue;
		snprintf(out[n].text, sizeof(out[n].text), "On %s: %s.", m->rows[r].label, body);
		const struct matrix_cell *cs[4] = {
		    judged(m, r, pairs[0].own), judged(m, r, pairs[0].lx),
		    judged(m, r, pairs[1].own), judged(m, r, pairs[1].lx)};
		say_sampled(cs, 4, out[n].text, sizeof(out[n].text));
		name_cells(m, cs, 4, &out[n]);
		out[n].prop = MP_DURABLE;
		out[n].nunmeasured = 0;
		snprintf(out[n].expectation, sizeof(out[n].expectation), "REAL-KERNEL");
		n++;
	}
	if (npairs == 0 || max == 0)
		return 0;
	out[0].ncells = 0; /* it sums up every row's line */
	out[0].nunmeasured = 0;
	out[0].prop = MP_DURABLE;
	snprintf(out[0].expectation, sizeof(out[0].expectation), "REAL-KERNEL");
	snprintf(out[0].text, sizeof(out[0].text),
	         "blackout's ext3 (data=ordered) and Linux ext4 on the same stacks agree on %zu of "
	         "%zu stack and barrier pairs (whether synced data was lost, whether bystanders "
	         "were damaged)%s%s%s",
	         nagree, npairs, od ? "; they differ on " : "", differ,
	         od ? " (why: below)." : ".");
	return n;
}

/* The write hole as a cell shows it: blocks nobody wrote in the cut epoch read wrong,
 * seen as fsck damage, a damaged bystander or a file holding bytes never written to it
 * (a reconstructed chunk of its own). The largest of those counts: a lower bound on the
 * states, as one state can break several. */
static uint64_t holes(const struct matrix_cell *c)
{
	uint64_t h = c->viol[MI_BYSTANDER];
	h = c->viol[MI_CONSISTENT] > h ? c->viol[MI_CONSISTENT] : h;
	return c->viol[MI_STALE] > h ? c->viol[MI_STALE] : h;
}

/* Why two cells differ on a property one of them saw and the other did not. */
static const char *md_why(const struct matrix_cell *saw, const struct matrix_cell *quiet)
{
	return quiet->states < saw->states && cov4(quiet) < 1
	           ? "the cell that saw nothing judged fewer states of a sample"
	           : "no rule explains it: compare the two cells' examples";
}

/* One property of the pair, e.g. "the write hole: the model in 0 of 40 states, md in at
 * least 2 of 47 (bystanders 2): they differ — <why>". Returns whether they agree. */
static bool md_prop(const char *what, uint64_t a, const struct matrix_cell *mod, uint64_t b,
                    const struct matrix_cell *md, bool bound, char *buf, size_t len)
{
	bool agree = (a > 0) == (b > 0);
	int o = snprintf(buf, len,
	                 "%s: the model in %s%" PRIu64 " of %" PRIu64 " states, md in %s%" PRIu64
	                 " of %" PRIu64 ": they %s",
	                 what, bound && a ? "at least " : "", a, mod->states,
	                 bound && b ? "at least " : "", b, md->states, agree ? "agree" : "differ");
	if (!agree && o > 0 && (size_t)o < len)
		snprintf(buf + o, len - (size_t)o, " — %s", a ? md_why(mod, md) : md_why(md, mod));
	return agree;
}

/* REAL-MD: per RAID row, Linux ext4 on blackout's RAID model against Linux ext4 on Linux
 * md over the same members: whether the write hole appears and whether synced data is
 * lost, and the rules' reason when they part. out[0] sums up (written last). */
static size_t say_real_md(const struct matrix *m, struct matrix_verdict *out, size_t max)
{
	size_t n = 1, nrows = 0, nhole = 0, nlost = 0, od = 0;
	char differ[300] = "";
	for (size_t r = 0; r < m->nrows && n < max; r++) {
		const struct matrix_cell *mod = judged(m, r, MC_LINUX_EXT4_B1),
		                         *md = judged(m, r, MC_LINUX_MD_EXT4);
		if (!mod || !md)
			continue;
		char h[300], l[300];
		bool ah = md_prop("the write hole (fsck damage, a damaged bystander or bytes never "
		                  "written)",
		                  holes(mod), mod, holes(md), md, true, h, sizeof(h));
		bool al = md_prop("synced data lost", mod->viol[MI_DURABLE], mod,
		                  md->viol[MI_DURABLE], md, false, l, sizeof(l));
		nrows++;
		nhole += ah;
		nlost += al;
		if ((!ah || !al) && od < sizeof(differ))
			od += (size_t)snprintf(differ + od, sizeof(differ) - od, "%s%s (%s)",
			                       od ? ", " : "", m->rows[r].id,
			                       !ah && !al ? "both"
			                       : !ah      ? "the hole"
			                                  : "synced data");
		snprintf(
		    out[n].text, sizeof(out[n].text),
		    "On %s, Linux ext4 over blackout's RAID model and over Linux md on the same "
		    "members: %s; %s.",
		    m->rows[r].label, h, l);
		const struct matrix_cell *cs[2] = {mod, md};
		say_sampled(cs, 2, out[n].text, sizeof(out[n].text));
		name_cells(m, cs, 2, &out[n]);
		out[n].prop = MP_DURABLE;
		out[n].nunmeasured = 0;
		snprintf(out[n].expectation, sizeof(out[n].expectation), "REAL-MD");
		n++;
	}
	if (nrows == 0 || max == 0)
		return 0;
	out[0].ncells = 0;
	out[0].nunmeasured = 0;
	out[0].prop = MP_DURABLE;
	snprintf(out[0].expectation, sizeof(out[0].expectation), "REAL-MD");
	snprintf(out[0].text, sizeof(out[0].text),
	         "Linux md and blackout's RAID model, each under Linux ext4 (barrier=1) on the "
	         "same members: on %zu of %zu RAID rows they agree whether the write hole "
	         "appears, on %zu whether synced data is lost%s%s%s",
	         nhole, nrows, nlost, od ? "; they differ on " : "", differ,
	         od ? " (below)." : ".");
	return n;
}

size_t matrix_verdicts(const struct matrix *m, struct matrix_verdict *out, size_t max)
{
	size_t n = 0;
	bool apps = false;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]) && n < max; i++) {
		const struct verdict_rule *r = &rules[i];
		/* the application section's torn pages, after the seed's first ATOMIC-SECTORS
		 * lines (torn sectors, cheap flash, unreadable, garbage) */
		if (!apps && i > 0 && !strcmp(rules[i - 1].expectation, "ATOMIC-SECTORS") &&
		    strcmp(r->expectation, "ATOMIC-SECTORS") != 0) {
			n += matrix_apps_verdicts(m, out + n, max - n);
			apps = true;
		}
		const struct matrix_cell *c[RULE_CELLS] = {NULL}, *idle[RULE_CELLS] = {NULL};
		bool usable = true;
		for (unsigned k = 0; k < r->ncells; k++) {
			const struct matrix_cell *x =
			    matrix_cell_at(m, r->cells[k].row, r->cells[k].col);
			/* a cell that did not run, or judged nothing, supports no sentence */
			c[k] = x && x->ran && x->states ? x : NULL;
			idle[k] = c[k] ? NULL : x;
			usable = usable && (c[k] || (r->optional & (1u << k)));
		}
		if (!usable || !r->say(c, r->arg, out[n].text, sizeof(out[n].text)))
			continue;
		say_sampled(c, r->ncells, out[n].text, sizeof(out[n].text));
		name_cells(m, c, r->ncells, &out[n]);
		/* the optional cells in this run's table that did not run: not measured */
		struct matrix_verdict tmp;
		name_cells(m, idle, r->ncells, &tmp);
		out[n].nunmeasured = tmp.ncells;
		memcpy(out[n].unmeasured, tmp.cells, sizeof(tmp.cells));
		out[n].prop = r->prop;
		snprintf(out[n].expectation, sizeof(out[n].expectation), "%s", r->expectation);
		n++;
	}
	n += say_real_kernel(m, out + n, max - n);
	return n + say_real_md(m, out + n, max - n);
}

void matrix_verdict_sum(const struct matrix *m, const struct matrix_verdict *v, size_t nv, size_t i,
                        struct matrix_verdict_sum *out)
{
	*out =
	    (struct matrix_verdict_sum){.result = MV_UNMEASURED, .exhaustive = true, .coverage = 1};
	/* a line without cells sums up the lines of its expectation that follow it */
	size_t end = i + 1;
	if (v[i].ncells == 0)
		while (end < nv && v[end].ncells &&
		       strcmp(v[end].expectation, v[i].expectation) == 0)
			end++;
	for (size_t k = v[i].ncells ? i : i + 1; k < end; k++)
		for (size_t j = 0; j < v[k].ncells; j++) {
			const struct matrix_cell *c =
			    matrix_find(m, v[k].cells[j].row, v[k].cells[j].col);
			if (!c)
				continue;
			uint64_t n = matrix_prop_count(c, v[i].prop);
			out->ncells++;
			out->states += c->states;
			out->count += n;
			out->exhaustive = out->exhaustive && c->exhaustive;
			if (!c->exhaustive && c->coverage < out->coverage)
				out->coverage = c->coverage;
			if (n)
				out->result = MV_BROKEN;
			else if (out->result == MV_UNMEASURED)
				out->result = MV_HOLDS;
		}
}
