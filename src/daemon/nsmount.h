/*
 * nsmount: a FUSE mount in another mount namespace (a container's),
 * made and removed by what the daemon holds of it, never by a path the
 * container controls.
 *
 * The mount is made in the daemon with the kernel's mount API
 * (fsopen, fsconfig, fsmount: Linux 5.2), which hands back a descriptor
 * of the new, still detached mount: its identity for as long as the
 * daemon holds it. A child process then enters the container's mount
 * namespace, walks to TARGET one component at a time without following
 * any symbolic link (nor "..") and attaches the mount on the directory
 * it reached (move_mount). To remove it, another child enters the
 * namespace and unmounts that very mount through the daemon's
 * descriptor of it (the host's /proc/self/fd/N, a magic link to its
 * root), wherever the container has moved, renamed or replaced the
 * path to it meanwhile; a mount no longer attached there, or with
 * another mounted on it (which the link would lead to), is left alone.
 *
 * On kernels without the mount API the child mounts with mount(2) on
 * the directory it reached (by its descriptor, no path again) and sends
 * back a descriptor of the new mount's root, which is then its identity.
 *
 * Only the children touch the container's file systems, so that a
 * filesystem of the container that never answers can only hold up a
 * child, which the caller kills at its deadline. Every function here is
 * called from one thread at a time; children are made with fork(2), and
 * do only what is safe after a fork in a process with threads.
 */
#ifndef TIMINGFS_NSMOUNT_H
#define TIMINGFS_NSMOUNT_H

#include <stdbool.h>
#include <sys/types.h>

/* A child at work in another mount namespace. */
struct nsmount_child {
	pid_t pid; /* 0: none */
	int pidfd; /* readable when it has exited; -1 without pidfd */
	int sock; /* mount(2) only: where the mount's root comes back */
};

/*
 * nsmount_new - a detached FUSE mount (type fuse.timingfs, read-only,
 * nosuid, nodev, allow_other, default_permissions, owned by root) served
 * through the /dev/fuse descriptor @devfd; its descriptor in *@mfd
 * (close-on-exec). 0, -ENOSYS where the kernel has no mount API (then
 * use nsmount_start_mount() with @mfd -1), or -errno.
 */
int nsmount_new(int devfd, int *mfd);

/*
 * nsmount_start_mount - start a child that enters the mount namespace
 * @mntns_fd and puts a mount on the directory @target (an absolute
 * path, walked from that namespace's root without following symbolic
 * links): the detached mount @mfd, or, with @mfd -1, a new one made by
 * mount(2) with the FUSE options @opts (their fd= a /dev/fuse
 * descriptor of the caller's, which the child inherits). 0 and *@c, or -errno. Finish with nsmount_reap().
 */
int nsmount_start_mount(int mntns_fd, const char *target, int mfd,
			const char *opts, struct nsmount_child *c);

/*
 * nsmount_start_umount - start a child that enters the mount namespace
 * @mntns_fd and lazily unmounts the mount whose descriptor is @mfd,
 * wherever it is in that namespace. 0 and *@c, or -errno. Finish with
 * nsmount_reap().
 */
int nsmount_start_umount(int mntns_fd, int mfd, struct nsmount_child *c);

/*
 * nsmount_reap - whether the child @c has ended, with @block waiting
 * for it: -EAGAIN while it runs; otherwise what it did, 0 or -errno
 * (-ELOOP: a symbolic link on the way to the target, -ENOTDIR: a part
 * of it is no directory; for an unmount -EINVAL: that mount was not
 * mounted in the namespace any more, -EBUSY: something is mounted on
 * it; -EINTR: it was killed), and @c
 * made empty. A mount(2) child's mount comes back as a descriptor in
 * *@mfd (when @mfd is not NULL and it succeeded).
 */
int nsmount_reap(struct nsmount_child *c, bool block, int *mfd);

/* nsmount_kill - kill the child @c (SIGKILL); reap it still. */
void nsmount_kill(const struct nsmount_child *c);

/*
 * nsmount_attached - whether the mount @mfd is still attached below
 * another mount: 1, 0 once it was unmounted (from inside its
 * namespace, say), or -errno. Reads only the daemon's own /proc, never
 * the container's file systems.
 */
int nsmount_attached(int mfd);

#endif
