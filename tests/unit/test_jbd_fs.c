// SPDX-License-Identifier: GPL-2.0-or-later
/* test_jbd_fs.c — the journal under the filesystem, judged by e2fsprogs: crash
 * states (prefixes of a recorded workload, for each data mode and barrier
 * setting) recovered by e2fsck on one copy and by blackout's mount on another
 * give the same files, and e2fsck -fn finds nothing on either; the clean-unmount
 * scenario (300 files, unmount, 10 more, commit, crash: all 310 survive). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/endian.h"
#include "blackout/fs.h"
#include "blackout/jbd.h"
#include "blackout/rec.h"
#include "blackout/util.h"
#include "tap.h"
#include "test_fs_util.h"
#include "test_jbd_dev.h"

#define IMG (8u << 20)

/* Crash images live in memory-backed /dev/shm when there is one: e2fsck fsyncs
 * what it repairs, and 150 states should not wait for a disk. */
static char tdir[300];
static const char *jdir(void)
{
	if (!tdir[0]) {
		snprintf(tdir, sizeof(tdir), "/dev/shm/blackout-jbd-XXXXXX");
		if (!mkdtemp(tdir)) {
			snprintf(tdir, sizeof(tdir), "%s", tfs_tmpdir());
		}
	}
	return tdir;
}

