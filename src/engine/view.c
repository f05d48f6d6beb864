/*
 * view: PID namespaces, their numbers, and the table of views.
 *
 * A reader's namespace is the link /proc/PID/ns/pid of its thread,
 * always read in the real /proc, whatever procfs root the engine reads:
 * the reader is a real process. Its inode names the namespace; an open
 * descriptor of it is what the translating ioctls take.
 */
#include <dirent.h>
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

#include "clock.h"
#include "decimal.h"
#include "log.h"
#include "nspid.h"
#include "procfile.h"
#include "view.h"

/* Linux 6.10's nsfs ioctls, for headers that predate them. */
#ifndef NS_GET_PID_FROM_PIDNS
#define NS_GET_PID_FROM_PIDNS _IOR(NSIO, 0x6, int)
#endif
#ifndef NS_GET_PID_IN_PIDNS
#define NS_GET_PID_IN_PIDNS _IOR(NSIO, 0x8, int)
#endif

enum translate { TRANSLATE_NONE, TRANSLATE_IOCTL, TRANSLATE_NSPID };

/* A namespace and its ancestors up to the daemon's: up[depth] is it. */
struct ns_chain {
	ino_t ns;
	unsigned int depth;
	ino_t up[NSPID_LEVELS_MAX];
	/*
	 * In the table: the namespace, held open. A namespace's inode
	 * number is given to a new one once it is gone; held, it is not
	 * gone, and the number names no other namespace while its chain
	 * is kept (a container's namespace nested in another took the
	 * number of one that had just ended, and its processes were
	 * taken for the ended one's, outside the view they were in).
	 */
	int fd;
	long long used_s; /* when last met: unused VIEW_CHAIN_IDLE_S, closed */
};

/* A chain unused this long is closed (views_reap()): the daemon holds
 * no namespace long after the last pass that met it. */
#define VIEW_CHAIN_IDLE_S 10

/* A uid refused a slot is logged once in this many seconds at most. */
#define VIEW_LOG_S 60
/* How many uids' last refusals are remembered for that. */
#define VIEW_LOGGED 64

/* How many views whose keeper is gone a reap looks for process 1 of by
 * a pass over /proc (the nspid way). */
#define VIEW_REAP_SCANS 4

/* The chains of the namespaces met, replaced round the table. */
#define NS_CHAINS 64

/* A number of a view's, the daemon's, and the inode of /proc/PID. */
struct map_entry {
	pid_t nr; /* 0: an empty slot */
	pid_t pid;
	ino_t proc_ino;
};

/* How many numbers a view remembers that a pass did not find. */
#define VIEW_ABSENT 16

/* A view's map of its numbers to the daemon's, open addressing. */
struct view_map {
	pthread_mutex_t lock;
	struct map_entry *e; /* cap of them */
	unsigned int cap, count;
	pthread_mutex_t scan_lock; /* one pass over /proc at a time */
	long long scanned_ns; /* when the last pass began; 0: none yet */
	/* Numbers asked and not found by a pass, and when it began (under
	 * lock): asked again within VIEW_SCAN_MS, they are absent at once. */
	struct absent {
		pid_t nr;
		long long as_of_ns;
	} absent[VIEW_ABSENT];
	unsigned int absent_next;
};

/* Above any pid: the kernel's PID_MAX_LIMIT. */
#define PID_LIMIT (1ULL << 22)

/* A map forgets everything past this many numbers, and starts again. */
#define VIEW_MAP_MAX 65536

/*
 * The namespace of each task a pass over the machine's processes met,
 * kept NS_SEEN_MS, by pid (a slot a pid, the last one wins): a listing
 * of proc/ in a view then reads the link of a task not in it once in
 * NS_SEEN_MS, not at every listing. A task's namespace never changes;
 * a pid reused meanwhile, by a task of the view, could be missed from a
 * listing for that long, and from nothing else.
 */
#define NS_SEEN 8192
#define NS_SEEN_MS 1000

struct ns_seen {
	pid_t pid;
	ino_t ns;
	long long at_ms;
};

