/*
 * nsmount: a FUSE mount in another mount namespace, made and removed by
 * what the daemon holds of it (nsmount.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsmount.h"

#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x1
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x1
#endif
#ifndef FSCONFIG_SET_FLAG
#define FSCONFIG_SET_FLAG 0
#endif
#ifndef FSCONFIG_SET_STRING
#define FSCONFIG_SET_STRING 1
#endif
#ifndef FSCONFIG_CMD_CREATE
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x1
#define MOUNT_ATTR_NOSUID 0x2
#define MOUNT_ATTR_NODEV 0x4
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x4
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x40
#endif

static int sys_fsopen(const char *type)
{
#ifdef SYS_fsopen
	return (int)syscall(SYS_fsopen, type, FSOPEN_CLOEXEC);
#else
	(void)type;
	errno = ENOSYS;
	return -1;
#endif
}

static int sys_fsconfig(int fd, unsigned int cmd, const char *key,
			const char *value)
{
#ifdef SYS_fsconfig
	return (int)syscall(SYS_fsconfig, fd, cmd, key, value, 0);
#else
	(void)fd, (void)cmd, (void)key, (void)value;
	errno = ENOSYS;
	return -1;
#endif
}

static int sys_fsmount(int fd, unsigned int attrs)
{
#ifdef SYS_fsmount
	return (int)syscall(SYS_fsmount, fd, FSMOUNT_CLOEXEC, attrs);
#else
	(void)fd, (void)attrs;
	errno = ENOSYS;
	return -1;
#endif
}

static int sys_move_mount(int from, int to)
{
#ifdef SYS_move_mount
	return (int)syscall(SYS_move_mount, from, "", to, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
#else
	(void)from, (void)to;
	errno = ENOSYS;
	return -1;
#endif
}

int nsmount_new(int devfd, int *mfd)
{
	char fd[16];
	int fsfd, err, ret;

	fsfd = sys_fsopen("fuse");
	if (fsfd < 0)
		return -errno;
	snprintf(fd, sizeof(fd), "%d", devfd);
	if (sys_fsconfig(fsfd, FSCONFIG_SET_STRING, "source", "timingfs") < 0 ||
	    sys_fsconfig(fsfd, FSCONFIG_SET_STRING, "subtype", "timingfs") <
		    0 ||
	    sys_fsconfig(fsfd, FSCONFIG_SET_STRING, "fd", fd) < 0 ||
	    sys_fsconfig(fsfd, FSCONFIG_SET_STRING, "rootmode", "40000") < 0 ||
	    sys_fsconfig(fsfd, FSCONFIG_SET_STRING, "user_id", "0") < 0 ||
	    sys_fsconfig(fsfd, FSCONFIG_SET_STRING, "group_id", "0") < 0 ||
	    sys_fsconfig(fsfd, FSCONFIG_SET_FLAG, "allow_other", NULL) < 0 ||
	    sys_fsconfig(fsfd, FSCONFIG_SET_FLAG, "default_permissions", NULL) <
		    0 ||
	    sys_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL) < 0) {
		err = -errno;
		close(fsfd);
		return err;
	}
	ret = sys_fsmount(fsfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					MOUNT_ATTR_NODEV);
	err = -errno;
	close(fsfd);
	if (ret < 0)
		return err;
	*mfd = ret;
	return 0;
}

/* What follows runs in a child forked from a process with threads:
 * system calls only, no allocation, no stdio. */

/* @n in decimal into @buf (at least 12 bytes). */
static void decimal(char *buf, int n)
{
	char tmp[12];
	int i = 0, j = 0;

	do
		tmp[i++] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	while (i > 0)
		buf[j++] = tmp[--i];
	buf[j] = '\0';
}

/*
 * Walk @path (absolute, writable: cut in place) from the root of the
 * current mount namespace without following a symbolic link: the last
 * directory in *@dir, its parent and its name in *@parent and *@name.
 * 0 or an errno (ELOOP: a symbolic link; EINVAL: "..", or no component).
 */
