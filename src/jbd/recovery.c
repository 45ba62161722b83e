// SPDX-License-Identifier: GPL-2.0-or-later
/* recovery.c — three-pass JBD2 recovery (scan, revoke, replay) as the kernel and
 * e2fsck do it. Everything read from the log is untrusted: every log position,
 * count and home block number is checked before use; nothing is written out of
 * range. Not the writing side (journal.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/endian.h"
#include "jbd/jbd_int.h"

enum pass { PASS_SCAN, PASS_REVOKE, PASS_REPLAY };

struct rstate {
	struct jbd_recovery_info *info;
	struct jmap revoked; /* block -> highest tid that revoked it */
	bool end_set;
	uint32_t end_tid;
	/* scan: a descriptor of transaction range_tid named a block beyond the
	 * filesystem. Corruption if that transaction commits; if it does not, it is
	 * the half-written tail a crash leaves (e2fsck replays what came before). */
	bool range_bad;
	uint32_t range_tid, range_at;
	uint64_t range_blk;
	uint32_t replayed; /* transactions whose commit the replay pass reached */
	/* scan only: the v1 running checksum, commit times, a block checksum failed */
	uint32_t crc;
	uint64_t last_commit_time;
	bool need_check_time;
};

static uint32_t desc_size(const struct jbd_journal *j)
{
	return j->cfg.block_size - (j->csum_v23 ? 4 : 0);
}

static uint64_t tag_block(const struct jbd_journal *j, const uint8_t *t)
{
	uint64_t b = get_be32(t);
	if (j->v64)
		b |= (uint64_t)get_be32(t + 8) << 32;
	return b;
}

static uint32_t tag_flags(const struct jbd_journal *j, const uint8_t *t)
{
	return j->csum_v3 ? get_be32(t + 4) : get_be16(t + 6);
}

static bool tag_csum_ok(const struct jbd_journal *j, const uint8_t *t, const void *blk,
                        uint32_t tid)
{
	if (!j->csum_v23)
		return true;
	uint32_t c = jbd_tag_csum(j, tid, blk);
	if (j->csum_v3)
		return get_be32(t + 12) == c;
	return get_be16(t + 4) == (uint16_t)c;
}

/* Walks the tags of a descriptor block; fn(ctx, i, tag) for each. Returns the
 * number of tags (the log blocks that follow the descriptor). */
static uint32_t walk_tags(const struct jbd_journal *j, const uint8_t *buf,
                          int (*fn)(void *ctx, const uint8_t *tag), void *ctx, int *rc)
{
	uint32_t size = desc_size(j), off = 12, nr = 0;
	*rc = 0;
	while (off + j->tag_bytes <= size) {
		const uint8_t *t = buf + off;
		uint32_t fl = tag_flags(j, t);
		nr++;
		if (fn && (*rc = fn(ctx, t)) != 0)
			return nr;
		off += j->tag_bytes;
		if (!(fl & JBD_FLAG_SAME_UUID))
			off += 16;
		if (fl & JBD_FLAG_LAST_TAG)
			break;
	}
	return nr;
}

struct range_ctx {
	struct jbd_journal *j;
	uint64_t bad;
};

static int tag_in_range(void *ctx, const uint8_t *t)
{
	struct range_ctx *rc = ctx;
	uint64_t b = tag_block(rc->j, t);
	if (b >= rc->j->fs_blocks) {
		rc->bad = b;
		return -EUCLEAN;
	}
	return 0;
}

static int scan_revoke(struct jbd_journal *j, struct rstate *st, const uint8_t *buf, uint32_t tid,
                       uint32_t lblk)
{
	uint32_t bs = j->cfg.block_size, csz = j->csum_v23 ? 4 : 0, rec = j->v64 ? 8 : 4;
	if (!jbd_block_tail_ok(j, buf))
		return bo_errf(&j->err, -EUCLEAN,
		               "journal block %u: revoke block checksum mismatch", lblk);
	uint32_t count = get_be32(buf + 12);
	if (count < 16 || count > bs - csz)
		return bo_errf(&j->err, -EUCLEAN,
		               "journal block %u: revoke r_count %u out of range [16, %u]", lblk,
		               count, bs - csz);
	for (uint32_t off = 16; off + rec <= count; off += rec) {
		uint64_t b = j->v64 ? get_be64(buf + off) : get_be32(buf + off);
		size_t idx;
		long f = jmap_find(&st->revoked, b);
		if (f >= 0) {
			if ((int32_t)(tid - (uint32_t)st->revoked.e[f].val) > 0)
				st->revoked.e[f].val = tid;
		} else {
			if (jmap_put(&st->revoked, b, &idx))
				return bo_errf(&j->err, -ENOMEM,
				               "out of memory for revoke records");
			st->revoked.e[idx].val = tid;
		}
		st->info->nr_revoke_records++;
	}
	return 0;
}

