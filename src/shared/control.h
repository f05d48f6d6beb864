/*
 * control: the daemon's control socket, and the messages timingfsctl
 * and the daemon exchange over it.
 *
 * A Unix socket of type SOCK_SEQPACKET, mode 0600 and owned by root,
 * at CONTROL_DEFAULT_PATH or where $TIMINGFS_CONTROL says. One message
 * each way per connection: the request is fields separated by NUL
 * bytes, the command first ("attach", "detach", "mounts"), with the
 * descriptors it names passed alongside (SCM_RIGHTS); the answer is a
 * status ("0" done, "1" refused or failed, "2" bad usage), then the
 * text to print. "upgrade" is answered by the supervisor (super.h),
 * once the new binary serves or was refused.
 */
#ifndef TIMINGFS_CONTROL_H
#define TIMINGFS_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#define CONTROL_DEFAULT_PATH "/run/timingfs.sock"
#define CONTROL_ENV "TIMINGFS_CONTROL"
#define CONTROL_MAX_MSG 65536
#define CONTROL_MAX_FIELDS 8
#define CONTROL_MAX_FDS 5
/*
 * The daemon answers every request within this many seconds (attach.h:
 * what enters a container is killed before); timingfsctl waits no more.
 */
#define CONTROL_ANSWER_S 10
/* An upgrade tries the new binary first, for up to 10 s, then starts it. */
#define CONTROL_UPGRADE_S 30

/* One message: its fields, and the descriptors that came with it. */
struct control_msg {
	char text[CONTROL_MAX_MSG];
	const char *field[CONTROL_MAX_FIELDS];
	unsigned int nfields;
	int fd[CONTROL_MAX_FDS];
	unsigned int nfds;
};

/* control_path - $TIMINGFS_CONTROL, or CONTROL_DEFAULT_PATH. */
const char *control_path(void);

/*
 * control_listen - listen at @path, replacing a socket there that no
 * daemon answers on; -EADDRINUSE when one does. The listening socket
 * (non-blocking, close-on-exec) in *@fd; 0 or -errno.
 */
int control_listen(const char *path, int *fd);

/*
 * control_connect - connect to the daemon at @path: the socket, or
 * -errno (-ENOENT and -ECONNREFUSED: no daemon answers there).
 */
int control_connect(const char *path);

/*
 * control_send - send @nfields fields of @field, and @nfds descriptors
 * of @fd, as one message. 0 or -errno (-EMSGSIZE: too long).
 */
int control_send(int sock, const char *const *field, unsigned int nfields,
		 const int *fd, unsigned int nfds);

/*
 * control_recv - receive one message into @m, its descriptors
 * close-on-exec (the caller closes them). 0, -EPIPE at the end of the
 * stream, -EPROTO for a message not made by control_send(), or -errno.
 */
int control_recv(int sock, struct control_msg *m);

/* control_close_fds - close the descriptors that came with @m. */
void control_close_fds(struct control_msg *m);

/* control_peer_uid - the user of the process at the other end, or -1. */
uid_t control_peer_uid(int sock);

#endif
