/* SPDX-License-Identifier: GPL-2.0-or-later */
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
#include "blackout/vm.h"

/* The workload name an application run's result carries, and the directory under
 * BUILD that holds application runs (BUILD/vmtest the others'). */
#define VM_APP_WORKLOAD     "app"
#define VM_APP_RUNS_DIR     "app"
#define VM_EXPLORE_RUNS_DIR "vmtest"

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

/* TREE/scripts, where the harness's scripts are: $BLACKOUT_SRC, else up from the
 * running executable, else the installed LIBEXECDIR. Sets BUILD in the environment
 * (the scripts read it: the plugin, the kernel cache) when it is not set: beside the
 * executable, or a cache directory for an installed blackout. 0, -ENOENT or
 * -ENAMETOOLONG. */
int vm_scripts_dir(char *dir, size_t len);

/* One cut of the seeded-cut harness: after plugin write `write` (1..span) the power
 * goes; `seed` chooses what the device keeps of its volatile state. */
struct vm_cut_point {
	uint64_t write, seed;
};
/* The harness's n cut points for a run of `span` plugin writes, from the explorer's
 * seeded generator (bo_rng): the same seed, the same points. */
void vm_cut_points(uint64_t seed, uint64_t span, unsigned n, struct vm_cut_point *out);

struct app_spec;

/* The guest kernel series scripts/vm-build caches (docs/kernels.md), as a usage message
 * names them. */
#define VM_KERNEL_SERIES "6.1 or 6.12"

/* The cache directory under BUILD of kernel series `series` ("6.1" or NULL: "vm";
 * "6.12": "vm-6.12"), or NULL when it is not a series vm-build knows. */
const char *vm_kernel_cache(const char *series);

/* The kernel release a cache holds (its kver, e.g. "6.1.0-57-cloud-amd64") into buf:
 * 0, or -ENOENT / -EINVAL naming what is missing or malformed. */
int vm_kernel_release(const char *vmdir, char *buf, size_t len, struct bo_err *err);

/* One real-kernel exploration (docs/vmtest.md, docs/apps.md): one boot records the
 * guest's run (scripts/vmrecord; or `log` gives the recording), the explorer enumerates
 * its crash states (crash_explore with the recording), guests of the real kernel
 * observe every distinct state (vm_pool_observe) and the one judge classifies. */
struct vm_explore_opts {
	/* the options that shape the states, as `blackout explore` takes them
	 * (crash_config_option): stack, fs ("ext4,barrier=1"), workload, max_states,
	 * seed, shard, state_id, keep_dir */
	struct crash_config cfg;
	unsigned files;    /* steps of vmtest's own workloads (create|append|...); 0: 24 */
	unsigned jobs;     /* guests in parallel; 0: the number of cores */
	const char *log;   /* enumerate this recording instead of booting to record one */
	const char *out;   /* OUT: recording, states, guests' logs, result.json; NULL:
	                      BUILD/vmtest/<time>-<pid> (BUILD/app/... for an app) */
	const char *md;    /* md over the stack's members: "LEVEL:N:MISSING[:POLICY]" */
	unsigned md_chunk; /* md's chunk in KiB (4..512, a power of two); 0: 64 */
	bool integrity;    /* dm-integrity between the stack and the filesystem */
	bool md_drop_set;  /* md assembled without member md_drop (docs/md.md) */
	unsigned md_drop;
	/* an unmodified program and its checker instead of a workload (docs/apps.md);
	 * its recording boot carries them in a per-run cpio */
	const struct app_spec *app;
	unsigned state_timeout; /* seconds a guest has for one state; 0: the pool's */
	/* the guest kernel series, as `scripts/vm-build --kernel` takes it ("6.1",
	 * "6.12"; docs/kernels.md); NULL: 6.1 */
	const char *kernel;
	/* "recording" (done 0), "enumerated", "judged in guests" (done 0 as it starts) */
	void (*progress)(void *ctx, const char *phase, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/* What a run leaves beside its result. */
struct vm_explore_info {
	char outdir[4096];         /* OUT */
	struct vm_pool_stats pool; /* the judging guests' times */
	size_t acks;               /* an app's acknowledgements recorded */
};

/* The crash workload NAME as vm_explore replays it: vmtest's own kinds
 * (create|append|mixed|overwrite, `files` steps) generated, anything else a built-in or
 * a file (crash_workload_load). */
int vm_workload_load(const char *name, unsigned files, struct crash_workload **w,
                     struct bo_err *err);

/* The run step a recording's guest kernel refused (its marks "error I TEXT" and
 * "fail I"), as the result states it: "step I (OP ...): rejected by the kernel: ERRNO"
 * ("failed in the kernel" for an error such as EIO or ENOSPC, which the filesystem
 * could not carry out) into buf; "" when every step returned. 0, or the log's error. */
int vm_rejected(const char *logpath, const struct crash_workload *w, char *buf, size_t len,
                struct bo_err *err);

/* md's options of a recording (scripts/vmrecord, docs/md.md): md
 * "LEVEL:N:MISSING[:POLICY]" (level 0, 1, 5 or 6; 2 to 19 members; MISSING a member
 * below N, two as A+B, or -; POLICY j, ppl or bitmap), chunk in KiB (0: none given;
 * else 4 to 512, a power of two), md_fail "I@K" (a member present from the start, a
 * step). NULL md: neither of the others may be given. 0 or -EINVAL naming the fault. */
int vm_md_check(const char *md, unsigned chunk, const char *md_fail, struct bo_err *err);

/* Checks the options alone, before anything is built or booted: -EINVAL with what is
 * wrong (a usage error), else 0. */
int vm_explore_check(const struct vm_explore_opts *o, struct bo_err *err);

/* The whole run; *out is the explorer's result (fs "linux-FS,OPTS"), also written to
 * OUT/result.json. Every child process (scripts under timeout, qemu, nbdkit) is bounded
 * and gone when it returns. */
int vm_explore(const struct vm_explore_opts *o, struct crash_result **out,
               struct vm_explore_info *info, struct bo_err *err);

#endif
