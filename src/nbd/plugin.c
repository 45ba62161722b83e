/* plugin.c — the nbdkit glue: `nbdkit build/blackout-nbdkit.so stack=SPEC [size=N]
 * [control=SOCKET]`. Requests go to server.c; the control socket is served by one
 * thread here. Not a library: nbdkit loads it (docs/nbd.md). */
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "nbd/server.h"

/* Every request goes through one non-thread-safe stack; the control thread takes
 * the server's lock as well. */
#define THREAD_MODEL NBDKIT_THREAD_MODEL_SERIALIZE_ALL_REQUESTS

#define CTL_CLIENTS 8

struct ctl_client {
	int fd;
	size_t len;
	bool discarding; /* inside an over-long line: drop bytes until its newline */
	char *buf;       /* NBD_CTL_LINE_MAX + 1 */
};

/* nbdkit's plugin API passes no context to config/get_ready/cleanup and a process
 * serves exactly one stack, so the plugin's configuration and its one server live
 * here (the one global state of this process). */
static struct {
	char *stack;
	uint64_t size;
	char *control;
	struct nbd_srv *srv;
	int lfd;
	int wake[2];
	bool thread_started;
	pthread_t thread;
	struct ctl_client cl[CTL_CLIENTS];
} P = {.lfd = -1, .wake = {-1, -1}};

static int bo_config(const char *key, const char *value)
{
	if (strcmp(key, "stack") == 0) {
		free(P.stack);
		P.stack = strdup(value);
		return P.stack ? 0 : -1;
	}
	if (strcmp(key, "size") == 0) {
		int64_t v = nbdkit_parse_size(value);
		if (v < 0)
			return -1;
		P.size = (uint64_t)v;
		return 0;
	}
	if (strcmp(key, "control") == 0) {
		free(P.control);
		P.control = strdup(value);
		return P.control ? 0 : -1;
	}
	nbdkit_error("unknown parameter '%s' (expected stack=, size=, control=)", key);
	return -1;
}

static int bo_config_complete(void)
{
	if (!P.stack) {
		nbdkit_error("stack=SPEC is required, e.g. stack='mem(size=64M)'");
		return -1;
	}
	struct bo_err err = {{0}};
	int rc = nbd_srv_open(P.stack, P.size, &P.srv, &err);
	if (rc < 0) {
		nbdkit_error("stack=%s: %s", P.stack, bo_errstr(&err, rc));
		return -1;
	}
	return 0;
}

/* Binds the control socket before nbdkit reports ready, so a harness that waits for
 * the NBD socket can use the control socket at once. */
static int bo_get_ready(void)
{
	if (!P.control)
		return 0;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(P.control) >= sizeof sa.sun_path) {
		nbdkit_error("control=%s: path longer than %zu bytes", P.control,
		             sizeof sa.sun_path - 1);
		return -1;
	}
	strcpy(sa.sun_path, P.control);
	struct stat st;
	if (lstat(P.control, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			nbdkit_error("control=%s: exists and is not a socket", P.control);
			return -1;
		}
		unlink(P.control); /* a stale socket from an earlier run */
	}
	P.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (P.lfd < 0 || bind(P.lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    listen(P.lfd, 8) < 0) {
		nbdkit_error("control=%s: %m", P.control);
		return -1;
	}
	if (pipe2(P.wake, O_CLOEXEC) < 0) {
		nbdkit_error("pipe: %m");
		return -1;
	}
	return 0;
}