struct views {
	pthread_mutex_t lock;
	pthread_mutex_t seen_lock;
	struct ns_seen seen[NS_SEEN];
	ino_t own_ino; /* the daemon's namespace */
	ino_t pinned_ino; /* 0: each reader's own */
	int pinned_fd;
	enum translate how;
	unsigned int pinned_level; /* nspid: the pinned one's depth */
	pthread_mutex_t chains_lock;
	struct ns_chain chain[NS_CHAINS];
	unsigned int nchains, next_chain;
	unsigned int used; /* slots below this were made at least once */
	long long shared_until_s; /* atomic */
	unsigned long long scans; /* atomic: passes over /proc, for info */
	struct view slot[VIEW_SLOTS];
	/* What each slot was given, where a successor finds it (NULL:
	 * nowhere); and the slots a dead server gave, which only their
	 * own view takes again. */
	struct view_record *record;
	bool reserved[VIEW_SLOTS];
	/* The views of readers whose own could not be made: EAGAIN (no
	 * slot free), EMFILE (out of descriptors), ENOMEM. */
	struct view refused[3];
	bool crowded; /* a slot was reused since views_crowded() asked */
	/* The namespaces of views ended since views_ended() asked. */
	ino_t ended[VIEW_SLOTS];
	unsigned int nended;
	struct logged {
		uid_t uid;
		long long at_s;
	} logged[VIEW_LOGGED]; /* the last refusals logged, by uid */
};

/* Slots one uid but root may hold, in every table (atomic). */
static unsigned int views_uid_max = VIEW_UID_MAX;

/* The nsfs inode of the PID namespace of the thread the daemon numbers
 * @pid, from "pid:[INODE]"; 0 when it cannot be read. */
static ino_t ns_of(pid_t pid)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return procfile_ns_ino(path, "pid");
}

/*
 * How this kernel lets numbers be translated: the nsfs ioctls (6.10);
 * else NSpid lines (4.1) and NS_GET_PARENT (4.9, EPERM at the top of
 * what the daemon may see); else not at all.
 */
static enum translate probe_translate(void)
{
	int fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC), parent;
	enum translate how = TRANSLATE_NONE;
	pid_t levels[NSPID_LEVELS_MAX];
	char *status = NULL;

	if (fd < 0)
		return TRANSLATE_NONE;
	if (ioctl(fd, NS_GET_PID_IN_PIDNS, (int)getpid()) == (int)getpid()) {
		how = TRANSLATE_IOCTL;
	} else if (procfile_read_alloc("/proc/self/status", 2048, &status) >=
			   0 &&
		   nspid_parse(status, "NSpid:", levels, NSPID_LEVELS_MAX) >=
			   1) {
		parent = ioctl(fd, NS_GET_PARENT);
		if (parent >= 0 || errno == EPERM)
			how = TRANSLATE_NSPID;
		if (parent >= 0)
			close(parent);
	}
	free(status);
	close(fd);
	return how;
}

/* ---- the nspid way ------------------------------------------------- */

/*
 * The chain of the namespace of @fd, walked up to the daemon's: 0, or
 * -ENOENT when it is not below it (or deeper than a kernel allows),
 * -EMFILE when a parent could not be opened for want of descriptors.
 */
static int chain_walk(const struct views *vs, int fd, struct ns_chain *c)
{
	ino_t seen[NSPID_LEVELS_MAX];
	unsigned int n, i;
	int err;

	n = nspid_chain(fd, vs->own_ino, seen, NSPID_LEVELS_MAX, &err);
	if (err < 0)
		return procfile_no_fds(-err) ? -EMFILE : -ENOENT;
	c->ns = seen[0];
	c->depth = n - 1;
	for (i = 0; i < n; i++)
		c->up[i] = seen[n - 1 - i];
	return 0;
}

/*
 * Whether the namespace @ns of the task the daemon numbers @pid is the
 * namespace @in, @level below the daemon's, or one below that. Chains
 * are kept per namespace: a task's costs a walk the first time only.
 */
static bool ns_within(struct views *vs, pid_t pid, ino_t ns, unsigned int level,
		      ino_t in)
{
	struct ns_chain *c = NULL, made;
	char path[48];
	struct stat st;
	unsigned int i;
	bool within;
	int fd;

	if (ns == in)
		return true;
	pthread_mutex_lock(&vs->chains_lock);
	for (i = 0; i < vs->nchains; i++)
		if (vs->chain[i].ns == ns)
			c = &vs->chain[i];
	if (c)
		c->used_s = clock_coarse_s();
	within = c && c->depth > level && c->up[level] == in;
	pthread_mutex_unlock(&vs->chains_lock);
	if (c)
		return within;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || st.st_ino != ns ||
	    chain_walk(vs, fd, &made) < 0) {
		close(fd);
		return false; /* gone meanwhile, or not below the daemon's */
	}
	made.fd = fd;
	made.used_s = clock_coarse_s();
	pthread_mutex_lock(&vs->chains_lock);
	if (vs->nchains < NS_CHAINS) {
		i = vs->nchains++;
		fd = -1;
	} else {
		i = vs->next_chain++ % NS_CHAINS;
		fd = vs->chain[i].fd; /* the one it replaces */
	}
	vs->chain[i] = made;
	pthread_mutex_unlock(&vs->chains_lock);
	if (fd >= 0)
		close(fd);
	return made.depth > level && made.up[level] == in;
}

