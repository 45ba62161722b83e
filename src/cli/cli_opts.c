// SPDX-License-Identifier: GPL-2.0-or-later
/* cli_opts.c — a command's option table turned into getopt_long's, its --help and its
 * man page: one table, so that what is parsed, printed and documented cannot differ. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_opts.h"

/* What --help prints in this process: the help, or (blackout help --man CMD) the man
 * page, so that every command that parses with a table has its page without more code.
 * The one piece of process-wide state here, set once by main. */
static struct {
	bool man;
	const char *version, *date;
} help_mode;

void cli_help_man_mode(const char *version, const char *date)
{
	help_mode.man = true;
	help_mode.version = version;
	help_mode.date = date;
}

static void print_help(const struct cli_spec *s, FILE *out)
{
	if (help_mode.man)
		cli_man(s, help_mode.version, help_mode.date, out);
	else
		cli_help(s, out);
}

/* The option every command has; not in the tables. */
static const struct cli_opt help_opt = {'h', "help", NULL, "print this help and exit", 0};

static bool optional_arg(const struct cli_opt *o)
{
	return o->arg && o->arg[0] == '[';
}

static const struct cli_opt *find_key(const struct cli_spec *s, int key, int *index)
{
	for (int i = 0; s->opts && s->opts[i].key; i++)
		if (s->opts[i].key == key) {
			if (index)
				*index = i;
			return &s->opts[i];
		}
	return key == 'h' ? &help_opt : NULL;
}

const char *cli_opt_label(const struct cli_spec *s, int key, char *buf, size_t len)
{
	const struct cli_opt *o = find_key(s, key, NULL);
	if (o && o->name)
		snprintf(buf, len, "--%s", o->name);
	else
		snprintf(buf, len, "-%c", key < CLI_LONG ? key : '?');
	return buf;
}

void cli_parse_start(struct cli_parse *p, const struct cli_spec *s, int argc, char **argv)
{
	memset(p, 0, sizeof(*p));
	p->spec = s;
	p->argc = argc;
	p->argv = argv;
	/* ':' first: a missing value is reported as ':' so the message is ours; '+' is
	 * not given, so operands and options may be mixed as in GNU tools. */
	size_t n = 0, k = 0;
	if (s->options_first)
		p->so[k++] = '+';
	p->so[k++] = ':';
	const struct cli_opt *all[CLI_MAX_OPTS + 1];
	size_t nall = 0;
	for (int i = 0; s->opts && s->opts[i].key && nall < CLI_MAX_OPTS; i++)
		all[nall++] = &s->opts[i];
	all[nall++] = &help_opt;
	for (size_t i = 0; i < nall; i++) {
		const struct cli_opt *o = all[i];
		/* optional values are handled by cli_next, which also takes the next word */
		int has = !o->arg           ? no_argument
		          : optional_arg(o) ? optional_argument
		                            : required_argument;
		if (o->key < CLI_LONG) {
			p->so[k++] = (char)o->key;
			if (has != no_argument)
				p->so[k++] = ':';
			if (has == optional_argument)
				p->so[k++] = ':';
		}
		if (o->name)
			p->lo[n++] = (struct option){o->name, has, NULL, o->key};
	}
	p->so[k] = 0;
	p->lo[n] = (struct option){NULL, 0, NULL, 0};
	optind = 0; /* glibc: 0 starts a fresh scan of a new argv */
	opterr = 0;
}

static int usage_stop(struct cli_parse *p)
{
	p->status = p->spec->usage_status ? p->spec->usage_status : CLI_EXIT_USAGE;
	return -1;
}

