/*
 * super: the supervisor (super.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "log.h"
#include "serve.h"
#include "super.h"

struct super {
	struct super_mount *mounts;
	unsigned int starts;
	uint64_t next_key; /* a server's: its start << 32 | a count */
	char *slots;
	size_t slot_bytes;
	unsigned int nslots;
	struct view_record *views; /* the own mount's: VIEW_SLOTS */
	int chan; /* to the other process: -1 when none */
	pid_t server; /* the supervisor's: 0 while none runs */
	int sigfd; /* the supervisor's */
	bool stopping; /* SIGTERM or SIGINT came */
	long long started_ms[SUPER_RESTARTS_FAST]; /* the last starts */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int super_new(int fuse_fd, int keep_fd, unsigned int workers,
	      struct super **out)
{
	struct super *s = calloc(1, sizeof(*s));
	struct super_mount *own = calloc(1, sizeof(*own));

	if (!s || !own)
		goto nomem;
	own->key = SUPER_KEY_OWN;
	own->fuse_fd = fuse_fd;
	own->keep_fd = keep_fd;
	own->pidns_fd = own->mntns_fd = own->mnt_fd = -1;
	s->mounts = own;
	s->chan = s->sigfd = -1;
	s->slot_bytes = serve_slot_bytes();
	s->nslots = workers ? workers : 1;
	/* Touched only where a worker reads: a page or two a worker. */
	s->slots = mmap(NULL, s->slot_bytes * s->nslots,
			PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	s->views = mmap(NULL, VIEW_SLOTS * sizeof(*s->views),
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			0);
	if (s->slots == MAP_FAILED || s->views == MAP_FAILED) {
		if (s->slots != MAP_FAILED)
			munmap(s->slots, s->slot_bytes * s->nslots);
		if (s->views != MAP_FAILED)
			munmap(s->views, VIEW_SLOTS * sizeof(*s->views));
		free(own);
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
nomem:
	free(own);
	free(s);
	return -ENOMEM;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* Free @m and close what it holds (the own mount's device is the
 * session's). */
static void mount_free(struct super_mount *m)
{
	if (m->key != SUPER_KEY_OWN)
		close_fd(m->fuse_fd);
	close_fd(m->keep_fd);
	close_fd(m->pidns_fd);
	close_fd(m->mntns_fd);
	close_fd(m->mnt_fd);
	free(m->target);
	free(m->opts);
	free(m->init_req);
	free(m);
}

void super_free(struct super *s)
{
	struct super_mount *m;

	if (!s)
		return;
	while ((m = s->mounts)) {
		s->mounts = m->next;
		mount_free(m);
	}
	if (s->slots)
		munmap(s->slots, s->slot_bytes * s->nslots);
	if (s->views)
		munmap(s->views, VIEW_SLOTS * sizeof(*s->views));
	close_fd(s->chan);
	close_fd(s->sigfd);
	free(s);
}

static struct super_mount *find(struct super *s, uint64_t key)
{
	struct super_mount *m;

	for (m = s->mounts; m && m->key != key; m = m->next)
		;
	return m;
}

/* Take @m out of the list, without closing anything. */
static void unlink_mount(struct super *s, struct super_mount *m)
{
	struct super_mount **p;

	for (p = &s->mounts; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			return;
		}
}

/* ---- the supervisor --------------------------------------------- */

static int parse_key(const char *text, uint64_t *key)
{
	char *end;

	errno = 0;
	*key = strtoull(text, &end, 10);
	return errno || end == text || *end ? -EINVAL : 0;
}

static int unhex(const char *hex, void **out, size_t *len)
{
	size_t i, n = strlen(hex);
	unsigned char *b;
	unsigned int byte;

	if (n % 2 || !n)
		return -EINVAL;
	b = malloc(n / 2);
	if (!b)
		return -ENOMEM;
	for (i = 0; i < n / 2; i++) {
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1) {
			free(b);
			return -EINVAL;
		}
		b[i] = (unsigned char)byte;
	}
	*out = b;
	*len = n / 2;
	return 0;
}

/* An attached mount the server made: the descriptors come with it. */
static void took_attach(struct super *s, struct control_msg *msg, uint64_t key)
{
	struct super_mount *m = calloc(1, sizeof(*m));

	if (!m || msg->nfields != 4 || msg->nfds < 4 ||
	    !(m->target = strdup(msg->field[2])) ||
	    !(m->opts = strdup(msg->field[3]))) {
		log_msg(LOG_ERR,
			"the server's attached mount %" PRIu64 " is not kept: "
			"%s",
			key, m ? "a bad message" : "out of memory");
		if (m) {
			free(m->target);
			free(m);
		}
		control_close_fds(msg);
		return;
	}
	m->key = key;
	m->fuse_fd = msg->fd[0];
	m->pidns_fd = msg->fd[1];
	m->mntns_fd = msg->fd[2];
	m->keep_fd = msg->fd[3];
	m->mnt_fd = msg->nfds > 4 ? msg->fd[4] : -1;
	msg->nfds = 0;
	m->next = s->mounts;
	s->mounts = m;
}

/* One message of the server's. */
static void take_message(struct super *s, struct control_msg *msg)
{
	struct super_mount *m;
	uint64_t key;

	if (msg->nfields < 2 || parse_key(msg->field[1], &key) < 0) {
		control_close_fds(msg);
		return;
	}
	m = find(s, key);
	if (!strcmp(msg->field[0], "attach") && !m) {
		took_attach(s, msg, key);
		return;
	}
	control_close_fds(msg);
	if (!m)
		return;
	if (!strcmp(msg->field[0], "init") && msg->nfields == 3) {
		free(m->init_req);
		m->init_req = NULL;
		if (unhex(msg->field[2], &m->init_req, &m->init_len) < 0)
			log_msg(LOG_ERR, "a bad INIT from the server");
	} else if (!strcmp(msg->field[0], "gone")) {
		unlink_mount(s, m);
		mount_free(m);
	}
}

static void take_messages(struct super *s)
{
	static struct control_msg msg; /* the supervisor is one thread */
	int ret;

	for (;;) {
		struct pollfd p = { .fd = s->chan, .events = POLLIN };

		if (poll(&p, 1, 0) != 1)
			return;
		ret = control_recv(s->chan, &msg);
		if (ret == -EPIPE || ret == -ECONNRESET) {
			close(s->chan); /* the server is going */
			s->chan = -1;
			return;
		}
		if (ret == 0)
			take_message(s, &msg);
	}
}

/*
 * Fork a server. 0 in it; 1 in the supervisor; -errno when none could
 * be made.
 */
static int start_server(struct super *s)
{
	int sv[2];
	sigset_t chld;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	s->starts++;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		s->starts--;
		return -errno;
	}
	if (pid == 0) {
		close(sv[0]);
		close_fd(s->sigfd);
		s->sigfd = -1;
		close_fd(s->chan);
		s->chan = sv[1];
		s->server = 0;
		s->next_key = (uint64_t)s->starts << 32;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		pthread_sigmask(SIG_UNBLOCK, &chld, NULL);
		return 0;
	}
	close(sv[1]);
	close_fd(s->chan);
	s->chan = sv[0];
	s->server = pid;
	memmove(s->started_ms, s->started_ms + 1,
		sizeof(s->started_ms) - sizeof(s->started_ms[0]));
	s->started_ms[SUPER_RESTARTS_FAST - 1] = now_ms();
	return 1;
}

/*
 * The server @pid ended with @wstatus: whether the supervisor ends too
 * (with *@status), or starts another.
 */
static bool server_ended(struct super *s, int wstatus, int *status)
{
	pid_t pid = s->server;

	s->server = 0;
	take_messages(s); /* what it said before it went */
	if (WIFEXITED(wstatus)) {
		*status = WEXITSTATUS(wstatus);
		return true;
	}
	if (s->stopping) {
		log_msg(LOG_ERR, "the server %d died of signal %d while "
				 "stopping",
			(int)pid, WTERMSIG(wstatus));
		*status = EXIT_SERVE;
		return true;
	}
	log_msg(LOG_WARNING,
		"the server %d died of signal %d (%s): starting server %u",
		(int)pid, WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)),
		s->starts + 1);
	return false;
}

