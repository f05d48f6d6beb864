/*
 * fs: the FUSE operations, each a request to the tree for one reader.
 *
 * Every node the kernel holds below proc/ is a record (inodes.h): a
 * request by its node ID resolves the record, and through it the task
 * instance it names, once (record_check()); a task gone, or a number
 * another task took, is ENOENT from then on, however the request came.
 * The exit listener has the kernel drop the names of tasks that exit
 * (task_exited()), so that a walk after that looks the number up
 * afresh.
 *
 * A file's content is rendered when a path walk looks it up (a value
 * file's name is then kept, its inode always the same; a table's
 * inode is new at each lookup: inodes.h), or at an open that comes
 * without a lookup; the open takes it, its first read at offset 0 and
 * every read at another offset, of any size, by read(2) or through the
 * page cache, are served from it; a later read at offset 0 takes a new
 * snapshot for its thread (rewinds.h). A directory's listing is made
 * at opendir, and READDIRPLUS answers its directories' lookups.
 * Each is charged to its reader's budget of memory (budget.h) while the
 * daemon holds it, and refused with ENOMEM past it; every content lives
 * in the keep (keep.h), where a successor of this server finds it. An
 * open file or directory is one object (opens.h), made by its open and
 * undone by its release. Errors are -errno internally, passed straight
 * through from the tree and the engine, and replied as errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "nodes.h"
#include "fs.h"
#include "clock.h"
#include "hash.h"
#include "keep.h"
#include "log.h"
#include "inodes.h"
#include "opens.h"
#include "render.h"
#include "serve.h"
#include "tree.h"

/* How many names the dropper may have waiting; more wait for a sweep. */
#define FS_DROP_QUEUE 256

/* Every this many inodes more held below proc/, a sweep drops the names
 * of up to FS_SWEEP_DROPS directories of exited tasks. */
#define FS_SWEEP_EVERY 256
#define FS_SWEEP_DROPS 2048

/* Every this many ms the dropper reaps each mount's views (reap_views()),
 * dropping the names of up to FS_REAP_SLOTS slots, FS_REAP_NAMES names. */
#define FS_REAP_MS 1000
#define FS_REAP_SLOTS 256
#define FS_REAP_NAMES 2048

/*
 * The thread that drops names from the kernel's caches, for every
 * mount of the daemon: proc/, and the names of idle extra inodes
 * (inodes.h). Each mount queues its own; the lock guards every queue.
 */
struct fs_dropper {
	pthread_t thread;
	bool started, stopping;
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	struct fs *mounts; /* every registered mount, a ring by ->next */
	struct fs *busy; /* the mount whose name is being dropped */
};

struct fs {
	struct tree_env env;
	struct fuse_session *se;
	struct inodes *ins; /* the inodes the kernel holds (inodes.h) */
	struct fs_dropper *dropper;
	struct fs *next, *prev; /* in the dropper's ring */
	bool registered; /* in it: from fs_new to fs_destroy */
	bool watching; /* the listener tells it of exits (task_exited()) */
	bool drop_pending; /* proc/ to drop */
	bool sweep_pending; /* names of exited tasks to find and drop */
	bool reap_pending; /* views of ended namespaces to free (view.h) */
	size_t sweep_at; /* atomic: held inodes that call for a sweep */
	struct record_name drop_queue[FS_DROP_QUEUE];
	unsigned int drop_head, drop_count;
	struct keep *keep; /* every open's content (keep.h) */
	struct opens *opens; /* every open file and directory (opens.h) */
};

/*
 * A directory listing: the entries in the kernel's format, and where
 * each starts; offsets are entry indices (tree_listing_slice()).
 */
struct fs_listing {
	fuse_req_t req;
	struct rbuf entries;
	uint64_t *start; /* start[i]: entry i; start[count]: the end */
	size_t count, cap;
	struct budget_charge charge;
};

static struct fs *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* ---- the kernel's cache: proc/, and names of idle inodes ----------- */

/* Drop the name @rn from the kernel's cache: it forgets the inode,
 * unless something holds it open. */
static void drop_name(struct fs *fs, const struct record_name *rn)
{
	char name[TREE_NAME_MAX];

	tree_name(&rn->node, name, sizeof(name));
	/* -ENOENT when the kernel had not cached it: fine. */
	fuse_lowlevel_notify_inval_entry(fs->se, rn->parent, name,
					 strlen(name));
}

/* The name of file @n (an extra inode's, inodes.h) in its directory. */
static void file_name(const struct node *n, struct record_name *rn)
{
	struct node dir;

	tree_parent(n, &dir); /* a file's directory shares its record */
	rn->parent = node_id(&dir);
	rn->node = *n;
}

/*
 * A notification must not come from a request's own path (the kernel
 * may hold the directory's lock meanwhile): a thread of its own sends
 * it, one for every mount. It is started when first needed, from a
 * request: after the daemon has forked into the background, and only
 * when a mount is read by other views or its readers left extra inodes
 * behind. It takes one name at a time from each mount in turn, and
 * once started, every FS_REAP_MS it reaps each mount's views
 * (reap_views()).
 */
static struct fs *dropper_next(struct fs_dropper *d)
{
	struct fs *fs = d->mounts;

	if (!fs)
		return NULL;
	do {
		fs = fs->next;
		if (fs->drop_pending || fs->sweep_pending || fs->reap_pending ||
		    fs->drop_count) {
			d->mounts = fs;
			return fs;
		}
	} while (fs != d->mounts);
	return NULL;
}

/*
 * Drop the names the kernel keeps of directories of tasks that have
 * exited (inodes.h's inodes_gone()) that no exit record dropped (no
 * listener, or one that lost records): each is a record, and the
 * kernel, which keeps a name until memory runs short, would otherwise
 * grow the table with every task a walk ever met.
 */
static bool task_gone(void *ctx, pid_t pid, pid_t tid)
{
	struct fs *fs = ctx;
	struct exited_task x;

	if (!engine_task_gone(fs->env.engine, pid, tid))
		return false;
	/* Kept since it exited: its names serve it until it is dropped
	 * from the table, which drops them (task_exited()). */
	return !fs->env.exited ||
	       exited_find(fs->env.exited, views_own_ns(fs->env.views), pid,
			   tid, clock_mono_ns(), &x) < 0;
}

/*
 * Drop the names of up to FS_SWEEP_DROPS directories of exited tasks;
 * the next sweep comes once FS_SWEEP_EVERY more inodes are held than
 * the kernel's forgets of these leave. (The next sweep counted from
 * the count before this one's forgets, as it was, came later at every
 * sweep: under a churn of 800 threads a second the table grew by
 * FS_SWEEP_EVERY a sweep, 500 inodes a second, without end.)
 */
static void sweep_gone(struct fs *fs)
{
	struct record_name *gone = malloc(FS_SWEEP_DROPS * sizeof(*gone));
	size_t n, i, held;

	if (!gone)
		return;
	n = inodes_gone(fs->ins, task_gone, fs, gone, FS_SWEEP_DROPS);
	for (i = 0; i < n; i++)
		drop_name(fs, &gone[i]);
	free(gone);
	/* Counted after the drops, some of whose forgets may have come:
	 * the next sweep may come early, never late (counted before them,
	 * the kernel held three times as many inodes under t1950's churn). */
	held = inodes_records(fs->ins);
	__atomic_store_n(&fs->sweep_at,
			 (held > n ? held - n : 0) + FS_SWEEP_EVERY,
			 __ATOMIC_RELAXED);
}

/* The exited tasks kept under namespaces whose views ended are not
 * named there any more: their numbers may name other namespaces. */
static void forget_ended(struct fs *fs)
{
	ino_t ns[FS_REAP_SLOTS];
	unsigned int n, i;

	while ((n = views_ended(fs->env.views, ns, FS_REAP_SLOTS)))
		for (i = 0; i < n && fs->env.exited; i++)
			exited_forget_ns(fs->env.exited, ns[i]);
}

/*
 * Free the slots of views whose namespace has no process left, having
 * the kernel drop the names it holds of them (views_reap()): a view's
 * names outlive their holders in the kernel's cache, and would keep its
 * slot and its namespace's descriptor for good.
 */
static void reap_views(struct fs *fs)
{
	unsigned int slot[FS_REAP_SLOTS], nslots;
	struct record_name *n;
	size_t count, i;

	nslots = views_reap(fs->env.views, slot, FS_REAP_SLOTS);
	forget_ended(fs);
	n = nslots ? malloc(FS_REAP_NAMES * sizeof(*n)) : NULL;
	if (!n)
		return; /* the slots' names are asked for again later */
	count = inodes_in_slots(fs->ins, slot, nslots, n, FS_REAP_NAMES);
	for (i = 0; i < count; i++)
		drop_name(fs, &n[i]);
	free(n);
}

