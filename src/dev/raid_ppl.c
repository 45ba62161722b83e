// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_ppl.c — the RAID5 partial parity log (md's raid5-ppl), one of md's narrower
 * mitigations of the write hole: planned through the log façade (raid_log.c),
 * replayed at assembly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

/* PPL: the XOR of what this update leaves alone (the new parity P with the new
 * data taken out again), logged on the stripe's parity member before the data. */
int raid_plan_ppl(struct raid_dev *r, struct plan *pl, const struct piece *pc, const struct sgeo *g,
                  const unsigned char *P)
{
	uint32_t lo = pc->lo, hi = pc->hi;
	size_t L = (size_t)(hi - lo) * r->ss, ss = r->ss;
	unsigned char *b = raid_plan_alloc(pl, META + L);
	if (!b)
		return -ENOMEM;
	unsigned char *pp = b + META;
	memcpy(pp, P, L);
	memset(b, 0, META);
	put_le64(b, PPL_MAGIC);
	put_le64(b + 8, r->events);
	put_le64(b + 16, pc->s);
	put_le32(b + 24, lo);
	put_le32(b + 28, hi);
	put_le32(b + 32, r->k);
	for (unsigned j = 0; j < r->k; j++) {
		put_le32(b + 64 + 8 * j, pc->a[j]);
		put_le32(b + 68 + 8 * j, pc->b[j]);
		if (pc->a[j] < pc->b[j])
			raid_xor_into(pp + (pc->a[j] - lo) * ss, pc->src[j],
			              (pc->b[j] - pc->a[j]) * ss);
	}
	put_le32(b + 36, crc32c(pp, L));
	put_le32(b + META - 4, crc32c(b, META - 4));
	raid_plan_add(pl, PH_LOG, (unsigned)g->pm, r->ppl_off, r->meta + (hi - lo), b, BLK_FUA);
	r->st.ppl_writes++;
	return 0;
}

int raid_ppl_recover(struct raid_dev *r)
{
	size_t ss = r->ss;
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		struct plan *pl = malloc(sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		raid_plan_init(pl, r);
		int rc = 0;
		unsigned char *h = raid_plan_alloc(pl, META), *pp = NULL;
		if (!h || raid_mread(r, i, r->ppl_off, r->meta, h))
			goto next;
		if (get_le64(h) != PPL_MAGIC || get_le32(h + META - 4) != crc32c(h, META - 4))
			goto next;
		uint64_t s = get_le64(h + 16);
		uint32_t lo = get_le32(h + 24), hi = get_le32(h + 28);
		if (s >= r->stripes || lo >= hi || hi > r->cs || get_le32(h + 32) != r->k)
			goto next;
		struct sgeo g;
		raid_stripe_geo(r, s, &g);
		if (g.pm != (int)i || !raid_usable(r, i, s))
			goto next;
		uint32_t a[MAXM], b[MAXM];
		bool ok = true;
		for (unsigned j = 0; j < r->k; j++) {
			a[j] = get_le32(h + 64 + 8 * j);
			b[j] = get_le32(h + 68 + 8 * j);
			if (a[j] > b[j] || (a[j] < b[j] && (a[j] < lo || b[j] > hi)))
				ok = false;
		}
		size_t L = (size_t)(hi - lo) * ss;
		if (!ok || !(pp = raid_plan_alloc(pl, L)) ||
		    raid_mread(r, i, r->ppl_off + r->meta, hi - lo, pp) ||
		    get_le32(h + 36) != crc32c(pp, L))
			goto next;
		unsigned char *cur = raid_plan_alloc(pl, L), *par = raid_plan_alloc(pl, L);
		if (!cur || !par)
			goto next;
		uint64_t base = r->data_off + s * r->cs;
		/* Row by row: a sector row whose modified chunks are all present gets
		 * parity = pp ^ their current data; a row with a modified chunk on a lost
		 * member is left alone (md: "no PPL recovery for this stripe"; md decides
		 * per 4 KiB page, here per sector, so only sectors being written are lost). */
		if ((rc = raid_mread(r, i, base + lo, hi - lo, par)))
			goto next;
		for (unsigned j = 0; j < r->k && rc == 0; j++) {
			if (a[j] >= b[j] || !raid_usable(r, g.dm[j], s))
				continue;
			rc = raid_mread(r, g.dm[j], base + a[j], b[j] - a[j],
			                cur + (a[j] - lo) * ss);
			if (rc == 0)
				raid_xor_into(pp + (a[j] - lo) * ss, cur + (a[j] - lo) * ss,
				              (b[j] - a[j]) * ss);
		}
		bool skipped = false;
		for (uint32_t x = lo; x < hi && rc == 0; x++) {
			bool lost = false;
			for (unsigned j = 0; j < r->k; j++)
				lost |= a[j] <= x && x < b[j] && !raid_usable(r, g.dm[j], s);
			if (lost) {
				memcpy(pp + (x - lo) * ss, par + (x - lo) * ss, ss);
				skipped = true;
			}
		}
		if (skipped)
			r->st.ppl_skipped++;
		if (rc == 0 && (rc = raid_mwrite(r, i, base + lo, hi - lo, pp, 0)) == 0)
			r->st.ppl_recovered++;
	next:
		raid_plan_free(pl);
		free(pl);
		if (rc && rc != -EIO)
			return rc;
	}
	return 0;
}
