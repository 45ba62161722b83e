/* main.c — `blackout`: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "blackout/util.h"
#include "cli/cli.h"

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
