/* SPDX-License-Identifier: GPL-2.0-or-later */
/* json.h — every JSON blackout writes or reads goes through jansson (docs/json.md says
 * why); this header adds what jansson does not know: byte strings that need not be
 * UTF-8, and a reader that names the field it refuses. */
#ifndef BLACKOUT_JSON_H
#define BLACKOUT_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "blackout/err.h"

/* A C string as a JSON string. Valid UTF-8 stays as it is ("—" is written as "—"); a
 * byte that is not part of valid UTF-8 (names from damaged directories) becomes the
 * private-use code point U+EF00 + byte, and so does each byte of a real U+EF80..U+EFFF,
 * so bo_json_bytes gives back exactly the bytes. NULL only when out of memory. */
json_t *bo_json_text(const char *s);
/* The bytes a bo_json_text string stands for, into dst (len bytes, NUL-terminated).
 * Returns the byte count, or -ENAMETOOLONG when it does not fit. */
int bo_json_bytes(const char *utf8, char *dst, size_t len);

/* Writes v (and a newline) to f, keys in insertion order, reals with up to 10
 * significant digits; indent 0 = one line. Releases v, also when it is NULL (then
 * -ENOMEM: a json_pack that ran out of memory). 0 or -EIO. */
int bo_json_write(json_t *v, FILE *f, int indent);

/* Parses text as one JSON document: duplicate keys, trailing bytes, integers that do
 * not fit 64 bits and reals that overflow are errors. what names the input in the
 * message ("result JSON"); the message carries line and column. */
int bo_json_parse(const char *text, size_t len, const char *what, json_t **out, struct bo_err *err);

/* Reading fields: the first error is kept in rc and names the field with where as its
 * prefix ("failures[3].detail"); later calls return zero values. */
struct bo_jr {
	struct bo_err *err;
	const char *what; /* "result JSON" */
	char where[48];   /* "" or "failures[3]" */
	int rc;
};
/* The member key of o, of type t (JSON_INTEGER ... ); NULL after an error. */
json_t *bo_jr_get(struct bo_jr *r, const json_t *o, const char *key, json_type t);
/* An integer in [0, max]: reals such as 1.5, negatives and larger values are refused. */
uint64_t bo_jr_count(struct bo_jr *r, const json_t *o, const char *key, uint64_t max);
/* A finite number (integer or real) in [lo, hi]. */
double bo_jr_real(struct bo_jr *r, const json_t *o, const char *key, double lo, double hi);
bool bo_jr_bool(struct bo_jr *r, const json_t *o, const char *key);
/* A string, turned back into its bytes (bo_json_bytes); too long is an error. */
void bo_jr_text(struct bo_jr *r, const json_t *o, const char *key, char *dst, size_t len);
/* Records an error about key (printf-style reason) unless one is kept already. */
void bo_jr_fail(struct bo_jr *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
