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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "decimal.h"
#include "cpuset.h"
#include "engine.h"
#include "hash.h"
#include "idle.h"
#include "procfile.h"
#include "task.h"
#include "ident.h"
#include "taskpass.h"
#include "topology.h"
#include "tsc.h"
#include "units.h"

/*
 * A task file's text: first in a buffer on the stack, then, for a file
 * that does not fit (a status of thousands of groups, a stat of a long
 * name), in ever larger ones on the heap: no source has a size limit.
 */
#define READBUF_SMALL 1024
#define TEXT_MAX ((size_t)1 << 26)

struct readbuf {
	char *data;
	size_t size;
	char small[READBUF_SMALL];
};

/*
 * Task files kept open, so that a read is one pread() from the start
 * (procfs makes the text anew for it) instead of an open, a read and a
 * close: direct-mapped by task and file, at most this many descriptors
 * (a grep over proc/ of 1,500 processes reopened every file at 256).
 */
#define TASK_FDS 2048

struct task_fd {
	pid_t pid, tid;
	const char *name; /* a string constant, compared by address */
	int fd; /* -1: empty */
	/*
	 * Which task it reads (a descriptor of a task that exited reads
	 * ESRCH, even once its number names another task): its start in
	 * clock ticks, plus 1; 0 while not known. A start read by path
	 * after the descriptor was opened (opened below the stat read's
	 * mark) is @maybe: the task's, if the descriptor still reads
	 * after it (then it was alive throughout, and held the number);
	 * the next read that succeeds makes it @start.
	 */
	uint64_t opened;
	uint64_t start;
	uint64_t maybe;
};

/*
 * The start of tasks whose stat was read, so that a task that exits
 * keeps the creation time it had (exited.h): direct-mapped by thread
 * id, each slot the id in its top 22 bits and the start in clock ticks
 * below, written and read whole without a lock.
 */
#define START_MEMO_SLOTS 4096

/*
 * A process's threads are read in one pass of the machine from a 32nd
 * of its tasks on, and in a pass of the process alone (Linux 6.1) from
 * 16 threads on: a pass costs about 0.1 us a task it shows, a thread's
 * stat and schedstat about 6 us, making a pass of a process about 60.
 */
#define PASS_PAYS_RATIO 32
#define SCOPED_PASS_THREADS 16
/* Processes /proc lists and no pass shows, kept to list without /proc. */
#define HIDDEN_MAX 16
#define START_TICKS_BITS 42

