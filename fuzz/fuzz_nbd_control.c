// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_nbd_control.c — libFuzzer target for the nbd plugin's control-line parser
 * (src/nbd/control.c): any bytes must parse or be refused with a printable reason,
 * never crash or overrun. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nbd/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nbd_ctl_cmd cmd; /* large (decision list); reused across runs */
	struct bo_err err;
	/* An exact-size copy so ASan sees any read past the line. */
	char *line = malloc(size ? size : 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	int rc = nbd_ctl_parse(line, size, &cmd, &err);
	if (rc < 0) {
		/* the reason goes back to the client as one line: no control bytes */
		if (!err.msg[0])
			abort();
		for (const char *m = err.msg; *m; m++)
			if ((unsigned char)*m < 0x20 || (unsigned char)*m >= 0x7f)
				abort();
	}
	if (rc == 0 && (cmd.op == NBD_CTL_CUT || cmd.op == NBD_CTL_CUT_AT)) {
		/* what parses must format back into something that parses the same */
		static char buf[BLK_CHOICES_MAX * 22 + 16];
		int n = nbd_ctl_outcome_format(&cmd.outcome, buf, sizeof buf);
		if (n < 0 || (size_t)n >= sizeof buf)
			abort();
		static struct nbd_ctl_cmd again;
		char text[sizeof buf + 8];
		memcpy(text, "cut ", 4);
		memcpy(text + 4, buf, (size_t)n);
		if (nbd_ctl_parse(text, (size_t)n + 4, &again, &err) != 0 ||
		    again.outcome.kind != cmd.outcome.kind ||
		    again.outcome.seed != cmd.outcome.seed ||
		    again.outcome.len != cmd.outcome.len ||
		    memcmp(again.outcome.v, cmd.outcome.v,
		           cmd.outcome.len * sizeof cmd.outcome.v[0]))
			abort();
	}
	free(line);
	return 0;
}
