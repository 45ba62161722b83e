// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_physics.c — the physics the seeds describe, asserted through the
 * explorer over the built-in workloads: honest cache + barriers keeps every promise,
 * barrier=0 or a lying cache loses synced writes, no cache with atomic sectors needs
 * no barriers, torn sectors are explored and reported, cheap flash damages
 * bystanders silently (metadata_csum detects the damaged journal, not the damaged
 * data) while careful flash does not, data=writeback exposes stale
 * data where data=ordered does not, ext2 after a cut needs fsck. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "tap.h"

#define CACHE_HONOR  "cache(size=64k,flush=honor) > disk > mem(size=8M)"
#define CACHE_IGNORE "cache(size=64k,flush=ignore) > disk > mem(size=8M)"
#define NOCACHE      "disk(tear=none) > mem(size=8M)"
#define TORN         "disk(tear=byte) > mem(size=8M)"
#define CHEAP        "flash(ftl=cheap,eb=16k,page=1k,size=8M) > mem(size=9M)"
#define CAREFUL      "flash(ftl=careful,eb=16k,page=1k,size=8M) > mem(size=10M)"

struct sum {
	uint64_t judged, ok, silent, detected, viol[CRASH_INV_N], allowed[CRASH_INV_N];
	int errors;
};

static uint64_t budget(void)
{
	return getenv("BLACKOUT_ASAN") ? 120 : 300;
}

static void run_n(const char *stack, const char *fs, const char *wl, uint64_t max_states,
                  struct sum *s)
{
	struct crash_workload *w;
	struct bo_err err = {{0}};
	if (crash_workload_load(wl, &w, &err)) {
		s->errors++;
		diag("%s: %s", wl, err.msg);
		return;
	}
	struct crash_config c = {.stack = stack, .fs = fs, .wl = w, .max_states = max_states};
	struct crash_result *r;
	int rc = crash_explore(&c, &r, &err);
	crash_workload_free(w);
	if (rc) {
		s->errors++;
		diag("%s on %s, %s: %s", wl, stack, fs, err.msg);
		return;
	}
	s->judged += r->judged;
	s->ok += r->ok;
	s->silent += r->silent;
	s->detected += r->detected;
	for (int i = 0; i < CRASH_INV_N; i++) {
		s->viol[i] += r->viol[i];
		s->allowed[i] += r->allowed[i];
	}
	if (r->nfail && r->fail[0].broken)
		diag("  %s: %s", wl, r->fail[0].detail);
	crash_result_free(r);
}

static void run(const char *stack, const char *fs, const char *wl, struct sum *s)
{
	run_n(stack, fs, wl, budget(), s);
}

/* Over the built-ins (fill-enospc aside: it is the slow one) until `enough` says
 * the claim is settled; returns how many workloads ran. */
static int over_builtins(const char *stack, const char *fs, struct sum *s,
                         int (*enough)(const struct sum *))
{
	memset(s, 0, sizeof(*s));
	int n = 0;
	for (size_t i = 0; i < crash_builtin_count(); i++) {
		const char *name = crash_builtin_get(i)->name;
		if (strcmp(name, "fill-enospc") == 0)
			continue;
		run(stack, fs, name, s);
		n++;
		if (enough && enough(s))
			break;
	}
	return n;
}

static uint64_t broken(const struct sum *s)
{
	return s->judged - s->ok;
}

static int has_durable(const struct sum *s)
{
	return s->viol[CRASH_INV_DURABLE] > 0;
}

static int has_silent_bystander(const struct sum *s)
{
	return s->viol[CRASH_INV_BYSTANDER] > 0 && s->silent > 0;
}

