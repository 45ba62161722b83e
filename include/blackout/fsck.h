/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fsck.h — blackout's own checker (and repairer of crash damage) for ext2/ext3 images,
 * read straight from a struct bdev through include/blackout/ext2_format.h, never through a mount; and
 * the seeded corruption injector its agreement tests with e2fsck are built on. */
#ifndef BLACKOUT_FSCK_H
#define BLACKOUT_FSCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/err.h"
#include "blackout/jbd.h"

enum fsck_repair {
	FSCK_REPAIR_NONE,  /* -n: report only, never write */
	FSCK_REPAIR_PREEN, /* -p: fix only what e2fsck -p fixes unasked (fsck_problem_flags);
	                    * anything else: nothing repaired, r->preen_stopped */
	FSCK_REPAIR_YES,   /* -y: fix everything this checker knows how to fix */
};

struct fsck_problem;

struct fsck_opts {
	enum fsck_repair repair;
	/* Checksum and structure scrub of metadata only (superblock, descriptors,
	 * bitmaps, inode table): no block trees, directories or cross-checks. */
	bool fast;
	/* Stop after this many problems (0: never stop early). A crash explorer that
	 * only needs the verdict passes 1. */
	uint32_t max_problems;
	/* Called for every problem as it is found (may be NULL). */
	void (*on_problem)(void *ctx, const struct fsck_problem *p);
	void *ctx;
	/* Repair modes: called for every problem the check after the repairs still
	 * finds (may be NULL), with remaining_ctx. */
	void (*on_remaining)(void *ctx, const struct fsck_problem *p);
	void *remaining_ctx;
};

/* What was wrong, in e2fsck's pass order. */
enum fsck_kind {
	FSCK_NEEDS_RECOVERY = 1, /* the journal must be replayed first */
	FSCK_SUPER,              /* superblock field or geometry */
	FSCK_GDT,                /* group descriptor */
	FSCK_CSUM,               /* metadata_csum checksum mismatch */
	FSCK_INODE,              /* inode field (mode, dtime, flags, extra size) */
	FSCK_BLOCK_RANGE,        /* block pointer outside the filesystem */
	FSCK_BLOCK_DUP,          /* block claimed twice (or by metadata) */
	FSCK_SIZE,               /* i_size against the blocks */
	FSCK_IBLOCKS,            /* i_blocks against the blocks */
	FSCK_SYMLINK,            /* bad symlink */
	FSCK_DIRENT,             /* directory entry: rec_len, name, inode, filetype */
	FSCK_DIR,                /* directory structure: '.', '..', holes */
	FSCK_HTREE,              /* hashed index */
	FSCK_CONNECT,            /* directory unreachable from root, lost+found */
	FSCK_LINKS,              /* link count against entries; unattached inode */
	FSCK_BITMAP,             /* block/inode bitmap differs from use */
	FSCK_COUNT,              /* summary count (group or superblock) */
	FSCK_UNSUPPORTED,        /* feature this checker does not know */
};

struct fsck_problem {
	enum fsck_kind kind;
	uint32_t code;  /* the problem's code (src/fsck/problem.h), as e2fsck's PR_* */
	uint32_t ino;   /* 0 when not about an inode */
	uint64_t block; /* 0 when not about a block */
	char name[64];  /* directory entry name, when about one ("" otherwise) */
	char msg[192];  /* what is wrong, one line */
	uint32_t flags; /* FSCK_PF_* */
};

/* e2fsck -p fixes it without asking (e2fsck's PR_PREEN_OK). */
#define FSCK_PF_PREEN_OK 0x1u

/* What the journal replay before a repairing check did. */
struct fsck_replay {
	bool needed;      /* needs_recovery was set, or the log held transactions */
	bool done;        /* replayed; needs_recovery cleared */
	bool from_backup; /* found through the superblock's backup of the journal
	                   * inode's blocks (the inode is damaged) */
	bool modified;    /* the image was written */
	bool stale_flag;  /* needs_recovery was set without a journal: cleared */
	struct jbd_recovery_info info;
	char error[192]; /* why a needed replay did not happen ("" otherwise) */
};

