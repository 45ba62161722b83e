/* raid_internal.h — what raid.c shares with raid_parity.c: the ISA-L parity
 * helpers. Buffers are in Q-slot order: data slots 0..k-1, then P, then Q. */
#ifndef BLACKOUT_DEV_RAID_INTERNAL_H
#define BLACKOUT_DEV_RAID_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "blackout/raid.h"

void raid_xor_into(unsigned char *dst, const unsigned char *src, size_t len);
int raid_gen_parity(unsigned k, unsigned m, size_t len, unsigned char **data, unsigned char *p,
                    unsigned char *q);
int raid_gen_delta(unsigned k, unsigned m, size_t len, unsigned nd, const unsigned *slot,
                   unsigned char **delta, unsigned char *dp, unsigned char *dq);
int raid_recover(unsigned k, unsigned m, size_t len, unsigned char **buf, uint64_t missing);

#endif
