/*
 * exited: a ring of records in arrival order, which makes both the
 * expiry (keep seconds) and the bound (max_tasks) a pop of the oldest,
 * and two hashes of their names, whose chains are doubly linked so that
 * a record leaves in constant time:
 *
 * - by task, (namespace, process, thread), where a process record (one
 *   of a process of one thread included) is keyed by thread 0: a lookup
 *   walks the names of one task, however many threads its process had;
 * - by process, (namespace, process): a listing of the threads of one
 *   process walks that process's names.
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
#include "hash.h"
#include "units.h"

#define LEARNED_SLOTS 16384

struct kept_task {
	struct exited_task t;
	uint64_t added; /* CLOCK_MONOTONIC ns */
	bool kept; /* false once replaced or dropped */
};

struct learned {
	pid_t tid; /* 0: empty */
	struct exited_birth birth;
};

/* One hash of the nodes: their links, and the first node + 1 of each
 * bucket. */
struct chains {
	uint32_t *next, *prev; /* per node */
	uint32_t *bucket;
};

struct exited {
	pthread_mutex_t lock;
	uint64_t keep_ns;
	uint32_t cap; /* max_tasks */
	uint32_t head; /* the ring position written next */
	uint32_t used; /* positions in use, kept or not, oldest first */
	unsigned long long retained, dropped, steps;
	struct kept_task *rec;
	struct chains by_task, by_process;
	uint32_t mask;
	struct learned *learned;
};

static uint32_t hash3(const struct exited *x, uint64_t ns, pid_t tgid,
		      pid_t tid)
{
	uint64_t h = hash_golden(ns);

	h ^= ((uint64_t)(uint32_t)tgid << 32 | (uint32_t)tid) *
	     0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return (uint32_t)(h >> 32) & x->mask;
}

/* The bucket of @name of @t in the hash by task. */
static uint32_t task_bucket(const struct exited *x, const struct exited_task *t,
			    const struct exited_name *name)
{
	pid_t tid = t->flags & EXITED_PROCESS ? 0 : name->tid;

	return hash3(x, name->ns, name->tgid, tid);
}

/* The bucket of @name in the hash by process. */
static uint32_t process_bucket(const struct exited *x,
			       const struct exited_name *name)
{
	return hash3(x, name->ns, name->tgid, 0);
}

static const struct exited_name *node_name(const struct exited *x,
					   uint32_t node)
{
	return &x->rec[node / EXITED_NAMES].t.name[node % EXITED_NAMES];
}

static int chains_new(struct chains *c, size_t nodes, size_t buckets)
{
	c->next = calloc(nodes, sizeof(*c->next));
	c->prev = calloc(nodes, sizeof(*c->prev));
	c->bucket = calloc(buckets, sizeof(*c->bucket));
	return c->next && c->prev && c->bucket ? 0 : -ENOMEM;
}

static void chains_free(struct chains *c)
{
	free(c->next);
	free(c->prev);
	free(c->bucket);
}

