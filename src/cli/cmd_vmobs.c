// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_vmobs.c — `blackout vmobserve`: the pool of real-kernel guests observing the states
 * of a state store (src/vm, docs/realkernel.md), one JSON line per state; and
 * `blackout vmobserve delta`, which writes a delta file (tests, hand-made stores). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/vm.h"
#include "blackout/vmexplore.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

enum {
	OPT_FS = CLI_LONG,
	OPT_JOBS,
	OPT_WORKDIR,
	OPT_BOOT_TIMEOUT,
	OPT_STATE_TIMEOUT,
	OPT_KERNEL,
	OPT_INITRD,
	OPT_PLUGIN,
	OPT_INTEGRITY,
	OPT_MD_DROP,
	OPT_APP,
};

static const struct cli_opt vmobs_opts[] = {
    {OPT_FS, "fs", "FS[,OPTS]", "ext4 | ext3 | xfs | btrfs, then mount options (required)", 0, 0},
    {OPT_JOBS, "jobs", "J", "guests in parallel (default: the number of cores)", 0, 0},
    {OPT_WORKDIR, "workdir", "D",
     "sockets, consoles, logs, deltas.img (default: a new directory under $TMPDIR, "
     "removed after success)",
     0, 0},
    {OPT_BOOT_TIMEOUT, "boot-timeout", "S", "seconds for a guest to boot (default 120)", 0, 0},
    {OPT_STATE_TIMEOUT, "state-timeout", "S", "seconds for one state (default 60)", 0, 0},
    {OPT_KERNEL, "kernel", "F", "the guest's kernel (default $BUILD/vm/vmlinuz)", 0, 0},
    {OPT_INITRD, "initrd", "F", "the guest's initramfs (default $BUILD/vm/initramfs.cpio)", 0, 0},
    {OPT_PLUGIN, "plugin", "F", "ignored (the guests read the store from disks)", 0, 0},
    {OPT_INTEGRITY, "integrity", NULL,
     "open each state with integritysetup first (dm-integrity under the fs, "
     "docs/integrity.md)",
     0, 0},
    {OPT_MD_DROP, "md-drop", "K", "a store of md members: md assembled without member K", 0, 0},
    {OPT_APP, "app", NULL,
     "the states are an application's (blackout app): a mounted state whose guest gives no "
     "checker verdict is the checker failing",
     0, 0},
    {0}};

static const char vmobs_exit[] =
    "0 when the pool ran (whatever the states hold), 1 when it could not, 2 usage.";

static const struct cli_spec vmobs_spec = {
    "vmobserve",
    "observe the states of a state store in real-kernel guests",
    "DIR N --fs FS[,MOUNTOPTS] [--jobs J] [OPTIONS]\n"
    "delta BASE IMAGE OUT",
    "Observes states s0..s<N-1> of the state store DIR (base.img + s<N>.delta, "
    "docs/realkernel.md) in guests of the real Linux kernel, each booted once and judging "
    "many states; prints one JSON line per state, then a summary line.\n"
    "\n"
    "delta: OUT gets the 4 KiB blocks where IMAGE differs from BASE (both the same size, a "
    "multiple of 4096).\n",
    vmobs_opts,
    2,
    2,
    vmobs_exit,
    "$ blackout vmobserve store/ 40 --fs ext4 --jobs 2\n"
    "  one JSON line for each of s0..s39, then the summary\n"
    "$ blackout vmobserve delta base.img s1.img store/s1.delta\n"
    "  a store made by hand\n",
    NULL,
    0,
    false,
};

static const struct cli_spec delta_spec = {
    "vmobserve delta",
    "write the delta file of IMAGE against BASE",
    "BASE IMAGE OUT",
    "OUT gets the 4 KiB blocks where IMAGE differs from BASE (both the same size, a "
    "multiple of 4096).\n",
    NULL,
    3,
    3,
    vmobs_exit,
    "$ blackout vmobserve delta base.img s1.img store/s1.delta\n",
    NULL,
    0,
    false,
};

static json_t *summary(const struct crash_observation *o, size_t i)
{
	json_t *j = json_object();
	json_object_set_new(j, "state", json_integer((json_int_t)i));
	json_object_set_new(j, "hung", json_boolean(o->guest_hung));
	json_object_set_new(j, "mount_rc", json_integer(o->mount_rc));
	json_object_set_new(j, "mount_msg", json_string(o->mount_msg));
	json_object_set_new(j, "umount_rc", json_integer(o->unmount_rc));
	const struct crash_check *c = &o->check[CRASH_CHECK_E2FSCK];
	json_object_set_new(j, "fsck_ran", json_boolean(c->ran));
	json_object_set_new(j, "fsck_clean", json_boolean(c->ran && c->rc == 0 && c->clean));
	json_object_set_new(j, "fsck_why", json_string(c->why));
	if (o->kernel_lines)
		json_object_set_new(j, "kernel",
		                    json_pack("{sI ss}", "lines", (json_int_t)o->kernel_lines,
		                              "first", o->kernel_msg));
	if (o->app.ran)
		json_object_set_new(j, "app",
		                    json_pack("{si ss}", "exit", o->app.exit, "line", o->app.line));
	/* the files at the top of the tree with their first chunk's digest: enough for a
	 * person or a test to see what a state holds */
	json_t *files = json_object();
	for (size_t k = 0; k < o->root.nkids; k++) {
		const struct crash_obs_node *n = &o->root.kids[k];
		if (n->dir)
			continue;
		char hex[33] = "-";
		if (n->md5 && n->size > 0)
			for (int b = 0; b < 16; b++)
				snprintf(hex + 2 * b, 3, "%02x", n->md5[0][b]);
		if (n->read_rc)
			snprintf(hex, sizeof hex, "!");
		json_t *f = json_pack("{sI ss}", "size", (json_int_t)n->size, "md5", hex);
		json_object_set_new(files, n->name ? n->name : "?", f);
	}
	json_object_set_new(j, "files", files);
	return j;
}

