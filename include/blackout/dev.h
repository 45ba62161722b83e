/* dev.h — stackable device models and the stack-spec language that composes them.
 *
 * A model is a bdev over zero (media) or more lower bdevs. Each model is described
 * once by a struct dev_model in the registry (src/dev/registry.c): its name, its
 * parameters with defaults and help, how many lower devices it takes, and how to
 * open it. The spec parser, `stack describe`, the nbd plugin and the crash explorer
 * all work from that table, so a new model is one table entry. */
#ifndef BLACKOUT_DEV_H
#define BLACKOUT_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/err.h"

struct dev_param {
	const char *name; /* "size", "flush" */
	const char *def;  /* default as text; NULL = required */
	const char *help; /* one line: what it models; enums list their values */
};

/* Parameter values as given in a spec, defaults filled in. */
struct dev_args;
const char *dev_arg_str(const struct dev_args *a, const char *name);
int dev_arg_u64(const struct dev_args *a, const char *name, uint64_t *out, struct bo_err *err);
int dev_arg_size(const struct dev_args *a, const char *name, uint64_t *out,
                 struct bo_err *err); /* "64k", "32M" */
int dev_arg_bool(const struct dev_args *a, const char *name, bool *out, struct bo_err *err);
/* index of the value in the NULL-terminated list, or -EINVAL naming the choices */
int dev_arg_enum(const struct dev_args *a, const char *name, const char *const *values, int *out,
                 struct bo_err *err);

struct dev_model {
	const char *name;
	const char *summary;             /* what hardware behaviour this models */
	const struct dev_param *params;  /* terminated by {NULL} */
	unsigned min_lowers, max_lowers; /* 0,0 for media */
	int (*open)(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
	            struct bdev **out, struct bo_err *err);
};

/* The registry: every model, NULL-terminated. */
extern const struct dev_model *const dev_models[];
const struct dev_model *dev_model_find(const char *name);

/* ---- stack specs -------------------------------------------------------------
 * Grammar and examples: docs/stack-spec.md. Parse errors point at the offending
 * character (err holds the spec, a caret line and the reason). */
struct dev_spec;
int dev_spec_parse(const char *text, struct dev_spec **out, struct bo_err *err);
void dev_spec_free(struct dev_spec *s);
/* Canonical text: every parameter spelled out, parseable back to an equal spec.
 * Returns the length written (like snprintf) or -errno. */
int dev_spec_format(const struct dev_spec *s, char *buf, size_t len);

/* Opening a stack. `wrap_leaf`, when set, is called for each medium the stack
 * bottoms out on (mem, file) and may replace it (the crash explorer puts a
 * copy-on-write overlay over each so every crash state is cheap). */
struct dev_open_opts {
	int (*wrap_leaf)(void *ctx, struct bdev *leaf, struct bdev **out, struct bo_err *err);
	void *ctx;
};
int dev_stack_open(const struct dev_spec *s, const struct dev_open_opts *opts, struct bdev **out,
                   struct bo_err *err);
/* Parse + open in one call. */
int dev_stack_open_text(const char *text, const struct dev_open_opts *opts, struct bdev **out,
                        struct bo_err *err);

/* Depth-first search of a stack for the n-th device whose name is `name`. */
struct bdev *dev_stack_find(struct bdev *top, const char *name, unsigned n);

#endif
