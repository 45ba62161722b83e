/* SPDX-License-Identifier: GPL-2.0-or-later */
/* crash_int.h — what the files of src/crash/ share with each other and nothing else:
 * the filesystem configuration, the workload runner, the tree observer, dedup. */
#ifndef BLACKOUT_CRASH_INT_H
#define BLACKOUT_CRASH_INT_H

#include "blackout/crash.h"
#include "blackout/jbd.h"
#include "blackout/fs.h"
#include "blackout/rec.h"

/* ---- fscfg.c: the --fs text ------------------------------------------------- */

#define CRASH_CLOCK 1577836800u /* 2020-01-01: every timestamp an exploration writes */

struct crash_fscfg {
	struct fs_mkfs_opts mk;
	struct fs_mount_opts mo;
	bool writeback;
	bool verify_fast;
	enum crash_boot boot;
};
int crash_fscfg_parse(const char *text, struct crash_fscfg *c, struct bo_err *err);

/* ---- runner.c: one workload step on blackout's fs ----------------------------- */

/* Runs s on fs and records what it did in x; returns x->rc. MARK steps go into log
 * (NULL: ignored). */
int crash_run_step(struct fs *fs, const struct crash_step *s, struct rec_log *log,
                   struct crash_exec *x);

/* ---- observe.c: blackout's fs as an observer ----------------------------------- */

/* Reads the whole tree of a mounted fs into root (a directory node). Unreadable
 * entries are recorded in their read_rc, not fatal. */
int crash_observe_tree(struct fs *fs, struct crash_obs_node *root);

struct crash_obs_times {
	double mount, read; /* seconds spent mounting, reading the tree and unmounting */
};
/* Mounts state with mo, reads its tree, unmounts: fills obs (mount_rc/mount_msg,
 * root, unmount_rc). 0, or -errno when the observation itself failed (memory). */
int crash_observe_fs(struct bdev *state, const struct fs_mount_opts *mo,
                     struct crash_observation *obs, struct crash_obs_times *t);
/* Runs one consistency checker on state into c (ran, rc, clean, why). */
void crash_observe_check(crash_fsck_fn fn, void *ctx, struct bdev *state, struct crash_check *c);
/* The boot-time quick scrub of verify=fast (fsck --fast). */
int crash_fsck_verify(void *ctx, struct bdev *d, bool *clean, char *why, size_t whylen);

/* ---- judge.c: crash_judge in two halves ---------------------------------------- */

/* The tree's half of crash_judge (mount, oracle, read and unmount errors): the part
 * that needs obs->root, so an explorer can free the tree before the checkers run. */
int crash_judge_tree(const struct crash_promises *p, const struct crash_observation *obs,
                     struct crash_outcome *o);
/* The checkers' half, applied to an outcome fresh from crash_judge_tree (a copy of it
 * when judged again with more checks): crash_judge is the two in a row. */
void crash_judge_checks(const struct crash_promises *p, const struct crash_observation *obs,
                        struct crash_outcome *o);

/* ---- checklines.c: each filesystem checker's clean run ------------------------- */

/* A checker the guest can run (its `checker NAME` observation line): from which exit
 * status it could not check at all, and whether a line it printed belongs to a clean
 * run (anything else is a complaint). */
struct crash_checker_rules {
	const char *name; /* as the observation names it: e2fsck, xfs_repair, btrfs-check */
	const char *says; /* as a verdict's reason names it */
	unsigned could_not_check;
	bool (*clean_line)(const char *line);
};
/* The rules of checker NAME, NULL for a checker the judge does not know. */
const struct crash_checker_rules *crash_checker_find(const char *name);

/* ---- dedup.c: distinct states and shards --------------------------------------- */

uint64_t crash_mix64(uint64_t z);

/* The states seen so far: each distinct one's key, the ordinal of its first
 * appearance and, to compare bytes when keys match, clones of its overlays (O(1)
 * each: they share the state's trees). The first ordinal (not the key's bytes, which
 * hold timestamps of the recording) picks the shard, so every shard partitions the
 * states the same way. */
struct crash_seen_entry {
	uint64_t key, first;
	size_t completed;
	size_t nth; /* which distinct state: 0, 1, ... in the order they were added */
};
/* Distinct state nth's overlays in digest order (cow NULL: never the same). */
struct crash_seen_kept {
	struct bdev **cow;
	unsigned ncow;
	size_t completed;
};
struct crash_seen {
	struct crash_seen_entry *e;
	size_t cap, n;
	/* kept[nth], for states added with their overlays; those before `released` have
	 * been let go (their crash point is behind the explorer's) */
	struct crash_seen_kept *kept;
	size_t nkept, kept_cap, released;
	uint64_t compared;                  /* key matches, each settled by comparing bytes */
	uint64_t (*key_hook)(uint64_t key); /* tests: force keys to collide */
};
/* The key of a state: a digest of its overlays and the crash point. A stack with no
 * overlay to digest gets a key of its own (`ordinal`): no dedup. */
