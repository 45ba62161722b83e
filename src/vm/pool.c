// SPDX-License-Identifier: GPL-2.0-or-later
/* pool.c — the pool of real-kernel guests judging crash states (include/blackout/vm.h,
 * docs/realkernel.md section 3): the store's deltas packed once into deltas.img (both
 * reach each guest as read-only disks), `jobs` guests each booted once, states handed
 * out in order, a hung or panicked guest replaced, a state whose guest hung, panicked
 * or whose harness step failed in the guest retried once on a fresh guest.
 *
 * Cleanup: every qemu is killed and reaped on every return path; children also get
 * SIGKILL from the kernel when the calling thread dies (PR_SET_PDEATHSIG), so a caller
 * killed by a signal leaves none. A caller that catches signals and wants to stop early
 * simply exits. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vm/vm_int.h"

#define MAX_JOBS 64

struct pool {
	const struct vm_pool_cfg *cfg;
	size_t n, next, done;
	struct crash_observation *obs;
	struct vm_pool_stats *stats;
	struct vm_guest g[MAX_JOBS];
	unsigned jobs;
	double state_timeout;
	char deltas[1100];     /* WORKDIR/deltas.img */
	uint64_t *offsets;     /* each state's delta in it */
	unsigned char *tries;  /* times each state was handed out again */
	size_t redo[MAX_JOBS]; /* states to hand out again (a hang or a harness error) */
	unsigned nredo;
};

static int boot(struct pool *p, struct vm_guest *g, struct bo_err *err)
{
	int rc = vm_guest_boot(p->cfg, p->deltas, g, err);
	if (rc == 0)
		p->stats->boots++;
	return rc;
}

static void hung(struct pool *p, struct vm_guest *g, const char *why)
{
	struct crash_observation *o = &p->obs[g->state];
	crash_observation_free(o);
	memset(o, 0, sizeof *o);
	o->guest_hung = true;
	o->mount_rc = -EIO; /* the state never got through: detected, by the guest's death */
	snprintf(o->mount_msg, sizeof o->mount_msg, "guest hung on s%zu: %.200s", g->state, why);
	p->stats->hung++;
	p->done++;
	if (p->cfg->progress)
		p->cfg->progress(p->cfg->progress_ctx, p->done, p->n);
}

/* The guest died or stopped answering: a fresh guest takes its place while states
 * remain. Its state (if any) goes to a fresh guest once: a TCG guest on a loaded host
 * has stalled for a minute in a state that a fresh guest then judged in a second (and
 * bytes on its command port get lost under load), so one stall is not yet the state's
 * verdict; a state that stops its second guest too is hung. A guest that failed to
 * boot twice in a row stops the pool. */
static int guest_lost(struct pool *p, struct vm_guest *g, const char *why, struct bo_err *err)
{
	char tail[300];
	vm_guest_console_tail(g, tail, sizeof tail);
	bool booting = g->st == VG_BOOTING;
	if (g->st == VG_BUSY && p->tries[g->state] == 0 && p->nredo < MAX_JOBS) {
		p->tries[g->state]++;
		p->redo[p->nredo++] = g->state;
		p->stats->retried++;
	} else if (g->st == VG_BUSY) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s (%s)", why, tail);
		hung(p, g, msg);
	}
	vm_guest_stop(g);
	if (booting && ++g->boot_fails >= 2)
		return bo_errf(err, -EIO, "guest %u failed to boot twice in a row: %s (%s; see %s)",
		               g->slot, why, tail, g->console);
	if (p->next < p->n || p->nredo)
		return boot(p, g, err);
	return 0;
}

/* "BO:ERROR NAME: ..." during a state: a harness step (dmsetup, the delta's apply)
 * failed in the guest, which powers off. Not the filesystem's outcome: the state goes
 * to a fresh guest once; a second failure stops the pool with the guest's message. */
static int harness_error(struct pool *p, struct vm_guest *g, const char *msg, struct bo_err *err)
{
	if (p->tries[g->state]++ >= 1 || p->nredo >= MAX_JOBS)
		return bo_errf(err, -EIO,
		               "guest %u: s%zu failed in the harness (not the filesystem) on its "
		               "second try: %.300s (see %s)",
		               g->slot, g->state, msg, g->console);
	p->redo[p->nredo++] = g->state;
	vm_guest_stop(g);
	return boot(p, g, err);
}

/* A CHECK's last field: a sum of the state's number and its offset, which the guest
 * recomputes. A byte lost from the offset could make it point at another state's delta,
 * judged under this state's name; with the sum such a line is junk (ignored, and the
 * command is sent again). The guest's shell computes the same (guest-init). */
