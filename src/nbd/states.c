// SPDX-License-Identifier: GPL-2.0-or-later
/* states.c — serves a state store (docs/realkernel.md section 2): export s<N> reads
 * as base.img with s<N>.delta's blocks over it; the guest's writes (journal replay)
 * land in a private in-memory overlay dropped on disconnect. DIR is never written. */
#include "nbd/states.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blackout/vm.h"

#define BS      VM_DELTA_BLOCK
#define LEAF    512u /* blocks per second-level table */
#define NAMEMAX 10u  /* "s" + up to 9 digits */

struct nbd_states {
	int dirfd, basefd;
	uint64_t size, nblocks;
	char dir[512]; /* for messages */
};

/* Block b's current bytes: NULL (base), into `delta` (the state), or owned (written).
 * nbdkit may run a connection's requests at once: `lock` orders them over the overlay
 * (the store itself is only read, with pread). */
struct nbd_states_conn {
	struct nbd_states *st;
	pthread_mutex_t lock;
	uint8_t *delta;
	size_t delta_len;
	uint8_t ***top; /* nblocks / LEAF second-level tables, allocated on first use */
	size_t ntop;
};

int nbd_states_open(const char *dir, struct nbd_states **out, struct bo_err *err)
{
	struct nbd_states *st = calloc(1, sizeof *st);
	if (!st)
		return -ENOMEM;
	snprintf(st->dir, sizeof st->dir, "%s", dir);
	st->basefd = -1;
	st->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;
	struct stat sb;
	if (st->dirfd < 0) {
		rc = bo_errf(err, -errno, "states=%s: %s", dir, strerror(errno));
	} else if ((st->basefd = openat(st->dirfd, "base.img", O_RDONLY | O_CLOEXEC)) < 0) {
		rc = bo_errf(err, -errno, "states=%s: base.img: %s", dir, strerror(errno));
	} else if (fstat(st->basefd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		rc = bo_errf(err, -EINVAL, "states=%s: base.img is not a regular file", dir);
	} else if (sb.st_size <= 0 || sb.st_size % BS != 0) {
		rc = bo_errf(err, -EINVAL,
		             "states=%s: base.img is %lld bytes, not a non-zero multiple of 4096",
		             dir, (long long)sb.st_size);
	} else {
		st->size = (uint64_t)sb.st_size;
		st->nblocks = st->size / BS;
		*out = st;
		return 0;
	}
	nbd_states_close(st);
	return rc;
}

void nbd_states_close(struct nbd_states *st)
{
	if (!st)
		return;
	if (st->basefd >= 0)
		close(st->basefd);
	if (st->dirfd >= 0)
		close(st->dirfd);
	free(st);
}

/* "s<N>", N decimal without leading zeros, 0 <= N < 10^9. */
static bool state_name_ok(const char *name)
{
	size_t len = strlen(name);
	if (len < 2 || len > NAMEMAX || name[0] != 's')
		return false;
	if (name[1] == '0' && len > 2)
		return false;
	for (size_t i = 1; i < len; i++)
		if (name[i] < '0' || name[i] > '9')
			return false;
	return true;
}

static uint8_t **slot(struct nbd_states_conn *c, uint64_t b, bool make)
{
	uint8_t **leaf = c->top[b / LEAF];
	if (!leaf) {
		if (!make)
			return NULL;
		leaf = c->top[b / LEAF] = calloc(LEAF, sizeof *leaf);
		if (!leaf)
			return NULL;
	}
	return &leaf[b % LEAF];
}

static bool owned(const struct nbd_states_conn *c, const uint8_t *p)
{
	return p && !(c->delta && p >= c->delta && p < c->delta + c->delta_len);
}

static int load_delta(struct nbd_states_conn *c, int fd, const char *file, struct bo_err *err)
{
	struct nbd_states *st = c->st;
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return bo_errf(err, -EINVAL, "%s/%s: not a regular file", st->dir, file);
	/* a delta can change each block at most once: larger than that is not a delta */
	if ((uint64_t)sb.st_size > VM_DELTA_HDR + st->nblocks * (uint64_t)VM_DELTA_REC)
		return bo_errf(err, -EINVAL, "%s/%s: %lld bytes, more than a delta of this device",
		               st->dir, file, (long long)sb.st_size);
	c->delta_len = (size_t)sb.st_size;
	c->delta = malloc(c->delta_len ? c->delta_len : 1);
	if (!c->delta)
		return -ENOMEM;
	size_t got = 0;
	while (got < c->delta_len) {
		ssize_t r = pread(fd, c->delta + got, c->delta_len - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return bo_errf(err, -EIO, "%s/%s: read failed", st->dir, file);
		got += (size_t)r;
	}
	uint32_t n;
	struct bo_err why = {{0}};
	int rc = vm_delta_check(c->delta, c->delta_len, st->nblocks, &n, &why);
	if (rc)
		return bo_errf(err, rc, "%s/%s: %s", st->dir, file, why.msg);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t **s = slot(c, vm_delta_block(c->delta, i), true);
		if (!s)
			return -ENOMEM;
		*s = c->delta + VM_DELTA_HDR + (size_t)i * VM_DELTA_REC + 8;
	}
	return 0;
}

int nbd_states_connect(struct nbd_states *st, const char *name, struct nbd_states_conn **out,
                       struct bo_err *err)
{
	if (!state_name_ok(name))
		return bo_errf(err, -ENOENT,
		               "export '%.40s': not a state of %s (names are s<N>, N < 10^9)", name,
		               st->dir);
	char file[NAMEMAX + 8];
	snprintf(file, sizeof file, "%s.delta", name);
	struct nbd_states_conn *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->st = st;
	pthread_mutex_init(&c->lock, NULL);
	c->ntop = (size_t)((st->nblocks + LEAF - 1) / LEAF);
	c->top = calloc(c->ntop, sizeof *c->top);
	int rc = c->top ? 0 : -ENOMEM;
	/* O_NONBLOCK: a FIFO named like a delta must not stall the server */
	int fd = rc ? -1 : openat(st->dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (!rc && fd < 0)
		rc = bo_errf(err, -errno, "%s/%s: %s", st->dir, file, strerror(errno));
	if (!rc)
		rc = load_delta(c, fd, file, err);
	if (fd >= 0)
		close(fd);
	if (rc) {
		nbd_states_disconnect(c);
		return rc;
	}
	*out = c;
	return 0;
}

void nbd_states_disconnect(struct nbd_states_conn *c)
{
	if (!c)
		return;
	for (size_t t = 0; c->top && t < c->ntop; t++) {
		if (!c->top[t])
			continue;
		for (unsigned i = 0; i < LEAF; i++)
			if (owned(c, c->top[t][i]))
				free(c->top[t][i]);
		free(c->top[t]);
	}
	free(c->top);
	free(c->delta);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

uint64_t nbd_states_size(const struct nbd_states_conn *c)
{
	return c->st->size;
}

static int range(struct nbd_states_conn *c, uint32_t count, uint64_t off, struct bo_err *err)
{
	if (off > c->st->size || count > c->st->size - off)
		return bo_errf(err, -EINVAL, "request past the end of the state");
	return 0;
}

static int base_read(struct nbd_states_conn *c, uint8_t *buf, size_t len, uint64_t off,
                     struct bo_err *err)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(c->st->basefd, buf + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return bo_errf(err, -EIO, "%s/base.img: %s", c->st->dir, strerror(errno));
		if (r == 0) /* base.img shrank under us: not the store it was */
			return bo_errf(err, -EIO, "%s/base.img: short read", c->st->dir);
		got += (size_t)r;
	}
	return 0;
}

int nbd_states_pread(struct nbd_states_conn *c, void *buf, uint32_t count, uint64_t off,
                     struct bo_err *err)
{
	int rc = range(c, count, off, err);
	uint8_t *p = buf;
	pthread_mutex_lock(&c->lock);
	while (!rc && count > 0) {
		uint64_t b = off / BS;
		uint32_t in = (uint32_t)(off % BS), n = BS - in < count ? BS - in : count;
		uint8_t **s = slot(c, b, false);
		if (s && *s)
			memcpy(p, *s + in, n);
		else
			rc = base_read(c, p, n, off, err);
		p += n, off += n, count -= n;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* The block's private copy, made from what the connection sees now. */
static int own(struct nbd_states_conn *c, uint64_t b, uint8_t **out, struct bo_err *err)
{
	uint8_t **s = slot(c, b, true);
	if (!s)
		return -ENOMEM;
	if (!owned(c, *s)) {
		uint8_t *copy = malloc(BS);
		if (!copy)
			return -ENOMEM;
		int rc = 0;
		if (*s)
			memcpy(copy, *s, BS);
		else
			rc = base_read(c, copy, BS, b * BS, err);
		if (rc) {
			free(copy);
			return rc;
		}
		*s = copy;
	}
	*out = *s;
	return 0;
}

static int overlay_write(struct nbd_states_conn *c, const uint8_t *src, uint32_t count,
                         uint64_t off, struct bo_err *err)
{
	int rc = range(c, count, off, err);
	pthread_mutex_lock(&c->lock);
	while (!rc && count > 0) {
		uint32_t in = (uint32_t)(off % BS), n = BS - in < count ? BS - in : count;
		uint8_t *blk;
		rc = own(c, off / BS, &blk, err);
		if (!rc) {
			if (src)
				memcpy(blk + in, src, n);
			else
				memset(blk + in, 0, n);
		}
		if (src)
			src += n;
		off += n, count -= n;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int nbd_states_pwrite(struct nbd_states_conn *c, const void *buf, uint32_t count, uint64_t off,
                      struct bo_err *err)
{
	return overlay_write(c, buf, count, off, err);
}

int nbd_states_zero(struct nbd_states_conn *c, uint32_t count, uint64_t off, struct bo_err *err)
{
	return overlay_write(c, NULL, count, off, err);
}
