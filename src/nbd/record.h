/* SPDX-License-Identifier: GPL-2.0-or-later */
/* record.h — the plugin's recording mode (record=FILE): a recorder over the served
 * stack, the `marker` export whose writes become marks, and saving the log
 * (docs/nbd.md, docs/realkernel.md section 1). No nbdkit types here. */
#ifndef BLACKOUT_NBD_RECORD_H
#define BLACKOUT_NBD_RECORD_H

#include <stdint.h>

#include "blackout/err.h"

struct nbd_srv;

/* The marker export: a scratch disk of this size. */
#define NBD_REC_MARKER_BYTES (1u << 20)
/* Longest stack spec a recording takes: the first mark is "stack SPEC". */
#define NBD_REC_SPEC_MAX 249

/* Starts recording everything the stack of s is sent: the log's first record is the
 * mark "stack SPEC"; the log may grow to cap bytes in its file format (0: the largest
 * log rec_log_load reads, REC_LOG_FILE_MAX). Checks at once that PATH.tmp can be
 * created beside PATH, so a bad path fails at load, not at the end of a guest run. */
int nbd_rec_start(struct nbd_srv *s, const char *spec, const char *path, uint64_t cap,
                  struct bo_err *err);
/* Frees the recording state (the caller saves first). */
void nbd_rec_stop(struct nbd_srv *s);
/* Writes the log to its file atomically (PATH.tmp, fsync, rename); *records is how
 * many it holds. -ENOSPC (with the reason in err) when the cap refused an operation:
 * the file is written all the same but is not the whole run. Takes the device lock
 * only to copy the log out. */
int nbd_rec_save(struct nbd_srv *s, uint64_t *records, struct bo_err *err);

/* For stats: what the log holds and how many operations its cap refused. */
void nbd_rec_counts(struct nbd_srv *s, uint64_t *records, uint64_t *bytes, uint64_t *refused);

/* The marker export. A write appends the mark it carries (its bytes up to the
 * first NUL or newline, or to its end: 1 to 255 bytes, else -EINVAL) to the log in
 * the order the plugin receives it, and is kept so reads return it. The write
 * returns 1 when its mark was fail-member's and failed the member (the first time),
 * else 0 or -errno. */
int nbd_rec_marker_pread(struct nbd_srv *s, void *buf, uint32_t count, uint64_t off);
int nbd_rec_marker_pwrite(struct nbd_srv *s, const void *buf, uint32_t count, uint64_t off);

#endif
