/*
 * engine: the core timing engine of timingfs.
 *
 * The engine computes every value timingfs shows, from the procfs and
 * sysfs roots of its configuration and the CPU's timestamp counter: the
 * TSC frequency, per-task CPU times split into kernel and user time,
 * cycles, creation times, per-CPU idle cycles and the processor groups.
 * It knows nothing of FUSE; the filesystem layer maps paths to these
 * calls and renders the results.
 *
 * All values are kept in nanoseconds (durations), nanoseconds since the
 * Unix epoch (timestamps) or TSC ticks (cycles); conversion to the
 * units of the configuration is done by units.h when rendering.
 *
 * Every function returns 0 (or a count) on success and -errno on
 * failure: a task or CPU that does not exist is -ENOENT, a kernel source
 * that cannot be read or parsed is -EIO. Nothing is ever invented.
 *
 * Thread safety: every call may be made from any thread. An engine's
 * settings are fixed at engine_new(), but for the units
 * (engine_set_units()); what changes as it serves is locked inside, and
 * bounded: the state that keeps counters from going backwards (the idle
 * counters, a few per CPU; the last kernel/user split shown of each
 * task, task.h's history: an entry per task a reader can name, alive in
 * the proc root or kept by the exited table as engine_set_retained()
 * says, swept of tasks gone as it grows), the task files it keeps open
 * (TASK_FDS, given back when the daemon runs out of descriptors) and
 * what it learned of tasks' starts (START_MEMO_SLOTS).
 */
#ifndef TIMINGFS_ENGINE_H
#define TIMINGFS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy.h"
#include "exited.h"
#include "ident.h"
#include "jobs.h"
#include "task.h"

struct engine;

/* The times of a thread or a whole process, as GetThreadTimes and
 * GetProcessTimes give them, plus its cycles. One consistent snapshot:
 * kernel_ns + user_ns == cpu_ns and cycles is cpu_ns in TSC ticks. */
struct task_times {
	uint64_t cpu_ns; /* CPU time, user and kernel mode */
	uint64_t kernel_ns; /* cpu_ns in the kernel's stime share */
	uint64_t user_ns; /* the rest of cpu_ns */
	uint64_t cycles; /* cpu_ns * tsc_hz / 10^9 */
	/*
	 * Its start in clock ticks, as ns since the Unix epoch: which task
	 * it is. Always with TASK_START; without it, when known at no cost
	 * (below), else 0.
	 */
	uint64_t start_tick_ns;
	/*
	 * Its creation time as the mount shows it, with TASK_BORN:
	 * to the nanosecond where the task source has it (engine_opts's
	 * tasks, below), else start_tick_ns; the same at every read of the
	 * same task. start_tick_ns, tick-grained, is which task it is.
	 */
	uint64_t created_ns;
	uint64_t exit_ns; /* 0 while the task runs */
	/* Its name, the kernel's comm (for a process, its main thread's):
	 * with TASK_NAME, at most TASK_COMM_BYTES - 1 bytes and a NUL. */
	char comm[TASK_COMM_BYTES];
};

/* Who a task is, from its status file alone. */
struct task_ident {
	pid_t tgid; /* its thread group (process) */
	uid_t uid; /* effective uid, as procfs shows the owner */
	gid_t gid; /* effective gid */
	struct task_creds creds; /* what procfs's access check compares */
	/* Its creation time when known at no cost (below), else 0. */
	uint64_t start_tick_ns;
};

/* What the engine found at start-up, for the info file. */
struct engine_info {
	uint64_t tsc_hz;
	const char *tsc_source; /* "config", "cpuid", "calibrated", "cntfrq" */
	long clk_tck; /* USER_HZ of the stat files */
	const char *idle_source; /* "proc_stat" or "cpuidle" */
	const char *task_source; /* "bpf" or "procfs" */
	/* Why not bpf, when asked for (auto) and not had; else "". */
	const char *task_source_why;
	uint64_t task_passes; /* passes of the task iterator made so far */
	const char *identity_source; /* "pidfs" or "ticks" */
	unsigned int group_max_size;
	unsigned int group_count;
	enum units units;
	const char *proc_root;
	const char *sys_root;
	const char *jobs_source; /* "v1", "v2" or "none" (jobs.h) */
};

/* What an engine is made for: the configuration's part of it. */
struct engine_opts {
	unsigned int group_max_size; /* 1..64 */
	enum units units;
	uint64_t tsc_hz; /* 0: find it */
	const char *proc_root; /* "/proc": this machine's own */
	const char *sys_root;
	/*
	 * How task times are read: TASKS_BPF loads a BPF task iterator
	 * (taskpass.h) or fails; TASKS_AUTO tries it and falls back to
	 * procfs, saying why in engine_info; a proc root other than
	 * /proc is always procfs.
	 */
	enum task_source tasks;
};

