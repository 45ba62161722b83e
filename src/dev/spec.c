// SPDX-License-Identifier: GPL-2.0-or-later
/* spec.c — the stack-spec language: parse, check against the model registry, print
 * canonically, compare. Grammar: docs/stack-spec.md. Opening a stack is stack.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "dev/dev_int.h"

/* Limits that keep hostile specs cheap: a spec is typed by a person. */
#define SPEC_MAX_LEN    65536
#define SPEC_MAX_DEPTH  32
#define SPEC_MAX_REPEAT 64
#define SPEC_MAX_NODES  1024
#define SPEC_MAX_LOWERS 64 /* written in one bracket list */
#define SPEC_MAX_VALUE  4096

/* ---- arguments ----------------------------------------------------------------- */

const struct dev_model *dev_args_model(const struct dev_args *a)
{
	return a->model;
}

static int param_index(const struct dev_model *m, const char *name)
{
	for (int i = 0; m->params && m->params[i].name; i++)
		if (strcmp(m->params[i].name, name) == 0)
			return i;
	return -1;
}

const char *dev_arg_str(const struct dev_args *a, const char *name)
{
	int i = param_index(a->model, name);
	return i < 0 ? NULL : a->kv[i].val;
}

static int arg_lookup(const struct dev_args *a, const char *name, const char **v,
                      struct bo_err *err)
{
	*v = dev_arg_str(a, name);
	if (*v)
		return 0;
	if (param_index(a->model, name) < 0)
		return bo_errf(err, -ENOENT, "%s has no parameter '%s'", a->model->name, name);
	return bo_errf(err, -EINVAL, "%s: parameter '%s' is required", a->model->name, name);
}

