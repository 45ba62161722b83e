/* commands.c — the table of subcommands. One line per command; each lives in
 * its own cmd_<name>.c. */
#include <stddef.h>

#include "cli/cli.h"

int cmd_log(int argc, char **argv);

const struct cli_cmd cli_cmds[] = {
    {"log", "print an I/O log written by the recorder (log dump)", cmd_log},
    {NULL, NULL, NULL},
};
