// SPDX-License-Identifier: GPL-2.0-or-later
/* stream.c — the probe's write phase: the pattern over the region, flushed, then a seeded
 * stream of writes (some FUA) and flushes, each reported to the sink only once the
 * device has acknowledged it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/probe.h"
#include "blackout/util.h"

#define BASE_CHUNK 256u /* blocks per pattern write: 1 MiB */

static void fill(void *buf, uint64_t run, uint64_t block, uint64_t n, uint64_t gen)
{
	for (uint64_t u = 0; u < n * PROBE_UNITS_PER_BLOCK; u++)
		probe_pattern_fill((unsigned char *)buf + u * PROBE_UNIT, run,
		                   block * PROBE_UNITS_PER_BLOCK + u, gen);
}

static int emit(const struct probe_sink *s, const struct probe_op *op, struct bo_err *err)
{
	char line[128];
	int n = probe_log_line(line, sizeof(line), op);
	int rc = s->emit(s->ctx, line, (size_t)n);
	return rc ? bo_errf(err, rc, "probe: the listener refused a line: %s", bo_errstr(err, rc))
	          : 0;
}

static int io(struct bdev *d, uint64_t block, uint64_t n, const void *buf, unsigned flags)
{
	uint32_t per = PROBE_BLOCK / d->sector_size;
	return blk_write(d, block * per, (uint32_t)(n * per), buf, flags);
}

static int lay_base(struct bdev *d, const struct probe_stream_opts *o, const struct probe_sink *s,
                    struct probe_stream *st, struct bo_err *err)
{
	char line[160];
	int n = probe_log_header(line, sizeof(line), o->run, o->first_block * PROBE_UNITS_PER_BLOCK,
	                         o->blocks * PROBE_UNITS_PER_BLOCK);
	int rc = s->emit(s->ctx, line, (size_t)n);
	if (rc)
		return bo_errf(err, rc, "probe: the listener refused the header: %s",
		               bo_errstr(err, rc));
	for (uint64_t b = 0; b < o->blocks; b += BASE_CHUNK) {
		uint64_t k = o->blocks - b < BASE_CHUNK ? o->blocks - b : BASE_CHUNK;
		fill(st->buf, o->run, o->first_block + b, k, 1);
		rc = io(d, o->first_block + b, k, st->buf, 0);
		if (rc)
			return bo_errf(err, rc,
			               "probe: laying the pattern at byte %llu: %s: is the device "
			               "healthy and powered?",
			               (unsigned long long)((o->first_block + b) * PROBE_BLOCK),
			               bo_errstr(&d->err, rc));
	}
	rc = blk_flush(d);
	if (rc)
		return bo_errf(err, rc, "probe: flushing the pattern: %s", bo_errstr(&d->err, rc));
	if (o->after_base && (rc = o->after_base(o->ctx)) != 0)
		return bo_errf(err, rc, "probe: stopped after the pattern was laid: %s",
		               bo_errstr(&d->err, rc));
	struct probe_op op = {.gen = 1, .kind = PROBE_OP_BASE};
	return emit(s, &op, err);
}

int probe_stream_run(struct bdev *d, const struct probe_stream_opts *o, const struct probe_sink *s,
                     struct probe_stream *st, struct bo_err *err)
{
	memset(st, 0, sizeof(*st));
	if (o->blocks < 4 || o->max_write < 1 || o->max_write > 64 ||
	    o->first_block > blk_size_bytes(d) / PROBE_BLOCK ||
	    o->blocks > blk_size_bytes(d) / PROBE_BLOCK - o->first_block)
		return bo_errf(err, -EINVAL,
		               "probe: the region (%llu blocks of 4 KiB from block %llu) must hold "
		               "4 blocks or more and lie inside the device (%llu bytes)",
		               (unsigned long long)o->blocks, (unsigned long long)o->first_block,
		               (unsigned long long)blk_size_bytes(d));
	if (d->sector_size > PROBE_BLOCK || PROBE_BLOCK % d->sector_size)
		return bo_errf(err, -EINVAL, "probe: sector size %u does not divide 4096",
		               d->sector_size);
	size_t bytes = (size_t)BASE_CHUNK * PROBE_BLOCK;
	st->buf = aligned_alloc(PROBE_BLOCK, bytes);
	if (!st->buf)
		return bo_errf(err, -ENOMEM, "probe: out of memory");
	int rc = lay_base(d, o, s, st, err);
	if (rc)
		return rc;
	struct bo_rng rng;
	bo_rng_seed(&rng, o->seed);
	uint64_t gen = 1, since_flush = 0, flush_every = 1 + bo_rng_below(&rng, 8);
	for (;;) {
		gen++;
		if (o->max_ops && st->ops == o->max_ops)
			break;
		bool last = o->inflight_write && st->writes + 1 == o->inflight_write;
		struct probe_op op = {.gen = gen};
		if (since_flush >= flush_every) {
			op.kind = PROBE_OP_FLUSH;
			rc = blk_flush(d);
			since_flush = 0;
			flush_every = 1 + bo_rng_below(&rng, 8);
		} else {
			uint64_t n = 1 + bo_rng_below(&rng, o->max_write);
			if (n > o->blocks)
				n = o->blocks;
			uint64_t b = o->first_block + bo_rng_below(&rng, o->blocks - n + 1);
			op.kind = PROBE_OP_WRITE;
			op.unit = b * PROBE_UNITS_PER_BLOCK;
			op.count = n * PROBE_UNITS_PER_BLOCK;
			op.fua = bo_rng_below(&rng, 4) == 0;
			fill(st->buf, o->run, b, n, gen);
			/* the intent first: a write in flight at the pull is known by its place */
			rc = emit(s, &op, err);
			if (rc)
				return rc;
			if (last) {
				uint32_t per = PROBE_BLOCK / d->sector_size;
				st->inflight = (struct blk_inflight){.lba = b * per,
				                                     .count = (uint32_t)(n * per),
				                                     .flags = op.fua ? BLK_FUA : 0,
				                                     .data = st->buf};
				st->inflight_gen = gen;
				break;
			}
			rc = io(d, b, n, st->buf, op.fua ? BLK_FUA : 0);
			since_flush++;
		}
		if (rc) {
			/* the pull (or a device giving up): what was acknowledged is logged */
			st->stopped_by_error = true;
			st->last_error = rc;
			return 0;
		}
		st->ops++;
		if (op.kind == PROBE_OP_FLUSH)
			st->flushes++;
		else
			st->writes++, st->fua_writes += op.fua;
		op.acked = true;
		rc = emit(s, &op, err);
		if (rc)
			return rc;
	}
	return 0;
}

void probe_stream_free(struct probe_stream *st)
{
	free(st->buf);
	st->buf = NULL;
}
