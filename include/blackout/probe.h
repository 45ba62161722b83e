/* SPDX-License-Identifier: GPL-2.0-or-later */
/* probe.h — `blackout probe`: a black-box test of a real device (or of a modelled one)
 * across one power pull, in the manner of diskchecker.pl (acknowledged writes reported to
 * a listener that survives the pull) and flashbench (erase blocks from write timings).
 *
 * The core works on any struct bdev: a real block device opened with O_DIRECT
 * (probe_fd_open), or a blackout stack in-process (probe_inproc). Phases:
 *   write  — lay a self-describing pattern over a region, then a stream of writes (some
 *            FUA) and flushes; each acknowledged write and flush goes to a sink (a log);
 *   verify — after the pull, read the region back and hold it against the log. */
#ifndef BLACKOUT_PROBE_H
#define BLACKOUT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "blackout/blk.h"
#include "blackout/err.h"

/* The pattern's unit: every 512 bytes describe themselves whatever the device's
 * logical sector (a 4096-byte sector holds eight units). */
#define PROBE_UNIT 512u
/* Every device write covers whole blocks of this size: a multiple of any logical
 * sector size, so O_DIRECT accepts it. */
#define PROBE_BLOCK           4096u
#define PROBE_UNITS_PER_BLOCK (PROBE_BLOCK / PROBE_UNIT)

/* ---- pattern (src/probe/pattern.c) ---- */
/* Fills one unit: magic, run id, unit number, generation, filler from the three, a
 * CRC32C over all of it. */
void probe_pattern_fill(void *unit, uint64_t run, uint64_t unitno, uint64_t gen);
enum probe_unit_kind {
	PROBE_U_VALID = 0, /* a whole unit of this run at this place: *gen says which */
	PROBE_U_FOREIGN,   /* a whole valid unit, but of another run or another place */
	PROBE_U_ERASED,    /* all 0x00 or all 0xFF (an erase, an unwritten sector) */
	PROBE_U_GARBAGE,   /* anything else: a torn or damaged unit */
};
enum probe_unit_kind probe_pattern_decode(const void *unit, uint64_t run, uint64_t unitno,
                                          uint64_t *gen);

/* ---- the acknowledgement log (src/probe/log.c) ----
 * Text, one record a line (docs/probe.md):
 *   blackout-probe 1 run=HEX unit=512 first=UNIT units=N
 *   B GEN              the pattern (generation GEN) is over the region and flushed
 *   I GEN UNIT COUNT F  write GEN of COUNT units from UNIT is about to be issued; F: 1 = FUA
 *   W GEN              ... and has completed (the line right after its I)
 *   F GEN              flush GEN completed
 * Generations strictly increase. A torn last line (the pull) is ignored; an I without
 * its W (the last line) is the write that was in flight. */
enum probe_op_kind { PROBE_OP_WRITE = 0, PROBE_OP_FLUSH, PROBE_OP_BASE };
struct probe_op {
	uint64_t gen;
	uint64_t unit, count; /* writes: absolute unit numbers on the device */
	uint8_t kind;
	bool fua;
	bool acked; /* a write: its W line came (flushes and the base: always) */
};
#define PROBE_LOG_MAX_OPS   (1u << 22)
#define PROBE_LOG_MAX_BYTES (256u << 20)
struct probe_log {
	uint64_t run;
	uint64_t first, units; /* the region, in units */
	struct probe_op *op;
	size_t n, cap;
	bool torn_tail; /* the last line was cut short (and ignored) */
};
int probe_log_header(char *buf, size_t len, uint64_t run, uint64_t first, uint64_t units);
/* The line reporting op: for a write, its I line (acked false) or its W line. */
int probe_log_line(char *buf, size_t len, const struct probe_op *op);
/* Parses untrusted bytes; every number checked (region inside 2^50 units, every write
 * inside the region, generations increasing). -EINVAL naming the line on error. */
int probe_log_parse(const char *text, size_t len, struct probe_log *out, struct bo_err *err);
void probe_log_free(struct probe_log *l);

