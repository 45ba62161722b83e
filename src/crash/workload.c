// SPDX-License-Identifier: GPL-2.0-or-later
/* workload.c — the line-based workload format (docs/workloads.md): parser, printer,
 * write patterns. Not the oracle or the engine; workload files are untrusted. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/util.h"

static const char *const op_names[] = {
    [CRASH_OP_MKDIR] = "mkdir",
    [CRASH_OP_CREATE] = "create",
    [CRASH_OP_WRITE] = "write",
    [CRASH_OP_APPEND] = "append",
    [CRASH_OP_TRUNCATE] = "truncate",
    [CRASH_OP_RENAME] = "rename",
    [CRASH_OP_LINK] = "link",
    [CRASH_OP_UNLINK] = "unlink",
    [CRASH_OP_RMDIR] = "rmdir",
    [CRASH_OP_FSYNC] = "fsync",
    [CRASH_OP_FDATASYNC] = "fdatasync",
    [CRASH_OP_FSYNC_DIR] = "fsync-dir",
    [CRASH_OP_SYNC] = "sync",
    [CRASH_OP_MARK] = "mark",
    [CRASH_OP_FILL] = "fill",
    [CRASH_OP_FALLOC] = "falloc",
    [CRASH_OP_SYMLINK] = "symlink",
    [CRASH_OP_SETXATTR] = "setxattr",
    [CRASH_OP_REMOVEXATTR] = "removexattr",
    [CRASH_OP_DWRITE] = "dwrite",
    [CRASH_OP_MWRITE] = "mwrite",
    [CRASH_OP_OSYNC] = "osync",
    [CRASH_OP_DWRITE_OSYNC] = "dwrite-osync",
    [CRASH_OP_OPEN] = "open",
    [CRASH_OP_CLOSE] = "close",
    [CRASH_OP_FSYNC_FD] = "fsync-fd",
    [CRASH_OP_FDATASYNC_FD] = "fdatasync-fd",
};
#define NOPS ((int)(sizeof(op_names) / sizeof(op_names[0])))

static const char *const falloc_names[CRASH_FALLOC_N] = {
    [CRASH_FALLOC_PLAIN] = "plain",       [CRASH_FALLOC_KEEP_SIZE] = "keep-size",
    [CRASH_FALLOC_PUNCH] = "punch-hole",  [CRASH_FALLOC_ZERO] = "zero-range",
    [CRASH_FALLOC_COLLAPSE] = "collapse", [CRASH_FALLOC_INSERT] = "insert",
};

const char *crash_falloc_name(enum crash_falloc m)
{
	return (unsigned)m < CRASH_FALLOC_N ? falloc_names[m] : "?";
}

const char *crash_op_name(enum crash_op op)
{
	return (int)op > 0 && (int)op < NOPS ? op_names[op] : "?";
}

/* splitmix64's finaliser: every input bit flips half the output bits, so two
 * patterns agree on a byte with probability 1/256. */
