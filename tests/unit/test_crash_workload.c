// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_workload.c — the workload format: every built-in parses and round-trips
 * through the printer, parse errors name line and column, patterns are traceable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "tap.h"

static int parse(const char *text, struct crash_workload **w, struct bo_err *err)
{
	return crash_workload_parse(text, strlen(text), "t", w, err);
}

static void expect_error(const char *text, const char *want, const char *what)
{
	struct crash_workload *w = NULL;
	struct bo_err err = {{0}};
	int rc = parse(text, &w, &err);
	ok(rc < 0 && w == NULL && strstr(err.msg, want) != NULL, "%s: '%s'", what, err.msg);
	if (rc >= 0 || !strstr(err.msg, want))
		diag("wanted '%s'", want);
}

static void roundtrip(const struct crash_workload *w, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = crash_workload_format(w, f);
	fclose(f);
	struct crash_workload *w2 = NULL;
	struct bo_err err = {{0}};
	if (rc == 0)
		rc = crash_workload_parse(buf, len, "x", &w2, &err);
	ok(rc == 0 && crash_workload_equal(w, w2), "%s round-trips through the printer %s", what,
	   err.msg);
	crash_workload_free(w2);
	free(buf);
}

int main(void)
{
	ok(crash_builtin_count() >= 12, "at least 12 built-in workloads (%zu)",
	   crash_builtin_count());
	for (size_t i = 0; i < crash_builtin_count(); i++) {
		const struct crash_builtin *b = crash_builtin_get(i);
		struct crash_workload *w = NULL;
		struct bo_err err = {{0}};
		int rc = crash_workload_load(b->name, &w, &err);
		ok(rc == 0, "built-in %s parses %s", b->name, err.msg);
		if (rc)
			continue;
		is_str(w->name, b->name, "%s: name line matches the table", b->name);
		ok(w->nsetup > 0 && w->nrun > 0, "%s has setup (bystanders) and run steps",
		   b->name);
		ok(crash_builtin_find(b->name) == b, "%s is found by name", b->name);
		roundtrip(w, b->name);
		crash_workload_free(w);
	}

	ok(crash_zoo_count() == 7, "seven bug-zoo workloads (%zu)", crash_zoo_count());
	for (size_t i = 0; i < crash_zoo_count(); i++) {
		const struct crash_builtin *b = crash_zoo_get(i);
		struct crash_workload *w = NULL;
		struct bo_err err = {{0}};
		int rc = crash_workload_load(b->name, &w, &err);
		ok(rc == 0, "zoo %s parses %s", b->name, err.msg);
		if (rc)
			continue;
		ok(b->source && !strncmp(b->source, "xfstests generic/", 17) && b->fix &&
		       strchr(b->fix, ':'),
		   "zoo %s names its source test and fix commit", b->name);
		is_str(w->name, b->name, "%s: name line matches the table", b->name);
		ok(crash_builtin_find(b->name) == b, "%s is found by name", b->name);
		roundtrip(w, b->name);
		crash_workload_free(w);
	}
	for (size_t i = 0; i < crash_builtin_count(); i++)
		ok(crash_builtin_get(i)->source == NULL, "%s is a classic, not a zoo entry",
		   crash_builtin_get(i)->name);

	struct crash_workload *w = NULL;
	struct bo_err err = {{0}};
	int rc = parse("# comment\nname t1\nsetup\n  create /a   # trailing\nwrite /a 0 4k\n"
	               "run\nappend /a 1k 77\nwrite /a 1M 512 zero\nrename /a /b\nlink /b /c\n"
	               "fsync-dir /\nmark here\nsync\ntruncate /b 100\n",
	               &w, &err);
	tap_require(rc == 0, "a hand-written workload parses %s", err.msg);
	is_int(w->nsetup, 2, "two setup steps");
	is_int(w->nrun, 8, "eight run steps");
	is_int(w->setup[1].op, CRASH_OP_WRITE, "write");
	is_int(w->setup[1].len, 4096, "4k is 4096 bytes");
	is_int(w->setup[1].tag, 1, "first data step gets tag 1");
	is_int(w->run[0].tag, 77, "a given pattern is kept");
	is_int(w->run[1].tag, CRASH_PATTERN_ZERO, "'zero' pattern");
	is_int(w->run[1].off, 1 << 20, "offset 1M");
	is_str(w->run[2].path2, "/b", "rename target");
	is_str(w->run[5].path, "here", "mark name");
	is_int(w->run[7].off, 100, "truncate size");
	is_int(w->run[2].line, 9, "steps remember their line");
	roundtrip(w, "hand-written workload");
	crash_workload_free(w);

	expect_error("run\nfrobnicate /a\n", "line 2, column 1: unknown operation", "unknown op");
	expect_error("run\ncreate a\n", "line 2, column 8: path must be absolute", "relative path");
	expect_error("run\ncreate /a//b\n", "line 2, column 11: empty path component", "//");
	expect_error("run\ncreate /a/../b\n", "column 11: '.' and '..'", "dot-dot");
	expect_error("run\nwrite /a 0\n", "line 2, column 11: 'write' needs PATH OFFSET LEN",
	             "missing operand");
	expect_error("run\nwrite /a x 10\n", "line 2, column 10: offset: 'x' is not a size",
	             "bad offset");
	expect_error("run\nwrite /a 0 1G\n", "line 2, column 12: length is larger than 64M",
	             "write too large");
	expect_error("run\nappend /a 0\n", "column 11: length must be at least 1", "zero length");
	expect_error("run\nsync now\n", "line 2, column 6: unexpected operand", "extra operand");
	expect_error("create /a\nrun\n", "line 1, column 1: operation before 'setup' or 'run'",
	             "op outside a section");
	expect_error("setup\ncreate /a\n", "no 'run' section", "no run");
	expect_error("run\nsetup\n", "line 2, column 1: 'setup' must come before", "order");
	expect_error("run\nwrite /a 0 1 0\n", "column 14: pattern must be", "pattern 0");
	expect_error("run\nwrite /a 0 1 99999999999\n", "pattern must be", "pattern too big");
	expect_error("run\ncreate /a\x01\n", "line 2, column 10: control byte", "control byte");
	expect_error("name a b\nrun\n", "line 1, column 8: a workload name is one word", "name");
	expect_error("run\nwrite /a 1T 1\n", "offset + length is past 1T", "past 1T");

	/* the steps the published reproducers and the generator need */
	rc = parse("setup\ncreate /f\nwrite /f 0 16k\nopen h /f\nrun\n"
	           "falloc /f keep-size 0 64k\nfalloc /f punch-hole 4k 4k\n"
	           "falloc /f zero-range 0 1k\nfalloc /f collapse 4k 4k\n"
	           "falloc /f insert 0 4k\nfalloc /f plain 0 1M\nsymlink /f /l\n"
	           "setxattr /f user.k v1\nremovexattr /f user.k\ndwrite /f 0 4k\n"
	           "mwrite /f 1k 100 9\nosync /f 8k 4k\ndwrite-osync /f 0 4k zero\n"
	           "unlink /f\nfsync-fd h\nfdatasync-fd h\nclose h\nopen h /l\n",
	           &w, &err);
	tap_require(rc == 0, "every new step parses %s", err.msg);
	is_int(w->nrun, 18, "eighteen run steps");
	is_int(w->run[0].op, CRASH_OP_FALLOC, "falloc");
	is_int(w->run[0].mode, CRASH_FALLOC_KEEP_SIZE, "keep-size mode");
	is_int(w->run[3].mode, CRASH_FALLOC_COLLAPSE, "collapse mode");
	is_int(w->run[1].off, 4096, "falloc offset");
	is_int(w->run[5].len, 1 << 20, "falloc length");
	is_str(w->run[6].path2, "/l", "symlink's link path");
	is_str(w->run[7].arg, "user.k", "xattr name");
	is_str(w->run[7].arg2, "v1", "xattr value");
	is_int(w->run[10].tag, 9, "mwrite keeps its pattern");
	is_int(w->run[12].tag, CRASH_PATTERN_ZERO, "dwrite-osync zero pattern");
	is_int(w->run[14].op, CRASH_OP_FSYNC_FD, "fsync-fd");
	is_str(w->run[14].arg, "h", "fd name");
	roundtrip(w, "the new steps");
	ok(!crash_model_supports(CRASH_OP_FALLOC) && crash_model_supports(CRASH_OP_SYMLINK) &&
	       crash_model_supports(CRASH_OP_OSYNC) && !crash_model_supports(CRASH_OP_OPEN),
	   "blackout's ext3 runs symlink and osync, not falloc or open");
	rc = crash_workload_model_check(w, &err);
	ok(rc == -ENOTSUP && strstr(err.msg, "line 4: open: not supported by the model "
	                                     "(blackout's ext3)"),
	   "the model check names the first step it cannot run: %s", err.msg);
	crash_workload_free(w);

	expect_error("run\nfalloc /a sideways 0 1\n", "line 2, column 11: falloc mode must be",
	             "bad falloc mode");
	expect_error("run\nfalloc /a plain 0\n", "'falloc' needs PATH MODE OFFSET LEN",
	             "falloc operands");
	expect_error("run\nsetxattr /a trusted.x 1\n", "column 13: xattr name must be 'user.'",
	             "xattr namespace");
	expect_error("run\nclose h\n", "line 2, column 7: fd 'h' is not open", "close unopened");
	expect_error("run\nopen h /a\nopen h /b\n", "line 3, column 6: fd 'h' is already open",
	             "open twice");
	expect_error("run\nopen a /a\nopen b /a\nopen c /a\nopen d /a\nopen e /a\nopen f /a\n"
	             "open g /a\n",
	             "line 8, column 6: more than 6 files open", "seven fds");
	expect_error("run\nopen h-1 /a\n", "column 7: an fd name may hold", "fd name");
	expect_error("run\ndwrite /a 1T 4k\n", "offset + length is past 1T", "dwrite past 1T");

	uint8_t buf[100];
	crash_pattern_fill(5, 3, buf, sizeof(buf));
	int same = 1;
	for (int i = 0; i < 100; i++)
		same &= buf[i] == crash_pattern_byte(5, 3 + (uint64_t)i);
	ok(same, "pattern_fill equals pattern_byte at every offset");
	int differ = 0;
	for (int i = 0; i < 100; i++)
		differ += crash_pattern_byte(5, (uint64_t)i) != crash_pattern_byte(6, (uint64_t)i);
	ok(differ > 90, "two tags differ at almost every byte (%d/100)", differ);
	ok(crash_pattern_byte(CRASH_PATTERN_ZERO, 12345) == 0, "the zero pattern is zeros");
	return tap_done();
}