/* ---- the write phase (src/probe/stream.c) ---- */
struct probe_sink {
	/* called with one complete line (newline included) after the operation it
	 * reports completed; a sink that fails stops the stream */
	int (*emit)(void *ctx, const char *line, size_t len);
	void *ctx;
};
struct probe_stream_opts {
	uint64_t run;         /* the run id written into every unit (nonzero) */
	uint64_t seed;        /* the stream's choices of place, size, FUA, flush */
	uint64_t first_block; /* the region, in PROBE_BLOCK blocks of the device */
	uint64_t blocks;
	uint64_t max_ops;   /* stop after this many stream operations (0: until an error) */
	uint32_t max_write; /* blocks per write, at most (1..64): PROBE_MAX_WRITE */
	/* called once the pattern is flushed, before the stream: idle time (settle a
	 * model, sleep on real hardware) so the base is on the media even under a
	 * cache that lies. NULL: none. */
	int (*after_base)(void *ctx);
	void *ctx;
	/* nonzero: the stream's N-th write is not issued but announced and returned as
	 * the write in flight, for an in-process cut, as the plugin's `cut-at N` cuts at
	 * the N-th write (its buffer stays valid until probe_stream_free) */
	uint64_t inflight_write;
};
/* the largest write of the stream, in blocks: the same on hardware, in the guest and
 * in-process, so one seed makes one stream everywhere */
#define PROBE_MAX_WRITE 4u
struct probe_stream {
	uint64_t ops, writes, fua_writes, flushes;
	bool stopped_by_error; /* the device refused an operation: power gone */
	int last_error;
	struct blk_inflight inflight; /* with inflight_write: count 0 when none */
	uint64_t inflight_gen;
	void *buf;
};
int probe_stream_run(struct bdev *d, const struct probe_stream_opts *o, const struct probe_sink *s,
                     struct probe_stream *st, struct bo_err *err);
void probe_stream_free(struct probe_stream *st);

/* ---- verify (src/probe/verify.c) ---- */
struct probe_verdict {
	uint64_t units; /* read back */
	uint64_t ok, lost_flush,
	    lost_fua;            /* lost: an older generation where a durable one was due */
	uint64_t torn_units;     /* written in the epoch or in flight, neither old nor new */
	uint64_t erased_written; /* ... reading erased (all 0x00 or 0xFF) instead */
	uint64_t partial_writes; /* writes of the epoch that landed in part */
	uint64_t damaged;        /* not written since the last flush, yet not its data */
	uint64_t unreadable;     /* read errors */
	uint64_t foreign;        /* another run's or another place's units */
	bool flush_honoured, fua_honoured; /* no violation seen (one pull: a sample) */
	uint64_t fua_checked;              /* durable-by-FUA-only units examined */
	uint64_t flush_checked;            /* durable-by-flush units examined */
	uint32_t tear_granularity; /* bytes: smallest power of two at every tear seen; 0 none */
	/* collateral damage: damaged units within reach of the epoch's writes */
	uint64_t damage_radius;   /* bytes from the nearest epoch write to the farthest damage */
	uint64_t erase_block;     /* bytes: the aligned power of two holding damage and write */
	bool collateral_measured; /* false where flushes were not honoured */
	uint64_t last_gen, epoch_writes;
};
int probe_verify(struct bdev *d, const struct probe_log *l, struct probe_verdict *v,
                 struct bo_err *err);
void probe_verdict_print(const struct probe_verdict *v, FILE *out);

/* ---- timing (src/probe/timing.c) ----
 * flashbench's method, no pull: the cost of a two-block write straddling boundaries
 * of 2^i bytes (a jump at the erase block), and of one-block writes rotating over N
 * erase blocks (a jump past the blocks the device keeps open). Each write's cost is
 * measured by `write_cost` (NULL: wall-clock ns of a FUA write; in-process, a model's
 * NAND work). Overwrites what it touches. */
struct probe_timing_opts {
	uint64_t max_eb;   /* largest erase block considered (bytes), default 16 MiB */
	uint32_t repeats;  /* samples per point (median), default 8, at most 64 */
	uint32_t max_open; /* most erase blocks rotated over, default 16, at most 32 */
	int (*write_cost)(void *ctx, struct bdev *d, uint64_t off, size_t len, const void *buf,
	                  double *cost);
	void *ctx;
};
struct probe_timing {
	uint64_t erase_block; /* bytes, 0 when no jump reached confidence 0.5 */
	double eb_confidence; /* 0..1: how far the jump stood above the samples' spread */
	uint32_t open_blocks; /* 0 when no knee was found */
	double open_confidence;
	double cost[40];      /* median pair cost across boundaries of 8 KiB << i */
	double open_cost[33]; /* median cost a write rotating over i blocks */
	unsigned ncost, nopen;
};
int probe_timing_run(struct bdev *d, const struct probe_timing_opts *o, struct probe_timing *t,
                     struct bo_err *err);
