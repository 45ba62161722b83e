// SPDX-License-Identifier: GPL-2.0-or-later
/* pattern.c — the probe's self-describing 512-byte unit: which run wrote it, where it
 * belongs, which generation it is, and a checksum, so a unit read after a pull says by
 * itself whether it is whole, old, new, erased or torn. */
#include <string.h>

#include "blackout/endian.h"
#include "blackout/probe.h"
#include "blackout/util.h"

static const unsigned char magic[8] = {'B', 'O', 'P', 'R', 'O', 'B', 'E', '1'};

#define OFF_RUN  8
#define OFF_UNIT 16
#define OFF_GEN  24
#define OFF_FILL 32
#define OFF_CRC  (PROBE_UNIT - 4)

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

void probe_pattern_fill(void *unit, uint64_t run, uint64_t unitno, uint64_t gen)
{
	unsigned char *u = unit;
	memcpy(u, magic, sizeof(magic));
	put_le64(u + OFF_RUN, run);
	put_le64(u + OFF_UNIT, unitno);
	put_le64(u + OFF_GEN, gen);
	/* filler that differs between generations at every byte offset a tear could
	 * fall on, so a unit half old and half new never checksums */
	uint64_t s = mix(run ^ mix(unitno ^ mix(gen)));
	for (unsigned i = OFF_FILL; i < OFF_CRC; i += 8) {
		s = mix(s + 0x9e3779b97f4a7c15ull);
		unsigned char b[8];
		put_le64(b, s);
		memcpy(u + i, b, OFF_CRC - i < 8 ? OFF_CRC - i : 8);
	}
	put_le32(u + OFF_CRC, crc32c(u, OFF_CRC));
}

enum probe_unit_kind probe_pattern_decode(const void *unit, uint64_t run, uint64_t unitno,
                                          uint64_t *gen)
{
	const unsigned char *u = unit;
	*gen = 0;
	if (memcmp(u, magic, sizeof(magic)) == 0 && get_le32(u + OFF_CRC) == crc32c(u, OFF_CRC)) {
		if (get_le64(u + OFF_RUN) != run || get_le64(u + OFF_UNIT) != unitno)
			return PROBE_U_FOREIGN;
		*gen = get_le64(u + OFF_GEN);
		return PROBE_U_VALID;
	}
	bool zero = true, ones = true;
	for (unsigned i = 0; i < PROBE_UNIT; i++) {
		zero = zero && u[i] == 0;
		ones = ones && u[i] == 0xff;
	}
	return zero || ones ? PROBE_U_ERASED : PROBE_U_GARBAGE;
}
