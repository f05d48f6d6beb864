/*
 * super: the supervisor, and what the server it starts learns from it.
 *
 * The daemon is two processes. The supervisor is the process that
 * started and mounted (the pid a service manager sees); it holds every
 * mount's /dev/fuse descriptor (its own mount's, inherited by every
 * server it forks, and each attached mount's, which the server sends
 * it), the control socket, and what each mount needs to be served again
 * (its namespaces, its options, the INIT request the kernel sent, the
 * keep of its open files), and does nothing else: it never reads a
 * request. The server, its child, serves them all (daemon.h). Both hold
 * the same open descriptions, so a mount's connection lives while
 * either lives.
 *
 * When the server dies of a signal (SIGKILL, a crash, the OOM killer),
 * the supervisor forks a new one at once (at most SUPER_RESTARTS_FAST
 * in a second, then one a second), which takes every mount over from
 * the registry: it replays each mount's INIT into a session of its own
 * (serve_replay()), so that the kernel sees no second INIT, and answers
 * what the dead server had read and not answered (daemon.c). A server
 * that exits (the mount was unmounted, SIGTERM) ends the supervisor
 * with its status.
 *
 * The supervisor's state (the registry, the shared memory's memfds: the
 * request slots, the view records, the engine's history; the control
 * socket) can be written into a memfd and given to a new
 * process of the daemon's binary through exec (super_load()): that
 * process is the supervisor from then on, and serves every mount as a
 * successor does. So:
 *   - an upgrade (SIGUSR2, or timingfsctl upgrade through the server):
 *     the binary at the path the daemon was started from is first run
 *     with TIMINGFS_CHECK set (it reads its configuration, builds what
 *     it serves with, and exits 0, or 1 with one line of why); if that
 *     fails, the supervisor says so and nothing changes; otherwise the
 *     supervisor executes it (the same pid), and the new image kills the
 *     old server and starts its own;
 *   - the supervisor dead: the server, which keeps a copy of the
 *     registry, starts a new supervisor (its child), which watches it
 *     through a pidfd and replaces it as after a crash;
 *   - under a service manager with a descriptor store ($NOTIFY_SOCKET,
 *     systemd's FileDescriptorStoreMax=), every descriptor is kept
 *     there (FDSTORE=1, named fdN) with the state in a memfd named
 *     "state", rewritten at every change; SIGUSR1 (the unit's
 *     RestartKillSignal=) kills the server and ends the supervisor
 *     with nothing unmounted, and the next start, given the store in
 *     LISTEN_FDS, takes every mount over (super_store_state()).
 *
 * SIGTERM, SIGINT and SIGHUP to the supervisor go to the server;
 * SIGUSR2 upgrades; SIGUSR1 ends it for a restart of the service.
 *
 * The registry's changes come from the server over a socket pair, one
 * message each (control.h's framing): "init KEY HEX", "attach KEY
 * TARGET OPTS" with the mount's descriptors, "gone KEY", and "end
 * STATUS" (the server ends by itself), "upgrade" with the descriptor
 * of the timingfsctl that asked.
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

/*
 * How often the supervisor looks at its server's main thread: a server
 * killed while a thread of it waits in the kernel for an answer only a
 * server gives is replaced once it is seen a zombie twice (supervisor.c).
 */
#define SUPER_LOOK_MS 50
/*
 * How often an upgraded supervisor looks at the old server it killed
 * until it is reaped or seen a zombie twice: its successor starts then.
 */
#define SUPER_KILLED_LOOK_MS 10

/* The environment that hands a supervisor's state to an exec'd one. */
#define SUPER_STATE_ENV "TIMINGFS_STATE"
/* Set for a binary's trial run before an upgrade. */
#define SUPER_CHECK_ENV "TIMINGFS_CHECK"
/* An upgrade's trial run must be over within this long. */
#define SUPER_CHECK_MS 10000

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
	bool borrowed; /* a server's: its descriptors are attach's */
};

struct super;

/*
 * super_new - a supervisor for the daemon's own mount at @mountpoint,
 * served through @fuse_fd, its open files kept in @keep_fd (which it
 * takes), with request slots for @workers workers, the control socket
 * @control_fd (-1: none), and the binary's @argv (kept: an upgrade
 * runs it again). 0 or -errno.
 */
int super_new(int fuse_fd, int keep_fd, unsigned int workers, int control_fd,
	      const char *mountpoint, char **argv, struct super **out);

/*
 * super_load - the supervisor whose state is in the memfd @fd (an
 * exec'd one: SUPER_STATE_ENV), which it closes. 0, or -errno with one
 * line of why in @err.
 */
int super_load(int fd, char **argv, struct super **out, char *err,
	       size_t errlen);

/*
 * super_store_state - the state systemd's descriptor store handed to
 * this process (LISTEN_FDS, its descriptor named "state"), or -1: a
 * restart of the service, to pass to super_load(). The LISTEN_
 * variables are consumed.
 */
int super_store_state(void);

/*
 * super_leaving - whether the supervisor ended for a restart of the
 * service (SIGUSR1 under a service manager that keeps its descriptors):
 * nothing is unmounted, and the control socket stays.
 */
bool super_leaving(const struct super *s);

/* super_own_fd, _control_fd, _mountpoint - of the state. */
int super_own_fd(const struct super *s);
int super_control_fd(const struct super *s);
const char *super_mountpoint(const struct super *s);

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

/*
 * super_history - the engine's history of the splits shown (task.h),
 * in a memfd the supervisor made before the first server and hands to
 * every one after (and through exec and the descriptor store): *@bytes
 * of it, mapped shared.
 */
void *super_history(const struct super *s, size_t *bytes);

/* super_fd - the socket to the supervisor: hang-up when it died. */
int super_fd(const struct super *s);

/*
 * super_tell_init, _attach, _gone, _end - tell the supervisor of a
 * mount's INIT request, of a new attached mount (its descriptors stay
 * the caller's: the supervisor gets its own), of a mount gone, of this
 * server's end with @status; the server's own copy of the registry
 * follows. From any thread. 0 or -errno (the supervisor is gone).
 */
int super_tell_init(struct super *s, uint64_t key, const void *req, size_t len);
int super_tell_attach(struct super *s, const struct super_mount *m);
int super_tell_gone(struct super *s, uint64_t key);
int super_tell_end(struct super *s, int status);

/*
 * super_tell_upgrade - timingfsctl upgrade, on the connection @sock:
 * the supervisor answers it (the descriptor is passed). 0 or -errno.
 */
int super_tell_upgrade(struct super *s, int sock);

/*
 * super_adopt - the server took @m over: its descriptors are now
 * attach's, which closes them (the copy of the registry only names
 * them).
 */
void super_adopt(struct super *s, struct super_mount *m);

/*
 * super_respawn - the supervisor died: start a new one, a child of this
 * server, from this server's copy of the registry. 0 or -errno.
 */
int super_respawn(struct super *s);

#endif
