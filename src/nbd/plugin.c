// SPDX-License-Identifier: GPL-2.0-or-later
/* plugin.c — the nbdkit glue: `nbdkit build/blackout-nbdkit.so stack=SPEC [size=N]
 * [members=yes [fail-member=I@MARK]] [control=SOCKET] [record=FILE [record-max=N]]`. Requests go to server.c (and the
 * marker export's to record.c); the control socket is served by one thread here.
 * Not a library: nbdkit loads it (docs/nbd.md). */
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

#include "blackout/rec.h"
#include "blackout/util.h"
#include "nbd/record.h"
#include "nbd/server.h"
#include "nbd/states.h"

/* nbdkit runs requests on several threads at once (it reads the next request and
 * sends the last reply while one runs); the stack is not thread-safe, so every request
 * takes the server's lock (server.c), as the control thread does while a command runs
 * (never while it talks to a client). A state store's connection has a lock of its own
 * (states.c). */
#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#define CTL_CLIENTS 8
/* Replies a client has not read yet, beyond which its further commands wait unread. */
#define CTL_OUT_MAX (1u << 20)

/* One control connection. Its socket is non-blocking: replies wait in `out` until
 * the client reads them, so neither the device lock nor the control thread ever
 * waits on a client. */
struct ctl_client {
	int fd;
	size_t len;
	bool discarding; /* inside an over-long line: drop bytes until its newline */
	bool closing;    /* quit or end of input: close once the replies are sent */
	char *buf;       /* NBD_CTL_LINE_MAX + 1 */
	char *out;       /* replies not yet sent: out[out_off, out_len) */
	size_t out_off, out_len, out_cap;
};

/* nbdkit's plugin API passes no context to config/get_ready/cleanup and a process
 * serves exactly one stack, so the plugin's configuration and its one server live
 * here (the one global state of this process). */
static struct {
	char *stack;
	uint64_t size;
	char *control;
	char *record;        /* record=FILE */
	uint64_t record_max; /* record-max=N, 0: the default cap */
	bool members;        /* members=yes: the top concat's lowers as exports m0.. */
	char *fail_spec;     /* fail-member=I@MARK as given */
	int fail_member;     /* I, -1: none */
	char *fail_mark;     /* MARK */
	struct nbd_srv *srv;
	int lfd;
	int wake[2];
	bool thread_started;
	pthread_t thread;
	struct ctl_client cl[CTL_CLIENTS];
} P = {.lfd = -1, .wake = {-1, -1}, .fail_member = -1};

/* states=DIR (src/nbd/states.c): a state store instead of a stack; each connection's
 * handle is then a struct nbd_states_conn. */
static struct {
	char *dir;
	struct nbd_states *st;
} S;

static int states_ret(int rc, const struct bo_err *err)
{
	if (rc == 0)
		return 0;
	nbdkit_set_error(-rc);
	nbdkit_error("%s", bo_errstr(err, rc));
	return -1;
}

/* A user-given string fit for one log line (control bytes escaped). */
static const char *esc(char *buf, size_t size, const char *s)
{
	bo_escape(buf, size, s, strlen(s));
	return buf;
}

static int bo_config(const char *key, const char *value)
{
	if (strcmp(key, "states") == 0) {
		free(S.dir);
		S.dir = strdup(value);
		return S.dir ? 0 : -1;
	}
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
	if (strcmp(key, "record") == 0) {
		free(P.record);
		P.record = strdup(value);
		return P.record ? 0 : -1;
	}
	if (strcmp(key, "members") == 0) {
		int v = nbdkit_parse_bool(value);
		if (v < 0)
			return -1;
		P.members = v;
		return 0;
	}
	if (strcmp(key, "fail-member") == 0) {
		free(P.fail_spec);
		P.fail_spec = strdup(value);
		return P.fail_spec ? 0 : -1;
	}
	if (strcmp(key, "record-max") == 0) {
		int64_t v = nbdkit_parse_size(value);
		if (v < 0)
			return -1;
		P.record_max = (uint64_t)v;
		return 0;
	}
	char k[256];
	nbdkit_error("unknown parameter '%s' (expected stack=, size=, control=, record=, "
	             "record-max=, members=, fail-member=, states=)",
	             esc(k, sizeof k, key));
	return -1;
}

