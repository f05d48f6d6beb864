/*
 * inodes: the table of the inodes the kernel holds, one record per
 * inode, and what each inode in use holds: the one place where a node
 * ID is resolved, counted and forgotten.
 *
 * A record. A name under proc/ is one task instance, not one number
 * (README, "Names and rewinds"): procfs's inode holds its task
 * (get_proc_task) and answers ESRCH once it is gone. A FUSE request
 * carries a node ID and nothing else, so the node ID must name the
 * instance: here it names a record (inode.h: bit 62, the record's index,
 * the kind), and the record holds what the node is: the view it was
 * named in and the numbers that view gave it, the task in the daemon's
 * numbers and its start (creation time, ns), the node ID of the
 * directory its name is in, and how many lookups of it the kernel
 * holds. proc/ of each view is a record of its own (start 0, no task),
 * each process and each thread in each view another; a task's files,
 * its threads/ and threads.table, and proc/'s self and table, are
 * nodes of their directory's record. An extra inode of a file (a
 * snapshot's, below) is a record of its own too, with its file's task,
 * so that a restarted server knows what it is (its ID has
 * NODE_EXTRA_BIT set). A reused number is a new record (another
 * start); the old one's requests are the FUSE layer's to refuse.
 * Outside proc/ a node ID is its inode number (inode.h) and needs no
 * record.
 *
 * What an inode in use holds. Since Linux 6.5 the kernel serves
 * sendfile(2), splice(2) and copy_file_range(2)'s fallback of a FUSE
 * file through its page cache, up to the inode's size, direct_io or
 * not; so does mmap(2). Those readers (busybox cat and cp, Python's
 * shutil.copyfile, splicing cats) get exactly what the page cache holds
 * up to i_size: nothing at size 0, a truncated value at a size too
 * small, and pages of two snapshots mixed when two opens of one inode
 * share its page cache. The page cache and the size belong to the
 * inode, not to the open file: so each snapshot of a file's content
 * gets an inode of its own, of its exact size, and the table keeps, by
 * node ID, an entry for each inode in use: the content its lookup made
 * until its open takes it, its opens, its owner and the size the kernel
 * was told; for a node's own ID, the inode its last lookup gave; for a
 * directory, when a lookup last checked its path.
 *
 * How a file is looked up. A LOOKUP of a file renders its content then
 * and there, and answers with an inode whose attributes carry the
 * content's exact length. The entry timeout of a file is 0, so the
 * kernel looks the name up again at every path walk. A value file's
 * answer is the inode of the name's last lookup, its content made anew,
 * while no open file holds it and no other thread's lookup of it waits
 * for its open; otherwise an extra inode, never given before, which the
 * kernel puts in place of the held one in its dentry. A table's answer
 * is always an extra inode never given before (below). The OPEN that
 * follows on the same thread within SNAPSHOT_TAKE_MS takes the content
 * made at its lookup as the open file's snapshot; the open drops
 * whatever pages an earlier snapshot left in the inode's cache, and, as
 * no other open holds the inode, its page cache holds this snapshot
 * alone: read(2), pread, sendfile, splice and mmap all see the same
 * bytes, the size is exact (stat, ls -l, du, find -size, tail -c agree
 * with cat), and two readers of one path never share a page cache. A
 * walk costs one LOOKUP more than a cached dentry does, and the
 * content's end is known to the kernel; the path itself is checked once
 * in SNAPSHOT_CHECKED_MS per directory, as a cached dentry was.
 *
 * The generation of an inode never changes: the kernel fails every
 * I/O on an inode it holds once a reply gives its ID another
 * generation, and an inode may be held by a reader the table cannot
 * see (an O_PATH descriptor, an open still queued behind busy workers
 * when its lookup's wait ran out). So a length is told by attributes
 * alone, which the kernel drops from a reply when another change to the
 * inode came after the request was sent: two lookups whose replies
 * crossed could leave the kernel with the older, smaller size. An open
 * that takes a lookup's content longer than the size told before it
 * grows the kernel's size first (the FUSE layer's grow_size()); a
 * larger size than the content's is shrunk by the short read at its
 * end. A value is one page: a reader that came late to an inode given
 * again reads a whole value, its own or the other reader's. A table is
 * many pages, which two readers of one inode could get from two
 * snapshots; hence a table's inode is never given twice.
 *
 * Why not another design (measured with a throwaway filesystem, see
 * the README): size 0 gives page-cache readers nothing; a bound such
 * as sysfs's 4096 is shrunk by the first short read and then truncates
 * longer values, and truncates tables beyond it; one inode per name
 * shares its page cache between readers, whose pages of two snapshots
 * then mix.
 *
 * A second open of an inode after one lookup, which comes only without
 * a path walk (a file bind-mounted on its own, /proc/self/fd/N opened
 * again, an O_PATH descriptor passed on), renders the content afresh:
 * the FUSE layer serves it with direct_io, for read(2) the kernel's
 * size does not matter, and grows the inode's size first when the
 * content is now longer (a notification that stores its last byte, the
 * page left not up to date), so that a page-cache reader meets the end
 * of the content in a short read, which shrinks the size to it.
 *
 * Lifetime. A record is made by the first lookup of its directory
 * (inodes_name()), counted up by each entry reply of any of its nodes
 * (inodes_name(), inodes_hold(), inodes_lookup()) and down by FORGET
 * (inodes_forget()); at none left it is freed, and with it every entry
 * of its nodes but an open one's (which holds the kernel's inode, so
 * the record: never): its index is the next record's (the lowest free
 * first), and its node IDs with it, so nothing of one task instance
 * (the owner its path was checked for, its last inode, a content
 * waiting for its open) reaches the next. While a record lives, it
 * holds its view's slot (views_hold()): a slot the kernel still holds a
 * name of is never given to another view. A node's own entry needs no
 * memory while the node is not in use: it is made by a lookup and goes
 * at the release that ends its use, or at a sweep; a directory whose
 * path a lookup checked has an entry for SNAPSHOT_CHECKED_MS. An extra
 * inode's entry lives until the kernel forgets it and nobody has it
 * open. So the daemon's memory follows what is being read, not the
 * files the kernel keeps cached. Every inode's attributes carry the
 * node's own number as st_ino.
 *
 * Restarts. The records live in memory that outlives the server: the
 * keep's record area (keep_records()), which the supervisor holds and
 * every server maps; a successor finds each record as it was, and
 * rebuilds its indexes from them. A record is written whole before its
 * state says it is live (a release store), and a record's fields change
 * only under the table's lock, by the one process that serves; so a
 * server that dies at any instruction leaves records that are either
 * free or whole. A server that dies between a record's making and the
 * entry reply that would give it to the kernel leaves one record the
 * kernel never learned of, counted once too many; so does a lookup the
 * kernel sends again after a takeover (FUSE_NOTIFY_RESEND) that the
 * dead server had counted. Such a record is never freed: one per
 * restart at most per lookup under way, within RECORDS_MAX. The entries
 * are this server's: the contents that lookups made are lost with it
 * (inodes_taken_over() says what a successor does about that), and
 * what the kernel has open is found again in the keep (inodes_adopt()).
 *
 * Memory: RECORD_BYTES each record in the shared area (touched only as
 * used, lowest first), and an index entry in the process. A record is
 * its maker's (struct record_payer: a uid across views, root per view):
 * counted against RECORDS_PER_UID and charged to its budget, with what
 * the kernel keeps for its name, until it goes; the record keeps its
 * uid and view, and a successor charges it again, never refusing. Where the
 * store has no record area (a store of a server older than the
 * records), the records live in anonymous memory of this server alone
 * and a successor starts afresh. Each entry is charged to the budget
 * of the reader whose lookup made it (budget.h), inodes_entry_bytes()
 * each, until it goes; the content a lookup made is the caller's to
 * charge (it is handed in, and freed with the function given to
 * inodes_new()). An own inode's entry made by an open without a lookup
 * is charged to nobody here: that open renders afresh, and its caller
 * charges the entry's bytes with the content.
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
#include "inode.h"
#include "render.h"
#include "request.h"
#include "view.h"

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

#define SNAPSHOT_INO_BIT NODE_EXTRA_BIT

/*
 * A lookup's content waits this long for its thread's open, which comes
 * within the same system call; a lookup never opened (a stat) holds its
 * inode no longer.
 */
