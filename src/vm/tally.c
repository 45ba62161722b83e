/* tally.c — the seeded-cut harness's counts (blackout vmtest --cuts): each cut is a
 * crash state counted by the explorer's own crash_result_add, plus the two figures only
 * the harness prints. */
#include <stdio.h>

#include "blackout/vmexplore.h"

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
