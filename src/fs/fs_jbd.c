// SPDX-License-Identifier: GPL-2.0-or-later
/* fs_jbd.c — the glue between fs/ and the JBD2 journal of src/jbd/: implements the
 * journal hook (journal_hook.h) with a journal in inode s_journal_inum. Mount-time
 * recovery, the needs_recovery flag, data modes, barriers, the errors= and
 * checkpoint_errors= policies. The journal itself knows nothing of ext3; everything
 * ext3-specific is here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/jbd.h"
#include "blackout/ext2_format.h"
#include "blackout/fs.h"
#include "fs/journal_hook.h"

struct fsj {
	struct fs_jhook hook;
	struct jbd_journal *j;
	struct jbd_handle *h;
	struct jbd_extent *ext;
	size_t next, cap;
	uint64_t nblocks;     /* journal blocks mapped so far */
	bool started;         /* needs_recovery set for this mount */
	bool errored;         /* the abort has been reported to the fs */
	uint64_t ckpt_errors; /* checkpoint_errors=ignore: failed home writes logged */
	/* the geometry map_journal checks every pointer against, read once: the
	 * accessors are calls into fs.c, and the map walk makes one per pointer */
	uint64_t fs_blocks;
	uint32_t bs;
};

static struct fsj *J(struct fs_jhook *h)
{
	return (struct fsj *)h;
}

static int add_block(struct fsj *f, struct fs *fs, uint64_t p, uint64_t want)
{
	if (f->nblocks >= want)
		return 0;
	if (!p || p >= f->fs_blocks)
		return bo_errf(
		    fs_errp(fs), -EUCLEAN, "journal inode: block %llu of the journal is %s",
		    (unsigned long long)f->nblocks, p ? "beyond the filesystem" : "a hole");
	if (f->next && f->ext[f->next - 1].pblk + f->ext[f->next - 1].count == p) {
		f->ext[f->next - 1].count++;
	} else {
		if (f->next == f->cap) {
			size_t nc = f->cap ? f->cap * 2 : 16;
			struct jbd_extent *e = realloc(f->ext, nc * sizeof(*e));
			if (!e)
				return bo_errf(fs_errp(fs), -ENOMEM, "out of memory");
			f->ext = e;
			f->cap = nc;
		}
		f->ext[f->next++] = (struct jbd_extent){f->nblocks, p, 1};
	}
	f->nblocks++;
	return 0;
}

/* The journal inode's map read straight from the device (never through the fs
 * cache, which must not hold pre-replay blocks), with every pointer checked. */
static int walk(struct fsj *f, struct fs *fs, uint64_t blk, int level, uint64_t want, uint8_t *buf)
{
	if (f->nblocks >= want)
		return 0;
	if (!blk || blk >= f->fs_blocks)
		return bo_errf(fs_errp(fs), -EUCLEAN,
		               "journal inode: indirect block %llu out of range",
		               (unsigned long long)blk);
	uint8_t *b = buf + (size_t)(level - 1) * f->bs;
	int rc = blk_pread(fs_bdev(fs), blk * f->bs, f->bs, b);
	if (rc)
		return bo_errf(fs_errp(fs), rc, "journal inode: reading block %llu",
		               (unsigned long long)blk);
	for (uint32_t i = 0; i < f->bs / 4 && f->nblocks < want && !rc; i++) {
		uint64_t p = get_le32(b + 4 * i);
		rc = level == 1 ? add_block(f, fs, p, want) : walk(f, fs, p, level - 1, want, buf);
	}
	return rc;
}

