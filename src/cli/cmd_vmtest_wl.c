/* cmd_vmtest_wl.c — the crash explorer's workloads in the vmtest guest, and the
 * explorer's oracle on what the kernel recovered (docs/vmtest.md, "Explorer
 * workloads"). Two plumbing commands scripts/vmtest calls:
 *
 *   blackout vmtest compile WORKLOAD DIR
 *       DIR/workload.sh (busybox ash: bo_setup, bo_run) and the files in DIR/wl (the bytes of
 *       every write, as the explorer's patterns make them, at the offsets a dry run
 *       on blackout's ext3 found), for the initramfs.
 *   blackout vmtest judge WORKLOAD IMAGE COMPLETED [--writeback]
 *       the explorer's oracle on IMAGE, an ext3 image the guest recovered and
 *       unmounted, at crash point COMPLETED (run steps that had returned): one
 *       line "broken INV,... read_errors N detail TEXT". Exit 0, or 1 when the image
 *       cannot be read back (its message on stderr). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/blk.h"
#include "blackout/crash.h"
#include "cli/cli.h"

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

/* One step as a shell command (no trailing newline). */
static int emit_step(FILE *f, const char *dir, const struct crash_step *s, const char *id,
                     uint64_t append_off)
{
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
		fputs("mv -f ", f), qpath(f, s->path), fputc(' ', f), qpath(f, s->path2);
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
	}
	return 0;
}

/* The workload and what a dry run saw each of its run steps do. 0, or the exit
 * status of a failure it reported (nothing to free then). */
static int load(const char *cmd, const char *name, struct crash_workload **w,
                struct crash_exec **exec)
{
	struct bo_err err = {{0}};
	*exec = NULL;
	int rc = crash_workload_load(name, w, &err);
	if (rc)
		return cli_fail(cmd, "%s", bo_errstr(&err, rc));
	*exec = calloc((*w)->nrun ? (*w)->nrun : 1, sizeof(**exec));
	if (!*exec)
		rc = cli_fail(cmd, "out of memory");
	else if ((rc = crash_workload_dry_run(*w, *exec, &err)))
		rc = cli_fail(cmd, "%s: %s", (*w)->name, bo_errstr(&err, rc));
	if (rc) {
		free(*exec);
		crash_workload_free(*w);
	}
	return rc;
}

static int compile(const char *name, const char *dir)
{
	struct crash_workload *w;
	struct crash_exec *exec;
	int rc = load("vmtest compile", name, &w, &exec);
	if (rc)
		return rc;
	/* the dry run reports where run steps' appends start, not the setup's */
	for (size_t i = 0; i < w->nsetup; i++)
		if (w->setup[i].op == CRASH_OP_APPEND) {
			rc = cli_fail("vmtest compile",
			              "line %u: append in the setup is not supported",
			              w->setup[i].line);
			goto out;
		}
	char p[4096];
	snprintf(p, sizeof p, "%s/wl", dir);
	if ((mkdir(dir, 0755) && errno != EEXIST) || (mkdir(p, 0755) && errno != EEXIST)) {
		rc = cli_fail("vmtest compile", "cannot create %s: %s", p, strerror(errno));
		goto out;
	}
	snprintf(p, sizeof p, "%s/workload.sh", dir);
	FILE *f = fopen(p, "w");
	if (!f) {
		rc = cli_fail("vmtest compile", "cannot write %s: %s", p, strerror(errno));
		goto out;
	}
	fprintf(f, "# workload %s, compiled by blackout vmtest compile (docs/vmtest.md)\n",
	        w->name);
	fputs("# setup: every step must succeed\nbo_setup() {\n\t:\n", f);
	char id[32];
	for (size_t i = 0; rc == 0 && i < w->nsetup; i++) {
		snprintf(id, sizeof id, "s%zu", i);
		fputs("\t", f);
		rc = emit_step(f, dir, &w->setup[i], id, 0);
		fprintf(f, " || die \"setup line %u failed\"\n", w->setup[i].line);
	}
	fputs("}\n# run: STEP i once step i returned; the first failure ends the run\nbo_run() "
	      "{\n\t:\n",
	      f);
	for (size_t i = 0; rc == 0 && i < w->nrun; i++) {
		snprintf(id, sizeof id, "r%zu", i);
		fputs("\t", f);
		rc = emit_step(f, dir, &w->run[i], id, exec[i].off);
		fprintf(f, " && say \"STEP %zu\" || { say \"FAIL %zu\"; return; }\n", i, i);
	}
	fputs("}\n", f);
	if (fclose(f) && rc == 0)
		rc = -errno;
	if (rc)
		rc = cli_fail("vmtest compile", "writing %s: %s", dir, strerror(-rc));
out:
	free(exec);
	crash_workload_free(w);
	return rc;
}

static int judge(const char *name, const char *image, const char *completed_s, bool writeback)
{
	char *end;
	unsigned long long completed = strtoull(completed_s, &end, 10);
	if (!*completed_s || *end)
		return cli_usage_error("vmtest judge", "COMPLETED: a whole number, not '%s'",
		                       completed_s);
	struct crash_workload *w;
	struct crash_exec *exec;
	int rc = load("vmtest judge", name, &w, &exec);
	if (rc)
		return rc;
	struct bo_err err = {{0}};
	struct crash_oracle *o = NULL;
	struct bdev *d = NULL, *file = NULL;
	if (completed > w->nrun) {
		rc = cli_usage_error("vmtest judge", "COMPLETED %llu: the workload has %zu steps",
		                     completed, w->nrun);
		goto out;
	}
	if ((rc = crash_oracle_new(w, exec, &o, &err))) {
		rc = cli_fail("vmtest judge", "%s", bo_errstr(&err, rc));
		goto out;
	}
	rc = blk_file_open(image, 512, 0, BLK_FILE_RDONLY, &file, &err);
	if (rc == 0)
		rc = blk_cow_open(file, &d); /* the image file stays as the guest left it */
	if (rc) {
		rc = cli_fail("vmtest judge", "%s", bo_errstr(&err, rc));
		goto out;
	}
	struct crash_verdict v;
	rc = crash_judge_recovered(o, d, (size_t)completed, writeback ? CRASH_ORACLE_WRITEBACK : 0,
	                           &v, &err);
	if (rc) {
		rc = cli_fail("vmtest judge", "reading the recovered image back: %s",
		              bo_errstr(&err, rc));
		goto out;
	}
	printf("broken ");
	bool any = false;
	for (int i = 0; i < CRASH_INV_N; i++)
		if (v.broken & ~v.allowed & (1u << i)) {
			printf("%s%s", any ? "," : "", crash_inv_name((enum crash_inv)i));
			any = true;
		}
	printf("%s read_errors %u detail %s\n", any ? "" : "-", v.read_errors,
	       v.detail[0] ? v.detail : "-");
	rc = 0;
out:
	blk_close(d);
	blk_close(file);
	crash_oracle_free(o);
	free(exec);
	crash_workload_free(w);
	return rc;
}

int cmd_vmtest_plumbing(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "compile")) {
		if (argc != 4)
			return cli_usage_error("vmtest compile",
			                       "usage: vmtest compile WORKLOAD DIR");
		return compile(argv[2], argv[3]);
	}
	bool wb = argc == 6 && !strcmp(argv[5], "--writeback");
	if (argc != 5 && !wb)
		return cli_usage_error(
		    "vmtest judge", "usage: vmtest judge WORKLOAD IMAGE COMPLETED [--writeback]");
	return judge(argv[2], argv[3], argv[4], wb);
}
