/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm_int.h — shared by the files of src/vm: child processes (proc.c), the guests'
 * line reader (lines.c) and one guest's life (guest.c); pool.c schedules them. */
#ifndef BLACKOUT_VM_INT_H
#define BLACKOUT_VM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "blackout/vm.h"

/* ---- proc.c ---------------------------------------------------------------- */
/* Starts argv[0] (searched in PATH) with stdin from /dev/null and stdout+stderr
 * appended to logpath. The child gets SIGKILL when the calling thread dies (so an
 * interrupted caller leaves no qemu or nbdkit behind). */
int vm_spawn(char *const argv[], const char *logpath, pid_t *pid, struct bo_err *err);
/* SIGKILL and reap; pid set to 0. Safe on 0. */
void vm_kill(pid_t *pid);
/* True once the child has exited (it is reaped then, *pid set to 0). */
bool vm_exited(pid_t *pid, int *status);
double vm_now(void); /* monotonic seconds */

/* ---- lines.c --------------------------------------------------------------- */
/* Bytes from a guest cut into lines, with a bound on a line and on the total held. */
#define VM_LINE_MAX  (4u << 20)
#define VM_STATE_MAX (32u << 20) /* bytes a guest may send for one state (or a boot) */
struct vm_lines {
	char *buf;
	size_t len, cap, off; /* unread bytes are buf[off, len) */
	size_t total;         /* bytes since the last vm_lines_reset_total */
};
/* Appends what was read; -E2BIG past VM_STATE_MAX. */
int vm_lines_feed(struct vm_lines *l, const char *data, size_t n);
/* The next complete line (without "\n" or "\r", NUL-terminated in place): 1, 0 when
 * none is complete yet, -E2BIG for a line longer than VM_LINE_MAX. */
int vm_lines_next(struct vm_lines *l, char **line);
void vm_lines_free(struct vm_lines *l);

/* ---- guest.c --------------------------------------------------------------- */
enum vm_guest_state { VG_OFF, VG_BOOTING, VG_IDLE, VG_BUSY };
struct vm_guest {
	unsigned slot, boots, boot_fails;
	enum vm_guest_state st;
	pid_t pid;
	int lfd, fd; /* the serial port's listening socket, then qemu's connection */
	double t0, deadline;
	double sent;    /* VG_BUSY: when the CHECK was last sent */
	unsigned sends; /* ... and how often */
	bool begun;     /* the guest said BEGIN for it */
	size_t state;   /* VG_BUSY: the state being checked */
	char sock[512], console[512], log[512];
	struct vm_lines in;
	char *obs; /* the state's BO:OBS lines */
	size_t obs_len, obs_cap;
	double times[5]; /* BO:TIME of the state: connect mount read umount check */
	bool timed;
};
/* Boots guest g (bo.mode=judge) on cfg's kernel, initrd and state store, deltas the
 * packed deltas (vm_deltas_pack). */
int vm_guest_boot(const struct vm_pool_cfg *cfg, const char *deltas, struct vm_guest *g,
                  struct bo_err *err);
/* Kills and reaps qemu, closes its sockets; g may boot again. */
void vm_guest_stop(struct vm_guest *g);
/* The console's "Kernel panic" line (or its last line) into msg. */
void vm_guest_console_tail(const struct vm_guest *g, char *msg, size_t len);
int vm_guest_send(struct vm_guest *g, const char *cmd);

/* ---- pool.c ---------------------------------------------------------------- */
/* The CHECK line's sum of state number and delta offset (docs/realkernel.md section 3). */
unsigned long long vm_check_sum(size_t state, unsigned long long off);

#endif
