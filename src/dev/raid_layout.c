// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_layout.c — where md puts things: the chunk-to-member map of every RAID
 * level and layout (raid5_compute_sector) and a stripe's parity members and Q slots. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

static void map5(enum raid_layout lay, unsigned n, uint64_t stripe, unsigned *dd, int *pd)
{
	unsigned k = n - 1, r = (unsigned)(stripe % n);
	switch (lay) {
	case RAID_LEFT_ASYMMETRIC:
		*pd = (int)(k - r);
		if (*dd >= (unsigned)*pd)
			(*dd)++;
		break;
	case RAID_RIGHT_ASYMMETRIC:
		*pd = (int)r;
		if (*dd >= (unsigned)*pd)
			(*dd)++;
		break;
	case RAID_LEFT_SYMMETRIC:
		*pd = (int)(k - r);
		*dd = (*pd + 1 + *dd) % n;
		break;
	case RAID_RIGHT_SYMMETRIC:
		*pd = (int)r;
		*dd = (*pd + 1 + *dd) % n;
		break;
	case RAID_PARITY_N: *pd = (int)k; break;
	}
}

static void map6(enum raid_layout lay, unsigned n, uint64_t stripe, unsigned *dd, int *pd, int *qd)
{
	unsigned r = (unsigned)(stripe % n);
	switch (lay) {
	case RAID_LEFT_ASYMMETRIC:
	case RAID_RIGHT_ASYMMETRIC:
		*pd = lay == RAID_LEFT_ASYMMETRIC ? (int)(n - 1 - r) : (int)r;
		*qd = *pd + 1;
		if (*pd == (int)n - 1) {
			(*dd)++;
			*qd = 0;
		} else if (*dd >= (unsigned)*pd) {
			*dd += 2;
		}
		break;
	case RAID_LEFT_SYMMETRIC:
	case RAID_RIGHT_SYMMETRIC:
		*pd = lay == RAID_LEFT_SYMMETRIC ? (int)(n - 1 - r) : (int)r;
		*qd = (*pd + 1) % (int)n;
		*dd = (*pd + 2 + *dd) % n;
		break;
	case RAID_PARITY_N:
		*pd = (int)n - 2;
		*qd = (int)n - 1;
		break;
	}
}

int raid_check_geometry(unsigned level, enum raid_layout layout, unsigned n)
{
	if (n < 2 || n > MAXM)
		return -EINVAL;
	if ((level == 4 || level == 5) && n < 3)
		return -EINVAL;
	if (level == 6 && n < 4)
		return -EINVAL;
	if (level != 0 && level != 1 && level != 4 && level != 5 && level != 6)
		return -EINVAL;
	if (layout != RAID_LEFT_ASYMMETRIC && layout != RAID_RIGHT_ASYMMETRIC &&
	    layout != RAID_LEFT_SYMMETRIC && layout != RAID_RIGHT_SYMMETRIC &&
	    layout != RAID_PARITY_N)
		return -EINVAL;
	return 0;
}

int raid_map_chunk(unsigned level, enum raid_layout layout, unsigned n, uint64_t chunk,
                   unsigned *member, uint64_t *stripe)
{
	if (raid_check_geometry(level, layout, n))
		return -EINVAL;
	if (level == 4)
		layout = RAID_PARITY_N;
	int pd, qd;
	unsigned k = level == 0 ? n : level == 1 ? 1 : level == 6 ? n - 2 : n - 1;
	unsigned dd = (unsigned)(chunk % k);
	*stripe = chunk / k;
	if (level == 1)
		dd = 0;
	else if (level == 4 || level == 5)
		map5(layout, n, *stripe, &dd, &pd);
	else if (level == 6)
		map6(layout, n, *stripe, &dd, &pd, &qd);
	*member = dd;
	return 0;
}

int raid_parity_members(unsigned level, enum raid_layout layout, unsigned n, uint64_t stripe,
                        int *p, int *q)
{
	if (raid_check_geometry(level, layout, n))
		return -EINVAL;
	unsigned dd = 0;
	*p = *q = -1;
	if (level == 4)
		map5(RAID_PARITY_N, n, stripe, &dd, p);
	else if (level == 5)
		map5(layout, n, stripe, &dd, p);
	else if (level == 6)
		map6(layout, n, stripe, &dd, p, q);
	return 0;
}

void raid_stripe_geo(const struct raid_dev *r, uint64_t s, struct sgeo *g)
{
	unsigned level = r->p.level;
	g->pm = g->qm = -1;
	for (unsigned j = 0; j < r->k; j++) {
		uint64_t st;
		if (level == 0 || level == 1)
			g->dm[j] = j;
		else
			raid_map_chunk(level, r->p.layout, r->n, s * r->k + j, &g->dm[j], &st);
		g->slot[j] = j;
	}
	if (level >= 4)
		raid_parity_members(level, r->p.layout, r->n, s, &g->pm, &g->qm);
	if (level == 6) {
		unsigned d0 = g->qm == (int)r->n - 1 ? 0 : (unsigned)g->qm + 1, sl = 0;
		unsigned slot_of_member[MAXM];
		for (unsigned c = 0; c < r->n; c++) {
			unsigned i = (d0 + c) % r->n;
			if ((int)i != g->pm && (int)i != g->qm)
				slot_of_member[i] = sl++;
		}
		for (unsigned j = 0; j < r->k; j++)
			g->slot[j] = slot_of_member[g->dm[j]];
	}
	for (unsigned j = 0; j < r->k; j++)
		g->of_slot[g->slot[j]] = g->dm[j];
	if (g->pm >= 0)
		g->of_slot[r->k] = (unsigned)g->pm;
	if (g->qm >= 0)
		g->of_slot[r->k + 1] = (unsigned)g->qm;
}
