/*
 * ident: which task a number names, exactly: the inode number pidfs
 * gives its struct pid (Linux 6.9 and later), unique for as long as the
 * machine runs, where a start in clock ticks (stat's field 22) cannot
 * tell apart two tasks that took one number within a tick.
 *
 * An identity is that inode number with IDENT_PIDFS set: a creation
 * time (ns since the Unix epoch, below 2^63) never has it, so a record
 * that holds either says which it is. It outlives the server that read
 * it (a successor reads the same inode number), and a pidfd is kept per
 * task asked about, so that asking again costs one poll(2).
 *
 * The identities met alive are remembered by thread id until the
 * task's exit record takes its own (ident_exit()), so that a task kept
 * after it exited keeps the identity its names were made with.
 *
 * Thread safe: one lock for the kept pidfds, one for what is
 * remembered.
 */
#ifndef TIMINGFS_IDENT_H
#define TIMINGFS_IDENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define IDENT_PIDFS (1ULL << 63)

/* ident_is_pidfs - whether @v is a pidfs identity, not a creation time. */
static inline bool ident_is_pidfs(uint64_t v)
{
	return (v & IDENT_PIDFS) != 0;
}

struct ident;

/*
 * ident_new - pidfs identities, where this kernel gives them (a pidfd's
 * filesystem is pidfs, and a thread has a pidfd of its own): 0 and
 * *@out, -EOPNOTSUPP where it does not, -ENOMEM.
 */
int ident_new(struct ident **out);

/* ident_free - release @id and its kept pidfds; NULL is allowed. */
void ident_free(struct ident *id);

/*
 * ident_of - the identity of the task number @pid (a process; @tid 0)
 * or @tid (a thread) names now, in the daemon's numbers: 0 and *@v,
 * -ENOENT when no task has it, -EMFILE, -ENFILE, -ENOMEM, -EIO.
 */
int ident_of(struct ident *id, pid_t pid, pid_t tid, uint64_t *v);

/*
 * ident_exit - the identity of thread @tid, whose exit record came
 * just now: the earliest of those met alive under @tid and not taken by
 * an exit yet, which this one takes; 0 when none was met.
 */
uint64_t ident_exit(struct ident *id, pid_t tid);

/*
 * ident_forget - forget every identity met alive: exit records were
 * lost, and a later task's exit could take one of a task whose record
 * was lost.
 */
void ident_forget(struct ident *id);

/* ident_close_fds - close the kept pidfds (out of descriptors); how many. */
unsigned int ident_close_fds(struct ident *id);

#endif