/* The nspid way from the daemon's number @pid to @v's. */
static int nspid_from_daemon(const struct view *v, pid_t pid)
{
	pid_t nr[NSPID_LEVELS_MAX];
	char path[48], *status;
	ino_t ns = ns_of(pid);
	int n;

	if (!ns || !ns_within(v->vs, pid, ns, v->level, v->ns_ino))
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = procfile_read_alloc(path, 2048, &status);
	if (procfile_no_fds(-n))
		return n; /* out of descriptors: not a task outside the view */
	if (n < 0)
		return -ENOENT;
	n = nspid_parse(status, "NSpid:", nr, NSPID_LEVELS_MAX);
	free(status);
	if (n <= (int)v->level || nr[0] != pid)
		return -ENOENT;
	return nr[v->level];
}

static struct view_map *map_new(void)
{
	struct view_map *m = calloc(1, sizeof(*m));

	if (m) {
		pthread_mutex_init(&m->lock, NULL);
		pthread_mutex_init(&m->scan_lock, NULL);
	}
	return m;
}

static void map_free(struct view_map *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->scan_lock);
	free(m->e);
	free(m);
}

static unsigned int map_home(const struct view_map *m, pid_t nr)
{
	return ((uint32_t)nr * 2654435761U) & (m->cap - 1);
}

/* The entry of @nr, or the empty one it would take. Called locked. */
static struct map_entry *map_slot(const struct view_map *m, pid_t nr)
{
	unsigned int i;

	for (i = map_home(m, nr); m->e[i].nr && m->e[i].nr != nr;
	     i = (i + 1) & (m->cap - 1))
		;
	return &m->e[i];
}

/* Grow (or, past VIEW_MAP_MAX, empty) the map. Called locked. */
static int map_grow_locked(struct view_map *m)
{
	unsigned int cap = m->cap && m->count < VIEW_MAP_MAX ? m->cap * 2 : 64;
	struct map_entry *e = calloc(cap, sizeof(*e)), *old = m->e;
	unsigned int i, old_cap = m->cap;

	if (!e)
		return -ENOMEM;
	m->e = e;
	m->cap = cap;
	m->count = 0;
	for (i = 0; cap > 64 && i < old_cap; i++) {
		if (!old[i].nr)
			continue;
		*map_slot(m, old[i].nr) = old[i];
		m->count++;
	}
	free(old);
	return 0;
}

/*
 * Remember that @v numbers @nr the task the daemon numbers @pid, whose
 * /proc/PID directory was inode @proc_ino when that was checked (0: not
 * known).
 */
static void map_put(struct view_map *m, pid_t nr, pid_t pid, ino_t proc_ino)
{
	struct map_entry *e;

	pthread_mutex_lock(&m->lock);
	if ((m->count + 1) * 2 > m->cap && map_grow_locked(m) < 0)
		goto out;
	e = map_slot(m, nr);
	if (!e->nr)
		m->count++;
	else if (e->pid == pid && !proc_ino)
		proc_ino = e->proc_ino; /* the same task: what was checked */
	e->nr = nr;
	e->pid = pid;
	e->proc_ino = proc_ino;
out:
	pthread_mutex_unlock(&m->lock);
}

static struct map_entry map_get(struct view_map *m, pid_t nr)
{
	struct map_entry e = { 0, 0, 0 };

	pthread_mutex_lock(&m->lock);
	if (m->cap && map_slot(m, nr)->nr)
		e = *map_slot(m, nr);
	pthread_mutex_unlock(&m->lock);
	return e;
}

/* The inode of /proc/@pid now, 0 when it is gone. */
static ino_t proc_ino_of(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

/*
 * The daemon's number of @nr, if the map knows it and it still holds.
 * A task's /proc/PID keeps its inode while the task lives and procfs
 * keeps it cached, and a pid taken by a new task gets a new one: so an
 * inode as when the number was last checked is that same task, for one
 * stat. Otherwise the number is checked afresh (a readlink and a status
 * read), and the inode noted.
 */
static int map_checked(const struct view *v, pid_t nr)
{
	struct map_entry e = map_get(v->map, nr);
	ino_t ino;

	if (e.pid <= 0)
		return -ENOENT;
	ino = proc_ino_of(e.pid);
	if (!ino)
		return -ENOENT;
	if (ino == e.proc_ino)
		return e.pid;
	if (nspid_from_daemon(v, e.pid) != nr)
		return -ENOENT;
	map_put(v->map, nr, e.pid, ino);
	return e.pid;
}

/* Translate every task listed in directory @dir into @v's map. */
static void map_fill(const struct view *v, const char *dir)
{
	struct dirent *e;
	uint64_t pid;
	int nr;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (decimal_parse(e->d_name, PID_LIMIT, &pid) < 0)
			continue;
		nr = nspid_from_daemon(v, (pid_t)pid);
		if (nr > 0)
			map_put(v->map, nr, (pid_t)pid, 0);
	}
	closedir(d);
}

