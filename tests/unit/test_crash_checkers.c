// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_checkers.c — the judge on each filesystem checker's output (checklines.c,
 * obsparse.c's `checker` line): xfs_repair -n and btrfs check --readonly as a guest
 * printed them on this machine, clean and complaining (the complaints from images
 * damaged on purpose: an xfs root inode's link count set to 7 with xfs_db, a btrfs
 * fs-tree leaf overwritten), judged clean only when the exit status is 0 and every
 * line belongs to a clean run; the checker line itself is checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "crash/crash_int.h"
#include "tap.h"

static const char XFS_CLEAN[] =
    "BO:OBS checker xfs_repair\n"
    "BO:OBS fsck 0\n"
    "BO:OBS fsck-line Phase 1 - find and verify superblock...\n"
    "BO:OBS fsck-line Phase 2 - using internal log\n"
    "BO:OBS fsck-line - zero log...\n"
    "BO:OBS fsck-line - scan filesystem freespace and inode maps...\n"
    "BO:OBS fsck-line - found root inode chunk\n"
    "BO:OBS fsck-line Phase 3 - for each AG...\n"
    "BO:OBS fsck-line - scan (but don't clear) agi unlinked lists...\n"
    "BO:OBS fsck-line - process known inodes and perform inode discovery...\n"
    "BO:OBS fsck-line - agno = 0\n"
    "BO:OBS fsck-line - agno = 1\n"
    "BO:OBS fsck-line - agno = 2\n"
    "BO:OBS fsck-line - agno = 3\n"
    "BO:OBS fsck-line - process newly discovered inodes...\n"
    "BO:OBS fsck-line Phase 4 - check for duplicate blocks...\n"
    "BO:OBS fsck-line - setting up duplicate extent list...\n"
    "BO:OBS fsck-line - check for inodes claiming duplicate blocks...\n"
    "BO:OBS fsck-line - agno = 0\n"
    "BO:OBS fsck-line - agno = 1\n"
    "BO:OBS fsck-line - agno = 2\n"
    "BO:OBS fsck-line - agno = 3\n"
    "BO:OBS fsck-line No modify flag set, skipping phase 5\n"
    "BO:OBS fsck-line Phase 6 - check inode connectivity...\n"
    "BO:OBS fsck-line - traversing filesystem ...\n"
    "BO:OBS fsck-line - traversal finished ...\n"
    "BO:OBS fsck-line - moving disconnected inodes to lost+found ...\n"
    "BO:OBS fsck-line Phase 7 - verify link counts...\n"
    "BO:OBS fsck-line No modify flag set, skipping filesystem flush and exiting.\n";
static const char XFS_DIRTY[] =
    "BO:OBS checker xfs_repair\n"
    "BO:OBS fsck 1\n"
    "BO:OBS fsck-line Phase 1 - find and verify superblock...\n"
    "BO:OBS fsck-line Phase 2 - using internal log\n"
    "BO:OBS fsck-line - zero log...\n"
    "BO:OBS fsck-line - scan filesystem freespace and inode maps...\n"
    "BO:OBS fsck-line - found root inode chunk\n"
    "BO:OBS fsck-line Phase 3 - for each AG...\n"
    "BO:OBS fsck-line - scan (but don't clear) agi unlinked lists...\n"
    "BO:OBS fsck-line - process known inodes and perform inode discovery...\n"
    "BO:OBS fsck-line - agno = 0\n"
    "BO:OBS fsck-line - agno = 1\n"
    "BO:OBS fsck-line - agno = 2\n"
    "BO:OBS fsck-line - agno = 3\n"
    "BO:OBS fsck-line - process newly discovered inodes...\n"
    "BO:OBS fsck-line Phase 4 - check for duplicate blocks...\n"
    "BO:OBS fsck-line - setting up duplicate extent list...\n"
    "BO:OBS fsck-line - check for inodes claiming duplicate blocks...\n"
    "BO:OBS fsck-line - agno = 0\n"
    "BO:OBS fsck-line - agno = 1\n"
    "BO:OBS fsck-line - agno = 2\n"
    "BO:OBS fsck-line - agno = 3\n"
    "BO:OBS fsck-line No modify flag set, skipping phase 5\n"
    "BO:OBS fsck-line Phase 6 - check inode connectivity...\n"
    "BO:OBS fsck-line - traversing filesystem ...\n"
    "BO:OBS fsck-line - traversal finished ...\n"
    "BO:OBS fsck-line - moving disconnected inodes to lost+found ...\n"
    "BO:OBS fsck-line Phase 7 - verify link counts...\n"
    "BO:OBS fsck-line would have reset inode 128 nlinks from 7 to 2\n"
    "BO:OBS fsck-line No modify flag set, skipping filesystem flush and exiting.\n";
