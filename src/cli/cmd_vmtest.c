// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_vmtest.c — `blackout vmtest`: the real Linux kernel on a modelled device. Without
 * --cuts it records, enumerates and judges many states per boot (cmd_vmtest_explore.c,
 * vm_explore); with --cuts it checks every argument and runs the seeded-cut harness,
 * scripts/vmtest, which only drives qemu and the nbdkit plugin (docs/vmtest.md). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/dev.h"
#include "blackout/vmexplore.h"
#include "cli/cli.h"

static void help(FILE *out)
{
	fprintf(
	    out,
	    "usage: blackout vmtest --stack SPEC --fs ext4|ext3|xfs|btrfs[,MOUNTOPTS]\n"
	    "                       --workload NAME|FILE|create|append|mixed|overwrite\n"
	    "                       [--files N] [--jobs N] [--max-states N] [--seed S]\n"
	    "                       [--shard I/N] [--state ID --keep DIR] [--json FILE]\n"
	    "                       [--log FILE] [--integrity] [--out DIR] [--md-drop K]\n"
	    "       blackout vmtest --cuts N --stack SPEC --fs ext4|ext3|xfs|btrfs[,OPTS]\n"
	    "                       --workload W [--seed S] [--files N] [--attach virtio|nbd]\n"
	    "                       [--out DIR] [--json FILE] [--explore-json FILE]\n\n"
	    "Without --cuts: the real kernel at explorer scale. One boot records the\n"
	    "guest's run (scripts/vmrecord: every request the guest's NBD client sends, with\n"
	    "the workload's marks), or --log FILE gives that recording. The explorer replays\n"
	    "its set-up on the stack and enumerates every crash state of its run with the\n"
	    "same code as blackout explore (cuts, cache subsets, torn sectors, flash and RAID\n"
	    "outcomes; budget, sampling, dedup by what the guest would read, shards), writes\n"
	    "the distinct states to OUT/states (base.img + one delta each), and guests of the\n"
	    "real kernel (--jobs in parallel, many states per boot) mount, read, unmount and\n"
	    "check each; the one judge classifies. Prints the explorer's summary and writes\n"
	    "its JSON (fs \"linux-FS,OPTS\").\n\n"
	    "  --stack SPEC     device stack (docs/stack-spec.md), e.g.\n"
	    "                   'cache(size=1M,flush=honor) > mem(size=64M)'\n"
	    "  --fs FS[,OPTS]   ext4, ext3, xfs or btrfs, then mount options: ext4,barrier=0\n"
	    "  --workload W     as below (vmtest's own kinds with --files N steps, default 24)\n"
	    "  --jobs N         guests in parallel (default: the number of cores)\n"
	    "  --max-states N   the explorer's budget (default 500: guests judge a few\n"
	    "                   states a second)\n"
	    "  --seed S         seed of the sampling (default 0)\n"
	    "  --shard I/N      judge only shard I of N; blackout explore --merge combines\n"
	    "  --state ID       judge only that state; --keep DIR writes it as DIR/ID.img\n"
	    "  --json FILE      the explorer's JSON (also OUT/result.json); '-': stdout\n"
	    "  --log FILE       enumerate this recording instead of booting to record one\n"
	    "  --md L:N:M[:j]   Linux md RAID L over the stack's top concat's N lowers,\n"
	    "                   member M missing (- none), :j lower N md's write journal;\n"
	    "                   the filesystem on /dev/md0 (docs/md.md)\n"
	    "  --md-chunk KIB   md's chunk (default 64)\n"
	    "  --integrity      dm-integrity between the stack and the filesystem: recorded\n"
	    "                   with scripts/vmrecord --integrity, each state opened with\n"
	    "                   integritysetup before the mount (docs/integrity.md); a log\n"
	    "                   is refused when it was recorded the other way\n"
	    "  --out DIR        recording, state store, guest logs (default\n"
	    "                   build/vmtest/<time>-<pid>)\n"
	    "  --md-drop K      a recording of md members: assemble md without member K, one\n"
	    "                   that did not come back after the cut (docs/md.md)\n"
	    "Exit status: 0 when no state broke an invariant, 3 when some did, 1 on failure,\n"
	    "2 on usage.\n\n"
	    "With --cuts N: the seeded-cut harness (scripts/vmtest), the peer of the above.\n"
	    "Boots the Debian cloud kernel under qemu (TCG) on the stack SPEC, served by\n"
	    "build/blackout-nbdkit.so over a Unix socket. The guest makes the filesystem, runs\n"
	    "the workload's set-up (synced bystanders) and its run steps, saying as each step\n"
	    "returns. The host cuts the power at a seeded plugin write count (the write in\n"
	    "flight is the device's to settle), kills qemu with SIGKILL, replugs, and reboots\n"
	    "the guest to mount (journal replay), list every file with the MD5 of each 4 KiB\n"
	    "chunk, and run the filesystem's checker read-only (e2fsck -fn, xfs_repair -n,\n"
	    "btrfs check --readonly). The guest classifies nothing: blackout's one judge\n"
	    "reads those lines and gives each cut the explorer's verdict (durable, stale,\n"
	    "bystander, consistent, atomic; detected or silent; docs/architecture.md).\n\n"
	    "  --stack SPEC     device stack (docs/stack-spec.md), e.g.\n"
	    "                   'cache(size=1M,flush=honor) > mem(size=64M)'\n"
	    "  --fs FS[,OPTS]   ext4, ext3, xfs or btrfs, then mount options: ext4,nobarrier\n"
	    "  --workload W     a crash explorer workload: a built-in (blackout workloads)\n"
	    "                   or a FILE (docs/workloads.md; no fill), or the harness's\n"
	    "                   own: create|append|mixed|overwrite (--files steps)\n"
	    "  --cuts N         number of power cuts (default 10)\n"
	    "  --seed S         seed of cut points and cut outcomes (default 1)\n"
	    "  --files N        length of the harness's own workloads (default 24)\n"
	    "  --attach A       virtio (default) or nbd (the guest kernel's NBD client: FUA)\n"
	    "  --out DIR        keep every log here (default build/vmtest/<time>)\n"
	    "  --json FILE      results: one JSON object per cut (raw facts, then the\n"
	    "                   verdict), then a summary\n"
	    "  --explore-json FILE  the results in the crash explorer's format (cuts as\n"
	    "                   states; blackout explore --merge and matrix --vm read it)\n\n"
	    "The kernel (apt-get download linux-image-cloud-amd64) and the initramfs are\n"
	    "built once and cached in build/vm by scripts/vm-build. Every qemu and nbdkit\n"
	    "runs under timeout and is killed on exit. Needs scripts/install-deps.\n"
	    "Exit status with --cuts: 0 when every cut ran (whatever the verdicts), 1 on\n"
	    "failure, 2 on usage.\n\n"
	    "Plumbing the harness calls (docs/vmtest.md):\n"
	    "  blackout vmtest compile WORKLOAD DIR [--files N]\n"
	    "                   the workload as guest shell + data\n"
	    "  blackout vmtest judge WORKLOAD DIR CUTS [--files N] [--fs FS] ...\n"
	    "                   the one judge on the raw lines the guests left in DIR\n"
	    "  blackout vmtest points SEED SPAN CUTS\n"
	    "                   the seeded cut points: one 'I WRITE SEED' line per cut\n"
	    "  blackout vmtest check-record OPTIONS\n"
	    "                   scripts/vmrecord's options checked (exit 2 naming the fault)\n");
}

