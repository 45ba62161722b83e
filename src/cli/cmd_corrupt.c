/* cmd_corrupt.c — `blackout corrupt IMAGE --what KIND --seed N [--count K]`: seeded,
 * reproducible damage to one kind of ext2/ext3 structure; prints every change. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/fsck.h"
#include "cli/cli.h"

static const char corrupt_help[] =
    "usage: blackout corrupt IMAGE --what KIND --seed N [--count K]\n"
    "\n"
    "Damages an ext2/ext3 image on purpose, reproducibly: the same image, KIND, seed and\n"
    "count make the same changes. Prints one line per change (structure, block, offset,\n"
    "old and new value). Checksums are left as they were: damage is damage.\n"
    "\n"
    "  --what KIND  superblock | gdt | bitmap | inode | dirent | htree | indirect | data\n"
    "  --seed N     the seed (decimal)\n"
    "  --count K    number of changes (default 1)\n"
    "\n"
    "Exit: 0 changed, 1 nothing of that kind to change (e.g. no htree directory) or error.\n";

int cmd_corrupt(int argc, char **argv)
{
	const char *image = NULL, *what = NULL;
	uint64_t seed = 0, count = 1;
	bool have_seed = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (cli_is_help(a)) {
			fputs(corrupt_help, stdout);
			return 0;
		}
		if ((!strcmp(a, "--what") || !strcmp(a, "--seed") || !strcmp(a, "--count")) &&
		    i + 1 >= argc)
			return cli_usage_error("corrupt", "%s needs a value", a);
		if (!strcmp(a, "--what"))
			what = argv[++i];
		else if (!strcmp(a, "--seed")) {
			if (cli_num("corrupt", a, argv[++i], 0, 0, UINT64_MAX, &seed))
				return 2;
			have_seed = true;
		} else if (!strcmp(a, "--count")) {
			if (cli_num("corrupt", a, argv[++i], 0, 1, 100000, &count))
				return 2;
		} else if (a[0] == '-')
			return cli_usage_error("corrupt", "unknown option '%s'", a);
		else if (image)
			return cli_usage_error("corrupt", "one image only");
		else
			image = a;
	}
	if (!image || !what || !have_seed)
		return cli_usage_error("corrupt", "IMAGE, --what and --seed are required");
	enum fsck_corrupt_what w;
	if (fsck_corrupt_parse(what, &w))
		return cli_usage_error("corrupt", "unknown kind '%s'", what);
	struct bo_err err = {{0}};
	struct bdev *d;
	int rc = blk_file_open(image, 512, 0, 0, &d, &err);
	if (rc)
		return cli_fail("corrupt", "%s", bo_errstr(&err, rc));
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
