// SPDX-License-Identifier: GPL-2.0-or-later
/* test_md_view.c — md's array read from hand-built members (src/md/view.c): the
 * superblock 1.2 parser accepts what mdadm writes and refuses each field it cannot
 * read, by name; a RAID5 left-symmetric array laid out from md's documented picture
 * reads back block for block, healthy and with member 0 missing (rebuilt from parity);
 * and the block-level write-hole check over a hand-made store and log (mdhole.c) finds
 * the states whose unwritten block on the missing member reads wrong, and no others. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/endian.h"
#include "blackout/md_view.h"
#include "blackout/rec.h"
#include "blackout/util.h"
#include "tap.h"

#define NDEV    4
#define DOFF    2048u /* data offset, sectors */
#define SIZE    2048u /* sectors of each member in the array: 16 stripes of 64 KiB */
#define CHUNK   128u  /* sectors */
#define MBYTES  (2u << 20)
#define CB      16u /* 4 KiB blocks per chunk */
#define NBLOCKS (16u * 3u * CB)

static uint8_t *mem[NDEV + 1]; /* the 5th: md's write journal, in test_journal */

struct sbspec {
	uint32_t magic, major, feature, level, layout, chunk, disks, dev, max_dev;
	uint64_t super_offset, data_offset, size, data_size, events, jtail;
	uint16_t roles[8];
	bool bad_csum;
};

static struct sbspec good(unsigned dev)
{
	struct sbspec s = {.magic = MD_SB_MAGIC,
	                   .major = 1,
	                   .level = 5,
	                   .layout = 2,
	                   .chunk = CHUNK,
	                   .disks = NDEV,
	                   .dev = dev,
	                   .max_dev = 8,
	                   .super_offset = 8,
	                   .data_offset = DOFF,
	                   .size = SIZE,
	                   .data_size = MBYTES / 512 - DOFF,
	                   .events = 20};
	for (unsigned i = 0; i < 8; i++)
		s.roles[i] = i < NDEV ? (uint16_t)i : 0xffff;
	return s;
}

/* The test's own checksum, from md_p.h's description: le32 words summed in 64 bits
 * with sb_csum as zero, the halves folded. */
static void put_sb(uint8_t *b, const struct sbspec *s)
{
	memset(b, 0, MD_SB_AREA);
	put_le32(b, s->magic);
	put_le32(b + 4, s->major);
	put_le32(b + 8, s->feature);
	memset(b + 16, 0x5a, 16);
	put_le32(b + 72, s->level);
	put_le32(b + 76, s->layout);
	put_le64(b + 80, s->size);
	put_le32(b + 88, s->chunk);
	put_le32(b + 92, s->disks);
	put_le64(b + 128, s->data_offset);
	put_le64(b + 136, s->data_size);
	put_le64(b + 144, s->super_offset);
	put_le64(b + 152, s->jtail);
	put_le32(b + 160, s->dev);
	put_le64(b + 200, s->events);
	put_le32(b + 220, s->max_dev);
	for (unsigned i = 0; i < 8; i++)
		put_le16(b + 256 + 2 * i, s->roles[i]);
	uint64_t sum = 0;
	for (unsigned i = 0; i < 256 + 2 * s->max_dev && i + 4 <= MD_SB_AREA; i += 4)
		sum += get_le32(b + i);
	put_le32(b + 216, (uint32_t)((sum & 0xffffffff) + (sum >> 32)) + s->bad_csum);
}

static int parse_spec(const struct sbspec *s, struct md_sb *sb, struct bo_err *err)
{
	uint8_t b[MD_SB_AREA];
	put_sb(b, s);
	memset(err, 0, sizeof(*err));
	return md_sb_parse(b, sizeof(b), sb, err);
}

/* md's documented left-symmetric picture for 4 disks: stripe s has P on disk 3 - s%4
 * and its three data chunks on the disks after P, wrapping. */
static const unsigned pic_parity[4] = {3, 2, 1, 0};
static const unsigned pic_data[4][3] = {{0, 1, 2}, {3, 0, 1}, {2, 3, 0}, {1, 2, 3}};

static uint8_t pattern(uint64_t block, size_t i)
{
	return (uint8_t)(block * 131 + i * 7 + (i >> 9));
}

static uint8_t *at(unsigned disk, uint64_t stripe, unsigned off)
{
	return mem[disk] + (uint64_t)DOFF * 512 + (stripe * CB + off) * MD_BLOCK;
}

