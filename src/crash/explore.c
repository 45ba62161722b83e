/* explore.c — the crash explorer's engine: mkfs + setup on a stack over COW
 * overlays, record the workload once, then walk the log with one live stack,
 * enumerate (or sample) every power-cut outcome at every cut point, and judge each
 * distinct state: mount (recovery), oracle, fsck. Output formats are in result.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/crash.h"
#include "blackout/dev.h"
#include "blackout/e2fsck.h"
#include "blackout/fs.h"
#include "blackout/fsck.h"
#include "blackout/rec.h"
#include "blackout/util.h"

/* ---- filesystem configuration ---------------------------------------------- */

#define CRASH_CLOCK 1577836800u /* 2020-01-01: every timestamp an exploration writes */

/* What the system runs at boot after an unclean shutdown, which decides whether
 * damage the lab's fsck finds is something the user would be told of. */
enum boot_check {
	BOOT_FSCK_FULL, /* ext2: no journal, so the boot scripts run a full fsck */
	BOOT_TRUST,     /* ext3: the journal is replayed and the fsck skipped */
	BOOT_VERIFY,    /* ext3 with verify=fast: replay, then fsck --fast at mount */
};

struct fscfg {
	struct fs_mkfs_opts mk;
	struct fs_mount_opts mo;
	bool writeback;
	bool verify_fast;
	enum boot_check boot;
};

static int parse_fs(const char *text, struct fscfg *c, struct bo_err *err)
{
	fs_mkfs_opts_default(&c->mk);
	fs_mount_opts_default(&c->mo);
	char buf[256], mount[256] = "";
	if (strlen(text) >= sizeof(buf))
		return bo_errf(err, -EINVAL, "--fs: longer than 255 bytes");
	strcpy(buf, text);
	bool typed = false;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "ext2") == 0 || strcmp(t, "ext3") == 0) {
			c->mk.type = t[3] - '0';
			typed = true;
		} else if (strcmp(t, "metadata_csum") == 0) {
			c->mk.metadata_csum = true;
		} else if (strncmp(t, "bs=", 3) == 0 || strncmp(t, "blocksize=", 10) == 0) {
			uint64_t v;
			int rc = bo_parse_size(strchr(t, '=') + 1, &v, err);
			if (rc)
				return rc;
			if (v != 1024 && v != 2048 && v != 4096)
				return bo_errf(err, -EINVAL,
				               "--fs: block size must be 1024, 2048 or 4096");
			c->mk.block_size = (uint32_t)v;
		} else if (strcmp(t, "verify=fast") == 0) {
			c->verify_fast = true;
		} else if (strncmp(t, "journal=", 8) == 0) {
			uint64_t v;
			int rc = bo_parse_size(t + 8, &v, err);
			if (rc)
				return rc;
			c->mk.journal_blocks = v;
		} else {
			size_t l = strlen(mount);
			if (l + strlen(t) + 2 > sizeof(mount))
				return bo_errf(err, -EINVAL, "--fs: too many mount options");
			snprintf(mount + l, sizeof(mount) - l, "%s%s", l ? "," : "", t);
		}
	}
	if (!typed)
		return bo_errf(err, -EINVAL,
		               "--fs '%s': name the filesystem first: ext2 or ext3, e.g. "
		               "'ext3,data=ordered,barrier=1'",
		               text);
	if (c->mk.type == 2 && c->mk.metadata_csum)
		return bo_errf(err, -EINVAL, "--fs: metadata_csum needs ext3 here");
	if (mount[0]) {
		int rc = fs_mount_opts_parse(mount, &c->mo, err);
		if (rc)
			return rc;
	}
	c->writeback = c->mo.data == FS_DATA_WRITEBACK;
	c->boot = c->mk.type == 2 || c->mo.no_journal ? BOOT_FSCK_FULL
	          : c->verify_fast                    ? BOOT_VERIFY
	                                              : BOOT_TRUST;
	/* a fixed clock: the same exploration gives the same bytes, states and ids */
	c->mk.now = CRASH_CLOCK;
	c->mo.now = CRASH_CLOCK;
	return 0;
}

/* ---- running the workload ---------------------------------------------------- */

#define FILL_MAX (1ull << 32)

static int write_pattern(struct fs_file *f, uint32_t tag, uint64_t off, uint64_t len,
                         uint64_t *done)
{
	uint8_t buf[65536];
	*done = 0;
	while (*done < len) {
		size_t n = len - *done < sizeof(buf) ? (size_t)(len - *done) : sizeof(buf);
		crash_pattern_fill(tag, off + *done, buf, n);
		ssize_t w = fs_pwrite(f, buf, n, off + *done);
		if (w < 0)
			return (int)w;
		if (w == 0)
			return -ENOSPC;
		*done += (uint64_t)w;
	}
	return 0;
}

static int open_any(struct fs *fs, const char *path, struct fs_file **f)
{
	struct fs_stat st;
	int rc = fs_stat(fs, path, &st);
	if (rc)
		return rc;
	bool dir = (st.mode & 0170000) == 0040000;
	return fs_open(fs, path, dir ? FS_O_DIRECTORY | FS_O_RDONLY : FS_O_RDONLY, 0, f);
}

