/*
 * inodes: the inodes the kernel holds, the one place where a node ID is
 * resolved, counted and forgotten (docs/design.md, "Inodes").
 *
 * Records. Below proc/ a node ID names a record (below: bit 62, the
 * record's index, the kind): one per directory instance the kernel
 * holds, proc/ of a view, a process or a thread of it, made at its
 * first lookup and freed at its last FORGET. It holds what the node
 * is: its view and numbers, its task in the daemon's numbers and that
 * task's start (two tasks of one number are two records), the node ID
 * of its parent, the kernel's lookups of all its nodes (its files,
 * threads/ and threads.table are nodes of their directory's record),
 * and what its files were last told: their owner as a lookup's path
 * check found it, when, and each file's size. Outside proc/ a node ID
 * is its inode number and needs no record. Records live in the keep's
 * record area (keep_records()), shared with the supervisor: a
 * successor finds each one whole, a record being written before it is
 * marked live.
 *
 * File inodes. A value file has one inode, its node's own ID: every
 * lookup of it answers that ID, with the size of the content the lookup
 * made, never less than an open of it may be reading through the page
 * cache. The table keeps, as the kernel's size, the least it may hold:
 * an open that renders a longer content has the caller grow it first
 * (inodes_resize()). A table is many pages: two opens of one inode
 * could get pages of two snapshots through its page cache, so each
 * lookup of a table answers an extra inode (NODE_EXTRA_BIT), never
 * given before, a record of its own. An entry is kept for each file
 * inode in use: the content its lookup made until the open on the same
 * thread takes it, its opens, its owner and size; a value file's entry
 * goes with its last open, what it was told kept in its record.
 *
 * Bounds. A record is its maker's (struct record_payer: a uid across
 * views, root per view): counted against RECORDS_PER_UID and charged,
 * with what the kernel keeps for its name, to its budget; an entry is
 * charged to the reader whose lookup made it (inodes_entry_bytes()).
 * Contents are the caller's to charge and are freed with the function
 * given to inodes_new().
 *
 * Thread safety: every function may be called from any thread; one
 * lock guards the table.
 */
#ifndef TIMINGFS_INODES_H
#define TIMINGFS_INODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "node.h"
#include "render.h"
#include "request.h"
#include "view.h"

/*
 * Node IDs. Below proc/ a number names a task by its number only, and a
 * name must be one task instance (docs/design.md, "Names and identities"): there
 * every node is named in a record of this table, one for proc/ of each
 * view and one for each task instance in each view, and the node ID is
 * the record's,
 *
 *	bits  0..7   kind
 *	bits  8..31  the record's index (struct node's rec)
 *	bit   62     set
 *
 * so that the records' IDs, handed out lowest first, differ in their
 * low bits and spread over the kernel's inode hash (fs/inode.c hash()
 * folds the bits above about 40 into a few buckets, where the TID of
 * the inode number (node.h) lands: a walk of a process's thousands of
 * threads was quadratic). A task's files and threads/ share its record.
 * Outside proc/ the node ID is the inode number.
 */
#define NODE_REC_BIT (1ULL << 62)
/* Set besides NODE_REC_BIT: an extra inode of a file (inodes.h), a
 * record of its own. */
#define NODE_EXTRA_BIT (1ULL << 63)
#define NODE_REC_BITS 24
#define NODE_REC_MAX ((1U << NODE_REC_BITS) - 1)

/* node_id - the node ID the kernel knows @n by: its record's, else its
 * inode number. */
static inline uint64_t node_id(const struct node *n)
{
	if (!n->rec)
		return node_ino(n);
	return NODE_REC_BIT | (uint64_t)n->rec << NODE_KIND_BITS | n->kind;
}

/* node_id_rec - the record of node ID @id (a node's, or an extra
 * inode's), or 0 when it names none. */
static inline uint32_t node_id_rec(uint64_t id)
{
	uint64_t high = id & ~NODE_EXTRA_BIT;

	if ((high >> (NODE_KIND_BITS + NODE_REC_BITS)) !=
	    (NODE_REC_BIT >> (NODE_KIND_BITS + NODE_REC_BITS)))
		return 0;
	return (uint32_t)(id >> NODE_KIND_BITS) & NODE_REC_MAX;
}

/* A record's bytes in the shared area. */
#define RECORD_BYTES 64

