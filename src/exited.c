/*
 * exited: a ring of records in arrival order, which makes both the
 * expiry (keep seconds) and the bound (max_tasks) a pop of the oldest,
 * and a hash of their names by (namespace, process number), whose
 * chains are doubly linked so that a record leaves in constant time.
 *
 * A name is a node; node i is name i % EXITED_NAMES of record
 * i / EXITED_NAMES. Links hold a node index plus one, so that 0 is "none"
 * and the arrays start as untouched zero pages. A node whose prev is 0
 * heads its bucket.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exited.h"

#define NSEC_PER_SEC 1000000000ULL
#define LEARNED_SLOTS 16384

struct record {
	struct exited_task t;
	uint64_t added; /* CLOCK_MONOTONIC ns */
	bool kept; /* false once replaced or dropped */
};

struct learned {
	pid_t tid; /* 0: empty */
	struct exited_birth birth;
};

struct exited {
	pthread_mutex_t lock;
	uint64_t keep_ns;
	uint32_t cap; /* max_tasks */
	uint32_t head; /* the ring position written next */
	uint32_t used; /* positions in use, kept or not, oldest first */
	unsigned long long retained, dropped;
	struct record *rec;
	uint32_t *next, *prev; /* per node */
	uint32_t *bucket; /* first node + 1 */
	uint32_t mask;
	struct learned *learned;
};

static uint32_t hash_name(const struct exited *x, uint64_t ns, pid_t tgid)
{
	uint64_t h =
		(ns ^ ((uint64_t)(uint32_t)tgid << 32)) * 0x9e3779b97f4a7c15ULL;

	return (uint32_t)(h >> 32) & x->mask;
}

static const struct exited_name *node_name(const struct exited *x,
					   uint32_t node)
{
	return &x->rec[node / EXITED_NAMES].t.name[node % EXITED_NAMES];
}

int exited_new(unsigned int keep_s, unsigned int max_tasks, struct exited **out)
{
	struct exited *x;
	size_t buckets = 1, nodes;

	if (!keep_s || !max_tasks)
		return -EINVAL;
	while (buckets < max_tasks)
		buckets <<= 1;
	nodes = (size_t)max_tasks * EXITED_NAMES;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->keep_ns = keep_s * NSEC_PER_SEC;
	x->cap = max_tasks;
	x->mask = (uint32_t)buckets - 1;
	x->rec = calloc(max_tasks, sizeof(*x->rec));
	x->next = calloc(nodes, sizeof(*x->next));
	x->prev = calloc(nodes, sizeof(*x->prev));
	x->bucket = calloc(buckets, sizeof(*x->bucket));
	x->learned = calloc(LEARNED_SLOTS, sizeof(*x->learned));
	if (!x->rec || !x->next || !x->prev || !x->bucket || !x->learned) {
		exited_free(x);
		return -ENOMEM;
	}
	pthread_mutex_init(&x->lock, NULL);
	*out = x;
	return 0;
}

void exited_free(struct exited *x)
{
	if (!x)
		return;
	if (x->rec && x->next && x->prev && x->bucket && x->learned)
		pthread_mutex_destroy(&x->lock);
	free(x->rec);
	free(x->next);
	free(x->prev);
	free(x->bucket);
	free(x->learned);
	free(x);
}

static void link_record(struct exited *x, uint32_t r)
{
	const struct exited_task *t = &x->rec[r].t;
	uint32_t j, node, b;

	for (j = 0; j < t->nnames; j++) {
		node = r * EXITED_NAMES + j;
		b = hash_name(x, t->name[j].ns, t->name[j].tgid);
		x->prev[node] = 0;
		x->next[node] = x->bucket[b];
		if (x->bucket[b])
			x->prev[x->bucket[b] - 1] = node + 1;
		x->bucket[b] = node + 1;
	}
}

static void unlink_record(struct exited *x, uint32_t r)
{
	const struct exited_task *t = &x->rec[r].t;
	const struct exited_name *name;
	uint32_t j, node;

	if (!x->rec[r].kept)
		return;
	for (j = 0; j < t->nnames; j++) {
		node = r * EXITED_NAMES + j;
		name = &t->name[j];
		if (x->prev[node])
			x->next[x->prev[node] - 1] = x->next[node];
		else
			x->bucket[hash_name(x, name->ns, name->tgid)] =
				x->next[node];
		if (x->next[node])
			x->prev[x->next[node] - 1] = x->prev[node];
	}
	x->rec[r].kept = false;
	x->retained--;
}

static uint32_t oldest(const struct exited *x)
{
	return (x->head + x->cap - x->used) % x->cap;
}

/* Pop what is past its time (or, with @force, the oldest record). */
static void expire(struct exited *x, uint64_t now, bool force)
{
	struct record *r;

	while (x->used) {
		r = &x->rec[oldest(x)];
		if (force) {
			if (r->kept)
				x->dropped++;
		} else if (r->kept && now - r->added < x->keep_ns) {
			break;
		}
		unlink_record(x, oldest(x));
		x->used--;
		force = false;
	}
}

static bool matches(const struct exited_task *t, const struct exited_name *name,
		    uint64_t ns, pid_t tgid, pid_t tid)
{
	if (name->ns != ns || name->tgid != tgid)
		return false;
	if (!tid)
		return t->flags & EXITED_PROCESS;
	return (t->flags & EXITED_THREAD) && name->tid == tid;
}

