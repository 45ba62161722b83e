// SPDX-License-Identifier: GPL-2.0-or-later
/* guest.c — one judging guest's life: qemu started with bo.mode=judge, the state store
 * on two read-only virtio disks (base.img, the pool's deltas.img), its command port a
 * Unix socket qemu connects to, its console a file read back for a panic's message;
 * killed and reaped. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vm/vm_int.h"

/* The guest's RAM: the initramfs (busybox, the fs tools) unpacks into it; ext4,
 * e2fsck, the page cache of a small state and the RAM disk holding a state's writes
 * (its delta and the fs's recovery: a few MiB for the states seen) fit in the rest.
 * An application's archive (blackout app: a database server and its libraries) may be
 * larger than all that, and the initramfs gets at most half the RAM (rootfs is a
 * tmpfs): 4 MiB per MiB of initramfs keeps it inside with room to run, the app's
 * archive being uncompressed (app_stage). scripts/vm-lib.sh sizes the recording boot
 * the same way. */
#define GUEST_MEM_MIN 256u

static unsigned guest_mem_mib(const char *initrd)
{
	struct stat sb;
	unsigned long long need =
	    stat(initrd, &sb) ? 0 : ((unsigned long long)sb.st_size * 4) >> 20;
	return need > GUEST_MEM_MIN ? (unsigned)need : GUEST_MEM_MIN;
}

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

/* " bo.members=S:L,S:L..." (512-byte sectors) from STORE/members when the store is of
 * several members (docs/md.md), else "", and " bo.md_drop=K" when md is to be assembled
 * without member K. The lines were written by the explorer; each is still checked, and
 * a bad one is an error naming it. */
static int members_arg(const char *statedir, bool drop, unsigned k, char *out, size_t size,
                       struct bo_err *err)
{
	char path[1100], line[128];
	snprintf(path, sizeof path, "%s/members", statedir);
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return drop ? bo_errf(err, -EINVAL,
		                      "%s: a member to drop needs a store of several members", path)
		            : 0;
	size_t len = 0;
	unsigned i = 0;
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		unsigned idx;
		unsigned long long start, bytes;
		char end;
		if (sscanf(line, "m%u %llu %llu%c", &idx, &start, &bytes, &end) != 4 ||
		    end != '\n' || idx != i || start % 4096 || bytes % 4096 || bytes == 0) {
			rc = bo_errf(err, -EINVAL, "%s: line %u is not 'm%u START BYTES'", path,
			             i + 1, i);
			break;
		}
		/* 24 bytes kept for " bo.md_drop=K" */
		int w = snprintf(out + len, size - 24 - len, "%s%llu:%llu",
		                 i ? "," : " bo.members=", start / 512, bytes / 512);
		if (w < 0 || (size_t)w >= size - 24 - len)
			rc = bo_errf(err, -E2BIG,
			             "%s: too many members for the kernel command line", path);
		else
			len += (size_t)w;
		i++;
	}
	fclose(f);
	if (rc == 0 && drop && k >= i)
		rc = bo_errf(err, -EINVAL, "%s: no member %u to drop (%u members)", path, k, i);
	else if (rc == 0 && drop)
		snprintf(out + len, size - len, " bo.md_drop=%u", k);
	return rc;
}

int vm_guest_boot(const struct vm_pool_cfg *cfg, const char *deltas, struct vm_guest *g,
                  struct bo_err *err)
{
	g->boots++;
	snprintf(g->sock, sizeof g->sock, "%s/g%u.sock", cfg->workdir, g->slot);
	snprintf(g->console, sizeof g->console, "%s/g%u-%u.console", cfg->workdir, g->slot,
	         g->boots);
	snprintf(g->log, sizeof g->log, "%s/g%u.qemu.log", cfg->workdir, g->slot);
	int rc = listen_on(g->sock, &g->lfd, err);
	if (rc)
		return rc;
	char append[1024], chardev[600], serial[600], base[1200], dimg[1200], members[512], mem[16];
	snprintf(mem, sizeof mem, "%u", guest_mem_mib(cfg->initrd));
	if ((rc = members_arg(cfg->statedir, cfg->md_drop_set, cfg->md_drop, members,
	                      sizeof members, err))) {
		close(g->lfd);
		g->lfd = -1;
		return rc;
	}
	snprintf(append, sizeof append,
	         "console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check "
	         "bo.mode=judge bo.chan=hvc0 "
	         "bo.fs=%s bo.mopt=%s%s%s",
	         cfg->fs, cfg->mopt && *cfg->mopt ? cfg->mopt : "defaults", members,
	         cfg->integrity ? " bo.integrity=1" : "");
	snprintf(chardev, sizeof chardev, "socket,id=bo,path=%s", g->sock);
	snprintf(serial, sizeof serial, "file:%s", g->console);
	/* No network: the store through qemu's own block layer. The guest writes nothing
	 * to either disk (its per-state snapshot keeps its writes in RAM); snapshot=on
	 * would catch a write to the base in a temporary overlay all the same, and the
	 * deltas are read-only. Over NBD (nbd-client, guestfwd, an nbdkit -s per state) a
	 * state's connect cost about 1 s and some connections failed (docs/realkernel.md). */
	snprintf(base, sizeof base, "file=%s/base.img,format=raw,if=virtio,snapshot=on",
	         cfg->statedir);
	snprintf(dimg, sizeof dimg, "file=%s,format=raw,if=virtio,readonly=on", deltas);
	/* The pool's channel is a virtio console (the guest's /dev/hvc0): whole buffers a
	 * transfer, where a second 16550 moved each byte by port I/O under TCG. */
	char *argv[] = {"qemu-system-x86_64",
	                "-accel",
	                "tcg",
	                "-cpu",
	                "max",
	                "-m",
	                mem,
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
	                "-device",
	                "virtio-serial-pci",
	                "-device",
	                "virtconsole,chardev=bo",
	                "-drive",
	                base,
	                "-drive",
	                dimg,
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
