// SPDX-License-Identifier: GPL-2.0-or-later
/* grow.c — the growth step every appending array shares (bo_grow). Kept alone, with
 * no dependency, so the static guest walker links it too. */
#include <stdint.h>
#include <stdlib.h>

#include "blackout/util.h"

void *bo_grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	if (n < *cap)
		return arr;
	size_t nc = *cap ? *cap : first ? first : 1;
	while (nc <= n) {
		if (nc > SIZE_MAX / 2)
			return NULL;
		nc *= 2;
	}
	if (elem && nc > SIZE_MAX / elem)
		return NULL;
	void *na = realloc(arr, nc * elem);
	if (na)
		*cap = nc;
	return na;
}
