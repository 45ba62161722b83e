// SPDX-License-Identifier: GPL-2.0-or-later
/* test_shrink.c — two-axis shrinking (docs/shrink.md): ddmin finds the failing core of
 * synthetic sets (unresolved candidates set aside), a planted 8-step lost-fsync
 * workload shrinks to its 2 steps on blackout's model with the state that lost the
 * fewest sectors, and the dm-flakey script drops writes where it says. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/shrink.h"
#include "tap.h"

/* A predicate over subsets of 0..n-1: fails when every index of need[] is in; a
 * candidate holding `unres_if` without `unres_unless` cannot run. */
struct pred {
	size_t need[4], nneed;
	long unres_if, unres_unless;
	unsigned calls, repeats;
	uint64_t seen[512];
};

static bool has(const size_t *k, size_t n, size_t x)
{
	for (size_t i = 0; i < n; i++)
		if (k[i] == x)
			return true;
	return false;
}

static int pred_test(void *ctx, const size_t *keep, size_t n, enum shrink_verdict *v)
{
	struct pred *p = ctx;
	uint64_t mask = 0;
	for (size_t i = 0; i < n; i++)
		mask |= 1ull << keep[i];
	for (unsigned i = 0; i < p->calls && i < 512; i++)
		p->repeats += p->seen[i] == mask;
	if (p->calls < 512)
		p->seen[p->calls] = mask;
	p->calls++;
	if (p->unres_if >= 0 && has(keep, n, (size_t)p->unres_if) &&
	    !has(keep, n, (size_t)p->unres_unless)) {
		*v = SHRINK_UNRESOLVED;
		return 0;
	}
	bool all = true;
	for (size_t i = 0; i < p->nneed; i++)
		all &= has(keep, n, p->need[i]);
	*v = all ? SHRINK_FAIL : SHRINK_PASS;
	return 0;
}

static void ddmin_case(size_t n, const size_t *need, size_t nneed, long unres_if, long unres_unless,
                       const char *what)
{
	struct pred p = {.nneed = nneed, .unres_if = unres_if, .unres_unless = unres_unless};
	memcpy(p.need, need, nneed * sizeof(*need));
	size_t out[64], nout = 0;
	unsigned tests = 0;
	int rc = shrink_ddmin(n, pred_test, &p, out, &nout, &tests);
	bool same = rc == 0 && nout == nneed;
	for (size_t i = 0; same && i < nneed; i++)
		same = out[i] == need[i];
	ok(same, "ddmin over %zu: %s -> %zu elements (%u tests)", n, what, nout, tests);
	ok(tests == p.calls && p.repeats == 0,
	   "ddmin counts the %u candidates it tested, none twice (%u repeated)", p.calls,
	   p.repeats);
}

static int read_all(const char *path, char **text)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *buf = NULL;
	size_t cap = 0, len = 0;
	int c;
	while ((c = fgetc(f)) != EOF) {
		if (len + 2 > cap && !(buf = realloc(buf, cap = cap * 2 + 256)))
			return -ENOMEM;
		buf[len++] = (char)c;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	buf[len] = 0;
	*text = buf;
	return 0;
}

static const char lost8[] =
    "name lost8\n"
    "setup\nmkdir /d\ncreate /f\nwrite /f 0 16k\ncreate /g\n"
    "run\nmkdir /x\ncreate /y\nwrite /f 0 8k\ntruncate /g 1k\nfsync /f\nrename /y /z\n"
    "mkdir /x/w\nunlink /g\n";
static const char stack[] = "cache(size=64k,flush=honor) > disk > mem(size=8M)";
static const char fs[] = "ext3,data=ordered,barrier=0";

/* Every failing state of wl with the signature, measured as the shrinker measures
 * them: the fewest lost + damaged sectors among them. */
