/*
 * nodes: the callbacks of the tree's table, for one reader, but the
 * tables' (tables.c): tasks and the exited tasks kept, the value files,
 * the links, who may see a task, and the numbered directories.
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

/* ---- exited tasks ----------------------------------------------------- */

/*
 * The kept record of thread @vtid (0: the process) of process @vpid,
 * as @r's view numbers them, if the access rules show its owner.
 */
int exited_lookup(struct request *r, pid_t vpid, pid_t vtid,
		  struct exited_task *x)
{
	struct exited *table = r->env->exited;
	uint64_t ns = r->view->ns_ino;

	if (!table || r->view->nowhere)
		return -ENOENT;
	if (exited_find(table, ns, vpid, vtid, clock_mono_ns(), x) < 0) {
		if (!r->env->listener)
			return -ENOENT;
		listener_sync(r->env->listener); /* it may have just exited */
		if (exited_find(table, ns, vpid, vtid, clock_mono_ns(), x) < 0)
			return -ENOENT;
	}
	return view_shows_owner(r->view, x->uid) ? 0 : -ENOENT;
}

/*
 * The daemon's number of process @vpid of @r's view: the task this
 * request already resolved for that number (task_of(), or the FUSE
 * layer's record of the node asked about, which names one task
 * instance and is never translated again), else the view's
 * translation now. -ENOENT when the view has no such number.
 */
int process_pid(struct request *r, pid_t vpid)
{
	if (r->task_pid > 0 && r->task_view == r->view &&
	    r->task_nr[0] == (uint32_t)vpid)
		return r->task_pid;
	return view_to_daemon(r->view, vpid);
}

/* When process @vpid of @r's view was made: alive, or kept. */
int process_creation(struct request *r, pid_t vpid, uint64_t *ns)
{
	struct engine *e = r->env->engine;
	struct task_times t;
	struct exited_task x;
	int pid, ret = -ENOENT;

	pid = process_pid(r, vpid);
	if (pid >= 0)
		ret = engine_task_times(e, pid, 0, TASK_START, &t);
	if (ret == -ENOENT) {
		ret = exited_lookup(r, vpid, 0, &x);
		if (ret == 0)
			ret = engine_exited_times(e, &x, false, &t);
	}
	if (ret == 0)
		*ns = t.start_tick_ns;
	return ret;
}

/*
 * A kept thread belongs to the process that now has its process's
 * number only if it started after that process did: not to a process
 * that took the number of one that had ended.
 */
bool thread_of(struct request *r, const struct exited_task *x, uint64_t born,
	       struct task_times *t)
{
	engine_exited_times(r->env->engine, x, true, t);
	return t->start_tick_ns >= born;
}

static int exited_thread(struct request *r, pid_t vpid, pid_t vtid,
			 struct exited_task *x)
{
	struct task_times t;
	uint64_t born;
	int ret;

	ret = exited_lookup(r, vpid, vtid, x);
	if (ret == 0)
		ret = process_creation(r, vpid, &born);
	if (ret == 0 && !thread_of(r, x, born, &t))
		ret = -ENOENT;
	return ret;
}

