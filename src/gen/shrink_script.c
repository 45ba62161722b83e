// SPDX-License-Identifier: GPL-2.0-or-later
/* shrink_script.c — a shrunk workload as an xfstests-style shell reproducer on dm-flakey
 * (docs/shrink.md): it needs dmsetup, the filesystem's mkfs and a POSIX shell with
 * coreutils or busybox, not blackout. dm-flakey's drop_writes acknowledges and loses
 * every write from the switch on, so the script can only say "the device lost
 * everything after this step boundary". */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/shrink.h"

/* A path of the workload as a double-quoted shell word under $MNT (the workload's
 * paths are checked: no quotes, no `$`, no backslashes; those are refused here too). */
static int qpath(const char *p, char *buf, size_t len)
{
	if (strpbrk(p, "\"$`\\\n"))
		return -EINVAL;
	snprintf(buf, len, "\"$MNT%s\"", strcmp(p, "/") == 0 ? "" : p);
	return 0;
}

/* The largest of 4096, 512, 1 dividing both: dd's block size for an OFF/LEN write. */
static uint64_t ddbs(uint64_t off, uint64_t len)
{
	if (off % 4096 == 0 && len % 4096 == 0)
		return 4096;
	return off % 512 == 0 && len % 512 == 0 ? 512 : 1;
}

/* Files an fsync/fdatasync (or an O_SYNC write) of step s made durable: its path. A
 * sync promises every file named so far; that is bo_promise_all. */
static bool promises_file(const struct crash_step *s)
{
	switch (s->op) {
	case CRASH_OP_FSYNC:
	case CRASH_OP_FDATASYNC:
	case CRASH_OP_OSYNC:
	case CRASH_OP_DWRITE_OSYNC: return true;
	default: return false;
	}
}

/* Whether step t changes path p (or something under it) afterwards, which makes an
 * earlier promise about p one that a crash may legally show older or newer. */
static bool touches(const struct crash_step *t, const char *p)
{
	size_t lp = strlen(p);
	const char *q[2] = {t->path, t->path2};
	if (t->op == CRASH_OP_FSYNC || t->op == CRASH_OP_FDATASYNC || t->op == CRASH_OP_FSYNC_DIR ||
	    t->op == CRASH_OP_SYNC || t->op == CRASH_OP_MARK)
		return false;
	for (int i = 0; i < 2; i++)
		if (q[i] && strncmp(q[i], p, lp) == 0 && (q[i][lp] == 0 || q[i][lp] == '/'))
			return true;
	return false;
}

/* Whether step t changes the entries of directory d afterwards (a name made or removed
 * in it, or d itself moved or removed), which voids what an fsync of d promised. */
static bool dir_touched(const struct crash_step *t, const char *d)
{
	switch (t->op) {
	case CRASH_OP_CREATE:
	case CRASH_OP_MKDIR:
	case CRASH_OP_RENAME:
	case CRASH_OP_LINK:
	case CRASH_OP_SYMLINK:
	case CRASH_OP_UNLINK:
	case CRASH_OP_RMDIR: break;
	default: return false;
	}
	const char *q[2] = {t->path, t->path2};
	size_t ld = strcmp(d, "/") == 0 ? 0 : strlen(d);
	for (int i = 0; i < 2; i++) {
		if (!q[i])
			continue;
		const char *slash = strrchr(q[i], '/');
		size_t lp = slash ? (size_t)(slash - q[i]) : 0;
		if (lp == ld && strncmp(q[i], d, ld) == 0)
			return true; /* an entry of d */
		if (ld && strncmp(q[i], d, ld) == 0 && q[i][ld] == 0)
			return true; /* d itself */
	}
	return false;
}