static const char BTRFS_CLEAN[] =
    "BO:OBS checker btrfs-check\n"
    "BO:OBS fsck 0\n"
    "BO:OBS fsck-line [1/7] checking root items\n"
    "BO:OBS fsck-line [2/7] checking extents\n"
    "BO:OBS fsck-line [3/7] checking free space tree\n"
    "BO:OBS fsck-line [4/7] checking fs roots\n"
    "BO:OBS fsck-line [5/7] checking only csums items (without verifying data)\n"
    "BO:OBS fsck-line [6/7] checking root refs\n"
    "BO:OBS fsck-line [7/7] checking quota groups skipped (not enabled on this FS)\n"
    "BO:OBS fsck-line Opening filesystem to check...\n"
    "BO:OBS fsck-line Checking filesystem on /dev/vda\n"
    "BO:OBS fsck-line UUID: 01bfe81d-94f3-4866-a6c5-22c60889b323\n"
    "BO:OBS fsck-line found 933888 bytes used, no error found\n"
    "BO:OBS fsck-line total csum bytes: 816\n"
    "BO:OBS fsck-line total tree bytes: 98304\n"
    "BO:OBS fsck-line total fs tree bytes: 57344\n"
    "BO:OBS fsck-line total extent tree bytes: 16384\n"
    "BO:OBS fsck-line btree space waste bytes: 38308\n"
    "BO:OBS fsck-line file data blocks allocated: 835584\n"
    "BO:OBS fsck-line referenced 835584\n";
static const char BTRFS_DIRTY[] =
    "BO:OBS checker btrfs-check\n"
    "BO:OBS fsck 1\n"
    "BO:OBS fsck-line [1/7] checking root items\n"
    "BO:OBS fsck-line [2/7] checking extents\n"
    "BO:OBS fsck-line checksum verify failed on 5324800 wanted 0x4c06f84e found 0x4df9f1d0\n"
    "BO:OBS fsck-line checksum verify failed on 5324800 wanted 0x4c06f84e found 0x4df9f1d0\n"
    "BO:OBS fsck-line Csum didn't match\n"
    "BO:OBS fsck-line owner ref check failed [5324800 4096]\n"
    "BO:OBS fsck-line ERROR: errors found in extent allocation tree or chunk allocation\n"
    "BO:OBS fsck-line [3/7] checking free space tree\n"
    "BO:OBS fsck-line [4/7] checking fs roots\n"
    "BO:OBS fsck-line checksum verify failed on 5324800 wanted 0x4c06f84e found 0x4df9f1d0\n"
    "BO:OBS fsck-line checksum verify failed on 5324800 wanted 0x4c06f84e found 0x4df9f1d0\n"
    "BO:OBS fsck-line Csum didn't match\n"
    "BO:OBS fsck-line root 5 inode 10954627 errors 200, dir isize wrong\n"
    "BO:OBS fsck-line root 5 inode 10954628 errors 2001, no inode item, link count wrong\n"
    "BO:OBS fsck-line unresolved ref dir 10954627 index 0 namelen 2 name f1 filetype 1 errors 6, "
    "no dir index, no inode ref\n"
    "BO:OBS fsck-line root 5 inode 10954629 errors 2001, no inode item, link count wrong\n"
    "BO:OBS fsck-line unresolved ref dir 10954627 index 0 namelen 2 name f2 filetype 1 errors 6, "
    "no dir index, no inode ref\n"
    "BO:OBS fsck-line root 5 inode 10954631 errors 2001, no inode item, link count wrong\n"
    "BO:OBS fsck-line The following tree block(s) is corrupted in tree 5:\n"
    "BO:OBS fsck-line tree block bytenr: 5365760, level: 1, node key: (10954627, 84, 1480654951)\n"
    "BO:OBS fsck-line found 110592 bytes used, error(s) found\n"
    "BO:OBS fsck-line total csum bytes: 0\n"
    "BO:OBS fsck-line total tree bytes: 106496\n"
    "BO:OBS fsck-line total fs tree bytes: 77824\n"
    "BO:OBS fsck-line total extent tree bytes: 4096\n"
    "BO:OBS fsck-line btree space waste bytes: 40163\n"
    "BO:OBS fsck-line file data blocks allocated: 0\n"
    "BO:OBS fsck-line referenced 0\n";