int cli_next(struct cli_parse *p)
{
	const struct cli_spec *s = p->spec;
	char a[64], b[64];
	p->arg = NULL;
	int k = getopt_long(p->argc, p->argv, p->so, p->lo, NULL);
	if (k == -1) {
		p->args = p->argv + optind;
		p->nargs = p->argc - optind;
		if (p->nargs < s->min_args) {
			fprintf(stderr, "blackout %s: missing operand\nusage: blackout %s %.*s\n",
			        s->name, s->name, (int)strcspn(s->usage, "\n"), s->usage);
			fprintf(stderr, "Try 'blackout %s --help'.\n", s->name);
			return usage_stop(p);
		}
		if (s->max_args >= 0 && p->nargs > s->max_args) {
			cli_usage_error(s->name, "unexpected operand '%s'", p->args[s->max_args]);
			return usage_stop(p);
		}
		return 0;
	}
	if (k == '?') {
		/* optopt: the unknown short letter, or 0 for an unknown long option */
		const char *bad = p->argv[optind - 1];
		bool is_long = bad[0] == '-' && bad[1] == '-';
		if (optopt && is_long && find_key(s, optopt, NULL))
			/* a known long flag given a value (--json=1) */
			cli_usage_error(s->name, "%s takes no value",
			                cli_opt_label(s, optopt, a, sizeof(a)));
		else if (optopt && !is_long)
			cli_usage_error(s->name, "unknown option '-%c'", optopt);
		else
			cli_usage_error(s->name, "unknown option '%.*s'", (int)strcspn(bad, "="),
			                bad);
		return usage_stop(p);
	}
	if (k == ':') {
		cli_usage_error(s->name, "%s needs a value",
		                cli_opt_label(s, optopt, a, sizeof(a)));
		return usage_stop(p);
	}
	if (k == 'h') {
		print_help(s, stdout);
		p->status = CLI_EXIT_OK;
		return -1;
	}
	int idx = -1;
	const struct cli_opt *o = find_key(s, k, &idx);
	if (!o)
		return usage_stop(p); /* not in the table: getopt returned what it was given */
	p->arg = optarg;
	if (optional_arg(o) && !optarg && optind < p->argc &&
	    (p->argv[optind][0] != '-' || strcmp(p->argv[optind], "-") == 0))
		p->arg = p->argv[optind++];
	for (int i = 0; idx >= 0 && i < CLI_MAX_OPTS && s->opts[i].key; i++) {
		const struct cli_opt *q = &s->opts[i];
		if (i == idx || !p->seen[i] ||
		    !((o->excludes & q->group) || (q->excludes & o->group)))
			continue;
		cli_usage_error(s->name, "%s and %s cannot be used together",
		                cli_opt_label(s, q->key, a, sizeof(a)),
		                cli_opt_label(s, k, b, sizeof(b)));
		return usage_stop(p);
	}
	if (idx >= 0 && idx < CLI_MAX_OPTS)
		p->seen[idx] = 1;
	return k;
}

/* ---- --help ------------------------------------------------------------------------ */
static void usage_lines(const struct cli_spec *s, FILE *out, bool *first)
{
	for (const char *u = s->usage; u;) {
		size_t n = strcspn(u, "\n");
		fprintf(out, "%s blackout %s%s%.*s\n", *first ? "usage:" : "   or:", s->name,
		        n ? " " : "", (int)n, u);
		*first = false;
		u = u[n] ? u + n + 1 : NULL;
	}
}

static int opt_label(const struct cli_opt *o, char *buf, size_t len)
{
	const char *v = o->arg ? o->arg : "", *sp = o->arg ? " " : "";
	if (o->key < CLI_LONG && o->name)
		return snprintf(buf, len, "-%c, --%s%s%s", o->key, o->name, sp, v);
	if (o->name)
		return snprintf(buf, len, "    --%s%s%s", o->name, sp, v);
	return snprintf(buf, len, "-%c%s%s", o->key, sp, v);
}

enum { HELP_WIDTH = 79 };

/* The words of text[0, n) filled to HELP_WIDTH columns, the cursor at column col and
 * each further line indented to it: the help reads the same whatever the terminal
 * (80 columns), and the tables need not be wrapped by hand. */
static void fill(const char *text, size_t n, int col, FILE *out)
{
	int at = col;
	bool first = true;
	for (size_t i = 0; i < n;) {
		while (i < n && (text[i] == ' ' || text[i] == '\n'))
			i++;
		size_t w = 0;
		while (i + w < n && text[i + w] != ' ' && text[i + w] != '\n')
			w++;
		if (!w)
			break;
		if (!first && at + 1 + (int)w > HELP_WIDTH) {
			fprintf(out, "\n%*s", col, "");
			at = col;
			first = true;
		}
		fprintf(out, "%s%.*s", first ? "" : " ", (int)w, text + i);
		at += (int)w + (first ? 0 : 1);
		first = false;
		i += w;
	}
	fputc('\n', out);
}

/* Paragraphs (blank-line separated) filled; one whose first line is indented (a list,
 * a command) printed as it is. */
static void paragraphs(const char *text, FILE *out)
{
	for (const char *t = text; *t;) {
		const char *end = strstr(t, "\n\n");
		size_t n = end ? (size_t)(end - t) : strlen(t);
		if (t[0] == ' ')
			fprintf(out, "%.*s\n", (int)(n && t[n - 1] == '\n' ? n - 1 : n), t);
		else
			fill(t, n, 0, out);
		if (!end)
			break;
		fputc('\n', out);
		t = end + 2;
	}
}

static void opt_lines(const struct cli_opt *opts, FILE *out)
{
	enum { COL = 24 };
	for (int i = 0; opts && opts[i].key; i++) {
		char l[96];
		int n = opt_label(&opts[i], l, sizeof(l));
		if (n + 2 > COL - 2)
			fprintf(out, "  %s\n%*s", l, COL, "");
		else
			fprintf(out, "  %-*s", COL - 2, l);
		fill(opts[i].help, strlen(opts[i].help), COL, out);
	}
}

