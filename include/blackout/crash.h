/* SPDX-License-Identifier: GPL-2.0-or-later */
/* crash.h — the crash explorer: workloads, the oracle that models what a workload was
 * promised, the one judge that turns promises + an observation into an outcome, and
 * the engine that records a workload once and enumerates every crash state a device
 * stack allows (docs/architecture.md).
 *
 * Layers, each usable alone (the matrix runs many explorations in one process through
 * crash_explore(); tests drive the oracle and the judge without a filesystem):
 *   workload  parse / format / built-ins (docs/workloads.md)
 *   oracle    a pure model: executed ops -> per crash point, what must be there
 *   judge     promises + observation (from any observer) -> outcome
 *   explore   stack + fs config + workload -> counted outcomes (docs/explore.md)
 */
#ifndef BLACKOUT_CRASH_H
#define BLACKOUT_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "blackout/blk.h"
#include "blackout/err.h"

/* ---- workloads ------------------------------------------------------------- */

enum crash_op {
	CRASH_OP_MKDIR = 1,
	CRASH_OP_CREATE,
	CRASH_OP_WRITE,  /* path off len [pattern] */
	CRASH_OP_APPEND, /* path len [pattern]: at the file's size when it runs */
	CRASH_OP_TRUNCATE,
	CRASH_OP_RENAME, /* path -> path2 */
	CRASH_OP_LINK,   /* existing path -> new path2 */
	CRASH_OP_UNLINK,
	CRASH_OP_RMDIR,
	CRASH_OP_FSYNC,
	CRASH_OP_FDATASYNC,
	CRASH_OP_FSYNC_DIR,
	CRASH_OP_SYNC,
	CRASH_OP_MARK, /* name in path */
	CRASH_OP_FILL, /* path chunk [pattern]: appends chunks until ENOSPC */
	/* for the published reproducers and the generator (docs/workloads.md, "More steps") */
	CRASH_OP_FALLOC,       /* path mode off len: fallocate(2), mode a CRASH_FALLOC_* */
	CRASH_OP_SYMLINK,      /* target path -> link path2 */
	CRASH_OP_SETXATTR,     /* path, name in arg, value in arg2 */
	CRASH_OP_REMOVEXATTR,  /* path, name in arg */
	CRASH_OP_DWRITE,       /* path off len [pattern]: O_DIRECT */
	CRASH_OP_MWRITE,       /* path off len [pattern]: mmap, store, msync(MS_SYNC) */
	CRASH_OP_OSYNC,        /* path off len [pattern]: O_SYNC */
	CRASH_OP_DWRITE_OSYNC, /* path off len [pattern]: O_DIRECT | O_SYNC */
	CRASH_OP_OPEN,         /* fd name in arg, path: open an existing file, kept open */
	CRASH_OP_CLOSE,        /* fd name in arg */
	CRASH_OP_FSYNC_FD,     /* fd name in arg: fsync through it (its name may be gone) */
	CRASH_OP_FDATASYNC_FD, /* fd name in arg */
};
#define CRASH_OP_LAST CRASH_OP_FDATASYNC_FD

/* fallocate modes of `falloc` (the kernel's flags in docs/workloads.md) */
enum crash_falloc {
	CRASH_FALLOC_PLAIN,     /* 0: allocate, extend the size */
	CRASH_FALLOC_KEEP_SIZE, /* FALLOC_FL_KEEP_SIZE */
	CRASH_FALLOC_PUNCH,     /* FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE */
	CRASH_FALLOC_ZERO,      /* FALLOC_FL_ZERO_RANGE */
	CRASH_FALLOC_COLLAPSE,  /* FALLOC_FL_COLLAPSE_RANGE */
	CRASH_FALLOC_INSERT,    /* FALLOC_FL_INSERT_RANGE */
	CRASH_FALLOC_N
};
const char *crash_falloc_name(enum crash_falloc m); /* "keep-size" ... */

/* Open files a workload may hold at once (the guest's shell fds 4..9; its fd 3 carries
 * the markers, src/guest/guest-init). */
#define CRASH_WL_MAX_FDS 6

const char *crash_op_name(enum crash_op op); /* "fsync-dir" ... */

/* Pattern of a write: the bytes are a function of (tag, file offset), so every
 * byte read back can be traced to the write that could have put it there. */