/* Every mount is to reap its views. Called locked. */
static void reap_due(struct fs_dropper *d)
{
	struct fs *fs = d->mounts;

	if (!fs)
		return;
	do {
		fs->reap_pending = true;
		fs = fs->next;
	} while (fs != d->mounts);
}

/* The next mount with work, reaps made due every FS_REAP_MS; NULL when
 * stopping. Called locked; waits. */
static struct fs *dropper_wait(struct fs_dropper *d, long long *reap_ns)
{
	struct timespec until;
	struct fs *fs;
	long long now;

	while (!d->stopping) {
		now = (long long)clock_mono_ns();
		if (now >= *reap_ns) {
			reap_due(d);
			*reap_ns = now + FS_REAP_MS * 1000000LL;
		}
		fs = dropper_next(d);
		if (fs)
			return fs;
		until.tv_sec = *reap_ns / 1000000000LL;
		until.tv_nsec = *reap_ns % 1000000000LL;
		pthread_cond_timedwait(&d->wake, &d->lock, &until);
	}
	return NULL;
}

static void *dropper_main(void *arg)
{
	struct fs_dropper *d = arg;
	bool proc, file, sweep, reap;
	long long reap_ns = 0;
	struct fs *fs = NULL;
	struct record_name n;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		fs = dropper_wait(d, &reap_ns);
		if (!fs)
			break;
		proc = fs->drop_pending;
		fs->drop_pending = false;
		sweep = !proc && fs->sweep_pending;
		fs->sweep_pending = fs->sweep_pending && !sweep;
		reap = !proc && !sweep && fs->reap_pending;
		fs->reap_pending = fs->reap_pending && !reap;
		file = !proc && !sweep && !reap;
		if (file) {
			n = fs->drop_queue[fs->drop_head];
			fs->drop_head = (fs->drop_head + 1) % FS_DROP_QUEUE;
			fs->drop_count--;
		}
		d->busy = fs;
		pthread_mutex_unlock(&d->lock);
		if (proc)
			fuse_lowlevel_notify_inval_entry(fs->se, FUSE_ROOT_ID,
							 "proc", 4);
		else if (sweep)
			sweep_gone(fs);
		else if (reap)
			reap_views(fs);
		else
			drop_name(fs, &n);
		pthread_mutex_lock(&d->lock);
		d->busy = NULL;
		pthread_cond_broadcast(&d->done);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int fs_dropper_new(struct fs_dropper **out)
{
	struct fs_dropper *d = calloc(1, sizeof(*d));
	pthread_condattr_t mono;

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	/* Its reaps are timed on CLOCK_MONOTONIC (dropper_wait()). */
	pthread_condattr_init(&mono);
	pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
	pthread_cond_init(&d->wake, &mono);
	pthread_condattr_destroy(&mono);
	pthread_cond_init(&d->done, NULL);
	*out = d;
	return 0;
}

void fs_dropper_free(struct fs_dropper *d)
{
	bool started;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	started = d->started;
	d->started = false;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
	if (started)
		pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->done);
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* Wake the dropper, started at its first use. Called locked. */
static void dropper_wake(struct fs_dropper *d)
{
	if (!d->started && !d->stopping &&
	    pthread_create(&d->thread, NULL, dropper_main, d) == 0)
		d->started = true;
	pthread_cond_signal(&d->wake);
}

/*
 * The kernel holds @count inodes below proc/: every FS_SWEEP_EVERY more
 * since the last sweep, have the dropper sweep the names of exited
 * tasks.
 */
static void sweep_when_grown(struct fs *fs, size_t count)
{
	struct fs_dropper *d = fs->dropper;
	size_t at = __atomic_load_n(&fs->sweep_at, __ATOMIC_RELAXED);

	if (count < at || !__atomic_compare_exchange_n(
				  &fs->sweep_at, &at, count + FS_SWEEP_EVERY,
				  false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&d->lock);
	if (fs->registered) {
		fs->sweep_pending = true;
		dropper_wake(d);
	}
	pthread_mutex_unlock(&d->lock);
}

static void drop_proc_entry(struct fs *fs)
{
	struct fs_dropper *d = fs->dropper;

	pthread_mutex_lock(&d->lock);
	if (fs->registered) {
		fs->drop_pending = true;
		dropper_wake(d);
	}
	pthread_mutex_unlock(&d->lock);
}

/* Queue the @count names @n to be dropped (as many as fit). */
static void drop_names(struct fs *fs, const struct record_name *n, size_t count)
{
	struct fs_dropper *d = fs->dropper;
	size_t i;

	if (!count)
		return;
	pthread_mutex_lock(&d->lock);
	for (i = 0;
	     fs->registered && i < count && fs->drop_count < FS_DROP_QUEUE; i++)
		fs->drop_queue[(fs->drop_head + fs->drop_count++) %
			       FS_DROP_QUEUE] = n[i];
	if (fs->registered)
		dropper_wake(d);
	pthread_mutex_unlock(&d->lock);
}

/* Queue the names of the idle extra inodes a sweep found. */
static void drop_idle_extras(struct fs *fs, const struct extras_idle *idle)
{
	struct record_name rn[EXTRAS_SWEEP_MAX];
	unsigned int i;

	for (i = 0; i < idle->count; i++)
		file_name(&idle->node[i], &rn[i]);
	drop_names(fs, rn, idle->count);
}

/* ---- requests --------------------------------------------------------- */

static uid_t req_only_uid(struct request *r);

static void req_begin(fuse_req_t req, struct request *r)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	r->env = &req_fs(req)->env;
	r->view = NULL;
	r->pid = ctx->pid;
	r->uid = ctx->uid;
	r->gid = ctx->gid;
	r->only_uid = req_only_uid;
	r->ctx = req;
	r->entering = false;
	r->only_known = false;
	r->caps_state = 0;
	r->task_pid = 0;
	r->task_ident = 0;
	r->seen_start = 0;
}

/* Whether the reader of @req is in group @gid, supplementary included. */
static bool req_in_group(fuse_req_t req, gid_t gid)
{
	gid_t small[64], *list = small;
	int n, size = 64, i;
	bool found = false;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	for (;;) {
		n = fuse_req_getgroups(req, size, list);
		if (n <= size || list != small)
			break;
		list = malloc((size_t)n * sizeof(*list));
		if (!list)
			return false;
		size = n;
	}
	for (i = 0; i < n && i < size; i++)
		if (list[i] == gid)
			found = true;
	if (list != small)
		free(list);
	return found;
}

/*
 * Whether the reader may see and enter every process (VIEW_ALL_UIDS):
 * a member of the gid, or one with CAP_SYS_PTRACE in the daemon's user
 * namespace, as procfs says; else its own uid, and nodes.c decides
 * process by process (task_visible()). Root without CAP_SYS_PTRACE (a
 * container's) is no exception.
 */
static uid_t req_only_uid(struct request *r)
{
	const struct access_policy *access = &r->env->access;

	if (access->hidepid == HIDEPID_OFF)
		return VIEW_ALL_UIDS;
	if (access->gid != ACCESS_GID_NONE &&
	    req_in_group((fuse_req_t)r->ctx, access->gid))
		return VIEW_ALL_UIDS;
	if (request_ptrace_all(r))
		return VIEW_ALL_UIDS;
	return r->uid;
}

/*
 * Slots are being reused: have the kernel drop the names it still
 * holds of views idle for VIEW_IDLE_S, so that their slots free unless
 * something holds one open (view.h).
 */
static void drop_idle_views(struct fs *fs)
{
	unsigned int slot[16], nslots;
	struct record_name n[FS_DROP_QUEUE];

	nslots = views_idle_held(fs->env.views, slot, 16);
	if (nslots)
		drop_names(fs, n,
			   inodes_in_slots(fs->ins, slot, nslots, n,
					   FS_DROP_QUEUE));
}

/* The reader's own view, from its thread's namespace. */
static void req_view(fuse_req_t req, struct request *r)
{
	struct fs *fs = req_fs(req);
	bool shared_now;

	/* Under invisible each owner has a view of its own. */
	r->view = views_caller(fs->env.views, r->pid,
			       fs->env.access.hidepid == HIDEPID_INVISIBLE ?
				       request_only_uid(r) :
				       VIEW_ALL_UIDS,
			       r->uid, &shared_now);
	if (shared_now)
		drop_proc_entry(fs);
	if (views_crowded(fs->env.views))
		drop_idle_views(fs);
}

/*
 * Whether every path walk asks the daemon which proc/ it enters: while
 * readers of several views share the mount, and always under
 * hidepid=invisible, where each owner has a view of its own.
 */
static bool proc_walks_ask(const struct request *r)
{
	return r->env->access.hidepid == HIDEPID_INVISIBLE ||
	       views_shared(r->env->views);
}

/*
 * The view to serve node @n in, for a node below proc/. While only the
 * daemon's own view reads the mount, the kernel may have served a path
 * cached for it to a reader of another view: ask who the reader is.
 * Once every path walk looks proc/ up for its reader, the view @n was
 * named in is the reader's (or, as in procfs, that of the directory the
 * reader holds open): its slot is not reused while the kernel holds an
 * inode named in it (view.h). -EAGAIN when the reader's view needs a
 * slot and every one is held.
 */
static int req_node_view(fuse_req_t req, struct request *r,
			 const struct node *n)
{
	if (!tree_in_proc(n))
		return 0;
	if (n->kind == K_PROC || !proc_walks_ask(r)) {
		req_view(req, r);
	} else if (views_reserved(r->env->views, n->view)) {
		/* A dead server's slot: its own view's reader takes it
		 * again (views_set_record()); anyone else sees nothing. */
		req_view(req, r);
		if (r->view->slot != n->view) {
			views_put(r->env->views, r->view);
			r->view = views_slot(r->env->views, VIEW_NOWHERE);
		}
	} else {
		r->view = views_slot(r->env->views, n->view);
	}
	return r->view->error;
}

/*
 * The task @t of node @n's record (inodes_node()), made the request's
 * (nodes.h's task_of() does not translate it again).
 */
static void record_use(struct request *r, const struct node *n,
		       const struct record_task *t)
{
	if (t->start && t->pid > 0 && r->view) {
		r->task_view = r->view;
		r->task_nr[0] = n->num[0];
		r->task_nr[1] = n->num[1];
		r->task_pid = t->pid;
		r->task_tid = t->tid;
		r->task_ident = t->start;
	}
}

static int record_judge(struct request *r, const struct node *n,
			const struct record_task *t);

/*
 * Whether node @n, of a record (n->rec, inodes.h) whose task is @t
 * (resolved with the node, inodes_node()), is still the task instance
 * its record names, for the reader of @r, whose view is set: -ENOENT
 * once that task is gone (exited and no longer kept) or its number is
 * another task's, whoever asks and however long after (docs/design.md,
 * "Names and identities"). The record's task, in the daemon's numbers,
 * is the request's from here on (record_use()): it is not translated
 * again. A node of no record, or of one that names no task (proc/), is
 * not judged; nor is a task whose start cannot be read (a broken
 * source: its files say so).
 */
static int record_check(struct request *r, const struct node *n,
			const struct record_task *t)
{
	if (!n->rec)
		return 0;
	record_use(r, n, t);
	return record_judge(r, n, t);
}

/*
 * Whether the task @t of @n's record is the one the daemon's number
 * names now: what a read of this request met of it (nodes.h, at no
 * cost), else one read of its start.
 */
static int record_judge(struct request *r, const struct node *n,
			const struct record_task *t)
{
	uint64_t start = 0;
	int ret;

	if (!t->start)
		return 0;
	/* Exact (engine.h): asked now, after what this request read. */
	if (ident_is_pidfs(t->start)) {
		ret = task_identity(r, n, &start);
		return ret < 0 ? ret : start != t->start ? -ENOENT : 0;
	}
	if (r->seen_start && r->seen_pid == t->pid && r->seen_tid == t->tid) {
		start = r->seen_start;
	} else {
		ret = task_start(r, n, &start);
		if (ret < 0)
			return ret;
	}
	return start && start != t->start ? -ENOENT : 0;
}

static void req_end(struct request *r)
{
	views_put(r->env->views, r->view);
}

/*
 * The reader of @r for the budgets of memory (budget.h), admitted for
 * @n: its uid in its view. A node outside proc/, the same in every
 * view, asks no view (it would cost a look at the reader's namespace
 * at every lookup): its reader is the uid in BUDGET_NS_ANY. Refused
 * there, root is asked again in its view, where the host's root is
 * held to its own budget alone. NULL and *@err (-ENOMEM) when refused.
 */
static struct budget_reader *req_admit(struct request *r, const struct node *n,
				       int *err)
{
	struct budget_reader *who;
	bool host_root;

	if (r->view) {
		host_root = r->uid == 0 &&
			    r->view->ns_ino == views_own_ns(r->env->views);
		who = budget_reader_get(r->view->ns_ino, r->uid, host_root);
	} else {
		who = budget_reader_get(BUDGET_NS_ANY, r->uid, false);
	}
	*err = who ? budget_admit(who, node_ino(n)) : -ENOMEM;
	if (*err == 0)
		return who;
	budget_reader_put(who);
	if (*err == -ENOMEM && !r->view && r->uid == 0) {
		req_view((fuse_req_t)r->ctx, r);
		return req_admit(r, n, err);
	}
	return NULL;
}

/*
 * Who pays for the records a lookup of @r makes (inodes.h): its uid in
 * its view (outside proc/, in any), and that reader's budget. Release
 * with payer_put().
 */
static void req_payer(struct request *r, struct record_payer *p)
{
	p->uid = r->uid;
	p->ns = r->view ? r->view->ns_ino : BUDGET_NS_ANY;
	p->reader = budget_reader_get(
		p->ns, r->uid,
		r->view && r->uid == 0 &&
			r->view->ns_ino == views_own_ns(r->env->views));
}

static void payer_put(struct record_payer *p)
{
	budget_reader_put(p->reader);
	p->reader = NULL;
}

/* ---- operations --------------------------------------------------- */

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;

	/*
	 * The targets of proc/self and groups/current depend on the
	 * reader: the kernel must ask for them at every use.
	 */
	conn->want &= ~FUSE_CAP_CACHE_SYMLINKS;
	/*
	 * Every listing with its directories' entries (READDIRPLUS), not
	 * the first page alone: a glob lists a directory whole before it
	 * looks anything up in it.
	 */
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	clock_gettime(CLOCK_REALTIME, &fs->env.mount_time);
}

