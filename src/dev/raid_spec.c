// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_spec.c — the registry entries of raid0 ... raid6: their parameters and the
 * spec arguments turned into raid_params for dev_raid_open. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

static const char *const layout_names[] = {"left-symmetric", "left-asymmetric", "right-symmetric",
                                           "right-asymmetric", NULL};
static const enum raid_layout layout_values[] = {RAID_LEFT_SYMMETRIC, RAID_LEFT_ASYMMETRIC,
                                                 RAID_RIGHT_SYMMETRIC, RAID_RIGHT_ASYMMETRIC};
static const char *const flush_names[] = {"pass", "drop", NULL};

static int parse_missing(const char *s, uint64_t *out, struct bo_err *err)
{
	*out = 0;
	if (!s || !*s || strcmp(s, "none") == 0)
		return 0;
	const char *p = s;
	while (*p) {
		if (*p < '0' || *p > '9')
			return bo_errf(err, -EINVAL,
			               "raid: missing=%s: expected member numbers like 1 or 0,2",
			               s);
		unsigned v = 0;
		while (*p >= '0' && *p <= '9' && v < 1000)
			v = v * 10 + (unsigned)(*p++ - '0');
		if (v >= MAXM)
			return bo_errf(err, -EINVAL, "raid: missing=%s: member %u is past %d", s, v,
			               MAXM - 1);
		*out |= 1ull << v;
		if (*p == ',' || *p == ':')
			p++;
		else if (*p)
			return bo_errf(err, -EINVAL,
			               "raid: missing=%s: expected member numbers like 1 or 0,2",
			               s);
	}
	return 0;
}

static bool has_param(const struct dev_args *a, const char *name)
{
	const struct dev_param *p = dev_args_model(a)->params;
	for (; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return true;
	return false;
}

/* The arguments as raid_params, each checked: the model's check at parse time and
 * its open share it. */
static int raid_args(unsigned level, const struct dev_args *a, struct raid_params *out,
                     struct bo_err *err)
{
	struct raid_params p = {.level = level, .layout = RAID_LEFT_SYMMETRIC};
	uint64_t v;
	int rc, li;
	if (has_param(a, "chunk")) {
		if ((rc = dev_arg_size(a, "chunk", &v, err)))
			return rc;
		if (v > (1u << 20) || v < 4096)
			return bo_errf(err, -EINVAL, "raid%u: chunk must be 4k to 1M", level);
		p.chunk = (uint32_t)v;
	}
	if (has_param(a, "layout")) {
		if ((rc = dev_arg_enum(a, "layout", layout_names, &li, err)))
			return rc;
		p.layout = layout_values[li];
	}
	if (has_param(a, "missing") &&
	    (rc = parse_missing(dev_arg_str(a, "missing"), &p.missing, err)))
		return rc;
	if (has_param(a, "bitmap") && (rc = dev_arg_bool(a, "bitmap", &p.bitmap, err)))
		return rc;
	if (has_param(a, "bitmap_chunk") &&
	    (rc = dev_arg_size(a, "bitmap_chunk", &p.bitmap_chunk, err)))
		return rc;
	if (has_param(a, "ppl") && (rc = dev_arg_bool(a, "ppl", &p.ppl, err)))
		return rc;
	if (has_param(a, "journal") && (rc = dev_arg_bool(a, "journal", &p.journal, err)))
		return rc;
	bool start = true;
	if (has_param(a, "start_dirty_degraded") &&
	    (rc = dev_arg_bool(a, "start_dirty_degraded", &start, err)))
		return rc;
	p.refuse_dirty_degraded = !start;
	if (has_param(a, "flush")) {
		int fi;
		if ((rc = dev_arg_enum(a, "flush", flush_names, &fi, err)))
			return rc;
		p.drop_flushes = fi == 1;
	}
	*out = p;
	return 0;
}

static int open_level(unsigned level, const struct dev_args *a, struct bdev **lowers,
                      unsigned nlowers, struct bdev **out, struct bo_err *err)
{
	struct raid_params p;
	int rc = raid_args(level, a, &p, err);
	return rc ? rc : dev_raid_open(&p, lowers, nlowers, out, err);
}

#define OPENER(L)                                                                                  \
	static int open_raid##L(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,  \
	                        struct bdev **out, struct bo_err *err)                             \
	{                                                                                          \
		return open_level(L, a, lowers, nlowers, out, err);                                \
	}                                                                                          \
	static int check_raid##L(const struct dev_args *a, struct bo_err *err)                     \
	{                                                                                          \
		struct raid_params p;                                                              \
		return raid_args(L, a, &p, err);                                                   \
	}
OPENER(0)
OPENER(1)
OPENER(4)
OPENER(5)
OPENER(6)

