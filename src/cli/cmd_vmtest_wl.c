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

#include "blackout/blk.h"
#include "blackout/crash.h"
#include "cli/cli.h"

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
	struct bo_err err = {{0}};
	rc = crash_guest_compile(w, exec, dir, &err);
	if (rc)
		rc = cli_fail("vmtest compile", "%s", bo_errstr(&err, rc));
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
