/* guest.c — one judging guest's life: qemu started with bo.mode=judge (the command
 * line of scripts/vmtest --attach nbd, but nbdkit behind guestfwd directly), its
 * command port a Unix socket qemu connects to, its console a file read back for a
 * panic's message; killed and reaped. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vm/vm_int.h"

/* The guest's RAM: the initramfs (busybox, the fs tools) unpacks into it; ext4,
 * e2fsck and the page cache of a small state fit in the rest. */
#define GUEST_MEM "192"

static int listen_on(const char *path, int *fd, struct bo_err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		return bo_errf(err, -ENAMETOOLONG,
		               "%s: socket path too long (use a shorter workdir)", path);
	strcpy(sa.sun_path, path);
	unlink(path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 1) < 0) {
		int e = errno;
		if (s >= 0)
			close(s);
		return bo_errf(err, -e, "%s: %s", path, strerror(e));
	}
	*fd = s;
	return 0;
}

int vm_guest_boot(const struct vm_pool_cfg *cfg, struct vm_guest *g, struct bo_err *err)
{
	g->boots++;
	snprintf(g->sock, sizeof g->sock, "%s/g%u.sock", cfg->workdir, g->slot);
	snprintf(g->console, sizeof g->console, "%s/g%u-%u.console", cfg->workdir, g->slot,
	         g->boots);
	snprintf(g->log, sizeof g->log, "%s/g%u.qemu.log", cfg->workdir, g->slot);
	int rc = listen_on(g->sock, &g->lfd, err);
	if (rc)
		return rc;
	char append[512], chardev[600], serial[600], netdev[800];
	snprintf(append, sizeof append,
	         "console=ttyS0 quiet loglevel=3 panic=-1 bo.mode=judge bo.attach=nbd bo.fs=%s "
	         "bo.mopt=%s",
	         cfg->fs, cfg->mopt && *cfg->mopt ? cfg->mopt : "defaults");
	snprintf(chardev, sizeof chardev, "socket,id=bo,path=%s", g->sock);
	snprintf(serial, sizeof serial, "file:%s", g->console);
	/* No host TCP port: each guest connection to 10.0.2.100:10809 gets its own nbdkit
	 * on qemu's end of the socket (-s), exiting when the connection closes. Through a
	 * socat relay to one nbdkit on a Unix socket, every read whose reply was over ~4 KiB
	 * took 15-45 ms (60 reads of 8 KiB: 2.7 s); this way 40-60 ms for the 60. */
	snprintf(netdev, sizeof netdev,
	         "user,id=n0,restrict=on,guestfwd=tcp:10.0.2.100:10809-cmd:nbdkit -s %s states=%s",
	         cfg->plugin, cfg->statedir);
	char *argv[] = {"qemu-system-x86_64",
	                "-accel",
	                "tcg",
	                "-cpu",
	                "max",
	                "-m",
	                GUEST_MEM,
	                "-smp",
	                "1",
	                "-nodefaults",
	                "-no-reboot",
	                "-display",
	                "none",
	                "-kernel",
	                (char *)cfg->kernel,
	                "-initrd",
	                (char *)cfg->initrd,
	                "-append",
	                append,
	                "-chardev",
	                chardev,
	                "-serial",
	                serial,
	                "-serial",
	                "chardev:bo",
	                "-netdev",
	                netdev,
	                "-device",
	                "virtio-net-pci,netdev=n0",
	                NULL};
	rc = vm_spawn(argv, g->log, &g->pid, err);
	if (rc) {
		close(g->lfd);
		g->lfd = -1;
		return rc;
	}
	g->fd = -1;
	g->st = VG_BOOTING;
	g->t0 = vm_now();
	g->deadline = g->t0 + (cfg->boot_timeout > 0 ? cfg->boot_timeout : 120);
	g->in.total = 0;
	return 0;
}

void vm_guest_stop(struct vm_guest *g)
{
	vm_kill(&g->pid);
	if (g->fd >= 0)
		close(g->fd);
	if (g->lfd >= 0)
		close(g->lfd);
	g->fd = g->lfd = -1;
	g->st = VG_OFF;
	g->in.off = g->in.len = 0;
	g->obs_len = 0;
}

void vm_guest_console_tail(const struct vm_guest *g, char *msg, size_t len)
{
	FILE *f = fopen(g->console, "r");
	char line[512], last[512] = "";
	bool panic = false;
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || panic)
			continue;
		snprintf(last, sizeof last, "%s", line);
		panic = strstr(line, "Kernel panic") != NULL;
	}
	if (f)
		fclose(f);
	/* control bytes from a dying console stay out of messages */
	for (char *p = last; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	snprintf(msg, len, "%s%s", panic ? "" : "console: ", last[0] ? last : "(empty console)");
}

int vm_guest_send(struct vm_guest *g, const char *cmd)
{
	size_t len = strlen(cmd), off = 0;
	while (off < len) {
		ssize_t w = send(g->fd, cmd + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			continue; /* a command is a few bytes: the socket buffer takes it */
		if (w <= 0)
			return -errno;
		off += (size_t)w;
	}
	return 0;
}
