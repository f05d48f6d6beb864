/*
 * serve: the workers that serve every FUSE session of the daemon.
 *
 * The workers share one epoll set holding every session's descriptor
 * with EPOLLONESHOT: a request wakes one waiting worker, and none is
 * woken for that session again until it is armed again: by its worker
 * when no request of it is left, or by serve_may_block(). An eventfd in
 * the set, always readable once written, stops them all.
 *
 * A request that runs across a whole tick of SERVE_TICK_MS, whatever it
 * waits for, is given up as if it had called serve_may_block(): a
 * watchdog thread, awake only while requests come or are served, marks
 * it given and arms its session, so that the next waiting worker takes
 * the session's next requests. A worker's request is a phase word, its
 * count of requests and whether it is serving or was given up; the
 * watchdog and the worker itself (serve_may_block(), the request's end)
 * change it by compare-and-swap, so exactly one of them decides: a
 * request that ends serving keeps its session, one given up leaves it
 * to the set, armed once, by whoever gave it up.
 *
 * A request takes no lock: on one CPU, a worker woken while another
 * held one would only be put to sleep again, at two context switches.
 * A session is named in the set by its slot and a generation; a worker
 * counts itself in (busy) and then checks that the slot still holds
 * that session, and serve_remove() marks it out and then waits for busy
 * to drop to 0, so that neither misses the other (both sequentially
 * consistent). Slots are never freed while the pool lives; a session
 * removed leaves its slot to the next.
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
#include <time.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "serve.h"

#define STOP_ID UINT64_MAX
#define SESSION_EVENTS (EPOLLIN | EPOLLONESHOT)

/* A worker's phase word: its requests so far << 2 | one of these. */
enum phase { PHASE_IDLE, PHASE_SERVING, PHASE_GIVEN };
#define PHASE_OF(p) ((p)&3U)

#define LOAD(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_SEQ_CST)
#define ADD(p, v) __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST)
#define SUB(p, v) __atomic_sub_fetch(p, v, __ATOMIC_SEQ_CST)

struct served {
	struct fuse_session *se; /* NULL: a free slot */
	void *owner;
	uint64_t key; /* the mount's, in the request slots */
	uint32_t gen;
	unsigned int busy; /* workers inside one of its requests */
	bool out; /* in no epoll set: ended or removed */
	bool ended, taken;
	int error;
};

/* A worker's request, as the watchdog sees it. */
struct worker_req {
	struct serve *sv;
	uint64_t phase; /* enum phase, and the request's count above */
	struct served *s; /* set before the phase says serving */
	uint64_t id;
	uint64_t seen; /* the watchdog's: the phase at its last tick */
};

struct serve {
	pthread_mutex_t lock; /* all but a request's path */
	pthread_cond_t idle_slot; /* a removed session's busy dropped to 0 */
	struct served **slot;
	unsigned int nslots;
	int epfd; /* every session, and stop_fd */
	pthread_t *worker;
	struct worker_req *req; /* one a worker */
	unsigned int workers, max_workers;
	pthread_t watchdog;
	pthread_cond_t wake; /* the watchdog's, under lock */
	bool watching, dozing; /* it runs; it waits for a request */
	uint64_t requests; /* atomic: begun so far, every worker's */
	unsigned int waiting; /* workers waiting in epoll_wait() */
	bool started, stopping;
	int stop_fd; /* readable: every worker returns */
	int ended_fd; /* eventfd: sessions ended, to take */
	/* The request slots (serve_set_slots()), or NULL. */
	char *rslots;
	size_t rslot_bytes;
	unsigned int nrslots;
	serve_init_fn *on_init;
	void *init_arg;
};

/* Count one on the eventfd @fd (full: it is readable anyway). */
static void poke(int fd)
{
	uint64_t one = 1;
	ssize_t n = write(fd, &one, sizeof(one));

	(void)n;
}

static int watch(struct serve *sv, int op, int fd, uint64_t id, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = id };

	return epoll_ctl(sv->epfd, op, fd, &ev) == 0 ? 0 : -errno;
}

/* Take @s out of the set. Called locked. */
static void unwatch(struct serve *sv, struct served *s)
{
	if (LOAD(&s->out))
		return;
	STORE(&s->out, true);
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, fuse_session_fd(s->se), NULL);
}

