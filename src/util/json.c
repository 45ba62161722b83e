// SPDX-License-Identifier: GPL-2.0-or-later
/* json.c — blackout's side of jansson: byte strings that need not be UTF-8 mapped to
 * and from JSON text, one way of writing, and a reader that names what it refuses. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/json.h"

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF), 0 when the byte at s does not start one. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	unsigned lo = 0x80, hi = 0xbf;
	size_t n;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
	} else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* U+EF80..U+EFFF (EE BE 80 .. EE BF BF) are the escaped bytes 0x80..0xFF. */
static bool is_escape(const unsigned char *s)
{
	return s[0] == 0xee && (s[1] == 0xbe || s[1] == 0xbf) && s[2] >= 0x80 && s[2] <= 0xbf;
}

json_t *bo_json_text(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), extra = 0;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq(u + i);
		if (k == 0 || (k == 3 && is_escape(u + i)))
			extra += 2 * (k ? k : 1), k = k ? k : 1;
		i += k;
	}
	if (extra == 0)
		return json_stringn(s, n);
	unsigned char *b = malloc(n + extra + 1);
	if (!b)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq(u + i);
		if (k == 0 || (k == 3 && is_escape(u + i))) {
			for (size_t j = 0; j < (k ? k : 1); j++) {
				unsigned cp = 0xef00u + u[i + j];
				b[o++] = 0xee;
				b[o++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
				b[o++] = (unsigned char)(0x80 | (cp & 0x3f));
			}
			i += k ? k : 1;
		} else {
			memcpy(b + o, u + i, k);
			o += k;
			i += k;
		}
	}
	json_t *v = json_stringn((const char *)b, o);
	free(b);
	return v;
}

int bo_json_bytes(const char *utf8, char *dst, size_t len)
{
	const unsigned char *u = (const unsigned char *)utf8;
	size_t o = 0;
	for (size_t i = 0; u[i];) {
		unsigned char c = u[i];
		size_t step = 1;
		if (c == 0xee && u[i + 1] && u[i + 2] && is_escape(u + i)) {
			c = (unsigned char)((((u[i + 1] & 0x3f) - 0x3c) << 6) | (u[i + 2] & 0x3f));
			step = 3;
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		dst[o++] = (char)c;
		i += step;
	}
	if (len)
		dst[o] = 0;
	return (int)o;
}

int bo_json_write(json_t *v, FILE *f, int indent)
{
	if (!v)
		return -ENOMEM;
	size_t flags = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10) |
	               (indent ? JSON_INDENT(indent) | JSON_COMPACT : JSON_COMPACT);
	int rc = json_dumpf(v, f, flags);
	json_decref(v);
	if (rc == 0)
		fputc('\n', f);
	return rc || ferror(f) ? -EIO : 0;
}

int bo_json_parse(const char *text, size_t len, const char *what, json_t **out, struct bo_err *err)
{
	json_error_t je;
	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!*out)
		return bo_errf(err, -EINVAL, "%s, line %d column %d: %s", what, je.line, je.column,
		               je.text);
	return 0;
}

void bo_jr_fail(struct bo_jr *r, const char *key, const char *fmt, ...)
{
	if (r->rc)
		return;
	char why[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	r->rc = bo_errf(r->err, -EINVAL, "%s: '%s%s%s' %s", r->what, r->where, *r->where ? "." : "",
	                key, why);
}

static const char *type_name(json_type t)
{
	switch (t) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "true or false";
	default: return "null";
	}
}

json_t *bo_jr_get(struct bo_jr *r, const json_t *o, const char *key, json_type t)
{
	if (r->rc)
		return NULL;
	json_t *v = json_object_get(o, key);
	if (!v) {
		bo_jr_fail(r, key, "is missing");
		return NULL;
	}
	bool fits = json_typeof(v) == t || (t == JSON_TRUE && json_is_boolean(v)) ||
	            (t == JSON_REAL && json_is_number(v));
	if (!fits) {
		bo_jr_fail(r, key, "is %s, not %s", type_name(json_typeof(v)), type_name(t));
		return NULL;
	}
	return v;
}

uint64_t bo_jr_count(struct bo_jr *r, const json_t *o, const char *key, uint64_t max)
{
	json_t *v = bo_jr_get(r, o, key, JSON_INTEGER);
	if (!v)
		return 0;
	json_int_t x = json_integer_value(v);
	if (x < 0 || (uint64_t)x > max) {
		bo_jr_fail(r, key, "is %lld, outside 0 to %llu", (long long)x,
		           (unsigned long long)max);
		return 0;
	}
	return (uint64_t)x;
}

double bo_jr_real(struct bo_jr *r, const json_t *o, const char *key, double lo, double hi)
{
	json_t *v = bo_jr_get(r, o, key, JSON_REAL);
	if (!v)
		return 0;
	double x = json_number_value(v);
	if (!isfinite(x) || x < lo || x > hi) {
		bo_jr_fail(r, key, "is %g, outside %g to %g", x, lo, hi);
		return 0;
	}
	return x;
}

bool bo_jr_bool(struct bo_jr *r, const json_t *o, const char *key)
{
	json_t *v = bo_jr_get(r, o, key, JSON_TRUE);
	return v && json_is_true(v);
}

void bo_jr_text(struct bo_jr *r, const json_t *o, const char *key, char *dst, size_t len)
{
	json_t *v = bo_jr_get(r, o, key, JSON_STRING);
	if (len)
		dst[0] = 0;
	if (v && bo_json_bytes(json_string_value(v), dst, len) < 0)
		bo_jr_fail(r, key, "is longer than %zu bytes", len - 1);
}