int cmd_vmtest(int argc, char **argv)
{
	const char *stack = NULL, *fs = NULL, *workload = NULL;
	if (argc >= 2 && (!strcmp(argv[1], "compile") || !strcmp(argv[1], "judge") ||
	                  !strcmp(argv[1], "check-record") || !strcmp(argv[1], "points")))
		return cmd_vmtest_plumbing(argc, argv);
	bool cuts = false;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			help(stdout);
			return 0;
		}
		cuts |= !strcmp(argv[i], "--cuts");
	}
	if (!cuts)
		return cmd_vmtest_explore(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			help(stdout);
			return 0;
		}
		const char *a = argv[i];
		bool known = !strcmp(a, "--stack") || !strcmp(a, "--fs") ||
		             !strcmp(a, "--workload") || !strcmp(a, "--cuts") ||
		             !strcmp(a, "--seed") || !strcmp(a, "--files") || !strcmp(a, "--out") ||
		             !strcmp(a, "--json") || !strcmp(a, "--explore-json") ||
		             !strcmp(a, "--attach");
		if (!known)
			return cli_usage_error("vmtest", "unknown argument '%s'", a);
		if (i + 1 >= argc)
			return cli_usage_error("vmtest", "%s needs a value", a);
		const char *v = argv[i + 1];
		uint64_t n;
		int rc = 0;
		if (!strcmp(a, "--stack"))
			stack = v;
		else if (!strcmp(a, "--fs"))
			fs = v;
		else if (!strcmp(a, "--workload"))
			workload = v;
		else if (!strcmp(a, "--cuts"))
			rc = cli_num("vmtest", a, v, 0, 1, 1000, &n);
		else if (!strcmp(a, "--files"))
			rc = cli_num("vmtest", a, v, 0, 1, 1000, &n);
		else if (!strcmp(a, "--seed"))
			rc = cli_num("vmtest", a, v, 0, 0, UINT64_MAX, &n);
		else if (!strcmp(a, "--attach") && strcmp(v, "virtio") && strcmp(v, "nbd"))
			return cli_usage_error("vmtest", "--attach: virtio or nbd, not '%s'", v);
		if (rc)
			return rc;
		i++;
	}
	/* checked here once: scripts/vmtest only starts and stops processes */
	struct vm_explore_opts o = {.cfg = {.stack = stack, .fs = fs, .workload = workload}};
	struct bo_err err = {{0}};
	if (vm_explore_check(&o, &err))
		return cli_usage_error("vmtest", "%s", err.msg);

	struct dev_spec *spec = NULL;
	int rc = dev_spec_parse(stack, &spec, &err);
	if (rc < 0)
		return cli_fail("vmtest", "%s", bo_errstr(&err, rc));
	dev_spec_free(spec);

	char script[PATH_MAX + 32];
	if (vm_scripts_dir(script, sizeof script - 8) < 0)
		return cli_fail("vmtest", "cannot find scripts/vmtest (not in the source tree nor "
		                          "installed; set BLACKOUT_SRC)");
	strcat(script, "/vmtest");
	char **args = calloc((size_t)argc + 2, sizeof *args);
	if (!args)
		return cli_fail("vmtest", "out of memory");
	args[0] = "bash";
	args[1] = script;
	for (int i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	fflush(stdout);
	execv("/bin/bash", args);
	rc = cli_fail("vmtest", "cannot run %s: %s", script, strerror(errno));
	free(args);
	return rc;
}
