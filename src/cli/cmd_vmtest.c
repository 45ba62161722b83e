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
#include "cli/cli_opts.h"

/* Options of one mode only: --cuts and its two exclude the explorer's, and back. */
enum { G_CUTS = 1, G_EXPL = 2 };

/* The table parses; what it accepted is handed on as "--name value" words, the form
 * cmd_vmtest_explore, the plumbing and scripts/vmtest read. */
static const struct cli_opt vmtest_opts[] = {
    {CLI_LONG + 17, "stack", "SPEC",
     "device stack (docs/stack-spec.md), e.g. 'cache(size=1M,flush=honor) > mem(size=64M)'", 0, 0},
    {CLI_LONG + 18, "fs", "FS[,OPTS]",
     "ext4, ext3, xfs or btrfs, then mount options: ext4,barrier=0", 0, 0},
    {CLI_LONG + 19, "workload", "W",
     "a crash explorer workload: a built-in (blackout workloads) or a FILE "
     "(docs/workloads.md; no fill), or vmtest's own: create|append|mixed|overwrite "
     "(--files steps)",
     0, 0},
    {CLI_LONG + 0, "files", "N", "length of vmtest's own workloads (default 24)", 0, 0},
    {CLI_LONG + 1, "seed", "S",
     "seed of the sampling (default 0); with --cuts: of cut points and outcomes (default 1)", 0, 0},
    {CLI_LONG + 2, "out", "DIR",
     "recording, state store, guest logs (default build/vmtest/<time>-<pid>)", 0, 0},
    {CLI_LONG + 3, "json", "FILE",
     "the explorer's JSON (also OUT/result.json; '-': stdout); with --cuts: one JSON "
     "object per cut, then a summary",
     0, 0},
    {CLI_LONG + 4, "jobs", "N", "guests in parallel (default: the number of cores)", G_EXPL,
     G_CUTS},
    {CLI_LONG + 5, "max-states", "N",
     "the explorer's budget (default 500: guests judge a few states a second)", G_EXPL, G_CUTS},
    {CLI_LONG + 6, "shard", "I/N", "judge only shard I of N; blackout explore --merge combines",
     G_EXPL, G_CUTS},
    {CLI_LONG + 7, "state", "ID", "judge only that state (with --keep)", G_EXPL, G_CUTS},
    {CLI_LONG + 8, "keep", "DIR", "with --state: write it as DIR/ID.img", G_EXPL, G_CUTS},
    {CLI_LONG + 9, "log", "FILE", "enumerate this recording instead of booting to record one",
     G_EXPL, G_CUTS},
    {CLI_LONG + 10, "md", "L:N:M[:j]",
     "Linux md RAID L over the stack's top concat's N lowers, member M missing (- none), "
     ":j lower N md's write journal; the filesystem on /dev/md0 (docs/md.md)",
     G_EXPL, G_CUTS},
    {CLI_LONG + 11, "md-chunk", "KIB", "md's chunk (default 64)", G_EXPL, G_CUTS},
    {CLI_LONG + 12, "integrity", NULL,
     "dm-integrity between the stack and the filesystem: recorded with scripts/vmrecord "
     "--integrity, each state opened with integritysetup before the mount "
     "(docs/integrity.md); a log is refused when it was recorded the other way",
     G_EXPL, G_CUTS},
    {CLI_LONG + 13, "md-drop", "K",
     "a recording of md members: assemble md without member K, one that did not come back "
     "after the cut (docs/md.md)",
     G_EXPL, G_CUTS},
    {CLI_LONG + 20, "kernel", "SERIES",
     "the guest kernel series: 6.1 (default) or 6.12, each cached apart by scripts/vm-build "
     "--kernel (build/vm, build/vm-6.12; docs/kernels.md); its release is recorded in the "
     "result",
     0, 0},
    {CLI_LONG + 22, "prune", NULL,
     "judge once the states whose images agree after journal replay (ext3/ext4 with a "
     "journal blackout's jbd replays as Linux does; docs/explore.md, Pruning)",
     G_EXPL, G_CUTS},
    {CLI_LONG + 23, "prune-check", "N",
     "with --prune: judge 1 in N pruned states anyway and compare each outcome with its "
     "representative's (1: every one)",
     G_EXPL, G_CUTS},
    {CLI_LONG + 14, "cuts", "N", "the seeded-cut harness: number of power cuts (1 to 1000)", G_CUTS,
     G_EXPL},
    {CLI_LONG + 15, "attach", "A",
     "with --cuts: virtio (default) or nbd (the guest kernel's NBD client: FUA)", G_CUTS, G_EXPL},
    {CLI_LONG + 16, "explore-json", "FILE",
     "with --cuts: the results in the crash explorer's format (cuts as states; blackout "
     "explore --merge and matrix --vm read it)",
     G_CUTS, G_EXPL},
    {0}};

