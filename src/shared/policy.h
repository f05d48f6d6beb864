/*
 * policy: the choices every layer names, and their spellings.
 *
 * The units values are shown in, and who may see which process (procfs's
 * hidepid= and gid=). The configuration sets them, the engine and the
 * tree follow them, attach takes them per mount: each spelling is read
 * here once, for every place that reads one.
 */
#ifndef TIMINGFS_POLICY_H
#define TIMINGFS_POLICY_H

#include <stdbool.h>
#include <sys/types.h>

enum units {
	UNITS_WINDOWS, /* 100-ns durations, FILETIME timestamps */
	UNITS_UNIX, /* ns durations, ns since the Unix epoch */
};

/* hidepid: procfs's hidepid=, or auto to take procfs's own. */
enum hidepid {
	HIDEPID_AUTO,
	HIDEPID_OFF, /* every process for every reader */
	HIDEPID_NOACCESS, /* others' processes listed, not enterable */
	HIDEPID_INVISIBLE, /* others' processes do not exist */
};

/* How the engine reads task times ([sources] tasks). */
enum task_source {
	TASKS_AUTO, /* a BPF task iterator where it loads, else procfs */
	TASKS_BPF, /* one pass of a BPF task iterator */
	TASKS_PROCFS, /* each task's files in procfs */
};

/* No group exempt from hidepid; the largest GID one can be. */
#define ACCESS_GID_NONE ((gid_t)-1)
#define ACCESS_GID_MAX 4294967294U

/* The access rules in force: never HIDEPID_AUTO. */
struct access_policy {
	enum hidepid hidepid;
	gid_t gid; /* exempt from hidepid; ACCESS_GID_NONE for none */
};

/* task_source_name - "auto", "bpf" or "procfs". */
const char *task_source_name(enum task_source source);

/* task_source_parse - @s as auto, bpf or procfs: 0, or -EINVAL. */
int task_source_parse(const char *s, enum task_source *source);

/* units_name - "windows" or "unix". */
const char *units_name(enum units units);

/* units_parse - @s as "windows" or "unix": 0, or -EINVAL. */
int units_parse(const char *s, enum units *units);

/* hidepid_name - "auto", "off", "noaccess" or "invisible". */
const char *hidepid_name(enum hidepid hidepid);

/*
 * hidepid_parse - @s as timingfs spells hidepid (auto, off, noaccess,
 * invisible) or, with @kernel, as procfs's mountinfo does (off or 0,
 * noaccess or 1, invisible or 2, ptraceable or 4, which timingfs takes
 * as invisible; no auto). 0, or -EINVAL.
 */
int hidepid_parse(const char *s, bool kernel, enum hidepid *hidepid);

/*
 * gid_parse - @s as a GID: canonical decimal (no sign, no leading
 * zero), 0..ACCESS_GID_MAX. 0, or -EINVAL.
 */
int gid_parse(const char *s, gid_t *gid);

#endif
