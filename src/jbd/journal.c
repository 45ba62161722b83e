// SPDX-License-Identifier: GPL-2.0-or-later
/* journal.c — the writing side of the journal: open/load, handles, the running
 * transaction, commit (descriptor, escaped copies, revoke and commit blocks),
 * checkpoint, abort on write errors, destroy. Recovery is in recovery.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "jbd/jbd_int.h"

static int aborted_err(struct jbd_journal *j)
{
	return bo_errf(&j->err, -EIO, "journal aborted after a write error (%d)", j->aborted);
}

int jbd_bmap(struct jbd_journal *j, uint64_t lblk, uint64_t *pblk)
{
	if (lblk >= j->cfg.nr_blocks)
		return bo_errf(&j->err, -EUCLEAN,
		               "journal block %llu beyond the journal (%llu blocks)",
		               (unsigned long long)lblk, (unsigned long long)j->cfg.nr_blocks);
	uint64_t p = 0;
	if (j->ext) {
		size_t lo = 0, hi = j->cfg.map.nr_extents;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct jbd_extent *e = &j->ext[mid];
			if (lblk < e->lblk)
				hi = mid;
			else if (lblk >= e->lblk + e->count)
				lo = mid + 1;
			else {
				p = e->pblk + (lblk - e->lblk);
				break;
			}
		}
	} else {
		int rc = j->cfg.map.bmap(j->cfg.map.ctx, lblk, &p);
		if (rc)
			return bo_errf(&j->err, rc, "journal block %llu: block map failed",
			               (unsigned long long)lblk);
	}
	if (!p || p >= j->dev_blocks)
		return bo_errf(&j->err, -EUCLEAN,
		               "journal block %llu maps to device block %llu (%s)",
		               (unsigned long long)lblk, (unsigned long long)p,
		               p ? "beyond the device" : "a hole");
	*pblk = p;
	return 0;
}

/* Reads n log blocks from lblk on (wrapping at the end of the log) with as few
 * device reads as the map allows: replay reads whole descriptors' worth at once. */
int jbd_log_read_n(struct jbd_journal *j, uint32_t lblk, uint32_t n, uint8_t *buf)
{
	uint32_t bs = j->cfg.block_size, done = 0;
	while (done < n) {
		uint32_t l = jbd_wrap(j, (uint64_t)lblk + done);
		uint64_t p, q;
		int rc = jbd_bmap(j, l, &p);
		if (rc)
			return rc;
		uint32_t run = 1, max = n - done;
		if (max > j->last - l)
			max = j->last - l; /* the log wraps here */
		while (run < max && !jbd_bmap(j, (uint64_t)l + run, &q) && q == p + run)
			run++;
		rc = blk_pread(j->d, p * bs, (size_t)run * bs, buf + (size_t)done * bs);
		if (rc)
			return bo_errf(&j->err, rc, "reading journal blocks %u+%u: %s", l, run,
			               bo_errstr(&j->d->err, rc));
		done += run;
	}
	return 0;
}

int jbd_log_read(struct jbd_journal *j, uint64_t lblk, void *buf)
{
	uint64_t p;
	int rc = jbd_bmap(j, lblk, &p);
	if (rc)
		return rc;
	uint32_t bs = j->cfg.block_size;
	rc = blk_pread(j->d, p * bs, bs, buf);
	if (rc)
		return bo_errf(&j->err, rc, "reading journal block %llu (device block %llu): %s",
		               (unsigned long long)lblk, (unsigned long long)p,
		               bo_errstr(&j->d->err, rc));
	return 0;
}

int jbd_log_write(struct jbd_journal *j, uint64_t lblk, const void *buf, unsigned flags)
{
	uint64_t p;
	int rc = jbd_bmap(j, lblk, &p);
	if (rc)
		return rc;
	uint32_t bs = j->cfg.block_size;
	rc = blk_pwrite(j->d, p * bs, bs, buf, flags);
	if (rc)
		return bo_errf(&j->err, rc, "writing journal block %llu (device block %llu): %s",
		               (unsigned long long)lblk, (unsigned long long)p,
		               bo_errstr(&j->d->err, rc));
	if (flags & BLK_FUA)
		j->st.fua_writes++;
	j->st.log_blocks++;
	return 0;
}

