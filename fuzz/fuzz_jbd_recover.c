// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_jbd_recover.c — libFuzzer target for journal recovery: the input is a
 * journal (superblock + log) of 1 KiB blocks on a memory device; recovery must
 * return an error or stop safely, never write outside the home blocks or crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/endian.h"
#include "blackout/jbd.h"

#define BS     1024
#define JBLK   64  /* journal blocks, at device blocks 64..127 */
#define HOME   64  /* home blocks 0..63 */
#define DEVBLK 160 /* 128..159: must never be written */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bdev *d;
	if (blk_mem_open(512, (uint64_t)DEVBLK * BS / 512, &d))
		return 0;
	size_t n = size < (size_t)JBLK * BS ? size : (size_t)JBLK * BS;
	uint8_t *img = calloc(1, (size_t)JBLK * BS);
	memcpy(img, data, n);
	/* small inputs: the rest of the sb block repeats the input so blocks after
	 * the first are not all zero */
	blk_pwrite(d, (uint64_t)64 * BS, (size_t)JBLK * BS, img, 0);
	uint8_t guard[BS];
	memset(guard, 0x5a, BS);
	for (uint64_t b = 128; b < DEVBLK; b++)
		blk_pwrite(d, b * BS, BS, guard, 0);
	struct jbd_extent ext[2] = {{0, 64, 32}, {32, 96, 32}};
	struct jbd_config c = {.block_size = BS,
	                       .nr_blocks = JBLK,
	                       .map = {.extents = ext, .nr_extents = 2},
	                       .fs_blocks = HOME};
	struct jbd_journal *j;
	struct bo_err err;
	if (jbd_journal_open(d, &c, &j, &err) == 0) {
		struct jbd_recovery_info info;
		(void)jbd_journal_recover(j, &info);
		/* and the writing side on whatever survived */
		if (jbd_journal_load(j) == 0) {
			struct jbd_handle *h;
			if (jbd_journal_start(j, 2, &h) == 0) {
				(void)jbd_journal_dirty_metadata(h, 5, img);
				(void)jbd_journal_stop(h);
			}
			(void)jbd_journal_commit(j);
		}
		jbd_journal_destroy(j, false);
	}
	uint8_t b[BS];
	for (uint64_t k = 128; k < DEVBLK; k++) {
		blk_pread(d, k * BS, BS, b);
		if (memcmp(b, guard, BS))
			abort(); /* a write outside the home blocks and the journal */
	}
	free(img);
	blk_close(d);
	return 0;
}
