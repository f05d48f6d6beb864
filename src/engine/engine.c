/*
 * engine: composes the sources into the values timingfs shows.
 *
 * Paths are built from the configured roots; with the real /proc the
 * engine also uses the process CPU clock and the boot instant of the
 * clocks, which a captured tree cannot give (there it falls back to the
 * files, as the contract says).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpuset.h"
#include "engine.h"
#include "ident.h"
#include "idle.h"
#include "jobs.h"
#include "procfile.h"
#include "task.h"
#include "taskpass.h"
#include "topology.h"
#include "tsc.h"
#include "units.h"
#include "engine_int.h"

/*
 * CLOCK_REALTIME - CLOCK_BOOTTIME from the tightest of a few bracketed
 * samples: the wall-clock instant the machine booted, to the nearest
 * millisecond. Creation times are whole clock ticks (10 ms) after it, so
 * no precision is lost, and every daemon on the machine, whenever it
 * started, gives a task the same creation time: samples differ by a
 * fraction of a microsecond, which at 100 ns units would show.
 */
static uint64_t boot_instant_from_clocks(uint64_t grain)
{
	uint64_t best = UINT64_MAX, boot = 0, r0, b, r1;
	int i;

	for (i = 0; i < 8; i++) {
		r0 = clock_ns(CLOCK_REALTIME);
		b = clock_ns(CLOCK_BOOTTIME);
		r1 = clock_ns(CLOCK_REALTIME);
		if (r1 - r0 < best) {
			best = r1 - r0;
			boot = r0 + best / 2 - b;
		}
	}
	return (boot + grain / 2) / grain * grain;
}

/* PROC/stat's btime, whole seconds since the Unix epoch. */
static int boot_instant_from_stat(const char *proc_root, uint64_t *boot_ns)
{
	char path[PATH_MAX], *text;
	const char *p;
	uint64_t btime;
	int ret;

	snprintf(path, sizeof(path), "%s/stat", proc_root);
	ret = procfile_read_alloc(path, 8192, &text);
	if (ret < 0)
		return ret;
	p = procfile_field(text, "btime ");
	ret = (p && procfile_u64(&p, &btime) == 0) ? 0 : -EIO;
	if (ret == 0)
		*boot_ns = btime * NSEC_PER_SEC;
	free(text);
	return ret;
}

static int first_present_cpu(const struct topology *topo)
{
	size_t cpu;

	for (cpu = 0; cpu < topo->ncpus; cpu++)
		if (topo->group_of[cpu] >= 0)
			return (int)cpu;
	return 0;
}

/* PROC/pid/name or PROC/pid/task/tid/name. */
void engine_task_path(const struct engine *e, char *path, size_t size,
		      pid_t pid, pid_t tid, const char *name)
{
	if (tid)
		snprintf(path, size, "%s/%d/task/%d/%s", e->opts.proc_root,
			 (int)pid, (int)tid, name);
	else
		snprintf(path, size, "%s/%d/%s", e->opts.proc_root, (int)pid,
			 name);
}

/*
 * Whether the directory of task @pid, @tid (0: the process) is in the
 * proc root: 0, -ENOENT when it is not, or another -errno when the root
 * cannot say.
 */
static int task_dir(const struct engine *e, pid_t pid, pid_t tid)
{
	char path[PATH_MAX];

	engine_task_path(e, path, sizeof(path), pid, tid, "");
	if (access(path, F_OK) == 0)
		return 0;
	return errno == ESRCH || errno == ENOTDIR ? -ENOENT : -errno;
}

bool engine_task_gone(const struct engine *e, pid_t pid, pid_t tid)
{
	return task_dir(e, pid, tid) == -ENOENT;
}

/*
 * Whether a reader can still name task @pid, @tid (0: the process)
 * started at @start_ticks, for the history's sweep: its directory is
 * in the proc root, or the exited table keeps it. Whatever else than
 * "no such task" the proc root answers, it is kept.
 */
static bool task_nameable(void *ctx, pid_t pid, pid_t tid, uint64_t start_ticks)
{
	struct engine *e = ctx;
	const struct engine_retained *r;

	if (task_dir(e, pid, tid) != -ENOENT)
		return true;
	r = __atomic_load_n(&e->retained, __ATOMIC_ACQUIRE);
	return r && r->retained(r->ctx, pid, tid, start_ticks);
}

void engine_set_retained(struct engine *e, const struct engine_retained *r)
{
	__atomic_store_n(&e->retained, r, __ATOMIC_RELEASE);
}

