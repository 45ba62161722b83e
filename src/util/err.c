// SPDX-License-Identifier: GPL-2.0-or-later
/* err.c — formatting error detail into a caller-owned struct bo_err. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "blackout/err.h"

int bo_errf(struct bo_err *err, int rc, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return rc;
}

const char *bo_errstr(const struct bo_err *err, int rc)
{
	if (err && err->msg[0])
		return err->msg;
	return strerror(rc < 0 ? -rc : rc);
}
