/*
 * lib-table.h: a table's header (proc/table, threads.table) for the C
 * helpers: TABLE_HEADER from the environment, as test-lib.sh exports it
 * (the one place under t/ that writes it), with its newline.
 */
#ifndef TIMINGFS_T_LIB_TABLE_H
#define TIMINGFS_T_LIB_TABLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "TABLE_HEADER\n", once table_header_init has run. */
static char table_header[256];

/* table_header_init(PROG): table_header from the environment; without
 * TABLE_HEADER (a helper run outside test-lib.sh), PROG exits 2. */
static inline void table_header_init(const char *prog)
{
	const char *h = getenv("TABLE_HEADER");

	if (!h || !*h || strlen(h) + 2 > sizeof(table_header)) {
		fprintf(stderr,
			"%s: no TABLE_HEADER in the environment "
			"(t/test-lib.sh exports it)\n",
			prog);
		exit(2);
	}
	snprintf(table_header, sizeof(table_header), "%s\n", h);
}

#endif
