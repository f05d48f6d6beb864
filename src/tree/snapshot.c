/*
 * snapshot: the table of the inodes of files in use, by node ID, and of
 * the inode each node's last lookup gave.
 *
 * Entries live in an array of slots with a chain of free ones; a hash
 * table of open addressing maps a node ID to its slot. A file's own
 * entry (its ID its inode number) is the file's record while it is in
 * use: which inode its last lookup gave (its own, or an extra one), the
 * content waiting for its open, its opens. A directory's entry (its ID
 * the directory's inode number) records when a lookup of one of its
 * files last checked the path, and the owner found. An entry not in use
 * goes at the release that ends its use, or else when the sweep, four
 * slots round the array at each lookup, comes by.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "budget.h"
#include "clock.h"
#include "hash.h"
#include "snapshot.h"
#include "tree.h"

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
	long long checked_ms; /* a directory's: its path last checked */
	long long forget_ms; /* an extra's: when its forgetting was asked */
	uint64_t last; /* a node's own: the inode of its last lookup */
	struct budget_charge charge; /* its cost, to the reader that made it */
	uint32_t next_free;
};

/*
 * What an entry costs: its slot and two places in the map, twice over,
 * as the arrays grow by doubling.
 */
#define ENTRY_BYTES (2 * (sizeof(struct entry) + 2 * sizeof(uint32_t)))

struct snapshots {
	pthread_mutex_t lock;
	struct entry *slot;
	uint32_t nslots, free_head, sweep;
	uint32_t *map; /* mapcap slot indices, NO_SLOT where empty */
	uint32_t mapcap;
	size_t count;
	void (*free_text)(struct rbuf *text);
	long long extras_until_ms; /* every lookup gets an extra till then */
	struct snapshot_extras extras;
};

static void text_free(struct snapshots *s, struct rbuf *text)
{
	if (text)
		s->free_text(text);
}

size_t snapshots_entry_bytes(void)
{
	return ENTRY_BYTES;
}

int snapshots_new(void (*free_text)(struct rbuf *text),
		  const struct snapshot_extras *extras, struct snapshots **out)
{
	struct snapshots *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->free_text = free_text;
	s->extras = *extras;
	pthread_mutex_init(&s->lock, NULL);
	s->free_head = NO_SLOT;
	*out = s;
	return 0;
}

void snapshots_free(struct snapshots *s)
{
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->nslots; i++) {
		text_free(s, s->slot[i].text);
		budget_uncharge(&s->slot[i].charge);
	}
	free(s->slot);
	free(s->map);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* ---- the map of IDs to slots ------------------------------------------- */

static uint32_t home_of(const struct snapshots *s, uint64_t id)
{
	return (uint32_t)(hash_golden(id) >> 32) & (s->mapcap - 1);
}

/* Where @id is in the map, or the empty place it would take. */
static uint32_t map_place(const struct snapshots *s, uint64_t id)
{
	uint32_t i = home_of(s, id);

	while (s->map[i] != NO_SLOT && s->slot[s->map[i]].id != id)
		i = (i + 1) & (s->mapcap - 1);
	return i;
}

static struct entry *find(const struct snapshots *s, uint64_t id)
{
	uint32_t i;

	if (!s->mapcap || !id)
		return NULL;
	i = map_place(s, id);
	return s->map[i] == NO_SLOT ? NULL : &s->slot[s->map[i]];
}