#define P_CHUNK                                                                                    \
	{                                                                                          \
		"chunk", "512k", "chunk size, 4k to 1M (md's default 512k)", DEV_PT_SIZE, NULL,    \
		    1u << 20                                                                       \
	}
#define P_LAYOUT                                                                                   \
	{                                                                                          \
		"layout", "left-symmetric",                                                        \
		    "parity rotation as md: "                                                      \
		    "left-symmetric|left-asymmetric|right-symmetric|right-asymmetric",             \
		    DEV_PT_ENUM, layout_names                                                      \
	}
#define P_MISSING                                                                                  \
	{                                                                                          \
		"missing", "none", "members absent at assembly: none, I or I,J (degraded array)",  \
		    DEV_PT_STR                                                                     \
	}
#define P_BITMAP                                                                                   \
	{                                                                                          \
		"bitmap", "false", "write-intent bitmap: resync only dirty regions after a crash", \
		    DEV_PT_BOOL                                                                    \
	}
#define P_START                                                                                    \
	{                                                                                          \
		"start_dirty_degraded", "true",                                                    \
		    "after a crash, start a dirty degraded array (as md with --force); false: "    \
		    "refuse, "                                                                     \
		    "as md does by default",                                                       \
		    DEV_PT_BOOL                                                                    \
	}
#define P_FLUSH                                                                                    \
	{                                                                                          \
		"flush", "pass",                                                                   \
		    "pass: flushes and FUA reach the members; drop: md before barrier support, "   \
		    "a flush completes at once and member caches keep their writes",               \
		    DEV_PT_ENUM, flush_names                                                       \
	}
#define P_BMCHUNK                                                                                  \
	{                                                                                          \
		"bitmap_chunk", "64M", "member data covered by one bitmap bit", DEV_PT_SIZE        \
	}
#define P_JOURNAL                                                                                  \
	{                                                                                          \
		"journal", "false",                                                                \
		    "last lower device is a write journal (md raid5-cache): closes the "           \
		    "write hole",                                                                  \
		    DEV_PT_BOOL                                                                    \
	}

static const struct dev_param raid0_params[] = {P_CHUNK, P_FLUSH, {NULL}};
static const struct dev_param raid1_params[] = {P_MISSING, P_BITMAP, P_BMCHUNK, P_FLUSH, {NULL}};
static const struct dev_param raid4_params[] = {P_CHUNK,   P_MISSING, P_BITMAP, P_BMCHUNK,
                                                P_JOURNAL, P_START,   P_FLUSH,  {NULL}};
static const struct dev_param raid5_params[] = {
    P_CHUNK,
    P_LAYOUT,
    P_MISSING,
    P_BITMAP,
    P_BMCHUNK,
    {"ppl", "false", "partial parity log on each stripe's parity member (md raid5-ppl)",
     DEV_PT_BOOL},
    P_JOURNAL,
    P_START,
    P_FLUSH,
    {NULL}};
static const struct dev_param raid6_params[] = {P_CHUNK,   P_LAYOUT, P_MISSING, P_BITMAP, P_BMCHUNK,
                                                P_JOURNAL, P_START,  P_FLUSH,   {NULL}};

const struct dev_model dev_model_raid0 = {
    .name = "raid0",
    .summary = "striping (md raid0): no redundancy, one member lost loses the array",
    .params = raid0_params,
    .min_lowers = 2,
    .max_lowers = MAXM,
    .open = open_raid0,
    .check = check_raid0,
};
const struct dev_model dev_model_raid1 = {
    .name = "raid1",
    .summary = "n-way mirror (md raid1): mirrors diverge on a cut, resync after",
    .params = raid1_params,
    .min_lowers = 2,
    .max_lowers = MAXM,
    .open = open_raid1,
    .check = check_raid1,
};
const struct dev_model dev_model_raid4 = {
    .name = "raid4",
    .summary = "striping with dedicated parity member (md raid4): the write hole",
    .params = raid4_params,
    .min_lowers = 3,
    .max_lowers = MAXM + 1,
    .open = open_raid4,
    .check = check_raid4,
};
const struct dev_model dev_model_raid5 = {
    .name = "raid5",
    .summary = "striping with rotating parity (md raid5): the write hole when degraded",
    .params = raid5_params,
    .min_lowers = 3,
    .max_lowers = MAXM + 1,
    .open = open_raid5,
    .check = check_raid5,
};
const struct dev_model dev_model_raid6 = {
    .name = "raid6",
    .summary = "striping with P+Q parity (md raid6): the write hole with two missing",
    .params = raid6_params,
    .min_lowers = 4,
    .max_lowers = MAXM + 1,
    .open = open_raid6,
    .check = check_raid6,
};