static bool is_revoked(const struct rstate *st, uint64_t b, uint32_t tid)
{
	long f = jmap_find(&st->revoked, b);
	if (f < 0)
		return false;
	/* revoked for every transaction up to and including the revoking one */
	return (int32_t)(tid - (uint32_t)st->revoked.e[f].val) <= 0;
}

static void set_stop(struct rstate *st, const char *fmt, uint32_t a, uint32_t b)
{
	if (!st->info->stop[0])
		snprintf(st->info->stop, sizeof(st->info->stop), fmt, a, b);
}

static int write_run(struct jbd_journal *j, uint64_t home, uint32_t n, const uint8_t *data)
{
	uint32_t bs = j->cfg.block_size;
	int rc = blk_pwrite(j->d, home * bs, (size_t)n * bs, data, 0);
	if (rc)
		return bo_errf(&j->err, rc, "replay: writing blocks %llu+%u: %s",
		               (unsigned long long)home, n, bo_errstr(&j->d->err, rc));
	return 0;
}

/* Replays one descriptor: reads its blocks in one go, writes home in runs of
 * consecutive blocks. Revoked blocks and blocks failing their checksum are skipped. */
static int replay_tags(struct jbd_journal *j, struct rstate *st, const uint8_t *desc, uint32_t tid,
                       uint32_t *next)
{
	uint32_t bs = j->cfg.block_size, size = desc_size(j);
	int rc;
	uint32_t n = walk_tags(j, desc, NULL, NULL, &rc);
	if (n > j->rbuf_blocks) {
		free(j->rbuf);
		j->rbuf = malloc((size_t)n * bs);
		j->rbuf_blocks = j->rbuf ? n : 0;
		if (!j->rbuf)
			return bo_errf(&j->err, -ENOMEM, "replay: out of memory");
	}
	uint32_t at = *next;
	rc = jbd_log_read_n(j, at, n, j->rbuf);
	if (rc)
		return rc;
	*next = jbd_wrap(j, (uint64_t)at + n);
	uint32_t off = 12, i = 0, run = 0;
	uint64_t run_home = 0;
	uint8_t *run_data = NULL;
	while (i < n && off + j->tag_bytes <= size) {
		const uint8_t *t = desc + off;
		uint32_t fl = tag_flags(j, t);
		uint64_t home = tag_block(j, t);
		uint8_t *data = j->rbuf + (size_t)i * bs;
		bool write = false;
		if (is_revoked(st, home, tid)) {
			st->info->nr_revoked++;
		} else if (!tag_csum_ok(j, t, data, tid)) {
			/* like the kernel: skip the block, finish, report the error */
			st->info->nr_bad_csum++;
			bo_errf(&j->err, -EUCLEAN,
			        "journal block %u (home %llu, transaction %u): checksum mismatch",
			        jbd_wrap(j, (uint64_t)at + i), (unsigned long long)home, tid);
		} else if (home >= j->fs_blocks) {
			return bo_errf(
			    &j->err, -EUCLEAN,
			    "journal block %u: home block %llu beyond the filesystem (%llu)",
			    jbd_wrap(j, (uint64_t)at + i), (unsigned long long)home,
			    (unsigned long long)j->fs_blocks);
		} else {
			if (fl & JBD_FLAG_ESCAPE)
				put_be32(data, JBD_MAGIC);
			write = true;
			st->info->nr_replayed++;
		}
		if (run && (!write || home != run_home + run)) {
			if ((rc = write_run(j, run_home, run, run_data)))
				return rc;
			run = 0;
		}
		if (write) {
			if (!run) {
				run_home = home;
				run_data = data;
			}
			run++;
		}
		off += j->tag_bytes;
		if (!(fl & JBD_FLAG_SAME_UUID))
			off += 16;
		i++;
		if (fl & JBD_FLAG_LAST_TAG)
			break;
	}
	return run ? write_run(j, run_home, run, run_data) : 0;
}

/* Scan pass, a descriptor: note a tag naming a block beyond the filesystem (an error
 * only if its transaction commits) and feed the v1 commit checksum. */
