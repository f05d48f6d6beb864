/*
 * view: PID namespaces and the table of views (their numbers: view_ns.c).
 *
 * A reader's namespace is the link /proc/PID/ns/pid of its thread,
 * always read in the real /proc, whatever procfs root the engine reads:
 * the reader is a real process. Its inode names the namespace; an open
 * descriptor of it is what the translating ioctls take.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "clock.h"
#include "log.h"
#include "procfile.h"
#include "view.h"
#include "view_int.h"

/* Slots one uid but root may hold, in every table (atomic). */
static unsigned int views_uid_max = VIEW_UID_MAX;

static int open_pinned(struct views *vs, const char *path, char *err,
		       size_t errlen)
{
	struct ns_chain chain = { .depth = 0 };
	struct stat st;
	int ret;

	vs->pinned_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (vs->pinned_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "pidns=%s: %s", path, strerror(-ret));
		return ret;
	}
	if (ioctl(vs->pinned_fd, NS_GET_NSTYPE) != CLONE_NEWPID ||
	    fstat(vs->pinned_fd, &st) < 0) {
		snprintf(
			err, errlen,
			"pidns=%s: not a PID namespace (want /proc/PID/ns/pid)",
			path);
		return -EINVAL;
	}
	vs->pinned_ino = st.st_ino;
	if (vs->pinned_ino == vs->own_ino)
		return 0;
	if (vs->how == TRANSLATE_NONE) {
		snprintf(err, errlen,
			 "pidns=%s: this kernel cannot translate process "
			 "numbers between namespaces (Linux 4.9 or later can)",
			 path);
		return -ENOTSUP;
	}
	if (vs->how == TRANSLATE_NSPID &&
	    view_chain_walk(vs, vs->pinned_fd, &chain) < 0) {
		snprintf(err, errlen,
			 "pidns=%s: not a namespace below the daemon's", path);
		return -EINVAL;
	}
	vs->pinned_level = chain.depth;
	return 0;
}

int views_new(const char *pinned_path, struct views **out, char *err,
	      size_t errlen)
{
	struct views *vs;
	struct view *own;
	unsigned int i;
	int ret;

	vs = calloc(1, sizeof(*vs));
	if (!vs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&vs->lock, NULL);
	pthread_mutex_init(&vs->chains_lock, NULL);
	pthread_mutex_init(&vs->seen_lock, NULL);
	vs->pinned_fd = -1;
	for (i = 0; i < VIEW_SLOTS; i++) {
		vs->slot[i].slot = i;
		vs->slot[i].nsfd = -1;
		vs->slot[i].vs = vs;
	}
	vs->own_ino = view_ns_of(getpid());
	vs->how = view_probe_translate();
	if (pinned_path) {
		ret = open_pinned(vs, pinned_path, err, errlen);
		if (ret < 0) {
			views_free(vs);
			return ret;
		}
	}
	own = &vs->slot[VIEW_OWN];
	own->ns_ino = pinned_path ? vs->pinned_ino : vs->own_ino;
	own->only_uid = VIEW_ALL_UIDS;
	own->identity = own->ns_ino == vs->own_ino;
	own->nsfd = own->identity ? -1 : vs->pinned_fd;
	own->level = vs->pinned_level;
	if (!own->identity && vs->how == TRANSLATE_NSPID) {
		own->map = view_map_new();
		if (!own->map) {
			snprintf(err, errlen, "out of memory");
			views_free(vs);
			return -ENOMEM;
		}
	}
	vs->slot[VIEW_NOWHERE].nowhere = true;
	vs->slot[VIEW_NOWHERE].only_uid = VIEW_ALL_UIDS;
	for (i = 0; i < 3; i++) {
		vs->refused[i].slot = VIEW_NOWHERE;
		vs->refused[i].nsfd = -1;
		vs->refused[i].vs = vs;
		vs->refused[i].nowhere = true;
		vs->refused[i].only_uid = VIEW_ALL_UIDS;
	}
	vs->refused[0].error = -EAGAIN;
	vs->refused[1].error = -EMFILE;
	vs->refused[2].error = -ENOMEM;
	vs->used = VIEW_NOWHERE + 1;
	*out = vs;
	return 0;
}