static int step_sh(const struct crash_step *s, FILE *f, struct bo_err *err)
{
	char a[CRASH_WL_MAX_PATH + 16], b[CRASH_WL_MAX_PATH + 16];
	if ((s->path && qpath(s->path, a, sizeof(a))) ||
	    (s->path2 && qpath(s->path2, b, sizeof(b))))
		return bo_errf(err, -EINVAL, "line %u: a path a shell word cannot hold", s->line);
	uint64_t bs = ddbs(s->off, s->len);
	switch (s->op) {
	case CRASH_OP_MKDIR: fprintf(f, "mkdir %s", a); break;
	case CRASH_OP_CREATE: fprintf(f, ": >>%s", a); break;
	case CRASH_OP_WRITE:
	case CRASH_OP_OSYNC:
	case CRASH_OP_DWRITE:
	case CRASH_OP_DWRITE_OSYNC:
		fprintf(f,
		        "head -c %" PRIu64 " /dev/urandom >\"$TMPD/data\" && dd if=\"$TMPD/data\" "
		        "of=%s bs=%" PRIu64 " seek=%" PRIu64 " conv=notrunc%s 2>/dev/null",
		        s->len, a, bs, s->off / bs,
		        s->op == CRASH_OP_WRITE    ? ""
		        : s->op == CRASH_OP_OSYNC  ? " oflag=sync"
		        : s->op == CRASH_OP_DWRITE ? " oflag=direct"
		                                   : " oflag=direct,sync");
		break;
	case CRASH_OP_APPEND: fprintf(f, "head -c %" PRIu64 " /dev/urandom >>%s", s->len, a); break;
	case CRASH_OP_TRUNCATE: fprintf(f, "truncate -s %" PRIu64 " %s", s->off, a); break;
	case CRASH_OP_RENAME: fprintf(f, "mv -T %s %s", a, b); break;
	case CRASH_OP_LINK: fprintf(f, "ln %s %s", a, b); break;
	case CRASH_OP_SYMLINK: fprintf(f, "ln -s %s %s", a, b); break;
	case CRASH_OP_UNLINK: fprintf(f, "rm %s", a); break;
	case CRASH_OP_RMDIR: fprintf(f, "rmdir %s", a); break;
	case CRASH_OP_FSYNC:
	case CRASH_OP_FSYNC_DIR: fprintf(f, "sync %s", a); break;
	case CRASH_OP_FDATASYNC: fprintf(f, "sync -d %s", a); break;
	case CRASH_OP_SYNC: fprintf(f, "sync"); break;
	case CRASH_OP_MARK: fprintf(f, ": mark %s", s->path); break;
	default:
		return bo_errf(err, -ENOTSUP,
		               "line %u: %s: a shell reproducer cannot express this step "
		               "(only blackout's guest runs it)",
		               s->line, crash_op_name(s->op));
	}
	return 0;
}

/* The mkfs command and the mount options of an --fs value ("ext3,data=ordered,..."). */
static int fs_words(const char *fs, char *type, size_t tlen, char *mkfs, size_t mlen, char *mopt,
                    size_t olen, struct bo_err *err)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", fs);
	char *save = NULL, *w = strtok_r(buf, ",", &save);
	if (!w)
		return bo_errf(err, -EINVAL, "--fs is empty");
	snprintf(type, tlen, "%s", w);
	bool ext = strncmp(type, "ext", 3) == 0;
	if (ext)
		snprintf(mkfs, mlen, "\"${MKE2FS:-mke2fs}\" -t %s -F -q", type);
	else
		snprintf(mkfs, mlen, "mkfs.%s -f -q", type);
	mopt[0] = 0;
	while ((w = strtok_r(NULL, ",", &save))) {
		size_t ml = strlen(mkfs), ol = strlen(mopt);
		if (strcmp(w, "metadata_csum") == 0 && ext)
			snprintf(mkfs + ml, mlen - ml, " -O metadata_csum");
		else if (strncmp(w, "bs=", 3) == 0 && ext)
			snprintf(mkfs + ml, mlen - ml, " -b %s", w + 3);
		else if (strncmp(w, "journal=", 8) == 0 && ext)
			snprintf(mkfs + ml, mlen - ml, " -J size=%s", w + 8);
		else if (strncmp(w, "verify=", 7) == 0 || strcmp(w, "defaults") == 0)
			continue; /* blackout's own boot-time scrub: nothing of the kernel's */
		else
			snprintf(mopt + ol, olen - ol, "%s%s", ol ? "," : "", w);
	}
	if (!mopt[0])
		snprintf(mopt, olen, "defaults");
	return 0;
}

