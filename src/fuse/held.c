/*
 * held: the inodes the kernel holds below proc/ (held.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "held.h"

#define HELD_SHARDS 16

struct held_entry {
	struct held_entry *next;
	uint64_t ino;
	uint64_t start;
	uint64_t nlookup;
	unsigned int slot;
	long long cached_until_ms; /* the kernel may walk its cached name */
	pid_t pid, tid; /* a task's directory: the task, daemon's numbers */
};

struct held_shard {
	pthread_mutex_t lock;
	struct held_entry **bucket;
	size_t nbuckets; /* a power of two, or 0 */
	size_t count;
};

struct held {
	struct views *vs;
	size_t total; /* atomic: entries */
	unsigned int cursor; /* atomic: the shard the next sweep starts at */
	struct held_shard shard[HELD_SHARDS];
};

static uint64_t held_hash(uint64_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ULL;

	return h ^ h >> 29;
}

static struct held_shard *held_shard_of(struct held *h, uint64_t ino)
{
	return &h->shard[held_hash(ino) % HELD_SHARDS];
}

static struct held_entry **held_bucket(struct held_shard *s, uint64_t ino)
{
	return &s->bucket[(held_hash(ino) / HELD_SHARDS) & (s->nbuckets - 1)];
}

/* The link that points at @ino's entry (NULL at its end if none). */
static struct held_entry **held_find(struct held_shard *s, uint64_t ino)
{
	struct held_entry **p;

	if (!s->nbuckets)
		return NULL;
	for (p = held_bucket(s, ino); *p; p = &(*p)->next)
		if ((*p)->ino == ino)
			return p;
	return p;
}

/* Twice the buckets, once there are more entries than buckets. */
static int held_grow(struct held_shard *s)
{
	size_t n = s->nbuckets ? s->nbuckets * 2 : 64, i;
	struct held_entry **old = s->bucket, *e, *next;
	size_t oldn = s->nbuckets;

	s->bucket = calloc(n, sizeof(*s->bucket));
	if (!s->bucket) {
		s->bucket = old;
		return -ENOMEM;
	}
	s->nbuckets = n;
	for (i = 0; i < oldn; i++)
		for (e = old[i]; e; e = next) {
			next = e->next;
			e->next = *held_bucket(s, e->ino);
			*held_bucket(s, e->ino) = e;
		}
	free(old);
	return 0;
}

int held_new(struct views *vs, struct held **out)
{
	struct held *h = calloc(1, sizeof(*h));
	unsigned int i;

	if (!h)
		return -ENOMEM;
	h->vs = vs;
	for (i = 0; i < HELD_SHARDS; i++)
		pthread_mutex_init(&h->shard[i].lock, NULL);
	*out = h;
	return 0;
}

void held_free(struct held *h)
{
	struct held_entry *e, *next;
	unsigned int i;
	size_t b;

	if (!h)
		return;
	for (i = 0; i < HELD_SHARDS; i++) {
		for (b = 0; b < h->shard[i].nbuckets; b++)
			for (e = h->shard[i].bucket[b]; e; e = next) {
				next = e->next;
				free(e);
			}
		free(h->shard[i].bucket);
		pthread_mutex_destroy(&h->shard[i].lock);
	}
	free(h);
}

/* Monotonic milliseconds. */
static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int held_add(struct held *h, uint64_t ino, unsigned int slot, uint64_t start,
	     pid_t pid, pid_t tid, unsigned int cached_ms, bool *replaced)
{
	struct held_shard *s = held_shard_of(h, ino);
	long long until = now_ms() + cached_ms + HELD_CACHE_SLACK_MS;
	struct held_entry **p, *e;
	bool changed = false;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	if (s->count >= s->nbuckets && held_grow(s) < 0 && !s->nbuckets) {
		ret = -ENOMEM;
		goto out;
	}
	p = held_find(s, ino);
	e = *p;
	if (e) {
		changed = e->start != start;
		e->start = start;
		e->cached_until_ms = until;
		e->pid = pid;
		e->tid = tid;
		e->nlookup++;
		goto out;
	}
	e = malloc(sizeof(*e));
	if (!e) {
		ret = -ENOMEM;
		goto out;
	}
	e->ino = ino;
	e->start = start;
	e->nlookup = 1;
	e->slot = slot;
	e->cached_until_ms = until;
	e->pid = pid;
	e->tid = tid;
	e->next = NULL;
	*p = e;
	s->count++;
	__atomic_add_fetch(&h->total, 1, __ATOMIC_RELAXED);
	/* Under the shard's lock: its forget cannot come first. */
	views_hold(h->vs, slot, 1);
out:
	pthread_mutex_unlock(&s->lock);
	if (replaced)
		*replaced = changed;
	return ret;
}

