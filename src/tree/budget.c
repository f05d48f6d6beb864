/*
 * budget: the readers' records, a chained hash table by (namespace,
 * uid) under one lock, grown as readers come; a record goes with its
 * last reference. What a reader and all readers hold are atomic
 * counters, charged and given back without the lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "budget.h"
#include "log.h"

#define MIB ((size_t)1 << 20)

struct refused {
	uint64_t id; /* 0: none */
	size_t bytes;
};

struct budget_reader {
	struct budget_reader *next; /* in its chain */
	uint64_t ns;
	uid_t uid;
	bool host_root;
	size_t refs; /* under the lock, or atomically while one is held */
	size_t bytes; /* atomic */
	long long logged_s; /* atomic: its last log line */
	unsigned int refused_next; /* atomic */
	struct refused refused[BUDGET_REFUSED]; /* atomic fields: a hint */
};

static struct {
	pthread_mutex_t lock;
	struct budget_reader **bucket;
	size_t nbuckets, count;
	size_t reader_max, total_max; /* atomic */
	size_t total; /* atomic */
	long long total_logged_s; /* atomic */
} budget = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.reader_max = BUDGET_READER_MIB_DEFAULT * MIB,
	.total_max = BUDGET_TOTAL_MIB_DEFAULT * MIB,
};

static long long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec;
}

void budget_set_limits(size_t reader_bytes, size_t total_bytes)
{
	__atomic_store_n(&budget.reader_max, reader_bytes ? reader_bytes : 1,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&budget.total_max, total_bytes ? total_bytes : 1,
			 __ATOMIC_RELAXED);
}

static size_t bucket_of(uint64_t ns, uid_t uid, size_t nbuckets)
{
	uint64_t h = (ns * 0x9e3779b97f4a7c15ULL) ^
		     ((uint64_t)uid * 0xc2b2ae3d27d4eb4fULL);

	return (size_t)(h ^ (h >> 29)) & (nbuckets - 1);
}

/* Twice the buckets (64 at first). Called locked; fails harmlessly. */
static void grow_locked(void)
{
	size_t n = budget.nbuckets ? budget.nbuckets * 2 : 64, i;
	struct budget_reader **bucket = calloc(n, sizeof(*bucket)), *r;

	if (!bucket)
		return;
	for (i = 0; i < budget.nbuckets; i++)
		while ((r = budget.bucket[i])) {
			budget.bucket[i] = r->next;
			r->next = bucket[bucket_of(r->ns, r->uid, n)];
			bucket[bucket_of(r->ns, r->uid, n)] = r;
		}
	free(budget.bucket);
	budget.bucket = bucket;
	budget.nbuckets = n;
}

struct budget_reader *budget_reader_get(uint64_t ns, uid_t uid, bool host_root)
{
	struct budget_reader *r = NULL, **head;

	pthread_mutex_lock(&budget.lock);
	if (budget.count >= budget.nbuckets * 2)
		grow_locked();
	if (!budget.nbuckets)
		goto out;
	head = &budget.bucket[bucket_of(ns, uid, budget.nbuckets)];
	for (r = *head; r; r = r->next)
		if (r->ns == ns && r->uid == uid)
			break;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			goto out;
		r->ns = ns;
		r->uid = uid;
		r->host_root = host_root;
		r->next = *head;
		*head = r;
		budget.count++;
	}
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
out:
	pthread_mutex_unlock(&budget.lock);
	return r;
}

void budget_reader_put(struct budget_reader *r)
{
	struct budget_reader **p;

	if (!r)
		return;
	pthread_mutex_lock(&budget.lock);
	if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		p = &budget.bucket[bucket_of(r->ns, r->uid, budget.nbuckets)];
		while (*p != r)
			p = &(*p)->next;
		*p = r->next;
		budget.count--;
		free(r);
	}
	pthread_mutex_unlock(&budget.lock);
}

