// SPDX-License-Identifier: GPL-2.0-or-later
/* md/view.c — Linux md's array read from its members' bytes, as md would read it after
 * assembly: the superblock 1.2 (md_p.h's mdp_superblock_1), checked field by field,
 * and RAID4/5/6 blocks mapped through md's layout (raid5_compute_sector, shared with
 * the RAID model in src/dev/raid_layout.c), a missing member's block rebuilt as the XOR
 * of its stripe's other data and P. md's write journal is md/journal.c's; PPL is
 * refused. */
#include <errno.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/md_view.h"

/* The kernel's calc_sb_1_csum: a 64-bit sum of the little-endian words up to the
 * dev_roles table's end (sb_csum counted as zero), its halves folded into 32 bits. */
static uint32_t sb_csum(const uint8_t *b, size_t size)
{
	uint64_t sum = 0;
	size_t i = 0;
	for (; i + 4 <= size; i += 4)
		sum += i == 216 ? 0 : get_le32(b + i);
	if (size - i == 2)
		sum += get_le16(b + i);
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

static const char *level_name(int32_t l)
{
	switch (l) {
	case -4: return "multipath";
	case -1: return "linear";
	case 0: return "RAID0";
	case 1: return "RAID1";
	case 10: return "RAID10";
	default: return "an unknown level";
	}
}

/* What the layout reader relies on, each refusal named. */
static int check_fields(const struct md_sb *sb, uint64_t super_offset, uint32_t max_dev,
                        struct bo_err *err)
{
	const uint32_t known = MD_FEATURE_BITMAP_OFFSET | MD_FEATURE_RECOVERY_OFFSET |
	                       MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_BAD_BLOCKS |
	                       MD_FEATURE_JOURNAL | MD_FEATURE_PPL;
	if (super_offset != MD_SB_OFFSET / 512)
		return bo_errf(err, -EINVAL,
		               "md superblock: super_offset %llu sectors, not 8 (only metadata 1.2 "
		               "is read)",
		               (unsigned long long)super_offset);
	if (sb->level != 4 && sb->level != 5 && sb->level != 6)
		return bo_errf(err, -EINVAL,
		               "md superblock: level %d (%s): only RAID4/5/6 are read", sb->level,
		               level_name(sb->level));
	if (sb->feature_map & ~known)
		return bo_errf(err, -EINVAL, "md superblock: unknown feature bits 0x%x",
		               sb->feature_map & ~known);
	if (sb->feature_map & MD_FEATURE_PPL)
		return bo_errf(err, -EINVAL,
		               "md superblock: the array has a partial parity log; md rewrites "
		               "parity from it at assembly and this reader does not");
	if (sb->feature_map & (MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_RECOVERY_OFFSET))
		return bo_errf(err, -EINVAL,
		               "md superblock: a reshape or a member's recovery is in progress");
	if (sb->feature_map & MD_FEATURE_BAD_BLOCKS)
		return bo_errf(err, -EINVAL, "md superblock: the member has a bad-block list");
	if (sb->level != 4 && sb->layout != RAID_LEFT_ASYMMETRIC &&
	    sb->layout != RAID_RIGHT_ASYMMETRIC && sb->layout != RAID_LEFT_SYMMETRIC &&
	    sb->layout != RAID_RIGHT_SYMMETRIC && sb->layout != RAID_PARITY_N)
		return bo_errf(err, -EINVAL, "md superblock: layout %u is not one this reader maps",
		               sb->layout);
	uint32_t c = sb->chunk_sectors;
	if (c < MD_BLOCK / 512 || c > (1u << 21) || (c & (c - 1)))
		return bo_errf(err, -EINVAL,
		               "md superblock: chunk of %u sectors (a power of two from 8 to 2^21 "
		               "is read)",
		               c);
	unsigned min = sb->level == 6 ? 4 : 3;
	if (sb->raid_disks < min || sb->raid_disks > RAID_MAX_MEMBERS)
		return bo_errf(err, -EINVAL, "md superblock: raid_disks %u (RAID%d: %u to %u)",
		               sb->raid_disks, sb->level, min, RAID_MAX_MEMBERS);
	if (sb->data_offset < 2 * MD_SB_OFFSET / 512 || sb->data_offset % (MD_BLOCK / 512) ||
	    sb->data_offset > (1ull << 40))
		return bo_errf(err, -EINVAL,
		               "md superblock: data_offset %llu sectors (past the superblock, "
		               "4 KiB aligned)",
		               (unsigned long long)sb->data_offset);
	/* a journal device may be smaller than the members whose size the array uses */
	if ((sb->size > sb->data_size && sb->role != MD_ROLE_JOURNAL) ||
	    sb->data_size > (1ull << 40))
		return bo_errf(err, -EINVAL,
		               "md superblock: size %llu sectors larger than data_size %llu",
		               (unsigned long long)sb->size, (unsigned long long)sb->data_size);
	if (sb->dev_number >= max_dev)
		return bo_errf(err, -EINVAL, "md superblock: dev_number %u outside max_dev %u",
		               sb->dev_number, max_dev);
	if (sb->role >= sb->raid_disks && sb->role != MD_ROLE_SPARE && sb->role != MD_ROLE_FAULTY &&
	    sb->role != MD_ROLE_JOURNAL)
		return bo_errf(err, -EINVAL, "md superblock: role 0x%x of %u raid disks", sb->role,
		               sb->raid_disks);
	return 0;
}

int md_sb_parse(const uint8_t *b, size_t len, struct md_sb *sb, struct bo_err *err)
{
	memset(sb, 0, sizeof(*sb));
	if (len < 256)
		return bo_errf(err, -EINVAL, "md superblock: %zu bytes, not the 256 it needs", len);
	if (get_le32(b) != MD_SB_MAGIC)
		return bo_errf(err, -ENODATA, "no md superblock (magic 0x%08x)", get_le32(b));
	if (get_le32(b + 4) != 1)
		return bo_errf(err, -EINVAL, "md superblock: major_version %u, not 1",
		               get_le32(b + 4));
	uint32_t max_dev = get_le32(b + 220);
	if (max_dev > MD_SB_MAX_DEV || 256 + (size_t)max_dev * 2 > len)
		return bo_errf(err, -EINVAL,
		               "md superblock: max_dev %u (its table would end past byte %zu)",
		               max_dev, len);
	uint32_t want = sb_csum(b, 256 + (size_t)max_dev * 2), have = get_le32(b + 216);
	if (want != have)
		return bo_errf(err, -EINVAL,
		               "md superblock: checksum 0x%08x, the bytes give 0x%08x (torn or "
		               "damaged)",
		               have, want);
	memcpy(sb->set_uuid, b + 16, 16);
	sb->feature_map = get_le32(b + 8);
	sb->level = (int32_t)get_le32(b + 72);
	sb->layout = get_le32(b + 76);
	sb->size = get_le64(b + 80);
	sb->chunk_sectors = get_le32(b + 88);
	sb->raid_disks = get_le32(b + 92);
	sb->data_offset = get_le64(b + 128);
	sb->data_size = get_le64(b + 136);
	sb->dev_number = get_le32(b + 160);
	sb->events = get_le64(b + 200);
	sb->journal_tail = get_le64(b + 152);
	sb->role = sb->dev_number < max_dev ? get_le16(b + 256 + 2 * (size_t)sb->dev_number)
	                                    : MD_ROLE_SPARE;
	int rc = check_fields(sb, get_le64(b + 144), max_dev, err);
	if (rc)
		memset(sb, 0, sizeof(*sb));
	return rc;
}

static unsigned data_disks(const struct md_array *a)
{
	return a->level == 6 ? a->n - 2 : a->n - 1;
}

/* The members agree on the array, hold distinct roles, and are large enough. */
static int check_member(const struct md_sb *r, const struct md_sb *s, unsigned d, uint64_t bytes,
                        struct bo_err *err)
{
	if (memcmp(r->set_uuid, s->set_uuid, 16) || r->level != s->level ||
	    r->layout != s->layout || r->chunk_sectors != s->chunk_sectors ||
	    r->raid_disks != s->raid_disks || r->size != s->size)
		return bo_errf(err, -EINVAL,
		               "md: member m%u's superblock describes another array than the "
		               "first member's",
		               d);
	if (s->data_offset != r->data_offset)
		return bo_errf(err, -EINVAL,
		               "md: member m%u's data starts at sector %llu, another's at %llu (a "
		               "data offset per member is not read)",
		               d, (unsigned long long)s->data_offset,
		               (unsigned long long)r->data_offset);
	if ((s->data_offset + s->size) * 512 > bytes)
		return bo_errf(err, -EINVAL,
		               "md: member m%u is %llu bytes; its superblock puts data up to %llu",
		               d, (unsigned long long)bytes,
		               (unsigned long long)((s->data_offset + s->size) * 512));
	return 0;
}

int md_array_assemble(const struct md_sb *sbs, const bool *have, unsigned ndev,
                      const uint64_t *dev_bytes, struct md_array *a, struct bo_err *err)
{
	memset(a, 0, sizeof(*a));
	if (ndev > 64)
		return bo_errf(err, -EINVAL, "md: %u devices, at most 64", ndev);
	const struct md_sb *r = NULL;
	a->journal_dev = -1;
	for (unsigned d = 0; d < ndev; d++) {
		a->role_of_dev[d] = -1;
		if (have[d] && !r && sbs[d].role != MD_ROLE_JOURNAL)
			r = &sbs[d];
	}
	if (!r)
		return bo_errf(err, -ENODATA, "md: no member carries an md superblock");
	a->level = (unsigned)r->level;
	a->n = r->raid_disks;
	a->layout = a->level == 4 ? RAID_PARITY_N : (enum raid_layout)r->layout;
	a->chunk = r->chunk_sectors * 512;
	a->data_offset = r->data_offset * 512;
	a->stripes = r->size / r->chunk_sectors;
	a->blocks = a->stripes * data_disks(a) * (a->chunk / MD_BLOCK);
	for (unsigned i = 0; i < RAID_MAX_MEMBERS; i++)
		a->dev_of_role[i] = -1;
	memcpy(a->uuid, r->set_uuid, 16);
	for (unsigned d = 0; d < ndev; d++) {
		if (!have[d])
			continue;
		if (sbs[d].role == MD_ROLE_JOURNAL) {
			if (a->journal_dev >= 0 || memcmp(sbs[d].set_uuid, r->set_uuid, 16) ||
			    !(r->feature_map & MD_FEATURE_JOURNAL))
				return bo_errf(
				    err, -EINVAL,
				    "md: member m%u is a write journal the array does not "
				    "have (or a second one)",
				    d);
			a->journal_dev = (int)d;
			continue;
		}
		int rc = check_member(r, &sbs[d], d, dev_bytes[d], err);
		if (rc)
			return rc;
		if (sbs[d].events > a->events)
			a->events = sbs[d].events;
		uint32_t role = sbs[d].role;
		if (role >= a->n)
			continue; /* a spare, faulty or journal device holds no data */
		if (a->dev_of_role[role] >= 0)
			return bo_errf(err, -EINVAL, "md: members m%d and m%u both claim role %u",
			               a->dev_of_role[role], d, role);
		a->dev_of_role[role] = (int)d;
		a->role_of_dev[d] = (int)role;
	}
	for (unsigned i = 0; i < a->n; i++)
		a->nmissing += a->dev_of_role[i] < 0;
	if ((r->feature_map & MD_FEATURE_JOURNAL) && a->journal_dev < 0)
		return bo_errf(err, -EINVAL,
		               "md: the array has a write journal and no member holds it");
	unsigned tolerable = a->level == 6 ? 2 : 1;
	if (a->nmissing > tolerable)
		return bo_errf(err, -EINVAL, "md: %u of %u roles missing, RAID%u survives %u",
		               a->nmissing, a->n, a->level, tolerable);
	return 0;
}

int md_block_where(const struct md_array *a, uint64_t b, unsigned *role, uint64_t *stripe,
                   uint64_t *mblock)
{
	if (b >= a->blocks)
		return -ERANGE;
	uint64_t cb = a->chunk / MD_BLOCK;
	int rc = raid_map_chunk(a->level, a->layout, a->n, b / cb, role, stripe);
	if (rc)
		return rc;
	*mblock = a->data_offset / MD_BLOCK + *stripe * cb + b % cb;
	return 0;
}

int md_row_blocks(const struct md_array *a, uint64_t mblock, uint64_t *out, unsigned *n)
{
	uint64_t cb = a->chunk / MD_BLOCK, d0 = a->data_offset / MD_BLOCK;
	*n = 0;
	if (mblock < d0 || mblock - d0 >= a->stripes * cb)
		return 0;
	uint64_t stripe = (mblock - d0) / cb, off = (mblock - d0) % cb;
	unsigned k = data_disks(a);
	for (unsigned dd = 0; dd < k; dd++)
		out[(*n)++] = ((stripe * k + dd) * cb) + off;
	return 0;
}

int md_read_block(const struct md_array *a, uint64_t b, md_get_fn get, void *ctx,
                  uint8_t out[MD_BLOCK])
{
	unsigned role;
	uint64_t stripe, mblock;
	int rc = md_block_where(a, b, &role, &stripe, &mblock);
	if (rc)
		return rc;
	if (a->dev_of_role[role] >= 0) {
		const uint8_t *p = get(ctx, (unsigned)a->dev_of_role[role], mblock);
		if (!p)
			return -EIO;
		memcpy(out, p, MD_BLOCK);
		return 0;
	}
	/* md rebuilds it from the stripe: P is the XOR of the data, Q takes no part */
	int pd, qd;
	if ((rc = raid_parity_members(a->level, a->layout, a->n, stripe, &pd, &qd)))
		return rc;
	memset(out, 0, MD_BLOCK);
	for (unsigned r = 0; r < a->n; r++) {
		if (r == role || (int)r == qd)
			continue;
		if (a->dev_of_role[r] < 0)
			return -EIO;
		const uint8_t *p = get(ctx, (unsigned)a->dev_of_role[r], mblock);
		if (!p)
			return -EIO;
		for (size_t i = 0; i < MD_BLOCK; i += 8) {
			uint64_t x, y;
			memcpy(&x, out + i, 8);
			memcpy(&y, p + i, 8);
			x ^= y;
			memcpy(out + i, &x, 8);
		}
	}
	return 0;
}
