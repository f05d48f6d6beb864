/*
 * super_store: systemd's descriptor store (super.h), the supervisor's
 * side of it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "super.h"
#include "super_int.h"

/*
 * systemd's descriptor store (sd_notify(3), FDSTORE=1): where the
 * supervisor leaves its descriptors and its state, so that a restart of
 * the service finds them (LISTEN_FDS) and takes every mount over.
 */
static struct {
	struct sockaddr_un addr;
	socklen_t len; /* 0: no service manager to tell */
	int *old_fd, *new_fd; /* from the store at start: "fdN" then, now */
	unsigned int nold;
} store;

/* A descriptor's number in the state: now, once through the store. */
int super_store_xlat(int fd)
{
	unsigned int i;

	if (fd < 0 || !store.nold)
		return fd;
	for (i = 0; i < store.nold; i++)
		if (store.old_fd[i] == fd)
			return store.new_fd[i];
	return -1;
}

int super_store_state(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	char *copy, *name, *save = NULL;
	int n, i, state = -1;

	if (!pid || !fds || !names || atoi(pid) != (int)getpid())
		return -1;
	n = atoi(fds);
	copy = strdup(names);
	store.old_fd = calloc((size_t)n + 1, sizeof(int));
	store.new_fd = calloc((size_t)n + 1, sizeof(int));
	if (!copy || !store.old_fd || !store.new_fd || n <= 0) {
		free(copy);
		return -1;
	}
	for (i = 0, name = strtok_r(copy, ":", &save); name && i < n;
	     i++, name = strtok_r(NULL, ":", &save)) {
		if (!strcmp(name, "state")) {
			state = 3 + i;
		} else if (!strncmp(name, "fd", 2)) {
			store.old_fd[store.nold] = atoi(name + 2);
			store.new_fd[store.nold++] = 3 + i;
		}
	}
	free(copy);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return state;
}

static void store_open(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t n = path ? strlen(path) : 0;

	if (store.len || !n || (path[0] != '/' && path[0] != '@') ||
	    n >= sizeof(store.addr.sun_path))
		return;
	store.addr.sun_family = AF_UNIX;
	memcpy(store.addr.sun_path, path, n);
	if (path[0] == '@')
		store.addr.sun_path[0] = '\0';
	store.len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
				(path[0] == '/'));
}

/* One message to the service manager, with @fd (-1: none). */
static int store_send(const char *text, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)text,
			     .iov_len = strlen(text) };
	struct msghdr msg = { .msg_name = &store.addr,
			      .msg_namelen = store.len,
			      .msg_iov = &iov,
			      .msg_iovlen = 1 };
	struct cmsghdr *c;
	int sock, ret;

	if (!store.len)
		return 0;
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	ret = sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
	close(sock);
	return ret;
}

/* Keep @fd in the store as "fdN" (N its number), or drop it. */
static void store_fd(int fd, bool keep)
{
	char text[64];

	if (fd < 0 || !store.len)
		return;
	/* Any kept under the name before goes first (an upgrade's). */
	snprintf(text, sizeof(text), "FDSTOREREMOVE=1\nFDNAME=fd%d", fd);
	store_send(text, -1);
	if (!keep)
		return;
	snprintf(text, sizeof(text), "FDSTORE=1\nFDNAME=fd%d", fd);
	if (store_send(text, fd) < 0)
		log_msg(LOG_WARNING,
			"systemd keeps no descriptor of this daemon: a "
			"restart of the service loses the mounts");
}

void super_store_mount(const struct super_mount *m, bool keep)
{
	store_fd(m->fuse_fd, keep);
	store_fd(m->keep_fd, keep);
	store_fd(m->pidns_fd, keep);
	store_fd(m->mntns_fd, keep);
	store_fd(m->mnt_fd, keep);
}

/* The state, as the store keeps it: written anew at every change. */
void super_store_write(struct super *s)
{
	if (store.len && s->store_fd >= 0)
		super_write_state(s, s->store_fd, MODE_STORE, 0, -1, -1);
}

/*
 * Under a service manager with a descriptor store: what it kept from
 * the last process goes (it is this one's now, under other numbers),
 * and everything is kept anew, the state first.
 */
void super_store_begin(struct super *s)
{
	struct super_mount *m;
	unsigned int i;

	store_open();
	if (!store.len)
		return;
	for (i = 0; i < store.nold; i++) {
		char text[64];

		snprintf(text, sizeof(text), "FDSTOREREMOVE=1\nFDNAME=fd%d",
			 store.old_fd[i]);
		store_send(text, -1);
	}
	store_send("FDSTOREREMOVE=1\nFDNAME=state", -1);
	s->store_fd = memfd_create("timingfs-state", MFD_CLOEXEC);
	if (s->store_fd < 0)
		return;
	super_store_write(s);
	if (store_send("FDSTORE=1\nFDNAME=state", s->store_fd) < 0) {
		store.len = 0; /* no store: nothing more to tell */
		return;
	}
	store_fd(s->control_fd, true);
	store_fd(s->slots_fd, true);
	store_fd(s->views_fd, true);
	store_fd(s->history_fd, true);
	for (m = s->mounts; m; m = m->next)
		super_store_mount(m, true);
}

bool super_leaving(const struct super *s)
{
	return s->leaving;
}

bool super_store_kept(void)
{
	return store.len != 0;
}
