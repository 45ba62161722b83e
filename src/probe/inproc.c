// SPDX-License-Identifier: GPL-2.0-or-later
/* inproc.c — the probe on a blackout stack spec in this process: the same write stream
 * and verify as on hardware, the pull made by the model (seeded decisions) at the write
 * in flight after a chosen number of operations. Proves the probe on devices whose
 * behaviour is known. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/probe.h"

struct membuf {
	char *p;
	size_t n, cap;
};

static int mem_emit(void *ctx, const char *line, size_t len)
{
	struct membuf *m = ctx;
	if (m->n + len > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 4096;
		while (cap < m->n + len)
			cap *= 2;
		char *n = realloc(m->p, cap);
		if (!n)
			return -ENOMEM;
		m->p = n;
		m->cap = cap;
	}
	memcpy(m->p + m->n, line, len);
	m->n += len;
	return 0;
}

static int settle(void *ctx)
{
	/* idle time after the pattern, as the hardware procedure waits */
	return blk_settle(ctx);
}

int probe_inproc(const char *spec, const struct probe_inproc_opts *o, struct probe_verdict *v,
                 struct bo_err *err)
{
	struct dev_cow_leaves leaves = {0};
	struct dev_open_opts oo = {.wrap_leaf = dev_wrap_cow, .ctx = &leaves};
	struct bdev *d;
	int rc = dev_stack_open_text(spec, &oo, &d, err);
	if (rc) {
		dev_cow_leaves_close(&leaves);
		return rc;
	}
	uint64_t region = o->region_bytes ? o->region_bytes : blk_size_bytes(d);
	if (region > blk_size_bytes(d))
		region = blk_size_bytes(d);
	struct probe_stream_opts so = {.run = 0x5eed000000000000ull ^ o->seed,
	                               .seed = o->seed,
	                               .first_block = 0,
	                               .blocks = region / PROBE_BLOCK,
	                               .max_write = PROBE_MAX_WRITE,
	                               .after_base = settle,
	                               .ctx = d,
	                               .inflight_write = o->write ? o->write : 1};
	struct membuf m = {0};
	struct probe_sink sink = {.emit = mem_emit, .ctx = &m};
	struct probe_stream st;
	rc = probe_stream_run(d, &so, &sink, &st, err);
	if (rc == 0) {
		struct blk_chooser_random ch;
		blk_chooser_random_init(&ch, o->seed);
		rc = blk_power_cut(d, &ch.base, st.inflight.count ? &st.inflight : NULL);
		if (rc == 0)
			rc = blk_power_restore(d);
		if (rc)
			rc = bo_errf(err, rc, "probe: the model's power cut: %s",
			             bo_errstr(&d->err, rc));
	}
	struct probe_log l;
	if (rc == 0)
		rc = probe_log_parse(m.p, m.n, &l, err);
	if (rc == 0) {
		rc = probe_verify(d, &l, v, err);
		probe_log_free(&l);
	}
	probe_stream_free(&st);
	free(m.p);
	blk_close(d);
	dev_cow_leaves_close(&leaves);
	return rc;
}

/* ---- timing on a model: the cost of a write is the NAND work it caused ---- */
static void sum_nand(void *ctx, const char *key, uint64_t v)
{
	double *c = ctx;
	if (!strcmp(key, "nand_programs"))
		*c += (double)v;
	else if (!strcmp(key, "nand_erases"))
		*c += 10.0 * (double)v;
}

static double nand_work(struct bdev *d)
{
	double c = 0;
	blk_stats(d, sum_nand, &c);
	for (unsigned i = 0; blk_lower(d, i); i++)
		c += nand_work(blk_lower(d, i));
	return c;
}

static int model_cost(void *ctx, struct bdev *d, uint64_t off, size_t len, const void *buf,
                      double *cost)
{
	(void)ctx;
	double before = nand_work(d);
	int rc = blk_pwrite(d, off, len, buf, BLK_FUA);
	*cost = nand_work(d) - before;
	return rc;
}

int probe_timing_spec(const char *spec, const struct probe_timing_opts *o, struct probe_timing *t,
                      struct bo_err *err)
{
	struct dev_cow_leaves leaves = {0};
	struct dev_open_opts oo = {.wrap_leaf = dev_wrap_cow, .ctx = &leaves};
	struct bdev *d;
	int rc = dev_stack_open_text(spec, &oo, &d, err);
	if (rc == 0) {
		struct probe_timing_opts mo = *o;
		mo.write_cost = model_cost;
		rc = probe_timing_run(d, &mo, t, err);
		blk_close(d);
	}
	dev_cow_leaves_close(&leaves);
	return rc;
}
