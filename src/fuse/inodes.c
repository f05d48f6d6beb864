/*
 * inodes: the table of the inodes the kernel holds (inodes.h).
 *
 * Two arrays under one lock. The records: an array of RECORD_BYTES
 * records in the shared area, record 0 its header (its magic, and the
 * highest record ever used, so that a successor reads no further: the
 * pages above were never touched); indexed in the process by a hash of
 * each live record's instance (its directory's number and its start),
 * for lookups, and of its task in the daemon's numbers, for exits; a
 * stack of free records, the lowest on top, and the never used ones
 * above the high-water mark. The entries of the inodes in use: an
 * array of slots with a chain of free ones, and a map of open
 * addressing from a node ID to its slot. A file's own entry (its ID its
 * inode number) holds which inode its last lookup gave (its own, or an
 * extra one), the content waiting for its open, its opens; a
 * directory's entry records when a lookup of one of its files last
 * checked the path, and the owner found. An entry not in use goes at
 * the release that ends its use, at its record's end, or else when the
 * sweep, four slots round the array at each lookup, comes by.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "hash.h"
#include "inodes.h"
#include "log.h"
#include "tree.h"

/* ---- the records -------------------------------------------------------- */

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
	uint32_t uid; /* who made it (a successor charges it again) */
	uint64_t ns; /* and in which view's namespace */
};

_Static_assert(sizeof(struct record) == RECORD_BYTES, "a record's size");

/* Record 0: the area's header. */
struct records_header {
	uint64_t magic;
	uint64_t high; /* the highest record ever live */
	uint64_t spare[6];
};

_Static_assert(sizeof(struct records_header) == RECORD_BYTES, "a header");

/* A record's place in the process: its indexes, its payer and charge. */
struct rindex {
	struct hash_node by_key, by_task;
	struct payer *payer;
	uint32_t prev, next; /* in its payer's ring, oldest first */
	struct budget_charge charge;
	/* What its directory's files were last told: their owner, as a
	 * lookup's path check found it then, and each file's size + 1
	 * (0: none), by tree_file_slot(). */
	struct owner owner;
	long long checked_ms;
	uint16_t told[TREE_DIR_FILES];
};

/*
 * Whom records are counted against: a uid across views, but root per
 * view (budget.h's readers, as they are keyed); the host's root is
 * counted, never bounded. Freed at its last record.
 */
struct payer {
	struct hash_node node;
	uint64_t ns; /* 0 but for root */
	uid_t uid;
	bool host_root;
	uint32_t records;
	uint32_t oldest; /* its ring's head, 0 when empty */
	long long logged_ms; /* its last refusal logged */
};

/*
 * What a record costs: its bytes in the shared area, its place in the
 * process (its index, its place on the stack of free ones) and what the
 * kernel keeps for its name.
 */
#define RECORD_CHARGE_BYTES                                        \
	(RECORD_BYTES + sizeof(struct rindex) + sizeof(uint32_t) + \
	 RECORD_KERNEL_BYTES)

/* A lookup that names no payer pays as uid 0 of no view. */
static const struct record_payer no_payer;

/* ---- the entries of the inodes in use ----------------------------------- */

#define NO_SLOT UINT32_MAX

struct entry {
	uint64_t id; /* 0: a free slot */
	struct node node;
	struct owner owner; /* as the path's last check found it */
	uint64_t size; /* what the kernel was last told */
	bool told; /* whether it was told anything yet */
	bool grew; /* the last lookup told more than the one before it */
	unsigned int opens;
	struct rbuf *text; /* the last lookup's content, until opened */
	pid_t pid; /* which thread looked it up */
	long long pending_ms; /* and when */
	uint64_t nlookup; /* an extra inode's */
	long long forget_ms; /* an extra's: when its forgetting was asked */
	uint64_t last; /* a node's own: the inode of its last lookup */
	struct budget_charge charge; /* its cost, to the reader that made it */
	uint32_t index; /* its slot's */
	uint32_t next_free;
};

