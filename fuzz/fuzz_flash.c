// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_flash.c — libFuzzer target for the flash model's power-on parser: arbitrary
 * bytes as the block headers, spare areas and pages of a lower medium (behind a valid
 * superblock), mounted by either FTL, then read, written, cut and remounted. Whatever
 * the image says, nothing may crash or leak, and acknowledged writes read back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/flash.h"

#define NSEC 128 /* 64k exported */

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 1 << 18)
		return 0;
	struct flash_params p;
	flash_params_default(&p);
	p.ftl = data[0] & 1 ? FLASH_FTL_CAREFUL : FLASH_FTL_CHEAP;
	p.garbage = (data[0] & 2) != 0;
	p.endurance = data[0] & 4 ? 3 : 0;
	p.page_size = 512;
	p.eb_size = 16384;
	p.size = NSEC * 512;
	uint64_t need;
	check(flash_params_check(&p, 512, &need, NULL) == 0);

	/* format a blank medium to get the superblock, then lay the input after it */
	struct bdev *mem, *cow, *d;
	check(blk_mem_open(512, need / 512, &mem) == 0);
	check(blk_cow_open(mem, &cow) == 0);
	check(dev_flash_open(&p, cow, &d, NULL) == 0);
	unsigned char sb[512];
	check(blk_read(blk_lower(d, 0), 0, 1, sb) == 0);
	blk_close(d);
	check(blk_write(mem, 0, 1, sb, 0) == 0);
	size_t n = size - 1;
	if (n > need - 512)
		n = need - 512;
	n = n / 512 * 512;
	if (n)
		check(blk_pwrite(mem, 512, n, data + 1, 0) == 0);

	struct bo_err err = {{0}};
	if (dev_flash_open(&p, mem, &d, &err) != 0) {
		blk_close(mem);
		return 0;
	}
	static unsigned char all[NSEC * 512], buf[8 * 512];
	check(blk_read(d, 0, NSEC, all) == 0);
	for (unsigned i = 0; i < 6; i++) {
		uint64_t lba = (data[(i * 7 + 1) % size] * 13u + i * 31u) % (NSEC - 8);
		memset(buf, 0x40 + (int)i, sizeof(buf));
		if (blk_write(d, lba, 8, buf, 0) == 0) {
			check(blk_read(d, lba, 8, all) == 0);
			check(memcmp(all, buf, sizeof(buf)) == 0);
		}
	}
	struct blk_chooser_random ch;
	blk_chooser_random_init(&ch, size);
	struct blk_inflight in = {3, 8, 0, buf};
	if (blk_power_cut(d, &ch.base, &in) == 0 && blk_power_restore(d) == 0)
		check(blk_read(d, 0, NSEC, all) == 0);
	blk_close(d);
	return 0;
}
