/*
 * task: a task's stat, status and schedstat, and its counters' history:
 * an entry per task number in a hash table, swept of tasks gone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "procfile.h"
#include "task.h"
#include "units.h"

/* Fields are numbered as in proc(5): 1 pid, 2 comm, 3 state, ... */
#define STAT_UTIME 14
#define STAT_STIME 15
#define STAT_STARTTIME 22
#define STAT_PROCESSOR 39

/* Skip blanks and one field. */
static const char *next_field(const char *p)
{
	while (*p == ' ')
		p++;
	while (*p && *p != ' ' && *p != '\n')
		p++;
	return p;
}

int task_parse_stat(const char *text, struct task_stat *st)
{
	/* The name may hold anything: it ends at the last ')'. */
	const char *name = strchr(text, '('), *p = strrchr(text, ')');
	uint64_t v;
	size_t len;
	int field;

	if (!name || !p || p < name || p[1] != ' ')
		return -EIO;
	len = (size_t)(p - name - 1);
	if (len >= sizeof(st->comm))
		len = sizeof(st->comm) - 1;
	memcpy(st->comm, name + 1, len);
	st->comm[len] = '\0';
	p++; /* now just before field 3 */
	for (field = 3; field <= STAT_PROCESSOR; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -EIO;
		switch (field) {
		case STAT_UTIME:
		case STAT_STIME:
		case STAT_STARTTIME:
		case STAT_PROCESSOR:
			if (procfile_u64(&p, &v) < 0 ||
			    (*p != ' ' && *p != '\n' && *p))
				return -EIO;
			if (field == STAT_UTIME)
				st->utime_ticks = v;
			else if (field == STAT_STIME)
				st->stime_ticks = v;
			else if (field == STAT_STARTTIME)
				st->start_ticks = v;
			else if (v > INT32_MAX)
				return -EIO;
			else
				st->cpu = (int)v;
			break;
		default:
			p = next_field(p);
		}
	}
	return 0;
}

static int status_id(const char *text, const char *key, int nth, uint64_t *id)
{
	const char *p = procfile_field(text, key);
	int i;

	if (!p)
		return -EIO;
	for (i = 0; i < nth; i++)
		if (procfile_u64(&p, id) < 0)
			return -EIO;
	return 0;
}