static void send_all(void *ctx, const char *text, size_t len)
{
	int fd = *(int *)ctx;
	while (len > 0) {
		ssize_t n = send(fd, text, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the peer went away or stalled past SO_SNDTIMEO */
		text += n;
		len -= (size_t)n;
	}
}

static void client_close(struct ctl_client *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
	c->discarding = false;
}

/* Reads what is available; runs each complete line. */
static void client_input(struct ctl_client *c)
{
	char tmp[4096];
	ssize_t n = recv(c->fd, tmp, sizeof tmp, 0);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		client_close(c);
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		char ch = tmp[i];
		if (ch != '\n') {
			if (c->discarding)
				continue;
			if (c->len == NBD_CTL_LINE_MAX) {
				c->discarding = true;
				continue;
			}
			c->buf[c->len++] = ch;
			continue;
		}
		int quit = 0;
		if (c->discarding) {
			static const char msg[] = "error: line longer than 65536 bytes\n";
			send_all(&c->fd, msg, sizeof msg - 1);
			c->discarding = false;
		} else {
			quit = nbd_srv_control(P.srv, c->buf, c->len, send_all, &c->fd);
		}
		c->len = 0;
		if (quit) {
			client_close(c);
			return;
		}
	}
}

static void *control_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd pfd[CTL_CLIENTS + 2];
		int map[CTL_CLIENTS + 2];
		nfds_t n = 0;
		pfd[n] = (struct pollfd){.fd = P.wake[0], .events = POLLIN};
		map[n++] = -2;
		pfd[n] = (struct pollfd){.fd = P.lfd, .events = POLLIN};
		map[n++] = -1;
		for (int i = 0; i < CTL_CLIENTS; i++)
			if (P.cl[i].fd >= 0) {
				pfd[n] = (struct pollfd){.fd = P.cl[i].fd, .events = POLLIN};
				map[n++] = i;
			}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (pfd[0].revents)
			return NULL; /* unload */
		for (nfds_t k = 1; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (map[k] >= 0) {
				client_input(&P.cl[map[k]]);
				continue;
			}
			int fd = accept4(P.lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			int slot = -1;
			for (int i = 0; i < CTL_CLIENTS; i++)
				if (P.cl[i].fd < 0) {
					slot = i;
					break;
				}
			if (slot < 0) {
				static const char msg[] = "error: too many control connections\n";
				send_all(&fd, msg, sizeof msg - 1);
				close(fd);
				continue;
			}
			/* A client that stops reading must not wedge the control thread. */
			struct timeval tv = {.tv_sec = 2};
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
			P.cl[slot].fd = fd;
			P.cl[slot].len = 0;
			P.cl[slot].discarding = false;
		}
	}
}

/* Threads must start after nbdkit has forked into the background. */
static int bo_after_fork(void)
{
	if (P.lfd < 0)
		return 0;
	for (int i = 0; i < CTL_CLIENTS; i++) {
		P.cl[i].fd = -1;
		P.cl[i].buf = malloc(NBD_CTL_LINE_MAX + 1);
		if (!P.cl[i].buf) {
			nbdkit_error("out of memory");
			return -1;
		}
	}
	int rc = pthread_create(&P.thread, NULL, control_thread, NULL);
	if (rc != 0) {
		nbdkit_error("control thread: %s", strerror(rc));
		return -1;
	}
	P.thread_started = true;
	return 0;
}

static void bo_unload(void)
{
	if (P.thread_started) {
		ssize_t w = write(P.wake[1], "x", 1);
		(void)w;
		pthread_join(P.thread, NULL);
	}
	for (int i = 0; i < CTL_CLIENTS; i++) {
		if (P.thread_started && P.cl[i].fd >= 0)
			close(P.cl[i].fd);
		free(P.cl[i].buf);
	}
	if (P.lfd >= 0) {
		close(P.lfd);
		unlink(P.control);
	}
	for (int i = 0; i < 2; i++)
		if (P.wake[i] >= 0)
			close(P.wake[i]);
	nbd_srv_close(P.srv);
	free(P.stack);
	free(P.control);
}

