/* raid.h — md-style RAID 0/1/4/5/6 as a bdev model over member bdevs, and the
 * array operations a bdev cannot express (fail, replace, rebuild, scrub, layout).
 * The spec names (raid0 ... raid6) live in the registry; this is the C interface. */
#ifndef BLACKOUT_RAID_H
#define BLACKOUT_RAID_H

#include <stdbool.h>
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
	bool dirty; /* unclean-shutdown flag as held on the members */
};
int raid_status(struct bdev *d, struct raid_status *st);

/* Marks a member failed (as a failing disk or `mdadm --fail` would). */
int raid_fail_member(struct bdev *d, unsigned idx);
/* Puts `newdev` in place of failed member idx (the old device is closed) and starts
 * a rebuild onto it. The array owns newdev on success. */
int raid_replace(struct bdev *d, unsigned idx, struct bdev *newdev, struct bo_err *err);
/* Rebuilds up to max_stripes stripes; done and total report progress in stripes.
 * Finishing marks the member in sync. */
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

#endif
