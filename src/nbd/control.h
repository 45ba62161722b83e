/* SPDX-License-Identifier: GPL-2.0-or-later */
/* control.h — the nbd plugin's control-socket line protocol: parsing only.
 * Untrusted input (anyone who can reach the socket); no I/O, no device access here. */
#ifndef BLACKOUT_NBD_CONTROL_H
#define BLACKOUT_NBD_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "blackout/blk.h"
#include "blackout/err.h"

/* Longest request line accepted, newline excluded (room for a long decision list). */
#define NBD_CTL_LINE_MAX 65536
/* Longest MEMBER / RULE argument. */
#define NBD_CTL_ARG_MAX 256

enum nbd_ctl_op {
	NBD_CTL_CUT,    /* cut [OUTCOME]: power cut now */
	NBD_CTL_CUT_AT, /* cut-at N [OUTCOME]: power cut when the N-th next write arrives */
	NBD_CTL_REPLUG, /* replug: power restored */
	NBD_CTL_SETTLE, /* settle: the stack sits idle (volatile caches destage, blk_settle) */
	NBD_CTL_STATS,  /* stats: counters of the plugin and of every device in the stack */
	NBD_CTL_FAIL,   /* fail MEMBER: fail a RAID member */
	NBD_CTL_ARM,    /* arm RULE: arm a fault-injection rule (the rest of the line) */
	NBD_CTL_DISARM, /* disarm [ID]: disarm rule ID, or every rule armed here */
	NBD_CTL_PING,   /* ping: liveness */
	NBD_CTL_HELP,   /* help: the command list */
	NBD_CTL_QUIT,   /* quit: close this control connection */
	NBD_CTL_RECORD, /* record save: write the I/O log to the record= file */
};

/* How a power cut's non-deterministic decisions are taken. */
enum nbd_ctl_outcome_kind {
	NBD_CTL_OUTCOME_ZERO, /* blk_chooser_zero: nothing volatile survives beyond what must */
	NBD_CTL_OUTCOME_SEED, /* blk_chooser_random seeded with `seed` */
	NBD_CTL_OUTCOME_LIST, /* blk_chooser_list replaying v[0..len) */
};

struct nbd_ctl_outcome {
	enum nbd_ctl_outcome_kind kind;
	uint64_t seed;
	uint32_t len;
	uint64_t v[BLK_CHOICES_MAX];
};

struct nbd_ctl_cmd {
	enum nbd_ctl_op op;
	struct nbd_ctl_outcome outcome; /* cut, cut-at */
	uint64_t count; /* cut-at: 1 = the next write; fail: MEMBER; disarm: ID or UINT64_MAX */
	char arg[NBD_CTL_ARG_MAX + 1]; /* fail MEMBER, arm RULE (as text) */
};

/* Parses one request line (without its newline; a trailing '\r' is tolerated).
 * Returns 0, or -EINVAL with the reason (and the column) in err. Never reads
 * past line[len]; line need not be NUL-terminated. */
int nbd_ctl_parse(const char *line, size_t len, struct nbd_ctl_cmd *out, struct bo_err *err);

/* Renders an outcome in the syntax nbd_ctl_parse accepts ("zero", "seed:N",
 * "list:a,b,c"). Returns the length (like snprintf); output truncated to `size`. */
int nbd_ctl_outcome_format(const struct nbd_ctl_outcome *o, char *buf, size_t size);

/* One line per command, for `help` and docs. */
extern const char nbd_ctl_help[];

#endif
