/* commands.c — the table of subcommands. One line per command; each lives in
 * its own cmd_<name>.c. */
#include <stddef.h>

#include "cli/cli.h"

int cmd_corrupt(int argc, char **argv);
int cmd_fsck(int argc, char **argv);
int cmd_log(int argc, char **argv);

const struct cli_cmd cli_cmds[] = {
    {"corrupt", "damage an ext2/ext3 image on purpose, seeded and reproducible", cmd_corrupt},
    {"fsck", "check (and repair) an ext2/ext3 image; exit codes as e2fsck", cmd_fsck},
    {"log", "print an I/O log written by the recorder (log dump)", cmd_log},
    {NULL, NULL, NULL},
};
