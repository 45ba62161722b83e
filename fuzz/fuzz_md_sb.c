// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_md_sb.c — libFuzzer target for the md superblock 1.2 parser and the array
 * assembled from it (src/md/view.c): any bytes are a superblock whose fields are
 * within what the layout reader relies on, or refused with a reason; an array assembled
 * from such superblocks maps every block it has inside its members. */
#include <stdint.h>
#include <string.h>

#include "blackout/md_view.h"

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

static uint8_t zero[MD_BLOCK];

static const uint8_t *get_zero(void *ctx, unsigned dev, uint64_t mblock)
{
	const uint64_t *bytes = ctx;
	check(dev < 4 && mblock < bytes[dev] / MD_BLOCK);
	return zero;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct md_sb sb[4];
	bool have[4] = {false};
	uint64_t bytes[4];
	/* up to four members' superblocks, one after the other */
	size_t each = size / 4 > 256 ? size / 4 : size;
	for (unsigned d = 0; d < 4; d++) {
		size_t off = each == size ? 0 : d * each;
		size_t len = each > MD_SB_AREA ? MD_SB_AREA : each;
		struct bo_err err = {{0}};
		int rc = md_sb_parse(data + off, off + len <= size ? len : 0, &sb[d], &err);
		if (rc) {
			check(err.msg[0] != '\0');
			continue;
		}
		check(sb[d].level >= 4 && sb[d].level <= 6);
		check(sb[d].chunk_sectors >= 8 &&
		      (sb[d].chunk_sectors & (sb[d].chunk_sectors - 1)) == 0);
		check(sb[d].raid_disks >= 3 && sb[d].raid_disks <= RAID_MAX_MEMBERS);
		check(sb[d].size <= sb[d].data_size);
		have[d] = true;
		/* members just large enough for what the superblock says */
		bytes[d] = (sb[d].data_offset + sb[d].size) * 512;
		bytes[d] += (MD_BLOCK - bytes[d] % MD_BLOCK) % MD_BLOCK;
	}
	for (unsigned d = 0; d < 4; d++)
		if (!have[d])
			bytes[d] = 1 << 20;
	struct md_array a;
	struct bo_err err = {{0}};
	if (md_array_assemble(sb, have, 4, bytes, &a, &err)) {
		check(err.msg[0] != '\0');
		return 0;
	}
	uint8_t out[MD_BLOCK];
	for (uint64_t b = 0; b < a.blocks && b < 64; b++) {
		int rc = md_read_block(&a, b, get_zero, bytes, out);
		check(rc == 0 || rc == -5);
		uint64_t row[RAID_MAX_MEMBERS];
		unsigned role, n = 0;
		uint64_t stripe, mb;
		check(md_block_where(&a, b, &role, &stripe, &mb) == 0 && role < a.n);
		md_row_blocks(&a, mb, row, &n);
		bool found = false;
		for (unsigned i = 0; i < n; i++)
			found |= row[i] == b;
		check(found);
	}
	return 0;
}
