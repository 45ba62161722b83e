// SPDX-License-Identifier: GPL-2.0-or-later
/* fscfg.c — the --fs text of an exploration ("ext3,data=ordered,barrier=1,bs=1024"):
 * mkfs and mount options, the data mode's allowances and what the system checks at
 * boot. */
#include <errno.h>
#include <string.h>

#include "blackout/util.h"
#include "crash/crash_int.h"

int crash_fs_check(const char *text, struct bo_err *err)
{
	struct crash_fscfg c;
	return crash_fscfg_parse(text, &c, err);
}

int crash_fscfg_parse(const char *text, struct crash_fscfg *c, struct bo_err *err)
{
	fs_mkfs_opts_default(&c->mk);
	fs_mount_opts_default(&c->mo);
	char buf[256], mount[256] = "";
	if (strlen(text) >= sizeof(buf))
		return bo_errf(err, -EINVAL, "--fs: longer than 255 bytes");
	strcpy(buf, text);
	bool typed = false;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "ext2") == 0 || strcmp(t, "ext3") == 0) {
			c->mk.type = t[3] - '0';
			typed = true;
		} else if (strcmp(t, "metadata_csum") == 0) {
			c->mk.metadata_csum = true;
		} else if (strncmp(t, "bs=", 3) == 0 || strncmp(t, "blocksize=", 10) == 0) {
			uint64_t v;
			int rc = bo_parse_size(strchr(t, '=') + 1, &v, err);
			if (rc)
				return rc;
			if (v != 1024 && v != 2048 && v != 4096)
				return bo_errf(err, -EINVAL,
				               "--fs: block size must be 1024, 2048 or 4096");
			c->mk.block_size = (uint32_t)v;
		} else if (strcmp(t, "verify=fast") == 0) {
			c->verify_fast = true;
		} else if (strncmp(t, "journal=", 8) == 0) {
			uint64_t v;
			int rc = bo_parse_size(t + 8, &v, err);
			if (rc)
				return rc;
			c->mk.journal_blocks = v;
		} else {
			size_t l = strlen(mount);
			if (l + strlen(t) + 2 > sizeof(mount))
				return bo_errf(err, -EINVAL, "--fs: too many mount options");
			snprintf(mount + l, sizeof(mount) - l, "%s%s", l ? "," : "", t);
		}
	}
	if (!typed)
		return bo_errf(err, -EINVAL,
		               "--fs '%s': name the filesystem first: ext2 or ext3, e.g. "
		               "'ext3,data=ordered,barrier=1'",
		               text);
	if (c->mk.type == 2 && c->mk.metadata_csum)
		return bo_errf(err, -EINVAL, "--fs: metadata_csum needs ext3 here");
	if (mount[0]) {
		int rc = fs_mount_opts_parse(mount, &c->mo, err);
		if (rc)
			return rc;
	}
	c->writeback = c->mo.data == FS_DATA_WRITEBACK;
	c->boot = c->mk.type == 2 || c->mo.no_journal ? CRASH_BOOT_FSCK_FULL
	          : c->verify_fast                    ? CRASH_BOOT_VERIFY
	                                              : CRASH_BOOT_TRUST;
	/* a fixed clock: the same exploration gives the same bytes, states and ids */
	c->mk.now = CRASH_CLOCK;
	c->mo.now = CRASH_CLOCK;
	return 0;
}