/* Lays the array's blocks out by the picture and computes P. */
static void build_array(void)
{
	for (unsigned d = 0; d < NDEV; d++) {
		mem[d] = calloc(1, MBYTES);
		struct sbspec s = good(d);
		put_sb(mem[d] + MD_SB_OFFSET, &s);
	}
	for (uint64_t st = 0; st < 16; st++)
		for (unsigned off = 0; off < CB; off++) {
			uint8_t *p = at(pic_parity[st % 4], st, off);
			for (unsigned k = 0; k < 3; k++) {
				uint64_t blk = (st * 3 + k) * CB + off;
				uint8_t *dst = at(pic_data[st % 4][k], st, off);
				for (size_t i = 0; i < MD_BLOCK; i++) {
					dst[i] = pattern(blk, i);
					p[i] ^= dst[i];
				}
			}
		}
}

static const uint8_t *get_mem(void *ctx, unsigned dev, uint64_t mblock)
{
	(void)ctx;
	return dev < NDEV && mblock < MBYTES / MD_BLOCK ? mem[dev] + mblock * MD_BLOCK : NULL;
}

static int assemble(bool missing0, struct md_array *a, struct bo_err *err)
{
	struct md_sb sbs[NDEV];
	bool have[NDEV];
	uint64_t bytes[NDEV];
	for (unsigned d = 0; d < NDEV; d++) {
		struct bo_err e2 = {{0}};
		have[d] = !(missing0 && d == 0) &&
		          md_sb_parse(mem[d] + MD_SB_OFFSET, MD_SB_AREA, &sbs[d], &e2) == 0;
		bytes[d] = MBYTES;
	}
	memset(err, 0, sizeof(*err));
	return md_array_assemble(sbs, have, NDEV, bytes, a, err);
}

/* How many of the array's blocks do not read as the pattern put there; members read
 * through get(ctx, ...). */
static unsigned read_all_via(const struct md_array *a, md_get_fn get, void *ctx)
{
	unsigned wrong = 0;
	static uint8_t buf[MD_BLOCK];
	for (uint64_t b = 0; b < a->blocks; b++) {
		if (md_read_block(a, b, get, ctx, buf)) {
			wrong++;
			continue;
		}
		for (size_t i = 0; i < MD_BLOCK; i++)
			if (buf[i] != pattern(b, i)) {
				wrong++;
				break;
			}
	}
	return wrong;
}

static unsigned read_all(const struct md_array *a)
{
	return read_all_via(a, get_mem, NULL);
}

static void test_parser(void)
{
	struct md_sb sb;
	struct bo_err err;
	struct sbspec s = good(2);
	ok(parse_spec(&s, &sb, &err) == 0 && sb.level == 5 && sb.layout == 2 &&
	       sb.chunk_sectors == CHUNK && sb.raid_disks == 4 && sb.role == 2 &&
	       sb.data_offset == DOFF && sb.events == 20,
	   "a superblock as mdadm writes it parses (level 5, layout 2, role 2) %s", err.msg);
	struct {
		const char *what, *msg;
		void (*set)(struct sbspec *);
	} bad[] = {
	    {"a checksum off by one", "checksum", NULL},
	    {"major_version 2", "major_version 2", NULL},
	    {"metadata 1.0/1.1 (super_offset 0)", "only metadata 1.2", NULL},
	    {"RAID1", "RAID1", NULL},
	    {"a partial parity log", "partial parity log", NULL},
	    {"a reshape", "reshape", NULL},
	    {"layout 9", "layout 9", NULL},
	    {"a chunk of 12 sectors", "chunk of 12", NULL},
	    {"40 raid disks", "raid_disks 40", NULL},
	    {"data_offset 4", "data_offset 4", NULL},
	    {"size past data_size", "larger than data_size", NULL},
	    {"role 0x1234", "role 0x1234", NULL},
	    {"max_dev 5000", "max_dev 5000", NULL},
	    {"dev_number past max_dev", "dev_number 9", NULL},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = good(1);
		switch (i) {
		case 0: s.bad_csum = true; break;
		case 1: s.major = 2; break;
		case 2: s.super_offset = 0; break;
		case 3: s.level = 1; break;
		case 4: s.feature = MD_FEATURE_PPL; break;
		case 5: s.feature = MD_FEATURE_RESHAPE_ACTIVE; break;
		case 6: s.layout = 9; break;
		case 7: s.chunk = 12; break;
		case 8: s.disks = 40; break;
		case 9: s.data_offset = 4; break;
		case 10: s.size = s.data_size + 8; break;
		case 11: s.roles[1] = 0x1234; break;
		case 12: s.max_dev = 5000; break;
		case 13: s.dev = 9; break;
		}
		int rc = parse_spec(&s, &sb, &err);
		ok(rc == -EINVAL && strstr(err.msg, bad[i].msg), "%s is refused: %s", bad[i].what,
		   err.msg);
	}
	s = good(0);
	s.magic = 0;
	ok(parse_spec(&s, &sb, &err) == -ENODATA, "zeros are no superblock (a missing member)");
	uint8_t small[100] = {0};
	ok(md_sb_parse(small, sizeof(small), &sb, &err) == -EINVAL, "100 bytes are refused");
}