#define SNAPSHOT_PENDING_MS 1000

/*
 * An open that comes this long after its thread's lookup or later is
 * not the same system call's (a path walk's open follows its lookup at
 * once): it may be a reopen, through /proc/self/fd/N, of an O_PATH
 * descriptor whose open looked the file up, and it renders afresh (its
 * caller asks again whether the file's task is still the one it was).
 */
#define SNAPSHOT_TAKE_MS 20

/*
 * A lookup that checked a file's path (every numbered directory on it
 * exists for the reader) vouches for it this long, as the kernel's
 * dentry of a file did when it was cached for FS_TIMEOUT_S: a lookup
 * in between only renders, which itself fails when the task is gone.
 */
#define SNAPSHOT_CHECKED_MS 1000

/*
 * An extra inode nobody has open is asked to be forgotten (its name
 * dropped from the kernel's cache) at most once in this long: the
 * kernel keeps unused names until memory runs short, and each extra
 * inode it keeps is an entry here.
 */
#define SNAPSHOT_REFORGET_MS 10000

/* How many entries one lookup's sweep visits: as many idle extras at most. */
#define SNAPSHOT_SWEEP_MAX 4

/* The idle extra inodes a sweep found: their nodes, to be forgotten. */
struct snapshot_idle {
	struct node node[SNAPSHOT_SWEEP_MAX];
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

/* snapshot_ino - whether node ID @ino names an extra inode. */
static inline bool snapshot_ino(uint64_t ino)
{
	return (ino & SNAPSHOT_INO_BIT) != 0;
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
 * checked the path less than SNAPSHOT_CHECKED_MS ago; if so, the owner
 * of its files as then, in *@o. One entry serves every file of a
 * directory (the six of a thread), so the table holds an entry per
 * directory walked in the last SNAPSHOT_CHECKED_MS, and a file's own
 * entry only while it is in use.
 */
bool inodes_checked(struct inodes *in, const struct node *dir, struct owner *o);

/*
 * inodes_lookup - a lookup of file @n made @text, which it takes on
 * success (the caller keeps it on failure), for thread @pid, whose open
 * takes it (NULL: none could be made, the size is 0 and the open
 * renders anew); @o its owner; @checked its directory when this lookup
 * checked the path, else NULL; @who pays for the entries and the
 * extra inode's record it makes (@who->reader NULL: no bytes charged). Sets *@ino: the node's last inode when
 * no open holds it and no other thread's lookup waits for its open,
 * else an extra one; a table (tree_grows()) always an extra one. The
 * inode's record (its directory's, or the extra inode's own) counts the
 * kernel's lookup: the caller's entry reply gives it, or the caller
 * inodes_forget()s it once. 0; -ENOENT when @n's record is gone;
 * -ENOMEM (out of memory or records, or an entry past @who's budget).
 * Either way, *@idle is what the lookup's sweep found of extra inodes
 * that nobody uses any more: the caller has the kernel drop their
 * names, so that it forgets them.
 */
int inodes_lookup(struct inodes *in, const struct node *n,
		  const struct owner *o, pid_t pid, struct rbuf *text,
		  const struct node *checked, const struct record_payer *who,
		  uint64_t *ino, uint64_t *size, struct snapshot_idle *idle);

/*
 * inodes_retake - the content that thread @pid's last lookup of file
 * @n made less than SNAPSHOT_TAKE_MS ago, not opened yet: taken back
 * from its inode, now the caller's, for this thread's lookup of the
 * same name again (NULL when there is none). The kernel looks a name
 * up twice when its revalidation met another inode than the one it
 * holds (a table's every time: an inode never given twice), and a
 * stat followed by an open looks it up twice too: one rendering
 * serves them. A table's extra inode that the kernel forgot leaves
 * that content in its node's own entry for this.
 */
struct rbuf *inodes_retake(struct inodes *in, const struct node *n, pid_t pid);

/*
 * inodes_attr - the node, owner and size (what the kernel was last
 * told) of file inode @ino. -ENOENT when the table holds no entry of
 * it: an extra inode the kernel forgot, or a node's own inode not in
 * use (whose node its number encodes) or opened without a lookup.
 */
int inodes_attr(struct inodes *in, uint64_t ino, struct node *n,
		struct owner *o, uint64_t *size);

/*
 * inodes_open - an open of file inode @ino, node @n, by thread @pid,
 * to be inodes_release()d. The first open after a lookup, by the thread
 * that looked it up, within SNAPSHOT_TAKE_MS of it, takes the content
 * made then: *@text, now the caller's, and 0, or 2 when that lookup
 * told more than the one before it (the caller grows the kernel's
 * size). Any other open gets *@text NULL and 1: the caller renders the
 * content afresh and inodes_resize()s. An inode the table holds no
 * entry of (an extra inode a dead server made, which the caller found
 * in its records) is held from then on, of size 0 until resized.
 * -ENOMEM.
 */
int inodes_open(struct inodes *in, uint64_t ino, const struct node *n,
		pid_t pid, struct rbuf **text);

/* inodes_release - an open of @ino is closed. */
void inodes_release(struct inodes *in, uint64_t ino);

/*
 * inodes_resize - an open of file inode @ino rendered @size bytes
 * afresh, for a node owned by @o: whether the kernel may hold less
 * (then the caller grows the inode's size, if @can_grow). The table
 * keeps the least size the kernel may hold: a short read at the end
 * shrinks it to the content's length.
 */
bool inodes_resize(struct inodes *in, uint64_t ino, const struct owner *o,
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

/* inodes_in_use - how many inodes in use the table holds entries of. */
size_t inodes_in_use(struct inodes *in);

#endif
