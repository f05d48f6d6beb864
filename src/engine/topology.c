/*
 * topology: packing NUMA nodes into processor groups.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "cpuset.h"
#include "procfile.h"
#include "topology.h"

#define NODE_DIR "/devices/system/node"

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

/*
 * The node numbers under SYS/devices/system/node, ascending, in a
 * malloc'd array; none (and no error) when there is no node directory.
 */
static int list_nodes(const char *sys_root, unsigned int **nodes, size_t *n)
{
	char path[PATH_MAX];
	struct dirent *de;
	unsigned int *arr = NULL, *bigger;
	size_t cap = 0;
	uint64_t id;
	DIR *dir;

	*n = 0;
	*nodes = NULL;
	snprintf(path, sizeof(path), "%s" NODE_DIR, sys_root);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -EIO;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "node", 4) ||
		    decimal_parse(de->d_name + 4, INT_MAX, &id) < 0)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			bigger = realloc(arr, cap * sizeof(*arr));
			if (!bigger) {
				free(arr);
				closedir(dir);
				return -ENOMEM;
			}
			arr = bigger;
		}
		arr[(*n)++] = (unsigned int)id;
	}
	closedir(dir);
	qsort(arr, *n, sizeof(*arr), cmp_uint);
	*nodes = arr;
	return 0;
}

/*
 * node_of[cpu] for every present CPU: the index (in ascending order) of
 * the node that lists it, filled in for CPUs no node lists.
 */
static int assign_nodes(const char *sys_root, const struct cpuset *present,
			int *node_of, size_t *nnodes)
{
	char path[PATH_MAX];
	struct cpuset cpus;
	unsigned int *nodes;
	size_t i, n;
	int cpu, ret, last = -1;

	for (i = 0; i < present->size; i++)
		node_of[i] = -1;
	ret = list_nodes(sys_root, &nodes, &n);
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s" NODE_DIR "/node%u/cpulist",
			 sys_root, nodes[i]);
		ret = cpuset_read(path, &cpus);
		if (ret < 0) {
			free(nodes);
			return -EIO;
		}
		for (cpu = 0; (size_t)cpu < present->size; cpu++)
			if (cpuset_has(present, cpu) &&
			    cpuset_has(&cpus, cpu) && node_of[cpu] < 0)
				node_of[cpu] = (int)i;
		cpuset_free(&cpus);
	}
	free(nodes);
	*nnodes = n ? n : 1;
	for (cpu = 0; (size_t)cpu < present->size; cpu++) {
		if (!cpuset_has(present, cpu))
			continue;
		if (node_of[cpu] < 0)
			node_of[cpu] = last < 0 ? 0 : last;
		last = node_of[cpu];
	}
	return 0;
}

static struct topology_group *new_group(struct topology *topo)
{
	struct topology_group *g;

	g = realloc(topo->groups, (topo->ngroups + 1) * sizeof(*g));
	if (!g)
		return NULL;
	topo->groups = g;
	g += topo->ngroups++;
	g->size = 0;
	return g;
}

static int node_size(const struct cpuset *present, const int *node_of, int node)
{
	int cpu, n = 0;

	for (cpu = 0; (size_t)cpu < present->size; cpu++)
		if (cpuset_has(present, cpu) && node_of[cpu] == node)
			n++;
	return n;
}

/* Add node @node's CPUs to the groups, as the packing rule says. */
static int pack_node(struct topology *topo, const struct cpuset *present,
		     const int *node_of, int node, unsigned int max_size,
		     struct topology_group **cur)
{
	unsigned int size = (unsigned int)node_size(present, node_of, node);
	int cpu;

	if (size == 0)
		return 0;
	if (!*cur || (*cur)->size + size > max_size)
		*cur = NULL;
	for (cpu = 0; (size_t)cpu < present->size; cpu++) {
		if (!cpuset_has(present, cpu) || node_of[cpu] != node)
			continue;
		if (!*cur || (*cur)->size == max_size) {
			*cur = new_group(topo);
			if (!*cur)
				return -ENOMEM;
		}
		(*cur)->cpu[(*cur)->size++] = cpu;
	}
	/* The node after a split one starts a group of its own. */
	if (size > max_size)
		*cur = NULL;
	return 0;
}

static int build_maps(struct topology *topo, size_t ncpus)
{
	unsigned int g, m;

	topo->ncpus = ncpus;
	topo->group_of = malloc(ncpus * sizeof(int));
	topo->index_of = malloc(ncpus * sizeof(int));
	if (!topo->group_of || !topo->index_of)
		return -ENOMEM;
	memset(topo->group_of, 0xff, ncpus * sizeof(int));
	memset(topo->index_of, 0xff, ncpus * sizeof(int));
	for (g = 0; g < topo->ngroups; g++)
		for (m = 0; m < topo->groups[g].size; m++) {
			topo->group_of[topo->groups[g].cpu[m]] = (int)g;
			topo->index_of[topo->groups[g].cpu[m]] = (int)m;
		}
	return 0;
}

int topology_build(struct topology *topo, const char *sys_root,
		   unsigned int max_size)
{
	struct topology_group *cur = NULL;
	char path[PATH_MAX];
	struct cpuset present;
	size_t nnodes, node;
	int *node_of = NULL;
	int ret;

	memset(topo, 0, sizeof(*topo));
	if (max_size < 1 || max_size > TOPOLOGY_GROUP_MAX)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/present", sys_root);
	ret = cpuset_read(path, &present);
	if (ret < 0)
		return -EIO;
	if (present.size == 0) {
		ret = -EIO;
		goto out_free_present;
	}
	node_of = malloc(present.size * sizeof(int));
	ret = -ENOMEM;
	if (!node_of)
		goto out_free_present;
	ret = assign_nodes(sys_root, &present, node_of, &nnodes);
	if (ret < 0)
		goto out_free_nodes;
	for (node = 0; node < nnodes; node++) {
		ret = pack_node(topo, &present, node_of, (int)node, max_size,
				&cur);
		if (ret < 0)
			goto out_free_topo;
	}
	ret = build_maps(topo, present.size);
	if (ret < 0)
		goto out_free_topo;
	free(node_of);
	cpuset_free(&present);
	return 0;

out_free_topo:
	topology_free(topo);
out_free_nodes:
	free(node_of);
out_free_present:
	cpuset_free(&present);
	return ret;
}

void topology_free(struct topology *topo)
{
	free(topo->groups);
	free(topo->group_of);
	free(topo->index_of);
	memset(topo, 0, sizeof(*topo));
}