static void task_exited(void *ctx, pid_t tgid, pid_t tid);

/* The mount is going: nothing of it is dropped from now on. */
static void fs_destroy(void *userdata)
{
	struct fs *fs = userdata;
	struct fs_dropper *d = fs->dropper;

	if (fs->watching)
		listener_unwatch(fs->env.listener, task_exited, fs);
	fs->watching = false;

	pthread_mutex_lock(&d->lock);
	if (fs->registered) {
		fs->registered = false;
		if (fs->next == fs) {
			d->mounts = NULL;
		} else {
			fs->prev->next = fs->next;
			fs->next->prev = fs->prev;
			if (d->mounts == fs)
				d->mounts = fs->prev;
		}
	}
	while (d->busy == fs)
		pthread_cond_wait(&d->done, &d->lock);
	pthread_mutex_unlock(&d->lock);
}

/*
 * How long the kernel may keep a name or attributes of @n. Below proc/,
 * while the access rules decide reader by reader (by ids, capabilities,
 * the reader's own process, none of which a view's slot says), never:
 * every walk and stat asks, so that a name cached for one reader never
 * serves another who may not see it.
 */
static double node_cached_for(struct request *r, const struct node *n)
{
	enum hidepid hidepid = r->env->access.hidepid;

	if (!tree_in_proc(n) || n->kind == K_PROC || hidepid == HIDEPID_OFF)
		return FS_TIMEOUT_S;
	/* noaccess: a process's directory is the same for everyone;
	 * what is in it is not, whoever looked it up. */
	if (hidepid == HIDEPID_NOACCESS)
		return n->kind == K_TGID ? FS_TIMEOUT_S : 0;
	return request_only_uid(r) == VIEW_ALL_UIDS ? FS_TIMEOUT_S : 0;
}

/*
 * How long the kernel may keep a name. The links' targets depend on
 * the reader: never. proc/ itself, while each walk must ask which view
 * it enters: never; otherwise a tick (see fs.h).
 */
static double entry_timeout(struct request *r, const struct node *n,
			    mode_t mode)
{
	if (S_ISLNK(mode))
		return 0;
	if (n->kind == K_PROC)
		return proc_walks_ask(r) ? 0 : FS_PROC_TIMEOUT_S;
	/* A task's name is kept only where its exit drops it (no exit
	 * listener: a number taken again would find the name of the task
	 * that had it, which answers ENOENT, not the new task). */
	if ((n->kind == K_TGID || n->kind == K_TID) &&
	    !req_fs((fuse_req_t)r->ctx)->watching)
		return 0;
	return node_cached_for(r, n);
}

/* A file's content; inodes.h frees one it holds with text_free(). */
static void text_free(struct rbuf *text)
{
	if (text)
		open_file_free(open_file_of(text));
}

/*
 * Charge @text, node @n's content, to reader @who, at what it takes:
 * its buffer (until an open keeps it: the charge stays), and its copy
 * in the keep (whole pages but for a content of KEEP_INLINE bytes or
 * less), with @extra bytes more (an entry of
 * the snapshot table its open made). The buffer grew by doubling: a
 * large one gives back what it does not use first. 0, or -ENOMEM past
 * the budget.
 */
static int text_charge(struct budget_reader *who, const struct node *n,
		       struct rbuf *text, size_t extra)
{
	char *fit;

	if (text->cap > 4096 && text->cap - text->len > text->len / 8) {
		fit = realloc(text->data, text->len + 1);
		if (fit) {
			text->data = fit;
			text->cap = text->len + 1;
		}
	}
	return budget_charge(who, node_ino(n),
			     budget_block_bytes(open_file_of(text)) +
				     budget_block_bytes(text->data) +
				     keep_cost(text->len) + extra,
			     &open_file_of(text)->charge);
}

/*
 * The content of file @n, now, for the reader of @r, in a new buffer.
 * While a table is made (milliseconds for thousands of tasks), other
 * workers take the mount's next requests.
 */
static int render_text(struct request *r, const struct node *n,
		       struct rbuf **out)
{
	struct open_file *of = open_file_new();
	int ret;

	if (!of)
		return -ENOMEM;
	if (tree_grows(n))
		serve_may_block();
	ret = tree_render(r, n, &of->text);
	if (ret < 0) {
		open_file_free(of);
		return ret;
	}
	*out = &of->text;
	return 0;
}

/* A listing's parts, as listing_open() laid them out. */
static int listing_parse(const char *data, size_t bytes, const uint64_t **start,
			 size_t *count)
{
	uint64_t n;

	if (bytes < 2 * sizeof(uint64_t))
		return -EIO;
	memcpy(&n, data, sizeof(n));
	if (n > bytes / sizeof(uint64_t) - 2)
		return -EIO;
	*start = (const uint64_t *)(const void *)data + 1;
	*count = (size_t)n;
	if ((*start)[n] > bytes - (n + 2) * sizeof(uint64_t))
		return -EIO;
	return 0;
}

void fs_set_view_record(struct fs *fs, struct view_record *record)
{
	views_set_record(fs->env.views, record);
}

/* The keep's record area: the inode records, then the opens' owners. */
#define OWNERS_BYTES OPENS_AREA_BYTES(FS_KEEP_SLOTS)

int fs_set_keep(struct fs *fs, int fd)
{
	struct inodes *ins;
	void *area, *owners = NULL;
	size_t bytes;
	int ret;

	ret = keep_map(fd, &fs->keep);
	if (ret < 0)
		return ret;
	/* The records in the keep's memory, as a dead server left them
	 * (in this server's alone where the keep has no record area). */
	area = keep_records(fs->keep, &bytes);
	/* Who each content is charged to, after the records, where a
	 * keep made by this version has room for it. */
	if (area && bytes >= RECORDS_AREA_BYTES + OWNERS_BYTES) {
		owners = (char *)area + RECORDS_AREA_BYTES;
		bytes = RECORDS_AREA_BYTES;
	}
	ret = inodes_new(fs->env.views, area, bytes, text_free, &ins);
	if (ret < 0)
		return ret;
	__atomic_store_n(&fs->ins, ins, __ATOMIC_RELEASE);
	ret = opens_new(fs->keep, FS_KEEP_SLOTS, ins, owners, &fs->opens);
	if (ret < 0)
		return ret;
	return 0;
}

int fs_keep_create(size_t data_bytes)
{
	return keep_create(FS_KEEP_SLOTS, data_bytes,
			   RECORDS_AREA_BYTES + OWNERS_BYTES);
}

/*
 * The content of file @n, now, for the reader of @r, charged to @who
 * with @extra bytes more (render_text(), text_charge()). 0, -ENOMEM
 * past the budget, or the render's error.
 */
static int render_charged(struct request *r, const struct node *n,
			  struct budget_reader *who, size_t extra,
			  struct rbuf **out)
{
	int ret = render_text(r, n, out);

	if (ret == 0 && text_charge(who, n, *out, extra) < 0) {
		text_free(*out);
		*out = NULL;
		ret = -ENOMEM;
	}
	return ret;
}

/*
 * Whether a path checked for another reader vouches for this one: not
 * where the access rules judge process by process.
 */
static bool checks_shared(struct request *r)
{
	return r->env->access.hidepid == HIDEPID_OFF ||
	       request_only_uid(r) == VIEW_ALL_UIDS;
}

/*
 * The entry of file @n: its content made now, for the open that
 * follows, and an inode whose size is that content's (inodes.h): a
 * value file's own, kept as its directory's name is; a table's new,
 * looked up again at every walk. Its path is checked once in
 * PATH_CHECKED_MS, where the access rules allow (checks_shared()).
 */
static int lookup_file(struct request *r, const struct node *n,
		       struct fuse_entry_param *ep)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct budget_reader *who;
	struct record_payer payer;
	struct extras_idle idle;
	struct rbuf *text;
	struct owner o;
	struct node dir;
	bool checked = false;
	uint64_t size;
	int ret;

	tree_parent(n, &dir);
	if (checks_shared(r) && inodes_checked(fs->ins, &dir, &o)) {
		tree_stat_owned(r, n, &o, &ep->attr);
	} else {
		ret = tree_check(r, n, &ep->attr);
		if (ret < 0)
			return ret;
		o.uid = ep->attr.st_uid;
		o.gid = ep->attr.st_gid;
		checked = true;
	}
	/* A reader at its budget is refused before anything is made. */
	who = req_admit(r, n, &ret);
	if (!who)
		return ret;
	/* This thread's lookup of it a moment ago made it already. */
	text = inodes_retake(fs->ins, n, r->pid);
	ret = text ? 0 : render_charged(r, n, who, 0, &text);
	if (ret == -ENOENT || ret == -ENOMEM)
		goto out_put;
	/*
	 * Any other failure is a broken source: the name stands, of size
	 * 0, and the open, which renders again, says what went wrong.
	 */
	if (ret < 0)
		text = NULL;
	payer.uid = r->uid;
	payer.ns = r->view ? r->view->ns_ino : BUDGET_NS_ANY;
	payer.reader = who;
	ret = inodes_lookup(fs->ins, n, &o, r->pid, text, checked ? &dir : NULL,
			    &payer, &ep->ino, &size, &idle);
	budget_reader_put(who);
	drop_idle_extras(fs, &idle);
	if (ret < 0) {
		text_free(text);
		return ret;
	}
	ep->attr.st_size = (off_t)size;
	ep->attr.st_blocks = (blkcnt_t)((size + 511) / 512);
	/* A table's inode serves one snapshot: its name is looked up at
	 * every walk. A value file's is the same inode at every lookup. */
	ep->entry_timeout =
		tree_grows(n) ? 0 : entry_timeout(r, n, ep->attr.st_mode);
	return 0;

out_put:
	budget_reader_put(who);
	return ret;
}

/*
 * The generation of an entry of a task that started at @start: the
 * kernel keeps 32 bits of it, and an inode whose generation differs
 * from a reply's is stale, its I/O failed. One inode's generation never
 * changes (a file's is its task's, whatever its length: inodes.h).
 */
static uint64_t entry_generation(uint64_t start)
{
	return (uint32_t)(start ? hash_golden(start) >> 32 : 0);
}

/*
 * Whether the task of directory @n has exited already, though procfs
 * still shows it (a zombie not yet reaped): its exit record came and
 * dropped its names before this lookup, and nothing will drop this
 * one when it is reaped and its number is taken again.
 */
static bool exited_already(struct request *r, const struct node *n)
{
	struct exited_task x;

	if (!r->env->exited || r->view->nowhere)
		return false;
	return exited_find(r->env->exited, r->view->ns_ino, node_pid(n),
			   node_tid(n), clock_mono_ns(), &x) == 0;
}

