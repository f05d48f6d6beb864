/*
 * budget: the readers' records, a chained hash table (hash.h) by
 * (namespace, uid) under one lock, grown as readers come; a record goes
 * with its last reference. What a reader and all readers hold are atomic
 * counters, charged and given back without the lock.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#include "budget.h"
#include "clock.h"
#include "hash.h"
#include "log.h"

#define MIB ((size_t)1 << 20)

struct refused {
	uint64_t id; /* 0: none */
	size_t bytes;
};

struct budget_reader {
	struct hash_node node; /* in the table of readers */
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
	struct hash_table readers;
	size_t reader_max, total_max; /* atomic */
	size_t total; /* atomic */
	long long total_logged_s; /* atomic */
} budget = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.reader_max = BUDGET_READER_MIB_DEFAULT * MIB,
	.total_max = BUDGET_TOTAL_MIB_DEFAULT * MIB,
};

void budget_set_limits(size_t reader_bytes, size_t total_bytes)
{
	__atomic_store_n(&budget.reader_max, reader_bytes ? reader_bytes : 1,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&budget.total_max, total_bytes ? total_bytes : 1,
			 __ATOMIC_RELAXED);
}

static uint64_t reader_hash(uint64_t ns, uid_t uid)
{
	return hash_mix(ns, uid);
}

struct budget_reader *budget_reader_get(uint64_t ns, uid_t uid, bool host_root)
{
	struct budget_reader *r = NULL;
	struct hash_node *n;
	uint64_t hash;

	/* A uid is one tenant in every view it makes (budget.h). */
	if (uid != 0)
		ns = BUDGET_NS_ANY;
	hash = reader_hash(ns, uid);

	pthread_mutex_lock(&budget.lock);
	for (n = hash_first(&budget.readers, hash); n; n = hash_next(n)) {
		r = container_of(n, struct budget_reader, node);
		if (r->ns == ns && r->uid == uid)
			break;
	}
	if (!n) {
		r = calloc(1, sizeof(*r));
		if (!r)
			goto out;
		r->ns = ns;
		r->uid = uid;
		r->host_root = host_root;
		if (hash_add(&budget.readers, &r->node, hash) < 0) {
			free(r);
			r = NULL;
			goto out;
		}
	}
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
out:
	pthread_mutex_unlock(&budget.lock);
	return r;
}

void budget_reader_put(struct budget_reader *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&budget.lock);
	if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		hash_del(&budget.readers, &r->node);
		free(r);
	}
	pthread_mutex_unlock(&budget.lock);
}

/* Whether the time has come for another log line; @at is its clock. */
static bool log_due(long long *at)
{
	long long now = clock_coarse_s(),
		  last = __atomic_load_n(at, __ATOMIC_RELAXED);

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

void budget_charge_held(struct budget_reader *r, size_t bytes,
			struct budget_charge *c)
{
	c->reader = NULL;
	c->bytes = 0;
	if (!r)
		return;
	__atomic_add_fetch(&r->bytes, bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&budget.total, bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	c->reader = r;
	c->bytes = bytes;
}

void budget_reader_id(const struct budget_reader *r, uint64_t *ns, uid_t *uid,
		      bool *host_root)
{
	*ns = r->ns;
	*uid = r->uid;
	*host_root = r->host_root;
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

size_t budget_block_bytes(void *p)
{
	return p ? malloc_usable_size(p) + 2 * sizeof(size_t) : 0;
}
