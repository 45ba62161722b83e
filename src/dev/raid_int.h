/* SPDX-License-Identifier: GPL-2.0-or-later */
/* raid_int.h — what the files of the RAID model share and nothing else: the
 * array's state (struct raid_dev), the shapes of a stripe update (pieces, plans of
 * phased member writes) and the functions one file serves to another. The files:
 * raid_layout.c (where chunks live), raid_member.c (member I/O, superblocks),
 * raid_stripe.c (host I/O as stripe updates), raid_journal.c, raid_ppl.c (bitmap
 * and PPL), raid_sync.c (scrub, resync, rebuild), raid_power.c (power cuts),
 * raid.c (assembly, the ops), raid_spec.c (registry), raid_parity.c (ISA-L).
 * Parity buffers are in Q-slot order: data slots 0..k-1, then P, then Q. */
#ifndef BLACKOUT_DEV_RAID_INT_H
#define BLACKOUT_DEV_RAID_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/raid.h"

#define MAXM RAID_MAX_MEMBERS
#define META 4096u /* bytes of a superblock, a PPL header, a journal header */

#define SB_MAGIC  0x4253444941524f42ull /* "BORAIDSB" */
#define PPL_MAGIC 0x4c50504449415242ull
#define JSB_MAGIC 0x42534a4449415242ull
#define JR_MAGIC  0x524a4a4449415242ull

enum { F_BITMAP = 1, F_PPL = 2, F_JOURNAL = 4 };
enum { PH_SB, PH_BM, PH_LOG, PH_DATA, PH_MAX };

struct raid_stats {
	uint64_t host_reads, host_writes, host_read_sectors, host_write_sectors, flushes;
	uint64_t member_reads, member_writes, member_read_sectors, member_write_sectors;
	uint64_t wr_read_sectors, wr_write_sectors; /* member I/O caused by host writes */
	uint64_t full_stripe, rmw, rcw, reconstruct_write, direct_write;
	uint64_t degraded_reads, member_failures, resync_stripes, resync_skipped;
	uint64_t dirty_degraded_starts, scrub_mismatches, rebuild_stripes;
	uint64_t ppl_writes, ppl_recovered, ppl_skipped, journal_records, journal_replayed;
	uint64_t journal_checkpoints, sb_writes, bitmap_writes;
};

#define BUFPOOL_MAX 24
struct bufpool {
	unsigned n;
	void *p[BUFPOOL_MAX];
	size_t sz[BUFPOOL_MAX];
};

struct raid_dev {
	struct bdev dev;
	struct raid_params p;
	unsigned n, k, m; /* members, data chunks per stripe, parity chunks */
	struct bdev *mem[MAXM];
	struct bdev *jdev;
	uint32_t ss;
	uint64_t cs;              /* chunk, sectors */
	uint64_t meta;            /* META in sectors */
	uint64_t data_off, mdata; /* member sectors: first data sector, data sectors */
	uint64_t stripes;
	/* persistent state as last written to the members */
	uint64_t failed, events;
	int rebuild_idx;
	uint64_t rebuild_pos;
	/* hot replacement (mdadm --replace): repl receives member repl_idx's chunks
	 * while the member keeps serving; below repl_pos it also gets every write.
	 * Kept in RAM only: a power cut abandons it. */
	struct bdev *repl;
	int repl_idx;
	uint64_t repl_pos;
	bool dirty;
	uint64_t bm_off, bm_sectors, bm_stripes, bm_regions;
	unsigned char *bm;
	uint64_t ppl_off;
	uint64_t j_head, j_seq, j_tail;
	bool in_write; /* counts member I/O towards amplification */
	bool inactive; /* dirty and degraded at assembly, and refused to start */
	struct bufpool pool;
	struct raid_stats st;
};

/* Per stripe: the member of each logical data chunk, its Q slot, and the member of
 * every buffer in slot order (data slots, P, Q). md computes Q over the data disks
 * in member order starting just after Q (raid6_d0), which is the logical order for
 * the symmetric layouts but not for the asymmetric ones. */
struct sgeo {
	unsigned dm[MAXM], slot[MAXM], of_slot[MAXM + 2];
	int pm, qm;
};

/* The superblock and the journal superblock fill one sector (crc in its first 512
 * bytes) so that a write of them cut by the power lands whole or not at all. */
#define SB_CRC 508

struct mw {
	unsigned dev; /* member, or n for the journal device */
	uint64_t lba;
	uint64_t count;
	const unsigned char *data;
	unsigned flags;
};

struct plan {
	unsigned nw[PH_MAX];
	struct mw w[PH_MAX][MAXM + 1];
	void *buf[4 * MAXM + 16];
	size_t bufsz[4 * MAXM + 16];
	unsigned nbuf;
	struct bufpool *pool;
	/* RAM state the phases make true once they are written */
	bool set_dirty;
	uint64_t bm_region;
	bool set_bm;
	uint64_t j_head, j_seq;
	bool set_j;
};

