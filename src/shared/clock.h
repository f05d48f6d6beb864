/*
 * clock: a clock's reading as one number, in the unit its name says.
 *
 * Every layer times something: deadlines and pauses in milliseconds,
 * idle ages in seconds, exited tasks' ages and the kernel's clocks
 * compared in nanoseconds. Each reads the clock here, so that a reading
 * is spelled, and converted, once. CLOCK_MONOTONIC for deadlines and
 * ages that must be exact; CLOCK_MONOTONIC_COARSE (the last tick's
 * reading, a few milliseconds behind, at a fraction of the cost) where
 * a reader's hot path only needs to know that time has passed. All of
 * them are thread safe and never fail on Linux (the clocks named here
 * always exist).
 */
#ifndef TIMINGFS_CLOCK_H
#define TIMINGFS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* clock_timespec_ns - @ts (of any clock, not negative) in nanoseconds. */
uint64_t clock_timespec_ns(const struct timespec *ts);

/*
 * clock_ns - @clock's reading in nanoseconds, from its own epoch (the
 * Unix epoch for CLOCK_REALTIME, the boot for CLOCK_BOOTTIME). A clock
 * that cannot be read (a CPU-time clock of a task gone) reads 0: read
 * those with clock_gettime() and its errors.
 */
uint64_t clock_ns(clockid_t clock);

/* clock_mono_ns - CLOCK_MONOTONIC in nanoseconds. */
uint64_t clock_mono_ns(void);

/* clock_mono_ms - CLOCK_MONOTONIC in whole milliseconds. */
long long clock_mono_ms(void);

/* clock_coarse_ms - CLOCK_MONOTONIC_COARSE in whole milliseconds. */
long long clock_coarse_ms(void);

/* clock_coarse_s - CLOCK_MONOTONIC_COARSE in whole seconds. */
long long clock_coarse_s(void);

#endif
