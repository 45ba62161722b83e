// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_oracle.c — the oracle as a pure model, with hand-built recovered trees:
 * durability of data and names, stale data, bystanders, atomic replace, executed
 * results, truncation and directory renames. No filesystem involved. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "tap.h"

static struct crash_obs_node *kid(struct crash_obs_node *dir, const char *name, bool isdir)
{
	for (size_t i = 0; i < dir->nkids; i++)
		if (strcmp(dir->kids[i].name, name) == 0)
			return &dir->kids[i];
	dir->kids = realloc(dir->kids, (dir->nkids + 1) * sizeof(*dir->kids));
	struct crash_obs_node *k = &dir->kids[dir->nkids++];
	memset(k, 0, sizeof(*k));
	k->name = strdup(name);
	k->dir = isdir;
	return k;
}

/* Adds (or finds) a file at an absolute path, creating directories on the way. */
static struct crash_obs_node *file(struct crash_obs_node *root, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path + 1);
	struct crash_obs_node *d = root;
	char *p = buf;
	for (char *s; (s = strchr(p, '/')); p = s + 1) {
		*s = 0;
		d = kid(d, p, true);
	}
	return kid(d, p, false);
}

static void dir(struct crash_obs_node *root, const char *path)
{
	struct crash_obs_node *f = file(root, path);
	f->dir = true;
}

/* Writes pattern `tag` over [off, off+len) of a file, extending it. */
static void put(struct crash_obs_node *f, uint32_t tag, uint64_t off, uint64_t len)
{
	if (off + len > f->size) {
		f->data = realloc(f->data, off + len);
		memset(f->data + f->size, 0, off + len - f->size);
		f->size = off + len;
	}
	crash_pattern_fill(tag, off, f->data + off, len);
}

static void setsize(struct crash_obs_node *f, uint64_t size)
{
	f->data = realloc(f->data, size ? size : 1);
	if (size > f->size)
		memset(f->data + f->size, 0, size - f->size);
	f->size = size;
}

static const char wl_text[] = "setup\n"
                              "mkdir /keep\n"
                              "create /keep/a\n"
                              "write /keep/a 0 8k 1\n"
                              "create /config\n"
                              "write /config 0 3k 2\n"
                              "run\n"
                              "create /log\n"                /* 0 */
                              "fsync-dir /\n"                /* 1 */
                              "append /log 1k 10\n"          /* 2 */
                              "fsync /log\n"                 /* 3 */
                              "append /log 1k 11\n"          /* 4 */
                              "fsync /log\n"                 /* 5 */
                              "create /config.tmp\n"         /* 6 */
                              "write /config.tmp 0 2k 20\n"  /* 7 */
                              "fsync /config.tmp\n"          /* 8 */
                              "rename /config.tmp /config\n" /* 9 */
                              "append /log 1k 12\n";         /* 10 */

/* The setup state: /keep/a and the old /config. */
static void base(struct crash_obs_node *r)
{
	memset(r, 0, sizeof(*r));
	r->dir = true;
	dir(r, "/lost+found");
	put(file(r, "/keep/a"), 1, 0, 8192);
}

static unsigned judge(const struct crash_oracle *o, size_t c, struct crash_obs_node *r,
                      unsigned flags, struct crash_verdict *v)
{
	int rc = crash_oracle_check(o, c, r, flags, v);
	crash_obs_free(r);
	return rc ? 0xdead : v->broken;
}

#define B(i) (1u << (i))

static struct crash_oracle *model(const char *text, const struct crash_exec *x)
{
	struct crash_workload *w;
	struct bo_err err = {{0}};
	struct crash_oracle *o = NULL;
	if (crash_workload_parse(text, strlen(text), "t", &w, &err) == 0) {
		crash_oracle_new(w, x, &o, &err);
		crash_workload_free(w);
	}
	if (!o)
		diag("model: %s", err.msg);
	return o;
}