uint64_t crash_state_key(struct bdev *state, size_t completed, uint64_t ordinal);
/* Adds a state unless it is a duplicate. A key match is a duplicate only if the
 * crash point is the same and the overlays hold the same bytes, so a collision of the
 * 64-bit key can never skip a distinct state; a state with no overlay (or more than
 * 64) is never a duplicate. States come in the order of their crash points (the
 * explorer walks the log once): a state at a later crash point than the last lets go
 * of the overlays kept for earlier ones, which no later state can equal, so memory
 * follows the states of one crash point, not all of them. (Should an earlier crash
 * point come again, its states find nothing to compare with and are judged again:
 * never skipped.) */
int crash_seen_add(struct crash_seen *s, uint64_t key, struct bdev *state, size_t completed,
                   uint64_t ordinal, bool *dup, uint64_t *first);
/* The same for states whose bytes the caller keeps (the state store): on a key match
 * at the same crash point, same(ctx, e) says whether the state is entry e's bytes
 * (1), or not (0), or fails (-errno); a new state is entry s->n - 1 (its nth). */
int crash_seen_add_by(struct crash_seen *s, uint64_t key, size_t completed, uint64_t ordinal,
                      int (*same)(void *ctx, const struct crash_seen_entry *e), void *ctx,
                      bool *dup, uint64_t *first);
void crash_seen_free(struct crash_seen *s);
/* Whether the state first seen as `first` belongs to shard `shard` of `nshards`. */
bool crash_shard_mine(uint64_t first, unsigned shard, unsigned nshards);

/* ---- damage.c: what a state lost, sector by sector; keeping states ------------- */

/* Maps the sectors of state that differ from live (the stack at the cut, with the
 * write in flight infl) into r->damage, as lost (= live0, the stack at recording
 * start) or damaged, and names each range's owner on a recovered copy of live. */
int crash_map_damage(struct crash_result *r, struct bdev *state, struct bdev *live,
                     struct bdev *live0, const struct blk_inflight *infl,
                     const struct fs_mount_opts *mo, struct bo_err *err);
/* Writes raw as DIR/ID.img (DIR = cfg->keep_dir) and the command that rebuilds it,
 * from crash_config_format, as DIR/ID.cmd. */
int crash_keep_state(const struct crash_config *cfg, struct bdev *raw, const char *id,
                     struct bo_err *err);

/* ---- store.c: the state store of an outside observer (docs/realkernel.md) ------- */

/* The largest device whose views the store holds in memory (base and one state). */
#define CRASH_STORE_MAX_DEVICE (4ull << 30)

struct crash_store {
	char *dir;
	uint64_t size;        /* the device's bytes, a multiple of 4096 */
	uint8_t *base, *view; /* the view where the run began; the last state's */
	uint64_t *blocks;     /* the 4 KiB blocks where view differs from base */
	size_t nblocks, nblocks_max;
	size_t n;    /* states stored: s0 .. s<n-1> */
	FILE *index; /* written as .index.tmp, renamed by crash_store_finish */
	uint64_t stored_blocks;
	double seconds; /* reading views and writing deltas */
	/* every distinct state's delta, shard's or not (an unlinked file in dir), for
	 * comparing bytes when keys match: kept[nth] is where distinct state nth's is */
	FILE *seen;
	uint64_t seen_end;
	struct crash_store_kept {
		uint64_t off;
		size_t nblocks;
	} * kept;
	size_t nkept, kept_cap;
	uint8_t *cmp; /* a piece of the seen file being compared */
};
/* Makes dir (if missing) and writes base.img, live0's view. */
int crash_store_open(struct crash_store *s, const char *dir, struct bdev *live0,
                     struct bo_err *err);
/* Reads state's view into s and gives its key: a digest of where and how it differs
 * from base, and the crash point (completed). */
int crash_store_view(struct crash_store *s, struct bdev *state, size_t completed, uint64_t *key,
                     struct bo_err *err);
/* Whether the last viewed state (key from crash_store_view) is a duplicate in seen:
 * a key match is one only if the bytes equal a state kept in the seen file; a new
 * state's delta is appended to that file. */
