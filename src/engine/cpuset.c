/*
 * cpuset: parsing the kernel's cpulist form into a set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "procfile.h"

static int cpuset_grow(struct cpuset *set, size_t size)
{
	unsigned char *bits;

	if (size <= set->size)
		return 0;
	bits = realloc(set->bits, size);
	if (!bits)
		return -ENOMEM;
	memset(bits + set->size, 0, size - set->size);
	set->bits = bits;
	set->size = size;
	return 0;
}

static int cpuset_add_range(struct cpuset *set, uint64_t lo, uint64_t hi)
{
	int ret;

	if (lo > hi || hi > CPUSET_MAX_CPU)
		return -EIO;
	ret = cpuset_grow(set, (size_t)hi + 1);
	if (ret < 0)
		return ret;
	memset(set->bits + lo, 1, (size_t)(hi - lo + 1));
	return 0;
}

int cpuset_parse(const char *list, struct cpuset *set)
{
	const char *p = list;
	uint64_t lo, hi;
	int ret = 0;

	memset(set, 0, sizeof(*set));
	while (*p && *p != '\n') {
		if (*p < '0' || *p > '9' || procfile_u64(&p, &lo) < 0)
			goto out_malformed;
		hi = lo;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9' || procfile_u64(&p, &hi) < 0)
				goto out_malformed;
		}
		ret = cpuset_add_range(set, lo, hi);
		if (ret < 0)
			goto out_free;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto out_malformed;
	}
	if (*p == '\n' && p[1] != '\0')
		goto out_malformed;
	return 0;

out_malformed:
	ret = -EIO;
out_free:
	cpuset_free(set);
	return ret;
}

int cpuset_read(const char *path, struct cpuset *set)
{
	char *text;
	int ret;

	ret = procfile_read_alloc(path, 256, &text);
	if (ret < 0)
		return ret;
	ret = cpuset_parse(text, set);
	free(text);
	return ret;
}

bool cpuset_has(const struct cpuset *set, int cpu)
{
	return cpu >= 0 && (size_t)cpu < set->size && set->bits[cpu];
}

void cpuset_free(struct cpuset *set)
{
	free(set->bits);
	set->bits = NULL;
	set->size = 0;
}