/* fail-member=I@MARK: member I fails from the moment the marker export takes the mark
 * MARK. A mark, not a control command: the guest writes it between its own requests
 * (its write returns before the next step's I/O is sent), so the failure falls at the
 * same place in the guest's I/O whatever the host's timing. */
static int fail_parse(void)
{
	char v[256];
	esc(v, sizeof v, P.fail_spec);
	if (!P.members || !P.record) {
		nbdkit_error("fail-member=%s needs members=yes and record=FILE (the mark MARK "
		             "comes through the marker export)",
		             v);
		return -1;
	}
	const char *at = strchr(P.fail_spec, '@');
	size_t nd = at ? (size_t)(at - P.fail_spec) : 0;
	if (!at || nd == 0 || nd > 2 || strspn(P.fail_spec, "0123456789") != nd ||
	    (nd == 2 && P.fail_spec[0] == '0')) {
		nbdkit_error("fail-member=%s: expected I@MARK, a member number, '@' and a mark "
		             "(e.g. 1@step 3)",
		             v);
		return -1;
	}
	int i = atoi(P.fail_spec);
	if (i >= (int)P.srv->nmembers) {
		nbdkit_error("fail-member=%s: no member %d (this stack has m0 to m%u)", v, i,
		             P.srv->nmembers - 1);
		return -1;
	}
	size_t ml = strlen(at + 1);
	if (ml == 0 || ml > REC_MARK_MAX || strchr(at + 1, '\n')) {
		nbdkit_error("fail-member=%s: the mark must be 1 to %d bytes without a newline", v,
		             REC_MARK_MAX);
		return -1;
	}
	P.fail_member = i;
	P.fail_mark = strdup(at + 1);
	return P.fail_mark ? 0 : -1;
}

static int bo_config_complete(void)
{
	if (S.dir) {
		if (P.stack || P.size || P.members) {
			nbdkit_error(
			    "states=DIR serves a state store: no stack=, size= or members= "
			    "with it");
			return -1;
		}
		struct bo_err err = {{0}};
		return states_ret(nbd_states_open(S.dir, &S.st, &err), &err);
	}
	if (!P.stack) {
		nbdkit_error("stack=SPEC (or states=DIR) is required, e.g. stack='mem(size=64M)'");
		return -1;
	}
	struct bo_err err = {{0}};
	int rc = nbd_srv_open(P.stack, P.size, &P.srv, &err);
	if (rc < 0) {
		char spec[1024], msg[4 * sizeof err.msg];
		err.msg[strcspn(err.msg, "\n")] = 0; /* one line: "column N" says where */
		nbdkit_error("stack=%s: %s", esc(spec, sizeof spec, P.stack),
		             esc(msg, sizeof msg, bo_errstr(&err, rc)));
		return -1;
	}
	if (P.members && (rc = nbd_srv_members(P.srv, &err))) {
		char msg[4 * sizeof err.msg];
		nbdkit_error("%s", esc(msg, sizeof msg, bo_errstr(&err, rc)));
		return -1;
	}
	if (!P.record && P.record_max) {
		nbdkit_error("record-max= needs record=FILE");
		return -1;
	}
	if (P.fail_spec && fail_parse() < 0)
		return -1;
	P.srv->fail_member = P.fail_member;
	P.srv->fail_mark = P.fail_mark;
	if (P.record && (rc = nbd_rec_start(P.srv, P.stack, P.record, P.record_max, &err))) {
		char msg[4 * sizeof err.msg];
		nbdkit_error("%s", esc(msg, sizeof msg, bo_errstr(&err, rc)));
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
	char path[1024];
	esc(path, sizeof path, P.control);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(P.control) >= sizeof sa.sun_path) {
		nbdkit_error("control=%s: path longer than %zu bytes", path,
		             sizeof sa.sun_path - 1);
		return -1;
	}
	strcpy(sa.sun_path, P.control);
	struct stat st;
	if (lstat(P.control, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			nbdkit_error("control=%s: exists and is not a socket", path);
			return -1;
		}
		unlink(P.control); /* a stale socket from an earlier run */
	}
	P.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (P.lfd < 0 || bind(P.lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    listen(P.lfd, 8) < 0) {
		nbdkit_error("control=%s: %m", path);
		return -1;
	}
	if (pipe2(P.wake, O_CLOEXEC) < 0) {
		nbdkit_error("pipe: %m");
		return -1;
	}
	return 0;
}

static void client_close(struct ctl_client *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
	c->discarding = false;
	c->closing = false;
	c->out_off = c->out_len = 0;
}

static size_t client_backlog(const struct ctl_client *c)
{
	return c->out_len - c->out_off;
}

static int client_queue(struct ctl_client *c, const char *text, size_t len)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (len > c->out_cap - c->out_len) {
		if (c->out_off) { /* reuse the room already sent */
			memmove(c->out, c->out + c->out_off, client_backlog(c));
			c->out_len -= c->out_off;
			c->out_off = 0;
		}
		size_t cap = c->out_cap ? c->out_cap : 4096;
		while (cap - c->out_len < len)
			cap *= 2;
		if (cap != c->out_cap) {
			char *o = realloc(c->out, cap);
			if (!o)
				return -ENOMEM;
			c->out = o;
			c->out_cap = cap;
		}
	}
	memcpy(c->out + c->out_len, text, len);
	c->out_len += len;
	return 0;
}

