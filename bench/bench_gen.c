// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_gen.c — a campaign's rate on the real kernel: workloads per hour and crash states
 * judged per second for seq-1 on ext4 (kernel 6.1) with one guest and with two
 * (`blackout gen --jobs 1` and `--jobs 2`: units at once, one guest each; one run), beside
 * CrashMonkey's published seq-1 rate (328 workloads in about 12 minutes on one machine)
 * as a ratio. A subset of seq-1 by default (--shard 0/25: 7 of the 175 workloads; the
 * printed lines say which); BENCH_GEN_SHARDS=1 runs all of it. Skips (exit 0) without
 * qemu or the guest cache. Never fails on speed. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/util.h"

#include "bench_goal.h"

#define MAX_STATES 20
/* CrashMonkey (OSDI '18), seq-1: 328 workloads in about 12 minutes on one machine */
#define PEER_PER_HOUR (328.0 * 60.0 / 12.0)

static bool have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

int main(void)
{
	const char *blackout = getenv("BLACKOUT") ? getenv("BLACKOUT") : "build/blackout";
	const char *env = getenv("BENCH_GEN_SHARDS");
	unsigned shards = env && atoi(env) > 0 ? (unsigned)atoi(env) : 25;
	char bin[1024], build[1024], kernel[1100], plugin[1100];
	snprintf(bin, sizeof bin, "%s", blackout);
	snprintf(build, sizeof build, "%s", dirname(bin));
	snprintf(kernel, sizeof kernel, "%s/vm/vmlinuz", build);
	snprintf(plugin, sizeof plugin, "%s/blackout-nbdkit.so", build);
	const char *missing = !have("qemu-system-x86_64") ? "qemu-system-x86_64 not installed"
	                      : !have("nbdkit")           ? "nbdkit not installed"
	                      : access(kernel, R_OK)      ? "no guest kernel (scripts/vm-build)"
	                      : access(plugin, R_OK)      ? "no nbdkit plugin (make)"
	                                                  : NULL;
	if (missing) {
		printf("skipped: %s\n", missing);
		return 0;
	}
	char dir[] = "/tmp/bench-gen-XXXXXX";
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench_gen: cannot make a directory in /tmp\n");
		return 1;
	}
	double wph[2] = {0, 0};
	bool all_ok = true;
	for (unsigned jobs = 1; jobs <= 2; jobs++) {
		char cmd[4096], path[1200];
		snprintf(cmd, sizeof cmd,
		         "%s gen --fs ext4 --kernel 6.1 --len 1 --shard 0/%u --max-states %d "
		         "--jobs %u --out %s/j%u >%s/j%u.txt 2>%s/j%u.err",
		         blackout, shards, MAX_STATES, jobs, dir, jobs, dir, jobs, dir, jobs);
		double t0 = bo_now();
		int st = system(cmd);
		double secs = bo_now() - t0;
		int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		snprintf(path, sizeof path, "%s/j%u/report.txt", dir, jobs);
		FILE *f = fopen(path, "r");
		unsigned long long units = 0, ran = 0, unsup = 0, errors = 0, judged = 0;
		char line[512] = "";
		while (f && fgets(line, sizeof line, f))
			if (sscanf(line,
			           "units: %llu; ran %llu, not supported by the model %llu, errors "
			           "%llu; %llu states judged",
			           &units, &ran, &unsup, &errors, &judged) == 5)
				break;
		if (f)
			fclose(f);
		if ((rc != 0 && rc != 3) || !units) {
			printf("--jobs %u: the campaign failed (exit %d; see %s/j%u.err)\n", jobs,
			       rc, dir, jobs);
			all_ok = false;
			continue;
		}
		wph[jobs - 1] = (double)ran / secs * 3600.0;
		printf("seq-1 on ext4 (6.1), %s of the 175 workloads (--shard 0/%u), at most %d "
		       "states "
		       "each, --jobs %u: %llu workloads (%llu ran, %llu errors), %llu states "
		       "judged in "
		       "%.1f s: %.0f workloads/hour, %.2f states/s\n",
		       shards == 1 ? "all" : "a subset", shards, MAX_STATES, jobs, units, ran,
		       errors, judged, secs, wph[jobs - 1], secs > 0 ? (double)judged / secs : 0);
		printf(
		    "ratio: %.2fx CrashMonkey's published seq-1 rate (328 workloads in ~12 min on "
		    "one machine: %.0f workloads/hour)\n",
		    wph[jobs - 1] / PEER_PER_HOUR, PEER_PER_HOUR);
	}
	if (wph[0] > 0 && wph[1] > 0)
		printf("ratio: two guests run %.2fx the workloads/hour of one\n", wph[1] / wph[0]);
	bench_goal("seq-1 workloads/hour on ext4, two guests (CrashMonkey's rate)", wph[1], true,
	           PEER_PER_HOUR, "/h");
	if (all_ok) {
		char cmd[1100];
		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		(void)!system(cmd);
	}
	return 0;
}
