/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rec.h — record the I/O of a workload once, replay any prefix of it many times.
 *
 * A recorder is a pass-through bdev that appends every operation that reaches it
 * (write with its data and flags, flush, discard, optionally reads) to a log, in
 * order. A log lives in memory and can be saved to and loaded from a file whose
 * format is in docs/log-format.md (versioned header, checksummed records: a
 * truncated or corrupted file is reported with the byte offset). Markers (a name
 * at a position, e.g. "after fsync of /a") are log entries too. */
#ifndef BLACKOUT_REC_H
#define BLACKOUT_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/err.h"

enum rec_op {
	REC_WRITE = 1,
	REC_FLUSH = 2,
	REC_DISCARD = 3,
	REC_READ = 4,
	REC_MARK = 5,
};

struct rec_entry {
	enum rec_op op;
	unsigned flags; /* BLK_FUA for writes */
	uint64_t lba;
	uint32_t count;   /* sectors (write, discard, read) */
	const void *data; /* write: count * sector_size bytes */
	const char *mark; /* REC_MARK: the name */
	int result;       /* what the lower device returned (0 or -errno) */
	unsigned dev;     /* the device it reached, 0..ndev-1 (0 in a one-device log);
	                   * lba is that device's own */
};

/* Longest mark name (bytes, no NUL); an empty name is refused as well. */
#define REC_MARK_MAX 255
/* Largest log file rec_log_load reads (the whole file is held in memory twice). */
#define REC_LOG_FILE_MAX (1ull << 30)

/* Devices one log may record (each its own LBA space, one order for all). */
#define REC_LOG_DEVICES_MAX 64

struct rec_log;
int rec_log_new(uint32_t sector_size, uint64_t nr_sectors, struct rec_log **out);
/* A log of n devices (2..REC_LOG_DEVICES_MAX) of sizes[i] sectors each, one clock for
 * all: the members of a `concat` laid end to end (rec_log_nr_sectors is their sum). */
int rec_log_new_devices(uint32_t sector_size, unsigned n, const uint64_t *sizes,
                        struct rec_log **out);
/* 1 for a one-device log. */
unsigned rec_log_ndev(const struct rec_log *log);
/* Device d's size and its first sector in the devices laid end to end. */
uint64_t rec_log_dev_sectors(const struct rec_log *log, unsigned d);
uint64_t rec_log_dev_start(const struct rec_log *log, unsigned d);
void rec_log_free(struct rec_log *log);
size_t rec_log_len(const struct rec_log *log);
const struct rec_entry *rec_log_get(const struct rec_log *log, size_t i);
uint32_t rec_log_sector_size(const struct rec_log *log);
uint64_t rec_log_nr_sectors(const struct rec_log *log);
/* Copies e (its data and mark) into the log. A mark must have a name of 1 to
 * REC_MARK_MAX bytes (-EINVAL, -ENAMETOOLONG). */
int rec_log_append(struct rec_log *log, const struct rec_entry *e);
int rec_log_mark(struct rec_log *log, const char *name);
/* Bytes the log takes in its file format (docs/log-format.md): what a save writes. */
uint64_t rec_log_bytes(const struct rec_log *log);
/* Caps the log's file size at `bytes` (0: no cap, the default). An append that would
 * pass it is refused with -ENOSPC, and a recorder refuses the operation itself before
 * it reaches the lower device, so the log never misses what the device did. */
void rec_log_set_cap(struct rec_log *log, uint64_t bytes);
/* Operations refused so far because of the cap (the log is then incomplete). */
uint64_t rec_log_refused(const struct rec_log *log);
const char *rec_op_name(enum rec_op op);

enum {
	REC_OWN_LOWER = 1u << 0, /* closing the recorder closes the lower device */
	REC_LOG_READS = 1u << 1, /* log reads as well (without data) */
};
/* A pass-through recorder over `lower` appending to `log` (not owned). */
int rec_open(struct bdev *lower, struct rec_log *log, unsigned flags, struct bdev **out);
/* The same for device `dev` of a several-device log: lower has that device's size,
 * its entries carry `dev`. Several recorders may share one log (one global order). */
int rec_open_dev(struct bdev *lower, struct rec_log *log, unsigned dev, unsigned flags,
                 struct bdev **out);
/* Stop/start appending (set-up I/O can be kept out of the log). */
void rec_pause(struct bdev *rec, bool paused);

/* Applies entries [0, n) of log to target (reads and marks skipped, entries that
 * failed when recorded skipped). A several-device log replays onto the devices laid
 * end to end (a `concat` of them): see rec_apply_log. */
int rec_replay(const struct rec_log *log, size_t n, struct bdev *target, struct bo_err *err);
/* Applies one entry of a one-device log. */
int rec_apply(const struct rec_entry *e, struct bdev *target);
/* Applies one entry of log to target: in a several-device log a write or discard of
 * device d goes to target at rec_log_dev_start(d) + lba, and a flush of d goes to
 * target's lower d only (target must be the devices' concat, lower d of d's size:
 * -EINVAL otherwise), so flushing one member leaves the others' caches volatile. */
int rec_apply_log(const struct rec_log *log, const struct rec_entry *e, struct bdev *target);
/* The device a flush of entry e reaches on target (target itself for a one-device
 * log), or NULL when target does not match the log's devices. */
struct bdev *rec_flush_target(const struct rec_log *log, const struct rec_entry *e,
                              struct bdev *target);

/* Serialised form (docs/log-format.md), src/blk/rec_file.c. */
int rec_log_save(const struct rec_log *log, const char *path, struct bo_err *err);
/* Reads a regular file of at most REC_LOG_FILE_MAX bytes (anything else, a FIFO or
 * a device such as /dev/zero, is refused at once) and parses it. */
int rec_log_load(const char *path, struct rec_log **out, struct bo_err *err);
/* Every field is checked as docs/log-format.md says; an error names the record,
 * its byte offset and the field. */
int rec_log_parse(const void *buf, size_t len, struct rec_log **out, struct bo_err *err);
/* Serialises into a malloc'd buffer. */
int rec_log_serialize(const struct rec_log *log, void **buf, size_t *len);

#endif