int engine_set_history_area(struct engine *e, void *area, size_t bytes)
{
	return task_history_set_area(&e->history, area, bytes);
}

/*
 * One pass of the task iterator: of every task (@pid 0, taskpass_run())
 * or of process @pid alone (taskpass_run_process()); out of
 * descriptors, one more try with the kept task files closed. The
 * passes made are counted.
 */
int engine_run_pass(struct engine *e, pid_t pid, struct taskpass_task **task,
		    size_t *n)
{
	int ret, tries;

	for (tries = 0; tries < 2; tries++) {
		ret = pid ? taskpass_run_process(e->pass, pid, task, n) :
			    taskpass_run(e->pass, task, n);
		if ((ret != -EMFILE && ret != -ENFILE) ||
		    !engine_reclaim_fds(e))
			break;
	}
	if (ret == 0)
		__atomic_add_fetch(&e->passes, 1, __ATOMIC_RELAXED);
	return ret;
}

/*
 * Whether a pass of the task iterator gives this process the start its
 * stat gives (not in a time namespace of its own, numbered as the
 * daemon numbers tasks): 0, or -EXDEV and why.
 */
static int same_starts(struct engine *e, char *why, size_t whylen)
{
	uint64_t tick_ns = NSEC_PER_SEC / e->clk_tck;
	const struct taskpass_task *me;
	struct taskpass_task *task;
	struct task_stat st;
	char text[1024];
	size_t n = 0;
	FILE *f;
	int ret;

	f = fopen("/proc/self/stat", "re");
	if (!f || !fgets(text, sizeof(text), f) ||
	    task_parse_stat(text, &st) < 0) {
		if (f)
			fclose(f);
		snprintf(why, whylen, "cannot read /proc/self/stat");
		return -EIO;
	}
	fclose(f);
	ret = engine_run_pass(e, 0, &task, &n);
	if (ret < 0) {
		snprintf(why, whylen, "a pass of the task iterator: %s",
			 strerror(-ret));
		return ret;
	}
	me = taskpass_find(task, n, getpid(), getpid());
	ret = me && me->start_boot_ns / tick_ns == st.start_ticks ? 0 : -EXDEV;
	free(task);
	if (ret < 0)
		snprintf(why, whylen,
			 "the task iterator's start of the daemon is not its "
			 "stat's (%s)",
			 me ? "a time namespace?" :
			      "the daemon is not in its pass");
	return ret;
}

/*
 * The task source of @e's options: the task iterator for TASKS_BPF (or
 * an error, in @err) and TASKS_AUTO (or procfs, and why, kept for
 * engine_info), on the real /proc alone.
 */
static int open_task_source(struct engine *e, char *err, size_t errlen)
{
	char why[sizeof(e->task_source_why)];
	int ret;

	e->task_source = task_source_name(TASKS_PROCFS);
	e->task_source_why[0] = '\0';
	if (!e->live || e->opts.tasks == TASKS_PROCFS)
		return 0;
	ret = taskpass_open(&e->pass, why, sizeof(why));
	if (ret == 0)
		ret = same_starts(e, why, sizeof(why));
	if (ret == 0) {
		e->task_source = task_source_name(TASKS_BPF);
		return 0;
	}
	taskpass_close(e->pass);
	e->pass = NULL;
	if (e->opts.tasks == TASKS_BPF) {
		snprintf(err, errlen, "[sources] tasks = bpf: %s", why);
		return ret;
	}
	snprintf(e->task_source_why, sizeof(e->task_source_why), "%s", why);
	return 0;
}

/*
 * @e's clocks: the clock tick, the timestamp counter, the boot instant
 * (of the clocks on the real /proc, else of its stat). 0, or -errno
 * and why in @err.
 */
static int read_clocks(struct engine *e, char *err, size_t errlen)
{
	long tck = sysconf(_SC_CLK_TCK);
	int ret;

	e->clk_tck = tck > 0 ? (uint64_t)tck : 100;
	ret = tsc_detect(e->opts.tsc_hz, &e->tsc_hz, &e->tsc_source);
	if (ret < 0) {
		snprintf(err, errlen,
			 "no timestamp counter known here: set [clock] tsc_hz");
		return ret;
	}
	if (e->live) {
		e->boot_ns = boot_instant_from_clocks(NSEC_PER_MSEC);
		/* A start to the ns is shown against the boot instant to the
		 * microsecond: a task's creation time then moves by less than
		 * one at a restart, where the ms would move it by up to 0.5 ms. */
		e->boot_exact_ns = boot_instant_from_clocks(1000);
		return 0;
	}
	ret = boot_instant_from_stat(e->opts.proc_root, &e->boot_ns);
	if (ret < 0)
		snprintf(err, errlen, "%s/stat: no btime: %s",
			 e->opts.proc_root, strerror(-ret));
	return ret;
}

