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
 * two views, whose inode numbers differ.
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
