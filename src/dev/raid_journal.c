// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_journal.c — the write journal (md raid5-cache, write-through): each stripe
 * update logged to the journal device first, checkpointed, replayed at assembly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

int raid_jsb_write(struct raid_dev *r)
{
	unsigned char b[META];
	memset(b, 0, META);
	put_le64(b, JSB_MAGIC);
	put_le64(b + 8, r->j_head);
	put_le64(b + 16, r->j_seq);
	put_le32(b + SB_CRC, crc32c(b, SB_CRC));
	int rc = raid_mwrite(r, r->n, 0, 1, b, BLK_FUA);
	if (rc == 0)
		r->j_tail = r->j_head;
	return rc;
}

/* Records before the head are on the members once the members are flushed. */
int raid_journal_checkpoint(struct raid_dev *r, bool wrap)
{
	int rc = raid_flush_members(r);
	if (rc)
		return rc;
	if (wrap)
		r->j_head = r->meta;
	r->st.journal_checkpoints++;
	return raid_jsb_write(r);
}

int raid_plan_journal(struct raid_dev *r, struct plan *pl)
{
	uint64_t total = 0;
	unsigned nw = pl->nw[PH_DATA];
	for (unsigned i = 0; i < nw; i++)
		total += pl->w[PH_DATA][i].count;
	uint64_t need = r->meta + total;
	if (r->j_head + need > r->jdev->nr_sectors) {
		int rc = raid_journal_checkpoint(r, true);
		if (rc)
			return rc;
	}
	unsigned char *b = raid_plan_alloc(pl, META + total * r->ss);
	if (!b)
		return -ENOMEM;
	memset(b, 0, META);
	put_le64(b, JR_MAGIC);
	put_le64(b + 8, r->j_seq);
	put_le32(b + 16, nw);
	put_le32(b + 20, (uint32_t)total);
	unsigned char *payload = b + META;
	for (unsigned i = 0; i < nw; i++) {
		const struct mw *w = &pl->w[PH_DATA][i];
		put_le32(b + 64 + 16 * i, w->dev);
		put_le32(b + 68 + 16 * i, (uint32_t)w->count);
		put_le64(b + 72 + 16 * i, w->lba);
		memcpy(payload, w->data, w->count * r->ss);
		payload += w->count * r->ss;
	}
	put_le32(b + 24, crc32c(b + META, total * r->ss));
	put_le32(b + META - 4, crc32c(b, META - 4));
	raid_plan_add(pl, PH_LOG, r->n, r->j_head, need, b, BLK_FUA);
	pl->set_j = true;
	pl->j_head = r->j_head + need;
	pl->j_seq = r->j_seq + 1;
	r->st.journal_records++;
	return 0;
}

int raid_journal_recover(struct raid_dev *r)
{
	unsigned char *h = aligned_alloc(64, META);
	if (!h)
		return -ENOMEM;
	uint64_t pos = r->meta, seq = 1;
	int rc = blk_read(r->jdev, 0, 1, h);
	if (rc == 0 && get_le64(h) == JSB_MAGIC && get_le32(h + SB_CRC) == crc32c(h, SB_CRC)) {
		pos = get_le64(h + 8);
		seq = get_le64(h + 16);
		if (pos < r->meta || pos > r->jdev->nr_sectors)
			pos = r->meta;
	}
	rc = 0;
	while (rc == 0 && pos + r->meta <= r->jdev->nr_sectors) {
		if (blk_read(r->jdev, pos, (uint32_t)r->meta, h))
			break;
		if (get_le64(h) != JR_MAGIC || get_le32(h + META - 4) != crc32c(h, META - 4) ||
		    get_le64(h + 8) != seq)
			break;
		uint32_t nw = get_le32(h + 16), total = get_le32(h + 20);
		/* a record is one stripe update: at most a chunk on every member */
		if (nw > r->n || total > (uint64_t)r->n * r->cs ||
		    total > r->jdev->nr_sectors - pos - r->meta)
			break;
		uint64_t sum = 0;
		bool ok = true;
		for (unsigned i = 0; i < nw; i++) {
			uint32_t dev = get_le32(h + 64 + 16 * i), cnt = get_le32(h + 68 + 16 * i);
			uint64_t lba = get_le64(h + 72 + 16 * i);
			if (dev >= r->n || cnt == 0 || lba < r->data_off ||
			    lba >= r->data_off + r->mdata || cnt > r->data_off + r->mdata - lba)
				ok = false;
			sum += cnt;
		}
		if (!ok || sum != total)
			break;
		unsigned char *p = malloc((size_t)total * r->ss);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		if (blk_read(r->jdev, pos + r->meta, total, p) ||
		    get_le32(h + 24) != crc32c(p, (size_t)total * r->ss)) {
			free(p);
			break;
		}
		unsigned char *q = p;
		for (unsigned i = 0; i < nw && rc == 0; i++) {
			uint32_t dev = get_le32(h + 64 + 16 * i), cnt = get_le32(h + 68 + 16 * i);
			if (!(r->failed >> dev & 1)) {
				rc = raid_mwrite(r, dev, get_le64(h + 72 + 16 * i), cnt, q, 0);
				if (rc == -EIO) {
					raid_member_failed(r, dev);
					rc = 0;
				}
			}
			q += (size_t)cnt * r->ss;
		}
		free(p);
		r->st.journal_replayed++;
		pos += r->meta + total;
		seq++;
	}
	free(h);
	if (rc)
		return rc;
	r->j_head = pos;
	r->j_seq = seq;
	return raid_journal_checkpoint(r, false);
}
