// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_fsck.c — libFuzzer target: the input is an ext2/ext3 image (padded to 64 KiB);
 * blackout fsck must check, scrub and repair it without a crash, hang or bad access. */
#include <stdint.h>
#include <string.h>

#include "blackout/fsck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	size_t len = size < 65536 ? 65536 : (size + 511) / 512 * 512;
	struct bdev *d;
	if (blk_mem_open(512, len / 512, &d))
		return 0;
	uint8_t sec[512];
	for (size_t off = 0; off < size; off += 512) {
		size_t n = size - off < 512 ? size - off : 512;
		memset(sec, 0, sizeof(sec));
		memcpy(sec, data + off, n);
		blk_pwrite(d, off, 512, sec, 0);
	}
	struct fsck_report r;
	struct bo_err err;
	struct fsck_opts n = {.repair = FSCK_REPAIR_NONE};
	fsck_check(d, &n, &r, &err);
	struct fsck_opts f = {.fast = true};
	fsck_check(d, &f, &r, &err);
	struct fsck_opts y = {.repair = FSCK_REPAIR_YES};
	fsck_check(d, &y, &r, &err);
	blk_close(d);
	return 0;
}
