/* cmd_raid.c — `blackout raid hole SPEC` (the write-hole experiment over every cut
 * outcome) and `blackout raid layout` (md's chunk placement). Parsing and printing
 * only; the work is raid_hole_probe and raid_map_chunk. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "cli/cli.h"

static void help(FILE *out)
{
	fprintf(out,
	        "usage: blackout raid hole SPEC [--lba N] [--count N] [--fail-after] [--max N]\n"
	        "       blackout raid layout LEVEL MEMBERS [LAYOUT] [STRIPES]\n\n"
	        "  hole    fill the stack with seeded data, flush, then cut the power during a\n"
	        "          write of COUNT sectors (default 1) at LBA (default 3) in every way\n"
	        "          the stack allows (at most MAX outcomes, default 1000000), restart,\n"
	        "          and count the outcomes where a sector that was NOT being written\n"
	        "          reads back wrong (the write hole), where a written sector is\n"
	        "          neither old nor new, where the write is partly old, partly new, and\n"
	        "          where the array refused to be read (-EIO: the damage was detected).\n"
	        "          --fail-after also reads each outcome with each member of the RAID\n"
	        "          failed in turn (a disk lost after the restart). Keep it small:\n"
	        "          'raid5(chunk=4k,missing=1) > [mem(size=64k)] x4'\n"
	        "  layout  print which member holds each data chunk and P/Q of the first\n"
	        "          STRIPES (default MEMBERS) stripes: LEVEL 0, 4, 5 or 6; LAYOUT\n"
	        "          left-symmetric (default), left-asymmetric, right-symmetric,\n"
	        "          right-asymmetric, as md defines them\n\n"
	        "Exit status: 0 on success, 1 on a bad spec or a failed run, 2 on usage.\n");
}

static int hole(int argc, char **argv)
{
	const char *spec = NULL;
	uint64_t lba = 3, count = 1, max = 1000000;
	bool fail_after = false;
	for (int i = 2; i < argc; i++) {
		uint64_t *dst = !strcmp(argv[i], "--lba")     ? &lba
		                : !strcmp(argv[i], "--count") ? &count
		                : !strcmp(argv[i], "--max")   ? &max
		                                              : NULL;
		if (dst) {
			/* --count sizes a 32-bit request */
			uint64_t top = dst == &count ? UINT32_MAX : UINT64_MAX;
			if (cli_num("raid", argv[i], i + 1 < argc ? argv[i + 1] : NULL, 0,
			            dst == &count, top, dst))
				return 2;
			i++;
		} else if (!strcmp(argv[i], "--fail-after")) {
			fail_after = true;
		} else if (argv[i][0] == '-' || spec) {
			return cli_usage_error("raid", "unexpected argument '%s'", argv[i]);
		} else {
			spec = argv[i];
		}
	}
	if (!spec)
		return cli_usage_error("raid", "hole needs a stack spec");
	struct bo_err err = {{0}};
	struct bdev *d;
	int rc = dev_stack_open_text(spec, NULL, &d, &err);
	if (rc)
		return cli_fail("raid", "%s", bo_errstr(&err, rc));
	struct raid_hole_result r;
	rc = raid_hole_probe(d, lba, (uint32_t)count, fail_after, max, &r, &err);
	blk_close(d);
	if (rc)
		return cli_fail("raid", "%s", bo_errstr(&err, rc));
	printf("in-flight write:            %llu sector(s) at %llu\n", (unsigned long long)count,
	       (unsigned long long)lba);
	printf("outcomes examined:          %llu%s\n", (unsigned long long)r.outcomes,
	       r.complete ? " (every outcome)" : " (stopped at --max)");
	printf("untouched sectors wrong:    %llu outcome(s)%s\n",
	       (unsigned long long)r.untouched_bad, r.untouched_bad ? "  <- the write hole" : "");
	printf("written sectors torn:       %llu outcome(s)\n",
	       (unsigned long long)r.inflight_torn);
	printf("write partly old/new:       %llu outcome(s)\n",
	       (unsigned long long)r.inflight_mixed);
	printf("array refused reads (-EIO): %llu outcome(s)\n", (unsigned long long)r.unreadable);
	return 0;
}

static int layout(int argc, char **argv)
{
	static const char *const names[] = {"left-symmetric", "left-asymmetric", "right-symmetric",
	                                    "right-asymmetric"};
	static const enum raid_layout vals[] = {RAID_LEFT_SYMMETRIC, RAID_LEFT_ASYMMETRIC,
	                                        RAID_RIGHT_SYMMETRIC, RAID_RIGHT_ASYMMETRIC};
	uint64_t level, n, stripes = 0;
	if (argc < 4 || argc > 6)
		return cli_usage_error("raid", "layout needs LEVEL and MEMBERS");
	if (cli_num("raid", "LEVEL", argv[2], 0, 0, 6, &level) ||
	    cli_num("raid", "MEMBERS", argv[3], 0, 1, RAID_MAX_MEMBERS, &n))
		return 2;
	enum raid_layout lay = RAID_LEFT_SYMMETRIC;
	if (argc >= 5) {
		bool found = false;
		for (int i = 0; i < 4; i++)
			if (!strcmp(argv[4], names[i])) {
				lay = vals[i];
				found = true;
			}
		if (!found)
			return cli_usage_error("raid", "unknown layout '%s'", argv[4]);
	}
	if (argc == 6 && cli_num("raid", "STRIPES", argv[5], 0, 0, 1000, &stripes))
		return 2;
	if (!stripes)
		stripes = n;
	unsigned mem;
	uint64_t st;
	if (level == 1 || raid_map_chunk((unsigned)level, lay, (unsigned)n, 0, &mem, &st))
		return cli_fail("raid", "no such geometry: RAID%llu over %llu members",
		                (unsigned long long)level, (unsigned long long)n);
	unsigned k = level == 0 ? (unsigned)n : level == 6 ? (unsigned)n - 2 : (unsigned)n - 1;
	for (uint64_t s = 0; s < stripes; s++) {
		char cell[RAID_MAX_MEMBERS][24];
		int p, q;
		raid_parity_members((unsigned)level, lay, (unsigned)n, s, &p, &q);
		for (unsigned i = 0; i < n; i++)
			snprintf(cell[i], sizeof(cell[i]), "%s",
			         (int)i == p   ? "P"
			         : (int)i == q ? "Q"
			                       : "?");
		for (unsigned j = 0; j < k; j++) {
			raid_map_chunk((unsigned)level, lay, (unsigned)n, s * k + j, &mem, &st);
			snprintf(cell[mem], sizeof(cell[mem]), "%llu",
			         (unsigned long long)(s * k + j));
		}
		printf("stripe %-4llu", (unsigned long long)s);
		for (unsigned i = 0; i < n; i++)
			printf(" %5s", cell[i]);
		printf("\n");
	}
	return 0;
}

int cmd_raid(int argc, char **argv)
{
	if (argc < 2 || cli_is_help(argv[1])) {
		help(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "hole"))
		return hole(argc, argv);
	if (!strcmp(argv[1], "layout"))
		return layout(argc, argv);
	return cli_usage_error("raid", "unknown subcommand '%s'", argv[1]);
}