static int scan_descriptor(struct jbd_journal *j, struct rstate *st, const uint8_t *buf,
                           uint32_t at, uint32_t next, uint32_t tid)
{
	uint32_t bs = j->cfg.block_size;
	int rc;
	struct range_ctx rctx = {.j = j};
	walk_tags(j, buf, tag_in_range, &rctx, &rc);
	if (rc) {
		rc = 0;
		if (!st->range_bad) {
			st->range_bad = true;
			st->range_tid = tid;
			st->range_at = at;
			st->range_blk = rctx.bad;
		}
	}
	if (j->csum_v1 && !st->end_set) {
		uint32_t n = walk_tags(j, buf, NULL, NULL, &rc);
		st->crc = jbd_crc32_be(st->crc, buf, bs);
		uint32_t p = next;
		for (uint32_t i = 0; i < n; i++) {
			rc = jbd_log_read(j, p, j->tmp2);
			if (rc)
				return rc;
			st->crc = jbd_crc32_be(st->crc, j->tmp2, bs);
			p = jbd_wrap(j, (uint64_t)p + 1);
		}
	}
	return 0;
}

/* Scan pass, a commit block: 0 when it ends its transaction well, 1 when the log ends
 * here (a stale or corrupt commit), -EUCLEAN for a corrupt log. */
static int scan_commit(struct jbd_journal *j, struct rstate *st, const uint8_t *buf, uint32_t at,
                       uint32_t tid)
{
	if (st->range_bad && st->range_tid == tid) {
		/* committed, yet it names blocks outside the filesystem */
		st->end_set = true;
		st->end_tid = tid;
		set_stop(st,
		         "journal block %u: transaction %u names a block beyond the "
		         "filesystem",
		         st->range_at, tid);
		return bo_errf(&j->err, -EUCLEAN,
		               "journal block %u: transaction %u names block %llu beyond "
		               "the filesystem (%llu blocks)",
		               st->range_at, tid, (unsigned long long)st->range_blk,
		               (unsigned long long)j->fs_blocks);
	}
	bool bad = false;
	if (j->csum_v1) {
		uint32_t found = get_be32(buf + 16);
		uint8_t ty = buf[12], sz = buf[13];
		if (st->end_set) {
			st->info->failed_commit = st->end_tid;
			return 1;
		}
		if (!((st->crc == found && ty == JBD_CRC32_CHKSUM && sz == JBD_CRC32_CHKSUM_SIZE) ||
		      (ty == 0 && sz == 0 && found == 0)))
			bad = true;
		st->crc = ~0u;
	}
	uint64_t commit_time = get_be64(buf + 0x30);
	if (bad || !jbd_commit_csum_ok(j, buf)) {
		if (commit_time < st->last_commit_time) {
			/* older than the commit before it: a stale block
			 * from an earlier use of the log, a clean end (as
			 * the kernel) */
			set_stop(st,
			         "journal block %u: stale commit of transaction "
			         "%u (older commit time, bad checksum)",
			         at, tid);
			return 1;
		}
		/* the first corrupt commit ends the log; it is not replayed */
		st->end_set = true;
		st->end_tid = tid;
		st->info->failed_commit = tid;
		set_stop(st,
		         "journal block %u: commit checksum of transaction "
		         "%u failed",
		         at, tid);
		return 1;
	}
	if (st->need_check_time) {
		if (commit_time >= st->last_commit_time) {
			set_stop(st, "transaction %u: bad block checksum (at %u)", tid, at);
			return bo_errf(&j->err, -EUCLEAN,
			               "journal: invalid checksum in transaction %u", tid);
		}
		/* stale blocks from an older use of the log: a clean end */
		set_stop(st, "transaction %u: stale (older commit time) at %u", tid, at);
		return 1;
	}
	st->last_commit_time = commit_time;
	return 0;
}

