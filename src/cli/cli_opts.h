/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli_opts.h — one table per command: its options parsed with getopt_long (GNU
 * conventions) and its --help and man page generated from the same table (docs/cli.md). */
#ifndef BLACKOUT_CLI_OPTS_H
#define BLACKOUT_CLI_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* The exit statuses every command but fsck follows (docs/cli.md). */
enum {
	CLI_EXIT_OK = 0,     /* done; a check found nothing wrong */
	CLI_EXIT_FAILED = 1, /* could not do it: a file, the image, I/O, a run that failed */
	CLI_EXIT_USAGE = 2,  /* bad option, value or operand, conflicting options: nothing done */
	CLI_EXIT_FOUND = 3,  /* ran to the end and found what it looks for (a broken state) */
};

/* Keys of options with no short letter start here. */
#define CLI_LONG     256
#define CLI_MAX_OPTS 48

struct cli_opt {
	int key;          /* the short letter, or CLI_LONG + n for a long-only option */
	const char *name; /* long name without "--", or NULL for a short option only */
	/* NULL: a flag. "N": takes a value. "[FILE]": the value is optional and may be
	 * given as --name=FILE or as the next word when that does not begin with '-'. */
	const char *arg;
	const char *help; /* '\n' starts a new line of the help column */
	/* Conflicts: an option cannot be given with one whose group has a bit of its
	 * excludes (either way round). Options that exclude each other (--quick, --full)
	 * share a bit in both; --merge excludes a group that the run options are in. */
	unsigned group, excludes;
};

struct cli_spec {
	const char *name;           /* as typed after blackout: "ls", "stack describe" */
	const char *summary;        /* one line: the man page's NAME */
	const char *usage;          /* what follows the name; '\n' separates alternatives */
	const char *about;          /* the description: paragraphs separated by blank lines */
	const struct cli_opt *opts; /* ends with a zero entry; may be NULL */
	int min_args, max_args;     /* operands; max_args -1: no limit */
	const char *exit;           /* this command's meaning of the exit statuses, or NULL */
	const char *examples;       /* "$ command\n  what it does\n" lines, or NULL */
	const struct cli_spec *const *subs; /* actions (`stack describe`), NULL-ended, or NULL */
	/* The exit status of a usage error, when not CLI_EXIT_USAGE (0: 2). A command with
	 * its own exit statuses (fsck: e2fsck's 16) sets it; its page then gives only its
	 * own table (exit), not the shared one. */
	int usage_status;
	/* Options end at the first operand, which begins what the command runs with its
	 * own arguments (app PROGRAM ARGS...): getopt's '+'. */
	bool options_first;
};

/* One parse of argv by spec. Use:
 *	struct cli_parse p;
 *	int k;
 *	cli_parse_start(&p, &spec, argc, argv);
 *	while ((k = cli_next(&p)) > 0)
 *		switch (k) { case 'l': ... p.arg is the value ... }
 *	if (k < 0)
 *		return p.status;   (help printed: 0; usage error said: 2, or usage_status)
 *	operands: p.args[0 .. p.nargs - 1]
 * argv[0] is the command name; options and operands may be mixed; "--" ends options;
 * -h/--help prints the help. The process-wide getopt state is reset at start. */
struct cli_parse {
	const struct cli_spec *spec;
	int argc;
	char **argv;
	const char *arg; /* the value of the option cli_next returned, or NULL */
	char **args;     /* operands once cli_next returned 0 */
	int nargs;
	int status;             /* exit status once cli_next returned -1 */
	int seen[CLI_MAX_OPTS]; /* per option of the table: given already */
	struct option lo[CLI_MAX_OPTS + 2];
	char so[CLI_MAX_OPTS * 3 + 5];
};

void cli_parse_start(struct cli_parse *p, const struct cli_spec *spec, int argc, char **argv);
/* The next option's key (> 0), 0 when every option is read and the operand count
 * fits the spec, or -1 when the caller must return p->status. */
int cli_next(struct cli_parse *p);
/* The option's spelling as the user should read it: "--size" or "-q". */
const char *cli_opt_label(const struct cli_spec *spec, int key, char *buf, size_t len);

/* The command's help on out, from its table. */
void cli_help(const struct cli_spec *spec, FILE *out);
/* The command's man page (roff) on out. */
void cli_man(const struct cli_spec *spec, const char *version, const char *date, FILE *out);
/* From now on, --help prints the command's man page (blackout help --man CMD). */
void cli_help_man_mode(const char *version, const char *date);
/* The exit statuses every command follows, as man page text (EXIT STATUS). */
void cli_exit_table_man(FILE *out);
/* For a command with actions (spec->subs): the action named by argv[1] (argv[0] is
 * the command), or NULL after printing help or a usage error (*status then). */
const struct cli_spec *cli_action(const struct cli_spec *spec, int argc, char **argv, int *status);

#endif