int crash_store_seen(struct crash_store *s, struct crash_seen *seen, uint64_t key, size_t completed,
                     uint64_t ordinal, bool *dup, uint64_t *first, struct bo_err *err);
/* The last viewed state as s<N>.delta (*n = N) and its index line "s<N> ID COMPLETED". */
int crash_store_add(struct crash_store *s, const char *id, size_t completed, size_t *n,
                    struct bo_err *err);
/* The last viewed state as DIR/ID.img: base + delta, byte for byte. */
int crash_store_keep(const struct crash_store *s, const char *dir, const char *id,
                     struct bo_err *err);
/* Writes the index (once every state is stored). */
/* A log of several devices (the plugin's members=): writes `members`, one line
 * "m<I> START BYTES" per device, where it lies in base.img and every delta; each must
 * be a whole number of 4 KiB blocks, so every block of a delta is one member's. */
int crash_store_members(struct crash_store *s, const struct rec_log *log, struct bo_err *err);
int crash_store_finish(struct crash_store *s, struct bo_err *err);
void crash_store_close(struct crash_store *s);

/* ---- fromlog.c: a recorded run (docs/realkernel.md, section 1) ------------------ */

/* Loads cfg->log and checks it against cfg and the opened stack: its `stack`, `fs` and
 * `workload` marks, a `step 0` and an `end` (or a `fail` that stopped the run), its
 * geometry. *run0 is the index of the `step 0` mark (entries before it are the
 * set-up); exec (wl->nrun entries) gets the dry run of cfg->wl with the steps marked
 * `fail I`, and those that never began, failed. */
int crash_log_open(const struct crash_config *cfg, const struct bdev *stack, struct rec_log **log,
                   size_t *run0, struct crash_exec *exec, struct bo_err *err);
/* The checks of crash_log_open on a parsed log (untrusted: fuzz/fuzz_crash_log.c):
 * geometry, the naming marks against cfg (stack, fs, workload or wl->name), the run's
 * marks against a workload of nrun steps; failed[i] set for each `fail i`, *begun the
 * steps that began (fewer than nrun when the run stopped at a failure). */
int crash_log_check(const struct crash_config *cfg, const struct rec_log *log, uint32_t sector_size,
                    uint64_t nr_sectors, size_t nrun, size_t *run0, bool *failed, size_t *begun,
                    struct bo_err *err);

/* ---- md5.c ------------------------------------------------------------------ */

void crash_md5(const void *buf, size_t len, uint8_t out[16]);

/* ---- prune.c: states the journal makes equivalent (docs/explore.md, "Pruning") ---- */
struct crash_prune_slot {
	bool used;
	uint64_t k[2];
	uint64_t first; /* the representative's ordinal */
};
struct crash_prune {
	bool on;                /* the rule applies to this device's filesystem */
	char why_not[96];       /* when not, why */
	uint64_t size;          /* the view's bytes */
	uint32_t bs;            /* filesystem block */
	uint64_t fs_blocks;     /* filesystem blocks */
	struct jbd_extent *ext; /* the journal's map */
	size_t next, cap;
	uint64_t jblocks;
	uint8_t *mask;    /* per 4 KiB block of the view: 1 = log only, not compared */
	struct bdev *img; /* base, where each state is replayed and then put back */
	uint8_t *buf;     /* a piece of img being compared */
	uint64_t replays; /* states replayed cleanly (keyed) */
	uint64_t doubted; /* states whose replay failed or met a bad checksum: not keyed */
	struct crash_prune_slot *t; /* keys seen: replayed image -> representative */
	size_t n, tcap;
};
/* Reads the filesystem's journal map from base (the device's view where the run
 * began); p->on says whether the rule applies, p->why_not why not. 0 or -ENOMEM. */
int crash_prune_open(struct crash_prune *p, const uint8_t *base, uint64_t size);
/* A state's key after replay: view (base with blocks[0..n) differing) replayed with
 * blackout's jbd, digested outside the log, with the crash point (completed). *keyed
 * false: no key (the rule is off, or this state's replay was not clean). */
int crash_prune_key(struct crash_prune *p, const uint8_t *base, const uint8_t *view,
                    const uint64_t *blocks, size_t n, size_t completed, uint64_t key[2],
                    bool *keyed);
/* Whether key was seen: *first the representative's ordinal (ordinal when new). */
int crash_prune_seen(struct crash_prune *p, const uint64_t key[2], uint64_t ordinal, bool *found,
                     uint64_t *first);
void crash_prune_close(struct crash_prune *p);

#endif
