// SPDX-License-Identifier: GPL-2.0-or-later
/* mount.c — mount (superblock checks, group descriptors, the cache sized, journal
 * recovery through the hook), mount options, sync and unmount. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "fs/fs_int.h"

static int read_sb_raw(struct bdev *d, uint8_t *sb, struct bo_err *err)
{
	uint32_t ss = d->sector_size;
	size_t len = ss > 2048 ? ss : 2048;
	if (blk_size_bytes(d) < len)
		return bo_errf(err, -EINVAL, "device too small for an ext2 superblock");
	uint8_t *tmp = malloc(len);
	if (!tmp)
		return -ENOMEM;
	int rc = blk_pread(d, 0, len, tmp);
	if (rc == 0)
		memcpy(sb, tmp + EXT2_SB_OFFSET, EXT2_SB_SIZE);
	free(tmp);
	if (rc < 0)
		return bo_errf(err, rc, "reading the superblock: %s", bo_errstr(&d->err, rc));
	return 0;
}

int fs_reload_sb(struct fs *fs)
{
	fs->sb_stale = 0xffff; /* a buffered copy may be older */
	return read_sb_raw(fs->dev, fs->sb, &fs->err);
}

static int check_sb(struct fs *fs, const struct fs_mount_opts *o, struct bo_err *err)
{
	uint8_t *sb = fs->sb;
	if (sb_get16(sb, SB_MAGIC) != EXT2_MAGIC)
		return bo_errf(err, -EINVAL, "no ext2/ext3 superblock (magic 0x%04x)",
		               sb_get16(sb, SB_MAGIC));
	if (fs->csum || sb_has_ro_compat(sb, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM)) {
		if (sb[SB_CHECKSUM_TYPE] != EXT4_CRC32C_CHKSUM)
			return bo_errf(err, -EUCLEAN, "superblock: unknown checksum type %u",
			               sb[SB_CHECKSUM_TYPE]);
		uint32_t want = ext2_sb_csum(sb);
		if (want != sb_get32(sb, SB_CHECKSUM))
			return bo_errf(err, -EUCLEAN,
			               "superblock (block %u): checksum mismatch (stored 0x%08x, "
			               "computed 0x%08x)",
			               EXT2_SB_OFFSET /
			                   (sb_block_size(sb) ? sb_block_size(sb) : 1024),
			               sb_get32(sb, SB_CHECKSUM), want);
		fs->csum = true;
	}
	uint32_t inc = sb_get32(sb, SB_FEATURE_INCOMPAT);
	if (inc & ~BO_FS_SUPP_INCOMPAT)
		return bo_errf(err, -EOPNOTSUPP, "unsupported incompatible features 0x%x",
		               inc & ~BO_FS_SUPP_INCOMPAT);
	if (sb_get32(sb, SB_LOG_BLOCK_SIZE) > 2)
		return bo_errf(err, -EUCLEAN, "superblock: bad block size (log %u)",
		               sb_get32(sb, SB_LOG_BLOCK_SIZE));
	fs->bs = sb_block_size(sb);
	fs->bs_bits = 10 + sb_get32(sb, SB_LOG_BLOCK_SIZE);
	if (fs->bs < fs->dev->sector_size)
		return bo_errf(err, -EINVAL, "block size %u smaller than the sector size %u",
		               fs->bs, fs->dev->sector_size);
	fs->blocks = sb_get32(sb, SB_BLOCKS_COUNT_LO);
	fs->first_data_block = sb_get32(sb, SB_FIRST_DATA_BLOCK);
	fs->bpg = sb_get32(sb, SB_BLOCKS_PER_GROUP);
	fs->ipg = sb_get32(sb, SB_INODES_PER_GROUP);
	fs->inodes_count = sb_get32(sb, SB_INODES_COUNT);
	fs->inode_size = sb_inode_size(sb);
	fs->first_ino = sb_first_ino(sb);
	if (fs->first_data_block != (fs->bs == 1024 ? 1u : 0u))
		return bo_errf(err, -EUCLEAN, "superblock: bad first data block %u",
		               fs->first_data_block);
	if (fs->blocks <= fs->first_data_block || fs->blocks * fs->bs > blk_size_bytes(fs->dev))
		return bo_errf(err, -EUCLEAN,
		               "superblock: block count %llu does not fit the device (%llu bytes)",
		               (unsigned long long)fs->blocks,
		               (unsigned long long)blk_size_bytes(fs->dev));
	if (fs->bpg != fs->bs * 8 ||
	    sb_get32(sb, SB_LOG_CLUSTER_SIZE) != sb_get32(sb, SB_LOG_BLOCK_SIZE))
		return bo_errf(err, -EUCLEAN, "superblock: unsupported blocks per group %u",
		               fs->bpg);
	if (fs->inode_size < EXT2_GOOD_OLD_INODE_SIZE || fs->inode_size > 1024 ||
	    (fs->inode_size & (fs->inode_size - 1)) || fs->inode_size > fs->bs)
		return bo_errf(err, -EUCLEAN, "superblock: bad inode size %u", fs->inode_size);
	fs->groups = (uint32_t)((fs->blocks - fs->first_data_block + fs->bpg - 1) / fs->bpg);
	if (fs->ipg == 0 || fs->ipg > fs->bs * 8 || fs->ipg % (fs->bs / fs->inode_size) ||
	    (uint64_t)fs->ipg * fs->groups != fs->inodes_count)
		return bo_errf(err, -EUCLEAN,
		               "superblock: inode counts inconsistent (%u per group, "
		               "%u groups, %u inodes)",
		               fs->ipg, fs->groups, fs->inodes_count);
	if (fs->first_ino < EXT2_GOOD_OLD_FIRST_INO || fs->first_ino >= fs->inodes_count)
		return bo_errf(err, -EUCLEAN, "superblock: bad first inode %u", fs->first_ino);
	fs->inodes_per_block = fs->bs / fs->inode_size;
	fs->itb_per_group = fs->ipg / fs->inodes_per_block;
	fs->ipb_bits = (uint8_t)__builtin_ctz(fs->inodes_per_block);
	fs->ipg_bits = (fs->ipg & (fs->ipg - 1)) ? 0 : (uint8_t)__builtin_ctz(fs->ipg);
	fs->desc_size = sb_desc_size(sb);
	fs->desc_per_block = fs->bs / fs->desc_size;
	fs->desc_blocks = (fs->groups + fs->desc_per_block - 1) / fs->desc_per_block;
	fs->apb = fs->bs / 4;
	fs->has_filetype = sb_has_incompat(sb, EXT2_FEATURE_INCOMPAT_FILETYPE);
	fs->dir_index = sb_has_compat(sb, EXT2_FEATURE_COMPAT_DIR_INDEX);
	fs->hash_unsigned = (sb_get32(sb, SB_FLAGS) & EXT2_FLAGS_UNSIGNED_HASH) ? 3 : 0;
	for (int i = 0; i < 4; i++)
		fs->hash_seed[i] = sb_get32(sb, SB_HASH_SEED + 4 * i);
	fs->def_hash = sb[SB_DEF_HASH_VERSION];
	if (fs->csum)
		fs->csum_seed = ext2_csum_seed(sb);
	uint32_t ro = sb_get32(sb, SB_FEATURE_RO_COMPAT);
	if ((ro & ~BO_FS_SUPP_RO_COMPAT) && !o->read_only)
		return bo_errf(err, -EROFS, "unsupported read-only features 0x%x: mount read-only",
		               ro & ~BO_FS_SUPP_RO_COMPAT);
	if (sb_get32(sb, SB_REV_LEVEL) > EXT2_DYNAMIC_REV)
		return bo_errf(err, -EOPNOTSUPP, "superblock: revision %u",
		               sb_get32(sb, SB_REV_LEVEL));
	return 0;
}

