// SPDX-License-Identifier: GPL-2.0-or-later
/* test_probe.c — the black-box probe (src/probe) in-process on stacks whose behaviour is
 * known, one seeded pull each: the grid of `stack probe`'s tests (cheap flash → collateral
 * damage around a 128 KiB erase block, a cache ignoring flushes → flushes not honoured,
 * an honest cache and careful flash → honoured, no damage, a tearing disk → torn
 * sectors); and the acknowledgement log's parser on good and bad input. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blackout/probe.h"
#include "tap.h"

#define SEEDS 3

static int run(const char *spec, uint64_t seed, struct probe_verdict *v)
{
	struct probe_inproc_opts o = {.seed = seed, .write = 40, .region_bytes = 2u << 20};
	struct bo_err err = {{0}};
	int rc = probe_inproc(spec, &o, v, &err);
	if (rc)
		diag("%s: %s", spec, err.msg);
	return rc;
}

static void grid(void)
{
	struct probe_verdict v;
	bool eb128 = false;
	for (uint64_t s = 1; s <= SEEDS; s++) {
		const char *spec = "flash(ftl=cheap,eb=128k,size=16M)";
		if (run(spec, s, &v) == 0) {
			ok(v.flush_honoured && v.damaged > 0 && v.collateral_measured &&
			       v.erase_block >= (64u << 10) && v.erase_block <= (128u << 10),
			   "%s seed %llu: flushes honoured, collateral damage (%llu units), erase "
			   "block "
			   "%llu bytes (64-128 KiB)",
			   spec, (unsigned long long)s, (unsigned long long)v.damaged,
			   (unsigned long long)v.erase_block);
			eb128 |= v.erase_block == (128u << 10);
		}
		spec = "cache(flush=ignore) > disk > mem(size=4M)";
		if (run(spec, s, &v) == 0)
			ok(!v.flush_honoured && v.lost_flush > 0 && !v.collateral_measured,
			   "%s seed %llu: flushes not honoured (%llu units lost)", spec,
			   (unsigned long long)s, (unsigned long long)v.lost_flush);
		spec = "cache(flush=honor) > disk > mem(size=4M)";
		if (run(spec, s, &v) == 0)
			ok(v.flush_honoured && v.fua_honoured && v.damaged == 0 &&
			       v.torn_units == 0,
			   "%s seed %llu: flushes and FUA honoured, no collateral damage, no torn "
			   "sector",
			   spec, (unsigned long long)s);
		spec = "flash(ftl=careful,eb=128k,size=16M)";
		if (run(spec, s, &v) == 0)
			ok(v.flush_honoured && v.damaged == 0 && v.torn_units == 0,
			   "%s seed %llu: flushes honoured, no collateral damage", spec,
			   (unsigned long long)s);
		spec = "disk(tear=byte) > mem(size=4M)";
		if (run(spec, s, &v) == 0)
			ok(v.flush_honoured && v.torn_units > 0 && v.tear_granularity < 512 &&
			       v.damaged == 0,
			   "%s seed %llu: torn sectors (%llu), torn inside a sector (at %u bytes)",
			   spec, (unsigned long long)s, (unsigned long long)v.torn_units,
			   v.tear_granularity);
		spec = "disk(tear=sector) > mem(size=4M)";
		if (run(spec, s, &v) == 0)
			ok(v.torn_units == 0 && v.damaged == 0 && v.flush_honoured,
			   "%s seed %llu: whole sectors, no torn one", spec, (unsigned long long)s);
	}
	ok(eb128, "cheap flash: some pull shows the whole 128 KiB erase block");
	struct probe_inproc_opts o = {.seed = 1, .write = 10};
	struct bo_err err = {{0}};
	is_int(probe_inproc("mem(size=8k)", &o, &v, &err), -EINVAL,
	       "a device of 2 blocks: refused");
	ok(strstr(err.msg, "4 blocks or more") != NULL, "... saying how large it must be: %s",
	   err.msg);
}

static void log_parse(void)
{
	struct probe_log l;
	struct bo_err err = {{0}};
	const char good[] = "blackout-probe 1 run=00000000000000ab unit=512 first=8 units=64\n"
	                    "B 1\nI 2 8 8 1\nW 2\nF 3\nI 4 64 8 0\nW 4\nI 5 16 8 0\nW";
	is_int(probe_log_parse(good, sizeof(good) - 1, &l, &err), 0, "a log parses: %s", err.msg);
	ok(l.n == 5 && l.run == 0xab && l.first == 8 && l.units == 64 && l.torn_tail &&
	       l.op[1].acked && l.op[1].fua && l.op[2].kind == PROBE_OP_FLUSH && !l.op[4].acked,
	   "... ops, region, FUA, the torn tail and the write in flight read back");
	probe_log_free(&l);
	static const struct {
		const char *text, *why;
	} bad[] = {
	    {"", "empty"},
	    {"blackout-probe 2 run=00000000000000ab unit=512 first=0 units=64\nB 1\n", "version"},
	    {"blackout-probe 1 run=ab unit=512 first=0 units=64\nB 1\n", "short run id"},
	    {"blackout-probe 1 run=00000000000000ab unit=4096 first=0 units=64\nB 1\n", "unit"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=63\nB 1\n",
	     "region not whole blocks"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 "
	     "units=99999999999999999999999\nB 1\n",
	     "number overflow"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\n", "no B"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\nB 1\nI 2 60 8 0\nW "
	     "2\n",
	     "write past the region"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\nB 1\nF 3\nF 2\n",
	     "generation going back"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\nB 1\nW 2\n",
	     "W without I"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\nB 1\nI 2 0 8 0\nF "
	     "3\n",
	     "I not followed by its W"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\nB 1\nI 2 0 8 2\nW "
	     "2\n",
	     "FUA flag 2"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\nB 1\nB 2\n",
	     "second B"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\nB 1\nF 2 \n",
	     "trailing space"},
	    {"blackout-probe 1 run=00000000000000ab unit=512 first=0 units=64\nB 1\n\n",
	     "empty line"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = 0;
		int rc = probe_log_parse(bad[i].text, strlen(bad[i].text), &l, &err);
		ok(rc == -EINVAL && strncmp(err.msg, "probe log", 9) == 0, "refused: %s (%s)",
		   bad[i].why, err.msg);
	}
}

static void pattern(void)
{
	unsigned char u[PROBE_UNIT], w[PROBE_UNIT];
	uint64_t g;
	probe_pattern_fill(u, 7, 100, 3);
	ok(probe_pattern_decode(u, 7, 100, &g) == PROBE_U_VALID && g == 3, "a unit decodes");
	ok(probe_pattern_decode(u, 8, 100, &g) == PROBE_U_FOREIGN, "another run's unit: foreign");
	ok(probe_pattern_decode(u, 7, 101, &g) == PROBE_U_FOREIGN, "a misplaced unit: foreign");
	probe_pattern_fill(w, 7, 100, 4);
	memcpy(u + 300, w + 300, PROBE_UNIT - 300);
	ok(probe_pattern_decode(u, 7, 100, &g) == PROBE_U_GARBAGE,
	   "half of gen 3, half of 4: torn");
	memset(u, 0xff, sizeof(u));
	ok(probe_pattern_decode(u, 7, 100, &g) == PROBE_U_ERASED, "all 0xFF: erased");
}

static void timing(void)
{
	static const struct {
		const char *spec;
		uint64_t eb;
	} cases[] = {
	    {"flash(ftl=cheap,eb=128k,size=64M)", 128u << 10},
	    {"flash(ftl=cheap,eb=512k,size=64M)", 512u << 10},
	    {"flash(ftl=careful,eb=128k,size=64M)", 0},
	    {"disk > mem(size=16M)", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct probe_timing_opts o = {.max_eb = 4u << 20};
		struct probe_timing t;
		struct bo_err err = {{0}};
		int rc = probe_timing_spec(cases[i].spec, &o, &t, &err);
		ok(rc == 0 && t.erase_block == cases[i].eb &&
		       (t.eb_confidence > 0.5) == (cases[i].eb > 0),
		   "timing %s: erase block %llu bytes (want %llu), confidence %.2f %s",
		   cases[i].spec, (unsigned long long)t.erase_block,
		   (unsigned long long)cases[i].eb, t.eb_confidence, rc ? err.msg : "");
	}
}

int main(void)
{
	timing();
	pattern();
	log_parse();
	grid();
	return tap_done();
}