int exited_new(unsigned int keep_s, unsigned int max_tasks, struct exited **out)
{
	struct exited *x;
	size_t buckets = 1, nodes;
	bool ok;

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
	x->learned = calloc(LEARNED_SLOTS, sizeof(*x->learned));
	ok = chains_new(&x->by_task, nodes, buckets) == 0;
	ok = chains_new(&x->by_process, nodes, buckets) == 0 && ok;
	if (!ok || !x->rec || !x->learned) {
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
	/* exited_new inits the lock last, once everything is there. */
	if (x->rec && x->learned && x->by_task.bucket && x->by_process.bucket &&
	    x->by_task.next && x->by_task.prev && x->by_process.next &&
	    x->by_process.prev)
		pthread_mutex_destroy(&x->lock);
	free(x->rec);
	chains_free(&x->by_task);
	chains_free(&x->by_process);
	free(x->learned);
	free(x);
}

static void chain_link(struct chains *c, uint32_t b, uint32_t node)
{
	c->prev[node] = 0;
	c->next[node] = c->bucket[b];
	if (c->bucket[b])
		c->prev[c->bucket[b] - 1] = node + 1;
	c->bucket[b] = node + 1;
}

static void chain_unlink(struct chains *c, uint32_t b, uint32_t node)
{
	if (c->prev[node])
		c->next[c->prev[node] - 1] = c->next[node];
	else
		c->bucket[b] = c->next[node];
	if (c->next[node])
		c->prev[c->next[node] - 1] = c->prev[node];
}

/* Name @j of record @r into the hashes, or out of them. Locked. */
static void link_name(struct exited *x, uint32_t r, uint32_t j)
{
	const struct exited_task *t = &x->rec[r].t;

	chain_link(&x->by_task, task_bucket(x, t, &t->name[j]),
		   r * EXITED_NAMES + j);
	chain_link(&x->by_process, process_bucket(x, &t->name[j]),
		   r * EXITED_NAMES + j);
}

static void unlink_name(struct exited *x, uint32_t r, uint32_t j)
{
	const struct exited_task *t = &x->rec[r].t;

	chain_unlink(&x->by_task, task_bucket(x, t, &t->name[j]),
		     r * EXITED_NAMES + j);
	chain_unlink(&x->by_process, process_bucket(x, &t->name[j]),
		     r * EXITED_NAMES + j);
}

static void link_record(struct exited *x, uint32_t r)
{
	uint32_t j;

	for (j = 0; j < x->rec[r].t.nnames; j++)
		link_name(x, r, j);
}

static void unlink_record(struct exited *x, uint32_t r)
{
	uint32_t j;

	if (!x->rec[r].kept)
		return;
	for (j = 0; j < x->rec[r].t.nnames; j++)
		unlink_name(x, r, j);
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
	struct kept_task *r;

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

/* In the chain of bucket @b by task: the node of the kept record named
 * (@ns, @tgid, @tid), or 0. */
static uint32_t lookup_in(struct exited *x, uint32_t b, uint64_t ns, pid_t tgid,
			  pid_t tid)
{
	uint32_t node = x->by_task.bucket[b];

	for (; node; node = x->by_task.next[node - 1]) {
		const struct exited_name *name = node_name(x, node - 1);

		x->steps++;
		if (matches(&x->rec[(node - 1) / EXITED_NAMES].t, name, ns,
			    tgid, tid))
			return node;
	}
	return 0;
}

/*
 * The node of the kept record named (@ns, @tgid, @tid), or 0. A thread
 * is a thread record, keyed by its number, or a process of one thread,
 * keyed as its process.
 */
static uint32_t lookup(struct exited *x, uint64_t ns, pid_t tgid, pid_t tid)
{
	uint32_t node = lookup_in(x, hash3(x, ns, tgid, tid), ns, tgid, tid);

	if (!node && tid)
		node = lookup_in(x, hash3(x, ns, tgid, 0), ns, tgid, tid);
	return node;
}

/*
 * Record @r loses its name @k (not its first, the daemon's), which
 * another task's record takes: its last name takes the place. Locked.
 */
static void drop_name(struct exited *x, uint32_t r, uint32_t k)
{
	struct exited_task *t = &x->rec[r].t;
	uint32_t last = t->nnames - 1;

	unlink_name(x, r, k);
	if (k != last) {
		unlink_name(x, r, last);
		t->name[k] = t->name[last];
		link_name(x, r, k);
	}
	t->nnames--;
}

/*
 * A name in a namespace below the daemon's that @t has: another
 * record's no longer. The number was taken since (or the namespace's
 * inode number, given again once that namespace was gone): a walk
 * names the task that had it last. Locked.
 */
static void take_names(struct exited *x, const struct exited_task *t)
{
	const struct exited_name *n;
	uint32_t j, node, r;

	for (j = 1; j < t->nnames; j++) {
		n = &t->name[j];
		node = lookup(x, n->ns, n->tgid,
			      t->flags & EXITED_PROCESS ? 0 : n->tid);
		r = node ? (node - 1) / EXITED_NAMES : 0;
		if (node && (node - 1) % EXITED_NAMES)
			drop_name(x, r, (node - 1) % EXITED_NAMES);
	}
}

void exited_forget_ns(struct exited *x, uint64_t ns)
{
	uint32_t r, j;

	pthread_mutex_lock(&x->lock);
	for (r = 0; r < x->cap; r++) {
		if (!x->rec[r].kept)
			continue;
		for (j = x->rec[r].t.nnames; j-- > 1;)
			if (x->rec[r].t.name[j].ns == ns)
				drop_name(x, r, j);
	}
	pthread_mutex_unlock(&x->lock);
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
	take_names(x, t);
}

void exited_add(struct exited *x, const struct exited_task *t, uint64_t now)
{
	struct kept_task *r;

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
		node = x->by_process.bucket[process_bucket(
			x, &(struct exited_name){ ns, tgid, 0 })];
		for (; node && !ret; node = x->by_process.next[node - 1]) {
			const struct exited_name *name = node_name(x, node - 1);

			t = &x->rec[(node - 1) / EXITED_NAMES].t;
			if (name->ns == ns && name->tgid == tgid &&
			    (t->flags & EXITED_THREAD))
				ret = fn(ctx, t, name);
		}
		goto out;
	}
	for (i = 0; i < x->used && !ret; i++) { /* every process: all */
		struct kept_task *r = &x->rec[(oldest(x) + i) % x->cap];

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
	c->steps = x->steps;
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
