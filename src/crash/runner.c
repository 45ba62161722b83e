// SPDX-License-Identifier: GPL-2.0-or-later
/* runner.c — runs a workload's steps on blackout's fs, recording what each did
 * (struct crash_exec), and the dry run that finds where a workload's appends start so
 * another system can replay it byte for byte. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blackout/blk.h"
#include "crash/crash_int.h"

#define FILL_MAX (1ull << 32)

static int write_pattern(struct fs_file *f, uint32_t tag, uint64_t off, uint64_t len,
                         uint64_t *done)
{
	uint8_t buf[65536];
	*done = 0;
	while (*done < len) {
		size_t n = len - *done < sizeof(buf) ? (size_t)(len - *done) : sizeof(buf);
		crash_pattern_fill(tag, off + *done, buf, n);
		ssize_t w = fs_pwrite(f, buf, n, off + *done);
		if (w < 0)
			return (int)w;
		if (w == 0)
			return -ENOSPC;
		*done += (uint64_t)w;
	}
	return 0;
}

static int open_any(struct fs *fs, const char *path, struct fs_file **f)
{
	struct fs_stat st;
	int rc = fs_stat(fs, path, &st);
	if (rc)
		return rc;
	bool dir = (st.mode & 0170000) == 0040000;
	return fs_open(fs, path, dir ? FS_O_DIRECTORY | FS_O_RDONLY : FS_O_RDONLY, 0, f);
}
bool crash_model_supports(enum crash_op op)
{
	return op < CRASH_OP_FALLOC || op == CRASH_OP_SYMLINK || op == CRASH_OP_OSYNC;
}

int crash_workload_model_check(const struct crash_workload *w, struct bo_err *err)
{
	for (size_t i = 0; i < w->nsetup + w->nrun; i++) {
		const struct crash_step *s = i < w->nsetup ? &w->setup[i] : &w->run[i - w->nsetup];
		if (!crash_model_supports(s->op))
			return bo_errf(err, -ENOTSUP,
			               "workload line %u: %s: not supported by the model "
			               "(blackout's ext3)",
			               s->line, crash_op_name(s->op));
	}
	return 0;
}

/* The dry run's stand-in for a step blackout's ext3 does not run: the same effect on
 * the file's size (what later appends need), not on its bytes, nor anything else. */
static int emulate(struct fs *fs, const struct crash_step *s, struct crash_exec *x)
{
	struct fs_stat st;
	struct fs_file *f = NULL;
	int rc = 0;
	memset(x, 0, sizeof(*x));
	switch (s->op) {
	case CRASH_OP_DWRITE:
	case CRASH_OP_MWRITE:
	case CRASH_OP_DWRITE_OSYNC:
		if ((rc = fs_open(fs, s->path, FS_O_WRONLY, 0, &f)) == 0)
			rc = write_pattern(f, s->tag, s->off, s->len, &x->done);
		break;
	case CRASH_OP_FALLOC:
		if ((rc = fs_stat(fs, s->path, &st)))
			break;
		if (s->mode == CRASH_FALLOC_PLAIN || s->mode == CRASH_FALLOC_ZERO) {
			if (s->off + s->len > st.size)
				rc = fs_truncate(fs, s->path, s->off + s->len);
		} else if (s->mode == CRASH_FALLOC_COLLAPSE) {
			/* the kernel refuses a range reaching the end of the file */
			rc = s->off + s->len >= st.size
			         ? -EINVAL
			         : fs_truncate(fs, s->path, st.size - s->len);
		} else if (s->mode == CRASH_FALLOC_INSERT) {
			rc = s->off >= st.size ? -EINVAL
			                       : fs_truncate(fs, s->path, st.size + s->len);
		}
		break;
	case CRASH_OP_SETXATTR:
	case CRASH_OP_REMOVEXATTR: rc = fs_lstat(fs, s->path, &st); break;
	case CRASH_OP_OPEN:
		/* the guest opens regular files only ([ -f PATH ] && exec N<PATH) */
		if ((rc = fs_stat(fs, s->path, &st)) == 0 && (st.mode & 0170000) != 0100000)
			rc = -EISDIR;
		break;
	default: break; /* close, fsync-fd: nothing to the sizes */
	}
	if (f) {
		int c = fs_close(f);
		if (rc == 0)
			rc = c;
	}
	x->rc = rc;
	return rc;
}