unsigned long long vm_check_sum(size_t state, unsigned long long off)
{
	return ((unsigned long long)state * 40503 + off / 4096 * 65519 + 12345) % 1000003;
}

/* Bytes to the guest's serial port are sometimes lost under load (a CHECK arriving
 * as "1"), so a CHECK the guest has not answered with BEGIN within RESEND_S is sent
 * again; the leading newline ends any partial junk line before it. The guest ignores
 * junk lines and a second CHECK of the state it just did. */
#define RESEND_S 0.5
static int send_check(struct pool *p, struct vm_guest *g)
{
	char cmd[96];
	unsigned long long off = p->offsets[g->state];
	snprintf(cmd, sizeof cmd, "\nCHECK s%zu %llu %llu\n", g->state, off,
	         vm_check_sum(g->state, off));
	g->sent = vm_now();
	g->sends++;
	return vm_guest_send(g, cmd);
}

static int hand_out(struct pool *p, struct vm_guest *g)
{
	if (p->nredo)
		g->state = p->redo[--p->nredo];
	else if (p->next < p->n)
		g->state = p->next++;
	else
		return 0;
	g->st = VG_BUSY;
	g->t0 = vm_now();
	g->deadline = g->t0 + p->state_timeout;
	g->obs_len = 0;
	g->timed = false;
	g->begun = false;
	g->sends = 0;
	g->in.total = 0;
	return send_check(p, g);
}

static int obs_append(struct vm_guest *g, const char *line, struct bo_err *err)
{
	size_t len = strlen(line);
	if (len + 1 > VM_STATE_MAX - g->obs_len)
		return bo_errf(err, -E2BIG, "guest %u: observation of s%zu over %u bytes", g->slot,
		               g->state, VM_STATE_MAX);
	if (g->obs_len + len + 1 > g->obs_cap) {
		size_t cap = g->obs_cap ? g->obs_cap : 65536;
		while (cap < g->obs_len + len + 1)
			cap *= 2;
		char *o = realloc(g->obs, cap);
		if (!o)
			return -ENOMEM;
		g->obs = o, g->obs_cap = cap;
	}
	memcpy(g->obs + g->obs_len, line, len);
	g->obs[g->obs_len + len] = '\n';
	g->obs_len += len + 1;
	return 0;
}

static int state_end(struct pool *p, struct vm_guest *g, const char *name, struct bo_err *err)
{
	char want[32];
	snprintf(want, sizeof want, "s%zu", g->state);
	if (strcmp(name, want) != 0)
		return bo_errf(err, -EPROTO, "guest %u: 'BO:END %.40s' while checking %s", g->slot,
		               name, want);
	struct crash_observation *o = &p->obs[g->state];
	struct bo_err why = {{0}};
	crash_observation_free(o);
	memset(o, 0, sizeof *o);
	int rc = crash_obs_parse_lines(g->obs, g->obs_len, o, &why);
	if (rc)
		return bo_errf(err, rc, "guest %u, state %s: %s", g->slot, want, why.msg);
	if (p->cfg->app && !o->guest_hung && o->mount_rc == 0 && !o->app.ran) {
		/* the checker's verdict never reached us (it could not be started, or its
		 * archive was not unpacked): a failing checker, never an ok state */
		o->app.ran = true;
		o->app.exit = -1;
		snprintf(o->app.line, sizeof o->app.line,
		         "no verdict: the guest reported no result from the checker");
	}
	struct vm_pool_stats *s = p->stats;
	double total = vm_now() - g->t0, phases = 0;
	if (g->timed) {
		s->connect += g->times[0], s->mount += g->times[1], s->read += g->times[2];
		s->umount += g->times[3], s->check += g->times[4];
		for (int i = 0; i < 5; i++)
			phases += g->times[i];
	}
	s->other += total > phases ? total - phases : 0;
	s->observed++;
	p->done++;
	g->st = VG_IDLE;
	if (p->cfg->progress)
		p->cfg->progress(p->cfg->progress_ctx, p->done, p->n);
	return 0;
}