struct engine {
	struct engine_opts opts; /* its roots owned */
	bool live; /* proc_root is the real /proc */
	uint64_t tsc_hz;
	const char *tsc_source;
	uint64_t clk_tck;
	uint64_t boot_ns; /* the boot instant, ns since the Unix epoch */
	/* The same to the microsecond, for starts to the ns (TASK_BORN). */
	uint64_t boot_exact_ns;
	struct taskpass *pass; /* the task iterator; NULL: procfs alone */
	struct ident *ident; /* pidfs identities; NULL: starts in ticks */
	const char *task_source; /* "bpf" or "procfs" */
	char task_source_why[200]; /* why not bpf, asked for and not had */
	size_t pass_tasks; /* atomic: the tasks of the last pass */
	uint64_t passes; /* atomic: passes made */
	/* The processes that /proc listed and a pass did not show though
	 * they started before it (the iterator hides some on some kernels),
	 * by number, as the last listing found them. */
	pthread_mutex_t hidden_lock;
	pid_t hidden[HIDDEN_MAX];
	size_t hidden_count;
	struct topology topo;
	struct idle idle;
	struct task_history history;
	const struct engine_retained *retained; /* atomic; NULL: none */
	pthread_mutex_t fd_lock;
	struct task_fd fds[TASK_FDS];
	uint64_t opens; /* atomic: task files opened, each one's number */
	uint64_t start_memo[START_MEMO_SLOTS];
};

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
static void task_path(const struct engine *e, char *path, size_t size,
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

	task_path(e, path, sizeof(path), pid, tid, "");
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

size_t engine_history_sweep(struct engine *e)
{
	return task_history_sweep(&e->history);
}

static unsigned int task_fds_close(struct engine *e);

/*
 * One pass of the task iterator: of every task (@pid 0, taskpass_run())
 * or of process @pid alone (taskpass_run_process()); out of
 * descriptors, one more try with the kept task files closed. The
 * passes made are counted.
 */
static int run_pass(struct engine *e, pid_t pid, struct taskpass_task **task,
		    size_t *n)
{
	int ret, tries;

	for (tries = 0; tries < 2; tries++) {
		ret = pid ? taskpass_run_process(e->pass, pid, task, n) :
			    taskpass_run(e->pass, task, n);
		if ((ret != -EMFILE && ret != -ENFILE) || !task_fds_close(e))
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
	ret = run_pass(e, 0, &task, &n);
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

	e->task_source = "procfs";
	e->task_source_why[0] = '\0';
	if (!e->live || e->opts.tasks == TASKS_PROCFS)
		return 0;
	ret = taskpass_open(&e->pass, why, sizeof(why));
	if (ret == 0)
		ret = same_starts(e, why, sizeof(why));
	if (ret == 0) {
		e->task_source = "bpf";
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

int engine_new(const struct engine_opts *opts, struct engine **out, char *err,
	       size_t errlen)
{
	struct engine *e;
	long tck;
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
	tck = sysconf(_SC_CLK_TCK);
	e->clk_tck = tck > 0 ? (uint64_t)tck : 100;

	ret = tsc_detect(opts->tsc_hz, &e->tsc_hz, &e->tsc_source);
	if (ret < 0) {
		snprintf(err, errlen,
			 "no timestamp counter known here: set [clock] tsc_hz");
		goto out_free;
	}
	if (e->live) {
		e->boot_ns = boot_instant_from_clocks(NSEC_PER_MSEC);
		/* A start to the ns is shown against the boot instant to the
		 * microsecond: a task's creation time then moves by less than
		 * one at a restart, where the ms would move it by up to 0.5 ms. */
		e->boot_exact_ns = boot_instant_from_clocks(1000);
	} else {
		ret = boot_instant_from_stat(opts->proc_root, &e->boot_ns);
		if (ret < 0) {
			snprintf(err, errlen, "%s/stat: no btime: %s",
				 opts->proc_root, strerror(-ret));
			goto out_free;
		}
	}
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
	task_history_init(&e->history);
	task_history_set_keep(&e->history, task_nameable, e);
	pthread_mutex_init(&e->fd_lock, NULL);
	pthread_mutex_init(&e->hidden_lock, NULL);
	for (size_t i = 0; i < TASK_FDS; i++)
		e->fds[i].fd = -1;
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
	for (size_t i = 0; i < TASK_FDS; i++)
		if (e->fds[i].fd >= 0)
			close(e->fds[i].fd);
	pthread_mutex_destroy(&e->fd_lock);
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

static struct task_fd *task_fd_slot(struct engine *e, pid_t pid, pid_t tid,
				    const char *name)
{
	uint64_t h = hash_golden((uint32_t)pid) ^
		     ((uint64_t)(uint32_t)tid * 0xc2b2ae3d27d4eb4fULL) ^
		     (uint64_t)(uintptr_t)name;

	return &e->fds[(h ^ h >> 32) % TASK_FDS];
}

/* The kept descriptor of the file, taken out of the table into *@out
 * (its fd -1 when there was none). */
static void task_fd_take(struct engine *e, pid_t pid, pid_t tid,
			 const char *name, struct task_fd *out)
{
	struct task_fd *s = task_fd_slot(e, pid, tid, name);

	out->fd = -1;
	pthread_mutex_lock(&e->fd_lock);
	if (s->fd >= 0 && s->pid == pid && s->tid == tid && s->name == name) {
		*out = *s;
		s->fd = -1;
	}
	pthread_mutex_unlock(&e->fd_lock);
}

/* Keep @k for the next read, in place of whatever the slot held. */
static void task_fd_give(struct engine *e, const struct task_fd *k)
{
	struct task_fd *s = task_fd_slot(e, k->pid, k->tid, k->name);
	int old;

	pthread_mutex_lock(&e->fd_lock);
	old = s->fd;
	*s = *k;
	pthread_mutex_unlock(&e->fd_lock);
	if (old >= 0)
		close(old);
}

/*
 * The task (@pid, @tid) started at @start (ticks + 1), as a stat read by
 * path after the files' count stood at @mark says: its files kept open
 * since before @mark may be that task's (struct task_fd's maybe).
 */
static void task_fds_stamp(struct engine *e, pid_t pid, pid_t tid,
			   uint64_t start, uint64_t mark)
{
	static const char *const names[] = { "schedstat", "status", "stat" };
	struct task_fd *s;
	size_t i;

	pthread_mutex_lock(&e->fd_lock);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		s = task_fd_slot(e, pid, tid, names[i]);
		if (s->fd >= 0 && s->pid == pid && s->tid == tid &&
		    s->name == names[i] && !s->start && s->opened < mark)
			s->maybe = start;
	}
	pthread_mutex_unlock(&e->fd_lock);
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
static unsigned int task_fds_close(struct engine *e)
{
	unsigned int n = 0;

	pthread_mutex_lock(&e->fd_lock);
	for (size_t i = 0; i < TASK_FDS; i++)
		if (e->fds[i].fd >= 0) {
			close(e->fds[i].fd);
			e->fds[i].fd = -1;
			n++;
		}
	pthread_mutex_unlock(&e->fd_lock);
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

	if (fd < 0 && procfile_no_fds(errno) && task_fds_close(e))
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
	k.opened = __atomic_fetch_add(&e->opens, 1, __ATOMIC_SEQ_CST);
	ret = read_whole(k.fd, buf, size);
	if (ret >= 0 || ret == -EFBIG)
		task_fd_give(e, &k);
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
		task_fd_take(e, pid, tid, name, &k);
		if (k.fd >= 0) {
			ret = read_whole(k.fd, buf, size);
			if (ret >= 0 || ret == -EFBIG) {
				/* Alive since it was opened: its task's. */
				if (!k.start)
					k.start = k.maybe;
				k.maybe = 0;
				*start = k.start;
				task_fd_give(e, &k);
				return ret;
			}
			close(k.fd); /* ask the path: a new task may have it */
		}
	}
	task_path(e, path, sizeof(path), pid, tid, name);
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

static void readbuf_init(struct readbuf *t)
{
	t->data = t->small;
	t->size = sizeof(t->small);
}

static void readbuf_free(struct readbuf *t)
{
	if (t->data != t->small)
		free(t->data);
	readbuf_init(t);
}

/*
 * The whole of one of the task's files, however large, into @t; *@start
 * as read_task_file_into() sets it.
 */
static int read_task_file(struct engine *e, pid_t pid, pid_t tid,
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

static void start_memo_put(struct engine *e, pid_t tid, uint64_t ticks)
{
	uint64_t v = (uint64_t)(uint32_t)tid << START_TICKS_BITS |
		     (ticks & ((1ULL << START_TICKS_BITS) - 1));

	__atomic_store_n(&e->start_memo[(uint32_t)tid % START_MEMO_SLOTS], v,
			 __ATOMIC_RELAXED);
}

/* Whether @seen, a start read alive, is the start @ticks approximates. */
static bool same_start(uint64_t seen, uint64_t ticks)
{
	return seen <= ticks + 1 && ticks <= seen + 3;
}

uint64_t engine_exit_start_ticks(struct engine *e, pid_t pid, pid_t tid,
				 uint64_t start_boot_ns)
{
	uint64_t ticks = start_boot_ns / (NSEC_PER_SEC / e->clk_tck), v, seen;

	v = __atomic_load_n(&e->start_memo[(uint32_t)tid % START_MEMO_SLOTS],
			    __ATOMIC_RELAXED);
	seen = v & ((1ULL << START_TICKS_BITS) - 1);
	if (v >> START_TICKS_BITS == (uint32_t)tid && same_start(seen, ticks))
		return seen; /* the same task: at most a few ticks off */
	/* Its slot taken since: the start its split was shown with. */
	if ((task_history_start(&e->history, pid, tid, &seen) ||
	     (tid == pid && task_history_start(&e->history, pid, 0, &seen))) &&
	    same_start(seen, ticks))
		return seen;
	return ticks;
}

int engine_task_identity(struct engine *e, pid_t pid, pid_t tid,
			 uint64_t *ident)
{
	int ret;

	if (!e->ident)
		return -EOPNOTSUPP;
	ret = ident_of(e->ident, pid, tid, ident);
	if (procfile_no_fds(-ret) && task_fds_close(e))
		ret = ident_of(e->ident, pid, tid, ident);
	return ret;
}

bool engine_has_identity(const struct engine *e)
{
	return e->ident != NULL;
}

uint64_t engine_exit_identity(struct engine *e, pid_t tid)
{
	return e->ident ? ident_exit(e->ident, tid) : 0;
}

void engine_exits_lost(struct engine *e)
{
	if (e->ident)
		ident_forget(e->ident);
}

static uint64_t created_ns(struct engine *e, pid_t pid, pid_t tid,
			   uint64_t start, uint64_t creation_ns, bool live);

int engine_exited_times(struct engine *e, const struct exited_task *x,
			bool thread, struct task_times *t)
{
	pid_t pid = x->name[0].tgid;
	pid_t tid = thread ? x->name[0].tid : 0;

	memset(t, 0, sizeof(*t));
	task_split(x->cpu_ns, x->utime_us, x->stime_us, &t->kernel_ns,
		   &t->user_ns);
	/* Called under the exited table's lock (exited_for_each()), which
	 * the sweep's look at retained tasks takes: a sweep due is left to
	 * the next read of a live task. */
	(void)task_history_clamp(&e->history, pid, tid, x->start_ticks,
				 &t->kernel_ns, &t->user_ns);
	t->cpu_ns = t->kernel_ns + t->user_ns;
	t->cycles = units_ns_to_cycles(t->cpu_ns, e->tsc_hz);
	t->creation_ns =
		e->boot_ns + units_ticks_to_ns(x->start_ticks, e->clk_tck);
	t->created_ns = created_ns(e, pid, tid, x->start_ticks + 1,
				   t->creation_ns, false);
	t->exit_ns = x->exit_ns;
	return 0;
}

/*
 * Record in the history the start to the ns of every task of one pass
 * of the task iterator (a process's as its main thread's), and, for
 * task @pid, @tid (0: the process) that started at @start_ticks, that
 * no pass has it when this one had not: so its creation time is the
 * same at every read, to the ns or in ticks.
 */
static void learn_starts(struct engine *e, pid_t pid, pid_t tid,
			 uint64_t start_ticks)
{
	uint64_t tick_ns = NSEC_PER_SEC / e->clk_tck, ticks, ns;
	const struct taskpass_task *me;
	struct taskpass_task *task;
	bool due = false;
	size_t n, i;

	if (run_pass(e, 0, &task, &n) < 0) {
		due = task_history_set_born(&e->history, pid, tid, start_ticks,
					    TASK_BORN_NONE);
		goto out;
	}
	/* Another task with the number by now: none of the pass's. */
	me = taskpass_find(task, n, pid, tid ? tid : pid);
	if (me && me->start_boot_ns / tick_ns != start_ticks)
		me = NULL;
	for (i = 0; i < n; i++) {
		ticks = task[i].start_boot_ns / tick_ns;
		ns = task[i].start_boot_ns ? task[i].start_boot_ns : 1;
		due |= task_history_set_born(&e->history, task[i].tgid,
					     task[i].tid, ticks, ns);
		if (task[i].tid == task[i].tgid)
			due |= task_history_set_born(&e->history, task[i].tgid,
						     0, ticks, ns);
	}
	free(task);
	if (!me)
		due |= task_history_set_born(&e->history, pid, tid, start_ticks,
					     TASK_BORN_NONE);
out:
	if (due)
		task_history_sweep(&e->history);
}

/*
 * The creation time that task @pid, @tid (0: the process), started at
 * @start (ticks + 1; 0: not known), shows: to the ns where the task
 * iterator had it, else @creation_ns. A live task not known yet costs
 * a pass (@live); an exited one is shown as it was while it lived.
 */
static uint64_t created_ns(struct engine *e, pid_t pid, pid_t tid,
			   uint64_t start, uint64_t creation_ns, bool live)
{
	uint64_t boot_ns;

	if (!e->pass || !start)
		return creation_ns;
	if (!task_history_born(&e->history, pid, tid, start - 1, &boot_ns)) {
		if (!live)
			return creation_ns;
		learn_starts(e, pid, tid, start - 1);
		if (!task_history_born(&e->history, pid, tid, start - 1,
				       &boot_ns))
			return creation_ns;
	}
	return boot_ns == TASK_BORN_NONE ? creation_ns :
					   e->boot_exact_ns + boot_ns;
}

/* The creation time of a task whose start is @start (ticks + 1), or 0. */
static uint64_t start_creation_ns(const struct engine *e, uint64_t start)
{
	return start ? e->boot_ns + units_ticks_to_ns(start - 1, e->clk_tck) :
		       0;
}

/*
 * The task's stat. Its start tells which task the files kept open of
 * it (and, for a process, of its main thread, which starts when it
 * does) read: task_fds_stamp().
 */
static int read_task_stat(struct engine *e, pid_t pid, pid_t tid,
			  struct task_stat *st)
{
	uint64_t mark = __atomic_load_n(&e->opens, __ATOMIC_SEQ_CST), start;
	struct readbuf t;
	int ret;

	readbuf_init(&t);
	ret = read_task_file(e, pid, tid, "stat", &t, &start);
	if (ret >= 0)
		ret = task_parse_stat(t.data, st);
	readbuf_free(&t);
	if (ret < 0)
		return ret;
	start_memo_put(e, tid ? tid : pid, st->start_ticks);
	if (e->live) {
		task_fds_stamp(e, pid, tid, st->start_ticks + 1, mark);
		if (!tid || tid == pid)
			task_fds_stamp(e, pid, tid ? 0 : pid,
				       st->start_ticks + 1, mark);
	}
	return ret;
}

int engine_task_ident(struct engine *e, pid_t pid, pid_t tid,
		      struct task_ident *ident)
{
	struct readbuf t;
	int ret;

	uint64_t start;

	readbuf_init(&t);
	ret = read_task_file(e, pid, tid, "status", &t, &start);
	if (ret >= 0)
		ret = task_parse_status(t.data, &ident->tgid, &ident->uid,
					&ident->gid);
	if (ret >= 0)
		ret = task_parse_creds(t.data, &ident->creds);
	readbuf_free(&t);
	ident->creation_ns = start_creation_ns(e, start);
	return ret < 0 ? ret : 0;
}

int engine_task_dump_owner(struct engine *e, pid_t pid, uid_t *uid)
{
	char path[PATH_MAX];
	struct stat st;

	/* A file: procfs keeps its directories (0555) owned by the euid. */
	task_path(e, path, sizeof(path), pid, 0, "stat");
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -EIO;
	*uid = st.st_uid;
	return 0;
}

int engine_task_cpu(struct engine *e, pid_t pid, pid_t tid)
{
	struct task_stat st;
	int ret;

	ret = read_task_stat(e, pid, tid, &st);
	return ret < 0 ? ret : st.cpu;
}

/* A thread's runtime: schedstat's first field, ns. */
/* A thread's runtime: schedstat's first field, ns; *@start as
 * read_task_file() sets it. */
static int thread_cpu_ns(struct engine *e, pid_t pid, pid_t tid, uint64_t *ns,
			 uint64_t *start)
{
	struct readbuf t;
	int ret;

	readbuf_init(&t);
	ret = read_task_file(e, pid, tid, "schedstat", &t, start);
	if (ret >= 0)
		ret = task_parse_schedstat(t.data, ns);
	readbuf_free(&t);
	return ret;
}

/*
 * A process's CPU time, exited threads included: its CPU clock where
 * this is the real /proc, else stat's utime + stime.
 */
static int process_cpu_ns(struct engine *e, pid_t pid,
			  const struct task_stat *st, uint64_t *ns)
{
	struct timespec ts;
	clockid_t clock;
	int ret;

	if (!e->live) {
		*ns = units_ticks_to_ns(st->utime_ticks + st->stime_ticks,
					e->clk_tck);
		return 0;
	}
	ret = clock_getcpuclockid(pid, &clock);
	if (ret)
		return ret == ESRCH ? -ENOENT : -ret;
	if (clock_gettime(clock, &ts) < 0)
		return (errno == ESRCH || errno == EINVAL) ? -ENOENT : -errno;
	*ns = clock_timespec_ns(&ts);
	return 0;
}

/*
 * Whose stat the times need: the thread's; for a process, its own
 * (which the kernel sums over all of its threads) only for the split
 * of its time or a captured tree's CPU time, else its main thread's,
 * which starts when it does.
 */
static pid_t stat_tid(const struct engine *e, pid_t pid, pid_t tid,
		      unsigned int need)
{
	if (tid || (need & TASK_SPLIT) || !e->live)
		return tid;
	return pid;
}

int engine_task_times(struct engine *e, pid_t pid, pid_t tid, unsigned int need,
		      struct task_times *t)
{
	struct task_stat st = { 0 };
	uint64_t start = 0;
	int ret;

	memset(t, 0, sizeof(*t));
	if (need & TASK_SPLIT)
		need |= TASK_CPU;
	if (need & TASK_BORN)
		need |= TASK_START;
	/*
	 * stat for the split and the start, and for a captured process's
	 * CPU time; first, so that the runtime read after it is at least
	 * its utime + stime.
	 */
	if ((need & (TASK_SPLIT | TASK_START)) ||
	    ((need & TASK_CPU) && !tid && !e->live)) {
		ret = read_task_stat(e, pid, stat_tid(e, pid, tid, need), &st);
		if (ret < 0)
			return ret;
		start = st.start_ticks + 1;
	}
	if (need & TASK_CPU) {
		if (tid)
			ret = thread_cpu_ns(e, pid, tid, &t->cpu_ns,
					    start ? &(uint64_t){ 0 } : &start);
		else
			ret = process_cpu_ns(e, pid, &st, &t->cpu_ns);
		if (ret < 0)
			return ret;
		/*
		 * A process's CPU clock is asked by number: which process
		 * it was, its main thread's runtime read after it says (a
		 * kept descriptor's, whose task is known, costs little).
		 */
		if ((need & TASK_WHICH) && !tid && !start && e->live)
			(void)thread_cpu_ns(e, pid, pid, &(uint64_t){ 0 },
					    &start);
	}
	if (need & TASK_SPLIT) {
		task_split(t->cpu_ns, st.utime_ticks, st.stime_ticks,
			   &t->kernel_ns, &t->user_ns);
		if (task_history_clamp(&e->history, pid, tid, st.start_ticks,
				       &t->kernel_ns, &t->user_ns))
			task_history_sweep(&e->history);
		t->cpu_ns = t->kernel_ns + t->user_ns;
	}
	t->cycles = units_ns_to_cycles(t->cpu_ns, e->tsc_hz);
	t->creation_ns = start_creation_ns(e, start);
	t->created_ns = (need & TASK_BORN) ? created_ns(e, pid, tid, start,
							t->creation_ns, true) :
					     t->creation_ns;
	return 0;
}

/*
 * The times of thread @t of a pass, as engine_task_times() gives them
 * with TASK_ALL; *@due when the history is due a sweep.
 */
static void pass_times(struct engine *e, const struct taskpass_task *t,
		       struct task_times *out, bool *due)
{
	uint64_t tick_ns = NSEC_PER_SEC / e->clk_tck, ticks, u, s, boot_ns;

	memset(out, 0, sizeof(*out));
	ticks = t->start_boot_ns / tick_ns;
	taskpass_adjust(t, &u, &s);
	out->cpu_ns = t->runtime_ns;
	task_split(out->cpu_ns, u / tick_ns, s / tick_ns, &out->kernel_ns,
		   &out->user_ns);
	/* One hold of the history for the clamp and the start. */
	boot_ns = t->start_boot_ns ? t->start_boot_ns : 1;
	*due |= task_history_record(&e->history, t->tgid, t->tid, ticks,
				    &out->kernel_ns, &out->user_ns, &boot_ns);
	out->cpu_ns = out->kernel_ns + out->user_ns;
	out->cycles = units_ns_to_cycles(out->cpu_ns, e->tsc_hz);
	out->creation_ns = start_creation_ns(e, ticks + 1);
	out->created_ns = boot_ns == TASK_BORN_NONE ?
				  out->creation_ns :
				  e->boot_exact_ns + boot_ns;
}

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

	task_path(e, path, sizeof(path), pid, 0, "task");
	if (stat(path, &st) < 0 || st.st_nlink < 2)
		return 0;
	return st.st_nlink - 2;
}

/*
 * A pass (run_pass()) of every task (@pid 0) or of process @pid alone,
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
	ret = run_pass(e, pid, &p->task, &p->count);
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
		pass_times(e, &p->task[i], &times, &due);
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
	    read_task_stat(h->e, pid, 0, &st) == 0) {
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
	if (!dir && procfile_no_fds(errno) && task_fds_close(e))
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
