/*
 * engine_pass: passes of the task iterator, and the listings of
 * processes and threads (engine.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "decimal.h"
#include "engine.h"
#include "procfile.h"
#include "task.h"
#include "taskpass.h"
#include "units.h"
#include "engine_int.h"

struct engine_pass {
	struct taskpass_task *task; /* by process, then by thread */
	size_t count;
	uint64_t boot_ns; /* CLOCK_BOOTTIME when it began */
};

bool engine_pass_pays(struct engine *e, size_t threads)
{
	size_t tasks = __atomic_load_n(&e->pass_tasks, __ATOMIC_RELAXED);

	return e->pass && threads * PASS_PAYS_RATIO >= tasks;
}

/*
 * The threads of process @pid, by its task directory's links (procfs:
 * two and a thread each); 0 when they cannot be counted.
 */
static size_t process_threads(struct engine *e, pid_t pid)
{
	char path[PATH_MAX];
	struct stat st;

	engine_task_path(e, path, sizeof(path), pid, 0, "task");
	if (stat(path, &st) < 0 || st.st_nlink < 2)
		return 0;
	return st.st_nlink - 2;
}

/*
 * A pass (engine_run_pass()) of every task (@pid 0) or of process @pid alone,
 * into *@out; a pass of every task is the count of tasks that
 * engine_pass_pays() weighs.
 */
static int take_pass(struct engine *e, pid_t pid, struct engine_pass **out)
{
	struct engine_pass *p;
	int ret;

	if (!e->pass)
		return -ENOSYS;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->boot_ns = clock_ns(CLOCK_BOOTTIME);
	ret = engine_run_pass(e, pid, &p->task, &p->count);
	if (ret < 0) {
		free(p);
		return ret;
	}
	if (!pid)
		__atomic_store_n(&e->pass_tasks, p->count, __ATOMIC_RELAXED);
	*out = p;
	return 0;
}

int engine_pass_take(struct engine *e, struct engine_pass **out)
{
	return take_pass(e, 0, out);
}

void engine_pass_free(struct engine_pass *p)
{
	if (!p)
		return;
	free(p->task);
	free(p);
}

int engine_pass_threads(
	struct engine *e, const struct engine_pass *p, pid_t pid,
	int (*fn)(void *ctx, pid_t tid, const struct task_times *t), void *ctx)
{
	struct task_times times;
	size_t first, n, i;
	bool due = false;
	int ret = 0;

	/* A process the pass does not show, or shows without its main
	 * thread (started meanwhile, or a number taken again). */
	n = taskpass_process(p->task, p->count, pid, &first);
	if (!taskpass_find(p->task + first, n, pid, pid))
		return -ENOSYS;
	for (i = first; i < first + n && ret == 0; i++) {
		engine_pass_times(e, &p->task[i], &times, &due);
		ret = fn(ctx, p->task[i].tid, &times);
	}
	if (due)
		task_history_sweep(&e->history);
	return ret;
}

int engine_threads_pass(struct engine *e, pid_t pid,
			int (*fn)(void *ctx, pid_t tid,
				  const struct task_times *t),
			void *ctx)
{
	struct engine_pass *p;
	size_t threads;
	int ret;

	if (!e->pass)
		return -ENOSYS;
	threads = process_threads(e, pid);
	if (threads && threads < SCOPED_PASS_THREADS)
		return -ENOSYS;
	/* Its threads alone: -EOPNOTSUPP where the kernel cannot. */
	ret = take_pass(e, pid, &p);
	if (ret == -ENOENT)
		return -ENOSYS; /* procfs says whether it is gone */
	if (ret == -EOPNOTSUPP) {
		if (threads && !engine_pass_pays(e, threads))
			return -ENOSYS;
		ret = engine_pass_take(e, &p);
	}
	if (ret < 0)
		return ret;
	ret = engine_pass_threads(e, p, pid, fn, ctx);
	engine_pass_free(p);
	return ret;
}

/* The tasks of the machine now (PROC/loadavg's count), or 0. */
static size_t machine_tasks(struct engine *e)
{
	char path[PATH_MAX], text[128], *slash;
	unsigned long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/loadavg", e->opts.proc_root);
	f = fopen(path, "re");
	if (!f)
		return 0;
	slash = fgets(text, sizeof(text), f) ? strchr(text, '/') : NULL;
	fclose(f);
	if (!slash || sscanf(slash + 1, "%lu", &n) != 1)
		return 0;
	return n;
}

/* A listing of /proc that learns which processes a pass hides. */
struct hidden_scan {
	struct engine *e;
	const struct engine_pass *p;
	int (*fn)(void *ctx, pid_t pid);
	void *ctx;
	pid_t found[HIDDEN_MAX];
	size_t count;
	bool over; /* more than HIDDEN_MAX */
};

