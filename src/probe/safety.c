/* safety.c — what `probe write` and `probe timing` check before they destroy a device's
 * contents: not mounted (by its device number in /proc/self/mountinfo, or held as swap),
 * no filesystem, partition table or volume signature. The probe's own pattern is not a
 * signature: a second run over a first is expected. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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

struct sig {
	uint64_t off;
	const char *magic;
	size_t len;
	const char *what;
};

static const struct sig sigs[] = {
    {1080, "\x53\xef", 2, "an ext2/ext3/ext4 filesystem"},
    {0, "XFSB", 4, "an XFS filesystem"},
    {65600, "_BHRfS_M", 8, "a btrfs filesystem"},
    {512, "EFI PART", 8, "a GPT partition table"},
    {0, "LUKS\xba\xbe", 6, "a LUKS volume"},
    {3, "NTFS    ", 8, "an NTFS filesystem"},
    {3, "EXFAT   ", 8, "an exFAT filesystem"},
    {54, "FAT1", 4, "a FAT12/16 filesystem"},
    {82, "FAT32   ", 8, "a FAT32 filesystem"},
    {32769, "CD001", 5, "an ISO 9660 filesystem"},
    {4086, "SWAPSPACE2", 10, "a swap area"},
    {1024, "\x10\x20\xf5\xf2", 4, "an F2FS filesystem"},
};

static int signature(int fd, const char *path, struct bo_err *err)
{
	unsigned char *b = calloc(1, 66 << 10);
	if (!b)
		return -ENOMEM;
	ssize_t n = pread(fd, b, 66 << 10, 0);
	int rc = 0;
	for (size_t i = 0; n > 0 && rc == 0 && i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigs[i].off + sigs[i].len <= (uint64_t)n &&
		    memcmp(b + sigs[i].off, sigs[i].magic, sigs[i].len) == 0)
			rc =
			    bo_errf(err, -EEXIST,
			            "%s holds %s (signature at byte %llu): the probe would destroy "
			            "it. If its contents may go, pass --destroy-contents (or wipe "
			            "it first: wipefs -a %s)",
			            path, sigs[i].what, (unsigned long long)sigs[i].off, path);
	/* an MBR: the boot signature and at least one partition entry with a type */
	if (rc == 0 && n >= 512 && b[510] == 0x55 && b[511] == 0xaa &&
	    (b[446 + 4] || b[462 + 4] || b[478 + 4] || b[494 + 4]))
		rc = bo_errf(err, -EEXIST,
		             "%s holds a partition table (MBR): the probe would destroy it. If its "
		             "contents may go, pass --destroy-contents (or wipe it first: wipefs "
		             "-a %s)",
		             path, path);
	free(b);
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
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bo_errf(err, -errno, "%s: %s", path, strerror(errno));
	int rc = signature(fd, path, err);
	close(fd);
	return rc;
}
