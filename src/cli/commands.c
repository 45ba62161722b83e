/* commands.c — the table of subcommands. One line per command; each lives in
 * its own cmd_<name>.c. */
#include <stddef.h>

#include "cli/cli.h"

int cmd_jbd(int argc, char **argv);

const struct cli_cmd cli_cmds[] = {
    {"jbd", "recover or write a JBD2 journal inside an image (tests, inspection)", cmd_jbd},
    {NULL, NULL, NULL},
};
