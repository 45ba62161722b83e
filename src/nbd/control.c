// SPDX-License-Identifier: GPL-2.0-or-later
/* control.c — parser of the nbd plugin's control-socket commands (docs/nbd.md).
 * Pure: text in, struct out. Executing a command is the server's job (server.c). */
#include "nbd/control.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char nbd_ctl_help[] =
    "cut [OUTCOME]        cut power now; OUTCOME: zero (default) | SEED | seed:SEED | "
    "list:D,D,...\n"
    "cut-at N [OUTCOME]   cut power when the N-th next write request arrives (it is in flight)\n"
    "replug               restore power (only persistent state remains)\n"
    "settle               let the stack sit idle: volatile caches write back (even lying ones)\n"
    "stats                counters: nbd.* requests, dev.I.NAME.KEY for every device\n"
    "fail MEMBER          fail member MEMBER (a number) of the stack's first RAID device\n"
    "arm RULE             arm a rule on the stack's first fault device (docs/models/fault.md)\n"
    "disarm [ID]          disarm rule ID, or every rule armed here\n"
    "record save          write the I/O log to the record= file (atomically)\n"
    "ping                 answers ok\n"
    "help                 this list\n"
    "quit                 close the control connection\n";

struct tok {
	const char *p;
	size_t len;
	size_t col; /* 1-based column of its first byte */
};

#define MAX_TOKS 4

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool tok_is(const struct tok *t, const char *word)
{
	size_t n = strlen(word);
	return t->len == n && memcmp(t->p, word, n) == 0;
}

