/*
 * unit-units: every unit conversion against values worked out by hand,
 * and the arithmetic at the edges of 64 bits.
 */
#include "tap.h"
#include "units.h"

/* 10 years of CPU time: 10 * 365 * 86400 s = 315360000 s. */
#define TEN_YEARS_NS (315360000ULL * 1000000000ULL)

static void test_durations(void)
{
	check_u64(units_duration(UNITS_UNIX, 123456789), 123456789,
		  "unix duration is ns");
	check_u64(units_duration(UNITS_WINDOWS, 123456789), 1234567,
		  "windows duration is 100-ns intervals, truncated");
	check_u64(units_duration(UNITS_WINDOWS, 99), 0,
		  "windows duration below 100 ns is 0");
	check_u64(units_duration(UNITS_WINDOWS, 199), 1,
		  "windows duration of 199 ns is 1 interval");
	/* 315360000 s = 3153600000000000 intervals of 100 ns. */
	check_u64(units_duration(UNITS_WINDOWS, TEN_YEARS_NS),
		  3153600000000000ULL, "10 years in 100-ns intervals");
	check_u64(units_duration(UNITS_UNIX, UINT64_MAX), UINT64_MAX,
		  "unix duration of 2^64-1 ns is itself");
	/* 18446744073709551615 / 100 = 184467440737095516. */
	check_u64(units_duration(UNITS_WINDOWS, UINT64_MAX),
		  184467440737095516ULL, "windows duration of 2^64-1 ns");
}

/*
 * The FILETIME of the Unix epoch, from the calendar: the days of the
 * Gregorian years 1601 to 1969 in 100 ns intervals, so that the
 * constant is checked against something other than itself.
 */
static uint64_t epoch_from_calendar(void)
{
	uint64_t days = 0;
	int y;

	for (y = 1601; y < 1970; y++)
		days += (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 366 :
									 365;
	return days * 86400 * 10000000;
}

static void test_timestamps(void)
{
	check_u64(UNITS_FILETIME_UNIX_EPOCH, epoch_from_calendar(),
		  "the Unix epoch as FILETIME: 1601..1969 in 100 ns");
	check_u64(units_timestamp(UNITS_WINDOWS, 1), 116444736000000000ULL,
		  "1 ns after the Unix epoch is the epoch as FILETIME");
	check_u64(units_timestamp(UNITS_WINDOWS, 100), 116444736000000001ULL,
		  "100 ns after the Unix epoch is one interval later");
	/* 1700000000 s = 17000000000000000 intervals; + the epoch. */
	check_u64(units_timestamp(UNITS_WINDOWS, 1700000000ULL * 1000000000),
		  133444736000000000ULL, "2023-11-14 22:13:20 UTC as FILETIME");
	/* 1700000000123456789 ns / 100 = 17000000001234567. */
	check_u64(units_timestamp(UNITS_WINDOWS, 1700000000123456789ULL),
		  133444736001234567ULL, "sub-second FILETIME truncated");
	check_u64(units_timestamp(UNITS_UNIX, 1700000000123456789ULL),
		  1700000000123456789ULL, "unix timestamp is ns");
	check_u64(units_timestamp(UNITS_WINDOWS, 0), 0,
		  "no timestamp stays 0 in windows units");
	check_u64(units_timestamp(UNITS_UNIX, 0), 0,
		  "no timestamp stays 0 in unix units");
}

static void test_mul_div(void)
{
	check_u64(units_mul_div(10, 3, 4), 7, "mul_div 30 / 4 truncates");
	check_u64(units_mul_div(0, UINT64_MAX, 1), 0, "mul_div of 0");
	/* 2^63 * 2 = 2^64 overflows 64 bits in the middle only. */
	check_u64(units_mul_div(1ULL << 63, 2, 2), 1ULL << 63,
		  "mul_div 2^63 * 2 / 2 keeps the carry");
	check_u64(units_mul_div(UINT64_MAX, 3, 3), UINT64_MAX,
		  "mul_div (2^64-1) * 3 / 3 is exact");
	check_u64(units_mul_div(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX,
		  "mul_div keeps 128 bits in the middle");
	check_u64(units_mul_div(1ULL << 63, 4, 2), UINT64_MAX,
		  "mul_div 2^64 saturates");
	check_u64(units_mul_div(UINT64_MAX, UINT64_MAX, 1), UINT64_MAX,
		  "mul_div of the largest product saturates");
	check_u64(units_mul_div(UINT64_MAX, UINT64_MAX - 1, UINT64_MAX),
		  UINT64_MAX - 1, "mul_div a * b / a is b below the top");
	/* (2^64-1) * 10 / 3 = 61489146912365172050 > 2^64. */
	check_u64(units_mul_div(UINT64_MAX, 10, 3), UINT64_MAX,
		  "mul_div saturates only when the quotient is too big");
	/* (2^64-1) * 10 = 184467440737095516150; / 11 =
	 * 16769767339735956013.6, truncated. */
	check_u64(units_mul_div(UINT64_MAX, 10, 11), 16769767339735956013ULL,
		  "mul_div a quotient near the top");
}

static void test_cycles(void)
{
	check_u64(units_ns_to_cycles(1000000000, 3000000000ULL), 3000000000ULL,
		  "1 s at 3 GHz is 3e9 cycles");
	check_u64(units_ns_to_cycles(1500000123, 3000000000ULL), 4500000369ULL,
		  "1500000123 ns at 3 GHz");
	check_u64(units_ns_to_cycles(1, 2096009998), 2,
		  "1 ns at 2.096 GHz truncates to 2 cycles");
	/* 315360000 s at 5 GHz = 1576800000000000000 cycles: the product
	 * ns * hz is 1.6e27, far beyond 64 bits. */
	check_u64(units_ns_to_cycles(TEN_YEARS_NS, 5000000000ULL),
		  1576800000000000000ULL, "10 years at 5 GHz without overflow");
	/* 100 years: 3153600000 s * 5e9 = 15768000000000000000, just
	 * below 2^64 = 18446744073709551616. */
	check_u64(units_ns_to_cycles(10 * TEN_YEARS_NS, 5000000000ULL),
		  15768000000000000000ULL, "100 years at 5 GHz still fits");
	/* 200 years: 3.1536e19 cycles > 2^64. */
	check_u64(units_ns_to_cycles(20 * TEN_YEARS_NS, 5000000000ULL),
		  UINT64_MAX, "200 years at 5 GHz saturates");
	check_u64(units_ns_to_cycles(UINT64_MAX, 5000000000ULL), UINT64_MAX,
		  "cycles saturate instead of wrapping");
}

static void test_ticks(void)
{
	check_u64(units_ticks_to_ns(5020, 100), 50200000000ULL,
		  "5020 ticks at USER_HZ 100 are 50.2 s");
	check_u64(units_ticks_to_ns(1, 100), 10000000, "1 tick at 100 Hz");
	check_u64(units_ticks_to_ns(3, 1000), 3000000,
		  "3 ticks at 1000 Hz are 3 ms");
	check_u64(units_ticks_to_ns(1, 3), 333333333,
		  "1 tick at 3 Hz is 1/3 s, truncated");
	check_u64(units_ticks_to_ns(UINT64_MAX, 100), UINT64_MAX,
		  "ticks to ns saturate");
}

int main(void)
{
	test_durations();
	test_timestamps();
	test_mul_div();
	test_cycles();
	test_ticks();
	return tap_done();
}
