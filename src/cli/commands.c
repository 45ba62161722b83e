/* commands.c — the table of subcommands. One line per command; each lives in
 * its own cmd_<name>.c. */
#include <stddef.h>

#include "cli/cli.h"

int cmd_log(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_raid(int argc, char **argv);

const struct cli_cmd cli_cmds[] = {
    {"stack", "describe, format or probe a device stack spec", cmd_stack},
    {"log", "print an I/O log written by the recorder (log dump)", cmd_log},
    {"raid", "the RAID write hole over every power-cut outcome; md's chunk layout", cmd_raid},
    {NULL, NULL, NULL},
};
