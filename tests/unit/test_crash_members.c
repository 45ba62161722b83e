// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_members.c — the explorer on a log of several devices (the nbd plugin's
 * members=, one clock for all): blackout's ext3 over a concat of two write-caching
 * disks is recorded as one device, the log is split into the two members' own
 * entries (a flush of the concat becomes a flush of each member), and exploring that
 * log must enumerate the members' joint outcomes: no synced data lost while every
 * member is flushed, synced data lost once one member's flushes are dropped (a flush
 * of the other must not make its cache durable), and more states than the one-device
 * log, whose flushes reached both members at one instant. The state store of such a
 * run lists its members; an observer that rebuilds each member's own image from it
 * and lays them end to end judges as the explorer does in-process. Logs over the
 * wrong stack are refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/endian.h"
#include "blackout/rec.h"
#include "crash/crash_int.h"
#include "tap.h"

#define M0 "cache(size=256k,flush=honor) > mem(size=1M)"
#define M1 "cache(size=256k,flush=honor) > mem(size=7M)"
/* the same 8M in three lowers */
#define BAD   "concat > [" M0 " ; mem(size=3M) ; mem(size=4M)]"
#define STACK "concat > [" M0 " ; " M1 "]"
#define FS    "ext3,data=ordered,barrier=1"
#define WL    "append-fsync"
#define SPLIT 2048 /* member 0's sectors: the journal there, the files on member 1 */

static char tmp[256];

/* The test observer: reads `members`, builds each member's image from base.img and
 * s<N>.delta (the blocks of its range, shifted to its own offsets), lays the members
 * end to end and observes that with blackout's fs. */
struct tobs {
	struct crash_fscfg fsc;
	size_t seen;
	bool bad;
	unsigned nmembers;
};

static uint8_t *member_image(const char *dir, size_t n, uint64_t start, uint64_t len)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/base.img", dir);
	FILE *f = fopen(p, "rb");
	uint8_t *img = calloc(1, len);
	bool ok = f && img && fseek(f, (long)start, SEEK_SET) == 0 && fread(img, 1, len, f) == len;
	if (f)
		fclose(f);
	snprintf(p, sizeof(p), "%s/s%zu.delta", dir, n);
	f = fopen(p, "rb");
	uint8_t hdr[16], idx[8], blk[4096];
	ok = ok && f && fread(hdr, 1, 16, f) == 16 && memcmp(hdr, "BOSTATE1", 8) == 0;
	for (uint32_t i = 0, c = ok ? get_le32(hdr + 12) : 0; ok && i < c; i++) {
		ok = fread(idx, 1, 8, f) == 8 && fread(blk, 1, 4096, f) == 4096;
		uint64_t at = get_le64(idx) * 4096;
		if (ok && at >= start && at < start + len)
			memcpy(img + (at - start), blk, 4096);
	}
	if (f)
		fclose(f);
	if (!ok) {
		free(img);
		return NULL;
	}
	return img;
}

static int observe(void *ctx, const char *store, size_t n, struct crash_observation *obs,
                   struct bo_err *err)
{
	struct tobs *t = ctx;
	char p[512];
	snprintf(p, sizeof(p), "%s/members", store);
	FILE *mf = fopen(p, "r");
	uint64_t start[4], len[4], total = 0;
	unsigned k = 0, idx;
	while (mf && k < 4 &&
	       fscanf(mf, "m%u %llu %llu\n", &idx, (unsigned long long *)&start[k],
	              (unsigned long long *)&len[k]) == 3 &&
	       idx == k && start[k] == total)
		total += len[k++];
	if (mf)
		fclose(mf);
	t->nmembers = k;
	for (size_t i = 0; i < n; i++) {
		memset(&obs[i], 0, sizeof(obs[i]));
		struct bdev *d = NULL;
		int rc = k ? blk_mem_open(512, total / 512, &d) : -EINVAL;
		for (unsigned m = 0; rc == 0 && m < k; m++) {
			uint8_t *img = member_image(store, i, start[m], len[m]);
			rc = img ? blk_pwrite(d, start[m], len[m], img, 0) : -EIO;
			free(img);
		}
		if (rc == 0)
			rc = crash_observe_fs(d, &t->fsc.mo, &obs[i], NULL);
		if (rc == 0 && !obs[i].mount_rc && !obs[i].unmount_rc)
			crash_observe_check(crash_fsck_own, NULL, d,
			                    &obs[i].check[CRASH_CHECK_E2FSCK]);
		blk_close(d);
		if (rc) {
			t->bad = true;
			return bo_errf(err, rc, "test observer: s%zu: no members file or bad delta",
			               i);
		}
		t->seen++;
	}
	return 0;
}