/* One line from guest g. */
static int guest_line(struct pool *p, struct vm_guest *g, char *line, struct bo_err *err)
{
	if (strncmp(line, "BO:", 3) != 0)
		return 0; /* not ours: the protocol's lines all start with BO: */
	const char *w = line + 3;
	if (!strcmp(w, "READY") && g->st == VG_BOOTING) {
		p->stats->boot += vm_now() - g->t0;
		g->boot_fails = 0;
		g->st = VG_IDLE;
		return hand_out(p, g);
	}
	if (!strncmp(w, "ERROR", 5) && g->st == VG_BUSY && g->begun)
		return harness_error(p, g, w + 5 + strspn(w + 5, " "), err);
	if (!strncmp(w, "ERROR", 5))
		return guest_lost(p, g, w, err);
	if (g->st != VG_BUSY)
		return 0;
	if (!strncmp(w, "BEGIN ", 6)) {
		g->begun = true;
		return 0;
	}
	if (!strncmp(w, "OBS ", 4))
		return obs_append(g, line, err);
	if (!strncmp(w, "TIME ", 5)) {
		unsigned long ms[5];
		if (sscanf(w + 5, "%lu %lu %lu %lu %lu", &ms[0], &ms[1], &ms[2], &ms[3], &ms[4]) !=
		    5)
			return bo_errf(err, -EPROTO, "guest %u: bad line '%.80s'", g->slot, line);
		for (int i = 0; i < 5; i++)
			g->times[i] = ms[i] > 3600000 ? 3600 : (double)ms[i] / 1000;
		g->timed = true;
		return 0;
	}
	if (!strncmp(w, "END ", 4)) {
		int rc = state_end(p, g, w + 4, err);
		return rc ? rc : hand_out(p, g);
	}
	return 0;
}

static int guest_input(struct pool *p, struct vm_guest *g, struct bo_err *err)
{
	char buf[65536];
	ssize_t r = recv(g->fd, buf, sizeof buf, MSG_DONTWAIT);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r <= 0)
		return guest_lost(p, g, "qemu exited (the guest powered off or panicked)", err);
	int rc = vm_lines_feed(&g->in, buf, (size_t)r);
	if (rc == -E2BIG)
		return bo_errf(err, rc, "guest %u sent over %u bytes %s%zu: flooding, stopped",
		               g->slot, VM_STATE_MAX,
		               g->st == VG_BUSY ? "for s" : "while idle, at ", g->state);
	char *line;
	while (rc == 0 && g->fd >= 0) {
		int got = vm_lines_next(&g->in, &line);
		if (got == -E2BIG)
			return bo_errf(err, got, "guest %u sent a line over %u bytes", g->slot,
			               VM_LINE_MAX);
		if (got <= 0)
			break;
		rc = guest_line(p, g, line, err);
	}
	return rc;
}

/* Timeouts and deaths not announced on the socket. */
static int guest_check(struct pool *p, struct vm_guest *g, struct bo_err *err)
{
	if (g->st == VG_OFF)
		return 0;
	int status;
	if (vm_exited(&g->pid, &status))
		return guest_lost(p, g, "qemu exited (the guest powered off or panicked)", err);
	if (g->st == VG_BUSY && !g->begun && vm_now() - g->sent > RESEND_S && g->sends < 10) {
		int rc = send_check(p, g);
		if (rc)
			return guest_lost(p, g, "its command port closed", err);
	}
	if (vm_now() < g->deadline || g->st == VG_IDLE)
		return 0;
	char why[128];
	if (g->st == VG_BOOTING)
		snprintf(why, sizeof why, "no BO:READY within %.0fs", g->deadline - g->t0);
	else
		snprintf(why, sizeof why, "no BO:END within %.0fs: the guest stopped answering",
		         p->state_timeout);
	return guest_lost(p, g, why, err);
}

static int run(struct pool *p, struct bo_err *err)
{
	int rc = 0;
	for (unsigned i = 0; !rc && i < p->jobs; i++)
		rc = boot(p, &p->g[i], err);
	while (!rc && p->done < p->n) {
		struct pollfd pfd[MAX_JOBS];
		for (unsigned i = 0; i < p->jobs; i++) {
			struct vm_guest *g = &p->g[i];
			int fd = g->fd >= 0 ? g->fd : g->lfd;
			pfd[i] = (struct pollfd){.fd = g->st == VG_OFF ? -1 : fd, .events = POLLIN};
		}
		/* short: qemu's exit and deadlines are polled, not signalled */
		if (poll(pfd, p->jobs, 200) < 0 && errno != EINTR)
			return bo_errf(err, -errno, "poll: %s", strerror(errno));
		for (unsigned i = 0; !rc && i < p->jobs; i++) {
			struct vm_guest *g = &p->g[i];
			if (g->st != VG_OFF && pfd[i].fd >= 0 && pfd[i].revents) {
				if (g->fd < 0) { /* qemu connects the command port */
					g->fd = accept4(g->lfd, NULL, NULL,
					                SOCK_CLOEXEC | SOCK_NONBLOCK);
					if (g->fd >= 0) {
						close(g->lfd);
						g->lfd = -1;
					}
				} else {
					rc = guest_input(p, g, err);
				}
			}
			if (!rc)
				rc = guest_check(p, g, err);
		}
		bool any = false;
		for (unsigned i = 0; i < p->jobs; i++)
			any |= p->g[i].st != VG_OFF;
		if (!rc && !any && p->done < p->n)
			rc = bo_errf(err, -EIO, "every guest is gone with states left");
	}
	return rc;
}

