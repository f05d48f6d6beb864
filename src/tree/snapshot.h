/*
 * snapshot: the kernel's inodes of timingfs's files, each one snapshot
 * of a file's content, made when a path walk looks the file up.
 *
 * Why. Since Linux 6.5 the kernel serves sendfile(2), splice(2) and
 * copy_file_range(2)'s fallback of a FUSE file through its page cache,
 * up to the inode's size, direct_io or not; so does mmap(2). Those
 * readers (busybox cat and cp, Python's shutil.copyfile, splicing cats)
 * get exactly what the page cache holds up to i_size: nothing at size
 * 0, a truncated value at a size too small, and pages of two snapshots
 * mixed when two opens of one inode share its page cache. The page
 * cache and the size belong to the inode, not to the open file: so
 * each snapshot gets an inode of its own, of its exact size.
 *
 * How. A LOOKUP of a file renders its content then and there, and
 * answers with an inode whose attributes carry the content's exact
 * length. The entry timeout of a file is 0, so the kernel looks the
 * name up again at every path walk. A value file's answer is the inode
 * of the name's last lookup, its content made anew, while no open file
 * holds it and no other thread's lookup of it waits for its open;
 * otherwise an extra inode, never given before, which the kernel puts
 * in place of the held one in its dentry. A table's answer is always
 * an extra inode never given before (below). The OPEN that follows on
 * the same thread within SNAPSHOT_TAKE_MS takes the content made at its
 * lookup as the open file's snapshot; the open drops whatever pages an
 * earlier snapshot left in the inode's cache, and, as no other open
 * holds the inode, its page cache holds this snapshot alone: read(2),
 * pread, sendfile, splice and mmap all see the same bytes, the size is
 * exact (stat, ls -l, du, find -size, tail -c agree with cat), and two
 * readers of one path never share a page cache. A walk costs one
 * LOOKUP more than a cached dentry does, and the content's end is known
 * to the kernel; the path itself is checked once in
 * SNAPSHOT_CHECKED_MS per directory, as a cached dentry was.
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
 * Node IDs. A file's first inode is its node's own ID (node_id(),
 * inode.h), which needs no memory here: the table holds an entry for
 * it only while it is in use (open, a lookup's content waiting for its
 * open) and drops it at the release that ends its use, or at a sweep;
 * a directory whose path a lookup checked has an entry for
 * SNAPSHOT_CHECKED_MS. Below proc/ a node's own ID is its record's
 * (records.h), which another task's record takes once the kernel forgot
 * every name of it: no entry of a node outlives its record
 * (snapshots_forget()). So the daemon's memory follows what is being
 * read, not the files the kernel keeps cached. An extra inode's ID is
 * the caller's (snapshots_new()'s extra_id: a record of the FUSE layer,
 * which a restarted server finds again), with SNAPSHOT_INO_BIT set,
 * which no node's own ID has; its entry lives until the kernel forgets
 * it and nobody has it open. Every inode's attributes carry the node's
 * own number as st_ino.
 *
 * Memory. Each entry is charged to the budget of the reader whose
 * lookup made it (budget.h), snapshots_entry_bytes() each, until it
 * goes; the content a lookup made is the caller's to charge (it is
 * handed in, and freed with the function given to snapshots_new()). An
 * own inode's entry made by an open without a lookup is charged to
 * nobody here: that open renders afresh, and its caller charges the
 * entry's bytes with the content.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef TIMINGFS_SNAPSHOT_H
#define TIMINGFS_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "request.h"
#include "render.h"

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

/* How many slots one lookup's sweep visits: as many idle extras at most. */
#define SNAPSHOT_SWEEP_MAX 4

/* The idle extra inodes a sweep found: their nodes, to be forgotten. */
struct snapshot_idle {
	struct node node[SNAPSHOT_SWEEP_MAX];
	unsigned int count;
};

struct snapshots;

/* snapshot_ino - whether node ID @ino names an extra inode. */
static inline bool snapshot_ino(uint64_t ino)
{
	return (ino & SNAPSHOT_INO_BIT) != 0;
}

/*
 * The caller's records (inode.h: a node ID with a record's index):
 * make(ctx, n), the node ID of a new extra inode of node @n, with
 * SNAPSHOT_INO_BIT set, so that a successor of the server knows it (0
 * when none can be made); the kernel's lookups of an extra inode,
 * counted (hold) under the table's lock, where the table counts them,
 * so that the two counts never part; and the kernel's lookups of any
 * record's node forgotten (forget), true when that was the record's
 * last and it went, its index free for the next record. The table
 * calls them with its lock held: they must not call it.
 */
struct snapshot_extras {
	uint64_t (*make)(void *ctx, const struct node *n);
	void (*hold)(void *ctx, uint64_t id);
	bool (*forget)(void *ctx, uint64_t id, uint64_t nlookup);
	void *ctx;
};

/*
 * snapshots_new - an empty table, which frees the contents it holds
 * (lookups' contents never opened) with @free_text, and keeps extra
 * inodes in the records of @extras (copied). 0, or -ENOMEM.
 */
int snapshots_new(void (*free_text)(struct rbuf *text),
		  const struct snapshot_extras *extras, struct snapshots **out);

/* snapshots_entry_bytes - what one entry of the table costs. */
size_t snapshots_entry_bytes(void);

