// SPDX-License-Identifier: GPL-2.0-or-later
/* prog.c — the host's side of carrying a user's program into the guest (blackout app):
 * refuse what cannot run there before any guest boots (not a regular executable file, a
 * library `ldd` cannot find, a script for another interpreter), then stage the program,
 * its checker and their libraries as a small cpio appended after the cached initramfs.
 * A --with directory (part of a server's tree: bin/, lib/ and share/ found relative to
 * each other) has its files carried at their host paths. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackout/app.h"

#define LDD_MAX (64u << 10)

void app_files_free(struct app_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->path[i]);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

static int files_add(struct app_files *f, const char *p, size_t len)
{
	for (size_t i = 0; i < f->n; i++)
		if (strlen(f->path[i]) == len && !memcmp(f->path[i], p, len))
			return 0;
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 16;
		char **np = realloc(f->path, nc * sizeof(*np));
		if (!np)
			return -ENOMEM;
		f->path = np;
		f->cap = nc;
	}
	if (!(f->path[f->n] = strndup(p, len)))
		return -ENOMEM;
	f->n++;
	return 0;
}

/* Runs argv with its standard output (and error) into buf (NUL-terminated, cut at
 * len - 1); *status its wait status. */
static int capture(char *const argv[], char *buf, size_t len, int *status)
{
	int fd[2];
	if (pipe(fd))
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(fd[0]);
		close(fd[1]);
		return e;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	size_t got = 0;
	for (;;) {
		char tmp[4096];
		ssize_t r = read(fd[0], tmp, sizeof(tmp));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t take = (size_t)r < len - 1 - got ? (size_t)r : len - 1 - got;
		memcpy(buf + got, tmp, take);
		got += take;
	}
	buf[got] = '\0';
	close(fd[0]);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* The libraries ldd names for an ELF: each "=> /path" and the loader's own line; a
 * "not found" refuses the program, naming the library. */
static int ldd_libs(const char *what, const char *path, struct app_files *libs, struct bo_err *err)
{
	char *out = malloc(LDD_MAX);
	if (!out)
		return -ENOMEM;
	int st, rc = capture((char *const[]){"ldd", (char *)path, NULL}, out, LDD_MAX, &st);
	if (rc) {
		free(out);
		return bo_errf(err, rc, "%s %s: cannot run ldd: %s", what, path, strerror(-rc));
	}
	if (strstr(out, "not a dynamic executable") || strstr(out, "statically linked")) {
		free(out);
		return 0; /* static: nothing to carry */
	}
	for (char *l = out, *nl; rc == 0 && *l; l = nl ? nl + 1 : l + strlen(l)) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		l += strspn(l, " \t");
		char *arrow = strstr(l, "=> ");
		if (strstr(l, "not found")) {
			size_t n = strcspn(l, " \t");
			rc = bo_errf(err, -ENOENT,
			             "%s %s: library %.*s not found (ldd): install it, or give the "
			             "program an environment where ldd finds it",
			             what, path, (int)n, l);
		} else if (arrow && arrow[3] == '/') {
			rc = files_add(libs, arrow + 3, strcspn(arrow + 3, " \t("));
		} else if (l[0] == '/') {
			rc = files_add(libs, l, strcspn(l, " \t("));
		}
	}
	if (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		rc = bo_errf(err, -EINVAL, "%s %s: ldd failed: %.200s", what, path, out);
	free(out);
	return rc;
}

int app_check_exec(const char *what, const char *path, struct app_files *libs, struct bo_err *err)
{
	struct stat sb;
	if (stat(path, &sb))
		return bo_errf(err, -errno, "%s %s: %s", what, path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return bo_errf(err, -EINVAL, "%s %s is not a regular file", what, path);
	if (!(sb.st_mode & 0111) || access(path, X_OK))
		return bo_errf(err, -EACCES, "%s %s is not executable (chmod +x?)", what, path);
	char head[128] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bo_errf(err, -errno, "%s %s: %s", what, path, strerror(errno));
	ssize_t r = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (r >= 4 && !memcmp(head, "\177ELF", 4))
		return ldd_libs(what, path, libs, err);
	if (r >= 2 && head[0] == '#' && head[1] == '!') {
		char *interp = head + 2 + strspn(head + 2, " \t");
		interp[strcspn(interp, " \t\r\n")] = '\0';
		if (strcmp(interp, "/bin/sh") && strcmp(interp, "/bin/ash"))
			return bo_errf(
			    err, -EINVAL,
			    "%s %s: a script for %s; the guest runs only /bin/sh "
			    "(busybox) scripts: carry an ELF interpreter with --with and "
			    "call it from a /bin/sh wrapper",
			    what, path, interp);
		return 0;
	}
	return bo_errf(err, -EINVAL, "%s %s is neither an ELF executable nor a #! script", what,
	               path);
}

static bool is_elf(const char *path)
{
	char head[4] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool elf = read(fd, head, sizeof(head)) == 4 && !memcmp(head, "\177ELF", 4);
	close(fd);
	return elf;
}

/* A symbolic link to a name in its own directory (postmaster -> postgres) stays a link,
 * not a second copy. */
static bool same_dir_link(const char *path)
{
	char t[256];
	ssize_t n = readlink(path, t, sizeof(t) - 1);
	if (n <= 0)
		return false;
	t[n] = '\0';
	return !strchr(t, '/') && strcmp(t, ".") && strcmp(t, "..");
}

/* The regular files of DIR into files (at their host paths, followed through symbolic
 * links), not its subdirectories: each is named with its own --with, so that a tree's
 * bulk nobody runs (a JIT's bitcode) stays out of every guest. An executable ELF among
 * them brings its libraries into libs; other ELF files (a server's plugins) go without
 * theirs, or an unused plugin would drag in what it links (a compiler library). */
static int dir_files(const char *dir, struct app_files *files, struct app_files *libs,
                     struct bo_err *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return bo_errf(err, -errno, "--with %s: %s", dir, strerror(errno));
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[4096];
		struct stat sb;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p))
			rc = bo_errf(err, -ENAMETOOLONG, "--with %s: a path is too long", dir);
		else if (same_dir_link(p))
			rc = files_add(files, p, strlen(p));
		else if (stat(p, &sb))
			rc = bo_errf(err, -errno, "--with %s: %s", p, strerror(errno));
		else if (!S_ISREG(sb.st_mode))
			continue;
		else if ((rc = files_add(files, p, strlen(p))) == 0 && (sb.st_mode & 0111) &&
		         is_elf(p))
			rc = ldd_libs("--with", p, libs, err);
	}
	closedir(d);
	return rc;
}