static uint64_t fewest(const struct crash_workload *wl, unsigned inv, bool silent, size_t *n)
{
	struct crash_config c = {.stack = stack, .fs = fs, .wl = wl, .max_states = 500};
	struct crash_result *r;
	struct bo_err err = {{0}};
	uint64_t best = UINT64_MAX;
	*n = 0;
	if (crash_explore(&c, &r, &err))
		return best;
	for (size_t i = 0; i < r->nfail; i++) {
		if (!(r->fail[i].broken & inv) || (silent && r->fail[i].detected))
			continue;
		struct crash_config one = c;
		one.state_id = r->fail[i].id;
		one.map_damage = true;
		struct crash_result *o;
		if (crash_explore(&one, &o, &err))
			continue;
		uint64_t s = 0;
		for (size_t j = 0; j < o->ndamage; j++)
			s += o->damage[j].count;
		if (s < best)
			best = s;
		(*n)++;
		crash_result_free(o);
	}
	crash_result_free(r);
	return best;
}

static void planted(void)
{
	struct crash_workload *w;
	struct bo_err err = {{0}};
	tap_require(crash_workload_parse(lost8, strlen(lost8), "lost8", &w, &err) == 0,
	            "its workload parses %s", err.msg);
	struct shrink_cfg cfg = {.stack = stack,
	                         .fs = fs,
	                         .wl = w,
	                         .max_states = 500,
	                         .silent = -1,
	                         .max_candidates = 100000};
	struct shrink_result res;
	int rc = shrink_workload(&cfg, &res, &err);
	ok(rc == 0, "the planted 8-step workload shrinks (%s)", rc ? err.msg : "ok");
	if (rc) {
		crash_workload_free(w);
		return;
	}
	is_int(res.nrun_before, 8, "it had 8 run steps");
	ok(res.inv == 1u << CRASH_INV_DURABLE && res.silent,
	   "its signature is durable, broken silently");
	ok(res.wl->nrun == 2 && res.wl->run[0].op == CRASH_OP_WRITE &&
	       !strcmp(res.wl->run[0].path, "/f") && res.wl->run[1].op == CRASH_OP_FSYNC &&
	       !strcmp(res.wl->run[1].path, "/f"),
	   "the minimal workload is the overwrite and its fsync (%zu steps)", res.wl->nrun);
	ok(res.wl->nsetup == w->nsetup, "its setup is kept (%zu steps)", res.wl->nsetup);
	ok(res.unresolved > 0, "candidates that could not run were set aside (%u of %u)",
	   res.unresolved, res.tests);
	size_t n;
	uint64_t best = fewest(res.wl, res.inv, res.silent, &n);
	ok(n == res.measured && n == res.failing, "every failing state was measured (%zu)", n);
	ok(res.lost + res.damaged == best,
	   "the state chosen, %s, lost the fewest sectors: %llu + %llu (fewest %llu)", res.state_id,
	   (unsigned long long)res.lost, (unsigned long long)res.damaged, (unsigned long long)best);
	ok(res.lost + res.damaged > 0, "and lost some (a state that lost nothing cannot fail)");

	/* the rebuild line gives that state, failing the same way */
	struct crash_config c;
	char **words = NULL;
	rc = crash_config_parse(res.rebuild, &c, &words, &err);
	struct crash_result *r = NULL;
	if (rc == 0) {
		c.wl = res.wl;
		rc = crash_explore(&c, &r, &err);
	}
	ok(rc == 0 && r->nfail == 1 && !strcmp(r->fail[0].id, res.state_id) &&
	       (r->fail[0].broken & res.inv) && !r->fail[0].detected,
	   "the rebuild line rebuilds %s, silently durable-broken", res.state_id);
	crash_result_free(r);
	crash_config_words_free(words);

	/* dm-flakey: drops start no later than the fsync */
	ok(res.flakey_step >= 0 && res.flakey_step <= 1,
	   "dropping every write from run step %ld on still fails", res.flakey_step + 1);
	char path[] = "/tmp/test_shrink_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	rc = f ? shrink_flakey_script(res.wl, fs, (size_t)res.flakey_step, "# header\n", f, &err)
	       : -errno;
	if (f)
		fclose(f);
	char *text = NULL;
	if (rc == 0)
		rc = read_all(path, &text);
	unlink(path);
	ok(rc == 0, "the script is written");
	const char *drop = text ? strstr(text, "flakey_table \"$DROP\"") : NULL;
	const char *fsync = text ? strstr(text, "sync \"$MNT/f\"") : NULL;
	const char *setup = text ? strstr(text, "# setup") : NULL;
	ok(drop && fsync && setup && setup < drop && drop < fsync,
	   "it switches to drop_writes after the setup, before the fsync");
	ok(text && strstr(text, "drop_writes") && strstr(text, "bo_promise /f") &&
	       strstr(text, "mke2fs}\" -t ext3") && strstr(text, "MOPT=data=ordered,barrier=0") &&
	       strstr(text, "NO_DROP") && strstr(text, "e2fsck -fn"),
	   "with the table, the promise of the fsync, mkfs and mount options, the control and "
	   "the check");
	free(text);
	shrink_result_free(&res);
	crash_workload_free(w);
}

