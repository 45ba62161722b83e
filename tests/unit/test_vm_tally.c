// SPDX-License-Identifier: GPL-2.0-or-later
/* test_vm_tally.c — the seeded-cut harness (vm_cut_add) and the explorer
 * (crash_result_add) count the same outcomes the same way: ok, silent, detected, hung,
 * each invariant broken and allowed, md's start, and which states are listed; md's
 * recording options are checked in C; the harness's cut points are seeded. */
#include <errno.h>

#include "blackout/vmexplore.h"
#include "tap.h"

struct cut {
	unsigned broken, allowed;
	bool detected;
	const char *by;
	enum crash_md_start md;
	int mount_rc;
};

#define B(i) (1u << (i))
static const struct cut cuts[] = {
    {0, 0, false, "", CRASH_MD_STARTED, 0},                                /* ok */
    {B(CRASH_INV_DURABLE), 0, false, "", CRASH_MD_STARTED, 0},             /* silent */
    {B(CRASH_INV_CONSISTENT), 0, true, "mount", CRASH_MD_UNSTARTED, -EIO}, /* unmountable */
    {0, B(CRASH_INV_STALE), false, "", CRASH_MD_NONE, 0},                  /* allowed only */
    {0, 0, false, "", CRASH_MD_FORCED, 0},                                 /* forced, ok */
    {B(CRASH_INV_BYSTANDER), 0, false, "", CRASH_MD_FORCED, 0},            /* forced, silent */
    {B(CRASH_INV_CONSISTENT), 0, true, "hung", CRASH_MD_NONE, 0},          /* hung guest */
};
#define NCUTS (sizeof(cuts) / sizeof(cuts[0]))

static void outcome(const struct cut *c, struct crash_outcome *o, struct crash_observation *obs)
{
	memset(o, 0, sizeof(*o));
	memset(obs, 0, sizeof(*obs));
	o->broken = c->broken;
	o->allowed = c->allowed;
	o->detected = c->detected;
	o->e2fsck_agrees = -1; /* a guest's checker is the consistency judge: no second one */
	o->md = c->md;
	snprintf(o->detected_by, sizeof(o->detected_by), "%s", c->by);
	snprintf(o->detail, sizeof(o->detail), "detail of %s", c->by);
	obs->mount_rc = c->mount_rc;
	obs->md = c->md;
}