/* One stripe's share of a host write: per logical data chunk j the in-chunk
 * sectors [a, b) and where their new data is. */
struct piece {
	uint64_t s;
	uint32_t a[MAXM], b[MAXM], lo, hi;
	const unsigned char *src[MAXM];
};

struct wctx {
	unsigned flags;
};

struct sbinfo {
	bool valid, dirty;
	uint64_t events, failed, rebuild_pos;
	int rebuild_idx;
};

/* raid_parity.c */
void raid_xor_into(unsigned char *dst, const unsigned char *src, size_t len);
int raid_gen_parity(unsigned k, unsigned m, size_t len, unsigned char **data, unsigned char *p,
                    unsigned char *q);
int raid_gen_delta(unsigned k, unsigned m, size_t len, unsigned nd, const unsigned *slot,
                   unsigned char **delta, unsigned char *dp, unsigned char *dq);
int raid_recover(unsigned k, unsigned m, size_t len, unsigned char **buf, uint64_t missing);

/* raid_layout.c */
int raid_check_geometry(unsigned level, enum raid_layout layout, unsigned n);
void raid_stripe_geo(const struct raid_dev *r, uint64_t s, struct sgeo *g);

/* raid_member.c */
bool raid_usable(const struct raid_dev *r, unsigned i, uint64_t s);
unsigned raid_tolerance(const struct raid_dev *r);
unsigned raid_stripe_lost(const struct raid_dev *r, uint64_t s);
int raid_stripe_writable(struct raid_dev *r, uint64_t s);
void raid_sb_encode(const struct raid_dev *r, unsigned i, uint64_t events, bool dirty,
                    unsigned char *b);
void raid_sb_decode(const struct raid_dev *r, unsigned i, const unsigned char *b,
                    struct sbinfo *si);
int raid_mread(struct raid_dev *r, unsigned i, uint64_t lba, uint64_t count, void *buf);
int raid_mwrite(struct raid_dev *r, unsigned i, uint64_t lba, uint64_t count, const void *buf,
                unsigned flags);
int raid_write_sbs(struct raid_dev *r);
void raid_member_failed(struct raid_dev *r, unsigned i);
int raid_flush_members(struct raid_dev *r);
int raid_refused(struct raid_dev *r);

/* raid_plan.c: plans and their phases (below every file that plans member writes) */
void raid_plan_init(struct plan *pl, struct raid_dev *r);
void raid_plan_free(struct plan *pl);
unsigned char *raid_plan_alloc(struct plan *pl, size_t len);
void raid_plan_add(struct plan *pl, unsigned ph, unsigned dev, uint64_t lba, uint64_t count,
                   const unsigned char *data, unsigned flags);
int raid_plan_exec_phase(struct raid_dev *r, struct plan *pl, unsigned ph);
int raid_load_reconstruct(struct raid_dev *r, struct plan *pl, const struct sgeo *g, uint64_t s,
                          uint32_t lo, uint32_t hi, unsigned char **B);

/* raid_log.c: the log façade. After a stripe update's member writes are planned,
 * the array's log adds its writes: PPL (g and P, the new parity, given when the
 * update writes parity) and the journal. */
int raid_log_stripe(struct raid_dev *r, struct plan *pl, const struct piece *pc,
                    const struct sgeo *g, const unsigned char *P);

/* raid_stripe.c */
int raid_plan_stripe(struct raid_dev *r, struct piece *pc, unsigned flags, struct plan *pl);
int raid_write_piece(struct raid_dev *r, struct piece *pc, void *ctx);
int raid_for_each_piece(struct raid_dev *r, uint64_t lba, uint64_t count, const unsigned char *buf,
                        int (*fn)(struct raid_dev *, struct piece *, void *), void *ctx);
int raid_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf);
int raid_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf, unsigned flags);
int raid_discard(struct bdev *d, uint64_t lba, uint32_t count);

/* raid_journal.c */
int raid_jsb_write(struct raid_dev *r);
int raid_journal_checkpoint(struct raid_dev *r, bool wrap);
int raid_plan_journal(struct raid_dev *r, struct plan *pl);
int raid_journal_recover(struct raid_dev *r);

/* raid_bitmap.c */
int raid_plan_bitmap(struct raid_dev *r, struct plan *pl, uint64_t s);
int raid_write_bitmap(struct raid_dev *r);

/* raid_ppl.c */
int raid_plan_ppl(struct raid_dev *r, struct plan *pl, const struct piece *pc, const struct sgeo *g,
                  const unsigned char *P);
int raid_ppl_recover(struct raid_dev *r);

/* raid_sync.c */
int raid_scrub_stripe(struct raid_dev *r, uint64_t s, bool repair, uint64_t *mism);
int raid_resync_stripe(struct raid_dev *r, uint64_t s);

/* raid_power.c */
int raid_power_cut(struct bdev *d, struct blk_chooser *ch, const struct blk_inflight *inflight);
int raid_power_restore(struct bdev *d);

/* raid.c */
int raid_assemble(struct raid_dev *r, bool first, struct bo_err *err);

#endif
