// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_newops.c — the oracle and the dry run on the steps added for published
 * reproducers and the generator (falloc, symlink, xattrs, O_DIRECT/O_SYNC/mmap writes,
 * held-open fds): what each promises is judged, what is not modelled is not judged,
 * and blackout's ext3 refuses what it cannot run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "tap.h"

static struct crash_obs_node *add(struct crash_obs_node *dir, const char *name, uint64_t size)
{
	dir->kids = realloc(dir->kids, (dir->nkids + 1) * sizeof(*dir->kids));
	struct crash_obs_node *k = &dir->kids[dir->nkids++];
	memset(k, 0, sizeof(*k));
	k->name = strdup(name);
	k->size = size;
	k->data = calloc(1, size ? size : 1);
	return k;
}

static struct crash_oracle *oracle(const char *text, struct crash_workload **wl)
{
	struct bo_err err = {{0}};
	struct crash_workload *w = NULL;
	struct crash_oracle *o = NULL;
	int rc = crash_workload_parse(text, strlen(text), "t", &w, &err);
	if (rc == 0)
		rc = crash_oracle_new(w, NULL, &o, &err);
	if (rc)
		diag("%s", err.msg);
	*wl = w;
	return o;
}

static unsigned judge(const struct crash_oracle *o, size_t completed, struct crash_obs_node *root,
                      char *detail, size_t len)
{
	struct crash_verdict v;
	if (crash_oracle_check(o, completed, root, 0, &v))
		return ~0u;
	snprintf(detail, len, "%s", v.detail);
	return v.broken;
}

