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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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
 * ends, @key what names its mount in the request slots and to the init
 * hook (serve_set_slots()). 0 or -errno (-EMFILE: SERVE_MAX_SESSIONS
 * are served).
 */
int serve_add(struct serve *sv, struct fuse_session *se, void *owner,
	      uint64_t key);

/*
 * Request slots: where a server's workers read their requests, in
 * memory it shares with the process that outlives it (the supervisor),
 * so that a successor finds the requests a dead server had read and not
 * answered. Worker i reads into slot i; a slot says which mount (@key
 * of serve_add()) it reads from, and @len is the request's length from
 * the moment the kernel gave it (the request's own first word) until
 * its answer was written, then 0. A slot may hold a request answered
 * already when its worker died in between: answered again, the kernel
 * finds no request of that number and drops it.
 */
#define SERVE_REQ_PAGES 256
struct serve_slot {
	uint64_t key;
	/* The request itself, from the device: its header's first word
	 * is its length, which the worker zeroes once it is answered. */
	union {
		uint32_t len;
		char req[8];
	};
};

/* serve_slot_bytes - the size of one slot: libfuse's largest read. */
size_t serve_slot_bytes(void);

/* serve_init_fn - a mount's INIT request, as the kernel sent it. */
typedef void serve_init_fn(void *arg, uint64_t key, const void *req,
			   size_t len);

/*
 * serve_set_slots - read requests into the @nslots slots of
 * @slot_bytes each at @slots (the workers past @nslots read into memory
 * of their own), and show every INIT request to @on_init (may be NULL)
 * before it is answered. Before serve_start().
 */
void serve_set_slots(struct serve *sv, void *slots, size_t slot_bytes,
		     unsigned int nslots, serve_init_fn *on_init, void *arg);

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

/*
 * serve_replay - serve @req, @len bytes: a request a dead server had
 * read from @se's device, read again. With @quiet, it is renumbered so
 * that its answer reaches no one (the kernel answers the write ENOENT,
 * which libfuse keeps quiet): an INIT, which the kernel had answered,
 * replayed so that @se knows what it said. From one thread, before the
 * workers serve @se. 0 or -errno.
 */
int serve_replay(struct fuse_session *se, const void *req, size_t len,
		 bool quiet);

/*
 * serve_init_has_resend - whether the kernel that sent INIT request
 * @req can send again what a server read and did not answer (Linux
 * 6.9 and later: FUSE_HAS_RESEND).
 */
bool serve_init_has_resend(const void *req, size_t len);

/*
 * serve_resend - have the kernel send again every request that was
 * read from the device @fd and not answered (FUSE_NOTIFY_RESEND). 0 or
 * -errno (-EINVAL: this kernel cannot).
 */
int serve_resend(int fd);

/* serve_free - stop every worker and wait for them; NULL allowed. */
void serve_free(struct serve *sv);

#endif