/* Paths go into qemu's option syntax (',' separates options) and the plugin's into a
 * command qemu runs for each connection: plain characters only. */
static bool path_ok(const char *s)
{
	return s && *s && strlen(s) < 300 &&
	       strspn(s,
	              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+@%=-") ==
	           strlen(s);
}

int vm_pool_observe(const struct vm_pool_cfg *cfg, size_t n, struct crash_observation *obs,
                    struct vm_pool_stats *stats, struct bo_err *err)
{
	*stats = (struct vm_pool_stats){0};
	for (size_t i = 0; i < n; i++)
		memset(&obs[i], 0, sizeof obs[i]);
	if (!path_ok(cfg->workdir) || !path_ok(cfg->statedir) || !path_ok(cfg->kernel) ||
	    !path_ok(cfg->initrd))
		return bo_errf(err, -EINVAL,
		               "kernel, initrd, statedir and workdir must be set, and hold only "
		               "[A-Za-z0-9_./+@%%=-]");
	if (!cfg->fs ||
	    strspn(cfg->fs, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(cfg->fs) ||
	    (cfg->mopt && strspn(cfg->mopt, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"
	                                    "123456789_=,.-") != strlen(cfg->mopt)))
		return bo_errf(err, -EINVAL,
		               "fs and mount options may hold only [a-z0-9] and [a-zA-Z0-9_=,.-]");
	for (const char *f = cfg->kernel; f; f = f == cfg->kernel ? cfg->initrd : NULL)
		if (access(f, R_OK) != 0)
			return bo_errf(err, -ENOENT, "%s: %s (scripts/vm-build makes it)", f,
			               strerror(errno));
	if (mkdir(cfg->workdir, 0700) < 0 && errno != EEXIST)
		return bo_errf(err, -errno, "%s: %s", cfg->workdir, strerror(errno));
	if (n == 0)
		return 0;
	struct pool *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	p->cfg = cfg, p->n = n, p->obs = obs, p->stats = stats;
	p->jobs = cfg->jobs ? cfg->jobs : (cores > 0 ? (unsigned)cores : 1);
	if (p->jobs > MAX_JOBS)
		p->jobs = MAX_JOBS;
	if (p->jobs > n)
		p->jobs = (unsigned)n;
	p->state_timeout = cfg->state_timeout > 0 ? cfg->state_timeout : 60;
	for (unsigned i = 0; i < MAX_JOBS; i++)
		p->g[i] = (struct vm_guest){.slot = i, .lfd = -1, .fd = -1};
	double t0 = vm_now();
	snprintf(p->deltas, sizeof p->deltas, "%s/deltas.img", cfg->workdir);
	p->offsets = calloc(n, sizeof *p->offsets);
	p->tries = calloc(n, 1);
	int rc = p->offsets && p->tries ? 0 : -ENOMEM;
	if (!rc)
		rc = vm_deltas_pack(cfg->statedir, n, p->deltas, p->offsets, err);
	if (!rc)
		rc = run(p, err);
	for (unsigned i = 0; i < p->jobs; i++) {
		vm_guest_stop(&p->g[i]);
		vm_lines_free(&p->g[i].in);
		free(p->g[i].obs);
		unlink(p->g[i].sock);
	}
	stats->wall = vm_now() - t0;
	free(p->offsets);
	free(p->tries);
	free(p);
	if (rc)
		for (size_t i = 0; i < n; i++)
			crash_observation_free(&obs[i]);
	return rc;
}

const char *vm_retried_note(const struct vm_pool_stats *stats)
{
	static _Thread_local char note[80];
	if (!stats->retried)
		return "";
	snprintf(note, sizeof note, " (%u retried on a fresh guest after a hang)", stats->retried);
	return note;
}

/* Removes a work directory the pool filled (sockets, consoles, logs): only those. */
void vm_workdir_remove(const char *dir)
{
	static const char *const pat[] = {"deltas.img", "deltas.img.tmp"};
	char path[1024];
	for (size_t i = 0; i < sizeof pat / sizeof *pat; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, pat[i]);
		unlink(path);
	}
	for (unsigned s = 0; s < MAX_JOBS; s++) {
		snprintf(path, sizeof path, "%s/g%u.sock", dir, s);
		unlink(path);
		snprintf(path, sizeof path, "%s/g%u.qemu.log", dir, s);
		unlink(path);
		for (unsigned b = 1; b < 1000; b++) {
			snprintf(path, sizeof path, "%s/g%u-%u.console", dir, s, b);
			if (unlink(path) < 0)
				break;
		}
	}
	rmdir(dir);
}