/* The explorer over `stack` (from `log` when given), saving its recording to `save`;
 * with t, the states go to `store` and t judges them as an outside observer would. */
static struct crash_result *run(const char *stack, const char *log, const char *save,
                                struct tobs *t, const char *store, struct bo_err *err)
{
	struct crash_workload *w;
	if (crash_workload_load(WL, &w, err))
		return NULL;
	struct crash_observer ob = {.name = "test", .store = store, .observe = observe, .ctx = t};
	struct crash_config c = {.stack = stack,
	                         .fs = FS,
	                         .wl = w,
	                         .seed = 5,
	                         .max_states = 400,
	                         .log = log,
	                         .save_log = save,
	                         .observer = t ? &ob : NULL};
	struct crash_result *r = NULL;
	if (crash_explore(&c, &r, err))
		r = NULL;
	crash_workload_free(w);
	return r;
}

/* Appends x's part on [from, to) (sectors of the concat) as device d's entry. */
static int piece(struct rec_log *b, const struct rec_entry *x, unsigned d, uint64_t from,
                 uint64_t to)
{
	uint64_t lo = x->lba > from ? x->lba : from, hi = x->lba + x->count;
	if (hi > to)
		hi = to;
	if (lo >= hi)
		return 0;
	struct rec_entry e = *x;
	e.dev = d;
	e.lba = lo - from;
	e.count = (uint32_t)(hi - lo);
	if (x->op == REC_WRITE)
		e.data = (const unsigned char *)x->data + (lo - x->lba) * 512;
	return rec_log_append(b, &e);
}

/* The concat's log as its two members' log; drop1: member 1's flushes left out;
 * stack: another first mark. *n0, *n1: the entries each member got (writes and
 * discards). */
