/*
 * daemon: the serving daemon's lifetime (daemon.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "budget.h"
#include "clock.h"
#include "control.h"
#include "daemon.h"
#include "exited.h"
#include "listener.h"
#include "log.h"
#include "serve.h"
#include "super.h"
#include "tree.h"

enum { EV_SIGNAL = 1, EV_ENDED, EV_CONTROL, EV_ATTACHED, EV_SUPER };

struct daemon {
	struct daemon_parts *p;
	struct exited *exited;
	struct listener *listener;
	uint64_t own_ns; /* the daemon's PID namespace, the table's names */
	struct engine_retained retained; /* what the engine asks of exited */
	struct serve *serve;
	struct attach_set *attached;
	struct super *super;
	int sigfd, epfd;
	int control_fd; /* -1: none */
	const char *control_path;
	struct stat control_st; /* the socket made, to remove only it */
	int status; /* -1 while serving */
};

/* A key that a re-read cannot change, and that changed. */
static void fixed_key(const struct daemon *d, bool changed, const char *key)
{
	if (changed)
		log_msg(LOG_WARNING,
			"%s: %s changed: it takes effect at the next mount",
			d->p->config_path, key);
}

/*
 * SIGHUP: read the configuration file again. A valid one takes effect
 * for every file opened from now on, in every mount, for the keys a
 * running daemon can change ([format] units, [limits], and [exited]
 * keep while tasks are kept); a change to any other is logged, to wait for the
 * next mount. A bad file is logged with its file, line and key, and the
 * one in use stays.
 */
static void reload(struct daemon *d)
{
	struct config *old = d->p->cfg;
	struct config cfg;
	char err[512];

	if (!d->p->config_path) {
		log_msg(LOG_NOTICE,
			"SIGHUP: no configuration file was read at mount; "
			"nothing to re-read");
		return;
	}
	if (config_load(&cfg, d->p->config_path, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s (SIGHUP: the configuration in use stays)",
			err);
		return;
	}
	fixed_key(d, cfg.group_max_size != old->group_max_size,
		  "[groups] max_size");
	fixed_key(d, cfg.tsc_hz != old->tsc_hz, "[clock] tsc_hz");
	fixed_key(d, strcmp(cfg.proc_root, old->proc_root) != 0,
		  "[sources] proc");
	fixed_key(d, strcmp(cfg.sys_root, old->sys_root) != 0, "[sources] sys");
	fixed_key(d, cfg.tasks != old->tasks, "[sources] tasks");
	fixed_key(d, cfg.hidepid != old->hidepid, "[access] hidepid");
	fixed_key(d,
		  cfg.access_gid != old->access_gid ||
			  cfg.access_gid_set != old->access_gid_set,
		  "[access] gid");
	fixed_key(d, cfg.exited_max_tasks != old->exited_max_tasks,
		  "[exited] max_tasks");
	fixed_key(d, !cfg.exited_keep_s != !old->exited_keep_s,
		  "[exited] keep (on or off)");
	engine_set_units(d->p->engine, cfg.units);
	old->units = cfg.units;
	budget_set_limits((size_t)cfg.reader_snapshots_mib << 20,
			  (size_t)cfg.total_snapshots_mib << 20);
	old->reader_snapshots_mib = cfg.reader_snapshots_mib;
	old->total_snapshots_mib = cfg.total_snapshots_mib;
	views_set_uid_max(cfg.reader_views);
	old->reader_views = cfg.reader_views;
	if (d->exited && cfg.exited_keep_s) {
		exited_set_keep(d->exited, cfg.exited_keep_s);
		old->exited_keep_s = cfg.exited_keep_s;
	}
	log_msg(LOG_NOTICE,
		"%s re-read: units %s, budgets %u MiB a reader and %u MiB in "
		"all, %u views a uid%s",
		d->p->config_path, units_name(cfg.units),
		cfg.reader_snapshots_mib, cfg.total_snapshots_mib,
		cfg.reader_views,
		d->exited ? ", exited tasks kept as it says" : "");
}

/*
 * Whether the exited table keeps task @pid, @tid (0: the process) that
 * started at @start_ticks, for the engine (engine_set_retained()): the
 * task is gone from /proc, so its exit record was queued before; it is
 * filed first if it has not been.
 */
