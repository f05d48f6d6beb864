/*
 * tap.h: a tiny TAP producer for timingfs's C unit tests.
 *
 * Each check prints "ok N - title" or "not ok N - title" with a
 * diagnostic of what was expected and what came; tap_done() prints the
 * plan "1..N" (unless tap_plan() printed it first) and returns the exit
 * status for main(): nonzero when a check failed or the plan was not
 * kept. No third-party library; header-only, one test program per file,
 * run by prove through a t/tNNNN-unit-NAME.t wrapper.
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
static int tap_planned = -1;

/* tap_plan - announce @n checks up front; tap_done() verifies the count. */
static inline void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
}

/* tap_skip_all - skip the whole program: the plan "1..0 # SKIP @why". */
static inline int tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	return 0;
}

/* tap_skip - one check that cannot run here: "ok N - @title # SKIP @why". */
static inline void tap_skip(const char *title, const char *why)
{
	printf("ok %d - %s # SKIP %s\n", ++tap_count, title, why);
}

static inline void tap_result(bool ok, const char *fmt, va_list ap)
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
		printf("# expected %" PRIu64 ", got %" PRIu64 "\n", want, got);
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
		printf("# expected %ld, got %ld\n", want, got);
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
		printf("# expected '%s'\n#      got '%s'\n",
		       want ? want : "(null)", got ? got : "(null)");
	return ok;
}

/* tap_done - print the plan if not yet; the exit status for main(). */
static inline int tap_done(void)
{
	if (tap_planned < 0) {
		printf("1..%d\n", tap_count);
	} else if (tap_count != tap_planned) {
		printf("# planned %d checks, ran %d\n", tap_planned, tap_count);
		return 1;
	}
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif
