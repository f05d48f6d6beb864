/*
 * req: a FUSE request as a request of the tree (request.h): who asks
 * and in which view (views_caller()), whether the task a node's record
 * names is still that instance (record_check()), how long the kernel
 * may cache what it is told, and which reader's budget pays (budget.h).
 * Called by the operations (dir.c, file.c) on the worker that serves
 * the request; a struct request is that worker's alone.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fs-internal.h"

static uid_t req_only_uid(struct request *r);

void req_begin(fuse_req_t req, struct request *r)
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
int req_node_view(fuse_req_t req, struct request *r, const struct node *n)
{
	if (!tree_in_proc(n) && !tree_in_jobs(n))
		return 0;
	/* jobs/: the reader's own view, whatever its node was named in
	 * (nodes.h's check_job judges the node for it). */
	if (n->kind == K_PROC || tree_in_jobs(n) || !proc_walks_ask(r)) {
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
void record_use(struct request *r, const struct node *n,
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
int record_check(struct request *r, const struct node *n,
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
int record_judge(struct request *r, const struct node *n,
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

void req_end(struct request *r)
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
struct budget_reader *req_admit(struct request *r, const struct node *n,
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
void req_payer(struct request *r, struct record_payer *p)
{
	p->uid = r->uid;
	p->ns = r->view ? r->view->ns_ino : BUDGET_NS_ANY;
	p->reader = budget_reader_get(
		p->ns, r->uid,
		r->view && r->uid == 0 &&
			r->view->ns_ino == views_own_ns(r->env->views));
}

void payer_put(struct record_payer *p)
{
	budget_reader_put(p->reader);
	p->reader = NULL;
}

/*
 * How long the kernel may keep a name or attributes of @n. Below proc/,
 * while the access rules decide reader by reader (by ids, capabilities,
 * the reader's own process, none of which a view's slot says), never:
 * every walk and stat asks, so that a name cached for one reader never
 * serves another who may not see it.
 */
double node_cached_for(struct request *r, const struct node *n)
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
double entry_timeout(struct request *r, const struct node *n, mode_t mode)
{
	if (S_ISLNK(mode))
		return 0;
	/* jobs/ and its cgroups: which cgroup a name is, every walk. */
	if (n->kind == K_JOB)
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

/*
 * Whether a path checked for another reader vouches for this one: not
 * where the access rules judge process by process.
 */
bool checks_shared(struct request *r)
{
	return r->env->access.hidepid == HIDEPID_OFF ||
	       request_only_uid(r) == VIEW_ALL_UIDS;
}

/*
 * An error to the kernel. ENOSYS would tell it that the operation is not
 * implemented, for good (an open would then be made without asking):
 * a code of the tree that says so reaches the reader as EIO.
 */
void reply_error(fuse_req_t req, int err)
{
	fuse_reply_err(req, err == ENOSYS ? EIO : err);
}

/*
 * The node of node ID @ino: a record's, an extra inode's (inodes.h)
 * or the one its number encodes; @t not NULL, its record's task, for
 * record_check(). -ENOENT when it names none.
 */
int fs_node(struct fs *fs, uint64_t ino, struct node *n, struct record_task *t)
{
	return inodes_node(fs->ins, ino, n, t);
}

/*
 * The node of file inode @ino: an extra inode's, else the one its
 * number encodes. -ENOENT when it names none, -EISDIR when no file.
 */
int file_node(struct fs *fs, uint64_t ino, struct node *n,
	      struct record_task *t)
{
	int ret = fs_node(fs, ino, n, t);

	if (ret < 0)
		return ret;
	return S_ISREG(tree_mode(n)) ? 0 : -EISDIR;
}

/*
 * Whether a node exists for its reader, asked now: an open without a
 * lookup (a reopen through /proc/self/fd/N, an O_PATH descriptor, a
 * working directory) may come from another reader than the lookup's,
 * long after it.
 */
int req_check_named(struct request *r, const struct node *n)
{
	struct stat st;

	if (!tree_in_proc(n))
		return 0;
	return tree_check(r, n, &st);
}