static bool exited_retained(void *ctx, pid_t pid, pid_t tid,
			    uint64_t start_ticks)
{
	struct daemon *d = ctx;
	struct exited_task x;
	uint64_t now = clock_mono_ns();
	int ret;

	ret = exited_find(d->exited, d->own_ns, pid, tid, now, &x);
	if (ret < 0) {
		listener_sync(d->listener);
		ret = exited_find(d->exited, d->own_ns, pid, tid, now, &x);
	}
	return ret == 0 && x.start_ticks == start_ticks;
}

/*
 * Keep exited tasks, where the configuration asks for them, the engine
 * reads this machine's /proc, and the kernel lets the daemon listen;
 * otherwise say why not, and serve without (exit_source none).
 */
static void start_exited(struct daemon *d)
{
	const struct config *cfg = d->p->cfg;
	char err[512];
	int ret;

	if (!cfg->exited_keep_s || !engine_is_live(d->p->engine))
		return;
	d->own_ns = views_own_ns(d->p->views);
	ret = exited_new(cfg->exited_keep_s, cfg->exited_max_tasks, &d->exited);
	if (ret == 0)
		ret = listener_start(d->p->engine, d->exited, d->own_ns,
				     log_msg, &d->listener, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	if (ret < 0) {
		log_msg(LOG_WARNING, "exited tasks are not kept: %s", err);
		exited_free(d->exited);
		d->exited = NULL;
		return;
	}
	fs_set_exited(d->p->fs, d->exited, d->listener);
	d->retained = (struct engine_retained){ exited_retained, d };
	engine_set_retained(d->p->engine, &d->retained);
}

/*
 * The control socket, for root's daemon alone: the first daemon to
 * start answers timingfsctl; another one started meanwhile (a pinned
 * mount beside the service, say) serves its own mount without, quietly.
 */
static void open_control(struct daemon *d)
{
	int ret;

	d->control_fd = -1;
	if (geteuid() != 0)
		return;
	d->control_path = control_path();
	ret = control_listen(d->control_path, &d->control_fd);
	/* -EADDRINUSE: the daemon that answers there is the one asked. */
	if (ret < 0 && ret != -EADDRINUSE)
		log_msg(LOG_WARNING,
			"no control socket at %s (%s): timingfsctl cannot "
			"attach mounts to this daemon",
			d->control_path, strerror(-ret));
	else if (stat(d->control_path, &d->control_st) < 0)
		memset(&d->control_st, 0, sizeof(d->control_st));
}

static void close_control(struct daemon *d)
{
	struct stat st;

	if (d->control_fd < 0)
		return;
	close(d->control_fd);
	d->control_fd = -1;
	/* Unless another daemon has put its own there meanwhile. */
	if (stat(d->control_path, &st) == 0 &&
	    st.st_ino == d->control_st.st_ino &&
	    st.st_dev == d->control_st.st_dev)
		unlink(d->control_path);
}

static void reply(int sock, const char *status, const char *text)
{
	const char *field[] = { status, text };

	control_send(sock, field, 2, NULL, 0);
}

/* An attach or detach is over: answer the connection that asked. */
static void answer_later(void *arg, int ret, const char *text)
{
	int sock = (int)(intptr_t)arg;

	reply(sock, ret == 0 ? "0" : "1", text);
	close(sock);
}

/*
 * One request of timingfsctl, on the connection @sock. Whether the
 * connection is kept, to be answered when an attach or detach is over.
 */
static bool control_request(struct daemon *d, int sock)
{
	void *later = (void *)(intptr_t)sock;
	bool kept = false;
	static struct control_msg m; /* the main thread's alone */
	static char text[CONTROL_MAX_MSG - 8];
	const char *cmd;
	int ret;

	text[0] = '\0';
	if (control_recv(sock, &m) < 0 || m.nfields < 1) {
		reply(sock, "2", "not a request of timingfsctl");
		return false;
	}
	cmd = m.field[0];
	if (control_peer_uid(sock) != 0) {
		reply(sock, "1", "only root may attach and detach mounts");
	} else if (!strcmp(cmd, "attach") && m.nfields == 3 && m.nfds == 2) {
		ret = attach_add(d->attached, m.fd[0], m.fd[1], m.field[1],
				 m.field[2], answer_later, later, text,
				 sizeof(text));
		kept = ret == 0;
		if (!kept)
			reply(sock, ret == -EINVAL ? "2" : "1", text);
	} else if (!strcmp(cmd, "detach") && m.nfields == 2 && m.nfds == 1) {
		ret = attach_remove(d->attached, m.fd[0], m.field[1],
				    answer_later, later, text, sizeof(text));
		kept = ret == 0;
		if (!kept)
			reply(sock, "1", text);
	} else if (!strcmp(cmd, "mounts") && m.nfields == 1) {
		attach_list(d->attached, text, sizeof(text));
		reply(sock, "0", text);
	} else if (!strcmp(cmd, "upgrade") && m.nfields == 1) {
		/* The supervisor answers it, when it is over. */
		if (super_tell_upgrade(d->super, sock) < 0)
			reply(sock, "1", "the supervisor is gone: no upgrade");
	} else {
		reply(sock, "2", "not a request of timingfsctl");
	}
	control_close_fds(&m);
	return kept;
}

static void control_accept(struct daemon *d)
{
	struct timeval limit = { .tv_sec = 2 };
	int sock;

	sock = accept4(d->control_fd, NULL, NULL, SOCK_CLOEXEC);
	if (sock < 0)
		return;
	/* A client that sends nothing does not hold the daemon up. */
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
	if (!control_request(d, sock))
		close(sock);
}

/* The sessions that ended: the own mount's ends the daemon. */
static void take_ended(struct daemon *d)
{
	void *owner;
	int error;

	while ((owner = serve_take_ended(d->serve, &error))) {
		if (owner != d) {
			attach_ended(d->attached, owner, error);
			continue;
		}
		if (error)
			log_msg(LOG_ERR, "serving %s failed: %s",
				d->p->mountpoint, strerror(-error));
		d->status = error ? EXIT_SERVE : 0;
	}
}

static void take_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			reload(d);
		else
			d->status = 0;
	}
}

