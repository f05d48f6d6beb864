/*
 * supervisor: the supervisor's loop: its server's start, end and
 * restart, the registry's messages, signals, upgrades (super.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "control.h"
#include "daemon.h"
#include "log.h"
#include "serve.h"
#include "super.h"
#include "super_int.h"

static void reply(int sock, const char *status, const char *text)
{
	const char *field[] = { status, text };

	if (sock >= 0) {
		control_send(sock, field, 2, NULL, 0);
		close(sock);
	}
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
	super_store_mount(m, true);
	super_store_write(s);
}

static void upgrade(struct super *s, int sock);

/* One message of the server's. */
static void take_message(struct super *s, struct control_msg *msg)
{
	struct super_mount *m;
	uint64_t key;

	if (msg->nfields == 1 && !strcmp(msg->field[0], "upgrade") &&
	    msg->nfds == 1) {
		msg->nfds = 0;
		upgrade(s, msg->fd[0]);
		return;
	}
	if (msg->nfields < 2 || super_parse_u64(msg->field[1], &key) < 0) {
		control_close_fds(msg);
		return;
	}
	if (!strcmp(msg->field[0], "end")) {
		s->server_ending = true;
		s->server_status = (int)key;
		control_close_fds(msg);
		return;
	}
	m = super_find(s, key);
	if (!strcmp(msg->field[0], "attach") && !m) {
		took_attach(s, msg, key);
		return;
	}
	control_close_fds(msg);
	if (!m)
		return;
	if (!strcmp(msg->field[0], "init") && msg->nfields == 3) {
		free(m->init_req);
		if (super_unhex(msg->field[2], &m->init_req, &m->init_len) < 0)
			log_msg(LOG_ERR, "a bad INIT from the server");
		super_store_write(s);
	} else if (!strcmp(msg->field[0], "gone")) {
		super_unlink_mount(s, m);
		super_store_mount(m, false);
		super_mount_free(m);
		super_store_write(s);
	}
}

static void take_messages(struct super *s)
{
	static struct control_msg msg; /* the supervisor is one thread */
	int ret;

	while (s->chan >= 0) {
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
		super_close_fd(s->sigfd);
		s->sigfd = -1;
		super_close_fd(s->chan);
		super_close_fd(s->server_fd);
		super_close_fd(s->reply_fd);
		s->server_fd = s->reply_fd = -1;
		s->chan = sv[1];
		s->server = 0;
		s->next_key = (uint64_t)s->starts << 32;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		pthread_sigmask(SIG_UNBLOCK, &chld, NULL);
		return 0;
	}
	close(sv[1]);
	super_close_fd(s->chan);
	super_close_fd(s->server_fd);
	s->server_fd = -1;
	s->chan = sv[0];
	s->server = pid;
	s->server_ending = false;
	s->zombie_looks = 0;
	memmove(s->started_ms, s->started_ms + 1,
		sizeof(s->started_ms) - sizeof(s->started_ms[0]));
	s->started_ms[SUPER_RESTARTS_FAST - 1] = clock_mono_ms();
	super_store_write(s); /* its count */
	if (s->mode == MODE_UPGRADE) { /* an upgrade's: it is over */
		char text[128];

		snprintf(text, sizeof(text),
			 "upgraded: server %u (pid %d) serves every mount",
			 s->starts, (int)pid);
		log_msg(LOG_NOTICE, "%s", text);
		reply(s->reply_fd, "0", text);
		s->reply_fd = -1;
		s->mode = MODE_FRESH;
	}
	return 1;
}

/*
 * The server ended (@wstatus, or -1: not a child, its status unknown):
 * whether the supervisor ends too (with *@status), or starts another.
 */
static bool server_ended(struct super *s, int wstatus, int *status)
{
	pid_t pid = s->server;

	s->server = 0;
	take_messages(s); /* what it said before it went */
	if (wstatus >= 0 && WIFEXITED(wstatus)) {
		*status = WEXITSTATUS(wstatus);
		return true;
	}
	if (s->server_ending) {
		*status = s->server_status;
		return true;
	}
	if (s->leaving) {
		log_msg(LOG_NOTICE,
			"the service restarts: every mount stays in its "
			"descriptor store");
		*status = 0;
		return true;
	}
	if (s->stopping) {
		log_msg(LOG_ERR, "the server %d died while stopping", (int)pid);
		*status = EXIT_SERVE;
		return true;
	}
	if (wstatus >= 0)
		log_msg(LOG_WARNING,
			"the server %d died of signal %d (%s): starting "
			"server %u",
			(int)pid, WTERMSIG(wstatus),
			strsignal(WTERMSIG(wstatus)), s->starts + 1);
	else
		log_msg(LOG_WARNING, "the server %d died: starting server %u",
			(int)pid, s->starts + 1);
	return false;
}

