/*
 * attach: the mounts the daemon serves inside other mount namespaces
 * (attach.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "clock.h"
#include "log.h"
#include "access.h"
#include "nsmount.h"
#include "view.h"

/* What a mount is doing. */
enum mount_state {
	M_ATTACHING, /* its child walks to TARGET and mounts */
	M_MOUNTED, /* served */
	M_DETACHING, /* its child unmounts it */
};

/* What an event of the set's epoll names: a mount's child or init. */
struct watch {
	struct attached *m;
	bool init;
};

struct attached {
	struct attached *next;
	struct attach_set *as;
	uint64_t key; /* the supervisor's name of it (super.h); 0: untold */
	char *target;
	char *opts; /* as attach was given them, "" for none */
	ino_t pidns, mntns;
	pid_t init; /* the daemon's number of its PID namespace's init */
	int pidns_fd, mntns_fd, init_fd; /* init_fd: its pidfd, or -1 */
	int keep_fd; /* its open files' contents (fs.h) */
	int mnt_fd; /* the mount itself (nsmount.h), or -1 */
	struct views *views;
	struct fs *fs;
	struct fuse_session *se;
	bool served;
	enum mount_state state;
	struct nsmount_child child; /* pid 0: none at work */
	long long deadline_ms; /* the child's */
	bool timed_out; /* its child was killed at the deadline */
	bool init_gone, child_ended; /* as the set's epoll said */
	attach_done_fn *done; /* who waits for the child, or NULL */
	void *done_arg;
	struct watch init_w, child_w;
};

struct attach_set {
	struct attach_env env;
	struct attached *mounts;
	unsigned int count, busy;
	int epfd; /* the pidfds of inits and children; -1: no pidfd */
	long long polled_ms; /* without pidfd: the inits last looked at */
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

/* The inode of namespace @fd if its type is @type, else 0. */
static ino_t ns_inode(int fd, int type)
{
	struct stat st;

	if (ioctl(fd, NS_GET_NSTYPE) != type || fstat(fd, &st) < 0)
		return 0;
	return st.st_ino;
}

/* Tell whoever waits for @m's child how it went. */
static void finish(struct attached *m, int ret, const char *text)
{
	attach_done_fn *done = m->done;

	m->done = NULL;
	if (done)
		done(m->done_arg, ret, text);
}

/* Free @m, which is in no list and has no child at work. */
static void mount_free(struct attached *m)
{
	struct attach_set *as = m->as;

	finish(m, -ECANCELED, "the daemon is stopping");
	if (m->key)
		super_tell_gone(as->env.super, m->key);
	if (m->served)
		serve_remove(as->env.serve, m->se);
	if (m->init_fd >= 0) {
		if (as->epfd >= 0)
			epoll_ctl(as->epfd, EPOLL_CTL_DEL, m->init_fd, NULL);
		close(m->init_fd);
	}
	if (m->se)
		fuse_session_destroy(m->se); /* closes /dev/fuse */
	/* A mount never attached, or unmounted, ends with it. */
	if (m->mnt_fd >= 0)
		close(m->mnt_fd);
	fs_free(m->fs);
	views_free(m->views);
	if (m->pidns_fd >= 0)
		close(m->pidns_fd);
	if (m->mntns_fd >= 0)
		close(m->mntns_fd);
	if (m->keep_fd >= 0)
		close(m->keep_fd);
	free(m->target);
	free(m->opts);
	free(m);
}

/* Take @m out of the list and free it. */
static void mount_drop(struct attach_set *as, struct attached *m)
{
	struct attached **p;

	for (p = &as->mounts; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			as->count--;
			break;
		}
	mount_free(m);
}

/* Whether @m's child is at work. */
static bool working(const struct attached *m)
{
	return m->child.pid > 0;
}

/* @m's child started: watch for its end, until its deadline. */
static void child_started(struct attach_set *as, struct attached *m)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &m->child_w };

	as->busy++;
	m->child_ended = false;
	m->timed_out = false;
	m->deadline_ms = clock_mono_ms() + ATTACH_DEADLINE_MS;
	m->child_w = (struct watch){ .m = m, .init = false };
	if (as->epfd >= 0 && m->child.pidfd >= 0)
		epoll_ctl(as->epfd, EPOLL_CTL_ADD, m->child.pidfd, &ev);
}

