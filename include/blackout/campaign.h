/* SPDX-License-Identifier: GPL-2.0-or-later */
/* campaign.h — generated workloads (gen.h) run on every filesystem and kernel asked for
 * (docs/gen.md, "Campaigns"): blackout's own ext3 through crash_explore, the real kernel's
 * filesystems through vm_explore; one deterministic shard of the units at a time, shards
 * merged without a rerun, and the failures deduplicated by signature into one report. */
#ifndef BLACKOUT_CAMPAIGN_H
#define BLACKOUT_CAMPAIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "blackout/crash.h"
#include "blackout/err.h"

/* The name a campaign gives blackout's own ext3 (run in-process, no kernel). */
#define CAMPAIGN_MODEL       "model"
#define CAMPAIGN_MAX_FS      8
#define CAMPAIGN_MAX_KERNELS 4

/* What became of one unit (a workload on one filesystem and kernel). */
enum campaign_outcome {
	CAMPAIGN_RAN,         /* its states were judged */
	CAMPAIGN_UNSUPPORTED, /* a step blackout's ext3 does not run: "not supported by the model" */
	CAMPAIGN_ERROR,       /* the run could not be done (the message says why) */
	CAMPAIGN_OUTCOME_N
};
const char *campaign_outcome_name(enum campaign_outcome o); /* "ran", ... */

/* One invariant a unit's states broke: how many, the first such state and the line
 * that rebuilds it (run from the campaign's directory: the workload is
 * workloads/NAME.wl there). */
struct campaign_hit {
	unsigned inv; /* enum crash_inv */
	uint64_t states;
	char state[160];
	char rebuild[1536];
};

struct campaign_unit {
	uint64_t idx; /* in the whole campaign: workload-major, then fs, then kernel */
	char workload[32], fs[16], kernel[16]; /* kernel "-" for the model */
	enum campaign_outcome outcome;
	uint64_t judged, ok, failing; /* distinct states judged; ok; breaking an invariant */
	uint64_t pruned;  /* with prune: states equal after journal replay to a judged one,
	                   * left unjudged (docs/explore.md, "Pruning") */
	uint64_t refused; /* steps the guest kernel refused (EINVAL, EOPNOTSUPP from a falloc
	                   * mode): recorded as failed, the oracle expects their failure;
	                   * msg names them */
	char ops[256];    /* the run's step kinds in order, comma-separated */
	bool resumed;     /* --resume took an earlier run's result (not in units.txt) */
	char msg[256];    /* why not supported, or the error */
	struct campaign_hit hit[CRASH_INV_N];
	unsigned nhit;
};

/* A campaign's units, or one shard's (a part): what it is (every part of one campaign
 * has the same), which shard, and the units in index order. */
struct campaign_part {
	char what[96];    /* "seq-1", "random 10 seed 7 length 5" */
	char fs[128];     /* "model,ext4" as asked */
	char kernels[64]; /* "6.1,6.12" */
	char stack[512];  /* "" = each filesystem's default stack */
	uint64_t max_states;
	bool prune;     /* the real-kernel units pruned journal-equivalent states */
	uint64_t total; /* units of the whole campaign */
	unsigned shard, nshards;
	struct campaign_unit *u;
	size_t n, cap;
};

struct campaign_opts {
	const char *fs;      /* "model,ext4,xfs,btrfs,ext3" (a subset, any order) */
	const char *kernels; /* "6.1,6.12"; NULL: "6.1" */
	unsigned len;        /* exhaustive seq-LEN, or 0 and random: */
	unsigned count, rlen;
	uint64_t seed;
	const char *stack;       /* NULL: each filesystem's default */
	uint64_t max_states;     /* per unit; 0: 100 */
	bool resume;             /* a unit whose result an earlier run left in OUT/runs (the same
	              * workload, stack, fs, kernel, budget, pruning) is read, not run */
	bool prune;              /* real-kernel units judge journal-replay-equivalent states
	                          * once (crash_config.prune; ext3/ext4 only, the others
	                          * say why not in their result) */
	unsigned jobs;           /* units run at once (worker processes, at most 64), each
	                          * real-kernel unit judged by one guest; 0, 1: one */
	unsigned shard, nshards; /* 0,0: all */
	const char *out;         /* DIR: units.txt, report.txt, report.json, workloads/, runs/ */
	/* after each unit of this shard: done of total */
	void (*progress)(void *ctx, const struct campaign_unit *u, size_t done, size_t total);
	void *progress_ctx;
};

/* Checks the options alone (filesystem and kernel names, shard, out): 0 or -EINVAL
 * naming what is wrong. */
int campaign_check(const struct campaign_opts *o, struct bo_err *err);
/* Runs this shard's units and writes OUT (campaign_write_dir). *out is its part. */
int campaign_run(const struct campaign_opts *o, struct campaign_part **out, struct bo_err *err);

/* The part as text (units.txt) and back: every byte of untrusted input is checked,
 * a bad one refused with the line and what is wrong. */
int campaign_part_write(const struct campaign_part *p, FILE *f);
int campaign_part_read(const char *text, size_t len, struct campaign_part **out,
                       struct bo_err *err);
void campaign_part_free(struct campaign_part *p);
/* The parts of one campaign (the same campaign, every shard once, no unit missing or
 * repeated) as the unsharded run's part. */
int campaign_merge(struct campaign_part *const *parts, size_t n, struct campaign_part **out,
                   struct bo_err *err);

/* Reads DIR/units.txt of each shard's directory, merges them (campaign_merge), copies
 * their workloads/ and the regular files of runs/ into out and writes out as the
 * unsharded run does. *merged NULL on failure. */
int campaign_merge_dirs(const char *const *dirs, size_t n, const char *out,
                        struct campaign_part **merged, struct bo_err *err);

/* The distinct failures and the counts per filesystem, as text and as JSON
 * (docs/json.md, "Campaign report"). */
int campaign_report_text(const struct campaign_part *p, FILE *f);
int campaign_report_json(const struct campaign_part *p, FILE *f);
/* DIR/units.txt, DIR/report.txt, DIR/report.json from p (one writer for a run and a
 * merge, so they are byte-identical). */
int campaign_write_dir(const struct campaign_part *p, const char *dir, struct bo_err *err);

#endif