int main(void)
{
	struct crash_result *vm = calloc(1, sizeof(*vm)), *ex = calloc(1, sizeof(*ex));
	tap_require(vm && ex, "results allocated");
	struct vm_cut_tally t = {.r = vm};
	for (unsigned i = 0; i < NCUTS; i++) {
		struct crash_outcome o;
		struct crash_observation obs;
		outcome(&cuts[i], &o, &obs);
		ok(vm_cut_add(&t, i + 1, i, 100 + i, &obs, &o) == 0,
		   "cut %u counted by the harness", i + 1);
		/* the explorer: judged when chosen, counted when its observation is judged */
		struct crash_state s = {.pos = 100 + i, .completed = i, .e2fsck_agrees = -1};
		snprintf(s.id, sizeof(s.id), "cut%u", i + 1);
		ex->judged++;
		ok(crash_result_add(ex, &s, &o) == 0, "cut %u counted by the explorer", i + 1);
	}

	/* what both must say, counted by hand from the table */
	is_int(vm->judged, 7, "harness: 7 judged");
	is_int(vm->ok, 3, "harness: 3 ok (the allowed-only state among them)");
	is_int(vm->silent, 2, "harness: 2 silent");
	is_int(vm->detected, 2, "harness: 2 detected");
	is_int(vm->hung, 1, "harness: 1 hung guest");
	is_int(vm->allowed[CRASH_INV_STALE], 1, "harness: stale data allowed once");
	is_int(vm->md_started, 2, "harness: md started 2 states unforced");
	is_int(vm->md_refused, 3, "harness: md refused 3");
	is_int(vm->md_unstarted, 1, "harness: 1 would not start even forced");
	is_int(vm->md_forced_ok, 1, "harness: 1 ok once forced");
	is_int(vm->md_forced_silent, 1, "harness: 1 silent once forced");
	is_int(vm->nfail, 5, "harness: 4 failing states and the allowed one are listed");
	is_int(t.unmountable, 1, "harness: 1 unmountable");
	is_int(t.fsck_errors, 1, "harness: 1 mounted but inconsistent");
	is_int(t.classified, 7, "harness: 7 classified");

	/* and the explorer agrees with the harness, field by field */
	ok(vm->judged == ex->judged && vm->ok == ex->ok && vm->silent == ex->silent &&
	       vm->detected == ex->detected && vm->hung == ex->hung,
	   "judged, ok, silent, detected and hung agree");
	ok(memcmp(vm->viol, ex->viol, sizeof(vm->viol)) == 0 &&
	       memcmp(vm->allowed, ex->allowed, sizeof(vm->allowed)) == 0,
	   "every invariant's broken and allowed counts agree");
	ok(vm->md_started == ex->md_started && vm->md_refused == ex->md_refused &&
	       vm->md_unstarted == ex->md_unstarted && vm->md_forced_ok == ex->md_forced_ok &&
	       vm->md_forced_silent == ex->md_forced_silent,
	   "md's counts agree");
	ok(vm->e2fsck_disagree == ex->e2fsck_disagree, "e2fsck disagreements agree");
	bool same = vm->nfail == ex->nfail;
	for (size_t i = 0; same && i < vm->nfail; i++) {
		const struct crash_state *a = &vm->fail[i], *b = &ex->fail[i];
		same = !strcmp(a->id, b->id) && a->pos == b->pos && a->completed == b->completed &&
		       a->broken == b->broken && a->allowed == b->allowed &&
		       a->detected == b->detected && !strcmp(a->detected_by, b->detected_by) &&
		       !strcmp(a->detail, b->detail) && a->e2fsck_agrees == b->e2fsck_agrees;
	}
	ok(same, "the listed states agree, in order, with their verdicts");

	/* a result read back (fail allocated to nfail exactly) grows safely */
	struct crash_state s = {.id = "extra"};
	struct crash_outcome o = {.broken = B(CRASH_INV_DURABLE)};
	for (int i = 0; i < 40; i++)
		tap_require(crash_result_add(ex, &s, &o) == 0, "adding past the first allocation");
	is_int(ex->nfail, 45, "40 more listed after the first 5");
	is_str(ex->fail[44].id, "extra", "the last one is whole");
	crash_result_free(vm);
	crash_result_free(ex);

	/* md's recording options, checked once here (scripts/vmrecord asks) */
	struct bo_err err = {{0}};
	static const char *const good[] = {"5:4:3",   "5:4:0:ppl", "6:5:1+2",
	                                   "5:5:-:j", "1:2:-",     "0:19:18:bitmap"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(vm_md_check(good[i], 64, NULL, &err) == 0, "--md %s is taken", good[i]);
	static const char *const bad[] = {"5:4",   "7:4:0",     "5:4:4",  "5:4:0:x",
	                                  "5:1:0", "5:4:0+",    "5:20:0", "5:4:01",
	                                  "",      "5:4:0:j:x", "x:4:0",  "5:4:1+4"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(vm_md_check(bad[i], 0, NULL, &err) == -EINVAL && strstr(err.msg, "--md"),
		   "--md '%s' is refused: %s", bad[i], err.msg);
	ok(vm_md_check("5:4:0", 48, NULL, &err) == -EINVAL && strstr(err.msg, "--md-chunk"),
	   "a chunk that is not a power of two is refused");
	ok(vm_md_check(NULL, 64, NULL, &err) == -EINVAL && strstr(err.msg, "needs --md"),
	   "--md-chunk without --md is refused");
	ok(vm_md_check("5:4:-", 0, "1@3", &err) == 0, "--md-fail 1@3 is taken");
	ok(vm_md_check("5:4:-", 0, "4@3", &err) == -EINVAL &&
	       strstr(err.msg, "member 4 of 4 (0 to 3)"),
	   "--md-fail of a member the array does not have is refused: %s", err.msg);
	ok(vm_md_check("5:4:1", 0, "1@3", &err) == -EINVAL && strstr(err.msg, "missing from"),
	   "--md-fail of a member missing from the start is refused");

	/* the harness's cut points: seeded, within the run */
	struct vm_cut_point a[50], b[50], c[50];
	vm_cut_points(7, 300, 50, a);
	vm_cut_points(7, 300, 50, b);
	vm_cut_points(8, 300, 50, c);
	bool inside = true, differ = false;
	for (int i = 0; i < 50; i++) {
		inside &= a[i].write >= 1 && a[i].write <= 300 && a[i].seed < 1000000007;
		differ |= a[i].write != c[i].write;
	}
	ok(memcmp(a, b, sizeof(a)) == 0, "the same seed gives the same cut points");
	ok(inside, "every cut point is a write of the run (1..300)");
	ok(differ, "another seed gives other cut points");
	struct vm_cut_point one[10];
	vm_cut_points(3, 1, 10, one);
	bool first = true;
	for (int i = 0; i < 10; i++)
		first &= one[i].write == 1;
	ok(first, "a run of one write is cut after that write, every time");
	return tap_done();
}