#define CRASH_PATTERN_ZERO 0u /* the write stores zeros */
uint8_t crash_pattern_byte(uint32_t tag, uint64_t off);
void crash_pattern_fill(uint32_t tag, uint64_t off, void *buf, size_t len);

struct crash_step {
	enum crash_op op;
	char *path;       /* absolute; MARK: the mark's name */
	char *path2;      /* RENAME, LINK, SYMLINK */
	char *arg, *arg2; /* an fd's name; an xattr's name and value */
	unsigned mode;    /* FALLOC: enum crash_falloc */
	uint64_t off,
	    len;        /* WRITE-like and FALLOC off/len; APPEND/FILL len; TRUNCATE size in off */
	uint32_t tag;   /* pattern; unique per data step unless the file gave one */
	bool tag_given; /* written in the file (printed back) */
	unsigned line;  /* source line, for messages */
};

struct crash_workload {
	char *name;
	char *summary;
	struct crash_step *setup; /* written and synced before recording starts */
	size_t nsetup;
	struct crash_step *run; /* the recorded workload */
	size_t nrun;
};

/* Limits on untrusted workload files. */
#define CRASH_WL_MAX_TEXT  (1u << 20)
#define CRASH_WL_MAX_STEPS 100000u
#define CRASH_WL_MAX_PATH  1024u
#define CRASH_WL_MAX_LEN   (64ull << 20) /* one write */
#define CRASH_WL_MAX_OFF   (1ull << 40)  /* offset + length */

/* Parses the line-based format; errors say "line L, column C: reason". `name` is
 * used when the text has no `name` line. */
int crash_workload_parse(const char *text, size_t len, const char *name,
                         struct crash_workload **out, struct bo_err *err);
/* The workload in the file format; parsing the output gives an equal workload. */
int crash_workload_format(const struct crash_workload *w, FILE *f);
bool crash_workload_equal(const struct crash_workload *a, const struct crash_workload *b);
void crash_workload_free(struct crash_workload *w);

struct crash_builtin {
	const char *name;
	const char *summary;
	const char *text;   /* in the file format */
	const char *source; /* the bug zoo: the published test it restates, else NULL */
	const char *fix;    /* the fix commit that test names ("btrfs 5e85262e542d: ...") */
};
/* The classic workloads (the matrix's and the explorer's default set). */
size_t crash_builtin_count(void);
const struct crash_builtin *crash_builtin_get(size_t i);
/* The bug zoo (docs/workloads.md, "Bug zoo"): published crash reproducers restated in
 * the workload language; several need a guest kernel. Not in the default set. */
size_t crash_zoo_count(void);
const struct crash_builtin *crash_zoo_get(size_t i);
/* A classic or a zoo workload by name. */
const struct crash_builtin *crash_builtin_find(const char *name);
/* A built-in by name, else a file by path. */
int crash_workload_load(const char *name_or_path, struct crash_workload **out, struct bo_err *err);

/* ---- the oracle -------------------------------------------------------------
 * Invariants (DESIGN.md), in the same order as the matrix's. */
enum crash_inv {
	CRASH_INV_DURABLE, /* what fsync/fdatasync/sync (dir fsync for names) made durable is there */
	CRASH_INV_STALE,   /* every byte of a file is a byte written to it, or zero */
	CRASH_INV_BYSTANDER,  /* setup files the workload never touched are byte-identical */
	CRASH_INV_CONSISTENT, /* mount and fsck find nothing wrong */
	CRASH_INV_ATOMIC,     /* rename over a file after fsync of the new one: old or new */
	CRASH_INV_PROMISE,    /* "fs-promise": POSIX kept, the filesystem's own promise not */
	CRASH_INV_N
};
const char *crash_inv_name(enum crash_inv i); /* "durable", "stale", ... */

/* What the engine saw each run step do (the oracle models executed ops, so a step
 * that failed, e.g. ENOSPC, has no effect and a short fill is modelled as short). */
struct crash_exec {
	int rc;        /* 0 or -errno */
	uint64_t done; /* bytes written (WRITE, APPEND, FILL) */
	uint64_t off;  /* APPEND/FILL: the offset it started at */
};

