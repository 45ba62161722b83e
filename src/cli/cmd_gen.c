// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_gen.c — `blackout gen`: generated workloads (docs/gen.md), written as workload
 * files, listed, counted, or run as a campaign across filesystems and kernels (sharded,
 * merged). Parsing and printing only; generation is src/gen/, campaigns
 * src/report/campaign.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blackout/campaign.h"
#include "blackout/gen.h"
#include "blackout/util.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

/* --len, or --random and what goes with it; a campaign's options; --merge; --list */
enum { G_EXH = 1, G_RAND = 2, G_CAMP = 4, G_MERGE = 8, G_LIST = 16 };
enum {
	OPT_LEN = CLI_LONG,
	OPT_RANDOM,
	OPT_SEED,
	OPT_LENGTH,
	OPT_OUT,
	OPT_LIST,
	OPT_FS,
	OPT_KERNEL,
	OPT_STACK,
	OPT_MAX_STATES,
	OPT_PRUNE,
	OPT_RESUME,
	OPT_JOBS,
	OPT_SHARD,
	OPT_MERGE
};
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
    {OPT_OUT, "out", "DIR",
     "write each as DIR/NAME.wl (names seq<N>-<i>, rand<S>-<i>); with\n"
     "--fs or --merge, the campaign's directory (units.txt,\n"
     "report.txt, report.json, workloads/, runs/)",
     0, 0},
    {OPT_LIST, "list", NULL, "print each workload's name and summary", G_LIST, 0},
    {OPT_FS, "fs", "FS[,FS...]",
     "run every workload as a campaign on these: model (blackout's\n"
     "ext3, in-process), ext4, ext3, xfs, btrfs (the real kernel\n"
     "in guests); needs --out",
     G_CAMP, G_LIST | G_MERGE},
    {OPT_KERNEL, "kernel", "K[,K...]",
     "guest kernel series of the real-kernel units: 6.1, 6.12\n(default 6.1)", G_CAMP,
     G_LIST | G_MERGE},
    {OPT_STACK, "stack", "SPEC", "device stack of every unit (default: each filesystem's own)",
     G_CAMP, G_LIST | G_MERGE},
    {OPT_MAX_STATES, "max-states", "N", "budget of crash states per unit (default 100)", G_CAMP,
     G_LIST | G_MERGE},
    {OPT_PRUNE, "prune", NULL,
     "judge once the states of a real-kernel unit that agree after\n"
     "journal replay (ext3, ext4; vmtest --prune); the report\n"
     "counts the ones left out",
     G_CAMP, G_LIST | G_MERGE},
    {OPT_RESUME, "resume", NULL,
     "take each unit's result an earlier run of the same campaign\n"
     "left in --out DIR (killed, or a shard re-run), and run only\n"
     "the units without one",
     G_CAMP, G_LIST | G_MERGE},
    {OPT_JOBS, "jobs", "N",
     "units run at once (each a recording boot, then one guest\njudging its states)", G_CAMP,
     G_LIST | G_MERGE},
    {OPT_SHARD, "shard", "I/N",
     "run only the units whose index is I modulo N (0 <= I < N),\n"
     "written as a part for --merge",
     G_CAMP, G_LIST | G_MERGE},
    {OPT_MERGE, "merge", NULL,
     "merge the shards' directories (the operands) into --out DIR:\n"
     "the same files, byte for byte, as the unsharded run",
     G_MERGE, G_EXH | G_RAND | G_CAMP | G_LIST},
    {0}};

