// SPDX-License-Identifier: GPL-2.0-or-later
/* format.c — the JBD2 on-disk format: superblock decoding and checks, the v1
 * crc32_be commit checksum and the v2/v3 crc32c checksums, the block-keyed map.
 * Nothing here does I/O. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "blackout/util.h"
#include "jbd/jbd_int.h"

uint32_t jbd_crc32_be(uint32_t crc, const void *buf, size_t len)
{
	/* MSB-first, four bits at a time: the v1 checksum is an old option, not a
	 * hot path, so a 16-entry table is enough. */
	static const uint32_t t[16] = {
	    0x00000000, 0x04c11db7, 0x09823b6e, 0x0d4326d9, 0x130476dc, 0x17c56b6b,
	    0x1a864db2, 0x1e475005, 0x2608edb8, 0x22c9f00f, 0x2f8ad6d6, 0x2b4bcb61,
	    0x350c9b64, 0x31cd86d3, 0x3c8ea00a, 0x384fbdbd,
	};
	const uint8_t *p = buf;
	for (size_t i = 0; i < len; i++) {
		crc ^= (uint32_t)p[i] << 24;
		crc = (crc << 4) ^ t[crc >> 28];
		crc = (crc << 4) ^ t[crc >> 28];
	}
	return crc;
}

uint32_t jbd_sb_csum(const uint8_t *sbbuf)
{
	uint8_t tmp[JBD_SB_SIZE];
	memcpy(tmp, sbbuf, JBD_SB_SIZE);
	put_be32(tmp + JBD_SB_CHECKSUM, 0);
	return crc32c_raw(~0u, tmp, JBD_SB_SIZE);
}

int jbd_sb_parse(const uint8_t *b, uint32_t block_size, uint64_t nr_blocks, struct jbd_sb *sb,
                 struct bo_err *err)
{
	memset(sb, 0, sizeof(*sb));
	if (get_be32(b) != JBD_MAGIC)
		return bo_errf(err, -EUCLEAN, "journal superblock: bad magic 0x%08x", get_be32(b));
	sb->blocktype = get_be32(b + 4);
	if (sb->blocktype != JBD_SUPERBLOCK_V1 && sb->blocktype != JBD_SUPERBLOCK_V2)
		return bo_errf(err, -EUCLEAN,
		               "journal superblock: block type %u is not a superblock",
		               sb->blocktype);
	sb->block_size = get_be32(b + JBD_SB_BLOCKSIZE);
	sb->maxlen = get_be32(b + JBD_SB_MAXLEN);
	sb->first = get_be32(b + JBD_SB_FIRST);
	sb->sequence = get_be32(b + JBD_SB_SEQUENCE);
	sb->start = get_be32(b + JBD_SB_START);
	sb->errno_ = (int32_t)get_be32(b + JBD_SB_ERRNO);
	if (block_size && sb->block_size != block_size)
		return bo_errf(err, -EUCLEAN, "journal superblock: block size %u, expected %u",
		               sb->block_size, block_size);
	if (sb->block_size < 1024 || sb->block_size > 65536 ||
	    (sb->block_size & (sb->block_size - 1)))
		return bo_errf(err, -EUCLEAN, "journal superblock: bad block size %u",
		               sb->block_size);
	if (sb->maxlen < 2 || (nr_blocks && sb->maxlen > nr_blocks))
		return bo_errf(
		    err, -EUCLEAN,
		    "journal superblock: s_maxlen %u out of range (journal has %llu blocks)",
		    sb->maxlen, (unsigned long long)nr_blocks);
	if (sb->first < 1 || sb->first >= sb->maxlen)
		return bo_errf(err, -EUCLEAN, "journal superblock: s_first %u out of range [1, %u)",
		               sb->first, sb->maxlen);
	if (sb->start && (sb->start < sb->first || sb->start >= sb->maxlen))
		return bo_errf(err, -EUCLEAN,
		               "journal superblock: s_start %u out of range [%u, %u)", sb->start,
		               sb->first, sb->maxlen);
	if (sb->blocktype == JBD_SUPERBLOCK_V2) {
		sb->compat = get_be32(b + JBD_SB_FEATURE_COMPAT);
		sb->incompat = get_be32(b + JBD_SB_FEATURE_INCOMPAT);
		sb->ro_compat = get_be32(b + JBD_SB_FEATURE_RO_COMPAT);
		memcpy(sb->uuid, b + JBD_SB_UUID, 16);
		sb->checksum_type = b[JBD_SB_CHECKSUM_TYPE];
	}
	uint32_t known = JBD_FEATURE_INCOMPAT_REVOKE | JBD_FEATURE_INCOMPAT_64BIT |
	                 JBD_FEATURE_INCOMPAT_ASYNC_COMMIT | JBD_FEATURE_INCOMPAT_CSUM_V2 |
	                 JBD_FEATURE_INCOMPAT_CSUM_V3 | JBD_FEATURE_INCOMPAT_FAST_COMMIT;
	if (sb->incompat & ~known)
		return bo_errf(err, -EOPNOTSUPP,
		               "journal superblock: unknown incompat features 0x%x",
		               sb->incompat & ~known);
	if ((sb->incompat & JBD_FEATURE_INCOMPAT_FAST_COMMIT) && get_be32(b + JBD_SB_NUM_FC_BLKS))
		return bo_errf(err, -EOPNOTSUPP,
		               "journal superblock: fast commit area not supported");
	if ((sb->incompat & JBD_FEATURE_INCOMPAT_CSUM_V2) &&
	    (sb->incompat & JBD_FEATURE_INCOMPAT_CSUM_V3))
		return bo_errf(err, -EUCLEAN, "journal superblock: both checksum v2 and v3 set");
	if (sb->incompat & (JBD_FEATURE_INCOMPAT_CSUM_V2 | JBD_FEATURE_INCOMPAT_CSUM_V3)) {
		if (sb->checksum_type != JBD_CRC32C_CHKSUM)
			return bo_errf(err, -EUCLEAN,
			               "journal superblock: checksum type %u is not crc32c",
			               sb->checksum_type);
		uint32_t want = get_be32(b + JBD_SB_CHECKSUM), got = jbd_sb_csum(b);
		if (want != got)
			return bo_errf(err, -EUCLEAN,
			               "journal superblock: checksum 0x%08x, computed 0x%08x", want,
			               got);
	}
	return 0;
}

