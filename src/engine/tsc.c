/*
 * tsc: finding the timestamp counter's frequency.
 */
#include <errno.h>
#include <time.h>

#include "clock.h"
#include "tsc.h"
#include "units.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>

/* CPUID leaf 0x15: TSC = crystal (ECX, Hz) * EBX / EAX, when all are set. */
static uint64_t tsc_from_cpuid(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (__get_cpuid_max(0, NULL) < 0x15)
		return 0;
	__cpuid_count(0x15, 0, eax, ebx, ecx, edx);
	(void)edx;
	if (!eax || !ebx || !ecx)
		return 0;
	return (uint64_t)ecx * ebx / eax;
}

/*
 * One (ns, tsc) pair: the TSC read between two clock reads, taking the
 * tightest of a few tries so that a preemption does not skew it.
 */
static void sample_pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX, t0, t1, c;
	int i;

	for (i = 0; i < 16; i++) {
		t0 = clock_ns(CLOCK_MONOTONIC_RAW);
		c = __rdtsc();
		t1 = clock_ns(CLOCK_MONOTONIC_RAW);
		if (i == 0 || t1 - t0 < best) {
			best = t1 - t0;
			*ns = t0 + (t1 - t0) / 2;
			*tsc = c;
		}
	}
}

static uint64_t tsc_calibrate(void)
{
	uint64_t ns0, tsc0, ns1, tsc1;
	struct timespec nap = { 0, 10000000 };

	sample_pair(&ns0, &tsc0);
	do {
		nanosleep(&nap, NULL);
		sample_pair(&ns1, &tsc1);
	} while (ns1 - ns0 < TSC_CALIBRATION_NS);
	return units_mul_div(tsc1 - tsc0, NSEC_PER_SEC, ns1 - ns0);
}

static int tsc_detect_arch(uint64_t *hz, const char **source)
{
	*hz = tsc_from_cpuid();
	if (*hz) {
		*source = "cpuid";
		return 0;
	}
	*hz = tsc_calibrate();
	*source = "calibrated";
	return *hz ? 0 : -ENOTSUP;
}

#elif defined(__aarch64__)

static int tsc_detect_arch(uint64_t *hz, const char **source)
{
	uint64_t freq;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(freq));
	*hz = freq;
	*source = "cntfrq";
	return freq ? 0 : -ENOTSUP;
}

#else

static int tsc_detect_arch(uint64_t *hz, const char **source)
{
	(void)hz;
	(void)source;
	return -ENOTSUP;
}

#endif

int tsc_detect(uint64_t override, uint64_t *hz, const char **source)
{
	if (override) {
		*hz = override;
		*source = "config";
		return 0;
	}
	return tsc_detect_arch(hz, source);
}