int task_parse_status(const char *text, pid_t *tgid, uid_t *uid, gid_t *gid)
{
	uint64_t t, u, g;

	/* Uid: and Gid: are real, effective, saved, filesystem. */
	if (status_id(text, "Tgid:", 1, &t) < 0 ||
	    status_id(text, "Uid:", 2, &u) < 0 ||
	    status_id(text, "Gid:", 2, &g) < 0)
		return -EIO;
	if (t == 0 || t > INT32_MAX || u > UINT32_MAX || g > UINT32_MAX)
		return -EIO;
	*tgid = (pid_t)t;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

int task_parse_creds(const char *text, struct task_creds *c)
{
	const char *u = procfile_field(text, "Uid:");
	const char *g = procfile_field(text, "Gid:");
	const char *cap = procfile_field(text, "CapPrm:");
	uint64_t v;
	char *end;
	int i;

	if (!u || !g)
		return -EIO;
	for (i = 0; i < 3; i++) {
		if (procfile_u64(&u, &v) < 0 || v > UINT32_MAX)
			return -EIO;
		c->uid[i] = (uid_t)v;
		if (procfile_u64(&g, &v) < 0 || v > UINT32_MAX)
			return -EIO;
		c->gid[i] = (gid_t)v;
	}
	/* Every kernel writes CapPrm; a captured tree may not: then the
	 * task is taken to hold every capability (the strictest rule). */
	c->cap_prm = UINT64_MAX;
	if (!cap)
		return 0;
	errno = 0;
	c->cap_prm = strtoull(cap, &end, 16);
	if (errno || end == cap)
		return -EIO;
	return 0;
}

int task_parse_schedstat(const char *text, uint64_t *runtime_ns)
{
	const char *p = text;

	if (procfile_u64(&p, runtime_ns) < 0 || *p != ' ')
		return -EIO;
	return 0;
}

void task_split(uint64_t cpu_ns, uint64_t utime, uint64_t stime,
		uint64_t *kernel_ns, uint64_t *user_ns)
{
	unsigned __int128 total = (unsigned __int128)utime + stime;

	*kernel_ns = 0;
	if (total)
		*kernel_ns =
			(uint64_t)((unsigned __int128)cpu_ns * stime / total);
	*user_ns = cpu_ns - *kernel_ns;
}

#define HISTORY_NO_SLOT UINT64_MAX

_Static_assert(sizeof(struct history_slot) == 40, "task.h's layout");
_Static_assert(sizeof(struct history_area) == 64, "task.h's layout");

/* A task's entry in the index: where its slot is. */
struct history_entry {
	struct hash_node node;
	struct history_slot *s;
};

/* Entries dropped per hold of the lock while a sweep drops them. */
#define SWEEP_DROP_BATCH 256

/* A store that the next process to map the area sees whole. */
static void put(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static uint64_t history_key(pid_t pid, pid_t tid)
{
	return TASK_HISTORY_LIVE | (uint64_t)(uint32_t)pid << 32 |
	       (uint32_t)tid;
}

static uint64_t history_hash(pid_t pid, pid_t tid)
{
	return hash_mix((uint32_t)pid, (uint32_t)tid);
}

/* The hash of a live @key, as history_hash() of its pid and tid. */
static uint64_t key_hash(uint64_t key)
{
	return hash_mix((uint32_t)(key >> 32) & 0x7fffffffu, (uint32_t)key);
}

static bool drop_entry(void *ctx, struct hash_node *n)
{
	(void)ctx;
	free(container_of(n, struct history_entry, node));
	return true;
}

/* Slot @s free: unpublished, and first of the free ones. Locked. */
static void slot_free(struct task_history *h, struct history_slot *s)
{
	__atomic_store_n(&s->key, 0, __ATOMIC_RELEASE);
	s->start_ticks = h->free_slot;
	h->free_slot = (uint64_t)(s - h->area->slot);
}

/*
 * A slot for a new entry (its key 0), or NULL when the area is full. One
 * past those in use is counted in use before it is written, so that a
 * successor reads it: free until its key is published.
 */
static struct history_slot *slot_take(struct task_history *h)
{
	struct history_area *a = h->area;
	struct history_slot *s;

	if (!a)
		return NULL;
	if (h->free_slot != HISTORY_NO_SLOT) {
		s = &a->slot[h->free_slot];
		h->free_slot = s->start_ticks;
		return s;
	}
	if (a->used >= a->capacity)
		return NULL;
	__atomic_store_n(&a->used, a->used + 1, __ATOMIC_RELEASE);
	return &a->slot[a->used - 1];
}

/*
 * Slot @s as the entry of @key, started at @start_ticks, with nothing
 * recorded: its key cleared first (a death before it is published
 * again leaves it free), published last.
 */
static void slot_write(struct history_slot *s, uint64_t key,
		       uint64_t start_ticks)
{
	if (s->key) {
		put(&s->key, 0);
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
	put(&s->start_ticks, start_ticks);
	put(&s->kernel_ns, 0);
	put(&s->user_ns, 0);
	put(&s->born_boot_ns, 0);
	__atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
}

/* The entry of number @pid, @tid, or NULL. Called locked. */
static struct history_entry *history_find(struct task_history *h, pid_t pid,
					  pid_t tid)
{
	uint64_t key = history_key(pid, tid);
	struct hash_node *n;
	struct history_entry *x;

	for (n = hash_first(&h->table, history_hash(pid, tid)); n;
	     n = hash_next(n)) {
		x = container_of(n, struct history_entry, node);
		if (x->s->key == key)
			return x;
	}
	return NULL;
}

/* @s indexed, or NULL out of memory. Called locked. */
static struct history_entry *index_add(struct task_history *h,
				       struct history_slot *s)
{
	struct history_entry *x = malloc(sizeof(*x));

	if (!x)
		return NULL;
	x->s = s;
	if (hash_add(&h->table, &x->node, key_hash(s->key)) < 0) {
		free(x);
		return NULL;
	}
	return x;
}

/*
 * The header of @h's area checked, or made anew when it is of another
 * layout or size: its magic cleared, every entry emptied (the pages
 * given back where the area is shared memory), the magic stored last.
 * A new area (all zero) needs no emptying. Locked.
 */
static void area_open(struct task_history *h)
{
	struct history_area *a = h->area;
	uint64_t cap = (h->area_bytes - sizeof(*a)) / sizeof(a->slot[0]);

	if (cap > TASK_HISTORY_MAX)
		cap = TASK_HISTORY_MAX;
	if (a->magic == TASK_HISTORY_MAGIC &&
	    a->slot_bytes == sizeof(a->slot[0]) &&
	    a->header_bytes == sizeof(*a) && a->capacity == cap &&
	    a->used <= cap)
		return;
	if (a->magic || a->capacity || a->used) {
		put(&a->magic, 0);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		if (madvise(a, h->area_bytes, MADV_REMOVE) < 0)
			memset(a->slot, 0, h->area_bytes - sizeof(*a));
	}
	a->slot_bytes = sizeof(a->slot[0]);
	a->header_bytes = sizeof(*a);
	a->capacity = cap;
	a->used = 0;
	__atomic_store_n(&a->magic, TASK_HISTORY_MAGIC, __ATOMIC_RELEASE);
}

/*
 * The index rebuilt from @h's area: every published entry (of two with
 * one number, as a death between two writes could leave, the later
 * task's), the free ones linked, lowest first. An entry that cannot be
 * indexed (out of memory) is dropped. Locked.
 */
static void area_index(struct task_history *h)
{
	struct history_area *a = h->area;
	struct history_slot *s;
	struct history_entry *x;
	uint64_t i, key;

	for (i = a->used; i-- > 0;) {
		s = &a->slot[i];
		key = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (!(key & TASK_HISTORY_LIVE)) {
			slot_free(h, s);
			continue;
		}
		x = history_find(h, (pid_t)(key >> 32 & 0x7fffffff),
				 (pid_t)(uint32_t)key);
		if (x && x->s->start_ticks < s->start_ticks) {
			slot_free(h, x->s);
			x->s = s;
		} else if (x || !index_add(h, s)) {
			slot_free(h, s);
		}
	}
}

/* @h's private area, or none. Locked. */
static void area_private(struct task_history *h)
{
	void *p = mmap(NULL, TASK_HISTORY_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	h->area = p == MAP_FAILED ? NULL : p;
	h->area_bytes = h->area ? TASK_HISTORY_BYTES : 0;
	h->own_area = h->area != NULL;
	if (h->area)
		area_open(h);
}

/* @h without its area and its index. Locked. */
static void area_drop(struct task_history *h)
{
	hash_filter(&h->table, drop_entry, NULL);
	if (h->own_area)
		munmap(h->area, h->area_bytes);
	h->area = NULL;
	h->area_bytes = 0;
	h->own_area = false;
	h->free_slot = HISTORY_NO_SLOT;
}

void task_history_init(struct task_history *h)
{
	pthread_mutex_init(&h->lock, NULL);
	hash_init(&h->table);
	h->area = NULL;
	h->own_area = false;
	h->free_slot = HISTORY_NO_SLOT;
	h->sweep_at = TASK_HISTORY_SWEEP_MIN;
	h->missed = 0;
	h->sweeping = false;
	h->keep = NULL;
	h->keep_ctx = NULL;
	area_private(h);
}

int task_history_set_area(struct task_history *h, void *area, size_t bytes)
{
	int ret = 0;

	pthread_mutex_lock(&h->lock);
	area_drop(h);
	if (!area) {
		area_private(h);
	} else if (bytes < sizeof(struct history_area) +
				   sizeof(struct history_slot) ||
		   (uintptr_t)area % 8) {
		ret = -EINVAL;
	} else {
		h->area = area;
		h->area_bytes = bytes;
		area_open(h);
		area_index(h);
	}
	h->missed = 0;
	h->sweep_at = h->table.count * 2;
	if (h->sweep_at < TASK_HISTORY_SWEEP_MIN)
		h->sweep_at = TASK_HISTORY_SWEEP_MIN;
	pthread_mutex_unlock(&h->lock);
	return ret;
}

void task_history_set_keep(struct task_history *h, task_history_keep_fn keep,
			   void *ctx)
{
	pthread_mutex_lock(&h->lock);
	h->keep = keep;
	h->keep_ctx = ctx;
	pthread_mutex_unlock(&h->lock);
}

void task_history_destroy(struct task_history *h)
{
	area_drop(h);
	hash_destroy(&h->table);
	pthread_mutex_destroy(&h->lock);
}

/*
 * A new entry of @pid, @tid started at @start_ticks, or NULL out of
 * room (counted as a miss: a full area is swept too) or memory. *@due
 * is set when the history is due a sweep. Locked.
 */
static struct history_entry *history_add(struct task_history *h, pid_t pid,
					 pid_t tid, uint64_t start_ticks,
					 bool *due)
{
	struct history_slot *s = slot_take(h);
	struct history_entry *x = NULL;

	if (s) {
		slot_write(s, history_key(pid, tid), start_ticks);
		x = index_add(h, s);
		if (!x)
			slot_free(h, s);
	} else if (h->area) {
		h->missed++;
	}
	*due = h->keep && !h->sweeping &&
	       h->table.count + h->missed >= h->sweep_at;
	return x;
}

/* *@kernel_ns and *@user_ns no less than @s's, their sum no less. */
static void clamp_to(const struct history_slot *s, uint64_t *kernel_ns,
		     uint64_t *user_ns)
{
	uint64_t cpu = *kernel_ns + *user_ns;
	uint64_t last_sum = s->kernel_ns + s->user_ns;

	if (cpu < last_sum)
		cpu = last_sum;
	/* kernel in [last kernel, cpu - last user]: not empty, since
	 * cpu >= last kernel + last user. */
	if (*kernel_ns < s->kernel_ns)
		*kernel_ns = s->kernel_ns;
	if (*kernel_ns > cpu - s->user_ns)
		*kernel_ns = cpu - s->user_ns;
	*user_ns = cpu - *kernel_ns;
}

/*
 * The entry of task @pid, @tid that started at @start_ticks: its own,
 * or a new one, or the entry of a task that started before under its
 * number, taken over (a new or taken entry holds nothing: no shares,
 * no start to the ns). NULL when its number names a later task, or out
 * of room or memory. *@due is set when the history is due a sweep.
 * Locked.
 */
static struct history_entry *history_of(struct task_history *h, pid_t pid,
					pid_t tid, uint64_t start_ticks,
					bool *due)
{
	struct history_entry *x = history_find(h, pid, tid);

	if (!x)
		return history_add(h, pid, tid, start_ticks, due);
	if (x->s->start_ticks == start_ticks)
		return x;
	if (x->s->start_ticks > start_ticks)
		return NULL; /* a task its number no longer names */
	slot_write(x->s, history_key(pid, tid), start_ticks);
	return x;
}

bool task_history_record(struct task_history *h, pid_t pid, pid_t tid,
			 uint64_t start_ticks, uint64_t *kernel_ns,
			 uint64_t *user_ns, uint64_t *boot_ns)
{
	struct history_entry *x;
	struct history_slot *s;
	bool due = false;

	pthread_mutex_lock(&h->lock);
	x = history_of(h, pid, tid, start_ticks, &due);
	s = x ? x->s : NULL;
	if (s && kernel_ns) {
		/* Each share only grows: a death between the two stores
		 * leaves a pair no less than any shown. */
		clamp_to(s, kernel_ns, user_ns); /* a new entry's: nothing */
		put(&s->kernel_ns, *kernel_ns);
		put(&s->user_ns, *user_ns);
	}
	if (s && boot_ns) {
		if (!s->born_boot_ns) /* the first one stays */
			put(&s->born_boot_ns, *boot_ns);
		*boot_ns = s->born_boot_ns;
	}
	pthread_mutex_unlock(&h->lock);
	return due;
}

/* Which task an entry was, copied out for a sweep. */
struct sweep_key {
	pid_t pid, tid;
	uint64_t start_ticks;
};

struct sweep_copy {
	struct sweep_key *keys;
	size_t n;
};

static bool copy_key(void *ctx, struct hash_node *n)
{
	struct sweep_copy *c = ctx;
	const struct history_slot *s =
		container_of(n, struct history_entry, node)->s;

	c->keys[c->n++] =
		(struct sweep_key){ (pid_t)(s->key >> 32 & 0x7fffffff),
				    (pid_t)(uint32_t)s->key, s->start_ticks };
	return false;
}

/*
 * The keys of every entry, into *@c, with the keep function and its
 * context; false when there is none, a sweep is under way, or out of
 * memory. Called locked; on true, h->sweeping is set.
 */
static bool sweep_begin(struct task_history *h, struct sweep_copy *c,
			task_history_keep_fn *keep, void **ctx)
{
	if (!h->keep || h->sweeping)
		return false;
	c->n = 0;
	c->keys = malloc((h->table.count ? h->table.count : 1) *
			 sizeof(*c->keys));
	if (!c->keys) {
		/* Try again when the table has grown as much once more. */
		h->sweep_at = h->table.count * 2;
		return false;
	}
	hash_filter(&h->table, copy_key, c);
	*keep = h->keep;
	*ctx = h->keep_ctx;
	h->sweeping = true;
	return true;
}

/*
 * Drop the entries of @gone that still hold the task they held when
 * copied (a later task may have taken a number over meanwhile), a
 * batch per hold of the lock. Returns how many.
 */
static size_t sweep_drop(struct task_history *h, const struct sweep_key *gone,
			 size_t n)
{
	struct history_entry *x;
	size_t i, dropped = 0;

	for (i = 0; i < n; i++) {
		if (i % SWEEP_DROP_BATCH == 0) {
			if (i)
				pthread_mutex_unlock(&h->lock);
			pthread_mutex_lock(&h->lock);
		}
		x = history_find(h, gone[i].pid, gone[i].tid);
		if (x && x->s->start_ticks == gone[i].start_ticks) {
			hash_del(&h->table, &x->node);
			slot_free(h, x->s);
			free(x);
			dropped++;
		}
	}
	if (n)
		pthread_mutex_unlock(&h->lock);
	return dropped;
}

size_t task_history_sweep(struct task_history *h)
{
	task_history_keep_fn keep;
	struct sweep_copy c;
	size_t i, ngone = 0, dropped;
	void *ctx;
	bool begun;

	pthread_mutex_lock(&h->lock);
	begun = sweep_begin(h, &c, &keep, &ctx);
	pthread_mutex_unlock(&h->lock);
	if (!begun)
		return 0;
	/* The slow part, a look at each task, without the lock. */
	for (i = 0; i < c.n; i++)
		if (!keep(ctx, c.keys[i].pid, c.keys[i].tid,
			  c.keys[i].start_ticks))
			c.keys[ngone++] = c.keys[i];
	dropped = sweep_drop(h, c.keys, ngone);
	free(c.keys);
	pthread_mutex_lock(&h->lock);
	h->sweeping = false;
	h->missed = 0;
	h->sweep_at = h->table.count * 2;
	if (h->sweep_at < TASK_HISTORY_SWEEP_MIN)
		h->sweep_at = TASK_HISTORY_SWEEP_MIN;
	pthread_mutex_unlock(&h->lock);
	return dropped;
}

bool task_history_start(struct task_history *h, pid_t pid, pid_t tid,
			uint64_t *start_ticks)
{
	struct history_entry *x;

	pthread_mutex_lock(&h->lock);
	x = history_find(h, pid, tid);
	if (x)
		*start_ticks = x->s->start_ticks;
	pthread_mutex_unlock(&h->lock);
	return x != NULL;
}

bool task_history_born(struct task_history *h, pid_t pid, pid_t tid,
		       uint64_t start_ticks, uint64_t *boot_ns)
{
	struct history_entry *x;
	bool known;

	pthread_mutex_lock(&h->lock);
	x = history_find(h, pid, tid);
	known = x && x->s->start_ticks == start_ticks && x->s->born_boot_ns;
	if (known)
		*boot_ns = x->s->born_boot_ns;
	pthread_mutex_unlock(&h->lock);
	return known;
}

bool task_history_set_born(struct task_history *h, pid_t pid, pid_t tid,
			   uint64_t start_ticks, uint64_t boot_ns)
{
	return task_history_record(h, pid, tid, start_ticks, NULL, NULL,
				   &boot_ns);
}
