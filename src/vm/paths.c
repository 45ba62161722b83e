// SPDX-License-Identifier: GPL-2.0-or-later
/* paths.c — where the real-kernel harness lives: the scripts directory (scripts/vmrecord,
 * vm-build, vmtest) found from the running executable, and BUILD (the plugin, the kernel
 * cache) that those scripts read from the environment. Below the CLI so the library's
 * callers (the CLI, the matrix) find them alike. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/vmexplore.h"

#ifndef BLACKOUT_LIBEXECDIR
#define BLACKOUT_LIBEXECDIR "/usr/local/lib/blackout"
#endif

/* The source tree: $BLACKOUT_SRC, else up from the running program (build/blackout,
 * build/asan/blackout ...) to the directory holding scripts/vmtest; else the harness
 * `make install` put in LIBEXECDIR (*installed set). */
static int find_src(char *out, size_t len, bool *installed)
{
	const char *env = getenv("BLACKOUT_SRC");
	char exe[PATH_MAX];
	if (env && *env)
		return snprintf(out, len, "%s", env) < (int)len ? 0 : -ENAMETOOLONG;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	for (int up = 0; up < 4; up++) {
		char *slash = strrchr(exe, '/');
		if (!slash)
			break;
		*slash = '\0';
		char probe[PATH_MAX + 32];
		snprintf(probe, sizeof probe, "%s/scripts/vmtest", exe);
		if (access(probe, X_OK) == 0)
			return snprintf(out, len, "%s", exe) < (int)len ? 0 : -ENAMETOOLONG;
		/* BINDIR/../lib/blackout: a relocated or DESTDIR install */
		snprintf(probe, sizeof probe, "%s/lib/blackout/scripts/vmtest", exe);
		if (up == 1 && access(probe, X_OK) == 0) {
			*installed = true;
			return snprintf(out, len, "%s/lib/blackout", exe) < (int)len
			           ? 0
			           : -ENAMETOOLONG;
		}
	}
	if (access(BLACKOUT_LIBEXECDIR "/scripts/vmtest", X_OK) == 0) {
		*installed = true;
		return snprintf(out, len, "%s", BLACKOUT_LIBEXECDIR) < (int)len ? 0 : -ENAMETOOLONG;
	}
	return -ENOENT;
}

/* An installed blackout cannot write beside itself: the kernel cache and the logs go
 * to ${XDG_CACHE_HOME:-~/.cache}/blackout, where the scripts find the binary and the
 * plugin through two links. */
static void use_cache_dir(const char *libexec)
{
	char dir[PATH_MAX], exe[PATH_MAX], tmp[PATH_MAX + 64], link[PATH_MAX + 64];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(dir, sizeof dir, "%s", xdg);
	else
		snprintf(dir, sizeof dir, "%s/.cache", home && *home ? home : "/tmp");
	mkdir(dir, 0755);
	strncat(dir, "/blackout", sizeof dir - strlen(dir) - 1);
	mkdir(dir, 0755);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	const char *names[2] = {"blackout", "blackout-nbdkit.so"};
	char plugin[PATH_MAX + 32];
	snprintf(plugin, sizeof plugin, "%s/blackout-nbdkit.so", libexec);
	const char *targets[2] = {exe, plugin};
	for (int i = 0; i < 2; i++) { /* renamed into place: concurrent runs agree */
		snprintf(tmp, sizeof tmp, "%s/.%s.%ld", dir, names[i], (long)getpid());
		snprintf(link, sizeof link, "%s/%s", dir, names[i]);
		if (symlink(targets[i], tmp) == 0 && rename(tmp, link) < 0)
			unlink(tmp);
	}
	setenv("BUILD", dir, 1);
}

int vm_scripts_dir(char *dir, size_t len)
{
	char src[PATH_MAX];
	bool installed = false;
	int rc = find_src(src, sizeof src, &installed);
	if (rc)
		return rc;
	if (snprintf(dir, len, "%s/scripts", src) >= (int)len)
		return -ENAMETOOLONG;
	if (installed && !getenv("BUILD"))
		use_cache_dir(src);
	if (!getenv("BUILD")) {
		/* the plugin and the caches live beside this executable */
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n > 0) {
			exe[n] = '\0';
			char *slash = strrchr(exe, '/');
			if (slash) {
				*slash = '\0';
				setenv("BUILD", exe, 1);
			}
		}
	}
	return 0;
}

const char *vm_kernel_cache(const char *series)
{
	if (!series || !strcmp(series, "6.1"))
		return "vm";
	if (!strcmp(series, "6.12"))
		return "vm-6.12";
	return NULL;
}

int vm_kernel_release(const char *vmdir, char *buf, size_t len, struct bo_err *err)
{
	char p[PATH_MAX + 16];
	snprintf(p, sizeof p, "%s/kver", vmdir);
	FILE *f = fopen(p, "r");
	if (!f)
		return bo_errf(err, -ENOENT, "%s: %s (scripts/vm-build writes it)", p,
		               strerror(errno));
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	/* a release names a file under /lib/modules: nothing else may pass into results */
	if (!buf[0] || strspn(buf, "abcdefghijklmnopqrstuvwxyz0123456789.+_-") != strlen(buf))
		return bo_errf(err, -EINVAL, "%s: not a kernel release", p);
	return 0;
}
