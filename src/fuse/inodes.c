/*
 * inodes: the table of the inodes the kernel holds (inodes.h): the
 * entries of the inodes in use, and the lookups and opens that use
 * them; the records are records.c's (inodes-internal.h).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "hash.h"
#include "inodes-internal.h"
#include "log.h"
#include "tree.h"

/* Slot @i of the entries. */
static struct inode_use *slot_at(const struct inodes *in, uint32_t i)
{
	return &in->chunk[i / ENTRY_CHUNK][i % ENTRY_CHUNK];
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
	records_rebuild(in);
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

/* The entry of @id, or NULL. Locked. */
static struct inode_use *find(const struct inodes *in, uint64_t id);

int inodes_node(struct inodes *in, uint64_t id, struct node *n,
		struct record_task *t)
{
	struct node rn;
	struct inode_use *e;
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

static struct inode_use *find(const struct inodes *in, uint64_t id)
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
	struct inode_use **chunks, *chunk;
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
static uint16_t *told_of(struct inodes *in, const struct inode_use *e)
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
static void told_keep(struct inodes *in, const struct inode_use *e)
{
	uint16_t *told = told_of(in, e);

	if (!told)
		return;
	*told = e->told && e->size < UINT16_MAX ? (uint16_t)(e->size + 1) : 0;
	in->ix[e->node.rec].owner = e->owner;
}

static void told_recall(struct inodes *in, struct inode_use *e)
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
static struct inode_use *entry_new(struct inodes *in, uint64_t id,
				   const struct node *n,
				   struct budget_reader *who)
{
	struct budget_charge charge;
	struct inode_use *e;
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

static void entry_drop(struct inodes *in, struct inode_use *e)
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
static bool pending_for_other(const struct inode_use *e, pid_t pid,
			      long long now)
{
	return e->text && e->pid != pid &&
	       now - e->pending_ms < LOOKUP_PENDING_MS;
}

/*
 * Whether a node's own entry @e is in use; if not, it may go, what was
 * told kept in its record. Outside proc/ there are a few files per
 * processor and no record: their entries stay.
 */
static bool own_in_use(const struct inode_use *e, long long now)
{
	return e->opens || pending_for_other(e, 0, now) || !node_id_rec(e->id);
}

/* Whether extra inode @e is idle: nobody has it open or about to. */
static bool extra_idle(const struct inode_use *e, long long now)
{
	return !e->opens && now - e->pending_ms >= LOOKUP_PENDING_MS &&
	       now - e->forget_ms >= EXTRA_REFORGET_MS;
}

static void sweep(struct inodes *in, long long now, struct extras_idle *idle)
{
	struct inode_use *e;
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

static void set_attr(struct inode_use *e, const struct owner *o, uint64_t size)
{
	e->owner = *o;
	e->size = size;
	e->told = true;
}

static void take_text(struct inodes *in, struct inode_use *e,
		      const struct owner *o, pid_t pid, struct rbuf *text,
		      long long now)
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
static struct inode_use *find_last(const struct inodes *in,
				   const struct inode_use *own,
				   const struct node *n)
{
	struct inode_use *e = own ? find(in, own->last) : NULL;

	return e && !memcmp(&e->node, n, sizeof(*n)) ? e : NULL;
}

/* Whether @e holds content that thread @pid's lookup made a moment
 * ago, not opened. */
static bool retakable(const struct inode_use *e, pid_t pid, long long now)
{
	return e && e->text && e->pid == pid && !e->opens &&
	       now - e->pending_ms < LOOKUP_TAKE_MS;
}

struct rbuf *inodes_retake(struct inodes *in, const struct node *n, pid_t pid)
{
	long long now = clock_coarse_ms();
	struct rbuf *text = NULL;
	struct inode_use *own, *e;

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
	struct inode_use *own, *e;
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
	struct inode_use *e;
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
	struct inode_use *e;
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
	struct inode_use *e;

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

int inodes_resize(struct inodes *in, uint64_t ino, const struct owner *o,
		  uint64_t size, bool can_grow)
{
	struct inode_use *e;
	int grew = 0;

	pthread_mutex_lock(&in->lock);
	e = find(in, ino);
	if (e && !o && !e->told) {
		grew = -ENOENT;
	} else if (e) {
		grew = !e->told || size > e->size;
		if (grew && !can_grow)
			size = e->told ? e->size : 0;
		set_attr(e, o ? o : &e->owner, size);
		told_keep(in, e);
	}
	pthread_mutex_unlock(&in->lock);
	return grew;
}

int inodes_adopt(struct inodes *in, uint64_t ino, const struct node *n,
		 uint64_t size)
{
	struct owner nobody = { 0 };
	struct inode_use *e;
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
static void keep_retakable(struct inodes *in, struct inode_use *e)
{
	struct inode_use *own;

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
	struct inode_use *e;

	for (n.kind = K_NONE + 1; n.kind < tree_kinds(); n.kind++) {
		e = find(in, node_id(&n));
		if (e && !e->opens)
			entry_drop(in, e);
	}
}

void inodes_forget(struct inodes *in, uint64_t id, uint64_t nlookup)
{
	struct inode_use *e = NULL;

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