static const struct cli_spec vmtest_spec = {
    "vmtest",
    "the real Linux kernel on a modelled device: many crash states per boot, or seeded cuts",
    "--stack SPEC --fs FS[,OPTS] --workload W [OPTIONS]\n"
    "--cuts N --stack SPEC --fs FS[,OPTS] --workload W [...]\n"
    "compile WORKLOAD DIR [--files N]\n"
    "judge WORKLOAD DIR CUTS [--files N] [--fs FS] ...\n"
    "points SEED SPAN CUTS\n"
    "check-record OPTIONS",
    "Without --cuts: the real kernel at explorer scale. One boot records the guest's run "
    "(scripts/vmrecord: every request the guest's NBD client sends, with the workload's "
    "marks), or --log FILE gives that recording. The explorer replays its set-up on the "
    "stack and enumerates every crash state of its run with the same code as blackout "
    "explore (cuts, cache subsets, torn sectors, flash and RAID outcomes; budget, "
    "sampling, dedup by what the guest would read, shards), writes the distinct states to "
    "OUT/states (base.img + one delta each), and guests of the real kernel (--jobs in "
    "parallel, many states per boot) mount, read, unmount and check each; the one judge "
    "classifies. Prints the explorer's summary and writes its JSON (fs \"linux-FS,OPTS\").\n"
    "\n"
    "With --cuts N: the seeded-cut harness (scripts/vmtest), the peer of the above. Boots "
    "the Debian cloud kernel under qemu (TCG) on the stack SPEC, served by "
    "build/blackout-nbdkit.so over a Unix socket. The guest makes the filesystem, runs the "
    "workload's set-up (synced bystanders) and its run steps, saying as each step returns. "
    "The host cuts the power at a seeded plugin write count (the write in flight is the "
    "device's to settle), kills qemu with SIGKILL, replugs, and reboots the guest to mount "
    "(journal replay), list every file with the MD5 of each 4 KiB chunk, and run the "
    "filesystem's checker read-only (e2fsck -fn, xfs_repair -n, btrfs check --readonly). "
    "The guest classifies nothing: blackout's one judge reads those lines and gives each "
    "cut the explorer's verdict (durable, stale, bystander, consistent, atomic; detected "
    "or silent; docs/architecture.md).\n"
    "\n"
    "The kernel (apt-get download linux-image-cloud-amd64; --kernel 6.12: "
    "linux-image-6.12-cloud-amd64) and the initramfs are built once and cached in build/vm "
    "(build/vm-6.12) by scripts/vm-build; the release that ran is in the summary's "
    "'kernel:' line and the JSON's \"kernel\". A run step the kernel refuses (EINVAL, "
    "EOPNOTSUPP ...) stops the run there and is named in the 'rejected:' line and the "
    "JSON's \"rejected\" (docs/vmtest.md). Every qemu and nbdkit runs under "
    "timeout and is killed on exit. Needs scripts/install-deps.\n"
    "\n"
    "Plumbing the harness calls (docs/vmtest.md; 'blackout vmtest ACTION --help'):\n"
    "\n"
    "  compile       the workload as guest shell + data\n"
    "  judge         the one judge on the raw lines the guests left in DIR\n"
    "  points        the seeded cut points: one 'I WRITE SEED' line per cut\n"
    "  check-record  scripts/vmrecord's options checked (exit 2: the fault)\n",
    vmtest_opts,
    0,
    0,
    "0 when no state broke an invariant (with --cuts: when every cut ran, whatever the "
    "verdicts), 3 when some did, 1 on failure, 2 on usage.",
    "$ blackout vmtest --stack 'cache(size=1M,flush=honor) > mem(size=64M)' \\\n"
    "      --fs ext4 --workload append-fsync --jobs 2\n"
    "  the explorer's states of one recording, judged by real kernels\n"
    "$ blackout vmtest --cuts 10 --stack 'mem(size=64M)' --fs ext4 \\\n      --workload create\n"
    "  ten seeded power cuts under qemu\n",
    NULL,
    0,
    false,
};

static const struct cli_opt files_opt[] = {
    {CLI_LONG + 0, "files", "N", "length of vmtest's own workloads (default 24)", 0, 0}, {0}};

