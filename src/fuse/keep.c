/*
 * keep: the contents of the files the kernel has open, in a memfd that
 * outlives the server that made them (keep.h).
 *
 * The slot table is read without a lock, as a sequence lock: a reader
 * loads a slot's state word (acquire), then its fields, then the word
 * again after an acquire fence; a writer changes the word before it
 * writes any field (relaxed store, release fence) and stores it once
 * more after (release). Every reuse of a slot and every drop changes
 * the word, so a reader that finds the same sequence number and a live
 * state both times read fields that belong to it. A drop stores the
 * free state before its pages go back to the allocator, under the lock
 * that the next put of those pages takes.
 *
 * The allocator is the process's: a stack of free slots (the lowest
 * first after a map, the most recently freed after), the slots never
 * used since the map above it, and a bitmap of the data area's pages
 * (a bit set: in use), searched for the lowest run long enough from
 * the lowest page that may be free.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keep.h"

#define KEEP_MAGIC "tfs-keep"
#define KEEP_VERSION 2
/* A store of version 1 has no record area (keep_records()). */
#define KEEP_VERSION_NO_RECORDS 1
/* The table's or the data area's most bytes: their sum fits an off_t
 * and a size_t, rounded up. */
#define KEEP_SIZE_MAX                                                     \
	((uint64_t)SIZE_MAX / 4 < (1ULL << 46) ? (uint64_t)SIZE_MAX / 4 : \
						 (1ULL << 46))

/* A slot's state, the low 32 bits of its word. */
enum {
	SLOT_FREE = 0,
	SLOT_CLAIMED = 1, /* being written, or written: not committed */
	SLOT_COMMITTED = 2,
};

/* A sequence number has 31 bits: a handle's bit 63 is the caller's. */
#define SEQ_MASK 0x7fffffffU
#define WORD(seq, state) ((uint64_t)(seq) << 32 | (state))
#define WORD_SEQ(w) ((uint32_t)((w) >> 32))
#define WORD_STATE(w) ((uint32_t)(w))

struct keep_header {
	char magic[8];
	uint32_t version;
	uint32_t slot_bytes; /* sizeof(struct keep_slot) */
	uint32_t page_bytes; /* KEEP_PAGE */
	uint32_t slots;
	uint64_t table_off; /* KEEP_PAGE */
	uint64_t data_off; /* after the table, a multiple of KEEP_CHUNK */
	uint64_t data_bytes; /* a multiple of KEEP_CHUNK */
	uint64_t total_bytes; /* the memfd's size */
	/* Version 2: */
	uint64_t records_off; /* after the data area, a multiple of KEEP_CHUNK */
	uint64_t records_bytes; /* a multiple of KEEP_CHUNK; 0: none */
};

/* Every field but the content is read and written as an atomic. */
struct keep_slot {
	uint64_t word; /* WORD(seq, state) */
	uint64_t ino; /* keep_put()'s numbers: an inode, or a rewind's */
	uint64_t node;
	uint64_t len;
	union {
		char bytes[KEEP_INLINE]; /* len <= KEEP_INLINE */
		uint64_t words[KEEP_INLINE / 8]; /* how they are written */
		struct {
			uint64_t page; /* the first, in the data area */
			uint64_t pages;
		} ext;
	} u;
};

_Static_assert(sizeof(struct keep_slot) == 64, "a slot is 64 bytes");
_Static_assert(sizeof(struct keep_header) <= KEEP_PAGE, "header fits");
_Static_assert(KEEP_CHUNK / KEEP_PAGE == 16, "a chunk is 16 bits of a word");
_Static_assert(KEEP_WARM_BYTES % KEEP_CHUNK == 0, "warm area in chunks");

struct keep {
	char *base; /* the mapping, total_bytes */
	size_t total_bytes;
	struct keep_slot *table;
	uint32_t slots;
	char *data;
	size_t npages;
	void *records; /* the record area, or NULL */
	size_t records_bytes;

	pthread_mutex_t lock; /* the allocator: */
	uint32_t *free_slot; /* a stack of free slots below @fresh */
	uint32_t nfree;
	uint32_t fresh; /* atomic: slots from here on never used */
	uint64_t *map; /* a bit per page, set: in use or being given back */
	size_t low; /* every page below is in use */
};

