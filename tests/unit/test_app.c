// SPDX-License-Identifier: GPL-2.0-or-later
/* test_app.c — blackout app's host side (docs/apps.md): the checker's verdict lines
 * parsed and judged (ok, lost acknowledged work silent, corruption detected by the
 * application, a crashed, failed or hung checker never ok), bad app lines refused, the
 * acknowledgements made before a state's cut, the explorer's workload, the program's
 * directory taken out of the tree, and files that cannot run in the guest refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/app.h"
#include "blackout/crash.h"
#include "tap.h"

#define B(i) (1u << (i))

static const char *HEAD = "BO:OBS chunk 4096\nBO:OBS mount 0\nBO:OBS dir /app\n";
static const char *TAIL = "BO:OBS umount 0\nBO:OBS fsck 0\nBO:OBS end\n";

static int judge_app(const struct crash_promises *p, const char *app, struct crash_outcome *o,
                     struct bo_err *err)
{
	char text[1024];
	snprintf(text, sizeof(text), "%s%s%s", HEAD, app, TAIL);
	struct crash_observation obs;
	memset(err, 0, sizeof(*err));
	int rc = crash_obs_parse_lines(text, strlen(text), &obs, err);
	if (rc)
		return rc;
	app_obs_hide(&obs);
	rc = crash_judge(p, &obs, o);
	crash_observation_free(&obs);
	return rc;
}

static void test_verdicts(const struct crash_promises *p)
{
	struct crash_outcome o;
	struct bo_err err;
	is_int(judge_app(p, "BO:OBS app exit 0\n", &o, &err), 0, "exit 0 judged: %s", err.msg);
	ok(o.broken == 0, "the checker's exit 0 with /app hidden: ok (%s)", o.detail);
	is_int(judge_app(p, "BO:OBS app exit 1\nBO:OBS app-line missing: 4 5\nBO:OBS app-line x\n",
	                 &o, &err),
	       0, "exit 1 judged");
	ok(o.broken == B(CRASH_INV_DURABLE) && !o.detected &&
	       strstr(o.detail, "app: lost acknowledged work: missing: 4 5"),
	   "exit 1: lost acknowledged work, durable, silent, its first line kept (%s)", o.detail);
	judge_app(p, "BO:OBS app exit 2\nBO:OBS app-line integrity_check: bad\n", &o, &err);
	ok(o.broken == B(CRASH_INV_CONSISTENT) && o.detected && !strcmp(o.detected_by, "app") &&
	       strstr(o.detail, "corruption detected: integrity_check: bad"),
	   "exit 2: corruption the application detects (%s by %s)", o.detail, o.detected_by);
	judge_app(p, "BO:OBS app signal 11\nBO:OBS app-line about to crash\n", &o, &err);
	ok(o.broken == B(CRASH_INV_CONSISTENT) && !strcmp(o.detected_by, "checker-crash") &&
	       strstr(o.detail, "the checker crashed (signal 11)"),
	   "a checker killed by a signal is reported crashed, not ok (%s)", o.detail);
	judge_app(p, "BO:OBS app timeout\n", &o, &err);
	ok(o.broken == B(CRASH_INV_CONSISTENT) && !strcmp(o.detected_by, "checker-hang") &&
	       strstr(o.detail, "the checker hung"),
	   "a checker killed at its timeout is reported hung, not ok (%s)", o.detail);
	judge_app(p, "BO:OBS app exit 7\n", &o, &err);
	ok(o.broken == B(CRASH_INV_CONSISTENT) && strstr(o.detail, "the checker failed (exit 7)"),
	   "another exit status is the checker failing (%s)", o.detail);
	judge_app(p, "", &o, &err);
	ok(o.broken == 0, "no app lines (no checker): the filesystem's verdict alone");

	static const struct {
		const char *app, *want;
	} bad[] = {
	    {"BO:OBS app exit 256\n", "0..255"},
	    {"BO:OBS app signal 0\n", "signal"},
	    {"BO:OBS app-line early\n", "before the 'app' line"},
	    {"BO:OBS app exit 0\nBO:OBS app exit 1\n", "one line"},
	    {"BO:OBS app maybe\n", "'app exit N'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = judge_app(p, bad[i].app, &o, &err);
		ok(rc == -EINVAL && strstr(err.msg, bad[i].want), "bad app line %zu refused: %s", i,
		   err.msg);
	}
}

static void test_acks(void)
{
	size_t at[] = {15, 20};
	struct app_acks a = {.at = at, .n = 2, .run0 = 10};
	size_t k = 99;
	ok(app_acks_before(&a, "p5-0", &k) == 0 && k == 0, "cut before the first ack's mark: 0");
	ok(app_acks_before(&a, "p6w-3", &k) == 0 && k == 1, "cut just after it: 1 (%zu)", k);
	ok(app_acks_before(&a, "p11-s2", &k) == 0 && k == 2, "after both: 2 (%zu)", k);
	ok(app_acks_before(&a, "s3", &k) == -EINVAL && app_acks_before(&a, "p", &k) == -EINVAL &&
	       app_acks_before(&a, "p3x", &k) == -EINVAL,
	   "ids that are not the explorer's refused");
	struct crash_workload *w;
	struct bo_err err = {{0}};
	ok(app_workload(3, &w, &err) == 0 && w->nrun == 4 && !strcmp(w->name, "app") &&
	       w->nsetup > 0,
	   "the explorer's workload: bystanders, then 1 + 3 steps");
	crash_workload_free(w);
}

static void test_refusals(void)
{
	char dir[] = "/tmp/test_app.XXXXXX";
	tap_require(mkdtemp(dir) != NULL, "mkdtemp");
	char p[256];
	struct app_files libs = {0};
	struct bo_err err = {{0}};
	snprintf(p, sizeof(p), "%s/none", dir);
	ok(app_check_exec("program", p, &libs, &err) == -ENOENT && strstr(err.msg, p),
	   "a missing program is refused naming it: %s", err.msg);
	ok(app_check_exec("checker", dir, &libs, &err) == -EINVAL && strstr(err.msg, "checker") &&
	       strstr(err.msg, "not a regular file"),
	   "a directory: %s", err.msg);
	snprintf(p, sizeof(p), "%s/plain", dir);
	FILE *f = fopen(p, "w");
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	ok(app_check_exec("program", p, &libs, &err) == -EACCES &&
	       strstr(err.msg, "not executable"),
	   "a file without x: %s", err.msg);
	chmod(p, 0755);
	ok(app_check_exec("program", p, &libs, &err) == 0 && libs.n == 0,
	   "a /bin/sh script is accepted, nothing to carry");
	f = fopen(p, "w");
	fputs("#!/usr/bin/python3\n", f);
	fclose(f);
	ok(app_check_exec("program", p, &libs, &err) == -EINVAL && strstr(err.msg, "python3"),
	   "a script for an interpreter the guest lacks: %s", err.msg);
	f = fopen(p, "w");
	fputs("just text\n", f);
	fclose(f);
	ok(app_check_exec("program", p, &libs, &err) == -EINVAL && strstr(err.msg, "neither"),
	   "neither ELF nor script: %s", err.msg);
	unlink(p);
	rmdir(dir);
	ok(app_check_exec("--with", "/bin/true", &libs, &err) == 0 && libs.n >= 2,
	   "/bin/true: its libraries and loader to carry (%zu)", libs.n);
	app_files_free(&libs);
}

int main(void)
{
	struct crash_workload *w;
	struct bo_err err = {{0}};
	const char *wl = "run\nmark app\n";
	tap_require(crash_workload_parse(wl, strlen(wl), "t", &w, &err) == 0, "parse: %s", err.msg);
	struct crash_exec exec[2];
	memset(exec, 0, sizeof(exec));
	struct crash_oracle *o;
	tap_require(crash_workload_dry_run(w, exec, &err) == 0 &&
	                crash_oracle_new(w, exec, &o, &err) == 0,
	            "oracle: %s", err.msg);
	struct crash_promises p = {.oracle = o, .completed = 1, .boot = CRASH_BOOT_TRUST};
	test_verdicts(&p);
	test_acks();
	test_refusals();
	crash_oracle_free(o);
	crash_workload_free(w);
	return tap_done();
}