static void slot_clear(struct views *vs, struct view *v)
{
	if (v->nsfd >= 0 && v->nsfd != vs->pinned_fd)
		close(v->nsfd);
	view_map_free(v->map);
	v->map = NULL;
	v->level = 0;
	v->nsfd = -1;
	v->ns_ino = 0;
	v->identity = false;
	v->nowhere = false;
	v->gone = false;
	v->keeper = 0;
	v->keeper_ino = 0;
	v->dropped_s = 0;
}

void views_free(struct views *vs)
{
	unsigned int i;

	if (!vs)
		return;
	for (i = VIEW_NOWHERE + 1; i < vs->used; i++)
		slot_clear(vs, &vs->slot[i]);
	view_map_free(vs->slot[VIEW_OWN].map);
	if (vs->pinned_fd >= 0)
		close(vs->pinned_fd);
	for (i = 0; i < vs->nchains; i++)
		close(vs->chain[i].fd);
	pthread_mutex_destroy(&vs->chains_lock);
	pthread_mutex_destroy(&vs->seen_lock);
	pthread_mutex_destroy(&vs->lock);
	free(vs);
}

ino_t views_pinned(const struct views *vs)
{
	return vs->pinned_ino;
}

ino_t views_own_ns(const struct views *vs)
{
	return vs->own_ino;
}

bool views_can_translate(const struct views *vs)
{
	return vs->how != TRANSLATE_NONE;
}

const char *views_translate(const struct views *vs)
{
	static const char *const name[] = { "none", "ioctl", "nspid" };

	return name[vs->how];
}

/* Note a reader in view @slot; true when the mount just became shared. */
static bool note_reader(struct views *vs, unsigned int slot)
{
	long long now, until;

	if (slot == VIEW_OWN)
		return false;
	now = clock_coarse_s();
	until = __atomic_exchange_n(&vs->shared_until_s, now + VIEW_SHARED_S,
				    __ATOMIC_RELAXED);
	return until <= now;
}

bool views_shared(const struct views *vs)
{
	return __atomic_load_n(&vs->shared_until_s, __ATOMIC_RELAXED) >
	       clock_coarse_s();
}

/* A made view of (@ns, @uid) in the table, referenced; NULL if none. */
static struct view *find_locked(struct views *vs, ino_t ns, uid_t uid)
{
	struct view *v;
	unsigned int i;

	for (i = VIEW_NOWHERE + 1; i < vs->used; i++) {
		v = &vs->slot[i];
		if (v->ns_ino == ns && v->only_uid == uid && !vs->reserved[i] &&
		    !v->gone) {
			v->refs++;
			v->last_used_s = clock_coarse_s();
			return v;
		}
	}
	return NULL;
}

/*
 * Whether @v's slot may be given to another view: the kernel holds no
 * inode of it, no request uses it, and it is free, or its namespace
 * ended, or it was unused for VIEW_IDLE_S. Called locked.
 */
static bool reusable_locked(const struct views *vs, const struct view *v,
			    long long idle_before)
{
	return !v->refs && !v->held && !vs->reserved[v->slot] &&
	       (!v->ns_ino || v->gone || v->last_used_s < idle_before);
}

/*
 * A slot never used, or a reusable one (the free first, then the one
 * unused longest); NULL if none.
 */
static struct view *free_slot_locked(struct views *vs)
{
	long long idle_before = clock_coarse_s() - VIEW_IDLE_S;
	struct view *v, *oldest = NULL;
	unsigned int i;

	/* A quarter left never used: time to free held ones (view.h). */
	vs->crowded = vs->used >= VIEW_SLOTS - VIEW_SLOTS / 4;
	if (vs->used < VIEW_SLOTS)
		return &vs->slot[vs->used++];
	for (i = VIEW_NOWHERE + 1; i < VIEW_SLOTS; i++) {
		v = &vs->slot[i];
		if (!reusable_locked(vs, v, idle_before))
			continue;
		if (!v->ns_ino)
			return v;
		if (!oldest || v->last_used_s < oldest->last_used_s)
			oldest = v;
	}
	if (oldest)
		slot_clear(vs, oldest);
	return oldest;
}

