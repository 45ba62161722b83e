// SPDX-License-Identifier: GPL-2.0-or-later
/* observe.c — blackout's own fs as an observer of a recovered crash state: mount it
 * (recovery), read the tree back with every file's bytes, unmount, and run the
 * consistency checkers. It records what it saw; crash_judge (judge.c) classifies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/e2fsck.h"
#include "blackout/fsck.h"
#include "blackout/util.h"
#include "crash/crash_int.h"

#define READ_MAX_FILE  (256ull << 20)
#define READ_MAX_DEPTH 64
#define READ_MAX_NODES 100000

struct names {
	char **v;
	size_t n, cap;
};

static int collect(void *ctx, const char *name, uint32_t ino, uint8_t type)
{
	(void)ino;
	(void)type;
	struct names *nm = ctx;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	char **nv = bo_grow(nm->v, &nm->cap, nm->n, sizeof(*nv), 16);
	if (!nv)
		return -ENOMEM;
	nm->v = nv;
	if (!(nm->v[nm->n] = strdup(name)))
		return -ENOMEM;
	nm->n++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the tree under `path` into `node`. A directory that cannot be listed or a
 * file that cannot be read is recorded (read_rc), not fatal: that is damage the
 * filesystem detected. */
static int read_tree(struct fs *fs, const char *path, struct crash_obs_node *node, unsigned depth,
                     size_t *budget)
{
	struct names nm = {0};
	int rc = fs_readdir(fs, path, collect, &nm);
	if (rc < 0 && rc != -ENOMEM) {
		node->read_rc = rc;
		rc = 0;
	}
	if (rc == 0 && nm.n) {
		qsort(nm.v, nm.n, sizeof(*nm.v), cmp_names);
		node->kids = calloc(nm.n, sizeof(*node->kids));
		if (!node->kids)
			rc = -ENOMEM;
	}
	char sub[CRASH_WL_MAX_PATH + 300];
	for (size_t i = 0; rc == 0 && i < nm.n; i++) {
		if (*budget == 0)
			break;
		(*budget)--;
		struct crash_obs_node *k = &node->kids[node->nkids++];
		k->name = nm.v[i];
		nm.v[i] = NULL;
		snprintf(sub, sizeof(sub), "%s/%s", strcmp(path, "/") == 0 ? "" : path, k->name);
		struct fs_stat st;
		int r = fs_lstat(fs, sub, &st);
		if (r < 0) {
			k->read_rc = r;
			continue;
		}
		k->dir = (st.mode & 0170000) == 0040000;
		if (k->dir) {
			if (depth < READ_MAX_DEPTH)
				rc = read_tree(fs, sub, k, depth + 1, budget);
			continue;
		}
		k->size = st.size;
		if ((st.mode & 0170000) != 0100000)
			continue; /* symlinks and the like: the workloads make none */
		if (st.size > READ_MAX_FILE) {
			k->read_rc = -EFBIG;
			continue;
		}
		k->data = malloc(st.size ? st.size : 1);
		if (!k->data) {
			rc = -ENOMEM;
			break;
		}
		struct fs_file *f;
		r = fs_open(fs, sub, FS_O_RDONLY, 0, &f);
		if (r < 0) {
			k->read_rc = r;
			continue;
		}
		uint64_t got = 0;
		while (got < st.size) {
			ssize_t n = fs_pread(f, k->data + got, st.size - got, got);
			if (n <= 0) {
				k->read_rc = n < 0 ? (int)n : -EIO;
				break;
			}
			got += (uint64_t)n;
		}
		fs_close(f);
	}
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	return rc;
}

int crash_observe_tree(struct fs *fs, struct crash_obs_node *root)
{
	size_t budget = READ_MAX_NODES;
	return read_tree(fs, "/", root, 0, &budget);
}

int crash_observe_fs(struct bdev *state, const struct fs_mount_opts *mo,
                     struct crash_observation *obs, struct crash_obs_times *t)
{
	memset(obs, 0, sizeof(*obs));
	obs->root.dir = true;
	double t0 = bo_now();
	struct fs *fs = NULL;
	struct bo_err merr = {{0}};
	int rc = fs_mount(state, mo, &fs, &merr);
	double t1 = bo_now();
	if (t)
		t->mount = t1 - t0;
	if (rc) {
		obs->mount_rc = rc;
		snprintf(obs->mount_msg, sizeof(obs->mount_msg), "%s", bo_errstr(&merr, rc));
		return 0;
	}
	rc = crash_observe_tree(fs, &obs->root);
	if (rc) {
		fs_abandon(fs);
		crash_observation_free(obs);
		return rc;
	}
	obs->unmount_rc = fs_unmount(fs);
	if (t)
		t->read = bo_now() - t1;
	return 0;
}

void crash_observe_check(crash_fsck_fn fn, void *ctx, struct bdev *state, struct crash_check *c)
{
	memset(c, 0, sizeof(*c));
	c->ran = true;
	c->clean = true;
	c->rc = fn(ctx, state, &c->clean, c->why, sizeof(c->why));
}

void crash_observation_free(struct crash_observation *obs)
{
	if (obs)
		crash_obs_free(&obs->root);
}

/* blackout's own fsck, read-only: the full check, or with fast the checks a mount can
 * afford (--fast). why gets the first problem (with its kind for the full check). */
static int own_fsck(struct bdev *d, bool fast, bool *clean, char *why, size_t whylen)
{
	struct fsck_opts o = {.repair = FSCK_REPAIR_NONE, .fast = fast, .max_problems = 1};
	struct fsck_report *r = calloc(1, sizeof(*r));
	struct bo_err err = {{0}};
	if (!r)
		return -ENOMEM;
	int rc = fsck_check(d, &o, r, &err);
	if (rc == 0) {
		*clean = r->nr_problems == 0;
		if (!*clean && r->nr_kept && fast)
			snprintf(why, whylen, "%s", r->problems[0].msg);
		else if (!*clean && r->nr_kept)
			snprintf(why, whylen, "%s: %s", fsck_kind_name(r->problems[0].kind),
			         r->problems[0].msg);
	} else {
		snprintf(why, whylen, "%s could not run: %s", fast ? "fsck --fast" : "fsck",
		         bo_errstr(&err, rc));
	}
	free(r);
	return rc;
}

int crash_fsck_own(void *ctx, struct bdev *d, bool *clean, char *why, size_t whylen)
{
	(void)ctx;
	return own_fsck(d, false, clean, why, whylen);
}

int crash_fsck_e2fsck(void *ctx, struct bdev *d, bool *clean, char *why, size_t whylen)
{
	(void)ctx;
	struct e2fsck_verdict v = {0};
	struct bo_err err = {{0}};
	int rc = e2fsck_run_bdev(d, NULL, &v, &err);
	if (rc) {
		snprintf(why, whylen, "%s", bo_errstr(&err, rc));
		return rc;
	}
	*clean = v.clean;
	snprintf(why, whylen, "e2fsck: %s", v.first_problem);
	e2fsck_verdict_free(&v);
	return 0;
}

int crash_fsck_verify(void *ctx, struct bdev *d, bool *clean, char *why, size_t whylen)
{
	(void)ctx;
	return own_fsck(d, true, clean, why, whylen);
}
