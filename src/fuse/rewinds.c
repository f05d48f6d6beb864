/*
 * rewinds: the snapshots of a rewound open file (rewinds.h), in the
 * order they were taken, the newest last, under a lock of their own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "rewinds.h"

struct rewinds {
	pthread_mutex_t lock;
	unsigned int count;
	struct rewind snap[REWINDS_PER_OPEN]; /* oldest first */
};

int rewinds_new(struct rewinds **out)
{
	struct rewinds *rw = calloc(1, sizeof(*rw));

	if (!rw)
		return -ENOMEM;
	pthread_mutex_init(&rw->lock, NULL);
	*out = rw;
	return 0;
}

void rewinds_free(struct rewinds *rw,
		  void (*drop)(void *ctx, const struct rewind *w), void *ctx)
{
	unsigned int i;

	if (!rw)
		return;
	for (i = 0; i < rw->count; i++)
		drop(ctx, &rw->snap[i]);
	pthread_mutex_destroy(&rw->lock);
	free(rw);
}

/* Take snapshot @i out of @rw, keeping the order of the rest. Locked. */
static void take(struct rewinds *rw, unsigned int i, struct rewind *out)
{
	*out = rw->snap[i];
	for (; i + 1 < rw->count; i++)
		rw->snap[i] = rw->snap[i + 1];
	rw->count--;
}

int rewinds_put(struct rewinds *rw, const struct rewind *w, struct rewind *old)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&rw->lock);
	for (i = 0; i < rw->count && rw->snap[i].pid != w->pid; i++)
		;
	if (i < rw->count || rw->count == REWINDS_PER_OPEN) {
		take(rw, i < rw->count ? i : 0, old);
		ret = 1;
	}
	rw->snap[rw->count++] = *w;
	pthread_mutex_unlock(&rw->lock);
	return ret;
}

int rewinds_serve(struct rewinds *rw, pid_t pid,
		  void (*fn)(void *ctx, uint64_t handle), void *ctx)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&rw->lock);
	if (rw->count) {
		for (i = rw->count; i > 1 && rw->snap[i - 1].pid != pid; i--)
			;
		if (rw->snap[i - 1].pid != pid)
			i = rw->count; /* not this thread's: the newest */
		fn(ctx, rw->snap[i - 1].handle);
		ret = 1;
	}
	pthread_mutex_unlock(&rw->lock);
	return ret;
}