int main(void)
{
	struct sum s;
	int n = over_builtins(CACHE_HONOR, "ext3,data=ordered,barrier=1", &s, NULL);
	ok(s.errors == 0 && s.judged > 0 && broken(&s) == 0,
	   "honest cache + ext3 barrier=1: zero violations over %d workloads (%" PRIu64
	   " states, %" PRIu64 " broken)",
	   n, s.judged, broken(&s));

	n = over_builtins(CACHE_HONOR, "ext3,data=ordered,barrier=0", &s, has_durable);
	ok(s.errors == 0 && s.viol[CRASH_INV_DURABLE] >= 1,
	   "honest cache + ext3 barrier=0: a synced write lost (%" PRIu64 " states)",
	   s.viol[CRASH_INV_DURABLE]);

	n = over_builtins(CACHE_IGNORE, "ext3,data=ordered,barrier=1", &s, has_durable);
	ok(s.errors == 0 && s.viol[CRASH_INV_DURABLE] >= 1,
	   "lying cache (flush=ignore) + barrier=1: a synced write lost (%" PRIu64 " states)",
	   s.viol[CRASH_INV_DURABLE]);

	n = over_builtins(NOCACHE, "ext3,data=ordered,barrier=0", &s, NULL);
	ok(s.errors == 0 && s.judged > 0 && broken(&s) == 0,
	   "no cache, atomic sectors, barrier=0: zero violations over %d workloads (%" PRIu64
	   " states)",
	   n, s.judged);

	/* torn sectors: the tearing is explored (more states than atomic sectors), the
	 * journal with barriers keeps its promises, and without a journal the torn
	 * metadata is reported (detected by fsck, not silent) */
	struct sum atomic, torn;
	memset(&atomic, 0, sizeof(atomic));
	memset(&torn, 0, sizeof(torn));
	run(NOCACHE, "ext3,data=ordered,barrier=1", "append-fsync", &atomic);
	run(TORN, "ext3,data=ordered,barrier=1", "append-fsync", &torn);
	ok(torn.errors == 0 && torn.judged > atomic.judged && broken(&torn) == 0,
	   "torn sectors under ext3 barrier=1: %" PRIu64 " states (atomic: %" PRIu64
	   "), no violation",
	   torn.judged, atomic.judged);
	memset(&torn, 0, sizeof(torn));
	run(TORN, "ext2", "append-fsync", &torn);
	run(TORN, "ext2", "tree", &torn);
	ok(torn.errors == 0 && torn.viol[CRASH_INV_CONSISTENT] > 0 && torn.silent == 0,
	   "torn sectors under ext2: %" PRIu64 " inconsistent states, all detected",
	   torn.viol[CRASH_INV_CONSISTENT]);

	n = over_builtins(CHEAP, "ext3,data=ordered,barrier=1", &s, has_silent_bystander);
	ok(s.errors == 0 && s.viol[CRASH_INV_BYSTANDER] >= 1 && s.silent >= 1,
	   "cheap flash: damaged bystanders (%" PRIu64 "), silent (%" PRIu64 " states)",
	   s.viol[CRASH_INV_BYSTANDER], s.silent);

	/* metadata_csum brings journal checksums (v3): a committed transaction that
	 * collateral damage destroyed is refused at mount, as the kernel refuses it,
	 * instead of silently ending the log before it. File data has no checksum:
	 * bystander data damage stays silent. Exhaustive, so both runs see every cut. */
	struct sum plain, csum;
	memset(&plain, 0, sizeof(plain));
	memset(&csum, 0, sizeof(csum));
	run_n(CHEAP, "ext3,data=ordered,barrier=1", "append-fsync", 2000, &plain);
	run_n(CHEAP, "ext3,metadata_csum,data=ordered,barrier=1", "append-fsync", 2000, &csum);
	ok(plain.errors == 0 && csum.errors == 0 && plain.judged == csum.judged &&
	       csum.silent < plain.silent && csum.detected > plain.detected &&
	       csum.viol[CRASH_INV_BYSTANDER] > 0,
	   "cheap flash + metadata_csum: damage detected that was silent without it (silent "
	   "%" PRIu64 " -> %" PRIu64 ", detected %" PRIu64 " -> %" PRIu64 " of %" PRIu64
	   " states); damaged bystander data (%" PRIu64 " states) stays silent",
	   plain.silent, csum.silent, plain.detected, csum.detected, csum.judged,
	   csum.viol[CRASH_INV_BYSTANDER]);

	n = over_builtins(CAREFUL, "ext3,data=ordered,barrier=1", &s, NULL);
	ok(s.errors == 0 && s.judged > 0 && broken(&s) == 0,
	   "careful flash: zero violations over %d workloads (%" PRIu64 " states)", n, s.judged);

	/* data=writeback: a commit made for another file carries a new file's size
	 * before its data, so the blocks show what a deleted file left there */
	struct sum wb, ord;
	memset(&wb, 0, sizeof(wb));
	memset(&ord, 0, sizeof(ord));
	run(CACHE_HONOR, "ext3,data=writeback,barrier=1", "reuse-after-delete", &wb);
	run(CACHE_HONOR, "ext3,data=ordered,barrier=1", "reuse-after-delete", &ord);
	ok(wb.errors == 0 && ord.errors == 0 && wb.allowed[CRASH_INV_STALE] > 0 &&
	       broken(&wb) == 0 && ord.allowed[CRASH_INV_STALE] == 0 && broken(&ord) == 0,
	   "data=writeback exposes a deleted file's data (%" PRIu64
	   " states, reported as allowed), data=ordered never (%" PRIu64 " states)",
	   wb.allowed[CRASH_INV_STALE], ord.judged);

	memset(&s, 0, sizeof(s));
	run(CACHE_HONOR, "ext2", "create-many-sync", &s);
	run(CACHE_HONOR, "ext2", "tree", &s);
	ok(s.errors == 0 && s.viol[CRASH_INV_CONSISTENT] > 0 && s.detected > 0,
	   "ext2 after a cut: %" PRIu64 " inconsistent states, detected by fsck",
	   s.viol[CRASH_INV_CONSISTENT]);
	return tap_done();
}
