// SPDX-License-Identifier: GPL-2.0-or-later
/* fault.c — `fault`: injected faults by rule (I/O errors, sticky bad sectors, bit
 * flips on read or at rest, lost and misdirected writes), armed in the spec or at
 * run time. It adds no volatility: a power cut passes straight through.
 * Rule grammar and semantics: docs/models/fault.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "dev/dev_int.h"

#define FAULT_MAX_RULES  64
#define FAULT_MAX_REST   4096 /* sectors a flip-rest rule may rot at once */
#define FAULT_MAX_BAD    65536
#define FAULT_RULE_CHARS 1024

enum kind { K_READ_ERR, K_WRITE_ERR, K_FLIP_READ, K_FLIP_REST, K_LOST, K_MISDIRECT, K_COUNT };

static const char *const kind_names[K_COUNT] = {
    "read-error", "write-error", "flip-read", "flip-rest", "lost-write", "misdirect",
};

struct rule {
	int id;
	enum kind kind;
	uint64_t lo, hi; /* inclusive LBA range */
	uint64_t after, every, times;
	double prob;
	struct bo_rng rng;
	int err; /* positive errno */
	bool sticky;
	uint32_t bit;
	int64_t shift;
	uint64_t matched, fired;
};

struct bad {
	uint64_t lba;
	int err;
};

struct fault_dev {
	struct bdev dev;
	struct bdev *lower;
	unsigned nrules;
	struct rule rules[FAULT_MAX_RULES];
	int next_id;
	struct bad *bad; /* sorted by lba */
	uint32_t nbad, badcap;
	uint64_t reads, writes, fua_writes, flushes, fired;
};

static const struct bdev_ops fault_ops;

/* ---- rule text ---------------------------------------------------------------- */

static const struct {
	const char *name;
	int err;
} errnos[] = {
    {"EIO", EIO},         {"ENOSPC", ENOSPC},       {"EROFS", EROFS},
    {"ENODEV", ENODEV},   {"ETIMEDOUT", ETIMEDOUT}, {"EILSEQ", EILSEQ},
    {"EBADMSG", EBADMSG}, {"ENXIO", ENXIO},         {"EPERM", EPERM},
    {"ENOMEM", ENOMEM},   {"EAGAIN", EAGAIN},       {"ENOLINK", ENOLINK},
};