/*
 * engine_new - build an engine for @opts: find the TSC frequency (may
 * calibrate for 200 ms), sample the boot instant, load the task source,
 * and compute the processor groups from sysfs. @opts and its strings
 * are copied.
 *
 * Returns 0 and sets *@out, or -errno and writes a one-line reason
 * into @err.
 */
int engine_new(const struct engine_opts *opts, struct engine **out, char *err,
	       size_t errlen);

/* engine_free - release @e; NULL is allowed. */
void engine_free(struct engine *e);

/* engine_get_info - describe @e. The strings live as long as @e. */
void engine_get_info(const struct engine *e, struct engine_info *info);

/* engine_jobs - @e's source of the cgroups' accounting (jobs.h). */
struct jobs *engine_jobs(const struct engine *e);

/*
 * engine_task_gone - whether task @pid, @tid (0: the process) has no
 * directory in @e's proc root (not whether the exited table keeps it).
 */
bool engine_task_gone(const struct engine *e, pid_t pid, pid_t tid);

/* engine_is_live - whether @e reads this machine's own /proc. */
bool engine_is_live(const struct engine *e);

/*
 * engine_set_units - show @units from now on (a configuration re-read);
 * the only setting of an engine that changes after engine_new().
 */
void engine_set_units(struct engine *e, enum units units);

/* engine_units - the units @e shows now. */
enum units engine_units(const struct engine *e);

/* Which exited tasks a reader can still name, as the exited table says. */
struct engine_retained {
	/*
	 * Whether the table keeps task @pid, @tid (0: the whole process)
	 * started at @start_ticks, in the daemon's numbers. Called from
	 * engine_task_times() in any thread, with no lock of the engine
	 * held, for a task that is gone from the proc root: it must count
	 * the exits the kernel has reported by then (listener_sync()).
	 */
	bool (*retained)(void *ctx, pid_t pid, pid_t tid, uint64_t start_ticks);
	void *ctx;
};

/*
 * engine_set_retained - keep, from now on, the kernel/user split shown
 * of the exited tasks that @r says are retained, as of those alive, so
 * that they never go backwards either; NULL (the default) when no
 * exited task is kept. *@r must outlive its use: set NULL before
 * freeing what it reads, once no reader is served.
 */
void engine_set_retained(struct engine *e, const struct engine_retained *r);

/*
 * engine_set_history_area - keep the splits shown (task.h's history) in
 * @area of @bytes from now on (TASK_HISTORY_BYTES: shared memory that
 * the process after this one maps in turn; the caller maps and unmaps
 * it, and sets NULL before unmapping): what was recorded there before,
 * by this process or one that died, holds from now on. NULL: private
 * memory again, empty. 0 or -EINVAL (task_history_set_area()).
 */
int engine_set_history_area(struct engine *e, void *area, size_t bytes);

/*
 * Which task a number is. A task's files are kept open between reads,
 * and a descriptor of a task that exited reads ESRCH even once another
 * task has its number; so a read through a kept descriptor is of the
 * task it was opened on. Once a read of the task's stat after the
 * descriptor was opened has told that task's start, and the descriptor
 * read since, every read through it says the task's creation time at no
 * cost: engine_task_ident() and engine_task_times() report it then
 * (start_tick_ns), so that a caller can tell the task a number names now
 * from one it met before with no read of its own.
 */

/*
 * engine_task_ident - who the task is, from its status alone (which
 * costs the same however many threads a process has), its credentials
 * included: with @tid 0,
 * PROC/@pid, else PROC/@pid/task/@tid. @pid may name any thread: /proc resolves a
 * thread id there too, so the caller checks ident->tgid == @pid to
 * accept process leaders only. -ENOENT when the task does not exist.
 */
int engine_task_ident(struct engine *e, pid_t pid, pid_t tid,
		      struct task_ident *ident);

/*
 * engine_task_dump_owner - the owner procfs gives the files of
 * PROC/@pid (its stat): root (of the task's user namespace) rather than
 * its effective uid when the task is not dumpable (task_dump_owner() in
 * the kernel; its directories keep the euid). One stat. -ENOENT when the task does not exist.
 */
int engine_task_dump_owner(struct engine *e, pid_t pid, uid_t *uid);

/*
 * engine_task_cpu - the processor that thread @tid of process @pid last
 * ran on (its stat, which costs the same however many threads the
 * process has), or -errno.
 */
int engine_task_cpu(struct engine *e, pid_t pid, pid_t tid);