static int map_journal(struct fsj *f, struct fs *fs, uint64_t *nblocks)
{
	const uint8_t *sb = fs_sb(fs);
	uint32_t ino = sb_get32(sb, SB_JOURNAL_INUM);
	uint8_t iblock[60];
	uint64_t size;
	f->fs_blocks = fs_blocks_count(fs);
	f->bs = fs_block_size(fs);
	if (sb_has_incompat(sb, EXT3_FEATURE_INCOMPAT_JOURNAL_DEV) || sb_get32(sb, SB_JOURNAL_DEV))
		return bo_errf(fs_errp(fs), -EOPNOTSUPP, "external journals are not supported");
	if (ino == EXT2_JOURNAL_INO && sb[SB_JNL_BACKUP_TYPE] == EXT3_JNL_BACKUP_BLOCKS) {
		/* mke2fs keeps a copy of the journal inode's i_block and size here */
		memcpy(iblock, sb + SB_JNL_BLOCKS, 60);
		size = get_le32(sb + SB_JNL_BLOCKS + 64) |
		       (uint64_t)get_le32(sb + SB_JNL_BLOCKS + 60) << 32;
	} else {
		uint32_t ipg = sb_get32(sb, SB_INODES_PER_GROUP), isz = sb_inode_size(sb);
		if (ino < 1 || ino > sb_get32(sb, SB_INODES_COUNT) || !ipg || !isz)
			return bo_errf(fs_errp(fs), -EUCLEAN, "journal inode %u out of range", ino);
		uint32_t g = (ino - 1) / ipg, idx = (ino - 1) % ipg;
		uint32_t dsz = sb_desc_size(sb);
		uint64_t gdblk =
		    sb_get32(sb, SB_FIRST_DATA_BLOCK) + 1 + (uint64_t)g * dsz / fs_block_size(fs);
		uint8_t *b = malloc(fs_block_size(fs));
		if (!b)
			return -ENOMEM;
		int rc = blk_pread(fs_bdev(fs), gdblk * fs_block_size(fs), fs_block_size(fs), b);
		uint64_t itab =
		    rc ? 0 : gd_inode_table(b + (size_t)g * dsz % fs_block_size(fs), dsz);
		uint64_t off = (uint64_t)idx * isz;
		if (!rc && (!itab || itab >= fs_blocks_count(fs)))
			rc =
			    bo_errf(fs_errp(fs), -EUCLEAN, "journal inode %u: bad inode table %llu",
			            ino, (unsigned long long)itab);
		if (!rc)
			rc = blk_pread(fs_bdev(fs),
			               (itab + off / fs_block_size(fs)) * fs_block_size(fs),
			               fs_block_size(fs), b);
		if (!rc) {
			const uint8_t *in = b + off % fs_block_size(fs);
			if (get_le32(in + I_FLAGS) & EXT4_EXTENTS_FL)
				rc = bo_errf(fs_errp(fs), -EOPNOTSUPP,
				             "journal inode %u uses extents", ino);
			memcpy(iblock, in + I_BLOCK, 60);
			size = ino_size(in);
		}
		free(b);
		if (rc)
			return rc;
	}
	uint64_t want = size / fs_block_size(fs);
	if (want < 16)
		return bo_errf(fs_errp(fs), -EUCLEAN, "journal inode: %llu blocks is too small",
		               (unsigned long long)want);
	uint8_t *buf = malloc((size_t)fs_block_size(fs) * 3);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (int i = 0; i < 12 && !rc; i++)
		rc = add_block(f, fs, get_le32(iblock + 4 * i), want);
	for (int l = 1; l <= 3 && !rc && f->nblocks < want; l++)
		rc = walk(f, fs, get_le32(iblock + 4 * (11 + l)), l, want, buf);
	free(buf);
	if (!rc && f->nblocks < want)
		rc = bo_errf(fs_errp(fs), -EUCLEAN, "journal inode: maps %llu of %llu blocks",
		             (unsigned long long)f->nblocks, (unsigned long long)want);
	*nblocks = want;
	return rc;
}

/* A failed journal write: the fs learns it; the superblock records the error once;
 * errors=remount-ro then refuses every change (h_start). */
static int failed(struct fsj *f, int rc)
{
	struct fs *fs = f->hook.fs;
	if (rc >= 0)
		return rc;
	bo_errf(fs_errp(fs), rc, "journal: %s", bo_errstr(jbd_journal_err(f->j), rc));
	if (jbd_journal_aborted(f->j) && !f->errored) {
		f->errored = true;
		fs_sb_set_error(fs);
		(void)fs_set_needs_recovery(fs, true, BLK_FUA); /* best effort */
		bo_errf(fs_errp(fs), rc, "journal: %s", bo_errstr(jbd_journal_err(f->j), rc));
	}
	return rc;
}

