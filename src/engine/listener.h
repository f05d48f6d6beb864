/*
 * listener: the kernel's word on tasks that exit, into the table of
 * exited tasks (exited.h).
 *
 * A thread of the daemon reads the taskstats exit records of every
 * possible CPU (generic netlink family TASKSTATS, registered with
 * TASKSTATS_CMD_ATTR_REGISTER_CPUMASK): a record per exiting thread,
 * and one for the whole thread group when the last thread of a process
 * that had several exits. It also reads the proc connector's fork
 * records, to learn, while a task lives, the numbers it has in PID
 * namespaces below the daemon's: an exit record carries only the
 * initial namespace's. Records are decoded with libmnl.
 *
 * Listening needs CAP_NET_ADMIN and a daemon in the initial user and
 * PID namespaces. A receive buffer overrun (ENOBUFS) loses records: it
 * is counted, logged at most once a minute, and never fatal.
 */
#ifndef TIMINGFS_LISTENER_H
#define TIMINGFS_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/netlink.h>

#include "engine.h"
#include "exited.h"

struct listener;

typedef void (*listener_log_fn)(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * listener_start - register for the exit records and start the thread
 * that files them into @x, with @e's start times and @own_ns (the
 * daemon's PID namespace, the one whose numbers the records carry).
 * Call it after the daemon has forked into the background. 0 and *@out,
 * or -errno with one line in @err (-EPERM without CAP_NET_ADMIN).
 */
int listener_start(struct engine *e, struct exited *x, uint64_t own_ns,
		   listener_log_fn log, struct listener **out, char *err,
		   size_t errlen);

/* listener_stop - stop the thread and close the sockets; NULL is allowed. */
void listener_stop(struct listener *l);

/*
 * listener_sync - file every record the kernel has queued by now, before
 * telling a reader that a task does not exist: a task's exit record is
 * queued before its parent can learn that it exited, so a script that
 * reads a task right after waiting for it finds it kept.
 */
void listener_sync(struct listener *l);

/*
 * A watcher of exits: called on the listener's thread, after the record
 * is filed, with a thread that exited (@tid its number, @tgid its
 * process's, the daemon's numbers) and then, when it ended its process,
 * again with @tid 0. It must not block and must not call back into the
 * listener.
 */
typedef void (*listener_exit_fn)(void *ctx, pid_t tgid, pid_t tid);

/* The most watchers a listener has at once. */
#define LISTENER_WATCHERS_MAX 4096

/*
 * listener_watch - call @fn(@ctx, ...) at every exit from now on: 0, or
 * -ENOSPC past LISTENER_WATCHERS_MAX. listener_unwatch - no more; when
 * it returns, no call of @fn with @ctx is under way.
 */
int listener_watch(struct listener *l, listener_exit_fn fn, void *ctx);
void listener_unwatch(struct listener *l, listener_exit_fn fn, void *ctx);

/* listener_lost - the receive buffer overruns met so far. */
unsigned long long listener_lost(const struct listener *l);

/* The fields of a taskstats record that timingfs uses. */
struct taskstats_fields {
	unsigned int version;
	unsigned int flag; /* ac_flag: AGROUP for a process's last thread */
	uint32_t uid, gid, pid, tgid;
	uint64_t run_ns; /* cpu_run_virtual_total */
	uint64_t etime_us, utime_us, stime_us;
	char comm[TASK_COMM_BYTES]; /* ac_comm, NUL-terminated */
};

/*
 * listener_parse_stats - the fields of one struct taskstats of @len
 * bytes at @p, laid out as @version says (0: as its own version field
 * says; a thread group's record may leave that 0). Versions 12 and
 * later, where records carry their tgid; version 15's layout, which
 * inserted fields in the middle, included. 0, or -EIO for a record too
 * short or too old.
 */
int listener_parse_stats(const void *p, size_t len, unsigned int version,
			 struct taskstats_fields *f);

/* What one taskstats exit message says. */
struct listener_exit {
	struct taskstats_fields thread; /* the exiting thread's record */
	struct taskstats_fields group; /* its thread group's, with has_group */
	bool has_group; /* a valid record of the whole thread group came */
	bool whole; /* the thread was its process's only one: no group record */
};

/*
 * listener_decode_exit - the records of the taskstats exit message @nlh
 * (its generic netlink header and attributes; nlmsg_len bytes there, as
 * listener_next_msg() gives). 0 and *@out; -EIO when it holds no valid
 * record of a thread that matches its own TASKSTATS_TYPE_PID.
 */
int listener_decode_exit(const struct nlmsghdr *nlh, struct listener_exit *out);

/* A task that the proc connector says was made. */
struct listener_fork {
	pid_t tgid, pid;
	uint64_t fork_ns; /* CLOCK_MONOTONIC */
};

/*
 * listener_decode_fork - the fork record of the proc connector message
 * @nlh (nlmsg_len bytes there). 0 and *@out; -EIO for a message too
 * short, of another connector, or of another event.
 */
int listener_decode_fork(const struct nlmsghdr *nlh, struct listener_fork *out);

/*
 * listener_next_msg - the netlink message at *@off in the @len bytes
 * received at @buf (4-aligned), and *@off moved to the next one; NULL
 * at the end or at a message whose header or length does not fit.
 */
const struct nlmsghdr *listener_next_msg(const void *buf, size_t len,
					 size_t *off);

#endif
