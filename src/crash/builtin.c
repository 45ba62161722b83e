// SPDX-License-Identifier: GPL-2.0-or-later
/* builtin.c — the built-in workloads, from the classic crash-consistency studies
 * (ALICE, CrashMonkey, the ext4 zero-length-file saga), in the workload file format.
 * Every one starts with bystander files synced in setup, so collateral damage shows. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/crash.h"

#define BYSTANDERS                                                                                 \
	"setup\n"                                                                                  \
	"mkdir /keep\n"                                                                            \
	"create /keep/a\n"                                                                         \
	"write /keep/a 0 24k\n"                                                                    \
	"create /keep/b\n"                                                                         \
	"write /keep/b 0 3k\n"

/* 290 appends with an fsync each: with the journal's 7 log blocks a commit, the set-up
 * fills mke2fs's smallest journal (1024 blocks) once, is checkpointed home, and fills
 * it again to a few commits short of full, so the run's third fsync checkpoints. */
#define FILL1   "append /fill 1k\nfsync /fill\n"
#define FILL10  FILL1 FILL1 FILL1 FILL1 FILL1 FILL1 FILL1 FILL1 FILL1 FILL1
#define FILL100 FILL10 FILL10 FILL10 FILL10 FILL10 FILL10 FILL10 FILL10 FILL10 FILL10