static uint64_t mix(uint32_t tag, uint64_t word)
{
	uint64_t z = word * 0x9e3779b97f4a7c15ull ^ ((uint64_t)tag << 32 | tag);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint8_t crash_pattern_byte(uint32_t tag, uint64_t off)
{
	if (tag == CRASH_PATTERN_ZERO)
		return 0;
	uint64_t h = mix(tag, off >> 3);
	return (uint8_t)(h >> (8 * (off & 7)));
}

void crash_pattern_fill(uint32_t tag, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;
	if (tag == CRASH_PATTERN_ZERO) {
		memset(p, 0, len);
		return;
	}
	size_t i = 0;
	while (i < len) {
		uint64_t o = off + i;
		uint64_t h = mix(tag, o >> 3);
		for (unsigned b = (unsigned)(o & 7); b < 8 && i < len; b++, i++)
			p[i] = (uint8_t)(h >> (8 * b));
	}
}

/* ---- parsing ---------------------------------------------------------------- */

struct tok {
	const char *s;
	size_t len;
	unsigned col; /* 1-based */
};

struct parser {
	unsigned line;
	struct bo_err *err;
	struct crash_workload *w;
	size_t cap_setup, cap_run;
	uint32_t next_tag;
	char fds[CRASH_WL_MAX_FDS][32]; /* names of the files held open, "" = free */
};

static int perr(struct parser *p, unsigned col, const char *fmt, const char *a, const char *b)
{
	char why[460];
	snprintf(why, sizeof(why), fmt, a ? a : "", b ? b : "");
	return bo_errf(p->err, -EINVAL, "workload line %u, column %u: %s", p->line, col, why);
}

static char *tokdup(const struct tok *t)
{
	char *s = malloc(t->len + 1);
	if (s) {
		memcpy(s, t->s, t->len);
		s[t->len] = 0;
	}
	return s;
}

static bool tokeq(const struct tok *t, const char *s)
{
	return strlen(s) == t->len && memcmp(t->s, s, t->len) == 0;
}

static int check_path(struct parser *p, const struct tok *t, bool root_ok)
{
	char tmp[64];
	if (t->len == 0 || t->s[0] != '/')
		return perr(p, t->col, "path must be absolute (start with '/')%s%s", NULL, NULL);
	if (t->len > CRASH_WL_MAX_PATH) {
		snprintf(tmp, sizeof(tmp), "%u", CRASH_WL_MAX_PATH);
		return perr(p, t->col, "path longer than %s bytes%s", tmp, NULL);
	}
	if (t->len == 1 && root_ok)
		return 0;
	if (t->len == 1)
		return perr(p, t->col, "the root directory cannot be an operand of %s%s",
		            "this operation", NULL);
	size_t i = 1;
	while (i <= t->len) {
		size_t j = i;
		while (j < t->len && t->s[j] != '/')
			j++;
		size_t clen = j - i;
		unsigned col = t->col + (unsigned)i;
		if (clen == 0)
			return perr(p, col, "empty path component ('//' or trailing '/')%s%s", NULL,
			            NULL);
		if (clen > 255)
			return perr(p, col, "path component longer than 255 bytes%s%s", NULL, NULL);
		if ((clen == 1 && t->s[i] == '.') ||
		    (clen == 2 && t->s[i] == '.' && t->s[i + 1] == '.'))
			return perr(p, col, "'.' and '..' are not allowed in paths%s%s", NULL,
			            NULL);
		i = j + 1;
	}
	return 0;
}

static int parse_num(struct parser *p, const struct tok *t, const char *what, uint64_t max,
                     uint64_t *out)
{
	char buf[64];
	if (t->len >= sizeof(buf))
		return perr(p, t->col, "%s is too long a number%s", what, NULL);
	memcpy(buf, t->s, t->len);
	buf[t->len] = 0;
	struct bo_err e2 = {{0}};
	uint64_t v;
	if (!isdigit((unsigned char)buf[0]) || bo_parse_size(buf, &v, &e2) != 0)
		return perr(p, t->col, "%s: '%s' is not a size (4096, 64k, 1M)", what, buf);
	if (v > max) {
		char m[32];
		return perr(p, t->col, "%s is larger than %s", what, bo_format_size(max, m, 32));
	}
	*out = v;
	return 0;
}

static int parse_tag(struct parser *p, const struct tok *t, struct crash_step *s)
{
	if (tokeq(t, "zero")) {
		s->tag = CRASH_PATTERN_ZERO;
		s->tag_given = true;
		return 0;
	}
	uint64_t v = 0;
	if (t->len > 10)
		return perr(p, t->col, "pattern must be 'zero' or a number 1..4294967295%s%s", NULL,
		            NULL);
	for (size_t i = 0; i < t->len; i++) {
		if (!isdigit((unsigned char)t->s[i]))
			return perr(p, t->col + (unsigned)i,
			            "pattern must be 'zero' or a number 1..4294967295%s%s", NULL,
			            NULL);
		v = v * 10 + (uint64_t)(t->s[i] - '0');
	}
	if (v == 0 || v > UINT32_MAX)
		return perr(p, t->col, "pattern must be 'zero' or a number 1..4294967295%s%s", NULL,
		            NULL);
	s->tag = (uint32_t)v;
	s->tag_given = true;
	return 0;
}

/* The operands of each step, in order: p a path, r a path that may be '/', o an
 * offset, L a length (at least 1), C a fill's chunk, s a size, m a falloc mode, f an
 * fd's name, x an xattr's name, v an xattr's value, k a mark's name; t an optional
 * trailing pattern. `usage` is what an incomplete line is told it needs. */
struct opdesc {
	enum crash_op op;
	const char *shape;
	const char *usage;
};

static const struct opdesc descs[] = {
    {CRASH_OP_MKDIR, "p", "a path"},
    {CRASH_OP_CREATE, "p", "a path"},
    {CRASH_OP_WRITE, "poLt", "PATH OFFSET LEN [PATTERN]"},
    {CRASH_OP_APPEND, "pLt", "PATH LEN [PATTERN]"},
    {CRASH_OP_TRUNCATE, "ps", "PATH SIZE"},
    {CRASH_OP_RENAME, "pp", "two paths"},
    {CRASH_OP_LINK, "pp", "two paths"},
    {CRASH_OP_UNLINK, "p", "a path"},
    {CRASH_OP_RMDIR, "p", "a path"},
    {CRASH_OP_FSYNC, "r", "a path"},
    {CRASH_OP_FDATASYNC, "p", "a path"},
    {CRASH_OP_FSYNC_DIR, "r", "a path"},
    {CRASH_OP_SYNC, "", ""},
    {CRASH_OP_MARK, "k", "NAME"},
    {CRASH_OP_FILL, "pCt", "PATH CHUNK [PATTERN]"},
    {CRASH_OP_FALLOC, "pmoL", "PATH MODE OFFSET LEN"},
    {CRASH_OP_SYMLINK, "pp", "TARGET LINKPATH"},
    {CRASH_OP_SETXATTR, "pxv", "PATH NAME VALUE"},
    {CRASH_OP_REMOVEXATTR, "px", "PATH NAME"},
    {CRASH_OP_DWRITE, "poLt", "PATH OFFSET LEN [PATTERN]"},
    {CRASH_OP_MWRITE, "poLt", "PATH OFFSET LEN [PATTERN]"},
    {CRASH_OP_OSYNC, "poLt", "PATH OFFSET LEN [PATTERN]"},
    {CRASH_OP_DWRITE_OSYNC, "poLt", "PATH OFFSET LEN [PATTERN]"},
    {CRASH_OP_OPEN, "fp", "FD PATH"},
    {CRASH_OP_CLOSE, "f", "FD"},
    {CRASH_OP_FSYNC_FD, "f", "FD"},
    {CRASH_OP_FDATASYNC_FD, "f", "FD"},
};

static const struct opdesc *desc_of(enum crash_op op)
{
	for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++)
		if (descs[i].op == op)
			return &descs[i];
	return NULL;
}

