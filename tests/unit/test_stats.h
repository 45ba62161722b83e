/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_stats.h — one statistic of a device by name (blk_stats), for unit tests that
 * check what a model counted. */
#ifndef TEST_STATS_H
#define TEST_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "blackout/blk.h"

struct tstat {
	const char *key;
	uint64_t v;
	bool found;
};

static inline void tstat_emit(void *ctx, const char *key, uint64_t v)
{
	struct tstat *s = ctx;
	if (strcmp(s->key, key) == 0) {
		s->v = v;
		s->found = true;
	}
}

/* The statistic's value; UINT64_MAX when the device does not report it. */
static inline uint64_t tstat(struct bdev *d, const char *key)
{
	struct tstat s = {key, 0, false};
	blk_stats(d, tstat_emit, &s);
	return s.found ? s.v : UINT64_MAX;
}

#endif
