/* SPDX-License-Identifier: GPL-2.0-or-later */
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
#include <stdio.h>

#include "blackout/blk.h"
#include "blackout/err.h"

/* How the spec parser checks (and canonicalises) a parameter's value, so a bad
 * value is reported with a caret under it rather than later by the model. */
enum dev_ptype {
	DEV_PT_STR = 0, /* any text (paths, rule lists); quoted in specs when needed */
	DEV_PT_SIZE,    /* bo_parse_size: "4096", "64k", "32M"; printed as bo_format_size */
	DEV_PT_U64,     /* decimal integer */
	DEV_PT_BOOL,    /* true/false/yes/no/on/off/1/0; printed as true|false */
	DEV_PT_ENUM,    /* one of `values` */
};

struct dev_param {
	const char *name;          /* "size", "flush" */
	const char *def;           /* default as text; NULL = required */
	const char *help;          /* one line: what it models; enums list their values */
	enum dev_ptype type;       /* optional: DEV_PT_STR when left out */
	const char *const *values; /* DEV_PT_ENUM: NULL-terminated list */
	uint64_t max;              /* DEV_PT_SIZE, DEV_PT_U64: largest value accepted; 0: none */
	/* DEV_PT_SIZE: bytes the model may hold in this process's memory (a RAM
	 * medium, a cache), counted towards DEV_SPEC_MAX_RAM: always, or only when
	 * the layer has no lower device (a model that then makes its own medium) */
	enum { DEV_RAM_NO = 0, DEV_RAM_ALWAYS, DEV_RAM_IF_LEAF } ram;
};

/* Limits on what a spec may open, checked by the parser after `x N` repeats
 * expand (a short spec with nested repeats would otherwise open millions of
 * devices): devices in the expanded stack, and the sum of its `ram` parameters.
 * Each model's own maximum is in its parameter table and docs/models/. */
#define DEV_SPEC_MAX_DEVICES 1024
#define DEV_SPEC_MAX_RAM     (16ull << 30)

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

/* open(): on success the new device owns `lowers` (its close closes them); on
 * failure it has not taken them and the caller closes them. */
struct dev_model {
	const char *name;
	const char *summary;             /* what hardware behaviour this models */
	const struct dev_param *params;  /* terminated by {NULL} */
	unsigned min_lowers, max_lowers; /* 0,0 for media */
	int (*open)(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
	            struct bdev **out, struct bo_err *err);
	/* Optional: the parameters checked together (a size the model cannot hold, a
	 * value valid alone but not with another), -EINVAL naming what is wrong. The
	 * parser runs it, so `stack describe` and `format` refuse what open would; open
	 * runs the same check. */
	int (*check)(const struct dev_args *a, struct bo_err *err);
};

/* The model these arguments were parsed for. */
const struct dev_model *dev_args_model(const struct dev_args *a);

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
/* The text as a person writes it: only the parameters written (or set), values
 * canonical; parses back to an equal spec. Same return as dev_spec_format. */
int dev_spec_format_given(const struct dev_spec *s, char *buf, size_t len);
/* What stands below the top layer, as dev_spec_format_given writes it after " > "
 * ("[A ; B]", "[A] x4" or the one lower); "" for a medium. */
int dev_spec_format_lowers(const struct dev_spec *s, char *buf, size_t len);
/* Same model, same parameter values, same lowers (after expanding `x N`). */
bool dev_spec_equal(const struct dev_spec *a, const struct dev_spec *b);

/* Walking a parsed spec (top layer first). */
const struct dev_model *dev_spec_model(const struct dev_spec *s);
const struct dev_args *dev_spec_args(const struct dev_spec *s);
unsigned dev_spec_nlowers(const struct dev_spec *s);                         /* after `x N` */
const struct dev_spec *dev_spec_lower(const struct dev_spec *s, unsigned i); /* NULL past end */
/* Whether parameter `name` was written in the spec (false: its default applies). */
bool dev_spec_given(const struct dev_spec *s, const char *name);

