/*
 * decimal: a number in its one canonical decimal spelling.
 *
 * The kernel writes PIDs, CPU numbers and ids so, and a name of the
 * tree is a number only so: digits only, no sign, no leading zero
 * (except "0" itself). Any other spelling is not the number.
 */
#ifndef TIMINGFS_DECIMAL_H
#define TIMINGFS_DECIMAL_H

#include <stdint.h>

/*
 * decimal_parse - @s, a whole string, as a canonical decimal of at most
 * @max: 0 and *@v, or -ENOENT for anything else (*@v untouched).
 */
int decimal_parse(const char *s, uint64_t max, uint64_t *v);

#endif