static int load_gdt(struct fs *fs, struct bo_err *err)
{
	fs->gdt = calloc(fs->groups, fs->desc_size);
	fs->gd_dirty = calloc(fs->groups, sizeof(bool));
	fs->free_hint = calloc((size_t)fs->groups * 2, sizeof(*fs->free_hint));
	fs->bad_group = calloc(fs->groups, 1);
	if (!fs->gdt || !fs->gd_dirty || !fs->free_hint || !fs->bad_group)
		return -ENOMEM;
	uint8_t *buf = malloc(fs->bs);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t i = 0; i < fs->desc_blocks && rc == 0; i++) {
		uint64_t blk = fs->first_data_block + 1 + i;
		rc = blk_pread(fs->dev, blk * fs->bs, fs->bs, buf);
		if (rc < 0) {
			rc = bo_errf(err, -EIO, "reading group descriptor block %llu",
			             (unsigned long long)blk);
			break;
		}
		uint32_t n = fs->groups - i * fs->desc_per_block;
		if (n > fs->desc_per_block)
			n = fs->desc_per_block;
		memcpy(fs->gdt + (size_t)i * fs->desc_per_block * fs->desc_size, buf,
		       (size_t)n * fs->desc_size);
	}
	free(buf);
	if (rc < 0)
		return rc;
	for (uint32_t g = 0; g < fs->groups; g++) {
		uint8_t *gd = fs_gd(fs, g);
		uint64_t first = fs_group_first_block(fs, g);
		uint64_t last = first + fs->bpg;
		if (last > fs->blocks)
			last = fs->blocks;
		uint64_t bb = gd_block_bitmap(gd, fs->desc_size);
		uint64_t ib = gd_inode_bitmap(gd, fs->desc_size);
		uint64_t it = gd_inode_table(gd, fs->desc_size);
		uint64_t gdblk = fs->first_data_block + 1 + g / fs->desc_per_block;
		if (fs->csum && get_le16(gd + GD_CHECKSUM) != fs_gd_csum(fs, g, gd))
			return bo_errf(err, -EUCLEAN,
			               "group descriptor %u (block %llu): checksum mismatch", g,
			               (unsigned long long)gdblk);
		if (bb < first || bb >= last || ib < first || ib >= last || it < first ||
		    it + fs->itb_per_group > last)
			return bo_errf(err, -EUCLEAN,
			               "group descriptor %u (block %llu): bitmap or inode table "
			               "outside the group",
			               g, (unsigned long long)gdblk);
		/* nor over the superblock area or one another (ext4_check_descriptors):
		 * a bitmap aimed at a reserved descriptor block would be written there */
		uint64_t sa = first;
		if (ext2_bg_has_super(fs->sb, g))
			sa += 1 + fs->desc_blocks + sb_get16(fs->sb, SB_RESERVED_GDT_BLOCKS);
		const char *bad = bb < sa   ? "block bitmap"
		                  : ib < sa ? "inode bitmap"
		                  : it < sa ? "inode table"
		                            : NULL;
		if (bad)
			return bo_errf(err, -EUCLEAN,
			               "group descriptor %u (block %llu): %s inside the superblock "
			               "and descriptor blocks",
			               g, (unsigned long long)gdblk, bad);
		if (bb == ib || (bb >= it && bb < it + fs->itb_per_group) ||
		    (ib >= it && ib < it + fs->itb_per_group))
			return bo_errf(err, -EUCLEAN,
			               "group descriptor %u (block %llu): bitmaps and inode table "
			               "overlap",
			               g, (unsigned long long)gdblk);
		if (gd_free_blocks(gd, fs->desc_size) > fs->bpg ||
		    gd_free_inodes(gd, fs->desc_size) > fs->ipg)
			return bo_errf(err, -EUCLEAN,
			               "group descriptor %u (block %llu): bad counts", g,
			               (unsigned long long)gdblk);
	}
	return 0;
}