static int walk(char *path, int *parent, int *dir, const char **name)
{
	int fd, next, up = -1;
	struct stat st;
	char *c = path, *end;

	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	*name = NULL;
	for (;;) {
		while (*c == '/')
			c++;
		if (!*c)
			break;
		end = strchr(c, '/');
		if (end)
			*end = '\0';
		if (!strcmp(c, "..")) {
			return EINVAL;
		} else if (strcmp(c, ".")) {
			next = openat(fd, c,
				      O_PATH | O_NOFOLLOW | O_DIRECTORY |
					      O_CLOEXEC);
			if (next < 0) {
				int e = errno;

				if (fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) ==
					    0 &&
				    S_ISLNK(st.st_mode))
					return ELOOP;
				return e;
			}
			if (up >= 0)
				close(up);
			up = fd;
			fd = next;
			*name = c;
		}
		if (!end)
			break;
		c = end + 1;
	}
	if (!*name)
		return EINVAL;
	*parent = up;
	*dir = fd;
	return 0;
}

/* The mount ID of the descriptor @name in the directory @fdinfo (a
 * /proc/PID/fdinfo), or -1. */
static long mnt_id_at(int fdinfo, const char *name)
{
	char buf[512], *p;
	long id = -1;
	ssize_t n;
	int fd;

	fd = openat(fdinfo, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "mnt_id:");
	if (p)
		id = strtol(p + 7, NULL, 10);
	return id;
}

/*
 * The mount(2) way: mount on the directory @dir through its magic link
 * in @fds (the host's /proc/self/fd of this child), then send a
 * descriptor of the new mount's root on @sock. An errno.
 */
static int mount_by_fd(int fds, int fdinfo, int parent, int dir,
		       const char *name, const char *opts, int sock)
{
	char num[12], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = num, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	long below, id;
	int root;

	if (fchdir(fds) < 0)
		return errno;
	decimal(num, dir);
	if (mount("timingfs", num, "fuse.timingfs",
		  MS_RDONLY | MS_NOSUID | MS_NODEV, opts) < 0)
		return errno;
	/* The name crosses into the topmost mount there: the new one. */
	root = openat(parent, name,
		      O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return errno;
	decimal(num, dir);
	below = mnt_id_at(fdinfo, num);
	decimal(num, root);
	id = mnt_id_at(fdinfo, num);
	if (id < 0 || id == below)
		return EBUSY;
	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &root, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : errno;
}

static int mount_child(int mntns_fd, char *target, int mfd, const char *opts,
		       int sock)
{
	int fds, fdinfo, parent = -1, dir = -1, err;
	const char *name = NULL;

	/* The daemon's own procfs, before the container's replaces it. */
	fds = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fdinfo = open("/proc/self/fdinfo", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fds < 0 || fdinfo < 0)
		return errno;
	if (setns(mntns_fd, CLONE_NEWNS) < 0)
		return errno;
	err = walk(target, &parent, &dir, &name);
	if (err)
		return err;
	if (mfd >= 0)
		return sys_move_mount(mfd, dir) < 0 ? errno : 0;
	return mount_by_fd(fds, fdinfo, parent, dir, name, opts, sock);
}

/*
 * Whether the mountinfo file @fd lists a mount whose parent is the
 * mount @id (its second field), read in pieces of any length.
 */
static bool has_child_mount(int fd, long id)
{
	unsigned int field = 0; /* 0: the first, 1: the second, 2: later */
	long parent = 0;
	char buf[4096];
	ssize_t n, i;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++) {
			char c = buf[i];

			if (c == '\n') {
				field = 0;
				parent = 0;
			} else if (field < 2 && c == ' ') {
				if (++field == 2 && parent == id)
					return true;
			} else if (field == 1 && c >= '0' && c <= '9') {
				parent = parent * 10 + (c - '0');
			}
		}
	return false;
}

