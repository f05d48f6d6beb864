/*
 * groups.c: the processor groups of a timingfs mount for libtimingfs:
 * how many, each one's processors (its `cpus` list), the caller's group
 * (`groups/current`) and a group's idle cycles in one snapshot (its
 * `idle_cycles`). Allocation-free and thread-safe, as read.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib-internal.h"

int tfs_group_count(const struct tfs *tfs, unsigned int *count)
{
	*count = tfs->group_count;
	return 0;
}

/* The CPUs a kernel cpulist ("0-3,8,10-11\n") names, counted. */
static int cpulist_count(const char *p, unsigned int *count)
{
	uint64_t lo, hi;
	unsigned int n = 0;

	while (*p && *p != '\n') {
		if (lib_parse_u64(&p, &lo) < 0)
			return -EIO;
		hi = lo;
		if (*p == '-') {
			p++;
			if (lib_parse_u64(&p, &hi) < 0 || hi < lo)
				return -EIO;
		}
		if (hi - lo >= 65536)
			return -EIO;
		n += (unsigned int)(hi - lo + 1);
		if (*p == ',')
			p++;
	}
	*count = n;
	return 0;
}

int tfs_group_size(const struct tfs *tfs, unsigned int group,
		   unsigned int *count)
{
	char name[48], text[LIB_SMALL_FILE];
	int ret;

	if (group >= tfs->group_count)
		return -EINVAL;
	snprintf(name, sizeof(name), "groups/%u/cpus", group);
	ret = lib_read_at(tfs->root_fd, name, text, sizeof(text));
	if (ret < 0)
		return ret;
	return cpulist_count(text, count);
}

int tfs_current_group(const struct tfs *tfs, unsigned int *group)
{
	char link[32];
	const char *p = link;
	uint64_t v;
	ssize_t n;

	n = readlinkat(tfs->root_fd, "groups/current", link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	if (lib_parse_u64(&p, &v) < 0 || *p || v > 65535)
		return -EIO;
	*group = (unsigned int)v;
	return 0;
}

/* The lines of an idle_cycles file: "cpuM VALUE", M from 0 up. */
static int idle_lines(const char *text, uint64_t *cycles, unsigned int room,
		      unsigned int *count)
{
	const char *p = text;
	unsigned int n = 0;
	uint64_t m, v;

	while (*p) {
		if (strncmp(p, "cpu", 3) != 0)
			return -EIO;
		p += 3;
		if (lib_parse_u64(&p, &m) < 0 || m != n || *p++ != ' ')
			return -EIO;
		if (lib_parse_u64(&p, &v) < 0 || *p++ != '\n')
			return -EIO;
		if (cycles && n < room)
			cycles[n] = v;
		n++;
	}
	*count = n;
	return 0;
}

int tfs_group_idle_cycles(const struct tfs *tfs, unsigned int group,
			  uint64_t *cycles, unsigned int *count)
{
	char name[48], text[LIB_GROUP_FILE];
	unsigned int n;
	int ret;

	if (group >= tfs->group_count)
		return -EINVAL;
	snprintf(name, sizeof(name), "groups/%u/idle_cycles", group);
	ret = lib_read_at(tfs->root_fd, name, text, sizeof(text));
	if (ret < 0)
		return ret;
	/* Counted first: a short buffer is left as it was. */
	ret = idle_lines(text, NULL, 0, &n);
	if (ret < 0)
		return ret;
	if (n > *count || !cycles) {
		*count = n;
		return -ENOBUFS;
	}
	*count = n;
	return idle_lines(text, cycles, n, &n);
}
