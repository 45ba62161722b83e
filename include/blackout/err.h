/* SPDX-License-Identifier: GPL-2.0-or-later */
/* err.h — human-readable detail for a negative errno.
 *
 * Functions return 0 or -errno; the sentence that tells the user what went wrong
 * (which inode, which byte of the spec, which record of the log) goes into a
 * struct bo_err the caller owns. A NULL struct bo_err * is always accepted. */
#ifndef BLACKOUT_ERR_H
#define BLACKOUT_ERR_H

struct bo_err {
	char msg[512];
};

/* Formats into err (if non-NULL) and returns `rc` (a negative errno) so a caller
 * can write: return bo_errf(err, -EINVAL, "bad thing at %u", pos); */
int bo_errf(struct bo_err *err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The detail if one was set, otherwise strerror(-rc). */
const char *bo_errstr(const struct bo_err *err, int rc);

#endif
