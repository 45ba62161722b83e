// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_spec.c — the stack-spec language: round trips over a corpus, error
 * positions and reasons, defaults, opening stacks (with wrap_leaf) and finding
 * devices in them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "tap.h"

static const char *const corpus[] = {
    "mem",
    "mem()",
    "mem(size=64k)",
    "mem(size=1048576,sector=4096)",
    "  mem ( size = 64k , sector = 512 )  ",
    "file(path=/tmp/x.img)",
    "file(path=\"/tmp/with space,comma;(x)\")",
    "file(path=\"quote\\\" and \\\\ backslash\")",
    "concat > mem",
    "concat > [mem(size=64k) ; mem(size=128k)]",
    "concat > [mem(size=64k)] x4",
    "concat>[mem;mem]*2",
    "concat > [concat > [mem ; mem] ; concat > mem(size=8k)] x3",
    "concat > concat > concat > mem(size=4k,sector=4096)",
    "cache > mem",
    "cache(size=32M,flush=ignore) > disk(sector=512,tear=sector) > file(path=x.img)",
    "cache(fua=ignore,order=random,seed=99)>disk(sector=4096,tear=byte)>mem(size=64M)",
    "cache(size=0) > fault(rules=\"write-error lba=8-15 after=2 sticky; lost-write lba=3\") > "
    "disk > mem",
    "concat > [cache > disk > mem(size=8M) ; fault > mem] x2",
    "file(path=\"\",readonly=yes)",
    NULL,
};

/* where the caret of an error is, and a word its reason must contain */
static const struct {
	const char *spec;
	int column; /* 1-based */
	const char *reason;
} bad[] = {
    {"", 1, "expected a device model name"},
    {"nosuch", 1, "unknown device model 'nosuch'"},
    {"mem(sise=4k)", 5, "no parameter 'sise'"},
    {"mem(size=4k,size=8k)", 13, "given twice"},
    {"mem(size=12q)", 10, "size"},
    {"mem(sector=1024)", 12, "must be one of 512|4096"},
    {"mem(size)", 9, "expected '='"},
    {"mem(size=4k", 12, "expected ',' or ')'"},
    {"mem > mem", 5, "is a medium"},
    {"concat", 7, "takes 1 to 64 lower devices"},
    {"concat > [mem ; mem", 10, "never closed"},
    {"concat > [mem mem]", 15, "expected ';' or ']'"},
    {"concat > [mem] x0", 17, "repeat count"},
    {"concat > [mem] x99", 17, "repeat count"},
    {"mem junk", 5, "unexpected 'j'"},
    {"file(path=\"abc)", 11, "unterminated"},
    {"file", 1, "needs path="},
    {"file(path=)", 11, "expected a value"},
    {"file(readonly=maybe,path=x)", 15, "true or false"},
    {"mem(size=\"\\n\")", 12, "escapes"},
    {"cache(flush=maybe) > mem", 13, "must be one of honor|ignore"},
    {"cache(size=1M) > [mem ; mem]", 16, "takes 1 lower device, not 2"},
    {"disk(tear=half) > mem", 11, "none|sector|byte"},
    {"cache(seed=-1) > mem", 12, "whole number"},
    {"cache > disk > fault > mem\x01", 24, "unknown device model 'mem\\x01'"},
    /* a mistyped name is named whole, control bytes escaped */
    {"m\xc3\xa9m", 1, "unknown device model 'm\xc3\xa9m'"},
    {"m\x01"
     "em > mem",
     1, "unknown device model 'm\\x01em'"},
    {"\xff", 1, "unknown device model '\\xff'"},
    {"mem(siz\xc3\xa9=1)", 5, "no parameter 'siz\xc3\xa9'"},
    /* each model's maximum size, and the limits once repeats expand */
    {"flash(size=1T)", 12, "flash: size=1T is over its maximum of 16G (docs/models/flash.md)"},
    {"mem(size=17G)", 10, "mem: size=17G is over its maximum of 16G"},
    {"cache(size=5G) > mem", 12, "cache: size=5G is over its maximum of 4G"},
    {"flash(cache=2G)", 13, "flash: cache=2G is over its maximum of 1G"},
    {"file(path=x,size=2T)", 18, "file: size=2T is over its maximum of 1T"},
    {"raid5(chunk=2M) > [mem] x3", 13, "over its maximum of 1M (docs/models/raid.md)"},
    {"concat > [concat > [concat > [mem(size=1k)] x64] x64] x64", 11,
     "concat and what stands below it open 4161 devices once repeats expand; a stack may "
     "open at most 1024"},
    {"concat > [concat > [mem(size=1k)] x31] x32", 1, "open 1025 devices"},
    {"raid5 > [mem(size=8G)] x4", 1,
     "raid5 and what stands below it hold 32G of RAM media and caches once repeats expand; "
     "a stack may hold at most 16G"},
    {"concat > [flash(size=16G) ; cache(size=1k) > file(path=x)]", 1, "hold 16777217k of RAM"},
    /* sizes the model cannot open are refused when parsed (describe, format), as open
     * refuses them, by the model's own check */
    {"mem(size=0)", 1, "mem: size=0 is not a positive whole number of 512-byte sectors"},
    {"mem(size=1000)", 1, "mem: size=1000 is not a positive whole number of 512-byte sectors"},
    {"mem(sector=4096,size=6k)", 1, "size=6k is not a positive whole number of 4096-byte"},
    {"file(path=x,size=1000)", 1, "file: size=1000 is not a whole number of 512-byte sectors"},
    {"flash(size=100k)", 1, "flash: size 100k is not a whole number of 128k erase blocks"},
    {"flash(eb=96k)", 1, "erase block 96k must be a power of two"},
    {"raid5 > [disk > mem(size=1000)] x3", 17, "mem: size=1000 is not"},
    {"raid5(chunk=2k) > [mem] x3", 1, "raid5: chunk must be 4k to 1M"},
    {"raid6(missing=one) > [mem] x4", 1, "missing=one: expected member numbers"},
};

