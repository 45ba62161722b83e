// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_campaign_part.c — libFuzzer target for a campaign part (units.txt, one shard's
 * units, report/campaign_out.c): any input either reads or is refused with a message;
 * what reads is written back and read again the same, and its report is written. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/campaign.h"

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bo_err err = {{0}};
	struct campaign_part *p;
	if (campaign_part_read((const char *)data, size, &p, &err) != 0) {
		check(err.msg[0] != '\0');
		return 0;
	}
	char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	FILE *f = open_memstream(&a, &na);
	check(f && campaign_part_write(p, f) == 0);
	fclose(f);
	struct campaign_part *q;
	check(campaign_part_read(a, na, &q, &err) == 0);
	f = open_memstream(&b, &nb);
	check(f && campaign_part_write(q, f) == 0);
	fclose(f);
	check(na == nb && memcmp(a, b, na) == 0);
	f = fopen("/dev/null", "w");
	check(f && campaign_report_text(q, f) == 0 && campaign_report_json(q, f) == 0);
	fclose(f);
	campaign_part_free(q);
	campaign_part_free(p);
	free(a);
	free(b);
	return 0;
}