int engine_new(const struct engine_opts *opts, struct engine **out, char *err,
	       size_t errlen)
{
	struct engine *e;
	int ret;

	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->opts = *opts;
	e->opts.proc_root = strdup(opts->proc_root);
	e->opts.sys_root = strdup(opts->sys_root);
	if (!e->opts.proc_root || !e->opts.sys_root) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	e->live = strcmp(opts->proc_root, "/proc") == 0;
	ret = read_clocks(e, err, errlen);
	if (ret < 0)
		goto out_free;
	ret = open_task_source(e, err, errlen);
	if (ret < 0)
		goto out_free;
	/* Which task a number is: exactly where pidfs says, else its start
	 * in ticks. Only the live /proc's numbers are this kernel's. */
	if (e->live && ident_new(&e->ident) == -ENOMEM) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	ret = topology_build(&e->topo, opts->sys_root, opts->group_max_size);
	if (ret < 0) {
		snprintf(err, errlen,
			 "%s/devices/system: cannot read the processors: %s",
			 opts->sys_root, strerror(-ret));
		goto out_free;
	}
	ret = idle_init(&e->idle, opts->proc_root, opts->sys_root,
			e->topo.ncpus, first_present_cpu(&e->topo), e->clk_tck);
	if (ret < 0) {
		snprintf(err, errlen, "out of memory");
		goto out_free_topo;
	}
	/* The cgroups' accounting (jobs/), where a hierarchy has it. */
	if (jobs_open(opts->proc_root, opts->sys_root, e->tsc_hz, &e->jobs) <
	    0) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		idle_destroy(&e->idle);
		goto out_free_topo;
	}
	task_history_init(&e->history);
	task_history_set_keep(&e->history, task_nameable, e);
	task_fds_init(&e->fds);
	pthread_mutex_init(&e->hidden_lock, NULL);
	*out = e;
	return 0;

out_free_topo:
	topology_free(&e->topo);
out_free:
	ident_free(e->ident);
	taskpass_close(e->pass);
	free((char *)e->opts.proc_root);
	free((char *)e->opts.sys_root);
	free(e);
	return ret;
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	task_fds_destroy(&e->fds);
	jobs_close(e->jobs);
	pthread_mutex_destroy(&e->hidden_lock);
	task_history_destroy(&e->history);
	ident_free(e->ident);
	taskpass_close(e->pass);
	idle_destroy(&e->idle);
	topology_free(&e->topo);
	free((char *)e->opts.proc_root);
	free((char *)e->opts.sys_root);
	free(e);
}

void engine_get_info(const struct engine *e, struct engine_info *info)
{
	info->tsc_hz = e->tsc_hz;
	info->tsc_source = e->tsc_source;
	info->clk_tck = (long)e->clk_tck;
	info->idle_source = idle_source(&e->idle);
	info->task_source = e->task_source;
	info->task_source_why = e->task_source_why;
	info->task_passes = __atomic_load_n(&e->passes, __ATOMIC_RELAXED);
	info->identity_source = e->ident ? "pidfs" : "ticks";
	info->group_max_size = e->opts.group_max_size;
	info->group_count = e->topo.ngroups;
	info->units = engine_units(e);
	info->proc_root = e->opts.proc_root;
	info->sys_root = e->opts.sys_root;
	info->jobs_source = jobs_source_name(e->jobs);
}

struct jobs *engine_jobs(const struct engine *e)
{
	return e->jobs;
}

void engine_set_units(struct engine *e, enum units units)
{
	__atomic_store_n(&e->opts.units, units, __ATOMIC_RELAXED);
}

bool engine_is_live(const struct engine *e)
{
	return e->live;
}

enum units engine_units(const struct engine *e)
{
	return __atomic_load_n(&e->opts.units, __ATOMIC_RELAXED);
}

/*
 * The whole of an open task file, read afresh from its start: its
 * length, -EFBIG when it does not fit, or -errno. A descriptor of a
 * task that has exited reads ESRCH (-ENOENT here), even once its number
 * names another task.
 */
