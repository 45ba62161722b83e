// SPDX-License-Identifier: GPL-2.0-or-later
/* main.c — `blackout`: --version, help, and dispatch to a subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blackout/util.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

#ifndef BLACKOUT_VERSION
#define BLACKOUT_VERSION "0.1"
#endif

static const char about[] =
    "A storage reliability laboratory: block-device models, an ext3-compatible\n"
    "journaling filesystem and a crash explorer that tests what filesystems\n"
    "assume of the hardware below them.\n";

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: blackout COMMAND [OPTIONS] [ARGS...]\n"
	        "       blackout help [COMMAND]\n"
	        "       blackout --version\n\n%s\ncommands:\n",
	        about);
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out, "\n'blackout COMMAND --help' (or 'blackout help COMMAND') describes each\n"
	             "command. Exit status: 0 done, 1 failed, 2 usage error, 3 found what it\n"
	             "looks for (explore); fsck: e2fsck's codes (docs/cli.md).\n");
}

static void man_escaped(const char *t, FILE *out)
{
	for (; *t; t++)
		fputs(*t == '-' ? "\\-" : *t == '\\' ? "\\e" : (char[2]){*t, 0}, out);
}

/* blackout.1: what the program is, its commands, the exit statuses they share */
static void man_page(const char *date, FILE *out)
{
	fprintf(out, ".TH BLACKOUT 1 \"%s\" \"blackout %s\" \"blackout manual\"\n", date,
	        BLACKOUT_VERSION);
	fputs(".SH NAME\nblackout \\- a storage reliability laboratory\n.SH SYNOPSIS\n"
	      ".B blackout\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR...]\n.br\n"
	      ".B blackout help\n[\\fICOMMAND\\fR]\n.br\n.B blackout \\-\\-version\n"
	      ".SH DESCRIPTION\n",
	      out);
	man_escaped(about, out);
	fputs(".PP\nOptions follow GNU conventions in every command: long options as "
	      "\\fB\\-\\-name value\\fR or \\fB\\-\\-name=value\\fR, short flags combined "
	      "(\\fB\\-la\\fR), options and operands in any order, \\fB\\-\\-\\fR ends the "
	      "options; \\fB\\-h\\fR, \\fB\\-\\-help\\fR in every command.\n"
	      ".SH COMMANDS\n",
	      out);
	for (const struct cli_cmd *c = cli_cmds; c->name; c++) {
		fprintf(out, ".TP\n\\fB");
		man_escaped(c->name, out);
		fputs("\\fR\n", out);
		man_escaped(c->summary, out);
		fprintf(out, " (\\fBblackout\\-");
		man_escaped(c->name, out);
		fputs("\\fR(1))\n", out);
	}
	fputs(".SH EXIT STATUS\n", out);
	cli_exit_table_man(out);
	fputs(".SH EXAMPLES\n.nf\n$ blackout mkfs a.img \\-\\-size 64M\n$ blackout put a.img "
	      "notes.txt /notes.txt\n$ blackout matrix \\-\\-quick\n.fi\n"
	      ".SH SEE ALSO\n\\fBe2fsck\\fR(8), \\fBmke2fs\\fR(8), \\fBdebugfs\\fR(8)\n",
	      out);
}

/* Reproducible pages: the date of the source (SOURCE_DATE_EPOCH, as Debian sets it),
 * else today. */
static void man_date(char *buf, size_t len)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	time_t t = e && *e ? (time_t)strtoll(e, NULL, 10) : time(NULL);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d", &tm))
		snprintf(buf, len, "1970-01-01");
}

static const struct cli_cmd *find(const char *name)
{
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* blackout help [--man] [COMMAND]: the same text as COMMAND --help (or its page) */
static int help(int argc, char **argv)
{
	char date[32];
	bool man = argc > 1 && strcmp(argv[1], "--man") == 0;
	if (man) {
		man_date(date, sizeof(date));
		cli_help_man_mode(BLACKOUT_VERSION, date);
		argc--;
		argv++;
	}
	if (argc > 2) {
		fprintf(stderr, "blackout help: one COMMAND at most\nTry 'blackout --help'.\n");
		return CLI_EXIT_USAGE;
	}
	if (argc < 2) {
		if (man)
			man_page(date, stdout);
		else
			usage(stdout);
		return 0;
	}
	const struct cli_cmd *c = find(argv[1]);
	if (!c) {
		fprintf(stderr, "blackout help: unknown command '%s'\nTry 'blackout --help'.\n",
		        argv[1]);
		return CLI_EXIT_USAGE;
	}
	char *args[] = {argv[1], "--help", NULL};
	return c->run(2, args);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (cli_is_help(argv[1])) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("blackout %s\n", BLACKOUT_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0)
		return help(argc - 1, argv + 1);
	const struct cli_cmd *c = find(argv[1]);
	if (c)
		return c->run(argc - 1, argv + 1);
	fprintf(stderr, "blackout: unknown command '%s'\nTry 'blackout --help'.\n", argv[1]);
	return CLI_EXIT_USAGE;
}