static int watch(struct daemon *d, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * The supervisor died: the server serves on, every mount still held by
 * it; but a death of this server would now lose them.
 */
static void supervisor_gone(struct daemon *d)
{
	int ret;

	epoll_ctl(d->epfd, EPOLL_CTL_DEL, super_fd(d->super), NULL);
	if (d->status >= 0)
		return; /* ending anyway */
	ret = super_respawn(d->super);
	if (ret == 0 && watch(d, super_fd(d->super), EV_SUPER) == 0)
		return;
	log_msg(LOG_ERR,
		"the supervisor died and none could be started (%s): serving "
		"on, but the mounts now end with this server (%d)",
		strerror(ret < 0 ? -ret : errno), (int)getpid());
}

/* A mount's INIT request, for the supervisor to keep (serve.h). */
static void told_init(void *arg, uint64_t key, const void *req, size_t len)
{
	struct daemon *d = arg;

	super_tell_init(d->super, key, req, len);
}

/*
 * A successor server: every mount the dead one served is served from
 * now on; first, the INIT request each had answered, replayed, so that
 * each session knows what the kernel said; the attached mounts are
 * taken over (attach_adopt()). A mount that cannot be is logged, and
 * its descriptors closed: it ends with the supervisor.
 */
static int take_over(struct daemon *d)
{
	struct super_mount *m, *next;
	char err[256];
	uint64_t key;
	int ret;

	for (m = super_mounts(d->super); m; m = next) {
		next = m->next;
		if (m->key == SUPER_KEY_OWN) {
			if (m->init_req)
				serve_replay(d->p->se, m->init_req, m->init_len,
					     true);
			continue;
		}
		key = m->key;
		super_adopt(d->super, m); /* its descriptors are attach's */
		ret = attach_adopt(d->attached, m, err, sizeof(err));
		if (ret < 0) /* and @m is gone from the registry */
			log_msg(LOG_ERR,
				"the attached mount %" PRIu64 " cannot be "
				"taken over: %s",
				key, err);
	}
	return 0;
}

/*
 * What the dead server had read and not answered: on a kernel that can
 * (Linux 6.9), it sends them again; otherwise they are in the request
 * slots (serve.h), answered here, once, from the memory the supervisor
 * kept. $TIMINGFS_TEST_NO_RESEND makes the test suite's kernel one
 * that cannot.
 */
static void answer_pending(struct daemon *d, const struct super_mount *own)
{
	struct serve_slot *slot;
	struct fuse_session *se;
	size_t bytes, len;
	unsigned int i, n, answered = 0;
	char *slots = super_slots(d->super, &bytes, &n);
	bool resend = own && own->init_req &&
		      serve_init_has_resend(own->init_req, own->init_len) &&
		      !getenv("TIMINGFS_TEST_NO_RESEND");

	if (resend) {
		serve_resend(fuse_session_fd(d->p->se));
		attach_resend(d->attached);
		return;
	}
	for (i = 0; i < n; i++) {
		slot = (struct serve_slot *)(void *)(slots + (size_t)i * bytes);
		len = __atomic_load_n(&slot->len, __ATOMIC_SEQ_CST);
		if (!len || len > bytes - sizeof(slot->key))
			continue;
		se = slot->key == SUPER_KEY_OWN ?
			     d->p->se :
			     attach_session(d->attached, slot->key);
		if (se && serve_replay(se, slot->req, len, false) == 0)
			answered++;
		__atomic_store_n(&slot->len, 0, __ATOMIC_SEQ_CST);
	}
	if (answered)
		log_msg(LOG_NOTICE,
			"answered %u requests the last server had read",
			answered);
}

/* Wait for what changes the mounts, until the daemon is to end. */
static void main_loop(struct daemon *d)
{
	struct epoll_event ev[8];
	int i, n, timeout;

	while (d->status < 0) {
		timeout = attach_timeout_ms(d->attached);
		n = epoll_wait(d->epfd, ev, 8, timeout);
		if (n < 0 && errno != EINTR) {
			log_msg(LOG_ERR, "waiting for events: %s",
				strerror(errno));
			d->status = EXIT_SERVE;
		}
		for (i = 0; i < n; i++) {
			switch (ev[i].data.u32) {
			case EV_SIGNAL:
				take_signal(d);
				break;
			case EV_ENDED:
				take_ended(d);
				break;
			case EV_CONTROL:
				control_accept(d);
				break;
			case EV_ATTACHED:
				break; /* attach_tick() below */
			case EV_SUPER:
				supervisor_gone(d);
				break;
			}
		}
		attach_tick(d->attached);
	}
}

/*
 * SIGHUP, SIGTERM and SIGINT come to the main loop through a signalfd,
 * blocked in every thread (all made after this); a write to a reader
 * that went away is an error, not a signal.
 */
static int take_signals(struct daemon *d)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	d->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return d->sigfd < 0 ? -1 : 0;
}

