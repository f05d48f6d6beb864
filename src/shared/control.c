/*
 * control: the daemon's control socket, and its messages (control.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"

const char *control_path(void)
{
	const char *p = getenv(CONTROL_ENV);

	return p && *p ? p : CONTROL_DEFAULT_PATH;
}

static int address(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	strcpy(sun->sun_path, path);
	return 0;
}

int control_connect(const char *path)
{
	struct sockaddr_un sun;
	int sock, ret = address(path, &sun);

	if (ret < 0)
		return ret;
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (connect(sock, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = -errno;
		close(sock);
		return ret;
	}
	return sock;
}

int control_listen(const char *path, int *fd)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t mask;
	int sock, ret = address(path, &sun);

	if (ret < 0)
		return ret;
	sock = control_connect(path);
	if (sock >= 0) {
		close(sock);
		return -EADDRINUSE;
	}
	/* Only a socket nobody answers on is replaced, never a file. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		unlink(path);
	}
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
		      0);
	if (sock < 0)
		return -errno;
	mask = umask(077);
	ret = bind(sock, (struct sockaddr *)&sun, sizeof(sun));
	umask(mask);
	if (ret == 0 && chmod(path, 0600) == 0 && listen(sock, 16) == 0) {
		*fd = sock;
		return 0;
	}
	ret = -errno;
	close(sock);
	return ret;
}

int control_send(int sock, const char *const *field, unsigned int nfields,
		 const int *fd, unsigned int nfds)
{
	char text[CONTROL_MAX_MSG];
	union {
		char buf[CMSG_SPACE(CONTROL_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { 0 };
	struct iovec iov;
	struct cmsghdr *c;
	size_t len = 0, n;
	unsigned int i;

	if (nfields > CONTROL_MAX_FIELDS || nfds > CONTROL_MAX_FDS)
		return -EMSGSIZE;
	for (i = 0; i < nfields; i++) {
		n = strlen(field[i]) + 1;
		if (len + n > sizeof(text))
			return -EMSGSIZE;
		memcpy(text + len, field[i], n);
		len += n;
	}
	iov.iov_base = text;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fd, nfds * sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

void control_close_fds(struct control_msg *m)
{
	unsigned int i;

	for (i = 0; i < m->nfds; i++)
		close(m->fd[i]);
	m->nfds = 0;
}

int control_recv(int sock, struct control_msg *m)
{
	union {
		char buf[CMSG_SPACE(CONTROL_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { 0 };
	struct iovec iov = { m->text, sizeof(m->text) };
	struct cmsghdr *c;
	ssize_t len;
	size_t at;

	m->nfields = 0;
	m->nfds = 0;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	len = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (len < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > CONTROL_MAX_FDS - m->nfds)
			n = CONTROL_MAX_FDS - m->nfds;
		memcpy(m->fd + m->nfds, CMSG_DATA(c), n * sizeof(int));
		m->nfds += n;
	}
	if (len == 0) {
		control_close_fds(m);
		return -EPIPE;
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    m->text[len - 1] != '\0')
		goto bad;
	for (at = 0; at < (size_t)len; at += strlen(m->text + at) + 1) {
		if (m->nfields == CONTROL_MAX_FIELDS)
			goto bad;
		m->field[m->nfields++] = m->text + at;
	}
	return 0;
bad:
	control_close_fds(m);
	return -EPROTO;
}

uid_t control_peer_uid(int sock)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return (uid_t)-1;
	return cred.uid;
}
