// SPDX-License-Identifier: GPL-2.0-or-later
/* cli_common.c — what every command shares for its arguments and messages: --help,
 * usage errors, failures and numbers. Alone, so the guest's static bo-probe (which runs
 * cmd_probe.c without the rest of the CLI) links the same code. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "blackout/util.h"
#include "cli/cli.h"

bool cli_is_help(const char *arg)
{
	return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "blackout %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'blackout %s --help'.\n", cmd);
	return 2;
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "blackout %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 1;
}

int cli_num(const char *cmd, const char *opt, const char *v, unsigned flags, uint64_t min,
            uint64_t max, uint64_t *out)
{
	struct bo_err err = {{0}};
	int rc = bo_parse_num(opt, v, flags, min, max, out, &err);
	return rc ? cli_usage_error(cmd, "%s", err.msg) : 0;
}

int cli_fail_named(const char *cmd, const char *name, const char *why)
{
	size_t n = strlen(name);
	bool named = strncmp(why, name, n) == 0 && why[n] == ':';
	return cli_fail(cmd, "%s%s%s", named ? "" : name, named ? "" : ": ", why);
}