void probe_timing_print(const struct probe_timing *t, FILE *out);
/* The same on a stack spec in-process, a write's cost being the NAND programs plus ten
 * times the erases it caused (the model's counters). */
int probe_timing_spec(const char *spec, const struct probe_timing_opts *o, struct probe_timing *t,
                      struct bo_err *err);

/* ---- devices (src/probe/fddev.c, safety.c) ---- */
/* A block device or file as a bdev: O_DIRECT (unless a file refuses it), FUA as
 * RWF_DSYNC, flush as fdatasync; a block device opened for writing is opened O_EXCL. */
int probe_fd_open(const char *path, bool writable, struct bdev **out, struct bo_err *err);
/* Refuses (-EBUSY) a mounted device and, with `signatures`, (-EEXIST) one holding a
 * known filesystem, partition table or volume signature, naming it and what to do. */
int probe_safety_check(const char *path, bool signatures, struct bo_err *err);

/* ---- a run on a real device (src/probe/drive.c): the CLI and the guest's bo-probe ---- */
/* The region write takes when --size is not given: the rest of the device, at most */
#define PROBE_DEFAULT_REGION (1ull << 30)
/* The stream's length when --ops is not given: bounded, so a run nobody pulls the
 * power on ends (about 90 s where every flush reaches a disk, measured on a loaded
 * virtual disk; under a second on tmpfs), long enough for a person at the switch;
 * ops 0 asks for a stream that runs until the device fails. */
#define PROBE_DEFAULT_OPS 10000u
struct probe_write_opts {
	const char *dev, *log; /* log: probe_write_logged's file */
	uint64_t offset, size; /* size 0: the rest of the device, at most PROBE_DEFAULT_REGION */
	uint64_t ops;          /* the stream's operations; 0: until the device fails */
	uint64_t seed;         /* the stream's, when seed_given; else the run id */
	bool seed_given;
	uint64_t settle;      /* seconds idle once the pattern is flushed */
	const char *on_ready; /* run with sh -c before the stream; not 0: no stream */
	FILE *status;         /* where the phases are told (NULL: stderr) */
};
/* Refuses (-EINVAL) a log that is the device probed, or a file on it (or on another
 * partition of its disk): the pull would take the log with it. */
int probe_log_apart(const char *dev, const char *log, struct bo_err *err);
/* The write phase on o->dev (pattern, settle, the stream) reporting to `sink`. */
int probe_write_device(const struct probe_write_opts *o, const struct probe_sink *sink,
                       struct probe_stream *st, struct bo_err *err);
/* The same reporting to the file o->log, refused unless apart from the device. */
int probe_write_logged(const struct probe_write_opts *o, struct probe_stream *st,
                       struct bo_err *err);
/* The verify phase: the log at `log` read and parsed, the device read back. */
int probe_verify_device(const char *dev, const char *log, struct probe_verdict *v,
                        struct bo_err *err);

/* ---- sinks (src/probe/sink.c) and the listener (src/probe/net.c) ---- */
/* Writes all of line to the fd *(int *)ctx: a sink's emit for a file or socket. */
int probe_fd_emit(void *ctx, const char *line, size_t len);
/* A file on another device, each line written O_DSYNC; *fd to close afterwards. */
int probe_sink_file(const char *path, int *fd, struct probe_sink *s, struct bo_err *err);
/* A TCP connection to HOST:PORT where `blackout probe listen` runs. */
int probe_sink_tcp(const char *hostport, int *fd, struct probe_sink *s, struct bo_err *err);
/* Accepts one writer on `port` (addr NULL: every address), appends what it sends to
 * `out`, fdatasync after every read, until the writer closes or its machine dies. */
int probe_listen(const char *addr, unsigned port, const char *out, FILE *status,
                 struct bo_err *err);

/* ---- in-process (src/probe/inproc.c) ----
 * The write phase on a stack spec (stream seeded by `seed`), the pull made by the
 * model with decisions seeded by `seed` while the stream's `write`-th write is in
 * flight (as the plugin's `cut-at WRITE seed:SEED`), power back, verify. */
struct probe_inproc_opts {
	uint64_t seed, write, region_bytes;
};
int probe_inproc(const char *spec, const struct probe_inproc_opts *o, struct probe_verdict *v,
                 struct bo_err *err);

#endif
