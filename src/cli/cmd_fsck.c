/* cmd_fsck.c — `blackout fsck IMAGE [-n|-p|-y] [--fast] [--json]`: check (and repair)
 * an ext2/ext3 image with blackout's own checker; exit codes as e2fsck's. */
#include <stdio.h>
#include <string.h>

#include "blackout/fsck.h"
#include "blackout/json.h"
#include "cli/cli.h"

static const char fsck_help[] =
    "usage: blackout fsck IMAGE [-n|-p|-y] [--fast] [--json]\n"
    "\n"
    "Checks an ext2/ext3 image (metadata_csum included) the way e2fsck -f does: superblock\n"
    "and group descriptors, every inode and its blocks, directories (entries, '.', '..',\n"
    "htree), connectivity, link counts, bitmaps and summary counts. One line per problem,\n"
    "naming the inode, block and entry. The image is read directly, never mounted.\n"
    "\n"
    "  -n       report only; never write (the default)\n"
    "  -p, -y   replay the journal, then repair: the superblock from its backup, bitmaps\n"
    "           and counts, link counts, orphaned inodes (to lost+found, or freed when\n"
    "           empty), entries to freed inodes, out-of-range block pointers, damaged\n"
    "           modes, stale checksums, as e2fsck repairs them; then check again. What\n"
    "           it cannot repair it leaves untouched and reports (exit 4)\n"
    "  --fast   checksum and structure scrub of metadata only (no directory or\n"
    "           cross-structure checks): for every mount after an unclean shutdown\n"
    "  --json   one JSON object instead of lines\n"
    "\n"
    "A journal that needs recovery is replayed first by -p and -y, as e2fsck does: it\n"
    "is found through the journal inode (or, when that inode is damaged, through the\n"
    "superblock's backup of its blocks), replayed, and needs_recovery is cleared; the\n"
    "check then sees the replayed image. -n reports it and checks the image as it is.\n"
    "A damaged primary superblock is replaced for the check by a backup, found where\n"
    "e2fsck -b looks, and the run names it; -p/-y write it back.\n"
    "\n"
    "Exit: 0 clean, 1 errors fixed (a replay counts), 4 errors left, 8 operational error\n"
    "(cannot read, not an ext2/ext3 filesystem, unsupported feature).\n";

struct out {
	bool json;
	json_t *problems; /* --json: filled by on_problem */
	unsigned n;
};

static void on_problem(void *ctx, const struct fsck_problem *p)
{
	struct out *o = ctx;
	if (o->json) {
		json_array_append_new(
		    o->problems,
		    json_pack("{s:s,s:I,s:I,s:o,s:o}", "kind", fsck_kind_name(p->kind), "inode",
		              (json_int_t)p->ino, "block", (json_int_t)p->block, "name",
		              bo_json_text(p->name), "message", bo_json_text(p->msg)));
	} else {
		printf("%s", p->msg);
		if (p->name[0])
			printf(" [entry '%s']", p->name);
		putchar('\n');
	}
	o->n++;
}

int cmd_fsck(int argc, char **argv)
{
	const char *image = NULL;
	struct fsck_opts opts = {.repair = FSCK_REPAIR_NONE};
	struct out out = {0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (cli_is_help(a)) {
			fputs(fsck_help, stdout);
			return 0;
		} else if (!strcmp(a, "-n"))
			opts.repair = FSCK_REPAIR_NONE;
		else if (!strcmp(a, "-p"))
			opts.repair = FSCK_REPAIR_PREEN;
		else if (!strcmp(a, "-y"))
			opts.repair = FSCK_REPAIR_YES;
		else if (!strcmp(a, "--fast"))
			opts.fast = true;
		else if (!strcmp(a, "--json"))
			out.json = true;
		else if (a[0] == '-')
			return cli_usage_error("fsck", "unknown option '%s'", a);
		else if (image)
			return cli_usage_error("fsck", "one image only");
		else
			image = a;
	}
	if (!image)
		return cli_usage_error("fsck", "missing IMAGE");
	if (opts.fast && opts.repair != FSCK_REPAIR_NONE)
		return cli_usage_error("fsck",
		                       "--fast only checks: it cannot be combined with -p/-y");
	struct bo_err err = {{0}};
	struct bdev *d;
	int rc = blk_file_open(image, 512, 0, opts.repair ? 0 : BLK_FILE_RDONLY, &d, &err);
	if (rc) {
		fprintf(stderr, "blackout fsck: %s\n", bo_errstr(&err, rc));
		return 8;
	}
	opts.on_problem = on_problem;
	opts.ctx = &out;
	if (out.json && !(out.problems = json_array()))
		return 8;
	struct fsck_report r;
	rc = fsck_check(d, &opts, &r, &err);
	blk_close(d);
	if (rc) {
		if (out.json)
			bo_json_write(json_pack("{s:o,s:o,s:o}", "image", bo_json_text(image),
			                        "problems", out.problems, "error",
			                        bo_json_text(bo_errstr(&err, rc))),
			              stdout, 0);
		fprintf(stderr, "blackout fsck: %s: %s\n", image, bo_errstr(&err, rc));
		return 8;
	}
	int code = fsck_exit_code(&r);
	const struct fsck_replay *j = &r.replay;
	if (out.json) {
		bo_json_write(json_pack("{s:o,s:o,s:I,s:I,s:b,s:b,s:b,s:I,s:o,s:i}", "image",
		                        bo_json_text(image), "problems", out.problems, "remaining",
		                        (json_int_t)r.nr_problems, "fixed", (json_int_t)r.nr_fixed,
		                        "by_checksum", r.by_checksum, "needs_recovery",
		                        r.needs_recovery, "replayed", j->done, "replayed_blocks",
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
		if (opts.repair && r.modified)
			printf("%s: repaired; %u problem(s) remain\n", image, r.nr_problems);
		else
			printf("%s: %s (%u problem(s))\n", image,
			       r.nr_problems ? "NOT clean" : "clean", r.nr_problems);
	}
	return code;
}