static void test_layout(void)
{
	build_array();
	struct md_array a;
	struct bo_err err;
	tap_require(assemble(false, &a, &err) == 0, "the healthy array assembles %s", err.msg);
	ok(a.nmissing == 0 && a.blocks == NBLOCKS && a.chunk == CHUNK * 512,
	   "healthy: 4 roles, %llu blocks", (unsigned long long)a.blocks);
	is_int(read_all(&a), 0, "healthy: every block reads as md's picture put it");
	unsigned role;
	uint64_t stripe, mb;
	ok(md_block_where(&a, 5 * CB + 3, &role, &stripe, &mb) == 0 && role == 1 && stripe == 1 &&
	       mb == DOFF / 8 + CB + 3,
	   "array chunk 5 is on disk 1 of stripe 1 (md's picture)");
	uint64_t row[RAID_MAX_MEMBERS];
	unsigned n;
	md_row_blocks(&a, DOFF / 8 + 2 * CB + 4, row, &n);
	ok(n == 3 && row[0] == 6 * CB + 4 && row[2] == 8 * CB + 4,
	   "the row at stripe 2, block 4 holds array chunks 6-8's blocks");
	tap_require(assemble(true, &a, &err) == 0, "member 0 missing: assembles %s", err.msg);
	ok(a.nmissing == 1 && a.dev_of_role[0] == -1, "degraded: role 0 missing");
	is_int(read_all(&a), 0, "degraded: every block reads right, member 0's rebuilt from P");
	at(3, 0, 5)[100] ^= 1; /* stripe 0's P, one byte */
	is_int(read_all(&a), 1, "a wrong P byte in stripe 0 makes exactly its rebuilt block wrong");
	at(3, 0, 5)[100] ^= 1;

	/* members that disagree */
	struct sbspec s = good(2);
	s.roles[2] = 1;
	put_sb(mem[2] + MD_SB_OFFSET, &s);
	ok(assemble(false, &a, &err) == -EINVAL && strstr(err.msg, "both claim role 1"),
	   "two members with one role are refused: %s", err.msg);
	s = good(2);
	s.chunk = 256;
	put_sb(mem[2] + MD_SB_OFFSET, &s);
	ok(assemble(false, &a, &err) == -EINVAL && strstr(err.msg, "another array"),
	   "a member of another geometry is refused: %s", err.msg);
	s = good(2);
	put_sb(mem[2] + MD_SB_OFFSET, &s);
	memset(mem[1] + MD_SB_OFFSET, 0, 4);
	ok(assemble(true, &a, &err) == -EINVAL && strstr(err.msg, "2 of 4 roles missing"),
	   "two of four missing is refused: %s", err.msg);
	s = good(1);
	put_sb(mem[1] + MD_SB_OFFSET, &s);
}

static const uint8_t *get_m6(void *ctx, unsigned dev, uint64_t mblock)
{
	uint8_t **m = ctx;
	return dev < 5 && mblock < MBYTES / MD_BLOCK ? m[dev] + mblock * MD_BLOCK : NULL;
}

/* RAID6 left-symmetric over 5 disks, by md's picture for it: stripe s has P on disk
 * 4 - s%5, Q on the disk after P, and its three data chunks on the disks after Q. One
 * data member missing reads back through P alone (Q holds junk here: md's reading of a
 * single missing data chunk does not need it). */
static void test_raid6(void)
{
	enum { N6 = 5 };
	uint8_t *m6[N6];
	struct md_sb sbs[N6];
	bool have[N6];
	uint64_t bytes[N6];
	for (unsigned d = 0; d < N6; d++) {
		m6[d] = calloc(1, MBYTES);
		struct sbspec s = good(d);
		s.level = 6;
		s.disks = N6;
		for (unsigned i = 0; i < 8; i++)
			s.roles[i] = i < N6 ? (uint16_t)i : 0xffff;
		put_sb(m6[d] + MD_SB_OFFSET, &s);
		bytes[d] = MBYTES;
	}
	for (uint64_t st = 0; st < 16; st++) {
		unsigned pd = 4 - st % 5, qd = (pd + 1) % 5;
		for (unsigned off = 0; off < CB; off++) {
			uint8_t *p = m6[pd] + (uint64_t)DOFF * 512 + (st * CB + off) * MD_BLOCK;
			memset(m6[qd] + (uint64_t)DOFF * 512 + (st * CB + off) * MD_BLOCK, 0xee,
			       MD_BLOCK);
			for (unsigned k = 0; k < 3; k++) {
				uint64_t blk = (st * 3 + k) * CB + off;
				uint8_t *dst = m6[(pd + 2 + k) % 5] + (uint64_t)DOFF * 512 +
				               (st * CB + off) * MD_BLOCK;
				for (size_t i = 0; i < MD_BLOCK; i++) {
					dst[i] = pattern(blk, i);
					p[i] ^= dst[i];
				}
			}
		}
	}
	memset(m6[1], 0, MBYTES); /* member 1 missing */
	for (unsigned d = 0; d < N6; d++) {
		struct bo_err e2 = {{0}};
		have[d] = md_sb_parse(m6[d] + MD_SB_OFFSET, MD_SB_AREA, &sbs[d], &e2) == 0;
	}
	struct md_array a;
	struct bo_err err = {{0}};
	int rc = md_array_assemble(sbs, have, N6, bytes, &a, &err);
	ok(rc == 0 && a.level == 6 && a.nmissing == 1 && a.blocks == 16u * 3u * CB,
	   "RAID6 over 5 disks, member 1 missing, assembles %s", err.msg);
	unsigned wrong = rc == 0 ? read_all_via(&a, get_m6, m6) : 1;
	is_int(wrong, 0, "RAID6 degraded: every block reads right, member 1's rebuilt from P");
	for (unsigned d = 0; d < N6; d++)
		free(m6[d]);
}

