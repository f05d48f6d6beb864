/*
 * render: engine values as the text of timingfs's files.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "units.h"

void rbuf_init(struct rbuf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void rbuf_free(struct rbuf *b)
{
	free(b->data);
	rbuf_init(b);
}

int rbuf_reserve(struct rbuf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 64;
	char *data;

	if (b->len + more < b->cap)
		return 0;
	while (cap <= b->len + more)
		cap *= 2;
	data = realloc(b->data, cap);
	if (!data)
		return -ENOMEM;
	b->data = data;
	b->cap = cap;
	return 0;
}

int rbuf_printf(struct rbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* Formatted once where it fits, which is nearly always. */
	va_start(ap, fmt);
	n = vsnprintf(b->data ? b->data + b->len : NULL,
		      b->data ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (b->data && b->len + (size_t)n < b->cap) {
		b->len += (size_t)n;
		return 0;
	}
	if (rbuf_reserve(b, (size_t)n) < 0) {
		if (b->data)
			b->data[b->len] = '\0';
		return -ENOMEM;
	}
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

/* Write @v in decimal at @p, then @end; the bytes written. Two digits
 * a step, from the end: a table has a line of them per thread. */
static size_t put_u64(char *p, uint64_t v, char end)
{
	static const char pairs[] = "00010203040506070809"
				    "10111213141516171819"
				    "20212223242526272829"
				    "30313233343536373839"
				    "40414243444546474849"
				    "50515253545556575859"
				    "60616263646566676869"
				    "70717273747576777879"
				    "80818283848586878889"
				    "90919293949596979899";
	char digits[20], *d = digits + sizeof(digits);
	size_t n;

	while (v >= 100) {
		d -= 2;
		memcpy(d, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		d -= 2;
		memcpy(d, pairs + 2 * v, 2);
	} else {
		*--d = (char)('0' + v);
	}
	n = (size_t)(digits + sizeof(digits) - d);
	memcpy(p, d, n);
	p[n] = end;
	return n + 1;
}

int render_value(struct rbuf *b, uint64_t v)
{
	return rbuf_printf(b, "%" PRIu64 "\n", v);
}

int render_task_value(struct rbuf *b, enum units units,
		      const struct task_value *v, const struct task_times *t)
{
	if (v->form == FORM_NAME)
		return rbuf_printf(b, "%s\n", task_value_text(v, t));
	return render_value(b, task_value(v, units, t));
}

int render_times(struct rbuf *b, enum units units, const struct task_times *t)
{
	const struct task_value *v;
	int ret = 0;

	for (v = task_values; v < task_values + TASK_VALUE_COUNT && !ret; v++)
		if (v->in & VALUE_IN_TIMES)
			ret = rbuf_printf(b, "%s %" PRIu64 "\n", v->name,
					  task_value(v, units, t));
	return ret;
}

int render_table_header(struct rbuf *b)
{
	const struct task_value *v;
	int ret;

	ret = rbuf_printf(b, "pid tid");
	for (v = task_values; v < task_values + TASK_VALUE_COUNT && !ret; v++)
		if (v->in & VALUE_IN_TABLE)
			ret = rbuf_printf(b, " %s", v->name);
	return ret ? ret : rbuf_printf(b, "\n");
}

/* Write name @s at @p, then @end, escaped as /proc/self/mountinfo
 * escapes paths, so that it is one field (an empty name as a NUL, which
 * no name holds); the bytes written. */
static size_t put_name(char *p, const char *s, char end)
{
	char *start = p;

	if (!*s) {
		memcpy(p, "\\000", 4);
		p += 4;
	}
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\') {
			*p++ = '\\';
			*p++ = (char)('0' + ((unsigned char)*s >> 6));
			*p++ = (char)('0' + (((unsigned char)*s >> 3) & 7));
			*p++ = (char)('0' + ((unsigned char)*s & 7));
		} else {
			*p++ = *s;
		}
	}
	*p++ = end;
	return (size_t)(p - start);
}

/* The most a table line takes: two numbers and each value (a number of
 * at most 20 digits, or a name of at most 4 bytes a byte), each with
 * its separator. */
#define LINE_MAX_BYTES ((2 + TASK_VALUE_COUNT) * (4 * TASK_COMM_BYTES + 21))

int render_table_row(struct rbuf *b, enum units units, int pid, int tid,
		     const struct task_times *t)
{
	const struct task_value *v;
	char *p;

	/* Written in place: a table has a line per thread. */
	if (pid < 0 || tid < 0)
		return -EINVAL;
	if (rbuf_reserve(b, LINE_MAX_BYTES) < 0)
		return -ENOMEM;
	p = b->data + b->len;
	p += put_u64(p, (uint64_t)pid, ' ');
	p += put_u64(p, (uint64_t)tid, ' ');
	for (v = task_values; v < task_values + TASK_VALUE_COUNT; v++) {
		if (!(v->in & VALUE_IN_TABLE))
			continue;
		if (v->form == FORM_NAME)
			p += put_name(p, task_value_text(v, t), ' ');
		else
			p += put_u64(p, task_value(v, units, t), ' ');
	}
	p[-1] = '\n'; /* the last field's blank ends the line */
	*p = '\0';
	b->len = (size_t)(p - b->data);
	return 0;
}

int render_idle_cycles(struct rbuf *b, uint64_t mask, const uint64_t cycles[64])
{
	unsigned int m;
	int ret;

	for (m = 0; m < 64; m++) {
		if (!(mask & (1ULL << m)))
			continue;
		ret = rbuf_printf(b, "cpu%u %" PRIu64 "\n", m, cycles[m]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int render_cpulist(struct rbuf *b, const int *cpus, size_t n)
{
	size_t i = 0, j;
	int ret = 0;

	while (i < n && ret == 0) {
		for (j = i; j + 1 < n && cpus[j + 1] == cpus[j] + 1; j++)
			;
		if (j == i)
			ret = rbuf_printf(b, "%s%d", i ? "," : "", cpus[i]);
		else
			ret = rbuf_printf(b, "%s%d-%d", i ? "," : "", cpus[i],
					  cpus[j]);
		i = j + 1;
	}
	return ret ? ret : rbuf_printf(b, "\n");
}

int render_info(struct rbuf *b, const char *version,
		const struct engine_info *info)
{
	return rbuf_printf(
		b,
		"version %s\nunits %s\ntsc_hz %" PRIu64
		"\ntsc_source %s\nclk_tck %ld\nidle_source %s\n"
		"task_source %s\nidentity_source %s\ngroup_max_size %u\n"
		"group_count %u\njobs %s\n",
		version, units_name(info->units), info->tsc_hz,
		info->tsc_source, info->clk_tck, info->idle_source,
		info->task_source,
		info->identity_source ? info->identity_source : "ticks",
		info->group_max_size, info->group_count,
		info->jobs_source ? info->jobs_source : "none");
}