#define LOAD(p) __atomic_load_n(p, __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)

static uint64_t round_up(uint64_t n, uint64_t to)
{
	return (n + to - 1) / to * to;
}

/* The data pages a content of @len bytes takes (any @len: no overflow). */
static uint64_t pages_of(uint64_t len)
{
	if (len <= KEEP_INLINE)
		return 0;
	return len / KEEP_PAGE + (len % KEEP_PAGE != 0);
}

/*
 * The layout of a store of @slots slots and at least @data_bytes of
 * data, into @h: false when it overflows.
 */
static bool layout(uint32_t slots, uint64_t data_bytes, uint64_t records_bytes,
		   struct keep_header *h)
{
	uint64_t table = (uint64_t)slots * sizeof(struct keep_slot);

	if (data_bytes > KEEP_SIZE_MAX || table > KEEP_SIZE_MAX ||
	    records_bytes > KEEP_SIZE_MAX)
		return false;
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, KEEP_MAGIC, sizeof(h->magic));
	h->version = KEEP_VERSION;
	h->slot_bytes = sizeof(struct keep_slot);
	h->page_bytes = KEEP_PAGE;
	h->slots = slots;
	h->table_off = KEEP_PAGE;
	h->data_off = round_up(KEEP_PAGE + table, KEEP_CHUNK);
	h->data_bytes = round_up(data_bytes, KEEP_CHUNK);
	h->total_bytes = h->data_off + h->data_bytes;
	h->records_bytes = round_up(records_bytes, KEEP_CHUNK);
	h->records_off = h->records_bytes ? h->total_bytes : 0;
	h->total_bytes += h->records_bytes;
	return true;
}

int keep_create(unsigned int slots, size_t data_bytes, size_t records_bytes)
{
	struct keep_header h;
	ssize_t written;
	int fd, err;

	if (slots < 1 || slots > KEEP_SLOTS_MAX ||
	    !layout(slots, data_bytes, records_bytes, &h))
		return -EINVAL;
	fd = memfd_create("timingfs-keep", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)h.total_bytes) < 0)
		goto out_close;
	written = pwrite(fd, &h, sizeof(h), 0);
	if (written != (ssize_t)sizeof(h)) {
		if (written >= 0)
			errno = EIO;
		goto out_close;
	}
	/* A store that shrank under a mapping would fault its readers. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto out_close;
	return fd;

out_close:
	err = errno;
	close(fd);
	return -err;
}

/*
 * Whether @fd's header @h is one keep_create() writes, for its size: of
 * this version, or of version 1, which an older server made and which
 * has no record area (its header ends before records_off, read as 0).
 */
static bool header_valid(struct keep_header *h, off_t size)
{
	struct keep_header want;

	if (h->version == KEEP_VERSION_NO_RECORDS) {
		h->records_off = h->records_bytes = 0;
		h->version = KEEP_VERSION;
	}
	if (h->slots < 1 || h->slots > KEEP_SLOTS_MAX ||
	    !layout(h->slots, h->data_bytes, h->records_bytes, &want))
		return false;
	return memcmp(h, &want, sizeof(want)) == 0 &&
	       (uint64_t)size == h->total_bytes;
}

/* Pages [@page, @page + @n) set in the bitmap (@used) or cleared. */
static void map_set(uint64_t *map, size_t page, size_t n, bool used)
{
	size_t i = page, end = page + n, bits;
	uint64_t mask;

	while (i < end) {
		bits = 64 - i % 64 < end - i ? 64 - i % 64 : end - i;
		mask = (bits == 64 ? ~0ULL : ((1ULL << bits) - 1)) << (i % 64);
		if (used)
			map[i / 64] |= mask;
		else
			map[i / 64] &= ~mask;
		i += bits;
	}
}