/* The most records a table holds: a lookup past them gets ENOMEM. */
#define RECORDS_MAX (1U << 20)

/*
 * The most records one payer (a uid, across views; root per view) may
 * have, but the host's root: a lookup that would make one more gets
 * ENOMEM. Other payers but the host's root together stop three
 * quarters of the way to RECORDS_MAX: the host's root always has room.
 */
#define RECORDS_PER_UID (1U << 14)

/*
 * From this many records on, each new record of a payer has the kernel
 * drop RECORDS_DROP_EACH of its oldest names (inodes_name()'s @drops),
 * and a refusal RECORDS_DROP_MAX: the names the kernel keeps unused
 * (a walk's, cached) go and free their records before the bound is
 * met; those held open stay.
 */
#define RECORDS_DROP_AT (RECORDS_PER_UID / 4 * 3)
#define RECORDS_DROP_EACH 4
#define RECORDS_DROP_MAX 64

/*
 * What the kernel keeps for a name, charged with its record: a dentry
 * (192 bytes) and a fuse inode (896), their objects' sizes in
 * /proc/slabinfo on Linux 6.18. (19,000 names held by O_PATH
 * descriptors of exited threads' directories grew the slab by 42.7 MB,
 * 2.2 KiB a name: the holder's descriptors and procfs's own inodes of
 * the threads, which are the holder's and the kernel's, are the rest.)
 */
#define RECORD_KERNEL_BYTES 1088

/* The bytes of a record area of RECORDS_MAX records (keep_create()). */
#define RECORDS_AREA_BYTES ((size_t)RECORDS_MAX * RECORD_BYTES)

/*
 * A lookup's content waits this long for its thread's open, which comes
 * within the same system call; a lookup never opened (a stat) holds its
 * inode no longer.
 */
#define LOOKUP_PENDING_MS 1000

/*
 * An open that comes this long after its thread's lookup or later is
 * not the same system call's (a path walk's open follows its lookup at
 * once): it may be a reopen, through /proc/self/fd/N, of an O_PATH
 * descriptor whose open looked the file up, and it renders afresh (its
 * caller asks again whether the file's task is still the one it was).
 */
#define LOOKUP_TAKE_MS 20

/*
 * A lookup that checked a file's path (every numbered directory on it
 * exists for the reader) vouches for it this long, as the kernel's
 * dentry of a file did when it was cached for FS_TIMEOUT_S: a lookup
 * in between only renders, which itself fails when the task is gone.
 */
#define PATH_CHECKED_MS 1000

/*
 * An extra inode nobody has open is asked to be forgotten (its name
 * dropped from the kernel's cache) at most once in this long: the
 * kernel keeps unused names until memory runs short, and each extra
 * inode it keeps is an entry here.
 */
#define EXTRA_REFORGET_MS 10000

/* How many entries one lookup's sweep visits: as many idle extras at most. */
#define EXTRAS_SWEEP_MAX 4

/* The idle extra inodes a sweep found: their nodes, to be forgotten. */
struct extras_idle {
	struct node node[EXTRAS_SWEEP_MAX];
	unsigned int count;
};

/* What a record says of its node's task. */
struct record_task {
	pid_t pid, tid; /* the daemon's numbers; tid 0: the process */
	uint64_t start; /* its creation time, ns; 0: no task (proc/) */
	uint64_t parent; /* the node ID of the directory its name is in */
};

/* A name to drop from the kernel's cache: a record's directory. */
struct record_name {
	uint64_t parent; /* the node ID of the directory it is in */
	struct node node; /* the record's directory (rec set) */
};

/* Who pays for the records a lookup makes: the reader's uid in the
 * view of nsfs inode @ns, and its budget (NULL: none). */
struct record_payer {
	struct budget_reader *reader;
	uint64_t ns;
	uid_t uid;
};

/* Names of a payer's records for the caller to drop (inodes_name()). */
struct record_drops {
	struct record_name name[RECORDS_DROP_MAX];
	unsigned int count;
};

struct inodes;

/* extra_ino - whether node ID @ino names an extra inode (a table's). */
static inline bool extra_ino(uint64_t ino)
{
	return (ino & NODE_EXTRA_BIT) != 0;
}