static void *worker_main(void *arg);

/* One more worker. Called locked. */
static void worker_add(struct serve *sv)
{
	if (sv->workers >= sv->max_workers || sv->stopping ||
	    pthread_create(&sv->worker[sv->workers], NULL, worker_main,
			   &sv->req[sv->workers]))
		return;
	ADD(&sv->workers, 1);
}

/* @s's session ended (@error: 0, or how it failed). */
static void session_ended(struct serve *sv, struct served *s, int error)
{
	pthread_mutex_lock(&sv->lock);
	if (!s->ended) {
		unwatch(sv, s);
		s->ended = true;
		s->error = error;
		poke(sv->ended_fd);
	}
	pthread_mutex_unlock(&sv->lock);
}

/* Count a worker out of @s; serve_remove() may wait for the last. */
static void session_put(struct serve *sv, struct served *s)
{
	if (SUB(&s->busy, 1) == 0 && LOAD(&s->out)) {
		pthread_mutex_lock(&sv->lock);
		pthread_cond_broadcast(&sv->idle_slot);
		pthread_mutex_unlock(&sv->lock);
	}
}

/*
 * The session that event @id names, counted busy; NULL when it has gone
 * (the event raced with its removal).
 */
static struct served *session_get(struct serve *sv, uint64_t id)
{
	uint32_t i = (uint32_t)id;
	struct served *s;

	if (i >= LOAD(&sv->nslots))
		return NULL;
	s = LOAD(&sv->slot[i]);
	ADD(&s->busy, 1);
	if (LOAD(&s->gen) == (uint32_t)(id >> 32) && !LOAD(&s->out))
		return s;
	session_put(sv, s);
	return NULL;
}

/* The request this worker serves: serve_may_block() gives its session up. */
static __thread struct {
	struct serve *sv;
	struct served *s;
	struct worker_req *req;
	bool given_up;
} current;

/* Whether another worker waits; one more is started when none does. */
static void spare_worker(struct serve *sv)
{
	if (LOAD(&sv->waiting) == 0 && LOAD(&sv->workers) < sv->max_workers) {
		pthread_mutex_lock(&sv->lock);
		worker_add(sv);
		pthread_mutex_unlock(&sv->lock);
	}
}

/*
 * Give up the request of @r whose phase word is @phase (serving): mark
 * it given and arm its session for the others. False when the request
 * is no longer that one, serving (it ended, or was given up).
 */
