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
 * The mount is made and removed by nsmount.h: attach keeps a descriptor
 * of it, its identity, and removes exactly that mount, never following
 * TARGET again. A mount goes when it is detached, when the init of its
 * PID namespace exits (the kernel then kills every other process of
 * it: a pidfd of that init says so at once), when its session ends,
 * and at the daemon's end; one unmounted from inside is forgotten when
 * next listed or attached over. All of it is called from one thread,
 * the daemon's main one.
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
#include "super.h"

/* What every attached mount shares with the daemon's own. */
struct attach_env {
	struct engine *engine;
	const struct config *cfg;
	struct fs_dropper *dropper;
	struct exited *exited; /* NULL: none kept */
	struct listener *listener;
	struct serve *serve;
	struct super *super; /* told of every mount, to keep it */
};

struct attached;
struct attach_set;

/*
 * The control plane never waits on a container: what enters one (the
 * walk to TARGET, the mount, the unmount) is done by a child process
 * (nsmount.h) that the set kills at ATTACH_DEADLINE_MS; the caller
 * learns the outcome later, through attach_done_fn, and meanwhile goes
 * on (the daemon keeps serving, answering and taking signals). At most
 * ATTACH_MAX_BUSY attaches and detaches are under way at once.
 */
#define ATTACH_DEADLINE_MS 8000
#define ATTACH_MAX_BUSY 64

/*
 * attach_done_fn - an attach or detach that was started is over: @ret
 * 0, or -errno with one line of why in @text (-ETIMEDOUT: the container
 * did not let it finish in time; -ECANCELED: the daemon is stopping).
 * Called once, from attach_tick() or attach_set_free().
 */
typedef void attach_done_fn(void *arg, int ret, const char *text);

/* attach_set_new - no mounts yet, sharing @env (which outlives it). */
int attach_set_new(const struct attach_env *env, struct attach_set **out);

/*
 * attach_set_free - unmount every mount the set made, each by its
 * identity, and free them; NULL allowed. Bounded: children that do not
 * finish in ATTACH_DEADLINE_MS are killed (their mounts logged and left
 * alone). Callers still waiting hear -ECANCELED. Call it before the
 * workers stop.
 */
void attach_set_free(struct attach_set *as);

/*
 * attach_add - start mounting, at @target as the mount namespace @mntfd
 * sees it (no symbolic link followed on the way), a tree pinned to the
 * PID namespace @pidfd, with the mount options @opts (NULL or
 * "OPT[,OPT]"). Returns 0 when started: @done(@arg, ...) tells the
 * outcome later. Otherwise -errno at once, with one line of why in
 * @err, and @done is not called: -EINVAL for an option it does not know
 * (bad usage), -EEXIST when @target is taken in that namespace, -EBUSY
 * when ATTACH_MAX_BUSY are under way. The descriptors stay the caller's.
 */
int attach_add(struct attach_set *as, int pidfd, int mntfd, const char *opts,
	       const char *target, attach_done_fn *done, void *arg, char *err,
	       size_t errlen);

/*
 * attach_remove - start unmounting the mount that attach_add() made at
 * @target for the PID namespace @pidfd: that mount, by its identity,
 * wherever the container has moved it since, and nothing else. 0 when
 * started (@done tells the outcome); -ENOENT when there is none, -EBUSY
 * while an attach or detach of it is under way, with one line in @err.
 */
int attach_remove(struct attach_set *as, int pidfd, const char *target,
		  attach_done_fn *done, void *arg, char *err, size_t errlen);

/*
 * attach_adopt - serve, as mounted, the mount @sm that a dead server
 * attached (the supervisor kept it: super.h), replaying its INIT
 * request: its descriptors, target and options are taken, whatever the
 * outcome. 0, or -errno with one line of why in @err (its descriptors
 * are then closed: the mount ends with the supervisor's copies).
 */
int attach_adopt(struct attach_set *as, struct super_mount *sm, char *err,
		 size_t errlen);

/* attach_session - the session of the mount @key, or NULL. */
struct fuse_session *attach_session(struct attach_set *as, uint64_t key);

/*
 * attach_resend - have the kernel send every attached mount's requests
 * read and not answered again (serve_resend()).
 */
void attach_resend(struct attach_set *as);

/*
 * attach_list - every mount that is attached, a line each, "PIDNS
 * TARGET init PID mntns MNTNS\n" (TARGET with space, tab, newline and
 * backslash as octal escapes, as in /proc/mounts), into @buf. Mounts
 * unmounted from inside their namespace are dropped first. The length
 * it needs.
 */
size_t attach_list(struct attach_set *as, char *buf, size_t size);

/*
 * attach_fd - readable when a child ended or the init of a mount's PID
 * namespace exited: then call attach_tick(). -1 when the kernel has no
 * pidfd (then attach_timeout_ms() says when to look).
 */
int attach_fd(const struct attach_set *as);
#define ATTACH_POLL_MS 1000

/*
 * attach_timeout_ms - how long the caller may wait, at most, before
 * calling attach_tick() again (a deadline, or polling where the kernel
 * has no pidfd); -1: until attach_fd() is readable.
 */
int attach_timeout_ms(const struct attach_set *as);

/*
 * attach_tick - do what is due: finish the children that ended, kill
 * those past their deadline, and unmount the mounts whose PID
 * namespace's init is gone. Never blocks.
 */
void attach_tick(struct attach_set *as);

/*
 * attach_ended - the session of @m ended (serve_take_ended() gave it):
 * its mount is unmounted (by identity, if still attached) and freed.
 */
void attach_ended(struct attach_set *as, struct attached *m, int error);

#endif
