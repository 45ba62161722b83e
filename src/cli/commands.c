// SPDX-License-Identifier: GPL-2.0-or-later
/* commands.c — the table of subcommands. One line per command; each lives in
 * its own cmd_<name>.c. */
#include <stddef.h>

#include "cli/cli.h"

int cmd_corrupt(int argc, char **argv);
int cmd_fsck(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_vmtest(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_raid(int argc, char **argv);

int cmd_mkfs(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_put(int argc, char **argv);
int cmd_mkdir(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_rmdir(int argc, char **argv);
int cmd_mv(int argc, char **argv);
int cmd_ln(int argc, char **argv);
int cmd_symlink(int argc, char **argv);
int cmd_truncate(int argc, char **argv);
int cmd_df(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_workloads(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_jbd(int argc, char **argv);
int cmd_vmobs(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_app(int argc, char **argv);
int cmd_mdhole(int argc, char **argv);

const struct cli_cmd cli_cmds[] = {
    {"matrix", "the measured expectations table: stacks x filesystems, crash-tested", cmd_matrix},
    {"corrupt", "damage an ext2/ext3 image on purpose, seeded and reproducible", cmd_corrupt},
    {"fsck", "check (and repair) an ext2/ext3 image; exit codes as e2fsck", cmd_fsck},
    {"log", "print an I/O log written by the recorder (log dump)", cmd_log},
    {"stack", "describe, format or probe a device stack spec", cmd_stack},
    {"mkfs", "make an ext2/ext3 filesystem on an image", cmd_mkfs},
    {"ls", "list a directory of a filesystem image", cmd_ls},
    {"stat", "show an inode of a filesystem image", cmd_stat},
    {"cat", "print files of a filesystem image", cmd_cat},
    {"get", "copy a file out of a filesystem image", cmd_get},
    {"put", "copy a file into a filesystem image", cmd_put},
    {"mkdir", "make directories in a filesystem image", cmd_mkdir},
    {"rm", "remove files from a filesystem image", cmd_rm},
    {"rmdir", "remove directories from a filesystem image", cmd_rmdir},
    {"mv", "rename within a filesystem image", cmd_mv},
    {"ln", "hard or symbolic link in a filesystem image", cmd_ln},
    {"symlink", "symbolic link in a filesystem image", cmd_symlink},
    {"truncate", "set a file's size in a filesystem image", cmd_truncate},
    {"df", "block and inode counts of a filesystem image", cmd_df},
    {"explore", "cut power at every point of a workload and judge what survived", cmd_explore},
    {"workloads", "list the built-in crash workloads, or print one", cmd_workloads},
    {"gen", "generate workloads: ACE-style bounded sequences, or seeded random ones", cmd_gen},
    {"shrink",
     "shrink a failing workload: fewest steps, fewest lost sectors, a dm-flakey reproducer",
     cmd_shrink},
    {"jbd", "recover or write a JBD2 journal inside an image (tests, inspection)", cmd_jbd},
    {"raid", "the RAID write hole over every power-cut outcome; md's chunk layout", cmd_raid},
    {"vmtest", "real Linux (qemu) on a modelled stack: cut power, reboot, judge", cmd_vmtest},
    {"probe", "does a real device honour flushes, tear sectors, destroy neighbours? (one pull)",
     cmd_probe},
    {"app", "crash-test an unmodified program and its own checker under the real kernel", cmd_app},
    {"vmobserve", "real-kernel guests observing the states of a state store", cmd_vmobs},
    {"mdhole", "Linux md's write hole, block by block, from a recording of its members",
     cmd_mdhole},
    {NULL, NULL, NULL},
};
