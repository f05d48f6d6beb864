/*
 * attach: the mounts the daemon serves inside other mount namespaces
 * (attach.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "attach.h"
#include "log.h"
#include "mountinfo.h"
#include "view.h"

struct attached {
	struct attached *next;
	struct attach_set *as;
	char *target;
	ino_t pidns, mntns;
	pid_t init; /* the daemon's number of its PID namespace's init */
	int pidns_fd, mntns_fd, init_fd; /* init_fd: its pidfd, or -1 */
	struct views *views;
	struct fs *fs;
	struct fuse_session *se;
	bool served;
};

struct attach_set {
	struct attach_env env;
	struct attached *mounts;
	unsigned int count;
	int epfd; /* the pidfds of every mount's init; -1: no pidfd */
};

int attach_set_new(const struct attach_env *env, struct attach_set **out)
{
	struct attach_set *as = calloc(1, sizeof(*as));
	int probe;

	if (!as)
		return -ENOMEM;
	as->env = *env;
	as->epfd = -1;
	/* A pidfd of ourselves says whether the kernel has them (5.3). */
	probe = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (probe >= 0) {
		close(probe);
		as->epfd = epoll_create1(EPOLL_CLOEXEC);
	}
	*out = as;
	return 0;
}

int attach_fd(const struct attach_set *as)
{
	return as->epfd;
}

unsigned int attach_count(const struct attach_set *as)
{
	return as->count;
}

/* The inode of namespace @fd if its type is @type, else 0. */
static ino_t ns_inode(int fd, int type)
{
	struct stat st;

	if (ioctl(fd, NS_GET_NSTYPE) != type || fstat(fd, &st) < 0)
		return 0;
	return st.st_ino;
}

/*
 * In a child, which alone may enter another mount namespace (a process
 * with threads cannot): enter @mntfd, and mount with @opts at @target,
 * or unmount it (@opts NULL). 0 or -errno.
 */
static int in_namespace(int mntfd, const char *target, const char *opts)
{
	struct stat st;
	int status, err;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (setns(mntfd, CLONE_NEWNS) < 0)
			_exit(errno);
		/* The path as mount(2) took it: a link followed. */
		if (!opts)
			_exit(umount2(target, MNT_DETACH) < 0 ? errno : 0);
		if (stat(target, &st) < 0)
			_exit(errno);
		if (!S_ISDIR(st.st_mode))
			_exit(ENOTDIR);
		if (mount("timingfs", target, "fuse.timingfs",
			  MS_RDONLY | MS_NOSUID | MS_NODEV, opts) < 0)
			_exit(errno);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -EIO;
	err = WEXITSTATUS(status);
	return -err;
}

/* Free @m, which is in no list, unmounting it first if it is mounted. */
static void mount_free(struct attached *m, bool mounted)
{
	struct attach_set *as = m->as;

	if (mounted)
		in_namespace(m->mntns_fd, m->target, NULL);
	if (m->served)
		serve_remove(as->env.serve, m->se);
	if (m->init_fd >= 0) {
		if (as->epfd >= 0)
			epoll_ctl(as->epfd, EPOLL_CTL_DEL, m->init_fd, NULL);
		close(m->init_fd);
	}
	if (m->se)
		fuse_session_destroy(m->se); /* closes /dev/fuse */
	fs_free(m->fs);
	views_free(m->views);
	if (m->pidns_fd >= 0)
		close(m->pidns_fd);
	if (m->mntns_fd >= 0)
		close(m->mntns_fd);
	free(m->target);
	free(m);
}

/* Take @m out of the list and free it. */
static void mount_drop(struct attach_set *as, struct attached *m, bool mounted)
{
	struct attached **p;

	for (p = &as->mounts; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			as->count--;
			break;
		}
	mount_free(m, mounted);
}

/*
 * The access rules of a mount: the daemon's configuration with @opts's
 * hidepid= and gid=, auto from the procfs the namespace's init sees at
 * the configuration's [sources] proc. -EINVAL for an unknown option.
 */
