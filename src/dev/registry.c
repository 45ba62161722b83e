// SPDX-License-Identifier: GPL-2.0-or-later
/* registry.c — the table of every device model. A new model is one `extern` line
 * and one table line here; the parser, `stack describe`, the nbd plugin and the
 * crash explorer all find it through this table. */
#include <string.h>

#include "blackout/dev.h"

/* media (media.c) */
extern const struct dev_model dev_model_mem;
extern const struct dev_model dev_model_file;
/* models of the dev helper (concat.c, cache.c, disk.c, fault.c) */
extern const struct dev_model dev_model_concat;
extern const struct dev_model dev_model_cache;
extern const struct dev_model dev_model_disk;
extern const struct dev_model dev_model_fault;
/* dm-integrity (integrity.c) */
extern const struct dev_model dev_model_integrity;
/* flash (flash_dev.c) */
extern const struct dev_model dev_model_flash;
/* md-style RAID (raid.c) */
extern const struct dev_model dev_model_raid0;
extern const struct dev_model dev_model_raid1;
extern const struct dev_model dev_model_raid4;
extern const struct dev_model dev_model_raid5;
extern const struct dev_model dev_model_raid6;

/* one line per model so that adding one is a one-line merge */
/* clang-format off */
const struct dev_model *const dev_models[] = {
	&dev_model_mem,
	&dev_model_file,
	&dev_model_concat,
	&dev_model_cache,
	&dev_model_disk,
	&dev_model_fault,
	&dev_model_integrity,
	&dev_model_flash,
	&dev_model_raid0,
	&dev_model_raid1,
	&dev_model_raid4,
	&dev_model_raid5,
	&dev_model_raid6,
	NULL,
};
/* clang-format on */

const struct dev_model *dev_model_find(const char *name)
{
	for (int i = 0; dev_models[i]; i++)
		if (strcmp(dev_models[i]->name, name) == 0)
			return dev_models[i];
	return NULL;
}
