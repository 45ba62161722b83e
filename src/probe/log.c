// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c — the probe's acknowledgement log: one text line per completed write or flush,
 * written by the writer's sink and parsed (as untrusted bytes: it crossed a network or
 * a pulled disk) by verify. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/probe.h"

#define MAX_UNITS (1ull << 50) /* 512 PiB: far past any device, far below overflow */

int probe_log_header(char *buf, size_t len, uint64_t run, uint64_t first, uint64_t units)
{
	return snprintf(buf, len,
	                "blackout-probe 1 run=%016" PRIx64 " unit=%u first=%" PRIu64
	                " units=%" PRIu64 "\n",
	                run, PROBE_UNIT, first, units);
}

int probe_log_line(char *buf, size_t len, const struct probe_op *op)
{
	if (op->kind == PROBE_OP_WRITE && !op->acked)
		return snprintf(buf, len, "I %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n", op->gen,
		                op->unit, op->count, op->fua ? 1 : 0);
	char k = op->kind == PROBE_OP_WRITE ? 'W' : op->kind == PROBE_OP_FLUSH ? 'F' : 'B';
	return snprintf(buf, len, "%c %" PRIu64 "\n", k, op->gen);
}

/* A decimal number of at most 20 digits, no sign, at *p; moves *p past it. */
static int num(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	if (s == end || *s < '0' || *s > '9')
		return -EINVAL;
	while (s < end && *s >= '0' && *s <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

static int word(const char **p, const char *end, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(end - *p) < n || memcmp(*p, w, n) != 0)
		return -EINVAL;
	*p += n;
	return 0;
}

static int parse_header(const char *s, const char *end, struct probe_log *l)
{
	uint64_t unit;
	if (word(&s, end, "blackout-probe 1 run=") != 0)
		return -EINVAL;
	uint64_t run = 0;
	int digits = 0;
	for (; s < end && digits < 16; s++, digits++) {
		int c = *s, d = c >= '0' && c <= '9'   ? c - '0'
		                : c >= 'a' && c <= 'f' ? c - 'a' + 10
		                                       : -1;
		if (d < 0)
			break;
		run = run << 4 | (uint64_t)d;
	}
	if (digits != 16 || word(&s, end, " unit=") || num(&s, end, &unit) ||
	    word(&s, end, " first=") || num(&s, end, &l->first) || word(&s, end, " units=") ||
	    num(&s, end, &l->units) || s != end)
		return -EINVAL;
	if (unit != PROBE_UNIT || l->units == 0 || l->units > MAX_UNITS || l->first > MAX_UNITS ||
	    l->units % PROBE_UNITS_PER_BLOCK || l->first % PROBE_UNITS_PER_BLOCK)
		return -ERANGE;
	l->run = run;
	return 0;
}

static int push(struct probe_log *l, const struct probe_op *op)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct probe_op *n = realloc(l->op, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		l->op = n;
		l->cap = cap;
	}
	l->op[l->n++] = *op;
	return 0;
}

static int parse_op(const char *s, const char *end, const struct probe_log *l, struct probe_op *op)
{
	memset(op, 0, sizeof(*op));
	char k = *s++;
	if ((k != 'W' && k != 'I' && k != 'F' && k != 'B') || word(&s, end, " ") ||
	    num(&s, end, &op->gen))
		return -EINVAL;
	op->kind = k == 'W' || k == 'I' ? PROBE_OP_WRITE
	           : k == 'F'           ? PROBE_OP_FLUSH
	                                : PROBE_OP_BASE;
	op->acked = k != 'I';
	if (k == 'I') {
		uint64_t fua;
		if (word(&s, end, " ") || num(&s, end, &op->unit) || word(&s, end, " ") ||
		    num(&s, end, &op->count) || word(&s, end, " ") || num(&s, end, &fua) || fua > 1)
			return -EINVAL;
		op->fua = fua == 1;
		if (op->count == 0 || op->unit < l->first || op->count > l->units ||
		    op->unit - l->first > l->units - op->count)
			return -ERANGE;
	}
	return s == end ? 0 : -EINVAL;
}

