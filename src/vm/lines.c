// SPDX-License-Identifier: GPL-2.0-or-later
/* lines.c — a guest's serial output cut into lines, bounded: a guest that floods or
 * never ends a line gets an error, never unbounded memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vm/vm_int.h"

int vm_lines_feed(struct vm_lines *l, const char *data, size_t n)
{
	if (n > VM_STATE_MAX || l->total > VM_STATE_MAX - n)
		return -E2BIG;
	l->total += n;
	if (l->off > 0 && l->off == l->len)
		l->off = l->len = 0;
	if (n > l->cap - l->len) {
		if (l->off) { /* reuse the room of lines already read */
			memmove(l->buf, l->buf + l->off, l->len - l->off);
			l->len -= l->off;
			l->off = 0;
		}
		size_t cap = l->cap ? l->cap : 4096;
		while (cap - l->len < n + 1)
			cap *= 2;
		if (cap != l->cap) {
			char *b = realloc(l->buf, cap);
			if (!b)
				return -ENOMEM;
			l->buf = b, l->cap = cap;
		}
	}
	memcpy(l->buf + l->len, data, n);
	l->len += n;
	return 0;
}

int vm_lines_next(struct vm_lines *l, char **line)
{
	char *s = l->buf + l->off;
	size_t avail = l->len - l->off;
	char *nl = avail ? memchr(s, '\n', avail) : NULL;
	if (!nl)
		return avail > VM_LINE_MAX ? -E2BIG : 0;
	if ((size_t)(nl - s) > VM_LINE_MAX)
		return -E2BIG;
	*nl = '\0';
	if (nl > s && nl[-1] == '\r')
		nl[-1] = '\0';
	l->off += (size_t)(nl - s) + 1;
	*line = s;
	return 1;
}

void vm_lines_free(struct vm_lines *l)
{
	free(l->buf);
	*l = (struct vm_lines){0};
}