/* A recovered filesystem as read back, independent of any fs implementation. */
struct crash_obs_node {
	char *name;
	bool dir;
	uint64_t size;
	uint8_t *data; /* size bytes (files), or NULL when md5 is given */
	/* or, from an observer that ships no bytes: the MD5 of each `chunk`-byte piece
	 * of the file (the last one short), ceil(size / chunk) of them */
	uint8_t (*md5)[16];
	uint32_t chunk;
	int read_rc; /* reading it failed (e.g. -EBADMSG checksum, -EIO): detected */
	struct crash_obs_node *kids;
	size_t nkids;
};
void crash_obs_free(struct crash_obs_node *root); /* frees the tree, not root itself */

struct crash_oracle;
/* Models the workload's setup and run as executed (`exec` has one entry per run
 * step; NULL = every step succeeded as written). */
int crash_oracle_new(const struct crash_workload *w, const struct crash_exec *exec,
                     struct crash_oracle **out, struct bo_err *err);
void crash_oracle_free(struct crash_oracle *o);

enum {
	CRASH_ORACLE_WRITEBACK = 1u << 0, /* data=writeback: stale data allowed, reported */
	/* also judge the filesystem's own stronger promise of names (docs/oracle.md) */
	CRASH_ORACLE_FS_PROMISE = 1u << 1,
};
/* Whether fs ("ext4", "linux-btrfs,defaults", ...) makes the stronger promise of names
 * the oracle judges with CRASH_ORACLE_FS_PROMISE: Linux's ext4, xfs and btrfs. */
bool crash_oracle_fs_promises(const char *fs);
struct crash_verdict {
	unsigned broken;      /* bit i: crash_inv i broken */
	unsigned allowed;     /* bit i: broken but the configuration allows it */
	unsigned read_errors; /* files that could not be read (detected damage) */
	char detail[384];     /* the first problem of each kind, in words */
};
/* Judges an observed tree at crash point `completed` (the number of run steps that
 * had returned before the cut; step `completed` may have been partly done). */
int crash_oracle_check(const struct crash_oracle *o, size_t completed,
                       const struct crash_obs_node *root, unsigned flags, struct crash_verdict *v);

/* ---- observations and the judge ---------------------------------------------
 * An observation is what someone saw of a recovered crash state: blackout's own fs
 * in-process (crash_explore) or a guest kernel as raw lines (crash_obs_parse_lines).
 * Observers never classify; crash_judge alone turns promises + observation into an
 * outcome (docs/architecture.md). */

/* What the system runs at boot after an unclean shutdown: it decides whether damage
 * a checker finds is something the user would be told of. */
enum crash_boot {
	CRASH_BOOT_TRUST,     /* journal replayed, fsck skipped (ext3, ext4) */
	CRASH_BOOT_FSCK_FULL, /* no journal: the boot scripts run a full fsck (ext2) */
	CRASH_BOOT_VERIFY,    /* replay, then a quick metadata scrub at mount (verify=fast) */
};

enum crash_checker {
	CRASH_CHECK_FSCK,   /* the configured consistency judge (blackout's fsck) */
	CRASH_CHECK_E2FSCK, /* e2fsck -fn */
	CRASH_CHECK_VERIFY, /* the boot-time scrub of CRASH_BOOT_VERIFY */
	CRASH_CHECK_N
};

/* One checker's verdict on a recovered state. */
struct crash_check {
	bool ran;
	int rc;     /* 0: it ran to its end; -errno: it could not (why says so) */
	bool clean; /* with rc 0: it found nothing */
	char why[256];
};

/* An application's own checker run on a recovered state (blackout app, docs/apps.md):
 * exit 0 ok, 1 acknowledged work lost, 2 corruption it detected, anything else (another
 * exit status, a signal, its timeout) the checker failing. */
struct crash_app_check {
	bool ran;
	int exit;       /* its exit status; -1 when killed */
	int sig;        /* the signal that killed it, 0 if none */
	bool timeout;   /* killed at its timeout */
	char line[256]; /* its first output line */
};

/* How Linux md came up in a judging guest before the mount (docs/md.md): assembled as a
 * user would (no --run); a dirty degraded array is refused, and the user's next step,
 * --assemble --run --force, either starts it or not. Not a verdict: the state is judged
 * on what the filesystem then shows; the refusal is counted beside it. */
