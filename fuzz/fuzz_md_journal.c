// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_md_journal.c — libFuzzer target for md's write-journal replay
 * (src/md/journal.c): the input is the journal device's log area of a small
 * degraded RAID5 with a journal; meta blocks found in it get their checksums made
 * right, so payload parsing is reached. Any log replays into pages inside the members,
 * or ends with a reason; nothing is read outside the devices. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/md_view.h"
#include "blackout/util.h"

#define NDEV   5
#define DOFF   16u  /* sectors */
#define SIZE   128u /* sectors: 16 stripes of 4 KiB chunks */
#define MBYTES ((DOFF + SIZE) * 512u)
#define LOGMAX 32u /* pages */

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

static uint8_t *mem[NDEV];
static uint64_t bytes[NDEV];

static void put_sb(uint8_t *b, unsigned dev, uint64_t data_size, uint64_t tail)
{
	memset(b, 0, MD_SB_AREA);
	put_le32(b, MD_SB_MAGIC);
	put_le32(b + 4, 1);
	put_le32(b + 8, MD_FEATURE_JOURNAL);
	memset(b + 16, 0x33, 16);
	put_le32(b + 72, 5);
	put_le32(b + 76, 2);
	put_le64(b + 80, SIZE);
	put_le32(b + 88, 8);
	put_le32(b + 92, 4);
	put_le64(b + 128, DOFF);
	put_le64(b + 136, data_size);
	put_le64(b + 144, 8);
	put_le64(b + 152, tail);
	put_le32(b + 160, dev);
	put_le32(b + 220, 8);
	for (unsigned i = 0; i < 8; i++)
		put_le16(b + 256 + 2 * i, i < 4 ? i : i == 4 ? MD_ROLE_JOURNAL : MD_ROLE_SPARE);
	uint64_t sum = 0;
	for (unsigned i = 0; i < 256 + 16; i += 4)
		sum += get_le32(b + i);
	put_le32(b + 216, (uint32_t)((sum & 0xffffffff) + (sum >> 32)));
}

static const uint8_t *get(void *ctx, unsigned dev, uint64_t mblock)
{
	(void)ctx;
	if (dev >= NDEV || mblock >= bytes[dev] / MD_BLOCK)
		return NULL;
	return mem[dev] + mblock * MD_BLOCK;
}

/* Meta blocks (by magic) get right page and block checksums, as far as they can. */
static void fix_sums(uint8_t *lg, unsigned pages, uint32_t seed)
{
	for (unsigned p = 0; p < pages; p++) {
		uint8_t *mb = lg + (size_t)p * MD_BLOCK;
		if (get_le32(mb) != 0x6433c509u)
			continue;
		uint32_t size = get_le32(mb + 12), off = 32, next = p + 1;
		while (size <= MD_BLOCK && off + 16 <= size) {
			uint32_t sz = get_le32(mb + off + 4), np = sz / 8;
			if (get_le16(mb + off) == 2 || np > 4 || off + 16 + 4 * np > size)
				break;
			for (uint32_t i = 0; i < np; i++, next++)
				put_le32(mb + off + 16 + 4 * i,
				         crc32c_raw(seed, lg + (size_t)(next % pages) * MD_BLOCK,
				                    MD_BLOCK));
			off += 16 + 4 * np;
		}
		put_le32(mb + 4, 0);
		put_le32(mb + 4, crc32c_raw(seed, mb, MD_BLOCK));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned pages = 2 + (unsigned)((size - 1) / MD_BLOCK);
	if (pages > LOGMAX)
		pages = LOGMAX;
	uint64_t tail = (uint64_t)(data[0] % pages) * 8;
	for (unsigned d = 0; d < NDEV; d++) {
		bytes[d] = d < 4 ? MBYTES : (DOFF + pages * 8) * 512u;
		mem[d] = calloc(1, bytes[d]);
		if (d > 0)
			put_sb(mem[d] + MD_SB_OFFSET, d, d < 4 ? SIZE : pages * 8,
			       d < 4 ? 0 : tail);
	}
	uint8_t *lg = mem[4] + DOFF * 512;
	size_t n = size - 1 < (size_t)pages * MD_BLOCK ? size - 1 : (size_t)pages * MD_BLOCK;
	memcpy(lg, data + 1, n);
	uint8_t uuid[16];
	memset(uuid, 0x33, 16);
	fix_sums(lg, pages, crc32c_raw(~0u, uuid, 16));

	struct md_sb sbs[NDEV];
	bool have[NDEV];
	struct bo_err err = {{0}};
	for (unsigned d = 0; d < NDEV; d++)
		have[d] = md_sb_parse(mem[d] + MD_SB_OFFSET, MD_SB_AREA, &sbs[d], &err) == 0;
	struct md_array a;
	check(md_array_assemble(sbs, have, NDEV, bytes, &a, &err) == 0 && a.journal_dev == 4);
	struct md_replay rp;
	memset(&err, 0, sizeof(err));
	if (md_journal_replay(&a, get, NULL, &rp, &err) == 0) {
		for (size_t i = 0; i < rp.n; i++) {
			check(rp.pages[i].dev < 4 &&
			      rp.pages[i].mblock < bytes[rp.pages[i].dev] / MD_BLOCK);
			check(rp.pages[i].at + MD_BLOCK <= rp.buf_len);
			check(i == 0 || rp.pages[i - 1].dev < rp.pages[i].dev ||
			      rp.pages[i - 1].mblock < rp.pages[i].mblock);
		}
		check(rp.end[0] != '\0');
		md_replay_free(&rp);
	} else {
		check(err.msg[0] != '\0');
	}
	for (unsigned d = 0; d < NDEV; d++)
		free(mem[d]);
	return 0;
}
