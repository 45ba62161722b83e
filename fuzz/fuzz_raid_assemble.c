// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_raid_assemble.c — libFuzzer target for what RAID assembly reads from its
 * members: superblocks, bitmap, PPL entries and the write journal, after an unclean
 * shutdown. The input is xored into the metadata zone of each member and the start
 * of the journal; checksums are optionally made valid so the parsers go past them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/raid.h"
#include "blackout/util.h"

#define SS     512u
#define MEMBER 128u
#define ZONE   24u /* sectors at the start of each member: superblock, bitmap or PPL */

/* The on-disk layout raid.c uses with 512-byte sectors: superblock in sector 0
 * (crc at 508), then the bitmap (8 sectors) or the PPL (4 KiB header, crc at
 * 4092, data crc at 36, then data); journal superblock at journal sector 0 and
 * records from sector 8 (4 KiB header, crc at 4092, payload crc at 24). */
static void fix_crcs(unsigned char *z, unsigned mit, bool journal)
{
	put_le32(z + 508, crc32c(z, 508));
	if (mit == 2) {
		unsigned char *h = z + 8 * SS;
		uint32_t lo = get_le32(h + 24), hi = get_le32(h + 28);
		size_t n = hi > lo && hi - lo <= 8 ? (size_t)(hi - lo) * SS : 0;
		put_le32(h + 36, crc32c(h + 4096, n));
		put_le32(h + 4092, crc32c(h, 4092));
	}
	if (journal) {
		unsigned char *h = z + 8 * SS;
		uint32_t total = get_le32(h + 20);
		size_t n = total <= 8 ? (size_t)total * SS : 0;
		put_le32(h + 24, crc32c(h + 4096, n));
		put_le32(h + 4092, crc32c(h, 4092));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned cfg = data[0], mit = cfg & 3;
	bool r6 = (cfg & 4) && mit != 2, fix = cfg & 8;
	data++;
	size--;
	unsigned n = r6 ? 5 : 4, nl = n + (mit == 3);
	struct bdev *m[8];
	for (unsigned i = 0; i < nl; i++)
		if (blk_mem_open(SS, MEMBER, &m[i])) {
			while (i--)
				blk_close(m[i]);
			return 0;
		}
	struct raid_params p = {.level = r6 ? 6 : 5,
	                        .chunk = 4096,
	                        .layout = RAID_LEFT_SYMMETRIC,
	                        .bitmap = mit == 1,
	                        .bitmap_chunk = 4096,
	                        .ppl = mit == 2,
	                        .journal = mit == 3};
	struct bdev *d;
	if (dev_raid_open(&p, m, nl, &d, NULL)) {
		for (unsigned i = 0; i < nl; i++)
			blk_close(m[i]);
		return 0;
	}
	/* a PPL entry, a journal record and dirty bits for the input to land on */
	unsigned char w[3 * SS];
	memset(w, 0xa5, sizeof(w));
	blk_write(d, 5, 3, w, 0);
	unsigned char *z = calloc(ZONE, SS);
	for (unsigned i = 0; i < nl && z; i++) {
		size_t take = size < ZONE * SS ? size : ZONE * SS;
		memset(z, 0, ZONE * SS);
		blk_read(m[i], 0, ZONE, z);
		for (size_t b = 0; b < take; b++) /* xor: zero bytes keep the real metadata */
			z[b] ^= data[b];
		data += take;
		size -= take;
		if (fix)
			fix_crcs(z, i < n ? mit : 0, i == n);
		blk_write(m[i], 0, ZONE, z, 0);
	}
	free(z);
	/* the array believes its metadata is what it wrote; an unclean restart makes
	 * it read everything back */
	blk_power_cut(d, &blk_chooser_zero, NULL);
	if (blk_power_restore(d) == 0) {
		unsigned char *buf = malloc((size_t)d->nr_sectors * SS);
		if (buf)
			blk_read(d, 0, (uint32_t)d->nr_sectors, buf);
		free(buf);
		uint64_t mism;
		raid_scrub(d, true, &mism);
	}
	blk_close(d);
	return 0;
}
