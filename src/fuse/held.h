/*
 * held: the inodes the kernel holds below proc/, by node ID.
 */
#ifndef TIMINGFS_HELD_H
#define TIMINGFS_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inode.h"
#include "view.h"

/*
 * The inodes the kernel holds below proc/: for each node ID (a node's
 * own number, or an extra inode's, snapshot.h) that an entry reply gave
 * the kernel, how many lookups of it the kernel holds (each entry reply
 * one more, FORGET takes them back) and the start of the task it names
 * (its creation time in ns; 0 for proc/ itself, proc/self, proc/table).
 * That start is the inode's identity: the entry's generation is made of
 * it (held_generation()), and a request by node ID whose task now has
 * another start is refused, so that a descriptor, a working directory
 * or a reopen through /proc/self/fd/N never reaches another task that
 * took the number; but while the kernel may still walk a path through
 * the name it cached (held_start()'s *cached), a request may be such a
 * walk's, which gets the task that has the number now, as procfs's
 * does. The table also counts, per view slot, the inodes it
 * holds named in it (views_hold()): a slot with any is never reused.
 *
 * Memory: an entry a kernel inode, as long as the kernel keeps it. The
 * kernel keeps a name until memory runs short, so the FUSE layer has it
 * drop the names of exited tasks' directories (held_gone()) as the
 * table grows: the table follows the live tasks whose names are
 * cached, and what is held open.
 * Thread safety: every function may be called from any thread; the
 * table is split into shards, each under its own short lock.
 */
struct held;

/* held_new - an empty table, counting slots in @vs: 0, or -ENOMEM. */
int held_new(struct views *vs, struct held **out);

/* held_free - release @h; NULL is allowed. No slot is given back. */
void held_free(struct held *h);

/*
 * held_add - an entry reply gives the kernel one more lookup of node ID
 * @ino, named in view slot @slot, of the task that started at @start;
 * for a task's directory, the task as the daemon numbers it, @pid and
 * @tid (0 for a process; @pid 0: not known, or no task's directory);
 * @cached_ms, the reply's entry timeout, how long the kernel may walk
 * through the name without asking. A new entry holds @slot
 * (views_hold()). When the entry knew another
 * start (the number's task changed), it takes @start and sets
 * *@replaced (may be NULL): the reply's generation differs, and the
 * kernel puts a new inode in place of the old one, whose holders get
 * EIO from then on. 0, or -ENOMEM.
 */
int held_add(struct held *h, uint64_t ino, unsigned int slot, uint64_t start,
	     pid_t pid, pid_t tid, unsigned int cached_ms, bool *replaced);

/*
 * held_start - the start recorded for node ID @ino: 0 and *@start, and
 * in *@cached (may be NULL) whether the kernel may still walk through
 * the name it cached of it (the entry timeout @cached_ms of its last
 * held_add(), and HELD_CACHE_SLACK_MS for the reply's way there); or
 * -ENOENT when the kernel holds no lookup of it that the table knows.
 */
#define HELD_CACHE_SLACK_MS 20
int held_start(struct held *h, uint64_t ino, uint64_t *start, bool *cached);

/*
 * held_uncache - the kernel was told to drop its name of @ino: no path
 * walk comes through it without asking again, but those under way (the
 * kernel drops what they looked up below it too, which they ask again)
 * may still come for HELD_DROP_GRACE_MS.
 */
#define HELD_DROP_GRACE_MS 100
void held_uncache(struct held *h, uint64_t ino);

/*
 * held_forget - the kernel forgets @nlookup lookups of @ino: at none
 * left the entry goes, and with the last of a slot's, its hold. A node
 * ID the table does not know is ignored.
 */
void held_forget(struct held *h, uint64_t ino, uint64_t nlookup);

/*
 * held_nodes - up to @max nodes the kernel holds named in any of the
 * @nslots view slots @slot (extra inodes left out: their directories
 * name them), into @out: their count.
 */
size_t held_nodes(struct held *h, const unsigned int *slot, unsigned int nslots,
		  struct node *out, size_t max);

/*
 * held_gone - up to @max directories of tasks that have exited (@gone,
 * asked without a lock, says so of the task as the daemon numbers it),
 * whose names the kernel still keeps, into @out: their count. The
 * kernel keeps a name until memory runs short, and each is an entry
 * here; the caller has it dropped. A sweep looks at up to
 * HELD_SWEEP_MAX directories of each part of the table, from a part
 * that turns at each sweep.
 */
#define HELD_SWEEP_MAX 4096
size_t held_gone(struct held *h, bool (*gone)(void *ctx, pid_t pid, pid_t tid),
		 void *ctx, struct node *out, size_t max);

/* held_count - how many inodes the table holds now. */
size_t held_count(struct held *h);

/*
 * held_generation - an entry's generation for a task that started at
 * @start, @extra added (a file's length, snapshot.h): the kernel keeps
 * 32 bits of it, and an inode whose generation differs is stale.
 */
static inline uint64_t held_generation(uint64_t start, uint64_t extra)
{
	uint32_t h = start ? (uint32_t)((start * 0x9e3779b97f4a7c15ULL) >> 32) :
			     0;

	return (uint32_t)(h + extra);
}

#endif