#define FSCK_REPORT_KEEP 32
struct fsck_report {
	uint32_t nr_problems;      /* found by the (last) check */
	uint32_t nr_fixed;         /* repaired (repair modes) */
	bool by_checksum;          /* at least one problem was a checksum mismatch */
	bool needs_recovery;       /* needs_recovery was set: the caller replays first */
	uint32_t nr_unexpected;    /* problems without FSCK_PF_PREEN_OK */
	bool preen_stopped;        /* -p found one of those and repaired nothing */
	bool modified;             /* the image was written */
	struct fsck_replay replay; /* repair modes: the journal replay before checking */
	uint32_t nr_kept;          /* problems[] holds the first nr_kept */
	struct fsck_problem problems[FSCK_REPORT_KEEP];
};

/* Checks (and with o->repair, repairs) the filesystem on d. Returns 0 when the check
 * ran (the verdict is in r: clean iff r->nr_problems == 0), or a negative errno when
 * it could not run at all (I/O error, not an ext2 image, unsupported feature: the
 * detail in err). A repair re-checks afterwards: r->nr_problems is what remains. */
int fsck_check(struct bdev *d, const struct fsck_opts *o, struct fsck_report *r,
               struct bo_err *err);

/* Finds the journal of the ext3 filesystem on d by itself (the journal inode, or the
 * superblock's backup of its block map when the inode is damaged) and replays it if
 * needs_recovery is set or the log holds transactions, as e2fsck does before a check;
 * clears needs_recovery after a successful replay. -EUCLEAN (detail in err) when the
 * superblock or the journal cannot be used, -ENOENT without a journal. */
int fsck_journal_recover(struct bdev *d, struct fsck_replay *out, struct bo_err *err);

/* The journal's blocks as the filesystem on d describes them (found as above). */
struct fsck_journal_map {
	uint32_t block_size;
	uint64_t fs_blocks, nr_blocks;
	bool from_backup;
	struct jbd_extent *ext; /* the journal's logical blocks in order */
	size_t nr_ext;
	uint64_t *indirect; /* the journal inode's indirect blocks (not journal blocks) */
	size_t nr_indirect;
};
int fsck_journal_map(struct bdev *d, struct fsck_journal_map *m, struct bo_err *err);
void fsck_journal_map_free(struct fsck_journal_map *m);

/* e2fsck's exit codes (e2fsck(8) EXIT CODE): 2 (fixed, reboot) and 32 (cancelled) are
 * never returned by blackout; 16 and 8 are the CLI's. */
enum {
	FSCK_EXIT_OK = 0,
	FSCK_EXIT_NONDESTRUCT = 1, /* errors corrected */
	FSCK_EXIT_REBOOT = 2,      /* errors corrected, reboot (a mounted root: never here) */
	FSCK_EXIT_UNCORRECTED = 4, /* errors left uncorrected */
	FSCK_EXIT_ERROR = 8,       /* operational error */
	FSCK_EXIT_USAGE = 16,      /* usage or syntax error */
	FSCK_EXIT_CANCELED = 32,   /* cancelled by the user */
};
/* e2fsck's exit code for a finished check: 0 clean, 1 fixed, 4 errors left. */
int fsck_exit_code(const struct fsck_report *r);
const char *fsck_kind_name(enum fsck_kind k);

/* ---- Corruption injector ------------------------------------------------------- */
enum fsck_corrupt_what {
	FSCK_C_SUPERBLOCK,
	FSCK_C_GDT,
	FSCK_C_BITMAP,
	FSCK_C_INODE,
	FSCK_C_DIRENT,
	FSCK_C_HTREE,
	FSCK_C_INDIRECT,
	FSCK_C_DATA,
	FSCK_C_NR,
};
const char *fsck_corrupt_name(enum fsck_corrupt_what w);
int fsck_corrupt_parse(const char *s, enum fsck_corrupt_what *w);

/* Makes `count` seeded changes of kind `what` to the image on d (same image, seed
 * and count: same changes). Each change is described in one line of `log` (NUL-
 * terminated, truncated to logsz). Returns the number of changes made (0 when the
 * image has no structure of that kind, e.g. no htree directory), or -errno. */
int fsck_corrupt(struct bdev *d, enum fsck_corrupt_what what, uint64_t seed, uint32_t count,
                 char *log, size_t logsz, struct bo_err *err);

#endif
