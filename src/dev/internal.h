/* internal.h — what the files of src/dev/ share with each other and nothing else:
 * the registry's model descriptions and small helpers. */
#ifndef BLACKOUT_DEV_INTERNAL_H
#define BLACKOUT_DEV_INTERNAL_H

#include <stddef.h>

#include "blackout/dev.h"

/* The canonical text of a spec in a malloc'd string, or NULL on ENOMEM. */
char *dev_spec_format_alloc(const struct dev_spec *s);

/* A model over one lower device (cache, disk, fault, flash) begins its struct
 * with these two fields, so the pass-through ops of single.c serve it; each such
 * model checks the layout with DEV_SINGLE_CHECK. */
struct dev_single {
	struct bdev dev;
	struct bdev *lower;
};
#define DEV_SINGLE_CHECK(type)                                                                     \
	_Static_assert(offsetof(type, dev) == 0 &&                                                 \
	                   offsetof(type, lower) == offsetof(struct dev_single, lower),            \
	               #type " must begin with struct bdev dev, struct bdev *lower")
/* bdev_ops.lower: the one lower device */
struct bdev *dev_single_lower(struct bdev *d, unsigned i);
/* bdev_ops.power_restore for a model with no state of its own to rebuild */
int dev_single_power_restore(struct bdev *d);
/* rc, with d's error saying "<model>: <the lower device's message>" */
int dev_single_err(struct bdev *d, int rc);
/* the flush passed down, its error named as dev_single_err does */
int dev_single_flush(struct bdev *d);

#endif