int jbd_write_sb(struct jbd_journal *j, unsigned flags)
{
	jbd_sb_encode(j);
	return jbd_log_write(j, 0, j->sbbuf, flags);
}

static unsigned fua(const struct jbd_journal *j)
{
	return j->cfg.barrier ? BLK_FUA : 0;
}

static int do_flush(struct jbd_journal *j)
{
	int rc = blk_flush(j->d);
	if (rc)
		return bo_errf(&j->err, rc, "journal: flush: %s", bo_errstr(&j->d->err, rc));
	j->st.flushes++;
	j->data_dirty = false;
	return 0;
}

/* A failed journal, commit or checkpoint write: the journal stops here. The error
 * is recorded in the superblock (s_errno, as jbd2 does) on a best-effort basis. */
static int do_abort(struct jbd_journal *j, int rc)
{
	if (!j->aborted) {
		j->aborted = rc ? rc : -EIO;
		struct bo_err keep = j->err;
		j->sb.errno_ = -EIO;
		(void)jbd_write_sb(j, BLK_FUA);
		j->err = keep;
	}
	return rc;
}

int jbd_journal_open(struct bdev *d, const struct jbd_config *c, struct jbd_journal **out,
                     struct bo_err *err)
{
	*out = NULL;
	if (!d || !c || c->block_size < 1024 || c->block_size > 65536 ||
	    (c->block_size & (c->block_size - 1)) || c->block_size % d->sector_size)
		return bo_errf(err, -EINVAL, "journal: bad block size %u", c ? c->block_size : 0);
	if (!c->map.bmap && !c->map.extents)
		return bo_errf(err, -EINVAL, "journal: no block map");
	if (c->nr_blocks < 2 || c->nr_blocks > UINT32_MAX)
		return bo_errf(err, -EINVAL, "journal: %llu blocks is not a journal size",
		               (unsigned long long)c->nr_blocks);
	struct jbd_journal *j = calloc(1, sizeof(*j));
	if (!j)
		return bo_errf(err, -ENOMEM, "journal: out of memory");
	j->d = d;
	j->cfg = *c;
	j->dev_blocks = blk_size_bytes(d) / c->block_size;
	j->fs_blocks = c->fs_blocks && c->fs_blocks < j->dev_blocks ? c->fs_blocks : j->dev_blocks;
	jmap_init(&j->running);
	jmap_init(&j->revokes);
	jmap_init(&j->ckpt);
	j->running.pool = j->ckpt.pool = &j->pool;
	int rc = -ENOMEM;
	j->sbbuf = malloc(c->block_size);
	j->tmp = malloc(c->block_size);
	j->tmp2 = malloc(c->block_size);
	if (!j->sbbuf || !j->tmp || !j->tmp2)
		goto fail;
	if (c->map.extents) {
		size_t n = c->map.nr_extents;
		j->ext = malloc((n ? n : 1) * sizeof(*j->ext));
		if (!j->ext)
			goto fail;
		memcpy(j->ext, c->map.extents, n * sizeof(*j->ext));
		for (size_t i = 0; i < n; i++) {
			if (j->ext[i].count > j->dev_blocks ||
			    j->ext[i].pblk > j->dev_blocks - j->ext[i].count) {
				rc = bo_errf(
				    err, -EINVAL,
				    "journal: extent %zu of the block map is beyond the device", i);
				goto fail;
			}
			if (j->ext[i].count == 0 ||
			    (i && j->ext[i].lblk < j->ext[i - 1].lblk + j->ext[i - 1].count)) {
				rc =
				    bo_errf(err, -EINVAL,
				            "journal: extent %zu of the block map out of order", i);
				goto fail;
			}
		}
	}
	rc = jbd_log_read(j, 0, j->sbbuf);
	if (rc) {
		bo_errf(err, rc, "%s", j->err.msg);
		goto fail;
	}
	rc = jbd_sb_parse(j->sbbuf, c->block_size, c->nr_blocks, &j->sb, err);
	if (rc)
		goto fail;
	jbd_setup_format(j);
	j->next_tid = j->sb.sequence;
	j->sb_empty = j->sb.start == 0;
	/* jbd2's limit: one transaction at most a quarter of the log */
	uint64_t cap = j->last - j->first;
	uint64_t per_desc = (c->block_size - 12 - (j->csum_v23 ? 4 : 0) - 16) / j->tag_bytes;
	j->max_buffers = cap / 4 * per_desc / (per_desc + 1);
	j->pool.max = j->max_buffers; /* one full transaction's worth */
	if (j->max_buffers < 4) {
		rc = bo_errf(err, -EINVAL, "journal: %llu log blocks is too small",
		             (unsigned long long)cap);
		goto fail;
	}
	*out = j;
	return 0;
fail:
	jbd_journal_destroy(j, false);
	return rc;
}