/*
 * Name directory @n below proc/ in a record: proc/ of a view, a process
 * or a thread (a record of its own: the instance whose start is
 * @start, in directory node ID @parent), or a directory of its
 * directory's record (threads/). Its node ID is then the record's.
 * *@kept: whether it names a task kept since it exited, whose name the
 * kernel must not keep: a live task that takes the number wins.
 */
static int name_dir(struct request *r, struct node *n, uint64_t start,
		    uint64_t parent, bool *kept)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct record_task t = { .start = start, .parent = parent };
	struct record_drops drops;
	struct record_payer who;
	int ret;

	if (n->kind != K_PROC && n->kind != K_TGID && n->kind != K_TID)
		return n->rec ? inodes_hold(fs->ins, n) : 0;
	/* A task's directory: the task as the daemon numbers it, for its
	 * requests and its exit (unknown for a task kept since it exited
	 * in a view whose numbers are not the daemon's). */
	*kept = false;
	if (n->kind == K_PROC)
		goto name;
	if (task_of(r, n, &t.pid, &t.tid) < 0) {
		t.pid = r->view->identity ? node_pid(n) : 0;
		t.tid = r->view->identity ? node_tid(n) : 0;
		*kept = true;
	} else {
		*kept = exited_already(r, n);
	}
name:
	req_payer(r, &who);
	ret = inodes_name(fs->ins, n, &t, &who, &drops);
	payer_put(&who);
	drop_names(fs, drops.name, drops.count);
	if (ret == 0)
		sweep_when_grown(fs, inodes_records(fs->ins));
	return ret;
}

/*
 * An error to the kernel. ENOSYS would tell it that the operation is not
 * implemented, for good (an open would then be made without asking):
 * a code of the tree that says so reaches the reader as EIO.
 */
static void reply_error(fuse_req_t req, int err)
{
	fuse_reply_err(req, err == ENOSYS ? EIO : err);
}

/* Tell the kernel node @n, whose lookups are counted (records, or the
 * tables' extra inodes). */
static void lookup_reply(struct request *r, const struct node *n,
			 struct fuse_entry_param *ep)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);

	(void)n;
	if (fuse_reply_entry((fuse_req_t)r->ctx, ep) == 0)
		return;
	/* Never known (its record too): */
	inodes_forget(fs->ins, ep->ino, 1);
}

/*
 * The node of node ID @ino: a record's, an extra inode's (inodes.h)
 * or the one its number encodes; @t not NULL, its record's task, for
 * record_check(). -ENOENT when it names none.
 */
static int fs_node(struct fs *fs, uint64_t ino, struct node *n,
		   struct record_task *t)
{
	return inodes_node(fs->ins, ino, n, t);
}

static void forget_one(struct fs *fs, fuse_ino_t ino, uint64_t nlookup);

/*
 * The entry of directory or link @n in directory node ID @parent, for
 * the reader of @r (its directory's record checked): below proc/ a
 * process or thread is the one that has its number now, and a
 * directory's lookup is counted in its record (name_dir()).
 */
static int lookup_node(struct request *r, struct node *n, uint64_t parent,
		       struct fuse_entry_param *ep)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	uint64_t start = 0;
	bool kept = false;
	struct owner o;
	int ret;

	if ((n->kind == K_TGID || n->kind == K_TID) && checks_shared(r))
		goto task;
	ret = tree_check(r, n, &ep->attr);
	if (ret == 0 && (n->kind == K_TGID || n->kind == K_TID))
		ret = task_identity(r, n, &start);
	if (ret == 0 && tree_in_proc(n))
		ret = name_dir(r, n, start, parent, &kept);
	if (ret < 0)
		return ret;
	goto named;
task:
	/*
	 * A process or thread: the instance that has the number now, its
	 * record, and its path checked as a lookup in it last found it,
	 * less than PATH_CHECKED_MS ago (a listing's every entry, a
	 * walk's every name), else now.
	 */
	ret = task_identity(r, n, &start);
	if (ret == 0)
		ret = name_dir(r, n, start, parent, &kept);
	if (ret < 0)
		return ret;
	if (inodes_checked(fs->ins, n, &o)) {
		tree_stat_owned(r, n, &o, &ep->attr);
	} else if ((ret = tree_check(r, n, &ep->attr)) < 0) {
		forget_one(fs, node_id(n), 1);
		return ret;
	} else {
		o.uid = ep->attr.st_uid;
		o.gid = ep->attr.st_gid;
		inodes_mark_checked(fs->ins, n, &o);
	}
named:
	ep->ino = node_id(n);
	ep->entry_timeout = kept ? 0 : entry_timeout(r, n, ep->attr.st_mode);
	ep->attr_timeout = node_cached_for(r, n);
	ep->generation = entry_generation(start);
	return 0;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	struct fuse_entry_param ep;
	struct record_task dt = { 0 };
	struct request r;
	struct node dir, n;
	int ret;

	req_begin(req, &r);
	memset(&ep, 0, sizeof(ep));
	ret = fs_node(fs, parent, &dir, &dt); /* its record, resolved once */
	if (ret == 0)
		ret = tree_child(&dir, name, &n);
	if (ret == 0 && tree_in_proc(&n)) {
		ret = req_node_view(req, &r, &n);
		n.view = r.view->slot;
	}
	/*
	 * Below a task's directory: still that task? A file's content is
	 * made first, by that task, and it is judged by the start its
	 * reads met; a directory's before.
	 */
	if (ret == 0 && S_ISREG(tree_mode(&n))) {
		if (dir.rec)
			record_use(&r, &dir, &dt);
		ret = lookup_file(&r, &n, &ep);
		ep.attr_timeout = FS_TIMEOUT_S;
		if (ret == 0 && dir.rec && record_judge(&r, &dir, &dt) < 0) {
			forget_one(fs, ep.ino, 1);
			ret = -ENOENT;
		}
	} else if (ret == 0 && (ret = record_check(&r, &dir, &dt)) == 0) {
		ret = lookup_node(&r, &n, parent, &ep);
	}
	if (ret == 0) {
		lookup_reply(&r, &n, &ep);
	} else {
		reply_error(req, -ret); /* negative entries are not cached */
	}
	req_end(&r);
}

/*
 * The node of file inode @ino: an extra inode's, else the one its
 * number encodes. -ENOENT when it names none, -EISDIR when no file.
 */
static int file_node(struct fs *fs, uint64_t ino, struct node *n,
		     struct record_task *t)
{
	int ret = fs_node(fs, ino, n, t);

	if (ret < 0)
		return ret;
	return S_ISREG(tree_mode(n)) ? 0 : -EISDIR;
}

/*
 * A file's attributes: as its inode's last lookup or open found them,
 * the size its content's; an open file's size is its own content's.
 * An inode not in use (no lookup for a while) is asked about afresh.
 */
static void getattr_file(fuse_req_t req, struct request *r, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct rbuf *now = NULL;
	struct record_task t;
	size_t len = 0;
	struct stat st;
	struct owner o;
	uint64_t size;
	struct node n;
	int ret;

	ret = inodes_attr(fs->ins, ino, &n, &o, &size);
	if (ret == 0) {
		tree_stat_owned(r, &n, &o, &st);
		st.st_size = (off_t)size;
	} else if (!fi) {
		ret = file_node(fs, ino, &n, &t);
		if (ret == 0)
			ret = req_node_view(req, r, &n);
		if (ret == 0)
			ret = record_check(r, &n, &t);
		if (ret == 0) {
			tree_stat(r, &n, &st);
			ret = render_text(r, &n, &now);
		}
		if (ret == 0)
			st.st_size = (off_t)now->len;
		text_free(now);
	}
	if (fi) { /* an open file: its content is what the reader gets */
		if (ret < 0 && file_node(fs, ino, &n, NULL) == 0 &&
		    req_node_view(req, r, &n) == 0) {
			tree_stat(r, &n, &st);
			ret = 0;
		}
		if (ret == 0 &&
		    keep_get(fs->keep, fi->fh, NULL, &len, NULL, NULL) < 0)
			ret = -EIO; /* a handle never given */
		st.st_size = (off_t)len;
	}
	if (ret < 0) {
		reply_error(req, -ret);
		return;
	}
	st.st_blocks = (blkcnt_t)((st.st_size + 511) / 512);
	fuse_reply_attr(req, &st, FS_TIMEOUT_S);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct record_task t;
	struct request r;
	struct stat st;
	struct node n;
	int ret;

	req_begin(req, &r);
	ret = extra_ino(ino) ? 0 : fs_node(fs, ino, &n, &t);
	if (ret == 0 && (extra_ino(ino) || S_ISREG(tree_mode(&n)))) {
		getattr_file(req, &r, ino, fi);
	} else if (ret < 0) {
		fuse_reply_err(req, ENOENT);
	} else {
		/* Asked again for the reader now asking, whoever looked
		 * the name up (a working directory, an O_PATH descriptor),
		 * and whether it is still the task it was. */
		ret = req_node_view(req, &r, &n);
		if (ret == 0)
			ret = record_check(&r, &n, &t);
		if (ret == 0)
			ret = tree_check(&r, &n, &st);
		if (ret < 0)
			reply_error(req, -ret);
		else
			fuse_reply_attr(req, &st, node_cached_for(&r, &n));
	}
	req_end(&r);
}