static int h_recover(struct fs_jhook *h)
{
	struct fsj *f = J(h);
	struct fs *fs = h->fs;
	int rc = 0;
	if (jbd_journal_needs_recovery(f->j)) {
		struct jbd_recovery_info info;
		rc = jbd_journal_recover(f->j, &info);
		if (rc)
			return bo_errf(fs_errp(fs), rc, "%s", bo_errstr(jbd_journal_err(f->j), rc));
	}
	/* the replayed superblock, with needs_recovery cleared */
	rc = fs_reload_sb(fs);
	if (!rc && sb_has_incompat(fs_sb(fs), EXT3_FEATURE_INCOMPAT_RECOVER))
		rc = fs_set_needs_recovery(fs, false, BLK_FUA);
	if (rc)
		return rc;
	/* metadata_csum implies journal checksum v3, as ext4 sets it */
	const struct jbd_sb *jsb = jbd_journal_sb(f->j);
	if (sb_has_ro_compat(fs_sb(fs), EXT4_FEATURE_RO_COMPAT_METADATA_CSUM) &&
	    !(jsb->incompat & JBD_FEATURE_INCOMPAT_CSUM_V3)) {
		uint32_t inc = (jsb->incompat & ~(uint32_t)JBD_FEATURE_INCOMPAT_CSUM_V2) |
		               JBD_FEATURE_INCOMPAT_CSUM_V3;
		rc = jbd_journal_set_features(
		    f->j, jsb->compat & ~(uint32_t)JBD_FEATURE_COMPAT_CHECKSUM, inc);
		if (rc)
			return failed(f, rc);
	}
	rc = jbd_journal_load(f->j);
	if (rc)
		return bo_errf(fs_errp(fs), rc, "%s", bo_errstr(jbd_journal_err(f->j), rc));
	return 0;
}

static int h_start(struct fs_jhook *h, uint32_t credits)
{
	struct fsj *f = J(h);
	/* errors=remount-ro: every change is refused from now on. The fs's own ro
	 * flag is not used: with it, fs_sync would return 0, and a later fsync must
	 * never report success after a failed write. */
	if (f->errored && fs_mount_opts(h->fs)->errors == FS_ERRORS_RO)
		return bo_errf(fs_errp(h->fs), -EROFS,
		               "read-only after a journal write error (errors=remount-ro)");
	if (!f->started) {
		/* from the first change on, a crash leaves a journal to replay */
		int rc =
		    fs_set_needs_recovery(h->fs, true, fs_mount_opts(h->fs)->barrier ? BLK_FUA : 0);
		if (rc)
			return rc;
		f->started = true;
	}
	return failed(f, jbd_journal_start(f->j, credits, &f->h));
}

static int h_stop(struct fs_jhook *h)
{
	struct fsj *f = J(h);
	if (!f->h)
		return 0;
	int rc = jbd_journal_stop(f->h);
	f->h = NULL;
	return failed(f, rc);
}

static int h_gwa(struct fs_jhook *h, uint64_t block, const void *cur)
{
	struct fsj *f = J(h);
	(void)cur;
	return f->h ? failed(f, jbd_journal_get_write_access(f->h, block)) : 0;
}

/* Outside a handle (the fs should not, but be safe) a one-block handle is used. */
static int with_handle(struct fsj *f, int (*fn)(struct jbd_handle *, uint64_t, const void *),
                       uint64_t block, const void *data)
{
	bool own = !f->h;
	if (own) {
		int rc = jbd_journal_start(f->j, 1, &f->h);
		if (rc)
			return failed(f, rc);
	}
	int rc = fn(f->h, block, data);
	if (own) {
		int s = jbd_journal_stop(f->h);
		if (!rc)
			rc = s;
	}
	return rc < 0 ? failed(f, rc) : rc;
}

static int forget_fn(struct jbd_handle *h, uint64_t block, const void *data)
{
	(void)data;
	return jbd_journal_forget(h, block);
}

static int dirty_ref_fn(struct jbd_handle *h, uint64_t block, const void *data)
{
	(void)data;
	return jbd_journal_dirty_ref(h, block);
}

/* By reference: the fs keeps the buffer until the commit fetches it (fetch_held). */
static int h_dirty_metadata(struct fs_jhook *h, uint64_t block, const void *data)
{
	int rc = with_handle(J(h), dirty_ref_fn, block, data);
	return rc < 0 ? rc : FS_JH_HELD;
}

static int fetch_held(void *ctx, uint64_t block, void *buf, bool release)
{
	return fs_held_fetch(ctx, block, buf, release);
}

static int h_dirty_data(struct fs_jhook *h, uint64_t block, const void *data, unsigned flags)
{
	struct fsj *f = J(h);
	bool journal = fs_mount_opts(h->fs)->data == FS_DATA_JOURNAL;
	if ((flags & FS_JH_DATA_BEFORE) && !journal)
		return FS_JH_WRITEBACK;
	int rc = with_handle(f, jbd_journal_dirty_data, block, data);
	if (rc < 0)
		return rc;
	return rc == 1 ? FS_JH_WRITEBACK : 0;
}

static int h_forget(struct fs_jhook *h, uint64_t block)
{
	return with_handle(J(h), forget_fn, block, NULL);
}

