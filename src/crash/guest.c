// SPDX-License-Identifier: GPL-2.0-or-later
/* guest.c — a crash explorer workload compiled for a guest kernel (vmtest): a busybox
 * shell script (bo_setup, bo_run printing STEP i as each run step returns and marking
 * "step i" in the plugin's I/O log before it starts) and the bytes of every write as
 * files, at the offsets a dry run on blackout's ext3 found (docs/vmtest.md, "Explorer
 * workloads"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/crash.h"

#define GUEST_ROOT "/mnt"

/* PATH under the guest's mount point, single-quoted for the shell. */
static void qpath(FILE *f, const char *path)
{
	fputs("'" GUEST_ROOT, f);
	for (const char *p = path; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

/* TEXT single-quoted for the shell. */
static void squote(FILE *f, const char *text)
{
	fputc('\'', f);
	for (const char *p = text; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

/* The bytes of a data step, as the explorer writes them, into DIR/wl/NAME. */
static int write_payload(const char *dir, const char *name, uint32_t tag, uint64_t off,
                         uint64_t len)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/wl/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f)
		return -errno;
	static unsigned char buf[65536];
	int rc = 0;
	for (uint64_t done = 0; done < len && rc == 0;) {
		size_t n = len - done < sizeof buf ? (size_t)(len - done) : sizeof buf;
		crash_pattern_fill(tag, off + done, buf, n);
		if (fwrite(buf, 1, n, f) != n)
			rc = -EIO;
		done += n;
	}
	if (fclose(f) && rc == 0)
		rc = -errno;
	return rc;
}

#define FSOP "/bin/bo-observe fsop "

/* The shell fd (4..9: guest-init's fd 3 carries the markers) of each name a workload holds open, given out in file order as
 * the parser checks them (at most CRASH_WL_MAX_FDS at once). */
struct fdmap {
	char name[CRASH_WL_MAX_FDS][32];
};

static int fd_of(struct fdmap *m, const struct crash_step *s)
{
	int free_slot = -1;
	for (int i = 0; i < CRASH_WL_MAX_FDS; i++) {
		if (!strcmp(m->name[i], s->arg)) {
			if (s->op == CRASH_OP_CLOSE)
				m->name[i][0] = 0;
			return 4 + i;
		}
		if (free_slot < 0 && !m->name[i][0])
			free_slot = i;
	}
	if (s->op != CRASH_OP_OPEN || free_slot < 0)
		return -EINVAL; /* the parser refuses these */
	snprintf(m->name[free_slot], sizeof(m->name[free_slot]), "%s", s->arg);
	return 4 + free_slot;
}

/* A write through the guest's helper: FLAGS direct, sync, direct-sync or mmap. */
static int emit_fsop_write(FILE *f, const char *dir, const struct crash_step *s, const char *id,
                           const char *kind)
{
	int rc = write_payload(dir, id, s->tag, s->off, s->len);
	if (rc)
		return rc;
	fputs("[ -f ", f), qpath(f, s->path);
	fprintf(f, " ] && " FSOP "write %s /wl/%s %llu ", kind, id, (unsigned long long)s->off);
	qpath(f, s->path);
	return 0;
}

/* One step as a shell command (no trailing newline). */
static int emit_step(FILE *f, const char *dir, const struct crash_step *s, const char *id,
                     uint64_t append_off, struct fdmap *fds)
{
	int fd;
	switch (s->op) {
	case CRASH_OP_MKDIR: fputs("mkdir ", f), qpath(f, s->path); break;
	case CRASH_OP_CREATE: fputs(": >>", f), qpath(f, s->path); break;
	case CRASH_OP_WRITE:
	case CRASH_OP_APPEND: {
		uint64_t off = s->op == CRASH_OP_WRITE ? s->off : append_off;
		int rc = write_payload(dir, id, s->tag, off, s->len);
		if (rc)
			return rc;
		/* the file must exist (the explorer opens it without O_CREAT) */
		fputs("[ -f ", f), qpath(f, s->path);
		fprintf(f,
		        " ] && dd if=/wl/%s bs=65536 seek=%llu oflag=seek_bytes conv=notrunc of=",
		        id, (unsigned long long)off);
		qpath(f, s->path);
		fputs(" 2>/dev/null", f);
		break;
	}
	case CRASH_OP_TRUNCATE:
		fputs("[ -f ", f), qpath(f, s->path);
		fprintf(f, " ] && truncate -s %llu ", (unsigned long long)s->off);
		qpath(f, s->path);
		break;
	case CRASH_OP_RENAME:
		fputs("mv -fT ", f), qpath(f, s->path), fputc(' ', f), qpath(f, s->path2);
		break;
	case CRASH_OP_LINK:
		fputs("ln ", f), qpath(f, s->path), fputc(' ', f), qpath(f, s->path2);
		break;
	case CRASH_OP_UNLINK: fputs("rm ", f), qpath(f, s->path); break;
	case CRASH_OP_RMDIR: fputs("rmdir ", f), qpath(f, s->path); break;
	case CRASH_OP_FSYNC:
	case CRASH_OP_FSYNC_DIR: fputs("sync ", f), qpath(f, s->path); break;
	case CRASH_OP_FDATASYNC: fputs("sync -d ", f), qpath(f, s->path); break;
	case CRASH_OP_SYNC: fputs("sync", f); break;
	case CRASH_OP_MARK: fputs("true", f); break;
	case CRASH_OP_FILL: return -ENOTSUP; /* refused by the dry run */
	case CRASH_OP_FALLOC:
		fprintf(f, FSOP "falloc %s %llu %llu ", crash_falloc_name(s->mode),
		        (unsigned long long)s->off, (unsigned long long)s->len);
		qpath(f, s->path);
		break;
	case CRASH_OP_SYMLINK:
		/* the target as the guest sees it, under its mount point */
		fputs("ln -s ", f), qpath(f, s->path), fputc(' ', f), qpath(f, s->path2);
		break;
	case CRASH_OP_SETXATTR:
		fputs(FSOP "setxattr ", f), qpath(f, s->path), fputc(' ', f), squote(f, s->arg);
		fputc(' ', f), squote(f, s->arg2);
		break;
	case CRASH_OP_REMOVEXATTR:
		fputs(FSOP "removexattr ", f), qpath(f, s->path), fputc(' ', f), squote(f, s->arg);
		break;
	case CRASH_OP_DWRITE: return emit_fsop_write(f, dir, s, id, "direct");
	case CRASH_OP_MWRITE: return emit_fsop_write(f, dir, s, id, "mmap");
	case CRASH_OP_OSYNC: return emit_fsop_write(f, dir, s, id, "sync");
	case CRASH_OP_DWRITE_OSYNC: return emit_fsop_write(f, dir, s, id, "direct-sync");
	case CRASH_OP_OPEN:
		if ((fd = fd_of(fds, s)) < 0)
			return fd;
		/* checked first: a failed redirection of exec ends a non-interactive shell */
		fputs("[ -f ", f), qpath(f, s->path);
		fprintf(f, " ] && exec %d<", fd), qpath(f, s->path);
		break;
	case CRASH_OP_CLOSE:
		if ((fd = fd_of(fds, s)) < 0)
			return fd;
		fprintf(f, "exec %d<&-", fd);
		break;
	case CRASH_OP_FSYNC_FD:
	case CRASH_OP_FDATASYNC_FD:
		if ((fd = fd_of(fds, s)) < 0)
			return fd;
		fprintf(f, FSOP "%s %d", s->op == CRASH_OP_FSYNC_FD ? "fsync" : "fdatasync", fd);
		break;
	}
	return 0;
}

int crash_guest_compile(const struct crash_workload *w, const struct crash_exec *exec,
                        const char *dir, struct bo_err *err)
{
	/* the dry run reports where run steps' appends start, not the setup's */
	for (size_t i = 0; i < w->nsetup; i++)
		if (w->setup[i].op == CRASH_OP_APPEND)
			return bo_errf(err, -ENOTSUP,
			               "line %u: append in the setup is not supported",
			               w->setup[i].line);
	char p[4096];
	snprintf(p, sizeof p, "%s/wl", dir);
	if ((mkdir(dir, 0755) && errno != EEXIST) || (mkdir(p, 0755) && errno != EEXIST))
		return bo_errf(err, -errno, "cannot create %s: %s", p, strerror(errno));
	snprintf(p, sizeof p, "%s/workload.sh", dir);
	FILE *f = fopen(p, "w");
	if (!f)
		return bo_errf(err, -errno, "cannot write %s: %s", p, strerror(errno));
	fprintf(f, "# workload %s, compiled by blackout vmtest compile (docs/vmtest.md)\n",
	        w->name);
	/* the name, for the guest's "workload NAME" mark (bo_mark: guest-init) */
	fputs("BO_WORKLOAD=", f);
	squote(f, w->name);
	fputc('\n', f);
	fputs("# setup: every step must succeed\nbo_setup() {\n\t:\n", f);
	char id[32];
	int rc = 0;
	struct fdmap fds = {{{0}}};
	for (size_t i = 0; rc == 0 && i < w->nsetup; i++) {
		snprintf(id, sizeof id, "s%zu", i);
		fputs("\t", f);
		rc = emit_step(f, dir, &w->setup[i], id, 0, &fds);
		fprintf(f, " || die \"setup line %u failed\"\n", w->setup[i].line);
	}
	/* a failed step's last error line ends in strerror's text: the host names the errno
	 * from it (src/vm/reject.c); cut to fit a mark, and echoed to the console */
	fputs("}\n# bo_fail I: step I failed; its error (the message's last field) is marked "
	      "before \"fail I\"\nbo_fail() {\n"
	      "\tcat /tmp/bo.err >&2\n"
	      "\te=$(sed -n '$s/.*: //p' /tmp/bo.err | tr -d '\\r\\n' | cut -c1-120)\n"
	      "\t[ -z \"$e\" ] || bo_mark \"error $1 $e\"\n"
	      "\tbo_mark \"fail $1\"\n\tsay \"FAIL $1${e:+ $e}\"\n}\n",
	      f);
	fputs("# run: mark \"step i\" before step i, STEP i once it returned; the first "
	      "failure\n# ends the run (mark \"fail i\"); mark \"end\" after the last\nbo_run() "
	      "{\n\t:\n",
	      f);
	for (size_t i = 0; rc == 0 && i < w->nrun; i++) {
		snprintf(id, sizeof id, "r%zu", i);
		fprintf(f, "\tbo_mark \"step %zu\"\n\t{ ", i);
		rc = emit_step(f, dir, &w->run[i], id, exec[i].off, &fds);
		fprintf(f, " ; } 2>/tmp/bo.err && say \"STEP %zu\" || { bo_fail %zu; return; }\n",
		        i, i);
	}
	fputs("\tbo_mark end\n}\n", f);
	if (fclose(f) && rc == 0)
		rc = -errno;
	return rc ? bo_errf(err, rc, "writing %s: %s", dir, strerror(-rc)) : 0;
}

#define GUEST_BYSTANDERS 48

/* The harness's own workloads (vmtest --workload create|append|mixed|overwrite) as
 * explorer workloads, so the one judge judges them too. */
int crash_guest_workload_text(const char *kind, unsigned n, char **text, struct bo_err *err)
{
	*text = NULL;
	if (strcmp(kind, "create") && strcmp(kind, "append") && strcmp(kind, "mixed") &&
	    strcmp(kind, "overwrite"))
		return bo_errf(err, -EINVAL, "'%s': not one of create, append, mixed, overwrite",
		               kind);
	if (n < 1 || n > 1000)
		return bo_errf(err, -EINVAL, "--files %u: 1..1000", n);
	size_t len = 0;
	FILE *f = open_memstream(text, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "name %s\nsummary vmtest's %s workload, %u steps\n", kind, kind, n);
	/* bystanders f<i>, synced before the run and never touched by it; beside them, in
	 * the same directory (so they are allocated side by side), the s<i> that the
	 * overwrite workload rewrites in place */
	fputs("setup\nmkdir /b\nmkdir /w\n", f);
	for (unsigned i = 0; i < GUEST_BYSTANDERS; i++)
		fprintf(f, "create /b/f%u\nwrite /b/f%u 0 8k\ncreate /b/s%u\nwrite /b/s%u 0 8k\n",
		        i, i, i, i);
	fputs("run\n", f);
	bool create = !strcmp(kind, "create") || !strcmp(kind, "mixed");
	bool append = !strcmp(kind, "append") || !strcmp(kind, "mixed");
	if (append)
		fputs("create /w/log\nfsync /w/log\nfsync-dir /w\n", f);
	for (unsigned i = 1; i <= n; i++) {
		if (create)
			fprintf(f, "create /w/c%u\nwrite /w/c%u 0 %s\nfsync /w/c%u\nfsync-dir /w\n",
			        i, i, append ? "12k" : "16k", i);
		if (append)
			fputs("append /w/log 4k\nfsync /w/log\n", f);
		if (!strcmp(kind, "overwrite"))
			fprintf(f, "write /b/s%u 0 8k\nfsync /b/s%u\n", i % GUEST_BYSTANDERS,
			        i % GUEST_BYSTANDERS);
	}
	if (fclose(f)) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}