/* An observation of an empty filesystem with this checker report. */
static char *observation(const char *report)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fprintf(f,
	        "BO:BOOT check /dev/vda\nBO:OBS chunk 4096\nBO:OBS mount 0\n"
	        "BO:OBS umount 0\n%sBO:OBS end\nBO:END\n",
	        report);
	fclose(f);
	return buf;
}

/* Parses report; fills c with the checker's verdict and o with the checkers' half of
 * the judge (consistent broken or not). The parse's return code. */
static int judge(const char *report, struct crash_check *c, struct crash_outcome *o,
                 struct bo_err *err)
{
	char *text = observation(report);
	struct crash_observation obs;
	memset(err, 0, sizeof(*err));
	int rc = crash_obs_parse_lines(text, strlen(text), &obs, err);
	free(text);
	if (rc)
		return rc;
	*c = obs.check[CRASH_CHECK_E2FSCK];
	struct crash_promises p = {.boot = CRASH_BOOT_TRUST};
	memset(o, 0, sizeof(*o));
	crash_judge_checks(&p, &obs, o);
	crash_observation_free(&obs);
	return 0;
}

/* report with every "BO:OBS fsck EXIT" line's status replaced by exit. */
static char *with_exit(const char *report, int exit)
{
	const char *at = strstr(report, "BO:OBS fsck ");
	const char *nl = strchr(at, '\n');
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fprintf(f, "%.*sBO:OBS fsck %d%s", (int)(at - report), report, exit, nl);
	fclose(f);
	return buf;
}

#define CONSISTENT (1u << CRASH_INV_CONSISTENT)

static void test_clean(const char *name, const char *report)
{
	struct crash_check c;
	struct crash_outcome o;
	struct bo_err err;
	int rc = judge(report, &c, &o, &err);
	ok(rc == 0 && c.ran && c.rc == 0 && c.clean && !(o.broken & CONSISTENT),
	   "%s's clean run from a guest: clean, consistent (%s%s)", name, err.msg, c.why);
}

static void test_dirty(const char *name, const char *report, const char *first)
{
	struct crash_check c;
	struct crash_outcome o;
	struct bo_err err;
	int rc = judge(report, &c, &o, &err);
	ok(rc == 0 && c.ran && c.rc == 0 && !c.clean && (o.broken & CONSISTENT),
	   "%s's complaint from a guest: consistent broken (%s)", name, o.detail);
	ok(!strcmp(c.why, first), "the reason is its first complaint: '%s'", c.why);
	ok(strstr(o.detail, first) != NULL, "the verdict's detail names it (%s)", o.detail);
}

/* Its clean lines with a failing exit status: a complaint; from the checker's
 * could-not-check status up: not a verdict on the filesystem. */
static void test_exits(const char *name, const char *clean, int complaint, int cannot)
{
	struct crash_check c;
	struct crash_outcome o;
	struct bo_err err;
	char *r = with_exit(clean, complaint);
	int rc = judge(r, &c, &o, &err);
	free(r);
	ok(rc == 0 && !c.clean && c.rc == 0 && (o.broken & CONSISTENT),
	   "%s: its clean lines but exit %d: a complaint (%s)", name, complaint, c.why);
	r = with_exit(clean, cannot);
	rc = judge(r, &c, &o, &err);
	free(r);
	ok(rc == 0 && c.rc == -EIO && strstr(c.why, "could not check") && !(o.broken & CONSISTENT),
	   "%s: exit %d: it could not check (%s)", name, cannot, c.why);
}