void jbd_sb_encode(struct jbd_journal *j)
{
	uint8_t *b = j->sbbuf;
	put_be32(b + JBD_SB_SEQUENCE, j->sb.sequence);
	put_be32(b + JBD_SB_START, j->sb.start);
	put_be32(b + JBD_SB_ERRNO, (uint32_t)j->sb.errno_);
	if (j->sb.blocktype == JBD_SUPERBLOCK_V2) {
		put_be32(b + JBD_SB_FEATURE_COMPAT, j->sb.compat);
		put_be32(b + JBD_SB_FEATURE_INCOMPAT, j->sb.incompat);
	}
	if (j->csum_v23)
		put_be32(b + JBD_SB_CHECKSUM, jbd_sb_csum(b));
}

int jbd_setup_format(struct jbd_journal *j)
{
	const struct jbd_sb *sb = &j->sb;
	j->csum_v3 = sb->incompat & JBD_FEATURE_INCOMPAT_CSUM_V3;
	j->csum_v23 = j->csum_v3 || (sb->incompat & JBD_FEATURE_INCOMPAT_CSUM_V2);
	j->v64 = sb->incompat & JBD_FEATURE_INCOMPAT_64BIT;
	j->csum_v1 = !j->csum_v23 && (sb->compat & JBD_FEATURE_COMPAT_CHECKSUM);
	if (j->csum_v3)
		j->tag_bytes = 16;
	else
		j->tag_bytes = 12 + (j->csum_v23 ? 2 : 0) - (j->v64 ? 0 : 4);
	j->csum_seed = j->csum_v23 ? crc32c_raw(~0u, sb->uuid, 16) : 0;
	j->first = sb->first;
	j->last = sb->maxlen;
	return 0;
}

uint32_t jbd_tag_csum(const struct jbd_journal *j, uint32_t tid, const void *block)
{
	uint8_t seq[4];
	put_be32(seq, tid);
	uint32_t c = crc32c_raw(j->csum_seed, seq, 4);
	return crc32c_raw(c, block, j->cfg.block_size);
}

/* Descriptor and revoke blocks carry their checksum in their last 4 bytes,
 * computed over the whole block with those bytes zero. */
uint32_t jbd_block_tail_csum(const struct jbd_journal *j, const uint8_t *block)
{
	uint32_t bs = j->cfg.block_size;
	uint32_t c = crc32c_raw(j->csum_seed, block, bs - 4);
	static const uint8_t zero[4];
	return crc32c_raw(c, zero, 4);
}

bool jbd_block_tail_ok(const struct jbd_journal *j, const uint8_t *block)
{
	if (!j->csum_v23)
		return true;
	return get_be32(block + j->cfg.block_size - 4) == jbd_block_tail_csum(j, block);
}