static void invalid(void)
{
	static const char bad[] = "name b\nrun\nwrite /nope/x 0 4k\n";
	static const char gen[] =
	    "name g\nsetup\nmkdir /A\nmkdir /B\nmkdir /A/C\ncreate /foo\nwrite /foo 0 16k\n"
	    "create /A/foo\nwrite /A/foo 0 16k\nrun\nrename /A /A/C\n";
	struct crash_workload *w;
	struct bo_err err = {{0}};
	char why[384] = "";
	tap_require(crash_workload_parse(bad, strlen(bad), "b", &w, &err) == 0,
	            "its workload parses %s", err.msg);
	ok(shrink_valid(w, why, sizeof(why)) == 1,
	   "a write under a missing directory cannot run: %s", why);
	crash_workload_free(w);
	tap_require(crash_workload_parse(gen, strlen(gen), "g", &w, &err) == 0,
	            "its workload parses %s", err.msg);
	why[0] = 0;
	ok(shrink_valid(w, why, sizeof(why)) == 1 && strstr(why, "into-self"),
	   "on the generator's tree its model rejects rename /A /A/C: %s", why);
	crash_workload_free(w);

	/* an fsync of a directory promises its names; a later step in it voids that */
	static const char dirs[] = "name d\nsetup\nmkdir /old\nmkdir /k\nrun\nrename /old /new\n"
	                           "fsync-dir /\ncreate /k/a\nfsync-dir /k\ncreate /k/b\n";
	tap_require(crash_workload_parse(dirs, strlen(dirs), "d", &w, &err) == 0,
	            "its workload parses %s", err.msg);
	char *text = NULL;
	size_t tlen = 0;
	FILE *m = open_memstream(&text, &tlen);
	int rc = shrink_flakey_script(w, "ext3", 1, NULL, m, &err);
	fclose(m);
	ok(rc == 0 && strstr(text, "sync \"$MNT\" || fail \"run step 2\"\nbo_promise_dir /\n") &&
	       !strstr(text, "bo_promise_dir /k"),
	   "fsync-dir / promises /'s names; /k's promise, voided by a later create in /k, is "
	   "not checked");
	free(text);
	crash_workload_free(w);

	static const char fa[] = "name fa\nsetup\ncreate /f\nrun\nfalloc /f keep-size 0 4k\n";
	tap_require(crash_workload_parse(fa, strlen(fa), "fa", &w, &err) == 0,
	            "its workload parses %s", err.msg);
	FILE *f = fopen("/dev/null", "w");
	rc = shrink_flakey_script(w, "ext4", 0, NULL, f, &err);
	fclose(f);
	ok(rc == -ENOTSUP && strstr(err.msg, "falloc"),
	   "a step a shell cannot express is refused by name: %s", err.msg);
	crash_workload_free(w);
}

int main(void)
{
	ddmin_case(10, (size_t[]){3, 7}, 2, -1, -1, "fails with 3 and 7");
	ddmin_case(12, (size_t[]){0, 4, 9, 11}, 4, -1, -1, "fails with 0, 4, 9, 11");
	ddmin_case(8, (size_t[]){5}, 1, 2, 1, "fails with 5; 2 without 1 cannot run");
	ddmin_case(1, (size_t[]){0}, 1, -1, -1, "a single failing element");
	ddmin_case(9, (size_t[]){1, 2}, 2, 2, 1, "fails with 1 and 2; 2 needs 1");
	invalid();
	planted();
	return tap_done();
}