/* Start a server, no more than SUPER_RESTARTS_FAST a second. */
static int restart(struct super *s)
{
	long long wait = s->started_ms[0] + 1000 - now_ms();

	if (s->started_ms[0] && wait > 0)
		usleep((useconds_t)wait * 1000);
	return start_server(s);
}

bool super_run(struct super *s, int *status)
{
	struct signalfd_siginfo si;
	struct pollfd p[2];
	sigset_t set;
	int wstatus, ret;
	pid_t pid;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
	    (s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_msg(LOG_ERR, "cannot take signals: %s", strerror(errno));
		*status = EXIT_SERVE;
		return true;
	}
	ret = start_server(s);
	for (;;) {
		if (ret == 0)
			return false;
		if (ret < 0) {
			log_msg(LOG_ERR, "cannot start a server: %s",
				strerror(-ret));
			*status = EXIT_SERVE;
			return true;
		}
		p[0] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = s->chan, .events = POLLIN };
		if (poll(p, s->chan >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) {
			*status = EXIT_SERVE;
			return true;
		}
		if (s->chan >= 0 && p[1].revents)
			take_messages(s);
		while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
				s->stopping = true;
				kill(s->server, SIGTERM);
			} else if (si.ssi_signo == SIGHUP) {
				kill(s->server, SIGHUP);
			}
		}
		while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
			if (pid != s->server)
				continue;
			if (server_ended(s, wstatus, status))
				return true;
			ret = restart(s);
			if (ret == 0)
				return false;
		}
	}
}

