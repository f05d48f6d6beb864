/*
 * exited: the tasks that exited, kept for a while with their final
 * times, as Windows keeps a process's times readable while a handle to
 * it is open; and the births of live tasks (their names and instant),
 * which their exit records lack.
 *
 * A bounded table, filled by the listener (listener.h) and read by the
 * tree. It holds at most max_tasks records; each is dropped keep
 * seconds after it came, or sooner, the oldest first, when the table is
 * full. A record is a thread, a whole process, or both at once (a
 * process that had one thread). It is found under every name it had:
 * its numbers in the daemon's PID namespace and in each namespace below
 * it that the listener learned while the task lived.
 *
 * A lookup compares the names of one task (hashed by namespace, process
 * and thread), however many threads its process had; a listing of one
 * process's threads walks that process's names (hashed by namespace and
 * process).
 *
 * The table also holds what was learned of live tasks when they were
 * made (their names, the instant) until they exit: a fixed number of
 * slots, direct-mapped by thread id.
 *
 * Memory is reserved once, at exited_new(), and touched as the table
 * fills; nothing grows afterwards. Thread safe: one lock, held briefly.
 * Nothing here reads the kernel.
 */
#ifndef TIMINGFS_EXITED_H
#define TIMINGFS_EXITED_H

#include <stdint.h>
#include <sys/types.h>

#include "task.h"

/* The daemon's numbers and up to three PID namespaces below them. */
#define EXITED_NAMES 4

struct exited_name {
	uint64_t ns; /* the nsfs inode of a PID namespace */
	pid_t tgid; /* the process's number there */
	pid_t tid; /* the thread's; 0 in a record of a process alone */
};

enum exited_flags {
	EXITED_THREAD = 1 << 0, /* the record of a thread */
	EXITED_PROCESS = 1 << 1, /* the record of a whole process */
};

struct exited_task {
	unsigned int flags; /* enum exited_flags */
	uid_t uid; /* its owner, as the kernel reported it at exit */
	gid_t gid;
	uint64_t cpu_ns; /* its whole runtime, the scheduler's */
	uint64_t utime_us; /* the kernel's user and system shares: */
	uint64_t stime_us; /* the proportion of the split, nothing else */
	uint64_t start_ticks; /* its start, clock ticks since boot */
	/* its identity as it was met alive (engine_task_identity()); 0:
	 * never met, or none but its start */
	uint64_t ident;
	uint64_t exit_ns; /* its exit, ns since the Unix epoch */
	char comm[TASK_COMM_BYTES]; /* its last name, NUL-terminated */
	unsigned int nnames; /* at least 1: name[0] is the daemon's */
	struct exited_name name[EXITED_NAMES];
};

struct exited;

/*
 * exited_new - a table keeping tasks @keep_s seconds (at least 1), at
 * most @max_tasks (at least 1) at once. 0 and *@out, or -ENOMEM.
 */
int exited_new(unsigned int keep_s, unsigned int max_tasks,
	       struct exited **out);

/* exited_free - release @x; NULL is allowed. */
void exited_free(struct exited *x);

/*
 * exited_add - keep @t from @now (CLOCK_MONOTONIC, ns). A record of the
 * same task (the same daemon's name and kind) is replaced; when the
 * table is full the oldest record is dropped, and counted.
 */
void exited_add(struct exited *x, const struct exited_task *t, uint64_t now);

/*
 * exited_forget_ns - namespace @ns (not the daemon's) ended: no record
 * is found by its names there any more (its inode number may name
 * another namespace from now on).
 */
void exited_forget_ns(struct exited *x, uint64_t ns);

/*
 * exited_find - the record of thread @tid of process @tgid, or with
 * @tid 0 of the process @tgid itself, as PID namespace @ns numbers
 * them, kept at @now. 0 and *@t, or -ENOENT.
 */
int exited_find(struct exited *x, uint64_t ns, pid_t tgid, pid_t tid,
		uint64_t now, struct exited_task *t);

/*
 * exited_for_each - call @fn for every process record in @ns (@tgid 0)
 * or every thread record of process @tgid in @ns, kept at @now, with
 * the record and its name in @ns. Stops at, and returns, the first
 * nonzero value @fn returns; else 0. @fn runs under the table's lock
 * and must not call into the table.
 */
int exited_for_each(struct exited *x, uint64_t ns, pid_t tgid, uint64_t now,
		    int (*fn)(void *ctx, const struct exited_task *t,
			      const struct exited_name *name),
		    void *ctx);

struct exited_counts {
	unsigned int keep_s; /* how long records are kept */
	unsigned long long retained; /* records kept now */
	unsigned long long dropped; /* dropped early: the table was full */
	unsigned long long steps; /* names compared by lookups, ever: their
				   * cost, for tests and benchmarks */
};

/*
 * exited_set_keep - keep records @keep_s seconds (at least 1) from now
 * on, those kept already included.
 */
void exited_set_keep(struct exited *x, unsigned int keep_s);

/* exited_counts - the counts at @now. */
void exited_counts(struct exited *x, uint64_t now, struct exited_counts *c);

/* What is learned of a task when it is made. */
struct exited_birth {
	uint64_t fork_ns; /* CLOCK_MONOTONIC, just after it was made */
	unsigned int nnames; /* 1..EXITED_NAMES: name[0] is the daemon's */
	struct exited_name name[EXITED_NAMES];
};

/*
 * exited_learn - remember @b of live thread @tid until it exits; it
 * replaces what was known of @tid.
 */
void exited_learn(struct exited *x, pid_t tid, const struct exited_birth *b);

/*
 * exited_learned - what was remembered of thread @tid, into *@b, and
 * forget it: 0, or -ENOENT.
 */
int exited_learned(struct exited *x, pid_t tid, struct exited_birth *b);

#endif
