/*
 * tables: the callbacks of the tables (proc/table, proc/PID/threads.table,
 * nodes.h), one line per thread the access rules let the reader see,
 * live and kept since it exited, from one engine call; for one reader,
 * thread safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "access.h"
#include "clock.h"
#include "nodes-internal.h"
#include "tree.h"

struct table {
	struct request *r;
	struct rbuf *b;
	pid_t pid; /* the process, in the daemon's numbers */
	pid_t nr; /* and in the reader's view */
	uid_t only_uid; /* whose processes the reader may enter */
	struct seen threads; /* the threads of the process met alive */
	struct seen processes; /* the processes met alive */
	uint64_t born; /* when the process was made */
	bool have_born; /* born from its main thread's line */
	/* threads.table: a process's threads from a pass of their own;
	 * else proc/table, below */
	bool one_pass;
	/* proc/table's pass of the task iterator, once it pays (NULL:
	 * procfs), and the threads read from procfs until then */
	struct engine_pass *pass;
	size_t procfs_threads;
};

/* Collect what is met alive only where kept tasks may be added to it. */
static int table_saw(struct table *t, struct seen *s, pid_t nr)
{
	return t->r->env->exited ? seen_add(s, nr) : 0;
}

/* Thread @tid's line, of times @times. */
static int table_row(struct table *t, pid_t tid, const struct task_times *times)
{
	int nr, ret;

	nr = view_from_daemon(t->r->view, tid);
	if (nr < 0)
		return 0;
	ret = table_saw(t, &t->threads, nr);
	if (ret < 0)
		return ret;
	if (tid == t->pid) { /* the process starts with its main thread */
		t->born = times->start_tick_ns;
		t->have_born = true;
	}
	return render_table_row(t->b, engine_units(t->r->env->engine), t->nr,
				nr, times);
}

/* A thread's line from a pass of the task iterator. */
static int table_pass_thread(void *ctx, pid_t tid,
			     const struct task_times *times)
{
	return table_row(ctx, tid, times);
}

/* A thread's line; a thread that exited meanwhile has none. */
static int table_thread(void *ctx, pid_t tid)
{
	struct table *t = ctx;
	struct task_times times;
	int ret;

	if (view_from_daemon(t->r->view, tid) < 0)
		return 0;
	t->procfs_threads++;
	ret = engine_task_times(t->r->env->engine, t->pid, tid,
				TASK_VALUES_NEED(VALUE_IN_TABLE), &times);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	return table_row(t, tid, &times);
}

/* A kept thread's line, unless it was met alive. */
static int table_exited_thread(void *ctx, const struct exited_task *x,
			       const struct exited_name *name)
{
	struct table *t = ctx;
	struct task_times times;

	if (seen_has(&t->threads, name->tid) ||
	    !thread_of(t->r, x, t->born, &times))
		return 0;
	return render_table_row(t->b, engine_units(t->r->env->engine), t->nr,
				name->tid, &times);
}

/*
 * The lines of the live threads of process t->pid: from a pass where
 * one pays (threads.table: one of its own; proc/table: one for the rest
 * of the table once what it read of procfs would have paid for it),
 * else from their files.
 */
static int table_live(struct table *t)
{
	struct engine *e = t->r->env->engine;
	int ret = -ENOSYS;

	if (t->one_pass) {
		ret = engine_threads_pass(e, t->pid, table_pass_thread, t);
	} else {
		if (!t->pass && engine_pass_pays(e, t->procfs_threads)) {
			ret = engine_pass_take(e, &t->pass);
			if (ret < 0)
				return ret;
		}
		if (t->pass)
			ret = engine_pass_threads(e, t->pass, t->pid,
						  table_pass_thread, t);
	}
	if (ret == -ENOSYS)
		ret = engine_for_each_thread(e, t->pid, table_thread, t);
	return ret;
}

/*
 * The lines of process t->nr of the reader's view: its live threads
 * (t->pid >= 0 while it lives), then its kept ones.
 */