static int mount_access(struct attach_set *as, struct attached *m,
			const char *opts, struct access_policy *access,
			char *err, size_t errlen)
{
	struct config cfg = *as->env.cfg;
	char *copy = strdup(opts ? opts : ""), *o, *save = NULL, *end;
	char mountinfo[64];
	unsigned long gid;
	int h, ret = 0;

	if (!copy)
		return -ENOMEM;
	for (o = strtok_r(copy, ",", &save); o && ret == 0;
	     o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "ro") || !strcmp(o, "allow_other"))
			continue;
		if (!strncmp(o, "hidepid=", 8)) {
			for (h = HIDEPID_AUTO; h <= HIDEPID_INVISIBLE; h++)
				if (!strcmp(o + 8, config_hidepid_name(h)))
					break;
			cfg.hidepid = (enum hidepid)h;
			if (h <= HIDEPID_INVISIBLE)
				continue;
		} else if (!strcmp(o, "gid=none")) {
			cfg.access_gid = CONFIG_GID_NONE;
			cfg.access_gid_set = true;
			continue;
		} else if (!strncmp(o, "gid=", 4)) {
			errno = 0;
			gid = strtoul(o + 4, &end, 10);
			if (!errno && end != o + 4 && !*end &&
			    gid < CONFIG_GID_NONE) {
				cfg.access_gid = (gid_t)gid;
				cfg.access_gid_set = true;
				continue;
			}
		}
		snprintf(err, errlen,
			 "-o %s: not an option of attach (ro, allow_other, "
			 "hidepid=auto|off|noaccess|invisible, gid=GID|none)",
			 o);
		ret = -EINVAL;
	}
	free(copy);
	if (ret < 0)
		return ret;
	snprintf(mountinfo, sizeof(mountinfo), "/proc/%d/mountinfo",
		 (int)m->init);
	return access_resolve(&cfg, mountinfo, access, err, errlen);
}

/* The init of @m's PID namespace, and a pidfd to learn of its exit. */
static int find_init(struct attach_set *as, struct attached *m)
{
	struct view *own = views_slot(m->views, VIEW_OWN);
	struct epoll_event ev = { .events = EPOLLIN };
	int ret;

	ret = own ? view_to_daemon(own, 1) : -ENOENT;
	if (own)
		views_put(m->views, own);
	if (ret < 0)
		return ret;
	m->init = ret;
	m->init_fd = -1;
	if (as->epfd < 0)
		return 0;
	m->init_fd = (int)syscall(SYS_pidfd_open, m->init, 0);
	if (m->init_fd < 0)
		return -errno;
	ev.data.ptr = m;
	return epoll_ctl(as->epfd, EPOLL_CTL_ADD, m->init_fd, &ev) == 0 ?
		       0 :
		       -errno;
}

static struct attached *find(struct attach_set *as, ino_t pidns, ino_t mntns,
			     const char *target)
{
	struct attached *m;

	for (m = as->mounts; m; m = m->next)
		if ((!pidns || m->pidns == pidns) &&
		    (!mntns || m->mntns == mntns) && !strcmp(m->target, target))
			return m;
	return NULL;
}

/* A new mount's session, state and views; not mounted yet. */
static int mount_new(struct attach_set *as, struct attached *m,
		     const char *opts, char *err, size_t errlen)
{
	char *argv[] = { "timingfs", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	struct access_policy access;
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", m->pidns_fd);
	ret = views_new(path, &m->views, err, errlen);
	if (ret < 0)
		return ret;
	ret = find_init(as, m);
	if (ret < 0) {
		snprintf(err, errlen,
			 "the PID namespace %lu has no process left (%s)",
			 (unsigned long)m->pidns, strerror(-ret));
		return ret;
	}
	ret = mount_access(as, m, opts, &access, err, errlen);
	if (ret < 0)
		return ret;
	if (fs_new(as->env.engine, m->views, &access, as->env.dropper, &m->fs) <
	    0)
		goto nomem;
	if (as->env.exited)
		fs_set_exited(m->fs, as->env.exited, as->env.listener);
	m->se = fuse_session_new(&args, fs_operations(),
				 sizeof(struct fuse_lowlevel_ops), m->fs);
	fuse_opt_free_args(&args); /* what its parser made of them */
	if (!m->se)
		goto nomem;
	fs_set_session(m->fs, m->se);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int attach_add(struct attach_set *as, int pidfd, int mntfd, const char *opts,
	       const char *target, char *err, size_t errlen)
{
	struct attached *m;
	char mopts[160], fdpath[32];
	int fd, ret;

	m = calloc(1, sizeof(*m));
	if (!m || !(m->target = strdup(target))) {
		free(m);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->as = as;
	m->init_fd = -1;
	m->pidns_fd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
	m->mntns_fd = fcntl(mntfd, F_DUPFD_CLOEXEC, 3);
	m->pidns = m->pidns_fd >= 0 ? ns_inode(m->pidns_fd, CLONE_NEWPID) : 0;
	m->mntns = m->mntns_fd >= 0 ? ns_inode(m->mntns_fd, CLONE_NEWNS) : 0;
	ret = -EINVAL;
	if (!m->pidns) {
		snprintf(err, errlen, "not a PID namespace");
		goto fail;
	}
	if (!m->mntns) {
		snprintf(err, errlen, "not a mount namespace");
		goto fail;
	}
	if (find(as, 0, m->mntns, target)) {
		snprintf(err, errlen,
			 "%s: already attached in that mount namespace",
			 target);
		ret = -EEXIST;
		goto fail;
	}
	ret = mount_new(as, m, opts, err, errlen);
	if (ret < 0)
		goto fail;
	/* The device, opened here: the namespace may have none. */
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "/dev/fuse: %s", strerror(-ret));
		goto fail;
	}
	snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fd);
	if (fuse_session_mount(m->se, fdpath) != 0) {
		close(fd);
		ret = -EIO;
		snprintf(err, errlen, "cannot serve /dev/fuse");
		goto fail;
	}
	snprintf(mopts, sizeof(mopts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,"
		 "default_permissions",
		 fd);
	ret = in_namespace(m->mntns_fd, target, mopts);
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s in that mount namespace", target,
			 ret == -ENOTDIR ? "not a directory" : strerror(-ret));
		goto fail;
	}
	ret = serve_add(as->env.serve, m->se, m);
	if (ret < 0) {
		snprintf(err, errlen, "cannot serve it: %s", strerror(-ret));
		mount_free(m, true);
		return ret;
	}
	m->served = true;
	m->next = as->mounts;
	as->mounts = m;
	as->count++;
	log_msg(LOG_NOTICE,
		"attached %s in the mount namespace %lu, pinned to the PID "
		"namespace %lu (its init: %d)",
		target, (unsigned long)m->mntns, (unsigned long)m->pidns,
		(int)m->init);
	return 0;
