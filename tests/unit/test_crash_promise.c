// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_promise.c — the filesystem's own promise of names (fs-promise): each row
 * judged with a state breaking it, one keeping it, and the breaking state under POSIX
 * alone, with hand-built recovered trees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "tap.h"

static struct crash_obs_node *kid(struct crash_obs_node *d, const char *name, bool isdir)
{
	d->kids = realloc(d->kids, (d->nkids + 1) * sizeof(*d->kids));
	struct crash_obs_node *k = &d->kids[d->nkids++];
	memset(k, 0, sizeof(*k));
	k->name = strdup(name);
	k->dir = isdir;
	return k;
}

static void root(struct crash_obs_node *r)
{
	memset(r, 0, sizeof(*r));
	r->dir = true;
	kid(r, "lost+found", true);
}

static void put(struct crash_obs_node *f, uint32_t tag, uint64_t len)
{
	f->data = malloc(len);
	f->size = len;
	crash_pattern_fill(tag, 0, f->data, len);
}

static struct crash_oracle *model(const char *text)
{
	struct crash_workload *w;
	struct bo_err err = {{0}};
	struct crash_oracle *o = NULL;
	if (crash_workload_parse(text, strlen(text), "t", &w, &err) == 0) {
		crash_oracle_new(w, NULL, &o, &err);
		crash_workload_free(w);
	}
	if (!o)
		diag("model: %s", err.msg);
	return o;
}

static unsigned judge(const struct crash_oracle *o, size_t c, struct crash_obs_node *r,
                      unsigned flags, struct crash_verdict *v)
{
	int rc = crash_oracle_check(o, c, r, flags, v);
	crash_obs_free(r);
	return rc ? 0xdead : v->broken;
}

#define P (1u << CRASH_INV_PROMISE)
#define F CRASH_ORACLE_FS_PROMISE

int main(void)
{
	struct crash_obs_node r;
	struct crash_verdict v;

	/* fsync of a new file makes its name durable */
	struct crash_oracle *o = model("run\ncreate /f\nwrite /f 0 4k 7\nfsync /f\n");
	tap_require(o != NULL, "new-file workload");
	root(&r);
	is_int(judge(o, 3, &r, F, &v), P, "new file: name missing after its fsync: %s", v.detail);
	ok(strstr(v.detail, "fs-promise: /f is missing") && strstr(v.detail, "created at step 0"),
	   "new file: the detail names the promise: %s", v.detail);
	root(&r);
	is_int(judge(o, 3, &r, 0, &v), 0, "new file: the same state keeps POSIX %s", v.detail);
	root(&r);
	put(kid(&r, "f", false), 7, 4096);
	is_int(judge(o, 3, &r, F, &v), 0, "new file: name kept: ok %s", v.detail);
	root(&r);
	is_int(judge(o, 2, &r, F, &v), 0, "new file: missing before the fsync: ok %s", v.detail);
	crash_oracle_free(o);

	/* fsync of a file after rename makes the new name durable (and the old gone) */
	o = model("setup\ncreate /a\nwrite /a 0 4k 3\nrun\nrename /a /b\nfsync /b\n");
	tap_require(o != NULL, "rename workload");
	root(&r);
	put(kid(&r, "a", false), 3, 4096);
	is_int(judge(o, 2, &r, F, &v), P, "rename: old name after the fsync: %s", v.detail);
	ok(strstr(v.detail, "renamed"), "rename: the detail says why: %s", v.detail);
	root(&r);
	put(kid(&r, "a", false), 3, 4096);
	is_int(judge(o, 2, &r, 0, &v), 0, "rename: the same state keeps POSIX %s", v.detail);
	root(&r);
	put(kid(&r, "b", false), 3, 4096);
	is_int(judge(o, 2, &r, F, &v), 0, "rename: new name kept: ok %s", v.detail);
	crash_oracle_free(o);

	/* fsync after link makes the new name durable */
	o = model("setup\ncreate /a\nwrite /a 0 4k 3\nrun\nlink /a /l\nfsync /a\n");
	tap_require(o != NULL, "link workload");
	root(&r);
	put(kid(&r, "a", false), 3, 4096);
	is_int(judge(o, 2, &r, F, &v), P, "link: new name missing after the fsync: %s", v.detail);
	root(&r);
	put(kid(&r, "a", false), 3, 4096);
	is_int(judge(o, 2, &r, 0, &v), 0, "link: the same state keeps POSIX %s", v.detail);
	root(&r);
	put(kid(&r, "a", false), 3, 4096);
	put(kid(&r, "l", false), 3, 4096);
	is_int(judge(o, 2, &r, F, &v), 0, "link: both names: ok %s", v.detail);
	crash_oracle_free(o);

	/* fsync of an unlinked open file makes its deletion durable (generic/764) */
	o = model("setup\ncreate /u\nwrite /u 0 4k 5\nopen fd /u\nrun\nunlink /u\nfsync-fd fd\n");
	tap_require(o != NULL, "unlink-open workload");
	root(&r);
	put(kid(&r, "u", false), 5, 4096);
	is_int(judge(o, 2, &r, F, &v), P, "unlinked open: name back after its fsync: %s", v.detail);
	ok(strstr(v.detail, "unlinked open file"), "unlinked open: the detail says why: %s",
	   v.detail);
	root(&r);
	put(kid(&r, "u", false), 5, 4096);
	is_int(judge(o, 2, &r, 0, &v), 0, "unlinked open: the same state keeps POSIX %s", v.detail);
	root(&r);
	is_int(judge(o, 2, &r, F, &v), 0, "unlinked open: gone: ok %s", v.detail);
	crash_oracle_free(o);

	/* fdatasync promises no name, on any of them */
	o = model("run\ncreate /f\nwrite /f 0 4k 7\nfdatasync /f\n");
	tap_require(o != NULL, "fdatasync workload");
	root(&r);
	is_int(judge(o, 3, &r, F, &v), 0, "fdatasync of a new file: name may be missing %s",
	       v.detail);
	crash_oracle_free(o);

	/* which filesystems make the promise */
	ok(crash_oracle_fs_promises("linux-btrfs,defaults") && crash_oracle_fs_promises("ext4") &&
	       crash_oracle_fs_promises("xfs,noatime"),
	   "ext4, xfs and btrfs make it");
	ok(!crash_oracle_fs_promises("ext3,data=ordered") &&
	       !crash_oracle_fs_promises("linux-f2fs") && !crash_oracle_fs_promises(NULL),
	   "blackout's ext3 model and others do not");
	is_str(crash_inv_name(CRASH_INV_PROMISE), "fs-promise", "the invariant's name");
	return tap_done();
}
