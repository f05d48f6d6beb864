/*
 * taskfd: the task files the engine keeps open (taskfd.h).
 */
#include <unistd.h>

#include "hash.h"
#include "taskfd.h"

void task_fds_init(struct task_fds *c)
{
	pthread_mutex_init(&c->lock, NULL);
	for (size_t i = 0; i < TASK_FDS; i++)
		c->fds[i].fd = -1;
}

void task_fds_destroy(struct task_fds *c)
{
	for (size_t i = 0; i < TASK_FDS; i++)
		if (c->fds[i].fd >= 0)
			close(c->fds[i].fd);
	pthread_mutex_destroy(&c->lock);
}

static struct task_fd *slot(struct task_fds *c, pid_t pid, pid_t tid,
			    const char *name)
{
	uint64_t h = hash_golden((uint32_t)pid) ^
		     ((uint64_t)(uint32_t)tid * 0xc2b2ae3d27d4eb4fULL) ^
		     (uint64_t)(uintptr_t)name;

	return &c->fds[(h ^ h >> 32) % TASK_FDS];
}

void task_fds_take(struct task_fds *c, pid_t pid, pid_t tid, const char *name,
		   struct task_fd *out)
{
	struct task_fd *s = slot(c, pid, tid, name);

	out->fd = -1;
	pthread_mutex_lock(&c->lock);
	if (s->fd >= 0 && s->pid == pid && s->tid == tid && s->name == name) {
		*out = *s;
		s->fd = -1;
	}
	pthread_mutex_unlock(&c->lock);
}

void task_fds_give(struct task_fds *c, const struct task_fd *k)
{
	struct task_fd *s = slot(c, k->pid, k->tid, k->name);
	int old;

	pthread_mutex_lock(&c->lock);
	old = s->fd;
	*s = *k;
	pthread_mutex_unlock(&c->lock);
	if (old >= 0)
		close(old);
}

uint64_t task_fds_opened(struct task_fds *c)
{
	return __atomic_fetch_add(&c->opens, 1, __ATOMIC_SEQ_CST);
}

uint64_t task_fds_mark(struct task_fds *c)
{
	return __atomic_load_n(&c->opens, __ATOMIC_SEQ_CST);
}

void task_fds_stamp(struct task_fds *c, pid_t pid, pid_t tid, uint64_t start,
		    uint64_t mark)
{
	static const char *const names[] = { "schedstat", "status", "stat" };
	struct task_fd *s;
	size_t i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		s = slot(c, pid, tid, names[i]);
		if (s->fd >= 0 && s->pid == pid && s->tid == tid &&
		    s->name == names[i] && !s->start && s->opened < mark)
			s->maybe = start;
	}
	pthread_mutex_unlock(&c->lock);
}

unsigned int task_fds_close(struct task_fds *c)
{
	unsigned int n = 0;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < TASK_FDS; i++)
		if (c->fds[i].fd >= 0) {
			close(c->fds[i].fd);
			c->fds[i].fd = -1;
			n++;
		}
	pthread_mutex_unlock(&c->lock);
	return n;
}
