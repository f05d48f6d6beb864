/*
 * engine_times: a task's times, its start and identity, and those of
 * an exited task (engine.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "engine.h"
#include "ident.h"
#include "procfile.h"
#include "task.h"
#include "taskpass.h"
#include "tsc.h"
#include "units.h"
#include "engine_int.h"

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
	if (procfile_no_fds(-ret) && engine_reclaim_fds(e))
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

/* Where a task's creation time to the ns comes from. */
enum born {
	BORN_TICK, /* nowhere: its start in ticks */
	BORN_KEPT, /* the history, where a pass recorded it */
	BORN_LEARN, /* the history, else a pass now (a live task) */
	BORN_GIVEN, /* the source's boot_ns, recorded in the history */
};

/*
 * What a source (procfs, a pass, an exited record) knows of one task's
 * times, before compose_times() makes them what its files show.
 */
struct times_src {
	pid_t pid, tid; /* tid 0: the whole process */
	uint64_t cpu_ns; /* its runtime */
	bool split; /* utime:stime, in any one unit, split cpu_ns */
	uint64_t utime, stime;
	uint64_t start; /* clock ticks since boot + 1; 0: not known */
	enum born born;
	uint64_t boot_ns; /* BORN_GIVEN: its start, ns since boot */
	uint64_t exit_ns;
	const char *comm; /* its name; NULL: not known */
};

static bool compose_times(struct engine *e, const struct times_src *s,
			  struct task_times *t);