/* ---- the hole check over a hand-made store ---- */

static char dir[64];

static void write_file(const char *name, const void *p, size_t len)
{
	char path[200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len)
		diag("cannot write %s", path);
	if (f)
		fclose(f);
}

/* A delta: the blocks (global 4 KiB indices, increasing) and their bytes. */
static void write_delta(size_t n, const uint64_t *idx, uint8_t *const *data, unsigned cnt)
{
	size_t len = 16 + (size_t)cnt * (8 + MD_BLOCK);
	uint8_t *b = malloc(len);
	memcpy(b, "BOSTATE1", 8);
	put_le32(b + 8, MD_BLOCK);
	put_le32(b + 12, cnt);
	for (unsigned i = 0; i < cnt; i++) {
		put_le64(b + 16 + i * (8 + MD_BLOCK), idx[i]);
		memcpy(b + 24 + i * (8 + MD_BLOCK), data[i], MD_BLOCK);
	}
	char name[32];
	snprintf(name, sizeof(name), "s%zu.delta", n);
	write_file(name, b, len);
	free(b);
}

/* The degraded array (member 0 zeros) as a store's base.img and members in a new
 * scratch dir; returns the base image (the caller frees it). */
static uint8_t *degraded_store(void)
{
	build_array();
	memset(mem[0], 0, MBYTES);
	uint8_t *base = malloc((size_t)NDEV * MBYTES);
	for (unsigned d = 0; d < NDEV; d++)
		memcpy(base + (size_t)d * MBYTES, mem[d], MBYTES);
	snprintf(dir, sizeof(dir), "/tmp/bo-mdview.XXXXXX");
	tap_require(mkdtemp(dir) != NULL, "a scratch directory");
	write_file("base.img", base, (size_t)NDEV * MBYTES);
	char members[200];
	int ml = snprintf(members, sizeof(members), "m0 0 %u\nm1 %u %u\nm2 %u %u\nm3 %u %u\n",
	                  MBYTES, MBYTES, MBYTES, 2 * MBYTES, MBYTES, 3 * MBYTES, MBYTES);
	write_file("members", members, (size_t)ml);
	return base;
}