static void print_line(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	if (s)
		puts(s);
	free(s);
	json_decref(j);
}

static int run_delta(int argc, char **argv)
{
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &delta_spec, argc, argv);
	while ((k = cli_next(&p)) > 0)
		;
	if (k < 0)
		return p.status;
	struct bo_err err = {{0}};
	int rc = vm_delta_write(p.args[0], p.args[1], p.args[2], &err);
	return rc ? cli_fail("vmobserve", "%s", bo_errstr(&err, rc)) : 0;
}

int cmd_vmobs(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "delta") == 0)
		return run_delta(argc - 1, argv + 1);
	char script[1024];
	(void)vm_scripts_dir(script, sizeof script); /* sets $BUILD beside the executable */
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char kernel[1024], initrd[1024], plugin[1024], fsbuf[256];
	snprintf(kernel, sizeof kernel, "%s/vm/vmlinuz", build);
	snprintf(initrd, sizeof initrd, "%s/vm/initramfs.cpio", build);
	snprintf(plugin, sizeof plugin, "%s/blackout-nbdkit.so", build);
	struct vm_pool_cfg cfg = {.kernel = kernel, .initrd = initrd, .plugin = plugin};
	uint64_t n, v;
	int rc = 0;
	char l[32];
	struct cli_parse p;
	int k;
	cli_parse_start(&p, &vmobs_spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		const char *a = cli_opt_label(&vmobs_spec, k, l, sizeof(l)), *val = p.arg;
		switch (k) {
		case OPT_INTEGRITY: cfg.integrity = true; break;
		case OPT_APP: cfg.app = true; break;
		case OPT_FS: {
			snprintf(fsbuf, sizeof fsbuf, "%s", val);
			char *comma = strchr(fsbuf, ',');
			if (comma)
				*comma = '\0', cfg.mopt = comma + 1;
			cfg.fs = fsbuf;
			break;
		}
		case OPT_JOBS:
			if ((rc = cli_num("vmobserve", a, val, 0, 1, 64, &v)))
				return rc;
			cfg.jobs = (unsigned)v;
			break;
		case OPT_BOOT_TIMEOUT:
		case OPT_STATE_TIMEOUT:
			if ((rc = cli_num("vmobserve", a, val, 0, 1, 3600, &v)))
				return rc;
			*(k == OPT_BOOT_TIMEOUT ? &cfg.boot_timeout : &cfg.state_timeout) =
			    (double)v;
			break;
		case OPT_MD_DROP:
			if ((rc = cli_num("vmobserve", a, val, 0, 0, 63, &v)))
				return rc;
			cfg.md_drop = (unsigned)v;
			cfg.md_drop_set = true;
			break;
		case OPT_WORKDIR: cfg.workdir = val; break;
		case OPT_KERNEL: cfg.kernel = val; break;
		case OPT_INITRD: cfg.initrd = val; break;
		case OPT_PLUGIN: cfg.plugin = val; break;
		}
	}
	if (k < 0)
		return p.status;
	cfg.statedir = p.args[0];
	if ((rc = cli_num("vmobserve", "N", p.args[1], 0, 1, 1000000000, &n)))
		return rc;
	if (!cfg.fs)
		return cli_usage_error("vmobserve", "--fs is required (ext4, ext3, xfs, btrfs)");
	static char wd[1024];
	bool own_dir = !cfg.workdir;
	if (own_dir) {
		const char *t = getenv("TMPDIR");
		snprintf(wd, sizeof wd, "%s/blackout-vmobs-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(wd))
			return cli_fail("vmobserve", "cannot make a work directory: %s",
			                strerror(errno));
		cfg.workdir = wd;
	}
	struct crash_observation *obs = calloc(n, sizeof *obs);
	if (!obs)
		return cli_fail("vmobserve", "out of memory");
	struct vm_pool_stats st = {0};
	struct bo_err err = {{0}};
	rc = vm_pool_observe(&cfg, n, obs, &st, &err);
	if (rc == 0)
		for (size_t i = 0; i < n; i++)
			print_line(summary(&obs[i], i));
	for (size_t i = 0; i < n; i++)
		crash_observation_free(&obs[i]);
	free(obs);
	if (rc) /* the work directory stays: its consoles and logs say what happened */
		return cli_fail("vmobserve", "%s (logs in %s)", bo_errstr(&err, rc), cfg.workdir);
	if (own_dir)
		vm_workdir_remove(cfg.workdir);
	print_line(json_pack(
	    "{sI sI sI sI s{sf sf sf sf sf sf sf} sf}", "observed", (json_int_t)st.observed, "hung",
	    (json_int_t)st.hung, "retried", (json_int_t)st.retried, "boots", (json_int_t)st.boots,
	    "seconds", "boot", st.boot, "connect", st.connect, "mount", st.mount, "read", st.read,
	    "umount", st.umount, "check", st.check, "other", st.other, "wall", st.wall));
	return 0;
}