/* Start a server, no more than SUPER_RESTARTS_FAST a second. */
static int restart(struct super *s)
{
	long long wait = s->started_ms[0] + 1000 - clock_mono_ms();

	if (s->started_ms[0] && wait > 0)
		usleep((useconds_t)wait * 1000);
	return start_server(s);
}

/*
 * Run the binary at @s->self with SUPER_CHECK_ENV: 0 when it exits 0
 * within SUPER_CHECK_MS, else -1 with its last line of output in @why.
 */
static int check_binary(struct super *s, char *why, size_t size)
{
	char buf[4096], *line, *end;
	long long deadline = clock_mono_ms() + SUPER_CHECK_MS;
	size_t have = 0;
	int pipefd[2], wstatus = 0;
	struct pollfd p;
	ssize_t n;
	pid_t pid;

	snprintf(why, size, "%s: cannot run it", s->self);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		setenv(SUPER_CHECK_ENV, "1", 1);
		execv(s->self, s->argv);
		fprintf(stderr, "%s: %s\n", s->self, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	p = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	while (clock_mono_ms() < deadline &&
	       poll(&p, 1, (int)(deadline - clock_mono_ms())) >= 0) {
		n = read(pipefd[0], buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have == sizeof(buf) - 1) /* keep the end */
			have = 0;
	}
	close(pipefd[0]);
	if (clock_mono_ms() >= deadline)
		kill(pid, SIGKILL);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
		return 0;
	buf[have] = '\0';
	while (have && buf[have - 1] == '\n')
		buf[--have] = '\0';
	line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	end = line + strlen(line);
	if (end > line)
		snprintf(why, size, "%.400s", line);
	else if (WIFEXITED(wstatus))
		snprintf(why, size, "%s exited %d at start", s->self,
			 WEXITSTATUS(wstatus));
	else
		snprintf(why, size, "%s died at start (signal %d)", s->self,
			 WTERMSIG(wstatus));
	return -1;
}

/*
 * An upgrade (SIGUSR2, or timingfsctl's on @sock, -1 for none): the
 * binary at the path the daemon was started from, tried first, then
 * executed in this process's place with the state; it kills the old
 * server and starts its own. Returns only when it cannot.
 */
static void upgrade(struct super *s, int sock)
{
	char why[512], num[16];
	int fd;

	if (s->reply_fd >= 0) {
		reply(sock, "1", "an upgrade is under way");
		return;
	}
	if (check_binary(s, why, sizeof(why)) < 0) {
		log_msg(LOG_ERR, "upgrade refused: %s; the server %d serves on",
			why, (int)s->server);
		reply(sock, "1", why);
		return;
	}
	/* The server's channel too: it must not hear its supervisor
	 * die, and start another, while the exec is under way. */
	fd = super_save_state(s, MODE_UPGRADE, s->server, s->chan, sock);
	if (fd < 0) {
		snprintf(why, sizeof(why), "cannot hand the state over: %s",
			 strerror(-fd));
		log_msg(LOG_ERR, "upgrade refused: %s", why);
		reply(sock, "1", why);
		return;
	}
	snprintf(num, sizeof(num), "%d", fd);
	setenv(SUPER_STATE_ENV, num, 1);
	log_msg(LOG_NOTICE, "upgrading to %s", s->self);
	execv(s->self, s->argv);
	snprintf(why, sizeof(why), "cannot execute %s: %s", s->self,
		 strerror(errno));
	unsetenv(SUPER_STATE_ENV);
	close(fd);
	super_mounts_cloexec(s, true);
	super_cloexec(s->chan, true);
	log_msg(LOG_ERR, "upgrade refused: %s", why);
	reply(sock, "1", why);
}

/* Signals: whether to stop. */
static void take_signals(struct super *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			s->stopping = true;
			if (s->server)
				kill(s->server, SIGTERM);
		} else if (si.ssi_signo == SIGHUP) {
			if (s->server)
				kill(s->server, SIGHUP);
		} else if (si.ssi_signo == SIGUSR2 && !s->stopping) {
			upgrade(s, -1);
		} else if (si.ssi_signo == SIGUSR1 && super_store_kept() &&
			   !s->stopping) {
			/* The service restarts: all stays in the store. */
			s->stopping = s->leaving = true;
			if (s->server)
				kill(s->server, SIGKILL);
		}
	}
}