static const struct crash_builtin builtins[] = {
    {"append-fsync", "append records to a log, fsync after each (a database log)",
     "name append-fsync\nsummary append records to a log, fsync after each (a database "
     "log)\n" BYSTANDERS "run\ncreate /log\nfsync-dir /\n"
     "append /log 1k\nfsync /log\nappend /log 3k\nfsync /log\nappend /log 1k\nfsync /log\n"
     "append /log 2k\nfsync /log\n"},
    {"append-fdatasync", "append records to a log, fdatasync after each",
     "name append-fdatasync\nsummary append records to a log, fdatasync after each\n" BYSTANDERS
     "create /log\nwrite /log 0 4k\n"
     "run\nappend /log 2k\nfdatasync /log\nappend /log 2k\nfdatasync /log\n"
     "append /log 4k\nfdatasync /log\n"},
    {"replace-dirsync", "atomic replace: write temp, fsync, rename over, fsync the directory",
     "name replace-dirsync\nsummary atomic replace: write temp, fsync, rename over, fsync the "
     "directory\n" BYSTANDERS "create /config\nwrite /config 0 6k\n"
     "run\ncreate /config.tmp\nwrite /config.tmp 0 5k\nfsync /config.tmp\n"
     "rename /config.tmp /config\nfsync-dir /\n"},
    {"replace-nodirsync", "atomic replace: write temp, fsync, rename over (no directory fsync)",
     "name replace-nodirsync\nsummary atomic replace: write temp, fsync, rename over (no "
     "directory fsync)\n" BYSTANDERS "create /config\nwrite /config 0 6k\n"
     "run\ncreate /config.tmp\nwrite /config.tmp 0 5k\nfsync /config.tmp\n"
     "rename /config.tmp /config\nmark renamed\ncreate /other\nwrite /other 0 2k\n"
     "fsync /other\n"},
    {"replace-nofsync", "replace via rename without fsync of the new file (old or new or empty)",
     "name replace-nofsync\nsummary replace via rename without fsync of the new file (old or new "
     "or empty)\n" BYSTANDERS "create /config\nwrite /config 0 6k\n"
     "run\ncreate /config.tmp\nwrite /config.tmp 0 5k\nrename /config.tmp /config\nsync\n"},
    {"create-many-sync", "create many small files, then sync",
     "name create-many-sync\nsummary create many small files, then sync\n" BYSTANDERS
     "run\nmkdir /d\n"
     "create /d/f0\nwrite /d/f0 0 1k\ncreate /d/f1\nwrite /d/f1 0 2k\n"
     "create /d/f2\nwrite /d/f2 0 1k\ncreate /d/f3\nwrite /d/f3 0 3k\n"
     "create /d/f4\nwrite /d/f4 0 1k\ncreate /d/f5\nwrite /d/f5 0 1k\n"
     "create /d/f6\nwrite /d/f6 0 2k\ncreate /d/f7\nwrite /d/f7 0 1k\n"
     "create /d/f8\nwrite /d/f8 0 1k\ncreate /d/f9\nwrite /d/f9 0 1k\nsync\n"},
    {"overwrite-fsync", "overwrite the middle of a file in place, fsync",
     "name overwrite-fsync\nsummary overwrite the middle of a file in place, fsync\n" BYSTANDERS
     "create /data\nwrite /data 0 16k\n"
     "run\nwrite /data 2k 8k\nfsync /data\nwrite /data 9k 3k\nfsync /data\n"},
    {"truncate-append", "truncate a file, append to it, fsync",
     "name truncate-append\nsummary truncate a file, append to it, fsync\n" BYSTANDERS
     "create /data\nwrite /data 0 12k\n"
     "run\ntruncate /data 3k\nappend /data 4k\nfsync /data\ntruncate /data 0\n"
     "append /data 2k\nfsync /data\n"},
    {"rename-dir", "rename a directory holding files, fsync the parent",
     "name rename-dir\nsummary rename a directory holding files, fsync the parent\n" BYSTANDERS
     "mkdir /old\ncreate /old/x\nwrite /old/x 0 2k\ncreate /old/y\nwrite /old/y 0 1k\n"
     "run\nrename /old /new\nfsync-dir /\ncreate /new/z\nwrite /new/z 0 1k\nfsync /new/z\n"
     "fsync-dir /new\n"},
    {"link-unlink", "hard-link a file, fsync the directory, unlink the original",
     "name link-unlink\nsummary hard-link a file, fsync the directory, unlink the "
     "original\n" BYSTANDERS "create /orig\nwrite /orig 0 4k\n"
     "run\nlink /orig /alias\nfsync-dir /\nunlink /orig\nfsync-dir /\nappend /alias 1k\n"
     "fsync /alias\n"},
    {"sparse-write", "a large write far past the end of a file (a sparse hole), fsync",
     "name sparse-write\nsummary a large write far past the end of a file (a sparse hole), "
     "fsync\n" BYSTANDERS "create /sparse\nwrite /sparse 0 1k\n"
     "run\nwrite /sparse 1M 24k\nfsync /sparse\nwrite /sparse 300k 2k\nfsync /sparse\n"},
    {"wal", "write-ahead log: write log, fsync, write data, fsync, truncate the log",
     "name wal\nsummary write-ahead log: write log, fsync, write data, fsync, truncate the "
     "log\n" BYSTANDERS "create /db\nwrite /db 0 8k\ncreate /db.wal\n"
     "run\nappend /db.wal 3k\nfsync /db.wal\nwrite /db 1k 3k\nfsync /db\ntruncate /db.wal 0\n"
     "fsync /db.wal\n"},
    {"tree", "build a directory tree with files, sync, delete it all, sync",
     "name tree\nsummary build a directory tree with files, sync, delete it all, sync\n" BYSTANDERS
     "run\nmkdir /t\nmkdir /t/a\nmkdir /t/b\nmkdir /t/a/c\n"
     "create /t/a/f\nwrite /t/a/f 0 3k\ncreate /t/b/g\nwrite /t/b/g 0 1k\n"
     "create /t/a/c/h\nwrite /t/a/c/h 0 2k\nsync\n"
     "unlink /t/a/c/h\nrmdir /t/a/c\nunlink /t/a/f\nrmdir /t/a\nunlink /t/b/g\nrmdir /t/b\n"
     "rmdir /t\nsync\n"},
    {"reuse-after-delete",
     "delete a file and sync, write a new one, fsync another (writeback can expose old data)",
     "name reuse-after-delete\nsummary delete a file and sync, write a new one, fsync another "
     "(writeback can expose old data)\n" BYSTANDERS "create /old\nwrite /old 0 16k\n"
     "run\nunlink /old\nsync\ncreate /new\nwrite /new 0 16k\ncreate /log\nwrite /log 0 1k\n"
     "fsync /log\n"},
    {"fill-enospc", "fill the filesystem until ENOSPC, fsync, then free space and sync",
     "name fill-enospc\nsummary fill the filesystem until ENOSPC, fsync, then free space and "
     "sync\n" BYSTANDERS "run\ncreate /fill\nfill /fill 256k\nfsync /fill\ncreate /after\n"
     "write /after 0 1k\nfsync /after\nunlink /fill\nsync\n"},
    {"checkpoint-append",
     "append to a synced log, fsync each, while the journal wraps: the run checkpoints",
     "name checkpoint-append\nsummary append to a synced log, fsync each, while the journal "
     "wraps: the run checkpoints\n" BYSTANDERS
     "create /log\nwrite /log 0 4k\ncreate /fill\n" FILL100 FILL100 FILL10 FILL10 FILL10 FILL10
         FILL10 FILL10 FILL10 FILL10 FILL10
     "run\nappend /log 1k\nfsync /log\nappend /log 1k\nfsync /log\nappend /log 1k\n"
     "fsync /log\nappend /log 1k\nfsync /log\nappend /log 1k\nfsync /log\nappend /log 1k\n"
     "fsync /log\n"},
    /* Files in one directory are allocated side by side, so with 4 KiB RAID chunks each
     * overwritten file shares a stripe with a neighbour nobody writes: the write hole of
     * a degraded array shows as damage to those neighbours, as `overwrite-fsync` shows
     * cheap flash's erase blocks. */
    {"overwrite-stripes",
     "overwrite files in place whose neighbours (sharing their RAID stripes) nobody writes",
     "name overwrite-stripes\nsummary overwrite files in place whose neighbours (sharing their "
     "RAID stripes) nobody writes\n" BYSTANDERS
     "create /n0\nwrite /n0 0 4k\ncreate /d0\nwrite /d0 0 4k\n"
     "create /n1\nwrite /n1 0 4k\ncreate /d1\nwrite /d1 0 4k\n"
     "create /n2\nwrite /n2 0 4k\ncreate /d2\nwrite /d2 0 4k\n"
     "create /n3\nwrite /n3 0 4k\ncreate /d3\nwrite /d3 0 4k\n"
     "create /n4\nwrite /n4 0 4k\ncreate /d4\nwrite /d4 0 4k\n"
     "create /n5\nwrite /n5 0 4k\ncreate /d5\nwrite /d5 0 4k\n"
     "run\nwrite /d0 0 4k\nfsync /d0\nwrite /d1 0 4k\nfsync /d1\nwrite /d2 0 4k\nfsync /d2\n"
     "write /d3 0 4k\nfsync /d3\nwrite /d4 0 4k\nfsync /d4\nwrite /d5 0 4k\nfsync /d5\n"},
};

