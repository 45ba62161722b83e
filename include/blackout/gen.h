/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gen.h — workload generation (docs/gen.md): ACE-style bounded-exhaustive sequences of
 * 1..3 operations over a small fixed file tree, each followed by a persistence step or
 * nothing, and seeded random sequences of any length. Every workload comes out as text
 * in the workload language (docs/workloads.md); sequences that could not run as
 * written (an operand that cannot exist at that point, a directory moved into itself)
 * are rejected before anything runs, and counted by reason. */
#ifndef BLACKOUT_GEN_H
#define BLACKOUT_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "blackout/err.h"

/* Why a sequence was rejected: the first step that could not run as written. */
enum gen_reject {
	GEN_REJ_MISSING,   /* an operand that does not exist at that point */
	GEN_REJ_EXISTS,    /* a name to create that already exists */
	GEN_REJ_NO_PARENT, /* a name whose parent directory does not exist */
	GEN_REJ_KIND,      /* a file step on a directory or symlink, or the other way;
	                    * fdatasync as the persistence of a directory; fsync of a
	                    * symlink (it would open a target that may not exist) */
	GEN_REJ_INTO_SELF, /* a directory renamed under itself (mv A A/C) */
	GEN_REJ_NOT_EMPTY, /* rmdir, or a rename over, a directory that is not empty */
	GEN_REJ_RANGE,     /* a collapse/insert range the file does not hold (EINVAL) */
	GEN_REJ_NO_XATTR,  /* removexattr of an attribute not set */
	GEN_REJ_N
};
const char *gen_reject_name(enum gen_reject r); /* "missing", ... */

#define GEN_MAX_EXHAUSTIVE 3u
#define GEN_MAX_RANDOM_LEN 1000u

struct gen_stats {
	uint64_t workloads;         /* valid sequences emitted */
	uint64_t rejected;          /* sequences rejected */
	uint64_t reason[GEN_REJ_N]; /* rejected, by the first reason */
	uint64_t templates;         /* operations with their operands (one position's choices ... */
	uint64_t choices;           /* ... and with a persistence step after each) */
};

/* Called with each workload's name (seq<L>-<N>, rand<SEED>-<N>) and its text; a
 * non-zero return stops generation and is returned. */
typedef int (*gen_emit_fn)(void *ctx, const char *name, const char *text);

/* Every valid sequence of exactly len (1..GEN_MAX_EXHAUSTIVE) operations, in a fixed
 * order. emit may be NULL to count only. */
int gen_exhaustive(unsigned len, gen_emit_fn emit, void *ctx, struct gen_stats *st,
                   struct bo_err *err);
/* count valid sequences of len operations drawn from seed (the same seed, the same
 * workloads); invalid draws are counted in st and drawn again. */
int gen_random(uint64_t seed, unsigned count, unsigned len, gen_emit_fn emit, void *ctx,
               struct gen_stats *st, struct bo_err *err);

/* Checks one sequence of operations, each written as the generator writes it
 * ("rename /A /A/C", "falloc /foo collapse 4096 4096", persistence steps apart): 0 when
 * every step could run, 1 when step *at rejects it for *why, -EINVAL (err naming the
 * step) when a step is not one of the generator's operations. */
int gen_check(const char *const *steps, unsigned n, unsigned *at, enum gen_reject *why,
              struct bo_err *err);

#endif