static const char prologue[] =
    "# MKE2FS, E2FSCK: the e2fsprogs programs, when not the first on PATH (busybox's are\n"
    "# not them)\n"
    "set -u\n"
    ": \"${DEV:?set DEV to a scratch block device: everything on it is lost}\"\n"
    "MNT=${MNT:-/mnt/blackout-repro}\n"
    "NO_DROP=${NO_DROP:-0}\n"
    "NAME=blackout-repro-$$\n"
    "FLAKEY=/dev/mapper/$NAME\n"
    "TMPD=$(mktemp -d)\n"
    "SIZE=$(blockdev --getsz \"$DEV\")\n"
    "# xfstests' tables: writes pass through / writes acknowledged and dropped\n"
    "ALLOW=\"0 $SIZE flakey $DEV 0 180 0\"\n"
    "DROP=\"0 $SIZE flakey $DEV 0 0 180 1 drop_writes\"\n"
    "fail() { echo \"repro: $*\" >&2; exit 2; }\n"
    "cleanup() { umount \"$MNT\" 2>/dev/null; dmsetup remove \"$NAME\" 2>/dev/null; rm -rf "
    "\"$TMPD\"; }\n"
    "trap cleanup EXIT\n"
    "# --nolockfs: a suspend that froze the filesystem would write its dirty pages first\n"
    "flakey_table() {\n"
    "\tdmsetup suspend --nolockfs \"$NAME\" && dmsetup load \"$NAME\" --table \"$1\" &&\n"
    "\t\tdmsetup resume \"$NAME\" || fail \"dmsetup could not load: $1\"\n"
    "}\n"
    "# bo_promise PATH: what a completed fsync promised of PATH (its bytes' digest)\n"
    "bo_promise() {\n"
    "\t[ -f \"$MNT$1\" ] || return 0\n"
    "\ts=$(md5sum <\"$MNT$1\") && echo \"${s%% *} $1\" >>\"$TMPD/promised\"\n"
    "}\n"
    "# bo_promise_dir DIR: what an fsync of DIR promised: its entries' names\n"
    "bo_promise_dir() {\n"
    "\ts=$(ls -a \"$MNT$1\" | sort | md5sum) && echo \"${s%% *} $1\" >>\"$TMPD/promised-dirs\"\n"
    "}\n"
    ": >\"$TMPD/promised\"\n"
    ": >\"$TMPD/promised-dirs\"\n"
    "mkdir -p \"$MNT\" || fail \"cannot make $MNT\"\n"
    "dmsetup create \"$NAME\" --table \"$ALLOW\" || fail \"dmsetup create (is dm-flakey "
    "loaded?)\"\n"
    "# without udev (an initramfs) the node is dmsetup's to make\n"
    "[ -b \"$FLAKEY\" ] || dmsetup mknodes \"$NAME\" >/dev/null 2>&1\n"
    "[ -b \"$FLAKEY\" ] || fail \"no $FLAKEY after dmsetup create\"\n";

