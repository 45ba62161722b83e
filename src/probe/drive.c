// SPDX-License-Identifier: GPL-2.0-or-later
/* drive.c — the probe's write and verify runs on a real device, from a path to a
 * result: what `blackout probe write|verify` and the guest's static bo-probe both
 * call. It checks that the log is apart from the device probed; a mounted device
 * or one holding data (probe_safety_check) is the caller's check. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "blackout/probe.h"
#include "blackout/util.h"

/* The whole disk a block device number belongs to (a partition's parent), as sysfs
 * tells it; the number itself when sysfs has no answer. */
static dev_t whole_disk(dev_t d)
{
	char link[64], path[PATH_MAX], dev[32];
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(d), minor(d));
	if (!realpath(link, path))
		return d;
	char part[PATH_MAX + 16];
	snprintf(part, sizeof(part), "%s/partition", path);
	if (access(part, F_OK) != 0)
		return d;
	char *slash = strrchr(path, '/');
	if (!slash)
		return d;
	snprintf(slash, sizeof(path) - (size_t)(slash - path), "/dev");
	FILE *f = fopen(path, "r");
	unsigned ma, mi;
	bool got = f && fgets(dev, sizeof(dev), f) && sscanf(dev, "%u:%u", &ma, &mi) == 2;
	if (f)
		fclose(f);
	return got ? makedev(ma, mi) : d;
}

int probe_log_apart(const char *dev, const char *log, struct bo_err *err)
{
	struct stat d, l;
	if (stat(dev, &d) != 0)
		return bo_errf(err, -errno, "%s: %s", dev, strerror(errno));
	/* a log not made yet lives on its directory's file system */
	if (stat(log, &l) != 0) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", log);
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = '\0';
		if (stat(slash ? dir : ".", &l) != 0)
			return 0; /* the sink names what is wrong with the path */
		l.st_ino = 0;
	}
	if (l.st_ino && l.st_dev == d.st_dev && l.st_ino == d.st_ino)
		return bo_errf(err, -EINVAL,
		               "--log %s is the device probed itself: the log must be on "
		               "another device, one the pull does not take",
		               log);
	if (S_ISBLK(d.st_mode)) {
		dev_t probed = whole_disk(d.st_rdev);
		bool same = (S_ISBLK(l.st_mode) && whole_disk(l.st_rdev) == probed) ||
		            whole_disk(l.st_dev) == probed;
		if (same)
			return bo_errf(err, -EINVAL,
			               "--log %s is on the disk probed (%u:%u): the log must be "
			               "on another device, one the pull does not take",
			               log, major(probed), minor(probed));
	}
	return 0;
}

static int settle(void *ctx)
{
	const struct probe_write_opts *o = ctx;
	FILE *say = o->status ? o->status : stderr;
	if (o->settle) {
		fprintf(say,
		        "probe: pattern laid and flushed; idle %llu s so a lying cache "
		        "writes it back\n",
		        (unsigned long long)o->settle);
		sleep((unsigned)o->settle);
	}
	if (o->on_ready) {
		fflush(NULL);
		int rc = system(o->on_ready);
		if (rc != 0) {
			fprintf(
			    say,
			    "probe: --on-ready command failed (status %d): stream not started\n",
			    rc);
			return -ECANCELED;
		}
	}
	fprintf(say, "probe: PULL THE POWER NOW (the stream of writes is running)\n");
	return 0;
}

int probe_write_device(const struct probe_write_opts *o, const struct probe_sink *sink,
                       struct probe_stream *st, struct bo_err *err)
{
	memset(st, 0, sizeof(*st));
	if (o->offset % PROBE_BLOCK || o->size % PROBE_BLOCK)
		return bo_errf(err, -EINVAL, "--offset and --size must be multiples of 4096");
	struct bdev *d;
	int rc = probe_fd_open(o->dev, true, &d, err);
	if (rc)
		return rc;
	uint64_t bytes = blk_size_bytes(d);
	if (o->offset >= bytes) {
		blk_close(d);
		return bo_errf(err, -EINVAL, "--offset %llu is past the end of %s (%llu bytes)",
		               (unsigned long long)o->offset, o->dev, (unsigned long long)bytes);
	}
	uint64_t size = o->size ? o->size : bytes - o->offset;
	if (!o->size && size > PROBE_DEFAULT_REGION)
		size = PROBE_DEFAULT_REGION;
	if (size > bytes - o->offset) {
		blk_close(d);
		return bo_errf(err, -EINVAL,
		               "--offset + --size pass the end of %s (%llu bytes): the probe "
		               "never writes outside the device",
		               o->dev, (unsigned long long)bytes);
	}
	uint64_t run = 0;
	if (getrandom(&run, sizeof(run), 0) != sizeof(run))
		run = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	run |= 1;
	struct probe_stream_opts so = {.run = run,
	                               .seed = o->seed_given ? o->seed : run,
	                               .first_block = o->offset / PROBE_BLOCK,
	                               .blocks = size / PROBE_BLOCK,
	                               .max_ops = o->ops,
	                               .max_write = PROBE_MAX_WRITE,
	                               .after_base = settle,
	                               .ctx = (void *)o};
	rc = probe_stream_run(d, &so, sink, st, err);
	probe_stream_free(st); /* the counts stay */
	blk_close(d);
	return rc;
}

int probe_write_logged(const struct probe_write_opts *o, struct probe_stream *st,
                       struct bo_err *err)
{
	memset(st, 0, sizeof(*st));
	int rc = probe_log_apart(o->dev, o->log, err);
	if (rc)
		return rc;
	int fd = -1;
	struct probe_sink sink;
	if ((rc = probe_sink_file(o->log, &fd, &sink, err)))
		return rc;
	rc = probe_write_device(o, &sink, st, err);
	close(fd);
	return rc;
}

int probe_verify_device(const char *dev, const char *log, struct probe_verdict *v,
                        struct bo_err *err)
{
	char *text;
	size_t len;
	int rc = bo_read_file(log, PROBE_LOG_MAX_BYTES, &text, &len, err);
	if (rc)
		return rc;
	struct probe_log l;
	rc = probe_log_parse(text, len, &l, err);
	free(text);
	if (rc) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "%s", bo_errstr(err, rc));
		return bo_errf(err, rc, "%s: %s", log, m);
	}
	struct bdev *d;
	rc = probe_fd_open(dev, false, &d, err);
	if (rc == 0) {
		rc = probe_verify(d, &l, v, err);
		blk_close(d);
	}
	probe_log_free(&l);
	return rc;
}