static const struct cli_opt judge_opts[] = {
    {CLI_LONG + 0, "files", "N", "length of vmtest's own workloads (default 24)", 0, 0},
    {CLI_LONG + 1, "seed", "S", "the run's seed, as recorded", 0, 0},
    {CLI_LONG + 2, "span", "N", "the plugin writes the cuts were chosen in", 0, 0},
    {CLI_LONG + 3, "fs", "FS[,OPTS]", "the filesystem and its mount options", 0, 0},
    {CLI_LONG + 4, "stack", "SPEC", "the device stack", 0, 0},
    {CLI_LONG + 5, "attach", "A", "virtio or nbd", 0, 0},
    {CLI_LONG + 6, "boot-s", "SECONDS", "the boot time to report", 0, 0},
    {CLI_LONG + 7, "explore-json", "FILE", "the results in the crash explorer's format", 0, 0},
    {CLI_LONG + 8, "kver", "RELEASE", "the guest kernel's release, for the results", 0, 0},
    {0}};

static const struct cli_opt record_opts[] = {
    {CLI_LONG + 0, "stack", "SPEC", "the device stack", 0, 0},
    {CLI_LONG + 1, "fs", "FS[,OPTS]", "the filesystem and its mount options", 0, 0},
    {CLI_LONG + 2, "workload", "W", "the workload", 0, 0},
    {CLI_LONG + 3, "files", "N", "length of vmtest's own workloads (1 to 1000)", 0, 0},
    {CLI_LONG + 4, "md", "L:N:M[:j]", "Linux md over the stack's lowers", 0, 0},
    {CLI_LONG + 5, "md-chunk", "KIB", "md's chunk", 0, 0},
    {CLI_LONG + 6, "md-fail", "K", "the md member failed during the run", 0, 0},
    {CLI_LONG + 7, "timeout", "S", "the guest's bound (10 to 3600)", 0, 0},
    {CLI_LONG + 8, "out", "DIR", "accepted (scripts/vmrecord's)", 0, 0},
    {CLI_LONG + 9, "initrd-extra", "FILE", "accepted (scripts/vmrecord's)", 0, 0},
    {CLI_LONG + 10, "integrity", NULL, "dm-integrity under the filesystem", 0, 0},
    {CLI_LONG + 11, "kernel", "SERIES", "the guest kernel series: 6.1 or 6.12", 0, 0},
    {0}};

static const char plumbing_exit[] = "0 done, 1 failed (the reason on stderr), 2 usage error.";

static const struct cli_spec compile_spec = {
    "vmtest compile",
    "the workload as guest shell + data",
    "WORKLOAD DIR [--files N]",
    "Writes DIR/workload.sh and its data: the workload as the guest runs it.\n",
    files_opt,
    2,
    2,
    plumbing_exit,
    "$ blackout vmtest compile append-fsync /tmp/w\n",
    NULL,
    0,
    false};
static const struct cli_spec judge_spec = {
    "vmtest judge",
    "the one judge on the raw lines the guests left in DIR",
    "WORKLOAD DIR CUTS [--files N] [--fs FS] [OPTIONS]",
    "Reads the observation lines of CUTS cuts in DIR and gives each the explorer's "
    "verdict.\n",
    judge_opts,
    3,
    3,
    plumbing_exit,
    "$ blackout vmtest judge create out/ 10 --fs ext4\n",
    NULL,
    0,
    false};
static const struct cli_spec points_spec = {
    "vmtest points",
    "the seeded cut points: one 'I WRITE SEED' line per cut",
    "SEED SPAN CUTS",
    "For cut I = 1..CUTS: the plugin write in [1, SPAN] after which the power goes, and "
    "the seed of what the device keeps.\n",
    NULL,
    3,
    3,
    plumbing_exit,
    "$ blackout vmtest points 1 5000 10\n",
    NULL,
    0,
    false};
static const struct cli_spec record_spec = {
    "vmtest check-record",
    "scripts/vmrecord's options checked (exit 2 naming the fault)",
    "--stack SPEC --fs FS --workload W [OPTIONS]",
    "Checks the recording's options with the library's own checks, so that the script "
    "only starts and stops processes.\n",
    record_opts,
    0,
    0,
    plumbing_exit,
    "$ blackout vmtest check-record --stack 'mem(size=64M)' --fs ext4 \\\n      --workload "
    "create\n",
    NULL,
    0,
    false};

/* One option as parsed: its long name with "--", and its value or NULL. */
struct word {
	char name[40];
	const char *val;
};

/* argv parsed by spec (argv[0] the command or action), then rebuilt in out as argv[0 ..
 * keep - 1] of the original, the operands, and each option as "--name" [value] (the
 * names in w, argc of them at most). Returns the new count, or -1 with *status (help
 * printed: 0; usage error: 2). */
