// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_prune.c — pruning (crash_config.prune, src/crash/prune.c) on the model
 * route, without qemu: blackout's own ext3 run is recorded, then explored from the log
 * with an outside observer that reads the store and observes with blackout's fs. With
 * every pruned state judged anyway (prune_check 1), each must have its representative's
 * outcome; the states judged plus those pruned are the unpruned run's; shards sum to
 * the whole; a filesystem without a journal is not pruned, and says why. And the rule's
 * reader on mke2fs's ext4 and ext3 images: which journals it takes, what it compares. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "crash/crash_int.h"
#include "tap.h"
#include "test_store.h"

#define MEM    "mem(size=8M)"
#define LYING  "cache(size=1M,flush=ignore) > " MEM
#define HONEST "cache(size=1M,flush=honor) > " MEM
#define WL     "append-fsync"

static char tmp[256];

struct tobs {
	struct crash_fscfg fsc;
	size_t seen;
};

/* What a guest would do, with blackout's fs in-process: its own recovery replays the
 * journal, and its fsck takes e2fsck's slot. */
static int observe(void *ctx, const char *store, size_t n, struct crash_observation *obs,
                   struct bo_err *err)
{
	struct tobs *t = ctx;
	for (size_t i = 0; i < n; i++) {
		memset(&obs[i], 0, sizeof(obs[i]));
		struct bdev *d = store_device(store, i);
		if (!d)
			return bo_errf(err, -EIO, "test observer: state s%zu unreadable", i);
		int rc = crash_observe_fs(d, &t->fsc.mo, &obs[i], NULL);
		if (rc == 0 && !obs[i].mount_rc && !obs[i].unmount_rc)
			crash_observe_check(crash_fsck_own, NULL, d,
			                    &obs[i].check[CRASH_CHECK_E2FSCK]);
		if (rc)
			return rc;
		t->seen++;
	}
	return 0;
}