const struct bo_err *jbd_journal_err(const struct jbd_journal *j)
{
	return &j->err;
}
const struct jbd_sb *jbd_journal_sb(const struct jbd_journal *j)
{
	return &j->sb;
}
bool jbd_journal_needs_recovery(const struct jbd_journal *j)
{
	return j->sb.start != 0;
}
int jbd_journal_aborted(const struct jbd_journal *j)
{
	return j->aborted;
}
uint32_t jbd_journal_next_tid(const struct jbd_journal *j)
{
	return j->next_tid;
}
void jbd_journal_stats(const struct jbd_journal *j, struct jbd_stats *st)
{
	*st = j->st;
}

int jbd_journal_set_features(struct jbd_journal *j, uint32_t compat, uint32_t incompat)
{
	if (j->sb.start || j->loaded)
		return bo_errf(&j->err, -EBUSY,
		               "journal: features change only on an empty journal");
	if (j->sb.blocktype != JBD_SUPERBLOCK_V2)
		return bo_errf(&j->err, -EOPNOTSUPP, "journal: v1 superblock has no features");
	if ((incompat & JBD_FEATURE_INCOMPAT_CSUM_V2) && (incompat & JBD_FEATURE_INCOMPAT_CSUM_V3))
		return bo_errf(&j->err, -EINVAL, "journal: checksum v2 and v3 are exclusive");
	j->sb.compat = compat;
	j->sb.incompat = incompat;
	if (incompat & (JBD_FEATURE_INCOMPAT_CSUM_V2 | JBD_FEATURE_INCOMPAT_CSUM_V3))
		j->sbbuf[JBD_SB_CHECKSUM_TYPE] = j->sb.checksum_type = JBD_CRC32C_CHKSUM;
	jbd_setup_format(j);
	int rc = jbd_write_sb(j, BLK_FUA);
	return rc ? do_abort(j, rc) : 0;
}

int jbd_journal_load(struct jbd_journal *j)
{
	if (j->aborted)
		return aborted_err(j);
	if (j->sb.errno_)
		return bo_errf(&j->err, -EUCLEAN,
		               "journal: s_errno %d: the journal was aborted; check the filesystem",
		               j->sb.errno_);
	if (j->sb.start) {
		int rc = jbd_journal_recover(j, NULL);
		if (rc)
			return rc;
	}
	/* The log restarts at its first block, ids continue from s_sequence. The
	 * superblock is written (s_start != 0) just before the first commit. */
	j->next_tid = j->sb.sequence;
	j->head = j->tail = j->first;
	j->used = 0;
	j->sb_empty = j->sb.start == 0;
	if (!j->sb_empty) {
		j->sb.start = j->first;
		int rc = jbd_write_sb(j, fua(j));
		if (rc)
			return do_abort(j, rc);
	}
	j->loaded = true;
	return 0;
}

/* Log blocks a transaction of nb buffers and nr revokes needs (commit included). */
static uint64_t tx_blocks(const struct jbd_journal *j, uint64_t nb, uint64_t nr)
{
	uint32_t bs = j->cfg.block_size, csz = j->csum_v23 ? 4 : 0;
	uint64_t per_desc = (bs - 12 - csz - 16) / j->tag_bytes;
	uint64_t per_rev = (bs - 16 - csz) / (j->v64 ? 8 : 4);
	return nb + (nb + per_desc - 1) / per_desc + (nr + per_rev - 1) / per_rev + 1;
}