static int save(struct bdev *d, const char *path)
{
	uint8_t *buf = malloc(IMG);
	int rc = blk_pread(d, 0, IMG, buf);
	FILE *f = fopen(path, "wb");
	if (!rc && (!f || fwrite(buf, 1, IMG, f) != IMG))
		rc = -EIO;
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

static void pattern(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static int put(struct fs *fs, const char *path, size_t n, unsigned seed, bool sync)
{
	struct fs_file *f;
	int rc = fs_open(fs, path, FS_O_CREAT | FS_O_RDWR | FS_O_APPEND, 0644, &f);
	if (rc < 0)
		return rc;
	uint8_t *b = malloc(n);
	pattern(b, n, seed);
	struct fs_stat st;
	fs_fstat(f, &st);
	ssize_t w = fs_pwrite(f, b, n, st.size);
	free(b);
	if (w != (ssize_t)n)
		rc = w < 0 ? (int)w : -EIO;
	if (!rc && sync)
		rc = fs_fsync(f);
	int c = fs_close(f);
	return rc ? rc : c;
}

static int workload(struct fs *fs)
{
	int rc = fs_mkdir(fs, "/d", 0755);
	char p[64];
	for (unsigned i = 0; i < 6 && !rc; i++) {
		snprintf(p, sizeof(p), "/d/f%u", i);
		rc = put(fs, p, 100 + i * 1500, i, i % 2 == 0);
	}
	if (!rc)
		rc = fs_rename(fs, "/d/f1", "/d/g1");
	if (!rc)
		rc = fs_unlink(fs, "/d/f3");
	if (!rc)
		rc = put(fs, "/d/f0", 5000, 9, true);
	if (!rc)
		rc = fs_mkdir(fs, "/e", 0755);
	if (!rc)
		rc = put(fs, "/e/big", 70000, 3, false);
	if (!rc)
		rc = fs_sync(fs);
	if (!rc)
		rc = fs_truncate(fs, "/e/big", 1000);
	if (!rc)
		rc = put(fs, "/late", 3000, 5, false);
	return rc;
}

/* One crash state: judge it. Returns 0 when both recoveries agree and are clean. */
static int judge(struct bdev *state, const struct fs_mount_opts *mo, const char *tag, int *needed)
{
	char a[300], b[300], da[300], db[300];
	snprintf(a, sizeof(a), "%s/a.img", jdir());
	snprintf(b, sizeof(b), "%s/b.img", jdir());
	snprintf(da, sizeof(da), "%s/da", jdir());
	snprintf(db, sizeof(db), "%s/db", jdir());
	if (save(state, a))
		return diag("%s: saving images failed", tag), 1;
	uint8_t sb[1024];
	blk_pread(state, 1024, 1024, sb);
	*needed += (get_le32(sb + 0x60) & 0x4) != 0; /* needs_recovery */
	/* e2fsck's replay alone must leave a consistent filesystem */
	int st = tfs_sh("e2fsck -y -E journal_only '%s' >/dev/null 2>&1%s", a, "");
	if (st > 1)
		return diag("%s: e2fsck journal replay exit %d", tag, st), 1;
	if (!tfs_e2fsck_clean(a))
		return diag("%s: e2fsck -fn after e2fsck's replay not clean", tag), 1;
	/* ours on a memory copy (no fdatasync per state), saved afterwards */
	struct bdev *d;
	struct bo_err err = {{0}};
	if (blk_clone(state, &d))
		return 1;
	struct fs *fs;
	int rc = fs_mount(d, mo, &fs, &err);
	if (rc) {
		diag("%s: blackout mount: %s", tag, bo_errstr(&err, rc));
		blk_close(d);
		return 1;
	}
	rc = fs_unmount(fs);
	if (!rc)
		rc = save(d, b);
	blk_close(d);
	if (rc)
		return diag("%s: unmount %d", tag, rc), 1;
	if (!tfs_e2fsck_clean(b))
		return diag("%s: e2fsck -fn after blackout's recovery not clean", tag), 1;
	tfs_sh("rm -rf '%s' '%s'", da, db);
	tfs_sh("mkdir -p '%s' '%s'", da, db);
	tfs_sh("debugfs -R 'rdump / %s' '%s' >/dev/null 2>&1", da, a);
	tfs_sh("debugfs -R 'rdump / %s' '%s' >/dev/null 2>&1", db, b);
	if (tfs_sh("diff -r '%s' '%s' >/dev/null", da, db))
		return diag("%s: the two recoveries give different files", tag), 1;
	return 0;
}

static void test_crash_compat(void)
{
	static const struct {
		const char *opts;
	} cfg[] = {
	    {"data=ordered,barrier=1"},   {"data=ordered,barrier=0"}, {"data=writeback,barrier=1"},
	    {"data=writeback,barrier=0"}, {"data=journal,barrier=1"}, {"data=journal,barrier=0"},
	};
	int states = getenv("BLACKOUT_ASAN") ? 5 : 10;
	for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		struct bdev *base;
		blk_mem_open(512, IMG / 512, &base);
		struct fs_mkfs_opts mk;
		fs_mkfs_opts_default(&mk);
		mk.type = 3;
		mk.block_size = 1024;
		mk.metadata_csum = c % 2 == 1;
		struct bo_err err = {{0}};
		tap_require(!fs_mkfs(base, &mk, &err), "mkfs: %s", err.msg);
		/* the workload runs once over the recorder; crash states are prefixes of
		 * its log replayed onto copies of the formatted image */
		struct bdev *work, *rdev;
		struct rec_log *log;
		blk_clone(base, &work);
		tap_require(!rec_log_new(512, IMG / 512, &log) && !rec_open(work, log, 0, &rdev),
		            "recorder");
		struct fs_mount_opts mo;
		fs_mount_opts_default(&mo);
		fs_mount_opts_parse(cfg[c].opts, &mo, &err);
		struct fs *fs;
		int rc = fs_mount(rdev, &mo, &fs, &err);
		if (!rc)
			rc = workload(fs);
		ok(!rc, "%s: workload ran (%s)", cfg[c].opts, rc ? bo_errstr(fs_err(fs), rc) : "");
		fs_abandon(fs);
		size_t nlog = rec_log_len(log);
		int bad = 0, n = 0, needed = 0;
		for (int s = 1; s <= states; s++) {
			size_t k = nlog * (size_t)s / (size_t)states;
			struct bdev *state;
			blk_clone(base, &state);
			if (rec_replay(log, k, state, &err)) {
				bad++;
				blk_close(state);
				continue;
			}
			char tag[128];
			snprintf(tag, sizeof(tag), "%s%s, %zu of %zu log entries", cfg[c].opts,
			         mk.metadata_csum ? ",csum" : "", k, nlog);
			bad += judge(state, &mo, tag, &needed);
			n++;
			blk_close(state);
		}
		is_int(bad, 0,
		       "%s%s: %d crash states: e2fsck's and blackout's recovery agree, both "
		       "fsck-clean",
		       cfg[c].opts, mk.metadata_csum ? " (metadata_csum)" : "", n);
		if (mo.barrier) {
			/* A write cache: at a cut, any subset of the writes since the last
			 * flush may have landed, FUA writes always. With barriers the
			 * journal must stay consistent in every such state. */
			struct bo_rng r;
			bo_rng_seed(&r, 77 + c);
			int sbad = 0, sn = 0;
			for (int s = 0; s < states; s++) {
				size_t k = 1 + bo_rng_below(&r, nlog);
				size_t epoch = 0;
				for (size_t i = 0; i < k; i++)
					if (rec_log_get(log, i)->op == REC_FLUSH)
						epoch = i + 1;
				struct bdev *state;
				blk_clone(base, &state);
				rec_replay(log, epoch, state, &err);
				size_t dropped = 0;
				for (size_t i = epoch; i < k; i++) {
					const struct rec_entry *e = rec_log_get(log, i);
					if (e->op != REC_WRITE)
						continue;
					if (!(e->flags & BLK_FUA) && bo_rng_below(&r, 2)) {
						dropped++;
						continue;
					}
					rec_apply(e, state);
				}
				char tag[160];
				snprintf(tag, sizeof(tag),
				         "%s: cut at entry %zu, %zu unflushed writes lost",
				         cfg[c].opts, k, dropped);
				sbad += judge(state, &mo, tag, &needed);
				sn++;
				blk_close(state);
			}
			is_int(sbad, 0,
			       "%s: %d write-cache crash states (unflushed writes lost at random): "
			       "both "
			       "recoveries agree, fsck-clean",
			       cfg[c].opts, sn);
		}
		ok(needed > 0, "%s: %d of the states needed journal recovery", cfg[c].opts, needed);
		blk_close(rdev);
		rec_log_free(log);
		blk_close(work);
		blk_close(base);
	}
}

static int count_entries(void *ctx, const char *name, uint32_t ino, uint8_t ft)
{
	(void)ino;
	(void)ft;
	if (strcmp(name, ".") && strcmp(name, ".."))
		(*(int *)ctx)++;
	return 0;
}

static void test_clean_unmount_310(void)
{
	struct bdev *d;
	blk_mem_open(512, IMG / 512, &d);
	struct fs_mkfs_opts mk;
	fs_mkfs_opts_default(&mk);
	mk.type = 3;
	mk.block_size = 1024;
	struct bo_err err = {{0}};
	tap_require(!fs_mkfs(d, &mk, &err), "310: mkfs");
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	struct fs *fs;
	int rc = fs_mount(d, &mo, &fs, &err);
	rc = rc ? rc : fs_mkdir(fs, "/s", 0755);
	char p[64];
	for (int i = 0; i < 300 && !rc; i++) {
		snprintf(p, sizeof(p), "/s/a%03d", i);
		rc = put(fs, p, 10, (unsigned)i, false);
	}
	ok(!rc && !fs_unmount(fs), "310: 300 files, clean unmount");
	rc = fs_mount(d, &mo, &fs, &err);
	for (int i = 0; i < 10 && !rc; i++) {
		snprintf(p, sizeof(p), "/s/b%03d", i);
		rc = put(fs, p, 10, (unsigned)i, false);
	}
	ok(!rc && !fs_sync(fs), "310: mount, 10 more files, commit");
	fs_abandon(fs); /* crash without unmount */
	char a[300], b[300];
	snprintf(a, sizeof(a), "%s/310a.img", jdir());
	snprintf(b, sizeof(b), "%s/310b.img", jdir());
	save(d, a);
	save(d, b);
	int st = tfs_sh("e2fsck -fy '%s' >/dev/null 2>&1%s", a, "");
	ok(st <= 1, "310: e2fsck -fy recovers (exit %d)", st);
	char cmd[600];
	snprintf(cmd, sizeof(cmd),
	         "debugfs -R 'ls /s' '%s' 2>/dev/null | tr ' ' '\\n' | grep -c '^[ab][0-9]'", a);
	FILE *pp = popen(cmd, "r");
	int n = 0;
	if (pp && fscanf(pp, "%d", &n) != 1)
		n = -1;
	if (pp)
		pclose(pp);
	is_int(n, 310, "310: after e2fsck's recovery all 310 files are present");
	struct bdev *bd;
	blk_file_open(b, 512, 0, 0, &bd, &err);
	rc = fs_mount(bd, &mo, &fs, &err);
	int cnt = 0;
	if (!rc)
		fs_readdir(fs, "/s", count_entries, &cnt);
	is_int(cnt, 310, "310: after blackout's recovery all 310 files are present");
	ok(!rc && !fs_unmount(fs), "310: unmount");
	blk_close(bd);
	ok(tfs_e2fsck_clean(b), "310: e2fsck -fn clean after blackout's recovery");
	blk_close(d);
}

/* A write-caching device loses every write not flushed (or FUA) at a power cut:
 * barrier=1 keeps what fsync promised, barrier=0 (the old ext3 default) does not. */
static void test_cache_loss(void)
{
	for (int barrier = 0; barrier <= 1; barrier++) {
		struct bdev *base;
		blk_mem_open(512, IMG / 512, &base);
		struct fs_mkfs_opts mk;
		fs_mkfs_opts_default(&mk);
		mk.type = 3;
		mk.block_size = 1024;
		struct bo_err err = {{0}};
		fs_mkfs(base, &mk, &err);
		struct bdev *work;
		blk_clone(base, &work);
		struct tdev *rec = tdev_open(work);
		rec->record = true;
		struct fs_mount_opts mo;
		fs_mount_opts_default(&mo);
		mo.barrier = barrier;
		struct fs *fs;
		int rc = fs_mount(&rec->dev, &mo, &fs, &err);
		if (!rc)
			rc = put(fs, "/synced", 5000, 1, true);
		ok(!rc, "barrier=%d: write + fsync", barrier);
		fs_abandon(fs);
		/* what survives: writes before the last flush, and FUA writes */
		size_t last_flush = 0;
		for (size_t i = 0; i < rec->nops; i++)
			if (rec->ops[i].op == T_FLUSH)
				last_flush = i + 1;
		struct bdev *state;
		blk_clone(base, &state);
		for (size_t i = 0; i < rec->nops; i++) {
			const struct t_op *o = &rec->ops[i];
			if (o->op == T_WRITE && (i < last_flush || (o->flags & BLK_FUA)))
				blk_write(state, o->lba, o->count, o->data, 0);
		}
		rc = fs_mount(state, &mo, &fs, &err);
		struct fs_stat st;
		bool present = !rc && fs_stat(fs, "/synced", &st) == 0 && st.size == 5000;
		if (!rc)
			fs_unmount(fs);
		if (barrier)
			ok(present, "barrier=1: the fsynced file survives losing the write cache");
		else
			ok(!present, "barrier=0: the fsynced file is lost with the write cache (as "
			             "documented: deliberately unsafe)");
		blk_close(state);
		blk_close(&rec->dev);
		blk_close(work);
		blk_close(base);
	}
}

/* A journal write fails: fsync reports it, errors=remount-ro stops writes, and no
 * later fsync reports success. */
static void test_write_errors(void)
{
	for (int ro = 0; ro <= 1; ro++) {
		struct bdev *m;
		blk_mem_open(512, IMG / 512, &m);
		struct fs_mkfs_opts mk;
		fs_mkfs_opts_default(&mk);
		mk.type = 3;
		mk.block_size = 1024;
		struct bo_err err = {{0}};
		fs_mkfs(m, &mk, &err);
		struct tdev *td = tdev_open(m);
		struct fs_mount_opts mo;
		fs_mount_opts_default(&mo);
		fs_mount_opts_parse(ro ? "errors=remount-ro" : "errors=continue", &mo, &err);
		struct fs *fs;
		int rc = fs_mount(&td->dev, &mo, &fs, &err);
		ok(!rc && !put(fs, "/a", 3000, 1, true), "errors=%s: mount, write, fsync",
		   ro ? "remount-ro" : "continue");
		td->fail_after = (long)td->writes; /* the device stops taking writes */
		struct fs_file *f;
		rc = fs_open(fs, "/b", FS_O_CREAT | FS_O_RDWR, 0644, &f);
		uint8_t buf[2000] = {1};
		if (!rc) {
			fs_pwrite(f, buf, sizeof(buf), 0);
			rc = fs_fsync(f);
			ok(rc < 0, "errors=%s: fsync reports the failed journal write (%d)",
			   ro ? "remount-ro" : "continue", rc);
			td->fail_after = -1; /* the device works again: too late */
			ok(fs_fsync(f) < 0, "errors=%s: a later fsync does not report success",
			   ro ? "remount-ro" : "continue");
			fs_close(f);
		} else {
			ok(rc < 0, "errors=%s: the failure surfaced at create (%d)",
			   ro ? "remount-ro" : "continue", rc);
			td->fail_after = -1;
			ok(fs_sync(fs) < 0, "errors=%s: and sync fails afterwards",
			   ro ? "remount-ro" : "continue");
		}
		rc = fs_mkdir(fs, "/dir", 0755);
		if (ro)
			is_int(rc, -EROFS, "errors=remount-ro: the filesystem is read-only now");
		else
			ok(rc < 0, "errors=continue: journaled operations keep failing (%d)", rc);
		ok(fs_unmount(fs) < 0, "errors=%s: unmount reports the error",
		   ro ? "remount-ro" : "continue");
		blk_close(&td->dev);
		blk_close(m);
	}
}

/* Mount after a crash replays the journal, then the fs processes the orphan list:
 * a file unlinked while open is gone and its blocks free. */
static void test_orphan_after_replay(void)
{
	struct bdev *d;
	blk_mem_open(512, IMG / 512, &d);
	struct fs_mkfs_opts mk;
	fs_mkfs_opts_default(&mk);
	mk.type = 3;
	mk.block_size = 1024;
	struct bo_err err = {{0}};
	fs_mkfs(d, &mk, &err);
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	struct fs *fs;
	int rc = fs_mount(d, &mo, &fs, &err);
	struct fs_file *f = NULL;
	if (!rc)
		rc = fs_open(fs, "/tmpfile", FS_O_CREAT | FS_O_RDWR, 0644, &f);
	uint8_t buf[20000];
	memset(buf, 7, sizeof(buf));
	if (!rc && fs_pwrite(f, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		rc = -EIO;
	if (!rc)
		rc = fs_unlink(fs, "/tmpfile");
	if (!rc)
		rc = fs_sync(fs);
	ok(!rc, "orphan: a file unlinked while open, committed");
	fs_abandon(fs); /* crash with the file still open */
	char a[300];
	snprintf(a, sizeof(a), "%s/orphan.img", jdir());
	rc = fs_mount(d, &mo, &fs, &err);
	ok(!rc, "orphan: mount replays the journal (%s)", rc ? err.msg : "ok");
	struct fs_stat st;
	ok(!rc && fs_stat(fs, "/tmpfile", &st) == -ENOENT, "orphan: the name is gone");
	ok(!rc && !fs_unmount(fs), "orphan: unmount");
	save(d, a);
	ok(tfs_e2fsck_clean(a),
	   "orphan: e2fsck -fn clean: the orphan inode and its blocks were freed");
	blk_close(d);
}

int main(void)
{
	test_orphan_after_replay();
	test_write_errors();
	test_cache_loss();
	test_clean_unmount_310();
	test_crash_compat();
	if (strncmp(jdir(), "/dev/shm/", 9) == 0)
		tfs_sh("rm -rf '%s'%s", jdir(), "");
	tfs_cleanup();
	return tap_done();
}