/*
 * A pass over /proc for @v, as a number missed at @missed_ns asks: none
 * when one began since (it had the number, if anything did), else one,
 * no sooner than VIEW_SCAN_MS after the view's last, waited for. So no
 * sequence of lookups makes more than one pass per VIEW_SCAN_MS in a
 * view, and none misses a number that a pass would have found. When
 * the pass that answers began.
 */
static long long scan_for(const struct view *v, long long missed_ns)
{
	struct view_map *m = v->map;
	struct timespec pause;
	long long wait, began;

	pthread_mutex_lock(&m->scan_lock);
	if (m->scanned_ns >= missed_ns) {
		began = m->scanned_ns;
		pthread_mutex_unlock(&m->scan_lock);
		return began;
	}
	wait = 0;
	if (m->scanned_ns)
		wait = m->scanned_ns + VIEW_SCAN_MS * 1000000LL -
		       (long long)clock_mono_ns();
	if (wait > 0) {
		pause.tv_sec = wait / 1000000000LL;
		pause.tv_nsec = wait % 1000000000LL;
		while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
			;
	}
	began = m->scanned_ns = (long long)clock_mono_ns();
	__atomic_add_fetch(&v->vs->scans, 1, __ATOMIC_RELAXED);
	map_fill(v, "/proc");
	pthread_mutex_unlock(&m->scan_lock);
	return began;
}

unsigned long long views_scans(const struct views *vs)
{
	return __atomic_load_n(&vs->scans, __ATOMIC_RELAXED);
}

/* Whether @nr was not found by a pass that began VIEW_SCAN_MS ago or
 * less. */
static bool absent_lately(struct view_map *m, pid_t nr, long long now)
{
	bool found = false;
	unsigned int i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < VIEW_ABSENT && !found; i++)
		found = m->absent[i].nr == nr &&
			now - m->absent[i].as_of_ns < VIEW_SCAN_MS * 1000000LL;
	pthread_mutex_unlock(&m->lock);
	return found;
}

/* @nr was not found by the pass that began at @as_of_ns. */
static void absent_add(struct view_map *m, pid_t nr, long long as_of_ns)
{
	pthread_mutex_lock(&m->lock);
	m->absent[m->absent_next] = (struct absent){ nr, as_of_ns };
	m->absent_next = (m->absent_next + 1) % VIEW_ABSENT;
	pthread_mutex_unlock(&m->lock);
}

/*
 * A number the map does not know: absent at once when a pass that
 * began VIEW_SCAN_MS ago or less did not find it (a task made since
 * then is missed that long, as a number asked again and again is
 * answered); else after the pass scan_for() makes or waits for.
 */
static int nspid_to_daemon(const struct view *v, pid_t nr)
{
	long long missed_ns = (long long)clock_mono_ns(), as_of;
	int pid = map_checked(v, nr);

	if (pid > 0 || absent_lately(v->map, nr, missed_ns))
		return pid > 0 ? pid : -ENOENT;
	as_of = scan_for(v, missed_ns);
	pid = map_checked(v, nr);
	if (pid == -ENOENT)
		absent_add(v->map, nr, as_of);
	return pid;
}

static int nspid_thread_to_daemon(const struct view *v, pid_t pid, pid_t nr)
{
	char dir[48];
	int tid = map_checked(v, nr);

	if (tid > 0)
		return tid;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	map_fill(v, dir);
	return map_checked(v, nr);
}

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
	    chain_walk(vs, vs->pinned_fd, &chain) < 0) {
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
	vs->own_ino = ns_of(getpid());
	vs->how = probe_translate();
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
		own->map = map_new();
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
	map_free(v->map);
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
	map_free(vs->slot[VIEW_OWN].map);
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
		err = fd == vs->pinned_fd ? 0 : chain_walk(vs, fd, &chain);
		if (err == -ENOENT) { /* not below the daemon's */
			close(fd);
			return &vs->slot[VIEW_NOWHERE];
		}
		map = err < 0 ? NULL : map_new();
		if (!map) {
			err = err < 0 ? err : -ENOMEM;
			goto out;
		}
		err = -EAGAIN; /* from here: no slot free */
	}
	if (!identity && fd != vs->pinned_fd)
		keeper_ino = proc_ino_of(pid);
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
	map_free(map);
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
		ns = vs->pinned_ino ? vs->pinned_ino : ns_of(pid);
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
 * Close the chains met last before @idle_before, and those of the
 * @nended namespaces @ended and of namespaces below them (ended too).
 */