int jbd_journal_start(struct jbd_journal *j, uint32_t credits, struct jbd_handle **out)
{
	*out = NULL;
	if (j->aborted)
		return aborted_err(j);
	if (!j->loaded)
		return bo_errf(&j->err, -EINVAL, "journal: start before load");
	/* max_buffers is the size at which a transaction is committed (a quarter of
	 * the log, as jbd2): a larger reservation only commits what runs first; the
	 * hard limit is what fits in the log (log_buffer) */
	if (credits > j->max_buffers)
		credits = (uint32_t)j->max_buffers;
	if (!j->depth && j->running.live + j->reserved + credits > j->max_buffers) {
		int rc = jbd_journal_commit(j);
		if (rc)
			return rc;
	}
	j->depth++;
	j->reserved += credits;
	j->handle.j = j;
	j->handle.credits += credits;
	*out = &j->handle;
	return 0;
}

int jbd_journal_stop(struct jbd_handle *h)
{
	struct jbd_journal *j = h->j;
	if (!j->depth)
		return bo_errf(&j->err, -EINVAL, "journal: stop without start");
	if (--j->depth == 0) {
		j->reserved = 0;
		h->credits = 0;
	}
	return j->aborted ? aborted_err(j) : 0;
}

int jbd_journal_get_write_access(struct jbd_handle *h, uint64_t block)
{
	struct jbd_journal *j = h->j;
	if (j->aborted)
		return aborted_err(j);
	if (block >= j->fs_blocks)
		return bo_errf(&j->err, -EINVAL, "journal: block %llu beyond the filesystem",
		               (unsigned long long)block);
	return 0;
}

/* The running transaction's entry for block, made if new; data: its content to
 * copy, or NULL for a block dirtied by reference. */
static int log_buffer(struct jbd_handle *h, uint64_t block, const void *data)
{
	struct jbd_journal *j = h->j;
	if (j->aborted)
		return aborted_err(j);
	if (!j->depth)
		return bo_errf(&j->err, -EINVAL, "journal: dirty outside a handle");
	if (block >= j->fs_blocks)
		return bo_errf(&j->err, -EINVAL, "journal: block %llu beyond the filesystem",
		               (unsigned long long)block);
	if (!data && !j->cfg.fetch)
		return bo_errf(&j->err, -EINVAL, "journal: dirtied by reference without a fetch");
	long f = jmap_find(&j->running, block);
	if (f < 0 && tx_blocks(j, j->running.live + 1, j->revokes.live) + 1 >= j->last - j->first)
		return bo_errf(&j->err, -ENOSPC,
		               "journal: transaction of %llu blocks fills the log",
		               (unsigned long long)j->running.live);
	size_t idx;
	if (f >= 0)
		idx = (size_t)f;
	else if (jmap_put(&j->running, block, &idx))
		return bo_errf(&j->err, -ENOMEM, "journal: out of memory");
	struct jmap_ent *e = &j->running.e[idx];
	if (!e->data) {
		/* allocated now even for a reference: the commit must not fail for memory */
		e->data = jbuf_get(&j->pool, j->cfg.block_size);
		if (!e->data) {
			jmap_del(&j->running, idx);
			return bo_errf(&j->err, -ENOMEM, "journal: out of memory");
		}
	}
	e->ref = !data;
	if (data)
		memcpy(e->data, data, j->cfg.block_size);
	/* re-used after being freed in this transaction: its revoke no longer holds */
	long r = jmap_find(&j->revokes, block);
	if (r >= 0)
		jmap_del(&j->revokes, (size_t)r);
	return 0;
}

int jbd_journal_dirty_metadata(struct jbd_handle *h, uint64_t block, const void *data)
{
	return log_buffer(h, block, data);
}

int jbd_journal_dirty_ref(struct jbd_handle *h, uint64_t block)
{
	return log_buffer(h, block, NULL);
}

