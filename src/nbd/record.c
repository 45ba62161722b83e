// SPDX-License-Identifier: GPL-2.0-or-later
/* record.c — the plugin's recording mode: a recorder (src/blk/rec.c) between the NBD
 * requests and the stack, the `marker` export that turns the guest's writes into
 * marks in the same log, and the atomic save of that log (docs/nbd.md). */
#include "nbd/record.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/rec.h"
#include "blackout/util.h"
#include "nbd/server.h"

struct nbd_rec {
	struct rec_log *log;
	struct bdev *recdev; /* over the stack; does not own it */
	/* members=: one recorder over each member, all into the one log */
	struct bdev *mrec[NBD_SRV_MEMBERS_MAX];
	unsigned nm;
	char *path, *tmp;
	unsigned char *marker; /* the marker export's contents */
	uint64_t cap;
};

/* Whether PATH.tmp can be made: a save must not be the first to find out. */
static int check_writable(const char *tmp, struct bo_err *err)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return bo_errf(err, -errno, "record=: cannot create %.400s: %s", tmp,
		               strerror(errno));
	close(fd);
	unlink(tmp);
	return 0;
}

static void rec_free(struct nbd_rec *r)
{
	if (!r)
		return;
	if (r->recdev)
		blk_close(r->recdev);
	for (unsigned i = 0; i < r->nm; i++)
		blk_close(r->mrec[i]);
	rec_log_free(r->log);
	free(r->path);
	free(r->tmp);
	free(r->marker);
	free(r);
}

int nbd_rec_start(struct nbd_srv *s, const char *spec, const char *path, uint64_t cap,
                  struct bo_err *err)
{
	size_t n = strlen(spec);
	if (n > NBD_REC_SPEC_MAX)
		return bo_errf(err, -ENAMETOOLONG,
		               "record=: the stack spec is %zu bytes; a recording takes at most %d "
		               "(its first mark, \"stack SPEC\", is at most %d bytes)",
		               n, NBD_REC_SPEC_MAX, REC_MARK_MAX);
	if (cap > REC_LOG_FILE_MAX)
		return bo_errf(err, -EINVAL,
		               "record-max=%" PRIu64 ": at most %llu bytes (the largest log "
		               "blackout reads back)",
		               cap, (unsigned long long)REC_LOG_FILE_MAX);
	if (cap == 0)
		cap = REC_LOG_FILE_MAX;
	struct nbd_rec *r = calloc(1, sizeof *r);
	if (!r)
		return bo_errf(err, -ENOMEM, "out of memory");
	r->path = strdup(path);
	r->tmp = malloc(strlen(path) + 5);
	r->marker = calloc(1, NBD_REC_MARKER_BYTES);
	if (!r->path || !r->tmp || !r->marker) {
		rec_free(r);
		return bo_errf(err, -ENOMEM, "out of memory");
	}
	sprintf(r->tmp, "%s.tmp", path);
	int rc = check_writable(r->tmp, err);
	uint64_t sizes[NBD_SRV_MEMBERS_MAX];
	for (unsigned i = 0; i < s->nmembers; i++)
		sizes[i] = s->mio[i]->nr_sectors;
	if (rc == 0 &&
	    (rc = s->nmembers
	              ? rec_log_new_devices(s->dev->sector_size, s->nmembers, sizes, &r->log)
	              : rec_log_new(s->dev->sector_size, s->dev->nr_sectors, &r->log)))
		bo_errf(err, rc, "record=: %s", strerror(-rc));
	if (rc == 0) {
		rec_log_set_cap(r->log, cap);
		char mark[REC_MARK_MAX + 1];
		snprintf(mark, sizeof mark, "stack %s", spec);
		if ((rc = rec_log_mark(r->log, mark)))
			bo_errf(err, rc, "record=: the stack mark: %s", strerror(-rc));
	}
	if (rc == 0 && !s->nmembers && (rc = rec_open(s->dev, r->log, 0, &r->recdev)))
		bo_errf(err, rc, "record=: %s", bo_errstr(&s->dev->err, rc));
	/* members: the whole stack is not an export; each member records as its device */
	for (unsigned i = 0; rc == 0 && i < s->nmembers; i++) {
		if ((rc = rec_open_dev(s->mio[i], r->log, i, 0, &r->mrec[i])))
			bo_errf(err, rc, "record=: member %u: %s", i,
			        bo_errstr(&s->mio[i]->err, rc));
		else
			r->nm++;
	}
	if (rc) {
		rec_free(r);
		return rc;
	}
	r->cap = cap;
	s->rec = r;
	if (r->recdev)
		s->io = r->recdev;
	for (unsigned i = 0; i < r->nm; i++)
		s->mio[i] = r->mrec[i];
	return 0;
}