/* snapshots_free - release @s and every snapshot in it; NULL allowed. */
void snapshots_free(struct snapshots *s);

/*
 * snapshots_checked - whether a lookup of a file of directory @dir
 * checked the path less than SNAPSHOT_CHECKED_MS ago; if so, the owner
 * of its files as then, in *@o. One record serves every file of a
 * directory (the six of a thread), so the table holds a record per
 * directory walked in the last SNAPSHOT_CHECKED_MS, and a file's own
 * record only while it is in use.
 */
bool snapshots_checked(struct snapshots *s, const struct node *dir,
		       struct owner *o);

/*
 * snapshots_lookup - a lookup of node @n made @text, which it takes on
 * success (the caller keeps it on failure), for thread @pid, whose open
 * takes it (NULL: none could be made, the size is 0 and the open
 * renders anew); @o its owner; @checked its directory when this lookup
 * checked the path, else NULL; @who the reader the entries it makes
 * are charged to (NULL: nobody). Sets *@ino: the node's last inode when
 * no open holds it and no other thread's lookup waits for its open,
 * else an extra one; a table (tree_grows()) always an extra one. 0, or
 * -ENOMEM (out of memory, or an entry past
 * @who's budget). Either way, *@idle is what the lookup's
 * sweep found of extra inodes that nobody uses any more: the caller
 * has the kernel drop their names, so that it forgets them.
 */
int snapshots_lookup(struct snapshots *s, const struct node *n,
		     const struct owner *o, pid_t pid, struct rbuf *text,
		     const struct node *checked, struct budget_reader *who,
		     uint64_t *ino, struct snapshot_idle *idle);

/*
 * snapshots_retake - the content that thread @pid's last lookup of node
 * @n made less than SNAPSHOT_TAKE_MS ago, not opened yet: taken back
 * from its inode, now the caller's, for this thread's lookup of the
 * same name again (NULL when there is none). The kernel looks a name
 * up twice when its revalidation met another inode than the one it
 * holds (a table's every time: an inode never given twice), and a
 * stat followed by an open looks it up twice too: one rendering
 * serves them.
 */
struct rbuf *snapshots_retake(struct snapshots *s, const struct node *n,
			      pid_t pid);

/*
 * snapshots_get - the node, owner and size (what the kernel was last
 * told) of inode @ino. -ENOENT when the table knows nothing of it:
 * an extra inode the kernel forgot, or a node's own inode not in use
 * (whose node its number encodes) or opened without a lookup.
 */
int snapshots_get(struct snapshots *s, uint64_t ino, struct node *n,
		  struct owner *o, uint64_t *size);

/*
 * snapshots_open - an open of inode @ino, node @n, by thread @pid, to
 * be snapshots_release()d. The first open after a lookup, by the thread
 * that looked it up, within SNAPSHOT_TAKE_MS of it, takes the content
 * made then: *@text, now the caller's, and 0, or 2 when that lookup
 * told more than the one before it (the caller grows the kernel's
 * size). Any other open gets *@text NULL and 1: the caller renders the
 * content afresh and snapshots_resize()s. An inode the
 * table does not hold (an extra inode a dead server made, which the
 * caller found in its records) is held from then on, of size 0 until
 * resized. -ENOMEM.
 */
int snapshots_open(struct snapshots *s, uint64_t ino, const struct node *n,
		   pid_t pid, struct rbuf **text);

/* snapshots_release - an open of @ino is closed. */
void snapshots_release(struct snapshots *s, uint64_t ino);

/*
 * snapshots_resize - an open of inode @ino rendered @size bytes afresh,
 * for a node owned by @o: whether the kernel may have been told
 * less (then the caller grows the inode's size). Recorded either way.
 */
bool snapshots_resize(struct snapshots *s, uint64_t ino, const struct owner *o,
		      uint64_t size);

/*
 * snapshots_forget - the kernel forgets @nlookup lookups of @ino, any
 * node ID with a record (node_id_rec()); its record is told
 * (extras->forget) whether or not the table knows the inode (one a
 * dead server made). An extra inode goes at none left, once nobody has
 * it open. When a node's own record goes, so does every entry of its
 * nodes (a record's index is another task's next, and its node IDs
 * with it): no lookup of the next finds what this one's directory was
 * checked for, its last inode or its content. Any other ID needs
 * nothing.
 */
void snapshots_forget(struct snapshots *s, uint64_t ino, uint64_t nlookup);

/*
 * snapshots_adopt - inode @ino, node @n, is open with content of @size
 * bytes, opened by a server that died (fs.h: the keep): held open as
 * by snapshots_open() until its snapshots_release(), so that no lookup
 * hands it out meanwhile; an extra inode is held as looked up once
 * until the kernel forgets it. 0 or -ENOMEM.
 */
int snapshots_adopt(struct snapshots *s, uint64_t ino, const struct node *n,
		    uint64_t size);

/*
 * snapshots_taken_over - this server takes over from one that died,
 * whose lookups may have given inodes whose opens are still to come
 * (their contents are lost with it, and the table does not know
 * them): for SNAPSHOT_PENDING_MS, every lookup gets an extra inode,
 * never given before, so that no reader shares an inode with one of
 * those opens.
 */
void snapshots_taken_over(struct snapshots *s);

/* snapshots_count - how many inodes the table holds now. */
size_t snapshots_count(struct snapshots *s);

#endif
