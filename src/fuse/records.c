/*
 * records: the records of the inodes table (inodes-internal.h), one for
 * each node the kernel holds below proc/ and each extra inode: made at
 * a name (inodes_name(), extra_make()), charged to its payer, found by
 * its instance or its task, swept when its task is gone, and ended at
 * its last forget. Every function is called with the table's lock held,
 * or takes it (the inodes_ ones).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "inodes-internal.h"
#include "log.h"
#include "tree.h"

#define RECORDS_MAGIC 0x7366742d72656373ULL /* "secr-tfs" */

/* A lookup that names no payer pays as uid 0 of no view. */
static const struct record_payer no_payer;

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

static uint64_t payer_hash(uint64_t ns, uid_t uid)
{
	return hash_mix(ns, uid);
}

/* The payer of records made by @uid in the view of namespace @ns,
 * found or made; NULL when out of memory. Locked. */
static struct payer *payer_get(struct inodes *in, uint64_t ns, uid_t uid)
{
	struct hash_node *h;
	struct payer *p;

	if (uid)
		ns = 0; /* a uid across views, root per view */
	for (h = hash_first(&in->payers, payer_hash(ns, uid)); h;
	     h = hash_next(h)) {
		p = container_of(h, struct payer, node);
		if (p->ns == ns && p->uid == uid)
			return p;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->ns = ns;
	p->uid = uid;
	p->host_root = !uid && ns == (uint64_t)views_own_ns(in->vs);
	if (hash_add(&in->payers, &p->node, payer_hash(ns, uid)) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* Record @i is @p's newest: counted, at its ring's tail. Locked. */
static void payer_link(struct inodes *in, struct payer *p, uint32_t i)
{
	struct rindex *x = &in->ix[i], *head;

	x->payer = p;
	p->records++;
	if (!p->oldest) {
		p->oldest = x->prev = x->next = i;
		return;
	}
	head = &in->ix[p->oldest];
	x->next = p->oldest;
	x->prev = head->prev;
	in->ix[head->prev].next = i;
	head->prev = i;
}

/* Record @i goes: its charge given back, its payer's count down (the
 * payer freed at none). Locked. */
void payer_unlink(struct inodes *in, uint32_t i)
{
	struct rindex *x = &in->ix[i];
	struct payer *p = x->payer;

	budget_uncharge(&x->charge);
	x->payer = NULL;
	if (!p)
		return;
	if (x->next == i) {
		p->oldest = 0;
	} else {
		in->ix[x->prev].next = x->next;
		in->ix[x->next].prev = x->prev;
		if (p->oldest == i)
			p->oldest = x->next;
	}
	if (--p->records == 0) {
		hash_del(&in->payers, &p->node);
		free(p);
	}
}

/* Index live record @i and hold its slot. Locked. */
static void index_record(struct inodes *in, uint32_t i)
{
	struct record *r = &in->rec[i];

	hash_add(&in->by_key, &in->ix[i].by_key, key_hash(r->node, r->start));
	hash_add(&in->by_task, &in->ix[i].by_task, task_hash(r->pid, r->tid));
	views_hold(in->vs, record_view(r), 1);
	in->nrecords++;
	memset(&in->ix[i].owner, 0, sizeof(in->ix[i].owner));
	in->ix[i].checked_ms = LLONG_MIN / 2;
	memset(in->ix[i].told, 0, sizeof(in->ix[i].told));
}

/*
 * A successor's charge of record @i, made by a dead server: counted and
 * charged to whom made it, never refused (it is the kernel's already).
 * Locked.
 */
static void recharge(struct inodes *in, uint32_t i)
{
	struct record *r = &in->rec[i];
	struct payer *p = payer_get(in, r->ns, r->uid);
	struct budget_reader *who;

	if (!p)
		return; /* out of memory: counted against nobody */
	payer_link(in, p, i);
	who = budget_reader_get(r->ns, r->uid, p->host_root);
	budget_charge(who, 0, RECORD_CHARGE_BYTES, &in->ix[i].charge);
	budget_reader_put(who);
}

/* Take the records a dead server left: live ones indexed and charged
 * again, the rest free (a record left live with no lookup is one whose
 * forget ended as its server died). Those of a server whose tree had
 * another shape (an upgrade that added a file) are all freed: their
 * node IDs' kinds would name other files here, and the kernel's
 * inodes of them are ENOENT instead. */
void records_rebuild(struct inodes *in)
{
	uint32_t high = 0, i;
	struct record *r;
	bool same;

	if (in->head->magic == RECORDS_MAGIC && in->head->high < in->cap)
		high = (uint32_t)in->head->high;
	same = in->head->shape == tree_shape();
	in->head->magic = RECORDS_MAGIC;
	in->head->high = high;
	in->head->shape = tree_shape();
	for (i = high; i >= 1; i--) {
		r = &in->rec[i];
		if (same &&
		    __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) ==
			    RECORD_LIVE &&
		    r->nlookup) {
			index_record(in, i);
			recharge(in, i);
			continue;
		}
		r->state = RECORD_FREE;
		in->free[in->nfree++] = i; /* pushed highest first */
	}
}

/* Refusals of records are logged at most once a minute per payer. */
#define RECORDS_LOG_MS 60000

/* What the host's root always has room for: a quarter of the table. */
static uint32_t root_room(const struct inodes *in)
{
	return in->cap / 4;
}

/* Forget payer @p if it pays for nothing. Locked. */
static void payer_unused(struct inodes *in, struct payer *p)
{
	if (p->records)
		return;
	hash_del(&in->payers, &p->node);
	free(p);
}

/*
 * Whether @who may have one more record: 0 and its payer in *@pp, the
 * record's bytes charged in *@c; or -ENOMEM, past its bound or its
 * budget, or with the table full but for the host's root's room
 * (logged, at most once per RECORDS_LOG_MS per payer). Locked.
 */
static int record_admit(struct inodes *in, const struct record_payer *who,
			struct payer **pp, struct budget_charge *c)
{
	const char *why = NULL;
	struct payer *p;
	long long now;

	memset(c, 0, sizeof(*c));
	if (!who)
		who = &no_payer;
	p = payer_get(in, who->ns, who->uid);
	if (!p)
		return -ENOMEM;
	if (!p->host_root && p->records >= RECORDS_PER_UID)
		why = "its bound";
	else if (!p->host_root && in->nrecords + root_room(in) >= in->cap)
		why = "the bound of all readers";
	else if (budget_charge(who->reader, 0, RECORD_CHARGE_BYTES, c) < 0)
		why = "its budget";
	if (!why) {
		*pp = p;
		return 0;
	}
	now = clock_coarse_ms();
	if (!p->logged_ms || now - p->logged_ms >= RECORDS_LOG_MS) {
		p->logged_ms = now;
		log_msg(LOG_WARNING,
			"uid %u (pid namespace %llu) refused a name under "
			"proc/ at %s (%u names of %u): ENOMEM",
			(unsigned int)p->uid, (unsigned long long)who->ns, why,
			p->records, (unsigned int)RECORDS_PER_UID);
	}
	payer_unused(in, p);
	return -ENOMEM;
}

static void name_of(const struct inodes *in, uint32_t i,
		    struct record_name *out);

/*
 * Up to @max names of @p's oldest records into @d, each moved to the
 * end of its ring: those the kernel keeps unused go when it drops them,
 * those held stay and come round last. Locked.
 */
static void payer_drops(struct inodes *in, struct payer *p,
			struct record_drops *d, unsigned int max)
{
	uint32_t i;

	while (d->count < max && d->count < RECORDS_DROP_MAX && p->oldest) {
		i = p->oldest;
		p->oldest = in->ix[i].next;
		name_of(in, i, &d->name[d->count++]);
		if (p->oldest == i)
			break; /* its only record */
	}
}

/* A record never live, or freed: its index, or 0 when none is. Locked. */
static uint32_t take_record(struct inodes *in)
{
	uint32_t high = (uint32_t)in->head->high;

	if (in->nfree)
		return in->free[--in->nfree];
	if (high + 1 < in->cap) {
		in->head->high = high + 1;
		return high + 1;
	}
	return 0;
}

int inodes_name(struct inodes *in, struct node *n, const struct record_task *t,
		const struct record_payer *who, struct record_drops *drops)
{
	struct budget_charge charge;
	struct payer *p;
	uint64_t node;
	struct hash_node *h;
	struct record *r;
	uint32_t i;
	int ret = 0;

	n->rec = 0;
	if (drops)
		drops->count = 0;
	node = node_ino(n);
	pthread_mutex_lock(&in->lock);
	for (h = hash_first(&in->by_key, key_hash(node, t->start)); h;
	     h = hash_next(h)) {
		i = (uint32_t)(container_of(h, struct rindex, by_key) - in->ix);
		r = &in->rec[i];
		if (r->node == node && r->start == t->start &&
		    r->pid == t->pid && r->tid == t->tid) {
			r->nlookup++;
			n->rec = i;
			goto out;
		}
	}
	ret = record_admit(in, who, &p, &charge);
	if (ret < 0) {
		p = payer_get(in, who ? who->ns : 0, who ? who->uid : 0);
		if (p && drops) /* its names the kernel keeps unused go */
			payer_drops(in, p, drops, RECORDS_DROP_MAX);
		if (p)
			payer_unused(in, p);
		goto out;
	}
	i = take_record(in);
	if (!i) {
		budget_uncharge(&charge);
		payer_unused(in, p);
		ret = -ENOMEM;
		goto out;
	}
	/* Near its bound: a few of its oldest names dropped at each new
	 * one, so that a walker is not refused for names cached alone. */
	if (drops && !p->host_root && p->records >= RECORDS_DROP_AT)
		payer_drops(in, p, drops, RECORDS_DROP_EACH);
	r = &in->rec[i];
	r->node = node;
	r->uid = (uint32_t)p->uid;
	r->ns = who ? who->ns : 0;
	r->parent = t->parent;
	r->start = t->start;
	r->pid = t->pid;
	r->tid = t->tid;
	r->nlookup = 1;
	__atomic_store_n(&r->state, RECORD_LIVE, __ATOMIC_RELEASE);
	index_record(in, i);
	payer_link(in, p, i);
	in->ix[i].charge = charge;
	n->rec = i;
out:
	pthread_mutex_unlock(&in->lock);
	return ret;
}

/* Record @i if it is live, or NULL. Locked. */
struct record *live_record(struct inodes *in, uint32_t i)
{
	if (i < 1 || i >= in->cap || i > in->head->high ||
	    in->rec[i].state != RECORD_LIVE)
		return NULL;
	return &in->rec[i];
}

/* One more lookup of node ID @id's record: 0, or -ENOENT. Locked. */
int hold_locked(struct inodes *in, uint64_t id)
{
	struct record *r = live_record(in, node_id_rec(id));

	if (!r)
		return -ENOENT;
	r->nlookup++;
	return 0;
}

int inodes_hold(struct inodes *in, const struct node *n)
{
	int ret;

	pthread_mutex_lock(&in->lock);
	ret = hold_locked(in, node_id(n));
	pthread_mutex_unlock(&in->lock);
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

/* Record node ID @id's node (inodes_node()). Locked. */
int record_node(struct inodes *in, uint64_t id, struct node *n)
{
	unsigned int kind = (unsigned int)(id & ((1U << NODE_KIND_BITS) - 1));
	uint32_t i = node_id_rec(id);
	bool extra = extra_ino(id);
	struct record *r;

	if (!i || (node_id(&(struct node){ .kind = kind, .rec = i }) |
		   (extra ? NODE_EXTRA_BIT : 0)) != id)
		return -ENOENT;
	r = live_record(in, i);
	if (!r)
		return -ENOENT;
	node_of(r->node, n);
	if (extra ? n->kind != kind : record_kind(kind) != n->kind)
		return -ENOENT;
	n->kind = kind;
	n->rec = extra ? r->dir : i;
	return 0;
}

/* The task of record @i (0: none, zeros), in *@t. Locked. */
int record_task(struct inodes *in, uint32_t i, struct record_task *t)
{
	struct record *r = i ? live_record(in, i) : NULL;

	memset(t, 0, sizeof(*t));
	if (!i)
		return 0;
	if (!r)
		return -ENOENT;
	t->pid = r->pid;
	t->tid = r->tid;
	t->start = r->start;
	t->parent = r->parent;
	return 0;
}

/*
 * A new extra inode of file @n (n->rec its directory's record, or 0
 * outside proc/), a record counted by one lookup: its node ID, or 0
 * when out of records. Locked.
 */
uint64_t extra_make(struct inodes *in, const struct node *n,
		    const struct record_payer *who)
{
	struct budget_charge charge;
	struct record *r, *dir;
	struct node parent;
	struct payer *p;
	uint32_t i;

	tree_parent(n, &parent); /* a file's directory shares its record */
	if (record_admit(in, who, &p, &charge) < 0)
		return 0;
	i = take_record(in);
	if (!i) {
		budget_uncharge(&charge);
		payer_unused(in, p);
		return 0;
	}
	r = &in->rec[i];
	r->uid = (uint32_t)p->uid;
	r->ns = who ? who->ns : 0;
	dir = n->rec ? live_record(in, n->rec) : NULL;
	r->node = node_ino(n);
	r->parent = node_id(&parent);
	r->start = dir ? dir->start : 0;
	r->pid = dir ? dir->pid : 0;
	r->tid = dir ? dir->tid : 0;
	r->dir = n->rec;
	r->nlookup = 1;
	__atomic_store_n(&r->state, RECORD_LIVE, __ATOMIC_RELEASE);
	index_record(in, i);
	payer_link(in, p, i);
	in->ix[i].charge = charge;
	return NODE_EXTRA_BIT | NODE_REC_BIT | (uint64_t)i << NODE_KIND_BITS |
	       n->kind;
}

/*
 * The kernel forgets @nlookup lookups of record node ID @id: true when
 * that was its record's last, and the record went, its slot's hold
 * given back and its index the next record's. Locked.
 */
bool record_forget(struct inodes *in, uint64_t id, uint64_t nlookup)
{
	uint32_t i = node_id_rec(id);
	struct record *r = live_record(in, i);

	if (!r)
		return false;
	if (r->nlookup > nlookup) {
		r->nlookup -= nlookup;
		return false;
	}
	__atomic_store_n(&r->state, RECORD_FREE, __ATOMIC_RELEASE);
	r->nlookup = 0;
	hash_del(&in->by_key, &in->ix[i].by_key);
	hash_del(&in->by_task, &in->ix[i].by_task);
	payer_unlink(in, i);
	views_hold(in->vs, record_view(r), -1);
	in->free[in->nfree++] = i;
	in->nrecords--;
	return true;
}

static void name_of(const struct inodes *in, uint32_t i,
		    struct record_name *out)
{
	const struct record *r = &in->rec[i];

	node_of(r->node, &out->node);
	out->node.rec = i;
	out->parent = r->parent;
}

size_t inodes_of_task(struct inodes *in, pid_t pid, pid_t tid,
		      struct record_name *out, size_t max)
{
	struct hash_node *h;
	struct record *r;
	size_t n = 0;
	uint32_t i;

	pthread_mutex_lock(&in->lock);
	for (h = hash_first(&in->by_task, task_hash(pid, tid)); h && n < max;
	     h = hash_next(h)) {
		i = (uint32_t)(container_of(h, struct rindex, by_task) -
			       in->ix);
		r = &in->rec[i];
		if (r->pid == pid && r->tid == tid)
			name_of(in, i, &out[n++]);
	}
	pthread_mutex_unlock(&in->lock);
	return n;
}

size_t inodes_in_slots(struct inodes *in, const unsigned int *slot,
		       unsigned int nslots, struct record_name *out, size_t max)
{
	uint32_t i, high;
	unsigned int k, view;
	size_t n = 0;

	pthread_mutex_lock(&in->lock);
	high = (uint32_t)in->head->high;
	for (i = 1; i <= high && n < max; i++) {
		if (in->rec[i].state != RECORD_LIVE)
			continue;
		view = record_view(&in->rec[i]);
		for (k = 0; k < nslots; k++)
			if (view == slot[k]) {
				name_of(in, i, &out[n++]);
				break;
			}
	}
	pthread_mutex_unlock(&in->lock);
	return n;
}

size_t inodes_gone(struct inodes *in,
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
	pthread_mutex_lock(&in->lock);
	high = (uint32_t)in->head->high;
	i = in->cursor;
	while (high && seen < high && count < RECORDS_SWEEP_MAX) {
		i = i % high + 1;
		seen++;
		r = &in->rec[i];
		if (r->state == RECORD_LIVE && r->pid > 0)
			task[count++] = (struct swept){ i, r->node, r->start,
							r->pid, r->tid };
	}
	in->cursor = i;
	pthread_mutex_unlock(&in->lock);
	for (j = 0; j < count && n < max; j++) {
		if (!gone(ctx, task[j].pid, task[j].tid))
			continue;
		node_of(task[j].node, &out[n].node);
		out[n].node.rec = task[j].i;
		/* Its parent as it is now, if it is still that record. */
		pthread_mutex_lock(&in->lock);
		r = &in->rec[task[j].i];
		if (r->state == RECORD_LIVE && r->node == task[j].node &&
		    r->start == task[j].start) {
			out[n].parent = r->parent;
			n++;
		}
		pthread_mutex_unlock(&in->lock);
	}
	free(task);
	return n;
}

size_t inodes_records(struct inodes *in)
{
	size_t n;

	pthread_mutex_lock(&in->lock);
	n = in->nrecords;
	pthread_mutex_unlock(&in->lock);
	return n;
}
