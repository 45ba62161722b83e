// SPDX-License-Identifier: GPL-2.0-or-later
/* net.c — the probe's TCP sink (acknowledgements to a listener on another machine)
 * and that listener, `blackout probe listen`, which syncs each line it receives.
 * Apart from sink.c so the guest's static bo-probe, which writes its acknowledgements
 * to a serial port, does not link the resolver. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "blackout/probe.h"
#include "blackout/util.h"

int probe_sink_tcp(const char *hostport, int *fd, struct probe_sink *s, struct bo_err *err)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');
	if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof(host) || !colon[1])
		return bo_errf(err, -EINVAL,
		               "--listener '%s': give HOST:PORT of a 'blackout probe "
		               "listen' (e.g. 192.168.1.5:7777)",
		               hostport);
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = 0;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
	int g = getaddrinfo(host, colon + 1, &hints, &ai);
	if (g)
		return bo_errf(err, -EINVAL, "--listener %s: %s", hostport, gai_strerror(g));
	int rc = -ECONNREFUSED;
	for (struct addrinfo *a = ai; a && rc; a = a->ai_next) {
		*fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (*fd < 0)
			continue;
		if (connect(*fd, a->ai_addr, a->ai_addrlen) == 0) {
			rc = 0;
		} else {
			rc = -errno;
			close(*fd);
		}
	}
	freeaddrinfo(ai);
	if (rc)
		return bo_errf(err, rc,
		               "--listener %s: %s: start 'blackout probe listen' there first",
		               hostport, strerror(-rc));
	int one = 1;
	setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	s->emit = probe_fd_emit;
	s->ctx = fd;
	return 0;
}

int probe_listen(const char *addr, unsigned port, const char *out, FILE *status, struct bo_err *err)
{
	int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (ofd < 0)
		return bo_errf(err, -errno, "%s: %s", out, strerror(errno));
	struct sockaddr_in6 sa = {
	    .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = in6addr_any};
	int ls = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1, zero = 0;
	int rc = ls < 0 ? -errno : 0;
	if (rc == 0) {
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (addr && inet_pton(AF_INET6, addr, &sa.sin6_addr) != 1) {
			char m[64];
			snprintf(m, sizeof(m), "::ffff:%s", addr);
			if (inet_pton(AF_INET6, m, &sa.sin6_addr) != 1)
				rc = bo_errf(err, -EINVAL, "--bind %s: not an IPv4 or IPv6 address",
				             addr);
		}
	}
	if (rc == 0 && (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1) < 0))
		rc = bo_errf(err, -errno, "listening on port %u: %s", port, strerror(errno));
	if (rc == 0) {
		fprintf(status, "listening on port %u; acknowledgements go to %s\n", port, out);
		fflush(status);
	}
	int c = rc == 0 ? accept4(ls, NULL, NULL, SOCK_CLOEXEC) : -1;
	if (rc == 0 && c < 0)
		rc = bo_errf(err, -errno, "accept: %s", strerror(errno));
	char buf[65536];
	uint64_t total = 0;
	while (rc == 0) {
		ssize_t n = read(c, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the writer closed, or its machine lost power */
		rc = probe_fd_emit(&ofd, buf, (size_t)n);
		/* on its own media before the next line can arrive */
		if (rc == 0 && fdatasync(ofd) < 0)
			rc = -errno;
		if (rc)
			rc = bo_errf(err, rc, "%s: %s", out, strerror(-rc));
		total += (uint64_t)n;
		if (total > PROBE_LOG_MAX_BYTES)
			rc = bo_errf(err, -EFBIG, "the writer sent more than %u bytes",
			             PROBE_LOG_MAX_BYTES);
	}
	if (c >= 0)
		close(c);
	if (ls >= 0)
		close(ls);
	if (close(ofd) < 0 && rc == 0)
		rc = bo_errf(err, -errno, "%s: %s", out, strerror(errno));
	if (rc == 0)
		fprintf(status, "connection closed after %llu bytes\n", (unsigned long long)total);
	return rc;
}
