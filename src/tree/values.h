/*
 * values: the catalogue of a task's values, the one list of them.
 *
 * A row of TASK_VALUES is a value: its file's name, what the engine
 * must read for it (enum task_need), its form (how its field of one
 * struct task_times becomes what a reader sees, in the mount's units),
 * that field, and where it is shown besides its own file: in the times
 * file (VALUE_IN_TIMES: numbers only, one snapshot) and as a column of
 * the tables (VALUE_IN_TABLE). The tree makes a file of each row in a
 * process's and a thread's directory; the times file, the tables'
 * header and each table line are the rows in order. A new value is a
 * row here and its field in struct task_times, filled where the engine
 * composes it.
 *
 * X(A, NAME, NEED, FORM, FIELD, WHERE) is called once per row, A
 * passed on.
 */
#ifndef TIMINGFS_VALUES_H
#define TIMINGFS_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "policy.h"

#define TASK_VALUES(X, A)                                                     \
	X(A, cycles, TASK_CPU, FORM_COUNT, cycles, VALUE_IN_ALL)              \
	X(A, kernel_time, TASK_SPLIT, FORM_DURATION, kernel_ns, VALUE_IN_ALL) \
	X(A, user_time, TASK_SPLIT, FORM_DURATION, user_ns, VALUE_IN_ALL)     \
	X(A, creation_time, TASK_BORN, FORM_TIMESTAMP, created_ns,            \
	  VALUE_IN_ALL)                                                       \
	X(A, exit_time, TASK_START, FORM_TIMESTAMP, exit_ns, VALUE_IN_ALL)    \
	X(A, name, TASK_NAME, FORM_NAME, comm, VALUE_IN_TABLE)

/* Where a value is shown besides its file. */
enum value_in {
	VALUE_IN_TIMES = 1 << 0,
	VALUE_IN_TABLE = 1 << 1,
	VALUE_IN_ALL = VALUE_IN_TIMES | VALUE_IN_TABLE,
};

/* How a field becomes the number a reader sees. */
enum value_form {
	FORM_COUNT, /* as it is: cycles have no units */
	FORM_DURATION, /* ns, in the units' durations */
	FORM_TIMESTAMP, /* ns since the Unix epoch, in the units' instants */
	FORM_NAME, /* text: a task's name (comm), NUL-terminated */
};

struct task_value {
	const char *name;
	unsigned int need; /* enum task_need */
	enum value_form form;
	size_t field; /* its offset in struct task_times: a uint64_t, or
		       * for FORM_NAME a char[TASK_COMM_BYTES] */
	unsigned int in; /* enum value_in */
};

#define TASK_VALUE_ID(A, NAME, NEED, FORM, FIELD, IN) VALUE_##NAME,
/* The rows' indexes in task_values[], in order. */
enum task_value_id { TASK_VALUES(TASK_VALUE_ID, ) TASK_VALUE_COUNT };

#define TASK_VALUE_NEED(A, NAME, NEED, FORM, FIELD, IN) \
	| (((IN) & (A)) ? (NEED) : 0)
/* What the values shown in @IN (enum value_in) together need: the times
 * file's (VALUE_IN_TIMES), a table's (VALUE_IN_TABLE). */
#define TASK_VALUES_NEED(IN) (0 TASK_VALUES(TASK_VALUE_NEED, IN))

extern const struct task_value task_values[TASK_VALUE_COUNT];

/* task_value - the number @v shows of @t in @units; not for FORM_NAME. */
uint64_t task_value(const struct task_value *v, enum units units,
		    const struct task_times *t);

/* task_value_text - the text of FORM_NAME value @v of @t. */
static inline const char *task_value_text(const struct task_value *v,
					  const struct task_times *t)
{
	return (const char *)t + v->field;
}

/*
 * The catalogue of a job's values (jobs/PATH/), the same way: a row
 * per file of a job's directory, its form and its field of one struct
 * job_times (jobs.h); the job's times file is the rows in order.
 * X(A, NAME, FORM, FIELD).
 */
#define JOB_VALUES(X, A)                            \
	X(A, cycles, FORM_COUNT, cycles)            \
	X(A, kernel_time, FORM_DURATION, kernel_ns) \
	X(A, user_time, FORM_DURATION, user_ns)     \
	X(A, active_processes, FORM_COUNT, processes)

struct job_value {
	const char *name;
	enum value_form form;
	size_t field; /* its offset in struct job_times, a uint64_t */
};

#define JOB_VALUE_ID(A, NAME, FORM, FIELD) JOB_VALUE_##NAME,
enum job_value_id { JOB_VALUES(JOB_VALUE_ID, ) JOB_VALUE_COUNT };

extern const struct job_value job_values[JOB_VALUE_COUNT];

/* job_value - the number @v shows of @t in @units. */
uint64_t job_value(const struct job_value *v, enum units units,
		   const struct job_times *t);

#endif