static int run_step(struct fs *fs, const struct crash_step *s, struct rec_log *log,
                    struct crash_exec *x)
{
	struct fs_file *f = NULL;
	int rc = 0;
	memset(x, 0, sizeof(*x));
	switch (s->op) {
	case CRASH_OP_MKDIR: rc = fs_mkdir(fs, s->path, 0755); break;
	case CRASH_OP_CREATE: rc = fs_open(fs, s->path, FS_O_CREAT | FS_O_WRONLY, 0644, &f); break;
	case CRASH_OP_WRITE:
	case CRASH_OP_APPEND:
	case CRASH_OP_FILL: {
		rc = fs_open(fs, s->path, FS_O_WRONLY, 0, &f);
		if (rc)
			break;
		uint64_t off = s->off;
		if (s->op != CRASH_OP_WRITE) {
			struct fs_stat st;
			rc = fs_fstat(f, &st);
			if (rc)
				break;
			off = st.size;
		}
		x->off = off;
		if (s->op != CRASH_OP_FILL) {
			rc = write_pattern(f, s->tag, off, s->len, &x->done);
			break;
		}
		while (x->done < FILL_MAX) {
			uint64_t d = 0;
			rc = write_pattern(f, s->tag, off + x->done, s->len, &d);
			x->done += d;
			if (rc == -ENOSPC || rc == -EFBIG) {
				rc = 0; /* the point of a fill */
				break;
			}
			if (rc)
				break;
		}
		break;
	}
	case CRASH_OP_TRUNCATE: rc = fs_truncate(fs, s->path, s->off); break;
	case CRASH_OP_RENAME: rc = fs_rename(fs, s->path, s->path2); break;
	case CRASH_OP_LINK: rc = fs_link(fs, s->path, s->path2); break;
	case CRASH_OP_UNLINK: rc = fs_unlink(fs, s->path); break;
	case CRASH_OP_RMDIR: rc = fs_rmdir(fs, s->path); break;
	case CRASH_OP_FSYNC:
	case CRASH_OP_FDATASYNC:
	case CRASH_OP_FSYNC_DIR:
		rc = open_any(fs, s->path, &f);
		if (rc == 0)
			rc = s->op == CRASH_OP_FDATASYNC ? fs_fdatasync(f) : fs_fsync(f);
		break;
	case CRASH_OP_SYNC: rc = fs_sync(fs); break;
	case CRASH_OP_MARK: {
		char m[80];
		snprintf(m, sizeof(m), "mark %s", s->path);
		rc = log ? rec_log_mark(log, m) : 0;
		break;
	}
	}
	if (f) {
		int c = fs_close(f);
		if (rc == 0)
			rc = c;
	}
	x->rc = rc;
	return rc;
}