void nbd_rec_stop(struct nbd_srv *s)
{
	if (!s || !s->rec)
		return;
	for (unsigned i = 0; i < s->rec->nm; i++)
		s->mio[i] = blk_lower(s->dev, i);
	rec_free(s->rec);
	s->rec = NULL;
	s->io = s->dev;
}

void nbd_rec_counts(struct nbd_srv *s, uint64_t *records, uint64_t *bytes, uint64_t *refused)
{
	struct rec_log *l = s->rec->log;
	*records = rec_log_len(l);
	*bytes = rec_log_bytes(l);
	*refused = rec_log_refused(l);
}

int nbd_rec_save(struct nbd_srv *s, uint64_t *records, struct bo_err *err)
{
	struct nbd_rec *r = s->rec;
	*records = 0;
	if (!r)
		return bo_errf(err, -EINVAL, "not recording (start the plugin with record=FILE)");
	void *buf = NULL;
	size_t len = 0;
	/* Copied out under the lock, written without it: NBD I/O waits only for the copy. */
	pthread_mutex_lock(&s->lock);
	int rc = rec_log_serialize(r->log, &buf, &len);
	uint64_t n = rec_log_len(r->log), refused = rec_log_refused(r->log);
	uint64_t bytes = rec_log_bytes(r->log);
	pthread_mutex_unlock(&s->lock);
	if (rc)
		return bo_errf(err, rc, "cannot serialise the log: %s", strerror(-rc));
	int fd = open(r->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0) {
		rc = -errno;
		free(buf);
		return bo_errf(err, rc, "%.400s: %s", r->tmp, strerror(-rc));
	}
	rc = bo_write_full(fd, buf, len);
	free(buf);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(r->tmp, r->path) < 0)
		rc = -errno;
	if (rc) {
		unlink(r->tmp);
		return bo_errf(err, rc, "%.400s: %s", r->path, strerror(-rc));
	}
	*records = n;
	if (refused)
		return bo_errf(err, -ENOSPC,
		               "saved %" PRIu64 " records to %.300s, but the log is incomplete: "
		               "%" PRIu64 " operations were refused at its cap of %" PRIu64
		               " bytes (it holds %" PRIu64 ")",
		               n, r->path, refused, r->cap, bytes);
	return 0;
}

static int marker_range(struct nbd_srv *s, uint32_t count, uint64_t off)
{
	if (!s->rec)
		return bo_errf(&s->err, -EINVAL, "marker export: the plugin is not recording");
	if (off > NBD_REC_MARKER_BYTES || count > NBD_REC_MARKER_BYTES - off)
		return bo_errf(&s->err, -EINVAL,
		               "marker export: request [%" PRIu64 ", +%u) beyond its %u bytes", off,
		               count, NBD_REC_MARKER_BYTES);
	return 0;
}

int nbd_rec_marker_pread(struct nbd_srv *s, void *buf, uint32_t count, uint64_t off)
{
	nbd_srv_req_start(s);
	int rc = marker_range(s, count, off);
	if (rc == 0)
		memcpy(buf, s->rec->marker + off, count);
	return nbd_srv_req_end(s, rc);
}

int nbd_rec_marker_pwrite(struct nbd_srv *s, const void *buf, uint32_t count, uint64_t off)
{
	const char *p = buf;
	size_t n = 0;
	while (n < count && n <= REC_MARK_MAX && p[n] && p[n] != '\n')
		n++;
	nbd_srv_req_start(s);
	int rc = marker_range(s, count, off);
	char mark[REC_MARK_MAX + 2], shown[4 * 64 + 1];
	memcpy(mark, p, n);
	mark[n] = '\0';
	bo_escape(shown, sizeof shown, mark, n < 64 ? n : 64);
	if (rc) {
		/* marker_range said why */
	} else if (n == 0) {
		rc = bo_errf(&s->err, -EINVAL,
		             "marker export: the write at byte %" PRIu64
		             " holds no mark (its first byte is a NUL or a newline)",
		             off);
	} else if (n > REC_MARK_MAX) {
		rc = bo_errf(&s->err, -EINVAL,
		             "marker export: the mark written at byte %" PRIu64
		             " (\"%s...\") is longer than %d bytes (end it with a NUL or newline)",
		             off, shown, REC_MARK_MAX);
	} else if ((rc = rec_log_mark(s->rec->log, mark)) != 0) {
		bo_errf(&s->err, rc, "marker export: mark \"%s%s\" refused: %s", shown,
		        n > 64 ? "..." : "",
		        rc == -ENOSPC ? "the log is full (its cap was reached)" : strerror(-rc));
	} else {
		memcpy(s->rec->marker + off, buf, count);
		/* fail-member: the member fails with the mark, in the same hold of the lock,
		 * so no request of its is logged after the mark */
		if (s->fail_mark && !s->member_failed && strcmp(mark, s->fail_mark) == 0) {
			s->member_failed = true;
			rc = 1;
		}
	}
	return nbd_srv_req_end(s, rc);
}