/* The commit block's checksum lives in h_chksum[0] (offset 16). */
uint32_t jbd_commit_csum(const struct jbd_journal *j, const uint8_t *block)
{
	static const uint8_t zero[4];
	uint32_t c = crc32c_raw(j->csum_seed, block, 16);
	c = crc32c_raw(c, zero, 4);
	return crc32c_raw(c, block + 20, j->cfg.block_size - 20);
}

bool jbd_commit_csum_ok(const struct jbd_journal *j, const uint8_t *block)
{
	if (!j->csum_v23)
		return true;
	return get_be32(block + 16) == jbd_commit_csum(j, block);
}

/* ---- block buffers ---------------------------------------------------------- */
uint8_t *jbuf_get(struct jbuf_pool *p, size_t bytes)
{
	return p && p->n ? p->b[--p->n] : malloc(bytes);
}

void jbuf_put(struct jbuf_pool *p, uint8_t *b)
{
	if (!b)
		return;
	if (p && p->n < p->max) {
		if (!p->b && !(p->b = malloc(p->max * sizeof(*p->b)))) {
			free(b);
			return;
		}
		p->b[p->n++] = b;
		return;
	}
	free(b);
}

void jbuf_pool_free(struct jbuf_pool *p)
{
	while (p->n)
		free(p->b[--p->n]);
	free(p->b);
	p->b = NULL;
}

/* ---- the block-keyed map ---------------------------------------------------- */
void jmap_init(struct jmap *m)
{
	memset(m, 0, sizeof(*m));
}

void jmap_free(struct jmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		jbuf_put(m->pool, m->e[i].data);
	free(m->e);
	free(m->slot);
	struct jbuf_pool *pool = m->pool;
	jmap_init(m);
	m->pool = pool;
}

void jmap_clear(struct jmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		jbuf_put(m->pool, m->e[i].data);
	m->n = m->live = 0;
	if (m->slot)
		memset(m->slot, 0, m->nslots * sizeof(*m->slot));
}

static size_t jmap_hash(uint64_t b, size_t nslots)
{
	b *= 0x9e3779b97f4a7c15ull;
	return (size_t)(b >> 32) & (nslots - 1);
}

long jmap_find(const struct jmap *m, uint64_t block)
{
	if (!m->nslots)
		return -1;
	for (size_t s = jmap_hash(block, m->nslots);; s = (s + 1) & (m->nslots - 1)) {
		uint32_t v = m->slot[s];
		if (!v)
			return -1;
		if (m->e[v - 1].block == block)
			return m->e[v - 1].live ? (long)(v - 1) : -1;
	}
}

static int jmap_grow(struct jmap *m)
{
	size_t ns = m->nslots ? m->nslots * 2 : 64;
	uint32_t *slot = calloc(ns, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		size_t s = jmap_hash(m->e[i].block, ns);
		while (slot[s])
			s = (s + 1) & (ns - 1);
		slot[s] = (uint32_t)(i + 1);
	}
	free(m->slot);
	m->slot = slot;
	m->nslots = ns;
	return 0;
}

int jmap_put(struct jmap *m, uint64_t block, size_t *idx)
{
	if (m->nslots) {
		for (size_t s = jmap_hash(block, m->nslots);; s = (s + 1) & (m->nslots - 1)) {
			uint32_t v = m->slot[s];
			if (!v)
				break;
			if (m->e[v - 1].block == block) {
				if (!m->e[v - 1].live) {
					m->e[v - 1].live = true;
					m->live++;
				}
				*idx = v - 1;
				return 0;
			}
		}
	}
	if ((m->n + 1) * 2 > m->nslots && jmap_grow(m))
		return -ENOMEM;
	struct jmap_ent *e = bo_grow(m->e, &m->cap, m->n, sizeof(*e), 32);
	if (!e)
		return -ENOMEM;
	m->e = e;
	size_t i = m->n++;
	m->e[i] = (struct jmap_ent){.block = block, .live = true};
	m->live++;
	size_t s = jmap_hash(block, m->nslots);
	while (m->slot[s])
		s = (s + 1) & (m->nslots - 1);
	m->slot[s] = (uint32_t)(i + 1);
	*idx = i;
	return 0;
}

void jmap_del(struct jmap *m, size_t idx)
{
	if (!m->e[idx].live)
		return;
	m->e[idx].live = false;
	jbuf_put(m->pool, m->e[idx].data);
	m->e[idx].data = NULL;
	m->live--;
}