/* The harness serves on Unix sockets; a TCP peer must be loopback. */
static int bo_preconnect(int readonly)
{
	(void)readonly;
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (nbdkit_peer_name((struct sockaddr *)&ss, &len) < 0)
		return 0; /* stdin/--run: no socket peer */
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
		if ((ntohl(in->sin_addr.s_addr) >> 24) == 127)
			return 0;
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return 0;
	} else {
		return 0; /* AF_UNIX, vsock */
	}
	nbdkit_error("refusing a non-loopback peer: serve blackout on a Unix socket");
	return -1;
}

static void *bo_open(int readonly)
{
	(void)readonly;
	return P.srv; /* every connection sees the one device: a reboot reconnects to it */
}

static int64_t bo_get_size(void *h)
{
	return (int64_t)((struct nbd_srv *)h)->size;
}

static int ret(struct nbd_srv *s, int rc)
{
	if (rc == 0)
		return 0;
	nbdkit_set_error(-rc);
	/* A powered-off device failing every request is the experiment, not news. */
	if (rc != -EIO || !s->dev->powered_off)
		nbdkit_error("%s", s->err.msg[0] ? s->err.msg : bo_errstr(&s->dev->err, rc));
	s->err.msg[0] = '\0';
	return -1;
}

static int bo_block_size(void *h, uint32_t *min, uint32_t *pref, uint32_t *max)
{
	struct nbd_srv *s = h;
	*min = 1; /* any alignment works: unaligned edges are read-modify-written */
	*pref = s->dev->sector_size > 4096 ? s->dev->sector_size : 4096;
	*max = 32u << 20;
	return 0;
}

static int bo_can_fua(void *h)
{
	(void)h;
	return NBDKIT_FUA_NATIVE; /* FUA goes to the stack as BLK_FUA, not as a flush */
}

static int bo_can_true(void *h)
{
	(void)h;
	return 1;
}

static int bo_can_false(void *h)
{
	(void)h;
	return 0;
}

static int bo_pread(void *h, void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	(void)flags;
	return ret(h, nbd_srv_pread(h, buf, count, off));
}

static int bo_pwrite(void *h, const void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	return ret(h, nbd_srv_pwrite(h, buf, count, off, flags & NBDKIT_FLAG_FUA));
}

static int bo_flush(void *h, uint32_t flags)
{
	(void)flags;
	return ret(h, nbd_srv_flush(h));
}

static int bo_trim(void *h, uint32_t count, uint64_t off, uint32_t flags)
{
	return ret(h, nbd_srv_trim(h, count, off, flags & NBDKIT_FLAG_FUA));
}

static int bo_zero(void *h, uint32_t count, uint64_t off, uint32_t flags)
{
	return ret(h, nbd_srv_zero(h, count, off, flags & NBDKIT_FLAG_FUA));
}

static struct nbdkit_plugin plugin = {
    .name = "blackout",
    .longname = "blackout storage-model stack",
    .version = "0.1",
    .description = "serves a blackout device stack (write cache, flash, RAID, faults)",
    .config = bo_config,
    .config_complete = bo_config_complete,
    .config_help = "stack=SPEC     (required) the blackout stack, e.g. 'mem(size=64M)'\n"
                   "size=N         export only the first N bytes\n"
                   "control=PATH   Unix socket for the control protocol (docs/nbd.md)",
    .magic_config_key = "stack",
    .get_ready = bo_get_ready,
    .after_fork = bo_after_fork,
    .unload = bo_unload,
    .preconnect = bo_preconnect,
    .open = bo_open,
    .get_size = bo_get_size,
    .block_size = bo_block_size,
    .can_write = bo_can_true,
    .can_flush = bo_can_true,
    .can_trim = bo_can_true,
    .can_zero = bo_can_true,
    .can_fast_zero = bo_can_false,
    .can_fua = bo_can_fua,
    .can_multi_conn = bo_can_false,
    .is_rotational = bo_can_false,
    .pread = bo_pread,
    .pwrite = bo_pwrite,
    .flush = bo_flush,
    .trim = bo_trim,
    .zero = bo_zero,
    .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN(plugin)