static void test_extra_line(void)
{
	/* btrfs check exiting 0 while printing a problem is still a complaint */
	char *r = malloc(strlen(BTRFS_CLEAN) + 64);
	sprintf(r, "%sBO:OBS fsck-line ERROR: root 5 inode 257 errors 400\n", BTRFS_CLEAN);
	struct crash_check c;
	struct crash_outcome o;
	struct bo_err err;
	int rc = judge(r, &c, &o, &err);
	free(r);
	ok(rc == 0 && !c.clean && (o.broken & CONSISTENT) &&
	       !strcmp(c.why, "btrfs check: ERROR: root 5 inode 257 errors 400"),
	   "btrfs check exits 0 but prints a problem: consistent broken (%s)", c.why);
	/* numbers where a clean run has them, nothing else */
	r = malloc(strlen(BTRFS_CLEAN) + 64);
	sprintf(r, "%sBO:OBS fsck-line total csum bytes: 12 (wrong)\n", BTRFS_CLEAN);
	rc = judge(r, &c, &o, &err);
	free(r);
	ok(rc == 0 && !c.clean, "a count line with more after the number is a complaint");
	r = malloc(strlen(XFS_CLEAN) + 64);
	sprintf(r, "%sBO:OBS fsck-line - agno = 1 bad\n", XFS_CLEAN);
	rc = judge(r, &c, &o, &err);
	free(r);
	ok(rc == 0 && !c.clean, "xfs_repair: an agno line with more after it is a complaint");
}

/* The checker line decides the rules: xfs_repair's clean run read as e2fsck's is a
 * complaint, and the host's indented output is as clean as the guest's. */
static void test_checker_line(void)
{
	struct crash_check c;
	struct crash_outcome o;
	struct bo_err err;
	const char *as_e2 = strchr(XFS_CLEAN, '\n') + 1; /* without the checker line */
	int rc = judge(as_e2, &c, &o, &err);
	ok(rc == 0 && !c.clean && !strcmp(c.why, "e2fsck: Phase 1 - find and verify superblock..."),
	   "no checker line: e2fsck's rules, under which xfs_repair's lines complain (%s)", c.why);
	rc = judge("BO:OBS checker e2fsck\nBO:OBS fsck 0\nBO:OBS fsck-line Pass 1: Checking "
	           "inodes, blocks, and sizes\n",
	           &c, &o, &err);
	ok(rc == 0 && c.clean, "checker e2fsck with a clean e2fsck run: clean");
	rc = judge("BO:OBS checker xfs_repair\nBO:OBS fsck 0\nBO:OBS fsck-line         - agno = "
	           "12\nBO:OBS fsck-line Phase 7 - verify link counts...\n",
	           &c, &o, &err);
	ok(rc == 0 && c.clean, "xfs_repair's indented progress lines (as on a host) are clean");

	static const struct {
		const char *report, *want;
	} bad[] = {
	    {"BO:OBS checker fsck.f2fs\nBO:OBS fsck 0\n", "line 5: checker: e2fsck, xfs_repair"},
	    {"BO:OBS checker xfs_repair\nBO:OBS checker xfs_repair\nBO:OBS fsck 0\n",
	     "line 6: checker: one line"},
	    {"BO:OBS fsck 0\nBO:OBS checker btrfs-check\n", "line 6: checker: one line"},
	    {"BO:OBS checker \nBO:OBS fsck 0\n", "checker: e2fsck, xfs_repair or btrfs-check"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		rc = judge(bad[i].report, &c, &o, &err);
		ok(rc == -EINVAL && strstr(err.msg, bad[i].want),
		   "bad checker line %zu refused: %s", i, err.msg);
	}
}

int main(void)
{
	test_clean("xfs_repair -n", XFS_CLEAN);
	test_clean("btrfs check --readonly", BTRFS_CLEAN);
	test_dirty("xfs_repair -n", XFS_DIRTY,
	           "xfs_repair: would have reset inode 128 nlinks from 7 to 2");
	test_dirty("btrfs check --readonly", BTRFS_DIRTY,
	           "btrfs check: checksum verify failed on 5324800 wanted 0x4c06f84e found "
	           "0x4df9f1d0");
	test_exits("xfs_repair -n", XFS_CLEAN, 1, 2);
	test_exits("btrfs check --readonly", BTRFS_CLEAN, 1, 2);
	test_extra_line();
	test_checker_line();
	return tap_done();
}