enum crash_md_start {
	CRASH_MD_NONE,      /* no md under the filesystem */
	CRASH_MD_STARTED,   /* started without being forced */
	CRASH_MD_FORCED,    /* refused; --run --force started it */
	CRASH_MD_UNSTARTED, /* refused, and would not start even forced (a mount failure) */
};

struct crash_observation {
	int mount_rc; /* 0, or -errno: the recovery mount failed */
	char mount_msg[256];
	struct crash_obs_node root; /* the tree read back (mount_rc == 0) */
	int unmount_rc;             /* the filesystem complained on the way out */
	struct crash_check check[CRASH_CHECK_N];
	bool guest_hung; /* the guest stopped answering or panicked on this state */
	struct crash_app_check app;
	enum crash_md_start md;
	char md_msg[160];      /* md's refusal, as mdadm said it */
	unsigned kernel_lines; /* the kernel reported a bug it hit (WARN, BUG, oops, ...) */
	char kernel_msg[208];  /* the first such line */
};
void crash_observation_free(struct crash_observation *obs); /* frees root's tree */

/* A guest's observation as raw lines "BO:OBS ..." (docs/architecture.md, "Observation
 * lines"; other lines are ignored): chunk, md (how md started), mount, dir, file (size +
 * per-chunk MD5s), umount, fsck (e2fsck -fn exit code) and fsck-line (its output), end. Untrusted
 * input: errors name the line. On error obs holds nothing to free. */
#define CRASH_OBS_MAX_TEXT (64u << 20)
int crash_obs_parse_lines(const char *text, size_t len, struct crash_observation *obs,
                          struct bo_err *err);

/* The run steps a guest said had returned ("BO:STEP i" lines of its markers). */
size_t crash_guest_completed(const char *markers, size_t len);

/* What the workload was promised at the cut, and what the configuration allows. */
struct crash_promises {
	const struct crash_oracle *oracle; /* the workload as executed */
	size_t completed;                  /* run steps that had returned before the cut */
	unsigned flags;                    /* CRASH_ORACLE_WRITEBACK: stale data allowed */
	enum crash_boot boot;
	bool fsck_judges; /* CRASH_CHECK_FSCK is the consistency judge (else e2fsck is) */
};

struct crash_outcome {
	unsigned broken;        /* bit i: crash_inv i broken */
	unsigned allowed;       /* bit i: broken but the configuration allows it */
	unsigned read_errors;   /* files that could not be read */
	bool detected;          /* mount, a read, unmount or the boot-time check noticed */
	char detected_by[32];   /* "mount", "read", "unmount", "fsck", "verify", "" */
	int e2fsck_agrees;      /* -1 not run, 0/1: e2fsck's verdict against CRASH_CHECK_FSCK */
	char detail[384];       /* the first problem of each kind, in words */
	enum crash_md_start md; /* how md came up (the observation's), counted apart */
};
/* The one judge. 0, or -errno when the promises and the observation do not fit
 * together (a crash point past the workload's end). */
int crash_judge(const struct crash_promises *p, const struct crash_observation *obs,
                struct crash_outcome *out);

/* Another system's recovery, judged by the same judge (vmtest: the Linux kernel
 * replays the journal and reports an observation as lines).
 *
 * crash_workload_dry_run runs the setup and run steps on a scratch blackout ext3 in
 * memory and fills exec (w->nrun entries: the offsets appends start at), so the
 * steps can be replayed byte for byte elsewhere and the oracle modelled as they
 * ran. A step that fails there, or a fill (its length depends on the device), is
 * an error naming the line. */
int crash_workload_dry_run(const struct crash_workload *w, struct crash_exec *exec,
                           struct bo_err *err);
/* Whether blackout's own ext3 runs step op in-process. The steps it does not (fallocate,
 * xattrs, O_DIRECT, mmap, held-open fds) run only in a guest kernel: crash_run_step
 * fails them with -ENOSYS, and crash_oracle_new refuses an exec holding such a failure
 * with crash_workload_model_check's sentence. The dry run emulates their effect on
 * sizes so the guest compiler can still place appends. */
bool crash_model_supports(enum crash_op op);
/* 0, or -ENOTSUP and "workload line L: OP: not supported by the model (blackout's
 * ext3)" for the first step blackout's ext3 cannot run. */