/* Unsigned decimal, or hex with 0x, no sign, no overflow. */
static int parse_u64(const char *p, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (len > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i >= len)
		return -EINVAL;
	for (; i < len; i++) {
		unsigned d;
		char c = p[i];
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int parse_outcome(const struct tok *t, struct nbd_ctl_outcome *o, struct bo_err *err)
{
	memset(o, 0, offsetof(struct nbd_ctl_outcome, v));
	if (!t || tok_is(t, "zero")) {
		o->kind = NBD_CTL_OUTCOME_ZERO;
		return 0;
	}
	const char *p = t->p;
	size_t len = t->len;
	if (len >= 5 && memcmp(p, "seed:", 5) == 0) {
		p += 5;
		len -= 5;
	} else if (len >= 5 && memcmp(p, "list:", 5) == 0) {
		o->kind = NBD_CTL_OUTCOME_LIST;
		size_t i = 5;
		if (i == len)
			return 0; /* "list:" = the empty list, every decision 0 */
		while (i <= len) {
			size_t start = i;
			while (i < len && p[i] != ',')
				i++;
			if (o->len == BLK_CHOICES_MAX)
				return bo_errf(err, -EINVAL, "column %zu: more than %u decisions",
				               t->col + start, BLK_CHOICES_MAX);
			int rc = parse_u64(p + start, i - start, &o->v[o->len]);
			if (rc < 0)
				return bo_errf(err, -EINVAL,
				               "column %zu: decision %u is not an unsigned number",
				               t->col + start, o->len + 1);
			o->len++;
			i++; /* past ',' (or past the end, which ends the loop) */
		}
		return 0;
	}
	o->kind = NBD_CTL_OUTCOME_SEED;
	int rc = parse_u64(p, len, &o->seed);
	if (rc == -ERANGE)
		return bo_errf(err, -EINVAL, "column %zu: seed larger than 2^64-1", t->col);
	if (rc < 0)
		return bo_errf(err, -EINVAL,
		               "column %zu: outcome must be zero, SEED, seed:SEED or list:D,D,...",
		               t->col);
	return 0;
}

static int want_args(const struct tok *t, unsigned ntok, unsigned min, unsigned max,
                     struct bo_err *err)
{
	if (ntok - 1 < min)
		return bo_errf(err, -EINVAL, "'%.*s' needs %s", (int)t[0].len, t[0].p,
		               min == 1 ? "an argument" : "more arguments");
	if (ntok - 1 > max)
		return bo_errf(err, -EINVAL, "column %zu: '%.*s' takes %s", t[max + 1].col,
		               (int)t[0].len, t[0].p,
		               max == 0 ? "no arguments" : "fewer arguments");
	return 0;
}

static int copy_arg(const struct tok *t, struct nbd_ctl_cmd *out, struct bo_err *err)
{
	if (t->len > NBD_CTL_ARG_MAX)
		return bo_errf(err, -EINVAL, "column %zu: argument longer than %d bytes", t->col,
		               NBD_CTL_ARG_MAX);
	memcpy(out->arg, t->p, t->len);
	out->arg[t->len] = '\0';
	return 0;
}

int nbd_ctl_parse(const char *line, size_t len, struct nbd_ctl_cmd *out, struct bo_err *err)
{
	struct tok t[MAX_TOKS + 1];
	unsigned ntok = 0;
	int rc;

	memset(out, 0, offsetof(struct nbd_ctl_cmd, outcome));
	out->outcome.kind = NBD_CTL_OUTCOME_ZERO;
	out->outcome.len = 0;
	out->count = 0;
	out->arg[0] = '\0';

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > NBD_CTL_LINE_MAX)
		return bo_errf(err, -EINVAL, "line longer than %d bytes", NBD_CTL_LINE_MAX);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			return bo_errf(err, -EINVAL,
			               "column %zu: byte 0x%02x is not printable ASCII", i + 1, c);
	}
	for (size_t i = 0; i < len;) {
		while (i < len && is_space(line[i]))
			i++;
		if (i == len)
			break;
		if (ntok == 1 && tok_is(&t[0], "arm")) {
			/* a fault rule is the rest of the line, blanks and all */
			size_t end = len;
			while (end > i && is_space(line[end - 1]))
				end--;
			t[ntok++] = (struct tok){line + i, end - i, i + 1};
			break;
		}
		if (ntok == MAX_TOKS + 1)
			return bo_errf(err, -EINVAL, "column %zu: too many words", i + 1);
		t[ntok].p = line + i;
		t[ntok].col = i + 1;
		while (i < len && !is_space(line[i]))
			i++;
		t[ntok].len = (size_t)(line + i - t[ntok].p);
		ntok++;
	}
	if (ntok == 0)
		return bo_errf(err, -EINVAL, "empty command (try 'help')");

	if (tok_is(&t[0], "cut")) {
		out->op = NBD_CTL_CUT;
		if ((rc = want_args(t, ntok, 0, 1, err)) < 0)
			return rc;
		return parse_outcome(ntok > 1 ? &t[1] : NULL, &out->outcome, err);
	}
	if (tok_is(&t[0], "cut-at")) {
		out->op = NBD_CTL_CUT_AT;
		if ((rc = want_args(t, ntok, 1, 2, err)) < 0)
			return rc;
		rc = parse_u64(t[1].p, t[1].len, &out->count);
		if (rc == -ERANGE)
			return bo_errf(
			    err, -EINVAL,
			    "column %zu: write count larger than 2^64-1 (18446744073709551615)",
			    t[1].col);
		if (rc < 0 || out->count == 0)
			return bo_errf(err, -EINVAL,
			               "column %zu: cut-at needs a write count of at least 1",
			               t[1].col);
		return parse_outcome(ntok > 2 ? &t[2] : NULL, &out->outcome, err);
	}
	if (tok_is(&t[0], "fail")) {
		out->op = NBD_CTL_FAIL;
		if ((rc = want_args(t, ntok, 1, 1, err)) < 0)
			return rc;
		uint64_t m;
		if (parse_u64(t[1].p, t[1].len, &m) < 0 || m > 255)
			return bo_errf(err, -EINVAL, "column %zu: MEMBER must be a number 0..255",
			               t[1].col);
		out->count = m;
		return copy_arg(&t[1], out, err);
	}
	if (tok_is(&t[0], "arm")) {
		out->op = NBD_CTL_ARM;
		/* The rule's own grammar is the fault model's (docs/models/fault.md). */
		if ((rc = want_args(t, ntok, 1, 1, err)) < 0)
			return rc;
		return copy_arg(&t[1], out, err);
	}
	if (tok_is(&t[0], "record")) {
		out->op = NBD_CTL_RECORD;
		if ((rc = want_args(t, ntok, 1, 1, err)) < 0)
			return rc;
		if (!tok_is(&t[1], "save"))
			return bo_errf(err, -EINVAL, "column %zu: 'record' takes 'save'", t[1].col);
		return 0;
	}
	if (tok_is(&t[0], "disarm")) {
		out->op = NBD_CTL_DISARM;
		out->count = UINT64_MAX; /* every rule armed through the control socket */
		if ((rc = want_args(t, ntok, 0, 1, err)) < 0)
			return rc;
		if (ntok > 1 &&
		    (parse_u64(t[1].p, t[1].len, &out->count) < 0 || out->count > INT32_MAX))
			return bo_errf(err, -EINVAL, "column %zu: ID must be a rule number",
			               t[1].col);
		return 0;
	}

	static const struct {
		const char *word;
		enum nbd_ctl_op op;
	} simple[] = {
	    {"replug", NBD_CTL_REPLUG}, {"settle", NBD_CTL_SETTLE}, {"stats", NBD_CTL_STATS},
	    {"ping", NBD_CTL_PING},     {"help", NBD_CTL_HELP},     {"quit", NBD_CTL_QUIT},
	};
	for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
		if (tok_is(&t[0], simple[i].word)) {
			out->op = simple[i].op;
			return want_args(t, ntok, 0, 0, err);
		}
	}
	return bo_errf(err, -EINVAL, "unknown command '%.*s' (try 'help')",
	               (int)(t[0].len > 32 ? 32 : t[0].len), t[0].p);
}

int nbd_ctl_outcome_format(const struct nbd_ctl_outcome *o, char *buf, size_t size)
{
	switch (o->kind) {
	case NBD_CTL_OUTCOME_ZERO: return snprintf(buf, size, "zero");
	case NBD_CTL_OUTCOME_SEED:
		return snprintf(buf, size, "seed:%llu", (unsigned long long)o->seed);
	case NBD_CTL_OUTCOME_LIST: break;
	}
	size_t n = 0;
	int w = snprintf(buf, size, "list:");
	n += (size_t)w;
	for (uint32_t i = 0; i < o->len && i < BLK_CHOICES_MAX; i++) {
		w = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "%s%llu",
		             i ? "," : "", (unsigned long long)o->v[i]);
		n += (size_t)w;
	}
	return (int)n;
}
