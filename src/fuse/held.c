/*
 * held: the inodes the kernel holds below proc/ (held.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "held.h"

#define HELD_SHARDS 16

struct held_entry {
	struct hash_node node; /* in its shard's table, by ino */
	uint64_t ino;
	uint64_t start;
	uint64_t nlookup;
	unsigned int slot;
	long long cached_until_ms; /* the kernel may walk its cached name */
	pid_t pid, tid; /* a task's directory: the task, daemon's numbers */
};

struct held_shard {
	pthread_mutex_t lock;
	struct hash_table table;
};

struct held {
	struct views *vs;
	size_t total; /* atomic: entries */
	unsigned int cursor; /* atomic: the shard the next sweep starts at */
	struct held_shard shard[HELD_SHARDS];
};

static uint64_t held_hash(uint64_t ino)
{
	return hash_mix(ino, 0);
}

static struct held_shard *held_shard_of(struct held *h, uint64_t ino)
{
	return &h->shard[held_hash(ino) % HELD_SHARDS];
}

/* @ino's entry in its shard @s, or NULL. Called locked. */
static struct held_entry *held_find(struct held_shard *s, uint64_t ino)
{
	/* The shard's own bits left out: each shard's table spreads the
	 * rest over all of its buckets. */
	uint64_t hash = held_hash(ino) / HELD_SHARDS;
	struct hash_node *n;
	struct held_entry *e;

	for (n = hash_first(&s->table, hash); n; n = hash_next(n)) {
		e = container_of(n, struct held_entry, node);
		if (e->ino == ino)
			return e;
	}
	return NULL;
}

int held_new(struct views *vs, struct held **out)
{
	struct held *h = calloc(1, sizeof(*h));
	unsigned int i;

	if (!h)
		return -ENOMEM;
	h->vs = vs;
	for (i = 0; i < HELD_SHARDS; i++) {
		pthread_mutex_init(&h->shard[i].lock, NULL);
		hash_init(&h->shard[i].table);
	}
	*out = h;
	return 0;
}

static bool free_entry(void *ctx, struct hash_node *n)
{
	(void)ctx;
	free(container_of(n, struct held_entry, node));
	return true;
}

void held_free(struct held *h)
{
	unsigned int i;

	if (!h)
		return;
	for (i = 0; i < HELD_SHARDS; i++) {
		hash_filter(&h->shard[i].table, free_entry, NULL);
		hash_destroy(&h->shard[i].table);
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
	struct held_entry *e;
	bool changed = false;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	e = held_find(s, ino);
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
	if (hash_add(&s->table, &e->node, held_hash(ino) / HELD_SHARDS) < 0) {
		free(e);
		ret = -ENOMEM;
		goto out;
	}
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
	struct held_entry *e;
	int ret = -ENOENT;

	pthread_mutex_lock(&s->lock);
	e = held_find(s, ino);
	if (e) {
		*start = e->start;
		if (cached)
			*cached = now_ms() < e->cached_until_ms;
		ret = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void held_forget(struct held *h, uint64_t ino, uint64_t nlookup)
{
	struct held_shard *s = held_shard_of(h, ino);
	struct held_entry *e;

	pthread_mutex_lock(&s->lock);
	e = held_find(s, ino);
	if (e && e->nlookup > nlookup) {
		e->nlookup -= nlookup;
		e = NULL;
	} else if (e) {
		hash_del(&s->table, &e->node);
		__atomic_sub_fetch(&h->total, 1, __ATOMIC_RELAXED);
		views_hold(h->vs, e->slot, -1);
	}
	pthread_mutex_unlock(&s->lock);
	free(e);
}

/* What held_nodes() and held_gone() gather of a shard's entries. */
struct gather {
	const unsigned int *slot; /* held_nodes(): the slots asked */
	unsigned int nslots;
	struct node *out;
	struct held_task {
		uint64_t ino;
		pid_t pid, tid;
	} * task; /* held_gone(): tasks' directories */
	size_t n, max;
};

static bool gather_nodes(void *ctx, struct hash_node *hn)
{
	struct held_entry *e = container_of(hn, struct held_entry, node);
	struct gather *g = ctx;
	unsigned int k;

	if (g->n >= g->max || (e->ino & (1ULL << 63)))
		return false; /* full, or an extra inode: no node */
	for (k = 0; k < g->nslots; k++)
		if (e->slot == g->slot[k]) {
			node_of(e->ino, &g->out[g->n++]);
			break;
		}
	return false;
}

size_t held_nodes(struct held *h, const unsigned int *slot, unsigned int nslots,
		  struct node *out, size_t max)
{
	struct gather g = { slot, nslots, out, NULL, 0, max };
	unsigned int i;

	for (i = 0; i < HELD_SHARDS && g.n < max; i++) {
		pthread_mutex_lock(&h->shard[i].lock);
		hash_filter(&h->shard[i].table, gather_nodes, &g);
		pthread_mutex_unlock(&h->shard[i].lock);
	}
	return g.n;
}

size_t held_count(struct held *h)
{
	return __atomic_load_n(&h->total, __ATOMIC_RELAXED);
}

void held_uncache(struct held *h, uint64_t ino)
{
	struct held_shard *s = held_shard_of(h, ino);
	struct held_entry *e;

	pthread_mutex_lock(&s->lock);
	e = held_find(s, ino);
	if (e)
		e->cached_until_ms = now_ms() + HELD_DROP_GRACE_MS;
	pthread_mutex_unlock(&s->lock);
}

static bool gather_tasks(void *ctx, struct hash_node *hn)
{
	struct held_entry *e = container_of(hn, struct held_entry, node);
	struct gather *g = ctx;

	if (g->n < g->max && e->pid > 0)
		g->task[g->n++] = (struct held_task){ e->ino, e->pid, e->tid };
	return false;
}

size_t held_gone(struct held *h, bool (*gone)(void *ctx, pid_t pid, pid_t tid),
		 void *ctx, struct node *out, size_t max)
{
	struct gather g = { .max = HELD_SWEEP_MAX };
	unsigned int first, k;
	size_t n = 0, j;

	g.task = malloc(HELD_SWEEP_MAX * sizeof(*g.task));
	if (!g.task)
		return 0;
	first = __atomic_fetch_add(&h->cursor, 1, __ATOMIC_RELAXED);
	for (k = 0; k < HELD_SHARDS && n < max; k++) {
		struct held_shard *s = &h->shard[(first + k) % HELD_SHARDS];

		/* The tasks under the shard's lock; asked after it. */
		g.n = 0;
		pthread_mutex_lock(&s->lock);
		hash_filter(&s->table, gather_tasks, &g);
		pthread_mutex_unlock(&s->lock);
		for (j = 0; j < g.n && n < max; j++)
			if (gone(ctx, g.task[j].pid, g.task[j].tid))
				node_of(g.task[j].ino, &out[n++]);
	}
	free(g.task);
	return n;
}
