// SPDX-License-Identifier: GPL-2.0-or-later
/* tally.c — the seeded-cut harness (blackout vmtest --cuts) in C: where it cuts (the
 * explorer's seeded generator) and how its cuts count (each a crash state counted by
 * crash_result_add, plus the two figures only the harness prints). */
#include <stdio.h>

#include "blackout/util.h"
#include "blackout/vmexplore.h"

void vm_cut_points(uint64_t seed, uint64_t span, unsigned n, struct vm_cut_point *out)
{
	struct bo_rng r;
	bo_rng_seed(&r, seed);
	for (unsigned i = 0; i < n; i++) {
		out[i].write = 1 + bo_rng_below(&r, span);
		out[i].seed = bo_rng_below(&r, 1000000007);
	}
}

int vm_cut_add(struct vm_cut_tally *t, unsigned i, size_t completed, uint64_t point,
               const struct crash_observation *obs, const struct crash_outcome *o)
{
	struct crash_state s = {.pos = (size_t)point, .completed = completed, .e2fsck_agrees = -1};
	snprintf(s.id, sizeof(s.id), "cut%u", i);
	t->classified++;
	t->r->judged++;
	if (o->broken) {
		t->unmountable += obs->mount_rc != 0;
		t->fsck_errors += !obs->mount_rc && (o->broken & (1u << CRASH_INV_CONSISTENT));
	}
	return crash_result_add(t->r, &s, o);
}