/* What engine_task_times() is asked for: each needs its own reads. */
enum task_need {
	TASK_CPU = 1 << 0, /* cpu_ns and cycles: the runtime alone */
	TASK_SPLIT = 1 << 1, /* kernel_ns and user_ns, with TASK_CPU's */
	TASK_START = 1 << 2, /* start_tick_ns and exit_ns: stat */
	/* start_tick_ns where a kept file says it: a process's CPU time,
	 * asked by number, then costs its main thread's runtime too */
	TASK_WHICH = 1 << 3,
	/* created_ns, with TASK_START's: a pass of the task iterator when
	 * the task's start to the ns is not known yet */
	TASK_BORN = 1 << 4,
	TASK_NAME = 1 << 5, /* comm: stat */
	TASK_ALL = TASK_CPU | TASK_SPLIT | TASK_START | TASK_BORN | TASK_NAME,
};

/*
 * engine_task_times - the times of thread @tid of process @pid, or with
 * @tid 0 of the whole process @pid (its exited threads included): the
 * fields that @need (enum task_need) asks for, the others 0.
 *
 * The caller has checked with engine_task_ident() that @pid is a
 * process and @tid one of its threads. Counters of the same task never
 * go backwards between calls, whatever is asked for: the runtime is
 * monotonic at its source, and the split keeps its sum. -ENOENT when
 * the task is gone, -EIO when a source is malformed.
 */
int engine_task_times(struct engine *e, pid_t pid, pid_t tid, unsigned int need,
		      struct task_times *t);

/*
 * engine_exited_times - the times of the exited task @x, in the same
 * units and by the same rules as engine_task_times(): its runtime split
 * in its utime:stime proportion, never less kernel or user time than
 * was shown while it lived (as a thread with @thread, else as a
 * process: a record of a process that had one thread is both), and its
 * exit instant. May be called under the exited table's lock: it never
 * calls engine_retained's function.
 */
int engine_exited_times(struct engine *e, const struct exited_task *x,
			bool thread, struct task_times *t);

/*
 * engine_exit_start_ticks - the start of thread @tid of process @pid,
 * which exited, in clock ticks since boot, from @start_boot_ns (its
 * start on CLOCK_BOOTTIME as the exit record gives it, a little late):
 * the start its stat said when the engine read it alive (the last read
 * of its stat, else the history of its splits), so that its creation
 * time does not change and its kernel and user times stay clamped,
 * else @start_boot_ns in ticks.
 */
uint64_t engine_exit_start_ticks(struct engine *e, pid_t pid, pid_t tid,
				 uint64_t start_boot_ns);

/*
 * Which task a number names, exactly (ident.h): the pidfs inode number
 * of its struct pid, with IDENT_PIDFS set, where the kernel has pidfs
 * (6.9) and @e reads the live /proc; else a task is told by its start
 * in clock ticks (start_tick_ns). A task's identity is the same at every
 * read, in every server; it is read after what it vouches for: a task
 * that holds its number after a read held it during the read.
 */

/*
 * engine_task_identity - the identity of the process @pid (@tid 0) or
 * the thread @tid, in the daemon's numbers, now: 0 and *@ident, -ENOENT
 * when no task has the number, -EOPNOTSUPP without pidfs, -EMFILE,
 * -ENFILE (after the kept task files are given back), -ENOMEM, -EIO.
 * About 0.3 us for a task asked about before, 1.5-5 us otherwise.
 */
int engine_task_identity(struct engine *e, pid_t pid, pid_t tid,
			 uint64_t *ident);

/* engine_has_identity - whether @e gives pidfs identities. */
bool engine_has_identity(const struct engine *e);

/*
 * engine_exit_identity - the identity of thread @tid, whose exit record
 * came now, as it was met alive (each met identity is taken once, the
 * oldest first); 0 when it was never met, or without pidfs.
 */
uint64_t engine_exit_identity(struct engine *e, pid_t tid);

/*
 * engine_exits_lost - exit records were lost: forget the identities met
 * alive, which a later exit of their numbers could take.
 */
void engine_exits_lost(struct engine *e);

/*
 * One pass of the task iterator, kept by a caller that reads the
 * threads of many processes from it (proc/table): every task's times as
 * they were at one instant, which engine_pass_threads() gives process
 * by process.
 */
struct engine_pass;

/*
 * engine_pass_pays - whether one pass over every task of the machine
 * costs less than reading the files of @threads threads: a task costs a
 * pass about 0.1 us, a thread's stat and schedstat about 6 us, so it
 * pays from a 32nd of the tasks the last pass counted (from any number
 * before the first pass). False where @e has no task iterator.
 */
bool engine_pass_pays(struct engine *e, size_t threads);

