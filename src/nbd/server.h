/* SPDX-License-Identifier: GPL-2.0-or-later */
/* server.h — what the nbdkit plugin serves: one blackout stack, byte-addressed NBD
 * requests mapped onto it, and the control commands. No nbdkit types here. */
#ifndef BLACKOUT_NBD_SERVER_H
#define BLACKOUT_NBD_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/err.h"
#include "nbd/control.h"

/* Requests seen by the plugin (not by the devices, which count their own). */
struct nbd_srv_counters {
	uint64_t reads, writes, fua_writes, flushes, trims, zeros;
	uint64_t rmw; /* writes that were not sector-aligned (read-modify-write) */
	uint64_t cuts, replugs;
	uint64_t eio; /* requests refused because the power was off */
};

struct nbd_rec;

/* Most members one plugin serves (a concat's limit, and the log's). */
#define NBD_SRV_MEMBERS_MAX 64
/* The export of the whole stack, for the data path's `member` argument. */
#define NBD_SRV_WHOLE (-1)

struct nbd_srv {
	struct bdev *dev;
	/* Where writes, flushes and discards go: dev, or the recorder over it while
	 * recording (record.c); power and control commands always act on dev. */
	struct bdev *io;
	struct nbd_rec *rec; /* NULL unless recording */
	uint64_t size;       /* bytes exported (<= the stack's size) */
	/* members=: the top concat's lowers served one export each (0: not). Member i is
	 * bytes [mstart[i], mstart[i+1]) of dev; its writes, flushes and discards go to
	 * mio[i] (lower i, or its recorder), so a flush reaches that member alone. */
	unsigned nmembers;
	struct bdev *mio[NBD_SRV_MEMBERS_MAX];
	uint64_t mstart[NBD_SRV_MEMBERS_MAX + 1];
	/* Serialises the NBD requests, which nbdkit runs on several threads at once, and
	 * the control thread: the order requests take it is the order the stack and the
	 * recorder see (and a flush, taking it after every write already answered,
	 * covers them as NBD asks). */
	pthread_mutex_t lock;
	struct nbd_srv_counters c;
	/* cut-at: the armed op-count cut */
	bool cut_armed;
	uint64_t cut_countdown;
	struct nbd_ctl_outcome cut_outcome;
	char last_cut[512]; /* summary of the last cut (stats shows it) */
	int armed[64];      /* fault rules armed through the control socket */
	unsigned narmed;
	/* fail-member=I@MARK: member fail_member (-1: none) answers EIO to every request
	 * once the marker export has taken fail_mark (set under the lock, with the mark) */
	int fail_member;
	const char *fail_mark; /* the plugin's */
	bool member_failed;
	struct bo_err err; /* a failing request's message, under the lock */
};

/* Opens the stack described by `spec` (dev_stack_open_text). size 0 exports the whole
 * stack; otherwise the first `size` bytes (a multiple of the sector size). */
int nbd_srv_open(const char *spec, uint64_t size, struct nbd_srv **out, struct bo_err *err);
void nbd_srv_close(struct nbd_srv *s);
/* members=: the stack's top must be a `concat` of 2..64 lowers, each a whole number
 * of 4 KiB; each becomes an export of its own (docs/nbd.md). Before recording. */
int nbd_srv_members(struct nbd_srv *s, struct bo_err *err);

/* The NBD data path, for the whole export (member NBD_SRV_WHOLE) or member i. Byte
 * offsets and lengths within that export, any alignment; `fua` asks for the write to
 * be durable when it completes. Return 0 or -errno. */
int nbd_srv_pread(struct nbd_srv *s, int member, void *buf, uint32_t count, uint64_t off);
int nbd_srv_pwrite(struct nbd_srv *s, int member, const void *buf, uint32_t count, uint64_t off,
                   bool fua);
int nbd_srv_flush(struct nbd_srv *s, int member);
int nbd_srv_trim(struct nbd_srv *s, int member, uint32_t count, uint64_t off, bool fua);
int nbd_srv_zero(struct nbd_srv *s, int member, uint32_t count, uint64_t off, bool fua);
/* Why this thread's last failing request failed, and whether that is the experiment
 * (power off, a failed member) rather than news for the log. */
const char *nbd_srv_last_error(bool *quiet);
/* A request of record.c's marker export runs between these: start takes the lock;
 * end keeps the failure's message for nbd_srv_last_error, unlocks and returns rc. */
void nbd_srv_req_start(struct nbd_srv *s);
int nbd_srv_req_end(struct nbd_srv *s, int rc);

/* A control reply being built: text malloc'd and grown as needed. */
struct nbd_srv_reply {
	char *text;
	size_t len, cap;
	bool oom; /* an append failed: the reply is incomplete (send an error instead) */
};

/* Runs one control request line and appends its reply (data lines, then one final
 * "ok ..." or "error: ..." line, each ending in '\n', control bytes escaped) to r.
 * The device lock is held only while the command runs; the reply is the caller's
 * to send afterwards, so a client that does not read can never hold up NBD I/O.
 * Returns 1 when the client asked to quit, else 0. */
int nbd_srv_control(struct nbd_srv *s, const char *line, size_t len, struct nbd_srv_reply *reply);

#endif