/*
 * Why @holder may not take one more slot: 0 when it may (root always);
 * 1 when it holds uid_max already; 2 when only VIEW_ROOT_RESERVE slots
 * are left. Its slots in *@mine. Called locked.
 */
static int over_locked(const struct views *vs, uid_t holder, unsigned int *mine)
{
	long long idle_before = clock_coarse_s() - VIEW_IDLE_S;
	unsigned int i, left = VIEW_SLOTS - vs->used;
	const struct view *v;

	*mine = 0;
	for (i = VIEW_NOWHERE + 1; i < vs->used; i++) {
		v = &vs->slot[i];
		if (reusable_locked(vs, v, idle_before))
			left++;
		else if (v->holder == holder)
			(*mine)++;
	}
	if (holder == 0)
		return 0;
	if (*mine >= __atomic_load_n(&views_uid_max, __ATOMIC_RELAXED))
		return 1;
	return left <= VIEW_ROOT_RESERVE ? 2 : 0;
}

/* Whether a refusal of @uid is to be logged: once a VIEW_LOG_S. */
static bool log_due_locked(struct views *vs, uid_t uid)
{
	struct logged *e = NULL, *oldest = &vs->logged[0];
	long long now = clock_coarse_s();
	unsigned int i;

	for (i = 0; i < VIEW_LOGGED && !e; i++) {
		if (vs->logged[i].at_s && vs->logged[i].uid == uid)
			e = &vs->logged[i];
		else if (vs->logged[i].at_s < oldest->at_s)
			oldest = &vs->logged[i];
	}
	if (e && now - e->at_s < VIEW_LOG_S)
		return false;
	if (!e)
		e = oldest;
	e->uid = uid;
	e->at_s = now;
	return true;
}

/* Say why @holder, holding @mine slots, was refused (over_locked()). */
static void log_refusal(uid_t holder, int why, unsigned int mine)
{
	if (why == 1)
		log_msg(LOG_WARNING,
			"views: uid %u holds %u views, its bound ([limits] "
			"reader_views): a new one refused (EAGAIN)",
			(unsigned int)holder, mine);
	else
		log_msg(LOG_WARNING,
			"views: all but the %u view slots kept for root are "
			"held: a view for uid %u (holding %u) refused (EAGAIN)",
			VIEW_ROOT_RESERVE, (unsigned int)holder, mine);
}

/* The view of a reader refused with @err (-EAGAIN, -EMFILE, -ENOMEM). */
static struct view *refused(struct views *vs, int err)
{
	return &vs->refused[err == -EAGAIN ? 0 : err == -ENOMEM ? 2 : 1];
}

/*
 * A descriptor of namespace @ns, opened through the thread @pid that is
 * in it: -ENOENT (and the view is empty) when the thread went
 * meanwhile, or the kernel cannot translate; -EMFILE out of
 * descriptors.
 */