static const struct cli_spec gen_spec = {
    "gen",
    "generate workloads: ACE-style bounded sequences, or seeded random ones",
    "--len N [--out DIR] [--list]\n--random COUNT [--seed S] [--length L] [--out DIR] [--list]\n"
    "--fs FS[,FS...] [--kernel K[,K...]] (--len N | --random COUNT ...) [--stack SPEC]\n"
    "    [--max-states N] [--prune] [--resume] [--jobs N] [--shard I/N] --out DIR\n"
    "--merge --out DIR SHARD-DIR...",
    "Workloads in the workload language (docs/workloads.md) over a fixed tree (/A, /B,\n"
    "/A/C; /foo and /A/foo of 16 KiB; /bar, /A/bar to create), ACE-style (docs/gen.md).\n"
    "\n"
    "Without --out or --list it counts. The counts line (workloads, rejected by reason)\n"
    "goes to stdout, or to stderr with --list.\n"
    "\n"
    "With --fs it runs a campaign: every workload on every filesystem and kernel,\n"
    "blackout's ext3 (model) through the explorer and the others through the real\n"
    "kernel's pipeline (vmtest), and prints the report of distinct failures, each\n"
    "deduplicated by filesystem, kernel, invariant and the workload's operations, with\n"
    "its first workload, a failing state and the line that rebuilds it.\n",
    gen_opts,
    0,
    -1,
    "0: done, nothing failing; 1: a unit could not be run (the report lists it), or\n"
    "nothing was done; 2: usage; 3: the campaign found failing states.\n",
    "$ blackout gen --len 1\n  counts seq-1's workloads and the rejected sequences\n"
    "$ blackout gen --len 2 --out seq2\n  writes seq-2's workloads as files\n"
    "$ blackout gen --random 10 --seed 7 --length 8 --list\n"
    "$ blackout gen --fs model --len 1 --out c1 \\\n"
    "    --stack 'cache(size=64k,flush=ignore) > disk > mem(size=16M)'\n"
    "  seq-1 on blackout's ext3 under a drive that ignores flushes\n"
    "$ blackout gen --fs model --len 1 --shard 0/3 --out s0\n"
    "  one shard of three (then --merge --out all s0 s1 s2)\n",
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

static int parse_shard(const char *v, unsigned *i, unsigned *n)
{
	char *end;
	if (!v || !*v || *v == '-')
		return -EINVAL;
	unsigned long a = strtoul(v, &end, 10);
	if (end == v || *end != '/' || !end[1] || end[1] == '-')
		return -EINVAL;
	const char *q = end + 1;
	unsigned long b = strtoul(q, &end, 10);
	if (end == q || *end || b == 0 || b > 100000 || a >= b)
		return -EINVAL;
	*i = (unsigned)a;
	*n = (unsigned)b;
	return 0;
}

static void progress(void *ctx, const struct campaign_unit *u, size_t done, size_t total)
{
	(void)ctx;
	/* one write a line: --jobs workers share stderr, and a line printed in pieces
	 * interleaves with another worker's */
	char line[512];
	int n = snprintf(line, sizeof line, "gen: [%zu/%zu] %s on %s %s: %s", done, total,
	                 u->workload, u->fs, u->kernel, campaign_outcome_name(u->outcome));
	if (n >= 0 && (size_t)n < sizeof line && u->outcome == CAMPAIGN_RAN)
		n += snprintf(line + n, sizeof line - (size_t)n, ", %llu states, %llu failing%s",
		              (unsigned long long)u->judged, (unsigned long long)u->failing,
		              u->resumed ? " (an earlier run's result, --resume)" : "");
	if (n >= 0 && (size_t)n < sizeof line - 1)
		fprintf(stderr, "%s\n", line);
}

/* The report on stdout; the exit status from what the campaign found. */
static int finish(const struct campaign_part *p)
{
	campaign_report_text(p, stdout);
	bool errors = false, failing = false;
	for (size_t i = 0; i < p->n; i++) {
		errors |= p->u[i].outcome == CAMPAIGN_ERROR;
		failing |= p->u[i].failing > 0;
	}
	return errors ? CLI_EXIT_FAILED : failing ? CLI_EXIT_FOUND : CLI_EXIT_OK;
}

static int campaign(struct campaign_opts *c)
{
	struct bo_err err = {{0}};
	int rc = campaign_check(c, &err);
	if (rc)
		return cli_usage_error("gen", "%s", err.msg);
	c->progress = progress;
	struct campaign_part *p = NULL;
	if ((rc = campaign_run(c, &p, &err)))
		return cli_fail("gen", "%s", bo_errstr(&err, rc));
	rc = finish(p);
	campaign_part_free(p);
	return rc;
}

static int merge(char **dirs, int n, const char *out)
{
	if (!out)
		return cli_usage_error("gen", "--merge needs --out DIR");
	if (n < 1)
		return cli_usage_error("gen", "--merge needs the shards' directories");
	struct bo_err err = {{0}};
	struct campaign_part *p = NULL;
	int rc = campaign_merge_dirs((const char *const *)dirs, (size_t)n, out, &p, &err);
	if (rc)
		return cli_fail("gen", "%s", bo_errstr(&err, rc));
	rc = finish(p);
	campaign_part_free(p);
	return rc;
}

int cmd_gen(int argc, char **argv)
{
	uint64_t len = 0, count = 0, seed = 1, rlen = 5, n;
	bool random = false, merging = false;
	struct out o = {0};
	struct campaign_opts c = {0};
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
		case OPT_FS: c.fs = p.arg; break;
		case OPT_KERNEL: c.kernels = p.arg; break;
		case OPT_STACK: c.stack = p.arg; break;
		case OPT_MAX_STATES:
			rc = cli_num("gen", "--max-states", p.arg, 0, 1, 100000000, &c.max_states);
			break;
		case OPT_PRUNE: c.prune = true; break;
		case OPT_RESUME: c.resume = true; break;
		case OPT_JOBS:
			rc = cli_num("gen", "--jobs", p.arg, 0, 1, 64, &n);
			c.jobs = (unsigned)n;
			break;
		case OPT_SHARD:
			if (parse_shard(p.arg, &c.shard, &c.nshards))
				return cli_usage_error(
				    "gen", "--shard: I/N with 0 <= I < N <= 100000, not '%s'",
				    p.arg);
			break;
		case OPT_MERGE: merging = true; break;
		}
		if (rc)
			return rc;
	}
	if (k < 0)
		return p.status;
	if (merging)
		return merge(p.args, p.nargs, o.dir);
	if (p.nargs)
		return cli_usage_error("gen", "unexpected operand '%s' (operands go with --merge)",
		                       p.args[0]);
	if (!len == !random)
		return cli_usage_error("gen", "give one of --len N or --random COUNT");
	if (!c.fs &&
	    (c.kernels || c.stack || c.max_states || c.prune || c.resume || c.jobs || c.nshards))
		return cli_usage_error("gen", "--kernel, --stack, --max-states, --prune, --resume, "
		                              "--jobs and --shard go with --fs (a campaign)");
	if (c.fs) {
		c.len = (unsigned)len;
		c.count = (unsigned)count;
		c.seed = seed;
		c.rlen = (unsigned)rlen;
		c.out = o.dir;
		return campaign(&c);
	}
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
