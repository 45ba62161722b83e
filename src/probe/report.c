// SPDX-License-Identifier: GPL-2.0-or-later
/* report.c — the probe's verdicts in words, one line each, for the person who pulled
 * the plug (docs/probe.md explains each). */
#include <inttypes.h>

#include "blackout/probe.h"

static const char *kib(uint64_t b, char *buf, size_t len)
{
	if (b >= (1u << 20) && b % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", b >> 20);
	else if (b >= 1024 && b % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", b >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " bytes", b);
	return buf;
}

void probe_verdict_print(const struct probe_verdict *v, FILE *out)
{
	char a[32], b[32];
	fprintf(out,
	        "units checked: %" PRIu64 " of 512 bytes (%" PRIu64 " intact, %" PRIu64
	        " written in the last epoch or in flight, last generation %" PRIu64 ")\n",
	        v->units, v->ok, v->epoch_writes, v->last_gen);
	fprintf(out,
	        "flushes: %s (%" PRIu64 " units lost of %" PRIu64
	        " a completed flush made durable)\n",
	        v->flush_honoured ? "honoured" : "NOT honoured", v->lost_flush, v->flush_checked);
	fprintf(out, "fua: %s (%" PRIu64 " units lost of %" PRIu64 " only FUA made durable)\n",
	        v->fua_checked == 0 ? "not tested (no FUA write awaited a flush at the pull)"
	        : v->fua_honoured   ? "honoured"
	                            : "NOT honoured",
	        v->lost_fua, v->fua_checked);
	fprintf(out, "torn writes: %s (%" PRIu64 " writes landed in part)\n",
	        v->partial_writes ? "yes" : "none seen", v->partial_writes);
	if (v->torn_units)
		fprintf(out,
		        "torn sectors: yes (%" PRIu64 " units half old, half new; tears at %s)\n",
		        v->torn_units, kib(v->tear_granularity, a, sizeof(a)));
	else
		fprintf(out, "torn sectors: none seen\n");
	if (v->partial_writes && !v->torn_units)
		fprintf(out, "tear granularity: %s\n", kib(v->tear_granularity, a, sizeof(a)));
	if (v->erased_written)
		fprintf(out,
		        "erased under a write: %" PRIu64
		        " units of the epoch's writes read erased\n",
		        v->erased_written);
	if (!v->collateral_measured)
		fprintf(out,
		        "collateral damage: not measurable (flushed data was lost anyway: %" PRIu64
		        " units damaged)\n",
		        v->damaged);
	else if (v->damaged)
		fprintf(out,
		        "collateral damage: YES, %" PRIu64 " units not written since the last "
		        "flush; radius %s; erase block at least %s\n",
		        v->damaged, kib(v->damage_radius, a, sizeof(a)),
		        kib(v->erase_block, b, sizeof(b)));
	else
		fprintf(out, "collateral damage: none seen\n");
	if (v->unreadable || v->foreign)
		fprintf(out,
		        "unreadable units: %" PRIu64 "; units of another run or place: %" PRIu64
		        "\n",
		        v->unreadable, v->foreign);
}
