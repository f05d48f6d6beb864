/*
 * inode: the nodes of the mounted tree, their inode numbers, and who
 * asks about them.
 *
 * A node is the kind of node (an index into the tree's table, tree.h),
 * the view it was named in (view.h), and the numbers met on its path:
 * the group N and processor M, or the PID and TID as that view numbers
 * them. All of it fits in the 64 bits of an inode number,
 *
 *	bits  0..7   kind
 *	bits  8..17  view slot (0 for nodes that are the same in every view)
 *	bits 18..39  num[0]: the group N, or the PID
 *	bits 40..61  num[1]: the processor M, or the TID
 *
 * so a node needs no table of its own: any request is served from its
 * inode number alone, and the kernel, whose dentry and attribute caches
 * are shared by every reader of a mount, never mixes up the names of
 * two views, whose inode numbers differ. A number names a task by its
 * number only; which task the kernel was told it is, is the held
 * table's (below), for the inodes the kernel holds below proc/.
 *
 * A request is who asks: the reader's thread as the daemon numbers it,
 * its ids, its view, and the daemon-wide environment. Nothing here
 * knows FUSE; the FUSE layer fills a request in for every operation.
 */
#ifndef TIMINGFS_INODE_H
#define TIMINGFS_INODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "engine.h"
#include "exited.h"
#include "listener.h"
#include "mountinfo.h"
#include "view.h"

#define NODE_KIND_BITS 8
#define NODE_NUM_BITS 22
/* Above any PID: the kernel's PID_MAX_LIMIT is 2^22. */
#define NODE_NUM_MAX ((1U << NODE_NUM_BITS) - 1)

/* The directories; the files and links follow them in the table. */
enum node_kind {
	K_NONE, /* no inode 0 */
	K_ROOT, /* inode 1, FUSE_ROOT_ID */
	K_GROUPS,
	K_GROUP,
	K_CPU,
	K_PROC,
	K_TGID,
	K_THREADS,
	K_TID,
};

struct node {
	unsigned int kind;
	unsigned int view; /* a view slot, below proc/ */
	uint32_t num[2];
};

/* Who owns a node. */
struct owner {
	uid_t uid;
	gid_t gid;
};

/* What every request shares: set up once, read-only while serving. */
struct tree_env {
	struct engine *engine;
	struct views *views;
	struct access_policy access;
	uid_t uid, gid; /* the daemon's: the owner outside proc/PID */
	struct timespec mount_time;
	/* The exited tasks kept, and who files them; NULL when none are. */
	struct exited *exited;
	struct listener *listener;
};

/* Who asks. */
struct request {
	const struct tree_env *env;
	struct view *view; /* the reader's view, for nodes below proc/ */
	pid_t pid; /* the reader's thread as the daemon numbers it, or 0 */
	uid_t uid; /* its filesystem ids */
	gid_t gid;
	/*
	 * Whether the access rules let it see every process (then
	 * VIEW_ALL_UIDS), else its own uid, the key of its views under
	 * invisible. A function, asked only where it matters and once a
	 * request (request_only_uid()), since the answer may need the
	 * reader's groups and capabilities; NULL for a reader to whom no
	 * rule applies.
	 */
	uid_t (*only_uid)(struct request *r);
	void *ctx; /* the layer that asked: only_uid's */
	bool entering; /* an opendir: a process's directory is entered */
	/* Read once a request, when first needed (nodes.h): */
	bool only_known;
	uid_t only_memo;
	int caps_state; /* 0: not read; 1: read; -errno: unreadable */
	uint64_t cap_eff; /* the reader's CapEff */
	ino_t userns; /* and its user namespace */
	/* The last task task_of() found, in the daemon's numbers, for
	 * the numbers task_nr of view task_view (task_pid 0: none yet). */
	const struct view *task_view;
	uint32_t task_nr[2];
	pid_t task_pid, task_tid;
	/* The creation time of task (seen_pid, seen_tid) in the daemon's
	 * numbers, as a read of this request met it (0: none yet). */
	uint64_t seen_start;
	pid_t seen_pid, seen_tid;
};

/* request_only_uid - whether @r's reader may see every process
 * (VIEW_ALL_UIDS), else its uid (struct request's only_uid). */
static inline uid_t request_only_uid(struct request *r)
{
	if (!r->only_known) {
		r->only_memo = r->only_uid ? r->only_uid(r) : VIEW_ALL_UIDS;
		r->only_known = true;
	}
	return r->only_memo;
}

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
 * held_gone - up to @max directories of tasks that have exited, whose
 * names the kernel still keeps, into @out: their count. The kernel keeps
 * a name until memory runs short, and each is an entry here; the caller
 * has it dropped. A sweep looks at up to HELD_SWEEP_MAX directories of
 * each part of the table, from a part that turns at each sweep.
 */
#define HELD_SWEEP_MAX 4096
size_t held_gone(struct held *h, struct node *out, size_t max);

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

/* node_ino - the inode number of @n. */
uint64_t node_ino(const struct node *n);

/* node_of - the node of inode number @ino (its kind unchecked). */
void node_of(uint64_t ino, struct node *n);

/* The numbers of a node, by what they mean. */
static inline unsigned int node_group(const struct node *n)
{
	return n->num[0];
}

static inline unsigned int node_cpu(const struct node *n)
{
	return n->num[1];
}

static inline pid_t node_pid(const struct node *n)
{
	return (pid_t)n->num[0];
}

/* The thread, or 0 for the process itself. */
static inline pid_t node_tid(const struct node *n)
{
	return (pid_t)n->num[1];
}

#endif
