// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_observation.c — libFuzzer target for the guest observation lines (a guest
 * kernel's raw "BO:OBS ..." report, crash/obsparse.c): any input either parses or is
 * refused naming the observation; what parses is judged against a small workload
 * (digests turned back into bytes, the oracle, the checkers, md's start carried). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

static const char *WL = "setup\nmkdir /keep\ncreate /keep/a\nwrite /keep/a 0 5k\n"
                        "run\ncreate /log\nfsync-dir /\nappend /log 3k\nfsync /log\n"
                        "rename /keep/a /keep/b\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct crash_oracle *o;
	static size_t nrun;
	struct bo_err err = {{0}};
	if (!o) {
		struct crash_workload *w;
		check(crash_workload_parse(WL, strlen(WL), "fuzz", &w, &err) == 0);
		check(crash_oracle_new(w, NULL, &o, &err) == 0);
		nrun = w->nrun;
		crash_workload_free(w);
	}
	if (size > 1 << 20)
		return 0;
	struct crash_observation obs;
	if (crash_obs_parse_lines((const char *)data, size, &obs, &err) != 0) {
		check(strstr(err.msg, "observation") != NULL);
		return 0;
	}
	for (unsigned boot = 0; boot < 3; boot++) {
		struct crash_promises p = {.oracle = o,
		                           .completed = (size + boot) % (nrun + 1),
		                           .boot = (enum crash_boot)boot,
		                           .flags = boot == 1 ? CRASH_ORACLE_WRITEBACK : 0};
		struct crash_outcome out;
		check(crash_judge(&p, &obs, &out) == 0);
		check(!out.detected || out.broken || out.detected_by[0]);
		check(out.md == obs.md); /* md's start is carried, never judged */
	}
	crash_observation_free(&obs);
	(void)crash_guest_completed((const char *)data, size);
	return 0;
}
