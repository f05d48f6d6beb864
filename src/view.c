/*
 * view: PID namespaces, their numbers, and the table of views.
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
#include <time.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "view.h"

/* Linux 6.10's nsfs ioctls, for headers that predate them. */
#ifndef NS_GET_PID_FROM_PIDNS
#define NS_GET_PID_FROM_PIDNS _IOR(NSIO, 0x6, int)
#endif
#ifndef NS_GET_PID_IN_PIDNS
#define NS_GET_PID_IN_PIDNS _IOR(NSIO, 0x8, int)
#endif

struct views {
	pthread_mutex_t lock;
	ino_t own_ino; /* the daemon's namespace */
	ino_t pinned_ino; /* 0: each reader's own */
	int pinned_fd;
	bool translate;
	unsigned int used; /* slots below this were made at least once */
	long long shared_until_s; /* atomic */
	struct view slot[VIEW_SLOTS];
};

static long long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (long long)ts.tv_sec;
}

/* The nsfs inode of the PID namespace of the thread the daemon numbers
 * @pid, from "pid:[INODE]"; 0 when it cannot be read. */
static ino_t ns_of(pid_t pid)
{
	char path[48], link[64];
	unsigned long long ino;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	if (sscanf(link, "pid:[%llu]", &ino) != 1)
		return 0;
	return (ino_t)ino;
}

/* Whether ioctl() on namespace descriptors translates numbers here. */
static bool kernel_translates(void)
{
	int fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = ioctl(fd, NS_GET_PID_IN_PIDNS, (int)getpid()) == (int)getpid();
	close(fd);
	return ok;
}

static int open_pinned(struct views *vs, const char *path, char *err,
		       size_t errlen)
{
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
	if (vs->pinned_ino != vs->own_ino && !vs->translate) {
		snprintf(err, errlen,
			 "pidns=%s: this kernel cannot translate process "
			 "numbers between namespaces (Linux 6.10 or later can)",
			 path);
		return -ENOTSUP;
	}
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
	vs->pinned_fd = -1;
	for (i = 0; i < VIEW_SLOTS; i++) {
		vs->slot[i].slot = i;
		vs->slot[i].nsfd = -1;
	}
	vs->own_ino = ns_of(getpid());
	vs->translate = kernel_translates();
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
	vs->slot[VIEW_NOWHERE].nowhere = true;
	vs->slot[VIEW_NOWHERE].only_uid = VIEW_ALL_UIDS;
	vs->used = VIEW_NOWHERE + 1;
	*out = vs;
	return 0;
}

static void slot_clear(struct views *vs, struct view *v)
{
	if (v->nsfd >= 0 && v->nsfd != vs->pinned_fd)
		close(v->nsfd);
	v->nsfd = -1;
	v->ns_ino = 0;
	v->identity = false;
	v->nowhere = false;
}

void views_free(struct views *vs)
{
	unsigned int i;

	if (!vs)
		return;
	for (i = VIEW_NOWHERE + 1; i < vs->used; i++)
		slot_clear(vs, &vs->slot[i]);
	if (vs->pinned_fd >= 0)
		close(vs->pinned_fd);
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
	return vs->translate;
}

/* Note a reader in view @slot; true when the mount just became shared. */
static bool note_reader(struct views *vs, unsigned int slot)
{
	long long now, until;

	if (slot == VIEW_OWN)
		return false;
	now = now_s();
	until = __atomic_exchange_n(&vs->shared_until_s, now + VIEW_SHARED_S,
				    __ATOMIC_RELAXED);
	return until <= now;
}

bool views_shared(const struct views *vs)
{
	return __atomic_load_n(&vs->shared_until_s, __ATOMIC_RELAXED) > now_s();
}

/* A made view of (@ns, @uid) in the table, referenced; NULL if none. */
static struct view *find_locked(struct views *vs, ino_t ns, uid_t uid)
{
	struct view *v;
	unsigned int i;

	for (i = VIEW_NOWHERE + 1; i < vs->used; i++) {
		v = &vs->slot[i];
		if (v->ns_ino == ns && v->only_uid == uid) {
			v->refs++;
			v->last_used_s = now_s();
			return v;
		}
	}
	return NULL;
}

