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

static void usage(FILE *f)
{
	fprintf(f, "usage: blackout vmobserve DIR N --fs FS[,MOUNTOPTS] [--jobs J] [options]\n"
	           "       blackout vmobserve delta BASE IMAGE OUT\n"
	           "Observes states s0..s<N-1> of the state store DIR (base.img + s<N>.delta,\n"
	           "docs/realkernel.md) in guests of the real Linux kernel, each booted once and\n"
	           "judging many states; prints one JSON line per state, then a summary line.\n"
	           "  --fs FS[,OPTS]        ext4 | ext3 | xfs | btrfs, then mount options\n"
	           "  --jobs J              guests in parallel (default: the number of cores)\n"
	           "  --workdir D           sockets, consoles, logs, deltas.img (default: a new\n"
	           "                        directory under $TMPDIR, removed after success)\n"
	           "  --boot-timeout S      seconds for a guest to boot (default 120)\n"
	           "  --state-timeout S     seconds for one state (default 60)\n"
	           "  --kernel F --initrd F the guest (default $BUILD/vm/vmlinuz, initramfs.gz)\n"
	           "  --plugin F            ignored (the guests read the store from disks)\n"
	           "  --integrity           open each state with integritysetup first\n"
	           "                        (dm-integrity under the fs, docs/integrity.md)\n"
	           "  --md-drop K           a store of md members: md assembled without member K\n"
	           "delta: OUT gets the 4 KiB blocks where IMAGE differs from BASE.\n"
	           "Exit 0 when the pool ran (whatever the states hold), 1 when it could not.\n");
}

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
	if (argc != 5)
		return cli_usage_error("vmobserve", "delta takes BASE IMAGE OUT");
	struct bo_err err = {{0}};
	int rc = vm_delta_write(argv[2], argv[3], argv[4], &err);
	return rc ? cli_fail("vmobserve", "%s", bo_errstr(&err, rc)) : 0;
}

int cmd_vmobs(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "delta") == 0)
		return run_delta(argc, argv);
	if (argc < 3)
		return cli_usage_error("vmobserve", "needs DIR and N");
	char script[1024];
	(void)vm_scripts_dir(script, sizeof script); /* sets $BUILD beside the executable */
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char kernel[1024], initrd[1024], plugin[1024], fsbuf[256];
	snprintf(kernel, sizeof kernel, "%s/vm/vmlinuz", build);
	snprintf(initrd, sizeof initrd, "%s/vm/initramfs.gz", build);
	snprintf(plugin, sizeof plugin, "%s/blackout-nbdkit.so", build);
	struct vm_pool_cfg cfg = {
	    .kernel = kernel, .initrd = initrd, .plugin = plugin, .statedir = argv[1]};
	uint64_t n, v;
	int rc = cli_num("vmobserve", "N", argv[2], 0, 1, 1000000000, &n);
	if (rc)
		return rc;
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--integrity")) {
			cfg.integrity = true;
			continue;
		}
		if (!val)
			return cli_usage_error("vmobserve",
			                       "unknown argument or missing value: '%s'", a);
		i++;
		if (!strcmp(a, "--fs")) {
			snprintf(fsbuf, sizeof fsbuf, "%s", val);
			char *comma = strchr(fsbuf, ',');
			if (comma)
				*comma = '\0', cfg.mopt = comma + 1;
			cfg.fs = fsbuf;
		} else if (!strcmp(a, "--jobs")) {
			if ((rc = cli_num("vmobserve", a, val, 0, 1, 64, &v)))
				return rc;
			cfg.jobs = (unsigned)v;
		} else if (!strcmp(a, "--boot-timeout") || !strcmp(a, "--state-timeout")) {
			if ((rc = cli_num("vmobserve", a, val, 0, 1, 3600, &v)))
				return rc;
			*(a[2] == 'b' ? &cfg.boot_timeout : &cfg.state_timeout) = (double)v;
		} else if (!strcmp(a, "--md-drop")) {
			if ((rc = cli_num("vmobserve", a, val, 0, 0, 63, &v)))
				return rc;
			cfg.md_drop = (unsigned)v;
			cfg.md_drop_set = true;
		} else if (!strcmp(a, "--workdir")) {
			cfg.workdir = val;
		} else if (!strcmp(a, "--kernel")) {
			cfg.kernel = val;
		} else if (!strcmp(a, "--initrd")) {
			cfg.initrd = val;
		} else if (!strcmp(a, "--plugin")) {
			cfg.plugin = val;
		} else {
			return cli_usage_error("vmobserve", "unknown argument '%s'", a);
		}
	}
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
	print_line(json_pack("{sI sI sI s{sf sf sf sf sf sf sf} sf}", "observed",
	                     (json_int_t)st.observed, "hung", (json_int_t)st.hung, "boots",
	                     (json_int_t)st.boots, "seconds", "boot", st.boot, "connect",
	                     st.connect, "mount", st.mount, "read", st.read, "umount", st.umount,
	                     "check", st.check, "other", st.other, "wall", st.wall));
	return 0;
}
