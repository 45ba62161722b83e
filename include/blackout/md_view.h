/* SPDX-License-Identifier: GPL-2.0-or-later */
/* md_view.h — Linux md's array as the host sees it from its members' bytes: the md
 * superblock 1.2 parser, the RAID4/5/6 chunk layout (degraded: a missing member's
 * chunk rebuilt from the stripe's others), and the block-level write-hole check over
 * a state store (docs/md.md, "The write hole, block by block"). */
#ifndef BLACKOUT_MD_VIEW_H
#define BLACKOUT_MD_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "blackout/err.h"
#include "blackout/raid.h"
#include "blackout/rec.h"

#define MD_SB_MAGIC     0xa92b4efcu
#define MD_SB_OFFSET    4096u /* metadata 1.2: 4 KiB from the member's start */
#define MD_SB_AREA      4096u /* what md reads there: 256 bytes + 2 per dev_roles slot */
#define MD_SB_MAX_DEV   ((MD_SB_AREA - 256u) / 2u)
#define MD_ROLE_SPARE   0xffffu
#define MD_ROLE_FAULTY  0xfffeu
#define MD_ROLE_JOURNAL 0xfffdu
#define MD_BLOCK        4096u

/* feature_map bits (md_p.h) */
#define MD_FEATURE_BITMAP_OFFSET   1u
#define MD_FEATURE_RECOVERY_OFFSET 2u
#define MD_FEATURE_RESHAPE_ACTIVE  4u
#define MD_FEATURE_BAD_BLOCKS      8u
#define MD_FEATURE_JOURNAL         512u
#define MD_FEATURE_PPL             1024u

/* One member's superblock, its fields checked for what the layout reader needs. */
struct md_sb {
	uint8_t set_uuid[16];
	uint32_t feature_map;
	int32_t level;
	uint32_t layout;
	uint64_t size;          /* sectors of each member the array uses */
	uint32_t chunk_sectors; /* 512-byte sectors */
	uint32_t raid_disks;
	uint64_t data_offset, data_size; /* sectors, from the member's start */
	uint32_t dev_number;
	uint64_t events;
	uint64_t journal_tail; /* the journal device's: its log's tail, sectors past data */
	uint32_t role;         /* this member's role: 0 .. raid_disks-1, or MD_ROLE_* */
};

/* Parses the superblock area (len bytes from MD_SB_OFFSET of a member, at least 256).
 * -ENODATA: no md superblock there (wrong magic: a missing member reads as zeros);
 * -EINVAL: a superblock that is bad or that this reader does not read (another major
 * version, a checksum mismatch, another superblock offset, a level other than 4/5/6,
 * an unknown layout, a reshape or PPL), named in err. A write journal is read
 * (md_journal_replay). */
int md_sb_parse(const uint8_t *buf, size_t len, struct md_sb *sb, struct bo_err *err);

/* The array from its members' superblocks: ndev devices (the store's members), have[i]
 * false for a device without one. Roles not held by any device are missing. */
struct md_array {
	unsigned level, n;                 /* RAID level, raid_disks */
	enum raid_layout layout;           /* md's algorithm number */
	uint32_t chunk;                    /* bytes */
	uint64_t data_offset;              /* bytes, the same on every member */
	uint64_t stripes;                  /* chunks per member the array uses */
	uint64_t blocks;                   /* the array's size in 4 KiB blocks */
	int dev_of_role[RAID_MAX_MEMBERS]; /* the device holding each role, -1 missing */
	int role_of_dev[64];               /* each device's role, -1 none */
	unsigned nmissing;
	uint64_t events; /* the highest of the members' */
	int journal_dev; /* the device holding md's write journal (raid5-cache), -1 none */
	uint8_t uuid[16];
};
int md_array_assemble(const struct md_sb *sbs, const bool *have, unsigned ndev,
                      const uint64_t *dev_bytes, struct md_array *a, struct bo_err *err);

/* Reads a device's 4 KiB block mblock (member-relative); NULL: cannot. */
typedef const uint8_t *(*md_get_fn)(void *ctx, unsigned dev, uint64_t mblock);

/* Where array block b lies: its role, stripe and member block (relative to the member's
 * start, data offset included). */
