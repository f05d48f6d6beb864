/*
 * render: the text of timingfs's files.
 *
 * Turns engine results into the bytes a reader sees: one unsigned
 * decimal and a newline for a value file, "key value" lines for a
 * snapshot file. Output goes into a growable buffer, so no machine is
 * too large for it. Not thread safe per buffer; buffers are not shared.
 */
#ifndef TIMINGFS_RENDER_H
#define TIMINGFS_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "engine.h"
#include "values.h"

/* A growing buffer: a file's text, or the entries of a listing. */
struct rbuf {
	char *data; /* malloc'd; NULL until the first write */
	size_t len; /* bytes of content (text is NUL-terminated after) */
	size_t cap;
};

/* rbuf_init - an empty buffer. */
void rbuf_init(struct rbuf *b);

/* rbuf_free - release the buffer's memory and empty it. */
void rbuf_free(struct rbuf *b);

/* rbuf_reserve - room for @more bytes after the content (and a NUL):
 * 0, or -ENOMEM. */
int rbuf_reserve(struct rbuf *b, size_t more);

/* rbuf_printf - append formatted text; 0, or -ENOMEM. */
int rbuf_printf(struct rbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* render_value - append "@v\n". 0 or -ENOMEM. */
int render_value(struct rbuf *b, uint64_t v);

/* render_task_value - append value @v of @t in @units, and a newline. */
int render_task_value(struct rbuf *b, enum units units,
		      const struct task_value *v, const struct task_times *t);

/*
 * render_times - the times file: a line "NAME VALUE" for each value of
 * the catalogue (values.h), in its order, from one snapshot.
 */
int render_times(struct rbuf *b, enum units units, const struct task_times *t);

/*
 * render_table_header - the first line of a table: the names of its
 * columns, "pid tid" and the catalogue's names.
 */
int render_table_header(struct rbuf *b);

/*
 * render_table_row - one thread's line of a table: @pid, @tid and its
 * values in @units, as its value files show them, one blank apart.
 */
int render_table_row(struct rbuf *b, enum units units, int pid, int tid,
		     const struct task_times *t);

/*
 * render_idle_cycles - the groups/N/idle_cycles file: "cpuM VALUE" for
 * each bit M of @mask, M ascending.
 */
int render_idle_cycles(struct rbuf *b, uint64_t mask,
		       const uint64_t cycles[64]);

/*
 * render_cpulist - @n Linux CPU numbers @cpus (ascending) in the
 * kernel's cpulist form, "0-3,8,10-11", and a newline.
 */
int render_cpulist(struct rbuf *b, const int *cpus, size_t n);

/*
 * render_info - the info file: version, units, tsc_hz, tsc_source,
 * clk_tck, idle_source, group_max_size, group_count, jobs (the
 * source of jobs/: v1, v2 or none), one per line.
 */
int render_info(struct rbuf *b, const char *version,
		const struct engine_info *info);

#endif
