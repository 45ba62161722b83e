// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_gen.c — `blackout gen`: generated workloads (docs/gen.md), written as workload
 * files, listed, or counted. Parsing and printing only; generation is src/gen/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/gen.h"
#include "blackout/util.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

enum { G_EXH = 1, G_RAND = 2 }; /* --len, or --random and what goes with it */
enum { OPT_LEN = CLI_LONG, OPT_RANDOM, OPT_SEED, OPT_LENGTH, OPT_OUT, OPT_LIST };
static const struct cli_opt gen_opts[] = {
    {OPT_LEN, "len", "N",
     "every valid sequence of N operations (1..3), each followed by\n"
     "fsync, fdatasync, sync or nothing; invalid ones are rejected\n"
     "before anything runs and counted by reason",
     G_EXH, G_RAND},
    {OPT_RANDOM, "random", "COUNT",
     "COUNT valid sequences drawn from --seed S of --length L\n"
     "operations; the same seed, the same files",
     G_RAND, G_EXH},
    {OPT_SEED, "seed", "S", "seed of --random (default 1)", G_RAND, G_EXH},
    {OPT_LENGTH, "length", "L", "operations per --random sequence (default 5, at most 1000)",
     G_RAND, G_EXH},
    {OPT_OUT, "out", "DIR", "write each as DIR/NAME.wl (names seq<N>-<i>, rand<S>-<i>)", 0, 0},
    {OPT_LIST, "list", NULL, "print each workload's name and summary", 0, 0},
    {0}};

static const struct cli_spec gen_spec = {
    "gen",
    "generate workloads: ACE-style bounded sequences, or seeded random ones",
    "--len N [--out DIR] [--list]\n--random COUNT [--seed S] [--length L] [--out DIR] [--list]",
    "Workloads in the workload language (docs/workloads.md) over a fixed tree (/A, /B,\n"
    "/A/C; /foo and /A/foo of 16 KiB; /bar, /A/bar to create), ACE-style (docs/gen.md).\n"
    "\n"
    "Without --out or --list it counts. The counts line (workloads, rejected by reason)\n"
    "goes to stdout, or to stderr with --list.\n",
    gen_opts,
    0,
    0,
    NULL,
    "$ blackout gen --len 1\n  counts seq-1's workloads and the rejected sequences\n"
    "$ blackout gen --len 2 --out seq2\n  writes seq-2's workloads as files\n"
    "$ blackout gen --random 10 --seed 7 --length 8 --list\n",
    NULL};

struct out {
	const char *dir;
	bool list;
};

static int emit(void *ctx, const char *name, const char *text)
{
	const struct out *o = ctx;
	if (o->list) {
		const char *s = strstr(text, "\nsummary ");
		const char *e = s ? strchr(s + 1, '\n') : NULL;
		printf("%-16s %.*s\n", name, s && e ? (int)(e - s - 9) : 0, s ? s + 9 : "");
	}
	if (!o->dir)
		return 0;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.wl", o->dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

int cmd_gen(int argc, char **argv)
{
	uint64_t len = 0, count = 0, seed = 1, rlen = 5;
	bool random = false;
	struct out o = {0};
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &gen_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		int rc = 0;
		switch (k) {
		case OPT_LEN:
			rc = cli_num("gen", "--len", p.arg, 0, 1, GEN_MAX_EXHAUSTIVE, &len);
			break;
		case OPT_RANDOM:
			random = true;
			rc = cli_num("gen", "--random", p.arg, 0, 1, 1000000, &count);
			break;
		case OPT_SEED: rc = cli_num("gen", "--seed", p.arg, 0, 0, UINT64_MAX, &seed); break;
		case OPT_LENGTH:
			rc = cli_num("gen", "--length", p.arg, 0, 1, GEN_MAX_RANDOM_LEN, &rlen);
			break;
		case OPT_OUT: o.dir = p.arg; break;
		case OPT_LIST: o.list = true; break;
		}
		if (rc)
			return rc;
	}
	if (k < 0)
		return p.status;
	if (!len == !random)
		return cli_usage_error("gen", "give one of --len N or --random COUNT");
	if (o.dir && mkdir(o.dir, 0755) && errno != EEXIST)
		return cli_fail("gen", "cannot create %s: %s", o.dir, strerror(errno));
	struct gen_stats st;
	struct bo_err err = {{0}};
	int rc = random
	             ? gen_random(seed, (unsigned)count, (unsigned)rlen,
	                          o.dir || o.list ? emit : NULL, &o, &st, &err)
	             : gen_exhaustive((unsigned)len, o.dir || o.list ? emit : NULL, &o, &st, &err);
	if (rc)
		return cli_fail("gen", "%s", err.msg[0] ? err.msg : strerror(-rc));
	FILE *f = o.list ? stderr : stdout;
	if (random)
		fprintf(f, "random, seed %llu, %llu operations each: ", (unsigned long long)seed,
		        (unsigned long long)rlen);
	else
		fprintf(f, "seq-%llu: ", (unsigned long long)len);
	fprintf(f, "%llu workloads, %llu rejected", (unsigned long long)st.workloads,
	        (unsigned long long)st.rejected);
	const char *sep = " (";
	for (int i = 0; i < GEN_REJ_N; i++)
		if (st.reason[i]) {
			fprintf(f, "%s%s %llu", sep, gen_reject_name(i),
			        (unsigned long long)st.reason[i]);
			sep = ", ";
		}
	fprintf(f, "%s; %llu step choices per position (%llu operations with operands)\n",
	        *sep == ',' ? ")" : "", (unsigned long long)st.choices,
	        (unsigned long long)st.templates);
	return 0;
}