int shrink_flakey_script(const struct crash_workload *wl, const char *fs, size_t step,
                         const char *header, FILE *f, struct bo_err *err)
{
	char type[32], mkfs[300], mopt[256];
	int rc = fs_words(fs, type, sizeof(type), mkfs, sizeof(mkfs), mopt, sizeof(mopt), err);
	if (rc)
		return rc;
	if (step > wl->nrun)
		return bo_errf(err, -EINVAL, "step %zu is past the workload's %zu run steps", step,
		               wl->nrun);
	fprintf(f, "#!/bin/sh\n");
	if (header)
		fputs(header, f);
	fputs(prologue, f);
	fprintf(f, "FSTYPE=%s\nMOPT=%s\n", type, mopt);
	fprintf(f, "%s \"$FLAKEY\" >/dev/null || fail \"mkfs failed\"\n", mkfs);
	fputs("mount -t \"$FSTYPE\" -o \"$MOPT\" \"$FLAKEY\" \"$MNT\" || fail \"mount failed\"\n",
	      f);
	fputs("# setup\n", f);
	for (size_t i = 0; i < wl->nsetup; i++) {
		if ((rc = step_sh(&wl->setup[i], f, err)))
			return rc;
		fprintf(f, " || fail \"setup step %zu\"\n", i + 1);
	}
	fputs("sync\n# run\n", f);
	for (size_t i = 0; i <= wl->nrun; i++) {
		if (i == step)
			fputs("# from here on the device acknowledges every write and keeps none\n"
			      "[ \"$NO_DROP\" = 1 ] || flakey_table \"$DROP\"\n",
			      f);
		if (i == wl->nrun)
			break;
		const struct crash_step *s = &wl->run[i];
		if ((rc = step_sh(s, f, err)))
			return rc;
		fprintf(f, " || fail \"run step %zu\"\n", i + 1);
		/* a promise later steps change is not checked: a crash may show either */
		bool later = false;
		for (size_t j = i + 1; j < wl->nrun && s->path; j++)
			later |= touches(&wl->run[j], s->path);
		if (promises_file(s) && !later)
			fprintf(f, "bo_promise %s\n", s->path);
		if (s->op == CRASH_OP_FSYNC_DIR) {
			bool changed = false;
			for (size_t j = i + 1; j < wl->nrun; j++)
				changed |= dir_touched(&wl->run[j], s->path);
			if (!changed)
				fprintf(f, "bo_promise_dir %s\n", s->path);
		}
		if (s->op == CRASH_OP_SYNC)
			for (size_t j = 0; j < wl->nsetup + i; j++) {
				const struct crash_step *t =
				    j < wl->nsetup ? &wl->setup[j] : &wl->run[j - wl->nsetup];
				const char *p = t->op == CRASH_OP_RENAME || t->op == CRASH_OP_LINK
				                    ? t->path2
				                    : t->path;
				bool changed = false;
				for (size_t k = i + 1; k < wl->nrun && p; k++)
					changed |= touches(&wl->run[k], p);
				/* one promise per name: an earlier step named it already */
				for (size_t k = 0; k < j && p && !changed; k++) {
					const struct crash_step *u = k < wl->nsetup
					                                 ? &wl->setup[k]
					                                 : &wl->run[k - wl->nsetup];
					const char *q =
					    u->op == CRASH_OP_RENAME || u->op == CRASH_OP_LINK
					        ? u->path2
					        : u->path;
					changed = u->op != CRASH_OP_MARK && q && strcmp(q, p) == 0;
				}
				if (p && t->op != CRASH_OP_MARK && !changed)
					fprintf(f, "bo_promise %s\n", p);
			}
	}
	fputs(
	    "# power is cut: nothing more reaches the media; then the device comes back\n"
	    "umount \"$MNT\" || fail \"umount failed\"\n"
	    "flakey_table \"$ALLOW\"\n"
	    "mount -t \"$FSTYPE\" -o \"$MOPT\" \"$FLAKEY\" \"$MNT\" || { echo \"FAIL: the "
	    "mount after the crash failed\"; exit 1; }\n"
	    "bad=0\n"
	    "while read -r sum f; do\n"
	    "\tif [ ! -f \"$MNT$f\" ]; then echo \"FAIL: $f: fsynced, missing after the "
	    "crash\"; bad=1\n"
	    "\telif s=$(md5sum <\"$MNT$f\") && [ \"${s%% *}\" != \"$sum\" ]; then\n"
	    "\t\techo \"FAIL: $f: fsynced, not what was written (size now $(wc -c <\"$MNT$f\"))\"; "
	    "bad=1\n"
	    "\tfi\n"
	    "done <\"$TMPD/promised\"\n"
	    "while read -r sum d; do\n"
	    "\tif ! s=$(ls -a \"$MNT$d\" | sort | md5sum) || [ \"${s%% *}\" != \"$sum\" ]; then\n"
	    "\t\techo \"FAIL: $d: its entries are not the ones its fsync made durable: $(ls -A "
	    "\"$MNT$d\" | tr '\\n' ' ')\"; bad=1\n"
	    "\tfi\n"
	    "done <\"$TMPD/promised-dirs\"\n"
	    "umount \"$MNT\" || { echo \"FAIL: umount after the crash\"; bad=1; }\n",
	    f);
	if (strncmp(type, "ext", 3) == 0)
		fputs("\"${E2FSCK:-e2fsck}\" -fn \"$FLAKEY\" >\"$TMPD/fsck\" 2>&1 || { echo "
		      "\"FAIL: e2fsck -fn "
		      "found "
		      "problems\"; sed 's/^/  /' \"$TMPD/fsck\"; bad=1; }\n",
		      f);
	fputs("[ $bad = 0 ] && echo \"PASS: what the fsyncs promised survived\"\nexit $bad\n", f);
	return ferror(f) ? -EIO : 0;
}
