/*
 * fuzz-nspid: nspid_parse on any text, against a plain reading of the
 * same line: the line is found as procfile_field finds it, and its
 * blank-separated words must all be pids (1 .. 2^22) for a count.
 */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "nspid.h"
#include "procfile.h"

/* The plain reading: how many pids the value at @p holds, or -EIO. */
static int plain(const char *p, pid_t *want, unsigned int max)
{
	unsigned long long v;
	unsigned int n = 0;
	const char *start;
	char *end;

	for (;;) {
		p += strspn(p, " \t");
		if (*p == '\n' || *p == '\0')
			return n ? (int)n : -EIO;
		start = p;
		p += strspn(p, "0123456789");
		if (p == start || n == max)
			return -EIO;
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\0')
			return -EIO;
		v = strtoull(start, &end, 10);
		if (v == 0 || v > (1ULL << 22))
			return -EIO;
		want[n++] = (pid_t)v;
	}
}

static void check(const char *text, const char *key, unsigned int max)
{
	pid_t got[NSPID_LEVELS_MAX], want[NSPID_LEVELS_MAX];
	const char *value = procfile_field(text, key);
	int ret = nspid_parse(text, key, got, max), expect, i;

	if (!value) {
		fuzz_assert(ret == -ENOENT);
		return;
	}
	expect = plain(value, want, max);
	fuzz_assert(ret == expect);
	for (i = 0; i < ret; i++)
		fuzz_assert(got[i] == want[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);

	check(text, "NSpid:", NSPID_LEVELS_MAX);
	check(text, "NStgid:", NSPID_LEVELS_MAX);
	check(text, "NSpid:", 2);
	free(text);
	return 0;
}
