/*
 * values: the catalogue of a task's values (values.h).
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

uint64_t task_value(const struct task_value *v, enum units units,
		    const struct task_times *t)
{
	uint64_t x;

	memcpy(&x, (const char *)t + v->field, sizeof(x));
	switch (v->form) {
	case FORM_DURATION:
		return units_duration(units, x);
	case FORM_TIMESTAMP:
		return units_timestamp(units, x);
	default:
		return x;
	}
}
