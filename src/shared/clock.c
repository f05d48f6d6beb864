/*
 * clock: clock_gettime(), each reading turned into the one number its
 * caller counts in. A coarser unit is the nanoseconds divided down:
 * whole milliseconds and seconds, as the timespec would give them.
 */
#include "clock.h"

#define CLOCK_NS_PER_SEC 1000000000ULL
#define CLOCK_NS_PER_MS 1000000ULL

uint64_t clock_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * CLOCK_NS_PER_SEC + (uint64_t)ts->tv_nsec;
}

uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) < 0)
		return 0;
	return clock_timespec_ns(&ts);
}

uint64_t clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

long long clock_mono_ms(void)
{
	return (long long)(clock_ns(CLOCK_MONOTONIC) / CLOCK_NS_PER_MS);
}

long long clock_coarse_ms(void)
{
	return (long long)(clock_ns(CLOCK_MONOTONIC_COARSE) / CLOCK_NS_PER_MS);
}

long long clock_coarse_s(void)
{
	return (long long)(clock_ns(CLOCK_MONOTONIC_COARSE) / CLOCK_NS_PER_SEC);
}