/* ---- in the server ------------------------------------------------ */

unsigned int super_starts(const struct super *s)
{
	return s->starts;
}

struct super_mount *super_mounts(const struct super *s)
{
	return s->mounts;
}

uint64_t super_new_key(struct super *s)
{
	return __atomic_add_fetch(&s->next_key, 1, __ATOMIC_SEQ_CST);
}

void *super_slots(const struct super *s, size_t *slot_bytes,
		  unsigned int *nslots)
{
	*slot_bytes = s->slot_bytes;
	*nslots = s->nslots;
	return s->slots;
}

struct view_record *super_view_record(const struct super *s)
{
	return s->views;
}

int super_fd(const struct super *s)
{
	return s->chan;
}

int super_tell_init(struct super *s, uint64_t key, const void *req,
		    size_t len)
{
	const unsigned char *b = req;
	char k[24], *hex = malloc(2 * len + 1);
	const char *field[3] = { "init", k, hex };
	size_t i;
	int ret;

	if (!hex)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	hex[2 * len] = '\0';
	snprintf(k, sizeof(k), "%" PRIu64, key);
	ret = control_send(s->chan, field, 3, NULL, 0);
	free(hex);
	return ret;
}

int super_tell_attach(struct super *s, const struct super_mount *m)
{
	char k[24];
	const char *field[4] = { "attach", k, m->target, m->opts };
	int fd[5] = { m->fuse_fd, m->pidns_fd, m->mntns_fd, m->keep_fd,
		      m->mnt_fd };

	snprintf(k, sizeof(k), "%" PRIu64, m->key);
	return control_send(s->chan, field, 4, fd, m->mnt_fd >= 0 ? 5 : 4);
}

int super_tell_gone(struct super *s, uint64_t key)
{
	char k[24];
	const char *field[2] = { "gone", k };

	snprintf(k, sizeof(k), "%" PRIu64, key);
	return control_send(s->chan, field, 2, NULL, 0);
}

void super_forget(struct super *s, struct super_mount *m)
{
	unlink_mount(s, m);
	free(m->target);
	free(m->opts);
	free(m->init_req);
	free(m);
}
