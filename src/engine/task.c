/*
 * task: a task's stat, status and schedstat, and its counters' history.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "procfile.h"
#include "task.h"
#include "units.h"

/* Fields are numbered as in proc(5): 1 pid, 2 comm, 3 state, ... */
#define STAT_UTIME 14
#define STAT_STIME 15
#define STAT_STARTTIME 22
#define STAT_PROCESSOR 39

/* Skip blanks and one field. */
static const char *next_field(const char *p)
{
	while (*p == ' ')
		p++;
	while (*p && *p != ' ' && *p != '\n')
		p++;
	return p;
}

int task_parse_stat(const char *text, struct task_stat *st)
{
	/* The name may hold anything but a newline: it ends at the last ')'. */
	const char *p = strrchr(text, ')');
	uint64_t v;
	int field;

	if (!p || p[1] != ' ')
		return -EIO;
	p++; /* now just before field 3 */
	for (field = 3; field <= STAT_PROCESSOR; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -EIO;
		switch (field) {
		case STAT_UTIME:
		case STAT_STIME:
		case STAT_STARTTIME:
		case STAT_PROCESSOR:
			if (procfile_u64(&p, &v) < 0 ||
			    (*p != ' ' && *p != '\n' && *p))
				return -EIO;
			if (field == STAT_UTIME)
				st->utime_ticks = v;
			else if (field == STAT_STIME)
				st->stime_ticks = v;
			else if (field == STAT_STARTTIME)
				st->start_ticks = v;
			else if (v > INT32_MAX)
				return -EIO;
			else
				st->cpu = (int)v;
			break;
		default:
			p = next_field(p);
		}
	}
	return 0;
}

static int status_id(const char *text, const char *key, int nth, uint64_t *id)
{
	const char *p = procfile_field(text, key);
	int i;

	if (!p)
		return -EIO;
	for (i = 0; i < nth; i++)
		if (procfile_u64(&p, id) < 0)
			return -EIO;
	return 0;
}

int task_parse_status(const char *text, pid_t *tgid, uid_t *uid, gid_t *gid)
{
	uint64_t t, u, g;

	/* Uid: and Gid: are real, effective, saved, filesystem. */
	if (status_id(text, "Tgid:", 1, &t) < 0 ||
	    status_id(text, "Uid:", 2, &u) < 0 ||
	    status_id(text, "Gid:", 2, &g) < 0)
		return -EIO;
	if (t == 0 || t > INT32_MAX || u > UINT32_MAX || g > UINT32_MAX)
		return -EIO;
	*tgid = (pid_t)t;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

int task_parse_creds(const char *text, struct task_creds *c)
{
	const char *u = procfile_field(text, "Uid:");
	const char *g = procfile_field(text, "Gid:");
	const char *cap = procfile_field(text, "CapPrm:");
	uint64_t v;
	char *end;
	int i;

	if (!u || !g)
		return -EIO;
	for (i = 0; i < 3; i++) {
		if (procfile_u64(&u, &v) < 0 || v > UINT32_MAX)
			return -EIO;
		c->uid[i] = (uid_t)v;
		if (procfile_u64(&g, &v) < 0 || v > UINT32_MAX)
			return -EIO;
		c->gid[i] = (gid_t)v;
	}
	/* Every kernel writes CapPrm; a captured tree may not: then the
	 * task is taken to hold every capability (the strictest rule). */
	c->cap_prm = UINT64_MAX;
	if (!cap)
		return 0;
	errno = 0;
	c->cap_prm = strtoull(cap, &end, 16);
	if (errno || end == cap)
		return -EIO;
	return 0;
}

int task_parse_schedstat(const char *text, uint64_t *runtime_ns)
{
	const char *p = text;

	if (procfile_u64(&p, runtime_ns) < 0 || *p != ' ')
		return -EIO;
	return 0;
}

void task_split(uint64_t cpu_ns, uint64_t utime, uint64_t stime,
		uint64_t *kernel_ns, uint64_t *user_ns)
{
	unsigned __int128 total = (unsigned __int128)utime + stime;

	*kernel_ns = 0;
	if (total)
		*kernel_ns =
			(uint64_t)((unsigned __int128)cpu_ns * stime / total);
	*user_ns = cpu_ns - *kernel_ns;
}

void task_history_init(struct task_history *h)
{
	pthread_mutex_init(&h->lock, NULL);
	memset(h->slot, 0, sizeof(h->slot));
}

void task_history_destroy(struct task_history *h)
{
	pthread_mutex_destroy(&h->lock);
}

static uint64_t history_key(pid_t pid, pid_t tid, uint64_t start_ticks)
{
	/* Never 0, which marks an empty slot. */
	uint64_t key = ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid) ^
		       (start_ticks * 0x9e3779b97f4a7c15ULL);

	return key ? key : 1;
}

void task_history_clamp(struct task_history *h, pid_t pid, pid_t tid,
			uint64_t start_ticks, uint64_t *kernel_ns,
			uint64_t *user_ns)
{
	uint64_t key = history_key(pid, tid, start_ticks);
	struct task_history_slot *s;
	uint64_t cpu, last_sum;

	s = &h->slot[(key ^ key >> 29) % TASK_HISTORY_SLOTS];
	pthread_mutex_lock(&h->lock);
	if (s->key == key) {
		cpu = *kernel_ns + *user_ns;
		last_sum = s->kernel_ns + s->user_ns;
		if (cpu < last_sum)
			cpu = last_sum;
		/* kernel in [last kernel, cpu - last user]: not empty,
		 * since cpu >= last kernel + last user. */
		if (*kernel_ns < s->kernel_ns)
			*kernel_ns = s->kernel_ns;
		if (*kernel_ns > cpu - s->user_ns)
			*kernel_ns = cpu - s->user_ns;
		*user_ns = cpu - *kernel_ns;
	}
	s->key = key;
	s->kernel_ns = *kernel_ns;
	s->user_ns = *user_ns;
	pthread_mutex_unlock(&h->lock);
}
