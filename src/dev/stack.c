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

/* ---- outcome spaces ------------------------------------------------------------ */

int dev_cut_space(struct bdev *d, const struct blk_inflight *inflight, struct dev_cut_space *out)
{
	struct blk_chooser_list *l = malloc(sizeof(*l));
	if (!l)
		return -ENOMEM;
	blk_chooser_list_init(l, NULL, 0);
	struct bdev *c;
	int rc = blk_clone(d, &c);
	if (rc == 0) {
		rc = blk_power_cut(c, &l->base, inflight);
		blk_close(c);
	}
	if (rc == 0 && l->overflow)
		rc = bo_errf(&d->err, -E2BIG, "%s: a power cut asked more than %d decisions",
		             d->name, BLK_CHOICES_MAX);
	if (rc == 0) {
		out->decisions = l->pos;
		out->outcomes = 1;
		out->log2 = 0;
		for (uint32_t i = 0; i < l->pos; i++) {
			out->log2 += log2((double)l->n[i]);
			if (out->outcomes != UINT64_MAX)
				out->outcomes = l->n[i] > UINT64_MAX / out->outcomes
				                    ? UINT64_MAX
				                    : out->outcomes * l->n[i];
		}
	}
	free(l);
	return rc;
}

int dev_cut_outcome(struct bdev *d, const struct blk_inflight *inflight, uint64_t k,
                    struct bdev **out)
{
	*out = NULL;
	struct blk_chooser_list *l = malloc(sizeof(*l));
	if (!l)
		return -ENOMEM;
	/* the radices come from the all-zero path, then k is spelled in them */
	blk_chooser_list_init(l, NULL, 0);
	struct bdev *c;
	int rc = blk_clone(d, &c);
	if (rc == 0) {
		rc = blk_power_cut(c, &l->base, inflight);
		blk_close(c);
	}
	if (rc == 0 && l->overflow)
		rc = -E2BIG;
	if (rc) {
		free(l);
		return rc;
	}
	uint32_t nd = l->pos;
	uint64_t rest = k;
	for (uint32_t i = 0; i < nd; i++) {
		l->v[i] = rest % l->n[i];
		rest /= l->n[i];
	}
	if (rest) {
		free(l);
		return bo_errf(&d->err, -ERANGE, "%s: outcome %llu is past the last one", d->name,
		               (unsigned long long)k);
	}
	l->len = nd;
	l->pos = 0;
	rc = blk_clone(d, &c);
	if (rc == 0)
		rc = blk_power_cut(c, &l->base, inflight);
	if (rc == 0)
		rc = blk_power_restore(c);
	free(l);
	if (rc) {
		blk_close(c);
		return rc;
	}
	*out = c;
	return 0;
}