int probe_log_parse(const char *text, size_t len, struct probe_log *l, struct bo_err *err)
{
	memset(l, 0, sizeof(*l));
	if (len > PROBE_LOG_MAX_BYTES)
		return bo_errf(err, -EFBIG, "probe log: %zu bytes, more than the %u a log may have",
		               len, PROBE_LOG_MAX_BYTES);
	const char *p = text, *end = text + len;
	unsigned long line = 0;
	int rc = 0;
	while (p < end && rc == 0) {
		line++;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			/* the pull can cut the last line short: what it reports never completed
			 * as far as the log knows */
			l->torn_tail = true;
			break;
		}
		if (line == 1) {
			rc = parse_header(p, nl, l);
			if (rc)
				rc = bo_errf(
				    err, -EINVAL,
				    "probe log line 1: not a 'blackout-probe 1 run=HEX16 unit=512 "
				    "first=N units=N' header with a whole-block region: is this "
				    "the "
				    "log 'blackout probe write' wrote?");
		} else {
			struct probe_op op;
			rc = nl == p ? -EINVAL : parse_op(p, nl, l, &op);
			if (rc == -ERANGE)
				rc = bo_errf(
				    err, -EINVAL,
				    "probe log line %lu: a write outside the region of the header",
				    line);
			else if (rc)
				rc = bo_errf(
				    err, -EINVAL,
				    "probe log line %lu: not 'I GEN UNIT COUNT 0|1', 'W GEN', "
				    "'F GEN' or 'B GEN'",
				    line);
			else if (l->n && !l->op[l->n - 1].acked &&
			         (op.kind != PROBE_OP_WRITE || !op.acked ||
			          op.gen != l->op[l->n - 1].gen))
				rc = bo_errf(
				    err, -EINVAL,
				    "probe log line %lu: an 'I' line must be followed by the 'W' "
				    "of the same generation",
				    line);
			else if (op.kind == PROBE_OP_WRITE && op.acked &&
			         (l->n == 0 || l->op[l->n - 1].acked))
				rc = bo_errf(err, -EINVAL,
				             "probe log line %lu: a 'W' line without its 'I' line",
				             line);
			else if (op.kind == PROBE_OP_WRITE && op.acked)
				l->op[l->n - 1].acked = true;
			else if (l->n && op.gen <= l->op[l->n - 1].gen)
				rc = bo_errf(err, -EINVAL,
				             "probe log line %lu: generation %" PRIu64
				             " does not follow %" PRIu64,
				             line, op.gen, l->op[l->n - 1].gen);
			else if (l->n >= PROBE_LOG_MAX_OPS)
				rc = bo_errf(err, -EFBIG,
				             "probe log line %lu: more than %u operations", line,
				             PROBE_LOG_MAX_OPS);
			else if ((op.kind == PROBE_OP_BASE) != (l->n == 0))
				rc = bo_errf(
				    err, -EINVAL,
				    "probe log line %lu: 'B' must come once, first after the "
				    "header",
				    line);
			else if (push(l, &op))
				rc = bo_errf(err, -ENOMEM, "probe log: out of memory");
		}
		p = nl + 1;
	}
	if (rc == 0 && line == 0)
		rc = bo_errf(err, -EINVAL, "probe log: empty: did the writer reach its listener?");
	else if (rc == 0 && l->units == 0)
		rc = bo_errf(err, -EINVAL, "probe log: its header line was cut short");
	else if (rc == 0 && l->n == 0)
		rc =
		    bo_errf(err, -EINVAL,
		            "probe log: the pattern was never reported laid ('B' line): the "
		            "power went before the stream began; run 'blackout probe write' again");
	if (rc)
		probe_log_free(l);
	return rc;
}

void probe_log_free(struct probe_log *l)
{
	free(l->op);
	l->op = NULL;
	l->n = l->cap = 0;
}
