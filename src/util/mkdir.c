// SPDX-License-Identifier: GPL-2.0-or-later
/* mkdir.c — `mkdir -p` for the commands that lay out run directories (the matrix's vm
 * and application cells, an application's staged tree). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/util.h"

int bo_mkdir_p(const char *path)
{
	char p[4096];
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	return mkdir(p, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

int bo_mkdir_parent(const char *path)
{
	char p[4096];
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	char *slash = strrchr(p, '/');
	if (!slash || slash == p)
		return 0;
	*slash = '\0';
	return bo_mkdir_p(p);
}
