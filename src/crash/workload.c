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
    [CRASH_OP_MKDIR] = "mkdir",         [CRASH_OP_CREATE] = "create",
    [CRASH_OP_WRITE] = "write",         [CRASH_OP_APPEND] = "append",
    [CRASH_OP_TRUNCATE] = "truncate",   [CRASH_OP_RENAME] = "rename",
    [CRASH_OP_LINK] = "link",           [CRASH_OP_UNLINK] = "unlink",
    [CRASH_OP_RMDIR] = "rmdir",         [CRASH_OP_FSYNC] = "fsync",
    [CRASH_OP_FDATASYNC] = "fdatasync", [CRASH_OP_FSYNC_DIR] = "fsync-dir",
    [CRASH_OP_SYNC] = "sync",           [CRASH_OP_MARK] = "mark",
    [CRASH_OP_FILL] = "fill",
};
#define NOPS ((int)(sizeof(op_names) / sizeof(op_names[0])))

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
};

static int perr(struct parser *p, unsigned col, const char *fmt, const char *a, const char *b)
{
	char why[256];
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

struct opdesc {
	enum crash_op op;
	unsigned npaths; /* leading path operands */
	unsigned nnums;  /* numeric operands after them */
	bool pattern;    /* optional trailing pattern */
};

static const struct opdesc descs[] = {
    {CRASH_OP_MKDIR, 1, 0, false},     {CRASH_OP_CREATE, 1, 0, false},
    {CRASH_OP_WRITE, 1, 2, true},      {CRASH_OP_APPEND, 1, 1, true},
    {CRASH_OP_TRUNCATE, 1, 1, false},  {CRASH_OP_RENAME, 2, 0, false},
    {CRASH_OP_LINK, 2, 0, false},      {CRASH_OP_UNLINK, 1, 0, false},
    {CRASH_OP_RMDIR, 1, 0, false},     {CRASH_OP_FSYNC, 1, 0, false},
    {CRASH_OP_FDATASYNC, 1, 0, false}, {CRASH_OP_FSYNC_DIR, 1, 0, false},
    {CRASH_OP_SYNC, 0, 0, false},      {CRASH_OP_MARK, 0, 0, false},
    {CRASH_OP_FILL, 1, 1, true},
};

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
		    "fill, or the words name, summary, setup, run)%s",
		    w, NULL);
	}
	if (*section == 0)
		return perr(p, t[0].col, "operation before 'setup' or 'run'%s%s", NULL, NULL);
	struct crash_step s = {.op = d->op, .line = p->line};
	unsigned want = 1 + d->npaths + d->nnums + (d->op == CRASH_OP_MARK);
	if (nt < want) {
		unsigned col = t[nt - 1].col + (unsigned)t[nt - 1].len;
		return perr(p, col, "'%s' needs %s", op_names[d->op],
		            d->op == CRASH_OP_WRITE      ? "PATH OFFSET LEN [PATTERN]"
		            : d->op == CRASH_OP_APPEND   ? "PATH LEN [PATTERN]"
		            : d->op == CRASH_OP_FILL     ? "PATH CHUNK [PATTERN]"
		            : d->op == CRASH_OP_TRUNCATE ? "PATH SIZE"
		            : d->op == CRASH_OP_MARK     ? "NAME"
		            : d->npaths == 2             ? "two paths"
		                                         : "a path");
	}
	if (nt > want + d->pattern)
		return perr(p, t[want + d->pattern].col, "unexpected operand after '%s'",
		            op_names[d->op], NULL);
	int rc = 0;
	unsigned k = 1;
	if (d->op == CRASH_OP_MARK) {
		if (t[1].len > 63)
			return perr(p, t[1].col, "mark name longer than 63 bytes%s%s", NULL, NULL);
		s.path = tokdup(&t[1]);
		if (!s.path)
			return -ENOMEM;
		k = 2;
	}
	for (unsigned i = 0; i < d->npaths && rc == 0; i++, k++) {
		rc = check_path(p, &t[k], d->op == CRASH_OP_FSYNC || d->op == CRASH_OP_FSYNC_DIR);
		if (rc == 0) {
			char **dst = i == 0 ? &s.path : &s.path2;
			*dst = tokdup(&t[k]);
			if (!*dst)
				rc = -ENOMEM;
		}
	}
	if (rc == 0 && d->op == CRASH_OP_WRITE) {
		rc = parse_num(p, &t[k], "offset", CRASH_WL_MAX_OFF, &s.off);
		if (rc == 0)
			rc = parse_num(p, &t[k + 1], "length", CRASH_WL_MAX_LEN, &s.len);
		if (rc == 0 && s.len == 0)
			rc = perr(p, t[k + 1].col, "length must be at least 1%s%s", NULL, NULL);
		if (rc == 0 && s.off + s.len > CRASH_WL_MAX_OFF)
			rc = perr(p, t[k].col, "offset + length is past 1T%s%s", NULL, NULL);
		k += 2;
	} else if (rc == 0 && (d->op == CRASH_OP_APPEND || d->op == CRASH_OP_FILL)) {
		rc = parse_num(p, &t[k], d->op == CRASH_OP_FILL ? "chunk" : "length",
		               CRASH_WL_MAX_LEN, &s.len);
		if (rc == 0 && s.len == 0)
			rc = perr(p, t[k].col, "length must be at least 1%s%s", NULL, NULL);
		k++;
	} else if (rc == 0 && d->op == CRASH_OP_TRUNCATE) {
		rc = parse_num(p, &t[k], "size", CRASH_WL_MAX_OFF, &s.off);
		k++;
	}
	if (rc == 0 && d->pattern) {
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
	if (s->op == CRASH_OP_MARK) {
		fprintf(f, " %s\n", s->path);
		return;
	}
	if (s->path)
		fprintf(f, " %s", s->path);
	if (s->path2)
		fprintf(f, " %s", s->path2);
	char a[32], b[32];
	switch (s->op) {
	case CRASH_OP_WRITE:
		fprintf(f, " %s %s", bo_format_size(s->off, a, 32), bo_format_size(s->len, b, 32));
		break;
	case CRASH_OP_APPEND:
	case CRASH_OP_FILL: fprintf(f, " %s", bo_format_size(s->len, a, 32)); break;
	case CRASH_OP_TRUNCATE: fprintf(f, " %s", bo_format_size(s->off, a, 32)); break;
	default: break;
	}
	if (s->tag_given) {
		if (s->tag == CRASH_PATTERN_ZERO)
			fputs(" zero", f);
		else
			fprintf(f, " %" PRIu32, s->tag);
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
		    !streq0(a[i].path2, b[i].path2) || a[i].off != b[i].off ||
		    a[i].len != b[i].len || a[i].tag != b[i].tag)
			return false;
	return true;
}

bool crash_workload_equal(const struct crash_workload *a, const struct crash_workload *b)
{
	return streq0(a->name, b->name) && streq0(a->summary, b->summary) &&
	       a->nsetup == b->nsetup && a->nrun == b->nrun &&
	       steps_equal(a->setup, b->setup, a->nsetup) && steps_equal(a->run, b->run, a->nrun);
}
