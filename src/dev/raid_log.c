// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_log.c — the array's log, whichever the array has (md keeps the choice behind
 * raid5-log.h): once a stripe update's member writes are planned, the partial parity
 * log (RAID5 ppl=true, when the update writes parity) and the write journal
 * (journal=true) add theirs. raid_stripe.c reaches raid_ppl.c and raid_journal.c
 * through here only. */
#include "dev/raid_int.h"

int raid_log_stripe(struct raid_dev *r, struct plan *pl, const struct piece *pc,
                    const struct sgeo *g, const unsigned char *P)
{
	int rc = 0;
	if (r->p.ppl && g && P && (rc = raid_plan_ppl(r, pl, pc, g, P)))
		return rc;
	return r->p.journal ? raid_plan_journal(r, pl) : 0;
}