size_t crash_builtin_count(void)
{
	return sizeof(builtins) / sizeof(builtins[0]);
}

const struct crash_builtin *crash_builtin_get(size_t i)
{
	return i < crash_builtin_count() ? &builtins[i] : NULL;
}

/* The bug zoo: crash bugs found after 2022 and published as xfstests reproducers,
 * each restated from what the test's own text says it does (never its code). Names
 * follow the test. Each runs after the usual bystanders. */
static const struct crash_builtin zoo[] = {
    {"g764-unlink-fsync-fd", "fsync through an fd of a file unlinked while open: it must stay gone",
     "name g764-unlink-fsync-fd\nsummary fsync through an fd of a file unlinked while open: it "
     "must stay gone\n" BYSTANDERS "mkdir /testdir\ncreate /testdir/foo\n"
     "run\nopen h /testdir/foo\nunlink /testdir/foo\nfsync-fd h\nclose h\n",
     "xfstests generic/764",
     "btrfs 5e85262e542d: btrfs: fix fsync of files with no hard links not persisting deletion"},
    {"g771-unlink-fsync-extents",
     "a written file fsynced after its unlink, then another file fsynced: mountable, only "
     "the second",
     "name g771-unlink-fsync-extents\nsummary a written file fsynced after its unlink, then "
     "another file fsynced: mountable, only the second\n" BYSTANDERS "mkdir /testdir\n"
     "run\ncreate /testdir/foo\nwrite /testdir/foo 0 64k\nopen h /testdir/foo\n"
     "unlink /testdir/foo\nfsync-fd h\nclose h\ncreate /testdir/bar\nfsync /testdir/bar\n",
     "xfstests generic/771",
     "btrfs 0a32e4f0025a: btrfs: fix log tree replay failure due to file with 0 links and "
     "extents"},
    {"g779-symlink-rename", "a symlink made, dir fsynced, renamed, dir fsynced: the new name",
     "name g779-symlink-rename\nsummary a symlink made, dir fsynced, renamed, dir fsynced: the "
     "new name\n" BYSTANDERS "run\nmkdir /dir\nsymlink /foobar /dir/old-slink\nfsync-dir /dir\n"
     "rename /dir/old-slink /dir/new-slink\nfsync-dir /dir\n",
     "xfstests generic/779",
     "btrfs 953902e4fb4c: btrfs: set inode flag BTRFS_INODE_COPY_EVERYTHING when logging new "
     "name"},
    {"g782-link-new-dir",
     "a new dir, a file written and fsynced, linked into the dir, root fsynced: the dir is there",
     "name g782-link-new-dir\nsummary a new dir, a file written and fsynced, linked into the "
     "dir, root fsynced: the dir is there\n" BYSTANDERS "create /foo\n"
     "run\nmkdir /dir\nwrite /foo 0 64k\nfsync /foo\nlink /foo /dir/bar\nfsync-dir /\n",
     "xfstests generic/782",
     "btrfs bfe3d755ef7c: btrfs: do not update last_log_commit when logging inode due to a new "
     "name"},
    {"g784-dir-rename-reuse",
     "a dir moved away, a file made under its old name, fsynced, moved, fsynced: mountable",
     "name g784-dir-rename-reuse\nsummary a dir moved away, a file made under its old name, "
     "fsynced, moved, fsynced: mountable\n" BYSTANDERS "mkdir /dir1\nmkdir /dir2\n"
     "run\nrename /dir1 /dir2/dir1\ncreate /dir1\nfsync /dir1\nrename /dir1 /dir2/foo\n"
     "fsync /dir2/foo\n",
     "xfstests generic/784",
     "btrfs 266273eaf4d9: btrfs: don't log conflicting inode if it's a dir moved in the "
     "current transaction"},
    {"g785-rename-new-dir",
     "a file fsynced, a new dir with a file, the file renamed, root fsynced: all there",
     "name g785-rename-new-dir\nsummary a file fsynced, a new dir with a file, the file renamed, "
     "root fsynced: all there\n" BYSTANDERS "create /file1\n"
     "run\nwrite /file1 0 1000\nfsync /file1\nmkdir /dir\ncreate /dir/foo\n"
     "rename /file1 /file2\nfsync-dir /\n",
     "xfstests generic/785",
     "btrfs 5630f7557de6: btrfs: do not skip logging new dentries when logging a new name"},
    {"g737-osync-dio-size", "1 MiB written with O_SYNC, then with O_DIRECT|O_SYNC: the size stays",
     "name g737-osync-dio-size\nsummary 1 MiB written with O_SYNC, then with O_DIRECT|O_SYNC: "
     "the size stays\n" BYSTANDERS "run\ncreate /t1\nosync /t1 0 1M\ncreate /t2\n"
     "dwrite-osync /t2 0 1M\n",
     "xfstests generic/737",
     "ext4 91562895f803: ext4: properly sync file size update after O_SYNC direct IO"},
};

