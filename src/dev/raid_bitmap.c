// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_bitmap.c — md's write-intent bitmap, the other narrow mitigation of the write
 * hole: a region's bit is set on every member before its first write since the array
 * was clean, so a crash resyncs only dirty regions. */
#include <errno.h>
#include <string.h>

#include "blackout/dev.h"
#include "dev/raid_int.h"

/* The bitmap write that must precede the first write to stripe s's region since
 * the array was last clean: the bit is set on every member first. */
int raid_plan_bitmap(struct raid_dev *r, struct plan *pl, uint64_t s)
{
	uint64_t reg = s / r->bm_stripes;
	if (r->bm[reg / 8] >> (reg % 8) & 1)
		return 0;
	pl->set_bm = true;
	pl->bm_region = reg;
	uint64_t sec = reg / 8 / r->ss;
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		unsigned char *b = raid_plan_alloc(pl, r->ss);
		if (!b)
			return -ENOMEM;
		memcpy(b, r->bm + sec * r->ss, r->ss);
		b[reg / 8 - sec * r->ss] |= (unsigned char)(1u << (reg % 8));
		r->st.bitmap_writes++;
		raid_plan_add(pl, PH_BM, i, r->bm_off + sec, 1, b, BLK_FUA);
	}
	return 0;
}

int raid_write_bitmap(struct raid_dev *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		r->st.bitmap_writes++;
		int rc = raid_mwrite(r, i, r->bm_off, r->bm_sectors, r->bm, BLK_FUA);
		if (rc == -EIO)
			raid_member_failed(r, i);
		else if (rc)
			return rc;
	}
	return 0;
}