static int parse_num(const char *v, uint64_t *out)
{
	if (!*v)
		return -EINVAL;
	uint64_t x = 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*v - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

static int parse_prob(const char *v, double *out)
{
	/* "0", "1", "0.25", ".5": decimal, no exponent, no locale */
	double x = 0, scale = 1;
	bool dot = false, digit = false;
	for (; *v; v++) {
		if (*v == '.' && !dot) {
			dot = true;
		} else if (*v >= '0' && *v <= '9') {
			digit = true;
			if (dot) {
				scale /= 10;
				x += (*v - '0') * scale;
			} else {
				x = x * 10 + (*v - '0');
			}
			if (x > 1)
				return -EINVAL;
		} else {
			return -EINVAL;
		}
	}
	if (!digit)
		return -EINVAL;
	*out = x;
	return 0;
}

static int rule_err(struct bo_err *err, const char *rule, const char *word, const char *why)
{
	return bo_errf(err, -EINVAL, "fault rule '%.200s': '%.100s': %s", rule, word, why);
}

/* Parses one rule (words separated by blanks) for a device of nr sectors. */
/* lba=N or lba=A-B, inside a device of nr sectors; v is the value, writable. */
static int parse_lba(const char *text, const char *w, char *v, uint64_t nr, struct rule *r,
                     struct bo_err *err)
{
	char *dash = strchr(v, '-');
	uint64_t lo, hi;
	if (dash) {
		*dash = 0;
		if (parse_num(v, &lo) || parse_num(dash + 1, &hi))
			return rule_err(err, text, w, "expected lba=N or lba=A-B");
	} else if (parse_num(v, &lo)) {
		return rule_err(err, text, w, "expected lba=N or lba=A-B");
	} else {
		hi = lo;
	}
	if (lo > hi || hi >= nr) {
		char why[128];
		snprintf(why, sizeof(why),
		         "range %llu-%llu is empty or outside the device (%llu sectors)",
		         (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)nr);
		return rule_err(err, text, w, why);
	}
	r->lo = lo;
	r->hi = hi;
	return 0;
}

/* An errno by name (EIO ...) or number 1..4095; 0 when it is neither. */
static int parse_errno(const char *v)
{
	uint64_t x;
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (strcmp(v, errnos[i].name) == 0)
			return errnos[i].err;
	return parse_num(v, &x) == 0 && x >= 1 && x < 4096 ? (int)x : 0;
}

static int parse_rule(const char *text, uint64_t nr, struct rule *r, struct bo_err *err)
{
	char buf[FAULT_RULE_CHARS + 1];
	size_t len = strlen(text);
	if (len > FAULT_RULE_CHARS)
		return bo_errf(err, -EINVAL, "fault rule longer than %d characters",
		               FAULT_RULE_CHARS);
	memcpy(buf, text, len + 1);
	memset(r, 0, sizeof(*r));
	r->hi = nr - 1;
	r->every = 1;
	r->prob = 1;
	r->err = EIO;
	r->shift = 1;
	uint64_t seed = 0;
	bool have_kind = false, have_lba = false, have_times = false;
	char *save = NULL;
	for (char *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		if (!have_kind) {
			int k = -1;
			for (int i = 0; i < K_COUNT; i++)
				if (strcmp(w, kind_names[i]) == 0)
					k = i;
			if (k < 0)
				return rule_err(err, text, w,
				                "unknown kind (read-error, write-error, flip-read, "
				                "flip-rest, lost-write, misdirect)");
			r->kind = (enum kind)k;
			have_kind = true;
			continue;
		}
		char *eq = strchr(w, '=');
		const char *v = eq ? eq + 1 : NULL;
		if (eq)
			*eq = 0;
		uint64_t x = 0;
		if (strcmp(w, "sticky") == 0 && !v) {
			if (r->kind != K_WRITE_ERR)
				return rule_err(err, text, w, "only a write-error can be sticky");
			r->sticky = true;
			continue;
		}
		if (!v)
			return rule_err(err, text, w, "expected key=value");
		if (strcmp(w, "lba") == 0) {
			int rc = parse_lba(text, w, (char *)v, nr, r, err);
			if (rc)
				return rc;
			have_lba = true;
		} else if (strcmp(w, "after") == 0 || strcmp(w, "every") == 0 ||
		           strcmp(w, "times") == 0 || strcmp(w, "seed") == 0 ||
		           strcmp(w, "bit") == 0) {
			if (parse_num(v, &x))
				return rule_err(err, text, w, "expected a whole number");
			if (w[0] == 'a') {
				r->after = x;
			} else if (w[0] == 'e') {
				if (x == 0)
					return rule_err(err, text, w, "every must be at least 1");
				r->every = x;
			} else if (w[0] == 't') {
				r->times = x;
				have_times = true;
			} else if (w[0] == 's') {
				seed = x;
			} else {
				if (r->kind != K_FLIP_READ && r->kind != K_FLIP_REST)
					return rule_err(err, text, w, "bit= is for flip rules");
				r->bit = (uint32_t)(x > UINT32_MAX ? UINT32_MAX : x);
			}
		} else if (strcmp(w, "prob") == 0) {
			if (parse_prob(v, &r->prob))
				return rule_err(err, text, w, "expected a probability 0..1");
		} else if (strcmp(w, "errno") == 0) {
			if (r->kind != K_READ_ERR && r->kind != K_WRITE_ERR)
				return rule_err(err, text, w,
				                "errno= is for read-error/write-error");
			if (!(r->err = parse_errno(v)))
				return rule_err(err, text, w,
				                "expected EIO, ENOSPC, ... or 1..4095");
		} else if (strcmp(w, "shift") == 0) {
			if (r->kind != K_MISDIRECT)
				return rule_err(err, text, w, "shift= is for misdirect");
			bool neg = v[0] == '-';
			if (parse_num(v + (neg || v[0] == '+'), &x) || x == 0 || x >= nr)
				return rule_err(
				    err, text, w,
				    "expected a non-zero sector offset within the device");
			r->shift = neg ? -(int64_t)x : (int64_t)x;
		} else {
			return rule_err(err, text, w, "unknown key");
		}
	}
	if (!have_kind)
		return bo_errf(err, -EINVAL, "fault rule '%.200s': empty", text);
	if (r->kind == K_FLIP_REST) {
		if (!have_lba)
			return rule_err(err, text, kind_names[r->kind], "needs lba=");
		if (r->hi - r->lo >= FAULT_MAX_REST)
			return rule_err(err, text, "lba", "flip-rest covers at most 4096 sectors");
		if (!have_times)
			r->times = 1;
	}
	bo_rng_seed(&r->rng, seed);
	return 0;
}

static struct fault_dev *as_fault(struct bdev *d)
{
	return d && d->ops == &fault_ops ? (struct fault_dev *)d : NULL;
}

static int arm(struct fault_dev *f, const char *text, struct bo_err *err)
{
	if (f->nrules == FAULT_MAX_RULES)
		return bo_errf(err, -ENOSPC, "fault: more than %d rules", FAULT_MAX_RULES);
	struct rule r;
	int rc = parse_rule(text, f->dev.nr_sectors, &r, err);
	if (rc)
		return rc;
	r.id = f->next_id++;
	f->rules[f->nrules++] = r;
	return r.id;
}

static int fault_rule_arm(struct bdev *d, const char *rule, struct bo_err *err)
{
	return arm((struct fault_dev *)d, rule, err);
}

/* Through the ops: any layer that takes fault rules, whatever its name. */
int dev_fault_arm(struct bdev *d, const char *rule, struct bo_err *err)
{
	if (!dev_has_cap(d, DEV_CAP_FAULT_RULES))
		return bo_errf(err, -EINVAL, "%s takes no fault rules", d ? d->name : "(null)");
	return d->ops->rule_arm(d, rule, err);
}

int dev_fault_disarm(struct bdev *d, int id)
{
	return dev_has_cap(d, DEV_CAP_FAULT_RULES) ? d->ops->rule_disarm(d, id) : -EINVAL;
}

static int fault_rule_disarm(struct bdev *d, int id)
{
	struct fault_dev *f = (struct fault_dev *)d;
	for (unsigned i = 0; i < f->nrules; i++) {
		if (f->rules[i].id != id)
			continue;
		memmove(&f->rules[i], &f->rules[i + 1], (f->nrules - i - 1) * sizeof(f->rules[0]));
		f->nrules--;
		return 0;
	}
	return -ENOENT;
}

int dev_fault_fired(struct bdev *d, int id, uint64_t *count)
{
	struct fault_dev *f = as_fault(d);
	if (!f)
		return -EINVAL;
	for (unsigned i = 0; i < f->nrules; i++) {
		if (f->rules[i].id == id) {
			*count = f->rules[i].fired;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- firing ------------------------------------------------------------------ */

static bool overlaps(const struct rule *r, uint64_t lba, uint32_t count)
{
	return lba <= r->hi && lba + count - 1 >= r->lo;
}

/* Counts a matching operation and says whether the rule fires on it. */
static bool fires(struct fault_dev *f, struct rule *r)
{
	r->matched++;
	if (r->matched <= r->after)
		return false;
	if ((r->matched - r->after - 1) % r->every)
		return false;
	if (r->prob < 1) {
		double u = (double)(bo_rng_next(&r->rng) >> 11) * (1.0 / 9007199254740992.0);
		if (u >= r->prob)
			return false;
	}
	if (r->times && r->fired >= r->times)
		return false;
	r->fired++;
	f->fired++;
	return true;
}

static int64_t bad_find(const struct fault_dev *f, uint64_t lba, bool *found)
{
	uint32_t lo = 0, hi = f->nbad;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (f->bad[mid].lba < lba)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < f->nbad && f->bad[lo].lba == lba;
	return lo;
}

static int bad_add(struct fault_dev *f, uint64_t lba, int e)
{
	bool found;
	int64_t i = bad_find(f, lba, &found);
	if (found) {
		f->bad[i].err = e;
		return 0;
	}
	if (f->nbad == FAULT_MAX_BAD)
		return -ENOSPC;
	if (f->nbad == f->badcap) {
		uint32_t cap = f->badcap ? f->badcap * 2 : 16;
		struct bad *b = realloc(f->bad, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		f->bad = b;
		f->badcap = cap;
	}
	memmove(&f->bad[i + 1], &f->bad[i], (f->nbad - (uint32_t)i) * sizeof(*f->bad));
	f->bad[i] = (struct bad){lba, e};
	f->nbad++;
	return 0;
}

static void bad_clear(struct fault_dev *f, uint64_t lba, uint32_t count)
{
	if (!f->nbad)
		return;
	bool found;
	uint32_t i = (uint32_t)bad_find(f, lba, &found), j = i;
	while (j < f->nbad && f->bad[j].lba < lba + count)
		j++;
	memmove(&f->bad[i], &f->bad[j], (f->nbad - j) * sizeof(*f->bad));
	f->nbad -= j - i;
}

DEV_SINGLE_CHECK(struct fault_dev);

static int lower_err(struct fault_dev *f, int rc)
{
	return dev_single_err(&f->dev, rc);
}

static void flip(unsigned char *sec, uint32_t bit, size_t ss)
{
	uint64_t b = bit % (ss * 8);
	sec[b / 8] ^= (unsigned char)(1u << (b % 8));
}

/* flip-rest rules fire on any operation: the media rots under the device */
static int rest_rules(struct fault_dev *f)
{
	size_t ss = f->dev.sector_size;
	for (unsigned i = 0; i < f->nrules; i++) {
		struct rule *r = &f->rules[i];
		if (r->kind != K_FLIP_REST || !fires(f, r))
			continue;
		unsigned char *buf = malloc(ss);
		if (!buf)
			return -ENOMEM;
		for (uint64_t lba = r->lo; lba <= r->hi; lba++) {
			int rc = blk_read(f->lower, lba, 1, buf);
			if (rc == 0) {
				flip(buf, r->bit, ss);
				rc = blk_write(f->lower, lba, 1, buf, 0);
			}
			if (rc) {
				free(buf);
				return lower_err(f, rc);
			}
		}
		free(buf);
	}
	return 0;
}

static int fault_read(struct bdev *d, uint64_t lba, uint32_t count, void *buf)
{
	struct fault_dev *f = (struct fault_dev *)d;
	size_t ss = d->sector_size;
	f->reads++;
	int rc = rest_rules(f);
	if (rc)
		return rc;
	if (f->nbad) {
		bool found;
		uint32_t i = (uint32_t)bad_find(f, lba, &found);
		if (i < f->nbad && f->bad[i].lba < lba + count)
			return bo_errf(
			    &d->err, -f->bad[i].err,
			    "fault: sector %llu is bad (a failed write left it unreadable)",
			    (unsigned long long)f->bad[i].lba);
	}
	int fail = 0;
	uint64_t flips = 0; /* rules (by index) whose flip fired on this read */
	for (unsigned i = 0; i < f->nrules; i++) {
		struct rule *r = &f->rules[i];
		if ((r->kind != K_READ_ERR && r->kind != K_FLIP_READ) || !overlaps(r, lba, count))
			continue;
		if (!fires(f, r))
			continue;
		if (r->kind == K_READ_ERR && !fail)
			fail = r->err;
		if (r->kind == K_FLIP_READ)
			flips |= 1ull << i;
	}
	if (fail)
		return bo_errf(&d->err, -fail, "fault: injected read error at %llu+%u: %s",
		               (unsigned long long)lba, count, strerror(fail));
	rc = blk_read(f->lower, lba, count, buf);
	if (rc)
		return lower_err(f, rc);
	for (unsigned i = 0; flips && i < f->nrules; i++) {
		if (!(flips & (1ull << i)))
			continue;
		const struct rule *r = &f->rules[i];
		uint64_t from = lba > r->lo ? lba : r->lo,
		         to = lba + count - 1 < r->hi ? lba + count - 1 : r->hi;
		for (uint64_t s = from; s <= to; s++)
			flip((unsigned char *)buf + (s - lba) * ss, r->bit, ss);
	}
	return 0;
}

static int fault_write(struct bdev *d, uint64_t lba, uint32_t count, const void *buf,
                       unsigned flags)
{
	struct fault_dev *f = (struct fault_dev *)d;
	size_t ss = d->sector_size;
	f->writes++;
	if (flags & BLK_FUA)
		f->fua_writes++;
	int rc = rest_rules(f);
	if (rc)
		return rc;
	const struct rule *fail = NULL;
	uint64_t diverted = 0; /* lost-write and misdirect rules that fired */
	for (unsigned i = 0; i < f->nrules; i++) {
		struct rule *r = &f->rules[i];
		if ((r->kind != K_WRITE_ERR && r->kind != K_LOST && r->kind != K_MISDIRECT) ||
		    !overlaps(r, lba, count) || !fires(f, r))
			continue;
		if (r->kind == K_WRITE_ERR) {
			if (!fail)
				fail = r;
		} else {
			diverted |= 1ull << i;
		}
	}
	if (fail) {
		if (fail->sticky) {
			uint64_t from = lba > fail->lo ? lba : fail->lo;
			uint64_t to = lba + count - 1 < fail->hi ? lba + count - 1 : fail->hi;
			for (uint64_t s = from; s <= to; s++) {
				rc = bad_add(f, s, fail->err);
				if (rc)
					return bo_errf(&d->err, rc, "fault: too many bad sectors");
			}
		}
		return bo_errf(&d->err, -fail->err, "fault: injected write error at %llu+%u: %s",
		               (unsigned long long)lba, count, strerror(fail->err));
	}
	if (!diverted) {
		rc = blk_write(f->lower, lba, count, buf, flags);
		if (rc)
			return lower_err(f, rc);
		bad_clear(f, lba, count);
		return 0;
	}
	/* sector by sector: the first diverting rule covering a sector decides it */
	for (uint32_t k = 0; k < count; k++) {
		uint64_t s = lba + k, dest = s;
		bool lost = false;
		for (unsigned i = 0; i < f->nrules; i++) {
			const struct rule *r = &f->rules[i];
			if (!(diverted & (1ull << i)) || s < r->lo || s > r->hi)
				continue;
			if (r->kind == K_LOST) {
				lost = true;
			} else {
				uint64_t nr = d->nr_sectors;
				uint64_t sh =
				    r->shift < 0 ? nr - (uint64_t)(-r->shift) : (uint64_t)r->shift;
				dest = (s + sh) % nr;
			}
			break;
		}
		if (lost)
			continue;
		rc = blk_write(f->lower, dest, 1, (const unsigned char *)buf + (size_t)k * ss,
		               flags);
		if (rc)
			return lower_err(f, rc);
		bad_clear(f, dest, 1);
	}
	return 0;
}

static int fault_flush(struct bdev *d)
{
	struct fault_dev *f = (struct fault_dev *)d;
	f->flushes++;
	int rc = rest_rules(f);
	if (rc == 0)
		rc = blk_flush(f->lower);
	return rc ? lower_err(f, rc) : 0;
}

static int fault_discard(struct bdev *d, uint64_t lba, uint32_t count)
{
	struct fault_dev *f = (struct fault_dev *)d;
	int rc = blk_discard(f->lower, lba, count);
	if (rc)
		return lower_err(f, rc);
	bad_clear(f, lba, count); /* a discarded sector is remapped: readable again */
	return 0;
}

static void fault_close(struct bdev *d)
{
	struct fault_dev *f = (struct fault_dev *)d;
	blk_close(f->lower);
	free(f->bad);
	free(f);
}

static int fault_clone(struct bdev *d, struct bdev **out)
{
	struct fault_dev *f = (struct fault_dev *)d;
	struct fault_dev *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *f;
	n->bad = NULL;
	if (f->nbad) {
		n->bad = malloc(f->nbad * sizeof(*n->bad));
		if (!n->bad) {
			free(n);
			return -ENOMEM;
		}
		memcpy(n->bad, f->bad, f->nbad * sizeof(*n->bad));
	}
	n->badcap = f->nbad;
	int rc = blk_clone(f->lower, &n->lower);
	if (rc) {
		free(n->bad);
		free(n);
		return lower_err(f, rc);
	}
	*out = &n->dev;
	return 0;
}

static int fault_power_cut(struct bdev *d, struct blk_chooser *ch,
                           const struct blk_inflight *inflight)
{
	return blk_power_cut(((struct fault_dev *)d)->lower, ch, inflight);
}

static void fault_stats(struct bdev *d, void (*emit)(void *, const char *, uint64_t), void *ctx)
{
	struct fault_dev *f = (struct fault_dev *)d;
	emit(ctx, "reads", f->reads);
	emit(ctx, "writes", f->writes);
	emit(ctx, "fua_writes", f->fua_writes);
	emit(ctx, "flushes", f->flushes);
	emit(ctx, "faults_fired", f->fired);
	emit(ctx, "bad_sectors", f->nbad);
	emit(ctx, "rules", f->nrules);
}

static const struct bdev_ops fault_ops = {
    .read = fault_read,
    .write = fault_write,
    .flush = fault_flush,
    .discard = fault_discard,
    .close = fault_close,
    .clone = fault_clone,
    .power_cut = fault_power_cut,
    .power_restore = dev_single_power_restore,
    .lower = dev_single_lower,
    .stats = fault_stats,
    .rule_arm = fault_rule_arm,
    .rule_disarm = fault_rule_disarm,
};

static int fault_open(const struct dev_args *a, struct bdev **lowers, unsigned nlowers,
                      struct bdev **out, struct bo_err *err)
{
	if (nlowers != 1)
		return bo_errf(err, -EINVAL, "fault: takes one lower device");
	const char *rules = dev_arg_str(a, "rules");
	struct fault_dev *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	blk_init(&f->dev, &fault_ops, "fault", lowers[0]->sector_size, lowers[0]->nr_sectors);
	f->lower = lowers[0];
	/* rules are separated by ';' */
	const char *p = rules ? rules : "";
	while (*p) {
		const char *e = strchr(p, ';');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char one[FAULT_RULE_CHARS + 1];
		if (n > FAULT_RULE_CHARS) {
			free(f);
			return bo_errf(err, -EINVAL, "fault: a rule is longer than %d characters",
			               FAULT_RULE_CHARS);
		}
		memcpy(one, p, n);
		one[n] = 0;
		if (strspn(one, " \t\n") != n) {
			int rc = arm(f, one, err);
			if (rc < 0) {
				free(f);
				return rc;
			}
		}
		p += n;
		if (*p == ';')
			p++;
	}
	*out = &f->dev;
	return 0;
}

static const struct dev_param fault_params[] = {
    {"rules", "",
     "fault rules separated by ';', e.g. \"write-error lba=8-15 after=2 sticky; "
     "lost-write lba=3\" (docs/models/fault.md)"},
    {NULL},
};

const struct dev_model dev_model_fault = {
    .name = "fault",
    .summary = "injected faults: I/O errors, bad sectors, bit rot, lost and misdirected writes",
    .params = fault_params,
    .min_lowers = 1,
    .max_lowers = 1,
    .open = fault_open,
};