/* A slot never used, or unused for VIEW_IDLE_S; NULL if none. */
static struct view *free_slot_locked(struct views *vs)
{
	long long idle_before = now_s() - VIEW_IDLE_S;
	struct view *v, *oldest = NULL;
	unsigned int i;

	if (vs->used < VIEW_SLOTS)
		return &vs->slot[vs->used++];
	for (i = VIEW_NOWHERE + 1; i < VIEW_SLOTS; i++) {
		v = &vs->slot[i];
		if (v->refs || v->last_used_s >= idle_before)
			continue;
		if (!oldest || v->last_used_s < oldest->last_used_s)
			oldest = v;
	}
	if (oldest)
		slot_clear(vs, oldest);
	return oldest;
}

/*
 * A descriptor of namespace @ns, opened through the thread @pid that is
 * in it: -1 (and the view is empty) when the thread went meanwhile, or
 * the kernel cannot translate.
 */
static int open_ns(const struct views *vs, pid_t pid, ino_t ns)
{
	char path[48];
	struct stat st;
	int fd;

	if (ns == vs->pinned_ino)
		return vs->pinned_fd;
	if (!vs->translate)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_ino != ns) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct view *make_view(struct views *vs, pid_t pid, ino_t ns, uid_t uid)
{
	bool identity = ns == vs->own_ino;
	int fd = identity ? -1 : open_ns(vs, pid, ns);
	struct view *v;

	if (!identity && fd < 0)
		return &vs->slot[VIEW_NOWHERE];
	pthread_mutex_lock(&vs->lock);
	v = find_locked(vs, ns, uid); /* made meanwhile by another? */
	if (!v) {
		v = free_slot_locked(vs);
		if (v) {
			v->ns_ino = ns;
			v->only_uid = uid;
			v->identity = identity;
			v->nsfd = fd;
			v->refs = 1;
			v->last_used_s = now_s();
			fd = -1;
		}
	}
	pthread_mutex_unlock(&vs->lock);
	if (fd >= 0 && fd != vs->pinned_fd)
		close(fd);
	return v ? v : &vs->slot[VIEW_NOWHERE];
}

struct view *views_caller(struct views *vs, pid_t pid, uid_t only_uid,
			  bool *shared_now)
{
	struct view *v = &vs->slot[VIEW_NOWHERE];
	ino_t ns;

	/* A pinned mount shows its namespace to every reader, placed or not. */
	if (pid > 0 || vs->pinned_ino) {
		ns = vs->pinned_ino ? vs->pinned_ino : ns_of(pid);
		if (ns == vs->slot[VIEW_OWN].ns_ino &&
		    only_uid == VIEW_ALL_UIDS) {
			v = &vs->slot[VIEW_OWN];
		} else if (ns) {
			pthread_mutex_lock(&vs->lock);
			v = find_locked(vs, ns, only_uid);
			pthread_mutex_unlock(&vs->lock);
			if (!v)
				v = make_view(vs, pid, ns, only_uid);
		}
	}
	*shared_now = note_reader(vs, v->slot);
	return v;
}

struct view *views_slot(struct views *vs, unsigned int slot)
{
	struct view *v = &vs->slot[VIEW_NOWHERE];

	if (slot <= VIEW_NOWHERE)
		return &vs->slot[slot];
	pthread_mutex_lock(&vs->lock);
	if (slot < vs->used && vs->slot[slot].ns_ino) {
		v = &vs->slot[slot];
		v->refs++;
		v->last_used_s = now_s();
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

static int translate(const struct view *v, unsigned long request, pid_t nr)
{
	int ret;

	if (v->nowhere || nr <= 0)
		return -ENOENT;
	if (v->identity)
		return nr;
	ret = ioctl(v->nsfd, request, (int)nr);
	return ret > 0 ? ret : -ENOENT;
}

int view_to_daemon(const struct view *v, pid_t nr)
{
	return translate(v, NS_GET_PID_FROM_PIDNS, nr);
}

int view_from_daemon(const struct view *v, pid_t pid)
{
	return translate(v, NS_GET_PID_IN_PIDNS, pid);
}

bool view_shows_owner(const struct view *v, uid_t uid)
{
	return v->only_uid == VIEW_ALL_UIDS || v->only_uid == uid;
}