fail:
	mount_free(m, false);
	return ret;
}

int attach_remove(struct attach_set *as, int pidfd, const char *target,
		  char *err, size_t errlen)
{
	ino_t pidns = ns_inode(pidfd, CLONE_NEWPID);
	struct attached *m = pidns ? find(as, pidns, 0, target) : NULL;

	if (!pidns) {
		snprintf(err, errlen, "not a PID namespace");
		return -EINVAL;
	}
	if (!m) {
		snprintf(err, errlen,
			 "%s: nothing attached there for the PID namespace %lu",
			 target, (unsigned long)pidns);
		return -ENOENT;
	}
	log_msg(LOG_NOTICE, "detached %s (PID namespace %lu)", m->target,
		(unsigned long)m->pidns);
	mount_drop(as, m, true);
	return 0;
}

/* @s as /proc/mounts writes a path, into @buf at @at. The new end. */
static size_t escaped(char *buf, size_t size, size_t at, const char *s)
{
	char e[8];

	for (; *s; s++) {
		if (strchr(" \t\n\\", *s))
			snprintf(e, sizeof(e), "\\%03o", (unsigned char)*s);
		else
			snprintf(e, sizeof(e), "%c", *s);
		if (at + strlen(e) < size)
			memcpy(buf + at, e, strlen(e));
		at += strlen(e);
	}
	return at;
}

size_t attach_list(struct attach_set *as, char *buf, size_t size)
{
	struct attached *m;
	size_t at = 0;
	char part[96];
	int n;

	for (m = as->mounts; m; m = m->next) {
		n = snprintf(part, sizeof(part), "%lu ",
			     (unsigned long)m->pidns);
		if (at + n < size)
			memcpy(buf + at, part, n);
		at = escaped(buf, size, at + n, m->target);
		n = snprintf(part, sizeof(part), " init %d mntns %lu\n",
			     (int)m->init, (unsigned long)m->mntns);
		if (at + n < size)
			memcpy(buf + at, part, n);
		at += n;
	}
	if (size)
		buf[at < size ? at : size - 1] = '\0';
	return at;
}

/* Whether the init of @m's PID namespace is still there. */
static bool init_alive(const struct attached *m)
{
	struct pollfd p = { .fd = m->init_fd, .events = POLLIN };
	char path[64];
	struct stat st;

	/* A pidfd is readable once its process has exited. */
	if (m->init_fd >= 0)
		return poll(&p, 1, 0) == 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)m->init);
	return stat(path, &st) == 0 && st.st_ino == m->pidns;
}

void attach_reap(struct attach_set *as)
{
	struct attached *m, *next;

	for (m = as->mounts; m; m = next) {
		next = m->next;
		if (init_alive(m))
			continue;
		log_msg(LOG_NOTICE,
			"%s: the PID namespace %lu has no process left: "
			"unmounted",
			m->target, (unsigned long)m->pidns);
		mount_drop(as, m, true);
	}
}

void attach_ended(struct attach_set *as, struct attached *m, int error)
{
	if (error)
		log_msg(LOG_ERR, "%s (PID namespace %lu): serving failed: %s",
			m->target, (unsigned long)m->pidns, strerror(-error));
	else
		log_msg(LOG_NOTICE, "%s (PID namespace %lu) was unmounted",
			m->target, (unsigned long)m->pidns);
	mount_drop(as, m, error != 0);
}

void attach_set_free(struct attach_set *as)
{
	struct attached *m;

	if (!as)
		return;
	while ((m = as->mounts)) {
		as->mounts = m->next;
		mount_free(m, true);
	}
	if (as->epfd >= 0)
		close(as->epfd);
	free(as);
}
