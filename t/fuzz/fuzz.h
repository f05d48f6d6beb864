/*
 * fuzz.h: what the fuzz targets in t/fuzz share.
 *
 * Each t/fuzz/fuzz-NAME.c defines LLVMFuzzerTestOneInput for one
 * parser: libFuzzer calls it under make fuzz, and t/fuzz/replay.c calls
 * it on the committed corpus and regression inputs under make check. A
 * target returns 0 for every input; a broken invariant aborts, which
 * both drivers report as a crash.
 */
#ifndef TIMINGFS_FUZZ_H
#define TIMINGFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_assert - an invariant of the parser: abort, naming it, when false. */
#define fuzz_assert(cond)                                                \
	do {                                                             \
		if (!(cond)) {                                           \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", \
				__FILE__, __LINE__, #cond);              \
			abort();                                         \
		}                                                        \
	} while (0)

/*
 * fuzz_text - the @size bytes at @data as a malloc'd string, NUL added:
 * the parsers read C strings, and the copy ends exactly where the input
 * does, so that a read past it is caught. The caller frees it.
 */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		abort();
	if (size)
		memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

#endif
