/*
 * serve: the workers that serve every FUSE session of the daemon.
 *
 * One pool of threads serves any number of sessions (the daemon's own
 * mount and every attached one): a worker waits on all of their
 * /dev/fuse descriptors at once, takes a session that has a request,
 * and answers its requests one after another while they keep coming;
 * the others wait meanwhile for the other sessions. A reader that reads
 * file after file is then answered by one worker, which has the next
 * request by the time its answer is written, rather than by each of the
 * pool's workers in turn, each woken for it (on one CPU, 0.87 the
 * floor's cost instead of 1.25: make bench). A request that may take
 * long gives its session up first (serve_may_block()), so that a table
 * of ten thousand threads never holds up the mount's other readers; so
 * does, on its behalf, any request still running after a whole tick of
 * SERVE_TICK_MS, whatever it waits for: one reader's slow request never
 * holds up the others (with more than one worker).
 * Whenever a worker takes a session and no other is left waiting, the
 * pool grows by one, up to its bound, and keeps the idle ones; the
 * number of sessions never adds a thread.
 *
 * A session that ends (its mount was unmounted: the device says ENODEV,
 * or it failed) is taken out of the pool by the worker that saw it, and
 * reported to whoever watches serve_ended_fd(). Only the thread that
 * added and removes sessions calls serve_add(), serve_remove() and
 * serve_take_ended().
 */
#ifndef TIMINGFS_SERVE_H
#define TIMINGFS_SERVE_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

struct serve;

/* How long a request runs before its session is given up, at most
 * twice this. */
#define SERVE_TICK_MS 10

/* The most sessions one pool serves: the daemon's own and 16,383 more. */
#define SERVE_MAX_SESSIONS 16384

/*
 * serve_new - a pool of at most @max_workers workers (1: a single
 * thread serves every request). No thread runs before serve_start().
 * 0 or -errno.
 */
int serve_new(unsigned int max_workers, struct serve **out);

/*
 * serve_start - start the first worker: after the daemon has forked.
 * 0 or -errno.
 */
int serve_start(struct serve *sv);

/*
 * serve_add - serve @se from now on (its descriptor is made
 * non-blocking); @owner is what serve_take_ended() gives back when it
 * ends. 0 or -errno (-EMFILE: SERVE_MAX_SESSIONS are served).
 */
int serve_add(struct serve *sv, struct fuse_session *se, void *owner);

/*
 * serve_remove - stop serving @se: when it returns, no worker holds a
 * request of it, and the session may be destroyed. One that ended is
 * already out; removing it is allowed.
 */
void serve_remove(struct serve *sv, struct fuse_session *se);

/*
 * serve_may_block - the request the calling worker serves may take long
 * (a table of many tasks, a listing): other workers take the next
 * requests of its session meanwhile. Nothing outside a worker.
 */
void serve_may_block(void);

/* serve_ended_fd - readable while ended sessions wait to be taken. */
int serve_ended_fd(const struct serve *sv);

/*
 * serve_take_ended - the owner of a session that ended, and in *@error
 * 0 for an unmount or the -errno it failed with; NULL when no other is
 * left to take.
 */
void *serve_take_ended(struct serve *sv, int *error);

/* serve_free - stop every worker and wait for them; NULL allowed. */
void serve_free(struct serve *sv);

#endif
