// SPDX-License-Identifier: GPL-2.0-or-later
/* raid_parity.c — P/Q generation, read-modify-write deltas and reconstruction of
 * missing members through Intel ISA-L. Pure arithmetic on buffers: no devices. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include "dev/raid_int.h"

static bool aligned32(const void *p)
{
	return ((uintptr_t)p & 31) == 0;
}

void raid_xor_into(unsigned char *dst, const unsigned char *src, size_t len)
{
	uint64_t a, b;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&a, dst + i, 8);
		memcpy(&b, src + i, 8);
		a ^= b;
		memcpy(dst + i, &a, 8);
	}
	for (; i < len; i++)
		dst[i] ^= src[i];
}

/* P (and Q) of k data buffers in slot order. ISA-L's SIMD paths want 32-byte
 * aligned buffers and a length that is a multiple of 32; anything else goes
 * through the table-driven encoder, which has no such requirement. */
int raid_gen_parity(unsigned k, unsigned m, size_t len, unsigned char **data, unsigned char *p,
                    unsigned char *q)
{
	void *v[RAID_MAX_MEMBERS + 2];
	bool fast = len % 32 == 0 && aligned32(p) && (!q || aligned32(q));
	for (unsigned j = 0; j < k; j++) {
		v[j] = data[j];
		fast = fast && aligned32(data[j]);
	}
	if (fast) {
		v[k] = p;
		if (m == 1)
			return xor_gen((int)k + 1, (int)len, v) ? -EINVAL : 0;
		v[k + 1] = q;
		return pq_gen((int)k + 2, (int)len, v) ? -EINVAL : 0;
	}
	unsigned char a[(RAID_MAX_MEMBERS + 2) * RAID_MAX_MEMBERS];
	unsigned char *tbl = malloc((size_t)32 * k * m);
	if (!tbl)
		return -ENOMEM;
	gf_gen_rs_matrix(a, (int)(k + m), (int)k);
	ec_init_tables((int)k, (int)m, a + k * k, tbl);
	unsigned char *out[2] = {p, q};
	ec_encode_data((int)len, (int)k, (int)m, tbl, data, out);
	free(tbl);
	return 0;
}

/* dP (and dQ) contributed by the changed slots: delta[i] = old ^ new of slot[i]. */
int raid_gen_delta(unsigned k, unsigned m, size_t len, unsigned nd, const unsigned *slot,
                   unsigned char **delta, unsigned char *dp, unsigned char *dq)
{
	unsigned char a[(RAID_MAX_MEMBERS + 2) * RAID_MAX_MEMBERS];
	unsigned char rows[2 * RAID_MAX_MEMBERS];
	gf_gen_rs_matrix(a, (int)(k + m), (int)k);
	for (unsigned r = 0; r < m; r++)
		for (unsigned i = 0; i < nd; i++)
			rows[r * nd + i] = a[(k + r) * k + slot[i]];
	unsigned char *tbl = malloc((size_t)32 * nd * m);
	if (!tbl)
		return -ENOMEM;
	ec_init_tables((int)nd, (int)m, rows, tbl);
	unsigned char *out[2] = {dp, dq};
	ec_encode_data((int)len, (int)nd, (int)m, tbl, delta, out);
	free(tbl);
	return 0;
}

/* buf[0..k-1] data slots, buf[k] P, buf[k+1] Q; `missing` marks the ones to
 * compute. At most m of them. */
int raid_recover(unsigned k, unsigned m, size_t len, unsigned char **buf, uint64_t missing)
{
	unsigned nmiss = 0, miss_data[2], nmd = 0;
	for (unsigned i = 0; i < k + m; i++)
		if (missing >> i & 1) {
			nmiss++;
			if (i < k && nmd < 2)
				miss_data[nmd++] = i;
		}
	if (nmiss == 0)
		return 0;
	if (nmiss > m)
		return -EIO;
	if (nmd) {
		unsigned char a[(RAID_MAX_MEMBERS + 2) * RAID_MAX_MEMBERS];
		unsigned char b[RAID_MAX_MEMBERS * RAID_MAX_MEMBERS];
		unsigned char inv[RAID_MAX_MEMBERS * RAID_MAX_MEMBERS];
		unsigned char *src[RAID_MAX_MEMBERS];
		gf_gen_rs_matrix(a, (int)(k + m), (int)k);
		unsigned r = 0;
		for (unsigned i = 0; i < k + m && r < k; i++) {
			if (missing >> i & 1)
				continue;
			memcpy(b + r * k, a + i * k, k);
			src[r++] = buf[i];
		}
		if (r < k || gf_invert_matrix(b, inv, (int)k) != 0)
			return -EIO;
		unsigned char rows[2 * RAID_MAX_MEMBERS];
		for (unsigned d = 0; d < nmd; d++)
			memcpy(rows + d * k, inv + miss_data[d] * k, k);
		unsigned char *tbl = malloc((size_t)32 * k * nmd);
		if (!tbl)
			return -ENOMEM;
		ec_init_tables((int)k, (int)nmd, rows, tbl);
		unsigned char *out[2] = {buf[miss_data[0]], nmd > 1 ? buf[miss_data[1]] : NULL};
		ec_encode_data((int)len, (int)k, (int)nmd, tbl, src, out);
		free(tbl);
	}
	bool need_p = missing >> k & 1, need_q = m > 1 && (missing >> (k + 1) & 1);
	if (!need_p && !need_q)
		return 0;
	unsigned char *tp = need_p ? buf[k] : NULL,
	              *tq = m > 1 ? (need_q ? buf[k + 1] : NULL) : NULL;
	unsigned char *scratch = NULL;
	if (!tp || (m > 1 && !tq)) {
		scratch = aligned_alloc(64, (len + 63) / 64 * 64);
		if (!scratch)
			return -ENOMEM;
		if (!tp)
			tp = scratch;
		else
			tq = scratch;
	}
	int rc = raid_gen_parity(k, m, len, buf, tp, tq);
	free(scratch);
	return rc;
}
