// SPDX-License-Identifier: GPL-2.0-or-later
/* test_util_num.c — bo_parse_num, the command line's one number parser: what it
 * accepts, the range check, and messages that name the option and the range; and
 * bo_popcount64 against counting bit by bit. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "blackout/util.h"
#include "tap.h"

static void accepts(const char *s, unsigned flags, uint64_t min, uint64_t max, uint64_t want)
{
	uint64_t v = 12345;
	struct bo_err err = {{0}};
	int rc = bo_parse_num("--opt", s, flags, min, max, &v, &err);
	ok(rc == 0 && v == want, "'%s' (flags %u) is %llu %s", s, flags, (unsigned long long)want,
	   err.msg);
}

/* rc and a message holding every fragment in want[] (NULL-terminated); *out untouched */
static void refuses(const char *s, unsigned flags, uint64_t min, uint64_t max, int want_rc,
                    const char *const *want)
{
	uint64_t v = 777;
	struct bo_err err = {{0}};
	int rc = bo_parse_num("--opt", s, flags, min, max, &v, &err);
	bool all = true;
	for (size_t i = 0; want[i]; i++)
		all = all && strstr(err.msg, want[i]) != NULL;
	ok(rc == want_rc && all && v == 777, "'%s' refused with %d: %s", s ? s : "(none)", want_rc,
	   err.msg);
}

#define W(...) ((const char *const[]){__VA_ARGS__, NULL})

static void popcount(void)
{
	ok(bo_popcount64(0) == 0 && bo_popcount64(~0ull) == 64 &&
	       bo_popcount64(0x8000000000000001ull) == 2 && bo_popcount64(0xffffffffu) == 32,
	   "popcount: none, all 64, the two ends, a low 32");
	struct bo_rng r;
	bo_rng_seed(&r, 5);
	int bad = 0;
	for (int i = 0; i < 10000; i++) {
		uint64_t v = bo_rng_next(&r) & bo_rng_next(&r), w = v;
		unsigned n = 0;
		for (; w; w >>= 1)
			n += (unsigned)(w & 1);
		bad += bo_popcount64(v) != n;
	}
	is_int(bad, 0, "popcount: 10,000 random words counted bit by bit");
}

int main(void)
{
	popcount();
	accepts("0", 0, 0, UINT64_MAX, 0);
	accepts("42", 0, 0, UINT64_MAX, 42);
	accepts("007", 0, 0, UINT64_MAX, 7); /* decimal, not octal */
	accepts("18446744073709551615", 0, 0, UINT64_MAX, UINT64_MAX);
	accepts("64", 0, 1, 64, 64);
	accepts("1", 0, 1, 64, 1);
	accepts("0x1f", BO_NUM_HEX, 0, UINT64_MAX, 31);
	accepts("0XFFFFFFFFFFFFFFFF", BO_NUM_HEX, 0, UINT64_MAX, UINT64_MAX);
	accepts("10", BO_NUM_HEX, 0, UINT64_MAX, 10);
	accepts("64k", BO_NUM_SIZE, 0, UINT64_MAX, 65536);
	accepts("4096", BO_NUM_SIZE, 0, UINT64_MAX, 4096);
	accepts("2MiB", BO_NUM_SIZE, 0, UINT64_MAX, 2u << 20);

	refuses("", 0, 0, 10, -EINVAL, W("--opt", "not a whole number", "0 to 10"));
	refuses(NULL, 0, 1, UINT64_MAX, -EINVAL, W("--opt needs a whole number", "1 or more"));
	refuses("-1", 0, 0, 10, -EINVAL, W("'-1'", "not a whole number"));
	refuses("+1", 0, 0, 10, -EINVAL, W("'+1'"));
	refuses(" 1", 0, 0, 10, -EINVAL, W("' 1'"));
	refuses("1 ", 0, 0, 10, -EINVAL, W("'1 '"));
	refuses("12abc", 0, 0, 100, -EINVAL, W("'12abc'", "0 to 100"));
	refuses("0x10", 0, 0, 100, -EINVAL, W("'0x10'", "not a whole number"));
	refuses("64k", 0, 0, UINT64_MAX, -EINVAL, W("'64k'"));
	refuses("65", 0, 1, 64, -ERANGE, W("--opt", "'65' is out of range", "1 to 64"));
	refuses("0", 0, 1, 64, -ERANGE, W("'0' is out of range", "1 to 64"));
	refuses("18446744073709551616", 0, 0, UINT64_MAX, -ERANGE, W("out of range"));
	refuses("99999999999999999999999", 0, 0, UINT64_MAX, -ERANGE, W("out of range"));
	refuses("0x", BO_NUM_HEX, 0, UINT64_MAX, -EINVAL, W("'0x'", "0x hex"));
	refuses("0x1g", BO_NUM_HEX, 0, UINT64_MAX, -EINVAL, W("'0x1g'"));
	refuses("0x10000000000000000", BO_NUM_HEX, 0, UINT64_MAX, -ERANGE, W("out of range"));
	refuses("0x20", BO_NUM_HEX, 0, 31, -ERANGE, W("'0x20' is out of range", "0 to 31"));
	refuses("3q", BO_NUM_SIZE, 0, UINT64_MAX, -EINVAL, W("--opt", "'3q'", "units"));
	refuses("2M", BO_NUM_SIZE, 0, 1 << 20, -ERANGE, W("'2M' is out of range", "0 to 1048576"));
	refuses("k", BO_NUM_SIZE, 0, 10, -EINVAL, W("--opt", "'k'"));
	return tap_done();
}
