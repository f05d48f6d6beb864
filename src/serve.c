/*
 * serve: the workers that serve every FUSE session of the daemon.
 *
 * The workers share one epoll set holding every session's descriptor
 * with EPOLLONESHOT: a request wakes one waiting worker, and no other
 * is woken for that session until that worker has taken the request
 * and armed the descriptor again, before answering it (so that the
 * next request may be taken meanwhile). No worker is woken for a
 * request another one took. An eventfd in the set, always readable
 * once written, stops them all. A session is named in the set by its
 * slot and a generation, so that an event that raced with its removal
 * finds it gone rather than another in its place.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "serve.h"

#define STOP_ID UINT64_MAX

struct served {
	struct fuse_session *se; /* NULL: a free slot */
	void *owner;
	uint32_t gen;
	unsigned int busy; /* workers inside one of its requests */
	bool out; /* in no epoll set: ended or removed */
	bool ended, taken;
	int error;
};

#define SESSION_EVENTS (EPOLLIN | EPOLLONESHOT)

struct serve {
	pthread_mutex_t lock;
	pthread_cond_t idle_slot; /* a served's busy dropped */
	struct served *slot;
	unsigned int nslots;
	int epfd; /* every session, and stop_fd */
	pthread_t *worker;
	unsigned int workers, max_workers;
	unsigned int waiting; /* workers not inside a request */
	bool started, stopping;
	int stop_fd; /* readable: every worker returns */
	int ended_fd; /* eventfd: sessions ended, to take */
};

/* Count one on the eventfd @fd (full: it is readable anyway). */
static void poke(int fd)
{
	uint64_t one = 1;
	ssize_t n = write(fd, &one, sizeof(one));

	(void)n;
}

static uint64_t slot_id(const struct serve *sv, const struct served *s)
{
	return (uint64_t)s->gen << 32 | (uint64_t)(s - sv->slot);
}

static struct served *slot_of(struct serve *sv, uint64_t id)
{
	uint32_t i = (uint32_t)id;

	if (i >= sv->nslots || !sv->slot[i].se ||
	    sv->slot[i].gen != (uint32_t)(id >> 32))
		return NULL;
	return &sv->slot[i];
}

static int watch(struct serve *sv, int op, int fd, uint64_t id, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = id };

	return epoll_ctl(sv->epfd, op, fd, &ev) == 0 ? 0 : -errno;
}

/* Take @s out of the set. Called locked. */
static void unwatch(struct serve *sv, struct served *s)
{
	if (s->out)
		return;
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, fuse_session_fd(s->se), NULL);
	s->out = true;
}

static void *worker_main(void *arg);

/* One more worker. Called locked. */
static int worker_add(struct serve *sv)
{
	int ret;

	ret = -pthread_create(&sv->worker[sv->workers], NULL, worker_main, sv);
	if (ret < 0)
		return ret;
	sv->workers++;
	sv->waiting++;
	return 0;
}

/* @s's session ended (@error: 0, or how it failed). Called locked. */
static void session_ended(struct serve *sv, struct served *s, int error)
{
	if (s->ended)
		return;
	unwatch(sv, s);
	s->ended = true;
	s->error = error;
	poke(sv->ended_fd);
}

static void *worker_main(void *arg)
{
	struct serve *sv = arg;
	struct fuse_buf buf = { 0 };
	struct epoll_event ev;
	struct fuse_session *se;
	struct served *s;
	int n, res;

	for (;;) {
		n = epoll_wait(sv->epfd, &ev, 1, -1);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (ev.data.u64 == STOP_ID)
			break;
		pthread_mutex_lock(&sv->lock);
		s = slot_of(sv, ev.data.u64);
		if (!s || s->out) {
			pthread_mutex_unlock(&sv->lock);
			continue;
		}
		s->busy++;
		se = s->se;
		pthread_mutex_unlock(&sv->lock);

		res = fuse_session_receive_buf(se, &buf);

		pthread_mutex_lock(&sv->lock);
		if (fuse_session_exited(se))
			session_ended(sv, s, 0);
		else if (res < 0 && res != -EAGAIN && res != -EINTR)
			session_ended(sv, s, res);
		else if (!s->out)
			watch(sv, EPOLL_CTL_MOD, fuse_session_fd(se),
			      ev.data.u64, SESSION_EVENTS);
		if (res > 0) {
			/* The last one waiting takes it: another waits. */
			if (--sv->waiting == 0 &&
			    sv->workers < sv->max_workers && !sv->stopping)
				worker_add(sv);
			pthread_mutex_unlock(&sv->lock);
			fuse_session_process_buf(se, &buf);
			pthread_mutex_lock(&sv->lock);
			sv->waiting++;
		}
		if (--s->busy == 0)
			pthread_cond_broadcast(&sv->idle_slot);
		pthread_mutex_unlock(&sv->lock);
	}
	free(buf.mem);
	return NULL;
}

