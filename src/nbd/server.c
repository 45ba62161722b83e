// SPDX-License-Identifier: GPL-2.0-or-later
/* server.c — one blackout stack behind NBD: byte requests onto sectors (read-modify-
 * write at unaligned edges), FUA/flush/trim/zero mapped exactly, and the control
 * commands (power cut, replug, stats). The nbdkit glue is plugin.c. */
#include "nbd/server.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/raid.h"
#include "blackout/util.h"
#include "nbd/record.h"

int nbd_srv_open(const char *spec, uint64_t size, struct nbd_srv **out, struct bo_err *err)
{
	struct bdev *dev = NULL;
	int rc = dev_stack_open_text(spec, NULL, &dev, err);
	if (rc < 0)
		return rc;
	uint64_t full = blk_size_bytes(dev);
	if (size == 0)
		size = full;
	if (size > full || size % dev->sector_size) {
		blk_close(dev);
		return bo_errf(err, -EINVAL,
		               "size=%" PRIu64 ": must be a multiple of the %u-byte sector and at "
		               "most the stack's %" PRIu64 " bytes",
		               size, dev->sector_size, full);
	}
	struct nbd_srv *s = calloc(1, sizeof *s);
	if (!s) {
		blk_close(dev);
		return bo_errf(err, -ENOMEM, "out of memory");
	}
	s->dev = dev;
	s->io = dev;
	s->size = size;
	s->fail_member = -1;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void nbd_srv_close(struct nbd_srv *s)
{
	if (!s)
		return;
	nbd_rec_stop(s);
	blk_close(s->dev);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int nbd_srv_members(struct nbd_srv *s, struct bo_err *err)
{
	struct bdev *d = s->dev;
	if (strcmp(d->name, "concat") != 0)
		return bo_errf(err, -EINVAL,
		               "members=yes serves the lowers of a concat: the stack's top is '%s' "
		               "(write 'concat > [MEMBER ; MEMBER ; ...]')",
		               d->name);
	if (s->size != blk_size_bytes(d))
		return bo_errf(err, -EINVAL, "members=yes takes no size=");
	unsigned n = 0;
	uint64_t at = 0;
	struct bdev *l;
	while (n < NBD_SRV_MEMBERS_MAX && (l = blk_lower(d, n)) != NULL) {
		uint64_t b = blk_size_bytes(l);
		if (b % 4096)
			return bo_errf(
			    err, -EINVAL,
			    "members=yes: member %u is %" PRIu64
			    " bytes, not a whole number of 4 KiB (the state store's blocks)",
			    n, b);
		s->mio[n] = l;
		s->mstart[n] = at;
		at += b;
		n++;
	}
	if (n < 2)
		return bo_errf(err, -EINVAL, "members=yes: the concat has %u lower; 2 or more", n);
	s->mstart[n] = at;
	s->nmembers = n;
	return 0;
}

/* Where a write, flush or discard of this export goes: the whole stack (through the
 * recorder when recording) or member m's own device. */
static struct bdev *io_of(struct nbd_srv *s, int member)
{
	return member < 0 ? s->io : s->mio[member];
}

/* Sector of the stack where this export's sector 0 is. */
static uint64_t base_lba(struct nbd_srv *s, int member)
{
	return member < 0 ? 0 : s->mstart[member] / s->dev->sector_size;
}

/* A refusal of the recorder's own (its log is full) reaches the client's log line
 * through s->err, as the stack's errors do through dev->err. */
static int io_ret(struct nbd_srv *s, struct bdev *io, int rc)
{
	if (rc < 0 && io != s->dev && io->err.msg[0]) {
		s->err = io->err;
		io->err.msg[0] = '\0';
	}
	return rc;
}

/* Checks the request against its export; *off becomes the stack's byte offset. */
static int check_req(struct nbd_srv *s, int member, uint32_t count, uint64_t *off)
{
	if (member >= (int)s->nmembers || (member < 0 && member != NBD_SRV_WHOLE))
		return bo_errf(&s->err, -EINVAL, "no member %d", member);
	uint64_t size = member < 0 ? s->size : s->mstart[member + 1] - s->mstart[member];
	if (*off > size || count > size - *off)
		return bo_errf(&s->err, -EINVAL,
		               "request [%" PRIu64 ", +%u) beyond the %" PRIu64 "-byte export",
		               *off, count, size);
	*off += member < 0 ? 0 : s->mstart[member];
	return 0;
}

/* The failure of this thread's last request: nbdkit runs requests on several threads at
 * once, so its message cannot wait for the plugin in the shared struct (whose s->err is
 * only ever touched under the lock). */
static __thread struct {
	char msg[sizeof((struct bo_err *)0)->msg];
	bool quiet;
} req_failed;

const char *nbd_srv_last_error(bool *quiet)
{
	*quiet = req_failed.quiet;
	return req_failed.msg;
}

/* Every data-path request runs between nbd_srv_req_start and nbd_srv_req_end, under
 * the lock: the order in which requests take it is the order the stack and the
 * recorder see. */
void nbd_srv_req_start(struct nbd_srv *s)
{
	pthread_mutex_lock(&s->lock);
	s->err.msg[0] = '\0';
	req_failed.quiet = false;
}

/* Starts a request to an export and checks it. */
static int req_begin(struct nbd_srv *s, int member, uint32_t count, uint64_t *off)
{
	nbd_srv_req_start(s);
	if (member >= 0 && member == s->fail_member && s->member_failed) {
		/* not counted: the request never reached the member; EIO is the experiment */
		req_failed.quiet = true;
		return bo_errf(&s->err, -EIO, "member %d has failed (fail-member=)", member);
	}
	return check_req(s, member, count, off);
}

int nbd_srv_req_end(struct nbd_srv *s, int rc)
{
	if (rc < 0) {
		snprintf(req_failed.msg, sizeof req_failed.msg, "%s",
		         s->err.msg[0] ? s->err.msg : bo_errstr(&s->dev->err, rc));
		/* a powered-off device failing every request is the experiment, not news */
		req_failed.quiet |= rc == -EIO && s->dev->powered_off;
	}
	s->err.msg[0] = '\0';
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Records every decision of the chooser it wraps, so a cut's outcome can be printed
 * as a list and replayed exactly. */
struct rec_chooser {
	struct blk_chooser base;
	struct blk_chooser *inner;
	uint32_t len;
	bool overflow;
	uint64_t v[BLK_CHOICES_MAX];
};

static uint64_t rec_choose(struct blk_chooser *c, uint64_t n, const char *what)
{
	struct rec_chooser *r = (struct rec_chooser *)c;
	uint64_t v = blk_choose(r->inner, n, what);
	if (v >= n)
		v = n - 1; /* a replayed list may hold a value too large for this decision */
	if (r->len < BLK_CHOICES_MAX)
		r->v[r->len++] = v;
	else
		r->overflow = true;
	return v;
}

/* Cuts power with the given outcome; writes a reply-ready summary into msg. */
static int do_cut(struct nbd_srv *s, const struct nbd_ctl_outcome *o,
                  const struct blk_inflight *inflight, char **msg)
{
	*msg = NULL;
	if (s->dev->powered_off)
		return bo_errf(&s->err, -EALREADY, "the power is already off (replug first)");
	struct rec_chooser *r = calloc(1, sizeof *r);
	union {
		struct blk_chooser_random rnd;
		struct blk_chooser_list list;
	} *inner = calloc(1, sizeof *inner);
	if (!r || !inner) {
		free(r);
		free(inner);
		return bo_errf(&s->err, -ENOMEM, "out of memory");
	}
	r->base.choose = rec_choose;
	switch (o->kind) {
	case NBD_CTL_OUTCOME_ZERO: r->inner = &blk_chooser_zero; break;
	case NBD_CTL_OUTCOME_SEED:
		blk_chooser_random_init(&inner->rnd, o->seed);
		r->inner = &inner->rnd.base;
		break;
	case NBD_CTL_OUTCOME_LIST:
		blk_chooser_list_init(&inner->list, o->v, o->len);
		r->inner = &inner->list.base;
		break;
	}
	int rc = blk_power_cut(s->dev, &r->base, inflight);
	if (rc < 0) {
		bo_errf(&s->err, rc, "power cut failed: %s", bo_errstr(&s->dev->err, rc));
	} else {
		s->c.cuts++;
		/* The decisions taken, as a list outcome: "cut list:..." replays this cut. */
		struct nbd_ctl_outcome *taken = malloc(sizeof *taken);
		if (taken) {
			char given[64];
			if (o->kind == NBD_CTL_OUTCOME_LIST)
				snprintf(given, sizeof given, "list(%u)", o->len);
			else
				nbd_ctl_outcome_format(o, given, sizeof given);
			taken->kind = NBD_CTL_OUTCOME_LIST;
			taken->len = r->len;
			memcpy(taken->v, r->v, r->len * sizeof r->v[0]);
			size_t cap = (size_t)nbd_ctl_outcome_format(taken, NULL, 0) + 160;
			*msg = malloc(cap);
			if (*msg) {
				int w =
				    snprintf(*msg, cap,
				             "given=%s inflight=%d decisions=%u%s outcome=", given,
				             inflight ? 1 : 0, r->len, r->overflow ? "+" : "");
				nbd_ctl_outcome_format(taken, *msg + w, cap - (size_t)w);
				snprintf(s->last_cut, sizeof s->last_cut, "%s", *msg);
			}
			free(taken);
		}
	}
	free(r);
	free(inner);
	return rc;
}

/* The sector range covering [off, off+count) and, when the edges are unaligned, a
 * bounce buffer with the edge sectors read in and the new bytes laid over them. */
static int prepare_write(struct nbd_srv *s, const void *buf, uint32_t count, uint64_t off,
                         uint64_t *lba, uint32_t *nsec, const void **data, void **bounce)
{
	uint32_t ss = s->dev->sector_size;
	uint64_t first = off / ss, end = off + count;
	uint64_t last = (end + ss - 1) / ss; /* exclusive */
	*lba = first;
	*nsec = (uint32_t)(last - first);
	*bounce = NULL;
	if (off % ss == 0 && end % ss == 0) {
		*data = buf;
		return 0;
	}
	uint8_t *b = malloc((size_t)*nsec * ss);
	if (!b)
		return bo_errf(&s->err, -ENOMEM, "out of memory");
	int rc = 0;
	if (off % ss)
		rc = blk_read(s->dev, first, 1, b);
	if (rc == 0 && end % ss && (last - 1 != first || off % ss == 0))
		rc = blk_read(s->dev, last - 1, 1, b + (size_t)(*nsec - 1) * ss);
	if (rc < 0) {
		free(b);
		return rc;
	}
	memcpy(b + off % ss, buf, count);
	s->c.rmw++;
	*data = b;
	*bounce = b;
	return 0;
}

/* One device write for one NBD write-type request (or one chunk of a zero request).
 * `counted`: this is where an armed cut-at fires. Caller holds the lock. */
static int do_write(struct nbd_srv *s, int member, const void *buf, uint32_t count, uint64_t off,
                    bool fua, bool counted)
{
	uint64_t lba = 0;
	uint32_t nsec = 0;
	const void *data = NULL;
	void *bounce = NULL;
	if (s->dev->powered_off) {
		s->c.eio++;
		return -EIO;
	}
	int rc = prepare_write(s, buf, count, off, &lba, &nsec, &data, &bounce);
	if (rc < 0)
		return rc;
	unsigned flags = fua ? BLK_FUA : 0;
	if (counted && s->cut_armed && --s->cut_countdown == 0) {
		/* The write arrived but never completed: the device decides how much of it
		 * landed. The client sees an I/O error, as from a disk losing power. */
		s->cut_armed = false;
		struct blk_inflight in = {.lba = lba, .count = nsec, .flags = flags, .data = data};
		char *msg = NULL;
		do_cut(s, &s->cut_outcome, &in, &msg);
		free(msg);
		free(bounce);
		s->c.eio++;
		return -EIO;
	}
	struct bdev *io = io_of(s, member);
	rc = io_ret(s, io, blk_write(io, lba - base_lba(s, member), nsec, data, flags));
	free(bounce);
	return rc;
}

int nbd_srv_pread(struct nbd_srv *s, int member, void *buf, uint32_t count, uint64_t off)
{
	int rc = req_begin(s, member, count, &off);
	if (rc < 0 || count == 0)
		return nbd_srv_req_end(s, rc);
	s->c.reads++;
	uint32_t ss = s->dev->sector_size;
	uint64_t first = off / ss, end = off + count, last = (end + ss - 1) / ss;
	uint32_t nsec = (uint32_t)(last - first);
	if (s->dev->powered_off) {
		s->c.eio++;
		rc = -EIO;
	} else if (off % ss == 0 && end % ss == 0) {
		rc = blk_read(s->dev, first, nsec, buf);
	} else {
		uint8_t *b = malloc((size_t)nsec * ss);
		rc = b ? blk_read(s->dev, first, nsec, b) : -ENOMEM;
		if (rc == 0)
			memcpy(buf, b + off % ss, count);
		free(b);
	}
	return nbd_srv_req_end(s, rc);
}

int nbd_srv_pwrite(struct nbd_srv *s, int member, const void *buf, uint32_t count, uint64_t off,
                   bool fua)
{
	int rc = req_begin(s, member, count, &off);
	if (rc < 0 || count == 0)
		return nbd_srv_req_end(s, rc);
	s->c.writes++;
	s->c.fua_writes += fua;
	rc = do_write(s, member, buf, count, off, fua, true);
	return nbd_srv_req_end(s, rc);
}

int nbd_srv_flush(struct nbd_srv *s, int member)
{
	uint64_t off = 0;
	int rc = req_begin(s, member, 0, &off);
	if (rc < 0)
		return nbd_srv_req_end(s, rc);
	s->c.flushes++;
	rc = -EIO;
	struct bdev *io = io_of(s, member);
	if (s->dev->powered_off)
		s->c.eio++;
	else
		rc = io_ret(s, io, blk_flush(io));
	return nbd_srv_req_end(s, rc);
}

int nbd_srv_trim(struct nbd_srv *s, int member, uint32_t count, uint64_t off, bool fua)
{
	int rc = req_begin(s, member, count, &off);
	if (rc < 0)
		return nbd_srv_req_end(s, rc);
	s->c.trims++;
	/* Trim is advisory: only whole sectors inside the range are discarded. */
	uint32_t ss = s->dev->sector_size;
	uint64_t first = (off + ss - 1) / ss, last = (off + count) / ss;
	struct bdev *io = io_of(s, member);
	if (s->dev->powered_off) {
		s->c.eio++;
		rc = -EIO;
	} else if (last > first) {
		rc = io_ret(s, io,
		            blk_discard(io, first - base_lba(s, member), (uint32_t)(last - first)));
	}
	/* blk has no discard+FUA; a flush makes the discard (and more) durable. */
	if (rc == 0 && fua)
		rc = io_ret(s, io, blk_flush(io));
	return nbd_srv_req_end(s, rc);
}

int nbd_srv_zero(struct nbd_srv *s, int member, uint32_t count, uint64_t off, bool fua)
{
	enum { CHUNK = 1u << 20 };
	int rc = req_begin(s, member, count, &off);
	if (rc < 0 || count == 0)
		return nbd_srv_req_end(s, rc);
	void *zeros = calloc(1, count < CHUNK ? count : CHUNK);
	if (!zeros)
		return nbd_srv_req_end(s, bo_errf(&s->err, -ENOMEM, "out of memory"));
	s->c.zeros++;
	bool first = true;
	/* Zeroes are written, never discarded: a discarded sector need not read as zero. */
	while (count > 0 && rc == 0) {
		uint32_t n = count < CHUNK ? count : CHUNK;
		rc = do_write(s, member, zeros, n, off, fua, first);
		first = false;
		off += n;
		count -= n;
	}
	free(zeros);
	return nbd_srv_req_end(s, rc);
}

/* ---- control ----------------------------------------------------------------- */

static bool is_raid(const struct bdev *d)
{
	return dev_has_cap(d, DEV_CAP_MEMBERS);
}

static bool is_fault(const struct bdev *d)
{
	return dev_has_cap(d, DEV_CAP_FAULT_RULES);
}

/* Pre-order search of the stack (as far as models report their lowers). */
static struct bdev *find_dev(struct bdev *d, bool (*want)(const struct bdev *), unsigned depth)
{
	if (!d || depth > 32)
		return NULL;
	if (want(d))
		return d;
	for (unsigned k = 0; k < 64; k++) {
		struct bdev *l = blk_lower(d, k);
		if (!l)
			break;
		struct bdev *hit = find_dev(l, want, depth + 1);
		if (hit)
			return hit;
	}
	return NULL;
}

struct out {
	struct nbd_srv_reply *r;
};

/* Appends to the reply; memory only, so it is safe under the device lock. */
static void put(struct out *o, const char *text, size_t len)
{
	struct nbd_srv_reply *r = o->r;
	if (r->oom)
		return;
	if (len > r->cap - r->len) {
		size_t cap = r->cap ? r->cap : 256;
		while (cap - r->len < len)
			cap *= 2;
		char *t = realloc(r->text, cap);
		if (!t) {
			r->oom = true;
			return;
		}
		r->text = t;
		r->cap = cap;
	}
	memcpy(r->text + r->len, text, len);
	r->len += len;
}

/* One reply line. Whatever it quotes (a device's message, a rule) is escaped, so a
 * reply is always exactly one line of printable text. */
static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
	char line[1024], esc[4 * sizeof line];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = sizeof line - 1;
	if (n > 0 && line[n - 1] == '\n')
		n--;
	size_t e = bo_escape(esc, sizeof esc - 1, line, (size_t)n);
	if (e > sizeof esc - 2)
		e = sizeof esc - 2;
	esc[e] = '\n';
	put(o, esc, e + 1);
}

struct stat_ctx {
	struct out *o;
	unsigned index;
	const char *name;
};

static void emit_stat(void *ctx, const char *key, uint64_t v)
{
	struct stat_ctx *c = ctx;
	putf(c->o, "dev.%u.%s.%s %" PRIu64 "\n", c->index, c->name, key, v);
}

/* Pre-order walk of the stack: dev.0 is the top. */
static void stats_walk(struct out *o, struct bdev *d, unsigned *index, unsigned depth)
{
	if (!d || depth > 32 || *index > 1024)
		return;
	char name[sizeof d->name];
	size_t i;
	for (i = 0; i + 1 < sizeof name && d->name[i]; i++) {
		char c = d->name[i];
		name[i] = (c > ' ' && c < 0x7f && c != '.') ? c : '_';
	}
	name[i] = '\0';
	struct stat_ctx c = {.o = o, .index = *index, .name = name};
	(*index)++;
	putf(o, "dev.%u.%s.powered_off %d\n", c.index, name, d->powered_off ? 1 : 0);
	blk_stats(d, emit_stat, &c);
	for (unsigned k = 0; k < 64; k++) {
		struct bdev *l = blk_lower(d, k);
		if (!l)
			break;
		stats_walk(o, l, index, depth + 1);
	}
}

static void do_stats(struct nbd_srv *s, struct out *o)
{
	const struct nbd_srv_counters *c = &s->c;
	putf(o, "nbd.size %" PRIu64 "\n", s->size);
	if (s->nmembers)
		putf(o, "nbd.members %u\n", s->nmembers);
	putf(o, "nbd.sector_size %u\n", s->dev->sector_size);
	putf(o, "nbd.powered %d\n", s->dev->powered_off ? 0 : 1);
	putf(o, "nbd.reads %" PRIu64 "\n", c->reads);
	putf(o, "nbd.writes %" PRIu64 "\n", c->writes);
	putf(o, "nbd.fua_writes %" PRIu64 "\n", c->fua_writes);
	putf(o, "nbd.flushes %" PRIu64 "\n", c->flushes);
	putf(o, "nbd.trims %" PRIu64 "\n", c->trims);
	putf(o, "nbd.zeros %" PRIu64 "\n", c->zeros);
	putf(o, "nbd.rmw %" PRIu64 "\n", c->rmw);
	putf(o, "nbd.cuts %" PRIu64 "\n", c->cuts);
	putf(o, "nbd.replugs %" PRIu64 "\n", c->replugs);
	putf(o, "nbd.eio %" PRIu64 "\n", c->eio);
	putf(o, "nbd.cut_armed %" PRIu64 "\n", s->cut_armed ? s->cut_countdown : 0);
	if (s->last_cut[0]) /* truncated for a long outcome; the cut's own reply is whole */
		putf(o, "nbd.last_cut %s\n", s->last_cut);
	if (s->rec) {
		uint64_t n, bytes, refused;
		nbd_rec_counts(s, &n, &bytes, &refused);
		putf(o, "nbd.record.records %" PRIu64 "\n", n);
		putf(o, "nbd.record.bytes %" PRIu64 "\n", bytes);
		putf(o, "nbd.record.refused %" PRIu64 "\n", refused);
	}
	unsigned index = 0;
	stats_walk(o, s->dev, &index, 0);
}

/* cut, cut-at, settle, replug: the power commands. Caller holds the lock. */
static void do_power(struct nbd_srv *s, const struct nbd_ctl_cmd *cmd, struct out *o)
{
	int rc;
	switch (cmd->op) {
	case NBD_CTL_CUT: {
		char *msg = NULL;
		rc = do_cut(s, &cmd->outcome, NULL, &msg);
		if (rc < 0)
			putf(o, "error: cut: %s\n", bo_errstr(&s->err, rc));
		else if (msg) {
			/* The outcome list may be long: send it without the line cap. */
			put(o, "ok cut ", 7);
			put(o, msg, strlen(msg));
			put(o, "\n", 1);
		} else
			putf(o, "ok cut\n");
		free(msg);
		break;
	}
	case NBD_CTL_CUT_AT: {
		if (s->dev->powered_off) {
			putf(o, "error: cut-at: the power is already off (replug first)\n");
			break;
		}
		s->cut_armed = true;
		s->cut_countdown = cmd->count;
		s->cut_outcome = cmd->outcome;
		char given[64];
		nbd_ctl_outcome_format(&cmd->outcome, given, sizeof given);
		putf(o, "ok cut-at %" PRIu64 " %s\n", cmd->count,
		     cmd->outcome.kind == NBD_CTL_OUTCOME_LIST ? "list" : given);
		break;
	}
	case NBD_CTL_SETTLE:
		if (s->dev->powered_off) {
			putf(o, "error: settle: the power is off (replug first)\n");
			break;
		}
		rc = blk_settle(s->dev);
		if (rc < 0)
			putf(o, "error: settle: %s\n", bo_errstr(&s->dev->err, rc));
		else
			putf(o, "ok settle\n");
		break;
	case NBD_CTL_REPLUG:
		if (!s->dev->powered_off) {
			putf(o, "error: replug: the power is on (cut first)\n");
			break;
		}
		rc = blk_power_restore(s->dev);
		if (rc < 0) {
			putf(o, "error: replug: %s\n", bo_errstr(&s->dev->err, rc));
			break;
		}
		s->c.replugs++;
		s->cut_armed = false;
		putf(o, "ok replug\n");
		break;
	default: break;
	}
}

int nbd_srv_control(struct nbd_srv *s, const char *line, size_t len, struct nbd_srv_reply *reply)
{
	struct out o = {reply};
	struct bo_err perr = {{0}};
	struct nbd_ctl_cmd *cmd = malloc(sizeof *cmd);
	if (!cmd) {
		putf(&o, "error: out of memory\n");
		return 0;
	}
	int rc = nbd_ctl_parse(line, len, cmd, &perr);
	if (rc < 0) {
		putf(&o, "error: %s\n", bo_errstr(&perr, rc));
		free(cmd);
		return 0;
	}
	if (cmd->op == NBD_CTL_RECORD) {
		/* takes the lock itself, only to copy the log out */
		uint64_t n = 0;
		rc = nbd_rec_save(s, &n, &perr);
		if (rc < 0)
			putf(&o, "error: record save: %s\n", bo_errstr(&perr, rc));
		else
			putf(&o, "ok %" PRIu64 " records\n", n);
		free(cmd);
		return 0;
	}
	int quit = 0;
	pthread_mutex_lock(&s->lock);
	switch (cmd->op) {
	case NBD_CTL_CUT:
	case NBD_CTL_CUT_AT:
	case NBD_CTL_SETTLE:
	case NBD_CTL_REPLUG: do_power(s, cmd, &o); break;
	case NBD_CTL_STATS:
		do_stats(s, &o);
		putf(&o, "ok stats\n");
		break;
	case NBD_CTL_FAIL: {
		struct bdev *r = find_dev(s->dev, is_raid, 0);
		if (!r) {
			putf(&o, "error: fail: unsupported by this stack (no RAID device in it)\n");
			break;
		}
		rc = raid_fail_member(r, (unsigned)cmd->count);
		if (rc < 0)
			putf(&o, "error: fail %s: %s\n", cmd->arg, bo_errstr(&r->err, rc));
		else
			putf(&o, "ok fail %s %s\n", r->name, cmd->arg);
		break;
	}
	case NBD_CTL_ARM: {
		struct bdev *f = find_dev(s->dev, is_fault, 0);
		struct bo_err aerr = {{0}};
		if (!f) {
			putf(&o, "error: arm: unsupported by this stack (no fault device in it)\n");
			break;
		}
		if (s->narmed == sizeof s->armed / sizeof s->armed[0]) {
			putf(&o, "error: arm: %u rules armed already (disarm some)\n", s->narmed);
			break;
		}
		rc = dev_fault_arm(f, cmd->arg, &aerr);
		if (rc < 0) {
			putf(&o, "error: arm: %s\n", bo_errstr(&aerr, rc));
			break;
		}
		s->armed[s->narmed++] = rc;
		putf(&o, "ok arm %d\n", rc);
		break;
	}
	case NBD_CTL_DISARM: {
		struct bdev *f = find_dev(s->dev, is_fault, 0);
		if (!f) {
			putf(&o,
			     "error: disarm: unsupported by this stack (no fault device in it)\n");
			break;
		}
		if (cmd->count != UINT64_MAX) {
			rc = dev_fault_disarm(f, (int)cmd->count);
			for (unsigned i = 0; rc == 0 && i < s->narmed; i++)
				if (s->armed[i] == (int)cmd->count)
					s->armed[i] = s->armed[--s->narmed];
			if (rc < 0)
				putf(&o, "error: disarm: no rule %llu\n",
				     (unsigned long long)cmd->count);
			else
				putf(&o, "ok disarm %llu\n", (unsigned long long)cmd->count);
			break;
		}
		unsigned n = s->narmed;
		for (unsigned i = 0; i < s->narmed; i++)
			dev_fault_disarm(f, s->armed[i]);
		s->narmed = 0;
		putf(&o, "ok disarm %u rules\n", n);
		break;
	}
	case NBD_CTL_PING: putf(&o, "ok pong\n"); break;
	case NBD_CTL_HELP:
		put(&o, nbd_ctl_help, strlen(nbd_ctl_help));
		putf(&o, "ok help\n");
		break;
	case NBD_CTL_QUIT:
		putf(&o, "ok bye\n");
		quit = 1;
		break;
	case NBD_CTL_RECORD: break; /* handled above, without the lock */
	}
	pthread_mutex_unlock(&s->lock);
	free(cmd);
	return quit;
}