static int h_read_block(struct fs_jhook *h, uint64_t block, void *buf)
{
	return jbd_journal_read_block(J(h)->j, block, buf);
}

/* checkpoint_errors=ignore: the journal went on past failed home writes (a commit
 * that needed room checkpoints too); the fs logs them, as jbd's printk did, and
 * nothing else: the caller's fsync or sync still succeeds. */
static int noted(struct fsj *f, int rc)
{
	struct jbd_stats st;
	jbd_journal_stats(f->j, &st);
	if (rc == 0 && st.checkpoint_errors > f->ckpt_errors) {
		bo_errf(fs_errp(f->hook.fs), -EIO,
		        "journal: %llu home write(s) failed at checkpoint, ignored "
		        "(checkpoint_errors=ignore): %s",
		        (unsigned long long)(st.checkpoint_errors - f->ckpt_errors),
		        bo_errstr(jbd_journal_err(f->j), -EIO));
		f->ckpt_errors = st.checkpoint_errors;
	}
	return failed(f, rc);
}

static int h_force_commit(struct fs_jhook *h)
{
	return noted(J(h), jbd_journal_force_commit(J(h)->j));
}

static int h_commit(struct fs_jhook *h)
{
	return noted(J(h), jbd_journal_commit(J(h)->j));
}

static int h_checkpoint(struct fs_jhook *h)
{
	return noted(J(h), jbd_journal_checkpoint(J(h)->j));
}

static uint64_t h_commits(struct fs_jhook *h)
{
	struct jbd_stats st;
	jbd_journal_stats(J(h)->j, &st);
	return st.commits;
}
static void h_destroy(struct fs_jhook *h, bool clean)
{
	struct fsj *f = J(h);
	if (f->j) {
		int rc = jbd_journal_destroy(f->j, clean && !jbd_journal_aborted(f->j));
		/* the journal is empty on disk: no recovery needed any more */
		if (clean && !rc && f->started && !f->errored)
			(void)fs_set_needs_recovery(h->fs, false,
			                            fs_mount_opts(h->fs)->barrier ? BLK_FUA : 0);
	}
	free(f->ext);
	free(f);
}

static uint64_t fs_clock(void *ctx)
{
	return fs_now(ctx);
}

static const struct fs_jhook_ops jbd_hook_ops = {
    .recover = h_recover,
    .start = h_start,
    .get_write_access = h_gwa,
    .dirty_metadata = h_dirty_metadata,
    .dirty_data = h_dirty_data,
    .forget = h_forget,
    .read_block = h_read_block,
    .stop = h_stop,
    .force_commit = h_force_commit,
    .commit = h_commit,
    .checkpoint = h_checkpoint,
    .destroy = h_destroy,
    .commits = h_commits,
};

int fs_jbd_open(struct fs *fs, const struct fs_mount_opts *o, struct fs_jhook **out,
                struct bo_err *err)
{
	*out = NULL;
	struct fsj *f = calloc(1, sizeof(*f));
	if (!f)
		return bo_errf(err, -ENOMEM, "out of memory");
	f->hook.ops = &jbd_hook_ops;
	f->hook.fs = fs;
	uint64_t nblocks = 0;
	int rc = map_journal(f, fs, &nblocks);
	if (rc) {
		bo_errf(err, rc, "%s", bo_errstr(fs_errp(fs), rc));
		free(f->ext);
		free(f);
		return rc;
	}
	struct jbd_config c = {
	    .block_size = fs_block_size(fs),
	    .nr_blocks = nblocks,
	    .map = {.extents = f->ext, .nr_extents = f->next},
	    .fs_blocks = fs_blocks_count(fs),
	    .data = o->data == FS_DATA_JOURNAL     ? JBD_DATA_JOURNAL
	            : o->data == FS_DATA_WRITEBACK ? JBD_DATA_WRITEBACK
	                                           : JBD_DATA_ORDERED,
	    .barrier = o->barrier,
	    .clock = fs_clock,
	    .clock_ctx = fs,
	    .corrupt_commit_fails = true, /* a mount, not e2fsck */
	    .checkpoint_errors_ignored = o->checkpoint_errors_ignored,
	    .fetch = fetch_held,
	    .fetch_ctx = fs,
	};
	rc = jbd_journal_open(fs_bdev(fs), &c, &f->j, err);
	if (rc) {
		free(f->ext);
		free(f);
		return rc;
	}
	*out = &f->hook;
	return 0;
}