/*
 * Whether the server is dying with a thread stuck in the kernel: its
 * main thread is a zombie, at two looks in a row, and it did not say it
 * ends. A thread of a server killed while it wrote a notification that
 * waits for a directory's lock (an entry to invalidate) waits for the
 * lookup holding that lock, which only a live server answers: so the
 * process never ends, and no SIGCHLD comes, until a successor answers
 * it. That thread never returns to the process's memory.
 */
static bool dying(struct super *s)
{
	char path[64], buf[256], *state;
	ssize_t n;
	int fd;

	if (s->stopping || s->server_ending) {
		s->zombie_looks = 0;
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->server);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	state = strrchr(buf, ')');
	if (n > 0 && state && state[1] == ' ' && state[2] == 'Z')
		s->zombie_looks++;
	else
		s->zombie_looks = 0;
	return s->zombie_looks >= 2;
}

/*
 * A server given up as dying (dying()) has ended at last: what its
 * stuck thread took meanwhile is sent again to the server now, on a
 * kernel that can (the successor asked for the rest already; what it
 * has read and not answered yet comes again too, and is answered
 * twice, harmlessly).
 */
static void resend_late(struct super *s)
{
	struct super_mount *m, *own = super_find(s, SUPER_KEY_OWN);

	s->dying = 0;
	if (!own || !own->init_req || getenv("TIMINGFS_TEST_NO_RESEND") ||
	    !serve_init_has_resend(own->init_req, own->init_len))
		return;
	for (m = s->mounts; m; m = m->next)
		serve_resend(m->fuse_fd);
}

/*
 * The server, sent SIGKILL, is no more: reaped, or dying with a thread
 * stuck in the kernel (dying()), which only its successor frees; that
 * one is reaped later, in super_run(), which then sends again what the
 * stuck thread took (resend_late()). Never a wait for the process to
 * end: it may never end without a successor.
 */
static void wait_killed(struct super *s)
{
	int wstatus;
	pid_t pid;

	s->zombie_looks = 0;
	for (;;) {
		pid = waitpid(s->server, &wstatus, WNOHANG);
		if (pid == s->server || (pid < 0 && errno != EINTR))
			break;
		if (pid == 0 && dying(s)) {
			s->dying = s->server;
			break;
		}
		poll(NULL, 0, SUPER_KILLED_LOOK_MS);
	}
	s->server = 0;
}

/*
 * How this supervisor begins: a fresh one starts its server; one
 * exec'd for an upgrade kills the old server first (its child still),
 * whose requests the new one answers, and starts the new one as soon as
 * the old one is no more (wait_killed()); one a server started watches
 * it.
 */
static int begin(struct super *s)
{
	if (s->mode == MODE_ADOPT) {
		s->server_fd = (int)syscall(SYS_pidfd_open, s->server, 0);
		if (s->server_fd >= 0) {
			super_cloexec(s->server_fd, true);
			return 1;
		}
		if (errno != ESRCH)
			return -errno;
		s->server = 0; /* gone already: as after a crash */
		return start_server(s);
	}
	if (s->mode == MODE_UPGRADE && s->server > 0) {
		kill(s->server, SIGKILL);
		wait_killed(s);
	}
	return start_server(s);
}

bool super_run(struct super *s, int *status)
{
	struct pollfd p[3];
	sigset_t set;
	int wstatus, ret;
	pid_t pid;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
	    (s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_msg(LOG_ERR, "cannot take signals: %s", strerror(errno));
		*status = EXIT_SERVE;
		return true;
	}
	super_store_begin(s);
	ret = begin(s);
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
		p[2] = (struct pollfd){ .fd = s->server_fd, .events = POLLIN };
		if (poll(p, 3, s->server ? SUPER_LOOK_MS : -1) < 0 &&
		    errno != EINTR) {
			*status = EXIT_SERVE;
			return true;
		}
		if (p[1].revents)
			take_messages(s);
		take_signals(s);
		if (s->server && dying(s)) {
			/* Its last thread is stuck: the successor frees it. */
			s->dying = s->server;
			if (server_ended(s, -1, status))
				return true;
			ret = restart(s);
			continue;
		}
		if (s->server_fd >= 0 && p[2].revents) {
			/* Not a child: a server that started this one. */
			if (server_ended(s, -1, status))
				return true;
			ret = restart(s);
			continue;
		}
		while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
			if (pid == s->dying)
				resend_late(s);
			if (pid != s->server || s->server_fd >= 0)
				continue;
			if (server_ended(s, wstatus, status))
				return true;
			ret = restart(s);
			if (ret <= 0)
				break;
		}
	}
}