static bool give_up(struct serve *sv, struct worker_req *r, uint64_t phase)
{
	uint64_t given = (phase & ~3ULL) | PHASE_GIVEN;
	struct served *s = LOAD(&r->s);

	if (PHASE_OF(phase) != PHASE_SERVING)
		return false;
	/* Counted in first: the session stays while it is armed. */
	ADD(&s->busy, 1);
	if (!__atomic_compare_exchange_n(&r->phase, &phase, given, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		session_put(sv, s);
		return false;
	}
	if (!LOAD(&s->out))
		watch(sv, EPOLL_CTL_MOD, fuse_session_fd(s->se), LOAD(&r->id),
		      SESSION_EVENTS);
	session_put(sv, s);
	spare_worker(sv);
	return true;
}

void serve_may_block(void)
{
	struct worker_req *r = current.req;

	if (!r || !current.s || current.given_up)
		return;
	give_up(current.sv, r, LOAD(&r->phase));
	current.given_up = true;
}

/* The calling worker begins a request of @s, event @id. */
static void request_begin(struct serve *sv, struct served *s, uint64_t id)
{
	struct worker_req *r = current.req;
	uint64_t phase = LOAD(&r->phase);

	STORE(&r->s, s);
	STORE(&r->id, id);
	STORE(&r->phase, ((phase >> 2) + 1) << 2 | PHASE_SERVING);
	ADD(&sv->requests, 1);
	/* After the count: either the watchdog, going to doze, sees it,
	 * or this sees it dozing. */
	if (LOAD(&sv->dozing)) {
		pthread_mutex_lock(&sv->lock);
		STORE(&sv->dozing, false);
		pthread_cond_signal(&sv->wake);
		pthread_mutex_unlock(&sv->lock);
	}
}

/* It ended: whether the worker holds its session still (not given up). */
static bool request_end(void)
{
	struct worker_req *r = current.req;
	uint64_t phase = LOAD(&r->phase);

	if (PHASE_OF(phase) == PHASE_SERVING &&
	    __atomic_compare_exchange_n(&r->phase, &phase,
					(phase & ~3ULL) | PHASE_IDLE, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return true;
	return false;
}

/*
 * The watchdog: every SERVE_TICK_MS while requests come, each request
 * that was being served at the last tick and still is, is given up.
 * When a tick finds no request begun since the last and none it has not
 * yet seen serving at two ticks, it waits for one: a request that began
 * just before a tick and then hangs, with nothing after it, is still
 * given up at the next.
 */
static void *watchdog_main(void *arg)
{
	struct serve *sv = arg;
	uint64_t last = 0, now, phase;
	struct timespec until;
	unsigned int i, n;
	bool serving = false;

	pthread_mutex_lock(&sv->lock);
	while (!sv->stopping) {
		now = LOAD(&sv->requests);
		if (now == last && !serving) {
			/* Nothing came for a tick: doze, unless one comes
			 * now (request_begin() counts, then looks). */
			STORE(&sv->dozing, true);
			if (LOAD(&sv->requests) == last)
				while (LOAD(&sv->dozing) && !sv->stopping)
					pthread_cond_wait(&sv->wake, &sv->lock);
			STORE(&sv->dozing, false);
		}
		last = LOAD(&sv->requests);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += SERVE_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!sv->stopping &&
		       pthread_cond_timedwait(&sv->wake, &sv->lock, &until) ==
			       0)
			;
		n = sv->workers;
		pthread_mutex_unlock(&sv->lock);
		serving = false;
		for (i = 0; i < n; i++) {
			phase = LOAD(&sv->req[i].phase);
			if (phase == sv->req[i].seen)
				give_up(sv, &sv->req[i], phase);
			else if (PHASE_OF(phase) == PHASE_SERVING)
				serving = true;
			sv->req[i].seen = phase;
		}
		pthread_mutex_lock(&sv->lock);
	}
	pthread_mutex_unlock(&sv->lock);
	return NULL;
}

/*
 * A worker takes a session from the set, disarmed, and serves its
 * requests one after another while they come (the next one has often
 * come by the time the answer to the last is written: its reader needs
 * no other worker woken); when none is left, it arms the session again
 * and waits for any. A request that may take long gives the session up
 * first (serve_may_block()), and the worker then returns to the set.
 */
static void *worker_main(void *arg)
{
	struct worker_req *req = arg;
	struct serve *sv = req->sv;
	struct serve_slot *slot = NULL;
	struct fuse_buf buf = { 0 };
	struct epoll_event ev;
	struct fuse_session *se;
	struct served *s = NULL;
	uint64_t id = 0;
	int n, res;

	current.sv = sv;
	current.req = req;
	if ((unsigned int)(req - sv->req) < sv->nrslots) {
		slot = (struct serve_slot *)(void *)(sv->rslots +
						     (size_t)(req - sv->req) *
							     sv->rslot_bytes);
		buf.mem = slot->req;
	}
	for (;;) {
		if (!s) {
			ADD(&sv->waiting, 1);
			n = epoll_wait(sv->epfd, &ev, 1, -1);
			SUB(&sv->waiting, 1);
			if (n < 0 && errno != EINTR)
				break;
			if (n <= 0)
				continue;
			if (ev.data.u64 == STOP_ID)
				break;
			id = ev.data.u64;
			s = session_get(sv, id);
			if (!s)
				continue;
			spare_worker(sv);
		}
		se = s->se;
		if (slot) {
			STORE(&slot->key, s->key);
			STORE(&slot->len, 0);
		}
		res = fuse_session_receive_buf(se, &buf);
		if (fuse_session_exited(se)) {
			session_ended(sv, s, 0);
		} else if (res < 0 && res != -EAGAIN && res != -EINTR) {
			session_ended(sv, s, res);
		} else if (res > 0) {
			current.s = s;
			current.given_up = false;
			request_begin(sv, s, id);
			if (sv->on_init &&
			    buf.size >= sizeof(struct fuse_in_header) &&
			    ((struct fuse_in_header *)buf.mem)->opcode ==
				    FUSE_INIT)
				sv->on_init(sv->init_arg, s->key, buf.mem,
					    buf.size);
			fuse_session_process_buf(se, &buf);
			if (slot)
				STORE(&slot->len, 0); /* answered */
			current.s = NULL;
			if (!request_end())
				current.given_up = true;
			if (!current.given_up && !LOAD(&s->out) &&
			    !LOAD(&sv->stopping))
				continue; /* it holds the session still */
		} else if (!LOAD(&s->out)) {
			watch(sv, EPOLL_CTL_MOD, fuse_session_fd(se), id,
			      SESSION_EVENTS);
		}
		session_put(sv, s);
		s = NULL;
	}
	if (s)
		session_put(sv, s);
	if (!slot)
		free(buf.mem);
	return NULL;
}

int serve_new(unsigned int max_workers, struct serve **out)
{
	struct serve *sv = calloc(1, sizeof(*sv));
	pthread_condattr_t attr;

	if (!sv)
		return -ENOMEM;
	sv->max_workers = max_workers ? max_workers : 1;
	sv->worker = calloc(sv->max_workers, sizeof(*sv->worker));
	sv->req = calloc(sv->max_workers, sizeof(*sv->req));
	sv->slot = calloc(SERVE_MAX_SESSIONS, sizeof(*sv->slot));
	sv->epfd = epoll_create1(EPOLL_CLOEXEC);
	sv->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sv->ended_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!sv->worker || !sv->req || !sv->slot || sv->epfd < 0 ||
	    sv->stop_fd < 0 || sv->ended_fd < 0 ||
	    watch(sv, EPOLL_CTL_ADD, sv->stop_fd, STOP_ID, EPOLLIN) < 0) {
		if (sv->epfd >= 0)
			close(sv->epfd);
		if (sv->stop_fd >= 0)
			close(sv->stop_fd);
		if (sv->ended_fd >= 0)
			close(sv->ended_fd);
		free(sv->slot);
		free(sv->req);
		free(sv->worker);
		free(sv);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < sv->max_workers; i++)
		sv->req[i].sv = sv;
	pthread_mutex_init(&sv->lock, NULL);
	pthread_cond_init(&sv->idle_slot, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&sv->wake, &attr);
	pthread_condattr_destroy(&attr);
	*out = sv;
	return 0;
}

int serve_start(struct serve *sv)
{
	int ret = 0;

	pthread_mutex_lock(&sv->lock);
	if (!sv->started) {
		worker_add(sv);
		ret = sv->workers ? 0 : -EAGAIN;
		/* With one worker, nobody could take a session given up. */
		if (ret == 0 && sv->max_workers > 1)
			sv->watching = pthread_create(&sv->watchdog, NULL,
						      watchdog_main, sv) == 0;
	}
	sv->started = ret == 0;
	pthread_mutex_unlock(&sv->lock);
	return ret;
}

/* The index of a free slot, made when none is; -1. Called locked. */
static int slot_free(struct serve *sv)
{
	struct served *s;
	unsigned int i;

	for (i = 0; i < sv->nslots; i++)
		if (!sv->slot[i]->se && !LOAD(&sv->slot[i]->busy))
			return (int)i;
	if (sv->nslots == SERVE_MAX_SESSIONS)
		return -1;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->out = true;
	STORE(&sv->slot[sv->nslots], s);
	STORE(&sv->nslots, sv->nslots + 1);
	return (int)i;
}

int serve_add(struct serve *sv, struct fuse_session *se, void *owner,
	      uint64_t key)
{
	int fd = fuse_session_fd(se), flags = fcntl(fd, F_GETFL);
	struct served *s;
	int i, ret;

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	pthread_mutex_lock(&sv->lock);
	i = slot_free(sv);
	if (i < 0) {
		pthread_mutex_unlock(&sv->lock);
		return sv->nslots == SERVE_MAX_SESSIONS ? -EMFILE : -ENOMEM;
	}
	s = sv->slot[i];
	s->se = se;
	s->owner = owner;
	s->key = key;
	s->ended = s->taken = false;
	s->error = 0;
	STORE(&s->gen, s->gen + 1);
	STORE(&s->out, false);
	ret = watch(sv, EPOLL_CTL_ADD, fd, (uint64_t)s->gen << 32 | (uint32_t)i,
		    SESSION_EVENTS);
	if (ret < 0) {
		STORE(&s->out, true);
		s->se = NULL;
	}
	pthread_mutex_unlock(&sv->lock);
	return ret;
}

void serve_remove(struct serve *sv, struct fuse_session *se)
{
	struct served *s = NULL;
	unsigned int i;

	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->nslots && !s; i++)
		if (sv->slot[i]->se == se)
			s = sv->slot[i];
	if (s) {
		unwatch(sv, s);
		while (LOAD(&s->busy))
			pthread_cond_wait(&sv->idle_slot, &sv->lock);
		s->se = NULL;
		s->owner = NULL;
	}
	pthread_mutex_unlock(&sv->lock);
}

