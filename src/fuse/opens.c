/*
 * opens: a mount's open files and directories (opens.h), each found by
 * the slot of its handle in the keep; why it is one object, and how a
 * successor adopts it, is docs/design.md's "Open files".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "node.h"
#include "inodes.h"
#include "keep.h"
#include "log.h"
#include "opens.h"
#include "rewinds.h"
#include "tree.h"

/*
 * Who a content of the keep is charged to, by its slot, in the area
 * shared with successors: written before the content is committed,
 * read by a successor that adopts it (adopt_content()).
 */
struct open_owner {
	uint64_t ns; /* budget_reader_id()'s */
	uint64_t who; /* OWNER_SET | (OWNER_HOST_ROOT) | uid; 0: nobody */
};

_Static_assert(OPENS_AREA_BYTES(1) == sizeof(struct open_owner),
	       "OPENS_AREA_BYTES is the owners' size");

#define OWNER_SET (1ULL << 33)
#define OWNER_HOST_ROOT (1ULL << 32)

#define READ_TO_END UINT64_MAX

struct opens {
	struct keep *keep;
	struct inodes *ins;
	unsigned int slots;
	struct open_file **by_slot; /* atomic: this server's open files */
	struct open_owner *owners; /* by slot, shared; NULL: none */
	/* Atomic: the number of the last rewind's snapshot, which its
	 * slot in the keep carries; a successor goes on from the highest
	 * it finds, so that it knows which snapshot of a thread is its
	 * last (adopt_rewinds()). */
	uint32_t rewind_seq;
};

static uint32_t handle_slot(uint64_t handle)
{
	return (uint32_t)handle - 1;
}

struct open_file *open_file_new(void)
{
	return calloc(1, sizeof(struct open_file));
}

void open_file_free(struct open_file *of)
{
	if (!of)
		return;
	budget_uncharge(&of->charge);
	rbuf_free(&of->text);
	free(of);
}

/* The owner of content @handle in the shared area, or NULL: none. */
static struct open_owner *owner_of(struct opens *o, uint64_t handle)
{
	if (!o->owners || handle_slot(handle) >= o->slots)
		return NULL;
	return &o->owners[handle_slot(handle)];
}

/*
 * Keep @of's text, a content of inode @ino and node ID @node (the two
 * numbers a successor gets back), its owner with it, and empty it: it
 * is served from the keep alone. 0, or -ENOMEM.
 */
static int keep_content(struct opens *o, struct open_file *of, uint64_t ino,
			uint64_t node)
{
	struct open_owner *ow;
	uint64_t who = 0, ns = 0;
	bool host_root;
	uid_t uid;
	int ret;

	ret = keep_put(o->keep, ino, node, of->text.data, of->text.len,
		       &of->fh);
	if (ret < 0)
		return -ENOMEM;
	ow = owner_of(o, of->fh);
	if (ow) {
		if (of->charge.reader) {
			budget_reader_id(of->charge.reader, &ns, &uid,
					 &host_root);
			who = OWNER_SET | (host_root ? OWNER_HOST_ROOT : 0) |
			      uid;
		}
		__atomic_store_n(&ow->ns, ns, __ATOMIC_RELAXED);
		__atomic_store_n(&ow->who, who, __ATOMIC_RELEASE);
	}
	keep_commit(o->keep, of->fh);
	rbuf_free(&of->text);
	return 0;
}

/* The open file of @fh, or NULL (none, or a dead server's not adopted). */
static struct open_file *find(struct opens *o, uint64_t fh)
{
	struct open_file *of;

	if (handle_slot(fh) >= o->slots)
		return NULL;
	of = __atomic_load_n(&o->by_slot[handle_slot(fh)], __ATOMIC_ACQUIRE);
	return of && of->fh == fh ? of : NULL;
}

/* @of, kept, is found by its handle from now on. */
static void publish(struct opens *o, struct open_file *of)
{
	if (handle_slot(of->fh) < o->slots)
		__atomic_store_n(&o->by_slot[handle_slot(of->fh)], of,
				 __ATOMIC_RELEASE);
}