static int count_leaves(void *ctx, struct bdev *leaf, struct bdev **out, struct bo_err *err)
{
	(void)err;
	(*(int *)ctx)++;
	*out = leaf;
	return 0;
}

static int refuse_leaf(void *ctx, struct bdev *leaf, struct bdev **out, struct bo_err *err)
{
	(void)ctx;
	(void)leaf;
	(void)out;
	return bo_errf(err, -EPERM, "refused");
}

int main(void)
{
	char buf[4096], buf2[4096];
	struct bo_err err = {{0}};

	for (int i = 0; corpus[i]; i++) {
		struct dev_spec *a, *b;
		int rc = dev_spec_parse(corpus[i], &a, &err);
		is_int(rc, 0, "parses: %s", corpus[i]);
		if (rc) {
			diag("%s", err.msg);
			continue;
		}
		int n = dev_spec_format(a, buf, sizeof(buf));
		ok(n > 0 && (size_t)n < sizeof(buf), "formats: %s", buf);
		rc = dev_spec_parse(buf, &b, &err);
		is_int(rc, 0, "canonical text parses back");
		if (rc == 0) {
			ok(dev_spec_equal(a, b), "round trip gives an equal spec");
			dev_spec_format(b, buf2, sizeof(buf2));
			is_str(buf2, buf, "canonical text is a fixed point");
			dev_spec_free(b);
		}
		dev_spec_free(a);
	}

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dev_spec *s = NULL;
		memset(&err, 0, sizeof(err));
		int rc = dev_spec_parse(bad[i].spec, &s, &err);
		is_int(rc, -EINVAL, "rejected: '%s'", bad[i].spec);
		char want[64];
		snprintf(want, sizeof(want), "column %d:", bad[i].column);
		ok(strstr(err.msg, want) != NULL, "error at %s", want);
		ok(strstr(err.msg, bad[i].reason) != NULL, "reason says '%s'", bad[i].reason);
		/* the caret line: the last line, a caret under the column (2 spaces indent) */
		const char *last = strrchr(err.msg, '\n');
		ok(last && (int)strlen(last + 1) == 2 + bad[i].column &&
		       last[strlen(last) - 1] == '^',
		   "caret under column %d", bad[i].column);
		if (!strstr(err.msg, want) || !strstr(err.msg, bad[i].reason))
			diag("%s", err.msg);
		ok(s == NULL, "no spec on error");
	}

	/* a long spec gets a window, and the caret still sits under the culprit */
	{
		char longspec[400];
		memset(longspec, ' ', sizeof(longspec));
		memcpy(longspec + 300, "mem(bad=1)", 11);
		struct dev_spec *s;
		int rc = dev_spec_parse(longspec, &s, &err);
		is_int(rc, -EINVAL, "long spec rejected");
		const char *l2 = strchr(err.msg, '\n');
		const char *l3 = l2 ? strchr(l2 + 1, '\n') : NULL;
		ok(l2 && l3, "three lines");
		if (l2 && l3) {
			size_t caret = strlen(l3 + 1) - 1;
			ok(l2[1 + caret] == 'b', "caret under 'bad' in the window");
		}
	}

	/* right at the limits after expansion: accepted */
	{
		static const char *const fits[] = {
		    "concat > [concat > [mem(size=1k)] x30] x33", /* 1 + 33 x 31 = 1024 devices */
		    "raid5 > [mem(size=4G)] x4",                  /* 16G */
		    "flash(size=16G)",                            /* its private medium: 16G */
		    "flash(size=8G) > mem(size=9G)", /* on a medium: only the medium's 9G */
		    "cache(size=4G) > [mem(size=12G)]",
		};
		for (size_t i = 0; i < sizeof(fits) / sizeof(fits[0]); i++) {
			struct dev_spec *s;
			int rc = dev_spec_parse(fits[i], &s, &err);
			is_int(rc, 0, "at the limit, accepted: %s", fits[i]);
			if (rc)
				diag("%s", err.msg);
			else
				dev_spec_free(s);
		}
	}

	/* defaults are filled in and reported as not given */
	{
		struct dev_spec *s;
		tap_require(dev_spec_parse("mem(sector=4096)", &s, &err) == 0, "mem parses");
		is_str(dev_arg_str(dev_spec_args(s), "size"), "16M", "size defaults to 16M");
		ok(!dev_spec_given(s, "size") && dev_spec_given(s, "sector"), "given flags");
		uint64_t v;
		is_int(dev_arg_size(dev_spec_args(s), "size", &v, &err), 0, "size parses");
		is_int(v, 16 << 20, "16 MiB");
		is_int(dev_arg_u64(dev_spec_args(s), "nosuch", &v, &err), -ENOENT,
		       "unknown parameter is -ENOENT");
		int e;
		static const char *const ss[] = {"512", "4096", NULL};
		is_int(dev_arg_enum(dev_spec_args(s), "sector", ss, &e, &err), 0, "enum");
		is_int(e, 1, "4096 is choice 1");
		dev_spec_format(s, buf, sizeof(buf));
		is_str(buf, "mem(size=16M,sector=4096)", "canonical form spells out defaults");
		dev_spec_free(s);
	}
	{
		struct dev_spec *s;
		tap_require(dev_spec_parse("mem(size=1048576)", &s, &err) == 0, "parses");
		dev_spec_format(s, buf, sizeof(buf));
		is_str(buf, "mem(size=1M,sector=512)", "sizes print in their shortest form");
		is_int(dev_spec_format(s, buf, 5), (int)strlen("mem(size=1M,sector=512)"),
		       "format returns the full length when truncating");
		is_str(buf, "mem(", "truncated output is terminated");
		dev_spec_free(s);
	}
	{
		struct dev_spec *a, *b;
		dev_spec_parse("concat > [mem ; mem(size=8k)] x2", &a, &err);
		dev_spec_parse("concat > [mem ; mem(size=8k) ; mem ; mem(size=8k)]", &b, &err);
		ok(a && b && dev_spec_equal(a, b), "x2 equals the list written out");
		is_int(dev_spec_nlowers(a), 4, "four lowers");
		is_str(dev_arg_str(dev_spec_args(dev_spec_lower(a, 3)), "size"), "8k",
		       "lower 3 is the second of the pair");
		ok(dev_spec_lower(a, 4) == NULL, "no lower 4");
		dev_spec_free(a);
		dev_spec_free(b);
	}

	/* opening: sizes, leaves wrapped, finding */
	{
		struct bdev *d;
		int leaves = 0;
		struct dev_open_opts o = {.wrap_leaf = count_leaves, .ctx = &leaves};
		int rc = dev_stack_open_text(
		    "concat > [mem(size=64k) ; concat > [mem(size=8k)] x2]", &o, &d, &err);
		is_int(rc, 0, "opens a three-leaf stack");
		is_int(leaves, 3, "wrap_leaf saw every leaf");
		is_int(d->nr_sectors, (64 + 16) * 2, "sizes add up");
		ok(dev_stack_find(d, "concat", 0) == d, "find concat 0 is the top");
		ok(dev_stack_find(d, "concat", 1) == blk_lower(d, 1), "find concat 1 is inner");
		ok(dev_stack_find(d, "mem", 2) == blk_lower(blk_lower(d, 1), 1), "find mem 2");
		ok(dev_stack_find(d, "mem", 3) == NULL, "no mem 3");
		unsigned char w[512], r[512];
		memset(w, 0x5a, sizeof(w));
		is_int(blk_write(d, 130, 1, w, 0), 0, "write into the second concat");
		is_int(blk_read(blk_lower(blk_lower(d, 1), 0), 2, 1, r), 0, "read the leaf");
		ok(memcmp(w, r, sizeof(w)) == 0, "landed at the right place");
		blk_close(d);

		o.wrap_leaf = refuse_leaf;
		rc = dev_stack_open_text("concat > [mem ; mem]", &o, &d, &err);
		is_int(rc, -EPERM, "a failing wrap_leaf fails the open (ASan checks for leaks)");
		ok(d == NULL, "and gives no device");
		rc = dev_stack_open_text("concat > [mem(size=4k,sector=4096) ; mem]", NULL, &d,
		                         &err);
		is_int(rc, -EINVAL, "a model's own check fails the open");
		ok(strstr(err.msg, "lower 1 has 512-byte sectors") != NULL, "naming why: %s",
		   err.msg);
		rc = dev_stack_open_text("mem(size=1000)", NULL, &d, &err);
		is_int(rc, -EINVAL, "mem size must be a multiple of the sector");
	}

	/* capabilities are found through the ops, never by name */
	{
		struct bdev *d;
		int rc = dev_stack_open_text("cache > fault > raid5(chunk=4k) > [mem(size=64k)] x3",
		                             NULL, &d, &err);
		tap_require(rc == 0, "open a stack with a fault layer and a RAID: %s", err.msg);
		struct bdev *f = blk_lower(d, 0), *r = blk_lower(f, 0);
		ok(dev_has_cap(f, DEV_CAP_FAULT_RULES) && !dev_has_cap(f, DEV_CAP_MEMBERS),
		   "fault takes rules, has no members");
		ok(dev_has_cap(r, DEV_CAP_MEMBERS) && !dev_has_cap(r, DEV_CAP_FAULT_RULES),
		   "raid5 has members, takes no rules");
		ok(!dev_has_cap(d, DEV_CAP_FAULT_RULES) &&
		       !dev_has_cap(blk_lower(r, 0), DEV_CAP_MEMBERS),
		   "cache and mem have neither");
		strcpy(f->name, "renamed");
		strcpy(r->name, "renamed");
		ok(dev_stack_find_cap(d, DEV_CAP_FAULT_RULES, 0) == f,
		   "the fault layer is found by what it does, whatever its name");
		ok(dev_stack_find_cap(d, DEV_CAP_MEMBERS, 0) == r, "so is the RAID");
		ok(dev_stack_find_cap(d, DEV_CAP_MEMBERS, 1) == NULL, "and only one");
		ok(dev_fault_arm(f, "read-error lba=0", &err) >= 0, "dev_fault_arm works on it");
		is_int(raid_fail_member(r, 1), 0, "raid_fail_member works on it");
		is_int(raid_fail_member(d, 1), -EINVAL, "raid_fail_member on the cache: -EINVAL");
		blk_close(d);

		struct bdev *m;
		tap_require(blk_mem_open(512, 64, &m) == 0, "mem");
		strcpy(m->name, "fault");
		ok(!dev_has_cap(m, DEV_CAP_FAULT_RULES) &&
		       dev_stack_find_cap(m, DEV_CAP_FAULT_RULES, 0) == NULL,
		   "a device merely called 'fault' takes no rules");
		is_int(dev_fault_arm(m, "read-error lba=0", &err), -EINVAL, "arming it: -EINVAL");
		ok(strstr(err.msg, "takes no fault rules") != NULL, "saying so: %s", err.msg);
		blk_close(m);
	}

	/* describe names every parameter of every layer, its value and its default */
	{
		struct dev_spec *s;
		tap_require(
		    dev_spec_parse("cache(flush=ignore) > fault > mem(size=64k)", &s, &err) == 0,
		    "parse for describe");
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		is_int(dev_spec_describe(s, f), 0, "describe");
		fclose(f);
		ok(strstr(text,
		          "stack: "
		          "cache(size=1M,flush=ignore,fua=honor,order=fifo,seed=0,versions=4) > "
		          "fault(rules=\"\") > mem(size=64k,sector=512)"),
		   "starts with the canonical spec");
		ok(strstr(text, "flush    = ignore       [default honor]"), "a changed parameter");
		ok(strstr(text, "size     = 64k          [default 16M]"), "another");
		ok(strstr(text, "seed     = 0            [default]"), "a defaulted one");
		int lines = 0;
		for (const char *c = text; *c; c++)
			lines += *c == '\n';
		is_int(lines, 2 + 3 + 6 + 1 + 2, "one line per layer and per parameter");
		free(text);
		dev_spec_free(s);
	}

	/* a long parameter name widens its layer's columns instead of pushing its line askew */
	{
		struct dev_spec *s;
		tap_require(dev_spec_parse("disk(tear=byte) > mem", &s, &err) == 0, "parse disk");
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		is_int(dev_spec_describe(s, f), 0, "describe disk");
		fclose(f);
		ok(strstr(text, "\n  sector    = auto         [default]") &&
		       strstr(text, "\n  tear      = byte         [default none]") &&
		       strstr(text, "\n  tear_unit = 1            [default]"),
		   "disk's '=' and value columns line up under tear_unit");
		ok(strstr(text, "\n      size     = 16M "), "mem keeps the narrow columns");
		free(text);
		dev_spec_free(s);
	}

	/* the registry */
	ok(dev_model_find("mem") && dev_model_find("file") && !dev_model_find("nosuch"),
	   "registry lookups");
	for (int i = 0; dev_models[i]; i++) {
		const struct dev_model *m = dev_models[i];
		ok(m->summary && m->summary[0] && m->open, "%s has a summary and open", m->name);
		for (int j = 0; m->params[j].name; j++)
			ok(m->params[j].help && m->params[j].help[0], "%s.%s has help", m->name,
			   m->params[j].name);
	}
	return tap_done();
}