static int add_step(struct parser *p, bool setup, struct crash_step *s)
{
	struct crash_step **arr = setup ? &p->w->setup : &p->w->run;
	size_t *n = setup ? &p->w->nsetup : &p->w->nrun;
	size_t *cap = setup ? &p->cap_setup : &p->cap_run;
	if (p->w->nsetup + p->w->nrun >= CRASH_WL_MAX_STEPS)
		return perr(p, 1, "more than 100000 steps%s%s", NULL, NULL);
	struct crash_step *na = bo_grow(*arr, cap, *n, sizeof(*na), 16);
	if (!na)
		return -ENOMEM;
	*arr = na;
	(*arr)[(*n)++] = *s;
	return 0;
}

static void step_free(struct crash_step *s)
{
	free(s->path);
	free(s->path2);
	free(s->arg);
	free(s->arg2);
}

/* "name WORD" or "summary TEXT...": the workload's own header lines */
static int parse_header(struct parser *p, struct tok *t, unsigned nt)
{
	if (nt < 2)
		return perr(p, t[0].col, "'%s' needs text after it%s",
		            tokeq(&t[0], "name") ? "name" : "summary", NULL);
	bool isname = tokeq(&t[0], "name");
	if (isname) {
		if (nt != 2)
			return perr(p, t[2].col, "a workload name is one word%s%s", NULL, NULL);
		if (t[1].len > 63)
			return perr(p, t[1].col, "name longer than 63 bytes%s%s", NULL, NULL);
		for (size_t i = 0; i < t[1].len; i++)
			if (!isalnum((unsigned char)t[1].s[i]) && t[1].s[i] != '-' &&
			    t[1].s[i] != '_' && t[1].s[i] != '+' && t[1].s[i] != '.')
				return perr(p, t[1].col + (unsigned)i,
				            "name may hold letters, digits, '-', '_', '+', '.'%s%s",
				            NULL, NULL);
	}
	/* summary: the rest of the line as written */
	struct tok all = t[1];
	all.len = (size_t)(t[nt - 1].s + t[nt - 1].len - t[1].s);
	if (all.len > 200)
		return perr(p, t[1].col, "summary longer than 200 bytes%s%s", NULL, NULL);
	char **dst = isname ? &p->w->name : &p->w->summary;
	if (*dst)
		return perr(p, t[0].col, "'%s' given twice%s", isname ? "name" : "summary", NULL);
	*dst = tokdup(&all);
	return *dst ? 0 : -ENOMEM;
}

