// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_probe_log.c — libFuzzer target for the probe's acknowledgement log parser (bytes
 * that came over a network or off a pulled disk, given to `blackout probe verify`): any
 * bytes are refused with a message or parse into a log whose every write lies inside
 * its region, whose generations increase, which re-serialises line by line to a log
 * that parses to the same operations, and which verify can hold a device against. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ops(const struct probe_log *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct probe_op *op = &l->op[i];
		if (i && op->gen <= l->op[i - 1].gen)
			abort();
		if (op->kind == PROBE_OP_WRITE && (op->count == 0 || op->unit < l->first ||
		                                   op->unit + op->count > l->first + l->units))
			abort();
		if (op->kind == PROBE_OP_WRITE && !op->acked && i + 1 != l->n)
			abort(); /* only the last write may be the one in flight */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_log l;
	struct bo_err err = {{0}};
	if (probe_log_parse((const char *)data, size, &l, &err) != 0) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		return 0;
	}
	check_ops(&l);
	/* re-serialise: the same operations must come back */
	size_t cap = 128 + l.n * 2 * 80, n = 0;
	char *text = malloc(cap);
	if (!text)
		abort();
	n += (size_t)probe_log_header(text, cap, l.run, l.first, l.units);
	for (size_t i = 0; i < l.n; i++) {
		struct probe_op op = l.op[i];
		if (op.kind == PROBE_OP_WRITE) {
			op.acked = false;
			n += (size_t)probe_log_line(text + n, cap - n, &op);
			op.acked = true;
			if (!l.op[i].acked)
				continue;
		}
		n += (size_t)probe_log_line(text + n, cap - n, &op);
	}
	struct probe_log back;
	if (probe_log_parse(text, n, &back, &err) != 0 || back.n != l.n || back.run != l.run ||
	    back.first != l.first || back.units != l.units ||
	    memcmp(back.op, l.op, l.n * sizeof(*l.op)) != 0)
		abort();
	probe_log_free(&back);
	free(text);
	/* verify against a small blank device: judged, never out of bounds */
	struct bdev *d;
	if (l.first + l.units <= 4096 && blk_mem_open(512, l.first + l.units, &d) == 0) {
		struct probe_verdict v;
		if (probe_verify(d, &l, &v, &err) != 0)
			abort();
		if (v.units != l.units)
			abort();
		blk_close(d);
	}
	probe_log_free(&l);
	return 0;
}