/* Editing a parsed spec. A written lower stands for each of its `x N` repeats, so
 * editing lower i edits every copy of it. dev_spec_set checks the value as the
 * parser does (its type, its maximum, the model's own rule) and marks it given.
 * Limits on the whole stack (devices, RAM) are checked when a spec is parsed:
 * format an edited spec and parse it again before opening it. */
struct dev_spec *dev_spec_lower_edit(struct dev_spec *s, unsigned i);
int dev_spec_set(struct dev_spec *s, const char *name, const char *value, struct bo_err *err);
/* Every medium (a layer with nothing below it and a `size`) whose size is `from`
 * bytes gets `to`: the same stack, grown (a guest's filesystem needs room). */
int dev_spec_resize_media(struct dev_spec *s, uint64_t from, uint64_t to, struct bo_err *err);

/* `blackout stack describe`: every layer, every parameter with its value, its
 * default and what it models. */
int dev_spec_describe(const struct dev_spec *s, FILE *out);

/* Opening a stack. `wrap_leaf`, when set, is called for each medium the stack
 * bottoms out on (mem, file) and may replace it (the crash explorer puts a
 * copy-on-write overlay over each so every crash state is cheap). */
struct dev_open_opts {
	int (*wrap_leaf)(void *ctx, struct bdev *leaf, struct bdev **out, struct bo_err *err);
	void *ctx;
};
int dev_stack_open(const struct dev_spec *s, const struct dev_open_opts *opts, struct bdev **out,
                   struct bo_err *err);
/* A ready-made wrap_leaf: a copy-on-write overlay over each medium. The overlays
 * do not own their media, so the set keeps them: close the stack first, then
 * dev_cow_leaves_close(). Zero-initialise the set; pass it as ctx. */
struct dev_cow_leaves {
	struct bdev **leaf;
	unsigned n, cap;
};
int dev_wrap_cow(void *ctx, struct bdev *leaf, struct bdev **out, struct bo_err *err);
void dev_cow_leaves_close(struct dev_cow_leaves *l);
/* Parse + open in one call. */
int dev_stack_open_text(const char *text, const struct dev_open_opts *opts, struct bdev **out,
                        struct bo_err *err);

/* Depth-first search of a stack for the n-th device whose name is `name`. */
struct bdev *dev_stack_find(struct bdev *top, const char *name, unsigned n);

/* What a layer can do, asked of its ops (blk.h), so that code above finds "the
 * layer that takes fault rules" or "the RAID" whatever it is called. */
enum dev_cap {
	DEV_CAP_FAULT_RULES, /* rule_arm, rule_disarm: dev_fault_arm/disarm work on it */
	DEV_CAP_MEMBERS,     /* members, member_fail: raid_fail_member works on it */
};
bool dev_has_cap(const struct bdev *d, enum dev_cap cap);
/* Depth-first (pre-order) search for the n-th device with `cap`, or NULL. */
struct bdev *dev_stack_find_cap(struct bdev *top, enum dev_cap cap, unsigned n);

/* ---- outcome spaces of a power cut -----------------------------------------
 * The decisions a cut of `d` (with `inflight`, or NULL) asks for along the path of
 * all-zero answers: their number and the product of their radices (saturating at
 * UINT64_MAX; *log2 is exact-ish either way). The product is the exact number of
 * outcomes when every decision's radix does not depend on earlier answers, which
 * holds for mem, file, cow, concat, cache, disk and fault each on its own
 * (documented per model). It does not hold for a volatile model below another
 * (cache > cache, or a cache over a RAID of cached disks): what the upper one
 * lands becomes dirty in the lower one (or evicts from it), which then asks more
 * or fewer decisions than on the all-zero path, so the count is only an estimate
 * there; blk_cut_foreach still visits every outcome, and the crash explorer does
 * not call a run exhaustive when a walk met its quota unfinished. Neither call is
 * limited to BLK_CHOICES_MAX decisions. */
struct dev_cut_space {
	uint32_t decisions;
	uint64_t outcomes; /* UINT64_MAX when it does not fit */
	double log2;       /* log2 of the number of outcomes */
};
int dev_cut_space(struct bdev *d, const struct blk_inflight *inflight, struct dev_cut_space *out);
/* A clone of d cut with outcome number k (mixed radix over the decisions, the first
 * decision least significant: decision i gets (k / (n_0 ... n_{i-1})) % n_i) and
 * powered back on. k >= outcomes gives -ERANGE. With more than 64 binary
 * decisions, k reaches only those whose later decisions are all 0. */