/* A --with: a directory's files, or an executable (checked like the program). */
static int with_check(const char *path, struct app_files *tree, struct app_files *libs,
                      struct bo_err *err)
{
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (path[0] != '/')
			return bo_errf(err, -EINVAL,
			               "--with %s: a directory is carried at its host path, so "
			               "give it as an absolute path",
			               path);
		return dir_files(path, tree, libs, err);
	}
	return app_check_exec("--with", path, libs, err);
}

/* Copies SRC to DST (made with mode). */
static int copy_file(const char *src, const char *dst, mode_t mode, struct bo_err *err)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return bo_errf(err, -errno, "cannot read %s: %s", src, strerror(errno));
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (out < 0) {
		int e = errno;
		close(in);
		return e == EEXIST ? 0 : bo_errf(err, -e, "cannot write %s: %s", dst, strerror(e));
	}
	char buf[65536];
	int rc = 0;
	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -errno : 0;
			break;
		}
		for (ssize_t o = 0; o < r && rc == 0;) {
			ssize_t w = write(out, buf + o, (size_t)(r - o));
			if (w < 0 && errno != EINTR)
				rc = -errno;
			o += w > 0 ? w : 0;
		}
		if (rc)
			break;
	}
	if (close(out) && !rc)
		rc = -errno;
	close(in);
	return rc ? bo_errf(err, rc, "copying %s to %s: %s", src, dst, strerror(-rc)) : 0;
}

int app_sh(const char *script, char *const args[], struct bo_err *err)
{
	char *argv[16] = {"sh", "-c", (char *)script, "sh"};
	size_t n = 4;
	for (size_t i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	char out[1024];
	int st, rc = capture(argv, out, sizeof(out), &st);
	if (rc)
		return bo_errf(err, rc, "cannot run sh: %s", strerror(-rc));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return bo_errf(err, -EIO, "%.300s", out[0] ? out : "a shell step failed");
	return 0;
}

/* FILE under DIR with TEXT. */
static int put_text(const char *dir, const char *name, const char *text, struct bo_err *err)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (!f)
		return bo_errf(err, -errno, "cannot write %s: %s", p, strerror(errno));
	int rc = fputs(text, f) < 0 ? -EIO : 0;
	if (fclose(f) && !rc)
		rc = -EIO;
	return rc ? bo_errf(err, rc, "writing %s failed", p) : 0;
}

/* /app/args.sh: `set -- 'ARG'...`, each argument single-quoted for sh. */
static int args_sh(const struct app_spec *s, const char *dir, struct bo_err *err)
{
	size_t len = 16;
	for (size_t i = 0; i < s->nargs; i++)
		len += 4 * strlen(s->args[i]) + 3;
	char *t = malloc(len), *o = t;
	if (!t)
		return -ENOMEM;
	o += sprintf(o, "set --");
	for (size_t i = 0; i < s->nargs; i++) {
		o += sprintf(o, " '");
		for (const char *c = s->args[i]; *c; c++)
			o += *c == '\'' ? sprintf(o, "'\\''") : sprintf(o, "%c", *c);
		*o++ = '\'';
	}
	strcpy(o, "\n");
	int rc = put_text(dir, "app/args.sh", t, err);
	free(t);
	return rc;
}

