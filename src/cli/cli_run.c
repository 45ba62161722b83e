// SPDX-License-Identifier: GPL-2.0-or-later
/* cli_run.c — what the commands that drive other programs and save results share:
 * running a helper script to completion, writing a crash result's JSON, and the
 * closing report of a real-kernel exploration (vmtest, app). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/crash.h"
#include "blackout/vmexplore.h"
#include "cli/cli.h"

int cli_run(const char *cmd, const char *what, char *const argv[], bool quiet)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return cli_fail(cmd, "cannot start %s: %s", what, strerror(errno));
	if (pid == 0) {
		if (quiet)
			dup2(2, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "blackout %s: cannot run %s: %s\n", cmd, argv[0], strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return cli_fail(cmd, "waiting for %s: %s", what, strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	return cli_fail(cmd, "%s failed (%s %d)", what, WIFEXITED(st) ? "exit" : "signal",
	                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

int cli_write_result(const char *cmd, const struct crash_result *r, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!f)
		return cli_fail(cmd, "cannot write %s: %s", path, strerror(errno));
	int rc = crash_result_write_json(r, f);
	if (f != stdout && fclose(f))
		rc = -EIO;
	return rc ? cli_fail(cmd, "writing %s failed", path) : 0;
}

int cli_vm_report(const char *cmd, struct crash_result *r, const struct vm_explore_info *info,
                  const char *json, cli_vm_printer extra)
{
	FILE *t = json && strcmp(json, "-") == 0 ? stderr : stdout;
	crash_result_print(r, t);
	extra(info, r, t);
	int status = json ? cli_write_result(cmd, r, json) : 0;
	fprintf(t, "logs, states and results: %s\n", info->outdir);
	if (status == 0 && r->judged != r->ok)
		status = 3;
	crash_result_free(r);
	return status;
}