static void test_hole(void)
{
	/* base: the degraded array (member 0 zeros); the run rewrites chunk 1's block 4
	 * (role 1, stripe 0) and stripe 0's P, then flushes every member */
	uint8_t *base = degraded_store();

	uint64_t mb = DOFF / 8 + 4; /* the row */
	uint8_t *d1 = malloc(MD_BLOCK), *p1 = malloc(MD_BLOCK), *d2 = malloc(MD_BLOCK);
	memcpy(d1, at(1, 0, 4), MD_BLOCK);
	memcpy(p1, at(3, 0, 4), MD_BLOCK);
	for (size_t i = 0; i < MD_BLOCK; i++) {
		uint8_t nw = (uint8_t)(d1[i] ^ 0xa5);
		p1[i] ^= d1[i] ^ nw; /* P follows the new data: the missing block is unchanged */
		d1[i] = nw;
	}
	uint64_t sizes[NDEV] = {MBYTES / 512, MBYTES / 512, MBYTES / 512, MBYTES / 512};
	struct rec_log *log = NULL;
	tap_require(rec_log_new_devices(512, NDEV, sizes, &log) == 0, "a log of 4 members");
	rec_log_mark(log, "step 0"); /* run entry 0 */
	struct rec_entry w = {.op = REC_WRITE, .lba = mb * 8, .count = 8, .data = d1, .dev = 1};
	rec_log_append(log, &w); /* 1 */
	w.data = p1;
	w.dev = 3;
	rec_log_append(log, &w); /* 2 */
	for (unsigned d = 1; d < NDEV; d++) {
		struct rec_entry f = {.op = REC_FLUSH, .dev = d};
		rec_log_append(log, &f); /* 3, 4, 5 */
	}
	/* a block of member 2 written twice, back to what it was (an epoch of its own), in
	 * stripe 3, whose P is the missing member's: nothing there is rebuilt */
	memcpy(d2, at(2, 3, 0), MD_BLOCK);
	d2[0] ^= 1;
	w = (struct rec_entry){
	    .op = REC_WRITE, .lba = (DOFF / 8 + 3 * CB) * 8, .count = 8, .data = d2, .dev = 2};
	rec_log_append(log, &w); /* 6 */
	d2[0] ^= 1;
	rec_log_append(log, &w); /* 7 */
	struct rec_entry f2 = {.op = REC_FLUSH, .dev = 2};
	rec_log_append(log, &f2); /* 8 */
	/* md writes role 0's chunk 4 (stripe 1, P on disk 2): only P changes */
	uint8_t *p4 = malloc(MD_BLOCK);
	memcpy(p4, at(2, 1, 2), MD_BLOCK);
	p4[7] ^= 0x3c;
	w = (struct rec_entry){
	    .op = REC_WRITE, .lba = (DOFF / 8 + CB + 2) * 8, .count = 8, .data = p4, .dev = 2};
	rec_log_append(log, &w);  /* 9 */
	rec_log_append(log, &f2); /* 10 */
	/* chunk 6 (stripe 2, disk 2; P on disk 1, role 0 holds chunk 8) rewritten with FUA
	 * writes of data and P: durable at once, but a cut between them is the hole */
	uint8_t *d6 = malloc(MD_BLOCK), *p6 = malloc(MD_BLOCK);
	memcpy(d6, at(2, 2, 1), MD_BLOCK);
	memcpy(p6, at(1, 2, 1), MD_BLOCK);
	for (size_t i = 0; i < MD_BLOCK; i++) {
		d6[i] ^= 0x11;
		p6[i] ^= 0x11;
	}
	w = (struct rec_entry){.op = REC_WRITE,
	                       .flags = BLK_FUA,
	                       .lba = (DOFF / 8 + 2 * CB + 1) * 8,
	                       .count = 8,
	                       .data = d6,
	                       .dev = 2};
	rec_log_append(log, &w); /* 11 */
	w.data = p6;
	w.dev = 1;
	rec_log_append(log, &w); /* 12 */
	for (unsigned d = 1; d < NDEV; d++) {
		struct rec_entry f = {.op = REC_FLUSH, .dev = d};
		rec_log_append(log, &f); /* 13, 14, 15 */
	}
	rec_log_mark(log, "end");

	uint64_t g1 = MBYTES / MD_BLOCK + mb, g3 = 3 * (MBYTES / MD_BLOCK) + mb;
	uint64_t g2 = 2 * (MBYTES / MD_BLOCK) + DOFF / 8 + 3 * CB;
	uint8_t *mid = malloc(MD_BLOCK);
	memcpy(mid, at(2, 3, 0), MD_BLOCK);
	mid[0] ^= 1;
	uint64_t i1[] = {g1}, i3[] = {g3}, i13[] = {g1, g3}, i2[] = {g1, g2, g3};
	uint8_t *b1[] = {d1}, *b3[] = {p1}, *b13[] = {d1, p1}, *b2[] = {d1, mid, p1};
	write_delta(0, NULL, NULL, 0); /* p0-0: before the run */
	write_delta(1, i1, b1, 1);     /* p3-0: data landed, P not */
	write_delta(2, i13, b13, 2);   /* p3-1: both */
	write_delta(3, i3, b3, 1);     /* p3-2: P landed, data not */
	write_delta(4, i2, b2, 3);     /* p7-0: member 2's block in its middle value */
	uint64_t i5[] = {g1, 2 * (MBYTES / MD_BLOCK) + DOFF / 8 + CB + 2, g3};
	uint8_t *b5[] = {d1, p4, p1};
	write_delta(5, i5, b5, 3); /* p10-0: the new P of a block md wrote: it reads new */
	uint64_t i6[] = {g1, 2 * (MBYTES / MD_BLOCK) + DOFF / 8 + CB + 2,
	                 2 * (MBYTES / MD_BLOCK) + DOFF / 8 + 2 * CB + 1, g3};
	uint8_t *b6[] = {d1, p4, d6, p1};
	write_delta(6, i6, b6, 4); /* p12-0: chunk 6's FUA data landed, its P not issued */
	const char *index = "s0 p0-0 0\ns1 p3-0 0\ns2 p3-1 0\ns3 p3-2 0\ns4 p7-0 0\ns5 p10-0 "
	                    "0\ns6 p12-0 0\n";
	write_file("index", index, strlen(index));

	struct md_hole_result r;
	struct bo_err err = {{0}};
	char lp[120];
	snprintf(lp, sizeof(lp), "%s/list", dir);
	FILE *lf = fopen(lp, "w");
	int rc = md_hole_check(dir, log, lf, &r, &err);
	fclose(lf);
	ok(rc == 0 && r.states == 7 && r.unread == 0, "the store's 7 states read (%d) %s", rc,
	   err.msg);
	ok(strstr(r.array, "RAID5 left-symmetric, 4 members, 64 KiB chunks, role 0 missing") !=
	       NULL,
	   "the array named: %s", r.array);
	is_int(r.hole_states, 3, "the hole in the states where data and P landed apart");
	is_int((int)r.hole_blocks, 3, "one block each: role 0's at the written row");
	ok(r.nex == 3 && r.ex[0].state == 1 && r.ex[1].state == 3 && r.ex[0].role == 0 &&
	       r.ex[0].missing && r.ex[0].stripe == 0 && r.ex[0].block == 4,
	   "in s1 and s3, md block 4 (role 0, missing, stripe 0)");
	ok(r.nex == 3 && r.ex[2].state == 6 && r.ex[2].block == 8 * CB + 1 && r.ex[2].stripe == 2,
	   "and in s6, where a FUA data write landed and its FUA P was not yet issued: md "
	   "block %llu (chunk 8, stripe 2)",
	   r.nex == 3 ? (unsigned long long)r.ex[2].block : 0ULL);
	ok(r.unchanged > 0, "%llu block readings were unchanged in their epoch",
	   (unsigned long long)r.unchanged);

	/* a superblock torn in a state: that state is not read, and says why */
	uint8_t *sb = malloc(MD_BLOCK);
	memcpy(sb, base + MBYTES + MD_SB_OFFSET, MD_BLOCK);
	sb[100] ^= 1; /* inside the checksummed 256 bytes */
	uint64_t isb[] = {MBYTES / MD_BLOCK + 1};
	uint8_t *bsb[] = {sb};
	write_delta(4, isb, bsb, 1);
	rc = md_hole_check(dir, log, NULL, &r, &err);
	ok(rc == 0 && r.unread == 1 && strstr(r.first_unread, "s4 p7-0: member m1") &&
	       strstr(r.first_unread, "checksum"),
	   "a state whose member's superblock is damaged is not read: %s", r.first_unread);

	/* the array at the log's end */
	char img[120];
	snprintf(img, sizeof(img), "%s/array.img", dir);
	ok(md_hole_array_image(dir, log, img, &err) == 0, "the array image is written %s", err.msg);
	FILE *f = fopen(img, "rb");
	uint8_t *blk = malloc(MD_BLOCK);
	bool same = f && fseek(f, (long)(1 * CB + 4) * MD_BLOCK, SEEK_SET) == 0 &&
	            fread(blk, 1, MD_BLOCK, f) == MD_BLOCK && memcmp(blk, d1, MD_BLOCK) == 0;
	same = same && fseek(f, (long)4 * MD_BLOCK, SEEK_SET) == 0 &&
	       fread(blk, 1, MD_BLOCK, f) == MD_BLOCK && blk[9] == pattern(4, 9);
	if (f)
		fclose(f);
	ok(same, "it holds the new data and role 0's block rebuilt unchanged");

	write_file("index", "s0 q1 0\n", 8);
	ok(md_hole_check(dir, log, NULL, &r, &err) == -EINVAL && strstr(err.msg, "index"),
	   "a bad index line is refused: %s", err.msg);
	write_file("members", "m0 0 4096\n", 10);
	ok(md_hole_check(dir, log, NULL, &r, &err) == -EINVAL && strstr(err.msg, "members"),
	   "members that are not the log's devices are refused: %s", err.msg);
	rec_log_free(log);
	free(base);
	free(d1);
	free(p1);
	free(d2);
	free(mid);
	free(p4);
	free(d6);
	free(p6);
	free(sb);
	free(blk);
	char cmd[120];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
}