/* "setup" or "run": the section the following operations belong to */
static int parse_section(struct parser *p, struct tok *t, unsigned nt, int *section)
{
	if (nt != 1)
		return perr(p, t[1].col, "nothing may follow a section name%s%s", NULL, NULL);
	int want = tokeq(&t[0], "setup") ? 1 : 2;
	if (want == 1 && *section != 0)
		return perr(p, t[0].col, "'setup' must come before 'run' and only once%s%s", NULL,
		            NULL);
	if (want == 2 && *section == 2)
		return perr(p, t[0].col, "'run' given twice%s%s", NULL, NULL);
	*section = want;
	return 0;
}

/* An fd's name, an xattr's name or value: a word checked for its kind. */
static int parse_word(struct parser *p, const struct tok *t, char kind, char **out)
{
	if (kind == 'f') {
		if (t->len > 31)
			return perr(p, t->col, "fd name longer than 31 bytes%s%s", NULL, NULL);
		for (size_t i = 0; i < t->len; i++)
			if (!isalnum((unsigned char)t->s[i]) && t->s[i] != '_')
				return perr(p, t->col + (unsigned)i,
				            "an fd name may hold letters, digits and '_'%s%s", NULL,
				            NULL);
	} else if (kind == 'x') {
		if (t->len < 6 || memcmp(t->s, "user.", 5) != 0)
			return perr(p, t->col, "xattr name must be 'user.' and a name%s%s", NULL,
			            NULL);
		if (t->len > 255)
			return perr(p, t->col, "xattr name longer than 255 bytes%s%s", NULL, NULL);
	} else if (kind == 'v' && t->len > 255) {
		return perr(p, t->col, "xattr value longer than 255 bytes%s%s", NULL, NULL);
	} else if (kind == 'k' && t->len > 63) {
		return perr(p, t->col, "mark name longer than 63 bytes%s%s", NULL, NULL);
	}
	*out = tokdup(t);
	return *out ? 0 : -ENOMEM;
}

static int fd_slot(const struct parser *p, const char *name)
{
	for (int i = 0; i < CRASH_WL_MAX_FDS; i++)
		if (!strcmp(p->fds[i], name))
			return i;
	return -1;
}

/* open/close/fsync-fd name files held open in file order (setup and run share them) */
static int track_fd(struct parser *p, const struct crash_step *s, const struct tok *t)
{
	int i = fd_slot(p, s->arg);
	if (s->op != CRASH_OP_OPEN) {
		if (i < 0)
			return perr(p, t->col, "fd '%s' is not open here%s", s->arg, NULL);
		if (s->op == CRASH_OP_CLOSE)
			p->fds[i][0] = 0;
		return 0;
	}
	if (i >= 0)
		return perr(p, t->col, "fd '%s' is already open%s", s->arg, NULL);
	if ((i = fd_slot(p, "")) < 0)
		return perr(p, t->col, "more than 6 files open at once%s%s", NULL, NULL);
	snprintf(p->fds[i], sizeof(p->fds[i]), "%s", s->arg);
	return 0;
}

static int parse_falloc_mode(struct parser *p, const struct tok *t, unsigned *mode)
{
	for (unsigned m = 0; m < CRASH_FALLOC_N; m++)
		if (tokeq(t, falloc_names[m])) {
			*mode = m;
			return 0;
		}
	return perr(p, t->col,
	            "falloc mode must be plain, keep-size, punch-hole, zero-range, collapse or "
	            "insert%s%s",
	            NULL, NULL);
}

