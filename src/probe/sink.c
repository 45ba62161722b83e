// SPDX-License-Identifier: GPL-2.0-or-later
/* sink.c — where the probe's acknowledgements go so that they survive the pull: a file
 * on another device, each line written O_DSYNC (the TCP sink and its listener are in
 * net.c, which the guest's static bo-probe leaves out). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/probe.h"
#include "blackout/util.h"

int probe_fd_emit(void *ctx, const char *line, size_t len)
{
	return bo_write_full(*(int *)ctx, line, len);
}

int probe_sink_file(const char *path, int *fd, struct probe_sink *s, struct bo_err *err)
{
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DSYNC | O_CLOEXEC, 0644);
	if (*fd < 0)
		return bo_errf(err, -errno,
		               "%s: %s: the log must be a file you can create, on a device other "
		               "than the one probed",
		               path, strerror(errno));
	s->emit = probe_fd_emit;
	s->ctx = fd;
	return 0;
}