static int one_pass(struct jbd_journal *j, struct rstate *st, enum pass pass)
{
	uint32_t tid = j->sb.sequence, next = j->sb.start;
	uint64_t walked = 0, cap = j->last - j->first;
	uint8_t *buf = j->tmp;
	st->crc = ~0u;

	for (;;) {
		if (pass != PASS_SCAN && (int32_t)(tid - st->end_tid) >= 0)
			break;
		/* A valid log is never longer than the journal: this bounds the walk on
		 * any corrupt input (a loop of blocks with the same tid). */
		if (++walked > cap) {
			set_stop(st, "walked the whole log without an end (at tid %u)%.0u", tid, 0);
			break;
		}
		uint32_t at = next;
		int rc = jbd_log_read(j, at, buf);
		if (rc)
			return rc;
		next = jbd_wrap(j, (uint64_t)at + 1);
		if (get_be32(buf) != JBD_MAGIC) {
			if (pass == PASS_SCAN)
				set_stop(st, "journal block %u: no magic (end of log at tid %u)",
				         at, tid);
			break;
		}
		uint32_t type = get_be32(buf + 4), seq = get_be32(buf + 8);
		if (seq != tid) {
			if (pass == PASS_SCAN)
				set_stop(
				    st,
				    "journal block %u: sequence %u is not the next (end of log)",
				    at, seq);
			break;
		}
		if (type == JBD_DESCRIPTOR_BLOCK) {
			if (!jbd_block_tail_ok(j, buf)) {
				if (pass != PASS_SCAN)
					return bo_errf(
					    &j->err, -EUCLEAN,
					    "journal block %u: descriptor checksum mismatch", at);
				st->need_check_time = true;
			}
			if (pass == PASS_SCAN && !st->need_check_time &&
			    (rc = scan_descriptor(j, st, buf, at, next, tid)))
				return rc;
			if (pass != PASS_REPLAY) {
				uint32_t n = walk_tags(j, buf, NULL, NULL, &rc);
				walked += n;
				next = jbd_wrap(j, (uint64_t)next + n);
				continue;
			}
			rc = replay_tags(j, st, buf, tid, &next);
			if (rc)
				return rc;
			continue;
		}
		if (type == JBD_COMMIT_BLOCK) {
			if (pass == PASS_SCAN && (rc = scan_commit(j, st, buf, at, tid)) != 0) {
				if (rc < 0)
					return rc;
				break;
			}
			if (pass == PASS_REPLAY)
				st->replayed++;
			tid++;
			continue;
		}
		if (type == JBD_REVOKE_BLOCK) {
			if (pass == PASS_SCAN && !jbd_block_tail_ok(j, buf))
				st->need_check_time = true;
			if (pass == PASS_REVOKE) {
				rc = scan_revoke(j, st, buf, tid, at);
				if (rc)
					return rc;
			}
			continue;
		}
		if (pass == PASS_SCAN)
			set_stop(st, "journal block %u: unknown block type %u (end of log)", at,
			         type);
		break;
	}
	if (pass == PASS_SCAN && !st->end_set) {
		st->end_set = true;
		st->end_tid = tid;
	}
	return 0;
}

int jbd_journal_recover(struct jbd_journal *j, struct jbd_recovery_info *info)
{
	struct jbd_recovery_info dummy;
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	info->start_tid = info->end_tid = j->sb.sequence;
	if (j->aborted)
		return j->aborted;
	if (!j->sb.start) {
		snprintf(info->stop, sizeof(info->stop), "journal empty (s_start = 0)");
		return 0;
	}
	struct rstate st = {.info = info};
	jmap_init(&st.revoked);
	j->err.msg[0] = 0;
	int rc = one_pass(j, &st, PASS_SCAN);
	if (!rc)
		rc = one_pass(j, &st, PASS_REVOKE);
	if (!rc)
		rc = one_pass(j, &st, PASS_REPLAY);
	jmap_free(&st.revoked);
	/* Only what the replay pass got through counts: a scan that failed replayed
	 * nothing, and end_tid is then still the first transaction of the log. */
	info->nr_transactions = st.replayed;
	info->end_tid = j->sb.sequence + st.replayed;
	if (rc)
		return rc; /* corrupt log: leave the journal as it is for a checker to see */
	info->end_tid = st.end_tid;
	/* Replayed blocks durable before the log that holds them is discarded. */
	int frc = blk_flush(j->d);
	if (frc)
		return bo_errf(&j->err, frc, "recovery: flush: %s", bo_errstr(&j->d->err, frc));
	if (info->failed_commit && j->cfg.corrupt_commit_fails)
		return bo_errf(&j->err, -EUCLEAN,
		               "journal transaction %u is corrupt (%s): the transactions "
		               "before it were replayed, the log is kept for fsck",
		               info->failed_commit, info->stop);
	/* The next transaction id is past every id that may be in the log, as the
	 * kernel does (++end_transaction): no stale commit can ever match again. */
	j->sb.sequence = st.end_tid + 1;
	j->sb.start = 0;
	frc = jbd_write_sb(j, BLK_FUA);
	if (frc)
		return frc;
	j->next_tid = j->sb.sequence;
	j->sb_empty = true;
	/* blocks whose logged copy failed its checksum were skipped, as the kernel
	 * does; the detail of the last one is in j->err */
	return info->nr_bad_csum ? -EUCLEAN : 0;
}
