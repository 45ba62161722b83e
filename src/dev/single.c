// SPDX-License-Identifier: GPL-2.0-or-later
/* single.c — the ops a model standing on one lower device serves by passing the
 * request straight down (cache, disk, fault, flash): one home for the forwarding
 * and for naming the lower device's error, instead of a copy in every model. */
#include <errno.h>

#include "blackout/blk.h"
#include "dev/dev_int.h"

static struct bdev *lower_of(struct bdev *d)
{
	return ((struct dev_single *)d)->lower;
}

struct bdev *dev_single_lower(struct bdev *d, unsigned i)
{
	return i == 0 ? lower_of(d) : NULL;
}

int dev_single_power_restore(struct bdev *d)
{
	return blk_power_restore(lower_of(d));
}

int dev_single_err(struct bdev *d, int rc)
{
	return bo_errf(&d->err, rc, "%s: %s", d->name, bo_errstr(&lower_of(d)->err, rc));
}

int dev_single_flush(struct bdev *d)
{
	int rc = blk_flush(lower_of(d));
	return rc ? dev_single_err(d, rc) : 0;
}
