// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_vm.c — distinct real-kernel crash states observed per second per guest by the
 * pool (src/vm: one boot, many states, each a dm-snapshot of the base disk with its
 * delta applied) on a store of 100 states of a 64 MiB ext4 (60 files of 16 KiB, each
 * state one rewritten block), where the time goes (boot, attach, mount, read, umount,
 * check), by the static bo-observe (dm ioctls; mount, walk and umount in one process;
 * the kernel log read as the snapshot goes) and by the execs it replaced (dmsetup,
 * busybox mount and umount, dmesg, and the gzipped initramfs every boot inflated), both
 * in this run; beside it the seeded-cut harness on the same
 * stack measured in the same run (scripts/vmtest --cuts 2: two boots per cut), as a
 * ratio. Skips (exit 0) without qemu or the guest cache. Never fails on speed. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/util.h"
#include "blackout/vm.h"

#include "bench_goal.h"

#define NSTATES 100
#define NFILES  60

static int sh(const char *cmd)
{
	int rc = system(cmd);
	return rc == 0 ? 0 : -1;
}

/* base.img with NFILES files, and s<i>.delta rewriting the first block of file i. */
static int make_store(const char *dir)
{
	char cmd[4096], path[1100];
	snprintf(cmd, sizeof cmd,
	         "set -e; mkdir -p %s/src %s/store; cd %s/src; for i in $(seq 0 %d); do "
	         "head -c 16384 /dev/urandom > f$i; done; truncate -s 64M %s/store/base.img; "
	         "mke2fs -q -F -t ext4 -b 4096 -d %s/src %s/store/base.img",
	         dir, dir, dir, NFILES - 1, dir, dir, dir);
	if (sh(cmd))
		return -1;
	for (int i = 0; i < NSTATES; i++) {
		snprintf(cmd, sizeof cmd, "debugfs -R 'blocks /f%d' %s/store/base.img 2>/dev/null",
		         i % NFILES, dir);
		FILE *p = popen(cmd, "r");
		unsigned long long blk = 0;
		int got = p ? fscanf(p, "%llu", &blk) : 0;
		if (p)
			pclose(p);
		if (got != 1)
			return -1;
		snprintf(path, sizeof path, "%s/store/s%d.delta", dir, i);
		FILE *f = fopen(path, "wb");
		if (!f)
			return -1;
		uint8_t hdr[16] = "BOSTATE1", rec[8 + 4096];
		hdr[8] = 0, hdr[9] = 0x10, hdr[12] = 1;  /* block size 4096, one record */
		blk += (unsigned long long)(i / NFILES); /* past the first 60, a file's 2nd block */
		for (int b = 0; b < 8; b++)
			rec[b] = (uint8_t)(blk >> (8 * b));
		memset(rec + 8, 'A' + i % 26, 4096);
		int ok = fwrite(hdr, 1, 16, f) == 16 && fwrite(rec, 1, sizeof rec, f) == sizeof rec;
		if (fclose(f) != 0 || !ok)
			return -1;
	}
	return 0;
}

static bool have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/* The seeded-cut harness on the same stack and fs: cuts per second, or 0. */
static double peer(const char *blackout, const char *dir, double *secs)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
	         "timeout 600 %s vmtest --stack 'mem(size=64M)' --fs ext4 --workload create "
	         "--files 6 --cuts 2 --seed 1 --attach nbd --out %s/vmtest >%s/vmtest.log 2>&1",
	         blackout, dir, dir);
	double t = bo_now();
	int rc = system(cmd);
	*secs = bo_now() - t;
	return rc == 0 && *secs > 0 ? 2 / *secs : 0;
}

/* One pool over the store with initrd; prints its figures and per-state split. */
static int pool_run(const char *store, const char *dir, int k, const char *kernel,
                    const char *initrd, const char *plugin, const char *label, double *per_s,
                    double *boot)
{
	char work[1100];
	snprintf(work, sizeof work, "%s/pool%d", dir, k);
	struct vm_pool_cfg cfg = {.kernel = kernel,
	                          .initrd = initrd,
	                          .plugin = plugin,
	                          .statedir = store,
	                          .workdir = work,
	                          .fs = "ext4",
	                          .jobs = 1};
	static struct crash_observation obs[NSTATES];
	struct vm_pool_stats st;
	struct bo_err err = {{0}};
	if (vm_pool_observe(&cfg, NSTATES, obs, &st, &err)) {
		fprintf(stderr, "bench_vm: %s: %s\n", label, err.msg);
		return -1;
	}
	for (int i = 0; i < NSTATES; i++)
		crash_observation_free(&obs[i]);
	double judging = st.wall - st.boot; /* one guest: its boot is the pool's start */
	*boot = st.boots ? st.boot / st.boots : 0;
	*per_s = judging > 0 ? (double)st.observed / judging : 0;
	double n = st.observed ? (double)st.observed : 1;
	printf("%s: 64 MiB ext4, %d files; %zu of %d states observed (%u hung) by 1 guest in "
	       "%.1fs (%u boot%s, %.1fs booting)\n",
	       label, NFILES, st.observed, NSTATES, st.hung, st.wall, st.boots,
	       st.boots == 1 ? "" : "s", st.boot);
	printf("%s: %.2f states/s per guest after boot (%.2f/s counting the boot)\n", label, *per_s,
	       st.wall > 0 ? (double)st.observed / st.wall : 0);
	printf("%s: per state (ms): attach %.0f, mount+recovery %.0f, read %.0f, umount %.0f, "
	       "check %.0f, host+protocol %.0f\n",
	       label, 1000 * st.connect / n, 1000 * st.mount / n, 1000 * st.read / n,
	       1000 * st.umount / n, 1000 * st.check / n, 1000 * st.other / n);
	return 0;
}