static void fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct request r;
	char target[32];
	struct node n;
	int ret;

	req_begin(req, &r);
	ret = fs_node(req_fs(req), ino, &n, NULL);
	if (ret == 0)
		ret = req_node_view(req, &r, &n);
	if (ret == 0)
		ret = tree_readlink(&r, &n, target, sizeof(target));
	if (ret < 0)
		reply_error(req, -ret);
	else
		fuse_reply_readlink(req, target);
	req_end(&r);
}

/*
 * Whether a node exists for its reader, asked now: an open without a
 * lookup (a reopen through /proc/self/fd/N, an O_PATH descriptor, a
 * working directory) may come from another reader than the lookup's,
 * long after it.
 */
static int req_check_named(struct request *r, const struct node *n)
{
	struct stat st;

	if (!tree_in_proc(n))
		return 0;
	return tree_check(r, n, &st);
}

/*
 * Grow the kernel's size of inode @ino to the length of @text, content
 * made afresh, before it is served, if the kernel holds less (a page
 * cache reader stops at it). It is done by storing the content's last
 * byte where it belongs (fuse_lowlevel_notify_store()), which grows the
 * size to its end and leaves the page not up to date; a store of no
 * bytes grows nothing (fuse_write_update_attr() since Linux 5.16). The
 * kernel locks that page meanwhile: not from a read of it.
 */
static void grow_size(struct fs *fs, fuse_ino_t ino, const struct rbuf *text)
{
	struct fuse_bufvec last = FUSE_BUFVEC_INIT(1);

	if (!text->len)
		return;
	last.buf[0].mem = text->data + text->len - 1;
	fuse_lowlevel_notify_store(fs->se, ino, (off_t)text->len - 1, &last, 0);
}

/*
 * Inode @ino, file @n, serves @text, made afresh for the reader of @r:
 * recorded as its size and owner (inodes_resize()), and, @grow, the
 * kernel's size grown to it first (grow_size()).
 */
static void told_afresh(struct request *r, fuse_ino_t ino, const struct node *n,
			const struct rbuf *text, bool grow)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct node was;
	struct stat st;
	struct owner o;
	uint64_t size;

	/* The owner its last lookup found, as the kernel has it; else
	 * asked now. */
	if (inodes_attr(fs->ins, ino, &was, &o, &size) < 0) {
		tree_stat(r, n, &st);
		o.uid = st.st_uid;
		o.gid = st.st_gid;
	}
	if (inodes_resize(fs->ins, ino, &o, text->len, grow) && grow)
		grow_size(fs, ino, text);
}

/*
 * An open of file inode @ino, node @n of task @t (its record's), that
 * takes no lookup's content:
 * a second open after one lookup, or one by another thread than the
 * lookup's, which came without a path walk (inodes.h). The content is
 * rendered afresh for this reader and served with direct_io; the
 * inode's size grows first to its length, where it is less
 * (grow_size()), and a short read at the end of a shorter content
 * shrinks it.
 */
static int open_again(fuse_req_t req, fuse_ino_t ino, const struct node *n,
		      const struct record_task *t, struct fuse_file_info *fi,
		      struct rbuf **text)
{
	struct budget_reader *who = NULL;
	struct request r;
	int ret;

	req_begin(req, &r);
	ret = req_node_view(req, &r, n);
	if (ret == 0)
		ret = record_check(&r, n, t);
	/* Where the access rules judge reader by reader, this one may not
	 * be the lookup's; elsewhere every reader of the view sees what
	 * the kernel's cached name shows. */
	if (ret == 0 && !node_cached_for(&r, n))
		ret = req_check_named(&r, n);
	if (ret == 0)
		who = req_admit(&r, n, &ret);
	/* It pays for the table's entry its open may have made too. */
	if (ret == 0)
		ret = render_charged(&r, n, who, inodes_entry_bytes(), text);
	budget_reader_put(who);
	/* The kernel's size may be what a dead server told, or what a
	 * short read left: it grows if it is less. */
	if (ret == 0)
		told_afresh(&r, ino, n, *text, true);
	req_end(&r);
	fi->direct_io = 1;
	fi->keep_cache = 0;
	return ret;
}

/*
 * The content of an open of file inode @ino, node *@n, with the inode
 * held open (inodes_open()): its lookup's, or rendered afresh
 * (open_again()). Nothing is held on failure.
 */
static int open_content(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi, struct node *n,
			struct rbuf **text)
{
	struct fs *fs = req_fs(req);
	struct record_task t;
	int ret;

	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		return -EROFS;
	ret = file_node(fs, ino, n, &t);
	if (ret == 0)
		ret = inodes_open(fs->ins, ino, n, fuse_req_ctx(req)->pid,
				  text);
	if (ret == 0 || ret == 2) {
		/*
		 * The lookup's content, of the size the lookup told: the
		 * kernel empties the inode's page cache of an earlier
		 * lookup's pages at this open, and a page-cache reader
		 * (sendfile, splice, mmap) reads it through there. Reads
		 * come here (direct_io), so that a read at offset 0
		 * after the first takes a new snapshot (fs_read()).
		 * Told more than the lookup before it, the kernel may
		 * have kept the smaller size (inodes.h): it grows.
		 */
		if (ret == 2)
			grow_size(fs, ino, *text);
		fi->direct_io = 1;
		fi->keep_cache = 0;
		return 0;
	}
	if (ret == 1 && (ret = open_again(req, ino, n, &t, fi, text)) < 0)
		inodes_release(fs->ins, ino);
	return ret;
}

/* The open file is one object (opens.h), made whole or not at all. */
static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct rbuf *text = NULL;
	struct node n;
	int ret;

	ret = open_content(req, ino, fi, &n, &text);
	if (ret == 0)
		ret = opens_add(fs->opens, open_file_of(text), ino, node_id(&n),
				&fi->fh);
	if (ret < 0)
		reply_error(req, -ret);
	else if (fuse_reply_open(req, fi) != 0)
		/* The opener was interrupted: no release will come. */
		opens_close(fs->opens, fi->fh);
}

/*
 * Reply with bytes of a snapshot, a file's text or a directory's
 * listing. Named in t/asan.supp: not inlined.
 */
static __attribute__((noinline)) void
reply_from_snapshot(fuse_req_t req, const char *data, size_t size)
{
	fuse_reply_buf(req, data, size);
}

/* A read, answered from a snapshot of a file's text (opens_read()). */
struct fs_reading {
	fuse_req_t req;
	size_t size;
	off_t off;
};

/* Serve @size bytes at @off of the @len at @data: any offset, any size. */
static void reply_snapshot(void *ctx, const char *data, size_t len)
{
	struct fs_reading *rd = ctx;
	size_t size = rd->size;

	if (rd->off < 0) {
		fuse_reply_err(rd->req, EINVAL);
		return;
	}
	if ((uint64_t)rd->off >= len) {
		fuse_reply_buf(rd->req, NULL, 0);
		return;
	}
	if (size > len - (size_t)rd->off)
		size = len - (size_t)rd->off;
	reply_from_snapshot(rd->req, data + rd->off, size);
}

/* A read by thread @pid of open @fh, from the snapshot it reads. */
static void read_open(fuse_req_t req, uint64_t fh, pid_t pid, size_t size,
		      off_t off)
{
	struct fs_reading rd = { req, size, off };
	int ret = opens_read(req_fs(req)->opens, fh, pid, off, size,
			     reply_snapshot, &rd);

	if (ret < 0)
		fuse_reply_err(req, -ret);
}

/*
 * A new snapshot of file @n for the reader of @r, rewinding inode
 * @ino's open @fh, kept as the reading thread's (opens_rewind()).
 * When it is longer than the kernel may think the inode is, the size
 * grows first, as at an open without a lookup (open_again()).
 */