int crash_workload_model_check(const struct crash_workload *w, struct bo_err *err);
/* Compiles w for a guest into DIR: DIR/workload.sh (busybox ash: bo_setup, bo_run
 * saying "STEP i" as run step i returns) and DIR/wl/ (the bytes of every write, at the
 * offsets of exec, a dry run's). Append in the setup and fill are refused. */
int crash_guest_compile(const struct crash_workload *w, const struct crash_exec *exec,
                        const char *dir, struct bo_err *err);
/* vmtest's own workloads (create, append, mixed, overwrite; n steps) as workload
 * text: 48 synced bystanders, then the run. *text is malloc'd. */
int crash_guest_workload_text(const char *kind, unsigned n, char **text, struct bo_err *err);
/* ---- exploration ------------------------------------------------------------ */

/* A consistency judge for a recovered (and cleanly unmounted) state: sets *clean,
 * and a one-line reason when not. By default the engine uses blackout's own fsck
 * (crash_fsck_own, in-process); e2fsck -fn (crash_fsck_e2fsck) runs besides it with
 * cfg->e2fsck, and is the only judge with cfg->no_fsck. */
typedef int (*crash_fsck_fn)(void *ctx, struct bdev *d, bool *clean, char *why, size_t whylen);
int crash_fsck_own(void *ctx, struct bdev *d, bool *clean, char *why, size_t whylen);
int crash_fsck_e2fsck(void *ctx, struct bdev *d, bool *clean, char *why, size_t whylen);

struct crash_progress {
	uint64_t done, total, violations;
	double seconds;
};

#define CRASH_MAX_STATES_DEFAULT 100000u

/* An observer outside the process (a pool of real-kernel guests, vm.h): instead of
 * mounting each state with blackout's fs, the explorer writes every distinct state it
 * judges into a state store (docs/realkernel.md, section 2: base.img, s<N>.delta,
 * index), deduplicated by the device's view, and asks the observer for the
 * observations of all of them at once; the one judge then classifies each in
 * enumeration order. The observer's filesystem trusts its journal at boot
 * (CRASH_BOOT_TRUST) and its checker fills check[CRASH_CHECK_E2FSCK], the consistency
 * judge; a state on which it hung (guest_hung) is detected broken consistency. */
struct crash_observer {
	const char *name;  /* what observes, before the result's fs: "linux" -> "linux-ext4,..." */
	const char *store; /* the state store directory (made if missing; files overwritten) */
	/* Observes states s0..s<n-1> of store: obs[i] filled for every i (zeroed first).
	 * 0, or -errno with the reason in err. */
	int (*observe)(void *ctx, const char *store, size_t n, struct crash_observation *obs,
	               struct bo_err *err);
	void *ctx;
};

/* What shapes the crash states (stack .. state_id: the rebuild line's fields, see
 * crash_config_format) and how the run reports (the rest). */
struct crash_config {
	const char *stack; /* stack spec; its media are covered by COW overlays */
	const char *fs;    /* "ext3,data=ordered,barrier=1[,metadata_csum][,bs=1024]" */
	const struct crash_workload *wl;
	const char *workload; /* the name or file wl was loaded from; NULL: wl->name */
	uint64_t max_states;  /* budget of states; 0 = CRASH_MAX_STATES_DEFAULT */
	uint64_t seed;
	unsigned shard, nshards; /* judge only states with hash % nshards == shard; 0,0 = all */
	const char *state_id;    /* judge only this state (crash_result has it alone) */
	bool e2fsck;             /* also run e2fsck -fn on failing states and a sample of ok ones */
	crash_fsck_fn fsck;      /* consistency judge; NULL: crash_fsck_own */
	void *fsck_ctx;
	bool no_fsck;         /* judge consistency by mount (and --e2fsck) only */
	const char *keep_dir; /* write failing states as images + rebuild commands */
	const char *arm;      /* fault rule armed on the stack's first fault layer once the
	                       * set-up is on the media (e.g. "write-error every=5") */
	bool map_damage;      /* with state_id: map the state's sectors (crash_result.damage) */
	/* A recorded run to enumerate instead of recording one (docs/realkernel.md, section
	 * 1): its marks `stack`, `fs` and `workload` must name stack, fs and workload; its
	 * entries before `step 0` are the set-up, the rest the run. wl is dry-run for the
	 * oracle (steps marked `fail I` failed). */
	const char *log;
	/* Save the recording (set-up included, with those marks) to this file (rec.h). */
	const char *save_log;
	/* Observe states outside the process (NULL: blackout's fs, in-process). */
	const struct crash_observer *observer;
	/* With an observer: states whose images agree after blackout's replay of the
	 * journal (outside the log) are judged once (docs/explore.md, "Pruning"); only
	 * for ext3/ext4 with a journal blackout's jbd replays as Linux does */
	bool prune;
	/* With prune: 1 in prune_check of the pruned states is judged anyway and its
	 * outcome compared with its representative's (0: none, 1: every one) */
	unsigned prune_check;
	void (*progress)(void *ctx, const struct crash_progress *p);
	void *progress_ctx;
};

