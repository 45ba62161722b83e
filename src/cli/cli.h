/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli.h — the thin command-line layer: argument parsing and printing only.
 * Everything a command does is a library call; a command is one function here. */
#ifndef BLACKOUT_CLI_H
#define BLACKOUT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cli_cmd {
	const char *name;
	const char *summary;               /* one line for `blackout --help` */
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
};

/* The commands, in the order `blackout --help` lists them (commands.c). */
extern const struct cli_cmd cli_cmds[];

/* Prints "blackout CMD: <reason>" and a pointer to --help on stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "blackout CMD: <reason>" on stderr; returns 1. */
/* vmtest compile|judge: plumbing for scripts/vmtest (cmd_vmtest_wl.c) */
int cmd_vmtest_plumbing(int argc, char **argv);
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cli_fail with "NAME: WHY", NAME said once when WHY begins with it already (the block
 * layer's messages name their file). */
int cli_fail_named(const char *cmd, const char *name, const char *why);
bool cli_is_help(const char *arg);
/* The value v of option opt through bo_parse_num (blackout/util.h): 0, or a usage
 * error naming the option and its accepted range (returns 2). */
int cli_num(const char *cmd, const char *opt, const char *v, unsigned flags, uint64_t min,
            uint64_t max, uint64_t *out);
/* Runs argv to completion (cli_run.c): 0, or 1 after saying what failed (`what`: how
 * the user knows it). quiet: its standard output goes to standard error. */
int cli_run(const char *cmd, const char *what, char *const argv[], bool quiet);
struct crash_result;
/* Writes r's JSON to path ('-': standard output): 0, or 1 after saying why not. */
int cli_write_result(const char *cmd, const struct crash_result *r, const char *path);
struct vm_explore_info;
typedef void (*cli_vm_printer)(const struct vm_explore_info *info, const struct crash_result *r,
                               FILE *f);
/* The close of a real-kernel exploration (vmtest, app): the result, what `extra` adds,
 * the JSON to json ('-': standard output, the text going to standard error), where the
 * logs are; frees r. 0 all ok, 3 a state broke something, else a failure's status. */
int cli_vm_report(const char *cmd, struct crash_result *r, const struct vm_explore_info *info,
                  const char *json, cli_vm_printer extra);

struct crash_workload;
/* vmtest's workload (vm_workload_load): 0, or the exit status of a failure it reported
 * (cmd_vmtest_wl.c). */
int cli_vm_workload(const char *cmd, const char *name, unsigned files, struct crash_workload **w);
/* vmtest without --cuts: record, enumerate with the explorer, judge in guests
 * (cmd_vmtest_explore.c). */
int cmd_vmtest_explore(int argc, char **argv);

#endif
