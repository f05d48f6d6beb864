/*
 * snapshot: the table of the snapshots the kernel holds, by node ID,
 * and of the last one looked up of each node.
 *
 * A node ID is SNAPSHOT_INO_BIT, the slot's generation (31 bits) and
 * the slot's index (32 bits). Free slots are chained; a slot taken
 * again gets the next generation, so an ID the kernel has forgotten
 * never names its slot's next snapshot. The last slot of each node (by
 * the node's own inode number, its view included) is in a hash table
 * of chains through the slots, as large as the slot table.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snapshot.h"

#define GEN_SHIFT 32
#define GEN_MASK 0x7fffffffU
#define NO_SLOT UINT32_MAX

struct slot {
	bool used;
	bool last; /* the last of its node, in the hash table */
	uint32_t gen;
	uint32_t next; /* the next free slot, or the next in its chain */
	uint64_t node_ino;
	uint64_t nlookup;
	unsigned int opens;
	struct node node;
	struct stat st; /* st_size: what the kernel was last told */
	struct rbuf *text; /* the last lookup's content, until opened */
	pid_t pid; /* which thread looked it up */
	long long pending_s; /* and when */
	long long checked_ms; /* when a lookup last checked its path */
};

struct snapshots {
	pthread_mutex_t lock;
	struct slot *slot;
	uint32_t *bucket; /* cap heads of chains of last slots */
	uint32_t cap;
	uint32_t free_head;
	size_t count;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int snapshots_new(struct snapshots **out)
{
	struct snapshots *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->free_head = NO_SLOT;
	*out = s;
	return 0;
}

static void text_free(struct rbuf *text)
{
	if (text) {
		rbuf_free(text);
		free(text);
	}
}

void snapshots_free(struct snapshots *s)
{
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->cap; i++)
		if (s->slot[i].used)
			text_free(s->slot[i].text);
	free(s->slot);
	free(s->bucket);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static uint64_t ino_of(uint32_t index, uint32_t gen)
{
	return SNAPSHOT_INO_BIT | (uint64_t)(gen & GEN_MASK) << GEN_SHIFT |
	       index;
}

static uint32_t bucket_of(const struct snapshots *s, uint64_t node_ino)
{
	node_ino *= 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(node_ino >> 32) & (s->cap - 1);
}

/* The slot @ino names, in use; NULL if none. Called locked. */
static struct slot *slot_of(struct snapshots *s, uint64_t ino)
{
	uint32_t index = (uint32_t)ino;
	struct slot *sl;