/* The content of a running entry dirtied by reference, from the client. */
static int fetch(struct jbd_journal *j, struct jmap_ent *e, void *buf, bool release)
{
	int rc = j->cfg.fetch(j->cfg.fetch_ctx, e->block, buf, release);
	if (rc < 0)
		return bo_errf(&j->err, rc, "journal: fetching block %llu from the client",
		               (unsigned long long)e->block);
	return 0;
}

static int revoke(struct jbd_journal *j, uint64_t block)
{
	long f = jmap_find(&j->running, block);
	if (f >= 0)
		jmap_del(&j->running, (size_t)f);
	f = jmap_find(&j->ckpt, block);
	if (f >= 0)
		jmap_del(&j->ckpt, (size_t)f);
	size_t idx;
	if (jmap_find(&j->revokes, block) < 0 && jmap_put(&j->revokes, block, &idx))
		return bo_errf(&j->err, -ENOMEM, "journal: out of memory");
	return 0;
}

int jbd_journal_dirty_data(struct jbd_handle *h, uint64_t block, const void *data)
{
	struct jbd_journal *j = h->j;
	if (j->cfg.data == JBD_DATA_JOURNAL)
		return log_buffer(h, block, data);
	if (j->aborted)
		return aborted_err(j);
	j->data_dirty = true;
	/* A block once logged as metadata now holds data written home directly: an
	 * older logged copy must never be replayed or checkpointed over it. */
	if (jmap_find(&j->running, block) >= 0 || jmap_find(&j->ckpt, block) >= 0) {
		int rc = revoke(j, block);
		if (rc)
			return rc;
	}
	return 1;
}

int jbd_journal_forget(struct jbd_handle *h, uint64_t block)
{
	struct jbd_journal *j = h->j;
	if (j->aborted)
		return aborted_err(j);
	if (block >= j->fs_blocks)
		return bo_errf(&j->err, -EINVAL, "journal: block %llu beyond the filesystem",
		               (unsigned long long)block);
	return revoke(j, block);
}

int jbd_journal_checkpoint(struct jbd_journal *j)
{
	if (j->aborted)
		return aborted_err(j);
	if (!j->loaded)
		return 0;
	if (!j->ckpt.live && j->tail == j->head)
		return 0;
	uint32_t bs = j->cfg.block_size;
	for (size_t i = 0; i < j->ckpt.n; i++) {
		struct jmap_ent *e = &j->ckpt.e[i];
		if (!e->live)
			continue;
		int rc = blk_pwrite(j->d, e->block * bs, bs, e->data, 0);
		if (rc)
			bo_errf(&j->err, rc, "checkpoint: writing block %llu: %s",
			        (unsigned long long)e->block, bo_errstr(&j->d->err, rc));
		if (rc && !j->cfg.checkpoint_errors_ignored)
			return do_abort(j, rc);
		if (rc) {
			j->st.checkpoint_errors++; /* logged, and forgotten with the log */
			continue;
		}
		j->st.home_writes++;
	}
	/* home copies durable before the log that could replay them is released */
	if (j->cfg.barrier) {
		int rc = do_flush(j);
		if (rc)
			return do_abort(j, rc);
	}
	j->tail = j->head;
	j->used = 0;
	j->sb.sequence = j->next_tid;
	if (!j->sb_empty) {
		j->sb.start = j->tail;
		int rc = jbd_write_sb(j, fua(j));
		if (rc)
			return do_abort(j, rc);
	}
	jmap_clear(&j->ckpt);
	j->st.checkpoints++;
	return 0;
}

/* Fills one descriptor block with tags for running entries starting at *pos;
 * writes the (escaped) copies at log blocks after `at`. Returns the count. */
