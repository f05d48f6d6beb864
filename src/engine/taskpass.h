/*
 * taskpass: the times and the start of every task, from one pass of a
 * BPF task iterator (docs/design.md, "Task sources").
 *
 * The iterator (bpf/tasks.bpf.c, built into a libbpf skeleton at make)
 * is loaded and attached once, by taskpass_open(); each taskpass_run()
 * makes a new iterator file from the link and reads it to its end: one
 * record per task of the loader's PID namespace, in one pass of the
 * kernel's task list, which costs about 0.1 us a task against some 6 us
 * to read a task's stat and schedstat. A task's start_boottime is its
 * start to the nanosecond, where stat's field 22 gives clock ticks.
 *
 * What a pass says is raw: the task numbers are the kernel's, in the
 * initial PID namespace (so taskpass_open() refuses a loader in any
 * other), and utime and stime are not scaled to the runtime as /proc
 * scales them (task_cputime_adjusted()). A task can be missing from a
 * pass although /proc shows it (it started or exited meanwhile; on some
 * machines the iterator skips PID 1's threads): the caller has another
 * source for it.
 *
 * Loading needs the kernel's BTF (/sys/kernel/btf/vmlinux), the task
 * iterator (Linux 5.8) and the right to load and attach a tracing
 * program (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN); where any is
 * missing, taskpass_open() says which in one line.
 *
 * Thread safety: taskpass_run() may be called from any thread, many at
 * once (each pass has a file of its own); open and close from one.
 */
#ifndef TIMINGFS_TASKPASS_H
#define TIMINGFS_TASKPASS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "task.h"

/* One task as a pass saw it. */
struct taskpass_task {
	pid_t tid, tgid; /* in the initial PID namespace */
	uint64_t start_boot_ns; /* its start, ns since boot (CLOCK_BOOTTIME) */
	uint64_t runtime_ns; /* its CPU time, ns */
	uint64_t utime_ns, stime_ns; /* raw, not scaled (above) */
	/* The scaled shares /proc showed last (the kernel's prev_cputime),
	 * from which taskpass_adjust() goes on; 0 where the kernel has
	 * none. */
	uint64_t prev_utime_ns, prev_stime_ns;
	char comm[TASK_COMM_BYTES]; /* its name, NUL-terminated */
};

struct taskpass;

/*
 * taskpass_open - load and attach the task iterator: 0 and *@out, or
 * -errno and one line in @why (no newline) saying why it cannot be
 * had here.
 */
int taskpass_open(struct taskpass **out, char *why, size_t whylen);

/* taskpass_close - detach and unload; NULL allowed. */
void taskpass_close(struct taskpass *p);

/*
 * taskpass_run - one pass: every task the iterator shows, in a new
 * array (the caller frees it) sorted by process (tgid) and in a
 * process by tid, and their count. 0, or
 * -ENOMEM, -EMFILE or -ENFILE (out of descriptors), or -EIO when the
 * iterator's file cannot be made or read otherwise.
 */
int taskpass_run(struct taskpass *p, struct taskpass_task **tasks,
		 size_t *count);

/*
 * taskpass_run_process - a pass scoped to process @tgid (in the
 * initial PID namespace): its threads alone, as taskpass_run() gives
 * them, at a cost of its threads rather than of the machine's tasks.
 * -ENOENT when there is no such process, -EOPNOTSUPP when the kernel
 * cannot scope a task iterator (before Linux 6.1; the first refusal is
 * remembered, and $TIMINGFS_TEST_NO_SCOPED_PASS simulates it at open),
 * -ENOMEM, -EMFILE, -ENFILE, -EIO.
 */
int taskpass_run_process(struct taskpass *p, pid_t tgid,
			 struct taskpass_task **tasks, size_t *count);

/*
 * taskpass_adjust - the user and system shares of @t's runtime that
 * /proc/.../stat would give at the pass, before it turns them into
 * clock ticks: the raw shares scaled to the runtime, never less than
 * the shares it showed last, as the kernel's cputime_adjust() makes
 * them (kernel/sched/cputime.c).
 */
void taskpass_adjust(const struct taskpass_task *t, uint64_t *utime_ns,
		     uint64_t *stime_ns);

/*
 * taskpass_find - thread @tid of process @tgid in @tasks (a pass's,
 * @count of them), or NULL.
 */
const struct taskpass_task *taskpass_find(const struct taskpass_task *tasks,
					  size_t count, pid_t tgid, pid_t tid);

/*
 * taskpass_process - the threads of process @tgid in @tasks (a pass's,
 * @count of them): their count, and in *@first the index of the first;
 * they follow it in the order of their numbers.
 */
size_t taskpass_process(const struct taskpass_task *tasks, size_t count,
			pid_t tgid, size_t *first);

#endif