/* One operand of shape kind c from t into s. */
static int parse_operand(struct parser *p, const struct opdesc *d, char c, const struct tok *t,
                         struct crash_step *s)
{
	int rc;
	switch (c) {
	case 'p':
	case 'r':
		if ((rc = check_path(p, t, c == 'r')))
			return rc;
		if (!s->path)
			return (s->path = tokdup(t)) ? 0 : -ENOMEM;
		return (s->path2 = tokdup(t)) ? 0 : -ENOMEM;
	case 'o': return parse_num(p, t, "offset", CRASH_WL_MAX_OFF, &s->off);
	case 's': return parse_num(p, t, "size", CRASH_WL_MAX_OFF, &s->off);
	case 'L':
	case 'C':
		rc = parse_num(p, t, c == 'C' ? "chunk" : "length", CRASH_WL_MAX_LEN, &s->len);
		if (rc == 0 && s->len == 0)
			rc = perr(p, t->col, "length must be at least 1%s%s", NULL, NULL);
		if (rc == 0 && strchr(d->shape, 'o') && s->off + s->len > CRASH_WL_MAX_OFF)
			rc = perr(p, t[-1].col, "offset + length is past 1T%s%s", NULL, NULL);
		return rc;
	case 'm': return parse_falloc_mode(p, t, &s->mode);
	case 'k': return parse_word(p, t, c, &s->path);
	case 'f':
	case 'x': return parse_word(p, t, c, &s->arg);
	case 'v': return parse_word(p, t, c, &s->arg2);
	}
	return -EINVAL;
}

static int parse_line(struct parser *p, struct tok *t, unsigned nt, int *section)
{
	if (tokeq(&t[0], "name") || tokeq(&t[0], "summary"))
		return parse_header(p, t, nt);
	if (tokeq(&t[0], "setup") || tokeq(&t[0], "run"))
		return parse_section(p, t, nt, section);
	const struct opdesc *d = NULL;
	for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++)
		if (tokeq(&t[0], op_names[descs[i].op]))
			d = &descs[i];
	if (!d) {
		char w[40];
		snprintf(w, sizeof(w), "%.*s", (int)(t[0].len > 32 ? 32 : t[0].len), t[0].s);
		return perr(
		    p, t[0].col,
		    "unknown operation '%s' (expected mkdir, create, write, append, truncate, "
		    "rename, link, unlink, rmdir, fsync, fdatasync, fsync-dir, sync, mark, "
		    "fill, falloc, symlink, setxattr, removexattr, dwrite, mwrite, osync, "
		    "dwrite-osync, open, close, fsync-fd, fdatasync-fd, or the words name, "
		    "summary, setup, run)%s",
		    w, NULL);
	}
	if (*section == 0)
		return perr(p, t[0].col, "operation before 'setup' or 'run'%s%s", NULL, NULL);
	struct crash_step s = {.op = d->op, .line = p->line};
	size_t nshape = strlen(d->shape);
	bool pattern = nshape && d->shape[nshape - 1] == 't';
	unsigned want = 1 + (unsigned)nshape - pattern;
	if (nt < want) {
		unsigned col = t[nt - 1].col + (unsigned)t[nt - 1].len;
		return perr(p, col, "'%s' needs %s", op_names[d->op], d->usage);
	}
	if (nt > want + pattern)
		return perr(p, t[want + pattern].col, "unexpected operand after '%s'",
		            op_names[d->op], NULL);
	int rc = 0;
	unsigned k = 1;
	for (; rc == 0 && k < want; k++)
		rc = parse_operand(p, d, d->shape[k - 1], &t[k], &s);
	if (rc == 0 && s.arg && (d->shape[0] == 'f'))
		rc = track_fd(p, &s, &t[1]);
	if (rc == 0 && pattern) {
		if (k < nt)
			rc = parse_tag(p, &t[k], &s);
		if (rc == 0 && !s.tag_given)
			s.tag = p->next_tag;
		if (rc == 0)
			p->next_tag++;
	}
	if (rc == 0)
		rc = add_step(p, *section == 1, &s);
	if (rc)
		step_free(&s);
	return rc;
}

