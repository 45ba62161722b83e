/* commands.c — the table of subcommands. One line per command; each lives in
 * its own cmd_<name>.c. */
#include <stddef.h>

#include "cli/cli.h"

const struct cli_cmd cli_cmds[] = {
    {NULL, NULL, NULL},
};