static int split_log(const char *in, const char *out, bool drop1, const char *stack, size_t *n0,
                     size_t *n1)
{
	struct rec_log *a, *b;
	struct bo_err e = {{0}};
	if (rec_log_load(in, &a, &e))
		return -1;
	uint64_t sizes[2] = {SPLIT, rec_log_nr_sectors(a) - SPLIT};
	int rc = rec_log_new_devices(512, 2, sizes, &b);
	*n0 = *n1 = 0;
	for (size_t i = 0; rc == 0 && i < rec_log_len(a); i++) {
		const struct rec_entry *x = rec_log_get(a, i);
		if (x->op == REC_MARK && i == 0 && stack) {
			char m[REC_MARK_MAX + 1];
			snprintf(m, sizeof m, "stack %s", stack);
			rc = rec_log_mark(b, m);
		} else if (x->op == REC_MARK) {
			rc = rec_log_append(b, x);
		} else if (x->op == REC_FLUSH) {
			struct rec_entry f = *x;
			rc = rec_log_append(b, &f);
			f.dev = 1;
			if (rc == 0 && !drop1)
				rc = rec_log_append(b, &f);
		} else if (x->op == REC_WRITE || x->op == REC_DISCARD) {
			size_t before = rec_log_len(b);
			rc = piece(b, x, 0, 0, SPLIT);
			*n0 += rec_log_len(b) - before;
			before = rec_log_len(b);
			if (rc == 0)
				rc = piece(b, x, 1, SPLIT, rec_log_nr_sectors(a));
			*n1 += rec_log_len(b) - before;
		}
	}
	if (rc == 0)
		rc = rec_log_save(b, out, &e);
	rec_log_free(a);
	rec_log_free(b);
	return rc;
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/bo-members.XXXXXX");
	tap_require(mkdtemp(tmp) != NULL, "a scratch directory");
	struct bo_err err = {{0}};
	char one[300], two[300], lame[300];
	snprintf(one, sizeof(one), "%s/one.log", tmp);
	snprintf(two, sizeof(two), "%s/two.log", tmp);
	snprintf(lame, sizeof(lame), "%s/lame.log", tmp);

	struct crash_result *own = run(STACK, NULL, one, NULL, NULL, &err);
	tap_require(own != NULL, "the explorer records ext3 over the concat %s", err.msg);
	ok(own->viol[CRASH_INV_DURABLE] == 0, "one device, flushes honoured: nothing synced lost");

	size_t n0, n1;
	tap_require(split_log(one, two, false, NULL, &n0, &n1) == 0,
	            "the log split into two members");
	ok(n0 > 0 && n1 > 0, "both members were written (%zu and %zu entries)", n0, n1);
	struct rec_log *l = NULL;
	ok(rec_log_load(two, &l, &err) == 0 && rec_log_ndev(l) == 2 &&
	       rec_log_dev_sectors(l, 1) == rec_log_nr_sectors(l) - SPLIT,
	   "the members' log reads back with its two devices %s", err.msg);
	rec_log_free(l);

	struct crash_result *both = run(STACK, two, NULL, NULL, NULL, &err);
	ok(both && both->viol[CRASH_INV_DURABLE] == 0 && both->judged > 20,
	   "every member flushed: nothing synced lost (%llu judged) %s",
	   both ? (unsigned long long)both->judged : 0, both ? "" : err.msg);
	ok(both && both->cuts > own->cuts,
	   "a flush per member is a cut point of its own (%llu cuts, one device %llu)",
	   both ? (unsigned long long)both->cuts : 0, (unsigned long long)own->cuts);

	/* the store of a members log: each member's own image, from `members` */
	struct tobs t = {0};
	crash_fscfg_parse(FS, &t.fsc, &err);
	char store[300];
	snprintf(store, sizeof(store), "%s/store", tmp);
	struct crash_result *so = run(STACK, two, NULL, &t, store, &err);
	char mpath[400], mtext[200] = "";
	snprintf(mpath, sizeof(mpath), "%s/members", store);
	FILE *mf = fopen(mpath, "r");
	size_t ml = mf ? fread(mtext, 1, sizeof(mtext) - 1, mf) : 0;
	mtext[ml] = 0;
	if (mf)
		fclose(mf);
	is_str(mtext, "m0 0 1048576\nm1 1048576 7340032\n", "the store lists its members");
	ok(so && both && !t.bad && t.nmembers == 2 && t.seen == so->judged &&
	       so->judged == both->judged && so->ok == both->ok && so->nfail == both->nfail,
	   "members rebuilt from the store judge as the explorer does in-process (%llu judged, "
	   "%llu ok) %s",
	   so ? (unsigned long long)so->judged : 0, so ? (unsigned long long)so->ok : 0,
	   so ? "" : err.msg);
	crash_result_free(so);

	tap_require(split_log(one, lame, true, NULL, &n0, &n1) == 0,
	            "a log without member 1's flushes");
	struct crash_result *lm = run(STACK, lame, NULL, NULL, NULL, &err);
	ok(lm && lm->viol[CRASH_INV_DURABLE] > 0,
	   "member 1 never flushed: synced data lost in %llu states (member 0's flushes left "
	   "member 1's cache volatile) %s",
	   lm ? (unsigned long long)lm->viol[CRASH_INV_DURABLE] : 0, lm ? "" : err.msg);

	/* the members must be the concat's lowers, of the log's sizes */
	char badlog[300];
	snprintf(badlog, sizeof(badlog), "%s/bad.log", tmp);
	tap_require(split_log(one, badlog, false, BAD, &n0, &n1) == 0, "a log naming " BAD);
	struct crash_result *bad = run(BAD, badlog, NULL, NULL, NULL, &err);
	ok(!bad && strstr(err.msg, "recorded on 2 member devices; the stack's lower 1"),
	   "a stack whose lowers differ from the members is refused: %s", err.msg);
	crash_result_free(bad);

	crash_result_free(own);
	crash_result_free(both);
	crash_result_free(lm);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		diag("could not remove %s", tmp);
	return tap_done();
}
