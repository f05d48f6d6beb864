/*
 * units: conversions from the engine's nanoseconds to what a file shows.
 *
 * The engine keeps every time in nanoseconds (durations) or nanoseconds
 * since the Unix epoch (timestamps). Windows shows durations in 100-ns
 * intervals and timestamps as FILETIME, 100-ns intervals since
 * 1601-01-01 00:00 UTC. Pure functions, thread safe.
 */
#ifndef TIMINGFS_UNITS_H
#define TIMINGFS_UNITS_H

#include <stdint.h>

#include "policy.h"

/* 1970-01-01 00:00 UTC as a FILETIME. */
#define UNITS_FILETIME_UNIX_EPOCH 116444736000000000ULL
#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL

/*
 * units_duration - a duration of @ns nanoseconds in @units: @ns itself
 * for unix, @ns / 100 (truncated) for windows.
 */
uint64_t units_duration(enum units units, uint64_t ns);

/*
 * units_timestamp - an instant @unix_ns nanoseconds after the Unix epoch
 * in @units: @unix_ns for unix, a FILETIME for windows. An instant of 0
 * means "none" (a live task's exit time) and stays 0 in both.
 */
uint64_t units_timestamp(enum units units, uint64_t unix_ns);

/*
 * units_mul_div - @a * @b / @c, truncated, with a 128-bit intermediate.
 * Saturates at UINT64_MAX when the quotient does not fit; @c must not
 * be 0.
 */
uint64_t units_mul_div(uint64_t a, uint64_t b, uint64_t c);

/* units_ns_to_cycles - @ns of CPU time as ticks of a @hz counter. */
uint64_t units_ns_to_cycles(uint64_t ns, uint64_t hz);

/* units_ticks_to_ns - @ticks of a @tck Hz clock (USER_HZ) as ns. */
uint64_t units_ticks_to_ns(uint64_t ticks, uint64_t tck);

#endif
