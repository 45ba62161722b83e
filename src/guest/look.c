// SPDX-License-Identifier: GPL-2.0-or-later
/* look.c — `bo-observe look DEV MOUNTPOINT FSTYPE OPTIONS TIMES`: one crash state's
 * mount (the filesystem's own recovery), the walk of what it holds and the unmount, in
 * this one static process. guest-init ran busybox mount, bo-observe and busybox umount
 * for that: three execs a state, each ~10-15 ms under TCG. The lines are the ones the
 * shell printed (docs/architecture.md, "Observation lines"):
 *   BO:OBS mount 0, the walk's lines, BO:OBS umount RC    or
 *   BO:OBS mount 255 mount: mounting DEV on MOUNTPOINT failed: ERROR
 * (busybox mount's status and words, so results do not depend on which path judged).
 * TIMES gets "MOUNT READ UMOUNT" in milliseconds for the guest's TIME line. Exit 0 when
 * the state was looked at, whatever the filesystem did; 1 when the walk ran out of
 * memory or a line could not be written; 2 on a usage error. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>

int bo_observe_tree(const char *root); /* observe.c */

/* mount(8)'s generic options become flags, as busybox mount does; the rest is the
 * filesystem's (data). */
static const struct {
	const char *name;
	unsigned long set, clear;
} flags[] = {
    {"defaults", 0, 0},
    {"rw", 0, MS_RDONLY},
    {"ro", MS_RDONLY, 0},
    {"sync", MS_SYNCHRONOUS, 0},
    {"async", 0, MS_SYNCHRONOUS},
    {"dirsync", MS_DIRSYNC, 0},
    {"noatime", MS_NOATIME, 0},
    {"atime", 0, MS_NOATIME},
    {"nodiratime", MS_NODIRATIME, 0},
    {"relatime", MS_RELATIME, 0},
    {"strictatime", MS_STRICTATIME, 0},
    {"lazytime", MS_LAZYTIME, 0},
    {"nosuid", MS_NOSUID, 0},
    {"nodev", MS_NODEV, 0},
    {"noexec", MS_NOEXEC, 0},
};

/* OPTIONS into *fl and data (at most len bytes); -1 when data does not fit. */
static int options(const char *opts, unsigned long *fl, char *data, size_t len)
{
	size_t n = 0;
	*fl = 0;
	data[0] = 0;
	for (const char *s = opts; *s;) {
		size_t l = strcspn(s, ",");
		size_t i;
		for (i = 0; i < sizeof flags / sizeof flags[0]; i++)
			if (strlen(flags[i].name) == l && !strncmp(flags[i].name, s, l))
				break;
		if (i < sizeof flags / sizeof flags[0]) {
			*fl = (*fl & ~flags[i].clear) | flags[i].set;
		} else if (l) {
			if (n + l + 2 > len)
				return -1;
			if (n)
				data[n++] = ',';
			memcpy(data + n, s, l);
			data[n += l] = 0;
		}
		s += l + (s[l] == ',');
	}
	return 0;
}

static long long ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_BOOTTIME, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int bo_look(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: bo-observe look DEV MOUNTPOINT FSTYPE OPTIONS TIMES\n");
		return 2;
	}
	const char *dev = argv[2], *mnt = argv[3], *type = argv[4], *opts = argv[5];
	unsigned long fl;
	char data[1024];
	if (options(opts, &fl, data, sizeof data)) {
		fprintf(stderr, "bo-observe look: mount options too long: %s\n", opts);
		return 2;
	}
	FILE *times = fopen(argv[6], "w");
	if (!times) {
		fprintf(stderr, "bo-observe look: %s: %s\n", argv[6], strerror(errno));
		return 2;
	}
	/* stdout is the guest's virtio console, a tty: line-buffered, every line of the
	 * walk would be one write and one transfer; the lines go out as the process ends,
	 * before the shell writes its next one */
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	long long t0 = ms(), t1, t2, t3;
	bool bad = false;
	if (mount(dev, mnt, type, fl, data[0] ? data : NULL)) {
		int e = errno;
		t1 = t2 = t3 = ms();
		printf("BO:OBS mount 255 mount: mounting %s on %s failed: %s\n", dev, mnt,
		       strerror(e));
	} else {
		t1 = ms();
		printf("BO:OBS mount 0\n");
		bad = bo_observe_tree(mnt) != 0;
		fflush(stdout);
		t2 = ms();
		int rc = umount(mnt) ? 1 : 0; /* busybox umount's status */
		t3 = ms();
		printf("BO:OBS umount %d\n", rc);
	}
	fprintf(times, "%lld %lld %lld\n", t1 - t0, t2 - t1, t3 - t2);
	bad |= fclose(times) != 0;
	return fflush(stdout) || bad ? 1 : 0;
}
