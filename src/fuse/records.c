/*
 * records: the table of inode records below proc/ (records.h).
 *
 * The area is an array of RECORD_BYTES records; record 0 is the area's
 * header (its magic, and the highest record ever used, so that a
 * successor reads no further: the pages above were never touched).
 * The indexes are the process's: a hash of each live record's instance
 * (its directory's number and its start), for lookups, and of its task
 * in the daemon's numbers, for exits; a stack of free records, the
 * lowest on top, and the never used ones above the high-water mark.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hash.h"
#include "records.h"
#include "tree.h"

#define RECORDS_MAGIC 0x7366742d72656373ULL /* "secr-tfs" */

enum { RECORD_FREE = 0, RECORD_LIVE = 1 };

/* In the shared area; every field written under the table's lock. */
struct record {
	uint64_t state; /* RECORD_FREE or RECORD_LIVE (stored last) */
	uint64_t node; /* node_ino() of its directory */
	uint64_t parent;
	uint64_t start;
	uint64_t nlookup;
	int32_t pid, tid;
	uint32_t dir; /* an extra inode's: its file's directory's record */
	uint32_t spare32;
	uint64_t spare;
};

_Static_assert(sizeof(struct record) == RECORD_BYTES, "a record's size");

/* Record 0: the area's header. */
struct records_header {
	uint64_t magic;
	uint64_t high; /* the highest record ever live */
	uint64_t spare[6];
};

_Static_assert(sizeof(struct records_header) == RECORD_BYTES, "a header");

struct rindex {
	struct hash_node by_key, by_task;
};

struct records {
	pthread_mutex_t lock;
	struct views *vs;
	struct records_header *head;
	struct record *rec; /* rec[0] is the header */
	uint32_t cap; /* records 1 .. cap - 1 */
	void *anon; /* the area, when it is this process's alone */
	size_t anon_bytes;
	struct rindex *ix;
	struct hash_table by_key, by_task;
	uint32_t *free; /* a stack, the lowest on top */
	uint32_t nfree;
	size_t count;
	uint32_t cursor; /* where the next sweep starts */
};

static uint64_t key_hash(uint64_t node, uint64_t start)
{
	return hash_mix(node, start);
}

static uint64_t task_hash(pid_t pid, pid_t tid)
{
	return hash_mix((uint64_t)(uint32_t)pid, (uint64_t)(uint32_t)tid);
}

static unsigned int record_view(const struct record *r)
{
	struct node n;

	node_of(r->node, &n);
	return n.view;
}

/* Index live record @i and hold its slot. Locked. */
static void index_record(struct records *rs, uint32_t i)
{
	struct record *r = &rs->rec[i];

	hash_add(&rs->by_key, &rs->ix[i].by_key, key_hash(r->node, r->start));
	hash_add(&rs->by_task, &rs->ix[i].by_task, task_hash(r->pid, r->tid));
	views_hold(rs->vs, record_view(r), 1);
	rs->count++;
}

/* Take the records a dead server left: live ones indexed, the rest
 * free (a record left live with no lookup is one whose forget ended
 * as its server died). */
static void rebuild(struct records *rs)
{
	uint32_t high = 0, i;
	struct record *r;

	if (rs->head->magic == RECORDS_MAGIC && rs->head->high < rs->cap)
		high = (uint32_t)rs->head->high;
	rs->head->magic = RECORDS_MAGIC;
	rs->head->high = high;
	for (i = high; i >= 1; i--) {
		r = &rs->rec[i];
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) ==
			    RECORD_LIVE &&
		    r->nlookup) {
			index_record(rs, i);
			continue;
		}
		r->state = RECORD_FREE;
		rs->free[rs->nfree++] = i; /* pushed highest first */
	}
}

int records_new(struct views *vs, void *area, size_t bytes,
		struct records **out)
{
	struct records *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return -ENOMEM;
	if (!area || bytes < 2 * RECORD_BYTES) {
		bytes = RECORDS_AREA_BYTES;
		area = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (area == MAP_FAILED) {
			free(rs);
			return -ENOMEM;
		}
		rs->anon = area;
		rs->anon_bytes = bytes;
	}
	rs->cap = bytes / RECORD_BYTES > RECORDS_MAX ?
			  RECORDS_MAX :
			  (uint32_t)(bytes / RECORD_BYTES);
	rs->head = area;
	rs->rec = area;
	rs->vs = vs;
	/* Touched only as far as records are used. */
	rs->ix = calloc(rs->cap, sizeof(*rs->ix));
	rs->free = malloc(rs->cap * sizeof(*rs->free));
	if (!rs->ix || !rs->free) {
		records_free(rs);
		return -ENOMEM;
	}
	pthread_mutex_init(&rs->lock, NULL);
	hash_init(&rs->by_key);
	hash_init(&rs->by_task);
	rebuild(rs);
	*out = rs;
	return 0;
}