static struct crash_result *run(const char *stack, const char *fs, const char *log,
                                const char *save, const char *store, bool prune, unsigned check,
                                unsigned shard, unsigned nshards, struct tobs *t,
                                struct bo_err *err)
{
	struct crash_workload *w;
	if (crash_workload_load(WL, &w, err))
		return NULL;
	if (t && crash_fscfg_parse(fs, &t->fsc, err))
		return NULL;
	struct crash_observer ob = {.name = "test", .store = store, .observe = observe, .ctx = t};
	struct crash_config c = {.stack = stack,
	                         .fs = fs,
	                         .wl = w,
	                         .seed = 3,
	                         .max_states = 250,
	                         .log = log,
	                         .save_log = save,
	                         .observer = t ? &ob : NULL,
	                         .prune = prune,
	                         .prune_check = check,
	                         .shard = shard,
	                         .nshards = nshards};
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

/* One stack and fs: recorded, explored from the log without and with pruning. */
static void one(const char *stack, const char *fs, const char *name)
{
	struct bo_err err = {{0}};
	char log[300], st[300];
	snprintf(log, sizeof(log), "%s/%s.log", tmp, name);
	struct crash_result *own = run(stack, fs, NULL, log, NULL, false, 0, 0, 0, NULL, &err);
	tap_require(own != NULL, "%s: the explorer records its run %s", name, err.msg);
	crash_result_free(own);

	struct tobs t0 = {0}, t1 = {0};
	snprintf(st, sizeof(st), "%s/%s-plain", tmp, name);
	struct crash_result *plain = run(stack, fs, log, NULL, st, false, 0, 0, 0, &t0, &err);
	snprintf(st, sizeof(st), "%s/%s-pruned", tmp, name);
	struct crash_result *pr = run(stack, fs, log, NULL, st, true, 1, 0, 0, &t1, &err);
	tap_require(plain && pr, "%s: explored from the log, without and with pruning %s", name,
	            err.msg);
	ok(pr->prune_asked && pr->prune_off[0] == 0 && pr->pruned > 0,
	   "%s: the rule applies and pruned %llu of %llu distinct states (%s)", name,
	   (unsigned long long)pr->pruned, (unsigned long long)plain->judged, pr->prune_off);
	ok(pr->judged + pr->pruned == plain->judged && pr->built == plain->built,
	   "%s: judged %llu + pruned %llu = the unpruned run's %llu distinct states", name,
	   (unsigned long long)pr->judged, (unsigned long long)pr->pruned,
	   (unsigned long long)plain->judged);
	ok(pr->prune_checked == pr->pruned && t1.seen == pr->judged + pr->pruned,
	   "%s: every pruned state was judged anyway (%llu; the observer saw %zu)", name,
	   (unsigned long long)pr->prune_checked, t1.seen);
	ok(pr->prune_mismatch == 0,
	   "%s: each pruned state's outcome is its representative's (%llu differ)", name,
	   (unsigned long long)pr->prune_mismatch);
	ok(pr->nfail <= plain->nfail && pr->silent <= plain->silent,
	   "%s: failing states %zu (unpruned %zu), silent %llu (%llu)", name, pr->nfail,
	   plain->nfail, (unsigned long long)pr->silent, (unsigned long long)plain->silent);
	char *j = json(pr);
	ok(j && strstr(j, "\"pruned\"") && strstr(j, "\"journal-replay\""),
	   "%s: the JSON says how many were pruned and by which rule", name);
	free(j);

	/* with no check, the pruned states never reach the observer */
	struct tobs t2 = {0};
	snprintf(st, sizeof(st), "%s/%s-nocheck", tmp, name);
	struct crash_result *nc = run(stack, fs, log, NULL, st, true, 0, 0, 0, &t2, &err);
	ok(nc && nc->pruned == pr->pruned && nc->prune_checked == 0 && t2.seen == nc->judged,
	   "%s: unchecked, the observer saw only the %llu judged states (%zu)", name,
	   nc ? (unsigned long long)nc->judged : 0, t2.seen);

	/* shards: a pruned state is counted where its representative is judged */
	struct crash_result *parts[2];
	for (unsigned i = 0; i < 2; i++) {
		struct tobs ts = {0};
		char sd[320];
		snprintf(sd, sizeof(sd), "%s/%s-shard%u", tmp, name, i);
		parts[i] = run(stack, fs, log, NULL, sd, true, 0, i, 2, &ts, &err);
	}
	struct crash_result *m = NULL;
	int mrc = parts[0] && parts[1] ? crash_result_merge(parts, 2, &m, &err) : -EINVAL;
	ok(mrc == 0 && nc && m->pruned == nc->pruned && m->judged == nc->judged &&
	       m->ok == nc->ok && parts[0]->pruned && parts[1]->pruned,
	   "%s: two shards merge to the unsharded pruned run (pruned %llu, judged %llu) %s", name,
	   m ? (unsigned long long)m->pruned : 0, m ? (unsigned long long)m->judged : 0, err.msg);
	crash_result_free(m);
	crash_result_free(parts[0]);
	crash_result_free(parts[1]);
	crash_result_free(nc);
	crash_result_free(plain);
	crash_result_free(pr);
}

/* mke2fs's image of size MiB with opts, read whole; NULL when mke2fs failed. */
static uint8_t *mkfs_image(const char *opts, unsigned mib, size_t *size)
{
	char path[300], cmd[1200];
	snprintf(path, sizeof(path), "%s/mk.img", tmp);
	snprintf(cmd, sizeof(cmd),
	         "rm -f %s && truncate -s %uM %s && mke2fs -q -F %s %s 2>/dev/null", path, mib,
	         path, opts, path);
	if (system(cmd) != 0)
		return NULL;
	FILE *f = fopen(path, "rb");
	*size = (size_t)mib << 20;
	uint8_t *img = malloc(*size);
	bool ok = f && img && fread(img, 1, *size, f) == *size;
	if (f)
		fclose(f);
	if (!ok) {
		free(img);
		return NULL;
	}
	return img;
}

/* The rule's reader on e2fsprogs' own images: which journals it takes, and that a state
 * differing only in a dead log block keys as the base while one differing anywhere else
 * (the journal superblock included) does not. */
static void real_images(void)
{
	size_t size;
	uint8_t *img = mkfs_image("-t ext4", 16, &size);
	if (!img) {
		ok(0, "mke2fs made an ext4 image (e2fsprogs: scripts/install-deps)");
		return;
	}
	struct crash_prune p;
	is_int(crash_prune_open(&p, img, size), 0, "ext4 (64bit, extents, metadata_csum): opened");
	ok(p.on && p.bs == 1024 && p.jblocks == 1024 && p.next >= 1,
	   "the rule applies: a journal of %llu blocks of %u bytes in %zu extents (%s)",
	   (unsigned long long)p.jblocks, p.bs, p.next, p.why_not);
	uint64_t k0[2], k1[2], none = 0;
	bool keyed0 = false, keyed1 = false;
	crash_prune_key(&p, img, img, &none, 0, 0, k0, &keyed0);
	ok(keyed0, "the base itself keys (a clean journal: nothing to replay)");
	uint8_t *view = malloc(size);
	/* a 4 KiB block wholly inside the log, past its superblock */
	uint64_t in_log = ((p.ext[0].pblk + 64) * p.bs + 4095) / 4096;
	memcpy(view, img, size);
	memset(view + in_log * 4096, 0x5a, 4096);
	crash_prune_key(&p, img, view, &in_log, 1, 0, k1, &keyed1);
	ok(keyed1 && k1[0] == k0[0] && k1[1] == k0[1],
	   "a dead log block changed (4 KiB block %llu): the base's key",
	   (unsigned long long)in_log);
	crash_prune_key(&p, img, view, &in_log, 1, 1, k1, &keyed1);
	ok(keyed1 && (k1[0] != k0[0] || k1[1] != k0[1]),
	   "the same bytes at another crash point: another key");
	uint64_t outside = 3;
	memcpy(view, img, size);
	view[outside * 4096 + 100] ^= 1;
	crash_prune_key(&p, img, view, &outside, 1, 0, k1, &keyed1);
	ok(keyed1 && (k1[0] != k0[0] || k1[1] != k0[1]),
	   "a block outside the log changed: another key");
	uint64_t jsb = p.ext[0].pblk * p.bs / 4096;
	memcpy(view, img, size);
	view[p.ext[0].pblk * p.bs + 0x300] ^= 1; /* in the journal superblock's users area */
	crash_prune_key(&p, img, view, &jsb, 1, 0, k1, &keyed1);
	ok(!keyed1 || k1[0] != k0[0] || k1[1] != k0[1],
	   "the journal superblock changed: never the base's key");
	crash_prune_key(&p, img, img, &none, 0, 0, k1, &keyed1);
	ok(keyed1 && k1[0] == k0[0] && k1[1] == k0[1],
	   "and the replay copy was put back each time");
	crash_prune_close(&p);
	free(view);
	free(img);

	img = mkfs_image("-t ext3 -b 4096", 16, &size);
	ok(img && crash_prune_open(&p, img, size) == 0 && p.on && p.bs == 4096,
	   "ext3 with 4 KiB blocks (block pointers): the rule applies (%s)", img ? p.why_not : "");
	/* no checksum on ext3's journal superblock: a changed byte still opens, and counts */
	if (img && p.on && (view = malloc(size))) {
		uint64_t jsb3 = p.ext[0].pblk;
		crash_prune_key(&p, img, img, &none, 0, 0, k0, &keyed0);
		memcpy(view, img, size);
		view[jsb3 * 4096 + 0x300] ^= 1;
		crash_prune_key(&p, img, view, &jsb3, 1, 0, k1, &keyed1);
		ok(keyed0 && keyed1 && (k1[0] != k0[0] || k1[1] != k0[1]),
		   "ext3: the journal superblock's block is compared (another key)");
		free(view);
	}
	crash_prune_close(&p);
	free(img);
	img = mkfs_image("-t ext4 -O fast_commit", 16, &size);
	ok(img && crash_prune_open(&p, img, size) == 0 && !p.on && strstr(p.why_not, "fast commit"),
	   "ext4 with fast_commit: not applied: %s", img ? p.why_not : "");
	crash_prune_close(&p);
	free(img);
	img = mkfs_image("-t ext4 -O ^has_journal", 16, &size);
	ok(img && crash_prune_open(&p, img, size) == 0 && !p.on && strstr(p.why_not, "no journal"),
	   "ext4 without a journal: not applied: %s", img ? p.why_not : "");
	crash_prune_close(&p);
	free(img);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/bo-prune.XXXXXX");
	tap_require(mkdtemp(tmp) != NULL, "a scratch directory");
	real_images();
	one(LYING, "ext3,data=ordered,barrier=1", "lying");
	one(HONEST, "ext3,data=ordered,barrier=1,metadata_csum", "honest-csum");

	/* ext2: no journal, no rule */
	struct bo_err err = {{0}};
	char log[300], st[300];
	snprintf(log, sizeof(log), "%s/ext2.log", tmp);
	snprintf(st, sizeof(st), "%s/ext2", tmp);
	struct crash_result *own = run(HONEST, "ext2", NULL, log, NULL, false, 0, 0, 0, NULL, &err);
	struct tobs t = {0};
	struct crash_result *r =
	    own ? run(HONEST, "ext2", log, NULL, st, true, 1, 0, 0, &t, &err) : NULL;
	ok(r && r->pruned == 0 && strstr(r->prune_off, "no journal"),
	   "ext2: nothing pruned, and the result says why: %s %s", r ? r->prune_off : "", err.msg);
	crash_result_free(own);
	crash_result_free(r);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		diag("could not remove %s", tmp);
	store_device_close();
	return tap_done();
}