/*
 * engine_pass_take - make a pass of @e's task iterator, into *@out
 * (engine_pass_free() it). -ENOSYS when @e reads procfs alone, -ENOMEM,
 * -EMFILE or -ENFILE (after one more try with the kept task files
 * closed), -EIO.
 */
int engine_pass_take(struct engine *e, struct engine_pass **out);

/* engine_pass_free - release @p; NULL is allowed. */
void engine_pass_free(struct engine_pass *p);

/*
 * engine_pass_threads - the times of every thread of process @pid that
 * pass @p saw, as engine_task_times(@pid, tid, TASK_ALL) would give
 * them then: @fn(@ctx, tid, times) for each, in the order of their
 * numbers; it stops at the first nonzero return of @fn, and returns
 * it. The split is the one /proc/.../stat gave at the pass
 * (taskpass_adjust()), clamped as engine_task_times() clamps it, and
 * every start seen is recorded (TASK_BORN). -ENOSYS when the pass lacks
 * the process or its main thread (it started after the pass, or a pass
 * skips it): the caller reads procfs.
 */
int engine_pass_threads(
	struct engine *e, const struct engine_pass *p, pid_t pid,
	int (*fn)(void *ctx, pid_t tid, const struct task_times *t), void *ctx);

/*
 * engine_pass_for_each_process - engine_for_each_process() of the
 * instant of pass @p: every process the pass shows, in the order of
 * their numbers, and those that /proc lists and no pass shows (the
 * iterator hides some on some kernels) as the last listing of /proc
 * found them, when these are every task of the machine (PROC/loadavg's
 * count of tasks); else a listing of /proc, which learns them again.
 */
int engine_pass_for_each_process(struct engine *e, const struct engine_pass *p,
				 int (*fn)(void *ctx, pid_t pid), void *ctx);

/*
 * engine_threads_pass - engine_pass_threads() of a pass of its own,
 * where one pays for process @pid: a pass of its threads alone from 16
 * threads (as its task directory counts them) on, or, on a kernel that
 * cannot scope a pass (before 6.1), one of every task where
 * engine_pass_pays() says so; else -ENOSYS, as when the pass lacks the
 * process: the caller reads procfs. -ENOMEM, -EMFILE, -ENFILE, -EIO.
 */
int engine_threads_pass(struct engine *e, pid_t pid,
			int (*fn)(void *ctx, pid_t tid,
				  const struct task_times *t),
			void *ctx);

/*
 * engine_for_each_process / engine_for_each_thread - call @fn for
 * every process in PROC (thread-group leaders only, as /proc lists them),
 * or every thread of process @pid, in the order the directory gives. Iteration stops early when @fn returns nonzero,
 * and that value is returned; otherwise 0, or -errno (-ENOENT for a
 * process that is gone). No memory is kept between calls.
 */
int engine_for_each_process(struct engine *e, int (*fn)(void *ctx, pid_t pid),
			    void *ctx);
int engine_for_each_thread(struct engine *e, pid_t pid,
			   int (*fn)(void *ctx, pid_t tid), void *ctx);

/* engine_group_count - the number of processor groups (at least 1). */
unsigned int engine_group_count(const struct engine *e);

/*
 * engine_group_size - the number of present processors in @group, the
 * bound of the M numbering (offline ones included); 0 for no group.
 */
unsigned int engine_group_size(const struct engine *e, unsigned int group);

/*
 * engine_group_cpu - the Linux CPU number of processor @m of @group, or
 * -ENOENT when there is no such processor.
 */
int engine_group_cpu(const struct engine *e, unsigned int group,
		     unsigned int m);

/*
 * engine_cpu_group - the group and number of Linux CPU @cpu; -ENOENT
 * when @cpu is not present.
 */
int engine_cpu_group(const struct engine *e, int cpu, unsigned int *group,
		     unsigned int *m);

/*
 * engine_group_online - set bit M of *@mask for each processor of @group
 * that is online now (SYS/devices/system/cpu/online). -ENOENT for no
 * such group; -ENOMEM, -EMFILE or -ENFILE when the daemon is out of
 * memory or descriptors; -EIO when the online list cannot be read
 * otherwise, or lists none.
 */
int engine_group_online(struct engine *e, unsigned int group, uint64_t *mask);

/*
 * engine_group_idle_cycles - one consistent snapshot of the idle cycles
 * (idle + iowait time in TSC ticks) of the online processors of @group.
 * Sets bit M of *@mask and @cycles[M] for each processor read;
 * @cycles has room for 64. The value of a processor never goes
 * backwards between calls, even where the kernel's does. -ENOENT for
 * no such group, -EIO for a malformed source or one that leaves out a
 * processor that is online.
 */
int engine_group_idle_cycles(struct engine *e, unsigned int group,
			     uint64_t *mask, uint64_t cycles[64]);

#endif
