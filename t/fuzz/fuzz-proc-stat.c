/*
 * fuzz-proc-stat: idle_parse_stat on a /proc/stat file, for a set of
 * CPUs with gaps, repeats and numbers no machine has.
 */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "idle.h"

#define UNTOUCHED 0xa5a5a5a5a5a5a5a5ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int cpus[] = { 0, 1, 2, 3, 7, 8, 63, 64, 1, 255, 4095 };
	enum { N = sizeof(cpus) / sizeof(cpus[0]) };
	char *text = fuzz_text(data, size);
	bool found[N] = { false };
	uint64_t ns[N];
	size_t i;
	int ret;

	for (i = 0; i < N; i++)
		ns[i] = UNTOUCHED;
	ret = idle_parse_stat(text, cpus, N, 100, ns, found);
	fuzz_assert(ret == 0 || ret == -EIO);
	for (i = 0; i < N; i++)
		if (!found[i])
			fuzz_assert(ns[i] == UNTOUCHED);
	/* A CPU listed twice is found at its first place only. */
	fuzz_assert(!found[8] && ns[8] == UNTOUCHED);
	fuzz_assert(memcmp(text, data, size) == 0);
	free(text);
	return 0;
}
