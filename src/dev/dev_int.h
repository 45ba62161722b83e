/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dev_int.h — what the files of src/dev/ share with each other and nothing else:
 * the registry's model descriptions and small helpers. */
#ifndef BLACKOUT_DEV_INT_H
#define BLACKOUT_DEV_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/dev.h"

/* A parsed spec (spec.c parses it, spec_edit.c edits it, spec_describe.c prints it). */
struct dev_kv {
	char *val;   /* value in canonical form, default filled in */
	bool given;  /* written in the spec */
	uint32_t at; /* column of the value in the parsed text, for errors */
};

struct dev_args {
	const struct dev_model *model;
	unsigned n; /* number of model parameters */
	struct dev_kv *kv;
};

struct dev_spec {
	const struct dev_model *model;
	struct dev_args args;
	unsigned nlowers;         /* written in the spec */
	struct dev_spec **lowers; /* the written lowers */
	unsigned repeat;          /* the list of lowers is repeated this many times */
	uint64_t ndev;            /* devices this layer opens, itself included, after repeats */
	uint64_t ram;             /* bytes of its `ram` parameters and its lowers', after repeats */
};

/* Parameter `name` of model m: its index and `value` checked and made canonical as the
 * parser would take it (*out malloc'd); -EINVAL naming what is wrong. */
int dev_spec_value(const struct dev_model *m, const char *name, const char *value, int *index,
                   char **out, struct bo_err *err);

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
