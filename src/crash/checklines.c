// SPDX-License-Identifier: GPL-2.0-or-later
/* checklines.c — what each filesystem's checker prints on a clean run (e2fsck -fn,
 * xfs_repair -n, btrfs check --readonly, as src/guest/guest-fs.sh runs them): the
 * judge takes any other line as a complaint. The lines are those Debian 12's tools
 * printed on this kind of machine (docs/vmtest.md); a line a new version adds is a
 * complaint until it is listed here, the safe direction. */
#include <string.h>

#include "blackout/e2fsck.h"
#include "crash/crash_int.h"

/* A whole decimal number, nothing after it. */
static bool is_number(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* s is prefix followed by a whole decimal number (then suffix, "" for none). */
static bool numbered(const char *s, const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix);
	if (strncmp(s, prefix, pl) != 0)
		return false;
	s += pl;
	size_t n = strspn(s, "0123456789");
	return n > 0 && strcmp(s + n, suffix) == 0;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* xfs_repair -n (xfsprogs 6.1) on a consistent, cleanly unmounted filesystem. Its
 * progress lines are indented; the guest's `read` drops the indent, so it is skipped
 * here either way. */
static bool xfs_repair_clean(const char *s)
{
	static const char *const lines[] = {
	    "Phase 1 - find and verify superblock...",
	    "Phase 2 - using internal log",
	    "- zero log...",
	    "- scan filesystem freespace and inode maps...",
	    "- found root inode chunk",
	    "Phase 3 - for each AG...",
	    "- scan (but don't clear) agi unlinked lists...",
	    "- process known inodes and perform inode discovery...",
	    "- process newly discovered inodes...",
	    "Phase 4 - check for duplicate blocks...",
	    "- setting up duplicate extent list...",
	    "- check for inodes claiming duplicate blocks...",
	    "No modify flag set, skipping phase 5",
	    "Phase 6 - check inode connectivity...",
	    "- traversing filesystem ...",
	    "- traversal finished ...",
	    "- moving disconnected inodes to lost+found ...",
	    "Phase 7 - verify link counts...",
	    "No modify flag set, skipping filesystem flush and exiting.",
	    NULL,
	};
	s += strspn(s, " \t");
	return !*s || in_list(s, lines) || numbered(s, "- agno = ", "");
}

/* "01bfe81d-94f3-4866-a6c5-22c60889b323" */
static bool is_uuid(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !strchr("0123456789abcdef", s[i]))
			return false;
	}
	return true;
}

/* btrfs check --readonly (btrfs-progs 6.2) on a filesystem with the free space tree
 * and no quotas, as guest-fs.sh makes them. */
static bool btrfs_check_clean(const char *s)
{
	static const char *const lines[] = {
	    "Opening filesystem to check...",
	    "[1/7] checking root items",
	    "[2/7] checking extents",
	    "[3/7] checking free space tree",
	    "[4/7] checking fs roots",
	    "[5/7] checking only csums items (without verifying data)",
	    "[6/7] checking root refs",
	    "[7/7] checking quota groups skipped (not enabled on this FS)",
	    NULL,
	};
	static const char *const counts[] = {
	    "total csum bytes: ",
	    "total tree bytes: ",
	    "total fs tree bytes: ",
	    "total extent tree bytes: ",
	    "btree space waste bytes: ",
	    "file data blocks allocated: ",
	    "referenced ",
	    NULL,
	};
	s += strspn(s, " \t");
	if (!*s || in_list(s, lines) || numbered(s, "found ", " bytes used, no error found"))
		return true;
	if (!strncmp(s, "UUID: ", 6))
		return is_uuid(s + 6);
	if (!strncmp(s, "Checking filesystem on ", 23))
		return s[23] && !strchr(s + 23, ' ');
	for (const char *const *c = counts; *c; c++)
		if (!strncmp(s, *c, strlen(*c)))
			return is_number(s + strlen(*c));
	return false;
}

static const struct crash_checker_rules checkers[] = {
    {"e2fsck", "e2fsck", 8, e2fsck_line_is_clean},
    {"xfs_repair", "xfs_repair", 2, xfs_repair_clean},
    {"btrfs-check", "btrfs check", 2, btrfs_check_clean},
};

const struct crash_checker_rules *crash_checker_find(const char *name)
{
	for (size_t i = 0; i < sizeof(checkers) / sizeof(checkers[0]); i++)
		if (strcmp(name, checkers[i].name) == 0)
			return &checkers[i];
	return NULL;
}