size_t crash_zoo_count(void)
{
	return sizeof(zoo) / sizeof(zoo[0]);
}

const struct crash_builtin *crash_zoo_get(size_t i)
{
	return i < crash_zoo_count() ? &zoo[i] : NULL;
}

const struct crash_builtin *crash_builtin_find(const char *name)
{
	for (size_t i = 0; i < crash_builtin_count(); i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	for (size_t i = 0; i < crash_zoo_count(); i++)
		if (strcmp(zoo[i].name, name) == 0)
			return &zoo[i];
	return NULL;
}

int crash_workload_load(const char *name_or_path, struct crash_workload **out, struct bo_err *err)
{
	const struct crash_builtin *b = crash_builtin_find(name_or_path);
	if (b)
		return crash_workload_parse(b->text, strlen(b->text), b->name, out, err);
	FILE *f = fopen(name_or_path, "rb");
	if (!f)
		return bo_errf(err, -ENOENT,
		               "workload '%s': no built-in of that name and no such file (list the "
		               "built-ins with `blackout workloads`)",
		               name_or_path);
	char *buf = malloc(CRASH_WL_MAX_TEXT + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	size_t n = fread(buf, 1, CRASH_WL_MAX_TEXT + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return bo_errf(err, -EIO, "workload '%s': read error", name_or_path);
	}
	/* default name: the file's base name without extension */
	const char *base = strrchr(name_or_path, '/');
	base = base ? base + 1 : name_or_path;
	char nm[64];
	snprintf(nm, sizeof(nm), "%s", base);
	char *dot = strrchr(nm, '.');
	if (dot && dot != nm)
		*dot = 0;
	int rc = crash_workload_parse(buf, n, nm, out, err);
	free(buf);
	return rc;
}
