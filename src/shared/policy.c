/*
 * policy: the spellings of the choices every layer names (policy.h).
 */
#include <errno.h>
#include <string.h>

#include "decimal.h"
#include "policy.h"

const char *units_name(enum units units)
{
	return units == UNITS_UNIX ? "unix" : "windows";
}

int units_parse(const char *s, enum units *units)
{
	if (!strcmp(s, "windows"))
		*units = UNITS_WINDOWS;
	else if (!strcmp(s, "unix"))
		*units = UNITS_UNIX;
	else
		return -EINVAL;
	return 0;
}

static const char *const task_sources[] = {
	[TASKS_AUTO] = "auto",
	[TASKS_BPF] = "bpf",
	[TASKS_PROCFS] = "procfs",
};

const char *task_source_name(enum task_source source)
{
	return (unsigned int)source < 3 ? task_sources[source] : "auto";
}

int task_source_parse(const char *s, enum task_source *source)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(s, task_sources[i])) {
			*source = (enum task_source)i;
			return 0;
		}
	return -EINVAL;
}

/* Every spelling of hidepid: timingfs's, and procfs's in mountinfo. */
static const struct {
	const char *name;
	enum hidepid hidepid;
	bool ours, kernel;
} spellings[] = {
	{ "auto", HIDEPID_AUTO, true, false },
	{ "off", HIDEPID_OFF, true, true },
	{ "noaccess", HIDEPID_NOACCESS, true, true },
	{ "invisible", HIDEPID_INVISIBLE, true, true },
	{ "0", HIDEPID_OFF, false, true },
	{ "1", HIDEPID_NOACCESS, false, true },
	{ "2", HIDEPID_INVISIBLE, false, true },
	/* Only tasks one may ptrace: stricter than noaccess, and as
	 * strict as invisible for a reader without CAP_SYS_PTRACE. */
	{ "4", HIDEPID_INVISIBLE, false, true },
	{ "ptraceable", HIDEPID_INVISIBLE, false, true },
};

const char *hidepid_name(enum hidepid hidepid)
{
	unsigned int i;

	for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
		if (spellings[i].ours && spellings[i].hidepid == hidepid)
			return spellings[i].name;
	return "?";
}

int hidepid_parse(const char *s, bool kernel, enum hidepid *hidepid)
{
	unsigned int i;

	for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
		if ((kernel ? spellings[i].kernel : spellings[i].ours) &&
		    !strcmp(s, spellings[i].name)) {
			*hidepid = spellings[i].hidepid;
			return 0;
		}
	return -EINVAL;
}

int gid_parse(const char *s, gid_t *gid)
{
	uint64_t n;

	if (decimal_parse(s, ACCESS_GID_MAX, &n) < 0)
		return -EINVAL;
	*gid = (gid_t)n;
	return 0;
}
