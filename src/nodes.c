/*
 * nodes: the callbacks of the tree's table, for one reader.
 */
#include <errno.h>
#include <stdio.h>

#include "nodes.h"

int listing_number(struct listing *l, const char *prefix, unsigned long v)
{
	char name[32];

	if (v > NODE_NUM_MAX)
		return 0;
	l->child.num[l->slot] = (uint32_t)v;
	snprintf(name, sizeof(name), "%s%lu", prefix, v);
	return l->add(l->sink, name, node_ino(&l->child), l->mode);
}

/* ---- files ---------------------------------------------------------- */

int show_info(struct request *r, const struct node *n, struct rbuf *b)
{
	const struct tree_env *env = r->env;
	struct engine_info info;
	int ret;

	(void)n;
	engine_get_info(env->engine, &info);
	ret = render_info(b, TIMINGFS_VERSION, &info);
	if (ret == 0 && views_pinned(env->views))
		ret = rbuf_printf(b, "pidns %llu\n",
				  (unsigned long long)views_pinned(env->views));
	else if (ret == 0)
		ret = rbuf_printf(b, "pidns caller\n");
	if (ret == 0)
		ret = rbuf_printf(b, "hidepid %s\n",
				  config_hidepid_name(env->access.hidepid));
	if (ret == 0 && env->access.gid == CONFIG_GID_NONE)
		ret = rbuf_printf(b, "hidepid_gid none\n");
	else if (ret == 0)
		ret = rbuf_printf(b, "hidepid_gid %u\n",
				  (unsigned int)env->access.gid);
	return ret;
}

int show_group_cpus(struct request *r, const struct node *n, struct rbuf *b)
{
	struct engine *e = r->env->engine;
	unsigned int m, size = engine_group_size(e, node_group(n));
	uint64_t online;
	size_t count = 0;
	int cpus[64], ret;

	ret = engine_group_online(e, node_group(n), &online);
	if (ret < 0)
		return ret;
	for (m = 0; m < size && m < 64; m++) {
		if (!(online & (1ULL << m)))
			continue;
		ret = engine_group_cpu(e, node_group(n), m);
		if (ret < 0)
			return ret;
		cpus[count++] = ret;
	}
	return render_cpulist(b, cpus, count);
}

int show_group_idle(struct request *r, const struct node *n, struct rbuf *b)
{
	uint64_t mask, cycles[64];
	int ret;

	ret = engine_group_idle_cycles(r->env->engine, node_group(n), &mask,
				       cycles);
	if (ret < 0)
		return ret;
	return render_idle_cycles(b, mask, cycles);
}

int show_cpu_idle(struct request *r, const struct node *n, struct rbuf *b)
{
	uint64_t mask, cycles[64];
	int ret;

	ret = engine_group_idle_cycles(r->env->engine, node_group(n), &mask,
				       cycles);
	if (ret < 0)
		return ret;
	if (!(mask & (1ULL << node_cpu(n))))
		return -ENOENT; /* went offline since the lookup */
	return render_value(b, cycles[node_cpu(n)]);
}

int show_cpu_number(struct request *r, const struct node *n, struct rbuf *b)
{
	int cpu = engine_group_cpu(r->env->engine, node_group(n), node_cpu(n));

	return cpu < 0 ? cpu : render_value(b, (uint64_t)cpu);
}

int task_of(struct request *r, const struct node *n, pid_t *pid, pid_t *tid)
{
	int ret;

	ret = view_to_daemon(r->view, node_pid(n));
	if (ret < 0)
		return ret;
	*pid = ret;
	*tid = 0;
	if (!node_tid(n))
		return 0;
	if (node_tid(n) == node_pid(n)) {
		*tid = *pid; /* the main thread: the same number */
		return 0;
	}
	ret = view_to_daemon(r->view, node_tid(n));
	if (ret < 0)
		return ret;
	*tid = ret;
	return 0;
}

/* ---- tables --------------------------------------------------------- */

struct table {
	struct request *r;
	struct rbuf *b;
	pid_t pid; /* the process, in the daemon's numbers */
	pid_t nr; /* and in the reader's view */
	uid_t only_uid; /* whose processes the reader may enter */
};

/* A thread's line; a thread that exited meanwhile has none. */
static int table_thread(void *ctx, pid_t tid)
{
	struct table *t = ctx;
	struct engine *e = t->r->env->engine;
	struct task_times times;
	int nr, ret;

	nr = view_from_daemon(t->r->view, tid);
	if (nr < 0)
		return 0;
	ret = engine_task_times(e, t->pid, tid, TASK_ALL, &times);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	return render_table_row(t->b, engine_units(e), t->nr, nr, &times);
}

static int table_process(struct table *t)
{
	return engine_for_each_thread(t->r->env->engine, t->pid, table_thread,
				      t);
}

int show_threads_table(struct request *r, const struct node *n, struct rbuf *b)
{
	struct table t = { r, b, 0, node_pid(n), VIEW_ALL_UIDS };
	int ret;

	ret = view_to_daemon(r->view, node_pid(n));
	if (ret < 0)
		return ret;
	t.pid = ret;
	ret = render_table_header(b);
	return ret < 0 ? ret : table_process(&t);
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

	nr = view_from_daemon(t->r->view, pid);
	if (nr < 0)
		return 0;
	if (t->only_uid != VIEW_ALL_UIDS &&
	    (engine_task_ident(t->r->env->engine, pid, 0, &id) < 0 ||
	     id.uid != t->only_uid))
		return 0;
	t->pid = pid;
	t->nr = nr;
	ret = table_process(t);
	return ret == -ENOENT ? 0 : ret; /* gone meanwhile */
}