/* One block rewritten many times in one epoch (as md's journal and ext4's rewrite
 * theirs): the epoch's written blocks, repeats and all, outnumber the distinct blocks
 * the run touches, and the reader must still hold them (under ASan an overflow here
 * aborts; it did once, reading a journal recording). */
static void test_hole_rewrites(void)
{
	enum { NREWRITE = 12 };
	uint8_t *base = degraded_store();
	uint64_t mb = DOFF / 8 + 4;
	uint8_t *d1 = malloc(MD_BLOCK);
	memcpy(d1, at(1, 0, 4), MD_BLOCK);
	uint64_t sizes[NDEV] = {MBYTES / 512, MBYTES / 512, MBYTES / 512, MBYTES / 512};
	struct rec_log *log = NULL;
	tap_require(rec_log_new_devices(512, NDEV, sizes, &log) == 0, "a log of 4 members");
	rec_log_mark(log, "step 0"); /* 0 */
	struct rec_entry w = {.op = REC_WRITE, .lba = mb * 8, .count = 8, .data = d1, .dev = 1};
	for (int i = 0; i < NREWRITE; i++) { /* 1 .. NREWRITE, no flush between */
		d1[0] = (uint8_t)(i + 1);
		rec_log_append(log, &w);
	}
	for (unsigned d = 1; d < NDEV; d++) {
		struct rec_entry f = {.op = REC_FLUSH, .dev = d};
		rec_log_append(log, &f);
	}
	rec_log_mark(log, "end");
	uint64_t g1 = MBYTES / MD_BLOCK + mb;
	uint64_t i1[] = {g1};
	uint8_t *b1[] = {d1};
	write_delta(0, NULL, NULL, 0); /* before the run */
	write_delta(1, i1, b1, 1);     /* every rewrite issued, the last one landed */
	char index[64];
	int il = snprintf(index, sizeof(index), "s0 p0-0 0\ns1 p%d-0 0\n", NREWRITE);
	write_file("index", index, (size_t)il);
	struct md_hole_result r;
	struct bo_err err = {{0}};
	int rc = md_hole_check(dir, log, NULL, &r, &err);
	ok(rc == 0 && r.states == 2 && r.unread == 0,
	   "a block written %d times in one epoch: both states read (%d) %s", NREWRITE, rc,
	   err.msg);
	rec_log_free(log);
	free(base);
	free(d1);
	char cmd[120];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
}

