/*
 * values: the catalogues of a task's and a job's values (values.h).
 */
#include <string.h>

#include "units.h"
#include "values.h"

#define TASK_VALUE_ROW(A, NAME, NEED, FORM, FIELD, IN)                  \
	[VALUE_##NAME] = { .name = #NAME,                               \
			   .need = NEED,                                \
			   .form = FORM,                                \
			   .field = offsetof(struct task_times, FIELD), \
			   .in = IN },

#define TASK_VALUE_U64(A, NAME, NEED, FORM, FIELD, IN)                   \
	_Static_assert(sizeof(((struct task_times *)0)->FIELD) ==        \
			       ((FORM) == FORM_NAME ? TASK_COMM_BYTES :  \
						      sizeof(uint64_t)), \
		       #FIELD " is a uint64_t, or a name");
TASK_VALUES(TASK_VALUE_U64, )

const struct task_value task_values[TASK_VALUE_COUNT] = { TASK_VALUES(
	TASK_VALUE_ROW, ) };

/* The uint64_t at @field of @base, of @form, in @units. */
static uint64_t form_value(enum value_form form, enum units units,
			   const void *base, size_t field)
{
	uint64_t x;

	memcpy(&x, (const char *)base + field, sizeof(x));
	switch (form) {
	case FORM_DURATION:
		return units_duration(units, x);
	case FORM_TIMESTAMP:
		return units_timestamp(units, x);
	default:
		return x;
	}
}

uint64_t task_value(const struct task_value *v, enum units units,
		    const struct task_times *t)
{
	return form_value(v->form, units, t, v->field);
}

#define JOB_VALUE_ROW(A, NAME, FORM, FIELD)   \
	[JOB_VALUE_##NAME] = { .name = #NAME, \
			       .form = FORM,  \
			       .field = offsetof(struct job_times, FIELD) },

#define JOB_VALUE_U64(A, NAME, FORM, FIELD)                      \
	_Static_assert(sizeof(((struct job_times *)0)->FIELD) == \
			       sizeof(uint64_t),                 \
		       #FIELD " is a uint64_t");
JOB_VALUES(JOB_VALUE_U64, )

const struct job_value job_values[JOB_VALUE_COUNT] = { JOB_VALUES(
	JOB_VALUE_ROW, ) };

uint64_t job_value(const struct job_value *v, enum units units,
		   const struct job_times *t)
{
	return form_value(v->form, units, t, v->field);
}
