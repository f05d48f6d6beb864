/*
 * inode: the nodes of the mounted tree and their inode numbers.
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
 * and the kernel, whose dentry and attribute caches are shared by every
 * reader of a mount, never mixes up the names of two views, whose
 * inode numbers differ. That number is a node's st_ino, and the node ID
 * the kernel knows it by outside proc/.
 *
 * Below proc/ a number names a task by its number only, and a name must
 * be one task instance (docs/design.md, "Names and identities"):
 * there the FUSE layer names every node in a record of its own table
 * (inodes.h), one for proc/ of each view and one for each task
 * instance in each view, and the node ID is the record's,
 *
 *	bits  0..7   kind
 *	bits  8..31  the record's index (rec)
 *	bit   62     set
 *
 * so that the records' IDs, handed out lowest first, differ in their
 * low bits and spread over the kernel's inode hash (fs/inode.c hash()
 * folds the bits above about 40 into a few buckets, where the TID of
 * the number above lands: a walk of a process's thousands of threads
 * was quadratic). A task's files and threads/ share its record.
 */
#ifndef TIMINGFS_INODE_H
#define TIMINGFS_INODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

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
	uint32_t rec; /* the FUSE layer's record naming it (above); 0: none */
};

#define NODE_REC_BIT (1ULL << 62)
/* Set besides NODE_REC_BIT: an extra inode of a file (inodes.h), a
 * record of its own. */
#define NODE_EXTRA_BIT (1ULL << 63)
#define NODE_REC_BITS 24
#define NODE_REC_MAX ((1U << NODE_REC_BITS) - 1)

/* Who owns a node. */
struct owner {
	uid_t uid;
	gid_t gid;
};

/* node_ino - the inode number of @n. */
uint64_t node_ino(const struct node *n);

/* node_of - the node of inode number @ino (its kind unchecked; no rec). */
void node_of(uint64_t ino, struct node *n);

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
