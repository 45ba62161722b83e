// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_member.c — member I/O of an array: reads and writes that count and fail
 * members, the superblocks that record it, and how many members a stripe has lost. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "dev/raid_int.h"

bool raid_usable(const struct raid_dev *r, unsigned i, uint64_t s)
{
	if (r->failed >> i & 1)
		return false;
	return !(r->rebuild_idx == (int)i && s >= r->rebuild_pos);
}

unsigned raid_tolerance(const struct raid_dev *r)
{
	return r->p.level == 1 ? r->n - 1 : r->m;
}

/* Members that hold nothing current for stripe s: failed, missing, or not yet
 * rebuilt that far. */
unsigned raid_stripe_lost(const struct raid_dev *r, uint64_t s)
{
	unsigned lost = 0;
	for (unsigned i = 0; i < r->n; i++)
		lost += !raid_usable(r, i, s);
	return lost;
}

/* A stripe with more members lost than the level survives cannot hold what is
 * written to it (md fails such a stripe's I/O, and a RAID0 with a member gone
 * is broken as a whole): acknowledging the write would promise what a later
 * read cannot keep. Checked before a stripe update is planned and again after
 * it ran, since a member can fail under the update itself. */
int raid_stripe_writable(struct raid_dev *r, uint64_t s)
{
	unsigned lost = raid_stripe_lost(r, s);
	if (lost <= raid_tolerance(r))
		return 0;
	return bo_errf(&r->dev.err, -EIO,
	               "%s: stripe %llu: %u of %u members failed or missing, RAID%u survives %u: "
	               "the write cannot be made durable",
	               r->dev.name, (unsigned long long)s, lost, r->n, r->p.level,
	               raid_tolerance(r));
}

void raid_sb_encode(const struct raid_dev *r, unsigned i, uint64_t events, bool dirty,
                    unsigned char *b)
{
	memset(b, 0, r->ss);
	put_le64(b + 0, SB_MAGIC);
	put_le32(b + 8, 1);
	put_le32(b + 12, r->p.level);
	put_le32(b + 16, r->n);
	put_le32(b + 20, i);
	put_le32(b + 24, r->p.chunk);
	put_le32(b + 28, (uint32_t)r->p.layout);
	put_le32(b + 32, (r->p.bitmap ? F_BITMAP : 0) | (r->p.ppl ? F_PPL : 0) |
	                     (r->p.journal ? F_JOURNAL : 0));
	put_le32(b + 36, dirty);
	put_le64(b + 40, r->data_off);
	put_le64(b + 48, r->mdata);
	put_le64(b + 56, events);
	put_le64(b + 64, r->failed);
	put_le32(b + 72, r->rebuild_idx < 0 ? 0xffffffffu : (uint32_t)r->rebuild_idx);
	put_le64(b + 80, r->rebuild_pos);
	put_le64(b + 88, r->bm_stripes);
	put_le32(b + SB_CRC, crc32c(b, SB_CRC));
}

void raid_sb_decode(const struct raid_dev *r, unsigned i, const unsigned char *b, struct sbinfo *si)
{
	memset(si, 0, sizeof(*si));
	if (get_le64(b) != SB_MAGIC || get_le32(b + SB_CRC) != crc32c(b, SB_CRC))
		return;
	uint32_t feat =
	    (r->p.bitmap ? F_BITMAP : 0) | (r->p.ppl ? F_PPL : 0) | (r->p.journal ? F_JOURNAL : 0);
	if (get_le32(b + 8) != 1 || get_le32(b + 12) != r->p.level || get_le32(b + 16) != r->n ||
	    get_le32(b + 20) != i || get_le32(b + 24) != r->p.chunk ||
	    get_le32(b + 28) != (uint32_t)r->p.layout || get_le32(b + 32) != feat ||
	    get_le64(b + 40) != r->data_off || get_le64(b + 48) != r->mdata ||
	    get_le64(b + 88) != r->bm_stripes)
		return;
	uint32_t ri = get_le32(b + 72);
	si->valid = true;
	si->dirty = get_le32(b + 36) != 0;
	si->events = get_le64(b + 56);
	si->failed = get_le64(b + 64) & ((r->n == 64 ? 0 : (1ull << r->n)) - 1);
	si->rebuild_idx = ri < r->n ? (int)ri : -1;
	si->rebuild_pos = get_le64(b + 80);
	if (si->rebuild_pos > r->stripes)
		si->rebuild_pos = r->stripes;
}

