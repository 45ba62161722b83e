// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_fsck.c — `blackout fsck IMAGE [-n|-p|-y] [--fast] [--json]`: check (and repair)
 * an ext2/ext3 image with blackout's own checker; exit codes as e2fsck's. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "blackout/fsck.h"
#include "blackout/json.h"
#include "cli/cli.h"

static const char fsck_help[] =
    "usage: blackout fsck [-n|-p|-a|-y] [-f] [--fast] [--json] IMAGE\n"
    "\n"
    "Checks an ext2/ext3 image (metadata_csum included) the way e2fsck -f does: superblock\n"
    "and group descriptors, every inode and its blocks, directories (entries, '.', '..',\n"
    "htree), connectivity, link counts, bitmaps and summary counts. One line per problem,\n"
    "naming the inode, block and entry. The image is read directly, never mounted.\n"
    "Options may come before or after IMAGE and combine as e2fsck's do (-fy, -fn).\n"
    "\n"
    "  -n       report only; never write (the default)\n"
    "  -y       replay the journal, then repair: the superblock from its backup, bitmaps\n"
    "           and counts, link counts, orphaned inodes (to lost+found, or freed when\n"
    "           empty), entries to freed inodes, out-of-range block pointers, damaged\n"
    "           modes, stale checksums, as e2fsck repairs them; then check again and\n"
    "           list what remains. What it cannot repair it leaves and reports (exit 4)\n"
    "  -p, -a   preen, as e2fsck -p: replay the journal and fix only what e2fsck -p\n"
    "           fixes without asking (bitmaps, free counts, link counts, orphans,\n"
    "           deletion times, i_size and i_blocks); on anything else repair nothing,\n"
    "           print UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY and exit 4\n"
    "  -f       accepted for e2fsck's users: blackout always checks fully\n"
    "  --fast   checksum and structure scrub of metadata only (no directory or\n"
    "           cross-structure checks): for every mount after an unclean shutdown\n"
    "  --json   one JSON object instead of lines\n"
    "\n"
    "-n, -p/-a and -y exclude each other; --fast only checks.\n"
    "A journal that needs recovery is replayed first by -p and -y, as e2fsck does: it\n"
    "is found through the journal inode (or, when that inode is damaged, through the\n"
    "superblock's backup of its blocks), replayed, and needs_recovery is cleared; the\n"
    "check then sees the replayed image. -n reports it and checks the image as it is.\n"
    "A damaged primary superblock is replaced for the check by a backup, found where\n"
    "e2fsck -b looks, and the run names it; -y writes it back.\n"
    "\n"
    "Exit status, e2fsck's (added together when several hold):\n"
    "   0  no errors\n"
    "   1  errors corrected (a journal replay counts)\n"
    "   2  errors corrected, reboot: never returned (blackout checks no mounted root)\n"
    "   4  errors left uncorrected (-n on a damaged image; -p stopped; -y could not)\n"
    "   8  operational error (cannot read, not an ext2/ext3 filesystem, unsupported\n"
    "      feature)\n"
    "  16  usage or syntax error\n"
    "  32  cancelled by the user: never returned (an interrupt ends the process)\n";

struct out {
	bool json;
	json_t *problems;  /* --json: filled by on_problem */
	json_t *remaining; /* --json: filled by on_remaining (repair modes) */
	unsigned n;
};

static void print_problem(struct out *o, json_t *into, const char *prefix,
                          const struct fsck_problem *p)
{
	if (o->json) {
		json_array_append_new(
		    into,
		    json_pack("{s:s,s:I,s:I,s:o,s:o}", "kind", fsck_kind_name(p->kind), "inode",
		              (json_int_t)p->ino, "block", (json_int_t)p->block, "name",
		              bo_json_text(p->name), "message", bo_json_text(p->msg)));
	} else {
		printf("%s%s", prefix, p->msg);
		if (p->name[0])
			printf(" [entry '%s']", p->name);
		putchar('\n');
	}
}

static void on_problem(void *ctx, const struct fsck_problem *p)
{
	struct out *o = ctx;
	print_problem(o, o->problems, "", p);
	o->n++;
}

/* After a repair: what the check that gives the verdict still finds. */
static void on_remaining(void *ctx, const struct fsck_problem *p)
{
	struct out *o = ctx;
	print_problem(o, o->remaining, "remains: ", p);
}

/* A usage error, said as every command says it, with e2fsck's exit code (16) rather
 * than the 2 other commands use: 2 means "errors corrected, reboot" to fsck's callers. */
static int usage_error(const char *fmt, const char *arg)
{
	fputs("blackout fsck: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'blackout fsck --help'.\n", stderr);
	return FSCK_EXIT_USAGE;
}

enum { OPT_FAST = 256, OPT_JSON };

