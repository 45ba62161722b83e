/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_child.h — runs one measurement in a process of its own.
 *
 * On the virtual machines these benchmarks run on, unmapping memory (a device
 * closed, an image freed, a heap trimmed) makes the first touch of each page
 * afterwards cost microseconds for a while, and a process's heap carries that
 * history from one measurement into the next. A peer measured after the other's
 * frees would be measuring the machine's memory history, not the code; each
 * measurement in a fresh child measures every peer from the same start. */
#ifndef BLACKOUT_BENCH_CHILD_H
#define BLACKOUT_BENCH_CHILD_H

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs fn(ctx, out) in a child; its `len` result bytes come back into out.
 * Returns fn's result, or -1 when the child failed to report. */
static inline int bench_in_child(int (*fn)(void *ctx, void *out), void *ctx, void *out, size_t len)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		int rc = fn(ctx, out);
		ssize_t w = write(fd[1], out, len);
		_exit(rc == 0 && w == (ssize_t)len ? 0 : 1);
	}
	close(fd[1]);
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd[0], (char *)out + got, len - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd[0]);
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) || got != len)
		return -1;
	return 0;
}

#endif
