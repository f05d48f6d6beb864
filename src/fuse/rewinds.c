/*
 * rewinds: the snapshots of rewound open files (rewinds.h), in a hash
 * table by open file, each entry the open file's snapshots in the order
 * they were taken, the newest last.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "hash.h"
#include "rewinds.h"

struct rewound {
	struct hash_node node; /* by fh */
	uint64_t fh;
	unsigned int count;
	struct rewind snap[REWINDS_PER_OPEN]; /* oldest first */
};

struct rewinds {
	pthread_mutex_t lock;
	struct hash_table table;
	size_t opens; /* atomic: entries, so that a read of none is free */
};

static uint64_t fh_hash(uint64_t fh)
{
	return hash_mix(fh, 0);
}

/* Open file @fh's entry, or NULL. Locked. */
static struct rewound *find(struct rewinds *rw, uint64_t fh)
{
	struct hash_node *n;
	struct rewound *e;

	for (n = hash_first(&rw->table, fh_hash(fh)); n; n = hash_next(n)) {
		e = container_of(n, struct rewound, node);
		if (e->fh == fh)
			return e;
	}
	return NULL;
}

int rewinds_new(struct rewinds **out)
{
	struct rewinds *rw = calloc(1, sizeof(*rw));

	if (!rw)
		return -ENOMEM;
	pthread_mutex_init(&rw->lock, NULL);
	hash_init(&rw->table);
	*out = rw;
	return 0;
}

struct dropper {
	void (*drop)(void *ctx, const struct rewind *w);
	void *ctx;
};

static bool drop_entry(void *ctx, struct hash_node *n)
{
	struct rewound *e = container_of(n, struct rewound, node);
	struct dropper *d = ctx;
	unsigned int i;

	for (i = 0; i < e->count; i++)
		d->drop(d->ctx, &e->snap[i]);
	free(e);
	return true;
}

void rewinds_free(struct rewinds *rw,
		  void (*drop)(void *ctx, const struct rewind *w), void *ctx)
{
	struct dropper d = { drop, ctx };

	if (!rw)
		return;
	hash_filter(&rw->table, drop_entry, &d);
	hash_destroy(&rw->table);
	pthread_mutex_destroy(&rw->lock);
	free(rw);
}

/* Take snapshot @i out of @e, keeping the order of the rest. */
static void take(struct rewound *e, unsigned int i, struct rewind *out)
{
	*out = e->snap[i];
	for (; i + 1 < e->count; i++)
		e->snap[i] = e->snap[i + 1];
	e->count--;
}

int rewinds_put(struct rewinds *rw, uint64_t fh, const struct rewind *w,
		struct rewind *old)
{
	struct rewound *e;
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&rw->lock);
	e = find(rw, fh);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || hash_add(&rw->table, &e->node, fh_hash(fh)) < 0) {
			free(e);
			pthread_mutex_unlock(&rw->lock);
			return -ENOMEM;
		}
		e->fh = fh;
		__atomic_add_fetch(&rw->opens, 1, __ATOMIC_RELAXED);
	}
	for (i = 0; i < e->count && e->snap[i].pid != w->pid; i++)
		;
	if (i < e->count || e->count == REWINDS_PER_OPEN) {
		take(e, i < e->count ? i : 0, old);
		ret = 1;
	}
	e->snap[e->count++] = *w;
	pthread_mutex_unlock(&rw->lock);
	return ret;
}

int rewinds_serve(struct rewinds *rw, uint64_t fh, pid_t pid,
		  void (*fn)(void *ctx, uint64_t handle), void *ctx)
{
	struct rewound *e;
	unsigned int i;
	int ret = 0;

	if (!__atomic_load_n(&rw->opens, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&rw->lock);
	e = find(rw, fh);
	if (e && e->count) {
		for (i = e->count; i > 1 && e->snap[i - 1].pid != pid; i--)
			;
		if (e->snap[i - 1].pid != pid)
			i = e->count; /* not this thread's: the newest */
		fn(ctx, e->snap[i - 1].handle);
		ret = 1;
	}
	pthread_mutex_unlock(&rw->lock);
	return ret;
}

size_t rewinds_close(struct rewinds *rw, uint64_t fh, struct rewind *out)
{
	struct rewound *e;
	size_t n = 0;

	if (!__atomic_load_n(&rw->opens, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&rw->lock);
	e = find(rw, fh);
	if (e) {
		hash_del(&rw->table, &e->node);
		__atomic_sub_fetch(&rw->opens, 1, __ATOMIC_RELAXED);
		for (n = 0; n < e->count; n++)
			out[n] = e->snap[n];
	}
	pthread_mutex_unlock(&rw->lock);
	free(e);
	return n;
}