/*
 * Entries are slots of chunks that never move (a pointer to an entry
 * stays good while it lives), ENTRY_CHUNK a chunk, found by node ID
 * through an open-addressed map of slot indices.
 */
#define ENTRY_CHUNK 256

/*
 * What an entry costs: its slot, and two places in the map twice over,
 * as the map grows by doubling.
 */
#define ENTRY_BYTES (sizeof(struct entry) + 4 * sizeof(uint32_t))

struct inodes {
	pthread_mutex_t lock;
	/* The records. */
	struct views *vs;
	struct records_header *head;
	struct record *rec; /* rec[0] is the header */
	uint32_t cap; /* records 1 .. cap - 1 */
	void *anon; /* the area, when it is this process's alone */
	size_t anon_bytes;
	struct rindex *ix;
	struct hash_table by_key, by_task;
	struct hash_table payers;
	uint32_t *free; /* a stack, the lowest on top */
	uint32_t nfree;
	size_t nrecords;
	uint32_t cursor; /* where the next sweep of exits starts */
	/* The entries. */
	struct entry **chunk; /* nslots / ENTRY_CHUNK chunks */
	uint32_t nslots, free_head, sweep;
	uint32_t *map; /* mapcap slot indices, NO_SLOT where empty */
	uint32_t mapcap;
	size_t nentries;
	void (*free_text)(struct rbuf *text);
};

/* Slot @i of the entries. */
static struct entry *slot_at(const struct inodes *in, uint32_t i)
{
	return &in->chunk[i / ENTRY_CHUNK][i % ENTRY_CHUNK];
}

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
static void payer_unlink(struct inodes *in, uint32_t i)
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
 * forget ended as its server died). */
