/*
 * node: the nodes of the mounted tree and their inode numbers.
 *
 * A node is the kind of node (an index into the tree's table, tree.h),
 * the view it was named in (view.h), and the numbers met on its path:
 * the group N and processor M, or the PID and TID as that view numbers
 * them, or a job's cgroup id (44 bits, jobs/: named in a view as proc/
 * is, but with no record). All of it fits in the 64 bits of an inode number,
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
 * Below proc/ the FUSE layer names a node by a record of its own
 * instead (fuse/inodes.h), in its node's rec: the tree only carries it
 * along, a file's and threads/' the record of their directory.
 */
#ifndef TIMINGFS_NODE_H
#define TIMINGFS_NODE_H

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
	K_JOB, /* jobs/ and each cgroup below it: num[0..1] its id */
};

struct node {
	unsigned int kind;
	unsigned int view; /* a view slot, below proc/ */
	uint32_t num[2];
	uint32_t rec; /* the FUSE layer's record naming it (above); 0: none */
};

/* Who owns a node. */
struct owner {
	uid_t uid;
	gid_t gid;
};

/* node_ino - the inode number of @n. */
uint64_t node_ino(const struct node *n);

/* node_of - the node of inode number @ino (its kind unchecked; no rec). */
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

/* A job's cgroup id (jobs.h): num[0] its low bits, num[1] its high. */
static inline uint64_t node_job(const struct node *n)
{
	return n->num[0] | (uint64_t)n->num[1] << NODE_NUM_BITS;
}

static inline void node_set_job(struct node *n, uint64_t id)
{
	n->num[0] = (uint32_t)(id & NODE_NUM_MAX);
	n->num[1] = (uint32_t)(id >> NODE_NUM_BITS) & NODE_NUM_MAX;
}

/* The thread, or 0 for the process itself. */
static inline pid_t node_tid(const struct node *n)
{
	return (pid_t)n->num[1];
}

#endif