int main(void)
{
	struct crash_workload *w;
	char d[400];
	struct crash_obs_node root = {.dir = true};

	/* O_SYNC: the write is durable when it returns */
	struct crash_oracle *o = oracle("setup\ncreate /f\nrun\nosync /f 0 4k 5\n", &w);
	tap_require(o != NULL, "an osync workload is modelled");
	add(&root, "f", 0);
	ok(judge(o, 0, &root, d, sizeof d) == 0,
	   "before the osync returned, an empty file is fine");
	ok(judge(o, 1, &root, d, sizeof d) == 1u << CRASH_INV_DURABLE,
	   "after it returned, an empty file lost durable data: %s", d);
	crash_pattern_fill(5, 0, (root.kids[0].data = realloc(root.kids[0].data, 4096)), 4096);
	root.kids[0].size = 4096;
	ok(judge(o, 1, &root, d, sizeof d) == 0, "the osync'd bytes there: fine %s", d);
	crash_oracle_free(o);
	crash_workload_free(w);
	crash_obs_free(&root);

	/* punch-hole zeroes inside the size; after a sync the zeros are promised */
	o = oracle("setup\ncreate /f\nwrite /f 0 16k 1\nrun\nfalloc /f punch-hole 4k 4k\nsync\n",
	           &w);
	tap_require(o != NULL, "a punch-hole workload is modelled");
	struct crash_obs_node *f = add(&root, "f", 16384);
	crash_pattern_fill(1, 0, f->data, 16384);
	ok(judge(o, 1, &root, d, sizeof d) == 0, "before the sync, the old bytes are fine");
	ok(judge(o, 2, &root, d, sizeof d) == 1u << CRASH_INV_DURABLE,
	   "after it, the punched range holding old bytes is lost durability: %s", d);
	memset(f->data + 4096, 0, 4096);
	ok(judge(o, 2, &root, d, sizeof d) == 0, "zeros in the punched range: fine %s", d);
	crash_oracle_free(o);
	crash_workload_free(w);
	crash_obs_free(&root);

	/* collapse shifts bytes the model does not follow: the file is not judged */
	o = oracle("setup\ncreate /f\nwrite /f 0 16k 1\nrun\nfalloc /f collapse 4k 4k\nsync\n", &w);
	f = add(&root, "f", 5);
	ok(o && judge(o, 2, &root, d, sizeof d) == 0,
	   "after a collapse, any content is not judged");
	crash_oracle_free(o);
	crash_workload_free(w);
	crash_obs_free(&root);

	/* symlinks: observers do not report them, so their names are not judged */
	o = oracle("setup\ncreate /f\nrun\nsymlink /f /l\nsync\n", &w);
	add(&root, "f", 0);
	ok(o && judge(o, 2, &root, d, sizeof d) == 0, "a synced symlink absent: not judged %s", d);
	f = add(&root, "l", 2);
	free(f->data);
	f->data = NULL; /* what blackout's observer shows of a link */
	ok(o && judge(o, 2, &root, d, sizeof d) == 0, "present as a non-file: not judged %s", d);
	crash_oracle_free(o);
	crash_workload_free(w);
	crash_obs_free(&root);

	/* fsync through an fd whose name was unlinked promises nothing about the name;
	 * a sync after the unlink does */
	o = oracle("setup\ncreate /f\nwrite /f 0 4k\nrun\nopen h /f\nunlink /f\nfsync-fd h\n"
	           "close h\nsync\n",
	           &w);
	tap_require(o != NULL, "an open/unlink/fsync-fd workload is modelled");
	f = add(&root, "f", 4096);
	crash_pattern_fill(1, 0, f->data, 4096);
	ok(judge(o, 4, &root, d, sizeof d) == 0,
	   "the unlinked name back before any sync: allowed %s", d);
	ok(judge(o, 5, &root, d, sizeof d) == 1u << CRASH_INV_DURABLE,
	   "back after the sync: the unlink was durable: %s", d);
	crash_oracle_free(o);
	crash_workload_free(w);
	crash_obs_free(&root);

	/* xattrs are not observed: the file stops being a bystander, nothing else */
	o = oracle("setup\ncreate /f\nwrite /f 0 4k\nrun\nsetxattr /f user.a 1\nsync\n", &w);
	f = add(&root, "f", 4096);
	crash_pattern_fill(1, 0, f->data, 4096);
	ok(o && judge(o, 2, &root, d, sizeof d) == 0, "setxattr then sync: the data judged fine %s",
	   d);
	crash_oracle_free(o);
	crash_workload_free(w);
	crash_obs_free(&root);

	/* blackout's ext3 does not run falloc: an exec saying so is refused, named */
	struct bo_err err = {{0}};
	const char *t = "setup\ncreate /f\nrun\nfalloc /f keep-size 0 4k\n";
	crash_workload_parse(t, strlen(t), "t", &w, &err);
	struct crash_exec x = {.rc = -ENOSYS};
	int rc = crash_oracle_new(w, &x, &o, &err);
	ok(rc == -ENOTSUP && strstr(err.msg, "line 4: falloc: not supported by the model "
	                                     "(blackout's ext3)"),
	   "the oracle refuses a step the model did not run: %s", err.msg);
	crash_workload_free(w);

	/* the dry run follows the sizes of the steps it does not run, for later appends */
	t = "setup\ncreate /f\nrun\nfalloc /f zero-range 0 8k\nappend /f 1k\nfalloc /f insert 0 "
	    "4k\n"
	    "dwrite /f 0 4k\nsetxattr /f user.a b\nopen h /f\nfsync-fd h\nappend /f 512\n";
	crash_workload_parse(t, strlen(t), "t", &w, &err);
	struct crash_exec ex[8];
	rc = crash_workload_dry_run(w, ex, &err);
	ok(rc == 0, "a dry run through the guest-only steps %s", rc ? err.msg : "");
	is_int(ex[1].off, 8192, "an append after zero-range starts at its end");
	is_int(ex[7].off, 9216 + 4096, "an append after insert starts 4 KiB later");
	crash_workload_free(w);
	t = "setup\nmkdir /d\nrun\nopen h /d\n";
	crash_workload_parse(t, strlen(t), "t", &w, &err);
	rc = crash_workload_dry_run(w, ex, &err);
	ok(rc == -EISDIR && strstr(err.msg, "line 4"),
	   "open of a directory fails the dry run, as the guest's [ -f ] would: %s", err.msg);
	crash_workload_free(w);
	t = "setup\ncreate /f\nrun\nfalloc /f collapse 0 4k\n";
	crash_workload_parse(t, strlen(t), "t", &w, &err);
	rc = crash_workload_dry_run(w, ex, &err);
	ok(rc == -EINVAL && strstr(err.msg, "line 4"),
	   "a collapse past the end fails the dry run, as the kernel would (EINVAL): %s", err.msg);
	crash_workload_free(w);
	return tap_done();
}
