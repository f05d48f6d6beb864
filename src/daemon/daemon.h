/*
 * daemon: the serving daemon's lifetime, once main has parsed the
 * command line and built its parts.
 *
 * It mounts the daemon's own mount, forks into the background, and
 * from then on its main thread waits for what changes the set of
 * mounts: signals (SIGHUP re-reads the configuration; SIGTERM and
 * SIGINT unmount everything and end), the control socket (control.h:
 * timingfsctl's attach, detach and mounts), the end of a session, and
 * the exit of an attached namespace's init (attach.h). The workers
 * (serve.h) answer the requests of every mount meanwhile.
 */
#ifndef TIMINGFS_DAEMON_H
#define TIMINGFS_DAEMON_H

#include <stdbool.h>

#include "config.h"
#include "engine.h"
#include "fs.h"
#include "view.h"

#define EXIT_SERVE 1
#define EXIT_USAGE 2

/* What main built, and how to serve it. */
struct daemon_parts {
	struct config *cfg; /* in use: changed by SIGHUP alone */
	const char *config_path; /* the file read at mount, or NULL */
	struct engine *engine;
	struct views *views; /* of the daemon's own mount */
	struct fs *fs; /* the daemon's own mount */
	struct fs_dropper *dropper;
	struct fuse_session *se; /* its session, not mounted yet */
	const char *mountpoint;
	bool foreground;
	unsigned int max_workers; /* 1: single-threaded */
	char **argv; /* as started: an upgrade runs the binary with them */
	/* An exec'd supervisor's state (super.h), or -1: mount afresh. */
	int state_fd;
};

/*
 * daemon_run - mount @p->se at @p->mountpoint (or, with a state, take
 * over what it names), and supervise a server (super.h) that serves
 * until the mount is unmounted or a signal ends it, then unmounts
 * everything. Returns, in the supervisor and in each server, the exit
 * status: 0 after a clean end, EXIT_SERVE when it cannot mount or
 * serve (having said why).
 */
int daemon_run(struct daemon_parts *p);

/*
 * daemon_unmount_path - unmount what is mounted at @path lazily (a
 * reader still in it does not keep it): root itself, another user
 * through fusermount3, which lets a user unmount only what that user
 * mounted. 0 or -errno.
 */
int daemon_unmount_path(const char *path);

#endif
