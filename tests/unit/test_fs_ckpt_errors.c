// SPDX-License-Identifier: GPL-2.0-or-later
/* test_fs_ckpt_errors.c — the checkpoint error policy (mount option checkpoint_errors=,
 * src/fs/fs_jbd.c over src/jbd/journal.c): a home write that fails after its fsync
 * returned either aborts the journal with the transaction kept (abort, the default) or
 * is logged and forgotten with the log (ignore, the 2009 jbd), losing the synced data. */
#include <errno.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/fs.h"
#include "tap.h"

/* group 0's descriptors, bitmaps and inode table on 16 MiB with 1 KiB blocks: what a
 * checkpoint writes home */
#define HOME_RULE "write-error lba=4-1159"

static struct fs *mount_text(struct bdev *d, const char *opts, struct bo_err *err)
{
	struct fs_mount_opts o;
	struct fs *fs = NULL;
	if (fs_mount_opts_parse(opts, &o, err) || fs_mount(d, &o, &fs, err))
		return NULL;
	return fs;
}

static int write_sync(struct fs *fs, const char *path, uint64_t off, size_t len)
{
	char buf[4096];
	memset(buf, 'a' + (int)(off / 1024 % 26), sizeof(buf));
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_RDWR | FS_O_CREAT, 0644, &f);
	if (rc)
		return rc;
	ssize_t w = fs_pwrite(f, buf, len, off);
	rc = w == (ssize_t)len ? fs_fsync(f) : -EIO;
	int c = fs_close(f);
	return rc ? rc : c;
}

static uint64_t size_of(struct fs *fs, const char *path)
{
	struct fs_stat st;
	return fs_stat(fs, path, &st) == 0 ? st.size : UINT64_MAX;
}

/* /log of 4 KiB synced and checkpointed home, then 1 KiB appended and fsynced (fsync
 * returns 0: the commit holds it), then the unmount's checkpoint meets HOME_RULE. Returns
 * the unmount's result; *d is the device with the rule disarmed again (the cut). */
static int run(const char *policy, struct bdev **dp)
{
	struct bo_err err = {{0}};
	struct bdev *d = NULL;
	struct fs_mkfs_opts mk;
	fs_mkfs_opts_default(&mk);
	mk.now = 1;
	if (dev_stack_open_text("fault > mem(size=16M)", NULL, &d, &err) || fs_mkfs(d, &mk, &err)) {
		diag("stack: %s", err.msg);
		return -999;
	}
	char opts[96];
	snprintf(opts, sizeof(opts), "data=ordered,barrier=1,errors=continue,%s", policy);
	struct fs *fs = mount_text(d, opts, &err);
	ok(fs && write_sync(fs, "/log", 0, 4096) == 0 && fs_unmount(fs) == 0,
	   "%s: /log synced and checkpointed home", policy);
	fs = mount_text(d, opts, &err);
	ok(fs && write_sync(fs, "/log", 4096, 1024) == 0, "%s: 1 KiB appended, fsync returned 0",
	   policy);
	struct bdev *fault = dev_stack_find_cap(d, DEV_CAP_FAULT_RULES, 0);
	int id = fault ? dev_fault_arm(fault, HOME_RULE, &err) : -1;
	int rc = fs ? fs_unmount(fs) : -999;
	uint64_t fired = 0;
	dev_fault_fired(fault, id, &fired);
	ok(id >= 0 && fired > 0, "%s: the checkpoint's home writes failed (%llu)", policy,
	   (unsigned long long)fired);
	dev_fault_disarm(fault, id);
	*dp = d;
	return rc;
}

int main(void)
{
	struct bo_err err = {{0}};
	struct fs_mount_opts o;
	ok(fs_mount_opts_parse("errors=continue,checkpoint_errors=ignore", &o, &err) == 0 &&
	       o.checkpoint_errors_ignored && o.errors == FS_ERRORS_CONTINUE,
	   "checkpoint_errors=ignore parses beside errors=continue");
	ok(fs_mount_opts_parse("checkpoint_errors=abort", &o, &err) == 0 &&
	       !o.checkpoint_errors_ignored,
	   "checkpoint_errors=abort parses");
	fs_mount_opts_default(&o);
	ok(!o.checkpoint_errors_ignored, "the default is abort, as Linux since 2.6.28");
	ok(fs_mount_opts_parse("checkpoint_errors=maybe", &o, &err) == -EINVAL &&
	       strstr(err.msg, "checkpoint_errors=maybe"),
	   "an unknown policy is refused by name: %s", err.msg);

	/* abort: the unmount reports the error, the journal keeps the transaction and
	 * records the abort, so the next mount refuses instead of trusting the home copy */
	struct bdev *d = NULL;
	int rc = run("checkpoint_errors=abort", &d);
	ok(rc < 0 && rc != -999, "abort: the unmount fails (%d)", rc);
	struct fs *fs = mount_text(d, "", &err);
	ok(!fs && strstr(err.msg, "aborted"), "abort: the next mount refuses: %s", err.msg);
	fs_unmount(fs);
	blk_close(d);

	/* ignore: the unmount succeeds, the log is released, the home copy is the old one:
	 * the synced 1 KiB is gone and nothing says so */
	rc = run("checkpoint_errors=ignore", &d);
	is_int(rc, 0, "ignore: the unmount succeeds");
	fs = mount_text(d, "", &err);
	ok(fs != NULL, "ignore: the next mount succeeds (%s)", fs ? "" : err.msg);
	uint64_t size = fs ? size_of(fs, "/log") : 0;
	is_int((long long)size, 4096,
	       "ignore: /log is back to 4096 bytes: the fsynced 1 KiB is lost");
	fs_unmount(fs);
	blk_close(d);
	return tap_done();
}