static void rebuild(struct inodes *in)
{
	uint32_t high = 0, i;
	struct record *r;

	if (in->head->magic == RECORDS_MAGIC && in->head->high < in->cap)
		high = (uint32_t)in->head->high;
	in->head->magic = RECORDS_MAGIC;
	in->head->high = high;
	for (i = high; i >= 1; i--) {
		r = &in->rec[i];
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) ==
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

static void text_free(struct inodes *in, struct rbuf *text)
{
	if (text)
		in->free_text(text);
}

size_t inodes_entry_bytes(void)
{
	return ENTRY_BYTES;
}

int inodes_new(struct views *vs, void *area, size_t bytes,
	       void (*free_text)(struct rbuf *text), struct inodes **out)
{
	struct inodes *in = calloc(1, sizeof(*in));

	if (!in)
		return -ENOMEM;
	if (!area || bytes < 2 * RECORD_BYTES) {
		bytes = RECORDS_AREA_BYTES;
		area = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (area == MAP_FAILED) {
			free(in);
			return -ENOMEM;
		}
		in->anon = area;
		in->anon_bytes = bytes;
	}
	in->cap = bytes / RECORD_BYTES > RECORDS_MAX ?
			  RECORDS_MAX :
			  (uint32_t)(bytes / RECORD_BYTES);
	in->head = area;
	in->rec = area;
	in->vs = vs;
	in->free_text = free_text;
	in->free_head = NO_SLOT;
	/* Touched only as far as records are used. */
	in->ix = calloc(in->cap, sizeof(*in->ix));
	in->free = malloc(in->cap * sizeof(*in->free));
	if (!in->ix || !in->free) {
		inodes_free(in);
		return -ENOMEM;
	}
	pthread_mutex_init(&in->lock, NULL);
	hash_init(&in->by_key);
	hash_init(&in->by_task);
	hash_init(&in->payers);
	rebuild(in);
	*out = in;
	return 0;
}

void inodes_free(struct inodes *in)
{
	uint32_t i;

	if (!in)
		return;
	for (i = 0; i < in->nslots; i++) {
		text_free(in, slot_at(in, i)->text);
		budget_uncharge(&slot_at(in, i)->charge);
	}
	for (i = 1; in->ix && i < in->cap && i <= in->head->high; i++)
		if (in->ix[i].payer)
			payer_unlink(in, i);
	for (i = 0; i < in->nslots / ENTRY_CHUNK; i++)
		free(in->chunk[i]);
	free(in->chunk);
	free(in->map);
	if (in->ix) {
		hash_destroy(&in->by_key);
		hash_destroy(&in->by_task);
		hash_destroy(&in->payers);
		pthread_mutex_destroy(&in->lock);
	}
	if (in->anon)
		munmap(in->anon, in->anon_bytes);
	free(in->ix);
	free(in->free);
	free(in);
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
static struct record *live_record(struct inodes *in, uint32_t i)
{
	if (i < 1 || i >= in->cap || i > in->head->high ||
	    in->rec[i].state != RECORD_LIVE)
		return NULL;
	return &in->rec[i];
}

/* One more lookup of node ID @id's record: 0, or -ENOENT. Locked. */
static int hold_locked(struct inodes *in, uint64_t id)
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

/* The entry of @id, or NULL. Locked. */
static struct entry *find(const struct inodes *in, uint64_t id);

/* Record node ID @id's node (inodes_node()). Locked. */
static int record_node(struct inodes *in, uint64_t id, struct node *n)
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
static int record_task(struct inodes *in, uint32_t i, struct record_task *t)
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

int inodes_node(struct inodes *in, uint64_t id, struct node *n,
		struct record_task *t)
{
	struct node rn;
	struct entry *e;
	int ret;

	if (!node_id_rec(id)) {
		if (t)
			memset(t, 0, sizeof(*t));
		if (tree_node(id, n) < 0 || tree_in_proc(n))
			return -ENOENT; /* below proc/, every node is a record's */
		return 0;
	}
	pthread_mutex_lock(&in->lock);
	ret = record_node(in, id, &rn);
	/* An extra inode is the node its lookup named, while it is in use;
	 * one a dead server made is in the records alone. */
	e = extra_ino(id) ? find(in, id) : NULL;
	if (e && e->told) {
		*n = e->node;
		ret = 0;
	} else if (ret == 0) {
		*n = rn;
	}
	if (ret == 0 && t)
		ret = record_task(in, n->rec, t);
	pthread_mutex_unlock(&in->lock);
	return ret;
}

/*
 * A new extra inode of file @n (n->rec its directory's record, or 0
 * outside proc/), a record counted by one lookup: its node ID, or 0
 * when out of records. Locked.
 */
static uint64_t extra_make(struct inodes *in, const struct node *n,
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
static bool record_forget(struct inodes *in, uint64_t id, uint64_t nlookup)
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

/* ---- the map of IDs to entries ------------------------------------------ */

static uint32_t home_of(const struct inodes *in, uint64_t id)
{
	return (uint32_t)(hash_golden(id) >> 32) & (in->mapcap - 1);
}

/* Where @id is in the map, or the empty place it would take. */
static uint32_t map_place(const struct inodes *in, uint64_t id)
{
	uint32_t i = home_of(in, id);

	while (in->map[i] != NO_SLOT && slot_at(in, in->map[i])->id != id)
		i = (i + 1) & (in->mapcap - 1);
	return i;
}

static struct entry *find(const struct inodes *in, uint64_t id)
{
	uint32_t i;

	if (!in->mapcap || !id)
		return NULL;
	i = map_place(in, id);
	return in->map[i] == NO_SLOT ? NULL : slot_at(in, in->map[i]);
}

/* Remove @id, shifting back the entries its place held up. */
static void map_remove(struct inodes *in, uint64_t id)
{
	uint32_t mask = in->mapcap - 1, i = map_place(in, id), j, home;

	if (in->map[i] == NO_SLOT)
		return;
	for (j = (i + 1) & mask; in->map[j] != NO_SLOT; j = (j + 1) & mask) {
		home = home_of(in, slot_at(in, in->map[j])->id);
		/* j's entry may fill i unless its home lies in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			in->map[i] = in->map[j];
			i = j;
		}
	}
	in->map[i] = NO_SLOT;
}

/* One more chunk of slots; the map twice as large where it is over
 * half full, made anew. Locked. */
static int grow(struct inodes *in)
{
	uint32_t i, old = in->nslots, n = old + ENTRY_CHUNK, cap;
	struct entry **chunks, *chunk;
	uint32_t *map = NULL;

	if (old >= (1U << 28))
		return -ENOMEM;
	for (cap = in->mapcap ? in->mapcap : 64; cap < 2 * n; cap *= 2)
		;
	if (cap != in->mapcap && !(map = malloc(cap * sizeof(*map))))
		return -ENOMEM;
	chunk = calloc(ENTRY_CHUNK, sizeof(*chunk));
	chunks = chunk ? realloc(in->chunk,
				 (n / ENTRY_CHUNK) * sizeof(*chunks)) :
			 NULL;
	if (!chunks) {
		free(chunk);
		free(map);
		return -ENOMEM;
	}
	chunks[old / ENTRY_CHUNK] = chunk;
	in->chunk = chunks;
	in->nslots = n;
	for (i = n; i-- > old;) {
		chunk[i - old].next_free = in->free_head;
		in->free_head = i;
	}
	if (!map)
		return 0;
	free(in->map);
	in->map = map;
	in->mapcap = cap;
	for (i = 0; i < cap; i++)
		map[i] = NO_SLOT;
	for (i = 0; i < old; i++)
		if (slot_at(in, i)->id)
			map[map_place(in, slot_at(in, i)->id)] = i;
	return 0;
}

/* The told size of a node's own file inode @e, in its record's index,
 * or NULL: another inode, or none kept. Locked. */
static uint16_t *told_of(struct inodes *in, const struct entry *e)
{
	unsigned int slot = tree_file_slot(&e->node);

	if (extra_ino(e->id) || !e->node.rec || slot >= TREE_DIR_FILES ||
	    !live_record(in, e->node.rec))
		return NULL;
	return &in->ix[e->node.rec].told[slot];
}

/*
 * What the kernel was told of file inode @e, kept in its record while
 * its entry is not in use: an open with no lookup before it knows the
 * size the kernel has, and the owner. Locked.
 */
static void told_keep(struct inodes *in, const struct entry *e)
{
	uint16_t *told = told_of(in, e);

	if (!told)
		return;
	*told = e->told && e->size < UINT16_MAX ? (uint16_t)(e->size + 1) : 0;
	in->ix[e->node.rec].owner = e->owner;
}

static void told_recall(struct inodes *in, struct entry *e)
{
	uint16_t *told = told_of(in, e);

	if (!told || !*told)
		return;
	e->told = true;
	e->size = *told - 1U;
	e->owner = in->ix[e->node.rec].owner;
}

/*
 * A new entry for @id, node @n, charged to @who (NULL: to nobody); NULL
 * when out of memory or past @who's budget. Locked.
 */
static struct entry *entry_new(struct inodes *in, uint64_t id,
			       const struct node *n, struct budget_reader *who)
{
	struct budget_charge charge;
	struct entry *e;
	uint32_t index;

	if (budget_charge(who, 0, ENTRY_BYTES, &charge) < 0)
		return NULL;
	if (in->free_head == NO_SLOT && grow(in) < 0) {
		budget_uncharge(&charge);
		return NULL;
	}
	index = in->free_head;
	e = slot_at(in, index);
	in->free_head = e->next_free;
	memset(e, 0, sizeof(*e));
	e->index = index;
	e->id = id;
	e->node = *n;
	e->last = id;
	e->charge = charge;
	in->map[map_place(in, id)] = index;
	in->nentries++;
	told_recall(in, e);
	return e;
}

static void entry_drop(struct inodes *in, struct entry *e)
{
	uint32_t index = e->index;

	map_remove(in, e->id);
	text_free(in, e->text);
	budget_uncharge(&e->charge);
	memset(e, 0, sizeof(*e));
	e->next_free = in->free_head;
	in->free_head = index;
	in->nentries--;
}

/* Whether @e's content waits for its open by another thread than @pid. */
static bool pending_for_other(const struct entry *e, pid_t pid, long long now)
{
	return e->text && e->pid != pid &&
	       now - e->pending_ms < LOOKUP_PENDING_MS;
}

/*
 * Whether a node's own entry @e is in use; if not, it may go, what was
 * told kept in its record. Outside proc/ there are a few files per
 * processor and no record: their entries stay.
 */
static bool own_in_use(const struct entry *e, long long now)
{
	return e->opens || pending_for_other(e, 0, now) || !node_id_rec(e->id);
}

/* Whether extra inode @e is idle: nobody has it open or about to. */
static bool extra_idle(const struct entry *e, long long now)
{
	return !e->opens && now - e->pending_ms >= LOOKUP_PENDING_MS &&
	       now - e->forget_ms >= EXTRA_REFORGET_MS;
}

static void sweep(struct inodes *in, long long now, struct extras_idle *idle)
{
	struct entry *e;
	int i;

	idle->count = 0;
	for (i = 0; i < EXTRAS_SWEEP_MAX && in->nslots; i++) {
		e = slot_at(in, in->sweep++ % in->nslots);
		if (!e->id)
			continue;
		if (!extra_ino(e->id)) {
			if (!own_in_use(e, now))
				entry_drop(in, e);
		} else if (extra_idle(e, now)) {
			e->forget_ms = now;
			idle->node[idle->count++] = e->node;
		}
	}
}

/* ---- lookups and opens -------------------------------------------------- */

/* Directory @dir's path was checked now: its files' owner is @o.
 * Locked. */
static void mark_checked(struct inodes *in, const struct node *dir,
			 const struct owner *o, long long now)
{
	if (!dir->rec || !live_record(in, dir->rec))
		return;
	in->ix[dir->rec].checked_ms = now;
	in->ix[dir->rec].owner = *o;
}

void inodes_mark_checked(struct inodes *in, const struct node *dir,
			 const struct owner *o)
{
	pthread_mutex_lock(&in->lock);
	mark_checked(in, dir, o, clock_coarse_ms());
	pthread_mutex_unlock(&in->lock);
}

bool inodes_checked(struct inodes *in, const struct node *dir, struct owner *o)
{
	long long now = clock_coarse_ms();
	bool fresh;

	if (!dir->rec)
		return false;
	pthread_mutex_lock(&in->lock);
	fresh = live_record(in, dir->rec) &&
		now - in->ix[dir->rec].checked_ms < PATH_CHECKED_MS;
	if (fresh)
		*o = in->ix[dir->rec].owner;
	pthread_mutex_unlock(&in->lock);
	return fresh;
}

static void set_attr(struct entry *e, const struct owner *o, uint64_t size)
{
	e->owner = *o;
	e->size = size;
	e->told = true;
}

static void take_text(struct inodes *in, struct entry *e, const struct owner *o,
		      pid_t pid, struct rbuf *text, long long now)
{
	text_free(in, e->text);
	e->grew = e->told && text && text->len > e->size;
	set_attr(e, o, text ? text->len : 0);
	e->text = text;
	e->pid = pid;
	e->pending_ms = now;
}

/*
 * The entry of node @n's last inode, if it is still one of @n's: an
 * extra inode the kernel forgot has gone, and its ID may be another
 * node's since.
 */
static struct entry *find_last(const struct inodes *in, const struct entry *own,
			       const struct node *n)
{
	struct entry *e = own ? find(in, own->last) : NULL;

	return e && !memcmp(&e->node, n, sizeof(*n)) ? e : NULL;
}

/* Whether @e holds content that thread @pid's lookup made a moment
 * ago, not opened. */
static bool retakable(const struct entry *e, pid_t pid, long long now)
{
	return e && e->text && e->pid == pid && !e->opens &&
	       now - e->pending_ms < LOOKUP_TAKE_MS;
}

struct rbuf *inodes_retake(struct inodes *in, const struct node *n, pid_t pid)
{
	long long now = clock_coarse_ms();
	struct rbuf *text = NULL;
	struct entry *own, *e;

	pthread_mutex_lock(&in->lock);
	own = find(in, node_id(n));
	e = find_last(in, own, n);
	if (!retakable(e, pid, now)) /* a table's, forgotten already */
		e = own && tree_grows(n) ? own : NULL;
	if (retakable(e, pid, now)) {
		text = e->text;
		e->text = NULL;
	}
	pthread_mutex_unlock(&in->lock);
	return text;
}

int inodes_lookup(struct inodes *in, const struct node *n,
		  const struct owner *o, pid_t pid, struct rbuf *text,
		  const struct node *checked, const struct record_payer *payer,
		  uint64_t *ino, uint64_t *size, struct extras_idle *idle)
{
	struct budget_reader *who = payer ? payer->reader : NULL;
	uint64_t len = text ? text->len : 0, told, was;
	long long now = clock_coarse_ms();
	struct entry *own, *e;
	uint64_t id;
	int ret = -ENOMEM;

	pthread_mutex_lock(&in->lock);
	sweep(in, now, idle);
	/* Below proc/, the record that the node's own ID names. */
	if (n->rec && !live_record(in, n->rec)) {
		ret = -ENOENT;
		goto out;
	}
	if (checked)
		mark_checked(in, checked, o, now);
	own = find(in, node_id(n));
	if (!own)
		own = entry_new(in, node_id(n), n, who);
	if (!own)
		goto out;
	/* A value file's own inode, always; a table's inode is never
	 * given twice (inodes.h). */
	e = tree_grows(n) ? NULL : own;
	if (!e) {
		id = extra_make(in, n, payer);
		e = id ? entry_new(in, id, n, who) : NULL;
		if (!e) {
			if (id)
				record_forget(in, id, 1);
			goto out;
		}
	} else if (node_id_rec(e->id)) {
		/* The extra inode's record, or the node's directory's. */
		hold_locked(in, e->id);
	}
	/* An open of it may be read through the page cache: never
	 * shrunk under it (its short read at the end does that). */
	told = e->opens && e->told && e->size > len ? e->size : len;
	was = e->told ? e->size : told;
	take_text(in, e, o, pid, text, now);
	/* The least the kernel may hold: a reply can lose to an older
	 * one's attributes (inodes.h). */
	e->size = was < told ? was : told;
	told_keep(in, e);
	*size = told;
	if (extra_ino(e->id))
		e->nlookup++;
	own->last = e->id;
	*ino = e->id;
	ret = 0;
out:
	pthread_mutex_unlock(&in->lock);
	return ret;
}

int inodes_attr(struct inodes *in, uint64_t ino, struct node *n,
		struct owner *o, uint64_t *size)
{
	struct entry *e;
	int ret = -ENOENT;

	pthread_mutex_lock(&in->lock);
	e = find(in, ino);
	if (e && e->told) {
		*n = e->node;
		*o = e->owner;
		*size = e->size;
		ret = 0;
	}
	pthread_mutex_unlock(&in->lock);
	return ret;
}

int inodes_open(struct inodes *in, uint64_t ino, const struct node *n,
		pid_t pid, struct rbuf **text)
{
	struct rbuf *unused = NULL;
	struct entry *e;
	int ret = 1;

	*text = NULL;
	pthread_mutex_lock(&in->lock);
	e = find(in, ino);
	if (!e)
		e = entry_new(in, ino, n, NULL); /* size 0: it grows */
	if (!e) {
		ret = -ENOMEM;
	} else if (e->text && e->pid == pid && !e->opens &&
		   clock_coarse_ms() - e->pending_ms < LOOKUP_TAKE_MS) {
		*text = e->text;
		e->text = NULL;
		ret = e->grew ? 2 : 0;
		/* Grown by the caller where it was less: at least this. */
		e->size = (*text)->len;
		told_keep(in, e);
	} else {
		unused = e->text; /* not this reader's: it renders anew */
		e->text = NULL;
	}
	if (e)
		e->opens++;
	pthread_mutex_unlock(&in->lock);
	text_free(in, unused);
	return ret;
}

void inodes_release(struct inodes *in, uint64_t ino)
{
	struct entry *e;

	pthread_mutex_lock(&in->lock);
	e = find(in, ino);
	if (!e || !e->opens || --e->opens)
		goto out;
	/* Unused now: an extra inode the kernel forgot, a node's own. */
	if (extra_ino(ino) ? !e->nlookup : !own_in_use(e, clock_coarse_ms()))
		entry_drop(in, e);
out:
	pthread_mutex_unlock(&in->lock);
}

bool inodes_resize(struct inodes *in, uint64_t ino, const struct owner *o,
		   uint64_t size, bool can_grow)
{
	struct entry *e;
	bool grew = false;

	pthread_mutex_lock(&in->lock);
	e = find(in, ino);
	if (e) {
		grew = !e->told || size > e->size;
		if (grew && !can_grow)
			size = e->told ? e->size : 0;
		set_attr(e, o, size);
		told_keep(in, e);
	}
	pthread_mutex_unlock(&in->lock);
	return grew;
}

int inodes_adopt(struct inodes *in, uint64_t ino, const struct node *n,
		 uint64_t size)
{
	struct owner nobody = { 0 };
	struct entry *e;
	int ret = 0;

	pthread_mutex_lock(&in->lock);
	e = find(in, ino);
	if (!e)
		e = entry_new(in, ino, n, NULL);
	if (e) {
		if (!e->opens)
			set_attr(e, &nobody, size);
		e->opens++;
		if (extra_ino(ino) && !e->nlookup)
			e->nlookup = 1; /* FORGET says how many */
	} else {
		ret = -ENOMEM;
	}
	pthread_mutex_unlock(&in->lock);
	return ret;
}

/*
 * Extra inode @e of a table goes: content its lookup made a moment ago
 * waits in its node's own entry (which a table never hands out) for
 * the same thread's lookup again (inodes_retake()): the kernel forgets
 * the inode its revalidation refused before it looks the name up
 * afresh. Locked.
 */
static void keep_retakable(struct inodes *in, struct entry *e)
{
	struct entry *own;

	if (!retakable(e, e->pid, clock_coarse_ms()) || !tree_grows(&e->node))
		return;
	/* Only the entry that gave @e out (its record may have gone, its
	 * index the next record's, while the kernel forgot @e). */
	own = find(in, node_id(&e->node));
	if (!own || own->last != e->id || own->text)
		return;
	own->text = e->text;
	own->pid = e->pid;
	own->pending_ms = e->pending_ms;
	e->text = NULL;
}

/*
 * Record @rec of a node's own went: the entries of its nodes go, but one
 * open (which holds the kernel's inode, so the record: never). Locked.
 */
static void record_gone(struct inodes *in, uint32_t rec)
{
	struct node n = { .rec = rec };
	struct entry *e;

	for (n.kind = K_NONE + 1; n.kind < tree_kinds(); n.kind++) {
		e = find(in, node_id(&n));
		if (e && !e->opens)
			entry_drop(in, e);
	}
}

void inodes_forget(struct inodes *in, uint64_t id, uint64_t nlookup)
{
	struct entry *e = NULL;

	if (!node_id_rec(id))
		return;
	pthread_mutex_lock(&in->lock);
	if (extra_ino(id))
		e = find(in, id);
	if (e) {
		e->nlookup -= nlookup < e->nlookup ? nlookup : e->nlookup;
		if (!e->nlookup && !e->opens) {
			keep_retakable(in, e);
			entry_drop(in, e);
		}
	}
	if (record_forget(in, id, nlookup) && !extra_ino(id))
		record_gone(in, node_id_rec(id));
	pthread_mutex_unlock(&in->lock);
}

size_t inodes_in_use(struct inodes *in)
{
	size_t n;

	pthread_mutex_lock(&in->lock);
	n = in->nentries;
	pthread_mutex_unlock(&in->lock);
	return n;
}
