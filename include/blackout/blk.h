/* SPDX-License-Identifier: GPL-2.0-or-later */
/* blk.h — the block-device interface every medium, device model and client uses.
 *
 * One ops struct, like the kernel's bio flags or SQLite's io_methods: a device is a
 * struct bdev embedded first in the model's own struct. Durability is carried as
 * flags: a write with BLK_FUA is durable when it completes; blk_flush() makes every
 * write that completed before it durable. Nothing else is durable. FUA does not
 * order other writes.
 *
 * Errors are negative errno values, never abort(). Range and alignment checks are
 * done here, once, before any ops function is called.
 */
#ifndef BLACKOUT_BLK_H
#define BLACKOUT_BLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/err.h"

enum {
	BLK_FUA = 1u << 0, /* this write is durable when it completes */
};

struct bdev;
struct blk_chooser;

/* A write that had been submitted but had not completed when the power was cut.
 * It is the device's to decide (through the chooser) how much of it persisted. */
struct blk_inflight {
	uint64_t lba;
	uint32_t count; /* sectors */
	unsigned flags;
	const void *data;
};

struct bdev_ops {
	int (*read)(struct bdev *d, uint64_t lba, uint32_t count, void *buf);
	int (*write)(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags);
	int (*flush)(struct bdev *d);
	/* Optional: a write that hands its buffer over instead of copying it, for a
	 * model writing back a buffer it is done with. *buf is a page from
	 * blk_page_alloc, owned by the caller, whose first count * sector_size bytes
	 * are the data. When that is the whole page the device may keep it as its own
	 * storage and put in *buf another such page (contents unspecified) or NULL,
	 * which the caller then owns; otherwise it copies and leaves *buf alone. On
	 * error *buf is unchanged. NULL: blk_write_swap copies through write. */
	int (*write_swap)(struct bdev *d, uint64_t lba, uint32_t count, void **buf, unsigned flags);
	/* optional; NULL means discard is accepted and ignored (data stays readable) */
	int (*discard)(struct bdev *d, uint64_t lba, uint32_t count);
	/* frees the device and, for a model, the lower devices it owns */
	void (*close)(struct bdev *d);

	/* Deep copy of the device and of every lower device it owns, volatile state
	 * included. Media copies are cheap (copy-on-write). Optional: NULL means the
	 * device cannot be cloned (blk_clone returns -EOPNOTSUPP). */
	int (*clone)(struct bdev *d, struct bdev **out);

	/* Power cut. The device turns its volatile state (and `inflight`, a write in
	 * progress at the moment of the cut, or NULL) into persistent state, asking
	 * `ch` for every non-deterministic decision, then cuts its lower devices the
	 * same way (passing down whatever it had in flight to them). Media (mem, file,
	 * cow) have no volatile state and may leave this NULL. */
	int (*power_cut)(struct bdev *d, struct blk_chooser *ch,
	                 const struct blk_inflight *inflight);
	/* Power back on: only persistent state is visible. Optional. blk_power_restore
	 * first restores every lower device reachable through `lower` (restoring a
	 * device that is on is a no-op, so a model may also forward it itself), then
	 * calls this. */
	int (*power_restore)(struct bdev *d);

	/* Idle time: the device finishes every volatile write it holds, as real
	 * firmware eventually does on its own (a cache that ignores flush requests
	 * still writes back when idle). Not a durability request the host can make:
	 * the crash explorer uses it between a workload's set-up and its recorded run,
	 * so files synced "long ago" are on the media whatever the drive's honesty.
	 * Optional; blk_settle then settles the lower devices. */
	int (*settle)(struct bdev *d);

	/* The i-th lower device this one stands on, or NULL past the last: lets
	 * generic code walk a stack (find a model, sum statistics). Optional. */
	struct bdev *(*lower)(struct bdev *d, unsigned i);
	/* Reports counters as key/value pairs ("reads", "writes", "fua_writes",
	 * "flushes", "dirty_bytes", "nand_erases" ...). Optional. */
	void (*stats)(struct bdev *d, void (*emit)(void *ctx, const char *key, uint64_t v),
	              void *ctx);

