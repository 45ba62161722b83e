// SPDX-License-Identifier: GPL-2.0-or-later
/* test_util_grow.c — bo_grow, the one growth step of every appending array, and
 * bo_parse_file, the read-then-parse step every loader of a saved file shares. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "blackout/util.h"
#include "tap.h"

static void grows(void)
{
	size_t cap = 0;
	int *a = bo_grow(NULL, &cap, 0, sizeof(*a), 4);
	ok(a && cap == 4, "an empty array gets `first` elements (cap %zu)", cap);
	int *same = bo_grow(a, &cap, 3, sizeof(*a), 4);
	ok(same == a && cap == 4, "room left: the same array, cap unchanged");
	for (int i = 0; i < 4; i++)
		a[i] = i + 1;
	int *b = bo_grow(a, &cap, 4, sizeof(*b), 4);
	ok(b && cap == 8, "full: doubled (cap %zu)", cap);
	ok(b && b[0] == 1 && b[3] == 4, "the elements are kept");
	a = b ? b : a;
	b = bo_grow(a, &cap, 100, sizeof(*b), 4);
	ok(b && cap == 128 && cap > 100, "a far index: doubled until it fits (cap %zu)", cap);
	a = b ? b : a;
	size_t before = cap;
	b = bo_grow(a, &cap, SIZE_MAX / 2, sizeof(*b), 4);
	ok(!b && cap == before, "a size past SIZE_MAX: NULL, cap unchanged");
	free(a);
}

static int parse_word(const char *buf, size_t n, void *out, struct bo_err *err)
{
	if (n < 2 || memcmp(buf, "ok", 2) != 0)
		return bo_errf(err, -EINVAL, "not 'ok' at byte 0");
	*(size_t *)out = n;
	return 0;
}

static void parses(void)
{
	char path[] = "/tmp/bo-grow-XXXXXX";
	int fd = mkstemp(path);
	ok(fd >= 0 && write(fd, "ok!", 3) == 3, "a file to parse");
	close(fd);
	size_t n = 0;
	struct bo_err err = {{0}};
	ok(bo_parse_file(path, 1024, parse_word, &n, &err) == 0 && n == 3, "its bytes reach parse");
	fd = open(path, O_WRONLY | O_TRUNC);
	ok(fd >= 0 && write(fd, "no", 2) == 2, "a file parse refuses");
	close(fd);
	int rc = bo_parse_file(path, 1024, parse_word, &n, &err);
	ok(rc == -EINVAL && strstr(err.msg, path) && strstr(err.msg, "not 'ok' at byte 0"),
	   "the refusal names the file and keeps parse's words: %s", err.msg);
	unlink(path);
	rc = bo_parse_file(path, 1024, parse_word, &n, &err);
	ok(rc == -ENOENT && strstr(err.msg, path), "a missing file is named: %s", err.msg);
}

int main(void)
{
	grows();
	parses();
	return tap_done();
}
