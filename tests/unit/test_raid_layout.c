// SPDX-License-Identifier: GPL-2.0-or-later
/* test_raid_layout.c — where md puts every data and parity chunk of the first
 * stripes (tables worked out by hand from md's raid5_compute_sector), checked
 * against raid_map_chunk and against the bytes the array actually writes; P and Q
 * recomputed byte by byte in GF(2^8) with md's Q order (data disks from after Q). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/raid.h"
#include "tap.h"

struct vec {
	unsigned level, n;
	enum raid_layout layout;
	const char *name;
	const char *rows; /* stripe rows split by '|', one token per member */
};

static const struct vec vecs[] = {
    {5, 4, RAID_LEFT_SYMMETRIC, "raid5 left-symmetric",
     "0 1 2 P|4 5 P 3|8 P 6 7|P 9 10 11|12 13 14 P"},
    {5, 4, RAID_LEFT_ASYMMETRIC, "raid5 left-asymmetric",
     "0 1 2 P|3 4 P 5|6 P 7 8|P 9 10 11|12 13 14 P"},
    {5, 4, RAID_RIGHT_SYMMETRIC, "raid5 right-symmetric",
     "P 0 1 2|5 P 3 4|7 8 P 6|9 10 11 P|P 12 13 14"},
    {5, 4, RAID_RIGHT_ASYMMETRIC, "raid5 right-asymmetric",
     "P 0 1 2|3 P 4 5|6 7 P 8|9 10 11 P|P 12 13 14"},
    {4, 4, RAID_PARITY_N, "raid4", "0 1 2 P|3 4 5 P|6 7 8 P|9 10 11 P"},
    {6, 5, RAID_LEFT_SYMMETRIC, "raid6 left-symmetric",
     "Q 0 1 2 P|3 4 5 P Q|7 8 P Q 6|11 P Q 9 10|P Q 12 13 14|Q 15 16 17 P"},
    {6, 5, RAID_LEFT_ASYMMETRIC, "raid6 left-asymmetric",
     "Q 0 1 2 P|3 4 5 P Q|6 7 P Q 8|9 P Q 10 11|P Q 12 13 14"},
    {6, 5, RAID_RIGHT_SYMMETRIC, "raid6 right-symmetric",
     "P Q 0 1 2|5 P Q 3 4|7 8 P Q 6|9 10 11 P Q|Q 12 13 14 P"},
    {6, 5, RAID_RIGHT_ASYMMETRIC, "raid6 right-asymmetric",
     "P Q 0 1 2|3 P Q 4 5|6 7 P Q 8|9 10 11 P Q|Q 12 13 14 P"},
    {0, 3, RAID_LEFT_SYMMETRIC, "raid0", "0 1 2|3 4 5"},
};

#define CHUNK 4096u
#define SS    512u