int main(void)
{
	struct crash_oracle *o = model(wl_text, NULL);
	tap_require(o != NULL, "oracle built");
	struct crash_obs_node r;
	struct crash_verdict v;

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	is_int(judge(o, 0, &r, 0, &v), 0, "the setup state is fine before anything ran %s",
	       v.detail);

	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	struct crash_obs_node *l = file(&r, "/log");
	put(l, 10, 0, 1024);
	put(l, 11, 1024, 1024);
	put(l, 12, 2048, 1024);
	is_int(judge(o, 11, &r, 0, &v), 0, "the final state is fine at the end %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	l = file(&r, "/log");
	put(l, 10, 0, 1024);
	put(l, 11, 1024, 1024);
	is_int(judge(o, 11, &r, 0, &v), 0, "an unsynced append may be lost %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	put(file(&r, "/log"), 10, 0, 1024);
	is_int(judge(o, 11, &r, 0, &v), B(CRASH_INV_DURABLE), "a synced append lost: durable");
	ok(strstr(v.detail, "/log is 1024 bytes, 2048 were synced") != NULL, "detail: %s",
	   v.detail);

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	put(file(&r, "/log"), 10, 0, 1024);
	is_int(judge(o, 4, &r, 0, &v), 0, "after the first fsync, one record %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	is_int(judge(o, 4, &r, 0, &v), B(CRASH_INV_DURABLE),
	       "a name made durable by fsync-dir is missing: durable");
	ok(strstr(v.detail, "/log is missing") != NULL, "detail: %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	is_int(judge(o, 1, &r, 0, &v), 0, "before the fsync-dir completes the name may be lost %s",
	       v.detail);

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	file(&r, "/log");
	is_int(judge(o, 2, &r, 0, &v), 0, "an empty new log is fine before its fsync %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	file(&r, "/keep/a")->data[4000] ^= 0x40;
	is_int(judge(o, 5, &r, 0, &v), B(CRASH_INV_BYSTANDER) | B(CRASH_INV_DURABLE),
	       "a flipped byte in an untouched setup file: bystander (and the log is lost)");
	ok(strstr(v.detail, "/keep/a bytes 4000-4000") != NULL, "detail: %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	setsize(file(&r, "/keep/a"), 4096);
	is_int(judge(o, 0, &r, 0, &v), B(CRASH_INV_BYSTANDER), "a truncated bystander");

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	crash_obs_free(&r.kids[1]); /* drop /keep (and /keep/a) */
	r.kids[1] = r.kids[2];
	r.nkids = 2;
	is_int(judge(o, 0, &r, 0, &v), B(CRASH_INV_DURABLE), "a lost setup directory");

	/* stale: bytes nobody wrote to /log */
	for (int wb = 0; wb < 2; wb++) {
		base(&r);
		put(file(&r, "/config"), 20, 0, 2048);
		l = file(&r, "/log");
		put(l, 10, 0, 1024);
		put(l, 11, 1024, 1024);
		put(l, 99, 2048, 1024);
		unsigned got = judge(o, 11, &r, wb ? CRASH_ORACLE_WRITEBACK : 0, &v);
		if (!wb)
			is_int(got, B(CRASH_INV_STALE),
			       "foreign bytes in the unsynced tail: stale");
		else
			ok(got == 0 && v.allowed == B(CRASH_INV_STALE) &&
			       strstr(v.detail, "allowed by data=writeback"),
			   "with data=writeback stale data is allowed and reported: %s", v.detail);
	}

	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	l = file(&r, "/log");
	put(l, 10, 0, 1024);
	put(l, 11, 1024, 1024);
	put(l, 2, 2048, 1024); /* /config's old bytes at the right offset: still foreign */
	is_int(judge(o, 11, &r, 0, &v), B(CRASH_INV_STALE), "another file's data: stale");
	ok(strstr(v.detail, "/log bytes 2048-3071 hold data never written to this file (from "
	                    "config, setup)") != NULL,
	   "and whose data it is: %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	l = file(&r, "/log");
	put(l, 10, 0, 1024);
	put(l, 11, 1024, 1024);
	setsize(l, 3072);
	is_int(judge(o, 11, &r, 0, &v), 0, "zeros in the unsynced tail are allowed %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	l = file(&r, "/log");
	put(l, 10, 0, 1024);
	setsize(l, 2048);
	is_int(judge(o, 11, &r, 0, &v), B(CRASH_INV_DURABLE), "zeros where synced data was");

	/* atomic replace */
	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	put(file(&r, "/config.tmp"), 20, 0, 2048);
	put(file(&r, "/log"), 10, 0, 1024);
	put(file(&r, "/log"), 11, 1024, 1024);
	is_int(judge(o, 10, &r, 0, &v), 0, "replace not made durable: the old config %s", v.detail);

	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	put(file(&r, "/log"), 10, 0, 1024);
	put(file(&r, "/log"), 11, 1024, 1024);
	is_int(judge(o, 10, &r, 0, &v), 0, "replace done: the new config %s", v.detail);

	base(&r);
	file(&r, "/config");
	put(file(&r, "/log"), 10, 0, 1024);
	put(file(&r, "/log"), 11, 1024, 1024);
	is_int(judge(o, 10, &r, 0, &v), B(CRASH_INV_ATOMIC), "an empty config: atomic");

	base(&r);
	put(file(&r, "/config"), 20, 0, 1024);
	put(file(&r, "/log"), 10, 0, 1024);
	put(file(&r, "/log"), 11, 1024, 1024);
	is_int(judge(o, 10, &r, 0, &v), B(CRASH_INV_ATOMIC), "half the new config: atomic");

	base(&r);
	put(file(&r, "/log"), 10, 0, 1024);
	put(file(&r, "/log"), 11, 1024, 1024);
	is_int(judge(o, 10, &r, 0, &v), B(CRASH_INV_ATOMIC), "no config at all: atomic");

	base(&r);
	file(&r, "/config");
	put(file(&r, "/log"), 10, 0, 1024);
	put(file(&r, "/log"), 11, 1024, 1024);
	is_int(judge(o, 8, &r, 0, &v), B(CRASH_INV_DURABLE),
	       "an empty config before the rename: the old one was durable");

	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	put(file(&r, "/junk"), 3, 0, 100);
	is_int(judge(o, 11, &r, 0, &v) & B(CRASH_INV_STALE), B(CRASH_INV_STALE),
	       "a name no step created: stale");

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	file(&r, "/keep/a")->read_rc = -EBADMSG;
	judge(o, 0, &r, 0, &v);
	ok(v.read_errors == 1 && v.broken == B(CRASH_INV_BYSTANDER),
	   "a file that cannot be read is counted as a read error (%u, %s)", v.read_errors,
	   v.detail);

	base(&r);
	put(file(&r, "/config"), 2, 0, 3072);
	{
		/* a damaged inode turned /keep/a into a device: a size, no bytes to read */
		struct crash_obs_node *a = file(&r, "/keep/a");
		free(a->data);
		a->data = NULL;
	}
	judge(o, 0, &r, 0, &v);
	ok(v.broken == B(CRASH_INV_BYSTANDER) && strstr(v.detail, "no longer a regular file"),
	   "a file that is no longer a regular file is damage, not a crash (%s)", v.detail);

	is_int(crash_oracle_check(o, 12, &(struct crash_obs_node){.dir = true}, 0, &v), -ERANGE,
	       "a crash point past the end is refused");
	crash_oracle_free(o);

	/* executed results: a failed append is not owed */
	struct crash_exec x[11] = {{0}};
	x[2].done = 1024;
	x[4].rc = -EIO;
	x[7].done = 2048;
	x[10].done = 1024;
	x[10].off = 1024;
	o = model(wl_text, x);
	tap_require(o != NULL, "oracle with executed results");
	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	put(file(&r, "/log"), 10, 0, 1024);
	is_int(judge(o, 11, &r, 0, &v), 0, "an append that failed when run is not owed %s",
	       v.detail);
	base(&r);
	put(file(&r, "/config"), 20, 0, 2048);
	put(file(&r, "/log"), 10, 0, 1024);
	put(file(&r, "/log"), 12, 1024, 1024);
	is_int(judge(o, 11, &r, 0, &v), 0, "the next append landed where the run put it %s",
	       v.detail);
	crash_oracle_free(o);

	/* truncation */
	o = model("setup\ncreate /f\nwrite /f 0 4k 1\nrun\ntruncate /f 1k\nappend /f 1k 2\n"
	          "fsync /f\n",
	          NULL);
	tap_require(o != NULL, "truncate model");
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/f"), 1, 0, 1024);
	put(file(&r, "/f"), 2, 1024, 1024);
	is_int(judge(o, 3, &r, 0, &v), 0, "truncate + append synced %s", v.detail);
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/f"), 1, 0, 1024);
	setsize(file(&r, "/f"), 2048);
	is_int(judge(o, 3, &r, 0, &v), B(CRASH_INV_DURABLE), "synced append replaced by zeros");
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/f"), 1, 0, 4096);
	is_int(judge(o, 1, &r, 0, &v), 0, "an unsynced truncate may be lost %s", v.detail);
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/f"), 1, 0, 1024);
	setsize(file(&r, "/f"), 2048);
	is_int(judge(o, 1, &r, 0, &v), 0, "zeros where the truncate cut, before the fsync %s",
	       v.detail);
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/f"), 1, 0, 512);
	is_int(judge(o, 1, &r, 0, &v), B(CRASH_INV_DURABLE), "shorter than any size it had");
	crash_oracle_free(o);

	/* directory rename */
	o = model("setup\nmkdir /old\ncreate /old/x\nwrite /old/x 0 1k 5\nrun\nrename /old /new\n"
	          "fsync-dir /\n",
	          NULL);
	tap_require(o != NULL, "rename-dir model");
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/new/x"), 5, 0, 1024);
	is_int(judge(o, 2, &r, 0, &v), 0, "renamed directory with its file %s", v.detail);
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/old/x"), 5, 0, 1024);
	is_int(judge(o, 1, &r, 0, &v), 0, "rename not yet durable: old name fine %s", v.detail);
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/old/x"), 5, 0, 1024);
	is_int(judge(o, 2, &r, 0, &v), B(CRASH_INV_DURABLE),
	       "rename made durable but the old name is back");
	memset(&r, 0, sizeof(r));
	r.dir = true;
	put(file(&r, "/new/x"), 6, 0, 1024);
	is_int(judge(o, 2, &r, 0, &v), B(CRASH_INV_BYSTANDER),
	       "a file under a renamed directory is still a bystander");
	crash_oracle_free(o);

	/* every built-in models without error, and its own final state cannot be judged
	 * beyond its end */
	for (size_t i = 0; i < crash_builtin_count(); i++) {
		struct crash_workload *w;
		struct bo_err err = {{0}};
		crash_workload_load(crash_builtin_get(i)->name, &w, &err);
		struct crash_exec *ex = calloc(w->nrun, sizeof(*ex));
		for (size_t k = 0; k < w->nrun; k++)
			ex[k].done = w->run[k].op == CRASH_OP_FILL ? 1 << 20 : w->run[k].len;
		int rc = crash_oracle_new(w, ex, &o, &err);
		ok(rc == 0, "oracle models built-in %s %s", w->name, err.msg);
		crash_oracle_free(o);
		free(ex);
		crash_workload_free(w);
	}
	return tap_done();
}