/* Whether any page of [@page, @page + @n) is set. */
static bool map_any(const uint64_t *map, size_t page, size_t n)
{
	size_t i = page, end = page + n, bits;
	uint64_t mask;

	while (i < end) {
		bits = 64 - i % 64 < end - i ? 64 - i % 64 : end - i;
		mask = (bits == 64 ? ~0ULL : ((1ULL << bits) - 1)) << (i % 64);
		if (map[i / 64] & mask)
			return true;
		i += bits;
	}
	return false;
}

/* The first page from @i on whose bit is @used, or @end. */
static size_t map_next(const uint64_t *map, size_t i, size_t end, bool used)
{
	uint64_t w;

	while (i < end) {
		w = map[i / 64] ^ (used ? 0 : ~0ULL);
		w &= ~0ULL << (i % 64);
		if (w) {
			i = i / 64 * 64 + (size_t)__builtin_ctzll(w);
			return i < end ? i : end;
		}
		i = (i / 64 + 1) * 64;
	}
	return end;
}

/* The lowest run of @n free pages: its first page, or npages. Locked. */
static size_t take_pages(struct keep *k, size_t n)
{
	size_t start = k->low, end;

	while (start < k->npages && k->npages - start >= n) {
		start = map_next(k->map, start, k->npages, false);
		if (k->npages - start < n)
			break;
		end = map_next(k->map, start, start + n, true);
		if (end == start + n) {
			map_set(k->map, start, n, true);
			if (start == k->low)
				k->low = start + n;
			return start;
		}
		start = end;
	}
	return k->npages;
}

/* A free slot: its index, or k->slots when none is. Locked. */
static uint32_t take_slot(struct keep *k)
{
	uint32_t fresh = LOAD(&k->fresh);

	if (k->nfree)
		return k->free_slot[--k->nfree];
	if (fresh < k->slots) {
		/* keep_each() reads @fresh without the lock. */
		__atomic_store_n(&k->fresh, fresh + 1, __ATOMIC_RELEASE);
		return fresh;
	}
	return k->slots;
}

/* Give the pages of the data area's chunks [@first, @first + @n) back. */
static void give_back(struct keep *k, size_t first, size_t n)
{
	if (n)
		madvise(k->data + first * KEEP_CHUNK, n * KEEP_CHUNK,
			MADV_REMOVE);
}

/*
 * The chunks that pages [@page, @page + @n), just freed, leave wholly
 * free and that may be given back: their first in *@first, their count
 * returned (they are contiguous: every chunk within the run is free).
 * Locked.
 */
static size_t chunks_freed(struct keep *k, size_t page, size_t n, size_t *first)
{
	size_t per = KEEP_CHUNK / KEEP_PAGE,
	       warm = KEEP_WARM_BYTES / KEEP_CHUNK;
	size_t c0 = page / per, c1 = (page + n - 1) / per;

	if (c0 < warm)
		c0 = warm;
	while (c0 <= c1 && map_any(k->map, c0 * per, per))
		c0++;
	if (c0 > c1)
		return 0;
	/* @c0 is free: this stops there at the latest. */
	while (map_any(k->map, c1 * per, per))
		c1--;
	*first = c0;
	return c1 - c0 + 1;
}

/* The slot that @handle names, whatever its state, or NULL. */
static struct keep_slot *slot_of(const struct keep *k, uint64_t handle)
{
	uint32_t slot = (uint32_t)handle;

	if (slot < 1 || slot > k->slots)
		return NULL;
	return &k->table[slot - 1];
}

static bool live(uint64_t word)
{
	return WORD_STATE(word) == SLOT_CLAIMED ||
	       WORD_STATE(word) == SLOT_COMMITTED;
}

/* The slot at byte @off of the memfd, in its table. */
static uint32_t slot_at(const struct keep_header *h, off_t off)
{
	return (uint32_t)(((uint64_t)off - h->table_off) /
			  sizeof(struct keep_slot));
}

/*
 * Slot @s as the rebuild finds it: in use (its pages marked)
 * when committed with pages of its own, else freed. Whether in use.
 */