static int rewind_take(struct request *r, fuse_ino_t ino, uint64_t fh,
		       const struct node *n, size_t size)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct budget_reader *who;
	struct rbuf *text;
	int ret;

	who = req_admit(r, n, &ret);
	if (!who)
		return ret;
	ret = render_charged(r, n, who, 0, &text);
	budget_reader_put(who);
	if (ret < 0)
		return ret;
	/* Not from a read of the page that holds its last byte, which the
	 * kernel holds locked till the reply: a read(2) of direct_io
	 * needs no size, and the page cache reads the first page again
	 * only when the kernel dropped it (docs/design.md, "Rewinds"). */
	told_afresh(r, ino, n, text, text->len > size);
	return opens_rewind(fs->opens, fh, r->pid, open_file_of(text));
}

/*
 * A read at offset 0 of open @fh after its first: a new snapshot, for
 * the reading thread, of the file its open took, if it is still the
 * task it was (record_check()) and the reader may still see it, as a
 * reopen would ask (req_check_named()); then the read is served from
 * it. A rewind refused leaves the open rewound: the next read at
 * offset 0 asks again (ENOENT every time once the task is gone), never
 * serving an older snapshot.
 */
static void read_rewound(fuse_req_t req, fuse_ino_t ino, uint64_t fh,
			 size_t size)
{
	struct fs *fs = req_fs(req);
	struct record_task t;
	struct request r;
	uint64_t node;
	struct node n;
	int ret;

	req_begin(req, &r);
	ret = keep_get(fs->keep, fh, NULL, NULL, NULL, &node);
	if (ret == 0)
		ret = fs_node(fs, node, &n, &t);
	if (ret == 0)
		ret = req_node_view(req, &r, &n);
	if (ret == 0)
		ret = record_check(&r, &n, &t);
	if (ret == 0)
		ret = req_check_named(&r, &n);
	if (ret == 0)
		ret = rewind_take(&r, ino, fh, &n, size);
	req_end(&r);
	if (ret < 0) {
		opens_rewind_again(fs->opens, fh);
		reply_error(req, -ret);
	} else {
		read_open(req, fh, r.pid, size, 0);
	}
}

/*
 * A read of open @fh: at offset 0 once the open was read to its end, a
 * new snapshot (rewinds.h); else, and at any other offset, the snapshot
 * the reading thread's last rewind took, else the open's last one.
 */
static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);

	if (off == 0 && opens_is_rewind(fs->opens, fi->fh))
		read_rewound(req, ino, fi->fh, size);
	else
		read_open(req, fi->fh, fuse_req_ctx(req)->pid, size, off);
}

/* An open file or directory is closed: all it held goes (opens.h). */
static void fs_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	opens_close(req_fs(req)->opens, fi->fh);
	fuse_reply_err(req, 0);
}

/*
 * The kernel forgets inodes: extra inodes go, and records below proc/
 * with what their files were told; the others are numbers.
 */
static void forget_one(struct fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	inodes_forget(fs->ins, ino, nlookup);
}

static void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(req_fs(req), ino, nlookup);
	fuse_reply_none(req);
}

static void fs_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	struct fs *fs = req_fs(req);
	size_t i;

	for (i = 0; i < count; i++)
		forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

/* The tree's listing sink: one entry in the kernel's dirent format. */
static int listing_add(void *sink, const char *name, uint64_t ino, mode_t mode)
{
	struct fs_listing *l = sink;
	struct stat st = { .st_ino = ino, .st_mode = mode };
	struct rbuf *b = &l->entries;
	uint64_t *start;
	size_t need;

	if (l->count + 2 > l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		start = realloc(l->start, l->cap * sizeof(*start));
		if (!start)
			return -ENOMEM;
		l->start = start;
	}
	need = fuse_add_direntry(l->req, NULL, 0, name, NULL, 0);
	if (rbuf_reserve(b, need) < 0)
		return -ENOMEM;
	fuse_add_direntry(l->req, b->data + b->len, need, name, &st,
			  (off_t)(l->count + 1));
	l->start[l->count++] = b->len;
	b->len += need;
	l->start[l->count] = b->len;
	return 0;
}

static void listing_free(struct fs_listing *l)
{
	budget_uncharge(&l->charge);
	rbuf_free(&l->entries);
	free(l->start);
	free(l);
}

/*
 * A listing in the keep, as an open directory (opens.h) of inode 0,
 * which no file has: its count, where each of its entries starts
 * (count + 1 numbers), then the entries, charged as @l was. Frees @l.
 * 0, or -ENOMEM.
 */
static int listing_open(struct fs *fs, struct fs_listing *l, uint64_t *fh)
{
	size_t head = (l->count + 2) * sizeof(uint64_t);
	struct open_file *of = open_file_new();
	uint64_t *b;
	int ret = -ENOMEM;

	if (of && rbuf_reserve(&of->text, head + l->entries.len) == 0) {
		b = (uint64_t *)(void *)of->text.data;
		b[0] = l->count;
		if (l->count)
			memcpy(b + 1, l->start,
			       (l->count + 1) * sizeof(uint64_t));
		else
			b[1] = 0;
		if (l->entries.len)
			memcpy((char *)b + head, l->entries.data,
			       l->entries.len);
		of->text.len = head + l->entries.len;
		of->charge = l->charge;
		l->charge.reader = NULL;
		ret = opens_add(fs->opens, of, 0, 0, fh);
	} else {
		open_file_free(of);
	}
	listing_free(l);
	return ret;
}

/* The listing is made here, once: readdir serves it at any offset. */
static void fs_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct budget_reader *who = NULL;
	struct fs_listing *l = NULL;
	struct record_task t;
	struct request r;
	struct stat st;
	struct node n;
	int ret;

	req_begin(req, &r);
	ret = fs_node(req_fs(req), ino, &n, &t);
	if (ret == 0 && !S_ISDIR(tree_mode(&n)))
		ret = -ENOTDIR;
	if (ret == 0)
		ret = req_node_view(req, &r, &n);
	r.entering = true;
	if (ret == 0)
		ret = record_check(&r, &n, &t);
	if (ret == 0)
		ret = tree_check(&r, &n, &st);
	if (ret == 0)
		who = req_admit(&r, &n, &ret);
	if (ret == 0) {
		l = calloc(1, sizeof(*l));
		if (!l)
			ret = -ENOMEM;
	}
	if (ret == 0) {
		l->req = req;
		if (tree_grows(&n))
			serve_may_block();
		ret = tree_list(&r, &n, listing_add, l);
		l->req = NULL;
	}
	/* Held until releasedir: charged to its reader, its copy in the
	 * keep too (listing_open()). */
	if (ret == 0)
		ret = budget_charge(
			who, node_ino(&n),
			budget_block_bytes(l) +
				budget_block_bytes(l->entries.data) +
				budget_block_bytes(l->start) +
				keep_cost((l->count + 2) * sizeof(uint64_t) +
					  l->entries.len),
			&l->charge);
	budget_reader_put(who);
	if (ret == 0)
		ret = listing_open(req_fs(req), l, &fi->fh);
	else if (l)
		listing_free(l);
	if (ret < 0)
		reply_error(req, -ret);
	else if (fuse_reply_open(req, fi) != 0)
		opens_close(req_fs(req)->opens, fi->fh);
	req_end(&r);
}

/* The whole entries from index @off on that fit in @size bytes. */
static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	const uint64_t *start;
	const char *data;
	size_t count, from, len, bytes;

	(void)ino;
	if (keep_get(req_fs(req)->keep, fi->fh, &data, &bytes, NULL, NULL) <
		    0 ||
	    listing_parse(data, bytes, &start, &count) < 0) {
		fuse_reply_err(req, EIO); /* a handle never given */
		return;
	}
	data += (count + 2) * sizeof(uint64_t);
	tree_listing_slice(start, count, off, size, &from, &len);
	reply_from_snapshot(req, len ? data + from : NULL, len);
}

/* The most bytes one READDIRPLUS reply holds. */
#define PLUS_BYTES 65536

/*
 * An entry's own bytes in a listing (fuse_add_direntry()'s struct
 * fuse_dirent: ino, off, namelen, type, the name), into @name (NUL
 * ended) and *@mode: 0, or -EIO when they are not one.
 */
static int listing_entry(const char *ent, size_t bytes, char *name, size_t size,
			 uint64_t *ino, mode_t *mode)
{
	uint32_t namelen, type;

	if (bytes < 24)
		return -EIO;
	memcpy(ino, ent, sizeof(*ino));
	memcpy(&namelen, ent + 16, sizeof(namelen));
	memcpy(&type, ent + 20, sizeof(type));
	if (namelen >= size || 24 + (size_t)namelen > bytes)
		return -EIO;
	memcpy(name, ent + 24, namelen);
	name[namelen] = '\0';
	*mode = (mode_t)type << 12;
	return 0;
}