/* Remove @id, shifting back the entries its place held up. */
static void map_remove(struct snapshots *s, uint64_t id)
{
	uint32_t mask = s->mapcap - 1, i = map_place(s, id), j, home;

	if (s->map[i] == NO_SLOT)
		return;
	for (j = (i + 1) & mask; s->map[j] != NO_SLOT; j = (j + 1) & mask) {
		home = home_of(s, s->slot[s->map[j]].id);
		/* j's entry may fill i unless its home lies in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->map[i] = s->map[j];
			i = j;
		}
	}
	s->map[i] = NO_SLOT;
}

/* Twice the slots and the map, the map made anew. Called locked. */
static int grow(struct snapshots *s)
{
	uint32_t i, old = s->nslots, n = old ? old * 2 : 32;
	struct entry *slot;
	uint32_t *map;

	if (old >= (1U << 28))
		return -ENOMEM;
	map = malloc((size_t)n * 2 * sizeof(*map));
	if (!map)
		return -ENOMEM;
	slot = realloc(s->slot, (size_t)n * sizeof(*slot));
	if (!slot) {
		free(map);
		return -ENOMEM;
	}
	memset(slot + old, 0, (size_t)(n - old) * sizeof(*slot));
	free(s->map);
	s->slot = slot;
	s->nslots = n;
	s->map = map;
	s->mapcap = n * 2;
	for (i = 0; i < s->mapcap; i++)
		map[i] = NO_SLOT;
	for (i = 0; i < old; i++)
		if (slot[i].id)
			map[map_place(s, slot[i].id)] = i;
	for (i = n; i-- > old;) {
		slot[i].next_free = s->free_head;
		s->free_head = i;
	}
	return 0;
}

/*
 * A new entry for @id, node @n, charged to @who (NULL: to nobody); NULL
 * when out of memory or past @who's budget.
 */
static struct entry *entry_new(struct snapshots *s, uint64_t id,
			       const struct node *n, struct budget_reader *who)
{
	struct budget_charge charge;
	struct entry *e;
	uint32_t index;

	if (budget_charge(who, 0, ENTRY_BYTES, &charge) < 0)
		return NULL;
	if (s->free_head == NO_SLOT && grow(s) < 0) {
		budget_uncharge(&charge);
		return NULL;
	}
	index = s->free_head;
	e = &s->slot[index];
	s->free_head = e->next_free;
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->node = *n;
	e->last = id;
	e->charge = charge;
	s->map[map_place(s, id)] = index;
	s->count++;
	return e;
}

static void entry_drop(struct snapshots *s, struct entry *e)
{
	uint32_t index = (uint32_t)(e - s->slot);

	map_remove(s, e->id);
	text_free(s, e->text);
	budget_uncharge(&e->charge);
	memset(e, 0, sizeof(*e));
	e->next_free = s->free_head;
	s->free_head = index;
	s->count--;
}

/* Whether @e's content waits for its open by another thread than @pid. */
static bool pending_for_other(const struct entry *e, pid_t pid, long long now)
{
	return e->text && e->pid != pid &&
	       now - e->pending_ms < SNAPSHOT_PENDING_MS;
}

/* Whether a node's own entry @e is in use; if not, it may go. */
static bool own_in_use(const struct entry *e, long long now)
{
	return e->opens || pending_for_other(e, 0, now) ||
	       now - e->checked_ms < SNAPSHOT_CHECKED_MS;
}

/* Whether extra inode @e is idle: nobody has it open or about to. */
static bool extra_idle(const struct entry *e, long long now)
{
	return !e->opens && now - e->pending_ms >= SNAPSHOT_PENDING_MS &&
	       now - e->forget_ms >= SNAPSHOT_REFORGET_MS;
}

static void sweep(struct snapshots *s, long long now,
		  struct snapshot_idle *idle)
{
	struct entry *e;
	int i;

	idle->count = 0;
	for (i = 0; i < SNAPSHOT_SWEEP_MAX && s->nslots; i++) {
		e = &s->slot[s->sweep++ % s->nslots];
		if (!e->id)
			continue;
		if (!snapshot_ino(e->id)) {
			if (!own_in_use(e, now))
				entry_drop(s, e);
		} else if (extra_idle(e, now)) {
			e->forget_ms = now;
			idle->node[idle->count++] = e->node;
		}
	}
}

/* ---- lookups and opens -------------------------------------------------- */

bool snapshots_checked(struct snapshots *s, const struct node *dir,
		       struct owner *o)
{
	long long now = clock_coarse_ms();
	struct entry *e;
	bool fresh;

	pthread_mutex_lock(&s->lock);
	e = find(s, node_id(dir));
	fresh = e && now - e->checked_ms < SNAPSHOT_CHECKED_MS;
	if (fresh)
		*o = e->owner;
	pthread_mutex_unlock(&s->lock);
	return fresh;
}

/* Whether inode @e may take a lookup by @pid: nobody has it open, and
 * no other thread's lookup waits for its open. */
static bool reusable(const struct entry *e, pid_t pid, long long now)
{
	return !e->opens && !pending_for_other(e, pid, now);
}

static void set_attr(struct entry *e, const struct owner *o, uint64_t size)
{
	e->owner = *o;
	e->size = size;
	e->told = true;
}

static void take_text(struct snapshots *s, struct entry *e,
		      const struct owner *o, pid_t pid, struct rbuf *text,
		      long long now)
{
	text_free(s, e->text);
	e->grew = e->told && text && text->len > e->size;
	set_attr(e, o, text ? text->len : 0);
	e->text = text;
	e->pid = pid;
	e->pending_ms = now;
}

/* Directory @dir's path was checked now: its files' owner is @o. */
static int mark_checked(struct snapshots *s, const struct node *dir,
			const struct owner *o, struct budget_reader *who,
			long long now)
{
	struct entry *e = find(s, node_id(dir));

	if (!e)
		e = entry_new(s, node_id(dir), dir, who);
	if (!e)
		return -ENOMEM;
	e->checked_ms = now;
	e->owner = *o;
	return 0;
}

/*
 * The entry of node @n's last inode, if it is still one of @n's: an
 * extra inode the kernel forgot has gone, and its ID may be another
 * node's since.
 */
static struct entry *find_last(const struct snapshots *s,
			       const struct entry *own, const struct node *n)
{
	struct entry *e = own ? find(s, own->last) : NULL;

	return e && !memcmp(&e->node, n, sizeof(*n)) ? e : NULL;
}

/* Whether @e holds content that thread @pid's lookup made a moment
 * ago, not opened. */
static bool retakable(const struct entry *e, pid_t pid, long long now)
{
	return e && e->text && e->pid == pid && !e->opens &&
	       now - e->pending_ms < SNAPSHOT_TAKE_MS;
}

struct rbuf *snapshots_retake(struct snapshots *s, const struct node *n,
			      pid_t pid)
{
	long long now = clock_coarse_ms();
	struct rbuf *text = NULL;
	struct entry *own, *e;

	pthread_mutex_lock(&s->lock);
	own = find(s, node_id(n));
	e = find_last(s, own, n);
	if (!retakable(e, pid, now)) /* a table's, forgotten already */
		e = own && tree_grows(n) ? own : NULL;
	if (retakable(e, pid, now)) {
		text = e->text;
		e->text = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	return text;
}

int snapshots_lookup(struct snapshots *s, const struct node *n,
		     const struct owner *o, pid_t pid, struct rbuf *text,
		     const struct node *checked, struct budget_reader *who,
		     uint64_t *ino, struct snapshot_idle *idle)
{
	long long now = clock_coarse_ms();
	struct entry *own, *e;
	uint64_t id;

	pthread_mutex_lock(&s->lock);
	sweep(s, now, idle);
	if (checked && mark_checked(s, checked, o, who, now) < 0)
		goto out_nomem;
	own = find(s, node_id(n));
	if (!own)
		own = entry_new(s, node_id(n), n, who);
	if (!own)
		goto out_nomem;
	/* A table's inode is never given twice (snapshot.h). */
	e = NULL;
	if (!tree_grows(n) && now >= s->extras_until_ms) {
		e = find_last(s, own, n);
		if (!e || !reusable(e, pid, now))
			e = reusable(own, pid, now) ? own : NULL;
	}
	if (!e) {
		id = s->extras.make(s->extras.ctx, n);
		e = id ? entry_new(s, id, n, who) : NULL;
		if (!e)
			goto out_nomem;
		own = find(s, node_id(n)); /* the slots may have moved */
	}
	take_text(s, e, o, pid, text, now);
	if (snapshot_ino(e->id)) {
		e->nlookup++;
		s->extras.hold(s->extras.ctx, e->id);
	}
	own->last = e->id;
	*ino = e->id;
	pthread_mutex_unlock(&s->lock);
	return 0;

out_nomem:
	pthread_mutex_unlock(&s->lock);
	return -ENOMEM;
}

int snapshots_get(struct snapshots *s, uint64_t ino, struct node *n,
		  struct owner *o, uint64_t *size)
{
	struct entry *e;
	int ret = -ENOENT;

	pthread_mutex_lock(&s->lock);
	e = find(s, ino);
	if (e && e->told) {
		*n = e->node;
		*o = e->owner;
		*size = e->size;
		ret = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int snapshots_open(struct snapshots *s, uint64_t ino, const struct node *n,
		   pid_t pid, struct rbuf **text)
{
	struct rbuf *unused = NULL;
	struct entry *e;
	int ret = 1;

	*text = NULL;
	pthread_mutex_lock(&s->lock);
	e = find(s, ino);
	if (!e)
		e = entry_new(s, ino, n, NULL); /* size 0: it grows */
	if (!e) {
		ret = -ENOMEM;
	} else if (e->text && e->pid == pid && !e->opens &&
		   clock_coarse_ms() - e->pending_ms < SNAPSHOT_TAKE_MS) {
		*text = e->text;
		e->text = NULL;
		ret = e->grew ? 2 : 0;
	} else {
		unused = e->text; /* not this reader's: it renders anew */
		e->text = NULL;
	}
	if (e)
		e->opens++;
	pthread_mutex_unlock(&s->lock);
	text_free(s, unused);
	return ret;
}

void snapshots_release(struct snapshots *s, uint64_t ino)
{
	struct entry *e;

	pthread_mutex_lock(&s->lock);
	e = find(s, ino);
	if (!e || !e->opens || --e->opens)
		goto out;
	/* Unused now: an extra inode the kernel forgot, a node's own. */
	if (snapshot_ino(ino) ? !e->nlookup : !own_in_use(e, clock_coarse_ms()))
		entry_drop(s, e);
out:
	pthread_mutex_unlock(&s->lock);
}

bool snapshots_resize(struct snapshots *s, uint64_t ino, const struct owner *o,
		      uint64_t size)
{
	struct entry *e;
	bool grew = false;

	pthread_mutex_lock(&s->lock);
	e = find(s, ino);
	if (e) {
		grew = !e->told || size > e->size;
		set_attr(e, o, size);
	}
	pthread_mutex_unlock(&s->lock);
	return grew;
}

int snapshots_adopt(struct snapshots *s, uint64_t ino, const struct node *n,
		    uint64_t size)
{
	struct owner nobody = { 0 };
	struct entry *e;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	e = find(s, ino);
	if (!e)
		e = entry_new(s, ino, n, NULL);
	if (e) {
		if (!e->opens)
			set_attr(e, &nobody, size);
		e->opens++;
		if (snapshot_ino(ino) && !e->nlookup)
			e->nlookup = 1; /* FORGET says how many */
	} else {
		ret = -ENOMEM;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/*
 * Extra inode @e of a table goes: content its lookup made a moment ago
 * waits in its node's own entry (which a table never hands out) for
 * the same thread's lookup again (snapshots_retake()): the kernel
 * forgets the inode its revalidation refused before it looks the name
 * up afresh.
 */
static void keep_retakable(struct snapshots *s, struct entry *e)
{
	struct entry *own;

	if (!retakable(e, e->pid, clock_coarse_ms()) || !tree_grows(&e->node))
		return;
	/* Only the entry that gave @e out (its record may have gone, its
	 * index the next record's, while the kernel forgot @e). */
	own = find(s, node_id(&e->node));
	if (!own || own->last != e->id || own->text)
		return;
	own->text = e->text;
	own->pid = e->pid;
	own->pending_ms = e->pending_ms;
	e->text = NULL;
}

/*
 * Record @rec of a node's own went: the entries of its nodes go, but one
 * open (which holds the kernel's inode, so the record: never).
 */
static void record_gone(struct snapshots *s, uint32_t rec)
{
	struct node n = { .rec = rec };
	struct entry *e;

	for (n.kind = K_NONE + 1; n.kind < tree_kinds(); n.kind++) {
		e = find(s, node_id(&n));
		if (e && !e->opens)
			entry_drop(s, e);
	}
}

void snapshots_forget(struct snapshots *s, uint64_t ino, uint64_t nlookup)
{
	struct entry *e = NULL;

	if (!node_id_rec(ino))
		return;
	pthread_mutex_lock(&s->lock);
	if (snapshot_ino(ino))
		e = find(s, ino);
	if (e) {
		e->nlookup -= nlookup < e->nlookup ? nlookup : e->nlookup;
		if (!e->nlookup && !e->opens) {
			keep_retakable(s, e);
			entry_drop(s, e);
		}
	}
	if (s->extras.forget(s->extras.ctx, ino, nlookup) && !snapshot_ino(ino))
		record_gone(s, node_id_rec(ino));
	pthread_mutex_unlock(&s->lock);
}

void snapshots_taken_over(struct snapshots *s)
{
	pthread_mutex_lock(&s->lock);
	s->extras_until_ms = clock_coarse_ms() + SNAPSHOT_PENDING_MS;
	pthread_mutex_unlock(&s->lock);
}

size_t snapshots_count(struct snapshots *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->count;
	pthread_mutex_unlock(&s->lock);
	return n;
}