static bool rebuild_slot(struct keep *k, struct keep_slot *s)
{
	uint64_t w = LOAD(&s->word), len, page, pages;

	if (WORD_STATE(w) == SLOT_FREE)
		return false;
	len = LOAD(&s->len);
	page = LOAD(&s->u.ext.page);
	pages = LOAD(&s->u.ext.pages);
	if (WORD_STATE(w) == SLOT_COMMITTED &&
	    (len <= KEEP_INLINE ||
	     (pages == pages_of(len) && page < k->npages &&
	      pages <= k->npages - page && !map_any(k->map, page, pages)))) {
		if (len > KEEP_INLINE)
			map_set(k->map, page, pages, true);
		return true;
	}
	STORE(&s->word, WORD(WORD_SEQ(w), SLOT_FREE));
	return false;
}

/*
 * The free space rebuilt from the table (@h its header, @fd its memfd).
 * The table's pages that were never touched are holes, whose slots are
 * free and never used, and are skipped without reading them (a read
 * would make them resident). The free slots below the last one ever
 * used go on the stack, the lowest on top.
 */
static void rebuild(struct keep *k, int fd, const struct keep_header *h)
{
	off_t at = (off_t)h->table_off, data, hole;
	off_t end =
		(off_t)(h->table_off + (uint64_t)k->slots * sizeof(*k->table));
	uint32_t i, last = 0, from, first, to, lo, hi;
	bool used;

	while (at < end) {
		data = lseek(fd, at, SEEK_DATA);
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0 || hole < 0) {
			/* Not a memfd that can seek holes: read it all. */
			data = at;
			hole = end;
		}
		if (data >= end)
			break;
		if (hole > end)
			hole = end;
		from = slot_at(h, at);
		first = slot_at(h, data);
		to = slot_at(h, hole);
		for (i = from; i < first; i++)
			k->free_slot[k->nfree++] = i;
		for (i = first; i < to; i++) {
			used = rebuild_slot(k, &k->table[i]);
			if (LOAD(&k->table[i].word))
				last = i + 1;
			if (!used)
				k->free_slot[k->nfree++] = i;
		}
		at = hole;
	}
	/* Those above the last used are fresh; the rest, lowest on top. */
	while (k->nfree && k->free_slot[k->nfree - 1] >= last)
		k->nfree--;
	for (lo = 0, hi = k->nfree; lo + 1 < hi; lo++, hi--) {
		i = k->free_slot[lo];
		k->free_slot[lo] = k->free_slot[hi - 1];
		k->free_slot[hi - 1] = i;
	}
	k->fresh = last;
}

/* Whatever a dead server left free and not given back, given back. */
static void give_back_free(struct keep *k)
{
	size_t per = KEEP_CHUNK / KEEP_PAGE, nchunks = k->npages / per;
	size_t c = KEEP_WARM_BYTES / KEEP_CHUNK, first;

	while (c < nchunks) {
		while (c < nchunks && map_any(k->map, c * per, per))
			c++;
		first = c;
		while (c < nchunks && !map_any(k->map, c * per, per))
			c++;
		give_back(k, first, c - first);
	}
	k->low = map_next(k->map, 0, k->npages, false);
}