/* SRC into the per-run tree DIR at its own path, with MODE. */
static int put_at_path(const char *dir, const char *src, mode_t mode, struct bo_err *err)
{
	char p[4096];
	int rc;
	if (snprintf(p, sizeof(p), "%s%s", dir, src) >= (int)sizeof(p))
		return bo_errf(err, -ENAMETOOLONG, "a path is too long: %s", src);
	if ((rc = bo_mkdir_parent(p)))
		return bo_errf(err, rc, "cannot make the directory of %s", p);
	return copy_file(src, p, mode, err);
}

/* The files of the per-run tree: program, checker, --with executables, libraries,
 * the files of --with directories (their modes kept). */
static int stage_files(const struct app_spec *s, const char *dir, const struct app_files *libs,
                       const struct app_files *tree, struct bo_err *err)
{
	char p[4096];
	int rc = 0;
	snprintf(p, sizeof(p), "%s/app/bin/x", dir);
	if ((rc = bo_mkdir_parent(p)))
		return bo_errf(err, rc, "cannot make %s: %s", p, strerror(-rc));
	snprintf(p, sizeof(p), "%s/app/prog", dir);
	if ((rc = copy_file(s->prog, p, 0755, err)))
		return rc;
	snprintf(p, sizeof(p), "%s/app/checker", dir);
	if ((rc = copy_file(s->checker, p, 0755, err)))
		return rc;
	snprintf(p, sizeof(p), "%s/app/guest-app.sh", dir);
	if ((rc = copy_file(s->guest_sh, p, 0644, err)))
		return rc;
	for (size_t i = 0; i < s->nwith && rc == 0; i++) {
		struct stat sb;
		if (stat(s->with[i], &sb) == 0 && S_ISDIR(sb.st_mode))
			continue; /* its files are in tree */
		const char *b = strrchr(s->with[i], '/');
		snprintf(p, sizeof(p), "%s/app/bin/%s", dir, b ? b + 1 : s->with[i]);
		rc = copy_file(s->with[i], p, 0755, err);
	}
	for (size_t i = 0; i < libs->n && rc == 0; i++)
		rc = put_at_path(dir, libs->path[i], 0755, err);
	for (size_t i = 0; i < tree->n && rc == 0; i++) {
		struct stat sb;
		char t[256];
		if (same_dir_link(tree->path[i])) {
			ssize_t n = readlink(tree->path[i], t, sizeof(t) - 1);
			t[n > 0 ? n : 0] = '\0';
			snprintf(p, sizeof(p), "%s%s", dir, tree->path[i]);
			if ((rc = bo_mkdir_parent(p)))
				return bo_errf(err, rc, "cannot make the directory of %s", p);
			if (symlink(t, p) && errno != EEXIST)
				return bo_errf(err, -errno, "cannot make %s: %s", p,
				               strerror(errno));
			continue;
		}
		if (stat(tree->path[i], &sb))
			return bo_errf(err, -errno, "%s: %s", tree->path[i], strerror(errno));
		rc = put_at_path(dir, tree->path[i], sb.st_mode & 07777, err);
	}
	return rc;
}

int app_stage(const struct app_spec *s, const char *dir, const char *out, struct bo_err *err)
{
	struct app_files libs = {0}, tree = {0};
	int rc = app_check_exec("program", s->prog, &libs, err);
	if (rc == 0)
		rc = app_check_exec("checker", s->checker, &libs, err);
	for (size_t i = 0; rc == 0 && i < s->nwith; i++)
		rc = with_check(s->with[i], &tree, &libs, err);
	if (rc == 0 && mkdir(dir, 0755))
		rc = bo_errf(err, -errno, "cannot make %s: %s", dir, strerror(errno));
	if (rc == 0)
		rc = stage_files(s, dir, &libs, &tree, err);
	app_files_free(&libs);
	app_files_free(&tree);
	char env[128];
	snprintf(env, sizeof(env), "BO_APP_TIMEOUT=%u\nBO_APP_CHECK_TIMEOUT=%u\n", s->prog_timeout,
	         s->check_timeout);
	if (rc == 0)
		rc = put_text(dir, "app/env.sh", env, err);
	if (rc == 0)
		rc = args_sh(s, dir, err);
	if (rc == 0)
		rc = app_sh("cd \"$1\" && find . -mindepth 1 | sed 's|^\\./||' | "
		            "cpio -o -H newc --quiet >\"$2\"",
		            (char *const[]){(char *)dir, (char *)out, NULL}, err);
	return rc;
}
