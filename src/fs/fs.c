// SPDX-License-Identifier: GPL-2.0-or-later
/* fs.c — the operation bracket through which every metadata change reaches the
 * journal hook, the superblock and group descriptors written back at its end, and what
 * the journal hook may use of a mounted filesystem. Not the buffer cache (bcache.c),
 * mount/unmount (mount.c), the file operations (ops.c), the allocator (alloc.c), inode
 * block maps (inode.c) or directories (dir.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "fs/fs_int.h"

uint32_t fs_now(struct fs *fs)
{
	return fs->now_override ? fs->now_override : (uint32_t)time(NULL);
}

uint32_t fs_inode_csum_seed(const struct fs *fs, uint32_t ino, uint32_t gen)
{
	return ext2_inode_csum_seed(fs->csum_seed, ino, gen);
}

bool fs_blk_valid(const struct fs *fs, uint64_t blk)
{
	return blk >= fs->first_data_block && blk < fs->blocks;
}

/* ext3_commit_super for a filesystem that stops writing: only the error bit goes to
 * the superblock on disk, set in the copy that is there (the in-memory one holds
 * counts of work that will never commit). Best effort: the error is reported anyway. */
static void write_error_bit(struct fs *fs)
{
	uint32_t ss = fs->dev->sector_size;
	size_t len = ss > 2048 ? ss : 2048;
	uint8_t *tmp = malloc(len);
	if (!tmp || blk_pread(fs->dev, 0, len, tmp) < 0) {
		free(tmp);
		return;
	}
	uint8_t *sb = tmp + EXT2_SB_OFFSET;
	if (sb_get16(sb, SB_MAGIC) == EXT2_MAGIC) {
		sb_put16(sb, SB_STATE, sb_get16(sb, SB_STATE) | EXT2_ERROR_FS);
		if (fs->csum)
			sb_put32(sb, SB_CHECKSUM, ext2_sb_csum(sb));
		if (blk_pwrite(fs->dev, 0, len, tmp, BLK_FUA) == 0)
			(void)blk_flush(fs->dev);
	}
	free(tmp);
}

int fs_error(struct fs *fs, int rc)
{
	if (fs->aborted || (fs->ro && !fs->op_depth))
		return rc; /* a read-only mount writes nothing, not even the error */
	if (!(sb_get16(fs->sb, SB_STATE) & EXT2_ERROR_FS)) {
		sb_put16(fs->sb, SB_STATE, sb_get16(fs->sb, SB_STATE) | EXT2_ERROR_FS);
		fs_sb_dirty(fs, SB_STATE);
	}
	if (fs->opts.errors == FS_ERRORS_CONTINUE)
		return rc;
	/* remount-ro and panic abort at once, as ext3 aborts its journal: the running
	 * transaction is dropped, so nothing of the operation that met the damage
	 * reaches the disk */
	fs->aborted = true;
	fs->ro = true;
	write_error_bit(fs);
	return rc;
}

/* ---- superblock and descriptors into the cache ---------------------------------- */
static uint64_t sb_block(const struct fs *fs)
{
	return EXT2_SB_OFFSET / fs->bs;
}

static int flush_sb(struct fs *fs)
{
	struct fs_buf *b;
	int rc = fs_bread(fs, sb_block(fs), &b);
	if (rc < 0)
		return rc;
	if ((rc = fs_baccess(fs, b)) < 0)
		return rc;
	if (fs->csum) {
		sb_put32(fs->sb, SB_CHECKSUM, ext2_sb_csum(fs->sb));
		fs->sb_stale |= (uint16_t)(1u << (SB_CHECKSUM / 64));
	}
	uint8_t *to = b->data + EXT2_SB_OFFSET % fs->bs;
	for (unsigned i = 0; i < EXT2_SB_SIZE / 64; i++)
		if (fs->sb_stale >> i & 1)
			memcpy(to + i * 64, fs->sb + i * 64, 64);
	fs_bdirty(fs, b);
	fs->sb_dirty = false;
	fs->sb_stale = 0;
	return 0;
}

uint16_t fs_gd_csum(const struct fs *fs, uint32_t g, const uint8_t *gd)
{
	return ext2_gd_csum(fs->csum_seed, g, gd, fs->desc_size);
}

static int flush_gds(struct fs *fs)
{
	for (uint32_t g = 0; g < fs->groups; g++) {
		if (!fs->gd_dirty[g])
			continue;
		fs->gd_dirty[g] = false;
		uint8_t *gd = fs_gd(fs, g);
		if (fs->csum) {
			fs_gd_update_csums(fs, g);
			put_le16(gd + GD_CHECKSUM, fs_gd_csum(fs, g, gd));
		}
		uint64_t blk = fs->first_data_block + 1 + g / fs->desc_per_block;
		struct fs_buf *b;
		int rc = fs_bread(fs, blk, &b);
		if (rc < 0)
			return rc;
		if ((rc = fs_baccess(fs, b)) < 0)
			return rc;
		memcpy(b->data + (g % fs->desc_per_block) * fs->desc_size, gd, fs->desc_size);
		fs_bdirty(fs, b);
	}
	return 0;
}