int crash_run_step(struct fs *fs, const struct crash_step *s, struct rec_log *log,
                   struct crash_exec *x)
{
	struct fs_file *f = NULL;
	int rc = 0;
	memset(x, 0, sizeof(*x));
	switch (s->op) {
	case CRASH_OP_MKDIR: rc = fs_mkdir(fs, s->path, 0755); break;
	case CRASH_OP_CREATE: rc = fs_open(fs, s->path, FS_O_CREAT | FS_O_WRONLY, 0644, &f); break;
	case CRASH_OP_WRITE:
	case CRASH_OP_OSYNC:
	case CRASH_OP_APPEND:
	case CRASH_OP_FILL: {
		rc = fs_open(fs, s->path, FS_O_WRONLY, 0, &f);
		if (rc)
			break;
		uint64_t off = s->off;
		if (s->op == CRASH_OP_OSYNC) {
			/* O_SYNC: the write returns once it and the file's metadata are
			 * durable, which is what an fsync after it does */
			if ((rc = write_pattern(f, s->tag, off, s->len, &x->done)) == 0)
				rc = fs_fsync(f);
			break;
		}
		if (s->op != CRASH_OP_WRITE) {
			struct fs_stat st;
			rc = fs_fstat(f, &st);
			if (rc)
				break;
			off = st.size;
		}
		x->off = off;
		if (s->op != CRASH_OP_FILL) {
			rc = write_pattern(f, s->tag, off, s->len, &x->done);
			break;
		}
		while (x->done < FILL_MAX) {
			uint64_t d = 0;
			rc = write_pattern(f, s->tag, off + x->done, s->len, &d);
			x->done += d;
			if (rc == -ENOSPC || rc == -EFBIG) {
				rc = 0; /* the point of a fill */
				break;
			}
			if (rc)
				break;
		}
		break;
	}
	case CRASH_OP_TRUNCATE: rc = fs_truncate(fs, s->path, s->off); break;
	case CRASH_OP_RENAME: rc = fs_rename(fs, s->path, s->path2); break;
	case CRASH_OP_LINK: rc = fs_link(fs, s->path, s->path2); break;
	case CRASH_OP_UNLINK: rc = fs_unlink(fs, s->path); break;
	case CRASH_OP_RMDIR: rc = fs_rmdir(fs, s->path); break;
	case CRASH_OP_FSYNC:
	case CRASH_OP_FDATASYNC:
	case CRASH_OP_FSYNC_DIR:
		rc = open_any(fs, s->path, &f);
		if (rc == 0)
			rc = s->op == CRASH_OP_FDATASYNC ? fs_fdatasync(f) : fs_fsync(f);
		break;
	case CRASH_OP_SYNC: rc = fs_sync(fs); break;
	case CRASH_OP_MARK: {
		char m[80];
		snprintf(m, sizeof(m), "mark %s", s->path);
		rc = log ? rec_log_mark(log, m) : 0;
		break;
	}
	case CRASH_OP_SYMLINK: rc = fs_symlink(fs, s->path, s->path2); break;
	default: rc = -ENOSYS; break; /* crash_model_supports: refused by the oracle */
	}
	if (f) {
		int c = fs_close(f);
		if (rc == 0)
			rc = c;
	}
	x->rc = rc;
	return rc;
}

int crash_workload_dry_run(const struct crash_workload *w, struct crash_exec *exec,
                           struct bo_err *err)
{
	struct crash_fscfg fsc = {0};
	int rc = crash_fscfg_parse("ext3", &fsc, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < w->nrun; i++)
		if (w->run[i].op == CRASH_OP_FILL)
			return bo_errf(
			    err, -ENOTSUP,
			    "line %u: fill depends on when the filesystem is full, so it "
			    "cannot be replayed step for step elsewhere",
			    w->run[i].line);
	struct bdev *d = NULL;
	struct fs *fs = NULL;
	struct bo_err e2 = {{0}};
	/* a large scratch device (memory is touched only where written) */
	if ((rc = blk_mem_open(512, (1ull << 30) / 512, &d)))
		return bo_errf(err, rc, "dry run: no memory for a scratch device");
	if ((rc = fs_mkfs(d, &fsc.mk, &e2)) || (rc = fs_mount(d, &fsc.mo, &fs, &e2))) {
		bo_errf(err, rc, "dry run: %s", bo_errstr(&e2, rc));
		goto out;
	}
	struct crash_exec sx;
	for (size_t i = 0; i < w->nsetup + w->nrun; i++) {
		bool setup = i < w->nsetup;
		const struct crash_step *s = setup ? &w->setup[i] : &w->run[i - w->nsetup];
		struct crash_exec *x = setup ? &sx : &exec[i - w->nsetup];
		rc = crash_model_supports(s->op) ? crash_run_step(fs, s, NULL, x)
		                                 : emulate(fs, s, x);
		if (rc == 0 && !setup)
			rc = exec[i - w->nsetup].rc;
		if (rc) {
			bo_errf(err, rc, "dry run, line %u (%s %s): %s", s->line,
			        crash_op_name(s->op), s->path ? s->path : s->arg,
			        bo_errstr(fs_err(fs), rc));
			goto out;
		}
	}
out:
	if (fs)
		fs_abandon(fs);
	blk_close(d);
	return rc;
}