/* Everything after the fork: the threads, and the loop. */
static int run(struct daemon *d)
{
	struct attach_env env;
	int ret;

	struct super_mount *own = super_mounts(d->super);
	size_t slot_bytes;
	unsigned int nslots;
	void *slots = super_slots(d->super, &slot_bytes, &nslots);
	bool successor = super_starts(d->super) > 1;
	size_t history_bytes;
	void *history;

	while (own && own->key != SUPER_KEY_OWN)
		own = own->next;
	/* Before any thread reads: what a dead server showed holds. */
	history = super_history(d->super, &history_bytes);
	if (engine_set_history_area(d->p->engine, history, history_bytes) < 0)
		log_msg(LOG_WARNING,
			"the history of the splits shown is lost at a restart: "
			"its memory is too small");
	tree_set_server(getpid(), super_starts(d->super));
	start_exited(d);
	fs_set_view_record(d->p->fs, super_view_record(d->super));
	ret = own ? fs_set_keep(d->p->fs, own->keep_fd) : -ENOENT;
	if (ret == 0)
		ret = serve_new(d->p->max_workers, &d->serve);
	if (ret == 0) {
		serve_set_slots(d->serve, slots, slot_bytes, nslots, told_init,
				d);
		env = (struct attach_env){ .engine = d->p->engine,
					   .cfg = d->p->cfg,
					   .dropper = d->p->dropper,
					   .exited = d->exited,
					   .listener = d->listener,
					   .serve = d->serve,
					   .super = d->super };
		ret = attach_set_new(&env, &d->attached);
	}
	if (ret == 0 && successor)
		ret = take_over(d);
	if (ret == 0)
		ret = serve_add(d->serve, d->p->se, d, SUPER_KEY_OWN);
	if (ret == 0 && successor)
		answer_pending(d, own);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ret == 0 && d->epfd < 0)
		ret = -errno;
	if (ret == 0 &&
	    (watch(d, d->sigfd, EV_SIGNAL) < 0 ||
	     watch(d, serve_ended_fd(d->serve), EV_ENDED) < 0 ||
	     (d->control_fd >= 0 && watch(d, d->control_fd, EV_CONTROL) < 0) ||
	     (attach_fd(d->attached) >= 0 &&
	      watch(d, attach_fd(d->attached), EV_ATTACHED) < 0) ||
	     watch(d, super_fd(d->super), EV_SUPER) < 0))
		ret = -errno;
	if (ret == 0)
		ret = serve_start(d->serve);
	if (ret < 0) {
		log_msg(LOG_ERR, "cannot serve %s: %s", d->p->mountpoint,
			strerror(-ret));
		return EXIT_SERVE;
	}
	d->status = -1;
	main_loop(d);
	return d->status;
}