static int write_descriptor(struct jbd_journal *j, size_t *pos, uint32_t tid, uint32_t *at,
                            uint32_t *crc)
{
	uint32_t bs = j->cfg.block_size, csz = j->csum_v23 ? 4 : 0;
	uint8_t *desc = j->tmp, *copy = j->tmp2;
	memset(desc, 0, bs);
	put_be32(desc, JBD_MAGIC);
	put_be32(desc + 4, JBD_DESCRIPTOR_BLOCK);
	put_be32(desc + 8, tid);
	uint32_t desc_at = *at, off = 12, ntags = 0;
	uint8_t *last_tag = NULL;
	uint32_t p = jbd_wrap(j, (uint64_t)desc_at + 1);
	size_t first = *pos;
	while (*pos < j->running.n) {
		struct jmap_ent *e = &j->running.e[*pos];
		if (!e->live) {
			(*pos)++;
			continue;
		}
		uint32_t need = j->tag_bytes + (ntags ? 0 : 16);
		if (off + need > bs - csz)
			break;
		uint8_t *t = desc + off;
		uint32_t fl = ntags ? JBD_FLAG_SAME_UUID : 0;
		/* logged as is, unless it starts like a journal block: then escaped */
		const uint8_t *logged = e->data;
		if (get_be32(e->data) == JBD_MAGIC) {
			memcpy(copy, e->data, bs);
			put_be32(copy, 0);
			fl |= JBD_FLAG_ESCAPE;
			logged = copy;
		}
		put_be32(t, (uint32_t)e->block);
		if (j->v64)
			put_be32(t + 8, (uint32_t)(e->block >> 32));
		uint32_t c = j->csum_v23 ? jbd_tag_csum(j, tid, logged) : 0;
		if (j->csum_v3) {
			put_be32(t + 4, fl);
			put_be32(t + 12, c);
		} else {
			put_be16(t + 4, (uint16_t)c);
			put_be16(t + 6, (uint16_t)fl);
		}
		off += j->tag_bytes;
		if (!ntags) {
			memcpy(desc + off, j->sb.uuid, 16);
			off += 16;
		}
		last_tag = t;
		int rc = jbd_log_write(j, p, logged, 0);
		if (rc)
			return rc;
		p = jbd_wrap(j, (uint64_t)p + 1);
		ntags++;
		(*pos)++;
	}
	if (!ntags)
		return 0;
	if (j->csum_v3)
		put_be32(last_tag + 4, get_be32(last_tag + 4) | JBD_FLAG_LAST_TAG);
	else
		put_be16(last_tag + 6, (uint16_t)(get_be16(last_tag + 6) | JBD_FLAG_LAST_TAG));
	if (j->csum_v23)
		put_be32(desc + bs - 4, jbd_block_tail_csum(j, desc));
	int rc = jbd_log_write(j, desc_at, desc, 0);
	if (rc)
		return rc;
	if (j->csum_v1) {
		/* v1 covers the descriptor, then its blocks as logged (escaped) */
		*crc = jbd_crc32_be(*crc, desc, bs);
		for (size_t i = first; i < *pos; i++) {
			const struct jmap_ent *e = &j->running.e[i];
			if (!e->live)
				continue;
			uint8_t head[4];
			memcpy(head, e->data, 4);
			if (get_be32(head) == JBD_MAGIC)
				put_be32(head, 0);
			*crc = jbd_crc32_be(*crc, head, 4);
			*crc = jbd_crc32_be(*crc, e->data + 4, bs - 4);
		}
	}
	*at = p;
	return (int)ntags;
}

static int write_revokes(struct jbd_journal *j, uint32_t tid, uint32_t *at)
{
	uint32_t bs = j->cfg.block_size, csz = j->csum_v23 ? 4 : 0, rec = j->v64 ? 8 : 4;
	uint8_t *b = j->tmp;
	size_t i = 0;
	while (i < j->revokes.n) {
		memset(b, 0, bs);
		put_be32(b, JBD_MAGIC);
		put_be32(b + 4, JBD_REVOKE_BLOCK);
		put_be32(b + 8, tid);
		uint32_t off = 16;
		for (; i < j->revokes.n && off + rec <= bs - csz; i++) {
			const struct jmap_ent *e = &j->revokes.e[i];
			if (!e->live)
				continue;
			if (j->v64)
				put_be64(b + off, e->block);
			else
				put_be32(b + off, (uint32_t)e->block);
			off += rec;
		}
		if (off == 16)
			break;
		put_be32(b + 12, off);
		if (j->csum_v23)
			put_be32(b + bs - 4, jbd_block_tail_csum(j, b));
		int rc = jbd_log_write(j, *at, b, 0);
		if (rc)
			return rc;
		*at = jbd_wrap(j, (uint64_t)*at + 1);
	}
	return 0;
}