/*
 * Start unmounting @m by its identity; @done hears of it. 0, or -errno
 * (then @m is freed when it has no identity to unmount by).
 */
static int start_detach(struct attach_set *as, struct attached *m,
			attach_done_fn *done, void *arg)
{
	int ret;

	m->state = M_DETACHING;
	m->done = done;
	m->done_arg = arg;
	if (m->mnt_fd < 0)
		ret = -ENOENT;
	else
		ret = nsmount_start_umount(m->mntns_fd, m->mnt_fd, &m->child);
	if (ret == 0) {
		child_started(as, m);
		return 0;
	}
	log_msg(LOG_ERR, "%s (PID namespace %lu): cannot unmount: %s",
		m->target, (unsigned long)m->pidns, strerror(-ret));
	m->done = NULL;
	mount_drop(as, m);
	return ret;
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
	char *copy = strdup(opts ? opts : ""), *o, *save = NULL;
	char mountinfo[64];
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (o = strtok_r(copy, ",", &save); o && ret == 0;
	     o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "ro") || !strcmp(o, "allow_other"))
			continue;
		if (!strncmp(o, "hidepid=", 8)) {
			if (hidepid_parse(o + 8, false, &cfg.hidepid) == 0)
				continue;
		} else if (!strcmp(o, "gid=none")) {
			cfg.access_gid = ACCESS_GID_NONE;
			cfg.access_gid_set = true;
			continue;
		} else if (!strncmp(o, "gid=", 4)) {
			if (gid_parse(o + 4, &cfg.access_gid) == 0) {
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
	return config_access(&cfg, mountinfo, access, err, errlen);
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
	m->init_w = (struct watch){ .m = m, .init = true };
	ev.data.ptr = &m->init_w;
	return epoll_ctl(as->epfd, EPOLL_CTL_ADD, m->init_fd, &ev) == 0 ?
		       0 :
		       -errno;
}

/*
 * Whether @m is still attached in its namespace; one unmounted from
 * inside (and so no longer served by anyone) is dropped.
 */
static bool still_there(struct attach_set *as, struct attached *m)
{
	if (m->state != M_MOUNTED || nsmount_attached(m->mnt_fd) != 0)
		return true;
	log_msg(LOG_NOTICE, "%s (PID namespace %lu) was unmounted inside",
		m->target, (unsigned long)m->pidns);
	mount_drop(as, m);
	return false;
}

static struct attached *find(struct attach_set *as, ino_t pidns, ino_t mntns,
			     const char *target)
{
	struct attached *m, *next;

	for (m = as->mounts; m; m = next) {
		next = m->next;
		if ((!pidns || m->pidns == pidns) &&
		    (!mntns || m->mntns == mntns) &&
		    !strcmp(m->target, target) && still_there(as, m))
			return m;
	}
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
	if (m->keep_fd < 0)
		m->keep_fd = fs_keep_create(
			((size_t)as->env.cfg->total_snapshots_mib +
			 as->env.cfg->reader_snapshots_mib + 16)
			<< 20);
	ret = m->keep_fd < 0 ? m->keep_fd : fs_set_keep(m->fs, m->keep_fd);
	if (ret < 0) {
		snprintf(err, errlen, "cannot keep its open files: %s",
			 strerror(-ret));
		return ret;
	}
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

/*
 * The device, opened here (the namespace may have none) and served by
 * @m's session, and the mount of it, detached still; then its child.
 */
static int mount_start(struct attach_set *as, struct attached *m, char *err,
		       size_t errlen)
{
	char mopts[160], fdpath[32];
	int fd, ret;

	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "/dev/fuse: %s", strerror(-ret));
		return ret;
	}
	snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fd);
	if (fuse_session_mount(m->se, fdpath) != 0) {
		close(fd);
		snprintf(err, errlen, "cannot serve /dev/fuse");
		return -EIO;
	}
	ret = nsmount_new(fd, &m->mnt_fd);
	if (ret < 0 && ret != -ENOSYS) {
		snprintf(err, errlen, "cannot make the mount: %s",
			 strerror(-ret));
		return ret;
	}
	/* Kernels before 5.2: mount(2), by the child. */
	snprintf(mopts, sizeof(mopts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,"
		 "default_permissions",
		 fd);
	ret = nsmount_start_mount(m->mntns_fd, m->target, m->mnt_fd, mopts,
				  &m->child);
	if (ret < 0) {
		snprintf(err, errlen, "cannot start the mount: %s",
			 strerror(-ret));
		return ret;
	}
	m->state = M_ATTACHING;
	child_started(as, m);
	return 0;
}

