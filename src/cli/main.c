/* main.c — `blackout`: dispatches to a subcommand. */
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

static void usage(FILE *out)
{
	fprintf(out, "usage: blackout COMMAND [ARGS...]\n\n"
	             "A storage reliability laboratory: block-device models, an ext3-compatible\n"
	             "journaling filesystem and a crash explorer that tests what filesystems\n"
	             "assume of the hardware below them.\n\ncommands:\n");
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out, "\n'blackout COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		if (strcmp(c->name, argv[1]) == 0)
			return c->run(argc - 1, argv + 1);
	fprintf(stderr, "blackout: unknown command '%s'\nTry 'blackout --help'.\n", argv[1]);
	return 2;
}
