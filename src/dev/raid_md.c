// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_md.c — Linux md's counterpart of a raid5/raid6 spec, read from the parsed
 * tree: the arguments `blackout vmtest --md` takes, or why md has none. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "blackout/util.h"

/* md's members: vmrecord assembles 3 to 19 of them */
#define MD_MIN_MEMBERS 3
#define MD_MAX_MEMBERS 19
#define MD_MAX_CHUNK   (512u << 10)

/* One written parameter as md's counterpart: 0, or -EINVAL with why md has none. */
static int md_param(const struct dev_args *a, const char *name, struct raid_md_args *md,
                    char miss[4], bool *journal, char *why, size_t len)
{
	const char *v = dev_arg_str(a, name);
	uint64_t bytes;
	if (strcmp(name, "chunk") == 0 && dev_arg_size(a, name, &bytes, NULL) == 0 &&
	    bytes >= 4096 && bytes <= MD_MAX_CHUNK && !(bytes & (bytes - 1))) {
		snprintf(md->chunk, sizeof(md->chunk), "%" PRIu64, bytes >> 10);
		return 0;
	}
	if (strcmp(name, "missing") == 0) {
		if (strcmp(v, "none") == 0)
			return 0;
		/* one member: md's counterpart is assembled without it */
		if (v[0] && strspn(v, "0123456789") == strlen(v) && strlen(v) <= 2) {
			memcpy(miss, v, strlen(v) + 1);
			return 0;
		}
		snprintf(why, len, "missing=%s: md's counterpart here leaves out one member", v);
		return -EINVAL;
	}
	if (strcmp(name, "journal") == 0) {
		*journal = strcmp(v, "true") == 0;
		return 0;
	}
	if (strcmp(name, "flush") == 0 && strcmp(v, "drop") == 0)
		snprintf(
		    why, len,
		    "Linux md passes flushes to its members; this row models md before it did");
	else if (strcmp(name, "flush") == 0)
		return 0;
	else
		snprintf(why, len, "md has no counterpart of the model's %s=%s", name, v);
	return -EINVAL;
}

int raid_md_counterpart(const struct dev_spec *s, struct raid_md_args *md, char *why, size_t len)
{
	memset(md, 0, sizeof(*md));
	const struct dev_model *m = dev_spec_model(s);
	int level = strcmp(m->name, "raid5") == 0 ? 5 : strcmp(m->name, "raid6") == 0 ? 6 : 0;
	unsigned n = dev_spec_nlowers(s);
	if (!level || !n) {
		snprintf(why, len, "not a RAID row: Linux md needs the row's members");
		return -EINVAL;
	}
	bool journal = false;
	char miss[4] = "";
	snprintf(md->chunk, sizeof(md->chunk), "512"); /* the model's default and md's */
	for (const struct dev_param *p = m->params; p && p->name; p++) {
		if (!dev_spec_given(s, p->name))
			continue;
		int rc = md_param(dev_spec_args(s), p->name, md, miss, &journal, why, len);
		if (rc)
			return rc;
	}
	unsigned members = journal ? n - 1 : n;
	char lowers[sizeof(md->stack)];
	int w = dev_spec_format_lowers(s, lowers, sizeof(lowers));
	if (w < 0 ||
	    snprintf(md->stack, sizeof(md->stack), "concat > %s", lowers) >=
	        (int)sizeof(md->stack) ||
	    (size_t)w >= sizeof(lowers) || members < MD_MIN_MEMBERS || members > MD_MAX_MEMBERS) {
		snprintf(why, len, "md's counterpart of this row does not fit vmrecord --md");
		return -EINVAL;
	}
	snprintf(md->md, sizeof(md->md), "%d:%u:%s%s", level, members, miss[0] ? miss : "-",
	         journal ? ":j" : "");
	return 0;
}
