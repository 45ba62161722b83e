/* internal.h — what the files of src/dev/ share with each other and nothing else:
 * the registry's model descriptions and small helpers. */
#ifndef BLACKOUT_DEV_INTERNAL_H
#define BLACKOUT_DEV_INTERNAL_H

#include "blackout/dev.h"

/* The canonical text of a spec in a malloc'd string, or NULL on ENOMEM. */
char *dev_spec_format_alloc(const struct dev_spec *s);

#endif
