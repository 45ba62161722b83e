/* SPDX-License-Identifier: GPL-2.0-or-later */
/* journal_hook.h — the seam between the filesystem and a journal: every metadata
 * block write of fs/ goes through these ops. Not a journal itself (that is src/jbd/).
 *
 * Vocabulary (JBD2's): one fs operation runs inside a *handle*, bracketed by
 * start(credits) .. stop(). Inside it the fs, for each metadata block it changes,
 * calls get_write_access(block, current content) before touching its cached copy and
 * dirty_metadata(block, new content) after. Data blocks of regular files written
 * under the handle are announced with dirty_data(). A freed metadata block is
 * announced with forget() (a journal revokes it). fsync/fdatasync/sync call
 * force_commit(); unmount calls force_commit(), checkpoint(), then destroy(clean).
 *
 * Who writes what home:
 *  - dirty_metadata() returns FS_JH_WRITEBACK when the fs's buffer cache must write
 *    the block to its home location itself (write-back, at the latest on the next
 *    force_commit: that is the no-journal, ext2 behaviour), or 0 when the hook took
 *    the content and owns getting it home (a journal: log it, commit, checkpoint).
 *    Either way the fs keeps its cached copy, which stays authoritative for reads.
 *    A hook may instead return FS_JH_HELD: it has noted the block but not copied
 *    it; the fs then keeps that buffer cached (never evicted) until the hook takes
 *    the content with fs_held_fetch(release = true), typically when it commits, so
 *    a block changed by many operations of one transaction is copied once. A
 *    forget() of the block ends the hold as well.
 *  - dirty_data() is called AFTER the fs wrote the data block to the device, for
 *    data=ordered/writeback (return FS_JH_WRITEBACK: nothing more to do; an ordered
 *    journal must only make sure those writes are durable before the commit block,
 *    i.e. flush before committing — they have already completed). For data=journal
 *    the fs asks BEFORE writing: `dirty_data` with FS_JH_DATA_BEFORE in flags; the
 *    hook returns 0 to take the content (the fs then does not write it) or
 *    FS_JH_WRITEBACK to let the fs write it.
 *  - read_block() (optional) lets a journal supply a block whose newest content is
 *    only in the journal (the fs evicted its cached copy, or a data=journal block):
 *    return 1 with buf filled, 0 to read home, or -errno.
 *
 * Mount order: fs_mount reads and checks the superblock and reads the group
 * descriptors (they locate the journal inode: fs_inode_bmap works from here on),
 * opens the hook (fs_journal_open), calls recover() BEFORE reading any other
 * metadata; after it the fs drops every cached block, re-reads the superblock and
 * the descriptors, processes orphans (under a handle) and marks the superblock
 * not-clean.
 *
 * Durability contract (the crash explorer judges exactly this): after
 * force_commit() returns 0, every metadata change of every stopped handle and every
 * data block written so far must be durable (blk_flush or BLK_FUA). The no-journal
 * hook's force_commit is: fs writes back its dirty cache, then blk_flush. */
#ifndef BLACKOUT_FS_JOURNAL_HOOK_H
#define BLACKOUT_FS_JOURNAL_HOOK_H

#include <stdbool.h>
#include <stdint.h>

#include "blackout/err.h"
#include "blackout/fs.h"

struct fs;
struct fs_jhook;

enum {
	FS_JH_WRITEBACK = 1,        /* return value: the fs writes this block home itself */
	FS_JH_HELD = 2,             /* return value: the hook took the block by reference */
	FS_JH_DATA_BEFORE = 1u << 0 /* dirty_data flag: data=journal, asked before writing */
};

/* Upper bound the fs keeps for the credits of one handle (distinct metadata blocks
 * dirtied). Large writes and truncates are split into several handles. */
#define FS_JH_MAX_CREDITS 1024

