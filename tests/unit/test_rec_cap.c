// SPDX-License-Identifier: GPL-2.0-or-later
/* test_rec_cap.c — the log's size cap (rec_log_set_cap): the size it counts is the
 * file's, an operation the log has no room for is refused before the lower device
 * sees it (so the log never misses what the device did), and refusals are counted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/rec.h"
#include "tap.h"

#define NSECT 64

int main(void)
{
	struct rec_log *log;
	struct bdev *mem, *rec;
	tap_require(rec_log_new(512, NSECT, &log) == 0 && blk_mem_open(512, NSECT, &mem) == 0 &&
	                rec_open(mem, log, REC_OWN_LOWER, &rec) == 0,
	            "a recorder over memory");
	is_int((long long)rec_log_bytes(log), 44, "an empty log is its 44-byte header");

	unsigned char a[1024], b[512], got[512];
	memset(a, 0xaa, sizeof a);
	memset(b, 0xbb, sizeof b);
	/* header 44 + mark (36 + 4) + write of 2 sectors (36 + 1024) + flush 36 = 1180 */
	ok(rec_log_mark(log, "mark") == 0, "a mark");
	ok(blk_write(rec, 0, 2, a, 0) == 0, "a write of 2 sectors");
	ok(blk_flush(rec) == 0, "a flush");
	is_int((long long)rec_log_bytes(log), 1180, "bytes counted as the file format has them");

	void *buf;
	size_t len;
	tap_require(rec_log_serialize(log, &buf, &len) == 0, "serialises");
	is_int((long long)len, 1180, "rec_log_bytes is what a save writes");
	free(buf);

	rec_log_set_cap(log, 1180 + 36 + 20);
	ok(blk_write(rec, 4, 1, b, 0) == -ENOSPC, "a write past the cap is refused with ENOSPC");
	ok(strstr(rec->err.msg, "the log is full") != NULL, "... with a message: %s", rec->err.msg);
	ok(blk_read(mem, 4, 1, got) == 0 && got[0] == 0,
	   "the refused write never reached the device");
	is_int((long long)rec_log_len(log), 3, "nor the log");
	is_int((long long)rec_log_refused(log), 1, "the refusal is counted");
	ok(blk_flush(rec) == 0, "a flush still fits (36 bytes)");
	ok(blk_discard(rec, 0, 1) == -ENOSPC, "then a discard does not");
	ok(rec_log_mark(log, "m") == -ENOSPC, "nor a mark");
	is_int((long long)rec_log_refused(log), 3, "three refusals");

	rec_log_set_cap(log, 0);
	ok(blk_write(rec, 4, 1, b, 0) == 0 && rec_log_len(log) == 5, "cap 0: no cap");
	blk_close(rec);
	rec_log_free(log);
	return tap_done();
}