int keep_map(int fd, struct keep **out)
{
	struct keep_header h;
	struct stat st;
	struct keep *k;
	ssize_t got;
	void *base;
	int err;

	if (fstat(fd, &st) < 0)
		return -errno;
	got = pread(fd, &h, sizeof(h), 0);
	if (got < 0)
		return -errno;
	if (got != (ssize_t)sizeof(h) || !header_valid(&h, st.st_size))
		return -EINVAL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->slots = h.slots;
	k->npages = h.data_bytes / KEEP_PAGE;
	k->total_bytes = h.total_bytes;
	pthread_mutex_init(&k->lock, NULL);
	/* Both are touched only as far as they are used. */
	k->free_slot = malloc((size_t)k->slots * sizeof(*k->free_slot));
	k->map = calloc(k->npages / 64 + 1, sizeof(*k->map));
	if (!k->free_slot || !k->map) {
		err = ENOMEM;
		goto out_free;
	}
	base = mmap(NULL, k->total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
	if (base == MAP_FAILED) {
		err = errno;
		goto out_free;
	}
	k->base = base;
	k->table = (struct keep_slot *)(k->base + h.table_off);
	k->data = k->base + h.data_off;
	k->records = h.records_bytes ? k->base + h.records_off : NULL;
	k->records_bytes = h.records_bytes;
	rebuild(k, fd, &h);
	give_back_free(k);
	*out = k;
	return 0;

out_free:
	free(k->map);
	free(k->free_slot);
	pthread_mutex_destroy(&k->lock);
	free(k);
	return -err;
}

void *keep_records(const struct keep *k, size_t *bytes)
{
	*bytes = k->records ? k->records_bytes : 0;
	return k->records;
}

void keep_unmap(struct keep *k)
{
	if (!k)
		return;
	munmap(k->base, k->total_bytes);
	free(k->map);
	free(k->free_slot);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

/*
 * A content of KEEP_INLINE bytes or less into slot @s, a word at a time
 * as an atomic: a get of the slot's previous handle may read the same
 * words as the extent of a longer content, and then finds the word
 * changed.
 */
static void write_inline(struct keep_slot *s, const void *data, size_t len)
{
	uint64_t words[KEEP_INLINE / 8] = { 0 };
	unsigned int i;

	if (len)
		memcpy(words, data, len);
	for (i = 0; i < KEEP_INLINE / 8; i++)
		STORE(&s->u.words[i], words[i]);
}

/*
 * A content of @pages pages from @page on, whose slot is @s: 0, or
 * -ENOMEM when the system has no memory for them.
 */
static int write_pages(struct keep *k, struct keep_slot *s, size_t page,
		       size_t pages, const void *data, size_t len)
{
	size_t warm = KEEP_WARM_BYTES / KEEP_PAGE, from = page;
	char *to = k->data + page * KEEP_PAGE;

	STORE(&s->u.ext.page, (uint64_t)page);
	STORE(&s->u.ext.pages, (uint64_t)pages);
	/* One call makes the pages that a hole left, rather than a fault
	 * each (ten times the cost on a VM that shadows page tables), and
	 * says ENOMEM where a fault would call the OOM killer; the warm
	 * start of the area stays made. Kernels before 5.14 say EINVAL:
	 * the copy faults the pages in. */
	if (page < warm)
		from = warm;
	if (page + pages > from + 1 &&
	    madvise(k->data + from * KEEP_PAGE,
		    (page + pages - from) * KEEP_PAGE, MADV_POPULATE_WRITE) &&
	    errno == ENOMEM)
		return -ENOMEM;
	memcpy(to, data, len);
	return 0;
}

int keep_put(struct keep *k, uint64_t ino, uint64_t node, const void *data,
	     size_t len, uint64_t *handle)
{
	size_t pages = pages_of(len), page = 0;
	struct keep_slot *s;
	uint32_t slot, seq;

	if (pages > k->npages)
		return -ENOSPC;
	pthread_mutex_lock(&k->lock);
	slot = take_slot(k);
	if (slot == k->slots)
		goto out_nospace;
	if (pages) {
		page = take_pages(k, pages);
		if (page == k->npages) {
			k->free_slot[k->nfree++] = slot;
			goto out_nospace;
		}
	}
	s = &k->table[slot];
	/* The word changes before any field does (the sequence lock). */
	seq = (WORD_SEQ(LOAD(&s->word)) + 1) & SEQ_MASK;
	STORE(&s->word, WORD(seq, SLOT_CLAIMED));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pthread_mutex_unlock(&k->lock);

	STORE(&s->ino, ino);
	STORE(&s->node, node);
	STORE(&s->len, (uint64_t)len);
	if (pages && write_pages(k, s, page, pages, data, len)) {
		keep_drop(k, WORD(seq, slot + 1));
		return -ENOMEM;
	}
	if (!pages)
		write_inline(s, data, len);
	/* Published: a get that loads the word sees all of the above. */
	__atomic_store_n(&s->word, WORD(seq, SLOT_CLAIMED), __ATOMIC_RELEASE);
	*handle = WORD(seq, slot + 1);
	return 0;

out_nospace:
	pthread_mutex_unlock(&k->lock);
	return -ENOSPC;
}

void keep_commit(struct keep *k, uint64_t handle)
{
	struct keep_slot *s = slot_of(k, handle);
	uint64_t w = WORD(WORD_SEQ(handle), SLOT_CLAIMED);

	if (s)
		__atomic_compare_exchange_n(
			&s->word, &w, WORD(WORD_SEQ(handle), SLOT_COMMITTED),
			false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

int keep_get(const struct keep *k, uint64_t handle, const char **data,
	     size_t *len, uint64_t *ino, uint64_t *node)
{
	const struct keep_slot *s = slot_of(k, handle);
	uint64_t w, n, i, nd, page = 0;
	const char *at;

	if (!s)
		return -ENOENT;
	w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
	if (WORD_SEQ(w) != WORD_SEQ(handle) || !live(w))
		return -ENOENT;
	n = LOAD(&s->len);
	i = LOAD(&s->ino);
	nd = LOAD(&s->node);
	if (n > KEEP_INLINE)
		page = LOAD(&s->u.ext.page);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	w = LOAD(&s->word);
	/* Dropped meanwhile, or reused (a claim, then a commit, is not). */
	if (WORD_SEQ(w) != WORD_SEQ(handle) || !live(w))
		return -ENOENT;
	if (n > KEEP_INLINE) {
		/* Never false for a slot this code wrote; cheap to be sure. */
		if (page >= k->npages || pages_of(n) > k->npages - page)
			return -ENOENT;
		at = k->data + page * KEEP_PAGE;
	} else {
		at = s->u.bytes;
	}
	if (data)
		*data = at;
	if (len)
		*len = n;
	if (ino)
		*ino = i;
	if (node)
		*node = nd;
	return 0;
}

void keep_drop(struct keep *k, uint64_t handle)
{
	struct keep_slot *s = slot_of(k, handle);
	size_t per = KEEP_CHUNK / KEEP_PAGE, len, page = 0, pages = 0;
	size_t first = 0, chunks = 0;
	uint64_t w;

	if (!s)
		return;
	pthread_mutex_lock(&k->lock);
	w = LOAD(&s->word);
	if (WORD_SEQ(w) != WORD_SEQ(handle) || !live(w)) {
		pthread_mutex_unlock(&k->lock);
		return;
	}
	len = LOAD(&s->len);
	if (len > KEEP_INLINE) {
		page = LOAD(&s->u.ext.page);
		pages = LOAD(&s->u.ext.pages);
	}
	/* Free in the table first: a successor then frees the pages. */
	__atomic_store_n(&s->word, WORD(WORD_SEQ(w), SLOT_FREE),
			 __ATOMIC_RELEASE);
	k->free_slot[k->nfree++] = (uint32_t)(s - k->table);
	if (pages) {
		map_set(k->map, page, pages, false);
		if (page < k->low)
			k->low = page;
		/* Chunks given back stay taken meanwhile, so that no put
		 * writes pages that the hole then takes. */
		chunks = chunks_freed(k, page, pages, &first);
		map_set(k->map, first * per, chunks * per, true);
	}
	pthread_mutex_unlock(&k->lock);
	if (!chunks)
		return;
	give_back(k, first, chunks);
	pthread_mutex_lock(&k->lock);
	map_set(k->map, first * per, chunks * per, false);
	if (first * per < k->low)
		k->low = first * per;
	pthread_mutex_unlock(&k->lock);
}

void keep_each(const struct keep *k,
	       void (*fn)(void *arg, uint64_t handle, uint64_t ino,
			  uint64_t node),
	       void *arg)
{
	uint32_t i, fresh = __atomic_load_n(&k->fresh, __ATOMIC_ACQUIRE);
	const struct keep_slot *s;
	uint64_t w, ino, node;

	for (i = 0; i < fresh; i++) {
		s = &k->table[i];
		w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
		if (WORD_STATE(w) != SLOT_COMMITTED)
			continue;
		ino = LOAD(&s->ino);
		node = LOAD(&s->node);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LOAD(&s->word) != w)
			continue;
		fn(arg, WORD(WORD_SEQ(w), i + 1), ino, node);
	}
}

size_t keep_cost(size_t len)
{
	return sizeof(struct keep_slot) + (size_t)pages_of(len) * KEEP_PAGE;
}
