// SPDX-License-Identifier: GPL-2.0-or-later
/* journal.c — picks the journal hook for a mount, and the built-in no-journal hook
 * (ext2 behaviour: the fs cache writes metadata back; force_commit flushes). The
 * JBD2 journal itself is src/jbd/, glued in by fs_jbd.c. */
#include <errno.h>
#include <stdlib.h>

#include "fs/fs_int.h"

static int nj_dirty_metadata(struct fs_jhook *j, uint64_t block, const void *data)
{
	(void)j;
	(void)block;
	(void)data;
	return FS_JH_WRITEBACK;
}

static int nj_force_commit(struct fs_jhook *j)
{
	int rc = fs_writeback(j->fs);
	if (rc < 0)
		return rc;
	rc = blk_flush(fs_bdev(j->fs));
	if (rc < 0)
		return bo_errf(fs_errp(j->fs), rc, "flush: %s",
		               bo_errstr(&fs_bdev(j->fs)->err, rc));
	return 0;
}

static void nj_destroy(struct fs_jhook *j, bool clean)
{
	(void)clean;
	free(j);
}

static const struct fs_jhook_ops nojournal_ops = {
    .dirty_metadata = nj_dirty_metadata,
    .force_commit = nj_force_commit,
    .destroy = nj_destroy,
};

int fs_nojournal_open(struct fs *fs, struct fs_jhook **out)
{
	struct fs_jhook *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->ops = &nojournal_ops;
	j->fs = fs;
	*out = j;
	return 0;
}

int fs_journal_open(struct fs *fs, const struct fs_mount_opts *o, struct fs_jhook **out,
                    struct bo_err *err)
{
	bool has_journal = sb_has_compat(fs_sb(fs), EXT3_FEATURE_COMPAT_HAS_JOURNAL);
	if (!has_journal || o->no_journal || o->read_only)
		return fs_nojournal_open(fs, out);
	return fs_jbd_open(fs, o, out, err);
}