int attach_add(struct attach_set *as, int pidfd, int mntfd, const char *opts,
	       const char *target, attach_done_fn *done, void *arg, char *err,
	       size_t errlen)
{
	struct attached *m;
	int ret;

	if (as->busy >= ATTACH_MAX_BUSY) {
		snprintf(err, errlen,
			 "busy: %u attaches and detaches are under way",
			 as->busy);
		return -EBUSY;
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->target = strdup(target))) {
		free(m);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->as = as;
	m->init_fd = m->mnt_fd = m->keep_fd = -1;
	m->child = (struct nsmount_child){ .pidfd = -1, .sock = -1 };
	if (!(m->opts = strdup(opts ? opts : ""))) {
		free(m->target);
		free(m);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
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
	if (ret == 0)
		ret = mount_start(as, m, err, errlen);
	if (ret < 0)
		goto fail;
	m->done = done;
	m->done_arg = arg;
	m->next = as->mounts;
	as->mounts = m;
	as->count++;
	return 0;
fail:
	mount_free(m);
	return ret;
}

int attach_adopt(struct attach_set *as, struct super_mount *sm, char *err,
		 size_t errlen)
{
	struct attached *m = calloc(1, sizeof(*m));
	char fdpath[32];
	int ret;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		goto fail_fds;
	}
	m->as = as;
	m->key = sm->key;
	m->target = strdup(sm->target ? sm->target : "");
	m->opts = strdup(sm->opts ? sm->opts : "");
	m->init_fd = -1;
	m->child = (struct nsmount_child){ .pidfd = -1, .sock = -1 };
	m->pidns_fd = sm->pidns_fd;
	m->mntns_fd = sm->mntns_fd;
	m->mnt_fd = sm->mnt_fd;
	m->keep_fd = sm->keep_fd;
	if (!m->target || !m->opts) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		close(sm->fuse_fd);
		mount_free(m);
		return ret;
	}
	m->pidns = ns_inode(m->pidns_fd, CLONE_NEWPID);
	m->mntns = ns_inode(m->mntns_fd, CLONE_NEWNS);
	ret = mount_new(as, m, m->opts, err, errlen);
	if (ret == 0) {
		snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", sm->fuse_fd);
		if (fuse_session_mount(m->se, fdpath) != 0) {
			snprintf(err, errlen, "cannot serve /dev/fuse");
			ret = -EIO;
		}
	}
	if (ret < 0) {
		close(sm->fuse_fd);
		mount_free(m);
		return ret;
	}
	if (sm->init_req)
		serve_replay(m->se, sm->init_req, sm->init_len, true);
	ret = serve_add(as->env.serve, m->se, m, m->key);
	if (ret < 0) {
		snprintf(err, errlen, "cannot serve it: %s", strerror(-ret));
		mount_free(m);
		return ret;
	}
	m->served = true;
	m->state = M_MOUNTED;
	m->next = as->mounts;
	as->mounts = m;
	as->count++;
	return 0;