int dev_cut_outcome(struct bdev *d, const struct blk_inflight *inflight, uint64_t k,
                    struct bdev **out);
/* A clone of d cut with seeded random decisions and powered back on: the same seed
 * gives the same outcome. */
int dev_cut_sample(struct bdev *d, const struct blk_inflight *inflight, uint64_t seed,
                   struct bdev **out);

/* ---- models' run-time controls ---------------------------------------------- */

/* Arms a fault rule on a `fault` device (rule grammar: docs/models/fault.md), e.g.
 * "write-error lba=100-199 after=10 errno=EIO sticky". Returns the rule's id (>= 0)
 * or -errno with the reason in err. */
int dev_fault_arm(struct bdev *fault, const char *rule, struct bo_err *err);
/* Disarms rule `id`; -ENOENT if there is no such rule. */
int dev_fault_disarm(struct bdev *fault, int id);
/* How many times rule `id` fired so far; -ENOENT if there is no such rule. */
int dev_fault_fired(struct bdev *fault, int id, uint64_t *count);

/* ---- the black-box probe ---------------------------------------------------
 * diskchecker-style: only writes, flushes, FUA writes and power cuts (through
 * blk_* and blk_cut_foreach), never the model's parameters. */
struct dev_probe_result {
	bool volatile_cache; /* a completed, unflushed write can be lost at a cut */
	bool honors_flush;   /* a write completed before a completed flush always survives */
	bool honors_fua;     /* a completed FUA write always survives */
	bool tears_writes;   /* an interrupted multi-sector write can persist partly */
	bool tears_sectors;  /* an interrupted write can leave a sector half old, half new */
	/* ... or a sector that reads back as a media error (-EIO): counted as torn too.
	 * Seen or not in the outcomes walked before the tearing verdicts settled. */
	bool unreadable_sectors;
	/* Collateral damage (as flashbench finds erase blocks): a write interrupted by a
	 * cut destroyed flushed sectors it never addressed. collateral_bytes is the
	 * erase-block size inferred from where the damage stops (0: none seen);
	 * collateral_at_least: the damage reached the farthest sector tried, so the
	 * block is at least that large. Not measured (false) if flush is not honoured. */
	bool collateral;
	uint64_t collateral_bytes;
	bool collateral_at_least;
	/* What the damage looked like, and so which mechanism it names:
	 *  ERASE_BLOCK: a run of sectors around the write (flash rewriting a block);
	 *   collateral_bytes is the block as above;
	 *  TORN_SECTOR: such a run no larger than 4 KiB (a physical sector under
	 *   smaller logical ones); collateral_bytes is its size;
	 *  STRIPE: sectors away from the write, its neighbours intact (a RAID write
	 *   hole: parity rebuilt a missing member's chunk wrongly); collateral_bytes
	 *   is the largest power of two dividing every distance from the write to a
	 *   damaged sector (the chunk, or a multiple of it). */
	enum {
		DEV_COLLATERAL_NONE,
		DEV_COLLATERAL_ERASE_BLOCK,
		DEV_COLLATERAL_TORN_SECTOR,
		DEV_COLLATERAL_STRIPE
	} collateral_kind;
	uint64_t outcomes; /* cut outcomes examined */
	/* Every verdict is settled: each "no" over every outcome of its experiment, each
	 * "yes" by an outcome that shows it (an experiment stops once everything it
	 * measures has been shown). False: the outcome bound cut a walk short, so a
	 * "no" may be wrong. */
	bool exhaustive;
};
/* Probes a clonable device (its own state is not changed: every experiment runs
 * on clones). */
int dev_probe_bdev(struct bdev *d, struct dev_probe_result *r, struct bo_err *err);
/* Opens the stack over copy-on-write overlays (so file-backed stacks are not
 * written) and probes it. */
int dev_probe(const struct dev_spec *s, struct dev_probe_result *r, struct bo_err *err);

#endif
