/* commands.c — the table of subcommands. One line per command; each lives in
 * its own cmd_<name>.c. */
#include <stddef.h>

#include "cli/cli.h"

int cmd_stack(int argc, char **argv);
int cmd_vmtest(int argc, char **argv);

const struct cli_cmd cli_cmds[] = {
    {"stack", "describe, format or probe a device stack spec", cmd_stack},
    {"vmtest", "real Linux ext4/ext3 in qemu on a modelled stack, power cut and checked",
     cmd_vmtest},
    {NULL, NULL, NULL},
};
