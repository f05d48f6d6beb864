/*
 * unit-units: every unit conversion, worked out by hand, and overflow.
 */
#include "tap.h"
#include "units.h"

int main(void)
{
	/* 10 years of CPU time: 10 * 365 * 86400 s = 315360000 s. */
	const uint64_t ten_years_ns = 315360000ULL * 1000000000ULL;

	check_u64(units_duration(UNITS_UNIX, 123456789), 123456789,
		  "unix duration is ns");
	check_u64(units_duration(UNITS_WINDOWS, 123456789), 1234567,
		  "windows duration is 100-ns intervals, truncated");
	check_u64(units_duration(UNITS_WINDOWS, 99), 0,
		  "windows duration below 100 ns is 0");
	check_u64(units_timestamp(UNITS_WINDOWS, 1), 116444736000000000ULL,
		  "1 ns after the Unix epoch is the epoch as FILETIME");
	check_u64(units_timestamp(UNITS_WINDOWS, 1700000000ULL * 1000000000),
		  133444736000000000ULL, "2023-11-14 22:13:20 UTC as FILETIME");
	check_u64(units_timestamp(UNITS_UNIX, 1700000000123456789ULL),
		  1700000000123456789ULL, "unix timestamp is ns");
	check_u64(units_timestamp(UNITS_WINDOWS, 0), 0,
		  "no timestamp stays 0 in windows units");
	check_u64(units_timestamp(UNITS_UNIX, 0), 0,
		  "no timestamp stays 0 in unix units");
	/* 315360000 s at 5 GHz = 1576800000000000000 cycles: the
	 * product ns * hz is 1.6e27, far beyond 64 bits. */
	check_u64(units_ns_to_cycles(ten_years_ns, 5000000000ULL),
		  1576800000000000000ULL, "10 years at 5 GHz without overflow");
	check_u64(units_cycles_to_ns(1576800000000000000ULL, 5000000000ULL),
		  ten_years_ns, "and back to ns");
	check_u64(units_ns_to_cycles(1, 2096009998), 2,
		  "1 ns at 2.096 GHz truncates to 2 cycles");
	check_u64(units_ns_to_cycles(UINT64_MAX, 5000000000ULL), UINT64_MAX,
		  "cycles saturate instead of wrapping");
	check_u64(units_mul_div(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX,
		  "mul_div keeps 128 bits in the middle");
	check_u64(units_ticks_to_ns(5020, 100), 50200000000ULL,
		  "5020 ticks at USER_HZ 100 are 50.2 s");
	check_u64(units_ticks_to_ns(3, 1000), 3000000,
		  "3 ticks at 1000 Hz are 3 ms");
	return tap_done();
}
