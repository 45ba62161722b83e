// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_explore.c — the engine through its API: configuration errors, exhaustive
 * vs sampled budgets, determinism, JSON round trip, shards merged equal to one run,
 * rebuilding one state by id, e2fsck agreeing with the own fsck. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "tap.h"

#define STACK "cache(size=64k,flush=honor) > disk > mem(size=8M)"

static struct crash_result *explore(const char *stack, const char *fs, const char *wl, uint64_t max,
                                    unsigned shard, unsigned nshards, const char *state,
                                    struct bo_err *err)
{
	struct crash_workload *w;
	if (crash_workload_load(wl, &w, err))
		return NULL;
	struct crash_config c = {.stack = stack,
	                         .fs = fs,
	                         .wl = w,
	                         .max_states = max,
	                         .seed = 7,
	                         .shard = shard,
	                         .nshards = nshards,
	                         .state_id = state};
	struct crash_result *r = NULL;
	if (crash_explore(&c, &r, err))
		r = NULL;
	crash_workload_free(w);
	return r;
}

static char *json(const struct crash_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	crash_result_write_json(r, f);
	fclose(f);
	return buf;
}

int main(void)
{
	struct bo_err err = {{0}};
	ok(!explore(STACK, "xfs", "wal", 10, 0, 0, NULL, &err) &&
	       strstr(err.msg, "name the filesystem first"),
	   "an unknown filesystem is refused: %s", err.msg);
	ok(!explore(STACK, "ext3,bs=3000", "wal", 10, 0, 0, NULL, &err) &&
	       strstr(err.msg, "block size"),
	   "a bad block size is refused: %s", err.msg);
	ok(!explore(STACK, "ext3,data=sometimes", "wal", 10, 0, 0, NULL, &err),
	   "a bad mount option is refused: %s", err.msg);
	ok(!explore("cache(sise=1) > mem", "ext3", "wal", 10, 0, 0, NULL, &err) &&
	       strstr(err.msg, "column"),
	   "a bad stack spec is refused with its column: %s", err.msg);
	ok(!explore(STACK, "ext3", "wal", 10, 4, 4, NULL, &err), "shard 4/4 is refused: %s",
	   err.msg);
	ok(!explore(STACK, "ext3", "wal", 10, 0, 0, "p99999-0", &err) &&
	       strstr(err.msg, "no such state"),
	   "--state of a state that does not exist: %s", err.msg);

	struct crash_result *ex =
	    explore("disk > mem(size=8M)", "ext3", "wal", 100000, 0, 0, NULL, &err);
	tap_require(ex != NULL, "exhaustive run %s", err.msg);
	ok(ex->exhaustive && ex->coverage == 1.0 && ex->built == ex->space,
	   "a small space is explored exhaustively (%llu of %llu)", (unsigned long long)ex->built,
	   (unsigned long long)ex->space);
	ok(ex->judged + ex->duplicates == ex->built, "every built state is judged or a duplicate");
	ok(ex->nio > 0 && strcmp(ex->io[0].op, "mark") == 0, "the recorded timeline is kept");
	crash_result_free(ex);

	/* one cache: the count is exact and the walk covers it; two stacked: what the
	 * upper one lands is dirty in the lower one, more outcomes than counted, and
	 * the run must not claim to be exhaustive */
	ex = explore("cache(size=1k) > disk > mem(size=8M)", "ext3", "wal", 100000, 0, 0, NULL,
	             &err);
	tap_require(ex != NULL, "one cache: %s", err.msg);
	ok(ex->exhaustive && ex->built == ex->space, "one cache: exhaustive, %llu of %llu",
	   (unsigned long long)ex->built, (unsigned long long)ex->space);
	crash_result_free(ex);
	ex = explore("cache(size=1k) > cache(size=1k) > disk > mem(size=8M)", "ext3", "wal", 100000,
	             0, 0, NULL, &err);
	tap_require(ex != NULL, "two caches: %s", err.msg);
	ok(!ex->exhaustive, "two stacked caches: not called exhaustive (%llu built, %llu counted)",
	   (unsigned long long)ex->built, (unsigned long long)ex->space);
	crash_result_free(ex);

	struct crash_result *a =
	    explore(STACK, "ext3,data=ordered,barrier=0", "append-fsync", 600, 0, 0, NULL, &err);
	struct crash_result *b =
	    explore(STACK, "ext3,data=ordered,barrier=0", "append-fsync", 600, 0, 0, NULL, &err);
	tap_require(a && b, "two sampled runs %s", err.msg);
	ok(!a->exhaustive && a->coverage > 0 && a->coverage < 1 && a->built >= 600 &&
	       a->built <= 600 + a->cuts,
	   "a large space is sampled within the budget (%llu built, %.3g covered)",
	   (unsigned long long)a->built, a->coverage);
	ok(a->nfail > 0 && a->viol[CRASH_INV_DURABLE] > 0, "barrier=0 over a cache loses data");
	char *ja = json(a), *jb = json(b);
	ok(strcmp(ja, jb) == 0, "the same exploration twice gives identical JSON");
	struct crash_result *back;
	ok(crash_result_read_json(ja, strlen(ja), &back, &err) == 0, "JSON reads back %s", err.msg);
	char *jback = json(back);
	ok(strcmp(ja, jback) == 0, "and writes out the same bytes again");
	free(jback);
	crash_result_free(back);
	ok(crash_result_read_json("{\"blackout_explore\":1}", 22, &back, &err) == -EINVAL &&
	       strstr(err.msg, "missing"),
	   "a truncated result is refused: %s", err.msg);
	ok(crash_result_read_json("[1,2", 4, &back, &err) == -EINVAL, "broken JSON is refused: %s",
	   err.msg);

	struct crash_result *parts[3];
	for (unsigned i = 0; i < 3; i++) {
		parts[i] = explore(STACK, "ext3,data=ordered,barrier=0", "append-fsync", 600, i, 3,
		                   NULL, &err);
		tap_require(parts[i] != NULL, "shard %u/3 %s", i, err.msg);
	}
	ok(parts[0]->judged < a->judged && parts[0]->built == a->built,
	   "a shard builds every state and judges its share");
	struct crash_result *m;
	ok(crash_result_merge(parts, 3, &m, &err) == 0, "3 shards merge %s", err.msg);
	char *jm = json(m);
	ok(strcmp(ja, jm) == 0, "the merge equals the unsharded run");
	free(jm);
	crash_result_free(m);
	ok(crash_result_merge(parts, 2, &m, &err) == -EINVAL, "a missing shard is refused: %s",
	   err.msg);
	struct crash_result *dup[3] = {parts[0], parts[0], parts[1]};
	ok(crash_result_merge(dup, 3, &m, &err) == -EINVAL, "a shard twice is refused: %s",
	   err.msg);
	for (unsigned i = 0; i < 3; i++)
		crash_result_free(parts[i]);

	/* rebuild one failing state by its id */
	const struct crash_state *s0 = &a->fail[0];
	struct crash_result *one =
	    explore(STACK, "ext3,data=ordered,barrier=0", "append-fsync", 600, 0, 0, s0->id, &err);
	ok(one && one->judged == 1 && one->nfail == 1 && strcmp(one->fail[0].id, s0->id) == 0 &&
	       one->fail[0].broken == s0->broken && strcmp(one->fail[0].detail, s0->detail) == 0,
	   "state %s rebuilds with the same verdict %s", s0->id, err.msg);
	crash_result_free(one);
	free(ja);
	free(jb);
	crash_result_free(a);
	crash_result_free(b);

	/* the damage map of one state: cheap flash destroys a whole erase block */
	{
		const char *cheap = "flash(ftl=cheap,eb=16k,page=1k,size=8M) > mem(size=9M)";
		struct crash_result *fr =
		    explore(cheap, "ext3", "overwrite-fsync", 2000, 0, 0, NULL, &err);
		tap_require(fr != NULL, "cheap flash exploration %s", err.msg);
		const char *id = NULL;
		for (size_t i = 0; i < fr->nfail && !id; i++)
			if (fr->fail[i].broken & (1u << CRASH_INV_BYSTANDER))
				id = fr->fail[i].id;
		ok(id != NULL, "a state with a damaged bystander (%s)", id ? id : "none");
		struct crash_workload *fw;
		crash_workload_load("overwrite-fsync", &fw, &err);
		struct crash_config fc = {.stack = cheap,
		                          .fs = "ext3",
		                          .wl = fw,
		                          .max_states = 2000,
		                          .seed = 7,
		                          .state_id = id,
		                          .map_damage = true};
		struct crash_result *dm = NULL;
		int drc = id ? crash_explore(&fc, &dm, &err) : -1;
		bool eb = false;
		for (size_t i = 0; drc == 0 && i < dm->ndamage; i++)
			eb |=
			    strcmp(dm->damage[i].what, "damaged") == 0 && dm->damage[i].count >= 32;
		ok(drc == 0 && eb, "its damage map shows a whole erase block (32 sectors) damaged");
		if (drc == 0)
			crash_result_free(dm);
		crash_workload_free(fw);
		crash_result_free(fr);
	}

	/* e2fsck beside the own fsck: they agree on ext2 crash states */
	struct crash_workload *w;
	crash_workload_load("tree", &w, &err);
	struct crash_config c = {
	    .stack = STACK, .fs = "ext2", .wl = w, .max_states = 40, .e2fsck = true};
	struct crash_result *e;
	int rc = crash_explore(&c, &e, &err);
	ok(rc == 0 && e->e2fsck_runs > 0 && e->viol[CRASH_INV_CONSISTENT] > 0,
	   "ext2 cuts: inconsistencies found, e2fsck ran %llu times",
	   rc ? 0ull : (unsigned long long)e->e2fsck_runs);
	ok(rc == 0 && e->e2fsck_disagree == 0, "e2fsck agrees with the own fsck");
	if (rc == 0)
		crash_result_free(e);
	crash_workload_free(w);
	return tap_done();
}
