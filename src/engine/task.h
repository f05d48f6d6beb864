/*
 * task: parsing a task's stat, status and schedstat files, and keeping
 * its counters from going backwards.
 *
 * The parsers take the text of one file and return -EIO when it is not
 * what the kernel writes (a truncated line, a missing field); they
 * survive a command name holding spaces, parentheses and ") (".
 */
#ifndef TIMINGFS_TASK_H
#define TIMINGFS_TASK_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of /proc/.../stat that the engine uses. */
struct task_stat {
	uint64_t utime_ticks; /* field 14 */
	uint64_t stime_ticks; /* field 15 */
	uint64_t start_ticks; /* field 22, since boot */
	int cpu; /* field 39 */
};

/* task_parse_stat - parse a stat line. 0 or -EIO. */
int task_parse_stat(const char *text, struct task_stat *st);

/*
 * task_parse_status - the Tgid and the effective Uid and Gid of a
 * status file. 0 or -EIO.
 */
int task_parse_status(const char *text, pid_t *tgid, uid_t *uid, gid_t *gid);

/* What procfs's access check compares of a task (ptrace_may_access). */
struct task_creds {
	uid_t uid[3]; /* real, effective, saved: the Uid: line's first three */
	gid_t gid[3]; /* the same of the Gid: line */
	uint64_t cap_prm; /* the CapPrm: line, a bit per capability */
};

/*
 * task_parse_creds - the real, effective and saved uids and gids and
 * the permitted capabilities of a status file (every one, UINT64_MAX,
 * when it has no CapPrm: line). 0 or -EIO.
 */
int task_parse_creds(const char *text, struct task_creds *c);

/* task_parse_schedstat - the first field, runtime in ns. 0 or -EIO. */
int task_parse_schedstat(const char *text, uint64_t *runtime_ns);

/*
 * task_split - split @cpu_ns into *@kernel_ns and *@user_ns in the
 * proportion stime:utime; all user time when both are 0. The kernel
 * share is rounded down, so the two add up to @cpu_ns exactly.
 */
void task_split(uint64_t cpu_ns, uint64_t utime, uint64_t stime,
		uint64_t *kernel_ns, uint64_t *user_ns);

/*
 * The last values shown for recently read tasks, so that the kernel and
 * user shares of a task never go backwards when its utime:stime
 * proportion moves. A fixed number of slots, direct-mapped by task: the
 * memory does not grow with the tasks served; a task whose slot was
 * taken by another since is simply not clamped.
 */
#define TASK_HISTORY_SLOTS 4096

struct task_history_slot {
	uint64_t key; /* task id, view and start time; 0 when empty */
	uint64_t kernel_ns;
	uint64_t user_ns;
};

struct task_history {
	pthread_mutex_t lock;
	struct task_history_slot slot[TASK_HISTORY_SLOTS];
};

/* task_history_init / task_history_destroy - set up and tear down. */
void task_history_init(struct task_history *h);
void task_history_destroy(struct task_history *h);

/*
 * task_history_clamp - make *@kernel_ns and *@user_ns no less than the
 * last values recorded for the same task (@pid, @tid with 0 for the
 * whole process, started at @start_ticks), keeping their sum no less
 * than before, and record the result. Thread safe.
 */
void task_history_clamp(struct task_history *h, pid_t pid, pid_t tid,
			uint64_t start_ticks, uint64_t *kernel_ns,
			uint64_t *user_ns);

#endif
