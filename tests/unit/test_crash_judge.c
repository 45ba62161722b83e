/* test_crash_judge.c — another system's recovery judged by the explorer's oracle
 * (what vmtest does with the image the Linux kernel recovered): the dry run gives
 * the offsets appends start at, an image holding everything the workload did is
 * ok, one that lost a synced append breaks `durable`, one that cannot be mounted is
 * an error, and workloads that cannot be replayed elsewhere are refused. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/fs.h"
#include "tap.h"

/* The steps this test's workload uses, through blackout's fs, at the dry run's
 * offsets: a stand-in for the guest replaying the compiled script. */
static int play(struct fs *fs, const struct crash_step *s, uint64_t append_off)
{
	struct fs_file *f = NULL;
	int rc = 0;
	switch (s->op) {
	case CRASH_OP_MKDIR: return fs_mkdir(fs, s->path, 0755);
	case CRASH_OP_CREATE: rc = fs_open(fs, s->path, FS_O_CREAT | FS_O_WRONLY, 0644, &f); break;
	case CRASH_OP_WRITE:
	case CRASH_OP_APPEND: {
		uint64_t off = s->op == CRASH_OP_WRITE ? s->off : append_off;
		rc = fs_open(fs, s->path, FS_O_WRONLY, 0, &f);
		if (rc)
			return rc;
		unsigned char *b = malloc(s->len ? s->len : 1);
		crash_pattern_fill(s->tag, off, b, s->len);
		if (fs_pwrite(f, b, s->len, off) != (ssize_t)s->len)
			rc = -EIO;
		free(b);
		break;
	}
	case CRASH_OP_FSYNC:
	case CRASH_OP_FSYNC_DIR:
		rc = fs_open(fs, s->path,
		             s->op == CRASH_OP_FSYNC_DIR ? FS_O_DIRECTORY | FS_O_RDONLY
		                                         : FS_O_RDONLY,
		             0, &f);
		if (rc == 0)
			rc = fs_fsync(f);
		break;
	default: return -ENOTSUP;
	}
	if (f) {
		int c = fs_close(f);
		if (rc == 0)
			rc = c;
	}
	return rc;
}

static const char *WL = "setup\n"
                        "mkdir /keep\n"
                        "create /keep/a\n"
                        "write /keep/a 0 5k\n"
                        "run\n"
                        "create /log\n"
                        "fsync-dir /\n"
                        "append /log 3k\n"
                        "fsync /log\n"
                        "append /log 2k\n"
                        "fsync /log\n";

int main(void)
{
	struct crash_workload *w;
	struct bo_err err = {{0}};
	tap_require(crash_workload_parse(WL, strlen(WL), "judge", &w, &err) == 0, "parse: %s",
	            err.msg);
	struct crash_exec exec[8];
	memset(exec, 0, sizeof(exec));
	is_int(crash_workload_dry_run(w, exec, &err), 0, "dry run: %s", err.msg);
	ok(exec[2].off == 0 && exec[4].off == 3072, "appends start at 0 and at 3k (%llu, %llu)",
	   (unsigned long long)exec[2].off, (unsigned long long)exec[4].off);
	struct crash_oracle *o;
	tap_require(crash_oracle_new(w, exec, &o, &err) == 0, "oracle: %s", err.msg);

	/* what the guest would leave: setup, then every step */
	struct bdev *d;
	tap_require(blk_mem_open(512, (16u << 20) / 512, &d) == 0, "a 16M device");
	struct fs_mkfs_opts mk;
	fs_mkfs_opts_default(&mk);
	tap_require(fs_mkfs(d, &mk, &err) == 0, "mkfs: %s", err.msg);
	struct fs *fs;
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "mount");
	int rc = 0;
	for (size_t i = 0; i < w->nsetup && rc == 0; i++)
		rc = play(fs, &w->setup[i], 0);
	for (size_t i = 0; i < w->nrun && rc == 0; i++)
		rc = play(fs, &w->run[i], exec[i].off);
	is_int(rc, 0, "the workload played on blackout's fs");
	is_int(fs_unmount(fs), 0, "clean unmount");

	struct crash_verdict v;
	is_int(crash_judge_recovered(o, d, w->nrun, 0, &v, &err), 0, "judged");
	ok(v.broken == 0 && v.read_errors == 0, "everything there: nothing broken (%s)", v.detail);

	/* the last synced append lost */
	tap_require(fs_mount(d, NULL, &fs, &err) == 0, "mount again");
	is_int(fs_truncate(fs, "/log", 3072), 0, "cut /log back to its first append");
	is_int(fs_unmount(fs), 0, "unmount");
	is_int(crash_judge_recovered(o, d, w->nrun, 0, &v, &err), 0, "judged");
	ok(v.broken & (1u << CRASH_INV_DURABLE), "after every step: durable broken (%s)", v.detail);
	is_int(crash_judge_recovered(o, d, 4, 0, &v, &err), 0, "judged at step 4");
	ok(v.broken == 0, "before the second append returned: allowed (%s)", v.detail);

	/* an image blackout cannot read back */
	unsigned char zero[1024] = {0};
	blk_pwrite(d, 1024, sizeof zero, zero, 0);
	ok(crash_judge_recovered(o, d, w->nrun, 0, &v, &err) < 0 && err.msg[0],
	   "no superblock: an error, not a verdict (%s)", err.msg);
	blk_close(d);
	crash_oracle_free(o);
	crash_workload_free(w);

	/* fill depends on the device: refused */
	const char *fill = "run\ncreate /f\nfill /f 64k\n";
	tap_require(crash_workload_parse(fill, strlen(fill), "fill", &w, &err) == 0, "parse fill");
	ok(crash_workload_dry_run(w, exec, &err) == -ENOTSUP && strstr(err.msg, "line 3"),
	   "a fill is refused, naming its line (%s)", err.msg);
	crash_workload_free(w);
	return tap_done();
}
