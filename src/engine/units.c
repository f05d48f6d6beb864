/*
 * units: conversions from nanoseconds and ticks, overflow-safe.
 */
#include "units.h"

uint64_t units_mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	unsigned __int128 q = (unsigned __int128)a * b / c;

	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

uint64_t units_duration(enum units units, uint64_t ns)
{
	return units == UNITS_UNIX ? ns : ns / 100;
}

uint64_t units_timestamp(enum units units, uint64_t unix_ns)
{
	if (unix_ns == 0 || units == UNITS_UNIX)
		return unix_ns;
	return unix_ns / 100 + UNITS_FILETIME_UNIX_EPOCH;
}

uint64_t units_ns_to_cycles(uint64_t ns, uint64_t hz)
{
	return units_mul_div(ns, hz, NSEC_PER_SEC);
}

uint64_t units_ticks_to_ns(uint64_t ticks, uint64_t tck)
{
	return units_mul_div(ticks, NSEC_PER_SEC, tck);
}
