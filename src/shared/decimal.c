/*
 * decimal: a number in its one canonical decimal spelling (decimal.h).
 */
#include <errno.h>

#include "decimal.h"

int decimal_parse(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t n = 0, digit;
	const char *p;

	if (s[0] == '\0' || (s[0] == '0' && s[1] != '\0'))
		return -ENOENT;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -ENOENT;
		digit = (uint64_t)(*p - '0');
		if (digit > max || n > (max - digit) / 10)
			return -ENOENT;
		n = n * 10 + digit;
	}
	*v = n;
	return 0;
}
