// SPDX-License-Identifier: GPL-2.0-or-later
/* proc.c — the pool's child processes (qemu, nbdkit): started so that none outlives
 * the caller, killed and reaped on every path. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vm/vm_int.h"

double vm_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int vm_spawn(char *const argv[], const char *logpath, pid_t *pid, struct bo_err *err)
{
	int log = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0)
		return bo_errf(err, -errno, "%s: %s", logpath, strerror(errno));
	pid_t parent = getpid();
	pid_t p = fork();
	if (p < 0) {
		int e = errno;
		close(log);
		return bo_errf(err, -e, "fork: %s", strerror(e));
	}
	if (p == 0) {
		/* Dies with the thread that started it, whatever killed that thread; and
		 * if the parent is already gone, does not start at all. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		/* the caller's blocked or ignored signals must not stop a kill */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		int in = open("/dev/null", O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(log);
	*pid = p;
	return 0;
}

void vm_kill(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
		;
	*pid = 0;
}

bool vm_exited(pid_t *pid, int *status)
{
	if (*pid <= 0)
		return true;
	int st = 0;
	pid_t r = waitpid(*pid, &st, WNOHANG);
	if (r == *pid || (r < 0 && errno == ECHILD)) {
		*pid = 0;
		if (status)
			*status = st;
		return true;
	}
	return false;
}