/*
 * The own mount's end, in a server: unmounted, unless it is gone
 * already. A session taken over through exec names its device, not the
 * mount point: that one is unmounted by its path, while the device says
 * the mount is still there.
 */
static void unmount_own(struct daemon *d)
{
	struct pollfd pfd = { .fd = fuse_session_fd(d->p->se) };

	if (d->p->state_fd >= 0 && pfd.fd >= 0 && poll(&pfd, 1, 0) == 0)
		daemon_unmount_path(super_mountpoint(d->super));
	fuse_session_unmount(d->p->se);
}

/* The supervisor, then in each server what serves. */
static int supervise(struct daemon *d)
{
	struct daemon_parts *p = d->p;
	int status;

	if (super_run(d->super, &status)) {
		/*
		 * The supervisor, at its end: the server unmounted all; or,
		 * for a restart of the service, everything stays as it is,
		 * the store holding it: the session is not unmounted, nor
		 * torn down (libfuse would unmount it then).
		 */
		if (super_leaving(d->super))
			_exit(status);
		close_control(d);
		fuse_session_unmount(p->se);
		super_free(d->super);
		close(d->sigfd);
		return status;
	}
	/* A server. Threads only now: one made before a fork is lost. */
	status = run(d);
	close_control(d);
	/* Every attached mount goes, while the workers still answer. */
	attach_set_free(d->attached);
	serve_free(d->serve);
	unmount_own(d);
	super_tell_end(d->super, status);
	engine_set_retained(p->engine, NULL);
	fs_set_exited(p->fs, NULL, NULL); /* it hears no more exits */
	listener_stop(d->listener);
	exited_free(d->exited);
	engine_set_history_area(p->engine, NULL, 0); /* unmapped below */
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->sigfd >= 0)
		close(d->sigfd);
	super_free(d->super);
	return status;
}

/*
 * An exec'd supervisor (an upgrade, or a server's new one): the state
 * says what it holds; its own mount's session serves the device it
 * names, already mounted.
 */
static int take_state(struct daemon *d)
{
	struct daemon_parts *p = d->p;
	char err[256], dev[32];

	if (super_load(p->state_fd, p->argv, &d->super, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		return EXIT_SERVE;
	}
	d->control_fd = super_control_fd(d->super);
	d->control_path = control_path();
	if (d->control_fd < 0 || stat(d->control_path, &d->control_st) < 0)
		memset(&d->control_st, 0, sizeof(d->control_st));
	snprintf(dev, sizeof(dev), "/dev/fd/%d", super_own_fd(d->super));
	if (fuse_session_mount(p->se, dev) != 0) {
		log_msg(LOG_ERR, "cannot take the mount %s over",
			super_mountpoint(d->super));
		super_free(d->super);
		return EXIT_SERVE;
	}
	if (!p->foreground)
		log_to_syslog();
	return supervise(d);
}

/* Descriptors below this are seen by fds_open(). */
#define FDS_SEEN 1024

/* The descriptors open now, below FDS_SEEN: bits of @seen. */
static void fds_open(uint64_t seen[FDS_SEEN / 64])
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned long fd;
	char *end;

	memset(seen, 0, FDS_SEEN / 8);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		fd = strtoul(de->d_name, &end, 10);
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && !*end &&
		    fd < FDS_SEEN)
			seen[fd / 64] |= 1ULL << (fd % 64);
	}
	closedir(dir);
}