static unsigned char gf_mul2(unsigned char a)
{
	return (unsigned char)((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
}

static unsigned char gf_pow2(unsigned e)
{
	unsigned char v = 1;
	while (e--)
		v = gf_mul2(v);
	return v;
}

static unsigned char gf_mul(unsigned char a, unsigned char b)
{
	unsigned char r = 0;
	while (b) {
		if (b & 1)
			r ^= a;
		a = gf_mul2(a);
		b >>= 1;
	}
	return r;
}

/* the fill byte of array chunk c at byte i */
static unsigned char fill(unsigned c, size_t i)
{
	return (unsigned char)(c * 37 + i * 11 + (i >> 8) + 1);
}

static void check_vec(const struct vec *v)
{
	/* parse the table */
	int tab[8][8];
	unsigned nrows = 0;
	const char *p = v->rows;
	while (*p && nrows < 8) {
		for (unsigned i = 0; i < v->n; i++) {
			while (*p == ' ')
				p++;
			tab[nrows][i] = *p == 'P' ? -1 : *p == 'Q' ? -2 : atoi(p);
			while (*p && *p != ' ' && *p != '|')
				p++;
		}
		nrows++;
		if (*p == '|')
			p++;
	}
	bool map_ok = true;
	for (unsigned s = 0; s < nrows; s++) {
		int pm, qm;
		ok(raid_parity_members(v->level, v->layout, v->n, s, &pm, &qm) == 0, "%s parity",
		   v->name);
		for (unsigned i = 0; i < v->n; i++) {
			int t = tab[s][i];
			if (t >= 0) {
				unsigned mem;
				uint64_t st;
				raid_map_chunk(v->level, v->layout, v->n, (uint64_t)t, &mem, &st);
				if (mem != i || st != s) {
					map_ok = false;
					diag("%s: chunk %d on member %u stripe %llu, table says "
					     "%u/%u",
					     v->name, t, mem, (unsigned long long)st, i, s);
				}
			} else if ((t == -1 && pm != (int)i) || (t == -2 && qm != (int)i)) {
				map_ok = false;
				diag("%s: stripe %u: %c is not on member %u", v->name, s,
				     t == -1 ? 'P' : 'Q', i);
			}
		}
	}
	ok(map_ok, "%s: raid_map_chunk and raid_parity_members match md's table", v->name);

	/* the bytes on the members */
	struct bdev *mem[8];
	uint64_t msize = (8 + 8 * (CHUNK / SS)) + 8; /* superblock area + 8 chunks */
	for (unsigned i = 0; i < v->n; i++)
		tap_require(blk_mem_open(SS, msize, &mem[i]) == 0, "member");
	struct raid_params rp = {.level = v->level, .chunk = CHUNK, .layout = v->layout};
	struct bdev *d;
	struct bo_err err = {{0}};
	int rc = dev_raid_open(&rp, mem, v->n, &d, &err);
	tap_require(rc == 0, "%s opens: %s", v->name, err.msg);
	struct raid_status st;
	raid_status(d, &st);
	unsigned k = st.data_members, nchunks = nrows * k;
	unsigned char *buf = malloc((size_t)nchunks * CHUNK);
	for (unsigned c = 0; c < nchunks; c++)
		for (size_t i = 0; i < CHUNK; i++)
			buf[(size_t)c * CHUNK + i] = fill(c, i);
	ok(blk_pwrite(d, 0, (size_t)nchunks * CHUNK, buf, 0) == 0, "%s: write %u chunks", v->name,
	   nchunks);
	bool bytes_ok = true;
	unsigned char *got = malloc(CHUNK);
	for (unsigned s = 0; s < nrows; s++) {
		/* md's Q order: data members starting just after Q */
		int qm = -1, pm = -1;
		for (unsigned i = 0; i < v->n; i++) {
			if (tab[s][i] == -2)
				qm = (int)i;
			if (tab[s][i] == -1)
				pm = (int)i;
		}
		unsigned d0 = qm < 0 || qm == (int)v->n - 1 ? 0 : (unsigned)qm + 1;
		for (unsigned i = 0; i < v->n; i++) {
			blk_pread(mem[i], (st.data_offset + (uint64_t)s * (CHUNK / SS)) * SS, CHUNK,
			          got);
			for (size_t b = 0; b < CHUNK && bytes_ok; b++) {
				unsigned char want = 0;
				if (tab[s][i] >= 0) {
					want = fill((unsigned)tab[s][i], b);
				} else {
					unsigned slot = 0;
					for (unsigned c = 0; c < v->n; c++) {
						unsigned x = (d0 + c) % v->n;
						if ((int)x == pm || (int)x == qm)
							continue;
						unsigned char dv = fill((unsigned)tab[s][x], b);
						want ^= tab[s][i] == -1 ? dv
						                        : gf_mul(gf_pow2(slot), dv);
						slot++;
					}
				}
				if (got[b] != want) {
					bytes_ok = false;
					diag("%s: stripe %u member %u byte %zu: %02x, want %02x",
					     v->name, s, i, b, got[b], want);
				}
			}
		}
	}
	ok(bytes_ok,
	   "%s: every data, P and Q chunk of the first %u stripes holds what md puts there",
	   v->name, nrows);
	free(got);
	free(buf);
	blk_close(d);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++)
		check_vec(&vecs[i]);
	unsigned mem;
	uint64_t st;
	is_int(raid_map_chunk(5, RAID_LEFT_SYMMETRIC, 2, 0, &mem, &st), -EINVAL,
	       "a 2-member RAID5 is refused");
	is_int(raid_map_chunk(7, RAID_LEFT_SYMMETRIC, 4, 0, &mem, &st), -EINVAL,
	       "level 7 is refused");
	return tap_done();
}