void serve_set_slots(struct serve *sv, void *slots, size_t slot_bytes,
		     unsigned int nslots, serve_init_fn *on_init, void *arg)
{
	sv->rslots = slots;
	sv->rslot_bytes = slot_bytes;
	sv->nrslots = slots ? nslots : 0;
	sv->on_init = on_init;
	sv->init_arg = arg;
}

size_t serve_slot_bytes(void)
{
	long page = sysconf(_SC_PAGESIZE);

	if (page <= 0)
		page = 4096;
	/* libfuse reads up to 256 pages and a header page at once. */
	return (size_t)page * (SERVE_REQ_PAGES + 2);
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
		struct served *s = sv->slot[i];

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
	STORE(&sv->stopping, true);
	n = sv->workers;
	pthread_cond_signal(&sv->wake);
	pthread_mutex_unlock(&sv->lock);
	if (sv->watching)
		pthread_join(sv->watchdog, NULL);
	poke(sv->stop_fd);
	for (i = 0; i < n; i++)
		pthread_join(sv->worker[i], NULL);
	close(sv->epfd);
	close(sv->stop_fd);
	close(sv->ended_fd);
	pthread_cond_destroy(&sv->idle_slot);
	pthread_cond_destroy(&sv->wake);
	pthread_mutex_destroy(&sv->lock);
	for (i = 0; i < sv->nslots; i++)
		free(sv->slot[i]);
	free(sv->slot);
	free(sv->req);
	free(sv->worker);
	free(sv);
}

