/*
 * ident: a task's identity, the pidfs inode number of its struct pid,
 * asked through a pidfd kept per task (ident.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ident.h"
#include "taskfd.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define PIDFD_THREAD_FLAG O_EXCL /* linux/pidfd.h's PIDFD_THREAD, 6.9 */
#define PIDFS_MAGIC_NR 0x50494446 /* "PIDF", linux/magic.h */

/* The name of a pidfd in the table of kept ones (taskfd.h), which
 * holds enough for every process of a busy host (a grep over proc/ at
 * 1,500 processes opened one a file at 256). */
static const char PIDFD[] = "pidfd";
/* Identities met alive, by thread id: two ways a set, so that a task
 * and the one that took its number within the same moment both stay. */
#define IDENT_SETS 8192
#define IDENT_WAYS 2

struct ident_met {
	pid_t tid;
	uint64_t v; /* 0: empty */
};

struct ident {
	struct task_fds fds; /* kept pidfds, each one's identity its @v */
	pthread_mutex_t met_lock;
	struct ident_met met[IDENT_SETS][IDENT_WAYS];
};

static int pidfd_open_nr(pid_t nr, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_open, nr, flags);
}

int ident_new(struct ident **out)
{
	struct ident *id;
	struct statfs sf;
	int fd, ok;

	fd = pidfd_open_nr(getpid(), 0);
	if (fd < 0)
		return -EOPNOTSUPP;
	ok = fstatfs(fd, &sf) == 0 && sf.f_type == PIDFS_MAGIC_NR;
	close(fd);
	fd = ok ? pidfd_open_nr((pid_t)syscall(SYS_gettid), PIDFD_THREAD_FLAG) :
		  -1;
	if (fd < 0)
		return -EOPNOTSUPP;
	close(fd);
	id = calloc(1, sizeof(*id));
	if (!id)
		return -ENOMEM;
	task_fds_init(&id->fds);
	pthread_mutex_init(&id->met_lock, NULL);
	*out = id;
	return 0;
}

void ident_free(struct ident *id)
{
	if (!id)
		return;
	task_fds_destroy(&id->fds);
	pthread_mutex_destroy(&id->met_lock);
	free(id);
}

unsigned int ident_close_fds(struct ident *id)
{
	return task_fds_close(&id->fds);
}

/*
 * Whether the task of pidfd @fd has not exited: then it holds its
 * number still (the number is freed when it is reaped, after it has
 * exited). A zombie reads as exited.
 */
static bool alive(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

/* Remember @v met alive under thread id @tid, in place of the oldest. */
static void met_alive(struct ident *id, pid_t tid, uint64_t v)
{
	struct ident_met *set = id->met[(uint32_t)tid % IDENT_SETS];
	size_t i, old = 0;

	pthread_mutex_lock(&id->met_lock);
	for (i = 0; i < IDENT_WAYS; i++) {
		if (set[i].v == v && set[i].tid == tid)
			goto out;
		/* inode numbers grow: the smallest is the oldest task */
		if (set[i].v < set[old].v)
			old = i;
	}
	set[old].tid = tid;
	set[old].v = v;
out:
	pthread_mutex_unlock(&id->met_lock);
}

uint64_t ident_exit(struct ident *id, pid_t tid)
{
	struct ident_met *set = id->met[(uint32_t)tid % IDENT_SETS];
	struct ident_met *first = NULL;
	uint64_t v = 0;
	size_t i;

	pthread_mutex_lock(&id->met_lock);
	/* A number's tasks exit in the order they took it. */
	for (i = 0; i < IDENT_WAYS; i++)
		if (set[i].v && set[i].tid == tid &&
		    (!first || set[i].v < first->v))
			first = &set[i];
	if (first) {
		v = first->v;
		first->v = 0;
	}
	pthread_mutex_unlock(&id->met_lock);
	return v;
}

void ident_forget(struct ident *id)
{
	pthread_mutex_lock(&id->met_lock);
	for (size_t i = 0; i < IDENT_SETS; i++)
		for (size_t j = 0; j < IDENT_WAYS; j++)
			id->met[i][j].v = 0;
	pthread_mutex_unlock(&id->met_lock);
}

/* A new pidfd of the task number @pid, @tid names: its descriptor and
 * *@v, or -errno. */
static int open_task(pid_t pid, pid_t tid, uint64_t *v)
{
	struct stat st;
	int fd, err;

	fd = pidfd_open_nr(tid ? tid : pid, tid ? PIDFD_THREAD_FLAG : 0);
	if (fd < 0) {
		err = errno;
		/* EINVAL: a process's number that is a thread's */
		if (err == ESRCH || err == EINVAL)
			return -ENOENT;
		return err == EMFILE || err == ENFILE || err == ENOMEM ? -err :
									 -EIO;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -EIO;
	}
	*v = IDENT_PIDFS | (uint64_t)st.st_ino;
	return fd;
}

int ident_of(struct ident *id, pid_t pid, pid_t tid, uint64_t *v)
{
	struct task_fd k;
	bool live = false;

	if (pid <= 0 || tid < 0)
		return -ENOENT;
	task_fds_take(&id->fds, pid, tid, PIDFD, &k);
	/* Kept, and not exited since: still the number's. */
	if (k.fd >= 0) {
		live = alive(k.fd);
		if (!live) {
			close(k.fd);
			k.fd = -1;
		}
	}
	if (k.fd < 0) {
		k = (struct task_fd){ .pid = pid, .tid = tid, .name = PIDFD };
		k.fd = open_task(pid, tid, &k.v);
		if (k.fd < 0)
			return k.fd;
		live = alive(k.fd);
	}
	*v = k.v;
	/* Only a task that has not exited: an exit already filed must not
	 * find it again. */
	if (live)
		met_alive(id, tid ? tid : pid, k.v);
	task_fds_give(&id->fds, &k);
	return 0;
}