/*
 * auto_unmount: libfuse keeps a socket to fusermount3 open, unnamed,
 * whose last close tells fusermount3 to unmount; fusermount3 does so
 * only where the mount then answers ENOTCONN, that is once the device's
 * last descriptor was released too. A dying process's descriptors are
 * released highest first (the kernel runs an exiting task's deferred
 * closes last queued first): with the socket above the device,
 * fusermount3 could look while the device still lived, its open met the
 * connection's abort (ECONNABORTED), and the mount stayed, dead. So the
 * one socket the mount opened (not open @before it, above device @dev)
 * moves to @low, taken below the device before the mount for it; the
 * server inherits both in that order. @low is closed when unused.
 */
static void socket_below_device(int dev, int low, const uint64_t *before)
{
	uint64_t after[FDS_SEEN / 64];
	struct stat st;
	int fd, flags;

	fds_open(after);
	for (fd = dev + 1; low >= 0 && low < dev && fd < FDS_SEEN; fd++) {
		if (!(after[fd / 64] >> (fd % 64) & 1) ||
		    (before[fd / 64] >> (fd % 64) & 1) || fstat(fd, &st) < 0 ||
		    !S_ISSOCK(st.st_mode) || (flags = fcntl(fd, F_GETFD)) < 0)
			continue;
		if (dup3(fd, low, flags & FD_CLOEXEC ? O_CLOEXEC : 0) == low) {
			close(fd);
			return;
		}
	}
	if (low >= 0)
		close(low);
}

int daemon_run(struct daemon_parts *p)
{
	struct daemon d = { .p = p, .sigfd = -1, .epfd = -1, .control_fd = -1 };
	uint64_t before[FDS_SEEN / 64];
	int keep_fd, low, ret;

	if (take_signals(&d) < 0) {
		log_msg(LOG_ERR, "cannot take signals: %s", strerror(errno));
		return EXIT_SERVE;
	}
	if (p->state_fd >= 0)
		return take_state(&d);
	/* Before the mount shows: timingfsctl may use it at once. */
	open_control(&d);
	fds_open(before);
	low = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fuse_session_mount(p->se, p->mountpoint) != 0) {
		if (low >= 0)
			close(low);
		close_control(&d);
		return EXIT_SERVE; /* libfuse said why */
	}
	socket_below_device(fuse_session_fd(p->se), low, before);
	if (fuse_daemonize(p->foreground) != 0)
		goto fail;
	if (!p->foreground)
		log_to_syslog();
	keep_fd = fs_keep_create(((size_t)p->cfg->total_snapshots_mib +
				  p->cfg->reader_snapshots_mib + 16)
				 << 20);
	ret = keep_fd < 0 ?
		      keep_fd :
		      super_new(fuse_session_fd(p->se), keep_fd, p->max_workers,
				d.control_fd, p->mountpoint, p->argv, &d.super);
	if (ret < 0) {
		log_msg(LOG_ERR, "cannot start the supervisor: %s",
			strerror(-ret));
		if (keep_fd >= 0)
			close(keep_fd);
		goto fail;
	}
	return supervise(&d);
fail:
	close_control(&d);
	fuse_session_unmount(p->se);
	close(d.sigfd);
	return EXIT_SERVE;
}

int daemon_unmount_path(const char *path)
{
	char *argv[] = { "fusermount3", "-u", "-z", "--", (char *)path, NULL };
	pid_t pid;
	int status, err;

	if (geteuid() == 0)
		return umount2(path, MNT_DETACH) == 0 ? 0 : -errno;
	err = posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ);
	if (err)
		return -err;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
}
