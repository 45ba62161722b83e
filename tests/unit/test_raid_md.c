// SPDX-License-Identifier: GPL-2.0-or-later
/* test_raid_md.c — Linux md's counterpart of each RAID row of the matrix plan
 * (raid_md_counterpart through matrix_vm_md_of): the --md, --md-chunk and member
 * stack vmtest gets, checked against a table and against the parsed tree of the
 * row's own stack; and the spec edits the matrix grows a guest's stack with. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "report/matrix_run.h"
#include "tap.h"

#define D22 "disk > mem(size=22M)"
static const struct {
	const char *row, *md, *chunk, *stack; /* md NULL: no counterpart, stack says why */
} want[] = {
    {"raid5", "5:4:-", "4", "concat > [" D22 "] x4"},
    {"raid5-degraded", "5:4:1", "4", "concat > [" D22 "] x4"},
    {"raid5-degraded-verify", NULL, NULL, "verify=fast"},
    {"raid5-degraded-journal", "5:4:1:j", "4",
     "concat > [" D22 " ; " D22 " ; " D22 " ; " D22 " ; mem(size=4M)]"},
    {"raid5-cache", "5:4:-", "4", "concat > [cache(size=64k,flush=honor) > " D22 "] x4"},
    {"raid5-cache-lying", "5:4:-", "4", "concat > [cache(size=64k,flush=ignore) > " D22 "] x4"},
    {"raid5-nobarrier", NULL, NULL, "passes flushes to its members"},
    {"raid6-2missing", NULL, NULL, "missing=1:2: md's counterpart here leaves out one member"},
};

/* The counterpart read against the row's parsed guest stack: each md member is the
 * RAID's member, the member count leaves out a journal, the chunk is the model's. */
static bool agrees_with_tree(const struct matrix_rowspec *row, const struct matrix_vm_md *md)
{
	char why[128];
	struct dev_spec *raid = NULL, *cat = NULL;
	bool good = dev_spec_parse(matrix_vm_stack(row, why, sizeof(why)), &raid, NULL) == 0 &&
	            dev_spec_parse(md->stack, &cat, NULL) == 0;
	if (good) {
		unsigned n = dev_spec_nlowers(raid);
		good =
		    n == dev_spec_nlowers(cat) && strcmp(dev_spec_model(cat)->name, "concat") == 0;
		for (unsigned i = 0; good && i < n; i++)
			good = dev_spec_equal(dev_spec_lower(raid, i), dev_spec_lower(cat, i));
		bool j = strcmp(dev_arg_str(dev_spec_args(raid), "journal"), "true") == 0;
		const char *missing = dev_arg_str(dev_spec_args(raid), "missing");
		uint64_t chunk = 0;
		dev_arg_size(dev_spec_args(raid), "chunk", &chunk, NULL);
		char expect[32];
		snprintf(expect, sizeof(expect), "%c:%u:%s%s", dev_spec_model(raid)->name[4],
		         j ? n - 1 : n, strcmp(missing, "none") ? missing : "-", j ? ":j" : "");
		good =
		    good && strcmp(md->md, expect) == 0 && (uint64_t)atoi(md->chunk) << 10 == chunk;
	}
	dev_spec_free(raid);
	dev_spec_free(cat);
	return good;
}

static void rows(void)
{
	struct matrix m;
	struct bo_err err = {{0}};
	struct matrix_run_opts o = {
	    .full = true, .seed = 1, .max_states = 300, .vm = true, .vm_states = 20};
	if (!ok(matrix_plan_make(&o, &m, &err) == 0, "the full --vm plan: %s", err.msg))
		return;
	const struct matrix_plan *p = matrix_plan_of(&m);
	size_t seen = 0;
	for (size_t r = 0; r < m.nrows; r++) {
		struct dev_spec *s;
		if (dev_spec_parse(p->spec[r]->row.stack, &s, NULL) != 0)
			continue;
		bool raid = strncmp(dev_spec_model(s)->name, "raid", 4) == 0;
		dev_spec_free(s);
		if (!raid)
			continue;
		seen++;
		size_t k = 0;
		while (k < sizeof(want) / sizeof(want[0]) && strcmp(want[k].row, m.rows[r].id))
			k++;
		if (!ok(k < sizeof(want) / sizeof(want[0]), "%s: an expectation for the RAID row",
		        m.rows[r].id))
			continue;
		struct matrix_vm_md md;
		char why[128] = "";
		int rc = matrix_vm_md_of(p->spec[r], &md, why, sizeof(why));
		if (!want[k].md) {
			ok(rc == -EINVAL && strstr(why, want[k].stack), "%s: no md counterpart: %s",
			   m.rows[r].id, why);
			continue;
		}
		ok(rc == 0 && strcmp(md.md, want[k].md) == 0 &&
		       strcmp(md.chunk, want[k].chunk) == 0 && strcmp(md.stack, want[k].stack) == 0,
		   "%s: --md %s --md-chunk %s over '%s' (%s)", m.rows[r].id, md.md, md.chunk,
		   md.stack, why);
		ok(rc == 0 && agrees_with_tree(p->spec[r], &md),
		   "%s: the same members, member count and chunk as the parsed row", m.rows[r].id);
	}
	is_int(seen, sizeof(want) / sizeof(want[0]), "every RAID row of the full plan was fed");
	/* each guest-sized stack is the row's own, its media grown (16M to 64M, a RAID
	 * member's 6M to 22M), the models and their parameters as written */
	size_t grown = 0, served = 0;
	for (size_t r = 0; r < m.nrows; r++) {
		char why[128], buf[512] = "";
		const char *vm = matrix_vm_stack(p->spec[r], why, sizeof(why));
		if (!vm)
			continue;
		served++;
		struct dev_spec *s;
		if (dev_spec_parse(p->spec[r]->row.stack, &s, &err) == 0 &&
		    dev_spec_resize_media(s, 16 << 20, 64 << 20, &err) == 0 &&
		    dev_spec_resize_media(s, 6 << 20, 22 << 20, &err) == 0 &&
		    dev_spec_format_given(s, buf, sizeof(buf)) > 0 && strcmp(buf, vm) == 0)
			grown++;
		else
			diag("%s: '%s' grown is '%s', served '%s'", m.rows[r].id,
			     p->spec[r]->row.stack, buf, vm);
		dev_spec_free(s);
	}
	ok(served > 0 && grown == served,
	   "each of the %zu stacks served to a guest is its row's own with media grown", served);
	struct matrix_rowspec plain = {.row = {.id = "x", .key = MR_CACHE}};
	struct matrix_vm_md md;
	char why[128] = "";
	ok(matrix_vm_md_of(&plain, &md, why, sizeof(why)) == -EINVAL &&
	       strstr(why, "not a RAID row"),
	   "a stack that is not a RAID has no counterpart: %s", why);
	matrix_free_cells(&m);
}