static void chains_drop(struct views *vs, const ino_t *ended,
			unsigned int nended, long long idle_before)
{
	struct ns_chain *c;
	unsigned int i = 0, j, k;
	bool drop;

	pthread_mutex_lock(&vs->chains_lock);
	while (i < vs->nchains) {
		c = &vs->chain[i];
		drop = c->used_s < idle_before;
		for (j = 0; j < nended && !drop; j++)
			for (k = 0; k <= c->depth && !drop; k++)
				drop = c->up[k] == ended[j];
		if (!drop) {
			i++;
			continue;
		}
		close(c->fd);
		*c = vs->chain[--vs->nchains];
	}
	pthread_mutex_unlock(&vs->chains_lock);
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

	if (v->keeper > 0 && proc_ino_of(v->keeper) == v->keeper_ino)
		return true;
	/* A process 1 the map met, gone: a namespace's process 1 is
	 * never another, so it ended, and no pass is needed. */
	if (v->map && map_get(v->map, 1).pid > 0 &&
	    !proc_ino_of(map_get(v->map, 1).pid))
		return false;
	if (v->map && (*scans)++ >= VIEW_REAP_SCANS)
		return true;
	pid = view_to_daemon(v, 1);
	if (pid <= 0)
		return pid != -ENOENT; /* out of descriptors: cannot tell */
	v->keeper = pid;
	v->keeper_ino = proc_ino_of(pid);
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
	map_free(v->map);
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
	chains_drop(vs, ended, nended, now - VIEW_CHAIN_IDLE_S);
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

unsigned long views_held(struct views *vs, unsigned int slot)
{
	unsigned long n = 0;

	if (slot <= VIEW_NOWHERE || slot >= VIEW_SLOTS)
		return 0;
	pthread_mutex_lock(&vs->lock);
	n = vs->slot[slot].held;
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
	if (v->map && !v->nowhere && nr > 0)
		return nspid_to_daemon(v, nr);
	return translate(v, NS_GET_PID_FROM_PIDNS, nr);
}

int view_thread_to_daemon(const struct view *v, pid_t pid, pid_t nr)
{
	if (v->map && !v->nowhere && nr > 0)
		return nspid_thread_to_daemon(v, pid, nr);
	return translate(v, NS_GET_PID_FROM_PIDNS, nr);
}

/* The namespace of task @pid, as a pass met it less than NS_SEEN_MS ago. */
static ino_t seen_ns(struct views *vs, pid_t pid)
{
	struct ns_seen *e = &vs->seen[(unsigned int)pid % NS_SEEN];
	long long now = clock_coarse_ms();
	ino_t ns = 0;

	pthread_mutex_lock(&vs->seen_lock);
	if (e->pid == pid && now - e->at_ms < NS_SEEN_MS)
		ns = e->ns;
	pthread_mutex_unlock(&vs->seen_lock);
	if (ns)
		return ns;
	ns = ns_of(pid);
	pthread_mutex_lock(&vs->seen_lock);
	e->pid = pid;
	e->ns = ns;
	e->at_ms = now;
	pthread_mutex_unlock(&vs->seen_lock);
	return ns;
}

int view_pass_from_daemon(const struct view *v, pid_t pid)
{
	ino_t ns;

	if (v->map && !v->nowhere && pid > 0) {
		ns = seen_ns(v->vs, pid);
		if (!ns || !ns_within(v->vs, pid, ns, v->level, v->ns_ino))
			return -ENOENT;
	}
	return view_from_daemon(v, pid);
}

int view_from_daemon(const struct view *v, pid_t pid)
{
	int nr;

	if (v->map && !v->nowhere && pid > 0) {
		nr = nspid_from_daemon(v, pid);
		if (nr > 0)
			map_put(v->map, nr, pid, 0);
		return nr;
	}
	return translate(v, NS_GET_PID_IN_PIDNS, pid);
}

bool view_shows_owner(const struct view *v, uid_t uid)
{
	return v->only_uid == VIEW_ALL_UIDS || v->only_uid == uid;
}
