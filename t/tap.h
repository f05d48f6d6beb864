/*
 * tap.h: a tiny TAP producer for timingfs's C unit tests.
 *
 * Each check prints "ok N - title" or "not ok N - title" with a
 * diagnostic of what was expected and what came; tap_done() prints the
 * plan "1..N" and returns the exit status for main(). No third-party
 * library; header-only, one test program per file.
 */
#ifndef TIMINGFS_TAP_H
#define TIMINGFS_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_count;
static int tap_failed;

static void tap_result(bool ok, const char *fmt, va_list ap)
{
	tap_count++;
	if (!ok)
		tap_failed++;
	printf("%sok %d - ", ok ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	putchar('\n');
}

/* check - one assertion: @ok, titled by @fmt. Returns @ok. */
static inline bool check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_result(ok, fmt, ap);
	va_end(ap);
	return ok;
}

/* check_u64 - @got == @want, with both in the diagnostic. */
static inline bool check_u64(uint64_t got, uint64_t want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline bool check_u64(uint64_t got, uint64_t want, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_result(got == want, fmt, ap);
	va_end(ap);
	if (got != want)
		printf("#   expected %" PRIu64 "\n#        got %" PRIu64 "\n",
		       want, got);
	return got == want;
}

/* check_int - @got == @want for ints (return codes, CPU numbers). */
static inline bool check_int(long got, long want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline bool check_int(long got, long want, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_result(got == want, fmt, ap);
	va_end(ap);
	if (got != want)
		printf("#   expected %ld\n#        got %ld\n", want, got);
	return got == want;
}

/* check_str - @got equals @want (NULL only equals NULL). */
static inline bool check_str(const char *got, const char *want, const char *fmt,
			     ...) __attribute__((format(printf, 3, 4)));
static inline bool check_str(const char *got, const char *want, const char *fmt,
			     ...)
{
	bool ok = got && want ? strcmp(got, want) == 0 : got == want;
	va_list ap;

	va_start(ap, fmt);
	tap_result(ok, fmt, ap);
	va_end(ap);
	if (!ok)
		printf("#   expected '%s'\n#        got '%s'\n",
		       want ? want : "(null)", got ? got : "(null)");
	return ok;
}

/* tap_done - print the plan; the exit status for main(). */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