static int read_whole(int fd, char *buf, size_t size)
{
	ssize_t n;

	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == ENOENT || errno == ESRCH) ? -ENOENT : -errno;
	if ((size_t)n >= size - 1)
		return -EFBIG;
	buf[n] = '\0';
	return (int)n;
}

/*
 * Close every task file kept open: the daemon is out of descriptors,
 * and these are the ones it may give back. Returns how many it closed.
 */
unsigned int engine_reclaim_fds(struct engine *e)
{
	unsigned int n = task_fds_close(&e->fds);

	if (e->ident)
		n += ident_close_fds(e->ident);
	return n;
}

/*
 * open(2) of @path for reading; out of descriptors, once more after the
 * kept task files are closed. A descriptor, or -errno.
 */
static int open_or_reclaim(struct engine *e, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && procfile_no_fds(errno) && engine_reclaim_fds(e))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The file read by its path, and kept open for the next time. */
static int read_and_keep(struct engine *e, pid_t pid, pid_t tid,
			 const char *name, const char *path, char *buf,
			 size_t size)
{
	struct task_fd k = { .pid = pid, .tid = tid, .name = name };
	int ret;

	k.fd = open_or_reclaim(e, path);
	if (k.fd < 0)
		return (k.fd == -ENOENT || k.fd == -ESRCH) ? -ENOENT : k.fd;
	/* Numbered once open: a stat read after this number is later. */
	k.opened = task_fds_opened(&e->fds);
	ret = read_whole(k.fd, buf, size);
	if (ret >= 0 || ret == -EFBIG)
		task_fds_give(&e->fds, &k);
	else
		close(k.fd);
	return ret;
}

/*
 * Read one of the task's files into @buf: its length, -EFBIG when it
 * does not fit, or -errno. Once the task directory is there, a file
 * that cannot be read is a broken source, not a gone task: -EIO, unless
 * the task vanished meanwhile. @name is a string constant. Only procfs
 * makes a file anew at a read from its start, so only the live /proc's
 * files are kept open. Sets *@start to the task's start (ticks + 1)
 * when a kept descriptor that knows it read the file, else to 0.
 */
static int read_task_file_into(struct engine *e, pid_t pid, pid_t tid,
			       const char *name, char *buf, size_t size,
			       uint64_t *start)
{
	char path[PATH_MAX];
	struct task_fd k;
	int ret;

	*start = 0;
	if (pid <= 0 || tid < 0)
		return -ENOENT;
	if (e->live) {
		task_fds_take(&e->fds, pid, tid, name, &k);
		if (k.fd >= 0) {
			ret = read_whole(k.fd, buf, size);
			if (ret >= 0 || ret == -EFBIG) {
				/* Alive since it was opened: its task's. */
				if (!k.start)
					k.start = k.maybe;
				k.maybe = 0;
				*start = k.start;
				task_fds_give(&e->fds, &k);
				return ret;
			}
			close(k.fd); /* ask the path: a new task may have it */
		}
	}
	engine_task_path(e, path, sizeof(path), pid, tid, name);
	if (e->live)
		ret = read_and_keep(e, pid, tid, name, path, buf, size);
	else
		ret = procfile_read(path, buf, size);
	/*
	 * The task's directory there, its file not: read it once more,
	 * for a new task may have taken the number of one that exited
	 * between the two looks (thousands of threads a second do).
	 */
	if (ret == -ENOENT && task_dir(e, pid, tid) == 0) {
		ret = procfile_read(path, buf, size);
		if (ret == -ENOENT && task_dir(e, pid, tid) == 0)
			return -EIO;
	}
	/* Out of descriptors: said as such, never as a gone task. */
	if (ret < 0 && ret != -ENOENT && ret != -EFBIG &&
	    !procfile_no_fds(-ret))
		return -EIO;
	return ret;
}

void readbuf_init(struct readbuf *t)
{
	t->data = t->small;
	t->size = sizeof(t->small);
}

void readbuf_free(struct readbuf *t)
{
	if (t->data != t->small)
		free(t->data);
	readbuf_init(t);
}

/*
 * The whole of one of the task's files, however large, into @t; *@start
 * as read_task_file_into() sets it.
 */