struct fs_jhook_ops {
	int (*recover)(struct fs_jhook *j);
	int (*start)(struct fs_jhook *j, uint32_t credits);
	int (*get_write_access)(struct fs_jhook *j, uint64_t block, const void *cur);
	int (*dirty_metadata)(struct fs_jhook *j, uint64_t block, const void *data);
	int (*dirty_data)(struct fs_jhook *j, uint64_t block, const void *data, unsigned flags);
	int (*forget)(struct fs_jhook *j, uint64_t block);
	int (*read_block)(struct fs_jhook *j, uint64_t block, void *buf); /* optional */
	int (*stop)(struct fs_jhook *j);
	/* fsync/sync: everything so far durable before returning */
	int (*force_commit)(struct fs_jhook *j);
	/* start committing what is there (commit=N interval); may return before durable */
	int (*commit)(struct fs_jhook *j);
	/* write committed metadata home and free journal space (unmount, full journal) */
	int (*checkpoint)(struct fs_jhook *j);
	/* clean: after a successful checkpoint at unmount (a journal marks itself empty);
	 * !clean: fs_abandon, write nothing. Frees the hook. */
	void (*destroy)(struct fs_jhook *j, bool clean);
	/* Optional: how many transactions have committed in this mount. A block freed
	 * while the count is c is reallocated only once it exceeds c (the freeing
	 * transaction is then in the log). Absent (no journal): freed blocks are
	 * reusable at once. */
	uint64_t (*commits)(struct fs_jhook *j);
};

struct fs_jhook {
	const struct fs_jhook_ops *ops;
	struct fs *fs; /* the filesystem this hook serves */
};

/* Chooses and opens the hook for a mount: the no-journal hook when the image has no
 * journal, when mounted no_journal or read-only; otherwise fs_jbd_open (fs_jbd.c,
 * src/jbd/) when it is built in, else the no-journal hook with the journal left
 * untouched (the image must then not need recovery: -EUCLEAN). */
int fs_journal_open(struct fs *fs, const struct fs_mount_opts *o, struct fs_jhook **out,
                    struct bo_err *err);

/* The built-in ext2 behaviour: metadata written back by the fs cache, blk_flush on
 * force_commit. */
int fs_nojournal_open(struct fs *fs, struct fs_jhook **out);

/* Provided by src/fs/fs_jbd.c (always built): a JBD2 journal in inode
 * s_journal_inum. */
int fs_jbd_open(struct fs *fs, const struct fs_mount_opts *o, struct fs_jhook **out,
                struct bo_err *err);

/* fs_mount with a hook of the caller's making instead of fs_journal_open's choice:
 * for tests that watch every metadata write, recorders and alternative journals. */
int fs_mount_hooked(struct bdev *d, const struct fs_mount_opts *o,
                    int (*open_hook)(void *ctx, struct fs *fs, struct fs_jhook **out),
                    void *hook_ctx, struct fs **out, struct bo_err *err);

/* ---- What the fs offers a hook (fs/fs.c) ------------------------------------- */
struct bdev *fs_bdev(struct fs *fs);
uint32_t fs_block_size(const struct fs *fs);
uint64_t fs_blocks_count(const struct fs *fs);
/* The 1024-byte superblock as cached (authoritative); a hook may read it. */
const uint8_t *fs_sb(const struct fs *fs);
/* Re-reads the superblock from the device (after replay). */
int fs_reload_sb(struct fs *fs);
/* Sets/clears EXT3_FEATURE_INCOMPAT_RECOVER in the cached superblock and writes the
 * superblock home at once (flags as blk_write: BLK_FUA). */
int fs_set_needs_recovery(struct fs *fs, bool on, unsigned flags);
/* Maps logical block `lblk` of inode `ino` to a physical block (0 = hole), for a
 * journal that lives in an inode. */
int fs_inode_bmap(struct fs *fs, uint32_t ino, uint64_t lblk, uint64_t *pblk);
/* Size in bytes of inode `ino`. */
int fs_inode_size(struct fs *fs, uint32_t ino, uint64_t *size);
/* Writes every buffer the fs holds dirty for write-back to its home location (no
 * flush). */
int fs_writeback(struct fs *fs);
/* The cached content of a block a hook holds (dirty_metadata returned FS_JH_HELD)
 * into buf; release: the hold ends, the buffer may be evicted again. -EIO when the
 * fs has no held buffer for blk (a hook bug, never silently served). */
int fs_held_fetch(struct fs *fs, uint64_t blk, void *buf, bool release);
/* Mount options as given to fs_mount. */
const struct fs_mount_opts *fs_mount_opts(const struct fs *fs);
struct bo_err *fs_errp(struct fs *fs);
/* The superblock records an error (EXT2_ERROR_FS in s_state, written with the next
 * change): a failed journal write. No errors= policy: the journal has its own. */
void fs_sb_set_error(struct fs *fs);
/* The filesystem's clock (a fixed one in tests). */
uint32_t fs_now(struct fs *fs);

#endif
