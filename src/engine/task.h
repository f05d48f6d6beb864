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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hash.h"

/* The fields of /proc/.../stat that the engine uses. */
/* A task's name as the kernel keeps it (comm), with its NUL. */
#define TASK_COMM_BYTES 16

struct task_stat {
	char comm[TASK_COMM_BYTES]; /* field 2, cut to 15 bytes */
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
 * The last kernel and user shares shown of each task, so that they
 * never go backwards when its utime:stime proportion moves, not even
 * across a restart of the server.
 *
 * An entry per task number (@pid, @tid, 0 for the whole process): one
 * task per number can be named at a time, so an entry holds the task
 * that started last (its start_ticks), and a read of a later task with
 * that number takes the entry over. The entries live in an area of
 * memory (task_history_set_area()), a fixed array of at most
 * TASK_HISTORY_MAX, handed out from the front (sparse memory: a page is
 * used once an entry on it is); the index to them is a hash table
 * (hash.h) in this process's heap, rebuilt from the area when another
 * process maps it. What bounds the area is a sweep: when it holds twice
 * the entries the last sweep left (and at least TASK_HISTORY_SWEEP_MIN;
 * reads refused for want of room count as entries), the entries of
 * tasks that the keep function says no reader can name any more are
 * dropped. So it holds at most twice the tasks alive or kept after
 * they exited when the last sweep ran (at least TASK_HISTORY_SWEEP_MIN),
 * plus those recorded while a sweep runs; and a sweep of N entries
 * comes after at least N/2 new ones, so each read pays amortised O(1)
 * calls of keep.
 *
 * Crash consistency: one process writes an area at a time, and may die
 * at any instruction. A value is recorded before it is shown, each
 * share of a task only grows (an atomic store each), and an entry is
 * published by a release store of its key once whole (taken over: its
 * key cleared first); so a process that maps the area after a death
 * finds every entry published, and clamps no value below one shown.
 *
 * Thread safe: one lock, held for a lookup and an update (a sweep
 * takes it briefly to copy the keys and to drop the gone entries, and
 * calls keep without it; one sweep runs at a time). The clamp only
 * says when a sweep is due, for its caller may hold a lock that keep
 * takes (the exited table's). Out of room or memory, a task is not
 * recorded and that one read not clamped; never an error.
 */
#define TASK_HISTORY_SWEEP_MIN 4096

/*
 * The layout of an area, the same in every binary that hands it on: a
 * header, then the entries. An entry is free while its key is 0; a
 * live key is TASK_HISTORY_LIVE | pid << 32 | tid. Entries below used
 * are read by the next process to map the area; used grows before an
 * entry past it is written. (The writer links the free entries through
 * their start_ticks, for itself.)
 */
struct history_slot {
	uint64_t key; /* stored last, with release, when it is whole */
	uint64_t start_ticks;
	uint64_t kernel_ns, user_ns; /* the last split shown */
	uint64_t born_boot_ns; /* its start to the ns; 0: not known yet */
};

#define TASK_HISTORY_MAGIC 0x3174736968736674ULL /* "tfshist1" */
#define TASK_HISTORY_LIVE (1ULL << 63)

struct history_area {
	uint64_t magic; /* stored last when the header is made */
	uint32_t slot_bytes, header_bytes; /* sizeof each: the layout */
	uint64_t capacity; /* entries the area holds */
	uint64_t used; /* entries handed out from the front */
	uint64_t pad[4];
	struct history_slot slot[];
};

/* The most entries an area holds, and the bytes of such an area. */
#define TASK_HISTORY_MAX (1u << 20)
#define TASK_HISTORY_BYTES             \
	(sizeof(struct history_area) + \
	 sizeof(struct history_slot) * (size_t)TASK_HISTORY_MAX)

/*
 * Whether a reader can still name the task @pid, @tid (0: the whole
 * process) that started at @start_ticks: alive, or kept after it
 * exited. Called without the history's lock, from whichever thread's
 * read starts a sweep. When unsure, true: an entry kept too long costs
 * memory, one dropped too soon lets a counter go back.
 */
typedef bool (*task_history_keep_fn)(void *ctx, pid_t pid, pid_t tid,
				     uint64_t start_ticks);

struct task_history {
	pthread_mutex_t lock;
	struct hash_table table; /* of struct history_entry (task.c) */
	struct history_area *area; /* the entries; NULL: none can be */
	size_t area_bytes;
	bool own_area; /* a private mapping of this history's */
	uint64_t free_slot; /* the first free entry below used (task.c) */
	size_t sweep_at; /* the count at which the next sweep starts */
	size_t missed; /* reads not recorded for want of room since */
	bool sweeping; /* a sweep is under way */
	task_history_keep_fn keep; /* NULL: never swept */
	void *keep_ctx;
};

/*
 * task_history_init / task_history_destroy - set up an empty history
 * that is never swept, in a private area of TASK_HISTORY_BYTES (none
 * when it cannot be mapped: nothing is recorded), and tear it down with
 * its index (an area set by task_history_set_area() stays its owner's).
 */
void task_history_init(struct task_history *h);
void task_history_destroy(struct task_history *h);

/*
 * task_history_set_area - keep @h's entries in @area of @bytes (shared
 * memory that outlives this process, 8-byte aligned, zero-filled when
 * new; the caller maps and unmaps it) from now on: every entry found
 * there is @h's, the index rebuilt; an area of another layout or size
 * is emptied. The entries held before are dropped. NULL: a private area
 * again, empty. 0, or -EINVAL when @bytes cannot hold the header and
 * one entry (@h is then without an area: nothing is recorded). Thread
 * safe.
 */
int task_history_set_area(struct task_history *h, void *area, size_t bytes);

/*
 * task_history_set_keep - sweep @h from now on, with @keep(@ctx, ...)
 * saying which entries stay. Call before @h is shared between threads.
 */
void task_history_set_keep(struct task_history *h, task_history_keep_fn keep,
			   void *ctx);

/*
 * task_history_sweep - drop the entries whose task the keep function
 * says is gone, now; returns how many. Nothing when there is no keep
 * function, a sweep is under way, or out of memory. Thread safe.
 */
size_t task_history_sweep(struct task_history *h);

/*
 * task_history_start - the start (clock ticks) recorded under number
 * @pid, @tid: true and *@start_ticks, or false when none is. Thread
 * safe.
 */
bool task_history_start(struct task_history *h, pid_t pid, pid_t tid,
			uint64_t *start_ticks);

/*
 * A task's start to the nanosecond, as a pass of the task iterator
 * gave it (taskpass.h), is kept in the same entry, so that it lives as
 * long as a reader can name the task and is the same at every read.
 * TASK_BORN_NONE records that no pass had the task: it is shown in
 * clock ticks for good.
 */
#define TASK_BORN_NONE UINT64_MAX

/*
 * task_history_born - the start recorded for task @pid, @tid that
 * started at @start_ticks (ns since boot, or TASK_BORN_NONE): true and
 * *@boot_ns, or false when none is. Thread safe.
 */
bool task_history_born(struct task_history *h, pid_t pid, pid_t tid,
		       uint64_t start_ticks, uint64_t *boot_ns);

/*
 * task_history_set_born - record @boot_ns (nonzero) as the start of task
 * @pid, @tid that started at @start_ticks, unless one is recorded for it
 * already (the first stays) or its number names a later task; an entry
 * of an earlier task is taken over. Returns true when the history is
 * due a sweep, as task_history_record(). Thread safe.
 */
bool task_history_set_born(struct task_history *h, pid_t pid, pid_t tid,
			   uint64_t start_ticks, uint64_t boot_ns);

/*
 * task_history_record - make *@kernel_ns and *@user_ns (unless NULL) no
 * less than the last values recorded for the same task (@pid, @tid with
 * 0 for the whole process, started at @start_ticks), keeping their sum
 * no less than before, and record the result; and record *@boot_ns
 * (unless NULL) as task_history_set_born() does, then set it to the
 * start recorded for the task (the first stays), unchanged where none
 * could be. One hold of the lock. A task that started before the one
 * recorded under its number is neither clamped nor recorded; one that
 * started after takes the entry over. Thread safe.
 *
 * Returns true when the history is due a sweep (above): the caller then
 * calls task_history_sweep() once it holds no lock that the keep
 * function takes; a caller that cannot leaves it to the next one.
 */
bool task_history_record(struct task_history *h, pid_t pid, pid_t tid,
			 uint64_t start_ticks, uint64_t *kernel_ns,
			 uint64_t *user_ns, uint64_t *boot_ns);

#endif