int fs_op_begin(struct fs *fs, uint32_t credits)
{
	if (fs->aborted && fs->opts.errors == FS_ERRORS_PANIC)
		return bo_errf(&fs->err, -EIO, "filesystem aborted after damage (errors=panic)");
	if (fs->aborted)
		return bo_errf(&fs->err, -EROFS,
		               "filesystem read-only after damage (errors=remount-ro)");
	if (fs->ro)
		return bo_errf(&fs->err, -EROFS, "filesystem is mounted read-only");
	if (fs->op_depth++ > 0)
		return 0;
	fs->op_serial++;
	if (credits > FS_JH_MAX_CREDITS)
		credits = FS_JH_MAX_CREDITS;
	int rc = fs->jh->ops->start ? fs->jh->ops->start(fs->jh, credits) : 0;
	if (rc < 0)
		fs->op_depth--;
	return rc;
}

/* The end of an operation after the filesystem aborted: its changes are dropped
 * (never given to the journal nor written back). */
static int op_drop(struct fs *fs, int rc)
{
	while (fs->op_dirty) {
		struct fs_buf *b = fs->op_dirty;
		fs->op_dirty = b->op_next;
		b->in_op = false;
		fs_buf_remove(fs, b);
	}
	fs->op_depth = 0;
	if (fs->jh->ops->stop)
		(void)fs->jh->ops->stop(fs->jh);
	return rc < 0 ? rc : -EIO;
}

int fs_op_end(struct fs *fs, int rc)
{
	if (fs->op_depth > 1) {
		fs->op_depth--;
		return rc;
	}
	if (rc == -EUCLEAN)
		fs_error(fs, rc);
	if (fs->aborted)
		return op_drop(fs, rc);
	int r = flush_gds(fs);
	if (r == 0 && fs->sb_dirty)
		r = flush_sb(fs);
	while (fs->op_dirty) {
		struct fs_buf *b = fs->op_dirty;
		fs->op_dirty = b->op_next;
		b->in_op = false;
		if (b->forgotten) {
			fs_buf_remove(fs, b);
			continue;
		}
		int w = fs->jh->ops->dirty_metadata(fs->jh, b->blk, b->data);
		if (w < 0 && r == 0)
			r = w;
		if (w == FS_JH_WRITEBACK && !b->dirty) {
			b->dirty = true;
			fs->ndirty++;
		}
		if (w == FS_JH_HELD)
			b->held = true;
	}
	fs->op_depth = 0;
	int s = fs->jh->ops->stop ? fs->jh->ops->stop(fs->jh) : 0;
	if (s < 0 && r == 0)
		r = s;
	fs_cache_trim(fs);
	if (r == -EUCLEAN && rc >= 0)
		fs_error(fs, r);
	if (fs->opts.commit_ops && fs->jh->ops->commit &&
	    (fs->op_serial % fs->opts.commit_ops) == 0)
		fs->jh->ops->commit(fs->jh);
	return rc < 0 ? rc : r < 0 ? r : rc;
}

/* ---- what the journal hook may use ---------------------------------------------- */
struct bdev *fs_bdev(struct fs *fs)
{
	return fs->dev;
}
uint32_t fs_block_size(const struct fs *fs)
{
	return fs->bs;
}
uint64_t fs_blocks_count(const struct fs *fs)
{
	return fs->blocks;
}
const uint8_t *fs_sb(const struct fs *fs)
{
	return fs->sb;
}
const struct fs_mount_opts *fs_mount_opts(const struct fs *fs)
{
	return &fs->opts;
}
int fs_held_fetch(struct fs *fs, uint64_t blk, void *buf, bool release)
{
	struct fs_buf *b = fs_buf_find(fs, blk);
	if (!b || !b->held)
		return bo_errf(&fs->err, -EIO, "journal fetch of block %llu: not held by the cache",
		               (unsigned long long)blk);
	memcpy(buf, b->data, fs->bs);
	if (release)
		b->held = false;
	return 0;
}
void fs_sb_set_error(struct fs *fs)
{
	sb_put16(fs->sb, SB_STATE, sb_get16(fs->sb, SB_STATE) | EXT2_ERROR_FS);
	fs_sb_dirty(fs, SB_STATE);
}
struct bo_err *fs_errp(struct fs *fs)
{
	return &fs->err;
}
const struct bo_err *fs_err(const struct fs *fs)
{
	return &fs->err;
}

int fs_set_needs_recovery(struct fs *fs, bool on, unsigned flags)
{
	uint32_t inc = sb_get32(fs->sb, SB_FEATURE_INCOMPAT);
	inc = on ? inc | EXT3_FEATURE_INCOMPAT_RECOVER : inc & ~EXT3_FEATURE_INCOMPAT_RECOVER;
	sb_put32(fs->sb, SB_FEATURE_INCOMPAT, inc);
	if (fs->csum)
		sb_put32(fs->sb, SB_CHECKSUM, ext2_sb_csum(fs->sb));
	struct fs_buf *b;
	int rc = fs_bread(fs, sb_block(fs), &b);
	if (rc < 0)
		return rc;
	memcpy(b->data + EXT2_SB_OFFSET % fs->bs, fs->sb, EXT2_SB_SIZE);
	fs->sb_stale = 0;
	rc = blk_pwrite(fs->dev, b->blk * fs->bs, fs->bs, b->data, flags);
	if (rc < 0)
		return bo_errf(&fs->err, rc, "writing the superblock: %s",
		               bo_errstr(&fs->dev->err, rc));
	return 0;
}
