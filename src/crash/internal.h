/* internal.h — what the files of src/crash/ share with each other and nothing else:
 * the filesystem configuration, the workload runner, the tree observer, dedup. */
#ifndef BLACKOUT_CRASH_INTERNAL_H
#define BLACKOUT_CRASH_INTERNAL_H

#include "blackout/crash.h"
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

/* Keys of the states seen so far, each with the ordinal of its first appearance:
 * that ordinal (not the key's bytes, which hold timestamps of the recording) picks
 * the shard, so every shard partitions the states the same way. */
struct crash_seen {
	uint64_t *key, *first;
	size_t cap, n;
};
/* The key of a state: a digest of its overlays and the crash point. A stack with no
 * overlay to digest gets a key of its own (`ordinal`): no dedup. */
uint64_t crash_state_key(struct bdev *state, size_t completed, uint64_t ordinal);
int crash_seen_add(struct crash_seen *s, uint64_t key, uint64_t ordinal, bool *dup,
                   uint64_t *first);
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

/* ---- md5.c ------------------------------------------------------------------ */

void crash_md5(const void *buf, size_t len, uint8_t out[16]);

#endif
