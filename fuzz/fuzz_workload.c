// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_workload.c — libFuzzer target for the workload parser (docs/workloads.md) and
 * the result JSON reader (shard files, through jansson): parse, print, parse again must
 * be equal, and what the reader accepts keeps its promises (counts that add up, a
 * coverage in [0, 1]); a parsed workload is modelled by the oracle and judged against
 * an empty tree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	struct bo_err err = {{0}};
	struct crash_result *r;
	if (crash_result_read_json((const char *)data, size, &r, &err) == 0) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		check(f && crash_result_write_json(r, f) == 0);
		fclose(f);
		struct crash_result *r2;
		check(crash_result_read_json(buf, len, &r2, &err) == 0);
		check(r2->nfail == r->nfail && r2->judged == r->judged);
		check(r->ok <= r->judged && r->silent + r->detected <= r->judged - r->ok);
		check(r->coverage >= 0 && r->coverage <= 1 && r->shard < r->nshards);
		for (size_t i = 0; i < r->nfail; i++)
			check(strcmp(r->fail[i].detail, r2->fail[i].detail) == 0 &&
			      strcmp(r->fail[i].id, r2->fail[i].id) == 0);
		char *buf2 = NULL;
		size_t len2 = 0;
		FILE *f2 = open_memstream(&buf2, &len2);
		check(f2 && crash_result_write_json(r2, f2) == 0);
		fclose(f2);
		check(len2 == len && memcmp(buf, buf2, len) == 0);
		free(buf2);
		crash_result_free(r2);
		crash_result_free(r);
		free(buf);
	}
	struct crash_workload *w;
	if (crash_workload_parse((const char *)data, size, "fuzz", &w, &err) != 0) {
		check(strstr(err.msg, "workload") != NULL);
		return 0;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	check(f && crash_workload_format(w, f) == 0);
	fclose(f);
	struct crash_workload *w2;
	check(crash_workload_parse(buf, len, "fuzz", &w2, &err) == 0);
	check(crash_workload_equal(w, w2));
	crash_workload_free(w2);
	free(buf);
	/* the oracle must model anything that parses; small fills only */
	struct crash_exec *x = calloc(w->nrun ? w->nrun : 1, sizeof(*x));
	for (size_t i = 0; x && i < w->nrun; i++)
		x[i].done = w->run[i].len > 4096 ? 4096 : w->run[i].len;
	bool bigdata = false;
	for (size_t i = 0; i < w->nsetup; i++)
		bigdata |= w->setup[i].len > (1u << 16) || w->setup[i].off > (1u << 16);
	struct crash_oracle *o;
	if (x && !bigdata && crash_oracle_new(w, x, &o, &err) == 0) {
		struct crash_obs_node root = {.dir = true};
		struct crash_verdict v;
		for (size_t c = 0; c <= w->nrun; c += 1 + w->nrun / 4)
			check(crash_oracle_check(o, c, &root, 0, &v) == 0);
		crash_oracle_free(o);
	}
	free(x);
	crash_workload_free(w);
	return 0;
}
