// SPDX-License-Identifier: GPL-2.0-or-later
/* spec_edit.c — editing a parsed spec: one parameter set (checked as the parser
 * checks it), a lower reached to edit, every medium of one size grown. What the
 * matrix uses to derive a guest's stack from a row's without touching spec text. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "blackout/dev.h"
#include "dev/dev_int.h"

struct dev_spec *dev_spec_lower_edit(struct dev_spec *s, unsigned i)
{
	return s->nlowers && i < s->nlowers * s->repeat ? s->lowers[i % s->nlowers] : NULL;
}

int dev_spec_set(struct dev_spec *s, const char *name, const char *value, struct bo_err *err)
{
	int i;
	char *v;
	int rc = dev_spec_value(s->model, name, value, &i, &v, err);
	if (rc)
		return rc;
	char *was = s->args.kv[i].val;
	s->args.kv[i].val = v;
	if (s->model->check && (rc = s->model->check(&s->args, err))) {
		s->args.kv[i].val = was;
		free(v);
		return rc;
	}
	free(was);
	if (!s->args.kv[i].given) { /* printed after the parameters written */
		uint32_t last = 0;
		for (unsigned k = 0; k < s->args.n; k++)
			if (s->args.kv[k].given && s->args.kv[k].at >= last)
				last = s->args.kv[k].at + 1;
		s->args.kv[i].at = last;
	}
	s->args.kv[i].given = true;
	return 0;
}

int dev_spec_resize_media(struct dev_spec *s, uint64_t from, uint64_t to, struct bo_err *err)
{
	for (unsigned i = 0; i < s->nlowers; i++) {
		int rc = dev_spec_resize_media(s->lowers[i], from, to, err);
		if (rc)
			return rc;
	}
	uint64_t size;
	if (s->nlowers || !dev_arg_str(&s->args, "size") ||
	    dev_arg_size(&s->args, "size", &size, NULL) || size != from)
		return 0;
	char v[32];
	snprintf(v, sizeof(v), "%" PRIu64, to);
	return dev_spec_set(s, "size", v, err);
}