static void exit_line(const struct cli_spec *s, FILE *out)
{
	const char *e =
	    s->exit ? s->exit : "0 done, 1 failed (the reason on stderr), 2 usage error.";
	size_t n = strcspn(e, "\n");
	fputs("\nExit status: ", out);
	fill(e, n, 13, out);
	/* lines after the first are a table (fsck's codes), kept as they are */
	if (e[n])
		fputs(e + n + 1, out);
}

void cli_help(const struct cli_spec *s, FILE *out)
{
	bool first = true;
	if (s->subs) {
		for (int i = 0; s->subs[i]; i++)
			usage_lines(s->subs[i], out, &first);
	} else {
		usage_lines(s, out, &first);
	}
	if (strchr(s->name, ' ')) {
		int n = fprintf(out, "\n  %s  ", strchr(s->name, ' ') + 1) - 1;
		fill(s->summary, strlen(s->summary), n, out);
	}
	if (s->about) {
		fputc('\n', out);
		paragraphs(s->about, out);
	}
	if (s->subs) {
		fprintf(out, "\nactions ('blackout %s ACTION --help' for each):\n", s->name);
		for (int i = 0; s->subs[i]; i++) {
			const char *an = strchr(s->subs[i]->name, ' ');
			fprintf(out, "  %-10s  ", an ? an + 1 : s->subs[i]->name);
			fill(s->subs[i]->summary, strlen(s->subs[i]->summary), 14, out);
		}
	}
	fprintf(out, "\noptions:\n");
	opt_lines(s->opts, out);
	opt_lines((const struct cli_opt[]){help_opt, {0}}, out);
	exit_line(s, out);
	fprintf(out, "Exit statuses of every command: docs/cli.md; 'man blackout-%.*s'.\n",
	        (int)strcspn(s->name, " "), s->name);
}

const struct cli_spec *cli_action(const struct cli_spec *s, int argc, char **argv, int *status)
{
	if (argc >= 2 && cli_is_help(argv[1])) {
		print_help(s, stdout);
		*status = CLI_EXIT_OK;
		return NULL;
	}
	if (argc < 2) {
		bool first = true;
		fprintf(stderr, "blackout %s: missing action\n", s->name);
		for (int i = 0; s->subs[i]; i++)
			usage_lines(s->subs[i], stderr, &first);
		fprintf(stderr, "Try 'blackout %s --help'.\n", s->name);
		*status = CLI_EXIT_USAGE;
		return NULL;
	}
	for (int i = 0; s->subs[i]; i++) {
		const char *an = strchr(s->subs[i]->name, ' ');
		if (an && strcmp(an + 1, argv[1]) == 0)
			return s->subs[i];
	}
	*status = cli_usage_error(s->name, "unknown action '%s'", argv[1]);
	return NULL;
}

/* ---- man page ---------------------------------------------------------------------- */
/* roff-safe text: backslashes, '-' as a real minus (options copied from the page
 * work), a leading '.' or '\'' that would be a request */
static void esc(const char *t, size_t n, FILE *out)
{
	if (n && (t[0] == '.' || t[0] == '\''))
		fputs("\\&", out);
	for (size_t i = 0; i < n; i++) {
		if (t[i] == '\\')
			fputs("\\e", out);
		else if (t[i] == '-')
			fputs("\\-", out);
		else
			fputc(t[i], out);
	}
}

static void esc_line(const char *t, FILE *out)
{
	esc(t, strlen(t), out);
	fputc('\n', out);
}

/* Paragraphs split at blank lines; one whose first line is indented (a list, a
 * table, a command) is kept as it is, the others are filled by man to its width. */
static void man_text(const char *text, FILE *out)
{
	const char *t = text;
	while (*t) {
		while (*t == '\n')
			t++;
		if (!*t)
			break;
		const char *end = strstr(t, "\n\n");
		if (!end)
			end = t + strlen(t);
		bool literal = t[0] == ' ';
		fputs(literal ? ".PP\n.nf\n" : ".PP\n", out);
		for (const char *l = t; l < end;) {
			size_t n = strcspn(l, "\n");
			if (l + n > end)
				n = (size_t)(end - l);
			esc(l, n, out);
			fputc('\n', out);
			l += n + 1;
		}
		if (literal)
			fputs(".fi\n", out);
		t = end;
	}
}