/* A rewind's snapshot goes: from the keep, and its charge. */
static void drop_snapshot(void *ctx, const struct rewind *w)
{
	struct opens *o = ctx;

	keep_drop(o->keep, w->handle);
	open_file_free(w->owned);
}

/* A rewind's snapshot is freed here, and stays in the keep. */
static void forget_snapshot(void *ctx, const struct rewind *w)
{
	(void)ctx;
	open_file_free(w->owned);
}

/* Undo all that open file @of holds (not found any more). */
static void close_file(struct opens *o, struct open_file *of)
{
	if (of->fh)
		keep_drop(o->keep, of->fh);
	rewinds_free(of->rewinds, drop_snapshot, o);
	if (of->ino)
		inodes_release(o->ins, of->ino);
	open_file_free(of);
}

int opens_add(struct opens *o, struct open_file *of, uint64_t ino,
	      uint64_t node, uint64_t *fh)
{
	of->ino = ino;
	if (keep_content(o, of, ino, node) < 0) {
		close_file(o, of);
		return -ENOMEM;
	}
	publish(o, of);
	*fh = of->fh;
	return 0;
}

void opens_close(struct opens *o, uint64_t fh)
{
	struct open_file *of = find(o, fh);

	if (!of) {
		keep_drop(o->keep, fh); /* a dead server's, not adopted */
		return;
	}
	__atomic_store_n(&o->by_slot[handle_slot(fh)], NULL, __ATOMIC_RELEASE);
	close_file(o, of);
}