/* The `blackout explore` command line that rebuilds cfg's states, into buf: prog
 * (NULL: "blackout") explore --stack S --fs F --workload W [--log FILE] --seed N --max-states N
 * [--arm RULE] [--shard I/N] [--e2fsck] [--state ID]. Quoted for any POSIX shell:
 * stack, fs, log and arm always in single quotes, other values only when they need it.
 * Returns the length, -EINVAL without stack, fs or workload, -ENAMETOOLONG when buf
 * is too small (buf then holds a truncated line). */
int crash_config_format(const struct crash_config *cfg, const char *prog, char *buf, size_t len);
/* Parses a line crash_config_format wrote (any program name, then explore and the
 * options above; single/double quotes and backslashes as sh reads them, anything sh
 * would expand is an error naming its column) into *cfg, equal to the config it was
 * formatted from. cfg's strings point into *words (free with crash_config_words_free);
 * cfg->wl is left NULL for the caller to load cfg->workload. */
int crash_config_parse(const char *line, struct crash_config *cfg, char ***words,
                       struct bo_err *err);
void crash_config_words_free(char **words);
/* 0 when text is a valid --fs value, else -EINVAL with a message saying what is
 * wrong: lets a command refuse it while it reads its options. */
int crash_fs_check(const char *text, struct bo_err *err);
/* One of the options above (opt, and value: the next argument or NULL) into cfg:
 * returns how many arguments it took (1 or 2), 0 when opt is not one of them, or
 * -EINVAL/-ERANGE with a message naming the option. Strings are not copied. */
int crash_config_option(struct crash_config *cfg, const char *opt, const char *value,
                        struct bo_err *err);
/* The rebuild fields are the same (0 budget = the default; unsharded = 0/1 = 1/1). */
bool crash_config_equal(const struct crash_config *a, const struct crash_config *b);

/* One judged crash state that broke something. */
struct crash_state {
	char id[160];     /* "p<pos>[w]-<decisions>": rebuild with --state ID */
	size_t pos;       /* cut after log entries [0, pos) */
	bool inflight;    /* and during entry pos (a write) */
	size_t completed; /* run steps completed before the cut */
	unsigned broken, allowed;
	bool detected;        /* mount, fsck or a checksum reported it */
	char detected_by[32]; /* "mount", "fsck", "read", "e2fsck", "" */
	char detail[384];
	int e2fsck_agrees; /* -1 not run, 0 disagrees with own judgement, 1 agrees */
};

/* One recorded I/O operation (the timeline a report draws). */
struct crash_io {
	char op[8]; /* write, flush, discard, mark */
	uint64_t lba;
	uint32_t count;
	bool fua;
	char mark[64];
};

/* Sectors of a crash state (of the top device, before recovery) that are not what
 * the stack held at the cut: "lost" = the content from before the recording (an
 * update did not persist), "damaged" = neither that nor the latest (torn, erased,
 * collateral damage). Contiguous sectors of one kind are one range. */
struct crash_damage {
	uint64_t lba;
	uint64_t count;
	char what[8];
	uint64_t block;  /* the filesystem block of the first sector */
	uint64_t blocks; /* filesystem blocks the range touches (0: block size unknown) */
	uint32_t ino;    /* its owner's inode (0: a structure, or unknown) */
	char owner[160]; /* what that block belongs to at the cut ("" = free/unknown) */
};
#define CRASH_DAMAGE_MAX 256

