// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_fromlog.c — the explorer enumerating a recorded run (cfg.log) and handing
 * its states to an outside observer through the state store, without qemu: blackout's
 * own ext3 run is recorded (cfg.save_log), explored again from the log with a test
 * observer that reads the store (base.img + s<N>.delta, its own reader) and observes
 * with blackout's fs, and must give the normal explorer's states and outcomes; shards
 * merge; --state --keep writes base + delta; a hung guest is counted; md's refusals
 * (an observer's md lines) are counted beside the verdicts; bad logs are refused with
 * what is wrong. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/rec.h"
#include "crash/crash_int.h"
#include "tap.h"
#include "test_store.h"

#define MEM    "mem(size=8M)"
#define LYING  "cache(size=1M,flush=ignore) > " MEM
#define HONEST "cache(size=1M,flush=honor) > " MEM
#define FS     "ext3,data=ordered,barrier=1"
#define WL     "append-fsync"

static char tmp[256];

struct tobs {
	struct crash_fscfg fsc;
	long hang; /* this state "hangs the guest" (-1: none) */
	bool md;   /* md under the fs: state i started (i % 3 == 0), refused then forced (1),
	            * refused and not started even forced (2: nothing to mount) */
	size_t calls, seen;
	bool bad_store;
};

/* The test observer: what a guest would do, with blackout's fs and fsck in-process
 * (the checker's verdict in e2fsck's slot, the judge of an outside observer). */
static int observe(void *ctx, const char *store, size_t n, struct crash_observation *obs,
                   struct bo_err *err)
{
	struct tobs *t = ctx;
	t->calls++;
	for (size_t i = 0; i < n; i++) {
		memset(&obs[i], 0, sizeof(obs[i]));
		if ((long)i == t->hang) {
			obs[i].guest_hung = true;
			snprintf(obs[i].mount_msg, sizeof(obs[i].mount_msg), "no END in 60 s");
			continue;
		}
		static const enum crash_md_start how[] = {CRASH_MD_STARTED, CRASH_MD_FORCED,
		                                          CRASH_MD_UNSTARTED};
		if (t->md && how[i % 3] == CRASH_MD_UNSTARTED) {
			obs[i].md = CRASH_MD_UNSTARTED;
			obs[i].mount_rc = -EIO;
			snprintf(obs[i].mount_msg, sizeof(obs[i].mount_msg), "md: not started");
			continue;
		}
		struct bdev *d = store_device(store, i);
		if (!d) {
			t->bad_store = true;
			return bo_errf(err, -EIO, "test observer: state s%zu unreadable", i);
		}
		int rc = crash_observe_fs(d, &t->fsc.mo, &obs[i], NULL);
		if (rc == 0 && !obs[i].mount_rc && !obs[i].unmount_rc)
			crash_observe_check(crash_fsck_own, NULL, d,
			                    &obs[i].check[CRASH_CHECK_E2FSCK]);
		if (rc)
			return rc;
		if (t->md)
			obs[i].md = how[i % 3];
		t->seen++;
	}
	return 0;
}

static struct crash_result *run(const char *stack, const char *fs, const char *log,
                                const char *save, struct tobs *t, const char *store, unsigned shard,
                                unsigned nshards, const char *state, const char *keep,
                                struct bo_err *err)
{
	struct crash_workload *w;
	if (crash_workload_load(WL, &w, err))
		return NULL;
	struct crash_observer ob = {.name = "test", .store = store, .observe = observe, .ctx = t};
	struct crash_config c = {.stack = stack,
	                         .fs = fs,
	                         .wl = w,
	                         .seed = 3,
	                         .max_states = 600,
	                         .log = log,
	                         .save_log = save,
	                         .observer = t ? &ob : NULL,
	                         .shard = shard,
	                         .nshards = nshards,
	                         .state_id = state,
	                         .keep_dir = keep};
	struct crash_result *r = NULL;
	if (crash_explore(&c, &r, err))
		r = NULL;
	crash_workload_free(w);
	return r;
}

static char *json(const struct crash_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	crash_result_write_json(r, f);
	fclose(f);
	return buf;
}

/* The same states, judged the same, counted the same (the fs name aside). */
static bool same_outcomes(const struct crash_result *a, const struct crash_result *b, char *why,
                          size_t len)
{
#define SAME(f)                                                                                    \
	if (a->f != b->f) {                                                                        \
		snprintf(why, len, #f " %llu != %llu", (unsigned long long)a->f,                   \
		         (unsigned long long)b->f);                                                \
		return false;                                                                      \
	}
	SAME(cuts);
	SAME(space);
	SAME(built);
	SAME(judged);
	SAME(duplicates);
	SAME(ok);
	SAME(silent);
	SAME(detected);
	SAME(nfail);
	for (int i = 0; i < CRASH_INV_N; i++) {
		SAME(viol[i]);
		SAME(allowed[i]);
	}
	for (size_t i = 0; i < a->nfail; i++) {
		const struct crash_state *x = &a->fail[i], *y = &b->fail[i];
		if (strcmp(x->id, y->id) || x->broken != y->broken || x->detected != y->detected ||
		    strcmp(x->detail, y->detail)) {
			snprintf(why, len, "failure %zu: %.40s %.200s != %.40s %.200s", i, x->id,
			         x->detail, y->id, y->detail);
			return false;
		}
	}
#undef SAME
	return true;
}

/* A copy of log's entries [from, to) plus extra marks, as a log file. */
static int cut_log(const char *in, const char *out, bool drop_step0, bool drop_end)
{
	struct rec_log *a, *b;
	struct bo_err e = {{0}};
	if (rec_log_load(in, &a, &e))
		return -1;
	rec_log_new(rec_log_sector_size(a), rec_log_nr_sectors(a), &b);
	for (size_t i = 0; i < rec_log_len(a); i++) {
		const struct rec_entry *x = rec_log_get(a, i);
		if (x->op == REC_MARK && ((drop_step0 && strncmp(x->mark, "step ", 5) == 0) ||
		                          (drop_end && strcmp(x->mark, "end") == 0)))
			continue;
		rec_log_append(b, x);
	}
	int rc = rec_log_save(b, out, &e);
	rec_log_free(a);
	rec_log_free(b);
	return rc;
}

/* The log up to the mark `step k` (not included), then `fail k-1`: a guest that
 * stopped at step k-1's failure. */
static int failed_log(const char *in, const char *out, unsigned k)
{
	struct rec_log *a, *b;
	struct bo_err e = {{0}};
	if (rec_log_load(in, &a, &e))
		return -1;
	rec_log_new(rec_log_sector_size(a), rec_log_nr_sectors(a), &b);
	char stop[32], fail[32];
	snprintf(stop, sizeof(stop), "step %u", k);
	snprintf(fail, sizeof(fail), "fail %u", k - 1);
	for (size_t i = 0; i < rec_log_len(a); i++) {
		const struct rec_entry *x = rec_log_get(a, i);
		if (x->op == REC_MARK && strcmp(x->mark, stop) == 0)
			break;
		rec_log_append(b, x);
	}
	rec_log_mark(b, fail);
	int rc = rec_log_save(b, out, &e);
	rec_log_free(a);
	rec_log_free(b);
	return rc;
}

static void refusals(const char *log)
{
	struct bo_err err = {{0}};
	struct tobs t = {.hang = -1};
	char store[300], bad[300];
	snprintf(store, sizeof(store), "%s/refused", tmp);
	crash_fscfg_parse(FS, &t.fsc, &err);

	ok(!run(HONEST, FS, log, NULL, &t, store, 0, 0, NULL, NULL, &err) &&
	       strstr(err.msg, "recorded on stack 'cache(size=1M,flush=ignore)"),
	   "a log from another stack is refused: %s", err.msg);
	ok(!run(LYING, "ext3,data=journal", log, NULL, &t, store, 0, 0, NULL, NULL, &err) &&
	       strstr(err.msg, "recorded with fs '" FS "'"),
	   "a log made with another fs is refused: %s", err.msg);
	ok(!run("cache(size=1M,flush=ignore) > mem(size=16M)", FS, log, NULL, &t, store, 0, 0, NULL,
	        NULL, &err) &&
	       strstr(err.msg, "recorded on a device of 16384 sectors"),
	   "a log of another geometry is refused: %s", err.msg);

	struct crash_workload *w;
	crash_workload_load("wal", &w, &err);
	struct crash_observer ob = {.store = store, .observe = observe, .ctx = &t};
	struct crash_config c = {
	    .stack = LYING, .fs = FS, .wl = w, .max_states = 600, .log = log, .observer = &ob};
	struct crash_result *r = NULL;
	ok(crash_explore(&c, &r, &err) == -EINVAL &&
	       strstr(err.msg, "recorded with workload 'append-fsync', not with --workload 'wal'"),
	   "a log of another workload is refused: %s", err.msg);
	crash_workload_free(w);

	/* truncated: rec_log_load's message, with where */
	snprintf(bad, sizeof(bad), "%s/short.log", tmp);
	FILE *in = fopen(log, "rb"), *out = fopen(bad, "wb");
	char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf), in);
	fwrite(buf, 1, n - 100, out);
	fclose(in);
	fclose(out);
	ok(!run(LYING, FS, bad, NULL, &t, store, 0, 0, NULL, NULL, &err) &&
	       strncmp(err.msg, "--log: ", 7) == 0 && strstr(err.msg, "truncated at byte"),
	   "a truncated log is refused with the loader's message: %s", err.msg);

	snprintf(bad, sizeof(bad), "%s/nostep.log", tmp);
	cut_log(log, bad, true, false);
	ok(!run(LYING, FS, bad, NULL, &t, store, 0, 0, NULL, NULL, &err) &&
	       strstr(err.msg, "no 'step 0' mark"),
	   "a log without 'step 0' is refused: %s", err.msg);
	snprintf(bad, sizeof(bad), "%s/noend.log", tmp);
	cut_log(log, bad, false, true);
	ok(!run(LYING, FS, bad, NULL, &t, store, 0, 0, NULL, NULL, &err) &&
	       strstr(err.msg, "no 'end' mark"),
	   "a log without 'end' is refused: %s", err.msg);
	ok(t.calls == 0, "nothing refused reached the observer");

	/* a guest stops at its first failure: `fail I` and no `end` is a whole run */
	snprintf(bad, sizeof(bad), "%s/failed.log", tmp);
	failed_log(log, bad, 3);
	struct tobs tf = {.fsc = t.fsc, .hang = -1};
	struct crash_result *fr = run(LYING, FS, bad, NULL, &tf, store, 0, 0, NULL, NULL, &err);
	size_t maxc = 0;
	for (size_t i = 0; fr && i < fr->nfail; i++)
		if (fr->fail[i].completed > maxc)
			maxc = fr->fail[i].completed;
	ok(fr && fr->judged > 0 && maxc <= 2 && tf.calls == 1,
	   "a run stopped by 'fail 2' is enumerated up to step 2 (%llu judged, crash points up "
	   "to %zu) %s",
	   fr ? (unsigned long long)fr->judged : 0, maxc, fr ? "" : err.msg);
	crash_result_free(fr);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/bo-fromlog.XXXXXX");
	tap_require(mkdtemp(tmp) != NULL, "a scratch directory");
	struct bo_err err = {{0}};
	char log[300], store[300];
	snprintf(log, sizeof(log), "%s/io.log", tmp);
	snprintf(store, sizeof(store), "%s/states", tmp);

	/* blackout's ext3 on a cache that ignores flushes: the explorer's own run, saved */
	struct crash_result *own = run(LYING, FS, NULL, log, NULL, NULL, 0, 0, NULL, NULL, &err);
	tap_require(own != NULL, "the explorer records and saves its run %s", err.msg);
	struct crash_result *plain = run(LYING, FS, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, &err);
	char *jo = json(own), *jp = plain ? json(plain) : NULL;
	ok(jp && strcmp(jo, jp) == 0, "saving the recording changes nothing in the results");
	ok(own->viol[CRASH_INV_DURABLE] > 0, "flush=ignore loses synced data (%llu states)",
	   (unsigned long long)own->viol[CRASH_INV_DURABLE]);

	struct tobs t = {.hang = -1};
	crash_fscfg_parse(FS, &t.fsc, &err);
	struct crash_result *fl = run(LYING, FS, log, NULL, &t, store, 0, 0, NULL, NULL, &err);
	tap_require(fl != NULL, "the saved log is explored with the outside observer %s", err.msg);
	char why[600] = "";
	ok(same_outcomes(own, fl, why, sizeof(why)),
	   "from the log: the same states and outcomes as the explorer's own run (%llu "
	   "built, %llu judged, %llu failing) %s",
	   (unsigned long long)fl->built, (unsigned long long)fl->judged,
	   (unsigned long long)fl->nfail, why);
	diag("time: %.2fs in all, %.2fs reading views and writing the store (%llu blocks), "
	     "%.2fs observing",
	     fl->t_total, fl->t_store, (unsigned long long)fl->stored_blocks, fl->t_observe);
	ok(t.calls == 1 && t.seen == fl->judged && !t.bad_store,
	   "the observer saw every distinct state once, from well-formed deltas (%zu)", t.seen);
	ok(strcmp(fl->fs, "test-" FS) == 0, "the result names the observer: %s", fl->fs);
	ok(fl->e2fsck_runs > 0 && fl->hung == 0, "the observer's checker ran (%llu), none hung",
	   (unsigned long long)fl->e2fsck_runs);
	char ip[400];
	snprintf(ip, sizeof(ip), "%s/index", store);
	FILE *ix = fopen(ip, "r");
	size_t lines = 0;
	char line[256];
	while (ix && fgets(line, sizeof(line), ix))
		lines++;
	if (ix)
		fclose(ix);
	ok(lines == fl->judged, "the index has a line per stored state (%zu)", lines);

	/* shards of the log's states merge to the unsharded result */
	struct crash_result *parts[2];
	for (unsigned i = 0; i < 2; i++) {
		struct tobs ts = {.fsc = t.fsc, .hang = -1};
		char sd[320];
		snprintf(sd, sizeof(sd), "%s/shard%u", tmp, i);
		parts[i] = run(LYING, FS, log, NULL, &ts, sd, i, 2, NULL, NULL, &err);
	}
	struct crash_result *m = NULL;
	ok(parts[0] && parts[1] && crash_result_merge(parts, 2, &m, &err) == 0,
	   "two shards merge %s", err.msg);
	char *jf = json(fl), *jm = m ? json(m) : NULL;
	ok(jm && strcmp(jf, jm) == 0, "and the merge equals the unsharded run");
	ok(parts[0] && parts[1] && parts[0]->judged && parts[1]->judged,
	   "each shard judged some (%llu + %llu)",
	   parts[0] ? (unsigned long long)parts[0]->judged : 0,
	   parts[1] ? (unsigned long long)parts[1]->judged : 0);

	/* --state ID --keep DIR: base + delta, byte for byte */
	tap_require(fl->nfail > 0, "a failing state to rebuild");
	const char *id = fl->fail[fl->nfail / 2].id;
	size_t sn = SIZE_MAX;
	ix = fopen(ip, "r");
	while (ix && fgets(line, sizeof(line), ix)) {
		size_t k;
		char sid[160];
		if (sscanf(line, "s%zu %159s", &k, sid) == 2 && strcmp(sid, id) == 0)
			sn = k;
	}
	if (ix)
		fclose(ix);
	size_t size = 0;
	uint8_t *want = sn != SIZE_MAX ? store_image(store, sn, &size) : NULL;
	char keep[320], one[320], img[600];
	snprintf(keep, sizeof(keep), "%s/keep", tmp);
	snprintf(one, sizeof(one), "%s/one", tmp);
	struct tobs t1 = {.fsc = t.fsc, .hang = 0};
	struct crash_result *r1 = run(LYING, FS, log, NULL, &t1, one, 0, 0, id, keep, &err);
	snprintf(img, sizeof(img), "%s/%s.img", keep, id);
	FILE *f = fopen(img, "rb");
	uint8_t *got = want ? malloc(size) : NULL;
	bool same = f && got && fread(got, 1, size, f) == size && fgetc(f) == EOF &&
	            memcmp(got, want, size) == 0;
	if (f)
		fclose(f);
	ok(r1 && same, "--state %s --keep writes the stored state (s%zu) bit-exactly %s", id, sn,
	   r1 ? "" : err.msg);
	free(got);
	free(want);

	/* the observer's guest hung on that state: detected, counted, in the JSON */
	char *j1 = r1 ? json(r1) : NULL;
	ok(r1 && r1->judged == 1 && r1->hung == 1 && r1->detected == 1 && r1->nfail == 1 &&
	       strcmp(r1->fail[0].detected_by, "hung") == 0 &&
	       (r1->fail[0].broken & (1u << CRASH_INV_CONSISTENT)) && j1 &&
	       strstr(j1, "\"hung\":1"),
	   "a hung guest is detected broken consistency, counted as hung: %s",
	   r1 && r1->nfail ? r1->fail[0].detail : "");
	struct crash_result *back = NULL;
	ok(j1 && crash_result_read_json(j1, strlen(j1), &back, &err) == 0 && back->hung == 1,
	   "hung reads back %s", err.msg);
	crash_result_free(back);
	free(j1);

	/* an honest cache keeps what was synced, seen from the log as well */
	char hlog[300];
	snprintf(hlog, sizeof(hlog), "%s/honest.log", tmp);
	struct crash_result *ho = run(HONEST, FS, NULL, hlog, NULL, NULL, 0, 0, NULL, NULL, &err);
	struct tobs th = {.fsc = t.fsc, .hang = -1};
	char hs[320];
	snprintf(hs, sizeof(hs), "%s/hstates", tmp);
	struct crash_result *hl =
	    ho ? run(HONEST, FS, hlog, NULL, &th, hs, 0, 0, NULL, NULL, &err) : NULL;
	ok(hl && hl->viol[CRASH_INV_DURABLE] == 0 && hl->judged > 10 &&
	       same_outcomes(ho, hl, why, sizeof(why)),
	   "flush=honor: no synced data lost from the log either (%llu judged) %s",
	   hl ? (unsigned long long)hl->judged : 0, why);

	/* md under the observer's fs: refusals counted beside the verdicts, in the JSON,
	 * read back; forced states judged on what they show (all ok on an honest cache) */
	struct tobs tm = {.fsc = t.fsc, .hang = -1, .md = true};
	snprintf(hs, sizeof(hs), "%s/mstates", tmp);
	struct crash_result *mr =
	    hl ? run(HONEST, FS, hlog, NULL, &tm, hs, 0, 0, NULL, NULL, &err) : NULL;
	uint64_t n0 = mr ? (mr->judged + 2) / 3 : 0, n1 = mr ? (mr->judged + 1) / 3 : 0;
	uint64_t n2 = mr ? mr->judged / 3 : 0;
	ok(mr && mr->judged == hl->judged && mr->md_started == n0 && mr->md_refused == n1 + n2 &&
	       mr->md_forced_ok == n1 && mr->md_forced_silent == 0 && mr->md_unstarted == n2 &&
	       mr->ok == n0 + n1 && mr->detected == n2,
	   "md: %llu started, %llu refused (%llu ok once forced, %llu not started: detected)",
	   mr ? (unsigned long long)mr->md_started : 0, mr ? (unsigned long long)mr->md_refused : 0,
	   mr ? (unsigned long long)mr->md_forced_ok : 0,
	   mr ? (unsigned long long)mr->md_unstarted : 0);
	char *jmd = mr ? json(mr) : NULL, *pmd = NULL;
	size_t pl = 0;
	FILE *pf = open_memstream(&pmd, &pl);
	if (mr)
		crash_result_print(mr, pf);
	fclose(pf);
	char wantl[200];
	snprintf(wantl, sizeof(wantl),
	         "md:       refused to start %llu of %llu states; forced (--run --force): %llu ok, "
	         "0 failing (0 SILENT, 0 detected), %llu would not start\n",
	         (unsigned long long)(n1 + n2), (unsigned long long)(n0 + n1 + n2),
	         (unsigned long long)n1, (unsigned long long)n2);
	ok(pmd && strstr(pmd, wantl), "the summary says it: %s", wantl);
	ok(jmd && strstr(jmd, "\"md\":{") && jo && !strstr(jo, "\"md\""),
	   "the JSON has an md object, a result without md has none");
	back = NULL;
	ok(jmd && crash_result_read_json(jmd, strlen(jmd), &back, &err) == 0 &&
	       back->md_started == n0 && back->md_refused == n1 + n2 && back->md_forced_ok == n1 &&
	       back->md_unstarted == n2,
	   "the md counts read back %s", err.msg);
	/* two shards' md counts add up; counts that do not fit are refused by name */
	struct crash_result *halves[2] = {back, NULL}, *mm = NULL;
	if (back && crash_result_read_json(jmd, strlen(jmd), &halves[1], &err) == 0) {
		halves[0]->nshards = halves[1]->nshards = 2;
		halves[1]->shard = 1;
	}
	ok(halves[1] && crash_result_merge(halves, 2, &mm, &err) == 0 &&
	       mm->md_refused == 2 * (n1 + n2) && mm->md_unstarted == 2 * n2 &&
	       mm->md_started == 2 * n0,
	   "md counts merge %s", err.msg);
	/* more states not started than refused */
	char *at = jmd ? strstr(jmd, "\"unstarted\":") : NULL, *bad = NULL;
	if (at && asprintf(&bad, "%.*s\"unstarted\":999999%s", (int)(at - jmd), jmd,
	                   at + 12 + strspn(at + 12, "0123456789")) < 0)
		bad = NULL;
	at = bad;
	struct crash_result *br = NULL;
	ok(at && crash_result_read_json(bad, strlen(bad), &br, &err) == -EINVAL &&
	       strstr(err.msg, "md") && strstr(err.msg, "more than 'refused'"),
	   "md counts that do not add up are refused: %s", err.msg);
	crash_result_free(br);
	crash_result_free(mm);
	crash_result_free(halves[0]);
	crash_result_free(halves[1]);
	crash_result_free(mr);
	free(bad);
	free(jmd);
	free(pmd);

	refusals(log);

	crash_result_free(own);
	crash_result_free(plain);
	crash_result_free(fl);
	crash_result_free(m);
	crash_result_free(parts[0]);
	crash_result_free(parts[1]);
	crash_result_free(r1);
	crash_result_free(ho);
	crash_result_free(hl);
	free(jo);
	free(jp);
	free(jf);
	free(jm);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		diag("could not remove %s", tmp);
	store_device_close();
	return tap_done();
}
