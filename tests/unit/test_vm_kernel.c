// SPDX-License-Identifier: GPL-2.0-or-later
/* test_vm_kernel.c — the guest kernel a real-kernel run names: the series each cache
 * holds (vm_kernel_cache), the release read from it (vm_kernel_release), the run step the
 * kernel refused named from the recording's marks (vm_rejected), and both carried by the
 * result's JSON (written only when set, read back) and its summary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/rec.h"
#include "blackout/vmexplore.h"
#include "tap.h"

static char dir[] = "/tmp/test_vm_kernel.XXXXXX";

static void write_file(const char *name, const char *text)
{
	char p[128];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	tap_require(f && fputs(text, f) >= 0 && fclose(f) == 0, "wrote %s", name);
}

/* A recording holding only marks, saved as NAME; returns its path in a static buffer. */
static const char *marks_log(const char *name, const char *const *marks)
{
	static char p[128];
	struct rec_log *log = NULL;
	struct bo_err err = {{0}};
	tap_require(rec_log_new(512, 1024, &log) == 0, "a log");
	for (size_t i = 0; marks[i]; i++)
		tap_require(rec_log_mark(log, marks[i]) == 0, "mark %s", marks[i]);
	snprintf(p, sizeof p, "%s/%s", dir, name);
	tap_require(rec_log_save(log, p, &err) == 0, "saved %s", name);
	rec_log_free(log);
	return p;
}

static void series(void)
{
	is_str(vm_kernel_cache(NULL), "vm", "no series: 6.1's cache, build/vm");
	is_str(vm_kernel_cache("6.1"), "vm", "6.1: build/vm");
	is_str(vm_kernel_cache("6.12"), "vm-6.12", "6.12: build/vm-6.12");
	ok(vm_kernel_cache("6.3") == NULL && vm_kernel_cache("") == NULL &&
	       vm_kernel_cache("6.12 ") == NULL,
	   "any other series has no cache");
	struct vm_explore_opts o = {
	    .cfg = {.stack = "mem(size=64M)", .fs = "btrfs", .workload = "create"},
	    .kernel = "6.3"};
	struct bo_err err = {{0}};
	is_int(vm_explore_check(&o, &err), -EINVAL, "vm_explore_check refuses --kernel 6.3");
	is_str(err.msg, "--kernel: 6.1 or 6.12, not '6.3'", "naming the series it knows");
	o.kernel = "6.12";
	is_int(vm_explore_check(&o, &err), 0, "and takes 6.12");
}

static void release(void)
{
	char buf[64];
	struct bo_err err = {{0}};
	write_file("kver", "6.12.118+deb12-cloud-amd64\n");
	is_int(vm_kernel_release(dir, buf, sizeof buf, &err), 0, "a cache's kver reads");
	is_str(buf, "6.12.118+deb12-cloud-amd64", "as the release, without its newline");
	write_file("kver", "6.1 $(reboot)\n");
	is_int(vm_kernel_release(dir, buf, sizeof buf, &err), -EINVAL,
	       "a kver that is not a release is refused");
	ok(strstr(err.msg, "not a kernel release") != NULL, "saying so: %s", err.msg);
	char p[128];
	snprintf(p, sizeof p, "%s/kver", dir);
	unlink(p);
	is_int(vm_kernel_release(dir, buf, sizeof buf, &err), -ENOENT, "no kver: -ENOENT");
}

static void rejected(void)
{
	struct crash_workload *w = NULL;
	struct bo_err err = {{0}};
	const char *text = "name x\nsetup\ncreate /foo\nwrite /foo 0 16k\nrun\nfsync /foo\n"
	                   "falloc /foo collapse 4096 4096\nfsync /foo\n";
	tap_require(crash_workload_parse(text, strlen(text), "x", &w, &err) == 0, "a workload");
	char buf[256];
	const char *refused[] = {"step 0", "step 1", "error 1 Operation not supported", "fail 1",
	                         NULL};
	is_int(vm_rejected(marks_log("a.log", refused), w, buf, sizeof buf, &err), 0,
	       "a recording whose step 1 failed reads");
	is_str(buf, "step 1 (falloc /foo collapse 4k 4k): rejected by the kernel: EOPNOTSUPP",
	       "the refused step, as the workload writes it, and its errno by name");
	const char *full[] = {"step 0", "step 1", "error 1 No space left on device", "fail 1",
	                      NULL};
	vm_rejected(marks_log("b.log", full), w, buf, sizeof buf, &err);
	is_str(buf, "step 1 (falloc /foo collapse 4k 4k): failed in the kernel: ENOSPC",
	       "an error the filesystem could not carry out is a failure, not a refusal");
	const char *silent[] = {"step 0", "fail 0", NULL};
	vm_rejected(marks_log("c.log", silent), w, buf, sizeof buf, &err);
	is_str(buf, "step 0 (fsync /foo): failed without an error from the kernel",
	       "a step that failed without an error line says so");
	const char *odd[] = {"step 0", "error 0 Something new", "fail 0", NULL};
	vm_rejected(marks_log("d.log", odd), w, buf, sizeof buf, &err);
	is_str(buf, "step 0 (fsync /foo): rejected by the kernel: Something new",
	       "a message no errno has is kept as the guest printed it");
	const char *clean[] = {"step 0", "step 1", "step 2", "end", NULL};
	vm_rejected(marks_log("e.log", clean), w, buf, sizeof buf, &err);
	is_str(buf, "", "a run whose every step returned names nothing");
	crash_workload_free(w);
}

static void result_json(void)
{
	struct crash_result r = {.nshards = 1};
	snprintf(r.stack, sizeof r.stack, "mem(size=64M)");
	snprintf(r.fs, sizeof r.fs, "linux-btrfs,defaults");
	snprintf(r.workload, sizeof r.workload, "x");
	char *plain = NULL, *vm = NULL;
	size_t n = 0, m = 0;
	FILE *f = open_memstream(&plain, &n);
	crash_result_write_json(&r, f);
	fclose(f);
	ok(!strstr(plain, "\"kernel\"") && !strstr(plain, "\"rejected\""),
	   "a result without a kernel writes neither field (its bytes as before)");
	snprintf(r.kernel, sizeof r.kernel, "6.1.0-57-cloud-amd64");
	snprintf(r.rejected, sizeof r.rejected, "step 1 (x): rejected by the kernel: EINVAL");
	f = open_memstream(&vm, &m);
	crash_result_write_json(&r, f);
	fclose(f);
	struct crash_result *back = NULL;
	struct bo_err err = {{0}};
	is_int(crash_result_read_json(vm, m, &back, &err), 0, "a real-kernel result reads back");
	if (back) {
		is_str(back->kernel, "6.1.0-57-cloud-amd64", "with its kernel");
		is_str(back->rejected, r.rejected, "and its refused step");
		char *text = NULL;
		size_t t = 0;
		f = open_memstream(&text, &t);
		crash_result_print(back, f);
		fclose(f);
		ok(strstr(text, "\nkernel:   6.1.0-57-cloud-amd64\n") &&
		       strstr(text, "\nrejected: step 1 (x): rejected by the kernel: EINVAL\n"),
		   "the summary names both");
		free(text);
		crash_result_free(back);
	}
	free(plain);
	free(vm);
}

int main(void)
{
	tap_require(mkdtemp(dir) != NULL, "a scratch directory");
	series();
	release();
	rejected();
	result_json();
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return tap_done();
}
