/*
 * jobs: the CPU accounting of cgroups (jobs.h): the hierarchy found in
 * mountinfo, cgroups opened by id, their stat files read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobs.h"
#include "procfile.h"
#include "task.h"
#include "units.h"

/* FILEID_KERNFS: a kernfs node's u64 id (the kernel's exportfs.h). */
#define HANDLE_KERNFS 0xfe
/* How deep a cgroup may lie below a view's root, or be walked. */
#define JOBS_DEPTH_MAX 64
/* What was last shown of a cgroup: JOBS_SEEN entries, JOBS_WAYS tried. */
#define JOBS_SEEN 512
#define JOBS_WAYS 8

struct job_seen {
	uint64_t id; /* 0: free */
	uint64_t kernel_ns, user_ns;
	uint64_t used; /* when last shown, in calls */
};

/*
 * What was last shown, in memory shared with every process forked from
 * the one that made it (the supervisor's servers), so that a server
 * that takes over from a dead one keeps to it. One server writes at a
 * time; an entry a dead one left half written holds less than was
 * shown, never more.
 */
struct jobs_seen {
	uint64_t calls;
	struct job_seen entry[JOBS_SEEN];
};

struct jobs {
	enum jobs_source source;
	int root_fd; /* the hierarchy's root; -1: none */
	uint64_t root_id;
	char *mount_root; /* the mount's root in the hierarchy ("/") */
	char *proc_root;
	uint64_t tsc_hz;
	pthread_mutex_t lock; /* *seen */
	struct jobs_seen *seen;
	bool seen_shared; /* mapped shared, else allocated */
};

/* ---- the hierarchy ---------------------------------------------------- */

/* Decode mountinfo's \ooo escapes of @s in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Whether the comma-separated list @list holds @word. */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while (p && *p) {
		if (strncmp(p, word, len) == 0 && (p[len] == ',' || !p[len]))
			return true;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return false;
}

/* Whether @path is @dir or below it. */
static bool path_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, len) == 0 && (path[len] == '/' || !path[len]);
}

/* The source one line of mountinfo offers under @sys, its mount point
 * and root in *@at and *@root (pointing into @line). */
static enum jobs_source line_source(char *line, const char *sys, char **at,
				    char **root)
{
	char *f[6], *sep, *type, *super, *save = NULL;
	int i;

	sep = strstr(line, " - ");
	if (!sep)
		return JOBS_NONE;
	*sep = '\0';
	for (i = 0; i < 6; i++)
		if (!(f[i] = strtok_r(i ? NULL : line, " ", &save)))
			return JOBS_NONE;
	type = strtok_r(sep + 3, " ", &save);
	super = type ? strtok_r(NULL, " ", &save) : NULL;
	super = super ? strtok_r(NULL, " ", &save) : NULL;
	unescape(f[3]);
	unescape(f[4]);
	if (!type || !path_under(f[4], sys))
		return JOBS_NONE;
	*at = f[4];
	*root = f[3];
	if (strcmp(type, "cgroup") == 0 && super && has_word(super, "cpuacct"))
		return JOBS_V1;
	return strcmp(type, "cgroup2") == 0 ? JOBS_V2 : JOBS_NONE;
}

/* Open the hierarchy's root at mount point @at, whose root is @root. */
static int take_mount(struct jobs *j, enum jobs_source s, const char *at,
		      const char *root)
{
	struct stat st;
	char *copy;
	int fd;

	fd = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	copy = strdup(root);
	if (!copy || fstat(fd, &st) < 0) {
		free(copy);
		close(fd);
		return -ENOMEM;
	}
	if (j->root_fd >= 0)
		close(j->root_fd);
	free(j->mount_root);
	j->mount_root = copy;
	j->root_fd = fd;
	j->root_id = (uint64_t)st.st_ino;
	j->source = s;
	return 0;
}