int md_block_where(const struct md_array *a, uint64_t b, unsigned *role, uint64_t *stripe,
                   uint64_t *mblock);
/* The array blocks at member block mblock (the same on every member): *n of them, one
 * per data role of that stripe, in out[] (room for RAID_MAX_MEMBERS); 0 outside the data
 * area. */
int md_row_blocks(const struct md_array *a, uint64_t mblock, uint64_t *out, unsigned *n);
/* Array block b as md reads it: from its member, or rebuilt from the stripe's other
 * data and P when that member is missing. -EIO when it cannot be read (two missing). */
int md_read_block(const struct md_array *a, uint64_t b, md_get_fn get, void *ctx,
                  uint8_t out[MD_BLOCK]);

/* ---- md's write journal (raid5-cache, write-through), replayed as md assembles ---- */

/* The pages md's journal replay writes to the members at assembly: dev's 4 KiB block
 * mblock gets data (the last one written wins). */
struct md_replay_page {
	unsigned dev;
	uint64_t mblock;
	size_t at; /* offset of its 4 KiB in buf */
};
struct md_replay {
	struct md_replay_page *pages; /* sorted by (dev, mblock) once done */
	size_t n, cap;
	uint8_t *buf;
	size_t buf_len, buf_cap;
	unsigned metas;     /* valid meta blocks read from the tail */
	unsigned stripes;   /* stripes replayed (data and parity logged) */
	unsigned data_only; /* stripes with data and no parity (write-back): not replayed */
	char end[160];      /* why the log ended where it did */
};
/* Reads the journal device's log from its tail as md's r5l recovery does (meta
 * blocks: magic, version, crc32c seeded by the array's uuid, seq and position in
 * order; each payload page's crc32c) and collects what it writes back: every stripe
 * whose data and parity the log holds. The journal device's superblock is read
 * through get too (its tail moves). 0 with r filled (free with md_replay_free), or
 * -errno when the journal device cannot be read. */
int md_journal_replay(const struct md_array *a, md_get_fn get, void *ctx, struct md_replay *r,
                      struct bo_err *err);
/* The replayed page for dev's block mblock, or NULL. */
const uint8_t *md_replay_find(const struct md_replay *r, unsigned dev, uint64_t mblock);
void md_replay_free(struct md_replay *r);

/* ---- the write hole, block by block, over a state store ------------------------ */

#define MD_HOLE_EXAMPLES 8
struct md_hole_example {
	size_t state;       /* s<N> */
	char id[48];        /* the explorer's state id */
	uint64_t block;     /* md array block (4 KiB) */
	unsigned role, dev; /* its role, and the device (m<I>) that would hold it */
	bool missing;       /* that role's member is missing: the block was rebuilt */
	uint64_t stripe;
};
struct md_hole_result {
	size_t states;        /* states read */
	size_t unread;        /* states whose array md would not assemble as read here */
	size_t hole_states;   /* states with a block unchanged in its cut epoch read wrong */
	uint64_t hole_blocks; /* such blocks, summed over states */
	uint64_t unchanged;   /* array blocks checked that were unchanged, summed */
	uint64_t replayed;    /* stripes md's journal wrote back, summed over states */
	unsigned missing;     /* roles missing from the array */
	char array[160];      /* "RAID5 left-symmetric, 4 members, 64 KiB chunks, role 0 missing" */
	struct md_hole_example ex[MD_HOLE_EXAMPLES];
	unsigned nex;
	char first_unread[256]; /* why the first unread state was not read */
};

/* Checks every state s0..s<n-1> of the store DIR (base.img, members, index, deltas)
 * against the recording log (run from its `step 0` mark): per state, the array at the
 * quiescent points around its cut (every earlier write flushed by its own member; the
 * log's end when none follows) are the references; a block equal in both (and, on a
 * present member, not written between the first and the cut) is unchanged in the
 * epoch, and one that reads otherwise in the state is the write hole.
 * list, when not NULL, gets one line per such block. */
int md_hole_check(const char *dir, const struct rec_log *log, FILE *list,
                  struct md_hole_result *res, struct bo_err *err);

/* Writes the array as the host reads it at the log's end (every write landed) to path. */
int md_hole_array_image(const char *dir, const struct rec_log *log, const char *path,
                        struct bo_err *err);

#endif