	/* Capabilities. Upper layers find a device that can do something by asking
	 * its ops (dev_has_cap, dev_stack_find_cap in dev.h), never by its name.
	 * All optional. A device that takes fault rules at run time (the `fault`
	 * model): arm returns the new rule's id (>= 0), disarm -ENOENT for no such id. */
	int (*rule_arm)(struct bdev *d, const char *rule, struct bo_err *err);
	int (*rule_disarm)(struct bdev *d, int id);
	/* A device with redundancy members (the RAID levels): lowers 0..members-1
	 * are its members, and member i can be failed as a failing disk would be. */
	unsigned (*members)(struct bdev *d);
	int (*member_fail)(struct bdev *d, unsigned i);

	/* Whether a read of [lba, lba + count) (in range, count > 0) would succeed and
	 * give only zeroes, answered from what the device holds without reading it:
	 * true only when it knows (the overlay's zero sectors, a medium never written).
	 * "Don't know" is false. Optional (NULL: false); see blk_reads_zero. */
	bool (*reads_zero)(struct bdev *d, uint64_t lba, uint32_t count);
};

struct bdev {
	const struct bdev_ops *ops;
	char name[64];        /* for messages: "cache", "mem", "raid5" ... */
	uint32_t sector_size; /* 512 or 4096 */
	uint64_t nr_sectors;
	bool powered_off;  /* set by blk_power_cut, cleared by blk_power_restore */
	bool read_only;    /* writes, discards return -EROFS */
	struct bo_err err; /* detail of this device's last error */
};

/* Initialises the common fields; returns -EINVAL for a bad sector size. */
int blk_init(struct bdev *d, const struct bdev_ops *ops, const char *name, uint32_t sector_size,
             uint64_t nr_sectors);

/* The checked entry points. Every caller uses these, never d->ops directly.
 * Out-of-range or zero-length I/O gives -EINVAL; a powered-off device -EIO. */
int blk_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf);
int blk_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags);
/* Page-aligned blocks of BLK_PAGE_BYTES, the only buffers write_swap hands over
 * (src/blk/pages.c). blk_page_alloc gives NULL when memory runs out; the contents
 * of a new page are unspecified. blk_page_free(NULL) does nothing. Thread-safe. */
#define BLK_PAGE_BYTES 4096u
void *blk_page_alloc(void);
void blk_page_free(void *page);
/* A write that may hand *buf over (see bdev_ops.write_swap); afterwards the caller
 * owns whatever *buf then holds (possibly NULL), and no longer owns the block it
 * passed unless *buf still points at it. */
int blk_write_swap(struct bdev *d, uint64_t lba, uint32_t count, void **buf, unsigned flags);
int blk_flush(struct bdev *d);
int blk_discard(struct bdev *d, uint64_t lba, uint32_t count);
/* True when the device knows, without reading, that a read of [lba, lba + count)
 * would succeed and give zeroes (bdev_ops.reads_zero); false when it does not know,
 * and for a range outside the device or a device that is off. Lets a reader skip
 * what it would only find empty (fsck's pass 1 over unused inode tables). Leaves
 * d->err alone. */
bool blk_reads_zero(struct bdev *d, uint64_t lba, uint32_t count);
void blk_close(struct bdev *d);
int blk_clone(struct bdev *d, struct bdev **out);
int blk_power_cut(struct bdev *d, struct blk_chooser *ch, const struct blk_inflight *inflight);
int blk_power_restore(struct bdev *d);
/* Settles d and then every lower device (see bdev_ops.settle). */
int blk_settle(struct bdev *d);
/* NULL-safe wrappers of the optional walking/statistics ops. */
struct bdev *blk_lower(struct bdev *d, unsigned i);
void blk_stats(struct bdev *d, void (*emit)(void *ctx, const char *key, uint64_t v), void *ctx);

/* Byte-addressed helpers for clients whose unit is not the sector (a filesystem
 * block, a journal block): offset and length must be sector-aligned. */
int blk_pread(struct bdev *d, uint64_t off, size_t len, void *buf);
int blk_pwrite(struct bdev *d, uint64_t off, size_t len, const void *buf, unsigned flags);

static inline uint64_t blk_size_bytes(const struct bdev *d)
{
	return d->nr_sectors * d->sector_size;
}

/* ---- Power-cut choices ------------------------------------------------------
 * A cut is non-deterministic; a model asks its chooser for each decision, "pick one
 * of n". Exploring every outcome is then a walk over the decision tree (the DFS
 * chooser), sampling one is a seeded random chooser, and replaying a known outcome
 * is a fixed list of decisions. Models must ask in a deterministic order for a
 * given pre-cut state, so a decision list names one outcome exactly. */
