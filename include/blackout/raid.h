/* SPDX-License-Identifier: GPL-2.0-or-later */
/* raid.h — md-style RAID 0/1/4/5/6 as a bdev model over member bdevs, and the
 * array operations a bdev cannot express (fail, replace, rebuild, scrub, layout).
 * The spec names (raid0 ... raid6) live in the registry; this is the C interface. */
#ifndef BLACKOUT_RAID_H
#define BLACKOUT_RAID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/err.h"

#define RAID_MAX_MEMBERS 32

/* md's algorithm numbers (include/linux/raid/md_p.h / raid5.h). */
enum raid_layout {
	RAID_LEFT_ASYMMETRIC = 0,
	RAID_RIGHT_ASYMMETRIC = 1,
	RAID_LEFT_SYMMETRIC = 2, /* md's default */
	RAID_RIGHT_SYMMETRIC = 3,
	RAID_PARITY_N = 5, /* parity on the last member(s): RAID4 */
};

struct raid_params {
	unsigned level;          /* 0, 1, 4, 5, 6 */
	uint32_t chunk;          /* bytes, 4 KiB .. 1 MiB, power of two; 0 = 512 KiB */
	enum raid_layout layout; /* RAID5/6; RAID4 always uses RAID_PARITY_N */
	uint64_t missing;        /* bit i: member i is absent at assembly */
	bool bitmap;             /* write-intent bitmap */
	uint64_t bitmap_chunk;   /* bytes of each member's data per bitmap bit; 0 = 64 MiB */
	bool ppl;                /* RAID5 partial parity log */
	bool journal;            /* the last lower device is a write journal */
	/* md refuses to start a dirty degraded RAID4/5/6 (without PPL or journal)
	 * unless forced; true starts it as `mdadm --assemble --force` would */
	bool refuse_dirty_degraded;
	/* md before barrier support (Linux < 2.6.33 for RAID5): a flush completes without
	 * reaching the members and FUA is stripped, so member write caches keep what the
	 * filesystem was told is durable */
	bool drop_flushes;
};

/* Opens an array over `nlowers` devices: the members, then the journal device if
 * p->journal. Members with a matching superblock are assembled; otherwise a new
 * array is created (superblocks written, parity synced). On success the array owns
 * the lowers; on failure the caller still does. */
int dev_raid_open(const struct raid_params *p, struct bdev **lowers, unsigned nlowers,
                  struct bdev **out, struct bo_err *err);

bool raid_is(const struct bdev *d);

struct raid_status {
	unsigned level, members, data_members;
	uint32_t chunk;
	uint64_t failed;      /* bit i: member i failed or missing */
	int rebuilding;       /* member being rebuilt, or -1 */
	uint64_t rebuild_pos; /* stripes already rebuilt */
	uint64_t stripes;
	bool dirty;           /* unclean-shutdown flag as held on the members */
	bool inactive;        /* refused to start: dirty and degraded, start_dirty_degraded=false */
	uint64_t data_offset; /* member sector where stripe 0 starts */
	int replacing;        /* member being hot-replaced, or -1 */
	uint64_t replace_pos; /* stripes already copied to its replacement */
};
int raid_status(struct bdev *d, struct raid_status *st);

/* Starts an array left inactive because it was dirty and degraded
 * (start_dirty_degraded=false), as `mdadm --assemble --force` does. */
int raid_force_start(struct bdev *d);
/* Marks a member failed (as a failing disk or `mdadm --fail` would). */
int raid_fail_member(struct bdev *d, unsigned idx);
/* Puts `newdev` in place of member idx and starts a rebuild onto it. A failed
 * member is closed and rebuilt from the others; a working one is hot-replaced as
 * `mdadm --replace` does: it keeps serving reads and writes while its chunks are
 * copied, and is closed when the copy is complete (if it fails meanwhile, the copy
 * turns into a rebuild from where it got). The array owns newdev on success. */
int raid_replace(struct bdev *d, unsigned idx, struct bdev *newdev, struct bo_err *err);
/* Rebuilds (or copies, for a hot replacement) up to max_stripes stripes; done and
 * total report progress in stripes. Finishing marks the member in sync. */
int raid_rebuild_step(struct bdev *d, uint64_t max_stripes, uint64_t *done, uint64_t *total);

/* md's `check` (repair=false: count) and `repair` (recompute parity from data, or
 * copy the first mirror). *mismatches counts mismatched sectors, like md's
 * mismatch_cnt. Needs every member. */
int raid_scrub(struct bdev *d, bool repair, uint64_t *mismatches);

/* The layout: where array chunk `chunk` lives (member, stripe), and the parity
 * members of a stripe (-1 when absent), exactly as md's raid5_compute_sector. */
int raid_map_chunk(unsigned level, enum raid_layout layout, unsigned n, uint64_t chunk,
                   unsigned *member, uint64_t *stripe);
int raid_parity_members(unsigned level, enum raid_layout layout, unsigned n, uint64_t stripe,
                        int *p, int *q);

/* The write-hole experiment behind `blackout raid hole`: fills `d` (any stack) with
 * seeded data and flushes, then visits every outcome (at most `max`) of a power cut
 * during a write of `count` sectors at `lba`, and counts the outcomes in which a
 * sector that was not being written reads back changed, a written sector is
 * neither old nor new, or the write is partly old and partly new, or the array
 * returns -EIO instead (start_dirty_degraded=false). With
 * fail_after, each outcome is also read with each member of the first RAID in the
 * stack failed in turn (a disk lost after the restart). */
struct raid_hole_result {
	uint64_t outcomes, untouched_bad, inflight_torn, inflight_mixed;
	uint64_t unreadable; /* the array refused reads (-EIO): the damage was detected */
	bool complete;
};
int raid_hole_probe(struct bdev *d, uint64_t lba, uint32_t count, bool fail_after, uint64_t max,
                    struct raid_hole_result *res, struct bo_err *err);

/* Linux md's counterpart of a RAID spec (raid5 or raid6 over its members), in the
 * terms vmtest takes (docs/vmtest.md): md assembled over the spec's own members,
 * served under a concat as member exports. The spec's parameters map one by one:
 * chunk (4k to 512k, a power of two) to --md-chunk in KiB, missing=I (one member)
 * and journal=true (the last member is md's write journal) to --md; every other
 * parameter left at its default. */
struct dev_spec;
struct raid_md_args {
	char stack[256]; /* "concat > " and the members, as the spec writes them */
	char md[24];     /* --md LEVEL:MEMBERS:MISSING[:j], MISSING '-' when none */
	char chunk[12];  /* --md-chunk, KiB */
};
/* 0, or -EINVAL with why md has no counterpart in `why` (not a RAID spec, two
 * members missing, a model of md before it passed flushes, ...). */
int raid_md_counterpart(const struct dev_spec *s, struct raid_md_args *md, char *why, size_t len);

#endif
