/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tap.h — the Test Anything Protocol for C tests, run under `prove`.
 *
 * Each test binary calls ok()/is()/... and ends with `return tap_done();`, which
 * prints the plan and exits non-zero if anything failed or nothing was tested (a
 * suite that runs zero tests is a failure). Header-only so every test links it
 * without ceremony. */
#ifndef BLACKOUT_TAP_H
#define BLACKOUT_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_run_ = 0, tap_failed_ = 0;

static inline int tap_ok_(int cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline int tap_ok_(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	tap_run_++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_run_);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed_++;
		printf("#   Failed at %s line %d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Integer equality with both values shown on failure. */
#define is_int(got, want, ...)                                                              \
	do {                                                                                \
		long long g_ = (long long)(got), w_ = (long long)(want);                    \
		if (!tap_ok_(g_ == w_, __FILE__, __LINE__, __VA_ARGS__))                    \
			printf("#          got: %lld\n#     expected: %lld\n", g_, w_);          \
	} while (0)

#define is_str(got, want, ...)                                                              \
	do {                                                                                \
		const char *g_ = (got), *w_ = (want);                                       \
		int same_ = g_ && w_ && strcmp(g_, w_) == 0;                                \
		if (!tap_ok_(same_, __FILE__, __LINE__, __VA_ARGS__))                       \
			printf("#          got: '%s'\n#     expected: '%s'\n", g_ ? g_ : "(null)", \
			       w_ ? w_ : "(null)");                                         \
	} while (0)

/* Stops the whole binary: for set-up that later tests cannot do without. */
#define tap_require(cond, ...)                                                              \
	do {                                                                                \
		if (!ok(cond, __VA_ARGS__)) {                                               \
			printf("Bail out! set-up failed\n");                                \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int tap_done(void)
{
	if (tap_run_ == 0) {
		printf("not ok 1 - the suite ran no test\n1..1\n");
		return 1;
	}
	printf("1..%d\n", tap_run_);
	return tap_failed_ ? 1 : 0;
}

#endif
