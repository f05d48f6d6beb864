/*
 * cpuset: sets of Linux CPU numbers, parsed from the kernel's cpulist
 * form ("0-3,8,10-11") as sysfs writes it.
 */
#ifndef TIMINGFS_CPUSET_H
#define TIMINGFS_CPUSET_H

#include <stdbool.h>
#include <stddef.h>

/* The largest CPU number accepted, well above the kernel's NR_CPUS. */
#define CPUSET_MAX_CPU 65535

struct cpuset {
	unsigned char *bits; /* one byte per CPU: simple, and small enough */
	size_t size; /* CPUs 0 .. size-1 are representable */
};

/*
 * cpuset_parse - parse a cpulist (an empty string or lone newline is
 * the empty set) into @set, which the caller releases with
 * cpuset_free(). Returns 0, -EIO for a malformed list, -ENOMEM.
 */
int cpuset_parse(const char *list, struct cpuset *set);

/* cpuset_read - read and parse the cpulist file at @path. */
int cpuset_read(const char *path, struct cpuset *set);

/* cpuset_has - whether @cpu is in @set. */
bool cpuset_has(const struct cpuset *set, int cpu);

/* cpuset_free - release @set's memory and leave it empty. */
void cpuset_free(struct cpuset *set);

#endif