fail_fds:
	close(sm->fuse_fd);
	if (sm->keep_fd >= 0)
		close(sm->keep_fd);
	if (sm->pidns_fd >= 0)
		close(sm->pidns_fd);
	if (sm->mntns_fd >= 0)
		close(sm->mntns_fd);
	if (sm->mnt_fd >= 0)
		close(sm->mnt_fd);
	super_tell_gone(as->env.super, sm->key); /* frees @sm */
	return -ENOMEM;
}

struct fuse_session *attach_session(struct attach_set *as, uint64_t key)
{
	struct attached *m;

	for (m = as->mounts; m; m = m->next)
		if (m->key == key && m->se)
			return m->se;
	return NULL;
}

void attach_resend(struct attach_set *as)
{
	struct attached *m;

	for (m = as->mounts; m; m = m->next)
		if (m->served)
			serve_resend(fuse_session_fd(m->se));
}

int attach_remove(struct attach_set *as, int pidfd, const char *target,
		  attach_done_fn *done, void *arg, char *err, size_t errlen)
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
	if (m->state != M_MOUNTED) {
		snprintf(err, errlen,
			 "%s: an attach or detach of it is under way", target);
		return -EBUSY;
	}
	log_msg(LOG_NOTICE, "detaching %s (PID namespace %lu)", m->target,
		(unsigned long)m->pidns);
	if (start_detach(as, m, done, arg) < 0) {
		snprintf(err, errlen, "%s: cannot unmount it", target);
		return -EIO;
	}
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
	struct attached *m, *next;
	size_t at = 0;
	char part[96];
	int n;

	for (m = as->mounts; m; m = next) {
		next = m->next;
		if (m->state != M_MOUNTED || !still_there(as, m))
			continue;
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

/* One line of why @m's child failed, for @m->target. */
static void child_error(const struct attached *m, int ret, char *text,
			size_t size)
{
	const char *why = strerror(-ret);

	if (ret == -ELOOP)
		why = "a symbolic link on the way (refused)";
	else if (ret == -ENOTDIR)
		why = "not a directory";
	else if (ret == -EINVAL && m->state == M_ATTACHING)
		why = "not a path to a directory below / without \"..\"";
	else if (ret == -EBUSY && m->state == M_DETACHING)
		why = "something is mounted on it (left alone)";
	snprintf(text, size, "%s: %s in that mount namespace", m->target, why);
}

/*
 * The supervisor keeps @m's descriptors from now on, so that a
 * successor of this server serves it (super.h); told before any request
 * of it is read, the INIT first.
 */
static void tell_supervisor(struct attach_set *as, struct attached *m)
{
	struct super_mount sm = { .fuse_fd = fuse_session_fd(m->se),
				  .pidns_fd = m->pidns_fd,
				  .mntns_fd = m->mntns_fd,
				  .mnt_fd = m->mnt_fd,
				  .keep_fd = m->keep_fd,
				  .target = m->target,
				  .opts = m->opts };

	sm.key = m->key = super_new_key(as->env.super);
	if (super_tell_attach(as->env.super, &sm) < 0)
		log_msg(LOG_WARNING,
			"%s (PID namespace %lu): the supervisor does not keep "
			"it: it ends with this server",
			m->target, (unsigned long)m->pidns);
}

/*
 * The attach child of @m ended with @ret: serve it, or say why not.
 * Whether @m is still there.
 */
static bool attached(struct attach_set *as, struct attached *m, int ret)
{
	char text[PATH_MAX + 128];

	if (ret == 0 && m->timed_out) {
		/* Too late: the caller heard it failed. Undo it. */
		return start_detach(as, m, NULL, NULL) == 0;
	}
	if (ret < 0) {
		if (m->timed_out)
			log_msg(LOG_WARNING,
				"%s (PID namespace %lu): the attach timed out",
				m->target, (unsigned long)m->pidns);
		child_error(m, ret, text, sizeof(text));
		finish(m, ret, text);
		/* Never attached, or (mount(2) killed midway) not known. */
		mount_drop(as, m);
		return false;
	}
	tell_supervisor(as, m);
	ret = serve_add(as->env.serve, m->se, m, m->key);
	if (ret < 0) {
		snprintf(text, sizeof(text), "cannot serve it: %s",
			 strerror(-ret));
		finish(m, ret, text);
		return start_detach(as, m, NULL, NULL) == 0;
	}
	m->served = true;
	m->state = M_MOUNTED;
	finish(m, 0, "");
	log_msg(LOG_NOTICE,
		"attached %s in the mount namespace %lu, pinned to the PID "
		"namespace %lu (its init: %d)",
		m->target, (unsigned long)m->mntns, (unsigned long)m->pidns,
		(int)m->init);
	return true;
}

/* The detach child of @m ended with @ret: @m goes. */
static void detached(struct attach_set *as, struct attached *m, int ret)
{
	char text[PATH_MAX + 128];

	if (ret == -EINVAL)
		log_msg(LOG_NOTICE,
			"%s (PID namespace %lu) was no longer mounted there",
			m->target, (unsigned long)m->pidns);
	else if (ret < 0)
		log_msg(LOG_WARNING,
			"%s (PID namespace %lu): not unmounted (%s): left "
			"alone",
			m->target, (unsigned long)m->pidns,
			m->timed_out ? "timed out" : strerror(-ret));
	else
		log_msg(LOG_NOTICE, "%s (PID namespace %lu) unmounted",
			m->target, (unsigned long)m->pidns);
	if (ret < 0 && ret != -EINVAL) {
		child_error(m, ret, text, sizeof(text));
		finish(m, ret, text);
	} else {
		finish(m, 0, "");
	}
	mount_drop(as, m);
}

/* Reap @m's child if it ended, and go on. Whether @m is still there. */
static bool child_reap(struct attach_set *as, struct attached *m)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &m->child_w };
	int ret, fd = -1;

	ret = nsmount_reap(&m->child, false, &fd);
	if (ret == -EAGAIN) {
		if (m->child_ended && m->child.pidfd >= 0 && as->epfd >= 0)
			epoll_ctl(as->epfd, EPOLL_CTL_ADD, m->child.pidfd, &ev);
		m->child_ended = false;
		return true;
	}
	as->busy--;
	if (fd >= 0 && m->mnt_fd < 0)
		m->mnt_fd = fd;
	else if (fd >= 0)
		close(fd);
	if (ret == -EINTR && m->timed_out)
		ret = -ETIMEDOUT;
	if (m->state == M_ATTACHING)
		return attached(as, m, ret);
	detached(as, m, ret);
	return false;
}