/*
 * inodes_new - the table, its records in @area of @bytes
 * (keep_records()), or, @area NULL, in anonymous memory of this
 * process; the records a dead server left there are taken over, and
 * each holds its view slot in @vs again. The contents it holds
 * (lookups' contents never opened) it frees with @free_text. 0, or
 * -ENOMEM.
 */
int inodes_new(struct views *vs, void *area, size_t bytes,
	       void (*free_text)(struct rbuf *text), struct inodes **out);

/*
 * inodes_free - release @in and every content in it (the shared area
 * stays); NULL allowed.
 */
void inodes_free(struct inodes *in);

/* inodes_entry_bytes - what one entry of an inode in use costs. */
size_t inodes_entry_bytes(void);

/* ---- records ------------------------------------------------------------ */

/*
 * inodes_name - an entry reply gives the kernel one more lookup of
 * directory @n (K_PROC, K_TGID or K_TID: its kind, view and numbers),
 * the task @t (@t->start 0 for proc/) in the directory of node ID
 * @t->parent: the record of that instance, found or made, counts it. A
 * record made is @who's: counted against its RECORDS_PER_UID and
 * charged to its budget until it goes. Sets n->rec. 0, or -ENOMEM (out
 * of records, or @who past its bound or budget: logged, at most once a
 * minute per payer). *@drops (NULL: none) gets names of @who's oldest
 * records, near or at its bound, for the caller to have the kernel drop.
 */
int inodes_name(struct inodes *in, struct node *n, const struct record_task *t,
		const struct record_payer *who, struct record_drops *drops);

/*
 * inodes_hold - one more lookup of directory @n of a record it already
 * has (n->rec: threads/): 0, or -ENOENT when the record is gone (the
 * caller's node came from a request on it, which the kernel's lookups
 * still hold: never, but it answers the reader).
 */
int inodes_hold(struct inodes *in, const struct node *n);

/*
 * inodes_node - the node of node ID @id, any the kernel may hold: a
 * record's (its kind from the ID, the rest from the record; n->rec set:
 * the record's, or, for an extra inode, its file's directory's), or
 * outside proc/ the node its number encodes; and, @t not NULL, the
 * task of n->rec's record (zeros outside proc/): a request resolves
 * its node and its task in this one call. -ENOENT when @id names no
 * live record, a kind it cannot have, or no node, or when @t is asked
 * for and n->rec's record is gone.
 */
int inodes_node(struct inodes *in, uint64_t id, struct node *n,
		struct record_task *t);

/*
 * inodes_of_task - the names of the records of task (@pid, @tid) in
 * the daemon's numbers (@tid 0: the process; a process's main thread
 * is both), in every view, up to @max into @out: their count.
 */
size_t inodes_of_task(struct inodes *in, pid_t pid, pid_t tid,
		      struct record_name *out, size_t max);

/*
 * inodes_in_slots - the names of up to @max records named in any of
 * the @nslots view slots @slot, into @out: their count.
 */
size_t inodes_in_slots(struct inodes *in, const unsigned int *slot,
		       unsigned int nslots, struct record_name *out,
		       size_t max);

/*
 * inodes_gone - the names of up to @max records of tasks that have
 * exited (@gone, asked without the lock, says so of a task in the
 * daemon's numbers), into @out: their count. A sweep looks at up to
 * RECORDS_SWEEP_MAX records, from where the last one stopped.
 */
#define RECORDS_SWEEP_MAX 4096
size_t inodes_gone(struct inodes *in,
		   bool (*gone)(void *ctx, pid_t pid, pid_t tid), void *ctx,
		   struct record_name *out, size_t max);

/* inodes_records - how many records are live. */
size_t inodes_records(struct inodes *in);

/*
 * inodes_forget - the kernel forgets @nlookup lookups of node ID @id.
 * An extra inode's entry goes at none left, once nobody has it open; a
 * record goes at none left of any of its nodes, and every entry of its
 * nodes with it (Lifetime, above). An ID outside proc/, or one that
 * names no live record, needs nothing.
 */
void inodes_forget(struct inodes *in, uint64_t id, uint64_t nlookup);

/* ---- files: lookups, opens and their contents ----------------------------- */

/*
 * inodes_checked - whether a lookup of a file of directory @dir
 * checked the path less than PATH_CHECKED_MS ago; if so, the owner
 * of its files as then, in *@o. Kept in @dir's record: a directory of
 * no record (outside proc/) is never.
 */