/* Whether the time has come for another log line; @at is its clock. */
static bool log_due(long long *at)
{
	long long now = now_s(), last = __atomic_load_n(at, __ATOMIC_RELAXED);

	return (last == 0 || now - last >= BUDGET_LOG_S) &&
	       __atomic_compare_exchange_n(at, &last, now, false,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Say that @r was refused @bytes more: past its own budget or the total. */
static void log_refusal(struct budget_reader *r, size_t bytes, bool total)
{
	if (!log_due(&r->logged_s))
		return;
	if (total)
		log_msg(LOG_WARNING,
			"memory: snapshots of all readers at their budget "
			"([limits] total_snapshots, %zu MiB): uid %u of PID "
			"namespace %llu refused %zu bytes (ENOMEM)",
			__atomic_load_n(&budget.total_max, __ATOMIC_RELAXED) /
				MIB,
			(unsigned int)r->uid, (unsigned long long)r->ns, bytes);
	else
		log_msg(LOG_WARNING,
			"memory: uid %u of PID namespace %llu at its budget "
			"([limits] reader_snapshots, %zu MiB, %zu bytes held): "
			"refused %zu bytes (ENOMEM)",
			(unsigned int)r->uid, (unsigned long long)r->ns,
			__atomic_load_n(&budget.reader_max, __ATOMIC_RELAXED) /
				MIB,
			__atomic_load_n(&r->bytes, __ATOMIC_RELAXED), bytes);
}

/* Whether @bytes more fit @r's budget; *@total: not the total's. */
static bool fits(const struct budget_reader *r, size_t bytes, bool *total)
{
	size_t held = __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
	size_t all = __atomic_load_n(&budget.total, __ATOMIC_RELAXED);

	*total = false;
	if (held + bytes >
	    __atomic_load_n(&budget.reader_max, __ATOMIC_RELAXED))
		return false;
	*total = !r->host_root &&
		 all + bytes >
			 __atomic_load_n(&budget.total_max, __ATOMIC_RELAXED);
	return !*total;
}

int budget_admit(struct budget_reader *r, uint64_t id)
{
	size_t need = 1;
	bool total;
	int i;

	if (!r)
		return 0;
	for (i = 0; i < BUDGET_REFUSED; i++)
		if (id &&
		    __atomic_load_n(&r->refused[i].id, __ATOMIC_RELAXED) == id)
			need = __atomic_load_n(&r->refused[i].bytes,
					       __ATOMIC_RELAXED);
	if (fits(r, need, &total))
		return 0;
	log_refusal(r, need, total);
	return -ENOMEM;
}

static void remember_refusal(struct budget_reader *r, uint64_t id, size_t bytes)
{
	unsigned int i;

	if (!id)
		return;
	for (i = 0; i < BUDGET_REFUSED; i++)
		if (__atomic_load_n(&r->refused[i].id, __ATOMIC_RELAXED) == id)
			break;
	if (i == BUDGET_REFUSED)
		i = __atomic_fetch_add(&r->refused_next, 1, __ATOMIC_RELAXED) %
		    BUDGET_REFUSED;
	__atomic_store_n(&r->refused[i].bytes, bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&r->refused[i].id, id, __ATOMIC_RELAXED);
}

int budget_charge(struct budget_reader *r, uint64_t id, size_t bytes,
		  struct budget_charge *c)
{
	size_t held, all;
	bool total = false;

	c->reader = NULL;
	c->bytes = 0;
	if (!r)
		return 0;
	/* Added first, then checked: racing charges never both slip in. */
	held = __atomic_add_fetch(&r->bytes, bytes, __ATOMIC_RELAXED);
	all = __atomic_add_fetch(&budget.total, bytes, __ATOMIC_RELAXED);
	if (held > __atomic_load_n(&budget.reader_max, __ATOMIC_RELAXED) ||
	    (total = !r->host_root &&
		     all > __atomic_load_n(&budget.total_max,
					   __ATOMIC_RELAXED))) {
		__atomic_sub_fetch(&r->bytes, bytes, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&budget.total, bytes, __ATOMIC_RELAXED);
		remember_refusal(r, id, bytes);
		log_refusal(r, bytes, total);
		return -ENOMEM;
	}
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	c->reader = r;
	c->bytes = bytes;
	return 0;
}

void budget_uncharge(struct budget_charge *c)
{
	if (!c->reader)
		return;
	__atomic_sub_fetch(&c->reader->bytes, c->bytes, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&budget.total, c->bytes, __ATOMIC_RELAXED);
	budget_reader_put(c->reader);
	c->reader = NULL;
	c->bytes = 0;
}