/* What the model's own spec gives md, beyond the matrix's rows. */
static void counterpart(const char *spec, const char *md_arg, const char *chunk,
                        const char *why_has)
{
	struct dev_spec *s;
	struct raid_md_args a;
	char why[128] = "";
	struct bo_err err = {{0}};
	if (!ok(dev_spec_parse(spec, &s, &err) == 0, "%s parses: %s", spec, err.msg))
		return;
	int rc = raid_md_counterpart(s, &a, why, sizeof(why));
	if (md_arg)
		ok(rc == 0 && strcmp(a.md, md_arg) == 0 && strcmp(a.chunk, chunk) == 0,
		   "%s: --md %s --md-chunk %s", spec, a.md, a.chunk);
	else
		ok(rc == -EINVAL && strstr(why, why_has), "%s: none: %s", spec, why);
	dev_spec_free(s);
}

static void edits(void)
{
	struct dev_spec *s;
	struct bo_err err = {{0}};
	char buf[256];
	dev_spec_parse("raid5(chunk=4k,missing=1,journal=true) > [disk > mem(size=22M) ; "
	               "disk > mem(size=22M) ; disk > mem(size=22M) ; mem(size=4M)]",
	               &s, &err);
	ok(dev_spec_resize_media(s, 22 << 20, 108 << 20, &err) == 0 &&
	       dev_spec_format_given(s, buf, sizeof(buf)) > 0 &&
	       strcmp(buf, "raid5(chunk=4k,missing=1,journal=true) > [disk > mem(size=108M) ; "
	                   "disk > mem(size=108M) ; disk > mem(size=108M) ; mem(size=4M)]") == 0,
	   "every 22M medium grows, the 4M journal does not: %s", buf);
	ok(dev_spec_set(s, "chunk", "64k", &err) == 0 && dev_spec_format_given(s, buf, 24) > 0 &&
	       strcmp(buf, "raid5(chunk=64k,missing") == 0,
	   "one argument set, the rest as written: %s", buf);
	ok(dev_spec_set(s, "chunk", "2M", &err) == -EINVAL && strstr(err.msg, "over its maximum"),
	   "a value the parser refuses is refused: %s", err.msg);
	ok(dev_spec_set(dev_spec_lower_edit(dev_spec_lower_edit(s, 1), 0), "size", "1000", &err) ==
	           -EINVAL &&
	       strstr(err.msg, "size=1000 is not a positive whole number of 512-byte sectors"),
	   "a size the model cannot hold is refused by its own check: %s", err.msg);
	ok(dev_spec_set(s, "nosuch", "1", &err) == -EINVAL &&
	       strstr(err.msg, "no parameter nosuch"),
	   "an unknown parameter is named: %s", err.msg);
	ok(dev_spec_set(dev_spec_lower_edit(s, 0), "tear", "none", &err) == 0 &&
	       dev_spec_format_lowers(s, buf, sizeof(buf)) > 0 &&
	       strncmp(buf, "[disk(tear=none) > mem(size=108M) ; disk > ", 43) == 0,
	   "a lower edited by itself: %s", buf);
	dev_spec_free(s);

	dev_spec_parse("flash(ftl=cheap,eb=128k,size=64M)", &s, &err);
	ok(dev_spec_resize_media(s, 64 << 20, 320 << 20, &err) == 0 &&
	       dev_spec_set(s, "garbage", "yes", &err) == 0 &&
	       dev_spec_format_given(s, buf, sizeof(buf)) > 0 &&
	       strcmp(buf, "flash(ftl=cheap,eb=128k,size=320M,garbage=true)") == 0,
	   "parameters stay in the order written, a new one after them: %s", buf);
	dev_spec_free(s);
}

int main(void)
{
	rows();
	counterpart("raid5 > [mem] x3", "5:3:-", "512", NULL);
	counterpart("raid6(chunk=1M) > [mem] x4", NULL, NULL, "chunk=1M");
	counterpart("raid5(bitmap=true) > [mem] x3", NULL, NULL, "bitmap=true");
	counterpart("raid5(missing=none,flush=pass,journal=false) > [mem] x3", "5:3:-", "512",
	            NULL);
	counterpart("raid5 > [mem] x20", NULL, NULL, "does not fit");
	counterpart("raid1 > [mem] x2", NULL, NULL, "not a RAID row");
	edits();
	return tap_done();
}