static int scan_process(void *ctx, pid_t pid)
{
	uint64_t tick_ns;
	struct hidden_scan *h = ctx;
	struct task_stat st;
	size_t first;

	/* Absent from the pass though it started a tick before it. */
	if (!taskpass_process(h->p->task, h->p->count, pid, &first) &&
	    engine_read_task_stat(h->e, pid, 0, &st) == 0) {
		tick_ns = NSEC_PER_SEC / h->e->clk_tck;
		if ((st.start_ticks + 1) * tick_ns <= h->p->boot_ns) {
			if (h->count < HIDDEN_MAX)
				h->found[h->count++] = pid;
			else
				h->over = true;
		}
	}
	return h->fn(h->ctx, pid);
}

int engine_pass_for_each_process(struct engine *e, const struct engine_pass *p,
				 int (*fn)(void *ctx, pid_t pid), void *ctx)
{
	struct hidden_scan h = { .e = e, .p = p, .fn = fn, .ctx = ctx };
	pid_t hidden[HIDDEN_MAX], pid;
	size_t count, total = p->count, i = 0, j;
	int ret = 0;

	pthread_mutex_lock(&e->hidden_lock);
	count = e->hidden_count;
	memcpy(hidden, e->hidden, count * sizeof(*hidden));
	pthread_mutex_unlock(&e->hidden_lock);
	for (j = 0; j < count; j++)
		total += process_threads(e, hidden[j]);
	if (total != machine_tasks(e)) {
		/* Not every task in the pass and the hidden ones: list
		 * /proc, and learn what the pass hides. */
		ret = engine_for_each_process(e, scan_process, &h);
		if (ret == 0) {
			pthread_mutex_lock(&e->hidden_lock);
			e->hidden_count = h.over ? 0 : h.count;
			memcpy(e->hidden, h.found, h.count * sizeof(*h.found));
			pthread_mutex_unlock(&e->hidden_lock);
		}
		return ret;
	}
	/* The pass's processes and the hidden ones, in number order. */
	for (j = 0; ret == 0 && (i < p->count || j < count);) {
		if (j < count && (i >= p->count || hidden[j] < p->task[i].tgid))
			pid = hidden[j++];
		else
			pid = p->task[i].tgid;
		while (i < p->count && p->task[i].tgid == pid)
			i++;
		while (j < count && hidden[j] == pid)
			j++;
		ret = fn(ctx, pid);
	}
	return ret;
}

/*
 * Call @fn for each canonical numeric entry of directory @path. Out of
 * descriptors, -EMFILE or -ENFILE (after one more try with the kept
 * task files closed): never an empty listing.
 */
static int for_each_number(struct engine *e, const char *path,
			   int (*fn)(void *ctx, pid_t id), void *ctx)
{
	struct dirent *de;
	uint64_t id;
	DIR *dir;
	int ret = 0;

	dir = opendir(path);
	if (!dir && procfile_no_fds(errno) && engine_reclaim_fds(e))
		dir = opendir(path);
	if (!dir) {
		if (errno == ENOENT || errno == ESRCH)
			return -ENOENT;
		return procfile_no_fds(errno) ? -errno : -EIO;
	}
	while ((de = readdir(dir))) {
		if (decimal_parse(de->d_name, INT32_MAX, &id) < 0 || id == 0)
			continue;
		ret = fn(ctx, (pid_t)id);
		if (ret)
			break;
	}
	closedir(dir);
	return ret;
}

struct process_filter {
	struct engine *e;
	int (*fn)(void *ctx, pid_t pid);
	void *ctx;
};

/*
 * A captured tree may hold thread directories that /proc hides, and
 * directories that are no task at all: list what a lookup would find.
 */
static int only_processes(void *ctx, pid_t pid)
{
	struct process_filter *f = ctx;
	struct task_ident id;

	if (engine_task_ident(f->e, pid, 0, &id) < 0 || id.tgid != pid)
		return 0;
	return f->fn(f->ctx, pid);
}

int engine_for_each_process(struct engine *e, int (*fn)(void *ctx, pid_t pid),
			    void *ctx)
{
	struct process_filter f = { e, fn, ctx };

	/* /proc itself lists thread-group leaders only. */
	if (e->live)
		return for_each_number(e, e->opts.proc_root, fn, ctx);
	return for_each_number(e, e->opts.proc_root, only_processes, &f);
}

int engine_for_each_thread(struct engine *e, pid_t pid,
			   int (*fn)(void *ctx, pid_t tid), void *ctx)
{
	char path[PATH_MAX];

	if (pid <= 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%d/task", e->opts.proc_root, (int)pid);
	return for_each_number(e, path, fn, ctx);
}
