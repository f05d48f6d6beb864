/*
 * tsc: the frequency of the processor's timestamp counter, the clock
 * Windows counts cycle time in.
 *
 * Cycles are CPU time multiplied by this frequency; the counter itself
 * is read only to calibrate it.
 */
#ifndef TIMINGFS_TSC_H
#define TIMINGFS_TSC_H

#include <stdint.h>

/* The least time tsc_calibrate() measures over. */
#define TSC_CALIBRATION_NS 200000000ULL

/*
 * tsc_detect - find the counter's frequency in Hz: @override when
 * nonzero (source "config"); on x86, CPUID leaf 0x15 where the
 * processor fills it in ("cpuid"), else a calibration against
 * CLOCK_MONOTONIC_RAW of at least 200 ms ("calibrated"); on aarch64
 * CNTFRQ_EL0 ("cntfrq"). Sets *@hz and *@source (a static string).
 * Returns 0, or -ENOTSUP where no counter is known (set tsc_hz then).
 * Call it once, at start-up: it may sleep.
 */
int tsc_detect(uint64_t override, uint64_t *hz, const char **source);

#endif