static int canonical(const struct cli_spec *spec, int argc, char **argv, int keep, char **out,
                     struct word *w, int *status)
{
	struct cli_parse p;
	int k, n = keep, nopt = 0;
	for (int i = 0; i < keep; i++)
		out[i] = argv[i];
	cli_parse_start(&p, spec, argc - (keep - 1), argv + (keep - 1));
	while ((k = cli_next(&p)) > 0) {
		for (int i = 0; spec->opts[i].key; i++)
			if (spec->opts[i].key == k)
				snprintf(w[nopt].name, sizeof(w[nopt].name), "--%s",
				         spec->opts[i].name);
		w[nopt++].val = p.arg;
	}
	if (k < 0) {
		*status = p.status;
		return -1;
	}
	for (int i = 0; i < p.nargs; i++)
		out[n++] = p.args[i];
	for (int i = 0; i < nopt; i++) {
		out[n++] = w[i].name;
		if (w[i].val)
			out[n++] = (char *)w[i].val;
	}
	out[n] = NULL;
	return n;
}

int cmd_vmtest(int argc, char **argv)
{
	const struct cli_spec *const plumbing[] = {&compile_spec, &judge_spec, &points_spec,
	                                           &record_spec, NULL};
	char **args = calloc(2 * (size_t)argc + 4, sizeof *args);
	struct word *w = calloc((size_t)argc + 1, sizeof *w);
	if (!args || !w) {
		free(args);
		free(w);
		return cli_fail("vmtest", "out of memory");
	}
	int status = 0, n;
	for (int i = 0; argc >= 2 && plumbing[i]; i++)
		if (!strcmp(argv[1], strchr(plumbing[i]->name, ' ') + 1)) {
			n = canonical(plumbing[i], argc, argv, 2, args, w, &status);
			status = n < 0 ? status : cmd_vmtest_plumbing(n, args);
			free(args);
			free(w);
			return status;
		}
	/* args[1] left free: scripts/vmtest's path goes there for the harness */
	if ((n = canonical(&vmtest_spec, argc, argv, 1, args + 1, w, &status)) < 0) {
		free(args);
		free(w);
		return status;
	}
	bool cuts = false;
	for (int i = 2; i <= n; i++)
		cuts |= !strcmp(args[i], "--cuts");
	if (!cuts) {
		status = cmd_vmtest_explore(n, args + 1);
		free(args);
		free(w);
		return status;
	}
	const char *stack = NULL, *fs = NULL, *workload = NULL, *kernel = NULL;
	for (int i = 2; i + 1 <= n; i += 2) {
		const char *a = args[i], *v = args[i + 1];
		uint64_t num;
		int rc = 0;
		if (!strcmp(a, "--stack"))
			stack = v;
		else if (!strcmp(a, "--fs"))
			fs = v;
		else if (!strcmp(a, "--workload"))
			workload = v;
		else if (!strcmp(a, "--kernel"))
			kernel = v;
		else if (!strcmp(a, "--cuts"))
			rc = cli_num("vmtest", a, v, 0, 1, 1000, &num);
		else if (!strcmp(a, "--files"))
			rc = cli_num("vmtest", a, v, 0, 1, 1000, &num);
		else if (!strcmp(a, "--seed"))
			rc = cli_num("vmtest", a, v, 0, 0, UINT64_MAX, &num);
		else if (!strcmp(a, "--attach") && strcmp(v, "virtio") && strcmp(v, "nbd"))
			rc = cli_usage_error("vmtest", "--attach: virtio or nbd, not '%s'", v);
		if (rc) {
			free(args);
			free(w);
			return rc;
		}
	}
	/* checked here once: scripts/vmtest only starts and stops processes */
	struct vm_explore_opts o = {.cfg = {.stack = stack, .fs = fs, .workload = workload},
	                            .kernel = kernel};
	struct bo_err err = {{0}};
	int rc;
	if (vm_explore_check(&o, &err)) {
		rc = cli_usage_error("vmtest", "%s", err.msg);
		free(args);
		free(w);
		return rc;
	}
	struct dev_spec *spec = NULL;
	rc = dev_spec_parse(stack, &spec, &err);
	if (rc < 0) {
		free(args);
		free(w);
		return cli_fail("vmtest", "%s", bo_errstr(&err, rc));
	}
	dev_spec_free(spec);

	char script[PATH_MAX + 32];
	if (vm_scripts_dir(script, sizeof script - 8) < 0) {
		free(args);
		free(w);
		return cli_fail("vmtest", "cannot find scripts/vmtest (not in the source tree nor "
		                          "installed; set BLACKOUT_SRC)");
	}
	strcat(script, "/vmtest");
	args[0] = "bash";
	args[1] = script;
	fflush(stdout);
	execv("/bin/bash", args);
	rc = cli_fail("vmtest", "cannot run %s: %s", script, strerror(errno));
	free(args);
	free(w);
	return rc;
}
