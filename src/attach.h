/*
 * attach: the mounts the daemon serves inside other mount namespaces
 * (timingfsctl attach), each pinned to a PID namespace.
 *
 * An attached mount is a FUSE session of its own, with the state of a
 * mount of its own (fs.h) and views pinned to its PID namespace
 * (view.h), served by the daemon's workers (serve.h) from the daemon's
 * one engine, exited-task table and exit listener. A child process
 * enters the target's mount namespace and mounts there with a
 * /dev/fuse descriptor the daemon opened: the container needs no
 * /dev/fuse, and its mounts never appear in the daemon's namespace.
 *
 * A mount goes when it is detached, when it is unmounted from inside,
 * and when the init of its PID namespace exits (the kernel then kills
 * every other process of it): a pidfd of that init says so at once.
 * All of it is called from one thread, the daemon's main one.
 */
#ifndef TIMINGFS_ATTACH_H
#define TIMINGFS_ATTACH_H

#include <stddef.h>

#include "config.h"
#include "engine.h"
#include "exited.h"
#include "fs.h"
#include "listener.h"
#include "serve.h"

/* What every attached mount shares with the daemon's own. */
struct attach_env {
	struct engine *engine;
	const struct config *cfg;
	struct fs_dropper *dropper;
	struct exited *exited; /* NULL: none kept */
	struct listener *listener;
	struct serve *serve;
};

struct attached;
struct attach_set;

/* attach_set_new - no mounts yet, sharing @env (which outlives it). */
int attach_set_new(const struct attach_env *env, struct attach_set **out);

/*
 * attach_set_free - unmount every mount and free them; NULL allowed.
 * Call it before the workers stop.
 */
void attach_set_free(struct attach_set *as);

/*
 * attach_add - mount at @target, as the mount namespace @mntfd sees it,
 * a tree pinned to the PID namespace @pidfd, with the mount options
 * @opts (NULL or "OPT[,OPT]"). Returns 0, or -errno with one line of
 * why in @err; -EINVAL for an option it does not know (bad usage).
 * The descriptors stay the caller's.
 */
int attach_add(struct attach_set *as, int pidfd, int mntfd, const char *opts,
	       const char *target, char *err, size_t errlen);

/*
 * attach_remove - unmount the mount at @target pinned to the PID
 * namespace @pidfd. 0, or -ENOENT with one line of why in @err.
 */
int attach_remove(struct attach_set *as, int pidfd, const char *target,
		  char *err, size_t errlen);

/*
 * attach_list - every mount, a line each, "PIDNS TARGET init PID mntns
 * MNTNS\n" (TARGET with space, tab, newline and backslash as octal
 * escapes, as in /proc/mounts), into @buf. The length it needs.
 */
size_t attach_list(struct attach_set *as, char *buf, size_t size);

/* attach_count - how many mounts there are. */
unsigned int attach_count(const struct attach_set *as);

/*
 * attach_fd - readable when the init of a mount's PID namespace has
 * exited; then call attach_reap(). -1 when the kernel has no pidfd:
 * then call attach_reap() every ATTACH_POLL_MS.
 */
int attach_fd(const struct attach_set *as);
#define ATTACH_POLL_MS 1000

/* attach_reap - remove the mounts whose PID namespace's init is gone. */
void attach_reap(struct attach_set *as);

/*
 * attach_ended - the session of @m ended (serve_take_ended() gave it):
 * it was unmounted from inside its namespace. Removes it.
 */
void attach_ended(struct attach_set *as, struct attached *m, int error);

#endif