static int parse_u64(const char *v, uint64_t *out)
{
	if (!*v)
		return -EINVAL;
	uint64_t x = 0;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

int dev_arg_u64(const struct dev_args *a, const char *name, uint64_t *out, struct bo_err *err)
{
	const char *v;
	int rc = arg_lookup(a, name, &v, err);
	if (rc)
		return rc;
	rc = parse_u64(v, out);
	if (rc)
		return bo_errf(err, rc, "%s: %s='%s' is not a whole number", a->model->name, name,
		               v);
	return 0;
}

int dev_arg_size(const struct dev_args *a, const char *name, uint64_t *out, struct bo_err *err)
{
	const char *v;
	int rc = arg_lookup(a, name, &v, err);
	if (rc)
		return rc;
	struct bo_err e = {{0}};
	rc = bo_parse_size(v, out, &e);
	if (rc)
		return bo_errf(err, rc, "%s: %s='%s': %s", a->model->name, name, v,
		               bo_errstr(&e, rc));
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1", NULL};
	static const char *const no[] = {"false", "no", "off", "0", NULL};
	for (int i = 0; yes[i]; i++) {
		if (strcmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int dev_arg_bool(const struct dev_args *a, const char *name, bool *out, struct bo_err *err)
{
	const char *v;
	int rc = arg_lookup(a, name, &v, err);
	if (rc)
		return rc;
	if (parse_bool(v, out))
		return bo_errf(err, -EINVAL, "%s: %s='%s' is not true or false", a->model->name,
		               name, v);
	return 0;
}

static void join_values(const char *const *values, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; values[i] && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "|" : "", values[i]);
}

int dev_arg_enum(const struct dev_args *a, const char *name, const char *const *values, int *out,
                 struct bo_err *err)
{
	const char *v;
	int rc = arg_lookup(a, name, &v, err);
	if (rc)
		return rc;
	for (int i = 0; values[i]; i++) {
		if (strcmp(values[i], v) == 0) {
			*out = i;
			return 0;
		}
	}
	char list[256];
	join_values(values, list, sizeof(list));
	return bo_errf(err, -EINVAL, "%s: %s='%s' (must be one of %s)", a->model->name, name, v,
	               list);
}

/* ---- parser --------------------------------------------------------------------- */

struct parser {
	const char *text;
	size_t len, pos;
	unsigned nodes;
	struct bo_err *err;
};

/* The error: reason, then the spec (a window of it when long) with a caret under
 * byte `at`. Non-printable bytes are shown as '?' so the caret stays aligned. */
static int spec_error(struct parser *p, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int spec_error(struct parser *p, size_t at, const char *fmt, ...)
{
	if (!p->err)
		return -EINVAL;
	char reason[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (at > p->len)
		at = p->len;
	size_t from = at > 60 ? at - 60 : 0, to = p->len - at > 60 ? at + 60 : p->len;
	char line[160], caret[160];
	size_t n = 0;
	if (from > 0) {
		memcpy(line, "...", 3);
		n = 3;
	}
	size_t caret_col = n + (at - from);
	for (size_t i = from; i < to; i++) {
		unsigned char c = (unsigned char)p->text[i];
		line[n++] = c >= 0x20 && c < 0x7f ? (char)c : c == '\t' ? ' ' : '?';
	}
	if (to < p->len) {
		memcpy(line + n, "...", 3);
		n += 3;
	}
	line[n] = 0;
	memset(caret, ' ', caret_col);
	caret[caret_col] = '^';
	caret[caret_col + 1] = 0;
	return bo_errf(p->err, -EINVAL, "stack spec, column %zu: %s\n  %s\n  %s", at + 1, reason,
	               line, caret);
}

static int peek(struct parser *p)
{
	return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
	                           p->text[p->pos] == '\n' || p->text[p->pos] == '\r'))
		p->pos++;
}

static bool is_name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* bytes that end an unquoted value */
static bool is_value_stop(int c)
{
	return c < 0 || c == ',' || c == '(' || c == ')' || c == '[' || c == ']' || c == ';' ||
	       c == '>' || c == '"' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '=';
}

static const char *describe_char(int c, char *buf, size_t len)
{
	if (c < 0)
		snprintf(buf, len, "the end of the spec");
	else if (c >= 0x21 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", (unsigned)c);
	return buf;
}

static int expected(struct parser *p, const char *what)
{
	char b[32];
	return spec_error(p, p->pos, "expected %s, found %s", what,
	                  describe_char(peek(p), b, sizeof(b)));
}

static void spec_free_node(struct dev_spec *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->nlowers; i++)
		spec_free_node(s->lowers[i]);
	free(s->lowers);
	if (s->args.kv)
		for (unsigned i = 0; i < s->args.n; i++)
			free(s->args.kv[i].val);
	free(s->args.kv);
	free(s);
}

void dev_spec_free(struct dev_spec *s)
{
	spec_free_node(s);
}

/* Bytes no name has but a mistyped one may hold (UTF-8 as in "mém", control
 * bytes): read into the name, so the error names the whole word, not its start. */
static bool is_stray_byte(int c)
{
	return c >= 0x7f || (c >= 0 && c < 0x20 && c != '\t' && c != '\n' && c != '\r');
}

/* A name for a message: well-formed UTF-8 kept, control and stray bytes as \xHH. */
static const char *escape_name(const char *in, char *out, size_t len)
{
	size_t at = 0;
	const unsigned char *c = (const unsigned char *)in;
	while (*c && at + 5 < len) {
		/* length of a well-formed UTF-8 sequence starting here, 0 if none */
		unsigned n = *c >= 0x20 && *c < 0x7f   ? 1
		             : *c >= 0xc2 && *c < 0xe0 ? 2
		             : *c >= 0xe0 && *c < 0xf0 ? 3
		             : *c >= 0xf0 && *c < 0xf5 ? 4
		                                       : 0;
		for (unsigned i = 1; i < n; i++)
			if ((c[i] & 0xc0) != 0x80)
				n = 0;
		if (n == 0) {
			at += (size_t)snprintf(out + at, len - at, "\\x%02x", *c++);
			continue;
		}
		while (n--)
			out[at++] = (char)*c++;
	}
	out[at] = 0;
	return out;
}

static int read_name(struct parser *p, char *buf, size_t len, const char *what)
{
	size_t start = p->pos;
	while (is_name_char(peek(p)) || is_stray_byte(peek(p)))
		p->pos++;
	size_t n = p->pos - start;
	if (n == 0)
		return expected(p, what);
	if (n >= len)
		return spec_error(p, start, "%s is longer than %zu characters", what, len - 1);
	memcpy(buf, p->text + start, n);
	buf[n] = 0;
	return 0;
}

/* A value, unquoted or "quoted" (with \" and \\), into a malloc'd string. */
static int read_value(struct parser *p, char **out)
{
	size_t start = p->pos;
	char *v = malloc(SPEC_MAX_VALUE + 1);
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	if (peek(p) == '"') {
		p->pos++;
		for (;;) {
			int c = peek(p);
			if (c < 0) {
				free(v);
				return spec_error(p, start, "unterminated quoted value");
			}
			p->pos++;
			if (c == '"')
				break;
			if (c == '\\') {
				c = peek(p);
				if (c != '"' && c != '\\') {
					free(v);
					return spec_error(
					    p, p->pos,
					    "only \\\" and \\\\ are escapes in a quoted "
					    "value");
				}
				p->pos++;
			}
			if (c == 0) {
				free(v);
				return spec_error(p, p->pos - 1, "NUL byte in a value");
			}
			if (n == SPEC_MAX_VALUE) {
				free(v);
				return spec_error(p, start, "value longer than %d bytes",
				                  SPEC_MAX_VALUE);
			}
			v[n++] = (char)c;
		}
	} else {
		while (!is_value_stop(peek(p))) {
			int c = peek(p);
			if (c == 0 || c < 0x20 || c == 0x7f) {
				free(v);
				return spec_error(p, p->pos, "control byte 0x%02x in a value",
				                  (unsigned)c);
			}
			if (n == SPEC_MAX_VALUE) {
				free(v);
				return spec_error(p, start, "value longer than %d bytes",
				                  SPEC_MAX_VALUE);
			}
			v[n++] = (char)c;
			p->pos++;
		}
		if (n == 0) {
			free(v);
			return expected(p, "a value (use \"\" for an empty one)");
		}
	}
	v[n] = 0;
	*out = v;
	return 0;
}

/* Checks a value against its parameter's type and rewrites it canonically. */
static int check_value(struct parser *p, const struct dev_model *m, const struct dev_param *pr,
                       size_t at, char **val)
{
	char buf[64];
	switch (pr->type) {
	case DEV_PT_STR: return 0;
	case DEV_PT_SIZE: {
		uint64_t x;
		struct bo_err e = {{0}};
		int rc = bo_parse_size(*val, &x, &e);
		if (rc)
			return spec_error(p, at, "%s: %s: %s", m->name, pr->name,
			                  bo_errstr(&e, rc));
		if (pr->max && x > pr->max) {
			char mx[32];
			bool raid = strncmp(m->name, "raid", 4) == 0;
			return spec_error(
			    p, at, "%s: %s=%s is over its maximum of %s (docs/models/%s.md)",
			    m->name, pr->name, *val, bo_format_size(pr->max, mx, sizeof(mx)),
			    raid ? "raid" : m->name);
		}
		bo_format_size(x, buf, sizeof(buf));
		break;
	}
	case DEV_PT_U64: {
		uint64_t x;
		if (parse_u64(*val, &x))
			return spec_error(p, at, "%s: %s must be a whole number", m->name,
			                  pr->name);
		if (pr->max && x > pr->max)
			return spec_error(p, at, "%s: %s=%s is over its maximum of %" PRIu64,
			                  m->name, pr->name, *val, pr->max);
		snprintf(buf, sizeof(buf), "%" PRIu64, x);
		break;
	}
	case DEV_PT_BOOL: {
		bool b;
		if (parse_bool(*val, &b))
			return spec_error(p, at, "%s: %s must be true or false", m->name, pr->name);
		snprintf(buf, sizeof(buf), "%s", b ? "true" : "false");
		break;
	}
	case DEV_PT_ENUM: {
		for (int i = 0; pr->values && pr->values[i]; i++)
			if (strcmp(pr->values[i], *val) == 0)
				return 0;
		char list[256] = "";
		if (pr->values)
			join_values(pr->values, list, sizeof(list));
		return spec_error(p, at, "%s: %s must be one of %s", m->name, pr->name, list);
	}
	default: return 0;
	}
	char *c = strdup(buf);
	if (!c)
		return -ENOMEM;
	free(*val);
	*val = c;
	return 0;
}

static int fill_defaults(struct parser *p, struct dev_spec *s, size_t name_at)
{
	const struct dev_model *m = s->model;
	for (unsigned i = 0; i < s->args.n; i++) {
		if (s->args.kv[i].given)
			continue;
		if (!m->params[i].def)
			return spec_error(p, name_at, "%s needs %s=... (%s)", m->name,
			                  m->params[i].name, m->params[i].help);
		s->args.kv[i].val = strdup(m->params[i].def);
		if (!s->args.kv[i].val)
			return -ENOMEM;
	}
	return 0;
}

/* The model's own check of its parameters together, its reason under a caret. */
static int check_model(struct parser *p, struct dev_spec *s, size_t name_at)
{
	if (!s->model->check)
		return 0;
	struct bo_err e = {{0}};
	int rc = s->model->check(&s->args, &e);
	return rc ? spec_error(p, name_at, "%s", bo_errstr(&e, rc)) : 0;
}

static void list_models(char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; dev_models[i] && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
		                       dev_models[i]->name);
}

static void list_params(const struct dev_model *m, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; m->params && m->params[i].name && at < len; i++)
		at +=
		    (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", m->params[i].name);
	if (!buf[0])
		snprintf(buf, len, "none");
}

static int parse_stack(struct parser *p, unsigned depth, struct dev_spec **out);

static int add_lower(struct dev_spec *s, struct dev_spec *l)
{
	struct dev_spec **n = realloc(s->lowers, (s->nlowers + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->lowers = n;
	s->lowers[s->nlowers++] = l;
	return 0;
}

static int parse_lowers(struct parser *p, unsigned depth, struct dev_spec *s)
{
	int rc;
	struct dev_spec *l;
	skip_ws(p);
	if (peek(p) != '[') {
		rc = parse_stack(p, depth + 1, &l);
		if (rc)
			return rc;
		rc = add_lower(s, l);
		if (rc)
			spec_free_node(l);
		return rc;
	}
	size_t open_at = p->pos++;
	for (;;) {
		skip_ws(p);
		if (s->nlowers == SPEC_MAX_LOWERS)
			return spec_error(p, p->pos, "more than %d lower devices in one list",
			                  SPEC_MAX_LOWERS);
		rc = parse_stack(p, depth + 1, &l);
		if (rc)
			return rc;
		rc = add_lower(s, l);
		if (rc) {
			spec_free_node(l);
			return rc;
		}
		skip_ws(p);
		if (peek(p) == ';') {
			p->pos++;
			continue;
		}
		if (peek(p) == ']') {
			p->pos++;
			break;
		}
		if (peek(p) < 0)
			return spec_error(p, open_at, "this '[' is never closed");
		return expected(p, "';' or ']' in the list of lower devices");
	}
	skip_ws(p);
	if (peek(p) == 'x' || peek(p) == '*') {
		p->pos++;
		skip_ws(p);
		size_t at = p->pos;
		uint64_t r = 0;
		if (peek(p) < '0' || peek(p) > '9')
			return expected(p, "a repeat count after 'x'");
		while (peek(p) >= '0' && peek(p) <= '9' && r <= SPEC_MAX_REPEAT) {
			r = r * 10 + (uint64_t)(peek(p) - '0');
			p->pos++;
		}
		if (r == 0 || r > SPEC_MAX_REPEAT)
			return spec_error(p, at, "repeat count must be 1..%d", SPEC_MAX_REPEAT);
		s->repeat = (unsigned)r;
	}
	return 0;
}

static int parse_layer(struct parser *p, struct dev_spec *s, size_t *name_at)
{
	char name[64];
	skip_ws(p);
	*name_at = p->pos;
	int rc = read_name(p, name, sizeof(name), "a device model name");
	if (rc)
		return rc;
	s->model = dev_model_find(name);
	if (!s->model) {
		char list[512], e[4 * sizeof(name)];
		list_models(list, sizeof(list));
		return spec_error(p, *name_at, "unknown device model '%s' (models: %s)",
		                  escape_name(name, e, sizeof(e)), list);
	}
	const struct dev_model *m = s->model;
	s->args.model = m;
	while (m->params && m->params[s->args.n].name)
		s->args.n++;
	s->args.kv = calloc(s->args.n ? s->args.n : 1, sizeof(*s->args.kv));
	if (!s->args.kv)
		return -ENOMEM;
	skip_ws(p);
	if (peek(p) != '(')
		return 0;
	p->pos++;
	skip_ws(p);
	if (peek(p) == ')') {
		p->pos++;
		return 0;
	}
	for (;;) {
		skip_ws(p);
		size_t key_at = p->pos;
		char key[64];
		rc = read_name(p, key, sizeof(key), "a parameter name");
		if (rc)
			return rc;
		int i = param_index(m, key);
		if (i < 0) {
			char list[256], e[4 * sizeof(key)];
			list_params(m, list, sizeof(list));
			return spec_error(p, key_at, "%s has no parameter '%s' (parameters: %s)",
			                  m->name, escape_name(key, e, sizeof(e)), list);
		}
		if (s->args.kv[i].given)
			return spec_error(p, key_at, "%s: parameter '%s' given twice", m->name,
			                  key);
		skip_ws(p);
		if (peek(p) != '=')
			return expected(p, "'=' after the parameter name");
		p->pos++;
		skip_ws(p);
		size_t val_at = p->pos;
		char *v = NULL;
		rc = read_value(p, &v);
		if (rc)
			return rc;
		s->args.kv[i].val = v;
		s->args.kv[i].given = true;
		s->args.kv[i].at = (uint32_t)val_at;
		rc = check_value(p, m, &m->params[i], val_at, &s->args.kv[i].val);
		if (rc)
			return rc;
		skip_ws(p);
		if (peek(p) == ',') {
			p->pos++;
			continue;
		}
		if (peek(p) == ')') {
			p->pos++;
			return 0;
		}
		return expected(p, "',' or ')' after a parameter value");
	}
}

/* What the layer opens once its lowers' repeats expand: devices, and memory
 * held by RAM media and caches. Lowers were checked first, so each term is
 * bounded and the sums cannot overflow (64 lowers x 64 repeats x the limits). */
static int check_expanded(struct parser *p, struct dev_spec *s, size_t name_at)
{
	uint64_t ndev = 0, ram = 0;
	for (unsigned i = 0; i < s->nlowers; i++) {
		ndev += s->lowers[i]->ndev;
		ram += s->lowers[i]->ram;
	}
	s->ndev = 1 + ndev * s->repeat;
	s->ram = ram * s->repeat;
	const struct dev_param *pr = s->model->params;
	for (unsigned i = 0; i < s->args.n; i++) {
		uint64_t x;
		bool held =
		    pr[i].ram == DEV_RAM_ALWAYS || (pr[i].ram == DEV_RAM_IF_LEAF && !s->nlowers);
		if (held && pr[i].type == DEV_PT_SIZE &&
		    bo_parse_size(s->args.kv[i].val, &x, NULL) == 0)
			s->ram += x;
	}
	if (s->ndev > DEV_SPEC_MAX_DEVICES)
		return spec_error(p, name_at,
		                  "%s and what stands below it open %" PRIu64
		                  " devices once repeats expand; a stack may open at most %d",
		                  s->model->name, s->ndev, DEV_SPEC_MAX_DEVICES);
	if (s->ram > DEV_SPEC_MAX_RAM) {
		char a[32], b[32];
		return spec_error(
		    p, name_at,
		    "%s and what stands below it hold %s of RAM media and caches once "
		    "repeats expand; a stack may hold at most %s",
		    s->model->name, bo_format_size(s->ram, a, sizeof(a)),
		    bo_format_size(DEV_SPEC_MAX_RAM, b, sizeof(b)));
	}
	return 0;
}

static int parse_stack(struct parser *p, unsigned depth, struct dev_spec **out)
{
	*out = NULL;
	if (depth > SPEC_MAX_DEPTH)
		return spec_error(p, p->pos, "stack nested deeper than %d layers", SPEC_MAX_DEPTH);
	if (++p->nodes > SPEC_MAX_NODES)
		return spec_error(p, p->pos, "more than %d layers in the spec", SPEC_MAX_NODES);
	struct dev_spec *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->repeat = 1;
	size_t name_at;
	int rc = parse_layer(p, s, &name_at);
	if (rc == 0)
		rc = fill_defaults(p, s, name_at);
	if (rc == 0)
		rc = check_model(p, s, name_at);
	if (rc)
		goto fail;
	skip_ws(p);
	size_t arrow_at = p->pos;
	const struct dev_model *m = s->model;
	if (peek(p) == '>') {
		if (m->max_lowers == 0) {
			rc = spec_error(p, arrow_at, "%s is a medium: nothing stands below it",
			                m->name);
			goto fail;
		}
		p->pos++;
		rc = parse_lowers(p, depth, s);
		if (rc)
			goto fail;
	}
	unsigned n = s->nlowers * s->repeat;
	if (n < m->min_lowers || n > m->max_lowers) {
		if (m->min_lowers == m->max_lowers)
			rc = spec_error(p, s->nlowers ? arrow_at : p->pos,
			                "%s takes %u lower device%s, not %u (e.g. %s > mem)",
			                m->name, m->min_lowers, m->min_lowers == 1 ? "" : "s", n,
			                m->name);
		else
			rc = spec_error(p, s->nlowers ? arrow_at : p->pos,
			                "%s takes %u to %u lower devices, not %u", m->name,
			                m->min_lowers, m->max_lowers, n);
		goto fail;
	}
	if ((rc = check_expanded(p, s, name_at)))
		goto fail;
	*out = s;
	return 0;
fail:
	spec_free_node(s);
	return rc;
}

int dev_spec_parse(const char *text, struct dev_spec **out, struct bo_err *err)
{
	*out = NULL;
	struct parser p = {.text = text, .err = err};
	p.len = strnlen(text, SPEC_MAX_LEN + 1);
	if (p.len > SPEC_MAX_LEN)
		return bo_errf(err, -EINVAL, "stack spec longer than %d bytes", SPEC_MAX_LEN);
	struct dev_spec *s;
	int rc = parse_stack(&p, 0, &s);
	if (rc)
		return rc;
	skip_ws(&p);
	if (p.pos < p.len) {
		char b[32];
		rc = spec_error(&p, p.pos, "unexpected %s after the end of the stack",
		                describe_char(peek(&p), b, sizeof(b)));
		spec_free_node(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* ---- printing ------------------------------------------------------------------- */

struct sbuf {
	char *buf;
	size_t len, at;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, b->at++)
		if (b->at + 1 < b->len)
			b->buf[b->at] = s[i];
}

static void puts_(struct sbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

static bool needs_quotes(const char *v)
{
	if (!*v)
		return true;
	for (const char *c = v; *c; c++)
		if (is_value_stop((unsigned char)*c) || *c == '\\' || (unsigned char)*c < 0x20 ||
		    *c == 0x7f)
			return true;
	return false;
}

static void put_value(struct sbuf *b, const char *v)
{
	if (!needs_quotes(v)) {
		puts_(b, v);
		return;
	}
	puts_(b, "\"");
	for (const char *c = v; *c; c++) {
		if (*c == '"' || *c == '\\')
			puts_(b, "\\");
		put(b, c, 1);
	}
	puts_(b, "\"");
}

static void format_lowers(struct sbuf *b, const struct dev_spec *s, bool given);

/* given: only the parameters written in the spec (or set), as a person writes it */
static void format_node(struct sbuf *b, const struct dev_spec *s, bool given)
{
	puts_(b, s->model->name);
	unsigned shown = 0;
	/* canonical: the model's order; given: the order they were written in */
	for (uint64_t after = 0;; shown++) {
		unsigned next = s->args.n;
		for (unsigned i = 0; i < s->args.n; i++) {
			uint64_t at = given ? s->args.kv[i].at : i;
			if ((!given || s->args.kv[i].given) && at + 1 > after &&
			    (next == s->args.n || at < (given ? s->args.kv[next].at : next)))
				next = i;
		}
		if (next == s->args.n)
			break;
		after = (given ? s->args.kv[next].at : next) + 1ull;
		puts_(b, shown ? "," : "(");
		puts_(b, s->model->params[next].name);
		puts_(b, "=");
		put_value(b, s->args.kv[next].val);
	}
	if (shown)
		puts_(b, ")");
	if (!s->nlowers)
		return;
	puts_(b, " > ");
	format_lowers(b, s, given);
}

static void format_lowers(struct sbuf *b, const struct dev_spec *s, bool given)
{
	if (s->nlowers == 1 && s->repeat == 1) {
		format_node(b, s->lowers[0], given);
		return;
	}
	puts_(b, "[");
	for (unsigned i = 0; i < s->nlowers; i++) {
		if (i)
			puts_(b, " ; ");
		format_node(b, s->lowers[i], given);
	}
	puts_(b, "]");
	if (s->repeat > 1) {
		char r[16];
		snprintf(r, sizeof(r), " x%u", s->repeat);
		puts_(b, r);
	}
}

static int format_end(struct sbuf *b)
{
	if (b->len)
		b->buf[b->at < b->len ? b->at : b->len - 1] = 0;
	return b->at > INT32_MAX ? -EOVERFLOW : (int)b->at;
}

int dev_spec_format(const struct dev_spec *s, char *buf, size_t len)
{
	struct sbuf b = {.buf = buf, .len = len};
	format_node(&b, s, false);
	return format_end(&b);
}

int dev_spec_format_given(const struct dev_spec *s, char *buf, size_t len)
{
	struct sbuf b = {.buf = buf, .len = len};
	format_node(&b, s, true);
	return format_end(&b);
}

int dev_spec_format_lowers(const struct dev_spec *s, char *buf, size_t len)
{
	struct sbuf b = {.buf = buf, .len = len};
	if (s->nlowers)
		format_lowers(&b, s, true);
	return format_end(&b);
}

char *dev_spec_format_alloc(const struct dev_spec *s)
{
	int n = dev_spec_format(s, NULL, 0);
	if (n < 0)
		return NULL;
	char *t = malloc((size_t)n + 1);
	if (t)
		dev_spec_format(s, t, (size_t)n + 1);
	return t;
}

/* ---- walking and comparing ---------------------------------------------------- */

const struct dev_model *dev_spec_model(const struct dev_spec *s)
{
	return s->model;
}

const struct dev_args *dev_spec_args(const struct dev_spec *s)
{
	return &s->args;
}

unsigned dev_spec_nlowers(const struct dev_spec *s)
{
	return s->nlowers * s->repeat;
}

const struct dev_spec *dev_spec_lower(const struct dev_spec *s, unsigned i)
{
	return s->nlowers && i < s->nlowers * s->repeat ? s->lowers[i % s->nlowers] : NULL;
}

int dev_spec_value(const struct dev_model *m, const char *name, const char *value, int *index,
                   char **out, struct bo_err *err)
{
	int i = *index = param_index(m, name);
	if (i < 0) {
		char list[512];
		list_params(m, list, sizeof(list));
		return bo_errf(err, -EINVAL, "%s has no parameter %s (it takes %s)", m->name, name,
		               list);
	}
	/* the value is checked as the parser checks it, its errors pointing into it */
	struct parser p = {.text = value, .len = strlen(value), .err = err};
	char *v = strdup(value);
	if (!v)
		return -ENOMEM;
	int rc = check_value(&p, m, &m->params[i], 0, &v);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	return 0;
}

bool dev_spec_given(const struct dev_spec *s, const char *name)
{
	int i = param_index(s->model, name);
	return i >= 0 && s->args.kv[i].given;
}

bool dev_spec_equal(const struct dev_spec *a, const struct dev_spec *b)
{
	if (a->model != b->model || dev_spec_nlowers(a) != dev_spec_nlowers(b))
		return false;
	for (unsigned i = 0; i < a->args.n; i++)
		if (strcmp(a->args.kv[i].val, b->args.kv[i].val) != 0)
			return false;
	for (unsigned i = 0; i < dev_spec_nlowers(a); i++)
		if (!dev_spec_equal(dev_spec_lower(a, i), dev_spec_lower(b, i)))
			return false;
	return true;
}
