// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_log.c — libFuzzer target for the I/O log parser (untrusted files given to
 * `blackout log dump` and the explorer): any bytes either parse into a log that
 * replays within the device and re-serialises to the very same bytes (every field
 * the format leaves no choice in is checked), or are rejected with a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/rec.h"
#include "blackout/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_log *log;
	struct bo_err err = {{0}};
	if (rec_log_parse(data, size, &log, &err) != 0) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		return 0;
	}
	/* a parsed log must replay without going outside a device of its geometry: its
	 * devices' concat for a log of several */
	struct bdev *d = NULL;
	uint32_t ss = rec_log_sector_size(log);
	unsigned nd = rec_log_ndev(log);
	if (rec_log_nr_sectors(log) <= 4096 && nd == 1)
		blk_mem_open(ss, rec_log_nr_sectors(log), &d);
	if (rec_log_nr_sectors(log) <= 4096 && nd > 1) {
		char spec[64 * 48 + 64];
		size_t n = (size_t)snprintf(spec, sizeof spec, "concat > [");
		for (unsigned i = 0; i < nd; i++)
			n += (size_t)snprintf(spec + n, sizeof spec - n,
			                      "%sdisk(sector=%u) > mem(size=%llu)", i ? " ; " : "",
			                      ss,
			                      (unsigned long long)rec_log_dev_sectors(log, i) * ss);
		snprintf(spec + n, sizeof spec - n, "]");
		if (dev_stack_open_text(spec, NULL, &d, &err) != 0)
			abort(); /* a table the reader took is a stack */
	}
	if (d) {
		if (rec_replay(log, rec_log_len(log), d, &err) != 0)
			abort(); /* parse accepted something replay cannot do */
		blk_close(d);
	}
	for (size_t i = 0; i < rec_log_len(log); i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		if (e->result > 0 || e->result < -4095)
			abort(); /* log dump turns a result into strerror(-result) */
		if (e->op != REC_MARK)
			continue;
		char line[4 * REC_MARK_MAX + 1];
		size_t n = bo_escape(line, sizeof line, e->mark, strlen(e->mark));
		if (n == 0 || n >= sizeof line)
			abort(); /* a mark is 1..255 bytes, at most 4 printed bytes each */
		for (size_t k = 0; k < n; k++)
			if ((unsigned char)line[k] < 0x20 || (unsigned char)line[k] >= 0x7f)
				abort(); /* what log dump prints reaches a terminal */
	}
	void *buf;
	size_t len;
	if (rec_log_serialize(log, &buf, &len) != 0)
		abort(); /* what was read can be written */
	if (len != size || memcmp(buf, data, size) != 0)
		abort(); /* one log, one encoding: a field the reader let pass was not checked */
	free(buf);
	rec_log_free(log);
	return 0;
}