/* The hierarchy, from mountinfo: v1 cpuacct first, else cgroup2. */
static void find_hierarchy(struct jobs *j, const char *sys_root)
{
	char path[PATH_MAX], *text, *line, *save = NULL, *at, *root;
	char *sys = realpath(sys_root, NULL);
	enum jobs_source s, best = JOBS_NONE;

	snprintf(path, sizeof(path), "%s/self/mountinfo", j->proc_root);
	if (!sys || procfile_read_alloc(path, 4096, &text) < 0) {
		free(sys);
		return;
	}
	for (line = strtok_r(text, "\n", &save); line && best != JOBS_V1;
	     line = strtok_r(NULL, "\n", &save)) {
		s = line_source(line, sys, &at, &root);
		if (s == JOBS_NONE || (best == JOBS_V2 && s == JOBS_V2))
			continue;
		if (take_mount(j, s, at, root) == 0)
			best = s;
	}
	free(text);
	free(sys);
}

int jobs_open(const char *proc_root, const char *sys_root, uint64_t tsc_hz,
	      struct jobs **out)
{
	struct jobs *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->root_fd = -1;
	j->tsc_hz = tsc_hz;
	j->proc_root = strdup(proc_root);
	if (!j->proc_root) {
		free(j);
		return -ENOMEM;
	}
	j->seen = mmap(NULL, sizeof(*j->seen), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	j->seen_shared = j->seen != MAP_FAILED;
	if (!j->seen_shared)
		j->seen = calloc(1, sizeof(*j->seen));
	if (!j->seen) {
		free(j->proc_root);
		free(j);
		return -ENOMEM;
	}
	pthread_mutex_init(&j->lock, NULL);
	find_hierarchy(j, sys_root);
	*out = j;
	return 0;
}

void jobs_close(struct jobs *j)
{
	if (!j)
		return;
	if (j->root_fd >= 0)
		close(j->root_fd);
	pthread_mutex_destroy(&j->lock);
	if (j->seen_shared)
		munmap(j->seen, sizeof(*j->seen));
	else
		free(j->seen);
	free(j->mount_root);
	free(j->proc_root);
	free(j);
}

enum jobs_source jobs_source(const struct jobs *j)
{
	return j ? j->source : JOBS_NONE;
}

const char *jobs_source_name(const struct jobs *j)
{
	static const char *const names[] = { "none", "v1", "v2" };

	return names[jobs_source(j)];
}

/* ---- cgroups by id ---------------------------------------------------- */

/* The directory of cgroup @id, opened by its handle. */
static int open_id(struct jobs *j, uint64_t id)
{
	struct {
		struct file_handle h;
		unsigned char id[8];
	} fh;
	int fd;

	if (j->source == JOBS_NONE || id == 0 || id > JOBS_ID_MAX)
		return -ENOENT;
	if (id == j->root_id)
		fd = openat(j->root_fd, ".",
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else {
		fh.h.handle_bytes = sizeof(fh.id);
		fh.h.handle_type = HANDLE_KERNFS;
		memcpy(fh.h.f_handle, &id, sizeof(id));
		fd = open_by_handle_at(j->root_fd, &fh.h,
				       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM))
		return -errno;
	if (fd < 0) /* without CAP_DAC_READ_SEARCH: unreadable */
		return errno == EPERM ? -EIO : -ENOENT;
	return fd;
}

/* Whether the cgroup open at @fd is at or below cgroup @root: walked
 * up by "..", never above the hierarchy's root. */
static int below(struct jobs *j, int fd, uint64_t root)
{
	struct stat st;
	int cur = fd, up, depth, ret = -ENOENT;

	for (depth = 0; depth <= JOBS_DEPTH_MAX; depth++) {
		if (fstat(cur, &st) < 0) {
			ret = -errno;
			break;
		}
		if ((uint64_t)st.st_ino == root) {
			ret = 0;
			break;
		}
		if ((uint64_t)st.st_ino == j->root_id)
			break;
		up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cur != fd)
			close(cur);
		cur = up;
		if (cur < 0)
			return -ENOENT;
	}
	if (cur != fd)
		close(cur);
	return ret;
}

/* The directory of cgroup @id, where it is at or below @root. */
static int open_below(struct jobs *j, uint64_t root, uint64_t id)
{
	int fd = open_id(j, id), ret;

	if (fd < 0)
		return fd;
	ret = below(j, fd, root);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

int jobs_check(struct jobs *j, uint64_t root, uint64_t id)
{
	int fd = open_below(j, root, id);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static bool bad_name(const char *name)
{
	return !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	       strchr(name, '/');
}

int jobs_child(struct jobs *j, uint64_t root, uint64_t dir, const char *name,
	       uint64_t *id)
{
	struct stat st;
	int fd, child, ret = 0;

	if (bad_name(name))
		return -ENOENT;
	fd = open_below(j, root, dir);
	if (fd < 0)
		return fd;
	child = openat(fd, name,
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (child < 0 || fstat(child, &st) < 0)
		ret = -ENOENT;
	else if ((uint64_t)st.st_ino > JOBS_ID_MAX || st.st_ino == 0)
		ret = -ENOENT;
	else
		*id = (uint64_t)st.st_ino;
	if (child >= 0)
		close(child);
	close(fd);
	return ret;
}

int jobs_list(struct jobs *j, uint64_t root, uint64_t dir, jobs_list_fn fn,
	      void *arg)
{
	struct dirent *d;
	struct stat st;
	DIR *dp;
	int fd, ret = 0;

	fd = open_below(j, root, dir);
	if (fd < 0)
		return fd;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	while (ret == 0 && (d = readdir(dp))) {
		if (d->d_type != DT_DIR || bad_name(d->d_name))
			continue;
		if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || (uint64_t)st.st_ino > JOBS_ID_MAX)
			continue; /* gone since, or beyond a node */
		ret = fn(arg, d->d_name, (uint64_t)st.st_ino);
	}
	closedir(dp);
	return ret;
}

/* ---- the accounting --------------------------------------------------- */

/* The whole of small file @name of the cgroup open at @fd, into @buf. */
static int read_at(int fd, const char *name, char *buf, size_t size)
{
	ssize_t n;
	int f;

	f = openat(fd, name, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return errno == ENOENT || errno == ENODEV ? -ENOENT : -EIO;
	n = read(f, buf, size - 1);
	close(f);
	if (n < 0)
		return errno == ENODEV ? -ENOENT : -EIO;
	if ((size_t)n == size - 1)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

/* One value of a file that holds a single number. */
static int read_u64_at(int fd, const char *name, uint64_t *v)
{
	const char *p;
	char buf[64];
	int ret = read_at(fd, name, buf, sizeof(buf));

	if (ret < 0)
		return ret;
	p = buf;
	return procfile_u64(&p, v) < 0 || (*p && *p != '\n') ? -EIO : 0;
}

/* The value of line @key of the key-value text @text. */
static int stat_key(const char *text, const char *key, uint64_t *v)
{
	const char *p = procfile_field(text, key);

	if (!p || procfile_u64(&p, v) < 0 || (*p && *p != '\n'))
		return -EIO;
	return 0;
}

/* The usage, user and system time (ns) of the cgroup open at @fd. */
static int read_usage(struct jobs *j, int fd, uint64_t v[3])
{
	char buf[4096];
	int ret, i;

	if (j->source == JOBS_V1) {
		ret = read_u64_at(fd, "cpuacct.usage", &v[0]);
		if (ret == 0)
			ret = read_u64_at(fd, "cpuacct.usage_user", &v[1]);
		if (ret == 0)
			ret = read_u64_at(fd, "cpuacct.usage_sys", &v[2]);
		return ret;
	}
	ret = read_at(fd, "cpu.stat", buf, sizeof(buf));
	if (ret == 0)
		ret = stat_key(buf, "usage_usec", &v[0]);
	if (ret == 0)
		ret = stat_key(buf, "user_usec", &v[1]);
	if (ret == 0)
		ret = stat_key(buf, "system_usec", &v[2]);
	for (i = 0; ret == 0 && i < 3; i++) {
		if (v[i] > UINT64_MAX / 1000)
			return -EIO;
		v[i] *= 1000;
	}
	return ret;
}

/* Add the processes of the cgroup open at @fd to *@count. */
static int count_procs(int fd, uint64_t *count)
{
	char *text, *p;
	size_t hint = 4096;
	int f, ret;

	f = openat(fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return errno == ENOENT || errno == ENODEV ? -ENOENT : -EIO;
	ret = procfile_pread_alloc(f, &hint, &text);
	close(f);
	/* A threaded cgroup (v2) lists no processes: its parent does. */
	if (ret == -EOPNOTSUPP)
		return 0;
	if (ret < 0) /* removed since it was opened: ENODEV */
		return ret == -ENOENT || ret == -ENODEV ? -ENOENT : -EIO;
	for (p = text; (p = strchr(p, '\n')); p++)
		(*count)++;
	free(text);
	return 0;
}

/* Add those of the cgroup open at @fd and of every cgroup below it. */
static int count_tree(int fd, int depth, uint64_t *count)
{
	struct dirent *d;
	DIR *dp;
	int sub, dfd, ret = count_procs(fd, count);

	if (ret == 0 && depth >= JOBS_DEPTH_MAX)
		return -EIO;

	dfd = ret == 0 ? dup(fd) : -1;
	dp = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dp) {
		if (dfd >= 0)
			close(dfd);
		return ret < 0 ? ret : -EIO;
	}
	while (ret == 0 && (d = readdir(dp))) {
		if (d->d_type != DT_DIR || bad_name(d->d_name))
			continue;
		sub = openat(fd, d->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue; /* gone since */
		ret = count_tree(sub, depth + 1, count);
		if (ret == -ENOENT)
			ret = 0; /* removed while counted */
		close(sub);
	}
	closedir(dp);
	return ret;
}

/* The entry of @id in seen[]: its own, else the least recently used
 * of its ways, emptied. Locked. */
static struct job_seen *seen_of(struct jobs *j, uint64_t id)
{
	size_t base = (size_t)(id * 0x9e3779b97f4a7c15ULL >> 55) % JOBS_SEEN;
	struct job_seen *s, *old = NULL;
	size_t w;

	for (w = 0; w < JOBS_WAYS; w++) {
		s = &j->seen->entry[(base + w) % JOBS_SEEN];
		if (s->id == id)
			return s;
		if (!old || s->used < old->used)
			old = s;
	}
	/* Emptied before it is another's: never its old values with the
	 * new id, however a dead server left it. */
	__atomic_store_n(&old->id, 0, __ATOMIC_RELEASE);
	old->kernel_ns = old->user_ns = 0;
	__atomic_store_n(&old->id, id, __ATOMIC_RELEASE);
	return old;
}

/*
 * @usage split in the source's user:system proportion (the kernel's
 * share rounded down), then kept from going back: each part at least
 * what was last shown, their sum at least the last sum.
 */
static void keep_forward(struct jobs *j, uint64_t id, const uint64_t v[3],
			 struct job_times *t)
{
	uint64_t usage = v[0], k, u;
	struct job_seen *s;

	task_split(usage, v[1], v[2], &k, &u);
	pthread_mutex_lock(&j->lock);
	s = seen_of(j, id);
	if (usage < s->kernel_ns + s->user_ns)
		usage = s->kernel_ns + s->user_ns;
	if (k < s->kernel_ns)
		k = s->kernel_ns;
	if (k > usage - s->user_ns)
		k = usage - s->user_ns;
	u = usage - k;
	s->kernel_ns = k;
	s->user_ns = u;
	s->used = ++j->seen->calls;
	pthread_mutex_unlock(&j->lock);
	t->kernel_ns = k;
	t->user_ns = u;
	t->cycles = units_ns_to_cycles(usage, j->tsc_hz);
}

int jobs_times(struct jobs *j, uint64_t root, uint64_t id, struct job_times *t)
{
	uint64_t v[3];
	int fd, ret;

	fd = open_below(j, root, id);
	if (fd < 0)
		return fd;
	memset(t, 0, sizeof(*t));
	ret = read_usage(j, fd, v);
	if (ret == 0)
		ret = count_tree(fd, 0, &t->processes);
	close(fd);
	if (ret == 0)
		keep_forward(j, id, v, t);
	return ret;
}

/* ---- where a process's cgroup lies ----------------------------------- */

/* The path of process @pid's cgroup in the hierarchy, relative to the
 * mount's root, into @buf ("/..."). */
static int cgroup_of(struct jobs *j, pid_t pid, char *buf, size_t size)
{
	char path[PATH_MAX], *text, *line, *save = NULL, *ctl, *at = NULL;
	size_t len = strlen(j->mount_root);
	int ret;

	snprintf(path, sizeof(path), "%s/%d/cgroup", j->proc_root, (int)pid);
	ret = procfile_read_alloc(path, 1024, &text);
	if (ret < 0)
		return ret == -ENOENT ? ret : -EIO;
	for (line = strtok_r(text, "\n", &save); line && !at;
	     line = strtok_r(NULL, "\n", &save)) {
		ctl = strchr(line, ':');
		at = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!at)
			continue;
		*ctl = '\0';
		*at++ = '\0';
		if (j->source == JOBS_V1 ? !has_word(ctl + 1, "cpuacct") :
					   strcmp(line, "0") != 0 || ctl[1])
			at = NULL;
	}
	ret = -ENOENT;
	if (at && strcmp(j->mount_root, "/") == 0)
		ret = snprintf(buf, size, "%s", at) < (int)size ? 0 :
								  -ENAMETOOLONG;
	else if (at && path_under(at, j->mount_root))
		ret = snprintf(buf, size, "/%s", at + len + (at[len] == '/')) <
				      (int)size ?
			      0 :
			      -ENAMETOOLONG;
	free(text);
	return ret;
}

int jobs_view_root(struct jobs *j, pid_t pid, uint64_t *id)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, ret;

	if (jobs_source(j) == JOBS_NONE)
		return -ENOENT;
	if (pid == 0) {
		*id = j->root_id;
		return 0;
	}
	ret = cgroup_of(j, pid, path, sizeof(path));
	if (ret < 0)
		return ret;
	fd = path[1] ? openat(j->root_fd, path + 1,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) :
		       openat(j->root_fd, ".",
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	ret = fstat(fd, &st) < 0 || (uint64_t)st.st_ino > JOBS_ID_MAX ?
		      -ENOENT :
		      0;
	if (ret == 0)
		*id = (uint64_t)st.st_ino;
	close(fd);
	return ret;
}

int jobs_path_below(struct jobs *j, pid_t first, pid_t pid, char *buf,
		    size_t size)
{
	char top[PATH_MAX], own[PATH_MAX];
	const char *rest;
	int ret;

	if (jobs_source(j) == JOBS_NONE)
		return -ENOENT;
	ret = first ? cgroup_of(j, first, top, sizeof(top)) :
		      (snprintf(top, sizeof(top), "/"), 0);
	if (ret == 0)
		ret = cgroup_of(j, pid, own, sizeof(own));
	if (ret < 0)
		return ret;
	if (!path_under(own, top))
		return -ENOENT;
	rest = own + strlen(top);
	if (strcmp(top, "/") == 0)
		rest = own + 1;
	else if (*rest == '/')
		rest++;
	ret = snprintf(buf, size, "%s", rest);
	return ret < (int)size ? 0 : -ENAMETOOLONG;
}