/* Sends what the socket takes now, never waiting. */
static void client_flush(struct ctl_client *c)
{
	while (client_backlog(c) > 0) {
		ssize_t n = send(c->fd, c->out + c->out_off, client_backlog(c),
		                 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* the client is slow: poll says when it has room again */
		if (n <= 0) {
			client_close(c); /* the peer went away */
			return;
		}
		c->out_off += (size_t)n;
	}
	if (c->closing)
		client_close(c);
}

/* Runs one complete line; the reply is queued, not sent, under no lock. */
static void client_line(struct ctl_client *c)
{
	int rc;
	if (c->discarding) {
		static const char msg[] = "error: line longer than 65536 bytes\n";
		rc = client_queue(c, msg, sizeof msg - 1);
		c->discarding = false;
	} else {
		struct nbd_srv_reply r = {0};
		if (nbd_srv_control(P.srv, c->buf, c->len, &r))
			c->closing = true;
		if (r.oom) {
			static const char msg[] = "error: out of memory building the reply\n";
			rc = client_queue(c, msg, sizeof msg - 1);
		} else {
			rc = client_queue(c, r.text, r.len);
		}
		free(r.text);
	}
	c->len = 0;
	if (rc < 0)
		client_close(c);
}

/* Reads what is available; runs each complete line. */
static void client_input(struct ctl_client *c)
{
	char tmp[4096];
	ssize_t n = recv(c->fd, tmp, sizeof tmp, MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n < 0) {
		client_close(c);
		return;
	}
	if (n == 0) {
		c->closing = true; /* end of input: the replies still go out */
		client_flush(c);
		return;
	}
	for (ssize_t i = 0; i < n && c->fd >= 0 && !c->closing; i++) {
		char ch = tmp[i];
		if (ch == '\n') {
			client_line(c);
		} else if (c->discarding) {
			continue;
		} else if (c->len == NBD_CTL_LINE_MAX) {
			c->discarding = true;
		} else {
			c->buf[c->len++] = ch;
		}
	}
	if (c->fd >= 0)
		client_flush(c);
}

static void accept_client(void)
{
	int fd = accept4(P.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	for (int i = 0; i < CTL_CLIENTS; i++)
		if (P.cl[i].fd < 0) {
			P.cl[i].fd = fd;
			return;
		}
	static const char msg[] = "error: too many control connections\n";
	ssize_t w = send(fd, msg, sizeof msg - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)w;
	close(fd);
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
		for (int i = 0; i < CTL_CLIENTS; i++) {
			struct ctl_client *c = &P.cl[i];
			if (c->fd < 0)
				continue;
			/* A client with a full backlog is not read: its next commands wait
			 * in its own socket until it reads its replies. */
			short ev = 0;
			if (!c->closing && client_backlog(c) < CTL_OUT_MAX)
				ev |= POLLIN;
			if (client_backlog(c) > 0)
				ev |= POLLOUT;
			pfd[n] = (struct pollfd){.fd = c->fd, .events = ev};
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
			short re = pfd[k].revents;
			if (!re)
				continue;
			if (map[k] < 0) {
				accept_client();
				continue;
			}
			struct ctl_client *c = &P.cl[map[k]];
			if (re & POLLOUT)
				client_flush(c);
			if (c->fd >= 0 && (re & POLLIN))
				client_input(c);
			else if (c->fd >= 0 && (re & (POLLERR | POLLHUP | POLLNVAL)))
				client_close(c);
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
		free(P.cl[i].out);
	}
	if (P.lfd >= 0) {
		close(P.lfd);
		unlink(P.control);
	}
	for (int i = 0; i < 2; i++)
		if (P.wake[i] >= 0)
			close(P.wake[i]);
	if (P.srv && P.srv->rec) { /* a run that was never saved is not lost */
		struct bo_err err = {{0}};
		uint64_t n;
		int rc = nbd_rec_save(P.srv, &n, &err);
		if (rc < 0)
			nbdkit_error("record save at unload: %s", bo_errstr(&err, rc));
	}
	nbd_srv_close(P.srv);
	nbd_states_close(S.st);
	free(S.dir);
	free(P.stack);
	free(P.control);
	free(P.record);
	free(P.fail_spec);
	free(P.fail_mark);
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

/* The marker export's handle; a member's is its slot here; every other connection's
 * is the server. */
static char marker_handle;
static char member_handle[NBD_SRV_MEMBERS_MAX];

/* The member a handle serves, or NBD_SRV_WHOLE. */
static int member_of(const void *h)
{
	const char *c = h;
	if (c >= member_handle && c < member_handle + NBD_SRV_MEMBERS_MAX)
		return (int)(c - member_handle);
	return NBD_SRV_WHOLE;
}

/* "m0".."m63" of the members served: the index, else -1. */
static int member_name(const char *name)
{
	if (name[0] != 'm' || !name[1] || strspn(name + 1, "0123456789") != strlen(name + 1) ||
	    strlen(name) > 3 || (name[1] == '0' && name[2]))
		return -1;
	int i = atoi(name + 1);
	return P.srv && i < (int)P.srv->nmembers ? i : -1;
}

static int bo_list_exports(int readonly, int is_tls, struct nbdkit_exports *exports)
{
	(void)readonly;
	(void)is_tls;
	for (unsigned i = 0; P.members && i < P.srv->nmembers; i++) {
		char name[16], desc[32];
		snprintf(name, sizeof name, "m%u", i);
		snprintf(desc, sizeof desc, "member %u", i);
		if (nbdkit_add_export(exports, name, desc) < 0)
			return -1;
	}
	if (!P.members && nbdkit_add_export(exports, "", "the stack") < 0)
		return -1;
	if (P.record && nbdkit_add_export(exports, "marker", "marks for the I/O log") < 0)
		return -1;
	return 0;
}

static void *bo_open(int readonly)
{
	(void)readonly;
	if (S.st) {
		struct nbd_states_conn *c = NULL;
		struct bo_err err = {{0}};
		if (states_ret(nbd_states_connect(S.st, nbdkit_export_name(), &c, &err), &err))
			return NULL;
		return c;
	}
	const char *name = nbdkit_export_name();
	if ((!name || !*name) && !P.members)
		return P.srv; /* every connection sees the one device: a reboot reconnects */
	int m = name && P.members ? member_name(name) : -1;
	if (m >= 0)
		return &member_handle[m];
	if (strcmp(name, "marker") == 0) {
		if (P.record)
			return &marker_handle;
		nbdkit_error("export 'marker': the plugin is not recording (record=FILE)");
		return NULL;
	}
	char n[1024];
	if (P.members)
		nbdkit_error("no export '%s' (this plugin serves members m0 to m%u%s)",
		             esc(n, sizeof n, name ? name : ""), P.srv->nmembers - 1,
		             P.record ? " and \"marker\"" : "");
	else
		nbdkit_error("no export '%s' (this plugin serves \"\"%s)", esc(n, sizeof n, name),
		             P.record ? " and \"marker\"" : "");
	return NULL;
}

static void bo_close(void *h)
{
	if (S.st)
		nbd_states_disconnect(h); /* the private overlay goes with the connection */
}

static int64_t bo_get_size(void *h)
{
	if (h == &marker_handle)
		return NBD_REC_MARKER_BYTES;
	if (S.st)
		return (int64_t)nbd_states_size(h);
	int m = member_of(h);
	if (m >= 0)
		return (int64_t)(P.srv->mstart[m + 1] - P.srv->mstart[m]);
	return (int64_t)((struct nbd_srv *)h)->size;
}

static int ret(int rc)
{
	if (rc == 0)
		return 0;
	nbdkit_set_error(-rc);
	bool quiet;
	const char *msg = nbd_srv_last_error(&quiet);
	if (!quiet)
		nbdkit_error("%s", msg);
	return -1;
}

static int bo_block_size(void *h, uint32_t *min, uint32_t *pref, uint32_t *max)
{
	if (h == &marker_handle || member_of(h) >= 0)
		h = P.srv; /* the marker export takes any write; it advertises the same sizes */
	struct nbd_srv *s = h;
	if (S.st) {
		*min = 1, *pref = 4096, *max = 32u << 20;
		return 0;
	}
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

/* Trim and write-zeroes are the stack's: a mark is text. (Without can_zero nbdkit
 * turns a write-zeroes into a write of zeros, which holds no mark and is refused.) */
static int bo_can_data(void *h)
{
	return h != &marker_handle;
}

static int bo_pread(void *h, void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	(void)flags;
	if (h == &marker_handle)
		return ret(nbd_rec_marker_pread(P.srv, buf, count, off));
	struct bo_err err = {{0}};
	if (S.st)
		return states_ret(nbd_states_pread(h, buf, count, off, &err), &err);
	return ret(nbd_srv_pread(P.srv, member_of(h), buf, count, off));
}

static int bo_pwrite(void *h, const void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	if (h ==
	    &marker_handle) { /* a mark is in the log once the write returns: FUA adds nothing */
		int rc = nbd_rec_marker_pwrite(P.srv, buf, count, off);
		if (rc > 0) /* record.c failed the member with the mark, under the lock */
			nbdkit_debug("fail-member: member %d fails from mark \"%s\" on",
			             P.fail_member, P.fail_mark);
		return ret(rc > 0 ? 0 : rc);
	}
	struct bo_err err = {{0}};
	if (S.st) /* FUA means nothing to an overlay in memory */
		return states_ret(nbd_states_pwrite(h, buf, count, off, &err), &err);
	return ret(nbd_srv_pwrite(P.srv, member_of(h), buf, count, off, flags & NBDKIT_FLAG_FUA));
}

static int bo_flush(void *h, uint32_t flags)
{
	(void)flags;
	if (h == &marker_handle)
		return 0; /* the marker export holds nothing volatile */
	if (S.st)
		return 0;
	return ret(nbd_srv_flush(P.srv, member_of(h)));
}

static int marker_refuses(const char *what)
{
	nbdkit_set_error(EOPNOTSUPP);
	nbdkit_error("marker export: %s refused (a mark is text)", what);
	return -1;
}

static int bo_trim(void *h, uint32_t count, uint64_t off, uint32_t flags)
{
	if (h == &marker_handle) /* not offered (can_trim); refused should a client try */
		return marker_refuses("trim");
	struct bo_err err = {{0}};
	if (S.st)
		return states_ret(nbd_states_zero(h, count, off, &err), &err);
	return ret(nbd_srv_trim(P.srv, member_of(h), count, off, flags & NBDKIT_FLAG_FUA));
}

static int bo_zero(void *h, uint32_t count, uint64_t off, uint32_t flags)
{
	if (h == &marker_handle)
		return marker_refuses("write-zeroes");
	struct bo_err err = {{0}};
	if (S.st)
		return states_ret(nbd_states_zero(h, count, off, &err), &err);
	return ret(nbd_srv_zero(P.srv, member_of(h), count, off, flags & NBDKIT_FLAG_FUA));
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
                   "control=PATH   Unix socket for the control protocol (docs/nbd.md)\n"
                   "record=FILE    log every request (and the marker export's marks) to "
                   "FILE\n"
                   "record-max=N   refuse requests once the log would pass N bytes (1G)\n"
                   "members=yes    serve the lowers of the top concat as exports m0, m1, "
                   "... (one log, one clock)\n"
                   "fail-member=I@MARK  member I answers EIO to every request from the "
                   "marker export's mark MARK on\n"
                   "states=DIR     serve a state store as exports s<N> (docs/realkernel.md)",
    .magic_config_key = "stack",
    .get_ready = bo_get_ready,
    .after_fork = bo_after_fork,
    .unload = bo_unload,
    .preconnect = bo_preconnect,
    .list_exports = bo_list_exports,
    .open = bo_open,
    .close = bo_close,
    .get_size = bo_get_size,
    .block_size = bo_block_size,
    .can_write = bo_can_true,
    .can_flush = bo_can_true,
    .can_trim = bo_can_data,
    .can_zero = bo_can_data,
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