int engine_exited_times(struct engine *e, const struct exited_task *x,
			bool thread, struct task_times *t)
{
	struct times_src s = {
		.pid = x->name[0].tgid,
		.tid = thread ? x->name[0].tid : 0,
		.cpu_ns = x->cpu_ns,
		.split = true,
		.utime = x->utime_us,
		.stime = x->stime_us,
		.start = x->start_ticks + 1,
		.born = BORN_KEPT,
		.exit_ns = x->exit_ns,
		.comm = x->comm,
	};

	/* Called under the exited table's lock (exited_for_each()), which
	 * the sweep's look at retained tasks takes: a sweep due is left to
	 * the next read of a live task. */
	(void)compose_times(e, &s, t);
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

	if (engine_run_pass(e, 0, &task, &n) < 0) {
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

/* The creation time of a task that started @boot_ns after boot (ns;
 * TASK_BORN_NONE: not known to the ns, so @start_tick_ns). */
static uint64_t born_created_ns(const struct engine *e, uint64_t boot_ns,
				uint64_t start_tick_ns)
{
	return boot_ns == TASK_BORN_NONE ? start_tick_ns :
					   e->boot_exact_ns + boot_ns;
}

/*
 * The creation time that task @pid, @tid (0: the process), started at
 * @start (ticks + 1; 0: not known), shows: to the ns where the task
 * iterator had it, else @start_tick_ns. A live task not known yet costs
 * a pass (BORN_LEARN); an exited one is shown as it was while it lived.
 */
static uint64_t created_ns(struct engine *e, pid_t pid, pid_t tid,
			   uint64_t start, uint64_t start_tick_ns,
			   enum born born)
{
	uint64_t boot_ns;

	if (!e->pass || !start || born == BORN_TICK)
		return start_tick_ns;
	if (!task_history_born(&e->history, pid, tid, start - 1, &boot_ns)) {
		if (born != BORN_LEARN)
			return start_tick_ns;
		learn_starts(e, pid, tid, start - 1);
		if (!task_history_born(&e->history, pid, tid, start - 1,
				       &boot_ns))
			return start_tick_ns;
	}
	return born_created_ns(e, boot_ns, start_tick_ns);
}

/* The start_tick_ns of a task whose start is @start (ticks + 1), or 0. */
static uint64_t start_tick_ns_of(const struct engine *e, uint64_t start)
{
	return start ? e->boot_ns + units_ticks_to_ns(start - 1, e->clk_tck) :
		       0;
}

/*
 * The task's stat. Its start tells which task the files kept open of
 * it (and, for a process, of its main thread, which starts when it
 * does) read: task_fds_stamp().
 */
int engine_read_task_stat(struct engine *e, pid_t pid, pid_t tid,
			  struct task_stat *st)
{
	uint64_t mark = task_fds_mark(&e->fds), start;
	struct readbuf t;
	int ret;

	readbuf_init(&t);
	ret = engine_read_task_file(e, pid, tid, "stat", &t, &start);
	if (ret >= 0)
		ret = task_parse_stat(t.data, st);
	readbuf_free(&t);
	if (ret < 0)
		return ret;
	start_memo_put(e, tid ? tid : pid, st->start_ticks);
	if (e->live) {
		task_fds_stamp(&e->fds, pid, tid, st->start_ticks + 1, mark);
		if (!tid || tid == pid)
			task_fds_stamp(&e->fds, pid, tid ? 0 : pid,
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
	ret = engine_read_task_file(e, pid, tid, "status", &t, &start);
	if (ret >= 0)
		ret = task_parse_status(t.data, &ident->tgid, &ident->uid,
					&ident->gid);
	if (ret >= 0)
		ret = task_parse_creds(t.data, &ident->creds);
	readbuf_free(&t);
	ident->start_tick_ns = start_tick_ns_of(e, start);
	return ret < 0 ? ret : 0;
}

int engine_task_dump_owner(struct engine *e, pid_t pid, uid_t *uid)
{
	char path[PATH_MAX];
	struct stat st;

	/* A file: procfs keeps its directories (0555) owned by the euid. */
	engine_task_path(e, path, sizeof(path), pid, 0, "stat");
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -EIO;
	*uid = st.st_uid;
	return 0;
}

int engine_task_cpu(struct engine *e, pid_t pid, pid_t tid)
{
	struct task_stat st;
	int ret;

	ret = engine_read_task_stat(e, pid, tid, &st);
	return ret < 0 ? ret : st.cpu;
}

/* A thread's runtime: schedstat's first field, ns. */
/* A thread's runtime: schedstat's first field, ns; *@start as
 * engine_read_task_file() sets it. */
static int thread_cpu_ns(struct engine *e, pid_t pid, pid_t tid, uint64_t *ns,
			 uint64_t *start)
{
	struct readbuf t;
	int ret;

	readbuf_init(&t);
	ret = engine_read_task_file(e, pid, tid, "schedstat", &t, start);
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
	struct times_src src = { .pid = pid, .tid = tid };
	struct task_stat st = { 0 };
	uint64_t start = 0;
	int ret;

	if (need & TASK_SPLIT)
		need |= TASK_CPU;
	if (need & TASK_BORN)
		need |= TASK_START;
	/*
	 * stat for the split, the start and the name, and for a captured process's
	 * CPU time; first, so that the runtime read after it is at least
	 * its utime + stime.
	 */
	if ((need & (TASK_SPLIT | TASK_START | TASK_NAME)) ||
	    ((need & TASK_CPU) && !tid && !e->live)) {
		ret = engine_read_task_stat(e, pid, stat_tid(e, pid, tid, need),
					    &st);
		if (ret < 0)
			return ret;
		start = st.start_ticks + 1;
	}
	if (need & TASK_CPU) {
		if (tid)
			ret = thread_cpu_ns(e, pid, tid, &src.cpu_ns,
					    start ? &(uint64_t){ 0 } : &start);
		else
			ret = process_cpu_ns(e, pid, &st, &src.cpu_ns);
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
	src.split = need & TASK_SPLIT;
	src.utime = st.utime_ticks;
	src.stime = st.stime_ticks;
	src.start = start;
	src.comm = (need & TASK_NAME) ? st.comm : NULL;
	src.born = (need & TASK_BORN) ? BORN_LEARN : BORN_TICK;
	if (compose_times(e, &src, t))
		task_history_sweep(&e->history);
	return 0;
}

/*
 * The times of thread @t of a pass, as engine_task_times() gives them
 * with TASK_ALL; *@due when the history is due a sweep.
 */
void engine_pass_times(struct engine *e, const struct taskpass_task *t,
		       struct task_times *out, bool *due)
{
	uint64_t tick_ns = NSEC_PER_SEC / e->clk_tck, u, s;
	struct times_src src = {
		.pid = t->tgid,
		.tid = t->tid,
		.cpu_ns = t->runtime_ns,
		.split = true,
		.start = t->start_boot_ns / tick_ns + 1,
		.born = BORN_GIVEN,
		.boot_ns = t->start_boot_ns ? t->start_boot_ns : 1,
		.comm = t->comm,
	};

	taskpass_adjust(t, &u, &s);
	src.utime = u / tick_ns;
	src.stime = s / tick_ns;
	*due |= compose_times(e, &src, out);
}

/*
 * Make @t from what @s knows: the split of the runtime, clamped so that
 * no share goes backwards, the cycles, the creation time in ticks and
 * as shown, the exit time. True when the history is due a sweep, which
 * the caller makes once it holds no lock the sweep takes.
 */
static bool compose_times(struct engine *e, const struct times_src *s,
			  struct task_times *t)
{
	uint64_t boot_ns = s->boot_ns;
	bool due = false;

	memset(t, 0, sizeof(*t));
	t->cpu_ns = s->cpu_ns;
	if (s->split) {
		task_split(s->cpu_ns, s->utime, s->stime, &t->kernel_ns,
			   &t->user_ns);
		/* A pass's start is recorded in the same hold. */
		due = task_history_record(
			&e->history, s->pid, s->tid, s->start - 1,
			&t->kernel_ns, &t->user_ns,
			s->born == BORN_GIVEN ? &boot_ns : NULL);
		t->cpu_ns = t->kernel_ns + t->user_ns;
	}
	t->cycles = units_ns_to_cycles(t->cpu_ns, e->tsc_hz);
	t->start_tick_ns = start_tick_ns_of(e, s->start);
	if (s->born == BORN_GIVEN)
		t->created_ns = born_created_ns(e, boot_ns, t->start_tick_ns);
	else
		t->created_ns = created_ns(e, s->pid, s->tid, s->start,
					   t->start_tick_ns, s->born);
	t->exit_ns = s->exit_ns;
	if (s->comm)
		strncpy(t->comm, s->comm, sizeof(t->comm) - 1);
	return due;
}
