// SPDX-License-Identifier: GPL-2.0-or-later
/* dm.c — bo-observe's device-mapper calls (static, in the judge guest): `snap NAME
 * SECTORS ORIGIN COW [DELTADEV OFFSET]` makes the state's dm-snapshot, or loads it in
 * place of the one NAME held (and writes the state's delta onto it, in the same
 * process), `linear NAME SECTORS DEV START ...` maps a state's md members (one linear
 * target each) and `unsnap [--klog] [NAME...]` removes them with the kernel's dm
 * ioctls, where exec'ing the dynamically linked dmsetup cost 50-70 ms a time under TCG;
 * with --klog it first reads and clears the kernel's log and says whether a snapshot
 * was invalidated (where the guest ran `dmesg -c`), with no NAME that alone. Each
 * failure names the call and the kernel's errno. Exit status: 0, 1 a device failed
 * (nothing left behind), 2 usage, 3 the delta's apply failed, 4 a snapshot was
 * invalidated. */
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define CONTROL "/dev/mapper/control"

/* The ioctl buffer: the header, then (for a table) one target and its parameters. */
struct dm_buf {
	struct dm_ioctl io;
	struct dm_target_spec spec;
	char params[512];
};

/* /dev/mapper/control, made from /proc/misc's minor when devtmpfs has not. */
static int control_open(void)
{
	int fd = open(CONTROL, O_RDWR | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	FILE *f = fopen("/proc/misc", "r");
	unsigned minor = 0;
	char name[64];
	bool found = false;
	while (f && fscanf(f, "%u %63s", &minor, name) == 2)
		if (strcmp(name, "device-mapper") == 0) {
			found = true;
			break;
		}
	if (f)
		fclose(f);
	if (!found) {
		errno = ENODEV; /* dm-mod not loaded */
		return -1;
	}
	mkdir("/dev/mapper", 0755);
	if (mknod(CONTROL, S_IFCHR | 0600, makedev(10, minor)) && errno != EEXIST)
		return -1;
	return open(CONTROL, O_RDWR | O_CLOEXEC);
}

static void dm_init(struct dm_buf *b, const char *name, size_t size)
{
	memset(b, 0, sizeof(*b));
	b->io.version[0] = DM_VERSION_MAJOR; /* the kernel takes any minor up to its own */
	b->io.data_size = (uint32_t)size;
	b->io.data_start = sizeof(b->io);
	snprintf(b->io.name, sizeof(b->io.name), "%s", name);
}

static int dm_call(int fd, unsigned long req, struct dm_buf *b, const char *what, const char *name)
{
	if (ioctl(fd, req, &b->io) == 0)
		return 0;
	fprintf(stderr, "bo-observe: %s %s: %s\n", what, name, strerror(errno));
	return -1;
}

static int dm_remove(int fd, const char *name)
{
	struct dm_buf b;
	dm_init(&b, name, sizeof(b.io));
	int rc = dm_call(fd, DM_DEV_REMOVE, &b, "DM_DEV_REMOVE", name);
	char node[256];
	snprintf(node, sizeof node, "/dev/mapper/%s", name);
	unlink(node);
	return rc;
}

/* A sector count or start: decimal, the whole word. */
static int parse_sectors(const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || end == s || *s == '-' ? -1 : 0;
}

/* /dev/mapper/NAME: one target TYPE PARAMS over [0, len) sectors, live. With reuse, a
 * device NAME that exists already gets the new table in place of its old one (loaded,
 * then swapped in by the resume): removing a device cost ~20 ms of kernel time a state
 * under TCG (del_gendisk waits out RCU grace periods), a swap ~5-15. Returns 0, 1 when
 * the kernel refused (nothing left behind: a device it refused to reload is removed),
 * 2 when the parameters are too long for the buffer. */
static int dm_make(int fd, const char *what, const char *name, unsigned long long len,
                   const char *type, const char *params, bool reuse)
{
	struct dm_buf b;
	dm_init(&b, name, sizeof(b.io));
	bool fresh = true;
	if (ioctl(fd, DM_DEV_CREATE, &b.io)) {
		if (!reuse || errno != EBUSY) {
			fprintf(stderr, "bo-observe: DM_DEV_CREATE %s: %s\n", name,
			        strerror(errno));
			return 1;
		}
		fresh = false; /* it exists: reload it, unless something still has it open
		                * (a filesystem left mounted would see the next state's
		                * blocks under its cache) */
		dm_init(&b, name, sizeof(b.io));
		if (dm_call(fd, DM_DEV_STATUS, &b, "DM_DEV_STATUS", name))
			return 1;
		if (b.io.open_count > 0) {
			fprintf(stderr, "bo-observe %s: %s is still open (%d): not reloaded\n",
			        what, name, b.io.open_count);
			return 1;
		}
	}
	dev_t dev = (dev_t)b.io.dev;
	dm_init(&b, name, sizeof(b));
	b.io.data_start = offsetof(struct dm_buf, spec);
	b.io.target_count = 1;
	b.spec.sector_start = 0;
	b.spec.length = len;
	snprintf(b.spec.target_type, sizeof(b.spec.target_type), "%s", type);
	if ((size_t)snprintf(b.params, sizeof(b.params), "%s", params) >= sizeof(b.params)) {
		fprintf(stderr, "bo-observe %s: device paths too long\n", what);
		dm_remove(fd, name);
		return 2;
	}
	char node[256];
	snprintf(node, sizeof node, "/dev/mapper/%s", name);
	int rc = dm_call(fd, DM_TABLE_LOAD, &b, "DM_TABLE_LOAD", name);
	if (rc == 0) {
		/* no DM_SUSPEND_FLAG: resume, the loaded table goes live (a live device is
		 * suspended first, with nothing mounted on it to freeze) */
		dm_init(&b, name, sizeof(b.io));
		b.io.flags = DM_SKIP_LOCKFS_FLAG;
		rc = dm_call(fd, DM_DEV_SUSPEND, &b, "DM_DEV_SUSPEND (resume)", name);
	}
	if (rc == 0 && fresh && mknod(node, S_IFBLK | 0600, dev) && errno != EEXIST) {
		fprintf(stderr, "bo-observe %s: mknod %s: %s\n", what, node, strerror(errno));
		rc = -1;
	}
	if (rc)
		dm_remove(fd, name);
	return rc ? 1 : 0;
}

/* snap NAME SECTORS ORIGIN COW: a transient (N) snapshot of ORIGIN, 4 KiB chunks,
 * exceptions on COW, as /dev/mapper/NAME; a NAME that exists is reloaded with the new
 * snapshot. Its COW must not be the one the old table uses: a snapshot loaded over one
 * on the same COW takes over its exceptions (dm-snapshot's handover), so the caller
 * alternates two. */
static int snap(const char *name, const char *sectors, const char *origin, const char *cow)
{
	unsigned long long len;
	if (parse_sectors(sectors, &len) || len == 0 || strlen(name) >= DM_NAME_LEN) {
		fprintf(stderr, "bo-observe snap: bad name or sector count '%s'\n", sectors);
		return 2;
	}
	int fd = control_open();
	if (fd < 0) {
		fprintf(stderr, "bo-observe snap: %s: %s\n", CONTROL, strerror(errno));
		return 1;
	}
	char params[sizeof(((struct dm_buf *)0)->params) + 1];
	int rc = 2;
	if ((size_t)snprintf(params, sizeof(params), "%s %s N 8", origin, cow) < sizeof(params))
		rc = dm_make(fd, "snap", name, len, "snapshot", params, true);
	else
		fprintf(stderr, "bo-observe snap: device paths too long\n");
	close(fd);
	return rc;
}

/* linear NAME SECTORS DEV START [NAME SECTORS DEV START ...]: each NAME maps SECTORS
 * sectors of DEV from START (an md member of a state's snapshot). All or none: on a
 * failure the maps already made are removed. */
static int linear(int argc, char **argv)
{
	if (argc < 6 || (argc - 2) % 4) {
		fprintf(stderr, "bo-observe linear: NAME SECTORS DEV START, one group per map\n");
		return 2;
	}
	for (int i = 2; i < argc; i += 4) {
		unsigned long long len, start;
		if (strlen(argv[i]) >= DM_NAME_LEN || parse_sectors(argv[i + 1], &len) ||
		    len == 0 || parse_sectors(argv[i + 3], &start)) {
			fprintf(
			    stderr,
			    "bo-observe linear: bad name, sector count or start in '%s %s %s %s'\n",
			    argv[i], argv[i + 1], argv[i + 2], argv[i + 3]);
			return 2;
		}
	}
	int fd = control_open();
	if (fd < 0) {
		fprintf(stderr, "bo-observe linear: %s: %s\n", CONTROL, strerror(errno));
		return 1;
	}
	int rc = 0, made = 2;
	for (; rc == 0 && made < argc; made += 4) {
		char params[sizeof(((struct dm_buf *)0)->params) + 1];
		unsigned long long len;
		parse_sectors(argv[made + 1], &len);
		if ((size_t)snprintf(params, sizeof(params), "%s %s", argv[made + 2],
		                     argv[made + 3]) >= sizeof(params)) {
			fprintf(stderr, "bo-observe linear: device paths too long\n");
			rc = 2;
			break;
		}
		rc = dm_make(fd, "linear", argv[made], len, "linear", params, false);
		if (rc)
			break;
	}
	if (rc)
		for (int i = 2; i < made; i += 4)
			dm_remove(fd, argv[i]);
	close(fd);
	return rc;
}

/* The first line of the kernel's report of a bug it hit: a WARN, a BUG, an oops, a
 * fault, a sanitizer. Each report's first line names what and where. */
static const char *const kernel_bug[] = {
    "WARNING: CPU:", "BUG: ",  "kernel BUG at ", "Oops: ", "general protection fault",
    "UBSAN: ",       "KASAN: "};

/* Prints "BO:OBS kernel LINE" for the first 4 such lines of buf (guest-init sends this
 * command's output to the host as the state's observation). */
static void kernel_reports(const char *buf)
{
	int n = 0;
	for (const char *p = buf; *p && n < 4;) {
		size_t l = strcspn(p, "\n");
		for (size_t k = 0; k < sizeof kernel_bug / sizeof *kernel_bug; k++) {
			const char *m = memmem(p, l, kernel_bug[k], strlen(kernel_bug[k]));
			if (m) {
				size_t rest = l - (size_t)(m - p);
				printf("BO:OBS kernel %.*s\n", (int)(rest > 200 ? 200 : rest), m);
				n++;
				break;
			}
		}
		p += l + (p[l] == '\n');
	}
	fflush(stdout);
}

/* Reads and clears the kernel's log (dmesg -c in one syscall) and reports the bugs the
 * kernel said it hit (kernel_reports): 1 and the line when a snapshot was invalidated
 * since the last read (its exception store could not take a chunk: I/O failed that the
 * filesystem did not cause), 0 when not, -errno. The kernel says both at KERN_ERR or
 * KERN_WARNING, which the guest's quiet console does not show. */
static int invalidated(char *line, size_t len)
{
	static char buf[1 << 18];
	int n = klogctl(4 /* SYSLOG_ACTION_READ_CLEAR */, buf, (int)sizeof buf - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	kernel_reports(buf);
	char *p = strstr(buf, "Invalidating snapshot");
	if (!p)
		return 0;
	while (p > buf && p[-1] != '\n')
		p--;
	snprintf(line, len, "%.*s", (int)strcspn(p, "\n"), p);
	return 1;
}

int bo_apply(int argc, char **argv); /* apply.c */

int bo_dm(int argc, char **argv)
{
	if ((argc == 6 || argc == 8) && strcmp(argv[1], "snap") == 0) {
		int rc = snap(argv[2], argv[3], argv[4], argv[5]);
		if (rc || argc == 6)
			return rc;
		char node[256];
		snprintf(node, sizeof node, "/dev/mapper/%s", argv[2]);
		char *av[] = {argv[0], "apply", argv[6], argv[7], node, NULL};
		return bo_apply(5, av) ? 3 : 0;
	}
	if (argc >= 2 && strcmp(argv[1], "linear") == 0)
		return linear(argc, argv);
	if (argc >= 3 && strcmp(argv[1], "unsnap") == 0) {
		bool klog = strcmp(argv[2], "--klog") == 0;
		char line[256] = "";
		int inval = klog ? invalidated(line, sizeof line) : 0;
		int fd = control_open();
		if (fd < 0) {
			fprintf(stderr, "bo-observe unsnap: %s: %s\n", CONTROL, strerror(errno));
			return 1;
		}
		int rc = 0;
		for (int i = 2 + klog; i < argc; i++) /* each one tried: what can go, goes */
			rc |= dm_remove(fd, argv[i]);
		close(fd);
		if (inval < 0)
			fprintf(stderr, "bo-observe unsnap: cannot read the kernel's log: %s\n",
			        strerror(-inval));
		else if (inval)
			fprintf(stderr, "the kernel invalidated the snapshot: %s\n", line);
		return inval ? 4 : rc ? 1 : 0;
	}
	fprintf(stderr, "usage: bo-observe snap NAME SECTORS ORIGIN COW [DELTADEV OFFSET] | "
	                "bo-observe linear NAME SECTORS DEV START... | bo-observe unsnap [--klog] "
	                "[NAME...]\n");
	return 2;
}