bool inodes_checked(struct inodes *in, const struct node *dir, struct owner *o);

/*
 * inodes_mark_checked - a lookup of directory @dir of a record, or of
 * a file in it, checked the path now: its files are owned by @o.
 */
void inodes_mark_checked(struct inodes *in, const struct node *dir,
			 const struct owner *o);

/*
 * inodes_lookup - a lookup of file @n made @text, which it takes on
 * success (the caller keeps it on failure), for thread @pid, whose open
 * takes it (NULL: none could be made, the size is 0 and the open
 * renders anew); @o its owner; @checked its directory when this lookup
 * checked the path, else NULL; @who pays for the entries and the extra
 * inode's record it makes (@who->reader NULL: no bytes charged). Sets
 * *@ino: a value file's own ID, a table's (tree_grows()) an extra one;
 * and *@size, the size to tell. The inode's record (its directory's,
 * or the extra inode's own) counts the kernel's lookup: the caller's
 * entry reply gives it, or the caller inodes_forget()s it once. 0;
 * -ENOENT when @n's record is gone; -ENOMEM (out of memory or records,
 * or an entry past @who's budget). Either way, *@idle is what the
 * lookup's sweep found of extra inodes nobody uses any more: the
 * caller has the kernel drop their names, so that it forgets them.
 */
int inodes_lookup(struct inodes *in, const struct node *n,
		  const struct owner *o, pid_t pid, struct rbuf *text,
		  const struct node *checked, const struct record_payer *who,
		  uint64_t *ino, uint64_t *size, struct extras_idle *idle);

/*
 * inodes_retake - the content that thread @pid's last lookup of table
 * @n made less than LOOKUP_TAKE_MS ago, not opened yet: taken back
 * from its extra inode, now the caller's, for this thread's lookup of
 * the same name again (NULL when there is none): the kernel's
 * revalidation meets another inode than the one it holds, forgets it
 * and looks the name up again, and one rendering serves both.
 */
struct rbuf *inodes_retake(struct inodes *in, const struct node *n, pid_t pid);

/*
 * inodes_attr - the node, owner and size (the least the kernel may
 * hold) of file inode @ino. -ENOENT when the table holds no entry of
 * it: an extra inode the kernel forgot, or a value file not in use.
 */
int inodes_attr(struct inodes *in, uint64_t ino, struct node *n,
		struct owner *o, uint64_t *size);

/*
 * inodes_open - an open of file inode @ino, node @n, by thread @pid,
 * to be inodes_release()d. The first open after a lookup, by the thread
 * that looked it up, within LOOKUP_TAKE_MS of it, takes the content
 * made then: *@text, now the caller's, and 0, or 2 when that lookup
 * told more than the kernel may have held (the caller grows the size).
 * Any other open gets *@text NULL and 1: the caller renders the content
 * afresh and inodes_resize()s. An inode the table holds no entry of is
 * held from then on, its size what its record kept (a value file), or
 * unknown until resized (an extra inode a dead server made). -ENOMEM.
 */
int inodes_open(struct inodes *in, uint64_t ino, const struct node *n,
		pid_t pid, struct rbuf **text);

/* inodes_release - an open of @ino is closed. */
void inodes_release(struct inodes *in, uint64_t ino);

/*
 * inodes_resize - an open of file inode @ino rendered @size bytes
 * afresh, for a node owned by @o (NULL: the owner it was last told):
 * 1 when the kernel may hold less (then the caller grows the inode's
 * size, if @can_grow), else 0; -ENOENT, and nothing recorded, for @o
 * NULL where no owner was told (the caller asks the tree and calls
 * again). The table keeps the least size the kernel may hold: a short
 * read at the end shrinks it to the content's length.
 */
int inodes_resize(struct inodes *in, uint64_t ino, const struct owner *o,
		  uint64_t size, bool can_grow);

/*
 * inodes_adopt - file inode @ino, node @n, is open with content of
 * @size bytes, opened by a server that died (fs.h: the keep): held open
 * as by inodes_open() until its inodes_release(), so that no lookup
 * hands it out meanwhile; an extra inode is held as looked up once
 * until the kernel forgets it. 0 or -ENOMEM.
 */
int inodes_adopt(struct inodes *in, uint64_t ino, const struct node *n,
		 uint64_t size);

#endif
