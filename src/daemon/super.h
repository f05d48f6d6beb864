/*
 * super: the supervisor, and what the server it starts learns from it.
 *
 * The daemon is two processes. The supervisor is the process that
 * started and mounted (the pid a service manager sees); it holds every
 * mount's /dev/fuse descriptor (its own mount's, inherited by every
 * server it forks, and each attached mount's, which the server sends
 * it), the control socket, and what each mount needs to be served again
 * (its namespaces, its options, the INIT request the kernel sent), and
 * does nothing else: it never reads a request. The server, its child,
 * serves them all (daemon.h). Both hold the same open descriptions, so
 * a mount's connection lives while either lives.
 *
 * When the server dies of a signal (SIGKILL, a crash, the OOM killer),
 * the supervisor forks a new one at once (at most SUPER_RESTARTS_FAST
 * in a second, then one a second), which takes every mount over from
 * the registry: it is forked from the supervisor, whose copy of the own
 * mount's session never saw a request, and replays each mount's INIT
 * into a session of its own (serve_replay()), so that the kernel sees
 * no second INIT. What the dead server had read and not answered is
 * answered by the successor (daemon.c). A server that exits (the mount
 * was unmounted, SIGTERM) ends the supervisor with its status.
 *
 * SIGTERM, SIGINT and SIGHUP to the supervisor go to the server.
 *
 * The registry's changes come from the server over a socket pair, one
 * message each (control.h's framing): "init KEY HEX", "attach KEY
 * TARGET OPTS" with the mount's descriptors, "gone KEY".
 */
#ifndef TIMINGFS_SUPER_H
#define TIMINGFS_SUPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "view.h"

/* The key of the daemon's own mount; an attached one's is never 0. */
#define SUPER_KEY_OWN 0

#define SUPER_RESTARTS_FAST 5

/* A mount, as the supervisor keeps it. */
struct super_mount {
	struct super_mount *next;
	uint64_t key;
	int fuse_fd; /* /dev/fuse */
	int keep_fd; /* the contents of its open files (fs.h) */
	int pidns_fd, mntns_fd, mnt_fd; /* attached: -1 for the own */
	char *target, *opts; /* attached only */
	void *init_req; /* the INIT request the kernel sent; NULL: none yet */
	size_t init_len;
};

struct super;

/*
 * super_new - a supervisor for the daemon's own mount, served through
 * @fuse_fd, its open files kept in @keep_fd (which it takes), with
 * request slots for @workers workers. 0 or -errno.
 */
int super_new(int fuse_fd, int keep_fd, unsigned int workers,
	      struct super **out);

/*
 * super_run - start the server and supervise it. Returns in each
 * server, at once, false; in the supervisor, at its end, true, with the
 * exit status in *@status (the last server's). Signals: SIGTERM, SIGINT
 * and SIGHUP must be blocked (the server takes them by signalfd).
 */
bool super_run(struct super *s, int *status);

/* super_free - the supervisor's or a server's copy; NULL allowed. */
void super_free(struct super *s);

/* ---- in the server ------------------------------------------------ */

/* super_starts - servers started so far, this one included (1 at first). */
unsigned int super_starts(const struct super *s);

/* super_mounts - the mounts as they were when this server started. */
struct super_mount *super_mounts(const struct super *s);

/* super_new_key - a key for a new attached mount, never used before. */
uint64_t super_new_key(struct super *s);

/*
 * super_slots - the request slots shared with the supervisor
 * (serve.h): *@nslots of *@slot_bytes each.
 */
void *super_slots(const struct super *s, size_t *slot_bytes,
		  unsigned int *nslots);

/*
 * super_view_record - where the own mount's views record their slots
 * (view.h), shared with the supervisor: VIEW_SLOTS of them.
 */
struct view_record *super_view_record(const struct super *s);

/* super_fd - the socket to the supervisor: hang-up when it died. */
int super_fd(const struct super *s);

/*
 * super_tell_init, _attach, _gone - tell the supervisor of a mount's
 * INIT request, of a new attached mount (its descriptors stay the
 * caller's: the supervisor gets its own), and of a mount gone. From any
 * thread. 0 or -errno (the supervisor is gone: nothing to keep).
 */
int super_tell_init(struct super *s, uint64_t key, const void *req,
		    size_t len);
int super_tell_attach(struct super *s, const struct super_mount *m);
int super_tell_gone(struct super *s, uint64_t key);

/*
 * super_forget - the server took @m over (its descriptors are now the
 * server's) or closed them: drop it from this process's registry.
 */
void super_forget(struct super *s, struct super_mount *m);

#endif
