// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_gen.c — `blackout gen`: generated workloads (docs/gen.md), written as workload
 * files, listed, or counted. Parsing and printing only; generation is src/gen/. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/gen.h"
#include "blackout/util.h"
#include "cli/cli.h"

static const char gen_help[] =
    "usage: blackout gen --len N [--out DIR] [--list]\n"
    "       blackout gen --random COUNT [--seed S] [--length L] [--out DIR] [--list]\n"
    "\n"
    "Workloads in the workload language (docs/workloads.md) over a fixed tree (/A, /B,\n"
    "/A/C; /foo and /A/foo of 16 KiB; /bar, /A/bar to create), ACE-style (docs/gen.md):\n"
    "  --len N         every valid sequence of N operations (1..3), each followed by\n"
    "                  fsync, fdatasync, sync or nothing; invalid ones are rejected\n"
    "                  before anything runs and counted by reason\n"
    "  --random COUNT  COUNT valid sequences drawn from --seed S (default 1) of --length L\n"
    "                  operations (default 5, at most 1000); the same seed, the same files\n"
    "  --out DIR       write each as DIR/NAME.wl (names seq<N>-<i>, rand<S>-<i>)\n"
    "  --list          print each workload's name and summary\n"
    "Without --out or --list it counts. The counts line (workloads, rejected by reason)\n"
    "goes to stdout, or to stderr with --list.\n";

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
	if (argc >= 2 && cli_is_help(argv[1])) {
		fputs(gen_help, stdout);
		return 0;
	}
	static const struct option opts[] = {
	    {"len", required_argument, NULL, 'n'},  {"random", required_argument, NULL, 'r'},
	    {"seed", required_argument, NULL, 's'}, {"length", required_argument, NULL, 'L'},
	    {"out", required_argument, NULL, 'o'},  {"list", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
	};
	uint64_t len = 0, count = 0, seed = 1, rlen = 5;
	bool random = false;
	struct out o = {0};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case 'n':
			rc = cli_num("gen", "--len", optarg, 0, 1, GEN_MAX_EXHAUSTIVE, &len);
			break;
		case 'r':
			random = true;
			rc = cli_num("gen", "--random", optarg, 0, 1, 1000000, &count);
			break;
		case 's': rc = cli_num("gen", "--seed", optarg, 0, 0, UINT64_MAX, &seed); break;
		case 'L':
			rc = cli_num("gen", "--length", optarg, 0, 1, GEN_MAX_RANDOM_LEN, &rlen);
			break;
		case 'o': o.dir = optarg; break;
		case 'l': o.list = true; break;
		case 'h': fputs(gen_help, stdout); return 0;
		case ':': return cli_usage_error("gen", "%s needs a value", argv[optind - 1]);
		default: return cli_usage_error("gen", "unknown option '%s'", argv[optind - 1]);
		}
		if (rc)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error("gen", "unexpected argument '%s'", argv[optind]);
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
