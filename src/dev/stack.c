// SPDX-License-Identifier: GPL-2.0-or-later
/* stack.c — opening a parsed spec into a stack of bdevs (bottom up, leaves
 * optionally wrapped), finding devices in it, and counting or picking the outcomes
 * of a power cut. Parsing is spec.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"

static int open_node(const struct dev_spec *s, const struct dev_open_opts *opts, struct bdev **out,
                     struct bo_err *err)
{
	const struct dev_model *m = dev_spec_model(s);
	unsigned n = dev_spec_nlowers(s);
	struct bdev **lowers = NULL;
	int rc = 0;
	*out = NULL;
	if (n) {
		lowers = calloc(n, sizeof(*lowers));
		if (!lowers)
			return -ENOMEM;
	}
	unsigned opened = 0;
	for (; opened < n; opened++) {
		rc = open_node(dev_spec_lower(s, opened), opts, &lowers[opened], err);
		if (rc)
			goto fail;
	}
	rc = m->open(dev_spec_args(s), lowers, n, out, err);
	if (rc)
		goto fail;
	free(lowers);
	if (m->max_lowers == 0 && opts && opts->wrap_leaf) {
		struct bdev *w = NULL;
		rc = opts->wrap_leaf(opts->ctx, *out, &w, err);
		if (rc) {
			blk_close(*out);
			*out = NULL;
			return rc;
		}
		*out = w;
	}
	return 0;
fail:
	for (unsigned i = 0; i < opened; i++)
		blk_close(lowers[i]);
	free(lowers);
	return rc;
}

int dev_stack_open(const struct dev_spec *s, const struct dev_open_opts *opts, struct bdev **out,
                   struct bo_err *err)
{
	return open_node(s, opts, out, err);
}

int dev_stack_open_text(const char *text, const struct dev_open_opts *opts, struct bdev **out,
                        struct bo_err *err)
{
	struct dev_spec *s;
	*out = NULL;
	int rc = dev_spec_parse(text, &s, err);
	if (rc)
		return rc;
	rc = dev_stack_open(s, opts, out, err);
	dev_spec_free(s);
	return rc;
}

static struct bdev *find(struct bdev *d, const char *name, unsigned *n, unsigned depth)
{
	if (!d || depth > 64)
		return NULL;
	if (strcmp(d->name, name) == 0 && (*n)-- == 0)
		return d;
	for (unsigned i = 0;; i++) {
		struct bdev *l = blk_lower(d, i);
		if (!l)
			return NULL;
		struct bdev *f = find(l, name, n, depth + 1);
		if (f)
			return f;
	}
}

struct bdev *dev_stack_find(struct bdev *top, const char *name, unsigned n)
{
	return find(top, name, &n, 0);
}

bool dev_has_cap(const struct bdev *d, enum dev_cap cap)
{
	if (!d)
		return false;
	switch (cap) {
	case DEV_CAP_FAULT_RULES: return d->ops->rule_arm && d->ops->rule_disarm;
	case DEV_CAP_MEMBERS: return d->ops->members && d->ops->member_fail;
	}
	return false;
}

static struct bdev *find_cap(struct bdev *d, enum dev_cap cap, unsigned *n, unsigned depth)
{
	if (!d || depth > 64)
		return NULL;
	if (dev_has_cap(d, cap) && (*n)-- == 0)
		return d;
	for (unsigned i = 0;; i++) {
		struct bdev *l = blk_lower(d, i);
		if (!l)
			return NULL;
		struct bdev *f = find_cap(l, cap, n, depth + 1);
		if (f)
			return f;
	}
}

struct bdev *dev_stack_find_cap(struct bdev *top, enum dev_cap cap, unsigned n)
{
	return find_cap(top, cap, &n, 0);
}

/* ---- outcome spaces ------------------------------------------------------------
 * Both choosers work online, so neither is bounded by BLK_CHOICES_MAX: counting
 * answers 0 and multiplies the radices; outcome k is spelled in mixed radix with
 * the first decision least significant, one digit per decision as it is asked. */

struct count_chooser {
	struct blk_chooser base;
	struct dev_cut_space *out;
};

static uint64_t count_choose(struct blk_chooser *c, uint64_t n, const char *what)
{
	(void)what;
	struct dev_cut_space *o = ((struct count_chooser *)c)->out;
	o->decisions++;
	o->log2 += log2((double)n);
	if (o->outcomes != UINT64_MAX)
		o->outcomes = n > UINT64_MAX / o->outcomes ? UINT64_MAX : o->outcomes * n;
	return 0;
}

int dev_cut_space(struct bdev *d, const struct blk_inflight *inflight, struct dev_cut_space *out)
{
	*out = (struct dev_cut_space){.outcomes = 1};
	struct count_chooser ch = {.base.choose = count_choose, .out = out};
	struct bdev *c;
	int rc = blk_clone(d, &c);
	if (rc)
		return rc;
	rc = blk_power_cut(c, &ch.base, inflight);
	blk_close(c);
	return rc;
}

struct digit_chooser {
	struct blk_chooser base;
	uint64_t rest;
};

static uint64_t digit_choose(struct blk_chooser *c, uint64_t n, const char *what)
{
	(void)what;
	struct digit_chooser *k = (struct digit_chooser *)c;
	uint64_t v = k->rest % n;
	k->rest /= n;
	return v;
}

int dev_cut_outcome(struct bdev *d, const struct blk_inflight *inflight, uint64_t k,
                    struct bdev **out)
{
	*out = NULL;
	struct digit_chooser ch = {.base.choose = digit_choose, .rest = k};
	struct bdev *c;
	int rc = blk_clone(d, &c);
	if (rc)
		return rc;
	rc = blk_power_cut(c, &ch.base, inflight);
	if (rc == 0 && ch.rest)
		rc = bo_errf(&d->err, -ERANGE, "%s: outcome %llu is past the last one", d->name,
		             (unsigned long long)k);
	if (rc == 0)
		rc = blk_power_restore(c);
	if (rc) {
		blk_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

int dev_cut_sample(struct bdev *d, const struct blk_inflight *inflight, uint64_t seed,
                   struct bdev **out)
{
	*out = NULL;
	struct blk_chooser_random ch;
	blk_chooser_random_init(&ch, seed);
	struct bdev *c;
	int rc = blk_clone(d, &c);
	if (rc)
		return rc;
	rc = blk_power_cut(c, &ch.base, inflight);
	if (rc == 0)
		rc = blk_power_restore(c);
	if (rc) {
		blk_close(c);
		return rc;
	}
	*out = c;
	return 0;
}
