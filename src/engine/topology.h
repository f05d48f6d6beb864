/*
 * topology: processor groups as Windows forms them, from sysfs.
 *
 * NUMA nodes are taken in ascending order; a group takes whole nodes
 * while they fit in max_size; a node that does not fit starts the next
 * group; a node larger than max_size is split in CPU-number order into
 * chunks of max_size, each a group, and the node after it starts a new
 * group. Inside a group processors are ordered by Linux CPU number and
 * M is the position in that order. Membership is computed from the
 * present CPUs, so numbering survives CPUs going offline. Without NUMA
 * information every CPU is in node 0; a present CPU that no node lists
 * (some architectures drop offline CPUs from node lists) joins the node
 * of the nearest lower-numbered CPU that has one, or the first node.
 *
 * Immutable once built; thread safe to read.
 */
#ifndef TIMINGFS_TOPOLOGY_H
#define TIMINGFS_TOPOLOGY_H

#include <stddef.h>

#define TOPOLOGY_GROUP_MAX 64

struct topology_group {
	unsigned int size; /* present processors, M = 0 .. size-1 */
	int cpu[TOPOLOGY_GROUP_MAX]; /* Linux CPU number of each M */
};

struct topology {
	unsigned int ngroups;
	struct topology_group *groups;
	size_t ncpus; /* entries in the maps below: max present CPU + 1 */
	int *group_of; /* Linux CPU -> group, -1 when not present */
	int *index_of; /* Linux CPU -> M */
};

/*
 * topology_build - read SYS/devices/system/cpu/present and
 * SYS/devices/system/node/nodeN/cpulist under @sys_root and pack the
 * groups with at most @max_size (1..64) processors. Returns 0, -EIO
 * for malformed or missing sources, -ENOMEM.
 */
int topology_build(struct topology *topo, const char *sys_root,
		   unsigned int max_size);

/* topology_free - release what topology_build() made. */
void topology_free(struct topology *topo);

#endif
