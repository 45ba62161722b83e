/* vmexplore.h — the real Linux kernel as a crash observer, as library calls: the
 * seeded-cut harness's counting (vm_cut_add) and, in src/vm/explore.c, the whole
 * record-enumerate-judge run (docs/vmtest.md, docs/realkernel.md). */
#ifndef BLACKOUT_VMEXPLORE_H
#define BLACKOUT_VMEXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/crash.h"
#include "blackout/err.h"

/* The cuts of `blackout vmtest --cuts` (one boot per cut), counted into r as the
 * explorer counts its states, plus what only the harness prints. */
struct vm_cut_tally {
	struct crash_result *r;
	unsigned observed;    /* cuts whose power cut the host saw happen */
	unsigned classified;  /* cuts the judge gave an outcome */
	unsigned unmountable; /* failing cuts whose recovery mount failed */
	unsigned fsck_errors; /* failing cuts that mounted but broke consistency */
};

/* Counts cut i (a state "cutI" at plugin write `point`, `completed` steps returned)
 * with the outcome the judge gave its observation. 0 or -ENOMEM. */
int vm_cut_add(struct vm_cut_tally *t, unsigned i, size_t completed, uint64_t point,
               const struct crash_observation *obs, const struct crash_outcome *o);

#endif