int held_start(struct held *h, uint64_t ino, uint64_t *start, bool *cached)
{
	struct held_shard *s = held_shard_of(h, ino);
	struct held_entry **p;
	int ret = -ENOENT;

	pthread_mutex_lock(&s->lock);
	p = held_find(s, ino);
	if (p && *p) {
		*start = (*p)->start;
		if (cached)
			*cached = now_ms() < (*p)->cached_until_ms;
		ret = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void held_forget(struct held *h, uint64_t ino, uint64_t nlookup)
{
	struct held_shard *s = held_shard_of(h, ino);
	struct held_entry **p, *e = NULL;

	pthread_mutex_lock(&s->lock);
	p = held_find(s, ino);
	if (p && *p) {
		if ((*p)->nlookup > nlookup) {
			(*p)->nlookup -= nlookup;
		} else {
			e = *p;
			*p = e->next;
			s->count--;
			__atomic_sub_fetch(&h->total, 1, __ATOMIC_RELAXED);
			views_hold(h->vs, e->slot, -1);
		}
	}
	pthread_mutex_unlock(&s->lock);
	free(e);
}

size_t held_nodes(struct held *h, const unsigned int *slot, unsigned int nslots,
		  struct node *out, size_t max)
{
	struct held_entry *e;
	unsigned int i, k;
	size_t n = 0, b;

	for (i = 0; i < HELD_SHARDS && n < max; i++) {
		pthread_mutex_lock(&h->shard[i].lock);
		for (b = 0; b < h->shard[i].nbuckets && n < max; b++)
			for (e = h->shard[i].bucket[b]; e && n < max;
			     e = e->next) {
				if (e->ino & (1ULL << 63))
					continue; /* an extra inode: no node */
				for (k = 0; k < nslots; k++)
					if (e->slot == slot[k])
						break;
				if (k < nslots)
					node_of(e->ino, &out[n++]);
			}
		pthread_mutex_unlock(&h->shard[i].lock);
	}
	return n;
}

size_t held_count(struct held *h)
{
	return __atomic_load_n(&h->total, __ATOMIC_RELAXED);
}

/* Whether task (@pid, @tid) has exited: no thread @tid in group @pid. */
static bool task_gone(pid_t pid, pid_t tid)
{
	return syscall(SYS_tgkill, pid, tid ? tid : pid, 0) < 0 &&
	       errno == ESRCH;
}

void held_uncache(struct held *h, uint64_t ino)
{
	struct held_shard *s = held_shard_of(h, ino);
	struct held_entry **p;

	pthread_mutex_lock(&s->lock);
	p = held_find(s, ino);
	if (p && *p)
		(*p)->cached_until_ms = now_ms() + HELD_DROP_GRACE_MS;
	pthread_mutex_unlock(&s->lock);
}

size_t held_gone(struct held *h, struct node *out, size_t max)
{
	struct held_task {
		uint64_t ino;
		pid_t pid, tid;
	} * task;
	unsigned int first, k;
	struct held_entry *e;
	size_t n = 0, count, j, b;

	task = malloc(HELD_SWEEP_MAX * sizeof(*task));
	if (!task)
		return 0;
	first = __atomic_fetch_add(&h->cursor, 1, __ATOMIC_RELAXED);
	for (k = 0; k < HELD_SHARDS && n < max; k++) {
		struct held_shard *s = &h->shard[(first + k) % HELD_SHARDS];

		/* The tasks under the shard's lock; asked after it. */
		count = 0;
		pthread_mutex_lock(&s->lock);
		for (b = 0; b < s->nbuckets && count < HELD_SWEEP_MAX; b++)
			for (e = s->bucket[b]; e && count < HELD_SWEEP_MAX;
			     e = e->next)
				if (e->pid > 0)
					task[count++] = (struct held_task){
						e->ino, e->pid, e->tid
					};
		pthread_mutex_unlock(&s->lock);
		for (j = 0; j < count && n < max; j++)
			if (task_gone(task[j].pid, task[j].tid))
				node_of(task[j].ino, &out[n++]);
	}
	free(task);
	return n;
}