/* The node of the kept record named (@ns, @tgid, @tid), or 0. */
static uint32_t lookup(const struct exited *x, uint64_t ns, pid_t tgid,
		       pid_t tid)
{
	uint32_t node = x->bucket[hash_name(x, ns, tgid)];

	for (; node; node = x->next[node - 1]) {
		const struct exited_name *name = node_name(x, node - 1);

		if (matches(&x->rec[(node - 1) / EXITED_NAMES].t, name, ns,
			    tgid, tid))
			return node;
	}
	return 0;
}

static void replace(struct exited *x, const struct exited_task *t)
{
	const struct exited_name *me = &t->name[0];
	uint32_t node;

	if (t->flags & EXITED_PROCESS) {
		node = lookup(x, me->ns, me->tgid, 0);
		if (node)
			unlink_record(x, (node - 1) / EXITED_NAMES);
	}
	if (t->flags & EXITED_THREAD) {
		node = lookup(x, me->ns, me->tgid, me->tid);
		if (node)
			unlink_record(x, (node - 1) / EXITED_NAMES);
	}
}

void exited_add(struct exited *x, const struct exited_task *t, uint64_t now)
{
	struct record *r;

	if (!t->nnames || t->nnames > EXITED_NAMES)
		return;
	pthread_mutex_lock(&x->lock);
	expire(x, now, false);
	replace(x, t);
	if (x->used == x->cap)
		expire(x, now, true);
	r = &x->rec[x->head];
	r->t = *t;
	r->added = now;
	r->kept = true;
	link_record(x, x->head);
	x->head = (x->head + 1) % x->cap;
	x->used++;
	x->retained++;
	pthread_mutex_unlock(&x->lock);
}

int exited_find(struct exited *x, uint64_t ns, pid_t tgid, pid_t tid,
		uint64_t now, struct exited_task *t)
{
	uint32_t node;

	pthread_mutex_lock(&x->lock);
	expire(x, now, false);
	node = lookup(x, ns, tgid, tid);
	if (node)
		*t = x->rec[(node - 1) / EXITED_NAMES].t;
	pthread_mutex_unlock(&x->lock);
	return node ? 0 : -ENOENT;
}

int exited_for_each(struct exited *x, uint64_t ns, pid_t tgid, uint64_t now,
		    int (*fn)(void *ctx, const struct exited_task *t,
			      const struct exited_name *name),
		    void *ctx)
{
	const struct exited_task *t;
	uint32_t i, j, node;
	int ret = 0;

	pthread_mutex_lock(&x->lock);
	expire(x, now, false);
	if (tgid) { /* the threads of one process: its chain */
		node = x->bucket[hash_name(x, ns, tgid)];
		for (; node && !ret; node = x->next[node - 1]) {
			const struct exited_name *name = node_name(x, node - 1);

			t = &x->rec[(node - 1) / EXITED_NAMES].t;
			if (name->ns == ns && name->tgid == tgid &&
			    (t->flags & EXITED_THREAD))
				ret = fn(ctx, t, name);
		}
		goto out;
	}
	for (i = 0; i < x->used && !ret; i++) { /* every process: all */
		struct record *r = &x->rec[(oldest(x) + i) % x->cap];

		if (!r->kept || !(r->t.flags & EXITED_PROCESS))
			continue;
		for (j = 0; j < r->t.nnames; j++)
			if (r->t.name[j].ns == ns) {
				ret = fn(ctx, &r->t, &r->t.name[j]);
				break;
			}
	}
out:
	pthread_mutex_unlock(&x->lock);
	return ret;
}

void exited_set_keep(struct exited *x, unsigned int keep_s)
{
	if (!keep_s)
		return;
	pthread_mutex_lock(&x->lock);
	x->keep_ns = keep_s * NSEC_PER_SEC;
	pthread_mutex_unlock(&x->lock);
}

void exited_counts(struct exited *x, uint64_t now, struct exited_counts *c)
{
	pthread_mutex_lock(&x->lock);
	expire(x, now, false);
	c->keep_s = (unsigned int)(x->keep_ns / NSEC_PER_SEC);
	c->retained = x->retained;
	c->dropped = x->dropped;
	pthread_mutex_unlock(&x->lock);
}

void exited_learn(struct exited *x, pid_t tid, const struct exited_birth *b)
{
	struct learned *l = &x->learned[(uint32_t)tid % LEARNED_SLOTS];

	if (!tid || !b->nnames || b->nnames > EXITED_NAMES)
		return;
	pthread_mutex_lock(&x->lock);
	l->tid = tid;
	l->birth = *b;
	pthread_mutex_unlock(&x->lock);
}

int exited_learned(struct exited *x, pid_t tid, struct exited_birth *b)
{
	struct learned *l = &x->learned[(uint32_t)tid % LEARNED_SLOTS];
	int ret = -ENOENT;

	pthread_mutex_lock(&x->lock);
	if (l->tid == tid && tid) {
		*b = l->birth;
		l->tid = 0;
		ret = 0;
	}
	pthread_mutex_unlock(&x->lock);
	return ret;
}
