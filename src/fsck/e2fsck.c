// SPDX-License-Identifier: GPL-2.0-or-later
/* e2fsck.c — runs e2fsprogs' e2fsck on an image and judges its output strictly
 * (see e2fsck.h). Executes it directly (no shell), so no path is ever interpreted. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/e2fsck.h"

static bool starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

bool e2fsck_line_is_clean(const char *line)
{
	if (!*line)
		return true;
	/* "e2fsck 1.47.0 (5-Feb-2023)" */
	if (starts_with(line, "e2fsck ") && isdigit((unsigned char)line[7]))
		return true;
	/* "Pass 1: Checking inodes, blocks, and sizes" ... "Pass 5: Checking group ..." */
	static const char *const passes[] = {
	    "Pass 1: Checking inodes, blocks, and sizes", "Pass 2: Checking directory structure",
	    "Pass 3: Checking directory connectivity",    "Pass 4: Checking reference counts",
	    "Pass 5: Checking group summary information",
	};
	for (size_t i = 0; i < sizeof(passes) / sizeof(passes[0]); i++)
		if (strcmp(line, passes[i]) == 0)
			return true;
	/* "IMAGE: 11/2048 files (0.0% non-contiguous), 1234/8192 blocks" */
	const char *f = strstr(line, " files (");
	const char *b = strstr(line, " blocks");
	if (f && b && b > f && strcmp(b, " blocks") == 0 && strstr(line, "% non-contiguous), "))
		return true;
	return false;
}

void e2fsck_verdict_free(struct e2fsck_verdict *v)
{
	free(v->output);
	v->output = NULL;
}

int e2fsck_run(const char *image, const char *const *args, struct e2fsck_verdict *v,
               struct bo_err *err)
{
	static const char *const def[] = {"-fn", NULL};
	memset(v, 0, sizeof(*v));
	if (!args)
		args = def;
	const char *argv[32];
	int n = 0;
	argv[n++] = "e2fsck";
	for (int i = 0; args[i] && n < 30; i++)
		argv[n++] = args[i];
	argv[n++] = image;
	argv[n] = NULL;

	int pipefd[2];
	if (pipe(pipefd) < 0)
		return bo_errf(err, -errno, "e2fsck: pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return bo_errf(err, -e, "e2fsck: fork: %s", strerror(e));
	}
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		close(pipefd[1]);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		setenv("E2FSCK_CONFIG", "/dev/null", 1);
		execvp("/usr/sbin/e2fsck", (char *const *)argv);
		execvp("e2fsck", (char *const *)argv);
		_exit(127);
	}
	close(pipefd[1]);
	size_t cap = 4096, len = 0;
	char *out = malloc(cap);
	for (;;) {
		if (!out)
			break;
		if (len + 1024 > cap) {
			char *nb = realloc(out, cap * 2);
			if (!nb) {
				free(out);
				out = NULL;
				break;
			}
			out = nb;
			cap *= 2;
		}
		ssize_t r = read(pipefd[0], out + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(pipefd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!out)
		return -ENOMEM;
	out[len] = 0;
	v->output = out;
	v->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	if (v->exit_code == 127)
		return bo_errf(err, -ENOENT, "e2fsck not found (install e2fsprogs)");
	v->clean = v->exit_code == 0;
	/* judge every line, the first offending one is kept for messages */
	char *save = NULL, *copy = strdup(out);
	if (!copy)
		return -ENOMEM;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!e2fsck_line_is_clean(line)) {
			if (v->clean || !v->first_problem[0])
				snprintf(v->first_problem, sizeof(v->first_problem), "%s", line);
			v->clean = false;
			break;
		}
	}
	free(copy);
	if (!v->clean && !v->first_problem[0])
		snprintf(v->first_problem, sizeof(v->first_problem), "e2fsck exited %d",
		         v->exit_code);
	return 0;
}

int e2fsck_run_bdev(struct bdev *d, const char *const *args, struct e2fsck_verdict *v,
                    struct bo_err *err)
{
	char path[] = "/tmp/blackout-e2fsck-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return bo_errf(err, -errno, "e2fsck: temporary image: %s", strerror(errno));
	size_t chunk = 1 << 20;
	unsigned char *buf = malloc(chunk);
	int rc = buf ? 0 : -ENOMEM;
	uint64_t total = blk_size_bytes(d);
	for (uint64_t off = 0; rc == 0 && off < total; off += chunk) {
		size_t n = total - off < chunk ? (size_t)(total - off) : chunk;
		rc = blk_pread(d, off, n, buf);
		if (rc) {
			bo_errf(err, rc, "e2fsck: reading %s at byte %llu: %s", d->name,
			        (unsigned long long)off, bo_errstr(&d->err, rc));
			break;
		}
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			rc = bo_errf(err, -EIO, "e2fsck: writing the temporary image failed");
	}
	free(buf);
	close(fd);
	if (rc == 0)
		rc = e2fsck_run(path, args, v, err);
	unlink(path);
	return rc;
}