/* ---- reading a recovered filesystem back ------------------------------------ */

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
	if (nm->n == nm->cap) {
		size_t nc = nm->cap ? nm->cap * 2 : 16;
		char **nv = realloc(nm->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		nm->v = nv;
		nm->cap = nc;
	}
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

/* ---- the exploration -------------------------------------------------------- */

struct cut {
	size_t pos;
	bool inflight;
	size_t completed;
	uint64_t outcomes;
	double log2;
	uint64_t quota;
};

/* Keys of the states seen so far, each with the ordinal of its first appearance:
 * that ordinal (not the key's bytes, which hold timestamps of the recording) picks
 * the shard, so every shard partitions the states the same way. */
struct seen {
	uint64_t *key, *first;
	size_t cap, n;
};

static size_t slot(uint64_t key, size_t cap)
{
	return (size_t)(key * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

static int seen_add(struct seen *s, uint64_t key, uint64_t ordinal, bool *dup, uint64_t *first)
{
	if (key == 0)
		key = 1;
	if ((s->n + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 4096;
		uint64_t *nk = calloc(nc, sizeof(*nk)), *nf = calloc(nc, sizeof(*nf));
		if (!nk || !nf) {
			free(nk);
			free(nf);
			return -ENOMEM;
		}
		for (size_t i = 0; i < s->cap; i++)
			if (s->key[i]) {
				size_t j = slot(s->key[i], nc);
				while (nk[j])
					j = (j + 1) & (nc - 1);
				nk[j] = s->key[i];
				nf[j] = s->first[i];
			}
		free(s->key);
		free(s->first);
		s->key = nk;
		s->first = nf;
		s->cap = nc;
	}
	size_t j = slot(key, s->cap);
	while (s->key[j]) {
		if (s->key[j] == key) {
			*dup = true;
			*first = s->first[j];
			return 0;
		}
		j = (j + 1) & (s->cap - 1);
	}
	s->key[j] = key;
	s->first[j] = ordinal;
	s->n++;
	*dup = false;
	*first = ordinal;
	return 0;
}

struct explorer {
	const struct crash_config *cfg;
	struct fscfg fsc;
	const struct crash_oracle *oracle;
	struct crash_result *r;
	struct seen seen;
	size_t fail_cap;
	struct bo_err *err;
	const struct cut *cut; /* the cut being enumerated */
	uint64_t k;            /* outcome ordinal within the cut */
	bool sampled;
	uint64_t want_k; /* --state: the one outcome to judge */
	bool only_one;
	uint64_t total_planned;
	double t0, last_progress;
	uint64_t e2fsck_sample;
	struct bdev *live, *live0;       /* the stack at the cut, and at recording start */
	int armed;                       /* id of the --arm rule, or -1 */
	const struct blk_inflight *infl; /* the write in flight at the cut, or NULL */
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void digest_walk(struct bdev *d, uint64_t *h, unsigned *ncow, unsigned depth)
{
	struct bdev *low = blk_lower(d, 0);
	bool cow = strcmp(d->name, "cow") == 0; /* its base is shared by every state */
	if (cow || !low || depth > 64) {
		uint64_t v = cow ? blk_cow_digest(d) : 0;
		*ncow += cow;
		*h = mix64(*h ^ v) + 0x9e3779b97f4a7c15ull;
		return;
	}
	for (unsigned i = 0; (low = blk_lower(d, i)); i++)
		digest_walk(low, h, ncow, depth + 1);
}

static void state_id(char *buf, size_t len, const struct cut *c, bool sampled, uint64_t k)
{
	snprintf(buf, len, "p%zu%s-%s%" PRIu64, c->pos, c->inflight ? "w" : "", sampled ? "s" : "",
	         k);
}

static int save_image(struct bdev *d, const char *path, struct bo_err *err)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return bo_errf(err, -errno, "--keep: cannot create %s: %s", path, strerror(errno));
	size_t chunk = 1 << 20;
	uint8_t *buf = malloc(chunk);
	int rc = buf ? 0 : -ENOMEM;
	uint64_t total = blk_size_bytes(d);
	for (uint64_t off = 0; rc == 0 && off < total; off += chunk) {
		size_t n = total - off < chunk ? (size_t)(total - off) : chunk;
		rc = blk_pread(d, off, n, buf);
		if (rc)
			bo_errf(err, rc, "--keep: reading the state: %s", bo_errstr(&d->err, rc));
		else if (fwrite(buf, 1, n, f) != n)
			rc = bo_errf(err, -EIO, "--keep: writing %s failed", path);
	}
	free(buf);
	if (fclose(f) && rc == 0)
		rc = bo_errf(err, -EIO, "--keep: writing %s failed", path);
	return rc;
}

static int keep_state(struct explorer *ex, struct bdev *raw, const char *id)
{
	const char *dir = ex->cfg->keep_dir;
	mkdir(dir, 0777);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.img", dir, id);
	int rc = save_image(raw, path, ex->err);
	if (rc)
		return rc;
	struct crash_config one = *ex->cfg;
	one.state_id = id;
	char line[4096];
	if (crash_config_format(&one, NULL, line, sizeof(line)) < 0)
		return bo_errf(ex->err, -ENAMETOOLONG, "--keep: the rebuild line is too long");
	snprintf(path, sizeof(path), "%s/%s.cmd", dir, id);
	FILE *f = fopen(path, "w");
	if (!f)
		return bo_errf(ex->err, -errno, "--keep: cannot create %s", path);
	fprintf(f, "%s --keep DIR\n", line);
	fclose(f);
	return 0;
}

static int add_fail(struct explorer *ex, const struct crash_state *s)
{
	struct crash_result *r = ex->r;
	if (r->nfail == ex->fail_cap) {
		size_t nc = ex->fail_cap ? ex->fail_cap * 2 : 16;
		struct crash_state *nf = realloc(r->fail, nc * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		r->fail = nf;
		ex->fail_cap = nc;
	}
	r->fail[r->nfail++] = *s;
	return 0;
}

static void progress(struct explorer *ex, bool force)
{
	if (!ex->cfg->progress)
		return;
	double now = bo_now();
	if (!force && now - ex->last_progress < 0.25)
		return;
	ex->last_progress = now;
	struct crash_progress p = {ex->r->built, ex->total_planned, ex->r->nfail, now - ex->t0};
	ex->cfg->progress(ex->cfg->progress_ctx, &p);
}

static int add_damage(struct crash_result *r, uint64_t lba, const char *what)
{
	struct crash_damage *d = r->ndamage ? &r->damage[r->ndamage - 1] : NULL;
	if (d && d->lba + d->count == lba && strcmp(d->what, what) == 0) {
		d->count++;
		return 0;
	}
	if (r->ndamage == CRASH_DAMAGE_MAX) {
		r->damage_truncated = true;
		return 0;
	}
	if (!r->damage && !(r->damage = calloc(CRASH_DAMAGE_MAX, sizeof(*r->damage))))
		return -ENOMEM;
	d = &r->damage[r->ndamage++];
	d->lba = lba;
	d->count = 1;
	snprintf(d->what, sizeof(d->what), "%s", what);
	return 0;
}

/* Names what each damaged range's first block belonged to, on a recovered copy of
 * the stack as it stood at the cut (best effort: a copy that does not mount leaves
 * the owners empty). */
static void name_damage_owners(struct explorer *ex)
{
	struct crash_result *r = ex->r;
	struct bdev *ref;
	if (!r->ndamage || blk_clone(ex->live, &ref) != 0)
		return;
	struct fs *fs;
	struct bo_err e = {{0}};
	struct fs_statfs st;
	uint64_t *blocks = calloc(r->ndamage, sizeof(*blocks));
	struct fs_block_owner *own = calloc(r->ndamage, sizeof(*own));
	if (blocks && own && fs_mount(ref, &ex->fsc.mo, &fs, &e) == 0) {
		if (fs_statfs(fs, &st) == 0 && st.block_size) {
			for (size_t i = 0; i < r->ndamage; i++) {
				r->damage[i].block =
				    r->damage[i].lba * ref->sector_size / st.block_size;
				blocks[i] = r->damage[i].block;
			}
			if (fs_block_owners(fs, blocks, r->ndamage, own) == 0)
				for (size_t i = 0; i < r->ndamage; i++) {
					r->damage[i].ino = own[i].ino;
					snprintf(r->damage[i].owner, sizeof(r->damage[i].owner),
					         "%s", own[i].what);
				}
		}
		fs_abandon(fs);
	}
	free(blocks);
	free(own);
	blk_close(ref);
}

/* Compares the state with the stack at the cut (and the write in flight) and at the
 * start of the recording, a megabyte at a time. */
static int map_damage(struct explorer *ex, struct bdev *state)
{
	uint32_t ss = state->sector_size;
	size_t chunk = 1 << 20;
	uint8_t *a = malloc(chunk), *n = malloc(chunk), *o = malloc(chunk);
	int rc = a && n && o ? 0 : -ENOMEM;
	uint64_t total = blk_size_bytes(state);
	for (uint64_t off = 0; rc == 0 && off < total; off += chunk) {
		size_t len = total - off < chunk ? (size_t)(total - off) : chunk;
		if ((rc = blk_pread(state, off, len, a)) ||
		    (rc = blk_pread(ex->live, off, len, n)) ||
		    (rc = blk_pread(ex->live0, off, len, o)))
			break;
		for (size_t i = 0; i < len && rc == 0; i += ss) {
			uint64_t lba = (off + i) / ss;
			if (memcmp(a + i, n + i, ss) == 0)
				continue;
			const struct blk_inflight *w = ex->infl;
			if (w && lba >= w->lba && lba - w->lba < w->count &&
			    memcmp(a + i, (const uint8_t *)w->data + (lba - w->lba) * ss, ss) == 0)
				continue;
			rc = add_damage(ex->r, lba,
			                memcmp(a + i, o + i, ss) == 0 ? "lost" : "damaged");
		}
	}
	free(a);
	free(n);
	free(o);
	if (rc == 0)
		name_damage_owners(ex);
	return rc ? bo_errf(ex->err, rc, "mapping the damage: %s", strerror(-rc)) : 0;
}

/* The lab's fsck found damage in a recovered state: would the user be told? Only if
 * the system runs a check at boot: ext2 always does (no journal); ext3 trusts its
 * journal and skips it — the seeds' point — unless verify=fast asks for the quick
 * metadata scrub at mount, which is then what must notice. */
static void boot_detects(struct explorer *ex, struct bdev *state, struct crash_state *s)
{
	const char *by = NULL;
	if (ex->fsc.boot == BOOT_FSCK_FULL) {
		by = "fsck";
	} else if (ex->fsc.boot == BOOT_VERIFY) {
		struct fsck_opts o = {.repair = FSCK_REPAIR_NONE, .fast = true, .max_problems = 1};
		struct fsck_report *r = calloc(1, sizeof(*r));
		struct bo_err err = {{0}};
		if (r && fsck_check(state, &o, r, &err) == 0 && r->nr_problems)
			by = "verify";
		free(r);
	}
	if (!by)
		return;
	s->detected = true;
	if (!s->detected_by[0])
		snprintf(s->detected_by, sizeof(s->detected_by), "%s", by);
}

/* Judges one crash state (already cut and powered back on). */
static int judge_state(struct explorer *ex, struct bdev *state)
{
	struct crash_result *r = ex->r;
	const struct cut *c = ex->cut;
	uint64_t k = ex->k++;
	if (ex->only_one && k != ex->want_k)
		return 0;
	double t = bo_now();
	uint64_t key = 0x243f6a8885a308d3ull ^ (uint64_t)c->completed;
	unsigned ncow = 0;
	digest_walk(state, &key, &ncow, 0);
	if (ncow == 0) /* no overlay to digest (a model with private media): no dedup */
		key = mix64(key ^ r->built);
	bool dup = false;
	uint64_t first;
	int rc = seen_add(&ex->seen, key, r->built, &dup, &first);
	r->built++;
	if (rc)
		return rc;
	bool mine = ex->cfg->nshards <= 1 || mix64(first) % ex->cfg->nshards == ex->cfg->shard;
	if (!mine) {
		r->t_construct += bo_now() - t;
		return 0;
	}
	if (dup) {
		r->duplicates++;
		r->t_construct += bo_now() - t;
		return 0;
	}
	r->judged++;
	struct crash_state s = {0};
	state_id(s.id, sizeof(s.id), c, ex->sampled, k);
	s.pos = c->pos;
	s.inflight = c->inflight;
	s.completed = c->completed;
	s.e2fsck_agrees = -1;
	struct bdev *raw = NULL;
	if (ex->cfg->map_damage && ex->only_one && (rc = map_damage(ex, state)))
		return rc;
	if (ex->cfg->keep_dir && (rc = blk_clone(state, &raw)))
		return bo_errf(ex->err, rc, "cloning a state to keep it: %s",
		               bo_errstr(&state->err, rc));
	double t1 = bo_now();
	r->t_construct += t1 - t;

	/* an armed fault is transient (a flaky link, not a dying disk): the power cut
	 * ends it, and recovery runs on a device that works */
	if (ex->armed >= 0) {
		struct bdev *fault = dev_stack_find(state, "fault", 0);
		if (fault)
			dev_fault_disarm(fault, ex->armed);
	}
	struct fs *fs = NULL;
	struct bo_err merr = {{0}};
	struct crash_verdict v = {0};
	rc = fs_mount(state, &ex->fsc.mo, &fs, &merr);
	double t2 = bo_now();
	r->t_recover += t2 - t1;
	bool fsck_dirty = false;
	char why[256] = "";
	if (rc) {
		v.broken = 1u << CRASH_INV_CONSISTENT;
		snprintf(v.detail, sizeof(v.detail), "consistent: mount failed: %s",
		         bo_errstr(&merr, rc));
		s.detected = true;
		snprintf(s.detected_by, sizeof(s.detected_by), "mount");
		rc = 0;
	} else {
		struct crash_obs_node root = {.dir = true};
		size_t budget = READ_MAX_NODES;
		rc = read_tree(fs, "/", &root, 0, &budget);
		if (rc == 0)
			rc = crash_oracle_check(ex->oracle, c->completed, &root,
			                        ex->fsc.writeback ? CRASH_ORACLE_WRITEBACK : 0, &v);
		crash_obs_free(&root);
		double t3 = bo_now();
		r->t_oracle += t3 - t2;
		if (rc) {
			fs_abandon(fs);
			blk_close(raw);
			return bo_errf(ex->err, rc, "judging state %s: %s", s.id, strerror(-rc));
		}
		if (v.read_errors) {
			s.detected = true;
			snprintf(s.detected_by, sizeof(s.detected_by), "read");
		}
		int urc = fs_unmount(fs);
		if (urc) {
			/* the filesystem noticed something on the way out */
			s.detected = true;
			if (!s.detected_by[0])
				snprintf(s.detected_by, sizeof(s.detected_by), "unmount");
		}
		crash_fsck_fn judge = ex->cfg->no_fsck ? NULL
		                      : ex->cfg->fsck  ? ex->cfg->fsck
		                                       : crash_fsck_own;
		if (judge && urc == 0) {
			bool clean = true;
			int frc = judge(ex->cfg->fsck_ctx, state, &clean, why, sizeof(why));
			if (frc == 0 && !clean) {
				fsck_dirty = true;
				v.broken |= 1u << CRASH_INV_CONSISTENT;
				boot_detects(ex, state, &s);
			}
		}
		bool sample_ok = (mix64(first ^ 0x5bd1e995) & 63) == 0;
		if (ex->cfg->e2fsck && urc == 0 && (v.broken || sample_ok || !judge)) {
			bool clean = true;
			char ewhy[256] = "";
			int erc = crash_fsck_e2fsck(NULL, state, &clean, ewhy, sizeof(ewhy));
			if (erc == 0) {
				r->e2fsck_runs++;
				if (judge) {
					s.e2fsck_agrees = clean == !fsck_dirty;
					if (!s.e2fsck_agrees)
						r->e2fsck_disagree++;
				} else if (!clean) {
					v.broken |= 1u << CRASH_INV_CONSISTENT;
					boot_detects(ex, state, &s);
					snprintf(why, sizeof(why), "%s", ewhy);
				}
			}
		}
		r->t_fsck += bo_now() - t3;
	}
	if (why[0] && (v.broken & (1u << CRASH_INV_CONSISTENT))) {
		size_t l = strlen(v.detail);
		snprintf(v.detail + l, sizeof(v.detail) - l, "%sconsistent: fsck: %.200s",
		         l ? "; " : "", why);
	}
	s.broken = v.broken;
	s.allowed = v.allowed;
	snprintf(s.detail, sizeof(s.detail), "%s", v.detail);
	for (int i = 0; i < CRASH_INV_N; i++) {
		if (v.broken & (1u << i))
			r->viol[i]++;
		if (v.allowed & (1u << i))
			r->allowed[i]++;
	}
	if (!v.broken) {
		r->ok++;
	} else {
		if (s.detected)
			r->detected++;
		else
			r->silent++;
	}
	if ((v.broken || ex->only_one) && ex->cfg->keep_dir) {
		rc = keep_state(ex, raw, s.id);
		if (rc) {
			blk_close(raw);
			return rc;
		}
	}
	blk_close(raw);
	if (v.broken || v.allowed)
		rc = add_fail(ex, &s);
	progress(ex, false);
	return rc;
}

static int foreach_fn(void *ctx, struct bdev *state, const struct blk_chooser_list *decisions)
{
	(void)decisions;
	return judge_state(ctx, state);
}

/* The states of one cut: every outcome in DFS order, or `quota` seeded samples. */
static int explore_cut(struct explorer *ex, struct bdev *live, const struct blk_inflight *infl,
                       const struct cut *c, bool sampled)
{
	ex->cut = c;
	ex->k = 0;
	ex->sampled = sampled;
	ex->live = live;
	ex->infl = infl;
	if (!sampled) {
		bool complete = false;
		uint64_t max = ex->only_one ? ex->want_k + 1 : c->quota;
		int64_t n = blk_cut_foreach(live, infl, max, foreach_fn, ex, &complete);
		if (n < 0)
			return n == -E2BIG ? bo_errf(ex->err, (int)n, "%s", live->err.msg) : (int)n;
		/* The count is taken along the all-zero path. Under a volatile model
		 * another one (cache > cache) asks other decisions when the upper one
		 * lands something; a walk that met its quota with outcomes left means the
		 * run is not exhaustive, whatever the count said. */
		if (!complete && !ex->only_one)
			ex->r->exhaustive = false;
		return 0;
	}
	uint64_t from = ex->only_one ? ex->want_k : 0;
	uint64_t to = ex->only_one ? ex->want_k + 1 : c->quota;
	for (uint64_t j = from; j < to; j++) {
		struct blk_chooser_random ch;
		blk_chooser_random_init(&ch, mix64(ex->cfg->seed ^ mix64(c->pos * 2 + c->inflight) ^
		                                   mix64(j + 0x1234567)));
		struct bdev *st;
		int rc = blk_clone(live, &st);
		if (rc)
			return bo_errf(ex->err, rc, "clone: %s", bo_errstr(&live->err, rc));
		rc = blk_power_cut(st, &ch.base, infl);
		if (rc == 0)
			rc = blk_power_restore(st);
		if (rc == 0) {
			ex->k = j;
			rc = judge_state(ex, st);
		} else {
			rc = bo_errf(ex->err, rc, "power cut: %s", bo_errstr(&st->err, rc));
		}
		blk_close(st);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_u64p(const void *a, const void *b)
{
	uint64_t x = **(uint64_t *const *)a, y = **(uint64_t *const *)b;
	return x < y ? -1 : x > y;
}

/* Shares `budget` among the cuts: small cuts get every outcome, the rest an
 * equal share of what is left (at least one each). With more cuts than the budget,
 * `budget` cuts evenly spread over the recording (the last one always) get one
 * state each and the others none: --max-states is a bound, not a hint. */
static void plan(struct cut *cuts, size_t n, uint64_t budget)
{
	if (budget && n > budget) {
		for (size_t i = 0; i < n; i++)
			cuts[i].quota = (uint64_t)(((unsigned __int128)(i + 1) * budget) / n) >
			                (uint64_t)(((unsigned __int128)i * budget) / n);
		return;
	}
	uint64_t **ord = malloc(n * sizeof(*ord));
	uint64_t *q = malloc(n * sizeof(*q));
	if (!ord || !q) {
		for (size_t i = 0; i < n; i++)
			cuts[i].quota = cuts[i].outcomes < 1 ? 1 : 1;
		free(ord);
		free(q);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		q[i] = cuts[i].outcomes;
		ord[i] = &q[i];
	}
	qsort(ord, n, sizeof(*ord), cmp_u64p);
	uint64_t left = budget;
	for (size_t i = 0; i < n; i++) {
		uint64_t share = left / (n - i);
		if (share < 1)
			share = 1;
		uint64_t take = *ord[i] < share ? *ord[i] : share;
		*ord[i] = take; /* reuse: q now holds the quota */
		left = left > take ? left - take : 0;
	}
	for (size_t i = 0; i < n; i++)
		cuts[i].quota = q[i];
	free(ord);
	free(q);
}

static int parse_state_id(const char *id, size_t *pos, bool *w, bool *s, uint64_t *k)
{
	char *end;
	if (id[0] != 'p')
		return -EINVAL;
	errno = 0;
	unsigned long long p = strtoull(id + 1, &end, 10);
	if (end == id + 1 || errno)
		return -EINVAL;
	*w = *end == 'w';
	if (*w)
		end++;
	if (*end++ != '-')
		return -EINVAL;
	*s = *end == 's';
	if (*s)
		end++;
	const char *ks = end;
	unsigned long long kk = strtoull(ks, &end, 10);
	if (end == ks || *end || errno)
		return -EINVAL;
	*pos = (size_t)p;
	*k = kk;
	return 0;
}

static void record_io(struct crash_result *r, const struct rec_log *log)
{
	size_t n = rec_log_len(log);
	r->io = calloc(n ? n : 1, sizeof(*r->io));
	if (!r->io)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		struct crash_io *o = &r->io[r->nio++];
		snprintf(o->op, sizeof(o->op), "%s", rec_op_name(e->op));
		o->lba = e->lba;
		o->count = e->count;
		o->fua = e->op == REC_WRITE && (e->flags & BLK_FUA);
		if (e->op == REC_MARK)
			snprintf(o->mark, sizeof(o->mark), "%s", e->mark);
	}
}

static size_t completed_at(const struct rec_log *log, size_t pos)
{
	size_t m = 0;
	for (size_t i = 0; i < pos; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->op == REC_MARK &&
		    (strncmp(e->mark, "step ", 5) == 0 || strcmp(e->mark, "end") == 0))
			m++;
	}
	return m ? m - 1 : 0;
}

/* Replays one recorded entry onto the live stack exactly as it went the first time.
 * An operation that failed when recorded (an armed fault rule) is issued again and
 * must fail again: fault rules count the operations they see, so skipping it would
 * make the live stack's rules drift from what the recording saw. */
static int replay_as_recorded(const struct rec_entry *e, struct bdev *live)
{
	if (e->op == REC_MARK || e->op == REC_READ)
		return 0;
	if (e->result == 0)
		return rec_apply(e, live);
	int rc;
	switch (e->op) {
	case REC_WRITE: rc = blk_write(live, e->lba, e->count, e->data, e->flags); break;
	case REC_FLUSH: rc = blk_flush(live); break;
	case REC_DISCARD: rc = blk_discard(live, e->lba, e->count); break;
	default: return 0;
	}
	return rc != 0 ? 0
	               : bo_errf(&live->err, -EPROTO,
	                         "a %s that failed when recorded (%d) succeeded on replay",
	                         rec_op_name(e->op), e->result);
}

int crash_explore(const struct crash_config *cfg, struct crash_result **out, struct bo_err *err)
{
	*out = NULL;
	struct explorer ex = {.cfg = cfg, .err = err, .t0 = bo_now(), .armed = -1};
	int rc = parse_fs(cfg->fs, &ex.fsc, err);
	if (rc)
		return rc;
	if (!cfg->wl)
		return bo_errf(err, -EINVAL, "no workload");
	if (cfg->nshards > 1 && cfg->shard >= cfg->nshards)
		return bo_errf(err, -EINVAL, "--shard %u/%u: the index must be below the count",
		               cfg->shard, cfg->nshards);
	size_t want_pos = 0;
	bool want_w = false, want_s = false;
	if (cfg->state_id) {
		if (parse_state_id(cfg->state_id, &want_pos, &want_w, &want_s, &ex.want_k))
			return bo_errf(err, -EINVAL,
			               "--state '%s': expected an id like p12-3, p12w-0 or p40-s7",
			               cfg->state_id);
		ex.only_one = true;
	}
	struct crash_result *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ex.r = r;
	snprintf(r->stack, sizeof(r->stack), "%s", cfg->stack);
	snprintf(r->fs, sizeof(r->fs), "%s", cfg->fs);
	snprintf(r->workload, sizeof(r->workload), "%s", cfg->wl->name);
	r->seed = cfg->seed;
	r->max_states = cfg->max_states ? cfg->max_states : 100000;
	r->shard = cfg->nshards > 1 ? cfg->shard : 0;
	r->nshards = cfg->nshards > 1 ? cfg->nshards : 1;

	struct dev_cow_leaves leaves = {0};
	struct dev_open_opts oo = {.wrap_leaf = dev_wrap_cow, .ctx = &leaves};
	struct bdev *stack = NULL, *recdev = NULL, *live = NULL, *live0 = NULL;
	struct rec_log *log = NULL;
	struct fs *fs = NULL;
	struct crash_oracle *oracle = NULL;
	struct crash_exec *exec = NULL;
	struct cut *cuts = NULL;
	size_t ncuts = 0;
	struct bo_err e2 = {{0}};

	rc = dev_stack_open_text(cfg->stack, &oo, &stack, err);
	if (rc)
		goto out;
	rc = fs_mkfs(stack, &ex.fsc.mk, &e2);
	if (rc) {
		bo_errf(err, rc, "mkfs on the stack: %s", bo_errstr(&e2, rc));
		goto out;
	}
	if ((rc = rec_log_new(stack->sector_size, stack->nr_sectors, &log)) ||
	    (rc = rec_open(stack, log, 0, &recdev)))
		goto out;
	rec_pause(recdev, true);
	rc = fs_mount(recdev, &ex.fsc.mo, &fs, &e2);
	if (rc) {
		bo_errf(err, rc, "mounting the new filesystem: %s", bo_errstr(&e2, rc));
		goto out;
	}
	struct crash_exec sx;
	for (size_t i = 0; i < cfg->wl->nsetup; i++) {
		rc = run_step(fs, &cfg->wl->setup[i], NULL, &sx);
		if (rc) {
			bo_errf(err, rc, "setup, line %u (%s %s): %s", cfg->wl->setup[i].line,
			        crash_op_name(cfg->wl->setup[i].op), cfg->wl->setup[i].path,
			        bo_errstr(fs_err(fs), rc));
			goto out;
		}
	}
	if ((rc = fs_sync(fs)) || (rc = blk_flush(recdev))) {
		bo_errf(err, rc, "sync after setup: %s", bo_errstr(fs_err(fs), rc));
		goto out;
	}
	/* The bystanders were synced "long ago": let the stack sit idle, so even a drive
	 * that ignores flushes has written them (blk.h, settle). What it loses is then
	 * the workload's, which is what a lying cache is judged on. */
	if ((rc = blk_settle(stack))) {
		bo_errf(err, rc, "letting the stack settle after setup: %s",
		        bo_errstr(&stack->err, rc));
		goto out;
	}
	/* faults that begin once the set-up is on the media (NO-WRITE-ERRORS) */
	if (cfg->arm && cfg->arm[0]) {
		struct bdev *fault = dev_stack_find(stack, "fault", 0);
		if (!fault) {
			rc = bo_errf(err, -EINVAL, "--arm: the stack has no fault layer");
			goto out;
		}
		rc = dev_fault_arm(fault, cfg->arm, &e2);
		if (rc < 0) {
			bo_errf(err, rc, "--arm: %s", bo_errstr(&e2, rc));
			goto out;
		}
		ex.armed = rc;
		rc = 0;
	}
	/* the live stack starts where the recording starts */
	if ((rc = blk_clone(stack, &live0))) {
		bo_errf(err, rc, "the stack cannot be cloned (%s): %s", stack->name,
		        bo_errstr(&stack->err, rc));
		goto out;
	}
	double trec = bo_now();
	rec_pause(recdev, false);
	exec = calloc(cfg->wl->nrun ? cfg->wl->nrun : 1, sizeof(*exec));
	if (!exec) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cfg->wl->nrun; i++) {
		char m[32];
		snprintf(m, sizeof(m), "step %zu", i);
		if ((rc = rec_log_mark(log, m)))
			goto out;
		run_step(fs, &cfg->wl->run[i], log, &exec[i]);
	}
	if ((rc = rec_log_mark(log, "end")))
		goto out;
	rec_pause(recdev, true);
	fs_abandon(fs);
	fs = NULL;
	r->t_record = bo_now() - trec;
	record_io(r, log);
	if ((rc = crash_oracle_new(cfg->wl, exec, &oracle, err)))
		goto out;
	ex.oracle = oracle;

	/* the cut points, and the outcomes each allows */
	size_t n = rec_log_len(log);
	cuts = calloc(2 * n + 2, sizeof(*cuts));
	if (!cuts || (rc = blk_clone(live0, &live))) {
		rc = rc ? rc : -ENOMEM;
		goto out;
	}
	double total = 0;
	for (size_t p = 0; p <= n; p++) {
		const struct rec_entry *e = p < n ? rec_log_get(log, p) : NULL;
		if (!e || e->op != REC_MARK) {
			for (int w = 0; w < 2; w++) {
				if (w && !(e && e->op == REC_WRITE && e->result == 0))
					continue;
				struct blk_inflight in = {0};
				if (w)
					in = (struct blk_inflight){e->lba, e->count, e->flags,
					                           e->data};
				struct dev_cut_space sp;
				rc = dev_cut_space(live, w ? &in : NULL, &sp);
				if (rc) {
					bo_errf(err, rc, "outcomes of a cut: %s",
					        bo_errstr(&live->err, rc));
					goto out;
				}
				struct cut *c = &cuts[ncuts++];
				c->pos = p;
				c->inflight = w;
				c->completed = completed_at(log, p);
				c->outcomes = sp.outcomes ? sp.outcomes : 1;
				c->log2 = sp.log2;
				total += sp.outcomes == UINT64_MAX ? pow(2.0, sp.log2)
				                                   : (double)sp.outcomes;
			}
		}
		if (e && (rc = replay_as_recorded(e, live))) {
			bo_errf(err, rc, "replaying entry %zu: %s", p, bo_errstr(&live->err, rc));
			goto out;
		}
	}
	r->cuts = ncuts;
	r->space = total >= 1.8e19 ? UINT64_MAX : (uint64_t)total;
	r->space_log2 = total > 0 ? log2(total) : 0;
	r->exhaustive = total <= (double)r->max_states;
	if (r->exhaustive)
		for (size_t i = 0; i < ncuts; i++)
			cuts[i].quota = cuts[i].outcomes;
	else
		plan(cuts, ncuts, r->max_states);
	for (size_t i = 0; i < ncuts; i++)
		ex.total_planned += cuts[i].quota;

	/* walk the log again with one live stack, cutting at every point */
	ex.live0 = live0;
	blk_close(live);
	live = NULL;
	if ((rc = blk_clone(live0, &live)))
		goto out;
	size_t ci = 0;
	for (size_t p = 0; p <= n && ci < ncuts; p++) {
		while (ci < ncuts && cuts[ci].pos == p) {
			const struct cut *c = &cuts[ci++];
			const struct rec_entry *e = p < n ? rec_log_get(log, p) : NULL;
			struct blk_inflight in = {0};
			if (c->inflight)
				in = (struct blk_inflight){e->lba, e->count, e->flags, e->data};
			bool sampled = c->quota < c->outcomes;
			if (ex.only_one && (c->pos != want_pos || c->inflight != want_w))
				continue;
			if (ex.only_one)
				sampled = want_s;
			rc = explore_cut(&ex, live, c->inflight ? &in : NULL, c, sampled);
			if (rc)
				goto out;
		}
		const struct rec_entry *e = p < n ? rec_log_get(log, p) : NULL;
		if (e && (rc = replay_as_recorded(e, live))) {
			bo_errf(err, rc, "replaying entry %zu: %s", p, bo_errstr(&live->err, rc));
			goto out;
		}
	}
	if (ex.only_one && r->judged == 0 && r->duplicates == 0 && r->built == 0)
		rc = bo_errf(err, -ENOENT, "--state %s: no such state in this exploration",
		             cfg->state_id);
	r->coverage = total > 0 ? (double)r->built / total : 1.0;
	if (r->coverage > 1.0)
		r->coverage = 1.0;
	progress(&ex, true);
out:
	if (fs)
		fs_abandon(fs);
	blk_close(live);
	blk_close(live0);
	blk_close(recdev);
	blk_close(stack);
	dev_cow_leaves_close(&leaves);
	rec_log_free(log);
	crash_oracle_free(oracle);
	free(exec);
	free(cuts);
	free(ex.seen.key);
	free(ex.seen.first);
	r->t_total = bo_now() - ex.t0;
	if (rc) {
		crash_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int crash_fsck_own(void *ctx, struct bdev *d, bool *clean, char *why, size_t whylen)
{
	(void)ctx;
	struct fsck_opts o = {.repair = FSCK_REPAIR_NONE, .max_problems = 1};
	struct fsck_report *r = calloc(1, sizeof(*r));
	struct bo_err err = {{0}};
	if (!r)
		return -ENOMEM;
	int rc = fsck_check(d, &o, r, &err);
	if (rc == 0) {
		*clean = r->nr_problems == 0;
		if (!*clean && r->nr_kept)
			snprintf(why, whylen, "%s: %s", fsck_kind_name(r->problems[0].kind),
			         r->problems[0].msg);
	} else {
		snprintf(why, whylen, "fsck could not run: %s", bo_errstr(&err, rc));
	}
	free(r);
	return rc;
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

void crash_result_free(struct crash_result *r)
{
	if (!r)
		return;
	free(r->fail);
	free(r->io);
	free(r->damage);
	free(r);
}

/* ---- for other systems' recoveries (vmtest) ----------------------------------- */

int crash_workload_dry_run(const struct crash_workload *w, struct crash_exec *exec,
                           struct bo_err *err)
{
	struct fscfg fsc = {0};
	int rc = parse_fs("ext3", &fsc, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < w->nrun; i++)
		if (w->run[i].op == CRASH_OP_FILL)
			return bo_errf(
			    err, -ENOTSUP,
			    "line %u: fill depends on when the filesystem is full, so it "
			    "cannot be replayed step for step elsewhere",
			    w->run[i].line);
	struct bdev *d = NULL;
	struct fs *fs = NULL;
	struct bo_err e2 = {{0}};
	/* a large scratch device (memory is touched only where written) */
	if ((rc = blk_mem_open(512, (1ull << 30) / 512, &d)))
		return bo_errf(err, rc, "dry run: no memory for a scratch device");
	if ((rc = fs_mkfs(d, &fsc.mk, &e2)) || (rc = fs_mount(d, &fsc.mo, &fs, &e2))) {
		bo_errf(err, rc, "dry run: %s", bo_errstr(&e2, rc));
		goto out;
	}
	struct crash_exec sx;
	for (size_t i = 0; i < w->nsetup + w->nrun; i++) {
		bool setup = i < w->nsetup;
		const struct crash_step *s = setup ? &w->setup[i] : &w->run[i - w->nsetup];
		rc = run_step(fs, s, NULL, setup ? &sx : &exec[i - w->nsetup]);
		if (rc == 0 && !setup)
			rc = exec[i - w->nsetup].rc;
		if (rc) {
			bo_errf(err, rc, "dry run, line %u (%s %s): %s", s->line,
			        crash_op_name(s->op), s->path, bo_errstr(fs_err(fs), rc));
			goto out;
		}
	}
out:
	if (fs)
		fs_abandon(fs);
	blk_close(d);
	return rc;
}

int crash_judge_recovered(const struct crash_oracle *o, struct bdev *d, size_t completed,
                          unsigned flags, struct crash_verdict *v, struct bo_err *err)
{
	memset(v, 0, sizeof(*v));
	struct fs_mount_opts mo;
	fs_mount_opts_default(&mo);
	struct fs *fs;
	int rc = fs_mount(d, &mo, &fs, err);
	if (rc)
		return rc;
	struct crash_obs_node root = {.dir = true};
	size_t budget = READ_MAX_NODES;
	rc = read_tree(fs, "/", &root, 0, &budget);
	if (rc == 0)
		rc = crash_oracle_check(o, completed, &root, flags, v);
	crash_obs_free(&root);
	if (rc) {
		fs_abandon(fs);
		return bo_errf(err, rc, "reading the recovered tree: %s", strerror(-rc));
	}
	int urc = fs_unmount(fs);
	if (urc)
		v->read_errors++; /* the filesystem noticed something on the way out */
	return 0;
}
