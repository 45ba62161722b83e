/* SPDX-License-Identifier: GPL-2.0-or-later */
/* e2fsck.h — e2fsprogs as the outside judge: run `e2fsck -fn` on an image and decide
 * whether it found anything to fix. e2fsck can exit 0 while printing problems, so the
 * verdict is strict: clean only if it exits 0 AND every line it printed is one of the
 * lines a clean run prints (banner, "Pass N: ...", the summary line). */
#ifndef BLACKOUT_E2FSCK_H
#define BLACKOUT_E2FSCK_H

#include <stdbool.h>
#include <stddef.h>

#include "blackout/blk.h"
#include "blackout/err.h"

struct e2fsck_verdict {
	bool clean;
	int exit_code; /* e2fsck's own: 0 clean, 1/2 fixed, 4 errors left, 8 operational */
	char first_problem[256]; /* the first line that is not part of a clean run */
	char *output; /* everything it printed (malloc'd; free with e2fsck_verdict_free) */
};

/* `args` are extra e2fsck arguments before the image (NULL-terminated; NULL = {"-fn"}). */
int e2fsck_run(const char *image_path, const char *const *args, struct e2fsck_verdict *v,
               struct bo_err *err);
/* Copies a device to a temporary image file first (for devices that are not files). */
int e2fsck_run_bdev(struct bdev *d, const char *const *args, struct e2fsck_verdict *v,
                    struct bo_err *err);
void e2fsck_verdict_free(struct e2fsck_verdict *v);
/* Whether one line of e2fsck -fn output belongs to a clean run. */
bool e2fsck_line_is_clean(const char *line);

#endif