int jbd_journal_commit(struct jbd_journal *j)
{
	if (j->aborted)
		return aborted_err(j);
	if (!j->loaded)
		return bo_errf(&j->err, -EINVAL, "journal: commit before load");
	if (!j->running.live && !j->revokes.live) {
		if (j->data_dirty && j->cfg.barrier)
			return do_flush(j);
		return 0;
	}
	uint64_t cap = j->last - j->first;
	uint64_t need = tx_blocks(j, j->running.live, j->revokes.live);
	if (need >= cap)
		return bo_errf(&j->err, -ENOSPC,
		               "journal: transaction of %llu blocks exceeds the log",
		               (unsigned long long)need);
	if (j->used + need >= cap) {
		int rc = jbd_journal_checkpoint(j);
		if (rc)
			return rc;
	}
	/* the content dirtied by reference, as it is now, is what this commit logs */
	for (size_t i = 0; i < j->running.n; i++) {
		struct jmap_ent *e = &j->running.e[i];
		if (e->live && e->ref) {
			int rc = fetch(j, e, e->data, true);
			if (rc)
				return do_abort(j, rc);
			e->ref = false;
		}
	}
	uint32_t tid = j->next_tid;
	int rc = 0;
	/* An empty log on disk (s_start = 0) would make recovery ignore this
	 * transaction: point the superblock at it first, durably. */
	if (j->sb_empty || (j->revokes.live && !(j->sb.incompat & JBD_FEATURE_INCOMPAT_REVOKE))) {
		if (j->revokes.live)
			j->sb.incompat |= JBD_FEATURE_INCOMPAT_REVOKE;
		if (j->sb_empty) {
			j->tail = j->head;
			j->sb.sequence = tid;
		}
		j->sb.start = j->tail;
		rc = jbd_write_sb(j, fua(j));
		if (rc)
			return do_abort(j, rc);
		j->sb_empty = false;
	}
	uint32_t at = j->head, crc = ~0u;
	rc = write_revokes(j, tid, &at);
	if (rc)
		return do_abort(j, rc);
	size_t pos = 0;
	while (pos < j->running.n) {
		rc = write_descriptor(j, &pos, tid, &at, &crc);
		if (rc < 0)
			return do_abort(j, rc);
	}
	/* ordered data and every log block durable before the commit record */
	if (j->cfg.barrier) {
		rc = do_flush(j);
		if (rc)
			return do_abort(j, rc);
	}
	uint32_t bs = j->cfg.block_size;
	uint8_t *c = j->tmp;
	memset(c, 0, bs);
	put_be32(c, JBD_MAGIC);
	put_be32(c + 4, JBD_COMMIT_BLOCK);
	put_be32(c + 8, tid);
	put_be64(c + 0x30, j->cfg.clock ? j->cfg.clock(j->cfg.clock_ctx) : 0);
	if (j->csum_v1) {
		c[12] = JBD_CRC32_CHKSUM;
		c[13] = JBD_CRC32_CHKSUM_SIZE;
		put_be32(c + 16, crc);
	} else if (j->csum_v23) {
		put_be32(c + 16, jbd_commit_csum(j, c));
	}
	rc = jbd_log_write(j, at, c, fua(j));
	if (rc)
		return do_abort(j, rc);
	at = jbd_wrap(j, (uint64_t)at + 1);
	j->used += (uint64_t)((at + cap - j->head) % cap);
	j->head = at;
	j->next_tid = tid + 1;
	j->st.commits++;
	/* the committed content now waits for its checkpoint */
	for (size_t i = 0; i < j->running.n; i++) {
		struct jmap_ent *e = &j->running.e[i];
		if (!e->live)
			continue;
		size_t idx;
		if (jmap_put(&j->ckpt, e->block, &idx))
			return do_abort(j, bo_errf(&j->err, -ENOMEM, "journal: out of memory"));
		jbuf_put(&j->pool, j->ckpt.e[idx].data);
		j->ckpt.e[idx].data = e->data;
		e->data = NULL;
	}
	jmap_clear(&j->running);
	jmap_clear(&j->revokes);
	j->data_dirty = false;
	return 0;
}

