/*
 * idle: per-CPU idle time, from /proc/stat or the cpuidle residencies.
 *
 * Windows runs its idle thread during I/O waits, so idle time here is
 * the kernel's idle plus iowait. Where a cpuidle driver exists, the sum
 * of the residencies of a CPU's idle states (µs) is used instead: finer
 * than /proc/stat's clock ticks. The values never go backwards for the
 * same CPU, even where the kernel's do (iowait can decrease).
 */
#ifndef TIMINGFS_IDLE_H
#define TIMINGFS_IDLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idle {
	char *proc_root;
	char *sys_root;
	bool cpuidle; /* residencies, not /proc/stat */
	uint64_t clk_tck;
	pthread_mutex_t lock; /* guards last_ns and the opening of stat_fd */
	bool keep_stat_fd; /* PROC/stat is procfs's: kept open */
	int stat_fd; /* PROC/stat, kept open once read; -1 before */
	size_t stat_hint; /* the buffer PROC/stat needed */
	size_t ncpus;
	uint64_t *last_ns; /* per Linux CPU: the last value given */
	/*
	 * Per Linux CPU, its idle states' time files, kept open where
	 * SYS is sysfs's (as PROC/stat is); NULL until first read.
	 * fds_lock: shared while reading them, exclusive to open or
	 * close a CPU's.
	 */
	bool keep_state_fds;
	struct idle_state_fds **state_fds;
	size_t kept_fds; /* open in all, under fds_lock */
	pthread_rwlock_t fds_lock;
};

/*
 * idle_init - set up for CPUs 0 .. @ncpus-1 with the given roots;
 * chooses the cpuidle source when SYS/devices/system/cpu/cpu@probe_cpu
 * has cpuidle states. 0 or -ENOMEM.
 */
int idle_init(struct idle *idle, const char *proc_root, const char *sys_root,
	      size_t ncpus, int probe_cpu, uint64_t clk_tck);

/* idle_destroy - release what idle_init() made. */
void idle_destroy(struct idle *idle);

/* idle_source - "cpuidle" or "proc_stat". */
const char *idle_source(const struct idle *idle);

/*
 * idle_read - idle time in ns of each of the @n Linux CPUs @cpus, into
 * @ns, from one read of the source. @found[i] tells whether CPU
 * @cpus[i] was there (/proc/stat lists online CPUs only). 0, -EIO for a
 * malformed or unreadable source, -ENOMEM. Thread safe.
 */
int idle_read(struct idle *idle, const int *cpus, size_t n, uint64_t *ns,
	      bool *found);

/*
 * idle_parse_stat - the idle time in ns (idle plus iowait, at @clk_tck
 * ticks a second, which must not be 0) of each of the @n Linux CPUs
 * @cpus from the text of /proc/stat, into @ns, setting @found[i] for
 * each CPU @cpus[i] that has a line; the others are left as they are.
 * 0, or -EIO for a malformed "cpuN" line.
 */
int idle_parse_stat(const char *text, const int *cpus, size_t n,
		    uint64_t clk_tck, uint64_t *ns, bool *found);

#endif