/*
 * The entry a listing of @dir (of record task @dt) gives child @name
 * with its attributes, as a lookup of it would: a directory (below
 * proc/, a process or a thread named in its record), counted as one
 * lookup; @dir NULL: none. Nothing for a file or link (ep->ino 0: the kernel looks it
 * up when it is used: a file's size is its content's, which only its
 * lookup renders), for "." and "..", or for a child gone since the
 * listing was made.
 */
static void plus_entry(struct request *r, const struct node *dir,
		       uint64_t parent, const char *name, uint64_t ino,
		       mode_t mode, struct fuse_entry_param *ep)
{
	struct node n;

	memset(ep, 0, sizeof(*ep));
	ep->attr.st_mode = mode;
	ep->attr.st_ino = ino;
	if (!dir || !S_ISDIR(mode) || !strcmp(name, ".") || !strcmp(name, ".."))
		return;
	r->task_pid = 0;
	r->task_ident = 0;
	r->seen_start = 0;
	/* proc/ is asked which view a walk enters (fs.h). */
	if (tree_child(dir, name, &n) < 0 || n.kind == K_PROC)
		return;
	if (tree_in_proc(&n))
		n.view = r->view->slot;
	if (lookup_node(r, &n, parent, ep) < 0) {
		memset(ep, 0, sizeof(*ep));
		ep->attr.st_mode = mode;
		ep->attr.st_ino = ino;
	}
}

/*
 * READDIRPLUS: the entries from index @off on that fit in @size bytes,
 * each directory's with its node and attributes (plus_entry()), so that
 * a walk or a glob over a listing asks nothing more of those names.
 * A reply the kernel never got counts none of them.
 */
static void fs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct fuse_entry_param ep;
	uint64_t named[PLUS_BYTES / 128];
	struct record_task dt;
	const uint64_t *start = NULL;
	size_t count = 0, bytes, len = 0, need, i, nnamed = 0;
	uint64_t child;
	const char *data;
	char name[256], *buf = NULL;
	struct request r;
	struct node dir;
	bool dir_named;
	mode_t mode;
	int ret;

	req_begin(req, &r);
	if (size > PLUS_BYTES)
		size = PLUS_BYTES;
	ret = keep_get(fs->keep, fi->fh, &data, &bytes, NULL, NULL);
	if (ret == 0)
		ret = listing_parse(data, bytes, &start, &count);
	if (ret < 0) {
		fuse_reply_err(req, EIO); /* a handle never given */
		goto out;
	}
	data += (count + 2) * sizeof(uint64_t);
	/*
	 * The directory, for its reader now, still the task it was: else
	 * its listing is served as it was made, without entries (a
	 * directory's listing outlives its task, as in procfs; and glibc
	 * takes ENOENT from getdents for the end of a listing).
	 */
	dir_named = fs_node(fs, ino, &dir, &dt) == 0 &&
		    req_node_view(req, &r, &dir) == 0 &&
		    record_check(&r, &dir, &dt) == 0;
	buf = malloc(size);
	ret = buf ? 0 : -ENOMEM;
	for (i = off < 0 ? count : (size_t)off; ret == 0 && i < count; i++) {
		if (listing_entry(data + start[i], start[i + 1] - start[i],
				  name, sizeof(name), &child, &mode) < 0) {
			ret = -EIO;
			break;
		}
		plus_entry(&r, dir_named ? &dir : NULL, ino, name, child, mode,
			   &ep);
		need = fuse_add_direntry_plus(req, buf + len, size - len, name,
					      &ep, (off_t)(i + 1));
		if (need > size - len || nnamed == sizeof(named) / 8) {
			if (ep.ino)
				forget_one(fs, ep.ino, 1);
			break;
		}
		len += need;
		if (ep.ino)
			named[nnamed++] = ep.ino;
	}
	if (ret < 0 && !len) {
		reply_error(req, -ret);
	} else if (fuse_reply_buf(req, buf, len) != 0) {
		while (nnamed)
			forget_one(fs, named[--nnamed], 1);
	}
out:
	free(buf);
	req_end(&r);
}

/*
 * Nothing here can be changed. The mount is read-only, so the kernel
 * refuses most changes itself; these answer when it is mounted rw.
 */
static void rofs(fuse_req_t req)
{
	fuse_reply_err(req, EROFS);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	(void)ino;
	(void)attr;
	(void)to_set;
	(void)fi;
	rofs(req); /* chmod, chown, truncate, utimens */
}

static void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	rofs(req);
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	(void)parent;
	(void)name;
	(void)mode;
	rofs(req);
}

static void fs_remove(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	rofs(req); /* unlink, rmdir */
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	rofs(req);
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	(void)parent;
	(void)name;
	(void)newparent;
	(void)newname;
	(void)flags;
	rofs(req);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	rofs(req);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	(void)buf;
	(void)size;
	(void)off;
	(void)fi;
	rofs(req);
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)fi;
	rofs(req);
}

static void fs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	(void)ino;
	(void)name;
	(void)value;
	(void)size;
	(void)flags;
	rofs(req);
}

static void fs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	(void)name;
	rofs(req);
}

static const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_init,
	.destroy = fs_destroy,
	.lookup = fs_lookup,
	.forget = fs_forget,
	.forget_multi = fs_forget_multi,
	.getattr = fs_getattr,
	.readlink = fs_readlink,
	.open = fs_open,
	.read = fs_read,
	/* No .flush: the kernel then stops sending FLUSH at every close. */
	.release = fs_release,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.readdirplus = fs_readdirplus,
	.releasedir = fs_release, /* an open directory is an open file too */
	.setattr = fs_setattr,
	.mknod = fs_mknod,
	.mkdir = fs_mkdir,
	.unlink = fs_remove,
	.rmdir = fs_remove,
	.symlink = fs_symlink,
	.rename = fs_rename,
	.link = fs_link,
	.write = fs_write,
	.create = fs_create,
	.setxattr = fs_setxattr,
	.removexattr = fs_removexattr,
};

const struct fuse_lowlevel_ops *fs_operations(void)
{
	return &fs_ops;
}

int fs_new(struct engine *engine, struct views *views,
	   const struct access_policy *access, struct fs_dropper *dropper,
	   struct fs **out)
{
	struct fs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return -ENOMEM;
	fs->env.engine = engine;
	fs->env.views = views;
	fs->env.access = *access;
	fs->env.uid = getuid();
	fs->env.gid = getgid();
	fs->dropper = dropper;
	pthread_mutex_lock(&dropper->lock);
	if (dropper->mounts) {
		fs->next = dropper->mounts->next;
		fs->prev = dropper->mounts;
		fs->next->prev = fs;
		fs->prev->next = fs;
	} else {
		fs->next = fs->prev = fs;
		dropper->mounts = fs;
	}
	fs->registered = true;
	fs->sweep_at = FS_SWEEP_EVERY;
	pthread_mutex_unlock(&dropper->lock);
	*out = fs;
	return 0;
}

void fs_set_session(struct fs *fs, struct fuse_session *se)
{
	fs->se = se;
}

/*
 * A task exited (the listener's thread, listener.h): the kernel drops
 * the names of its directories, in every view, so that the next walk
 * looks the number up afresh, and a task that takes it is a new name.
 */
static void task_exited(void *ctx, pid_t tgid, pid_t tid)
{
	struct fs *fs = ctx;
	struct inodes *ins = __atomic_load_n(&fs->ins, __ATOMIC_ACQUIRE);
	struct record_name names[16];

	if (ins) /* none before fs_set_keep() */
		drop_names(fs, names,
			   inodes_of_task(ins, tgid, tid, names, 16));
}

void fs_set_exited(struct fs *fs, struct exited *x, struct listener *l)
{
	if (fs->watching)
		listener_unwatch(fs->env.listener, task_exited, fs);
	fs->watching = false;
	fs->env.exited = x;
	fs->env.listener = l;
	if (l && listener_watch(l, task_exited, fs) == 0)
		fs->watching = true;
}

void fs_free(struct fs *fs)
{
	if (!fs)
		return;
	fs_destroy(fs);
	/* Their contents stay in the keep, for a successor. */
	opens_free(fs->opens);
	inodes_free(fs->ins);
	keep_unmap(fs->keep);
	free(fs);
}