int jbd_journal_force_commit(struct jbd_journal *j)
{
	return jbd_journal_commit(j);
}

int jbd_journal_read_block(struct jbd_journal *j, uint64_t block, void *buf)
{
	long f = jmap_find(&j->running, block);
	const struct jmap *m = &j->running;
	if (f < 0) {
		f = jmap_find(&j->ckpt, block);
		m = &j->ckpt;
	}
	if (f < 0)
		return 0;
	if (m->e[f].ref) {
		int rc = fetch(j, &m->e[f], buf, false);
		return rc < 0 ? rc : 1;
	}
	memcpy(buf, m->e[f].data, j->cfg.block_size);
	return 1;
}

int jbd_journal_destroy(struct jbd_journal *j, bool clean)
{
	if (!j)
		return 0;
	int rc = 0;
	if (clean && j->loaded && !j->aborted) {
		rc = jbd_journal_commit(j);
		if (!rc)
			rc = jbd_journal_checkpoint(j);
		if (!rc) {
			/* empty: no replay at the next mount, ids continue from here */
			j->sb.start = 0;
			j->sb.sequence = j->next_tid;
			rc = jbd_write_sb(j, fua(j));
		}
	} else if (clean && j->aborted) {
		rc = aborted_err(j);
	}
	jmap_free(&j->running);
	jmap_free(&j->revokes);
	jmap_free(&j->ckpt);
	jbuf_pool_free(&j->pool);
	free(j->ext);
	free(j->sbbuf);
	free(j->tmp);
	free(j->tmp2);
	free(j->rbuf);
	free(j);
	return rc;
}

int jbd_journal_format(struct bdev *d, const struct jbd_config *c, const uint8_t uuid[16],
                       uint32_t compat, uint32_t incompat, uint32_t sequence, bool zero,
                       struct bo_err *err)
{
	uint32_t bs = c->block_size;
	if (bs < 1024 || bs > 65536 || (bs & (bs - 1)) || c->nr_blocks < 16 ||
	    c->nr_blocks > UINT32_MAX)
		return bo_errf(err, -EINVAL, "journal format: bad size");
	/* a journal struct only for its block map */
	struct jbd_journal j = {.d = d, .cfg = *c};
	j.dev_blocks = blk_size_bytes(d) / bs;
	j.ext = (struct jbd_extent *)c->map.extents;
	uint8_t *b = calloc(1, bs);
	if (!b)
		return bo_errf(err, -ENOMEM, "journal format: out of memory");
	int rc = 0;
	if (zero)
		for (uint64_t i = 1; i < c->nr_blocks && !rc; i++)
			rc = jbd_log_write(&j, i, b, 0);
	if (!rc) {
		put_be32(b, JBD_MAGIC);
		put_be32(b + 4, JBD_SUPERBLOCK_V2);
		put_be32(b + JBD_SB_BLOCKSIZE, bs);
		put_be32(b + JBD_SB_MAXLEN, (uint32_t)c->nr_blocks);
		put_be32(b + JBD_SB_FIRST, 1);
		put_be32(b + JBD_SB_SEQUENCE, sequence ? sequence : 1);
		put_be32(b + JBD_SB_FEATURE_COMPAT, compat);
		put_be32(b + JBD_SB_FEATURE_INCOMPAT, incompat);
		memcpy(b + JBD_SB_UUID, uuid, 16);
		put_be32(b + JBD_SB_NR_USERS, 1);
		if (incompat & (JBD_FEATURE_INCOMPAT_CSUM_V2 | JBD_FEATURE_INCOMPAT_CSUM_V3)) {
			b[JBD_SB_CHECKSUM_TYPE] = JBD_CRC32C_CHKSUM;
			put_be32(b + JBD_SB_CHECKSUM, jbd_sb_csum(b));
		}
		rc = jbd_log_write(&j, 0, b, BLK_FUA);
	}
	if (rc)
		bo_errf(err, rc, "journal format: %s", j.err.msg);
	free(b);
	return rc;
}
