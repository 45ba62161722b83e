// SPDX-License-Identifier: GPL-2.0-or-later
/* test_gen.c — the workload generator (docs/gen.md): seq-1's counts and why each
 * rejected sequence was rejected, every generated workload parses, invalid sequences
 * never come out, and the same seed gives the same random workloads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/gen.h"
#include "tap.h"

struct seen {
	unsigned long n, bad;
	char first_bad[600];
	unsigned long into_self, first_unlink_bar, falloc, fsync_after;
	char *all; /* the texts, concatenated */
	size_t len;
	FILE *f;
};

static int collect(void *ctx, const char *name, const char *text)
{
	struct seen *s = ctx;
	struct crash_workload *w = NULL;
	struct bo_err err = {{0}};
	s->n++;
	if (crash_workload_parse(text, strlen(text), name, &w, &err) != 0 ||
	    strcmp(w->name, name)) {
		if (!s->bad++)
			snprintf(s->first_bad, sizeof s->first_bad, "%s: %s", name, err.msg);
	} else {
		/* mv A A/C can never run: it must never be generated */
		for (size_t i = 0; i < w->nrun; i++)
			if (w->run[i].op == CRASH_OP_RENAME && !strcmp(w->run[i].path, "/A") &&
			    !strcmp(w->run[i].path2, "/A/C"))
				s->into_self++;
		/* /bar does not exist until a step makes it */
		if (w->run[0].op == CRASH_OP_UNLINK && !strcmp(w->run[0].path, "/bar"))
			s->first_unlink_bar++;
		if (w->run[0].op == CRASH_OP_FALLOC)
			s->falloc++;
	}
	crash_workload_free(w);
	if (s->f)
		fprintf(s->f, "%s\n%s", name, text);
	return 0;
}