struct blk_chooser {
	/* returns a value in [0, n); n >= 1. `what` names the decision (for traces). */
	uint64_t (*choose)(struct blk_chooser *c, uint64_t n, const char *what);
};

static inline uint64_t blk_choose(struct blk_chooser *c, uint64_t n, const char *what)
{
	return n <= 1 || !c ? 0 : c->choose(c, n, what);
}

/* Always 0: the outcome where nothing volatile persisted beyond what must. */
extern struct blk_chooser blk_chooser_zero;

/* Seeded random decisions. */
struct blk_chooser_random {
	struct blk_chooser base;
	uint64_t state;
};
void blk_chooser_random_init(struct blk_chooser_random *c, uint64_t seed);

/* Replays a recorded decision list; decisions past its end are 0. Records every
 * decision it is asked for (n and the answer) so a run can be written down. */
#define BLK_CHOICES_MAX 4096
struct blk_chooser_list {
	struct blk_chooser base;
	uint32_t len, pos; /* decisions given; next to be asked */
	uint64_t v[BLK_CHOICES_MAX];
	uint64_t n[BLK_CHOICES_MAX]; /* radix of each decision as asked */
	bool overflow;               /* more than BLK_CHOICES_MAX decisions */
};
void blk_chooser_list_init(struct blk_chooser_list *c, const uint64_t *v, uint32_t len);

/* Depth-first enumeration of every outcome: run a cut with it, then call
 * blk_chooser_dfs_next(); it returns false when every outcome has been visited. */
struct blk_chooser_dfs {
	struct blk_chooser_list list;
};
void blk_chooser_dfs_init(struct blk_chooser_dfs *c);
void blk_chooser_dfs_rewind(struct blk_chooser_dfs *c); /* before each run */
bool blk_chooser_dfs_next(struct blk_chooser_dfs *c);

/* Visits the outcomes of cutting power to `d` now (with `inflight` in progress, or
 * NULL), depth-first, at most `max` of them. For each: a clone of d is cut with
 * that outcome's decisions and powered back on, and fn(ctx, state, decisions) is
 * called; the clone is closed after fn returns. fn returning non-zero stops the
 * walk with that value. *complete (may be NULL) tells whether every outcome was
 * visited. Returns the number visited, or -errno. d itself is not changed. */
int64_t blk_cut_foreach(struct bdev *d, const struct blk_inflight *inflight, uint64_t max,
                        int (*fn)(void *ctx, struct bdev *state,
                                  const struct blk_chooser_list *decisions),
                        void *ctx, bool *complete);

/* ---- Media backends --------------------------------------------------------- */

/* RAM image of nr_sectors sectors, zero-filled. */
int blk_mem_open(uint32_t sector_size, uint64_t nr_sectors, struct bdev **out);

enum {
	BLK_FILE_RDONLY = 1u << 0,
	BLK_FILE_CREATE = 1u << 1, /* create (or extend) to `size` bytes */
};
/* An image file or block device. size 0: use the file's size. */
int blk_file_open(const char *path, uint32_t sector_size, uint64_t size, unsigned flags,
                  struct bdev **out, struct bo_err *err);

/* Copy-on-write overlay over `base`, which the overlay only reads. The overlay
 * does not own the base: close the base after every overlay on it. Memory is
 * O(changed sectors); clone is O(1) (structure shared, copied on write). */
int blk_cow_open(struct bdev *base, struct bdev **out);
uint64_t blk_cow_changed(const struct bdev *cow); /* sectors held by the overlay */
/* 64-bit digest of the overlay's content (changed sectors and discards), equal for
 * overlays of the same base that read back identically in every changed sector. */
uint64_t blk_cow_digest(const struct bdev *cow);
/* Whether two overlays of the same base hold the same sectors with the same bytes
 * (what equal digests claim); a device that is not an overlay is never the same. */
bool blk_cow_same(const struct bdev *a, const struct bdev *b);
/* Calls fn for every sector the overlay holds, in LBA order; data NULL = discarded. */
int blk_cow_foreach(const struct bdev *cow, int (*fn)(void *ctx, uint64_t lba, const void *data),
                    void *ctx);

#endif
