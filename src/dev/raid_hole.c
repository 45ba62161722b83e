// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_hole.c — the write-hole experiment: what every outcome of a power cut during
 * one write leaves readable, judged against the data written before it. Works on
 * any stack; `blackout raid hole` and tests call it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "blackout/util.h"

struct hole {
	uint64_t lba;
	uint32_t count;
	bool fail_after;
	const unsigned char *old, *new_;
	unsigned char *got;
	struct raid_hole_result *res;
	int err;
};

/* The first layer with RAID members (pre-order), found by what it can do. */
static struct bdev *find_raid(struct bdev *d)
{
	return dev_stack_find_cap(d, DEV_CAP_MEMBERS, 0);
}

/* bit 0: an untouched sector changed; bit 1: a written sector is neither old nor
 * new; bit 2: the write is partly old, partly new; bit 3: reads fail with -EIO */
static unsigned judge(struct hole *h, struct bdev *d)
{
	size_t ss = d->sector_size;
	int rc = blk_read(d, 0, (uint32_t)d->nr_sectors, h->got);
	if (rc == -EIO)
		return 8;
	if (rc) {
		h->err = rc;
		return 0;
	}
	unsigned v = 0;
	uint64_t nold = 0, nnew = 0;
	for (uint64_t s = 0; s < d->nr_sectors; s++) {
		const unsigned char *g = h->got + s * ss;
		bool is_old = memcmp(g, h->old + s * ss, ss) == 0;
		if (s < h->lba || s >= h->lba + h->count) {
			v |= is_old ? 0 : 1;
			continue;
		}
		if (memcmp(g, h->new_ + (s - h->lba) * ss, ss) == 0)
			nnew++;
		else if (is_old)
			nold++;
		else
			v |= 2;
	}
	return v | (nold && nnew ? 4 : 0);
}

static int visit(void *ctx, struct bdev *state, const struct blk_chooser_list *l)
{
	(void)l;
	struct hole *h = ctx;
	unsigned v = judge(h, state);
	struct bdev *raid = h->fail_after ? find_raid(state) : NULL;
	struct raid_status st;
	if (raid && raid_status(raid, &st) == 0)
		for (unsigned i = 0; i < st.members && !h->err; i++) {
			if (st.failed >> i & 1)
				continue;
			struct bdev *x;
			int rc = blk_clone(state, &x);
			if (rc)
				return rc;
			raid_fail_member(find_raid(x), i);
			v |= judge(h, x) & 1;
			blk_close(x);
		}
	if (h->err)
		return h->err;
	h->res->outcomes++;
	h->res->untouched_bad += v & 1;
	h->res->inflight_torn += v >> 1 & 1;
	h->res->inflight_mixed += v >> 2 & 1;
	h->res->unreadable += v >> 3 & 1;
	return 0;
}

int raid_hole_probe(struct bdev *d, uint64_t lba, uint32_t count, bool fail_after, uint64_t max,
                    struct raid_hole_result *res, struct bo_err *err)
{
	memset(res, 0, sizeof(*res));
	size_t ss = d->sector_size;
	if (count == 0 || lba >= d->nr_sectors || count > d->nr_sectors - lba)
		return bo_errf(err, -EINVAL,
		               "raid hole: a write of %u sectors at %llu is outside the "
		               "device (%llu sectors)",
		               count, (unsigned long long)lba, (unsigned long long)d->nr_sectors);
	if (d->nr_sectors > (256u << 20) / ss)
		return bo_errf(err, -EFBIG,
		               "raid hole: the device is over 256 MiB; use a smaller one");
	size_t len = (size_t)d->nr_sectors * ss;
	struct hole h = {lba, count, fail_after, NULL, NULL, NULL, res, 0};
	unsigned char *old = malloc(len), *nw = malloc((size_t)count * ss), *got = malloc(len);
	int rc = -ENOMEM;
	if (!old || !nw || !got)
		goto out;
	struct bo_rng rng;
	bo_rng_seed(&rng, lba * 0x9e3779b9u + count);
	for (size_t i = 0; i < len; i++)
		old[i] = (unsigned char)bo_rng_next(&rng);
	for (size_t i = 0; i < (size_t)count * ss; i++)
		nw[i] = (unsigned char)bo_rng_next(&rng);
	h.old = old;
	h.new_ = nw;
	h.got = got;
	if ((rc = blk_write(d, 0, (uint32_t)d->nr_sectors, old, 0)) || (rc = blk_flush(d))) {
		rc = bo_errf(err, rc, "raid hole: filling the device: %s", bo_errstr(&d->err, rc));
		goto out;
	}
	struct blk_inflight w = {.lba = lba, .count = count, .data = nw};
	int64_t n = blk_cut_foreach(d, &w, max, visit, &h, &res->complete);
	rc = n < 0 ? bo_errf(err, (int)n, "raid hole: %s", bo_errstr(&d->err, (int)n)) : 0;
out:
	free(old);
	free(nw);
	free(got);
	return rc;
}