void records_free(struct records *rs)
{
	if (!rs)
		return;
	if (rs->ix) {
		hash_destroy(&rs->by_key);
		hash_destroy(&rs->by_task);
		pthread_mutex_destroy(&rs->lock);
	}
	if (rs->anon)
		munmap(rs->anon, rs->anon_bytes);
	free(rs->ix);
	free(rs->free);
	free(rs);
}

/* A record never live, or freed: its index, or 0 when none is. Locked. */
static uint32_t take_record(struct records *rs)
{
	uint32_t high = (uint32_t)rs->head->high;

	if (rs->nfree)
		return rs->free[--rs->nfree];
	if (high + 1 < rs->cap) {
		rs->head->high = high + 1;
		return high + 1;
	}
	return 0;
}

int records_name(struct records *rs, struct node *n,
		 const struct record_task *t)
{
	uint64_t node;
	struct hash_node *h;
	struct record *r;
	uint32_t i;
	int ret = 0;

	n->rec = 0;
	node = node_ino(n);
	pthread_mutex_lock(&rs->lock);
	for (h = hash_first(&rs->by_key, key_hash(node, t->start)); h;
	     h = hash_next(h)) {
		i = (uint32_t)(container_of(h, struct rindex, by_key) - rs->ix);
		r = &rs->rec[i];
		if (r->node == node && r->start == t->start &&
		    r->pid == t->pid && r->tid == t->tid) {
			r->nlookup++;
			n->rec = i;
			goto out;
		}
	}
	i = take_record(rs);
	if (!i) {
		ret = -ENOMEM;
		goto out;
	}
	r = &rs->rec[i];
	r->node = node;
	r->parent = t->parent;
	r->start = t->start;
	r->pid = t->pid;
	r->tid = t->tid;
	r->nlookup = 1;
	__atomic_store_n(&r->state, RECORD_LIVE, __ATOMIC_RELEASE);
	index_record(rs, i);
	n->rec = i;
out:
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

/* Record @i if it is live, or NULL. Locked. */
static struct record *live_record(struct records *rs, uint32_t i)
{
	if (i < 1 || i >= rs->cap || i > rs->head->high ||
	    rs->rec[i].state != RECORD_LIVE)
		return NULL;
	return &rs->rec[i];
}

int records_hold(struct records *rs, const struct node *n)
{
	return records_hold_id(rs, node_id(n));
}

int records_hold_id(struct records *rs, uint64_t id)
{
	struct record *r;
	int ret = -ENOENT;

	pthread_mutex_lock(&rs->lock);
	r = live_record(rs, node_id_rec(id));
	if (r) {
		r->nlookup++;
		ret = 0;
	}
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

/* The directory kind whose record a node of @kind shares, or K_NONE. */
static unsigned int record_kind(unsigned int kind)
{
	struct node n = { .kind = kind }, p;

	if (kind == K_PROC || kind == K_TGID || kind == K_TID)
		return kind;
	if (tree_node(node_ino(&n), &p) < 0)
		return K_NONE; /* no such kind */
	tree_parent(&n, &p);
	return p.kind == K_PROC || p.kind == K_TGID || p.kind == K_TID ?
		       p.kind :
		       K_NONE;
}

int records_get(struct records *rs, uint64_t id, struct node *n,
		struct record_task *t)
{
	unsigned int kind = (unsigned int)(id & ((1U << NODE_KIND_BITS) - 1));
	uint32_t i = node_id_rec(id);
	struct record *r;
	int ret = -ENOENT;

	bool extra = (id & NODE_EXTRA_BIT) != 0;

	if (!i || (node_id(&(struct node){ .kind = kind, .rec = i }) |
		   (extra ? NODE_EXTRA_BIT : 0)) != id)
		return -ENOENT;
	pthread_mutex_lock(&rs->lock);
	r = live_record(rs, i);
	if (r) {
		node_of(r->node, n);
		if (extra ? n->kind == kind : record_kind(kind) == n->kind) {
			n->kind = kind;
			n->rec = extra ? r->dir : i;
			if (t) {
				t->pid = r->pid;
				t->tid = r->tid;
				t->start = r->start;
				t->parent = r->parent;
			}
			ret = 0;
		}
	}
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

uint64_t records_extra(struct records *rs, const struct node *n)
{
	struct record *r, *dir;
	struct node parent;
	uint32_t i;

	tree_parent(n, &parent); /* a file's directory shares its record */
	pthread_mutex_lock(&rs->lock);
	i = take_record(rs);
	if (!i) {
		pthread_mutex_unlock(&rs->lock);
		return 0;
	}
	r = &rs->rec[i];
	dir = n->rec ? live_record(rs, n->rec) : NULL;
	r->node = node_ino(n);
	r->parent = node_id(&parent);
	r->start = dir ? dir->start : 0;
	r->pid = dir ? dir->pid : 0;
	r->tid = dir ? dir->tid : 0;
	r->dir = n->rec;
	r->nlookup = 0; /* till its lookup's records_hold_id() */
	__atomic_store_n(&r->state, RECORD_LIVE, __ATOMIC_RELEASE);
	index_record(rs, i);
	pthread_mutex_unlock(&rs->lock);
	return NODE_EXTRA_BIT | NODE_REC_BIT | (uint64_t)i << NODE_KIND_BITS |
	       n->kind;
}

bool records_forget(struct records *rs, uint64_t id, uint64_t nlookup)
{
	uint32_t i = node_id_rec(id);
	struct record *r;
	bool freed = false;

	pthread_mutex_lock(&rs->lock);
	r = live_record(rs, i);
	if (r && r->nlookup > nlookup) {
		r->nlookup -= nlookup;
	} else if (r) {
		__atomic_store_n(&r->state, RECORD_FREE, __ATOMIC_RELEASE);
		r->nlookup = 0;
		hash_del(&rs->by_key, &rs->ix[i].by_key);
		hash_del(&rs->by_task, &rs->ix[i].by_task);
		views_hold(rs->vs, record_view(r), -1);
		rs->free[rs->nfree++] = i;
		rs->count--;
		freed = true;
	}
	pthread_mutex_unlock(&rs->lock);
	return freed;
}

static void name_of(const struct records *rs, uint32_t i,
		    struct record_name *out)
{
	const struct record *r = &rs->rec[i];

	node_of(r->node, &out->node);
	out->node.rec = i;
	out->parent = r->parent;
}

size_t records_of_task(struct records *rs, pid_t pid, pid_t tid,
		       struct record_name *out, size_t max)
{
	struct hash_node *h;
	struct record *r;
	size_t n = 0;
	uint32_t i;

	pthread_mutex_lock(&rs->lock);
	for (h = hash_first(&rs->by_task, task_hash(pid, tid)); h && n < max;
	     h = hash_next(h)) {
		i = (uint32_t)(container_of(h, struct rindex, by_task) -
			       rs->ix);
		r = &rs->rec[i];
		if (r->pid == pid && r->tid == tid)
			name_of(rs, i, &out[n++]);
	}
	pthread_mutex_unlock(&rs->lock);
	return n;
}

size_t records_in_slots(struct records *rs, const unsigned int *slot,
			unsigned int nslots, struct record_name *out,
			size_t max)
{
	uint32_t i, high;
	unsigned int k, view;
	size_t n = 0;

	pthread_mutex_lock(&rs->lock);
	high = (uint32_t)rs->head->high;
	for (i = 1; i <= high && n < max; i++) {
		if (rs->rec[i].state != RECORD_LIVE)
			continue;
		view = record_view(&rs->rec[i]);
		for (k = 0; k < nslots; k++)
			if (view == slot[k]) {
				name_of(rs, i, &out[n++]);
				break;
			}
	}
	pthread_mutex_unlock(&rs->lock);
	return n;
}

size_t records_gone(struct records *rs,
		    bool (*gone)(void *ctx, pid_t pid, pid_t tid), void *ctx,
		    struct record_name *out, size_t max)
{
	struct swept {
		uint32_t i;
		uint64_t node, start;
		pid_t pid, tid;
	} *task = malloc(RECORDS_SWEEP_MAX * sizeof(*task));
	uint32_t i, high, seen = 0;
	size_t count = 0, n = 0, j;
	struct record *r;

	if (!task)
		return 0;
	pthread_mutex_lock(&rs->lock);
	high = (uint32_t)rs->head->high;
	i = rs->cursor;
	while (high && seen < high && count < RECORDS_SWEEP_MAX) {
		i = i % high + 1;
		seen++;
		r = &rs->rec[i];
		if (r->state == RECORD_LIVE && r->pid > 0)
			task[count++] = (struct swept){ i, r->node, r->start,
							r->pid, r->tid };
	}
	rs->cursor = i;
	pthread_mutex_unlock(&rs->lock);
	for (j = 0; j < count && n < max; j++) {
		if (!gone(ctx, task[j].pid, task[j].tid))
			continue;
		node_of(task[j].node, &out[n].node);
		out[n].node.rec = task[j].i;
		/* Its parent as it is now, if it is still that record. */
		pthread_mutex_lock(&rs->lock);
		r = &rs->rec[task[j].i];
		if (r->state == RECORD_LIVE && r->node == task[j].node &&
		    r->start == task[j].start) {
			out[n].parent = r->parent;
			n++;
		}
		pthread_mutex_unlock(&rs->lock);
	}
	free(task);
	return n;
}

size_t records_count(struct records *rs)
{
	size_t n;

	pthread_mutex_lock(&rs->lock);
	n = rs->count;
	pthread_mutex_unlock(&rs->lock);
	return n;
}