int seen_add(struct seen *s, pid_t nr)
{
	pid_t *grown;

	if (s->count == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		grown = realloc(s->nr, s->cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		s->nr = grown;
	}
	s->nr[s->count++] = nr;
	s->sorted = false;
	return 0;
}

static int compare_nr(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

bool seen_has(struct seen *s, pid_t nr)
{
	if (!s->sorted && s->count)
		qsort(s->nr, s->count, sizeof(*s->nr), compare_nr);
	s->sorted = true;
	return s->count &&
	       bsearch(&nr, s->nr, s->count, sizeof(*s->nr), compare_nr);
}

void seen_free(struct seen *s)
{
	free(s->nr);
}

/* A read of this request met task (@pid, @tid) created at @start (0:
 * not known): task_start() need not read it again. */
static void task_seen(struct request *r, pid_t pid, pid_t tid, uint64_t start)
{
	if (!start)
		return;
	r->seen_start = start;
	r->seen_pid = pid;
	r->seen_tid = tid;
}

int node_times(struct request *r, const struct node *n, unsigned int need,
	       struct task_times *t)
{
	struct exited_task x;
	pid_t pid, tid;
	int ret;

	ret = task_of(r, n, &pid, &tid);
	/* Which task it is, unless a read of the request said it. */
	if (ret == 0 &&
	    !(r->seen_start && pid == r->seen_pid && tid == r->seen_tid))
		need |= TASK_WHICH;
	if (ret == 0)
		ret = engine_task_times(r->env->engine, pid, tid, need, t);
	if (ret == 0)
		task_seen(r, pid, tid, t->start_tick_ns);
	if (ret != -ENOENT)
		return ret;
	if (node_tid(n))
		ret = exited_thread(r, node_pid(n), node_tid(n), &x);
	else
		ret = exited_lookup(r, node_pid(n), 0, &x);
	return ret < 0 ? ret :
			 engine_exited_times(r->env->engine, &x,
					     node_tid(n) != 0, t);
}

int task_start(struct request *r, const struct node *n, uint64_t *start)
{
	struct task_times t;
	pid_t pid, tid;
	int ret;

	*start = 0;
	if (n->kind == K_PROC || node_pid(n) <= 0)
		return 0;
	if (r->seen_start && task_of(r, n, &pid, &tid) == 0 &&
	    pid == r->seen_pid && tid == r->seen_tid) {
		*start = r->seen_start;
		return 0;
	}
	ret = node_times(r, n, TASK_START, &t);
	if (ret == 0)
		*start = t.start_tick_ns;
	/* A broken source is not a gone task: its files say the error. */
	return ret == -ENOENT ? ret : 0;
}

/* The identity of kept task @x: the one it was met alive with, else its
 * start. */
static uint64_t exited_identity(struct request *r, const struct node *n,
				const struct exited_task *x)
{
	struct task_times t;

	if (x->ident)
		return x->ident;
	engine_exited_times(r->env->engine, x, node_tid(n) != 0, &t);
	return t.start_tick_ns;
}

int task_identity(struct request *r, const struct node *n, uint64_t *ident)
{
	struct engine *e = r->env->engine;
	struct exited_task x;
	pid_t pid, tid;
	int ret;

	*ident = 0;
	if (n->kind == K_PROC || node_pid(n) <= 0)
		return 0;
	if (!engine_has_identity(e))
		return task_start(r, n, ident);
	ret = task_of(r, n, &pid, &tid);
	if (ret == 0)
		ret = engine_task_identity(e, pid, tid, ident);
	if (ret == 0)
		return 0;
	if (ret != -ENOENT)
		return task_start(r, n, ident);
	if (node_tid(n))
		ret = exited_thread(r, node_pid(n), node_tid(n), &x);
	else
		ret = exited_lookup(r, node_pid(n), 0, &x);
	if (ret == 0)
		*ident = exited_identity(r, n, &x);
	return ret;
}

int task_vouch(struct request *r, const struct node *n)
{
	uint64_t now;

	if (!ident_is_pidfs(r->task_ident) || r->task_view != r->view ||
	    r->task_nr[0] != n->num[0] || r->task_nr[1] != n->num[1])
		return 0;
	if (engine_task_identity(r->env->engine, r->task_pid, r->task_tid,
				 &now) == 0 &&
	    now != r->task_ident)
		return -ENOENT;
	/* Gone since: what was read of it was checked as it was read
	 * (node_times()'s kept task); a broken source says so itself. */
	return 0;
}

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

static pid_t server_pid;
static unsigned int server_starts;

void tree_set_server(pid_t pid, unsigned int starts)
{
	server_pid = pid;
	server_starts = starts;
}

int show_info(struct request *r, const struct node *n, struct rbuf *b)
{
	const struct tree_env *env = r->env;
	struct engine_info info;
	int ret;

	(void)n;
	engine_get_info(env->engine, &info);
	ret = render_info(b, TIMINGFS_VERSION, &info);
	/* How many passes of the task iterator the engine made. */
	if (ret == 0 && strcmp(info.task_source, "bpf") == 0)
		ret = rbuf_printf(b, "task_passes %llu\n",
				  (unsigned long long)info.task_passes);
	if (ret == 0 && views_pinned(env->views))
		ret = rbuf_printf(b, "pidns %llu\n",
				  (unsigned long long)views_pinned(env->views));
	else if (ret == 0)
		ret = rbuf_printf(b, "pidns caller\n");
	if (ret == 0)
		ret = rbuf_printf(b, "pidns_translate %s\n",
				  views_translate(env->views));
	if (ret == 0)
		ret = rbuf_printf(b, "pidns_scans %llu\n",
				  views_scans(env->views));
	if (ret == 0)
		ret = rbuf_printf(b, "hidepid %s\n",
				  hidepid_name(env->access.hidepid));
	if (ret == 0 && env->access.gid == ACCESS_GID_NONE)
		ret = rbuf_printf(b, "hidepid_gid none\n");
	else if (ret == 0)
		ret = rbuf_printf(b, "hidepid_gid %u\n",
				  (unsigned int)env->access.gid);
	if (ret == 0 && env->exited) {
		struct exited_counts c;

		exited_counts(env->exited, clock_mono_ns(), &c);
		ret = rbuf_printf(b,
				  "exit_source taskstats\nexit_keep %u\n"
				  "exit_retained %llu\nexit_dropped %llu\n"
				  "exit_lost %llu\n",
				  c.keep_s, c.retained, c.dropped,
				  env->listener ? listener_lost(env->listener) :
						  0);
	} else if (ret == 0) {
		ret = rbuf_printf(b, "exit_source none\n");
	}
	if (ret == 0 && server_starts)
		ret = rbuf_printf(b, "server_pid %d\nserver_starts %u\n",
				  (int)server_pid, server_starts);
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

/* Remember what task_of() found: a request asks it again (identity,
 * then content), and the view's translation may cost reads. */
static int task_memo(struct request *r, const struct node *n, pid_t pid,
		     pid_t tid)
{
	r->task_view = r->view;
	r->task_nr[0] = n->num[0];
	r->task_nr[1] = n->num[1];
	r->task_pid = pid;
	r->task_tid = tid;
	r->task_ident = 0; /* translated now: no record's */
	return 0;
}

int task_of(struct request *r, const struct node *n, pid_t *pid, pid_t *tid)
{
	int ret;

	if (r->task_pid > 0 && r->task_view == r->view &&
	    r->task_nr[0] == n->num[0] && r->task_nr[1] == n->num[1]) {
		*pid = r->task_pid;
		*tid = r->task_tid;
		return 0;
	}
	ret = view_to_daemon(r->view, node_pid(n));
	if (ret < 0)
		return ret;
	*pid = ret;
	*tid = 0;
	if (!node_tid(n))
		return task_memo(r, n, *pid, *tid);
	if (node_tid(n) == node_pid(n)) {
		*tid = *pid; /* the main thread: the same number */
		return task_memo(r, n, *pid, *tid);
	}
	ret = view_thread_to_daemon(r->view, *pid, node_tid(n));
	if (ret < 0)
		return ret;
	*tid = ret;
	return task_memo(r, n, *pid, *tid);
}

/* ---- who may see a task --------------------------------------------- */

int request_caps(struct request *r)
{
	if (!r->caps_state) {
		r->caps_state =
			access_reader_caps(r->pid, &r->cap_eff, &r->userns);
		if (r->caps_state == 0)
			r->caps_state = 1;
	}
	return r->caps_state < 0 ? r->caps_state : 0;
}

static ino_t daemon_userns(void)
{
	static ino_t ino; /* atomic: the same whoever reads it first */
	ino_t v = __atomic_load_n(&ino, __ATOMIC_RELAXED);

	if (!v) {
		v = access_userns_of(0);
		__atomic_store_n(&ino, v, __ATOMIC_RELAXED);
	}
	return v;
}

static bool has_ptrace(const struct request *r)
{
	return (r->cap_eff >> ACCESS_CAP_SYS_PTRACE) & 1;
}

bool request_ptrace_all(struct request *r)
{
	return request_caps(r) == 0 && has_ptrace(r) && r->userns &&
	       r->userns == daemon_userns();
}

/* The ids are the reader's: its capabilities hold the task's, and the
 * task is dumpable (procfs owns /proc/PID by its euid, not by root). */
static bool own_task_readable(struct request *r, pid_t pid,
			      const struct task_ident *id)
{
	uid_t dump;

	if (id->creds.cap_prm &&
	    (request_caps(r) < 0 ||
	     !access_caps_cover(r->cap_eff, id->creds.cap_prm)))
		return false;
	return engine_task_dump_owner(r->env->engine, pid, &dump) == 0 &&
	       dump == id->creds.uid[1];
}

bool task_visible(struct request *r, pid_t pid, const struct task_ident *id)
{
	struct engine *e = r->env->engine;

	if (request_only_uid(r) == VIEW_ALL_UIDS)
		return view_shows_owner(r->view, id->uid);
	if (access_ids_match(id->creds.uid, id->creds.gid, r->uid, r->gid) &&
	    own_task_readable(r, pid, id))
		return true;
	if (engine_is_live(e) && access_same_process(pid, r->pid))
		return true; /* its own process */
	/* CAP_SYS_PTRACE of a reader in another user namespace than the
	 * daemon's (in the daemon's it sees all): over its own alone. */
	return engine_is_live(e) && request_caps(r) == 0 && has_ptrace(r) &&
	       r->userns && access_userns_of(pid) == r->userns;
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
 * Whether the reader may see process @pid (@id), as the node @n asks:
 * under noaccess a process's directory is listed and stat'ed by
 * everyone, entered only by who may see it.
 */
static int pid_access(struct request *r, const struct node *n, pid_t pid,
		      const struct task_ident *id)
{
	enum hidepid hidepid = r->env->access.hidepid;

	if (hidepid == HIDEPID_NOACCESS && n->kind == K_TGID && !r->entering)
		return 0;
	if (task_visible(r, pid, id))
		return 0;
	return hidepid == HIDEPID_NOACCESS ? -EACCES : -ENOENT;
}

/*
 * A process: a thread-group leader of the reader's view, whose owner
 * the access rules let the reader see; owned as procfs says.
 */
int check_pid(struct request *r, const struct node *n, struct owner *o)
{
	struct exited_task x;
	struct task_ident id;
	int pid, ret;

	pid = process_pid(r, node_pid(n));
	if (pid >= 0) {
		ret = engine_task_ident(r->env->engine, pid, 0, &id);
		if (ret == 0) {
			if (id.tgid != pid)
				return -ENOENT; /* a thread: /proc resolves it */
			task_seen(r, pid, 0, id.start_tick_ns);
			ret = pid_access(r, n, pid, &id);
			if (ret < 0)
				return ret;
			o->uid = id.uid;
			o->gid = id.gid;
			return 0;
		}
		if (ret != -ENOENT)
			return ret;
	}
	ret = exited_lookup(r, node_pid(n), 0, &x); /* kept since it exited */
	if (ret == 0) {
		o->uid = x.uid;
		o->gid = x.gid;
	}
	return ret;
}

struct task_lister {
	struct request *r;
	struct listing *l;
	struct seen alive; /* what was listed alive, where tasks are kept */
	uint64_t born; /* listing threads: when their process was made */
};

/* The engine's iterations call this for each task, in daemon numbers. */
static int list_task(void *ctx, pid_t pid)
{
	struct task_lister *tl = ctx;
	struct view *v = tl->r->view;
	struct task_ident id;
	int nr, ret;

	/* slot 0: processes, a pass over the machine's; 1: threads */
	nr = tl->l->slot == 0 ? view_pass_from_daemon(v, pid) :
				view_from_daemon(v, pid);
	if (nr < 0)
		return 0; /* not in the reader's namespace */
	if (v->only_uid != VIEW_ALL_UIDS && tl->l->slot == 0 &&
	    (engine_task_ident(tl->r->env->engine, pid, 0, &id) < 0 ||
	     !task_visible(tl->r, pid, &id)))
		return 0;
	if (tl->r->env->exited) {
		ret = seen_add(&tl->alive, nr);
		if (ret < 0)
			return ret;
	}
	return listing_number(tl->l, "", (unsigned long)nr);
}

/* A kept process, or thread, that was not listed alive. */
static int list_exited(void *ctx, const struct exited_task *x,
		       const struct exited_name *name)
{
	struct task_lister *tl = ctx;
	pid_t nr = tl->l->slot == 0 ? name->tgid : name->tid;
	struct task_times t;

	if (seen_has(&tl->alive, nr) || !view_shows_owner(tl->r->view, x->uid))
		return 0;
	if (tl->l->slot == 1 && !thread_of(tl->r, x, tl->born, &t))
		return 0;
	return listing_number(tl->l, "", (unsigned long)nr);
}

/* The kept tasks of @vpid's (0: the processes) after the live ones. */
static int list_kept(struct task_lister *tl, pid_t vpid, int ret)
{
	struct request *r = tl->r;

	if (ret == 0 && r->env->exited && !r->view->nowhere)
		ret = exited_for_each(r->env->exited, r->view->ns_ino, vpid,
				      clock_mono_ns(), list_exited, tl);
	seen_free(&tl->alive);
	return ret;
}

int list_pids(struct request *r, const struct node *dir, struct listing *l)
{
	struct task_lister tl = { .r = r, .l = l };

	(void)dir;
	if (r->view->nowhere)
		return 0;
	return list_kept(&tl, 0,
			 engine_for_each_process(r->env->engine, list_task,
						 &tl));
}

/* A thread of the process met on the way. */
int check_tid(struct request *r, const struct node *n, struct owner *o)
{
	struct exited_task x;
	struct task_ident id;
	pid_t pid, tid;
	int ret;

	(void)o; /* the process's, as for proc/PID/task/TID */
	if (node_tid(n) <= 0)
		return -ENOENT;
	ret = task_of(r, n, &pid, &tid);
	if (ret == 0) {
		ret = engine_task_ident(r->env->engine, pid, tid, &id);
		if (ret == 0 && id.tgid == pid)
			task_seen(r, pid, tid, id.start_tick_ns);
		if (ret == 0)
			return id.tgid == pid ? 0 : -ENOENT;
		if (ret != -ENOENT)
			return ret;
	}
	return exited_thread(r, node_pid(n), node_tid(n), &x);
}

int list_tids(struct request *r, const struct node *dir, struct listing *l)
{
	struct task_lister tl = { .r = r, .l = l };
	int pid, ret = 0;

	if (r->env->exited && process_creation(r, node_pid(dir), &tl.born) < 0)
		return -ENOENT;
	pid = process_pid(r, node_pid(dir));
	if (pid >= 0)
		ret = engine_for_each_thread(r->env->engine, pid, list_task,
					     &tl);
	if (pid < 0 || ret == -ENOENT) {
		if (!r->env->exited) {
			seen_free(&tl.alive);
			return -ENOENT;
		}
		ret = 0; /* exited: its kept threads */
	}
	return list_kept(&tl, node_pid(dir), ret);
}