bool opens_is_rewind(struct opens *o, uint64_t fh)
{
	struct open_file *of = find(o, fh);
	uint64_t end = READ_TO_END;

	if (!of)
		return true;
	return __atomic_compare_exchange_n(&of->read_to, &end, 0, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void rewound(struct open_file *of)
{
	__atomic_store_n(&of->read_to, READ_TO_END, __ATOMIC_RELEASE);
}

void opens_rewind_again(struct opens *o, uint64_t fh)
{
	struct open_file *of = find(o, fh);

	if (of)
		rewound(of);
}

/* @of's rewinds, made at the first; NULL when out of memory. */
static struct rewinds *rewinds_of(struct open_file *of)
{
	struct rewinds *rw = __atomic_load_n(&of->rewinds, __ATOMIC_ACQUIRE);
	struct rewinds *none = NULL;

	if (rw || rewinds_new(&rw) < 0)
		return rw;
	if (!__atomic_compare_exchange_n(&of->rewinds, &none, rw, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		rewinds_free(rw, NULL, NULL); /* another thread's came first */
		rw = none;
	}
	return rw;
}

/*
 * A rewind's snapshot in the keep: under the open's handle tagged, its
 * thread's pid in the low half of the inode number and the rewind's
 * number (rewind_seq) in the high one.
 */
static uint64_t rewind_ino(pid_t pid, uint32_t seq)
{
	return (uint64_t)seq << 32 | (uint32_t)pid;
}

int opens_rewind(struct opens *o, uint64_t fh, pid_t pid,
		 struct open_file *snap)
{
	struct open_file *of = find(o, fh);
	struct rewinds *rw = of ? rewinds_of(of) : NULL;
	struct rewind w = { pid, 0, snap }, old;
	uint32_t seq = __atomic_add_fetch(&o->rewind_seq, 1, __ATOMIC_RELAXED);
	int ret = -ENOMEM;

	if (rw)
		ret = keep_content(o, snap, rewind_ino(pid, seq),
				   KEEP_HANDLE_TAG | fh);
	if (ret < 0) {
		open_file_free(snap);
		return ret;
	}
	w.handle = snap->fh;
	if (rewinds_put(rw, &w, &old))
		drop_snapshot(o, &old);
	return 0;
}

/* A read being served (opens_read()). */
struct reading {
	struct opens *o;
	struct open_file *of;
	off_t off;
	size_t size;
	void (*reply)(void *ctx, const char *data, size_t len);
	void *ctx;
	int ret;
};

/*
 * Open @of served @size bytes at @off of a snapshot of @len bytes: its
 * part read without a gap from offset 0 grows when the read starts
 * within it, and is READ_TO_END once it reaches the end. Reads that
 * the kernel sent together (a read(2) longer than a request, the page
 * cache's readahead) come in any order: the end of the content read
 * before its start, which the kernel asked for first, is no end yet.
 */
static void read_to(struct open_file *of, uint64_t off, size_t size,
		    uint64_t len)
{
	uint64_t to = __atomic_load_n(&of->read_to, __ATOMIC_ACQUIRE);
	uint64_t end = off + size >= len ? READ_TO_END : off + size;

	while (off <= to && end > to &&
	       !__atomic_compare_exchange_n(&of->read_to, &to, end, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

static void serve(void *ctx, uint64_t handle)
{
	struct reading *rd = ctx;
	const char *data;
	size_t len;

	if (keep_get(rd->o->keep, handle, &data, &len, NULL, NULL) < 0) {
		rd->ret = -EIO; /* a handle never given */
		return;
	}
	if (rd->off >= 0 && rd->of)
		read_to(rd->of, (uint64_t)rd->off, rd->size, len);
	rd->reply(rd->ctx, data, len);
}

int opens_read(struct opens *o, uint64_t fh, pid_t pid, off_t off, size_t size,
	       void (*reply)(void *ctx, const char *data, size_t len),
	       void *ctx)
{
	struct reading rd = { o, find(o, fh), off, size, reply, ctx, 0 };
	struct rewinds *rw =
		rd.of ? __atomic_load_n(&rd.of->rewinds, __ATOMIC_ACQUIRE) :
			NULL;

	if (!rw || !rewinds_serve(rw, pid, serve, &rd))
		serve(&rd, fh);
	return rd.ret;
}

/* ---- a successor takes over ----------------------------------------- */

/* What a successor adopts: the rewinds, put once all are known. */
struct adopting {
	struct opens *o;
	struct adopted_rewind {
		uint64_t fh; /* its open's */
		struct open_file *snap;
		uint32_t seq;
		pid_t pid;
	} * w;
	size_t count, cap;
	bool short_of_memory;
};

/*
 * Content @handle of @len bytes, which a dead server kept: an object
 * for it, charged to the reader it was charged to, whatever its budget
 * says (that reader holds it already). NULL when out of memory.
 */
static struct open_file *adopt_content(struct opens *o, uint64_t handle,
				       size_t len)
{
	struct open_file *of = open_file_new();
	struct open_owner *ow = owner_of(o, handle);
	struct budget_reader *r;
	uint64_t who, ns;

	if (!of)
		return NULL;
	of->fh = handle;
	if (!ow)
		return of;
	who = __atomic_load_n(&ow->who, __ATOMIC_ACQUIRE);
	ns = __atomic_load_n(&ow->ns, __ATOMIC_RELAXED);
	if (!(who & OWNER_SET))
		return of;
	r = budget_reader_get(ns, (uid_t)who, (who & OWNER_HOST_ROOT) != 0);
	budget_charge_held(r, keep_cost(len) + budget_block_bytes(of),
			   &of->charge);
	budget_reader_put(r);
	return of;
}

/* Rewind snapshot @snap of open @fh, to be put in its place later. */
static void adopt_later(struct adopting *a, struct open_file *snap, uint64_t fh,
			uint64_t ino)
{
	struct adopted_rewind *w;
	size_t cap;

	if (a->count == a->cap) {
		cap = a->cap ? 2 * a->cap : 64;
		w = realloc(a->w, cap * sizeof(*w));
		if (!w) {
			a->short_of_memory = true;
			keep_drop(a->o->keep, snap->fh);
			open_file_free(snap);
			return;
		}
		a->w = w;
		a->cap = cap;
	}
	w = &a->w[a->count++];
	w->fh = fh;
	w->snap = snap;
	w->pid = (pid_t)(uint32_t)ino;
	w->seq = (uint32_t)(ino >> 32);
}

/*
 * What a dead server kept: an open file, served as it was, its inode
 * held open as this server's opens hold theirs; an open directory; or
 * a rewind's snapshot (KEEP_HANDLE_TAG in its node). A file whose node
 * is not found again is served from the keep alone: its reads at
 * offset 0 ask for its node, and are refused.
 */
static void adopt(void *arg, uint64_t handle, uint64_t ino, uint64_t node)
{
	struct adopting *a = arg;
	struct opens *o = a->o;
	bool rewind = (node & KEEP_HANDLE_TAG) != 0;
	struct open_file *of;
	struct node n;
	size_t len = 0;

	if (keep_get(o->keep, handle, NULL, &len, NULL, NULL) < 0 ||
	    handle_slot(handle) >= o->slots)
		return;
	if (!rewind && ino &&
	    (node_id_rec(node) ? inodes_node(o->ins, node, &n, NULL) :
				 tree_node(node, &n)) < 0)
		return;
	of = adopt_content(o, handle, len);
	if (!of) {
		a->short_of_memory = a->short_of_memory || rewind;
		if (rewind)
			keep_drop(o->keep, handle);
		return;
	}
	if (rewind) {
		adopt_later(a, of, node & ~KEEP_HANDLE_TAG, ino);
		return;
	}
	if (ino && inodes_adopt(o->ins, ino, &n, len) == 0)
		of->ino = ino;
	publish(o, of);
}

/* The order in which the rewinds were taken (numbers wrap). */
static int rewind_cmp(const void *a, const void *b)
{
	const struct adopted_rewind *x = a, *y = b;
	int32_t d = (int32_t)(x->seq - y->seq);

	return d < 0 ? -1 : d > 0;
}

/*
 * The rewinds a dead server left, in the order they were taken: each
 * thread's last is the one it goes on reading, and an open rewound is
 * one whose next read at offset 0 takes a new snapshot
 * (opens_is_rewind()), as it would have in the dead server: never the
 * open's own, older content again, nor the rest of another snapshot
 * after the start of this one. Numbers go on from the last. A snapshot
 * of an open that is gone (the server died in its release) goes.
 */
static void adopt_rewinds(struct adopting *a)
{
	struct rewind w, old;
	struct open_file *of;
	struct rewinds *rw;
	size_t i;

	if (a->count)
		qsort(a->w, a->count, sizeof(*a->w), rewind_cmp);
	for (i = 0; i < a->count; i++) {
		w.pid = a->w[i].pid;
		w.handle = a->w[i].snap->fh;
		w.owned = a->w[i].snap;
		a->o->rewind_seq = a->w[i].seq;
		of = find(a->o, a->w[i].fh);
		rw = of ? rewinds_of(of) : NULL;
		if (!rw) {
			a->short_of_memory = a->short_of_memory || of != NULL;
			drop_snapshot(a->o, &w);
			continue;
		}
		if (rewinds_put(rw, &w, &old))
			drop_snapshot(a->o, &old);
		rewound(of);
	}
	if (a->short_of_memory)
		log_msg(LOG_WARNING, "rewinds of open files lost to a lack of "
				     "memory at the takeover: their next reads "
				     "at offset 0 take new snapshots");
	free(a->w);
}

int opens_new(struct keep *k, unsigned int slots, struct inodes *ins,
	      void *area, struct opens **out)
{
	struct opens *o = calloc(1, sizeof(*o));
	struct adopting a = { .o = o };

	if (!o)
		return -ENOMEM;
	o->by_slot = calloc(slots, sizeof(*o->by_slot));
	if (!o->by_slot) {
		free(o);
		return -ENOMEM;
	}
	o->keep = k;
	o->ins = ins;
	o->slots = slots;
	o->owners = area;
	keep_each(k, adopt, &a);
	adopt_rewinds(&a);
	*out = o;
	return 0;
}

void opens_free(struct opens *o)
{
	struct open_file *of;
	unsigned int i;

	if (!o)
		return;
	for (i = 0; i < o->slots; i++) {
		of = o->by_slot[i];
		if (!of)
			continue;
		rewinds_free(of->rewinds, forget_snapshot, NULL);
		open_file_free(of);
	}
	free(o->by_slot);
	free(o);
}
