/*
 * taskfd: the task files the engine keeps open, so that a read is one
 * pread() from the start (procfs makes the text anew for it) instead of
 * an open, a read and a close: direct-mapped by task and file, at most
 * TASK_FDS descriptors (a grep over proc/ of 1,500 processes reopened
 * every file at 256).
 *
 * The engine (engine.c, engine_times.c) keeps its task files in one
 * table, ident.c its pidfds in another (named "pidfd", the identity in
 * @v). Every call may be made from any thread: a table is under its own
 * lock, and a descriptor taken out of it is the caller's until given
 * back.
 */
#ifndef TIMINGFS_TASKFD_H
#define TIMINGFS_TASKFD_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define TASK_FDS 2048

struct task_fd {
	pid_t pid, tid;
	const char *name; /* a string constant, compared by address */
	int fd; /* -1: empty */
	/*
	 * Which task it reads (a descriptor of a task that exited reads
	 * ESRCH, even once its number names another task): its start in
	 * clock ticks, plus 1; 0 while not known. A start read by path
	 * after the descriptor was opened (opened below the stat read's
	 * mark) is @maybe: the task's, if the descriptor still reads
	 * after it (then it was alive throughout, and held the number);
	 * the next read that succeeds makes it @start.
	 */
	uint64_t opened;
	uint64_t start;
	uint64_t maybe;
	uint64_t v; /* a pidfd's: its task's identity (ident.h) */
};

struct task_fds {
	pthread_mutex_t lock;
	struct task_fd fds[TASK_FDS];
	uint64_t opens; /* atomic: task files opened, each one's number */
};

/* task_fds_init, _destroy - an empty table; closing all it keeps. */
void task_fds_init(struct task_fds *c);
void task_fds_destroy(struct task_fds *c);

/*
 * task_fds_take - the kept descriptor of file @name (a string constant)
 * of task @pid, @tid, taken out of the table into *@out (its fd -1 when
 * there was none).
 */
void task_fds_take(struct task_fds *c, pid_t pid, pid_t tid, const char *name,
		   struct task_fd *out);

/* task_fds_give - keep @k for the next read, closing what its slot held. */
void task_fds_give(struct task_fds *c, const struct task_fd *k);

/*
 * task_fds_opened - a number for a descriptor just opened (its @opened),
 * each one's higher than the last; task_fds_mark - the next one, for a
 * stat read by path to compare to.
 */
uint64_t task_fds_opened(struct task_fds *c);
uint64_t task_fds_mark(struct task_fds *c);

/*
 * task_fds_stamp - the task (@pid, @tid) started at @start (ticks + 1),
 * as a stat read by path after the count stood at @mark says: its files
 * kept open since before @mark may be that task's (struct task_fd's
 * maybe).
 */
void task_fds_stamp(struct task_fds *c, pid_t pid, pid_t tid, uint64_t start,
		    uint64_t mark);

/* task_fds_close - close every kept descriptor: how many it closed. */
unsigned int task_fds_close(struct task_fds *c);

#endif