int show_table(struct request *r, const struct node *n, struct rbuf *b)
{
	struct table t = { r, b, 0, 0, request_only_uid(r) };
	int ret;

	(void)n;
	ret = render_table_header(b);
	if (ret < 0 || r->view->nowhere)
		return ret;
	return engine_for_each_process(r->env->engine, table_of_process, &t);
}

/* ---- links ---------------------------------------------------------- */

/* The process of the reading thread, in the daemon's numbers. */
static int reader_ident(struct request *r, struct task_ident *id)
{
	if (r->pid <= 0)
		return -ENOENT; /* in a namespace the daemon cannot see */
	return engine_task_ident(r->env->engine, r->pid, 0, id);
}

int link_self(struct request *r, char *buf, size_t size)
{
	struct task_ident id;
	int ret = reader_ident(r, &id);

	if (ret == 0)
		ret = view_from_daemon(r->view, id.tgid);
	if (ret < 0)
		return ret;
	snprintf(buf, size, "%d", ret);
	return 0;
}

int link_current_group(struct request *r, char *buf, size_t size)
{
	struct task_ident id;
	unsigned int group, m;
	int ret;

	ret = reader_ident(r, &id);
	if (ret == 0)
		ret = engine_task_cpu(r->env->engine, id.tgid, r->pid);
	if (ret < 0)
		return ret;
	/* The kernel said it ran there: a CPU we do not know is a bug. */
	if (engine_cpu_group(r->env->engine, ret, &group, &m) < 0)
		return -EIO;
	snprintf(buf, size, "%u", group);
	return 0;
}

/* ---- numbered directories ------------------------------------------- */

int check_group(struct request *r, const struct node *n, struct owner *o)
{
	(void)o;
	return node_group(n) < engine_group_count(r->env->engine) ? 0 : -ENOENT;
}

int list_groups(struct request *r, const struct node *dir, struct listing *l)
{
	unsigned int g;
	int ret;

	(void)dir;
	for (g = 0; g < engine_group_count(r->env->engine); g++) {
		ret = listing_number(l, "", g);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* cpuM: M below the group's size, and online now. */
int check_cpu(struct request *r, const struct node *n, struct owner *o)
{
	struct engine *e = r->env->engine;
	uint64_t online;
	int ret;

	(void)o;
	if (node_cpu(n) >= engine_group_size(e, node_group(n)) ||
	    node_cpu(n) >= 64)
		return -ENOENT;
	ret = engine_group_online(e, node_group(n), &online);
	if (ret < 0)
		return ret;
	return (online & (1ULL << node_cpu(n))) ? 0 : -ENOENT;
}

int list_cpus(struct request *r, const struct node *dir, struct listing *l)
{
	struct engine *e = r->env->engine;
	unsigned int m, size = engine_group_size(e, node_group(dir));
	uint64_t online;
	int ret;

	ret = engine_group_online(e, node_group(dir), &online);
	if (ret < 0)
		return ret;
	for (m = 0; m < size && m < 64; m++) {
		if (!(online & (1ULL << m)))
			continue;
		ret = listing_number(l, "cpu", m);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * A process: a thread-group leader of the reader's view, whose owner
 * the access rules let the reader see; owned as procfs says.
 */
int check_pid(struct request *r, const struct node *n, struct owner *o)
{
	struct task_ident id;
	int pid, ret;

	pid = view_to_daemon(r->view, node_pid(n));
	if (pid < 0)
		return pid;
	ret = engine_task_ident(r->env->engine, pid, 0, &id);
	if (ret < 0)
		return ret;
	if (id.tgid != pid)
		return -ENOENT; /* a thread, which /proc also resolves */
	if (!view_shows_owner(r->view, id.uid))
		return -ENOENT;
	o->uid = id.uid;
	o->gid = id.gid;
	return 0;
}

struct task_lister {
	struct request *r;
	struct listing *l;
};

/* The engine's iterations call this for each task, in daemon numbers. */
static int list_task(void *ctx, pid_t pid)
{
	struct task_lister *tl = ctx;
	struct view *v = tl->r->view;
	struct task_ident id;
	int nr;

	nr = view_from_daemon(v, pid);
	if (nr < 0)
		return 0; /* not in the reader's namespace */
	if (v->only_uid != VIEW_ALL_UIDS && tl->l->slot == 0 &&
	    (engine_task_ident(tl->r->env->engine, pid, 0, &id) < 0 ||
	     !view_shows_owner(v, id.uid)))
		return 0;
	return listing_number(tl->l, "", (unsigned long)nr);
}

int list_pids(struct request *r, const struct node *dir, struct listing *l)
{
	struct task_lister tl = { r, l };

	(void)dir;
	if (r->view->nowhere)
		return 0;
	return engine_for_each_process(r->env->engine, list_task, &tl);
}

/* A thread of the process met on the way. */
int check_tid(struct request *r, const struct node *n, struct owner *o)
{
	struct task_ident id;
	pid_t pid, tid;
	int ret;

	(void)o; /* the process's, as for proc/PID/task/TID */
	if (node_tid(n) <= 0)
		return -ENOENT;
	ret = task_of(r, n, &pid, &tid);
	if (ret == 0)
		ret = engine_task_ident(r->env->engine, pid, tid, &id);
	if (ret < 0)
		return ret;
	return id.tgid == pid ? 0 : -ENOENT;
}

int list_tids(struct request *r, const struct node *dir, struct listing *l)
{
	struct task_lister tl = { r, l };
	int pid;

	pid = view_to_daemon(r->view, node_pid(dir));
	if (pid < 0)
		return pid;
	return engine_for_each_thread(r->env->engine, pid, list_task, &tl);
}