static int open_ns(const struct views *vs, pid_t pid, ino_t ns)
{
	char path[48];
	struct stat st;
	int fd;

	if (ns == vs->pinned_ino)
		return vs->pinned_fd;
	if (vs->how == TRANSLATE_NONE)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return procfile_no_fds(errno) ? -EMFILE : -ENOENT;
	if (fstat(fd, &st) < 0 || st.st_ino != ns) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/*
 * The slot a dead server gave the view of (@ns, @uid), which the kernel
 * may still hold inodes of: this view takes it again, and no other
 * ever does. NULL if none.
 */
static struct view *reserved_locked(struct views *vs, ino_t ns, uid_t uid)
{
	unsigned int i;

	for (i = VIEW_NOWHERE + 1; i < vs->used; i++)
		if (vs->reserved[i] && vs->slot[i].ns_ino == ns &&
		    vs->slot[i].only_uid == uid) {
			vs->reserved[i] = false;
			return &vs->slot[i];
		}
	return NULL;
}

void views_set_record(struct views *vs, struct view_record *record)
{
	unsigned int i;

	pthread_mutex_lock(&vs->lock);
	vs->record = record;
	for (i = VIEW_NOWHERE + 1; i < VIEW_SLOTS; i++) {
		if (!record[i].ns_ino)
			continue;
		vs->slot[i].ns_ino = (ino_t)record[i].ns_ino;
		vs->slot[i].only_uid = record[i].uid;
		vs->slot[i].holder = record[i].holder;
		vs->reserved[i] = true;
		if (vs->used <= i)
			vs->used = i + 1;
	}
	pthread_mutex_unlock(&vs->lock);
}

bool views_reserved(struct views *vs, unsigned int slot)
{
	bool r;

	if (slot >= VIEW_SLOTS)
		return false;
	pthread_mutex_lock(&vs->lock);
	r = vs->reserved[slot];
	pthread_mutex_unlock(&vs->lock);
	return r;
}

static struct view *make_view(struct views *vs, pid_t pid, ino_t ns, uid_t uid,
			      uid_t holder)
{
	bool identity = ns == vs->own_ino, logged = false;
	int fd = identity ? -1 : open_ns(vs, pid, ns), err = -EAGAIN, why = 0;
	struct ns_chain chain = { .depth = vs->pinned_level };
	struct view_map *map = NULL;
	struct view *v = NULL;
	unsigned int mine = 0;
	ino_t keeper_ino = 0;

	if (!identity && fd < 0)
		return fd == -EMFILE ? refused(vs, fd) :
				       &vs->slot[VIEW_NOWHERE];
	if (!identity && vs->how == TRANSLATE_NSPID) {
		/* Its depth below the daemon's; its map, empty. */
		err = fd == vs->pinned_fd ? 0 : view_chain_walk(vs, fd, &chain);
		if (err == -ENOENT) { /* not below the daemon's */
			close(fd);
			return &vs->slot[VIEW_NOWHERE];
		}
		map = err < 0 ? NULL : view_map_new();
		if (!map) {
			err = err < 0 ? err : -ENOMEM;
			goto out;
		}
		err = -EAGAIN; /* from here: no slot free */
	}
	if (!identity && fd != vs->pinned_fd)
		keeper_ino = view_proc_ino_of(pid);
	pthread_mutex_lock(&vs->lock);
	v = find_locked(vs, ns, uid); /* made meanwhile by another? */
	if (!v) {
		v = reserved_locked(vs, ns, uid);
		if (!v) {
			why = over_locked(vs, holder, &mine);
			v = why ? NULL : free_slot_locked(vs);
			if (v)
				v->holder = holder;
			logged = why && log_due_locked(vs, holder);
		}
		if (v) {
			if (vs->record) {
				vs->record[v->slot].ns_ino = ns;
				vs->record[v->slot].uid = uid;
				vs->record[v->slot].holder = v->holder;
			}
			v->keeper = keeper_ino ? pid : 0;
			v->keeper_ino = keeper_ino;
			v->ns_ino = ns;
			v->only_uid = uid;
			v->identity = identity;
			v->nsfd = fd;
			v->level = chain.depth;
			v->map = map;
			v->refs = 1;
			v->last_used_s = clock_coarse_s();
			fd = -1;
			map = NULL;
		}
	}
	pthread_mutex_unlock(&vs->lock);
	if (logged)
		log_refusal(holder, why, mine);
out:
	view_map_free(map);
	if (fd >= 0 && fd != vs->pinned_fd)
		close(fd);
	return v ? v : refused(vs, err);
}

struct view *views_caller(struct views *vs, pid_t pid, uid_t only_uid,
			  uid_t holder, bool *shared_now)
{
	struct view *v = &vs->slot[VIEW_NOWHERE];
	ino_t ns;

	/* A pinned mount shows its namespace to every reader, placed or not. */
	if (pid > 0 || vs->pinned_ino) {
		ns = vs->pinned_ino ? vs->pinned_ino : view_ns_of(pid);
		if (ns == vs->slot[VIEW_OWN].ns_ino &&
		    only_uid == VIEW_ALL_UIDS) {
			v = &vs->slot[VIEW_OWN];
		} else if (ns) {
			pthread_mutex_lock(&vs->lock);
			v = find_locked(vs, ns, only_uid);
			pthread_mutex_unlock(&vs->lock);
			if (!v)
				v = make_view(vs, pid, ns, only_uid, holder);
		}
	}
	*shared_now = note_reader(vs, v->slot);
	return v;
}

void views_hold(struct views *vs, unsigned int slot, long delta)
{
	struct view *v;

	if (slot <= VIEW_NOWHERE || slot >= VIEW_SLOTS)
		return;
	v = &vs->slot[slot];
	pthread_mutex_lock(&vs->lock);
	if (delta < 0 && v->held < (unsigned long)-delta)
		v->held = 0;
	else
		v->held += (unsigned long)delta;
	pthread_mutex_unlock(&vs->lock);
}

bool views_crowded(struct views *vs)
{
	bool was;

	pthread_mutex_lock(&vs->lock);
	was = vs->crowded;
	vs->crowded = false;
	pthread_mutex_unlock(&vs->lock);
	return was;
}

unsigned int views_idle_held(struct views *vs, unsigned int *slot,
			     unsigned int max)
{
	long long now = clock_coarse_s(), idle_before = now - VIEW_IDLE_S;
	unsigned int i, n = 0;
	struct view *v;

	pthread_mutex_lock(&vs->lock);
	for (i = VIEW_NOWHERE + 1; i < vs->used && n < max; i++) {
		v = &vs->slot[i];
		if (v->held && !v->refs && v->last_used_s < idle_before &&
		    v->dropped_s < idle_before) {
			v->dropped_s = now;
			slot[n++] = i;
		}
	}
	pthread_mutex_unlock(&vs->lock);
	return n;
}

void views_set_uid_max(unsigned int max)
{
	__atomic_store_n(&views_uid_max, max ? max : 1, __ATOMIC_RELAXED);
}

/*
 * Whether @v's namespace has a process left: its keeper (a task seen
 * in it) is still there, one stat; else its process 1 (which every
 * other process of it outlives by no more than the kernel takes to
 * kill them) is, found and made the keeper: an ioctl, or on the nspid
 * way a pass over /proc, at most VIEW_REAP_SCANS a reap (*@scans: one
 * not asked is taken for alive). Unlocked; @v referenced.
 */
static bool view_alive(struct view *v, unsigned int *scans)
{
	int pid;

	if (v->keeper > 0 && view_proc_ino_of(v->keeper) == v->keeper_ino)
		return true;
	/* A process 1 the map met, gone: a namespace's process 1 is
	 * never another, so it ended, and no pass is needed. */
	if (v->map && view_map_get(v->map, 1).pid > 0 &&
	    !view_proc_ino_of(view_map_get(v->map, 1).pid))
		return false;
	if (v->map && (*scans)++ >= VIEW_REAP_SCANS)
		return true;
	pid = view_to_daemon(v, 1);
	if (pid <= 0)
		return pid != -ENOENT; /* out of descriptors: cannot tell */
	v->keeper = pid;
	v->keeper_ino = view_proc_ino_of(pid);
	return true;
}

/*
 * @v's namespace ended: it shows nothing from now on, and its
 * descriptor and map go; its slot stays its holder's until the kernel
 * holds no inode of it. A successor finds its slot recorded as
 * VIEW_RECORD_ENDED, which no reader's namespace is. Called locked,
 * with no reference to @v left.
 */
static void view_end_locked(struct views *vs, struct view *v)
{
	if (v->nsfd >= 0 && v->nsfd != vs->pinned_fd)
		close(v->nsfd);
	v->nsfd = -1;
	view_map_free(v->map);
	v->map = NULL;
	v->nowhere = true;
	v->gone = true;
	if (vs->record)
		vs->record[v->slot].ns_ino = VIEW_RECORD_ENDED;
}

/* Free @v's slot for any view, and forget it in the record. Locked. */
static void slot_free_locked(struct views *vs, struct view *v)
{
	slot_clear(vs, v);
	vs->reserved[v->slot] = false;
	v->only_uid = 0;
	v->holder = 0;
	v->last_used_s = 0;
	if (vs->record)
		vs->record[v->slot] = (struct view_record){ 0, 0, 0 };
}

/* Whether @v is a view whose namespace may end (not the daemon's, nor
 * the pinned one) that no request uses. Locked. */
static bool may_end_locked(const struct views *vs, const struct view *v)
{
	return v->ns_ino && !v->gone && !vs->reserved[v->slot] &&
	       !v->identity && v->nsfd >= 0 && v->nsfd != vs->pinned_fd &&
	       !v->refs;
}

unsigned int views_reap(struct views *vs, unsigned int *slot, unsigned int max)
{
	long long now = clock_coarse_s(), idle_before = now - VIEW_IDLE_S;
	unsigned int i, n = 0, ncheck = 0, nended = 0, scans = 0;
	unsigned short check[VIEW_SLOTS];
	bool alive[VIEW_SLOTS];
	ino_t ended[VIEW_SLOTS];
	struct view *v;

	pthread_mutex_lock(&vs->lock);
	for (i = VIEW_NOWHERE + 1; i < vs->used; i++) {
		v = &vs->slot[i];
		if (may_end_locked(vs, v)) {
			v->refs++;
			check[ncheck++] = (unsigned short)i;
		}
	}
	pthread_mutex_unlock(&vs->lock);
	for (i = 0; i < ncheck; i++)
		alive[i] = view_alive(&vs->slot[check[i]], &scans);
	pthread_mutex_lock(&vs->lock);
	for (i = 0; i < ncheck; i++) {
		v = &vs->slot[check[i]];
		if (--v->refs == 0 && !alive[i]) {
			ended[nended++] = v->ns_ino;
			if (vs->nended < VIEW_SLOTS)
				vs->ended[vs->nended++] = v->ns_ino;
			view_end_locked(vs, v);
		}
	}
	for (i = VIEW_NOWHERE + 1; i < vs->used; i++) {
		v = &vs->slot[i];
		if (v->refs || !(v->gone || (vs->reserved[i] &&
					     v->last_used_s < idle_before)))
			continue;
		if (!v->held)
			slot_free_locked(vs, v);
		else if (n < max && v->dropped_s < idle_before) {
			v->dropped_s = now;
			slot[n++] = i;
		}
	}
	pthread_mutex_unlock(&vs->lock);
	view_chains_drop(vs, ended, nended, now - VIEW_CHAIN_IDLE_S);
	return n;
}

unsigned int views_ended(struct views *vs, ino_t *ns, unsigned int max)
{
	unsigned int n;

	pthread_mutex_lock(&vs->lock);
	n = vs->nended < max ? vs->nended : max;
	memcpy(ns, vs->ended + vs->nended - n, n * sizeof(*ns));
	vs->nended -= n;
	pthread_mutex_unlock(&vs->lock);
	return n;
}

struct view *views_slot(struct views *vs, unsigned int slot)
{
	struct view *v = &vs->slot[VIEW_NOWHERE];

	if (slot <= VIEW_NOWHERE)
		return &vs->slot[slot];
	pthread_mutex_lock(&vs->lock);
	if (slot < vs->used && vs->slot[slot].ns_ino && !vs->reserved[slot]) {
		v = &vs->slot[slot];
		v->refs++;
		v->last_used_s = clock_coarse_s();
	}
	pthread_mutex_unlock(&vs->lock);
	return v;
}

void views_put(struct views *vs, struct view *v)
{
	if (!v || v->slot <= VIEW_NOWHERE)
		return;
	pthread_mutex_lock(&vs->lock);
	v->refs--;
	pthread_mutex_unlock(&vs->lock);
}

bool view_shows_owner(const struct view *v, uid_t uid)
{
	return v->only_uid == VIEW_ALL_UIDS || v->only_uid == uid;
}