static int table_process(struct table *t)
{
	int ret = 0;

	t->threads.count = 0;
	t->have_born = false;
	if (t->pid > 0)
		ret = table_live(t);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	if (!t->r->env->exited ||
	    (!t->have_born && process_creation(t->r, t->nr, &t->born) < 0))
		return ret;
	return exited_for_each(t->r->env->exited, t->r->view->ns_ino, t->nr,
			       clock_mono_ns(), table_exited_thread, t);
}

int show_threads_table(struct request *r, const struct node *n, struct rbuf *b)
{
	struct table t = { .r = r,
			   .b = b,
			   .nr = node_pid(n),
			   .only_uid = VIEW_ALL_UIDS,
			   .one_pass = true };
	struct exited_task x;
	int ret;

	ret = process_pid(r, node_pid(n));
	if (ret < 0 && exited_lookup(r, node_pid(n), 0, &x) < 0)
		return ret;
	t.pid = ret < 0 ? 0 : ret;
	ret = render_table_header(b);
	if (ret == 0)
		ret = table_process(&t);
	seen_free(&t.threads);
	return ret;
}

/*
 * A process's lines in proc/table: one of the reader's view whose
 * owner the access rules let it see and enter (as its directory would).
 */
static int table_of_process(void *ctx, pid_t pid)
{
	struct table *t = ctx;
	struct task_ident id;
	int nr, ret;

	nr = view_pass_from_daemon(t->r->view, pid);
	if (nr < 0)
		return 0;
	if (t->only_uid != VIEW_ALL_UIDS &&
	    (engine_task_ident(t->r->env->engine, pid, 0, &id) < 0 ||
	     !task_visible(t->r, pid, &id)))
		return 0;
	ret = table_saw(t, &t->processes, nr);
	if (ret < 0)
		return ret;
	t->pid = pid;
	t->nr = nr;
	ret = table_process(t);
	return ret == -ENOENT ? 0 : ret; /* gone meanwhile */
}

/* A kept process's lines, unless it was met alive. */
static int table_of_exited(void *ctx, const struct exited_task *x,
			   const struct exited_name *name)
{
	struct table *t = ctx;

	if (seen_has(&t->processes, name->tgid) ||
	    (t->only_uid != VIEW_ALL_UIDS && x->uid != t->only_uid) ||
	    !view_shows_owner(t->r->view, x->uid))
		return 0;
	if (seen_add(&t->threads, name->tgid) < 0) /* to visit after */
		return -ENOMEM;
	return 0;
}

int show_table(struct request *r, const struct node *n, struct rbuf *b)
{
	struct table t = { .r = r, .b = b, .only_uid = request_only_uid(r) };
	struct seen kept = { 0 };
	size_t i;
	int ret;

	(void)n;
	ret = render_table_header(b);
	if (ret < 0 || r->view->nowhere)
		return ret;
	/* A reader of the daemon's numbers that hidepid does not limit
	 * reads every task: a pass pays at once, and lists the processes. */
	if (r->view->identity && t.only_uid == VIEW_ALL_UIDS) {
		ret = engine_pass_take(r->env->engine, &t.pass);
		if (ret < 0 && ret != -ENOSYS)
			return ret;
	}
	if (t.pass)
		ret = engine_pass_for_each_process(r->env->engine, t.pass,
						   table_of_process, &t);
	else
		ret = engine_for_each_process(r->env->engine, table_of_process,
					      &t);
	if (ret == 0 && r->env->exited) {
		/* The kept processes' numbers first: the table's lock is
		 * not held while their threads are visited. */
		t.threads.count = 0;
		ret = exited_for_each(r->env->exited, r->view->ns_ino, 0,
				      clock_mono_ns(), table_of_exited, &t);
		kept = t.threads;
		t.threads = (struct seen){ 0 };
		for (i = 0; ret == 0 && i < kept.count; i++) {
			t.pid = 0;
			t.nr = kept.nr[i];
			ret = table_process(&t);
		}
	}
	engine_pass_free(t.pass);
	seen_free(&kept);
	seen_free(&t.threads);
	seen_free(&t.processes);
	return ret;
}