static void man_opts(const struct cli_opt *opts, FILE *out)
{
	for (int i = 0; opts && opts[i].key; i++) {
		const struct cli_opt *o = &opts[i];
		fputs(".TP\n", out);
		if (o->key < CLI_LONG) {
			fprintf(out, "\\fB\\-%c\\fR", o->key);
			if (o->name)
				fputs(", ", out);
		}
		if (o->name) {
			fputs("\\fB\\-\\-", out);
			esc(o->name, strlen(o->name), out);
			fputs("\\fR", out);
		}
		if (o->arg) {
			fputs(" \\fI", out);
			esc(o->arg, strlen(o->arg), out);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		for (const char *h = o->help; h;) {
			size_t n = strcspn(h, "\n");
			esc(h, n, out);
			fputc('\n', out);
			h = h[n] ? h + n + 1 : NULL;
		}
	}
}

static void man_synopsis(const struct cli_spec *s, FILE *out)
{
	for (const char *u = s->usage; u;) {
		size_t n = strcspn(u, "\n");
		fprintf(out, ".B blackout %s\n", s->name);
		if (n) {
			esc(u, n, out);
			fputc('\n', out);
		}
		fputs(".br\n", out);
		u = u[n] ? u + n + 1 : NULL;
	}
}

void cli_exit_table_man(FILE *out)
{
	fputs(".TP\n.B 0\nSuccess: done, or the check found nothing wrong.\n"
	      ".TP\n.B 1\nFailure: the command could not do what was asked (a file that cannot "
	      "be opened, a damaged image, an I/O error, a run that failed); one line on "
	      "standard error says why.\n"
	      ".TP\n.B 2\nUsage error: an unknown option, a missing or malformed value or "
	      "operand, options that cannot be used together. Nothing was done.\n"
	      ".TP\n.B 3\nThe command ran to its end and found what it looks for: a crash "
	      "state that broke an invariant (explore, raid hole).\n"
	      ".PP\n\\fBblackout fsck\\fR keeps e2fsck's own exit codes instead "
	      "(see \\fBblackout\\-fsck\\fR(1)).\n",
	      out);
}

void cli_man(const struct cli_spec *s, const char *version, const char *date, FILE *out)
{
	char page[64];
	snprintf(page, sizeof(page), "blackout-%s", s->name);
	fputs(".TH ", out);
	for (const char *c = page; *c; c++)
		fputc(*c >= 'a' && *c <= 'z' ? *c - 32 : *c, out);
	fprintf(out, " 1 \"%s\" \"blackout %s\" \"blackout manual\"\n", date, version);
	fputs(".SH NAME\n", out);
	esc(page, strlen(page), out);
	fputs(" \\- ", out);
	esc_line(s->summary, out);
	fputs(".SH SYNOPSIS\n", out);
	if (s->subs)
		for (int i = 0; s->subs[i]; i++)
			man_synopsis(s->subs[i], out);
	else
		man_synopsis(s, out);
	fputs(".SH DESCRIPTION\n", out);
	if (s->about)
		man_text(s->about, out);
	fputs(".SH OPTIONS\n", out);
	man_opts(s->opts, out);
	man_opts((const struct cli_opt[]){help_opt, {0}}, out);
	for (int i = 0; s->subs && s->subs[i]; i++) {
		const struct cli_spec *a = s->subs[i];
		fputs(".SS ", out);
		esc_line(a->name, out);
		esc_line(a->summary, out);
		/* an action's text said once, where it is the command's too */
		if (a->about && !(s->about && strcmp(a->about, s->about) == 0))
			man_text(a->about, out);
		man_opts(a->opts, out);
	}
	fputs(".SH EXIT STATUS\n", out);
	if (s->usage_status && s->exit) {
		/* its own statuses (fsck: e2fsck's), not the shared table: a sentence, then
		 * the table's lines as they are */
		size_t n = strcspn(s->exit, "\n");
		fputs(".PP\n", out);
		esc(s->exit, n, out);
		fputc('\n', out);
		/* the table's lines "  N  meaning" (an indented line goes on) as man's list */
		for (const char *l = s->exit + n; *l;) {
			l += strspn(l, " \n");
			size_t w = strcspn(l, "\n");
			size_t d = strspn(l, "0123456789");
			if (d && d < w) {
				fprintf(out, ".TP\n.B %.*s\n", (int)d, l);
				l += d + strspn(l + d, " ");
				w = strcspn(l, "\n");
			}
			esc(l, w, out);
			fputc('\n', out);
			l += w;
		}
	} else {
		cli_exit_table_man(out);
		if (s->exit) {
			fputs(".PP\nThis command: ", out);
			esc_line(s->exit, out);
		}
	}
	if (s->examples) {
		fputs(".SH EXAMPLES\n.nf\n", out);
		for (const char *e = s->examples; *e;) {
			size_t n = strcspn(e, "\n");
			esc(e, n, out);
			fputc('\n', out);
			e += n + (e[n] ? 1 : 0);
		}
		fputs(".fi\n", out);
	}
	fputs(".SH SEE ALSO\n\\fBblackout\\fR(1)\n", out);
}