int main(void)
{
	const char *blackout = getenv("BLACKOUT") ? getenv("BLACKOUT") : "build/blackout";
	char bin[1024], build[1024], kernel[1100], initrd[1100], plugin[1100];
	snprintf(bin, sizeof bin, "%s", blackout);
	snprintf(build, sizeof build, "%s", dirname(bin));
	snprintf(kernel, sizeof kernel, "%s/vm/vmlinuz", build);
	snprintf(initrd, sizeof initrd, "%s/vm/initramfs.cpio", build);
	snprintf(plugin, sizeof plugin, "%s/blackout-nbdkit.so", build);
	const char *missing = !have("qemu-system-x86_64") ? "qemu-system-x86_64 not installed"
	                      : !have("nbdkit")           ? "nbdkit not installed"
	                      : !have("debugfs")          ? "debugfs not installed"
	                      : access(kernel, R_OK)      ? "no guest kernel (scripts/vm-build)"
	                      : access(initrd, R_OK)      ? "no initramfs (scripts/vm-build)"
	                      : access(plugin, R_OK)
	                          ? "no nbdkit plugin (make; the harness uses it)"
	                          : NULL;
	if (missing) {
		printf("skipped: %s\n", missing);
		return 0;
	}
	char dir[] = "/tmp/bench-vm-XXXXXX";
	if (!mkdtemp(dir) || make_store(dir)) {
		fprintf(stderr, "bench_vm: could not make the state store in %s\n", dir);
		return 1;
	}
	/* the old path: the same initramfs gzipped, as vm-build made it before, with
	 * /etc/bo-dm saying "dmsetup" appended as a second archive (the kernel unpacks them
	 * in order, the later file wins) */
	char store[1100], old_initrd[1100], cmd[4096];
	snprintf(store, sizeof store, "%s/store", dir);
	snprintf(old_initrd, sizeof old_initrd, "%s/initramfs-dmsetup.img", dir);
	snprintf(
	    cmd, sizeof cmd,
	    "set -e; mkdir -p %s/extra/etc; echo dmsetup > %s/extra/etc/bo-dm; gzip -1 < %s > %s; "
	    "(cd %s/extra && find etc | cpio -o -H newc --quiet | gzip) >> %s",
	    dir, dir, initrd, old_initrd, dir, old_initrd);
	if (sh(cmd)) {
		fprintf(stderr, "bench_vm: could not make the dmsetup initramfs in %s\n", dir);
		return 1;
	}
	/* old then new, one run: the machine's load moves both alike */
	const char *label[2] = {"old (gzipped initramfs; dmsetup, mount, bo-observe, umount, "
	                        "dmesg execs)",
	                        "new (cpio initramfs; bo-observe: dm ioctls, look, unsnap --klog)"};
	const char *rd[2] = {old_initrd, initrd};
	double per_s[2] = {0, 0}, boot[2] = {0, 0};
	for (int k = 0; k < 2; k++)
		if (pool_run(store, dir, k, kernel, rd[k], plugin, label[k], &per_s[k], &boot[k]))
			return 1;
	if (per_s[0] > 0)
		printf("ratio: bo-observe's path observes %.2fx the exec path's states/s\n",
		       per_s[1] / per_s[0]);
	if (boot[0] > 0)
		printf("ratio: a boot to BO:READY takes %.2fx the gzipped initramfs's time\n",
		       boot[1] / boot[0]);
	bench_goal("real-kernel states/s per guest after boot (64 MiB ext4)", per_s[1], true, 8,
	           "/s");
	double psecs = 0, pps = peer(blackout, dir, &psecs);
	if (pps > 0)
		printf("seeded-cut harness (scripts/vmtest --cuts 2, same stack): 2 cuts in %.1fs, "
		       "%.3f cuts/s\nratio: the pool observes %.0fx the harness's rate per guest\n",
		       psecs, pps, per_s[1] / pps);
	else
		printf("seeded-cut harness: did not run (see %s/vmtest.log)\n", dir);
	if (pps > 0) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		(void)!system(cmd);
	}
	return 0;
}
