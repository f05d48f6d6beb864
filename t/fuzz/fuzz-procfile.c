/*
 * fuzz-procfile: the number and field parsers every reader of procfs
 * shares, each checked against a plain reading of the same text.
 *
 * The input is used three ways: procfile_u64 on every position of it,
 * procfile_field with its first line as the key and the rest as the
 * file, and decimal_parse on each of its lines.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>

#include "config.h"
#include "fuzz.h"
#include "decimal.h"
#include "procfile.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whether the digits @s .. @end overflow 64 bits. */
static bool overflows(const char *s, const char *end)
{
	char digits[64];
	size_t len;

	s += strspn(s, "0");
	len = (size_t)(end - s);
	if (len != 20)
		return len > 20;
	memcpy(digits, s, len);
	digits[len] = '\0';
	return strcmp(digits, "18446744073709551615") > 0;
}

/*
 * procfile_u64 at the start of @text and after each character that is
 * neither a digit nor a blank (elsewhere it would read what it read
 * one position before), against a plain reading.
 */
static void check_u64(const char *text)
{
	const char *start, *p, *digits, *end;
	uint64_t v;
	int ret;

	for (start = text; *start; start++) {
		if (start > text && (is_digit(start[-1]) || start[-1] == ' ' ||
				     start[-1] == '\t'))
			continue;
		p = start;
		ret = procfile_u64(&p, &v);
		digits = start + strspn(start, " \t");
		for (end = digits; is_digit(*end); end++)
			;
		if (end == digits || overflows(digits, end)) {
			fuzz_assert(ret == -EIO && p == start);
			continue;
		}
		fuzz_assert(ret == 0 && p == end);
		fuzz_assert(v == strtoull(digits, NULL, 10));
	}
}

/* The first line of @text at the start of which @key stands, or NULL. */
static const char *line_with(const char *text, const char *key)
{
	const char *line = text;

	for (;;) {
		if (strncmp(line, key, strlen(key)) == 0)
			return line;
		line = strchr(line, '\n');
		if (!line || !*++line)
			return NULL;
	}
}

static void check_field(const char *key, const char *text)
{
	const char *value = procfile_field(text, key), *line;

	line = *text ? line_with(text, key) : NULL;
	if (!line) {
		fuzz_assert(value == NULL);
		return;
	}
	line += strlen(key);
	fuzz_assert(value == line + strspn(line, " \t"));
}

/* Whether @s is a number as the kernel prints one, at most @max. */
static bool canonical(const char *s, uint64_t max)
{
	const char *end = s;

	while (is_digit(*end))
		end++;
	if (end == s || *end || (s[0] == '0' && s[1]) || overflows(s, end))
		return false;
	return strtoull(s, NULL, 10) <= max;
}

static void check_canonical(const char *s)
{
	static const uint64_t maxes[] = { UINT64_MAX, INT_MAX, ACCESS_GID_MAX,
					  0 };
	uint64_t v = 0;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		ret = decimal_parse(s, maxes[i], &v);
		fuzz_assert(ret == 0 || ret == -ENOENT);
		fuzz_assert((ret == 0) == canonical(s, maxes[i]));
		if (ret == 0)
			fuzz_assert(v == strtoull(s, NULL, 10));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *copy, *line, *save = NULL;
	char *nl;

	check_u64(text);
	nl = strchr(text, '\n');
	if (nl) {
		*nl = '\0';
		check_field(text, nl + 1);
		*nl = '\n';
	}
	copy = strdup(text);
	if (!copy)
		abort();
	check_canonical(copy);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		check_canonical(line);
	free(copy);
	fuzz_assert(memcmp(text, data, size) == 0);
	free(text);
	return 0;
}