static int umount_child(int mntns_fd, int mfd, long id)
{
	int fds, self, info;
	char num[12];

	fds = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fds < 0 || self < 0)
		return errno;
	if (setns(mntns_fd, CLONE_NEWNS) < 0 || fchdir(fds) < 0)
		return errno;
	/*
	 * The link below would be followed into a mount stacked on the
	 * mount's root: with anything mounted on it, it is left alone.
	 */
	info = openat(self, "mountinfo", O_RDONLY | O_CLOEXEC);
	if (info < 0)
		return errno;
	if (has_child_mount(info, id))
		return EBUSY;
	/* A magic link to the mount's root: no path of the container's. */
	decimal(num, mfd);
	return umount2(num, MNT_DETACH) < 0 ? errno : 0;
}

/* The rest runs in the daemon again. */

static long mnt_id(int fd);

static int start(struct nsmount_child *c, int kind, int mntns_fd,
		 const char *target, int mfd, const char *opts)
{
	long id = kind == 'u' ? mnt_id(mfd) : 0;
	char *copy = target ? strdup(target) : NULL;
	int sv[2] = { -1, -1 }, err;
	pid_t pid;

	if (id < 0) {
		free(copy);
		return (int)id;
	}
	if (target && !copy)
		return -ENOMEM;
	if (kind == 'm' && mfd < 0 &&
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0) {
		err = -errno;
		free(copy);
		return err;
	}
	pid = fork();
	if (pid == 0) {
		if (sv[0] >= 0)
			close(sv[0]);
		_exit(kind == 'm' ?
			      mount_child(mntns_fd, copy, mfd, opts, sv[1]) :
			      umount_child(mntns_fd, mfd, id));
	}
	err = -errno;
	free(copy);
	if (sv[1] >= 0)
		close(sv[1]);
	if (pid < 0) {
		if (sv[0] >= 0)
			close(sv[0]);
		return err;
	}
	c->pid = pid;
	c->sock = sv[0];
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

int nsmount_start_mount(int mntns_fd, const char *target, int mfd,
			const char *opts, struct nsmount_child *c)
{
	return start(c, 'm', mntns_fd, target, mfd, opts);
}

int nsmount_start_umount(int mntns_fd, int mfd, struct nsmount_child *c)
{
	return start(c, 'u', mntns_fd, NULL, mfd, NULL);
}

void nsmount_kill(const struct nsmount_child *c)
{
	if (c->pid > 0)
		kill(c->pid, SIGKILL);
}

/* The descriptor a mount(2) child sent, or -1. */
static int take_root(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

int nsmount_reap(struct nsmount_child *c, bool block, int *mfd)
{
	int status, ret;
	pid_t got;

	do
		got = waitpid(c->pid, &status, block ? 0 : WNOHANG);
	while (got < 0 && errno == EINTR);
	if (got == 0)
		return -EAGAIN;
	if (got < 0)
		ret = -errno;
	else if (WIFEXITED(status))
		ret = -WEXITSTATUS(status);
	else
		ret = -EINTR;
	if (ret == 0 && c->sock >= 0 && mfd) {
		*mfd = take_root(c->sock);
		if (*mfd < 0)
			ret = -EIO;
	}
	if (c->sock >= 0)
		close(c->sock);
	if (c->pidfd >= 0)
		close(c->pidfd);
	*c = (struct nsmount_child){ .pidfd = -1, .sock = -1 };
	return ret;
}

/* The mount ID of the daemon's descriptor @fd, or -errno. */
static long mnt_id(int fd)
{
	char name[12];
	long id;
	int dir;

	dir = open("/proc/self/fdinfo", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	decimal(name, fd);
	id = mnt_id_at(dir, name);
	close(dir);
	return id < 0 ? -EIO : id;
}

int nsmount_attached(int mfd)
{
	long self, above;
	int up;

	/* ".." of a mount's root is in the mount below it, if any. */
	up = openat(mfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return -errno;
	self = mnt_id(mfd);
	above = mnt_id(up);
	close(up);
	if (self < 0 || above < 0)
		return (int)(self < 0 ? self : above);
	return self != above;
}
