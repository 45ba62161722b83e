// SPDX-License-Identifier: GPL-2.0-or-later
/* num.c — the one parser of unsigned numbers given on the command line: decimal, and
 * where an option allows it 0x-hex or a size unit, range-checked, errors naming the
 * option and what it accepts. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "blackout/util.h"

/* "0 to 1000", "1 or more": the accepted range in words, for messages. */
static const char *range_words(uint64_t min, uint64_t max, char *buf, size_t len)
{
	if (max == UINT64_MAX)
		snprintf(buf, len, "%" PRIu64 " or more", min);
	else
		snprintf(buf, len, "%" PRIu64 " to %" PRIu64, min, max);
	return buf;
}

static int parse_hex(const char *s, uint64_t *v)
{
	*v = 0;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		int c = tolower((unsigned char)*s);
		unsigned d;
		if (isdigit(c))
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			return -EINVAL;
		if (*v >> 60)
			return -ERANGE;
		*v = *v << 4 | d;
	}
	return 0;
}

static int parse_dec(const char *s, uint64_t *v)
{
	*v = 0;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		unsigned d = (unsigned)(*s - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		*v = *v * 10 + d;
	}
	return 0;
}

int bo_parse_num(const char *opt, const char *s, unsigned flags, uint64_t min, uint64_t max,
                 uint64_t *out, struct bo_err *err)
{
	char range[64];
	const char *kind = flags & BO_NUM_SIZE  ? "a size (e.g. 4096, 64k, 32M)"
	                   : flags & BO_NUM_HEX ? "a whole number (decimal or 0x hex)"
	                                        : "a whole number";
	if (!s)
		return bo_errf(err, -EINVAL, "%s needs %s, %s", opt, kind,
		               range_words(min, max, range, sizeof(range)));
	uint64_t v;
	int rc;
	if ((flags & BO_NUM_HEX) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		rc = parse_hex(s + 2, &v);
	} else if (flags & BO_NUM_SIZE) {
		/* the size parser's own words say what is wrong with the units */
		struct bo_err e = {{0}};
		rc = bo_parse_size(s, &v, &e);
		if (rc)
			return bo_errf(err, rc, "%s: %s (%s)", opt, e.msg,
			               range_words(min, max, range, sizeof(range)));
	} else {
		rc = parse_dec(s, &v);
	}
	if (rc == 0 && (v < min || v > max))
		rc = -ERANGE;
	if (rc == -ERANGE)
		return bo_errf(err, -ERANGE, "%s: '%s' is out of range (%s)", opt, s,
		               range_words(min, max, range, sizeof(range)));
	if (rc)
		return bo_errf(err, -EINVAL, "%s: '%s' is not %s (%s)", opt, s, kind,
		               range_words(min, max, range, sizeof(range)));
	*out = v;
	return 0;
}