int main(void)
{
	struct gen_stats st;
	struct bo_err err = {{0}};
	struct seen s = {0};
	int rc = gen_exhaustive(1, collect, &s, &st, &err);
	tap_require(rc == 0, "seq-1 generates %s", err.msg);
	/* docs/gen.md explains each figure */
	is_int(st.templates, 112, "112 operations with operands");
	is_int(st.choices, 412, "412 choices per position (100 x 4 persistence + 12 syncs)");
	is_int(st.workloads, 175, "seq-1: 175 valid workloads");
	is_int(st.rejected, 237, "seq-1: 237 rejected");
	is_int(st.reason[GEN_REJ_KIND], 13, "13 fdatasync a directory after changing its names");
	is_int(st.workloads + st.rejected, st.choices, "valid + rejected = every choice");
	is_int(st.reason[GEN_REJ_MISSING], 148, "148 name a file or xattr target that is absent");
	is_int(st.reason[GEN_REJ_EXISTS], 52, "52 create a name that exists");
	is_int(st.reason[GEN_REJ_INTO_SELF], 4, "4 are mv /A /A/C (with each persistence)");
	is_int(st.reason[GEN_REJ_NOT_EMPTY], 12, "12 remove or rename over a non-empty dir");
	is_int(st.reason[GEN_REJ_NO_XATTR], 8, "8 remove an xattr never set");
	is_int(s.n, 175, "the callback saw each workload once");
	ok(s.bad == 0, "every seq-1 workload parses %s", s.first_bad);
	ok(s.into_self == 0, "mv /A /A/C is never generated");
	ok(s.first_unlink_bar == 0, "unlink /bar (absent at the start) never comes first");
	is_int(s.falloc, 2 * 5 * 4, "falloc: 2 existing files x 5 modes x 4 persistence");

	struct seen s2 = {0};
	rc = gen_exhaustive(2, collect, &s2, &st, &err);
	ok(rc == 0 && st.workloads == 30250 && st.rejected == 139494,
	   "seq-2: 30250 workloads, 139494 rejected (%llu, %llu)", (unsigned long long)st.workloads,
	   (unsigned long long)st.rejected);
	ok(s2.bad == 0, "every seq-2 workload parses %s", s2.first_bad);
	ok(s2.into_self == 0, "nor in seq-2: /A/C is under /A whatever came before (%lu)",
	   s2.into_self);
	rc = gen_exhaustive(3, NULL, NULL, &st, &err);
	ok(rc == 0 && st.workloads + st.rejected == 412ull * 412 * 412,
	   "seq-3 counted: %llu + %llu = 412^3", (unsigned long long)st.workloads,
	   (unsigned long long)st.rejected);
	rc = gen_exhaustive(4, NULL, NULL, &st, &err);
	ok(rc < 0 && strstr(err.msg, "1..3"), "--len 4 is refused: %s", err.msg);

	/* known sequences, each rejected at its step for its reason (or not at all) */
	static const struct {
		const char *steps[3];
		unsigned n;
		int rc;
		unsigned at;
		enum gen_reject why;
	} cases[] = {
	    {{"rename /A /A/C"}, 1, 1, 0, GEN_REJ_INTO_SELF},
	    {{"unlink /bar"}, 1, 1, 0, GEN_REJ_MISSING},
	    {{"create /foo"}, 1, 1, 0, GEN_REJ_EXISTS},
	    {{"rmdir /A"}, 1, 1, 0, GEN_REJ_NOT_EMPTY},
	    {{"removexattr /foo user.bo"}, 1, 1, 0, GEN_REJ_NO_XATTR},
	    {{"rename /A /B", "create /A/bar"}, 2, 1, 1, GEN_REJ_NO_PARENT},
	    {{"symlink /foo /bar", "write /bar 0 8k"}, 2, 1, 1, GEN_REJ_KIND},
	    {{"symlink /foo /bar", "fsync /bar"}, 2, 1, 1, GEN_REJ_KIND},
	    /* a hard link shares the size: a collapse through the other name sees it */
	    {{"link /foo /bar", "truncate /foo 2k", "falloc /bar collapse 4096 4096"},
	     3,
	     1,
	     2,
	     GEN_REJ_RANGE},
	    {{"link /foo /bar", "setxattr /foo user.bo v1", "removexattr /bar user.bo"},
	     3,
	     0,
	     0,
	     0},
	    {{"rename /A /B", "fsync /B", "mkdir /A"}, 3, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned at = 99;
		enum gen_reject why = GEN_REJ_N;
		rc = gen_check(cases[i].steps, cases[i].n, &at, &why, &err);
		ok(rc == cases[i].rc && (rc == 0 || (at == cases[i].at && why == cases[i].why)),
		   "%s%s%s: %s at step %u", cases[i].steps[0], cases[i].n > 1 ? " ... " : "",
		   cases[i].n > 1 ? cases[i].steps[cases[i].n - 1] : "",
		   rc ? gen_reject_name(why) : "runs", rc ? at + 1 : 0);
	}
	const char *bogus[] = {"mv A A/B"};
	unsigned at;
	enum gen_reject why;
	rc = gen_check(bogus, 1, &at, &why, &err);
	ok(rc == -EINVAL && strstr(err.msg, "'mv A A/B' is not one of"), "an unknown step: %s",
	   err.msg);

	/* random: the same seed gives the same workloads, another seed others */
	struct seen r1 = {0}, r2 = {0}, r3 = {0};
	r1.f = open_memstream(&r1.all, &r1.len);
	r2.f = open_memstream(&r2.all, &r2.len);
	r3.f = open_memstream(&r3.all, &r3.len);
	gen_random(42, 50, 8, collect, &r1, &st, &err);
	gen_random(42, 50, 8, collect, &r2, &st, &err);
	gen_random(43, 50, 8, collect, &r3, &st, &err);
	fclose(r1.f);
	fclose(r2.f);
	fclose(r3.f);
	ok(r1.n == 50 && r1.bad == 0, "50 random workloads of 8 steps, all parse %s", r1.first_bad);
	ok(st.rejected > 0, "invalid draws were counted (%llu) and drawn again",
	   (unsigned long long)st.rejected);
	ok(r1.len == r2.len && !memcmp(r1.all, r2.all, r1.len), "seed 42 twice: the same bytes");
	ok(r1.len != r3.len || memcmp(r1.all, r3.all, r1.len), "seed 43: other workloads");
	ok(strstr(r1.all, "name rand42-000001\n") != NULL, "deterministic names rand<seed>-<i>");
	free(r1.all);
	free(r2.all);
	free(r3.all);
	return tap_done();
}
