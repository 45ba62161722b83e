// SPDX-License-Identifier: GPL-2.0-or-later
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
#include "cli/cli_opts.h"

enum { OPT_LBA = CLI_LONG, OPT_COUNT, OPT_MAX, OPT_FAIL_AFTER };
static const struct cli_opt hole_opts[] = {
    {OPT_LBA, "lba", "N", "the first sector written (default 3)", 0},
    {OPT_COUNT, "count", "N", "sectors written (default 1)", 0},
    {OPT_MAX, "max", "N", "at most N outcomes (default 1000000)", 0},
    {OPT_FAIL_AFTER, "fail-after", NULL,
     "also read each outcome with each member of the RAID\nfailed in turn (a disk lost after the "
     "restart)",
     0},
    {0}};

static const struct cli_spec hole_spec = {
    "raid hole",
    "the RAID write hole over every power-cut outcome",
    "[OPTIONS] SPEC",
    "Fills the stack with seeded data, flushes, then cuts the power during a write\n"
    "of COUNT sectors at LBA in every way the stack allows, restarts, and counts the\n"
    "outcomes where a sector that was NOT being written reads back wrong (the write\n"
    "hole), where a written sector is neither old nor new, where the write is partly\n"
    "old, partly new, and where the array refused to be read (-EIO: the damage was\n"
    "detected). Keep the stack small:\n"
    "\n"
    "  'raid5(chunk=4k,missing=1) > [mem(size=64k)] x4'\n",
    hole_opts,
    1,
    1,
    "0 done (the counts say what was found), 1 a stack that cannot be built or a\n"
    "failed run, 2 usage error or a spec that does not parse.",
    "$ blackout raid hole 'raid5(chunk=4k,missing=1) > [mem(size=64k)] x4'\n",
    NULL};

static const struct cli_spec layout_spec = {
    "raid layout",
    "md's chunk placement: which member holds each chunk and P/Q",
    "LEVEL MEMBERS [LAYOUT] [STRIPES]",
    "Prints which member holds each data chunk and P/Q of the first STRIPES\n"
    "(default MEMBERS) stripes: LEVEL 0, 4, 5 or 6; LAYOUT left-symmetric\n"
    "(default), left-asymmetric, right-symmetric, right-asymmetric, as md defines\n"
    "them.\n",
    NULL,
    2,
    4,
    "0 done, 2 usage error (a level, member count or layout md does not have).",
    "$ blackout raid layout 5 4 left-symmetric\n",
    NULL};

static const struct cli_spec *const raid_actions[] = {&hole_spec, &layout_spec, NULL};
static const struct cli_spec raid_spec = {
    "raid",
    "the RAID write hole over every power-cut outcome; md's chunk layout",
    NULL,
    NULL,
    NULL,
    0,
    0,
    "0 done, 1 a stack that cannot be built or a failed run, 2 usage error.",
    "$ blackout raid hole 'raid5(chunk=4k,missing=1) > [mem(size=64k)] x4'\n"
    "$ blackout raid layout 6 5\n",
    raid_actions};

static int hole(int argc, char **argv)
{
	uint64_t lba = 3, count = 1, max = 1000000;
	bool fail_after = false;
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &hole_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		if (k == OPT_FAIL_AFTER) {
			fail_after = true;
			continue;
		}
		uint64_t *dst = k == OPT_LBA ? &lba : k == OPT_COUNT ? &count : &max;
		/* --count sizes a 32-bit request */
		uint64_t top = dst == &count ? UINT32_MAX : UINT64_MAX;
		char l[32];
		if (cli_num("raid", cli_opt_label(&hole_spec, k, l, sizeof(l)), p.arg, 0,
		            dst == &count, top, dst))
			return CLI_EXIT_USAGE;
	}
	if (k < 0)
		return p.status;
	const char *spec = p.args[0];
	struct dev_spec *ds;
	struct bo_err err = {{0}};
	int rc = dev_spec_parse(spec, &ds, &err);
	if (rc) {
		fprintf(stderr, "blackout raid: %s\nTry 'blackout raid --help'.\n",
		        bo_errstr(&err, rc));
		return CLI_EXIT_USAGE;
	}
	struct bdev *d;
	rc = dev_stack_open(ds, NULL, &d, &err);
	dev_spec_free(ds);
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
	struct cli_parse cp;
	int opt;
	cli_parse_start(&cp, &layout_spec, argc, argv);
	while ((opt = cli_next(&cp)) > 0)
		;
	if (opt < 0)
		return cp.status;
	argc = cp.nargs + 2;
	argv = cp.args - 2;
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
		return cli_usage_error("raid", "no such geometry: RAID%llu over %llu members",
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
	int rc = 0;
	const struct cli_spec *act = cli_action(&raid_spec, argc, argv, &rc);
	if (!act)
		return rc;
	return act == &hole_spec ? hole(argc - 1, argv + 1) : layout(argc - 1, argv + 1);
}