int crash_workload_parse(const char *text, size_t len, const char *name,
                         struct crash_workload **out, struct bo_err *err)
{
	*out = NULL;
	if (len > CRASH_WL_MAX_TEXT)
		return bo_errf(err, -EFBIG, "workload is larger than 1 MiB");
	struct crash_workload *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	struct parser p = {.err = err, .w = w, .next_tag = 1};
	int section = 0, rc = 0;
	size_t i = 0;
	struct tok t[8];
	while (i < len && rc == 0) {
		p.line++;
		size_t ls = i;
		while (i < len && text[i] != '\n')
			i++;
		size_t le = i;
		if (i < len)
			i++;
		if (le > ls && text[le - 1] == '\r')
			le--;
		unsigned nt = 0;
		size_t j = ls;
		while (j < le && rc == 0) {
			unsigned char c = (unsigned char)text[j];
			if (c == ' ' || c == '\t') {
				j++;
				continue;
			}
			if (c == '#')
				break;
			if (c < 0x20 || c == 0x7f) {
				p.line = p.line; /* keep line */
				rc = bo_errf(err, -EINVAL,
				             "workload line %u, column %zu: control byte 0x%02x",
				             p.line, j - ls + 1, c);
				break;
			}
			size_t s0 = j;
			while (j < le && text[j] != ' ' && text[j] != '\t' && text[j] != '#' &&
			       (unsigned char)text[j] >= 0x20 && text[j] != 0x7f)
				j++;
			if (nt == 8) {
				/* summaries are free text: only they may have many words */
				if (!(nt > 0 && tokeq(&t[0], "summary"))) {
					rc = bo_errf(
					    err, -EINVAL,
					    "workload line %u, column %zu: too many operands",
					    p.line, s0 - ls + 1);
					break;
				}
				t[7].len = j - (size_t)(t[7].s - text);
				continue;
			}
			t[nt].s = text + s0;
			t[nt].len = j - s0;
			t[nt].col = (unsigned)(s0 - ls + 1);
			nt++;
		}
		if (rc == 0 && nt > 0)
			rc = parse_line(&p, t, nt, &section);
	}
	if (rc == 0 && section != 2)
		rc = bo_errf(err, -EINVAL, "workload line %u: no 'run' section",
		             p.line ? p.line : 1);
	if (rc == 0 && !w->name) {
		w->name = strdup(name && *name ? name : "workload");
		if (!w->name)
			rc = -ENOMEM;
	}
	if (rc) {
		crash_workload_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void crash_workload_free(struct crash_workload *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nsetup; i++)
		step_free(&w->setup[i]);
	for (size_t i = 0; i < w->nrun; i++)
		step_free(&w->run[i]);
	free(w->setup);
	free(w->run);
	free(w->name);
	free(w->summary);
	free(w);
}

/* ---- printing --------------------------------------------------------------- */

static void print_step(const struct crash_step *s, FILE *f)
{
	fputs(crash_op_name(s->op), f);
	const struct opdesc *d = desc_of(s->op);
	unsigned npath = 0;
	char a[32];
	for (const char *c = d ? d->shape : ""; *c; c++) {
		switch (*c) {
		case 'p':
		case 'r': fprintf(f, " %s", npath++ ? s->path2 : s->path); break;
		case 'k': fprintf(f, " %s", s->path); break;
		case 'o':
		case 's': fprintf(f, " %s", bo_format_size(s->off, a, 32)); break;
		case 'L':
		case 'C': fprintf(f, " %s", bo_format_size(s->len, a, 32)); break;
		case 'm': fprintf(f, " %s", crash_falloc_name(s->mode)); break;
		case 'f':
		case 'x': fprintf(f, " %s", s->arg); break;
		case 'v': fprintf(f, " %s", s->arg2); break;
		case 't':
			if (!s->tag_given)
				break;
			if (s->tag == CRASH_PATTERN_ZERO)
				fputs(" zero", f);
			else
				fprintf(f, " %" PRIu32, s->tag);
			break;
		}
	}
	fputc('\n', f);
}

int crash_workload_format(const struct crash_workload *w, FILE *f)
{
	fprintf(f, "name %s\n", w->name);
	if (w->summary)
		fprintf(f, "summary %s\n", w->summary);
	if (w->nsetup) {
		fputs("setup\n", f);
		for (size_t i = 0; i < w->nsetup; i++)
			print_step(&w->setup[i], f);
	}
	fputs("run\n", f);
	for (size_t i = 0; i < w->nrun; i++)
		print_step(&w->run[i], f);
	return ferror(f) ? -EIO : 0;
}

static bool streq0(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool steps_equal(const struct crash_step *a, const struct crash_step *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].op != b[i].op || !streq0(a[i].path, b[i].path) ||
		    !streq0(a[i].path2, b[i].path2) || !streq0(a[i].arg, b[i].arg) ||
		    !streq0(a[i].arg2, b[i].arg2) || a[i].mode != b[i].mode ||
		    a[i].off != b[i].off || a[i].len != b[i].len || a[i].tag != b[i].tag)
			return false;
	return true;
}

bool crash_workload_equal(const struct crash_workload *a, const struct crash_workload *b)
{
	return streq0(a->name, b->name) && streq0(a->summary, b->summary) &&
	       a->nsetup == b->nsetup && a->nrun == b->nrun &&
	       steps_equal(a->setup, b->setup, a->nsetup) && steps_equal(a->run, b->run, a->nrun);
}
