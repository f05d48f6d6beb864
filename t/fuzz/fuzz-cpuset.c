/*
 * fuzz-cpuset: cpuset_parse on a cpulist ("0-3,8,10-11"), and the set
 * it makes written out as a cpulist and parsed again to the same set.
 */
#include <errno.h>

#include "cpuset.h"
#include "fuzz.h"

/* @set in the kernel's cpulist form, malloc'd. */
static char *cpulist(const struct cpuset *set)
{
	size_t lo, hi, runs = 0;
	char *text, *p;

	for (lo = 0; lo < set->size; lo++)
		runs += set->bits[lo] && (lo == 0 || !set->bits[lo - 1]);
	/* At most "65534-65535," a run, and "\n". */
	text = malloc(runs * 12 + 2);
	p = text;

	if (!text)
		abort();
	*p = '\0';
	for (lo = 0; lo < set->size; lo = hi + 1) {
		if (!set->bits[lo]) {
			hi = lo;
			continue;
		}
		for (hi = lo; hi + 1 < set->size && set->bits[hi + 1]; hi++)
			;
		p += sprintf(p, p == text ? "%zu" : ",%zu", lo);
		if (hi > lo)
			p += sprintf(p, "-%zu", hi);
	}
	strcpy(p, "\n");
	return text;
}

static void check_set(const struct cpuset *set)
{
	size_t i;

	fuzz_assert(set->size <= CPUSET_MAX_CPU + 1);
	fuzz_assert((set->size == 0) == (set->bits == NULL));
	for (i = 0; i < set->size; i++)
		fuzz_assert(set->bits[i] <= 1);
	/* It grows only to hold the highest CPU added. */
	if (set->size)
		fuzz_assert(set->bits[set->size - 1] == 1);
	fuzz_assert(!cpuset_has(set, -1) && !cpuset_has(set, (int)set->size));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *again;
	struct cpuset set, set2;
	int ret;

	ret = cpuset_parse(text, &set);
	fuzz_assert(ret == 0 || ret == -EIO || ret == -ENOMEM);
	if (ret < 0) {
		fuzz_assert(set.bits == NULL && set.size == 0);
		goto out;
	}
	check_set(&set);
	again = cpulist(&set);
	fuzz_assert(cpuset_parse(again, &set2) == 0);
	fuzz_assert(set2.size == set.size);
	fuzz_assert(set.size == 0 ||
		    memcmp(set.bits, set2.bits, set.size) == 0);
	cpuset_free(&set2);
	free(again);
	cpuset_free(&set);
	fuzz_assert(set.bits == NULL && set.size == 0);
out:
	fuzz_assert(memcmp(text, data, size) == 0);
	free(text);
	return 0;
}
