/*
 * drop: the dropper, the thread that has the kernel drop names from its
 * caches for every mount of the daemon (fs-internal.h): proc/ when a
 * second view comes, the names of idle extra inodes (inodes.h), of
 * tasks at their exit (the listener's thread: task_exited()) or found
 * exited by a sweep, and of the views of ended namespaces. Requests
 * queue names under the dropper's lock, which guards every mount's
 * queue; the thread sends them, one name at a time from each mount.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fs-internal.h"

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
void sweep_when_grown(struct fs *fs, size_t count)
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

void drop_proc_entry(struct fs *fs)
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
void drop_names(struct fs *fs, const struct record_name *n, size_t count)
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
void drop_idle_extras(struct fs *fs, const struct extras_idle *idle)
{
	struct record_name rn[EXTRAS_SWEEP_MAX];
	unsigned int i;

	for (i = 0; i < idle->count; i++)
		file_name(&idle->node[i], &rn[i]);
	drop_names(fs, rn, idle->count);
}

/*
 * Slots are being reused: have the kernel drop the names it still
 * holds of views idle for VIEW_IDLE_S, so that their slots free unless
 * something holds one open (view.h).
 */
void drop_idle_views(struct fs *fs)
{
	unsigned int slot[16], nslots;
	struct record_name n[FS_DROP_QUEUE];

	nslots = views_idle_held(fs->env.views, slot, 16);
	if (nslots)
		drop_names(fs, n,
			   inodes_in_slots(fs->ins, slot, nslots, n,
					   FS_DROP_QUEUE));
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

/* Register @fs with its dropper, in the ring of mounts. */
void dropper_add(struct fs *fs)
{
	struct fs_dropper *dropper = fs->dropper;

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
}

/* The mount is going: nothing of it is dropped from now on. */
void dropper_remove(struct fs *fs)
{
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