	if (!snapshot_ino(ino) || index >= s->cap)
		return NULL;
	sl = &s->slot[index];
	if (!sl->used ||
	    (sl->gen & GEN_MASK) != ((ino >> GEN_SHIFT) & GEN_MASK))
		return NULL;
	return sl;
}

/* The last slot of @node_ino, or NO_SLOT. Called locked. */
static uint32_t last_of(const struct snapshots *s, uint64_t node_ino)
{
	uint32_t i;

	if (!s->cap)
		return NO_SLOT;
	for (i = s->bucket[bucket_of(s, node_ino)]; i != NO_SLOT;
	     i = s->slot[i].next)
		if (s->slot[i].node_ino == node_ino)
			return i;
	return NO_SLOT;
}

static void last_link(struct snapshots *s, uint32_t index)
{
	uint32_t *head = &s->bucket[bucket_of(s, s->slot[index].node_ino)];

	s->slot[index].next = *head;
	s->slot[index].last = true;
	*head = index;
}

static void last_unlink(struct snapshots *s, uint32_t index)
{
	uint32_t *p = &s->bucket[bucket_of(s, s->slot[index].node_ino)];

	while (*p != index)
		p = &s->slot[*p].next;
	*p = s->slot[index].next;
	s->slot[index].last = false;
}

/*
 * Twice the slots, and the hash table of last slots made anew at the
 * new size. -ENOMEM, with nothing changed, if it cannot. Called locked.
 */
static int grow(struct snapshots *s)
{
	uint32_t i, old = s->cap, cap = old ? old * 2 : 64;
	struct slot *slot;
	uint32_t *bucket;

	if (old >= (1U << 30))
		return -ENOMEM;
	bucket = malloc((size_t)cap * sizeof(*bucket));
	if (!bucket)
		return -ENOMEM;
	slot = realloc(s->slot, (size_t)cap * sizeof(*slot));
	if (!slot) {
		free(bucket);
		return -ENOMEM;
	}
	memset(slot + old, 0, (size_t)(cap - old) * sizeof(*slot));
	for (i = 0; i < cap; i++)
		bucket[i] = NO_SLOT;
	free(s->bucket);
	s->slot = slot;
	s->bucket = bucket;
	s->cap = cap;
	for (i = 0; i < old; i++) /* chained anew at the new size */
		if (slot[i].used && slot[i].last)
			last_link(s, i);
	for (i = cap; i-- > old;) {
		slot[i].next = s->free_head;
		s->free_head = i;
	}
	return 0;
}

/*
 * Whether the last slot @sl of its node may take a new lookup by @pid:
 * nobody has it open, and no other thread's lookup waits for its open.
 */
static bool reusable(const struct slot *sl, pid_t pid, long long now)
{
	if (sl->opens)
		return false;
	return !sl->text || sl->pid == pid ||
	       now - sl->pending_s >= SNAPSHOT_PENDING_S * 1000LL;
}

static void set_text(struct slot *sl, const struct stat *st, pid_t pid,
		     struct rbuf *text, bool checked, long long now)
{
	text_free(sl->text);
	if (checked)
		sl->checked_ms = now;
	sl->st = *st;
	sl->st.st_size = (off_t)text->len;
	sl->st.st_blocks = (blkcnt_t)((text->len + 511) / 512);
	sl->text = text;
	sl->pid = pid;
	sl->pending_s = now;
	sl->nlookup++;
}

bool snapshots_checked(struct snapshots *s, uint64_t node_ino, struct stat *st)
{
	long long now = now_ms();
	bool fresh = false;
	uint32_t index;

	pthread_mutex_lock(&s->lock);
	index = last_of(s, node_ino);
	if (index != NO_SLOT &&
	    now - s->slot[index].checked_ms < SNAPSHOT_CHECKED_MS) {
		*st = s->slot[index].st;
		fresh = true;
	}
	pthread_mutex_unlock(&s->lock);
	return fresh;
}

int snapshots_add(struct snapshots *s, const struct node *n,
		  const struct stat *st, pid_t pid, struct rbuf *text,
		  bool checked, uint64_t *ino)
{
	uint64_t node_ino = st->st_ino;
	long long now = now_ms();
	uint32_t index;
	struct slot *sl;

	pthread_mutex_lock(&s->lock);
	index = last_of(s, node_ino);
	if (index != NO_SLOT && reusable(&s->slot[index], pid, now)) {
		sl = &s->slot[index];
		set_text(sl, st, pid, text, checked, now);
		*ino = ino_of(index, sl->gen);
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (s->free_head == NO_SLOT && grow(s) < 0) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	if (index != NO_SLOT) /* held: it goes on, as no node's last */
		last_unlink(s, index);
	index = s->free_head;
	sl = &s->slot[index];
	s->free_head = sl->next;
	sl->used = true;
	sl->gen++;
	sl->node_ino = node_ino;
	sl->nlookup = 0;
	sl->opens = 0;
	sl->node = *n;
	sl->text = NULL;
	sl->checked_ms = 0;
	set_text(sl, st, pid, text, checked, now);
	last_link(s, index);
	s->count++;
	*ino = ino_of(index, sl->gen);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int snapshots_get(struct snapshots *s, uint64_t ino, struct node *n,
		  struct stat *st)
{
	struct slot *sl;
	int ret = -ENOENT;

	pthread_mutex_lock(&s->lock);
	sl = slot_of(s, ino);
	if (sl) {
		*n = sl->node;
		*st = sl->st;
		ret = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int snapshots_open(struct snapshots *s, uint64_t ino, pid_t pid,
		   struct rbuf **text)
{
	struct rbuf *unused = NULL;
	struct slot *sl;
	int ret = -ENOENT;

	*text = NULL;
	pthread_mutex_lock(&s->lock);
	sl = slot_of(s, ino);
	if (sl) {
		ret = 1;
		if (sl->text && sl->pid == pid && !sl->opens) {
			*text = sl->text;
			ret = 0;
		} else {
			unused = sl->text; /* another's: its open comes anew */
		}
		sl->text = NULL;
		sl->opens++;
	}
	pthread_mutex_unlock(&s->lock);
	text_free(unused);
	return ret;
}

void snapshots_release(struct snapshots *s, uint64_t ino)
{
	struct slot *sl;

	pthread_mutex_lock(&s->lock);
	sl = slot_of(s, ino);
	if (sl && sl->opens)
		sl->opens--;
	pthread_mutex_unlock(&s->lock);
}

bool snapshots_resize(struct snapshots *s, uint64_t ino, uint64_t size)
{
	struct slot *sl;
	bool grew = false;

	pthread_mutex_lock(&s->lock);
	sl = slot_of(s, ino);
	if (sl) {
		grew = size > (uint64_t)sl->st.st_size;
		sl->st.st_size = (off_t)size;
		sl->st.st_blocks = (blkcnt_t)((size + 511) / 512);
	}
	pthread_mutex_unlock(&s->lock);
	return grew;
}

void snapshots_forget(struct snapshots *s, uint64_t ino, uint64_t nlookup)
{
	struct rbuf *text = NULL;
	struct slot *sl;
	uint32_t index = (uint32_t)ino;

	pthread_mutex_lock(&s->lock);
	sl = slot_of(s, ino);
	if (sl && nlookup < sl->nlookup) {
		sl->nlookup -= nlookup;
	} else if (sl) {
		if (sl->last)
			last_unlink(s, index);
		text = sl->text;
		sl->text = NULL;
		sl->used = false;
		sl->next = s->free_head;
		s->free_head = index;
		s->count--;
	}
	pthread_mutex_unlock(&s->lock);
	text_free(text);
}

size_t snapshots_count(struct snapshots *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->count;
	pthread_mutex_unlock(&s->lock);
	return n;
}