/* ---- md's write journal ---- */

struct jget {
	const struct md_replay *rp;
};

static const uint8_t *get_replayed(void *ctx, unsigned dev, uint64_t mblock)
{
	struct jget *g = ctx;
	const uint8_t *p = g->rp ? md_replay_find(g->rp, dev, mblock) : NULL;
	if (p)
		return p;
	return dev <= NDEV && mblock < MBYTES / MD_BLOCK ? mem[dev] + mblock * MD_BLOCK : NULL;
}

/* A meta block at log sector pos (seq) with one data page (array block ab) and stripe
 * row's P, the two pages after it; crc32c seeded with the uuid's as md's r5l does. */
static void put_log(uint64_t pos, uint64_t seq, uint64_t ab, uint64_t row, const uint8_t *d,
                    const uint8_t *p)
{
	uint8_t *lg = mem[NDEV] + (uint64_t)DOFF * 512;
	uint8_t uuid[16];
	memset(uuid, 0x5a, 16);
	uint32_t seed = crc32c_raw(~0u, uuid, 16);
	uint8_t *mb = lg + pos * 512;
	memset(mb, 0, MD_BLOCK);
	put_le32(mb, 0x6433c509);
	mb[8] = 1;
	put_le32(mb + 12, 32 + 20 + 20);
	put_le64(mb + 16, seq);
	put_le64(mb + 24, pos);
	put_le16(mb + 32, 0); /* data */
	put_le32(mb + 36, 8);
	put_le64(mb + 40, ab * 8);
	put_le32(mb + 48, crc32c_raw(seed, d, MD_BLOCK));
	put_le16(mb + 52, 1); /* parity */
	put_le32(mb + 56, 8);
	put_le64(mb + 60, row * 8);
	put_le32(mb + 68, crc32c_raw(seed, p, MD_BLOCK));
	put_le32(mb + 4, crc32c_raw(seed, mb, MD_BLOCK));
	memcpy(mb + MD_BLOCK, d, MD_BLOCK);
	memcpy(mb + 2 * MD_BLOCK, p, MD_BLOCK);
}