/* What no request of the kernel's is numbered: bit 63 marks a resent
 * one, and the kernel counts from 0 by 2. */
#define SERVE_QUIET_UNIQUE (1ULL << 62)

int serve_replay(struct fuse_session *se, const void *req, size_t len,
		 bool quiet)
{
	struct fuse_buf buf = { .size = len };
	struct fuse_in_header *in;

	if (len < sizeof(*in) ||
	    len != ((const struct fuse_in_header *)req)->len)
		return -EINVAL;
	buf.mem = malloc(len);
	if (!buf.mem)
		return -ENOMEM;
	memcpy(buf.mem, req, len);
	in = buf.mem;
	if (quiet)
		in->unique = SERVE_QUIET_UNIQUE;
	fuse_session_process_buf(se, &buf);
	free(buf.mem);
	return 0;
}

#ifndef FUSE_NOTIFY_RESEND
#define FUSE_NOTIFY_RESEND 7
#endif
#define SERVE_HAS_RESEND_FLAGS2 (1U << (39 - 32))

bool serve_init_has_resend(const void *req, size_t len)
{
	const struct fuse_init_in *init =
		(const void *)((const char *)req +
			       sizeof(struct fuse_in_header));

	if (len < sizeof(struct fuse_in_header) + sizeof(*init))
		return false;
	return init->minor >= 36 && (init->flags & FUSE_INIT_EXT) &&
	       (init->flags2 & SERVE_HAS_RESEND_FLAGS2);
}

int serve_resend(int fd)
{
	struct fuse_out_header out = { .len = sizeof(out),
				       .error = FUSE_NOTIFY_RESEND };

	return write(fd, &out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 :
								      -errno;
}
