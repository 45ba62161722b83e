// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_prune.c — libFuzzer target for pruning's reader (src/crash/prune.c): the input
 * is the start of a device view (superblock, the journal inode's map copy, indirect
 * blocks, the journal itself), the rest zeros; the state is the same view with its
 * first 4 KiB blocks flipped. Opening must refuse or map, keying must replay or
 * decline, never crash or read outside the view. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crash/crash_int.h"

#define SIZE (2048u * 4096) /* an 8 MiB view: room for a small ext3/ext4 and its journal */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *base = calloc(1, SIZE), *view = malloc(SIZE);
	if (!base || !view) {
		free(base);
		free(view);
		return 0;
	}
	memcpy(base, data, size < SIZE ? size : SIZE);
	memcpy(view, base, SIZE);
	/* the state: the input's second half, if any, laid over blocks 1.. */
	uint64_t blocks[8];
	size_t n = 0;
	for (uint64_t b = 1; b < 9 && size > SIZE + (b - 1) * 4096; b++) {
		size_t m = size - SIZE - (b - 1) * 4096;
		memcpy(view + b * 4096, data + SIZE + (b - 1) * 4096, m < 4096 ? m : 4096);
		if (memcmp(view + b * 4096, base + b * 4096, 4096))
			blocks[n++] = b;
	}
	struct crash_prune p;
	if (crash_prune_open(&p, base, SIZE) == 0 && p.on) {
		uint64_t key[2], first;
		bool keyed, found;
		if (crash_prune_key(&p, base, view, blocks, n, 0, key, &keyed) == 0 && keyed)
			(void)crash_prune_seen(&p, key, 0, &found, &first);
	}
	crash_prune_close(&p);
	free(base);
	free(view);
	return 0;
}
