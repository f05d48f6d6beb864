/*
 * jobs: the CPU accounting of cgroups, as Windows accounts jobs
 * (QueryInformationJobObject, JobObjectBasicAccountingInformation).
 *
 * The source is one hierarchy, found at jobs_open() in the daemon's
 * mountinfo (the proc root's self/mountinfo) among the mounts under the
 * sys root: a v1 hierarchy with the cpuacct controller (cpuacct.usage,
 * cpuacct.usage_user, cpuacct.usage_sys, ns) where one is mounted, else
 * cgroup2 (cpu.stat's usage_usec, user_usec, system_usec), else none.
 *
 * A cgroup is named by its id, the st_ino of its directory (kernfs: an
 * id is never given to another cgroup), and opened by that id with
 * open_by_handle_at(2) on the hierarchy's root (CAP_DAC_READ_SEARCH),
 * never by a path that a delegated cgroup's owner could make name
 * another: a cgroup removed and made again under its name is a new id,
 * and the old one is -ENOENT. Every call is asked relative to a root
 * cgroup (a view's), and a cgroup that is not at or below that root is
 * -ENOENT, so nothing above a view's root is ever shown to it. Ids
 * above JOBS_ID_MAX are -ENOENT (a node holds 44 bits of one).
 *
 * Values never go backwards for one cgroup: what was last shown is
 * kept in a small table (JOBS_SEEN entries; a cgroup pushed out of it
 * starts afresh), in memory shared with the processes forked after
 * jobs_open() (a server that takes over from a dead one; not a new
 * program, as an upgrade is). A source that does not parse is -EIO.
 * Thread safe.
 */
#ifndef TIMINGFS_JOBS_H
#define TIMINGFS_JOBS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum jobs_source { JOBS_NONE, JOBS_V1, JOBS_V2 };

#define JOBS_ID_MAX ((1ULL << 44) - 1)

/* One snapshot of a cgroup's accounting. */
struct job_times {
	uint64_t cycles; /* the usage as ticks of tsc_hz */
	uint64_t kernel_ns, user_ns; /* kernel + user == the usage */
	uint64_t processes; /* in it and below, now */
};

struct jobs;

/*
 * jobs_open - find the hierarchy that accounts the CPU, as above, for
 * an engine whose counter ticks at @tsc_hz. Never fails for want of
 * one (then jobs_source() is JOBS_NONE); -ENOMEM.
 */
int jobs_open(const char *proc_root, const char *sys_root, uint64_t tsc_hz,
	      struct jobs **out);
void jobs_close(struct jobs *j);

/* jobs_source - which source; jobs_source_name - "v1", "v2", "none". */
enum jobs_source jobs_source(const struct jobs *j);
const char *jobs_source_name(const struct jobs *j);

/*
 * jobs_view_root - the id of the cgroup of process @pid (the daemon's
 * number; 0: the hierarchy's root) in the hierarchy. -ENOENT when the
 * process is gone or none.
 */
int jobs_view_root(struct jobs *j, pid_t pid, uint64_t *id);

/* jobs_check - whether cgroup @id exists and is at or below @root. */
int jobs_check(struct jobs *j, uint64_t root, uint64_t id);

/*
 * jobs_child - the id of the cgroup @name in cgroup @dir (which must
 * be at or below @root), opened by name below @dir's descriptor with
 * no link followed. -ENOENT for no such cgroup, "." and "..".
 */
int jobs_child(struct jobs *j, uint64_t root, uint64_t dir, const char *name,
	       uint64_t *id);

/* jobs_list - @fn for each cgroup in cgroup @dir (at or below @root):
 * its name and id. Stops at @fn's first nonzero answer, its result. */
typedef int (*jobs_list_fn)(void *arg, const char *name, uint64_t id);
int jobs_list(struct jobs *j, uint64_t root, uint64_t dir, jobs_list_fn fn,
	      void *arg);

/* jobs_times - the accounting of cgroup @id (at or below @root) now. */
int jobs_times(struct jobs *j, uint64_t root, uint64_t id, struct job_times *t);

/*
 * jobs_path_below - where process @pid's cgroup lies below the cgroup
 * of process @first (0: the hierarchy's root), both the daemon's
 * numbers: its path relative to it into @buf ("" when it is that very
 * cgroup). -ENOENT when it is not at or below it, or either is gone;
 * -ENAMETOOLONG when it does not fit.
 */
int jobs_path_below(struct jobs *j, pid_t first, pid_t pid, char *buf,
		    size_t size);

#endif