static const struct option fsck_longopts[] = {
    {"fast", no_argument, NULL, OPT_FAST},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cmd_fsck(int argc, char **argv)
{
	struct fsck_opts opts = {.repair = FSCK_REPAIR_NONE};
	struct out out = {0};
	char mode = 0; /* the -n/-p/-y given, to refuse a second one as e2fsck does */
	optind = 0;    /* glibc: start afresh, permuting options after IMAGE */
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, "nypafh", fsck_longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
		case 'y':
		case 'p':
		case 'a': {
			char m = ch == 'a' ? 'p' : (char)ch;
			if (mode && mode != m)
				return usage_error("%s",
				                   "only one of the options -p/-a, -n or -y may be "
				                   "specified");
			mode = m;
			opts.repair = m == 'n'   ? FSCK_REPAIR_NONE
			              : m == 'y' ? FSCK_REPAIR_YES
			                         : FSCK_REPAIR_PREEN;
			break;
		}
		case 'f': break; /* e2fsck's "force": every blackout check is a full one */
		case OPT_FAST: opts.fast = true; break;
		case OPT_JSON: out.json = true; break;
		case 'h': fputs(fsck_help, stdout); return 0;
		default:
			if (optopt >= OPT_FAST || optopt == 'h') /* a long option given a value */
				return usage_error("option '%s' takes no value", argv[optind - 1]);
			if (optopt)
				return usage_error("unknown option '-%s'",
				                   (char[]){(char)optopt, 0});
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "missing IMAGE");
	if (argc - optind > 1)
		return usage_error("one image only (got '%s' too)", argv[optind + 1]);
	const char *image = argv[optind];
	if (opts.fast && opts.repair != FSCK_REPAIR_NONE)
		return usage_error("%s", "--fast only checks: it cannot be combined with -p/-a/-y");
	struct bo_err err = {{0}};
	struct bdev *d;
	int rc = blk_file_open(image, 512, 0, opts.repair ? 0 : BLK_FILE_RDONLY, &d, &err);
	if (rc) {
		fprintf(stderr, "blackout fsck: %s\n", bo_errstr(&err, rc));
		return FSCK_EXIT_ERROR;
	}
	opts.on_problem = on_problem;
	opts.ctx = &out;
	opts.on_remaining = on_remaining;
	opts.remaining_ctx = &out;
	if (out.json && (!(out.problems = json_array()) || !(out.remaining = json_array())))
		return FSCK_EXIT_ERROR;
	struct fsck_report r;
	rc = fsck_check(d, &opts, &r, &err);
	blk_close(d);
	if (rc) {
		if (out.json)
			bo_json_write(json_pack("{s:o,s:o,s:o}", "image", bo_json_text(image),
			                        "problems", out.problems, "error",
			                        bo_json_text(bo_errstr(&err, rc))),
			              stdout, 0);
		json_decref(out.remaining);
		fprintf(stderr, "blackout fsck: %s: %s\n", image, bo_errstr(&err, rc));
		return FSCK_EXIT_ERROR;
	}
	int code = fsck_exit_code(&r);
	const struct fsck_replay *j = &r.replay;
	if (out.json) {
		bo_json_write(json_pack("{s:o,s:o,s:o,s:b,s:I,s:I,s:b,s:b,s:b,s:I,s:o,s:i}",
		                        "image", bo_json_text(image), "problems", out.problems,
		                        "remaining_problems", out.remaining, "preen_stopped",
		                        r.preen_stopped, "remaining", (json_int_t)r.nr_problems,
		                        "fixed", (json_int_t)r.nr_fixed, "by_checksum",
		                        r.by_checksum, "needs_recovery", r.needs_recovery,
		                        "replayed", j->done, "replayed_blocks",
		                        (json_int_t)j->info.nr_replayed, "replay_error",
		                        bo_json_text(j->error), "exit", code),
		              stdout, 0);
	} else {
		if (j->done)
			printf("%s: journal replayed: %u transaction(s), %llu block(s) written%s\n",
			       image, j->info.nr_transactions,
			       (unsigned long long)j->info.nr_replayed,
			       j->from_backup ? " (the journal inode is damaged: found through the "
			                        "superblock's backup of its blocks)"
			                      : "");
		else if (j->stale_flag)
			printf(
			    "%s: needs_recovery was set, but there is no journal: flag cleared\n",
			    image);
		else if (j->error[0])
			printf("%s: the journal needs recovery but cannot be replayed: %s\n", image,
			       j->error);
		if (r.preen_stopped)
			printf("%s: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n\t(i.e., without "
			       "-a or -p options)\n",
			       image);
		else if (opts.repair && r.modified)
			printf("%s: repaired; %u problem(s) remain\n", image, r.nr_problems);
		else
			printf("%s: %s (%u problem(s))\n", image,
			       r.nr_problems ? "NOT clean" : "clean", r.nr_problems);
	}
	return code;
}