int raid_mread(struct raid_dev *r, unsigned i, uint64_t lba, uint64_t count, void *buf)
{
	int rc = blk_read(r->mem[i], lba, (uint32_t)count, buf);
	r->st.member_reads++;
	r->st.member_read_sectors += count;
	if (r->in_write)
		r->st.wr_read_sectors += count;
	if (rc)
		bo_errf(&r->dev.err, rc, "%s: member %u: read of %llu sectors at %llu: %s",
		        r->dev.name, i, (unsigned long long)count, (unsigned long long)lba,
		        bo_errstr(&r->mem[i]->err, rc));
	if (rc == -EIO)
		raid_member_failed(r, i);
	return rc;
}

int raid_mwrite(struct raid_dev *r, unsigned i, uint64_t lba, uint64_t count, const void *buf,
                unsigned flags)
{
	struct bdev *d = i < r->n ? r->mem[i] : r->jdev;
	int rc = blk_write(d, lba, (uint32_t)count, buf, flags);
	r->st.member_writes++;
	r->st.member_write_sectors += count;
	if (r->in_write)
		r->st.wr_write_sectors += count;
	if (rc)
		bo_errf(&r->dev.err, rc, "%s: %s %u: write of %llu sectors at %llu: %s",
		        r->dev.name, i < r->n ? "member" : "journal", i, (unsigned long long)count,
		        (unsigned long long)lba, bo_errstr(&d->err, rc));
	/* a member being hot-replaced: what is already copied gets the write too */
	if (rc == 0 && r->repl && (int)i == r->repl_idx && lba >= r->data_off &&
	    (lba - r->data_off) / r->cs < r->repl_pos) {
		r->st.member_writes++;
		r->st.member_write_sectors += count;
		if (blk_write(r->repl, lba, (uint32_t)count, buf, flags)) {
			blk_close(r->repl); /* the replacement failed: give it up */
			r->repl = NULL;
			r->repl_idx = -1;
		}
	}
	return rc;
}

/* Superblocks to every member still in the array. A member that cannot take its
 * superblock is failed here without another round (the next round records it). */
int raid_write_sbs(struct raid_dev *r)
{
	unsigned char b[META];
	r->events++;
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		raid_sb_encode(r, i, r->events, r->dirty, b);
		r->st.sb_writes++;
		int rc = raid_mwrite(r, i, 0, 1, b, BLK_FUA);
		if (rc == -EIO) {
			r->failed |= 1ull << i;
			r->st.member_failures++;
		} else if (rc) {
			return rc;
		}
	}
	return 0;
}

void raid_member_failed(struct raid_dev *r, unsigned i)
{
	if (r->failed >> i & 1)
		return;
	r->failed |= 1ull << i;
	if (r->rebuild_idx == (int)i)
		r->rebuild_idx = -1;
	r->st.member_failures++;
	if (r->repl && r->repl_idx == (int)i) {
		/* as md: a replacement whose source fails becomes a rebuild from where the
		 * copy had got to */
		blk_close(r->mem[i]);
		r->mem[i] = r->repl;
		r->repl = NULL;
		r->repl_idx = -1;
		r->failed &= ~(1ull << i);
		r->rebuild_idx = (int)i;
		r->rebuild_pos = r->repl_pos;
	}
	raid_write_sbs(r);
}

int raid_flush_members(struct raid_dev *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		if (r->failed >> i & 1)
			continue;
		int rc = blk_flush(r->mem[i]);
		if (rc == -EIO)
			raid_member_failed(r, i);
		else if (rc)
			return bo_errf(&r->dev.err, rc, "%s: member %u: flush: %s", r->dev.name, i,
			               bo_errstr(&r->mem[i]->err, rc));
	}
	return 0;
}

int raid_refused(struct raid_dev *r)
{
	return bo_errf(&r->dev.err, -EIO,
	               "%s: not started: the array was dirty and degraded after a crash, so its "
	               "parity may not match its data (the write hole); md refuses to start it "
	               "without --force (start_dirty_degraded=true)",
	               r->dev.name);
}
