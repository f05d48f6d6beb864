/*
 * engine_int: what the engine's files share (engine.c, engine_times.c,
 * engine_pass.c), and no other file includes: struct engine, and the
 * steps one of them takes for another. The locking is engine.h's: each
 * part of the state below says how it is guarded.
 */
#ifndef TIMINGFS_ENGINE_INT_H
#define TIMINGFS_ENGINE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"
#include "idle.h"
#include "task.h"
#include "taskfd.h"
#include "taskpass.h"
#include "topology.h"

/*
 * A task file's text: first in a buffer on the stack, then, for a file
 * that does not fit (a status of thousands of groups, a stat of a long
 * name), in ever larger ones on the heap: no source has a size limit.
 */
#define READBUF_SMALL 1024
#define TEXT_MAX ((size_t)1 << 26)

struct readbuf {
	char *data;
	size_t size;
	char small[READBUF_SMALL];
};

/*
 * The start of tasks whose stat was read, so that a task that exits
 * keeps the creation time it had (exited.h): direct-mapped by thread
 * id, each slot the id in its top 22 bits and the start in clock ticks
 * below, written and read whole without a lock.
 */
#define START_MEMO_SLOTS 4096

/*
 * A process's threads are read in one pass of the machine from a 32nd
 * of its tasks on, and in a pass of the process alone (Linux 6.1) from
 * 16 threads on: a pass costs about 0.1 us a task it shows, a thread's
 * stat and schedstat about 6 us, making a pass of a process about 60.
 */
#define PASS_PAYS_RATIO 32
#define SCOPED_PASS_THREADS 16
/* Processes /proc lists and no pass shows, kept to list without /proc. */
#define HIDDEN_MAX 16
#define START_TICKS_BITS 42

struct engine {
	struct engine_opts opts; /* its roots owned */
	bool live; /* proc_root is the real /proc */
	uint64_t tsc_hz;
	const char *tsc_source;
	uint64_t clk_tck;
	uint64_t boot_ns; /* the boot instant, ns since the Unix epoch */
	/* The same to the microsecond, for starts to the ns (TASK_BORN). */
	uint64_t boot_exact_ns;
	struct taskpass *pass; /* the task iterator; NULL: procfs alone */
	struct ident *ident; /* pidfs identities; NULL: starts in ticks */
	const char *task_source; /* "bpf" or "procfs" */
	char task_source_why[200]; /* why not bpf, asked for and not had */
	size_t pass_tasks; /* atomic: the tasks of the last pass */
	uint64_t passes; /* atomic: passes made */
	/* The processes that /proc listed and a pass did not show though
	 * they started before it (the iterator hides some on some kernels),
	 * by number, as the last listing found them. */
	pthread_mutex_t hidden_lock;
	pid_t hidden[HIDDEN_MAX];
	size_t hidden_count;
	struct topology topo;
	struct idle idle;
	struct task_history history;
	struct jobs *jobs; /* the cgroups' accounting (jobs.h) */
	const struct engine_retained *retained; /* atomic; NULL: none */
	struct task_fds fds; /* the task files kept open */
	uint64_t start_memo[START_MEMO_SLOTS];
};

/* ---- engine.c ---- */

/* engine_task_path - PROC/pid/name or PROC/pid/task/tid/name. */
void engine_task_path(const struct engine *e, char *path, size_t size,
		      pid_t pid, pid_t tid, const char *name);

/*
 * engine_run_pass - one pass of the task iterator, of every task (@pid
 * 0) or of process @pid alone; out of descriptors, once more with the
 * kept ones closed. Counts the passes made. 0 or -errno.
 */
int engine_run_pass(struct engine *e, pid_t pid, struct taskpass_task **task,
		    size_t *n);

/*
 * engine_reclaim_fds - close every task file and pidfd kept open: the
 * daemon is out of descriptors. How many it closed.
 */
unsigned int engine_reclaim_fds(struct engine *e);

/* readbuf_init, _free - an empty buffer (its small one); back to it. */
void readbuf_init(struct readbuf *t);
void readbuf_free(struct readbuf *t);

/*
 * engine_read_task_file - the whole of task file @name (a string
 * constant) into @t, however large: its length or -errno; *@start the
 * task's start (ticks + 1) when a kept descriptor that knows it read
 * it, else 0.
 */
int engine_read_task_file(struct engine *e, pid_t pid, pid_t tid,
			  const char *name, struct readbuf *t, uint64_t *start);

/* ---- engine_times.c ---- */

/* engine_read_task_stat - the task's stat, its start learned. */
int engine_read_task_stat(struct engine *e, pid_t pid, pid_t tid,
			  struct task_stat *st);

/*
 * engine_pass_times - thread @t of a pass's times, as
 * engine_task_times() gives them with TASK_ALL; *@due when the history
 * is due a sweep.
 */
void engine_pass_times(struct engine *e, const struct taskpass_task *t,
		       struct task_times *out, bool *due);

#endif