static void test_journal(void)
{
	build_array();
	mem[NDEV] = calloc(1, MBYTES);
	for (unsigned d = 0; d <= NDEV; d++) {
		struct sbspec s = good(d);
		s.feature = MD_FEATURE_JOURNAL;
		s.roles[NDEV] = MD_ROLE_JOURNAL;
		s.jtail = 0;
		put_sb(mem[d] + MD_SB_OFFSET, &s);
	}
	memset(mem[0], 0, MBYTES); /* member 0 missing */
	struct md_sb sbs[NDEV + 1];
	bool have[NDEV + 1];
	uint64_t bytes[NDEV + 1];
	for (unsigned d = 0; d <= NDEV; d++) {
		struct bo_err e2 = {{0}};
		have[d] = md_sb_parse(mem[d] + MD_SB_OFFSET, MD_SB_AREA, &sbs[d], &e2) == 0;
		bytes[d] = MBYTES;
	}
	struct md_array a;
	struct bo_err err = {{0}};
	ok(md_array_assemble(sbs, have, NDEV, bytes, &a, &err) == -EINVAL &&
	       strstr(err.msg, "no member holds it"),
	   "an array with a journal and no journal device is refused: %s", err.msg);
	memset(&err, 0, sizeof(err));
	int rc = md_array_assemble(sbs, have, NDEV + 1, bytes, &a, &err);
	tap_require(rc == 0 && a.journal_dev == NDEV,
	            "the array assembles with its journal on m4 %s", err.msg);
	/* md logged new data for chunk 1's block 4 (role 1) and the stripe's new P; the
	 * data reached member 1, the P did not: the hole, unless the journal is replayed */
	uint8_t *d1 = malloc(MD_BLOCK), *p1 = malloc(MD_BLOCK), *out = malloc(MD_BLOCK);
	memcpy(p1, at(3, 0, 4), MD_BLOCK);
	for (size_t i = 0; i < MD_BLOCK; i++) {
		d1[i] = (uint8_t)(at(1, 0, 4)[i] ^ 0x77);
		p1[i] ^= 0x77;
	}
	memcpy(at(1, 0, 4), d1, MD_BLOCK);
	put_log(0, 41, CB + 4, 4, d1, p1);
	struct jget g = {NULL};
	ok(md_read_block(&a, 4, get_replayed, &g, out) == 0 && out[0] != pattern(4, 0),
	   "without the journal, md block 4 (role 0, rebuilt) reads wrong");
	struct md_replay rp;
	rc = md_journal_replay(&a, get_replayed, &g, &rp, &err);
	ok(rc == 0 && rp.metas == 1 && rp.stripes == 1 && rp.data_only == 0,
	   "the journal's meta block is read and its stripe replayed (%u metas, %u stripes) %s",
	   rp.metas, rp.stripes, err.msg);
	g.rp = &rp;
	bool right = md_read_block(&a, 4, get_replayed, &g, out) == 0;
	for (size_t i = 0; right && i < MD_BLOCK; i++)
		right = out[i] == pattern(4, i);
	ok(right, "replayed, md block 4 reads right: the journal closed the hole");
	md_replay_free(&rp);
	g.rp = NULL;

	uint8_t *lg = mem[NDEV] + (uint64_t)DOFF * 512;
	lg[2 * MD_BLOCK + 9] ^= 1; /* the logged P page */
	ok(md_journal_replay(&a, get_replayed, &g, &rp, &err) == 0 && rp.metas == 0 &&
	       rp.stripes == 0 && strstr(rp.end, "payload page's checksum"),
	   "a logged page that fails its checksum ends the log there: %s", rp.end);
	md_replay_free(&rp);
	put_log(0, 41, CB + 4, 4, d1, p1);
	put_log(24, 43, CB + 5, 5, d1, p1); /* seq 43 where 42 is due */
	ok(md_journal_replay(&a, get_replayed, &g, &rp, &err) == 0 && rp.metas == 1 &&
	       strstr(rp.end, "out of sequence"),
	   "a meta block out of sequence ends the log: %s", rp.end);
	md_replay_free(&rp);
	/* a flush payload whose size wraps 8 + size to 0: the walk over the meta block's
	 * payloads stood still on it (found by fuzz_md_journal); the alarm turns a hang
	 * into this binary's death, a failure prove reports */
	uint8_t *mb = lg;
	uint8_t uuid[16];
	memset(uuid, 0x5a, 16);
	put_le32(mb + 12, 32 + 8);
	put_le16(mb + 32, 2); /* flush */
	put_le32(mb + 36, 0xfffffff8u);
	put_le32(mb + 4, 0);
	put_le32(mb + 4, crc32c_raw(crc32c_raw(~0u, uuid, 16), mb, MD_BLOCK));
	alarm(20);
	rc = md_journal_replay(&a, get_replayed, &g, &rp, &err);
	alarm(0);
	ok(rc == 0 && rp.metas == 0 && strstr(rp.end, "payload header"),
	   "a flush payload whose size runs past its meta block ends the log: %s", rp.end);
	md_replay_free(&rp);
	struct sbspec s = good(NDEV);
	s.feature = MD_FEATURE_JOURNAL;
	s.roles[NDEV] = MD_ROLE_JOURNAL;
	s.jtail = 1 << 20;
	put_sb(mem[NDEV] + MD_SB_OFFSET, &s);
	ok(md_journal_replay(&a, get_replayed, &g, &rp, &err) == -EINVAL &&
	       strstr(err.msg, "tail 1048576 outside its log"),
	   "a tail outside the journal is refused: %s", err.msg);
	free(d1);
	free(p1);
	free(out);
	for (unsigned d = 0; d <= NDEV; d++) {
		free(mem[d]);
		mem[d] = NULL;
	}
}

int main(void)
{
	test_parser();
	test_layout();
	for (unsigned d = 0; d < NDEV; d++)
		free(mem[d]);
	test_hole();
	for (unsigned d = 0; d < NDEV; d++)
		free(mem[d]);
	test_hole_rewrites();
	for (unsigned d = 0; d < NDEV; d++)
		free(mem[d]);
	test_raid6();
	test_journal();
	return tap_done();
}
