/*
 * view_ns: a view's numbers, translated to the daemon's and back: by the
 * nsfs ioctls, or the nspid way (NSpid lines, the chains of namespaces
 * met, and each view's map of the numbers it met) (view.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "clock.h"
#include "decimal.h"
#include "nspid.h"
#include "procfile.h"
#include "view.h"
#include "view_int.h"

/* The nsfs inode of the PID namespace of the thread the daemon numbers
 * @pid, from "pid:[INODE]"; 0 when it cannot be read. */
ino_t view_ns_of(pid_t pid)
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
enum translate view_probe_translate(void)
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
int view_chain_walk(const struct views *vs, int fd, struct ns_chain *c)
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
	    view_chain_walk(vs, fd, &made) < 0) {
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
	ino_t ns = view_ns_of(pid);
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

struct view_map *view_map_new(void)
{
	struct view_map *m = calloc(1, sizeof(*m));

	if (m) {
		pthread_mutex_init(&m->lock, NULL);
		pthread_mutex_init(&m->scan_lock, NULL);
	}
	return m;
}

void view_map_free(struct view_map *m)
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

struct map_entry view_map_get(struct view_map *m, pid_t nr)
{
	struct map_entry e = { 0, 0, 0 };

	pthread_mutex_lock(&m->lock);
	if (m->cap && map_slot(m, nr)->nr)
		e = *map_slot(m, nr);
	pthread_mutex_unlock(&m->lock);
	return e;
}

/* The inode of /proc/@pid now, 0 when it is gone. */
ino_t view_proc_ino_of(pid_t pid)
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
	struct map_entry e = view_map_get(v->map, nr);
	ino_t ino;

	if (e.pid <= 0)
		return -ENOENT;
	ino = view_proc_ino_of(e.pid);
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

/*
 * Close the chains met last before @idle_before, and those of the
 * @nended namespaces @ended and of namespaces below them (ended too).
 */
void view_chains_drop(struct views *vs, const ino_t *ended, unsigned int nended,
		      long long idle_before)
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
	ns = view_ns_of(pid);
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
