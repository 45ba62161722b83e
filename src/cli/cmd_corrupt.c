// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_corrupt.c — `blackout corrupt IMAGE --what KIND --seed N [--count K]`: seeded,
 * reproducible damage to one kind of ext2/ext3 structure; prints every change. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fsck.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

enum { OPT_WHAT = CLI_LONG, OPT_SEED, OPT_COUNT };
static const struct cli_opt corrupt_opts[] = {
    {OPT_WHAT, "what", "KIND",
     "superblock | gdt | bitmap | inode | dirent | htree |\nindirect | data (required)", 0},
    {OPT_SEED, "seed", "N", "the seed, decimal (required)", 0},
    {OPT_COUNT, "count", "K", "number of changes (default 1)", 0},
    {0}};
static const struct cli_spec corrupt_spec = {
    "corrupt",
    "damage an ext2/ext3 image on purpose, seeded and reproducible",
    "IMAGE --what KIND --seed N [--count K]",
    "Damages an ext2/ext3 image on purpose, reproducibly: the same image, KIND, seed\n"
    "and count make the same changes. Prints one line per change (structure, block,\n"
    "offset, old and new value). Checksums are left as they were: damage is damage.\n",
    corrupt_opts,
    1,
    1,
    "0 changed, 1 nothing of that kind to change (e.g. no htree directory) or an\n"
    "image that cannot be read, 2 usage error.",
    "$ blackout corrupt a.img --what inode --seed 7 --count 3\n"
    "$ blackout fsck -n a.img\n",
    NULL};

int cmd_corrupt(int argc, char **argv)
{
	const char *image = NULL, *what = NULL;
	uint64_t seed = 0, count = 1;
	bool have_seed = false;
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &corrupt_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		if (k == OPT_WHAT)
			what = p.arg;
		else if (k == OPT_SEED &&
		         cli_num("corrupt", "--seed", p.arg, 0, 0, UINT64_MAX, &seed))
			return CLI_EXIT_USAGE;
		else if (k == OPT_SEED)
			have_seed = true;
		else if (k == OPT_COUNT &&
		         cli_num("corrupt", "--count", p.arg, 0, 1, 100000, &count))
			return CLI_EXIT_USAGE;
	}
	if (k < 0)
		return p.status;
	image = p.args[0];
	if (!what || !have_seed)
		return cli_usage_error("corrupt", "--what and --seed are required");
	enum fsck_corrupt_what w;
	if (fsck_corrupt_parse(what, &w))
		return cli_usage_error("corrupt", "unknown kind '%s'", what);
	struct bo_err err = {{0}};
	struct bdev *d;
	int rc = blk_file_open(image, 512, 0, 0, &d, &err);
	if (rc)
		return cli_fail_named("corrupt", image, bo_errstr(&err, rc));
	size_t logsz = 256 * (size_t)count + 256;
	char *log = malloc(logsz);
	if (!log) {
		blk_close(d);
		return cli_fail("corrupt", "out of memory");
	}
	rc = fsck_corrupt(d, w, seed, (uint32_t)count, log, logsz, &err);
	blk_close(d);
	if (rc < 0) {
		free(log);
		return cli_fail("corrupt", "%s: %s", image, bo_errstr(&err, rc));
	}
	fputs(log, stdout);
	free(log);
	if (rc == 0) {
		fprintf(stderr, "blackout corrupt: %s has no %s structure to change\n", image,
		        what);
		return 1;
	}
	return 0;
}