int engine_read_task_file(struct engine *e, pid_t pid, pid_t tid,
			  const char *name, struct readbuf *t, uint64_t *start)
{
	size_t size;
	char *data;
	int ret;

	for (;;) {
		ret = read_task_file_into(e, pid, tid, name, t->data, t->size,
					  start);
		if (ret != -EFBIG)
			return ret;
		size = t->size * 2;
		if (size > TEXT_MAX)
			return -EIO;
		data = malloc(size);
		if (!data)
			return -ENOMEM;
		readbuf_free(t);
		t->data = data;
		t->size = size;
	}
}

unsigned int engine_group_count(const struct engine *e)
{
	return e->topo.ngroups;
}

unsigned int engine_group_size(const struct engine *e, unsigned int group)
{
	return group < e->topo.ngroups ? e->topo.groups[group].size : 0;
}

int engine_group_cpu(const struct engine *e, unsigned int group, unsigned int m)
{
	if (group >= e->topo.ngroups || m >= e->topo.groups[group].size)
		return -ENOENT;
	return e->topo.groups[group].cpu[m];
}

int engine_cpu_group(const struct engine *e, int cpu, unsigned int *group,
		     unsigned int *m)
{
	if (cpu < 0 || (size_t)cpu >= e->topo.ncpus ||
	    e->topo.group_of[cpu] < 0)
		return -ENOENT;
	*group = (unsigned int)e->topo.group_of[cpu];
	*m = (unsigned int)e->topo.index_of[cpu];
	return 0;
}

int engine_group_online(struct engine *e, unsigned int group, uint64_t *mask)
{
	const struct topology_group *g;
	char path[PATH_MAX];
	struct cpuset online;
	unsigned int m;
	int ret;

	if (group >= e->topo.ngroups)
		return -ENOENT;
	g = &e->topo.groups[group];
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online",
		 e->opts.sys_root);
	ret = cpuset_read(path, &online);
	if (ret < 0)
		return ret == -ENOMEM || procfile_no_fds(-ret) ? ret : -EIO;
	if (online.size == 0)
		return -EIO; /* none online: not what a running kernel says */
	*mask = 0;
	for (m = 0; m < g->size; m++)
		if (cpuset_has(&online, g->cpu[m]))
			*mask |= 1ULL << m;
	cpuset_free(&online);
	return 0;
}

/* Whether a processor of @g that is online has no idle time in @found. */
static bool online_missing(const struct topology_group *g, const bool *found,
			   uint64_t online)
{
	unsigned int m;

	for (m = 0; m < g->size; m++)
		if (!found[m] && (online & (1ULL << m)))
			return true;
	return false;
}

/*
 * The idle time of @group's processors from /proc/stat, which lists the
 * online ones only: one that it leaves out must be offline, else the
 * source is broken (-EIO), never a snapshot without it. Read again once
 * for a processor that came online between the two reads. *@online is
 * the group's online mask where it was asked for, else all ones.
 */
static int idle_read_proc_stat(struct engine *e, unsigned int group,
			       uint64_t *ns, bool *found, uint64_t *online)
{
	const struct topology_group *g = &e->topo.groups[group];
	int ret, tries;

	*online = ~0ULL;
	for (tries = 0; tries < 2; tries++) {
		ret = idle_read(&e->idle, g->cpu, g->size, ns, found);
		if (ret < 0 || !online_missing(g, found, *online))
			return ret;
		ret = engine_group_online(e, group, online);
		if (ret < 0 || !online_missing(g, found, *online))
			return ret;
	}
	return -EIO;
}

int engine_group_idle_cycles(struct engine *e, unsigned int group,
			     uint64_t *mask, uint64_t cycles[64])
{
	const struct topology_group *g;
	uint64_t ns[TOPOLOGY_GROUP_MAX], online;
	bool found[TOPOLOGY_GROUP_MAX];
	unsigned int m;
	int ret;

	if (group >= e->topo.ngroups)
		return -ENOENT;
	g = &e->topo.groups[group];
	/* cpuidle has states for offline CPUs too: ask which are online. */
	if (e->idle.cpuidle) {
		ret = engine_group_online(e, group, &online);
		if (ret == 0)
			ret = idle_read(&e->idle, g->cpu, g->size, ns, found);
	} else {
		ret = idle_read_proc_stat(e, group, ns, found, &online);
	}
	if (ret < 0)
		return ret;
	*mask = 0;
	for (m = 0; m < g->size; m++) {
		if (!found[m] || !(online & (1ULL << m)))
			continue;
		*mask |= 1ULL << m;
		cycles[m] = units_ns_to_cycles(ns[m], e->tsc_hz);
	}
	return 0;
}