struct crash_result {
	char stack[512], fs[128], workload[64];
	/* an outside observer's: the kernel release that ran (a real-kernel run, else
	 * empty), and the run step it refused, "step N (OP ...): rejected by the kernel:
	 * ERRNO" (else empty; the run stopped there, docs/vmtest.md) */
	char kernel[64], rejected[256];
	uint64_t seed, max_states;
	unsigned shard, nshards;
	uint64_t cuts;  /* cut points (after each op, during each write) */
	uint64_t space; /* outcomes the stack allows over all cuts (saturating) */
	double space_log2;
	bool exhaustive; /* every outcome was built */
	uint64_t built;  /* states built (this shard's and the others') */
	uint64_t judged; /* distinct states this shard judged */
	uint64_t duplicates;
	uint64_t ok;
	uint64_t viol[CRASH_INV_N];    /* states breaking each invariant (allowed excluded) */
	uint64_t allowed[CRASH_INV_N]; /* broken but allowed by the configuration */
	uint64_t silent, detected;     /* failing states nobody / somebody reported */
	uint64_t hung;                 /* of the detected: the observer's guest hung or panicked */
	/* md in the observer's guest (docs/md.md): states md started as a user asked, states
	 * it refused (a dirty degraded array), and of the refused: ok once forced, failing
	 * silently once forced, not started even forced (the rest failed, detected) */
	uint64_t md_started, md_refused, md_forced_ok, md_forced_silent, md_unstarted;
	uint64_t e2fsck_runs, e2fsck_disagree;
	/* crash_config.prune: whether it was asked, and why the rule was off ("" on);
	 * states not judged because their image after journal replay is a judged state's;
	 * of those, judged anyway (prune_check) and how many of these had another outcome
	 * than their representative (a wrong pruning: never expected) */
	bool prune_asked;
	char prune_off[96];
	uint64_t pruned, prune_checked, prune_mismatch;
	/* writes of the recorded run that failed (an armed fault rule): the same in every
	 * shard; not in the JSON */
	uint64_t write_errors;
	double coverage; /* built / space */
	/* time split (seconds; not part of the JSON so runs compare equal) */
	double t_record, t_construct, t_recover, t_oracle, t_fsck, t_total;
	double t_store, t_observe; /* observer: reading views + writing the store; observing */
	uint64_t stored_blocks;    /* observer: 4 KiB blocks written into deltas */
	struct crash_state *fail;  /* failing states, in enumeration order */
	size_t nfail;
	size_t fail_cap;     /* entries allocated in fail (crash_result_add grows it) */
	struct crash_io *io; /* the recorded run */
	size_t nio;
	struct crash_damage *damage; /* map_damage: at most CRASH_DAMAGE_MAX ranges */
	size_t ndamage;
	bool damage_truncated;
};

int crash_explore(const struct crash_config *cfg, struct crash_result **out, struct bo_err *err);
/* Counts one judged state's outcome, whoever observed it (blackout's own fs, a guest of
 * the real kernel, md in that guest, an application's checker): the invariants broken
 * and allowed, ok / silent / detected, hung, md's start and e2fsck's disagreement; and
 * lists the state (its verdict fields taken from o) when it broke an invariant or was
 * allowed to. `judged` is the caller's: it counts the states chosen for judging, which
 * an outside observer judges later. 0 or -ENOMEM. */
int crash_result_add(struct crash_result *r, const struct crash_state *s,
                     const struct crash_outcome *o);
void crash_result_free(struct crash_result *r);
int crash_result_write_json(const struct crash_result *r, FILE *f);
void crash_result_print(const struct crash_result *r, FILE *f);
/* A sampled run's coverage (a fraction) as every output prints it: "1.65e-22%", "0.35%",
 * three significant digits and never rounded to zero. */
void crash_coverage_text(double coverage, char *buf, size_t len);
/* Combines shard results (same stack, fs, workload, seed, budget) into one equal
 * to the unsharded run. */
int crash_result_merge(struct crash_result *const *parts, size_t n, struct crash_result **out,
                       struct bo_err *err);
int crash_result_read_json(const char *text, size_t len, struct crash_result **out,
                           struct bo_err *err);
/* crash_result_read_json of a file (shards, vmtest --explore-json); errors name it. */
int crash_result_load(const char *path, struct crash_result **out, struct bo_err *err);

#endif
