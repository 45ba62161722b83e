// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_fsck.c — `blackout fsck IMAGE [-n|-p|-y] [--fast] [--json]`: check (and repair)
 * an ext2/ext3 image with blackout's own checker; exit codes as e2fsck's. */
#include <stdio.h>
#include <string.h>

#include "blackout/fsck.h"
#include "blackout/json.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

/* Groups: the three modes exclude each other as e2fsck's do (-p and -a are one mode
 * and may be repeated); --fast only checks, so it excludes the two that write. */
enum { G_N = 1, G_P = 2, G_Y = 4, G_FAST = 8 };
enum { OPT_FAST = CLI_LONG, OPT_JSON };

static const struct cli_opt fsck_opts[] = {
    {'n', NULL, NULL, "report only; never write (the default)", G_N, G_P | G_Y},
    {'y', NULL, NULL,
     "replay the journal, then repair: the superblock from its backup, bitmaps and "
     "counts, link counts, orphaned inodes (to lost+found, or freed when empty), entries "
     "to freed inodes, out-of-range block pointers, damaged modes, stale checksums, as "
     "e2fsck repairs them; then check again and list what remains. What it cannot "
     "repair it leaves and reports (exit 4)",
     G_Y, G_N | G_P | G_FAST},
    {'p', NULL, NULL,
     "preen, as e2fsck -p: replay the journal and fix only what e2fsck -p fixes without "
     "asking (bitmaps, free counts, link counts, orphans, deletion times, i_size and "
     "i_blocks); on anything else repair nothing, print UNEXPECTED INCONSISTENCY; RUN "
     "fsck MANUALLY and exit 4",
     G_P, G_N | G_Y | G_FAST},
    {'a', NULL, NULL, "the same as -p (e2fsck's older spelling)", G_P, G_N | G_Y | G_FAST},
    {'f', NULL, NULL, "accepted for e2fsck's users: blackout always checks fully", 0, 0},
    {OPT_FAST, "fast", NULL,
     "checksum and structure scrub of metadata only (no directory or cross-structure "
     "checks): for every mount after an unclean shutdown. Only checks: not with -p/-a/-y",
     G_FAST, G_P | G_Y},
    {OPT_JSON, "json", NULL, "one JSON object instead of lines", 0, 0},
    {0}};

static const struct cli_spec fsck_spec = {
    "fsck",
    "check (and repair) an ext2/ext3 image; exit codes as e2fsck",
    "[-n|-p|-a|-y] [-f] [--fast] [--json] IMAGE",
    "Checks an ext2/ext3 image (metadata_csum included) the way e2fsck -f does: "
    "superblock and group descriptors, every inode and its blocks, directories (entries, "
    "'.', '..', htree), connectivity, link counts, bitmaps and summary counts. One line "
    "per problem, naming the inode, block and entry. The image is read directly, never "
    "mounted. Options may come before or after IMAGE and combine as e2fsck's do (-fy, "
    "-fn).\n"
    "\n"
    "-n, -p/-a and -y exclude each other; --fast only checks. A journal that needs "
    "recovery is replayed first by -p and -y, as e2fsck does: it is found through the "
    "journal inode (or, when that inode is damaged, through the superblock's backup of "
    "its blocks), replayed, and needs_recovery is cleared; the check then sees the "
    "replayed image. -n reports it and checks the image as it is. A damaged primary "
    "superblock is replaced for the check by a backup, found where e2fsck -b looks, and "
    "the run names it; -y writes it back.\n",
    fsck_opts,
    1,
    1,
    "e2fsck's (added together when several hold):\n"
    "   0  no errors\n"
    "   1  errors corrected (a journal replay counts)\n"
    "   2  errors corrected, reboot: never returned (blackout checks no mounted root)\n"
    "   4  errors left uncorrected (-n on a damaged image; -p stopped; -y could not)\n"
    "   8  operational error (cannot read, not an ext2/ext3 filesystem, unsupported\n"
    "      feature)\n"
    "  16  usage or syntax error\n"
    "  32  cancelled by the user: never returned (an interrupt ends the process)\n",
    "$ blackout fsck -fn disk.img\n"
    "  check only; exit 4 if anything is wrong\n"
    "$ blackout fsck -p disk.img\n"
    "  replay the journal and fix what is safe, as at boot\n"
    "$ blackout fsck -y --json disk.img\n"
    "  repair, then list what remains as JSON\n",
    NULL,
    /* 2 means "errors corrected, reboot" to fsck's callers */
    FSCK_EXIT_USAGE,
};

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

int cmd_fsck(int argc, char **argv)
{
	struct fsck_opts opts = {.repair = FSCK_REPAIR_NONE};
	struct out out = {0};
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &fsck_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		switch (k) {
		case 'n': opts.repair = FSCK_REPAIR_NONE; break;
		case 'y': opts.repair = FSCK_REPAIR_YES; break;
		case 'p':
		case 'a': opts.repair = FSCK_REPAIR_PREEN; break;
		case 'f': break; /* e2fsck's "force": every blackout check is a full one */
		case OPT_FAST: opts.fast = true; break;
		case OPT_JSON: out.json = true; break;
		}
	}
	if (k < 0)
		return p.status;
	const char *image = p.args[0];
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
