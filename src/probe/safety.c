// SPDX-License-Identifier: GPL-2.0-or-later
/* safety.c — what `probe write` and `probe timing` check before they destroy a device's
 * contents: not mounted (by its device number in /proc/self/mountinfo, or held as swap),
 * no filesystem, partition table or volume signature that libblkid knows (as wipefs
 * and mkfs ask it). The probe's own pattern is not a signature: a second run over a
 * first is expected. Host only: the guest's bo-probe writes the device it was given. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <blkid.h>

#include "blackout/probe.h"
#include "blackout/util.h"

static int mounted(const struct stat *st, const char *path, struct bo_err *err)
{
	FILE *m = fopen("/proc/self/mountinfo", "r");
	if (!m)
		return 0;
	char line[4096];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), m)) {
		unsigned maj, mi;
		char where[1024];
		if (sscanf(line, "%*u %*u %u:%u %*s %1023s", &maj, &mi, where) == 3 &&
		    makedev(maj, mi) == st->st_rdev)
			rc = bo_errf(err, -EBUSY,
			             "%s is mounted on %s: the probe would destroy it; unmount it "
			             "(umount %s) and run again",
			             path, where, where);
	}
	fclose(m);
	return rc;
}

/* What a signature blkid found is, for a person: "an ext4 filesystem", "a Linux md
 * RAID member". */
static void describe(const char *type, const char *usage, bool table, char *buf, size_t len)
{
	static const struct {
		const char *type, *what;
	} named[] = {
	    {"linux_raid_member", "a Linux md RAID member"},
	    {"LVM2_member", "an LVM physical volume"},
	    {"zfs_member", "a ZFS pool member"},
	    {"bcache", "a bcache device"},
	    {"crypto_LUKS", "a LUKS encrypted volume"},
	    {"swap", "a swap area"},
	    {"isw_raid_member", "an Intel firmware RAID member"},
	    {"ddf_raid_member", "a DDF firmware RAID member"},
	    {"dos", "an MBR (dos) partition table"},
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strcmp(type, named[i].type) == 0) {
			snprintf(buf, len, "%s", named[i].what);
			return;
		}
	const char *an = strchr("aeiouAEIOU", type[0]) ? "an" : "a";
	if (table)
		snprintf(buf, len, "%s %s partition table", an, type);
	else if (usage && strcmp(usage, "filesystem") == 0)
		snprintf(buf, len, "%s %s filesystem", an, type);
	else if (usage && strcmp(usage, "raid") == 0)
		snprintf(buf, len, "%s %s volume member (RAID or volume manager)", an, type);
	else if (usage && strcmp(usage, "crypto") == 0)
		snprintf(buf, len, "%s %s encrypted volume", an, type);
	else
		snprintf(buf, len, "%s %s signature", an, type);
}

/* libblkid knows the signatures (filesystems, partition tables, md, LVM, ZFS, bcache,
 * swap, LUKS ...); its safe probe also reports two that disagree. */
static int signature(const char *path, struct bo_err *err)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	if (!pr)
		return bo_errf(err, errno ? -errno : -EIO,
		               "%s: cannot read it to look for signatures: %s", path,
		               strerror(errno ? errno : EIO));
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
	                                          BLKID_SUBLKS_MAGIC);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	int r = blkid_do_safeprobe(pr), rc = 0;
	const char *type = NULL, *usage = NULL, *at = NULL;
	bool table = false;
	if (r == 0) {
		if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) != 0) {
			table = blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0;
			blkid_probe_lookup_value(pr, "PTMAGIC_OFFSET", &at, NULL);
		} else {
			blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
			blkid_probe_lookup_value(pr, "SBMAGIC_OFFSET", &at, NULL);
		}
	}
	if (r == 0 && type) {
		char what[96];
		describe(type, usage, table, what, sizeof(what));
		rc = bo_errf(err, -EEXIST,
		             "%s holds %s (%s signature%s%s): the probe would destroy it. If its "
		             "contents may go, pass --destroy-contents (or wipe it first: "
		             "wipefs -a %s)",
		             path, what, type, at ? " at byte " : "", at ? at : "", path);
	} else if (r == -2) {
		rc = bo_errf(err, -EEXIST,
		             "%s holds more than one signature (blkid -p %s lists them): the probe "
		             "would destroy them. If its contents may go, pass --destroy-contents "
		             "(or wipe it first: wipefs -a %s)",
		             path, path, path);
	} else if (r < 0) {
		rc = bo_errf(err, -EIO, "%s: cannot read it to look for signatures (blkid failed)",
		             path);
	}
	blkid_free_probe(pr);
	return rc;
}

int probe_safety_check(const char *path, bool signatures, struct bo_err *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return bo_errf(err, -errno, "%s: %s", path, strerror(errno));
	if (S_ISBLK(st.st_mode)) {
		int rc = mounted(&st, path, err);
		if (rc)
			return rc;
	}
	if (!signatures)
		return 0;
	return signature(path, err);
}