void fs_mount_opts_default(struct fs_mount_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->data = FS_DATA_ORDERED;
	o->barrier = true;
	o->errors = FS_ERRORS_CONTINUE;
}

int fs_mount_opts_parse(const char *text, struct fs_mount_opts *o, struct bo_err *err)
{
	fs_mount_opts_default(o);
	if (!text)
		return 0;
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char w[64];
		if (n >= sizeof(w))
			return bo_errf(err, -EINVAL, "mount option at column %zu too long",
			               (size_t)(p - text) + 1);
		memcpy(w, p, n);
		w[n] = 0;
		unsigned v;
		char tail;
		if (n == 0) {
		} else if (!strcmp(w, "data=ordered")) {
			o->data = FS_DATA_ORDERED;
		} else if (!strcmp(w, "data=writeback")) {
			o->data = FS_DATA_WRITEBACK;
		} else if (!strcmp(w, "data=journal")) {
			o->data = FS_DATA_JOURNAL;
		} else if (!strcmp(w, "barrier=1") || !strcmp(w, "barrier")) {
			o->barrier = true;
		} else if (!strcmp(w, "barrier=0") || !strcmp(w, "nobarrier")) {
			o->barrier = false;
		} else if (sscanf(w, "commit=%u%c", &v, &tail) == 1) {
			o->commit_ops = v;
		} else if (!strcmp(w, "errors=remount-ro")) {
			o->errors = FS_ERRORS_RO;
		} else if (!strcmp(w, "errors=panic")) {
			o->errors = FS_ERRORS_PANIC;
		} else if (!strcmp(w, "errors=continue")) {
			o->errors = FS_ERRORS_CONTINUE;
		} else if (!strcmp(w, "checkpoint_errors=abort")) {
			o->checkpoint_errors_ignored = false;
		} else if (!strcmp(w, "checkpoint_errors=ignore")) {
			o->checkpoint_errors_ignored = true;
		} else if (!strcmp(w, "ro")) {
			o->read_only = true;
		} else if (!strcmp(w, "rw")) {
			o->read_only = false;
		} else if (!strcmp(w, "nojournal") || !strcmp(w, "noload")) {
			o->no_journal = true;
		} else {
			return bo_errf(err, -EINVAL, "unknown mount option '%s' at column %zu", w,
			               (size_t)(p - text) + 1);
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static void fs_free(struct fs *fs)
{
	while (fs->lru_head)
		fs_buf_remove(fs, fs->lru_head);
	while (fs->files) {
		struct fs_file *f = fs->files;
		fs->files = f->next;
		free(f);
	}
	fs_freed_release(fs);
	fs_dpage_release(fs);
	blk_page_free(fs->spare_page);
	free(fs->htab);
	free(fs->dcache);
	free(fs->dcomplete);
	free(fs->gdt);
	free(fs->gd_dirty);
	free(fs->free_hint);
	free(fs->bad_group);
	free(fs);
}

static uint32_t pow2_clamp(uint64_t want, uint32_t lo, uint32_t hi)
{
	uint32_t n = lo;
	while (n < want && n < hi)
		n <<= 1;
	return n;
}

/* The buffer hash and the name cache, sized for this image: a mount of a small
 * image must be cheap (the crash explorer mounts one per state). */
static int alloc_caches(struct fs *fs, struct bo_err *err)
{
	uint64_t bufs = fs->blocks < fs->max_bufs ? fs->blocks : fs->max_bufs;
	/* the buffer hash starts small and grows with the buffers held (bcache.c): a
	 * mount that reads a few hundred blocks should not zero 512 KiB of buckets */
	fs->hsize_max = pow2_clamp(bufs * 2, 256, 1u << 16);
	fs->hsize = 256;
	uint32_t dsize = pow2_clamp((uint64_t)fs->inodes_count / 4, FS_DCACHE_MIN, FS_DCACHE_MAX);
	fs->dcache_mask = dsize - 1;
	fs->htab = calloc(fs->hsize, sizeof(*fs->htab));
	fs->dcache = calloc(dsize, sizeof(*fs->dcache));
	fs->dcomplete = calloc(FS_DCOMPLETE_SIZE, sizeof(*fs->dcomplete));
	if (!fs->htab || !fs->dcache || !fs->dcomplete)
		return bo_errf(err, -ENOMEM, "mount: out of memory for the caches");
	return 0;
}

int fs_mount(struct bdev *d, const struct fs_mount_opts *o, struct fs **out, struct bo_err *err)
{
	return fs_mount_hooked(d, o, NULL, NULL, out, err);
}

int fs_mount_hooked(struct bdev *d, const struct fs_mount_opts *o,
                    int (*open_hook)(void *ctx, struct fs *fs, struct fs_jhook **out),
                    void *hook_ctx, struct fs **out, struct bo_err *err)
{
	struct fs_mount_opts defo;
	if (!o) {
		fs_mount_opts_default(&defo);
		o = &defo;
	}
	*out = NULL;
	struct fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->dev = d;
	fs->opts = *o;
	fs->sb_stale = 0xffff;         /* the first flush copies the whole superblock */
	fs->spare_pf = BLK_PAGE_BYTES; /* no spare page to fetch */
	fs->now_override = o->now;
	fs->ro = o->read_only || d->read_only;
	fs->max_bufs = 1u << 15;
	fs->max_dirty = 1u << 13;
	int rc = read_sb_raw(d, fs->sb, err);
	if (rc == 0)
		rc = check_sb(fs, o, err);
	if (rc == 0)
		rc = alloc_caches(fs, err);
	/* the descriptors locate the journal inode; what replay changes is re-read */
	if (rc == 0)
		rc = load_gdt(fs, err);
	if (rc == 0) {
		rc = open_hook ? open_hook(hook_ctx, fs, &fs->jh)
		               : fs_journal_open(fs, o, &fs->jh, err);
		if (rc == 0 && fs->jh->ops->recover) {
			rc = fs->jh->ops->recover(fs->jh);
			if (rc < 0)
				bo_errf(err, rc, "journal recovery: %s", bo_errstr(&fs->err, rc));
			fs_cache_drop_clean(fs);
			if (rc == 0 && (rc = fs_reload_sb(fs)) == 0)
				rc = check_sb(fs, o, err);
			if (rc == 0) {
				free(fs->gdt);
				free(fs->gd_dirty);
				free(fs->free_hint);
				free(fs->bad_group);
				fs->gdt = NULL;
				fs->gd_dirty = NULL;
				fs->free_hint = NULL;
				fs->bad_group = NULL;
				rc = load_gdt(fs, err);
			}
		}
	}
	if (rc == 0 && sb_has_incompat(fs->sb, EXT3_FEATURE_INCOMPAT_RECOVER) && !fs->ro)
		rc = bo_errf(err, -EUCLEAN,
		             "filesystem needs journal recovery, which is not "
		             "available: run e2fsck or mount read-only");
	if (rc == 0 && !fs->ro) {
		rc = fs_op_begin(fs, 8);
		if (rc == 0) {
			uint16_t st = sb_get16(fs->sb, SB_STATE);
			sb_put16(fs->sb, SB_STATE, st & ~EXT2_VALID_FS);
			sb_put16(fs->sb, SB_MNT_COUNT, sb_get16(fs->sb, SB_MNT_COUNT) + 1);
			sb_put32(fs->sb, SB_MTIME, fs_now(fs));
			fs_sb_dirty(fs, FS_SB_ANY);
			rc = fs_orphans_process(fs);
			rc = fs_op_end(fs, rc);
			if (rc == 0 && fs->jh->ops->force_commit)
				rc = fs->jh->ops->force_commit(fs->jh);
		}
		if (rc < 0)
			bo_errf(err, rc, "mount: %s", bo_errstr(&fs->err, rc));
	}
	if (rc < 0) {
		if (fs->jh)
			fs->jh->ops->destroy(fs->jh, false);
		fs_free(fs);
		return rc;
	}
	*out = fs;
	return 0;
}

/* fsync of inode ino (0: sync): its delayed data home, then every metadata change
 * durable. Under data=writeback other files' delayed data stays behind. */
int fs_sync_ino(struct fs *fs, uint32_t ino)
{
	if (fs->aborted)
		return bo_errf(&fs->err, -EIO,
		               "filesystem aborted after damage: nothing is synced");
	if (fs->ro)
		return 0;
	int rc = fs_dpage_flush(fs, ino);
	int r = fs_writeback(fs);
	if (r < 0 && rc == 0)
		rc = r;
	if (fs->jh->ops->force_commit && (r = fs->jh->ops->force_commit(fs->jh)) < 0 && rc == 0)
		rc = r;
	return rc;
}

int fs_sync(struct fs *fs)
{
	return fs_sync_ino(fs, 0);
}

int fs_unmount(struct fs *fs)
{
	if (!fs)
		return 0;
	int rc = 0;
	while (fs->files) {
		int r = fs_close(fs->files);
		if (r < 0 && rc == 0)
			rc = r;
	}
	if (!fs->ro) {
		int r = fs_op_begin(fs, 4);
		if (r == 0) {
			sb_put16(fs->sb, SB_STATE, sb_get16(fs->sb, SB_STATE) | EXT2_VALID_FS);
			sb_put32(fs->sb, SB_WTIME, fs_now(fs));
			fs_sb_dirty(fs, FS_SB_ANY);
			r = fs_op_end(fs, 0);
		}
		if (r == 0)
			r = fs_sync(fs);
		if (r == 0 && fs->jh->ops->checkpoint)
			r = fs->jh->ops->checkpoint(fs->jh);
		if (r == 0)
			r = fs_writeback(fs);
		if (r == 0)
			r = blk_flush(fs->dev);
		if (r < 0 && rc == 0)
			rc = r;
	}
	/* aborted: the running transaction never commits, a replay gives what did */
	fs->jh->ops->destroy(fs->jh, rc == 0 && !fs->aborted);
	fs_free(fs);
	return rc;
}

void fs_abandon(struct fs *fs)
{
	if (!fs)
		return;
	fs->jh->ops->destroy(fs->jh, false);
	fs_free(fs);
}