/* @m's child is past its deadline: kill it, and tell its caller. */
static void child_late(struct attached *m)
{
	char text[PATH_MAX + 128];

	nsmount_kill(&m->child);
	m->timed_out = true;
	snprintf(text, sizeof(text),
		 "%s: timed out after %d s in that mount namespace (a file "
		 "system there does not answer)",
		 m->target, ATTACH_DEADLINE_MS / 1000);
	finish(m, -ETIMEDOUT, text);
}

/* What the set's epoll says, as flags on the mounts. */
static void take_events(struct attach_set *as)
{
	struct epoll_event ev[16];
	struct watch *w;
	int i, n;

	if (as->epfd < 0)
		return;
	while ((n = epoll_wait(as->epfd, ev, 16, 0)) > 0)
		for (i = 0; i < n; i++) {
			w = ev[i].data.ptr;
			if (!w->init) {
				w->m->child_ended = true;
				epoll_ctl(as->epfd, EPOLL_CTL_DEL,
					  w->m->child.pidfd, NULL);
				continue;
			}
			w->m->init_gone = true;
			/* Readable for good: look no more. */
			epoll_ctl(as->epfd, EPOLL_CTL_DEL, w->m->init_fd, NULL);
		}
}

int attach_timeout_ms(const struct attach_set *as)
{
	const struct attached *m;
	long long now = clock_mono_ms(), wait = -1, left;

	for (m = as->mounts; m; m = m->next) {
		if (!working(m)) {
			if (m->init_fd < 0)
				left = as->polled_ms + ATTACH_POLL_MS - now;
			else
				continue;
		} else if (m->child.pidfd < 0 || as->epfd < 0) {
			left = 20; /* no pidfd: look at it often */
		} else {
			left = m->deadline_ms - now;
		}
		if (left < 0)
			left = 0;
		if (wait < 0 || left < wait)
			wait = left;
	}
	return (int)wait;
}