int serve_new(unsigned int max_workers, struct serve **out)
{
	struct serve *sv = calloc(1, sizeof(*sv));

	if (!sv)
		return -ENOMEM;
	sv->max_workers = max_workers ? max_workers : 1;
	sv->worker = calloc(sv->max_workers, sizeof(*sv->worker));
	sv->epfd = epoll_create1(EPOLL_CLOEXEC);
	sv->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sv->ended_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!sv->worker || sv->epfd < 0 || sv->stop_fd < 0 ||
	    sv->ended_fd < 0 ||
	    watch(sv, EPOLL_CTL_ADD, sv->stop_fd, STOP_ID, EPOLLIN) < 0) {
		if (sv->epfd >= 0)
			close(sv->epfd);
		if (sv->stop_fd >= 0)
			close(sv->stop_fd);
		if (sv->ended_fd >= 0)
			close(sv->ended_fd);
		free(sv->worker);
		free(sv);
		return -ENOMEM;
	}
	pthread_mutex_init(&sv->lock, NULL);
	pthread_cond_init(&sv->idle_slot, NULL);
	*out = sv;
	return 0;
}

int serve_start(struct serve *sv)
{
	int ret = 0;

	pthread_mutex_lock(&sv->lock);
	if (!sv->started)
		ret = worker_add(sv);
	sv->started = ret == 0;
	pthread_mutex_unlock(&sv->lock);
	return ret;
}

int serve_add(struct serve *sv, struct fuse_session *se, void *owner)
{
	int fd = fuse_session_fd(se), flags = fcntl(fd, F_GETFL);
	struct served *s = NULL, *grown;
	unsigned int i;
	int ret = 0;

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->nslots && !s; i++)
		if (!sv->slot[i].se && !sv->slot[i].busy)
			s = &sv->slot[i];
	if (!s) {
		grown = realloc(sv->slot,
				(sv->nslots * 2 + 4) * sizeof(*grown));
		if (!grown) {
			pthread_mutex_unlock(&sv->lock);
			return -ENOMEM;
		}
		memset(grown + sv->nslots, 0,
		       (sv->nslots + 4) * sizeof(*grown));
		sv->slot = grown;
		s = &sv->slot[sv->nslots];
		sv->nslots = sv->nslots * 2 + 4;
	}
	s->se = se;
	s->owner = owner;
	s->gen++;
	s->out = s->ended = s->taken = false;
	s->error = 0;
	ret = watch(sv, EPOLL_CTL_ADD, fd, slot_id(sv, s), SESSION_EVENTS);
	if (ret < 0)
		s->se = NULL;
	pthread_mutex_unlock(&sv->lock);
	return ret;
}

static struct served *slot_by_session(struct serve *sv, struct fuse_session *se)
{
	unsigned int i;

	for (i = 0; i < sv->nslots; i++)
		if (sv->slot[i].se == se)
			return &sv->slot[i];
	return NULL;
}

void serve_remove(struct serve *sv, struct fuse_session *se)
{
	struct served *s;

	pthread_mutex_lock(&sv->lock);
	s = slot_by_session(sv, se);
	if (s) {
		unwatch(sv, s);
		while (s->busy)
			pthread_cond_wait(&sv->idle_slot, &sv->lock);
		s->se = NULL;
		s->owner = NULL;
	}
	pthread_mutex_unlock(&sv->lock);
}

int serve_ended_fd(const struct serve *sv)
{
	return sv->ended_fd;
}

void *serve_take_ended(struct serve *sv, int *error)
{
	void *owner = NULL;
	uint64_t count;
	unsigned int i;
	ssize_t n;

	pthread_mutex_lock(&sv->lock);
	n = read(sv->ended_fd, &count, sizeof(count)); /* the scan tells */
	(void)n;
	for (i = 0; i < sv->nslots && !owner; i++) {
		struct served *s = &sv->slot[i];

		if (s->se && s->ended && !s->taken) {
			s->taken = true;
			owner = s->owner;
			*error = s->error;
		}
	}
	pthread_mutex_unlock(&sv->lock);
	return owner;
}

void serve_free(struct serve *sv)
{
	unsigned int i, n;

	if (!sv)
		return;
	pthread_mutex_lock(&sv->lock);
	sv->stopping = true;
	n = sv->workers;
	pthread_mutex_unlock(&sv->lock);
	poke(sv->stop_fd);
	for (i = 0; i < n; i++)
		pthread_join(sv->worker[i], NULL);
	close(sv->epfd);
	close(sv->stop_fd);
	close(sv->ended_fd);
	pthread_cond_destroy(&sv->idle_slot);
	pthread_mutex_destroy(&sv->lock);
	free(sv->slot);
	free(sv->worker);
	free(sv);
}
