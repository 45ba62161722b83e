// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_crash_log.c — libFuzzer target for the explorer's checks of a recorded run
 * (crash_log_check: the marks naming stack, fs and workload, the run's step/fail/end
 * marks, the geometry) on any bytes the log parser accepts: either refused with a
 * message, or the run begins at a `step 0` mark inside the log and the steps that
 * began are steps of the workload. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/rec.h"
#include "crash/crash_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NRUN 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_log *log;
	struct bo_err err = {{0}};
	if (rec_log_parse(data, size, &log, &err) != 0)
		return 0;
	struct crash_config cfg = {
	    .stack = "mem(size=1M)", .fs = "ext4", .workload = "w", .log = "fuzz.log"};
	bool failed[NRUN] = {false};
	size_t run0 = SIZE_MAX, begun = 0;
	memset(&err, 0, sizeof(err));
	int rc = crash_log_check(&cfg, log, rec_log_sector_size(log), rec_log_nr_sectors(log), NRUN,
	                         &run0, failed, &begun, &err);
	if (rc != 0 && !err.msg[0])
		abort(); /* a refusal must say why */
	if (rc == 0) {
		const struct rec_entry *e = run0 < rec_log_len(log) ? rec_log_get(log, run0) : NULL;
		if (!e || e->op != REC_MARK || strcmp(e->mark, "step 0") != 0)
			abort(); /* the run must begin at its first step */
		if (begun == 0 || begun > NRUN)
			abort(); /* the steps that began are the workload's */
	}
	rec_log_free(log);
	return 0;
}