void attach_tick(struct attach_set *as)
{
	struct attached *m, *next;
	long long now;
	bool poll_inits;

	take_events(as);
	now = clock_mono_ms();
	poll_inits = now >= as->polled_ms + ATTACH_POLL_MS;
	if (poll_inits)
		as->polled_ms = now;
	for (m = as->mounts; m; m = next) {
		next = m->next;
		if (working(m)) {
			if ((m->child_ended || m->child.pidfd < 0 ||
			     as->epfd < 0) &&
			    !child_reap(as, m))
				continue;
			if (working(m) && now >= m->deadline_ms &&
			    !m->timed_out)
				child_late(m);
			/* Mounted now, its init may have gone meanwhile. */
			if (working(m))
				continue;
		}
		if (m->state != M_MOUNTED)
			continue;
		if (!m->init_gone && m->init_fd < 0 && poll_inits)
			m->init_gone = !init_alive(m);
		if (!m->init_gone)
			continue;
		log_msg(LOG_NOTICE,
			"%s: the PID namespace %lu has no process left: "
			"unmounting",
			m->target, (unsigned long)m->pidns);
		start_detach(as, m, NULL, NULL);
	}
}

void attach_ended(struct attach_set *as, struct attached *m, int error)
{
	if (error)
		log_msg(LOG_ERR, "%s (PID namespace %lu): serving failed: %s",
			m->target, (unsigned long)m->pidns, strerror(-error));
	else
		log_msg(LOG_NOTICE, "%s (PID namespace %lu): its session ended",
			m->target, (unsigned long)m->pidns);
	serve_remove(as->env.serve, m->se);
	m->served = false;
	if (m->state == M_MOUNTED)
		start_detach(as, m, NULL, NULL);
}

/* Wait for every child, until @deadline; then kill the rest. */
static void wait_children(struct attach_set *as, long long deadline)
{
	struct attached *m;
	bool left = true, late;

	while (left) {
		left = false;
		late = clock_mono_ms() >= deadline;
		for (m = as->mounts; m; m = m->next) {
			if (!working(m))
				continue;
			if (late)
				nsmount_kill(&m->child);
			if (nsmount_reap(&m->child, late, NULL) == -EAGAIN)
				left = true;
			else
				as->busy--;
		}
		if (left)
			usleep(10000);
	}
}

void attach_set_free(struct attach_set *as)
{
	struct attached *m;
	int ret;

	if (!as)
		return;
	/* What was under way stops; what was mounted is unmounted. */
	for (m = as->mounts; m; m = m->next)
		if (working(m))
			nsmount_kill(&m->child);
	wait_children(as, clock_mono_ms() + ATTACH_DEADLINE_MS);
	for (m = as->mounts; m; m = m->next) {
		if (m->mnt_fd < 0)
			continue;
		ret = nsmount_start_umount(m->mntns_fd, m->mnt_fd, &m->child);
		if (ret < 0)
			log_msg(LOG_WARNING,
				"%s (PID namespace %lu): not "
				"unmounted (%s)",
				m->target, (unsigned long)m->pidns,
				strerror(-ret));
		else
			as->busy++;
	}
	wait_children(as, clock_mono_ms() + ATTACH_DEADLINE_MS);
	while ((m = as->mounts)) {
		as->mounts = m->next;
		mount_free(m);
	}
	if (as->epfd >= 0)
		close(as->epfd);
	free(as);
}
