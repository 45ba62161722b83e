/* fuzz_log.c — libFuzzer target for the I/O log parser (untrusted files given to
 * `blackout log dump` and the explorer): any bytes either parse into a log that
 * replays within the device, or are rejected with a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "blackout/rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_log *log;
	struct bo_err err = {{0}};
	if (rec_log_parse(data, size, &log, &err) != 0)
		return 0;
	/* a parsed log must replay without going outside a device of its geometry */
	struct bdev *d;
	if (rec_log_nr_sectors(log) <= 4096 &&
	    blk_mem_open(rec_log_sector_size(log), rec_log_nr_sectors(log), &d) == 0) {
		if (rec_replay(log, rec_log_len(log), d, &err) != 0)
			abort(); /* parse accepted something replay cannot do */
		blk_close(d);
	}
	void *buf;
	size_t len;
	if (rec_log_serialize(log, &buf, &len) == 0)
		free(buf);
	rec_log_free(log);
	return 0;
}
