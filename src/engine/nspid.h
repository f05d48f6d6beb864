/*
 * nspid: a task's numbers in each PID namespace, from the "NSpid:" and
 * "NStgid:" lines of its /proc/PID/status (Linux 4.1 and later).
 *
 * Such a line lists the task's number in every namespace from the one
 * of the procfs that was read (the first) down to the task's own (the
 * last), separated by blanks; the namespaces themselves are found by
 * walking up from the task's own. Views translate numbers with it where
 * the kernel lacks the nsfs ioctls of Linux 6.10 (view.h), and the
 * listener names exited tasks in each namespace with it (listener.h).
 * No state: thread safe.
 */
#ifndef TIMINGFS_NSPID_H
#define TIMINGFS_NSPID_H

#include <sys/types.h>

/* The kernel's MAX_PID_NS_LEVEL: a task has at most this many numbers. */
#define NSPID_LEVELS_MAX 32

/*
 * nspid_parse - the numbers of the line that starts with @key ("NSpid:"
 * or "NStgid:") in the status text @status, into @out (at most @max):
 * how many, 1 or more. -ENOENT when there is no such line (a kernel
 * before 4.1); -EIO when it holds no number, a number that is 0 or does
 * not fit a pid, anything but blanks between them, or more than @max.
 */
int nspid_parse(const char *status, const char *key, pid_t *out,
		unsigned int max);

/*
 * nspid_chain - the nsfs inodes of the PID namespace that @fd (an open
 * /proc/.../ns/pid, left open) names and of its parents, from it
 * upwards (NS_GET_PARENT, Linux 4.9), into @ino (at most @max): how
 * many. The walk ends after @top (0: none) and sets *@err to 0; else
 * *@err is -ENOENT when @max came first or the top of what the daemon
 * may see did (EPERM), or -errno of the call that failed (-EMFILE,
 * -ENFILE: out of descriptors).
 */
unsigned int nspid_chain(int fd, ino_t top, ino_t *ino, unsigned int max,
			 int *err);

#endif
